// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * targets.c - the traced processes: adding them (-p, --comm, -- CMD),
 * adopting new ones, rescans after library loads, their gates in the tgids
 * map, and whether they are still alive.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "ascbpf_events.h"
#include "schedule.h"	/* before the skeleton: its .rodata holds a struct asc_sched */
#include "ascbpf.skel.h"
#include "ascbpf_maps.h"
#include "capture/capture.h"
#include "lib/log.h"
#include "trace/trace_priv.h"

static int add_target_q(struct trace *t, pid_t pid, int is_child, int quiet)
{
	struct target *tg;
	char path[64], stat[512], *state;
	int i;

	for (i = 0; i < t->nr_targets; i++)
		if (t->targets[i].pid == pid)
			return 0;
	if (t->nr_targets >= MAX_TARGETS) {
		asc_err("trace: at most %d processes\n", MAX_TARGETS);
		return -E2BIG;
	}
	tg = &t->targets[t->nr_targets];
	memset(tg, 0, sizeof(*tg));
	tg->pid = pid;
	tg->is_child = is_child;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	if (read_file(path, tg->comm, sizeof(tg->comm)) < 0) {
		if (!quiet)
			asc_err("trace: pid %d: no such process\n", pid);
		return -ESRCH;
	}
	tg->comm[strcspn(tg->comm, "\n")] = 0;
	/* an exited process its parent has not reaped still has /proc/PID: gone all the same */
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_file(path, stat, sizeof(stat)) > 0 && (state = strrchr(stat, ')')) &&
	    (state[1] == ' ' && (state[2] == 'Z' || state[2] == 'X'))) {
		if (!quiet)
			asc_err("trace: pid %d (%s) has exited (a zombie its parent has not "
				"reaped yet)\n", pid, tg->comm);
		return -ESRCH;
	}
	tg->rank = env_int(pid, t->o.rank_env);
	tg->device = env_int(pid, "ASCEND_DEVICE_ID");
	t->nr_targets++;
	return 0;
}

int add_target(struct trace *t, pid_t pid, int is_child)
{
	return add_target_q(t, pid, is_child, 0);
}

int find_comm(struct trace *t)
{
	struct dirent *de;
	DIR *d = opendir("/proc");
	int err = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)) && !err) {
		char path[64], comm[32];
		pid_t pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		if (pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		if (read_file(path, comm, sizeof(comm)) <= 0)
			continue;
		comm[strcspn(comm, "\n")] = 0;
		if (!strcmp(comm, t->o.comm))
			err = add_target(t, pid, 0);
	}
	closedir(d);
	return err;
}

/*
 * The gate of one process.  It is closed while the probes are being attached
 * (entry and return probes are separate links, attached one after the other,
 * so an open gate would record returns without entries), opened once
 * everything is attached, unless a schedule keeps it closed until the first
 * step boundary.
 */
int set_tgid(struct trace *t, pid_t pid, int open)
{
	struct asc_tgid_state st = {};
	__u32 key = pid;

	st.open = open && !t->o.sched.enabled;
	/*
	 * Armed only with the gate: a step probe that fires while the loader is
	 * still attaching (the step site attaches with the others, before the
	 * device channel starts) must not open the gate early or count steps
	 * that the reset below would number again.
	 */
	st.flags = open ? ASC_TGID_ARMED : 0;
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.tgids), &key, &st, BPF_ANY))
		return -errno;
	/*
	 * The first process is the BPF gate's fast path (.bss, no lookup).  Not
	 * with --step-py: its boundaries are set by the PyTorch object, which
	 * can only write the tgids map, so every gate must read the map.
	 */
	if (t->o.step_py)
		return 0;
	if (!t->skel->bss->fast_tgid || t->skel->bss->fast_tgid == (__u32)pid) {
		t->skel->bss->fast_open = st.open;
		__atomic_store_n(&t->skel->bss->fast_tgid, pid, __ATOMIC_RELEASE);
	}
	return 0;
}

/*
 * Opens the gate of an adopted process once its probes are attached (the
 * exec / fork programs add it closed) and arms its step boundaries
 * (ASC_TGID_ARMED); a schedule keeps control of the gate.
 */
static int set_gate(struct trace *t, pid_t pid, int open)
{
	int fd = bpf_map__fd(t->skel->maps.tgids);
	struct asc_tgid_state st;
	__u32 key = pid;
	int was;

	if (bpf_map_lookup_elem(fd, &key, &st))
		return -1;
	was = st.open;
	if (open)
		st.flags |= ASC_TGID_ARMED;	/* its step boundaries count from now on */
	if (!t->o.sched.enabled)
		st.open = open;
	bpf_map_update_elem(fd, &key, &st, BPF_EXIST);
	if (t->o.sched.enabled)
		return -1;	/* the schedule opens it, at its next recorded step */
	if (t->skel->bss->fast_tgid == key)
		__atomic_store_n(&t->skel->bss->fast_open, open, __ATOMIC_RELEASE);
	return was;
}

static void open_gate(struct trace *t, pid_t pid)
{
	set_gate(t, pid, 1);
}

/* Forgets every process: each program returns at its first lookup from now on. */
void clear_tgids(struct trace *t)
{
	int fd = bpf_map__fd(t->skel->maps.tgids);
	__u32 key, next;

	__atomic_store_n(&t->skel->bss->fast_open, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&t->skel->bss->fast_tgid, 0, __ATOMIC_RELEASE);
	while (!bpf_map_get_next_key(fd, NULL, &next)) {
		key = next;
		if (bpf_map_delete_elem(fd, &key))
			break;
	}
}

/*
 * --comm, and children of a -- CMD: processes the exec / fork programs put
 * in the tgids map since the last look become targets (capture, loader
 * hook, plan).  Their probes attach asynchronously: calls made before that
 * are not seen (documented).
 */
void adopt_new_tgids(struct trace *t)
{
	int fd = bpf_map__fd(t->skel->maps.tgids);
	__u32 key, next, *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		struct target *tg;

		key = next;
		prev = &key;
		if (target_of(t, key))
			continue;
		if (add_target_q(t, key, 0, 1)) {
			/* gone before we saw it: forget it (and do not retry every tick) */
			asc_dbg("trace: pid %u exited before it could be adopted\n", key);
			bpf_map_delete_elem(fd, &key);
			prev = NULL;	/* restart: the key we stood on is gone */
			continue;
		}
		tg = &t->targets[t->nr_targets - 1];
		asc_info("trace: adopting pid %d (%s)\n", tg->pid, tg->comm);
		tg->from_adopt = 1;	/* before open_capture: PROCESS may wait */
		if (open_capture(t, tg)) {
			t->nr_targets--;
			continue;
		}
		flush_early(t, tg->pid);
		attach_loader_hook(t, tg->pid, tg->pid);
		tg->adopted = 1;
		tg->from_adopt = 1;
		tg->rescan = 1;	/* plan and attach now, and after each library load */
	}
}

/* Rescans the maps of targets whose loader hook fired; attaches what is new. */
void do_rescans(struct trace *t)
{
	int i;

	for (i = 0; i < t->nr_targets; i++) {
		struct target *tg = &t->targets[i];

		if (!tg->rescan || tg->gone)
			continue;
		tg->rescan = 0;
		if (tg->w && !tg->process_written)
			write_process(t, tg);
		/*
		 * The gate stays open while new sites attach: calls of the libraries
		 * already attached go on being recorded; a call of a new site in that
		 * moment may show only its entry or only its return.
		 */
		if (plan_target(t, tg, 1) == 0)
			attach_plan(t, tg, tg->nr_plans - 1);
		if (tg->adopted && tg->nr_attached) {
			tg->adopted = 0;
			open_gate(t, tg->pid);
		}
		if (t->o.with_stack)
			snapshot_maps(tg);
		if (t->o.step && strcmp(t->o.step, "none") && !tg->step_attached)
			attach_custom_step(t, tg);
		/* adopted processes are new: their TSDRV bind names their card */
		if (!tg->dev_started && tg->nr_attached && !tg->from_adopt)
			join_devreader(t, tg, tg->device < 0 ? 0 : tg->device);
		if (tg->is_child)
			kill(tg->pid, SIGCONT);	/* stopped by the loader hook */
	}
}

/*
 * 0 while some traced process's capture can still be written; else the error
 * of the first failed capture (e.g. -ENOSPC), when the capture of every
 * process still traced has failed: nothing more can be kept, so the trace
 * stops as on SIGTERM instead of running on with its probes attached.
 */
int captures_failed(struct trace *t)
{
	int i, first = 0;

	for (i = 0; i < t->nr_targets; i++) {
		struct target *tg = &t->targets[i];
		int err;

		if (!tg->w || tg->gone)
			continue;
		err = asc_capture_error(tg->w);
		if (!err)
			return 0;
		if (!first)
			first = err;
	}
	return first;
}

/* Processes whose TSDRV bind (or first submission) named a card join its reader. */
void join_bound(struct trace *t)
{
	int i;

	for (i = 0; i < t->nr_targets; i++)
		if (t->targets[i].bind_dev) {
			join_devreader(t, &t->targets[i], t->targets[i].bind_dev - 1);
			t->targets[i].bind_dev = 0;
			/* the rank is set by the card's setup: re-read it */
			pthread_mutex_lock(&capture_lock);
			finish_process(t, &t->targets[i], 0);
			pthread_mutex_unlock(&capture_lock);
		}
}

/* A process is gone once it no longer exists or is a zombie nobody reaped yet. */
int process_gone(pid_t pid)
{
	char path[64], buf[512], *p;

	if (kill(pid, 0) && errno == ESRCH)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return 1;
	p = strrchr(buf, ')');		/* comm may hold spaces and parentheses */
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

int targets_alive(struct trace *t)
{
	int i, alive = 0;

	for (i = 0; i < t->nr_targets; i++) {
		struct target *tg = &t->targets[i];

		if (tg->gone)
			continue;
		if (tg->is_child) {
			if (asc_launch_poll(&t->child) == 1)
				tg->gone = 1;
		} else if (process_gone(tg->pid)) {
			tg->gone = 1;
		}
		if (tg->gone)
			asc_info("trace: pid %d exited\n", tg->pid);
		else
			alive++;
	}
	return alive;
}
