/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attach.h - attaching sets of uprobe sites (path + file offset + cookie) to
 * BPF programs, one perf-event uprobe per site or one uprobe_multi link per
 * (program, library).
 *
 * Cookies: every site carries a 64-bit cookie, delivered to the program by
 * bpf_get_attach_cookie(ctx); ascbpf uses the site id (struct
 * asc_probe_site.id) so one program serves every site of a kind and the
 * records' hdr.probe_id is that cookie.  A pid-filtered perf-event
 * uretprobe carries the owner's tgid in the cookie's upper 32 bits (older
 * kernels run it on every process's return: ret_site() in
 * bpf/ascbpf_ring.bpf.h drops the foreign hits).
 *
 * uprobe_multi (kernel >= 6.6) attaches thousands of sites in one bpf(2)
 * call; Debian's libbpf 1.1 does not wrap it, so attach.c issues
 * BPF_LINK_CREATE itself.  The kernel refuses a uprobe_multi link for a
 * program that was not LOADED with expected_attach_type
 * BPF_TRACE_UPROBE_MULTI, and refuses a perf-event uprobe for one that was.
 * The choice is therefore made per program before load:
 *
 *   what the loader (user/trace/trace.c) does, between skel__open() and skel__load():
 *	for each uprobe / uretprobe program that will serve many sites:
 *		asc_attach_prepare_multi(prog);	// 0: multi, -EOPNOTSUPP: stays single
 *   after load:
 *	set = asc_attach_set_new();
 *	asc_attach_plan(set, plan, 0, select_fn, ctx, pid, NULL);   // or asc_attach_uprobes()
 *	...
 *	asc_attach_set_free(set);		// detaches everything
 *
 * A program prepared for multi must only be attached through this module
 * (bpf_program__attach*() on it fails with -EINVAL).  Programs that are not
 * prepared are attached with bpf_program__attach_uprobe_opts(), one link per
 * site, which works on every kernel with uprobes.  The BPF code is the same
 * in both cases: SEC("uprobe") + BPF_KPROBE / SEC("uretprobe") +
 * BPF_KRETPROBE; for a return program the caller passes retprobe = true
 * (uprobe_multi has no section-name magic: the flag comes from here).
 *
 * Environment: ASCBPF_NO_UPROBE_MULTI=1 makes asc_uprobe_multi_supported()
 * answer 0, so everything goes through single uprobes (tests, benchmarks,
 * working around a kernel bug).  Detaching 16 or more single uprobes sets
 * /sys/kernel/rcu_expedited for the time of the detach (put back as found
 * after); ASCBPF_RCU_EXPEDITE=0 leaves it alone.
 *
 * Functions return 0 / -errno (or a count >= 0), pointers NULL + errno.
 */
#ifndef __ASCBPF_ATTACH_H
#define __ASCBPF_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_program;
struct asc_probe_plan;
struct asc_probe_site;

/*
 * UAPI values of the uprobe_multi link (include/uapi/linux/bpf.h, 6.6+),
 * absent from Debian 12's linux-libc-dev.  They are kernel ABI and never
 * change.
 */
#define ASC_BPF_TRACE_UPROBE_MULTI     48 /* enum bpf_attach_type */
#define ASC_BPF_LINK_TYPE_UPROBE_MULTI 12 /* enum bpf_link_type */
#define ASC_BPF_F_UPROBE_MULTI_RETURN  1U /* link_create.uprobe_multi.flags */

/* One attach point. */
struct asc_attach_site {
	const char *path; /* file to probe, as this process can open it */
	uint64_t offset;  /* file offset of the probed instruction */
	uint64_t cookie;  /* bpf_get_attach_cookie() in the program */
};

/* Every link made through one set; freed (detached) together. */
struct asc_attach_set;

struct asc_attach_stats {
	size_t sites;	     /* sites attached (an entry + a return probe count 2) */
	size_t multi_links;  /* uprobe_multi links held */
	size_t single_links; /* perf-event uprobe links held */
	size_t failed;	     /* sites that could not be attached */
};

/*
 * 1 if this kernel creates uprobe_multi links (probed once with a tiny
 * program and cached), 0 if not or if ASCBPF_NO_UPROBE_MULTI=1.
 */
int asc_uprobe_multi_supported(void);

/*
 * Before bpf_object__load(): makes prog a uprobe_multi program if the kernel
 * supports it.  Returns 0 (prog is now multi), -EOPNOTSUPP (left single:
 * kernel lacks the link or ASCBPF_NO_UPROBE_MULTI=1), -EBUSY (already
 * loaded), -EINVAL (not a kprobe/uprobe-type program).
 */
int asc_attach_prepare_multi(struct bpf_program *prog);

/* Whether prog was loaded as a uprobe_multi program (decides the attach path). */
bool asc_attach_prog_is_multi(const struct bpf_program *prog);

struct asc_attach_set *asc_attach_set_new(void);

/*
 * A kernel without bpf_get_attach_cookie (bpf/ascbpf_maps.h "Site ids"):
 * from now on every single (perf-event) uprobe of set files its cookie in
 * the map site_ids_fd under (pid, probed address), and every uretprobe
 * site also gets push as an entry probe.  Needs pid > 0 and programs that
 * are not multi (uprobe_multi implies cookies).
 */
void asc_attach_set_no_cookie(struct asc_attach_set *set, int site_ids_fd,
			      const struct bpf_program *push);
/* Detaches and frees everything attached through set; NULL is a no-op. */
void asc_attach_set_free(struct asc_attach_set *set);
void asc_attach_set_stats(const struct asc_attach_set *set, struct asc_attach_stats *st);

/*
 * Attaches prog (already loaded) at each of the n sites, as uretprobes when
 * retprobe.  pid > 0 limits the probes to that process, pid <= 0 means
 * every process.  A multi program gets one link per distinct path (sites
 * need not be sorted); if the kernel refuses a whole group (one bad offset
 * fails it) each site of the group is retried alone, so the good ones still
 * attach.  errs, if not NULL, has n entries and receives 0 or -errno per
 * site.  Returns the number of sites attached (0..n); -EINVAL for bad
 * arguments, -ENOMEM.  Failures are reported through asc_log (debug level
 * per site, one warning per call).
 */
int asc_attach_uprobes(struct asc_attach_set *set, const struct bpf_program *prog, bool retprobe,
		       pid_t pid, const struct asc_attach_site *sites, size_t n, int *errs);

/*
 * Chooses the programs for one plan site: *entry (uprobe) and *ret
 * (uretprobe), either may be set to NULL to skip.  Return non-zero to skip
 * the site altogether (e.g. a family the trace does not want).
 */
typedef int (*asc_attach_select_fn)(const struct asc_probe_site *site, void *ctx,
				    struct bpf_program **entry, struct bpf_program **ret);

/*
 * Attaches plan->sites[first .. nr_sites) (first > 0 after
 * asc_probe_plan_update() appended new sites) at site->attach_offset with
 * cookie site->id, grouping sites by program so each program gets one
 * asc_attach_uprobes() call.  errs, if not NULL, has plan->nr_sites entries,
 * indexed like plan->sites, and gets 0 or the first -errno of each site
 * (entry or return).  Sets ASC_PROBE_RETPROBE in site->flags where a return
 * probe was attached.  Returns the number of sites with at least one probe
 * attached, or -errno.
 */
int asc_attach_plan(struct asc_attach_set *set, struct asc_probe_plan *plan, size_t first,
		    asc_attach_select_fn select, void *ctx, pid_t pid, int *errs);

#endif /* __ASCBPF_ATTACH_H */
