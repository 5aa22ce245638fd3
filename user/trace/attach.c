// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attach.c - single uprobes through libbpf, uprobe_multi through bpf(2)
 * BPF_LINK_CREATE (libbpf 1.1 does not know the link type), one set of
 * links per trace.  See attach.h for the contracts.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "ascbpf_events.h"
#include "ascbpf_maps.h"
#include "trace/attach.h"
#include "lib/log.h"
#include "lib/procmaps.h"
#include "discovery/probes.h"

/*
 * The BPF_LINK_CREATE attribute as the kernel lays it out for uprobe_multi
 * (include/uapi/linux/bpf.h, union bpf_attr, link_create): the common
 * head, then the uprobe_multi member of the per-type union at offset 16.
 */
struct link_create_uprobe_multi {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__aligned_u64 path;
	__aligned_u64 offsets;
	__aligned_u64 ref_ctr_offsets;
	__aligned_u64 cookies;
	__u32 cnt;
	__u32 um_flags;
	__u32 pid;
};
_Static_assert(sizeof(struct link_create_uprobe_multi) <= sizeof(union bpf_attr),
	       "bpf_attr too small for uprobe_multi");

struct asc_attach_set {
	struct bpf_link **links; /* single uprobes */
	size_t nr_links, cap_links;
	int *fds; /* uprobe_multi link fds */
	size_t nr_fds, cap_fds;
	size_t sites, failed;
	/* without attach cookies (asc_attach_set_no_cookie): site_ids fd, < 0 with cookies */
	int site_fd;
	const struct bpf_program *push; /* asc_ret_push, at every uretprobe site */
};

static int uprobe_multi_link_create(int prog_fd, const char *path, const uint64_t *offsets,
				    const uint64_t *cookies, uint32_t cnt, uint32_t flags,
				    pid_t pid)
{
	union bpf_attr attr;
	struct link_create_uprobe_multi um = {
		.prog_fd = (__u32)prog_fd,
		.attach_type = ASC_BPF_TRACE_UPROBE_MULTI,
		.path = (__u64)(unsigned long)path,
		.offsets = (__u64)(unsigned long)offsets,
		.cookies = (__u64)(unsigned long)cookies,
		.cnt = cnt,
		.um_flags = flags,
		.pid = (__u32)pid,
	};
	int fd;

	memset(&attr, 0, sizeof(attr));
	memcpy(&attr, &um, sizeof(um));
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

/*
 * Kernels 6.6 to 6.9 filtered uprobe_multi links by thread, not process,
 * when given a pid (fixed together with a pid < 0 check).  Where the fix is
 * missing we pass no pid: the programs filter by tgid anyway (the pid only
 * saves the other processes the breakpoint).
 */
static int multi_pid_filter_ok = 1;

int asc_uprobe_multi_supported(void)
{
	static int cached = -1;
	const char *env = getenv("ASCBPF_NO_UPROBE_MULTI");
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = (enum bpf_attach_type)ASC_BPF_TRACE_UPROBE_MULTI);
	uint64_t offset = 0;
	int prog_fd, fd;

	if (env && *env && strcmp(env, "0"))
		return 0;
	if (cached >= 0)
		return cached;
	prog_fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "asc_um_probe", "GPL", insns, 2, &opts);
	if (prog_fd < 0) {
		asc_dbg("uprobe_multi probe: program load failed: %s\n", strerror(errno));
		cached = 0;
		return cached;
	}
	/*
	 * "/" is not a regular file: a kernel that knows the link type gets as
	 * far as resolving the path and answers -EBADF; one that does not
	 * answers -EINVAL (unknown attach type) first.
	 */
	fd = uprobe_multi_link_create(prog_fd, "/", &offset, NULL, 1, 0, 0);
	if (fd >= 0)
		close(fd);
	cached = fd == -EBADF || fd >= 0;
	if (cached) {
		/* A fixed kernel rejects pid -1 before looking at the path; an old one does not. */
		fd = uprobe_multi_link_create(prog_fd, "/", &offset, NULL, 1, 0, -1);
		if (fd >= 0)
			close(fd);
		multi_pid_filter_ok = fd == -EINVAL;
	}
	asc_dbg("uprobe_multi: %s%s\n", cached ? "supported" : "not supported",
		cached && !multi_pid_filter_ok ? " (without pid filter: thread-filtering kernel)" :
						 "");
	close(prog_fd);
	return cached;
}

int asc_attach_prepare_multi(struct bpf_program *prog)
{
	if (!prog)
		return -EINVAL;
	if (bpf_program__type(prog) != BPF_PROG_TYPE_KPROBE)
		return -EINVAL;
	if (bpf_program__fd(prog) >= 0)
		return -EBUSY;
	if (!asc_uprobe_multi_supported())
		return -EOPNOTSUPP;
	return bpf_program__set_expected_attach_type(prog, (enum bpf_attach_type)
								   ASC_BPF_TRACE_UPROBE_MULTI);
}

bool asc_attach_prog_is_multi(const struct bpf_program *prog)
{
	return prog && (int)bpf_program__expected_attach_type(prog) == ASC_BPF_TRACE_UPROBE_MULTI;
}

struct asc_attach_set *asc_attach_set_new(void)
{
	struct asc_attach_set *set = calloc(1, sizeof(struct asc_attach_set));

	if (set)
		set->site_fd = -1;
	return set;
}

void asc_attach_set_no_cookie(struct asc_attach_set *set, int site_ids_fd,
			      const struct bpf_program *push)
{
	set->site_fd = site_ids_fd;
	set->push = push;
}

/*
 * Where file offset off of path is mapped in maps (same inode, an
 * executable mapping; same device too when one such mapping has it: an
 * overlayfs file shows the lower file's device in maps), -ENOENT if nowhere.
 */
static int site_vaddr(const struct asc_maps *maps, const char *path, uint64_t off, uint64_t *addr)
{
	struct stat st;
	int found = 0;
	size_t i;

	if (stat(path, &st))
		return -errno;
	for (i = 0; i < maps->nr; i++) {
		const struct asc_map_entry *e = &maps->entries[i];
		int same_dev = makedev(e->dev_major, e->dev_minor) == st.st_dev;

		if (e->inode != st.st_ino || !(e->prot & ASC_MAP_X) || off < e->offset ||
		    off >= e->offset + (e->end - e->start))
			continue;
		if (!found || same_dev)
			*addr = e->start + (off - e->offset);
		found = 1;
		if (same_dev)
			break;
	}
	return found ? 0 : -ENOENT;
}

/*
 * Files site under (pid, address the program sees) in site_ids before its
 * probe exists.  PT_REGS_IP in a uprobe program is the probed address
 * itself on x86-64 and arm64: handle_swbp() (kernel/events/uprobes.c) sets
 * the instruction pointer back to the breakpoint before the handlers run
 * (x86's int3 trap leaves it one byte further); tests/trace/
 * test_trace_fallbacks.py fails if that ever changes.  An address not found
 * (a child that has not exec'd yet: only the loader hook, which needs no
 * site id) is a debug line, not a failure.
 */
static void site_file(const struct asc_attach_set *set, const struct asc_maps *maps, pid_t pid,
		      const struct asc_attach_site *site)
{
	struct asc_site_key k = { .tgid = (uint32_t)pid };
	uint64_t v = (uint32_t)site->cookie, ip = 0;
	int err = maps ? site_vaddr(maps, site->path, site->offset, &ip) : -ESRCH;

	k.ip = ip;
	if (!err && bpf_map_update_elem(set->site_fd, &k, &v, BPF_ANY))
		err = -errno;
	if (err)
		asc_dbg("attach: pid %d: no site id for %s:0x%llx (%s)\n", pid, site->path,
			(unsigned long long)site->offset, strerror(-err));
}

/*
 * Destroying a perf-event uprobe waits for an RCU tasks-trace grace period
 * under the kernel's event_mutex (perf_trace_event_unreg ->
 * synchronize_rcu_tasks_trace), ~110 ms each on our 2-CPU VM, serialised:
 * 5,904 single probes took 760 s to detach (threads do not help: the mutex
 * serialises them).  A uprobe_multi link pays one grace period per link.
 * Hence multi wherever the kernel has it; see tools/bench_attach.sh.
 */
#define ASC_EXPEDITE_MIN  16 /* single links from which detach expedites RCU */
#define ASC_RCU_EXPEDITED "/sys/kernel/rcu_expedited"

/* Reads the knob's value into old ('0' / '1'); sets it to val.  0 / -errno. */
static int rcu_expedite(char val, char *old)
{
	int fd = open(ASC_RCU_EXPEDITED, O_RDWR | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (old && pread(fd, old, 1, 0) != 1)
		err = -EIO;
	else if (pwrite(fd, &val, 1, 0) != 1)
		err = -errno;
	close(fd);
	return err;
}

void asc_attach_set_free(struct asc_attach_set *set)
{
	const char *env = getenv("ASCBPF_RCU_EXPEDITE");
	char old = '1';
	int expedited = 0;
	size_t i;

	if (!set)
		return;
	for (i = 0; i < set->nr_fds; i++)
		close(set->fds[i]);
	/*
	 * Where the grace periods above are plain RCU / SRCU ones (kernels before
	 * tracepoint_synchronize_unregister() waited for RCU tasks trace too, e.g.
	 * 6.1), /sys/kernel/rcu_expedited makes each an expedited one (IPIs, no
	 * waiting for ticks): BENCHMARKS.md "Kernels" has the per-probe figures.
	 * Set for the detach only, and put back as found; ASCBPF_RCU_EXPEDITE=0
	 * leaves the knob alone.
	 */
	if (set->nr_links >= ASC_EXPEDITE_MIN && !(env && !strcmp(env, "0")) &&
	    rcu_expedite('1', &old) == 0)
		expedited = old != '1';
	for (i = 0; i < set->nr_links; i++)
		bpf_link__destroy(set->links[i]);
	if (expedited)
		rcu_expedite(old, NULL);
	free(set->fds);
	free(set->links);
	free(set);
}

void asc_attach_set_stats(const struct asc_attach_set *set, struct asc_attach_stats *st)
{
	st->sites = set->sites;
	st->multi_links = set->nr_fds;
	st->single_links = set->nr_links;
	st->failed = set->failed;
}

static int keep_fd(struct asc_attach_set *set, int fd)
{
	if (set->nr_fds == set->cap_fds) {
		size_t ncap = set->cap_fds ? 2 * set->cap_fds : 16;
		void *tmp = realloc(set->fds, ncap * sizeof(*set->fds));

		if (!tmp)
			return -ENOMEM;
		set->fds = tmp;
		set->cap_fds = ncap;
	}
	set->fds[set->nr_fds++] = fd;
	return 0;
}

static int keep_link(struct asc_attach_set *set, struct bpf_link *link)
{
	if (set->nr_links == set->cap_links) {
		size_t ncap = set->cap_links ? 2 * set->cap_links : 64;
		void *tmp = realloc(set->links, ncap * sizeof(*set->links));

		if (!tmp)
			return -ENOMEM;
		set->links = tmp;
		set->cap_links = ncap;
	}
	set->links[set->nr_links++] = link;
	return 0;
}

static int attach_single(struct asc_attach_set *set, const struct bpf_program *prog, bool retprobe,
			 pid_t pid, const struct asc_attach_site *site, const struct asc_maps *maps)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = site->cookie, .retprobe = retprobe);
	struct bpf_link *link;
	int err;

	if (set->site_fd >= 0) {
		opts.bpf_cookie = 0; /* libbpf refuses any other where the kernel has none */
		site_file(set, maps, pid, site);
		if (retprobe) { /* the entry half of the return's site (asc_ret_push) */
			err = attach_single(set, set->push, false, pid, site, maps);
			if (err)
				return err;
		}
	}

	/* the owner, for ret_site() (bpf/ascbpf_ring.bpf.h): older kernels ignore the filter */
	if (retprobe && pid > 0 && set->site_fd < 0)
		opts.bpf_cookie = (uint32_t)site->cookie | (uint64_t)pid << 32;

	link = bpf_program__attach_uprobe_opts(prog, pid > 0 ? pid : -1, site->path,
					       (size_t)site->offset, &opts);
	if (!link)
		return errno ? -errno : -EINVAL;
	err = keep_link(set, link);
	if (err)
		bpf_link__destroy(link);
	return err;
}

/* One uprobe_multi link for sites idx[0..n) (all with the same path). */
static int attach_group(struct asc_attach_set *set, int prog_fd, bool retprobe, pid_t pid,
			const struct asc_attach_site *sites, const size_t *idx, size_t n)
{
	uint64_t *offsets = malloc(n * sizeof(*offsets));
	uint64_t *cookies = malloc(n * sizeof(*cookies));
	size_t i;
	int fd, err;

	if (!offsets || !cookies) {
		free(offsets);
		free(cookies);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		offsets[i] = sites[idx[i]].offset;
		cookies[i] = sites[idx[i]].cookie;
	}
	fd = uprobe_multi_link_create(prog_fd, sites[idx[0]].path, offsets, cookies, (uint32_t)n,
				      retprobe ? ASC_BPF_F_UPROBE_MULTI_RETURN : 0,
				      pid > 0 && multi_pid_filter_ok ? pid : 0);
	free(offsets);
	free(cookies);
	if (fd < 0)
		return fd;
	err = keep_fd(set, fd);
	if (err)
		close(fd);
	return err;
}

static int cmp_site_path(const void *a, const void *b, void *base)
{
	const struct asc_attach_site *x = (const struct asc_attach_site *)base + *(const size_t *)a;
	const struct asc_attach_site *y = (const struct asc_attach_site *)base + *(const size_t *)b;
	int c = strcmp(x->path, y->path);

	if (c)
		return c;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

int asc_attach_uprobes(struct asc_attach_set *set, const struct bpf_program *prog, bool retprobe,
		       pid_t pid, const struct asc_attach_site *sites, size_t n, int *errs)
{
	const char *pname = prog ? bpf_program__name(prog) : "?";
	size_t i, g, attached = 0, failed = 0;
	int first_err = 0, err, prog_fd;
	size_t *idx;

	if (!set || !prog || (n && !sites))
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!sites[i].path)
			return -EINVAL;
	if (!n)
		return 0;
	prog_fd = bpf_program__fd(prog);
	if (prog_fd < 0)
		return -EINVAL; /* not loaded */

	if (!asc_attach_prog_is_multi(prog)) {
		struct asc_maps maps = {};
		int maps_err = -ESRCH;

		if (set->site_fd >= 0 && pid > 0)
			maps_err = asc_maps_read(pid, &maps);
		for (i = 0; i < n; i++) {
			err = attach_single(set, prog, retprobe, pid, &sites[i],
					    maps_err ? NULL : &maps);
			if (errs)
				errs[i] = err;
			if (err == -ENOMEM)
				break;
			if (err) {
				asc_dbg("prog '%s': %s at %s:0x%llx failed: %s\n", pname,
					retprobe ? "uretprobe" : "uprobe", sites[i].path,
					(unsigned long long)sites[i].offset, strerror(-err));
				first_err = first_err ? first_err : err;
				failed++;
			} else {
				attached++;
			}
		}
		asc_maps_free(&maps);
		if (err == -ENOMEM)
			return err;
		goto done;
	}

	/* Group by path: one link per library. */
	idx = malloc(n * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), cmp_site_path, (void *)sites);
	for (g = 0; g < n;) {
		size_t end = g + 1;

		while (end < n && !strcmp(sites[idx[end]].path, sites[idx[g]].path))
			end++;
		err = attach_group(set, prog_fd, retprobe, pid, sites, idx + g, end - g);
		if (err == -ENOMEM) {
			free(idx);
			return err;
		}
		if (!err) {
			for (i = g; i < end; i++)
				if (errs)
					errs[idx[i]] = 0;
			attached += end - g;
		} else {
			asc_dbg("prog '%s': uprobe_multi of %zu sites in %s failed (%s)%s\n", pname,
				end - g, sites[idx[g]].path, strerror(-err),
				end - g > 1 ? ", retrying one by one" : "");
			/* One bad offset fails the group: find the good ones. */
			for (i = g; i < end; i++) {
				int e = end - g > 1 ? attach_group(set, prog_fd, retprobe, pid,
								   sites, idx + i, 1) :
						      err;

				if (e == -ENOMEM) {
					free(idx);
					return e;
				}
				if (errs)
					errs[idx[i]] = e;
				if (e) {
					asc_dbg("prog '%s': %s at %s:0x%llx failed: %s\n", pname,
						retprobe ? "uretprobe" : "uprobe",
						sites[idx[i]].path,
						(unsigned long long)sites[idx[i]].offset,
						strerror(-e));
					first_err = first_err ? first_err : e;
					failed++;
				} else {
					attached++;
				}
			}
		}
		g = end;
	}
	free(idx);
done:
	set->sites += attached;
	set->failed += failed;
	if (failed)
		asc_warn("prog '%s': %zu of %zu %s sites could not be attached (first error: %s)\n",
			 pname, failed, n, retprobe ? "uretprobe" : "uprobe", strerror(-first_err));
	return (int)attached;
}

/* The sites of one plan that go to one (program, entry/return) pair. */
struct prog_group {
	const struct bpf_program *prog;
	bool retprobe;
	size_t *site_idx; /* indexes into plan->sites */
	size_t n, cap;
};

static int group_add(struct prog_group **groups, size_t *nr, const struct bpf_program *prog,
		     bool retprobe, size_t site)
{
	struct prog_group *g = NULL;
	size_t i;

	for (i = 0; i < *nr; i++)
		if ((*groups)[i].prog == prog && (*groups)[i].retprobe == retprobe)
			g = &(*groups)[i];
	if (!g) {
		void *tmp = realloc(*groups, (*nr + 1) * sizeof(**groups));

		if (!tmp)
			return -ENOMEM;
		*groups = tmp;
		g = &(*groups)[(*nr)++];
		memset(g, 0, sizeof(*g));
		g->prog = prog;
		g->retprobe = retprobe;
	}
	if (g->n == g->cap) {
		size_t ncap = g->cap ? 2 * g->cap : 64;
		void *tmp = realloc(g->site_idx, ncap * sizeof(*g->site_idx));

		if (!tmp)
			return -ENOMEM;
		g->site_idx = tmp;
		g->cap = ncap;
	}
	g->site_idx[g->n++] = site;
	return 0;
}

int asc_attach_plan(struct asc_attach_set *set, struct asc_probe_plan *plan, size_t first,
		    asc_attach_select_fn select, void *ctx, pid_t pid, int *errs)
{
	struct prog_group *groups = NULL;
	size_t nr_groups = 0, i, j, count = 0;
	uint8_t *ok = NULL;
	int err = 0;

	if (!set || !plan || !select || first > plan->nr_sites)
		return -EINVAL;
	if (first == plan->nr_sites)
		return 0;
	ok = calloc(plan->nr_sites, 1);
	if (!ok)
		return -ENOMEM;
	for (i = first; i < plan->nr_sites; i++) {
		struct asc_probe_site *s = &plan->sites[i];
		struct bpf_program *entry = NULL, *ret = NULL;

		if (errs)
			errs[i] = 0;
		if (select(s, ctx, &entry, &ret))
			continue;
		if (s->spec && (s->spec->flags & ASC_SPEC_NO_RETPROBE))
			ret = NULL;
		if (entry && (err = group_add(&groups, &nr_groups, entry, false, i)))
			goto out;
		if (ret && (err = group_add(&groups, &nr_groups, ret, true, i)))
			goto out;
	}
	for (i = 0; i < nr_groups; i++) {
		struct prog_group *g = &groups[i];
		struct asc_attach_site *sites = malloc(g->n * sizeof(*sites));
		int *gerrs = malloc(g->n * sizeof(*gerrs));
		int n;

		if (!sites || !gerrs) {
			free(sites);
			free(gerrs);
			err = -ENOMEM;
			goto out;
		}
		for (j = 0; j < g->n; j++) {
			const struct asc_probe_site *s = &plan->sites[g->site_idx[j]];

			sites[j].path = s->path;
			sites[j].offset = s->attach_offset;
			sites[j].cookie = s->id;
		}
		n = asc_attach_uprobes(set, g->prog, g->retprobe, pid, sites, g->n, gerrs);
		if (n < 0) {
			free(sites);
			free(gerrs);
			err = n;
			goto out;
		}
		for (j = 0; j < g->n; j++) {
			size_t si = g->site_idx[j];

			if (gerrs[j]) {
				if (errs && !errs[si])
					errs[si] = gerrs[j];
				continue;
			}
			ok[si] = 1;
			if (g->retprobe)
				plan->sites[si].flags |= ASC_PROBE_RETPROBE;
		}
		free(sites);
		free(gerrs);
	}
	for (i = first; i < plan->nr_sites; i++)
		count += ok[i];
out:
	for (i = 0; i < nr_groups; i++)
		free(groups[i].site_idx);
	free(groups);
	free(ok);
	return err ? err : (int)count;
}
