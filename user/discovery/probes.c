// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * probes.c - the built-in probe table, its resolution against a process
 * (maps -> ELF symbols -> file offsets -> prologue choice), plan updates
 * after dlopen, and `ascbpf probes`.
 *
 * Names are the real exported ones (docs/cann_api.md §1;
 * C++ names mangled by g++ for the declarations given there); npu_model
 * exports the same ones.
 */
#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
#include "ascbpf_events.h"
#include "commands.h"
#include "discovery/elfsym.h"
#include "lib/json_writer.h"
#include "lib/log.h"
#include "discovery/probes.h"
#include "lib/procmaps.h"
#include "arch/prologue.h"

#define FW	ASC_LAYER_FRAMEWORK
#define CANN	ASC_LAYER_CANN
#define DRV	ASC_LAYER_DRIVER
#define MEM	ASC_LAYER_MEMORY
#define OPT	ASC_SPEC_OPTIONAL
#define L1	ASC_SPEC_LEVEL1
#define L2	ASC_SPEC_LEVEL2

/*
 * Order matters where entries overlap: a function matched by two entries is
 * attached once, as the first entry says (explicit memory and SQE entries
 * come before the aclrt* / hal* globs that also match them).
 */
const struct asc_probe_spec asc_probe_table[] = {
	/* ---- framework: PyTorch aten dispatch (libtorch_cpu.so, also under torch_npu) ---- */
	{ "libtorch_cpu.so", "_ZN2at4_ops*4callE*", FW, ASC_PK_ATEN_OP, ASC_FAM_FRAMEWORK, 0 },
	/* the autograd engine running one backward node (user/discovery/seqnr.h) */
	{ "libtorch_cpu.so",
	  "_ZN5torch8autograd6Engine17evaluate_functionERSt10shared_ptrINS0_9GraphTaskEEPNS0_4Node"
	  "ERNS0_11InputBufferERKS2_INS0_10ReadyQueueEE",
	  FW, ASC_PK_AUTOGRAD_EVAL, ASC_FAM_FRAMEWORK, OPT },
	/* ... and the node classes' apply(variable_list&&): MulBackward0, AccumulateGrad, ... */
	{ "libtorch_cpu.so", "_ZN5torch8autograd*5applyEOSt6vectorIN2at6TensorESaI*EE", FW,
	  ASC_PK_AUTOGRAD_APPLY, ASC_FAM_FRAMEWORK, OPT },
	/* ---- framework: torch_npu (libtorch_npu.so) ---- */
	{ "libtorch_npu.so",
	  "_ZN6at_npu6native9OpCommand10RunOpApiV2ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKSt8functionIFivEEb",
	  FW, ASC_PK_OPNAME_STDSTR, ASC_FAM_FRAMEWORK, L1 },
	/* torch_npu.npu_format_cast, a framework op outside at::_ops: the TransData call site */
	{ "libtorch_npu.so", "_ZN6at_npu6native10custom_ops15npu_format_castERKN2at6TensorEl", FW,
	  ASC_PK_ATEN_OP, ASC_FAM_FRAMEWORK, OPT },
	{ "libtorch_npu.so", "_ZN7c10_npu10Repository7EnqueueEPv", FW, ASC_PK_ENQUEUE,
	  ASC_FAM_FRAMEWORK, 0 },
	{ "libtorch_npu.so", "_ZN6at_npu6native12AsncExecFuncEPv", FW, ASC_PK_DEQUEUE,
	  ASC_FAM_FRAMEWORK, 0 },
	/* the caching allocator's profiler report (one call per block malloc/free) */
	{ "libtorch_npu.so", "_ZN9torch_npu8profiler29reportMemoryDataToNpuProfiler*", MEM,
	  ASC_PK_MEM_REPORT, ASC_FAM_MEMORY, ASC_SPEC_NO_RETPROBE },
	/* real PyTorch's allocator report: raw arguments (ptr, size, allocated, reserved, device) */
	{ "libc10.so", "_ZN3c1027reportMemoryUsageToProfiler*", MEM, ASC_PK_CALL, ASC_FAM_MEMORY,
	  OPT | ASC_SPEC_NO_RETPROBE },
	/* the step boundary: npu_train's and torch_npu's step hook */
	{ "libtorch_npu.so", "_ZN9torch_npu8profiler10stepMarkerEv", FW, ASC_PK_STEP, ASC_FAM_STEP,
	  OPT | ASC_SPEC_NO_RETPROBE },

	/* ---- CANN: memory first (family MEMORY too), then everything aclrt* ---- */
	{ "libascendcl.so", "aclrtMalloc", CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, L1 },
	{ "libascendcl.so", "aclrtMallocAlign32", CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, L1 },
	{ "libascendcl.so", "aclrtMallocCached", CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, OPT | L1 },
	{ "libascendcl.so", "aclrtMallocWithCfg", CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, OPT | L1 },
	{ "libascendcl.so", "aclrtMallocHost", CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, L1 },
	{ "libascendcl.so", "aclrtFree", CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, L1 },
	{ "libascendcl.so", "aclrtFreeHost", CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, L1 },
	{ "libascendcl.so", "aclInit", CANN, ASC_PK_CALL, ASC_FAM_CANN, L1 },
	{ "libascendcl.so", "aclFinalize", CANN, ASC_PK_CALL, ASC_FAM_CANN, L1 },
	/*
	 * handle -> kernel name, from Level1 where the launches (which carry the
	 * handle) are probed: npu_model's nnopbase, as CANN's, looks the handle up
	 * per launch, so at Level0 it would be two more probes per launch for
	 * names nothing could join
	 */
	{ "libascendcl.so", "aclrtBinaryGetFunction", CANN, ASC_PK_FUNCNAME_GET, ASC_FAM_CANN,
	  OPT | L1 },
	{ "libascendcl.so", "aclrt*", CANN, ASC_PK_CALL, ASC_FAM_CANN, L1 },
	/* new CANN splits aclrt* into libacl_rt.so wrappers */
	{ "libacl_rt.so", "aclrtBinaryGetFunction", CANN, ASC_PK_FUNCNAME_GET, ASC_FAM_CANN,
	  OPT | L1 },
	{ "libacl_rt.so", "aclrt*", CANN, ASC_PK_CALL, ASC_FAM_CANN, OPT | L1 },
	/* aclop: the op type is argument 0 */
	{ "libacl_op_compiler.so", "aclopCompileAndExecute", CANN, ASC_PK_OPNAME_CSTR, ASC_FAM_CANN, L1 },
	{ "libacl_op_compiler.so", "aclopCompileAndExecuteV2", CANN, ASC_PK_OPNAME_CSTR, ASC_FAM_CANN,
	  L1 },
	{ "libacl_op_compiler.so", "aclopExecuteV2", CANN, ASC_PK_OPNAME_CSTR, ASC_FAM_CANN, OPT | L1 },
	{ "libacl_op_compiler.so", "aclopCompile", CANN, ASC_PK_OPNAME_CSTR, ASC_FAM_CANN, OPT | L1 },
	/* aclnn two-phase API (libopapi.so is dlopened by torch_npu on first use) */
	{ "libopapi.so", "aclnn*", CANN, ASC_PK_CALL, ASC_FAM_CANN, L1 },
	/* runtime */
	{ "libruntime.so", "rtMalloc", CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, OPT | L2 },
	{ "libruntime.so", "rtFree", CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, OPT | L2 },
	/* Level1 entry only (the loader's choice), FUNCNAME at entry; a Runtime@ call at Level2 */
	{ "libruntime.so", "rtFunctionRegister", CANN, ASC_PK_FUNCNAME_REG, ASC_FAM_CANN, OPT | L1 },
	/*
	 * aclop kernels' launch: Level1 has their Node@launch (torch_npu's msprof
	 * records it inside the runtime), so the span is traced from Level1 as
	 * LAUNCH records only; a Runtime@ call (plain CALL) at Level2
	 */
	{ "libruntime.so", "rtKernelLaunch", CANN, ASC_PK_NODE_LAUNCH, ASC_FAM_CANN, OPT | L1 },
	{ "libruntime.so", "rt*", CANN, ASC_PK_CALL, ASC_FAM_CANN, L2 },

	/* ---- driver ---- */
	/* entry only below Level2: the SQE record is what the device join needs */
	{ "libascend_hal.so", "halSqTaskSend", DRV, ASC_PK_SQE_SEND, ASC_FAM_DRIVER, 0 },
	{ "libascend_hal.so", "halMemAlloc", DRV, ASC_PK_CALL, ASC_FAM_DRIVER | ASC_FAM_MEMORY, L2 },
	{ "libascend_hal.so", "halMemFree", DRV, ASC_PK_CALL, ASC_FAM_DRIVER | ASC_FAM_MEMORY, L2 },
	{ "libascend_hal.so", "hal*", DRV, ASC_PK_CALL, ASC_FAM_DRIVER, L2 },
	{ NULL, NULL, 0, 0, 0, 0 },
};

/*
 * The runtime calls that queue one task each, innermost (the aclrt* wrappers
 * and aclop/aclnn paths all end in one of them), with their stream argument.
 */
static const struct {
	const char *sym;
	int stream_arg;
} launch_calls[] = {
	{ "rtsLaunchKernelWithHostArgs", 2 },
	{ "rtKernelLaunch", 5 },
	{ "rtEventRecord", 1 },
	{ "rtStreamWaitEvent", 0 },
	{ "rtMemcpyAsync", 5 },
	{ "rtMemsetAsync", 4 },
};

const struct asc_probe_spec asc_probe_launch_marks[] = {
	{ "libruntime.so", "rtsLaunchKernelWithHostArgs", CANN, ASC_PK_LAUNCH_MARK, ASC_FAM_CANN,
	  OPT | ASC_SPEC_NO_RETPROBE },
	{ "libruntime.so", "rtKernelLaunch", CANN, ASC_PK_LAUNCH_MARK, ASC_FAM_CANN,
	  OPT | ASC_SPEC_NO_RETPROBE },
	{ "libruntime.so", "rtEventRecord", CANN, ASC_PK_LAUNCH_MARK, ASC_FAM_CANN,
	  OPT | ASC_SPEC_NO_RETPROBE },
	{ "libruntime.so", "rtStreamWaitEvent", CANN, ASC_PK_LAUNCH_MARK, ASC_FAM_CANN,
	  OPT | ASC_SPEC_NO_RETPROBE },
	{ "libruntime.so", "rtMemcpyAsync", CANN, ASC_PK_LAUNCH_MARK, ASC_FAM_CANN,
	  OPT | ASC_SPEC_NO_RETPROBE },
	{ "libruntime.so", "rtMemsetAsync", CANN, ASC_PK_LAUNCH_MARK, ASC_FAM_CANN,
	  OPT | ASC_SPEC_NO_RETPROBE },
	{ NULL, NULL, 0, 0, 0, 0 },
};

int asc_probe_launch_stream_arg(const char *sym)
{
	size_t i;

	for (i = 0; sym && i < sizeof(launch_calls) / sizeof(launch_calls[0]); i++)
		if (!strcmp(sym, launch_calls[i].sym))
			return launch_calls[i].stream_arg;
	return -1;
}

static const char *const family_names[] = { "framework", "cann", "driver", "memory", "step" };

const char *asc_probe_family_name(uint32_t family)
{
	size_t i;

	for (i = 0; i < sizeof(family_names) / sizeof(family_names[0]); i++)
		if (family == 1U << i)
			return family_names[i];
	return "?";
}

int asc_probe_families_parse(const char *list, uint32_t *families)
{
	char *copy = strdup(list), *tok, *save = NULL;
	uint32_t fam = 0;
	size_t i;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) {
			fam |= ASC_FAM_ALL;
			continue;
		}
		for (i = 0; i < sizeof(family_names) / sizeof(family_names[0]); i++)
			if (!strcmp(tok, family_names[i]))
				break;
		if (i == sizeof(family_names) / sizeof(family_names[0])) {
			asc_err("unknown probe family '%s' (known: framework, cann, driver, memory, "
				"step, all)\n", tok);
			free(copy);
			return -EINVAL;
		}
		fam |= 1U << i;
	}
	free(copy);
	if (!fam) {
		asc_err("empty probe family list\n");
		return -EINVAL;
	}
	*families = fam;
	return 0;
}

/* ---- plan building ---- */

struct builder {
	struct asc_probe_plan *plan;
	size_t cap_sites, cap_missing, cap_libs;
	const struct asc_probe_spec *spec;	/* the entry being resolved */
	const char *host_path;			/* its library, as we open it */
	struct asc_elf *elf;
};

static int add_missing(struct builder *b, const struct asc_probe_spec *spec, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int add_missing(struct builder *b, const struct asc_probe_spec *spec, const char *fmt, ...)
{
	struct asc_probe_plan *plan = b->plan;
	struct asc_probe_missing *m;
	va_list ap;

	if (plan->nr_missing == b->cap_missing) {
		size_t ncap = b->cap_missing ? 2 * b->cap_missing : 16;
		void *tmp = realloc(plan->missing, ncap * sizeof(*plan->missing));

		if (!tmp)
			return -ENOMEM;
		plan->missing = tmp;
		b->cap_missing = ncap;
	}
	m = &plan->missing[plan->nr_missing++];
	m->spec = spec;
	va_start(ap, fmt);
	vsnprintf(m->reason, sizeof(m->reason), fmt, ap);
	va_end(ap);
	return 0;
}

static int add_lib(struct builder *b, const char *path)
{
	struct asc_probe_plan *plan = b->plan;
	size_t i;

	for (i = 0; i < plan->nr_libs; i++)
		if (!strcmp(plan->libs_seen[i], path))
			return 0;
	if (plan->nr_libs == b->cap_libs) {
		size_t ncap = b->cap_libs ? 2 * b->cap_libs : 8;
		void *tmp = realloc(plan->libs_seen, ncap * sizeof(*plan->libs_seen));

		if (!tmp)
			return -ENOMEM;
		plan->libs_seen = tmp;
		b->cap_libs = ncap;
	}
	plan->libs_seen[plan->nr_libs] = strdup(path);
	if (!plan->libs_seen[plan->nr_libs])
		return -ENOMEM;
	plan->nr_libs++;
	return 0;
}

/* Adds one site for sym of the current spec/library; 0 (also when skipped) or -errno. */
static int add_site(struct builder *b, const struct asc_elf_symbol *sym)
{
	struct asc_probe_plan *plan = b->plan;
	struct asc_probe_site *s;
	struct asc_prologue pro;
	uint8_t code[ASC_PROLOGUE_SCAN];
	uint64_t off;
	size_t i;
	int n;

	if (sym->type == STT_GNU_IFUNC) {
		/* The symbol is the resolver, which runs once at load: nothing to trace there. */
		if (!asc_glob_is_pattern(b->spec->sym))
			return add_missing(b, b->spec, "%s is an ifunc (only its resolver is named)",
					   sym->name);
		return 0;
	}
	/* A breakpoint anywhere but at an instruction of mapped code would corrupt the target. */
	if (asc_elf_vaddr_to_off(b->elf, sym->vaddr, &off) ||
	    !asc_elf_vaddr_is_code(b->elf, sym->vaddr)) {
		if (!asc_glob_is_pattern(b->spec->sym))
			return add_missing(b, b->spec, "address 0x%" PRIx64 " is not in an "
					   "executable segment", sym->vaddr);
		return 0;
	}
	for (i = 0; i < plan->nr_sites; i++)
		if (plan->sites[i].func_offset == off && !strcmp(plan->sites[i].path, b->host_path))
			return 0;	/* an alias or an earlier entry has it */

	n = asc_elf_read(b->elf, sym->vaddr, code,
			 sym->size && sym->size < sizeof(code) ? (size_t)sym->size : sizeof(code));
	asc_prologue_analyze(asc_elf_machine(b->elf), code, n > 0 ? (size_t)n : 0, sym->size, &pro);

	if (plan->nr_sites == b->cap_sites) {
		size_t ncap = b->cap_sites ? 2 * b->cap_sites : 64;
		void *tmp = realloc(plan->sites, ncap * sizeof(*plan->sites));

		if (!tmp)
			return -ENOMEM;
		plan->sites = tmp;
		b->cap_sites = ncap;
	}
	s = &plan->sites[plan->nr_sites];
	memset(s, 0, sizeof(*s));
	s->spec = b->spec;
	s->path = strdup(b->host_path);
	s->sym = strdup(sym->name);
	if (!s->path || !s->sym) {
		free(s->path);
		free(s->sym);
		return -ENOMEM;
	}
	s->id = plan->next_id++;
	s->func_offset = off;
	s->attach_offset = off + pro.skip;
	s->flags = pro.flags;
	plan->nr_sites++;
	return 0;
}

/*
 * A glob names an API: it matches exported (global or weak) functions only,
 * never the library's internal ones that .symtab also lists (npu_model's
 * libruntime.so has static rt_* helpers next to the rt* API).  An exact name
 * may be local: that is how a user targets an internal function.
 */
static int glob_cb(const struct asc_elf_symbol *sym, void *ctx)
{
	struct builder *b = ctx;

	if (sym->bind == STB_LOCAL)
		return 0;
	return add_site(b, sym);
}

static int exported_cb(const struct asc_elf_symbol *sym, void *ctx)
{
	bool *found = ctx;

	if (sym->bind == STB_LOCAL)
		return 0;
	*found = true;
	return 1;	/* stop at the first exported match */
}

/* Whether an exported function matches spec's glob (its sites may come from earlier entries). */
static bool glob_matched_any(struct builder *b, const struct asc_probe_spec *spec)
{
	bool found = false;

	asc_elf_for_each_match(b->elf, spec->sym, exported_cb, &found);
	return found;
}

/* Resolves spec in the library at host_path (opened as elf). */
static int resolve_spec(struct builder *b, const struct asc_probe_spec *spec)
{
	const struct asc_elf_symbol *sym;
	int n;

	b->spec = spec;
	if (asc_glob_is_pattern(spec->sym)) {
		size_t before = b->plan->nr_sites;

		n = asc_elf_for_each_match(b->elf, spec->sym, glob_cb, b);
		if (n < 0)
			return n;
		if (b->plan->nr_sites == before && !glob_matched_any(b, spec))
			return add_missing(b, spec, "no exported symbol matches in %s",
					   b->host_path);
		return 0;
	}
	sym = asc_elf_find(b->elf, spec->sym);
	if (!sym)
		return add_missing(b, spec, "symbol not found in %s", b->host_path);
	return add_site(b, sym);
}

static bool spec_lib_mapped(const struct asc_map_entry *e, const char *lib)
{
	return e->inode && e->path && e->path[0] == '/' && asc_lib_name_matches(e->path, lib);
}

void asc_probe_plan_free(struct asc_probe_plan *plan)
{
	size_t i;

	if (!plan)
		return;
	for (i = 0; i < plan->nr_sites; i++) {
		free(plan->sites[i].path);
		free(plan->sites[i].sym);
	}
	free(plan->sites);
	free(plan->missing);
	for (i = 0; i < plan->nr_libs; i++)
		free(plan->libs_seen[i]);
	free(plan->libs_seen);
	memset(plan, 0, sizeof(*plan));
}

unsigned int asc_probe_spec_level(const struct asc_probe_spec *spec)
{
	return spec->flags & ASC_SPEC_LEVEL2 ? 2 : spec->flags & ASC_SPEC_LEVEL1 ? 1 : 0;
}

int asc_probe_spec_wanted(const struct asc_probe_spec *spec, uint32_t families, uint32_t level)
{
	if (!(spec->family & families))
		return 0;
	return level >= asc_probe_spec_level(spec) || (spec->family & families & ASC_FAM_MEMORY);
}

int asc_probe_plan_build_table(pid_t pid, const struct asc_probe_spec *table, uint32_t families,
			       uint32_t first_id, struct asc_probe_plan *plan)
{
	return asc_probe_plan_build_level(pid, table, families, ASC_LEVEL_MAX, first_id, plan);
}

int asc_probe_plan_build_level(pid_t pid, const struct asc_probe_spec *table, uint32_t families,
			       uint32_t level, uint32_t first_id, struct asc_probe_plan *plan)
{
	struct builder b = { .plan = plan };
	const struct asc_probe_spec *spec;
	struct asc_maps maps;
	size_t i, j, nr_mapped_specs = 0;
	int err;

	memset(plan, 0, sizeof(*plan));
	plan->pid = pid;
	plan->table = table;
	plan->families = families;
	plan->level = level;
	plan->next_id = first_id ? first_id : 1;
	err = asc_maps_read(pid, &maps);
	if (err)
		return err;

	for (spec = table; spec->lib; spec++) {
		bool found = false;

		if (!asc_probe_spec_wanted(spec, families, level))
			continue;
		/* Each distinct file mapped under the library's name (normally one). */
		for (i = 0; i < maps.nr; i++) {
			const struct asc_map_entry *e = &maps.entries[i];
			char host[4096];
			bool dup = false;

			if (!spec_lib_mapped(e, spec->lib))
				continue;
			for (j = 0; j < i && !dup; j++)
				dup = spec_lib_mapped(&maps.entries[j], spec->lib) &&
				      maps.entries[j].inode == e->inode &&
				      !strcmp(maps.entries[j].path, e->path);
			if (dup)
				continue;
			found = true;
			err = asc_maps_entry_host_path(pid, e, host, sizeof(host));
			if (!err)
				err = add_lib(&b, host);
			if (err == -ENOMEM || err == -ESRCH)
				goto out;	/* out of memory, or the process is gone */
			if (!err)
				err = asc_elf_open(host, &b.elf);
			if (err) {
				err = add_missing(&b, spec, "cannot read %s: %s", e->path,
						  strerror(-err));
				if (err)
					goto out;
				continue;
			}
			b.host_path = host;
			err = resolve_spec(&b, spec);
			asc_elf_close(b.elf);
			b.elf = NULL;
			if (err)
				goto out;
		}
		if (found) {
			nr_mapped_specs++;
			continue;
		}
		err = add_missing(&b, spec, "library not mapped");
		if (err)
			goto out;
	}
	err = nr_mapped_specs ? 0 : -ENOENT;
out:
	asc_maps_free(&maps);
	if (err && err != -ENOENT) {
		asc_probe_plan_free(plan);
		return err;
	}
	return err;
}

int asc_probe_plan_build(pid_t pid, uint32_t families, uint32_t first_id,
			 struct asc_probe_plan *plan)
{
	return asc_probe_plan_build_table(pid, asc_probe_table, families, first_id, plan);
}

int asc_probe_plan_update(struct asc_probe_plan *plan, size_t *first_new)
{
	struct asc_probe_plan fresh;
	size_t i, j, added = 0, old_nr = plan->nr_sites;
	void *tmp;
	int err;

	*first_new = old_nr;
	err = asc_probe_plan_build_level(plan->pid, plan->table, plan->families, plan->level,
					 plan->next_id, &fresh);
	if (err && err != -ENOENT)
		return err;
	if (fresh.nr_sites) {
		tmp = realloc(plan->sites, (old_nr + fresh.nr_sites) * sizeof(*plan->sites));
		if (!tmp) {
			asc_probe_plan_free(&fresh);
			return -ENOMEM;
		}
		plan->sites = tmp;
	}
	for (i = 0; i < fresh.nr_sites; i++) {
		struct asc_probe_site *s = &fresh.sites[i];
		bool known = false;

		for (j = 0; j < old_nr && !known; j++)
			known = plan->sites[j].attach_offset == s->attach_offset &&
				!strcmp(plan->sites[j].path, s->path);
		if (known)
			continue;
		plan->sites[plan->nr_sites] = *s;
		plan->sites[plan->nr_sites].id = plan->next_id++;
		s->path = s->sym = NULL;	/* moved */
		plan->nr_sites++;
		added++;
	}
	/* The fresh scan's missing list and libraries replace the old ones. */
	free(plan->missing);
	plan->missing = fresh.missing;
	plan->nr_missing = fresh.nr_missing;
	fresh.missing = NULL;
	fresh.nr_missing = 0;
	for (i = 0; i < plan->nr_libs; i++)
		free(plan->libs_seen[i]);
	free(plan->libs_seen);
	plan->libs_seen = fresh.libs_seen;
	plan->nr_libs = fresh.nr_libs;
	fresh.libs_seen = NULL;
	fresh.nr_libs = 0;
	asc_probe_plan_free(&fresh);
	return (int)added;
}

/*
 * The load address of pid's program interpreter (AT_BASE in /proc/PID/auxv):
 * the dynamic loader, whatever its file is called; 0 if none (static) or
 * unreadable.
 */
static uint64_t loader_base(pid_t pid)
{
	uint64_t av[2], base = 0;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (read(fd, av, sizeof(av)) == (ssize_t)sizeof(av) && av[0] != AT_NULL)
		if (av[0] == AT_BASE) {
			base = av[1];
			break;
		}
	close(fd);
	return base;
}

/*
 * A loader's file name, when AT_BASE is not known: ld-linux*.so*, ld-musl*,
 * ld64.so.N, ld-2.NN.so, ld.so.N; never the loader's own data files
 * (/etc/ld.so.cache is mapped while ld.so searches the libraries, so a
 * process caught at its exec can show it, before the loader in the maps).
 */
static bool is_loader_file(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (!strncmp(base, "ld-linux", 8) || !strncmp(base, "ld-musl", 7) ||
	    !strncmp(base, "ld64.so.", 8))
		return true;
	if (!strncmp(base, "ld-2.", 5))
		return strstr(base, ".so") != NULL;
	return !strncmp(base, "ld.so.", 6) && isdigit((unsigned char)base[6]);
}

/* The loader's mapping: the one holding AT_BASE, else the first loader-named file. */
static const struct asc_map_entry *loader_mapping(pid_t pid, const struct asc_maps *maps)
{
	uint64_t base = loader_base(pid);
	size_t i;

	for (i = 0; base && i < maps->nr; i++) {
		const struct asc_map_entry *e = &maps->entries[i];

		if (e->inode && e->path && e->path[0] == '/' && e->start <= base && base < e->end)
			return e;
	}
	for (i = 0; i < maps->nr; i++) {
		const struct asc_map_entry *e = &maps->entries[i];

		if (e->inode && e->path && e->path[0] == '/' && is_loader_file(e->path))
			return e;
	}
	return NULL;
}

int asc_probe_find_loader(pid_t pid, char *path, size_t len, uint64_t *offset, uint32_t *flags)
{
	const struct asc_elf_symbol *sym;
	struct asc_prologue pro;
	struct asc_elf *elf = NULL;
	struct asc_maps maps;
	const struct asc_map_entry *e;
	uint8_t code[16];
	uint64_t off;
	int err, n;

	err = asc_maps_read(pid, &maps);
	if (err)
		return err;
	e = loader_mapping(pid, &maps);
	err = e ? asc_maps_entry_host_path(pid, e, path, len) : -ENOENT;
	asc_maps_free(&maps);
	if (err)
		return err;
	err = asc_elf_open(path, &elf);
	if (err)
		return err;
	sym = asc_elf_find(elf, "_dl_debug_state");
	if (!sym || asc_elf_vaddr_to_off(elf, sym->vaddr, &off) ||
	    !asc_elf_vaddr_is_code(elf, sym->vaddr)) {
		asc_elf_close(elf);
		return -ENOENT;
	}
	n = asc_elf_read(elf, sym->vaddr, code, sizeof(code));
	asc_prologue_analyze(asc_elf_machine(elf), code, n > 0 ? (size_t)n : 0, sym->size, &pro);
	asc_elf_close(elf);
	*offset = off + pro.skip;
	*flags = pro.flags;
	return 0;
}

/* ---- ascbpf probes ---- */

static void probes_usage(FILE *f)
{
	fprintf(f,
		"Usage: ascbpf probes -p PID [--json] [--families LIST] [--level N]\n"
		"\n"
		"Lists, per layer, what `ascbpf trace -p PID` would attach where in the process:\n"
		"library, symbol, file offset, and where the uprobe goes (\"after endbr64, emulated\",\n"
		"\"single-stepped\", ...), then what is missing and why.  Attaches nothing.\n"
		"\n"
		"  -p, --pid PID        process to inspect (required)\n"
		"  -j, --json           one JSON object on stdout, for scripts\n"
		"  -f, --families LIST  framework,cann,driver,memory,step or all (default all)\n"
		"  -l, --level N        only what `ascbpf trace --level N` attaches: 0 aten ops, task\n"
		"                       queue, SQE, step; 1 + aclnn/aclop/aclrt, kernel names; 2 (default)\n"
		"                       + rt*/hal*\n"
		"  -h, --help           this text\n"
		"\n"
		"Exit status: 0 listed, 2 no such process, no Ascend/PyTorch library mapped, or bad usage.\n"
		"Examples:\n"
		"  ascbpf probes -p 4242\n"
		"  ascbpf probes -p 4242 --json | python3 -m json.tool\n");
}

static int parse_pid(const char *s, pid_t *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > 0x3fffffff) {
		asc_err("invalid PID '%s'\n", s);
		return -EINVAL;
	}
	*pid = (pid_t)v;
	return 0;
}

static void read_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	buf[0] = '\0';
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* The distinct library names the table looks for in families, ", "-separated. */
static void libs_looked_for(const struct asc_probe_spec *table, uint32_t families, char *buf,
			    size_t len)
{
	const struct asc_probe_spec *s, *t;
	size_t used = 0;

	buf[0] = '\0';
	for (s = table; s->lib; s++) {
		bool dup = false;

		if (!(s->family & families))
			continue;
		for (t = table; t < s && !dup; t++)
			dup = (t->family & families) && !strcmp(t->lib, s->lib);
		if (dup)
			continue;
		used += snprintf(buf + used, used < len ? len - used : 0, "%s%s", used ? ", " : "",
				 s->lib);
	}
}

static const char *layer_label(unsigned int layer)
{
	switch (layer) {
	case ASC_LAYER_FRAMEWORK: return "framework";
	case ASC_LAYER_CANN: return "cann";
	case ASC_LAYER_DRIVER: return "driver";
	case ASC_LAYER_MEMORY: return "memory";
	default: return "?";
	}
}

struct loader_info {
	int err;
	char path[4096];
	uint64_t offset;
	uint32_t flags;
};

static void print_text(const struct asc_probe_plan *plan, const char *comm,
		       const struct loader_info *ld)
{
	static const unsigned int layers[] = {
		ASC_LAYER_FRAMEWORK, ASC_LAYER_CANN, ASC_LAYER_DRIVER, ASC_LAYER_MEMORY,
	};
	size_t i, l, nss = 0;

	for (i = 0; i < plan->nr_sites; i++)
		nss += !!(plan->sites[i].flags & ASC_PROBE_SINGLESTEP);
	printf("pid %d (%s): %zu probe sites in %zu libraries, %zu single-stepped, %zu missing\n",
	       (int)plan->pid, comm, plan->nr_sites, plan->nr_libs, nss, plan->nr_missing);
	if (!ld->err)
		printf("dlopen watch: %s _dl_debug_state 0x%" PRIx64 "  %s\n", ld->path, ld->offset,
		       asc_prologue_choice(ld->flags));
	else
		printf("dlopen watch: none (%s): libraries loaded later are not seen\n",
		       strerror(-ld->err));
	for (l = 0; l < sizeof(layers) / sizeof(layers[0]); l++) {
		const char *cur = NULL;
		size_t count = 0;

		for (i = 0; i < plan->nr_sites; i++)
			count += plan->sites[i].spec->layer == layers[l];
		if (!count)
			continue;
		printf("\n%s (%zu)\n", layer_label(layers[l]), count);
		for (i = 0; i < plan->nr_sites; i++) {
			const struct asc_probe_site *s = &plan->sites[i];

			if (s->spec->layer != layers[l])
				continue;
			if (!cur || strcmp(cur, s->path)) {
				cur = s->path;
				printf("  %s\n", cur);
			}
			printf("    %5u %-13s %s  0x%" PRIx64 " -> 0x%" PRIx64 "  %s%s\n", s->id,
			       asc_probe_kind_name(s->spec->kind), s->sym, s->func_offset,
			       s->attach_offset, asc_prologue_choice(s->flags),
			       s->spec->flags & ASC_SPEC_NO_RETPROBE ? ", entry only" : "");
		}
	}
	if (plan->nr_missing) {
		printf("\nmissing (%zu)\n", plan->nr_missing);
		/* Symbols first, one line each; then unmapped libraries, one line per library. */
		for (i = 0; i < plan->nr_missing; i++) {
			const struct asc_probe_missing *m = &plan->missing[i];

			if (!strcmp(m->reason, "library not mapped"))
				continue;
			printf("  %-9s %s %s: %s%s\n", layer_label(m->spec->layer), m->spec->lib,
			       m->spec->sym, m->reason,
			       m->spec->flags & ASC_SPEC_OPTIONAL ? " (optional)" : "");
		}
		for (i = 0; i < plan->nr_missing; i++) {
			const struct asc_probe_missing *m = &plan->missing[i];
			size_t j, n = 0;
			bool seen = false, all_optional = true;

			if (strcmp(m->reason, "library not mapped"))
				continue;
			for (j = 0; j < i && !seen; j++)
				seen = !strcmp(plan->missing[j].reason, m->reason) &&
				       !strcmp(plan->missing[j].spec->lib, m->spec->lib);
			if (seen)
				continue;
			for (j = i; j < plan->nr_missing; j++) {
				const struct asc_probe_missing *o = &plan->missing[j];

				if (strcmp(o->reason, m->reason) || strcmp(o->spec->lib, m->spec->lib))
					continue;
				n++;
				all_optional &= !!(o->spec->flags & ASC_SPEC_OPTIONAL);
			}
			printf("  %-9s %s: library not mapped (%zu %s)%s\n",
			       layer_label(m->spec->layer), m->spec->lib, n,
			       n == 1 ? "entry" : "entries",
			       all_optional ? " (optional)" :
			       !strcmp(m->spec->lib, "libopapi.so") ?
			       "; dlopened on the first aclnn op, traced when it loads" : "");
		}
	}
}

static int print_json(const struct asc_probe_plan *plan, const char *comm,
		      const struct loader_info *ld)
{
	struct asc_out o;
	size_t i;
	int err = asc_out_fdopen(&o, STDOUT_FILENO);

	if (err)
		return err;
	asc_out_printf(&o, "{\"pid\":%d,\"comm\":", (int)plan->pid);
	asc_json_cstr(&o, comm);
	asc_out_puts(&o, ",\"libraries\":[");
	for (i = 0; i < plan->nr_libs; i++) {
		if (i)
			asc_out_putc(&o, ',');
		asc_json_cstr(&o, plan->libs_seen[i]);
	}
	asc_out_puts(&o, "],\"loader\":");
	if (ld->err) {
		asc_out_puts(&o, "null");
	} else {
		asc_out_puts(&o, "{\"library\":");
		asc_json_cstr(&o, ld->path);
		asc_out_printf(&o, ",\"symbol\":\"_dl_debug_state\",\"attach_offset\":%" PRIu64
			       ",\"prologue\":\"%s\"}", ld->offset, asc_prologue_choice(ld->flags));
	}
	asc_out_puts(&o, ",\"sites\":[");
	for (i = 0; i < plan->nr_sites; i++) {
		const struct asc_probe_site *s = &plan->sites[i];

		asc_out_printf(&o, "%s\n{\"id\":%u,\"layer\":\"%s\",\"kind\":\"%s\",\"library\":",
			       i ? "," : "", s->id, layer_label(s->spec->layer),
			       asc_probe_kind_name(s->spec->kind));
		asc_json_cstr(&o, s->path);
		asc_out_puts(&o, ",\"symbol\":");
		asc_json_cstr(&o, s->sym);
		asc_out_puts(&o, ",\"spec\":");
		asc_json_cstr(&o, s->spec->sym);
		asc_out_printf(&o, ",\"func_offset\":%" PRIu64 ",\"attach_offset\":%" PRIu64
			       ",\"skipped_endbr\":%s,\"singlestep\":%s,\"prologue\":\"%s\""
			       ",\"retprobe\":%s,\"level\":%u}",
			       s->func_offset, s->attach_offset,
			       s->flags & ASC_PROBE_SKIPPED_ENDBR ? "true" : "false",
			       s->flags & ASC_PROBE_SINGLESTEP ? "true" : "false",
			       asc_prologue_choice(s->flags),
			       s->spec->flags & ASC_SPEC_NO_RETPROBE ? "false" : "true",
			       asc_probe_spec_level(s->spec));
	}
	asc_out_puts(&o, "],\"missing\":[");
	for (i = 0; i < plan->nr_missing; i++) {
		const struct asc_probe_missing *m = &plan->missing[i];

		asc_out_printf(&o, "%s\n{\"layer\":\"%s\",\"library\":", i ? "," : "",
			       layer_label(m->spec->layer));
		asc_json_cstr(&o, m->spec->lib);
		asc_out_puts(&o, ",\"symbol\":");
		asc_json_cstr(&o, m->spec->sym);
		asc_out_puts(&o, ",\"reason\":");
		asc_json_cstr(&o, m->reason);
		asc_out_printf(&o, ",\"optional\":%s}",
			       m->spec->flags & ASC_SPEC_OPTIONAL ? "true" : "false");
	}
	asc_out_puts(&o, "]}\n");
	return asc_out_close(&o);
}

int cmd_probes(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "families", required_argument, NULL, 'f' },
		{ "level", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct loader_info ld;
	struct asc_probe_plan plan;
	uint32_t families = ASC_FAM_ALL, level = ASC_LEVEL_MAX;
	bool json = false, have_pid = false;
	char comm[64], looked[512];
	pid_t pid = 0;
	int c, err;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "p:jf:l:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			err = parse_pid(optarg, &pid);
			if (err)
				return err;
			have_pid = true;
			break;
		case 'j':
			json = true;
			break;
		case 'f':
			err = asc_probe_families_parse(optarg, &families);
			if (err)
				return err;
			break;
		case 'l':
			if (strlen(optarg) != 1 || optarg[0] < '0' || optarg[0] > '0' + ASC_LEVEL_MAX) {
				asc_err("probes: --level must be 0, 1 or 2, not '%s'\n", optarg);
				return -EINVAL;
			}
			level = optarg[0] - '0';
			break;
		case 'h':
			probes_usage(stdout);
			return 0;
		default:
			asc_err("probes: unknown or incomplete option '%s'\n", argv[optind - 1]);
			probes_usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		asc_err("probes: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (!have_pid) {
		asc_err("probes: -p PID is required\n");
		probes_usage(stderr);
		return -EINVAL;
	}

	err = asc_probe_plan_build_level(pid, asc_probe_table, families, level, 1, &plan);
	if (err == -ESRCH) {
		asc_err("probes: no process with PID %d\n", (int)pid);
		return err;
	}
	if (err == -EACCES || err == -EPERM) {
		asc_err("probes: cannot read /proc/%d/maps: %s (run as root)\n", (int)pid,
			strerror(-err));
		return err;
	}
	read_comm(pid, comm, sizeof(comm));
	if (err == -ENOENT) {
		libs_looked_for(asc_probe_table, families, looked, sizeof(looked));
		asc_err("probes: process %d (%s) has none of the libraries ascbpf traces mapped; "
			"looked for: %s\n", (int)pid, comm, looked);
		asc_probe_plan_free(&plan);
		return err;
	}
	if (err) {
		asc_err("probes: resolving probes in process %d failed: %s\n", (int)pid,
			strerror(-err));
		return err;
	}
	ld.err = asc_probe_find_loader(pid, ld.path, sizeof(ld.path), &ld.offset, &ld.flags);
	if (json)
		err = print_json(&plan, comm, &ld);
	else
		print_text(&plan, comm, &ld);
	if (!json && fflush(stdout))
		err = -errno;
	asc_probe_plan_free(&plan);
	return err;
}
