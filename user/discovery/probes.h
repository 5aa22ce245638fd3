/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * probes.h - the probe table (what ascbpf attaches to, by layer) and its
 * resolution against a running process into attach sites.
 *
 * The same table serves npu_model and a real Ascend host: entries name
 * libraries by soname basename and symbols by their exported names (mangled
 * for C++).  Resolution reads /proc/PID/maps (through /proc/PID/root for
 * processes in containers), the ELF .dynsym and .symtab, and places each
 * uprobe where the kernel can emulate the first instruction when that is
 * safe (after an endbr64, for instance); see prologue analysis in probes.c.
 *
 * Functions return 0 or -errno.
 */
#ifndef __ASCBPF_PROBES_H
#define __ASCBPF_PROBES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "ascbpf_events.h"

/* Probe families: what the trace options switch on and off. */
enum asc_probe_family {
	ASC_FAM_FRAMEWORK = 1 << 0, /* aten ops, OpCommand, task queue (--activities cpu) */
	ASC_FAM_CANN = 1 << 1,	    /* aclnn, aclop, aclrt, rt (--activities npu) */
	ASC_FAM_DRIVER = 1 << 2,    /* hal*, ioctls (--activities npu, --level >= 1) */
	ASC_FAM_MEMORY = 1 << 3,    /* allocator reports and memory calls (--profile-memory) */
	ASC_FAM_STEP = 1 << 4,	    /* step boundary (always, unless --step none) */
};

struct asc_probe_spec {
	const char *lib; /* soname basename: "libascendcl.so" */
	const char *sym; /* exact symbol name, or a glob ("aclnn*") that matches
				 * exported (global/weak) functions only */
	uint16_t layer;	 /* enum asc_layer (bpf/ascbpf_events.h) */
	uint16_t kind;	 /* enum asc_probe_kind */
	uint32_t family; /* enum asc_probe_family */
	uint32_t flags;	 /* ASC_SPEC_* */
};
#define ASC_SPEC_OPTIONAL    0x1 /* absent on some versions: not a warning when missing */
#define ASC_SPEC_NO_RETPROBE 0x2 /* entry only */
/*
 * The old-C++-ABI name of a std::string function: where it resolves, every
 * site of that library reads std::string in the old layout (ASC_PROBE_CXX_OLD_ABI)
 */
#define ASC_SPEC_CXX_OLD_ABI 0x10
/*
 * Trace levels, as torch_npu.profiler's ProfilerLevel: an entry without
 * either flag is Level0 (aten ops, task queue, SQE submission, step,
 * allocator report, kernel registration); LEVEL1 entries are the AscendCL
 * API (aclnn*, aclop*, aclrt*: AscendCL@ events), LEVEL2 entries the
 * runtime and driver calls (rt*, hal*: Runtime@ events).  An entry whose
 * family includes ASC_FAM_MEMORY is attached at every level when the
 * memory family is on (--profile-memory needs its GE/APP sources).
 */
#define ASC_SPEC_LEVEL1	     0x4
#define ASC_SPEC_LEVEL2	     0x8
#define ASC_LEVEL_MAX	     2
/*
 * The always-on tier of `ascbpf agent` (user/agent/): the cheap sites (step
 * boundary, task queue, submission, synchronisation, segment allocation,
 * collectives), one call per step, op or collective at most.  A plan built
 * at level ASC_LEVEL_AGENT has exactly the entries with this flag, whatever
 * their trace level; the trace ignores the flag.  Adding a site to the
 * agent is adding the flag to its row.
 */
#define ASC_SPEC_AGENT	     0x20
#define ASC_LEVEL_AGENT	     0x100

/* One resolved attach point. */
struct asc_probe_site {
	uint32_t id; /* probe id carried by records (>= 1) */
	const struct asc_probe_spec *spec;
	char *path;		/* path to open for attach (host view, /proc/PID/root/...) */
	char *sym;		/* resolved symbol (a glob expands to many sites) */
	uint64_t func_offset;	/* file offset of the function */
	uint64_t attach_offset; /* file offset attached at (func_offset + skip) */
	uint32_t flags;		/* ASC_PROBE_* (bpf/ascbpf_events.h) */
	bool from_debug;	/* named only by the library's separate debug file */
};

/* The missing reason of a libascendcl.so function left to libacl_rt.so (not a failure). */
#define ASC_PROBE_COMPAT_REASON "forwards to libacl_rt.so (attached there)"

struct asc_probe_missing {
	const struct asc_probe_spec *spec;
	char reason[96]; /* "library not mapped", "symbol not found", ... */
};

struct asc_probe_plan {
	pid_t pid;
	struct asc_probe_site *sites;
	size_t nr_sites;
	struct asc_probe_missing *missing;
	size_t nr_missing;
	char **libs_seen; /* distinct library paths matched in the maps */
	size_t nr_libs;
	/*
	 * per libs_seen[i], its symbol mode (elfsym.h "Debug symbols"): the debug file read with
	 * it, or NULL: its own .symtab (libs_symtab[i]) or only .dynsym (a release build)
	 */
	char **libs_debug;
	bool *libs_symtab;
	/* Added for the attach layer: what asc_probe_plan_update() rebuilds from. */
	const struct asc_probe_spec *table; /* the table the plan was built from */
	uint32_t families;
	uint32_t next_id; /* id the next new site gets */
	uint32_t level;	  /* trace level the plan was built for (ASC_SPEC_LEVEL*) */
};

/* The built-in table, terminated by an entry with lib == NULL. */
extern const struct asc_probe_spec asc_probe_table[];

/*
 * Level0 batch switch-on (user/trace/trace.c): the task-making runtime calls
 * (ASC_PK_LAUNCH_MARK), attached to a process at Level0 when its first
 * batched halSqTaskSend is seen; not part of any level's plan otherwise, so
 * `ascbpf probes` does not list them.  Terminated by lib == NULL.
 */
extern const struct asc_probe_spec asc_probe_launch_marks[];
/* The stream argument's index (0..5) of a task-making call by symbol, or -1. */
int asc_probe_launch_stream_arg(const char *sym);
/* The C-string kernel name argument's index of an AI CPU launch call by symbol, or -1. */
int asc_probe_launch_name_arg(const char *sym);

/*
 * Resolves every table entry whose family is in `families` against PID's
 * current mappings.  Sites get ids first_id, first_id + 1, ...  Returns
 * -ESRCH if PID does not exist, -ENOENT if none of the table's libraries is
 * mapped (the plan then lists what was looked for in `missing`).
 */
int asc_probe_plan_build(pid_t pid, uint32_t families, uint32_t first_id,
			 struct asc_probe_plan *plan);

void asc_probe_plan_free(struct asc_probe_plan *plan);

/*
 * The same from another table (terminated by lib == NULL), e.g. the built-in
 * one plus a --step LIB:SYMBOL entry.  The table must outlive the plan.
 * asc_probe_plan_build() is this with asc_probe_table.
 */
int asc_probe_plan_build_table(pid_t pid, const struct asc_probe_spec *table, uint32_t families,
			       uint32_t first_id, struct asc_probe_plan *plan);

/*
 * The same, keeping only the entries of trace level <= level (0..2, see
 * ASC_SPEC_LEVEL1); the two functions above build for ASC_LEVEL_MAX.
 * asc_probe_plan_update() rescans at the plan's level.
 */
int asc_probe_plan_build_level(pid_t pid, const struct asc_probe_spec *table, uint32_t families,
			       uint32_t level, uint32_t first_id, struct asc_probe_plan *plan);

/* The lowest trace level (0..2) whose plan has spec (before the memory exception). */
unsigned int asc_probe_spec_level(const struct asc_probe_spec *spec);
/* Whether spec is attached at trace level `level` with `families` on. */
int asc_probe_spec_wanted(const struct asc_probe_spec *spec, uint32_t families, uint32_t level);

/*
 * Rescans the process (after a dlopen, which the loader hook in
 * user/trace/trace.c sees) and appends the sites that are new since the plan was
 * built or last updated, with ids from plan->next_id on; existing sites keep their index and id.  missing
 * and libs_seen are replaced by the new scan's.  *first_new gets the index
 * of the first appended site (== old nr_sites).  Returns the number of
 * sites added (0 when nothing changed) or -errno (-ESRCH: process gone).
 */
int asc_probe_plan_update(struct asc_probe_plan *plan, size_t *first_new);

/*
 * The dynamic loader's hook of PID: _dl_debug_state in its ld.so (the
 * mapping holding AT_BASE, else the first loader-named file, never
 * /etc/ld.so.cache), which the loader calls before and after every
 * dlopen/dlclose changes the link map (glibc's r_brk; musl has the same
 * symbol).  path gets the host path (as
 * for sites), *offset the file offset to attach at, *flags the prologue
 * choice (ASC_PROBE_*).  -ENOENT if no loader is mapped (static binary) or
 * it lacks the symbol, -ESRCH if PID does not exist.
 */
int asc_probe_find_loader(pid_t pid, char *path, size_t len, uint64_t *offset, uint32_t *flags);

/* "framework", "cann", "driver", "memory", "step" for one family bit, else "?". */
const char *asc_probe_family_name(uint32_t family);
/* Parses "framework,cann,..." or "all" into family bits; -EINVAL naming the bad word. */
int asc_probe_families_parse(const char *list, uint32_t *families);
#define ASC_FAM_ALL \
	(ASC_FAM_FRAMEWORK | ASC_FAM_CANN | ASC_FAM_DRIVER | ASC_FAM_MEMORY | ASC_FAM_STEP)

#endif /* __ASCBPF_PROBES_H */
