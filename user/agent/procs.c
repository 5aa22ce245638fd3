// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * procs.c - which processes `ascbpf agent` follows, and their probes.
 *
 * Every scan (once per --interval) walks /proc: a process is ours when its
 * maps name an Ascend or PyTorch library (the probe table's sonames,
 * matched by basename as user/discovery does) or, the first time it is
 * seen, when it holds a davinci device node open.  A process that is not
 * ours yet is looked at again on every scan (Python imports torch_npu
 * after it started), with one raw read of its maps and a few memmem()s.
 * For a followed process the shared-object lines of its maps are hashed
 * each scan; when they change (a dlopen), the plan is updated and the new
 * sites attached.  A process whose /proc entry is gone, or whose start time
 * changed (pid reused), has exited: its counters are kept as last seen for
 * --linger seconds (until scraped once), then dropped, so its series go
 * stale in Prometheus.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "agent.skel.h"
#include "agent/agent.h"
#include "lib/log.h"
#include "lib/procmaps.h"
#include "trace/attach.h"

/*
 * The always-on tier is the rows of the one probe table (user/discovery/probes.c)
 * flagged ASC_SPEC_AGENT: the step boundary, the task queue, the submission, the
 * synchronisations, the segment allocations and frees, the collectives, and the
 * allocator's per-block report with --memory-blocks only (select_prog()).  A CALL
 * entry of family MEMORY is a segment allocation (aclrtFree: its free), one of
 * family CANN a synchronisation.  CANN 8.x/9.x's libascendcl.so forwarders are
 * left out of the plan where libacl_rt.so is mapped, as for the trace.
 */

/* Index of the element-count argument of an Hccl op (the data type follows it), 0: none. */
static uint32_t hccl_count_arg(const char *sym)
{
	static const struct {
		const char *sym;
		uint32_t arg;
	} ops[] = {
		{ "HcclAllReduce", 2 },	    { "HcclBroadcast", 1 }, { "HcclAllGather", 2 },
		{ "HcclReduceScatter", 2 }, { "HcclReduce", 2 },    { "HcclAlltoAll", 1 },
		{ "HcclSend", 1 },	    { "HcclRecv", 1 },
	};

	for (size_t i = 0; sym && i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(sym, ops[i].sym))
			return ops[i].arg;
	return 0; /* AlltoAllV (per-peer counts in memory), Barrier: calls and time only */
}

/* The libraries that make a process ours (a PyTorch or an Ascend process). */
static const char *const our_libs[] = {
	"/libascendcl.so",  "/libascend_hal.so", "/libtorch_npu.so",
	"/libtorch_cpu.so", "/libacl_rt.so",	 NULL,
};

/* Job id variables of the launchers, in order; else the command names the job. */
static const char *const job_vars[] = {
	"SLURM_JOB_ID", "TORCHELASTIC_RUN_ID", "PBS_JOBID", "LSB_JOBID", "JOB_ID", NULL,
};
static const char *const rank_vars[] = {
	"RANK", "RANK_ID", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK", NULL,
};

#define MAPS_MAX (8u << 20) /* bytes of one maps file read at most */

static char *maps_buf;
static size_t maps_cap;

/* /proc/PID/maps into maps_buf (NUL-terminated, at most MAPS_MAX); its length or -errno. */
static ssize_t read_maps(pid_t pid)
{
	char path[64];
	size_t len = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (len + 4096 + 1 > maps_cap) {
			size_t ncap = maps_cap ? 2 * maps_cap : 1 << 16;
			char *nb;

			if (ncap > MAPS_MAX + 4096 + 1)
				break;
			nb = realloc(maps_buf, ncap);
			if (!nb)
				break;
			maps_buf = nb;
			maps_cap = ncap;
		}
		n = read(fd, maps_buf + len, maps_cap - len - 1);
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	if (!maps_buf)
		return -ENOMEM;
	maps_buf[len] = 0;
	return len;
}

static int maps_ours(const char *text, size_t len)
{
	for (const char *const *l = our_libs; *l; l++)
		if (memmem(text, len, *l, strlen(*l)))
			return 1;
	return 0;
}

/* Hash of the lines that map a shared object (they change on dlopen/dlclose only). */
static uint64_t libs_hash(const char *text)
{
	uint64_t h = 0;
	const char *l = text, *nl;

	for (; *l; l = nl + 1) {
		nl = strchr(l, '\n');
		if (!nl)
			nl = l + strlen(l);
		if (memmem(l, nl - l, ".so", 3))
			h = asc_hash_u64(h ^ asc_hash_bytes(l, nl - l));
		if (!*nl)
			break;
	}
	return h;
}

/* Field 22 of /proc/PID/stat (starttime), 0 if the process is gone. */
static unsigned long long start_time(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long st = 0;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')'); /* the command may hold spaces and parentheses */
	if (!p)
		return 0;
	for (i = 2; i < 22 && p; i++)
		p = strchr(p + 1, ' ');
	if (p)
		st = strtoull(p + 1, NULL, 10);
	return st ? st : 1;
}

/* Whether PID holds a davinci device node open (/dev/davinci0, davinci_manager, ...). */
static int has_davinci_fd(pid_t pid)
{
	char path[64], link[256], lp[320];
	struct dirent *de;
	int found = 0, n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!found && n++ < 4096 && (de = readdir(d))) {
		ssize_t l;
		const char *b;

		if (de->d_name[0] == '.')
			continue;
		snprintf(lp, sizeof(lp), "%s/%s", path, de->d_name);
		l = readlink(lp, link, sizeof(link) - 1);
		if (l <= 0)
			continue;
		link[l] = 0;
		b = strrchr(link, '/');
		found = b && !strncmp(b + 1, "davinci", 7);
	}
	closedir(d);
	return found;
}

static void read_labels(struct agent_target *t)
{
	char path[64], *env = NULL;
	size_t len = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", t->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, t->comm, sizeof(t->comm) - 1);
		close(fd);
		if (n > 0) {
			t->comm[n] = 0;
			t->comm[strcspn(t->comm, "\n")] = 0;
		}
	}
	snprintf(t->job, sizeof(t->job), "%s", t->comm);
	if (asc_proc_environ(t->pid, &env, &len))
		return;
	for (int pass = 0; pass < 2; pass++) {
		const char *const *vars = pass ? rank_vars : job_vars;
		const char *best = NULL;
		int best_i = 1 << 30;

		for (const char *p = env; p < env + len; p += strlen(p) + 1)
			for (int i = 0; vars[i] && i < best_i; i++) {
				const char *v = asc_environ_value(p, vars[i]);

				if (v && *v) {
					best = v;
					best_i = i;
				}
			}
		if (best && pass)
			snprintf(t->rank, sizeof(t->rank), "%s", best);
		else if (best)
			t->job_from_env = snprintf(t->job, sizeof(t->job), "%s", best) > 0;
	}
	free(env);
}

static int select_prog(const struct asc_probe_site *site, void *ctx, struct bpf_program **entry,
		       struct bpf_program **ret)
{
	struct agent *a = ctx;
	const struct asc_probe_spec *s = site->spec;

	*entry = NULL;
	*ret = NULL;
	if (!s)
		return 1;
	switch (s->kind) {
	case ASC_PK_STEP:
		*ret = a->skel->progs.agent_step; /* a step ends where it returns */
		return 0;
	case ASC_PK_MEM_REPORT:
		/* one call per block event (single-stepped in npu_model): --memory-blocks only */
		if (!a->o.memory_blocks)
			return 1;
		*entry = a->skel->progs.agent_mem_report;
		return 0;
	case ASC_PK_SQE_SEND:
		*entry = a->skel->progs.agent_submit;
		return 0;
	case ASC_PK_ENQUEUE:
	case ASC_PK_DEQUEUE:
		/* one hit each per op: the tier's most frequent sites with halSqTaskSend */
		if (a->o.no_task_queue)
			return 1;
		*entry = s->kind == ASC_PK_ENQUEUE ? a->skel->progs.agent_enqueue :
						     a->skel->progs.agent_dequeue;
		return 0;
	case ASC_PK_HCCL_OP: {
		struct agent_hccl_key k = { .tgid = a->cur_pid, .site = site->id };
		struct agent_hccl zero = { .count_arg = hccl_count_arg(site->sym) };

		/* the op's counters exist before its probe can fire */
		if (bpf_map_update_elem(bpf_map__fd(a->skel->maps.hccl), &k, &zero, BPF_NOEXIST) &&
		    errno != EEXIST)
			return 1;
		*entry = a->skel->progs.agent_hccl_enter;
		*ret = a->skel->progs.agent_hccl_exit;
		return 0;
	}
	case ASC_PK_CALL:
		if (site->sym && !strcmp(site->sym, "aclrtFree")) {
			*entry = a->skel->progs.agent_free_enter;
		} else if (s->family & ASC_FAM_MEMORY) {
			*entry = a->skel->progs.agent_alloc_enter;
			*ret = a->skel->progs.agent_alloc_exit;
		} else {
			*entry = a->skel->progs.agent_sync_enter;
			*ret = a->skel->progs.agent_sync_exit;
		}
		return 0;
	default:
		return 1;
	}
}

/* Builds or updates t's plan from its current maps and attaches the sites that are new. */
static int attach_new(struct agent *a, struct agent_target *t)
{
	struct asc_attach_stats st;
	size_t first = 0;
	int err, n;

	if (!t->have_plan) {
		err = asc_probe_plan_build_level(t->pid, asc_probe_table, ASC_FAM_ALL,
						 ASC_LEVEL_AGENT, 1, &t->plan);
		if (err) {
			if (err == -ENOENT)
				asc_probe_plan_free(&t->plan);
			return err == -ENOENT ? 0 : err;
		}
		t->have_plan = 1;
	} else {
		n = asc_probe_plan_update(&t->plan, &first);
		if (n <= 0)
			return n;
	}
	if (first >= t->plan.nr_sites)
		return 0;
	if (!t->set && !(t->set = asc_attach_set_new()))
		return -ENOMEM;
	a->cur_pid = t->pid;
	n = asc_attach_plan(t->set, &t->plan, first, select_prog, a, t->pid, NULL);
	asc_attach_set_stats(t->set, &st);
	t->probes = st.sites;
	if (st.failed)
		a->attach_failures = st.failed;
	asc_info("agent: pid %d (%s, job %s%s%s): %zu probes attached\n", t->pid, t->comm, t->job,
		 t->rank[0] ? ", rank " : "", t->rank, t->probes);
	return n < 0 ? n : 0;
}

static int follow(struct agent *a, pid_t pid, unsigned long long start, double now)
{
	struct agent_proc zero = {};
	struct agent_target *t, **nt;
	uint32_t key = pid;
	int err;

	if (a->nr_t >= AGENT_MAX_PROCS)
		return -ENOSPC;
	if (bpf_map_update_elem(bpf_map__fd(a->skel->maps.procs), &key, &zero, BPF_ANY))
		return -errno;
	t = calloc(1, sizeof(*t));
	nt = t ? realloc(a->t, (a->nr_t + 1) * sizeof(*nt)) : NULL;
	if (!nt) {
		free(t);
		bpf_map_delete_elem(bpf_map__fd(a->skel->maps.procs), &key);
		return -ENOMEM;
	}
	a->t = nt;
	a->t[a->nr_t++] = t;
	t->pid = pid;
	t->start = start;
	t->seen = now;
	read_labels(t);
	a->discovered++;
	err = attach_new(a, t);
	if (err)
		asc_warn("agent: pid %d: %s\n", pid, strerror(-err));
	return 0;
}

/* Deletes every entry of tgid from a map whose keys start with the tgid (u32). */
static void delete_tgid(int fd, size_t key_size, uint32_t tgid)
{
	unsigned char key[16], next[16];
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, key_size);
		if (*(uint32_t *)key == tgid) {
			bpf_map_delete_elem(fd, key);
			prev = NULL; /* restart: the deleted key cannot be the cursor */
			continue;
		}
		prev = key;
	}
}

/* Deletes the entries of tgid's threads from a map keyed by pid_tgid (u64). */
static void delete_threads(int fd, uint32_t tgid)
{
	uint64_t key, next, *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		if (key >> 32 == tgid) {
			bpf_map_delete_elem(fd, &key);
			prev = NULL;
			continue;
		}
		prev = &key;
	}
}

static void gone(struct agent *a, struct agent_target *t, double now)
{
	uint32_t key = t->pid;

	agent_procs_snapshot(a); /* the final counts */
	t->exited = now;
	asc_attach_set_free(t->set);
	t->set = NULL;
	t->probes = 0;
	if (t->have_plan)
		asc_probe_plan_free(&t->plan);
	t->have_plan = 0;
	bpf_map_delete_elem(bpf_map__fd(a->skel->maps.procs), &key);
	delete_tgid(bpf_map__fd(a->skel->maps.streams), sizeof(struct agent_stream_key), t->pid);
	delete_tgid(bpf_map__fd(a->skel->maps.mem), sizeof(struct agent_mem_key), t->pid);
	delete_tgid(bpf_map__fd(a->skel->maps.segs), 16, t->pid); /* (u64 tgid, u64 ptr) */
	delete_tgid(bpf_map__fd(a->skel->maps.hccl), sizeof(struct agent_hccl_key), t->pid);
	delete_threads(bpf_map__fd(a->skel->maps.hccl_inflight), t->pid);
	t->have_stuck = 0;
	asc_info("agent: pid %d (%s) exited after %llu steps\n", t->pid, t->comm,
		 (unsigned long long)t->p.steps);
}

static struct agent_target *live_target(struct agent *a, pid_t pid)
{
	for (size_t i = 0; i < a->nr_t; i++)
		if (a->t[i]->pid == pid && !a->t[i]->exited)
			return a->t[i];
	return NULL;
}

/* The followed processes: gone ones noted, new libraries attached. */
static void check_targets(struct agent *a, double now)
{
	for (size_t i = 0; i < a->nr_t; i++) {
		struct agent_target *t = a->t[i];
		ssize_t n;
		uint64_t h;

		if (t->exited)
			continue;
		if (start_time(t->pid) != t->start) {
			gone(a, t, now);
			continue;
		}
		n = read_maps(t->pid);
		if (n < 0)
			continue;
		h = libs_hash(maps_buf);
		if (h != t->libs_hash) {
			t->libs_hash = h;
			if (attach_new(a, t) == -ESRCH)
				gone(a, t, now);
		}
	}
}

int agent_procs_scan(struct agent *a, double now)
{
	pid_t self = getpid();
	struct dirent *de;
	DIR *d;

	check_targets(a, now);
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		unsigned long long st;
		uint64_t known;
		pid_t pid;
		ssize_t n;
		int first;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		if (pid == self || live_target(a, pid))
			continue;
		st = start_time(pid);
		if (!st)
			continue;
		first = !asc_u64map_get(&a->ignored, pid, &known) || known != st;
		n = read_maps(pid);
		if (n <= 0)
			continue; /* a kernel thread, or gone */
		if (!maps_ours(maps_buf, n) && !(first && has_davinci_fd(pid))) {
			if (first && asc_u64map_put(&a->ignored, pid, st))
				break;
			continue;
		}
		asc_u64map_del(&a->ignored, pid);
		if (follow(a, pid, st, now) == -ENOSPC) {
			asc_warn("agent: %d processes followed already, pid %d not followed\n",
				 AGENT_MAX_PROCS, pid);
			break;
		}
		a->t[a->nr_t - 1]->libs_hash = libs_hash(maps_buf);
	}
	closedir(d);
	/* forget the pids of ignored processes that are gone (bounded by the pids alive) */
	{
		size_t pos = 0, nr = 0;
		uint64_t pid, st, *gone_pids = malloc(a->ignored.nr * sizeof(*gone_pids) + 1);

		while (gone_pids && asc_u64map_next(&a->ignored, &pos, &pid, &st))
			if (start_time(pid) != st)
				gone_pids[nr++] = pid;
		for (size_t i = 0; i < nr; i++)
			asc_u64map_del(&a->ignored, gone_pids[i]);
		free(gone_pids);
	}
	return 0;
}

static int add_row(void **arr, size_t *nr, size_t size, const void *row)
{
	void *n = realloc(*arr, (*nr + 1) * size);

	if (!n)
		return -ENOMEM;
	memcpy((char *)n + *nr * size, row, size);
	*arr = n;
	(*nr)++;
	return 0;
}

/* The symbol of t's probe site id ("?" when the plan has none). */
static const char *site_sym(const struct agent_target *t, uint32_t id)
{
	for (size_t i = 0; t->have_plan && i < t->plan.nr_sites; i++)
		if (t->plan.sites[i].id == id)
			return t->plan.sites[i].sym;
	return "?";
}

/* The collectives' counters and the oldest call in progress of every live target. */
static void snapshot_hccl(struct agent *a)
{
	int hfd = bpf_map__fd(a->skel->maps.hccl), ifd = bpf_map__fd(a->skel->maps.hccl_inflight);
	struct agent_hccl_key hk, *hprev = NULL;
	uint64_t ik, *iprev = NULL;
	struct agent_hccl_call c;
	struct agent_target *t;

	for (size_t i = 0; i < a->nr_t; i++)
		if (!a->t[i]->exited) {
			a->t[i]->nr_hccl = 0;
			a->t[i]->have_stuck = 0;
		}
	while (!bpf_map_get_next_key(hfd, hprev, &hk)) {
		struct agent_hccl_row r = { .site = hk.site };

		hprev = &hk;
		t = live_target(a, hk.tgid);
		if (!t || bpf_map_lookup_elem(hfd, &hk, &r.h))
			continue;
		snprintf(r.op, sizeof(r.op), "%s", site_sym(t, hk.site));
		add_row((void **)&t->hccl, &t->nr_hccl, sizeof(r), &r);
	}
	while (!bpf_map_get_next_key(ifd, iprev, &ik)) {
		iprev = &ik;
		t = live_target(a, ik >> 32);
		if (!t || bpf_map_lookup_elem(ifd, &ik, &c))
			continue;
		if (!t->have_stuck || c.enter_ns < t->stuck.enter_ns)
			t->stuck = c;
		t->have_stuck = 1;
	}
}

void agent_procs_snapshot(struct agent *a)
{
	int pfd = bpf_map__fd(a->skel->maps.procs);
	int sfd = bpf_map__fd(a->skel->maps.streams);
	int mfd = bpf_map__fd(a->skel->maps.mem);
	struct agent_stream_key sk, *sprev = NULL;
	struct agent_mem_key mk, *mprev = NULL;
	struct agent_target *t;

	for (size_t i = 0; i < a->nr_t; i++) {
		uint32_t key = a->t[i]->pid;

		if (a->t[i]->exited)
			continue;
		bpf_map_lookup_elem(pfd, &key, &a->t[i]->p);
		a->t[i]->nr_streams = 0;
		a->t[i]->nr_mem = 0;
	}
	while (!bpf_map_get_next_key(sfd, sprev, &sk)) {
		struct agent_dev_row r = { .dev = sk.dev, .sq = sk.sq };

		sprev = &sk;
		t = live_target(a, sk.tgid);
		if (t && !bpf_map_lookup_elem(sfd, &sk, &r.s))
			add_row((void **)&t->streams, &t->nr_streams, sizeof(r), &r);
	}
	while (!bpf_map_get_next_key(mfd, mprev, &mk)) {
		struct agent_mem_row r = { .dev = mk.dev };

		mprev = &mk;
		t = live_target(a, mk.tgid);
		if (t && !bpf_map_lookup_elem(mfd, &mk, &r.m))
			add_row((void **)&t->mem, &t->nr_mem, sizeof(r), &r);
	}
	snapshot_hccl(a);
}

static void target_free(struct agent_target *t)
{
	asc_attach_set_free(t->set);
	if (t->have_plan)
		asc_probe_plan_free(&t->plan);
	free(t->streams);
	free(t->mem);
	free(t->hccl);
	free(t);
}

void agent_procs_reap(struct agent *a, double now)
{
	size_t i, j;

	for (i = j = 0; i < a->nr_t; i++) {
		struct agent_target *t = a->t[i];
		double age = now - t->exited;

		if (t->exited &&
		    ((age >= a->o.linger && t->scraped) || age >= 10 * a->o.linger + 60))
			target_free(t);
		else
			a->t[j++] = t;
	}
	a->nr_t = j;
}

void agent_procs_free(struct agent *a)
{
	for (size_t i = 0; i < a->nr_t; i++)
		target_free(a->t[i]);
	free(a->t);
	a->t = NULL;
	a->nr_t = 0;
	asc_u64map_free(&a->ignored);
	free(maps_buf);
	maps_buf = NULL;
	maps_cap = 0;
}

size_t agent_probes_attached(const struct agent *a)
{
	size_t n = 0;

	for (size_t i = 0; i < a->nr_t; i++)
		n += a->t[i]->probes;
	return n;
}
