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
#include "schedule.h" /* before the skeleton: its .rodata holds a struct asc_sched */
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
				"reaped yet)\n",
				pid, tg->comm);
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

/* Steps are counted unless --step none. */
static int steps_on(const struct trace *t)
{
	return !(t->o.step && !strcmp(t->o.step, "none"));
}

/*
 * Step 0 of a process starts where its gate is armed (the trace's start for
 * it), as torch_npu's ProfilerStep#0 starts at profile.start(): a boundary
 * (the return of the optimizer step, bpf/ascbpf.bpf.c) ends step N and
 * starts N + 1, so the BPF side counts from 1.  The STEP record of step 0
 * has no probe (probe_id 0), its state is the schedule's action for step 0
 * (torch_npu's schedule(0)), and the gate follows it.  Returns the gate.
 */
static int start_step0(struct trace *t, pid_t pid, struct asc_tgid_state *st)
{
	struct asc_sched s = t->o.sched;
	struct target *tg = target_of(t, (uint32_t)pid);
	struct asc_step r = {};
	__u32 action = asc_sched_action(&s, 0);

	st->next_step = 1;
	if (tg && tg->w) {
		r.hdr.type = ASC_REC_STEP;
		r.hdr.size = sizeof(r);
		r.hdr.tgid = pid;
		r.hdr.tid = pid;
		r.hdr.ts_ns = now_ns(CLOCK_MONOTONIC);
		r.step = 0;
		r.state = action;
		if (asc_capture_append(tg->w, &r, sizeof(r)))
			asc_warn("trace: pid %d: cannot write the STEP record of step 0\n", pid);
	}
	return asc_sched_recording(action);
}

/*
 * The gate of one process.  It is closed while the probes are being attached
 * (entry and return probes are separate links, attached one after the other,
 * so an open gate would record returns without entries), opened once
 * everything is attached as the schedule says of step 0 (start_step0).
 */
int set_tgid(struct trace *t, pid_t pid, int open)
{
	struct asc_tgid_state st = {};
	__u32 key = pid;

	st.open = open && !t->o.sched.enabled;
	if (open && steps_on(t))
		st.open = start_step0(t, pid, &st);
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
	if (t->o.step_py || t->step_py_active)
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
	if (!t->o.sched.enabled)
		st.open = open;
	if (open && !(st.flags & ASC_TGID_ARMED) && steps_on(t))
		st.open = start_step0(t, pid, &st); /* its steps count from now on */
	if (open)
		st.flags |= ASC_TGID_ARMED;
	bpf_map_update_elem(fd, &key, &st, BPF_EXIST);
	if (t->skel->bss->fast_tgid == key)
		__atomic_store_n(&t->skel->bss->fast_open, st.open, __ATOMIC_RELEASE);
	if (t->o.sched.enabled)
		return -1; /* the schedule decides it, step by step */
	return was;
}

static void open_gate(struct trace *t, pid_t pid)
{
	set_gate(t, pid, 1);
}

/* Closes every gate, keeping the entries (trace_priv.h). */
void close_tgids(struct trace *t)
{
	int fd = bpf_map__fd(t->skel->maps.tgids);
	struct asc_tgid_state st;
	__u32 key, next, *prev = NULL;

	__atomic_store_n(&t->skel->bss->fast_open, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&t->skel->bss->fast_tgid, 0, __ATOMIC_RELEASE);
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &st))
			continue;
		st.open = 0;
		st.flags &= ~ASC_TGID_ARMED; /* no step boundary opens it again */
		bpf_map_update_elem(fd, &key, &st, BPF_EXIST);
	}
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
 * Whether the BPF side announced a hold of pid before it was adopted (and
 * forgets it); with release, lets the process go on.
 */
static int take_early_hold(struct trace *t, pid_t pid, int release)
{
	int i, found = 0;

	for (i = 0; i < t->nr_early_holds; i++)
		if (t->early_holds[i].pid == pid) {
			found = 1;
			t->early_holds[i--] = t->early_holds[--t->nr_early_holds];
		}
	if (found && release)
		asc_holdwatch_release(&t->holds, pid);
	return found;
}

/* Lets a process the BPF side stopped go on (our child, or through the watchdog). */
void release_target(struct trace *t, struct target *tg)
{
	/* a hold at a first submission waits for the card's reader, whatever else it waits for */
	if (tg->held_chan) {
		join_devreader(t, tg, tg->held_chan - 1);
		if (tg->bind_dev == tg->held_chan)
			tg->bind_dev = 0;
	}
	tg->held = 0;
	tg->held_chan = 0;
	if (tg->is_child)
		kill(tg->pid, SIGCONT);
	else
		asc_holdwatch_release(&t->holds, tg->pid);
}

/*
 * At the end (gates closed, programs detached): every process the BPF side
 * may have stopped goes on, adopted or not.
 */
void release_all(struct trace *t)
{
	int i;

	for (i = 0; i < t->nr_early_holds; i++)
		asc_holdwatch_release(&t->holds, t->early_holds[i].pid);
	t->nr_early_holds = 0;
	for (i = 0; i < t->nr_targets; i++)
		if (!t->targets[i].gone &&
		    (t->targets[i].is_child || t->targets[i].held || t->targets[i].held_chan))
			release_target(t, &t->targets[i]);
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
			take_early_hold(t, key, 1); /* or too many: never left stopped */
			prev = NULL;		    /* restart: the key we stood on is gone */
			continue;
		}
		tg = &t->targets[t->nr_targets - 1];
		asc_info("trace: adopting pid %d (%s)\n", tg->pid, tg->comm);
		tg->from_adopt = 1; /* before open_capture: PROCESS may wait */
		if (open_capture(t, tg)) {
			/* not traced: forgotten (not retried every tick) and never left stopped */
			t->nr_targets--;
			bpf_map_delete_elem(fd, &key);
			if (!take_early_hold(t, key, 1))
				asc_holdwatch_release(&t->holds, key); /* a hold to come */
			prev = NULL;
			continue;
		}
		/* held at its fork / exec: let go once its probes are attached (do_rescans) */
		tg->held = take_early_hold(t, key, 0);
		flush_early(t, tg->pid);
		attach_loader_hook(t, tg->pid, tg->pid);
		tg->adopted = 1;
		tg->from_adopt = 1;
		tg->rescan = 1; /* plan and attach now, and after each library load */
	}
}

/* Rescans the maps of targets whose loader hook fired; attaches what is new. */
void do_rescans(struct trace *t)
{
	int i, card;

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
		/*
		 * Adopted processes are new: their TSDRV bind names their card.  So
		 * is our child's: it is held at its first submission to a card
		 * (ASC_HOLD_CHAN) until the card's reader runs, and a launcher that
		 * never sends a task joins no card (no device records of its ranks).
		 * A process running before the trace joins the card it holds open,
		 * else its first submission names it.
		 */
		card = -1;
		if (!tg->dev_started && tg->nr_attached && !tg->from_adopt && !tg->is_child)
			card = fd_card(tg->pid);
		if (card >= 0)
			join_devreader(t, tg, (uint32_t)card);
		if (tg->is_child || tg->held || tg->held_chan)
			release_target(t, tg); /* loader hook, fork, exec, first submission */
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

/*
 * The capture of a process that has exited gives back its frame buffers and
 * compression context (about 3 MiB, asc_capture_idle) once a tick brought
 * it nothing: a trace that adopts process after process (--comm, a job
 * after another) keeps a few hundred bytes per finished one, not megabytes
 * (issue 19, the soak's RSS growth).  A late device record takes them again
 * for a while.
 */
void idle_gone_captures(struct trace *t)
{
	int i;

	pthread_mutex_lock(&capture_lock);
	for (i = 0; i < t->nr_targets; i++) {
		struct target *tg = &t->targets[i];
		uint64_t n = tg->records + tg->dev_records;

		if (!tg->gone || !tg->w)
			continue;
		tg->gone_drained = 1; /* a drain ran since it was found gone */
		if (n != tg->idle_mark) {
			tg->idle_mark = n;
			tg->idle = 0;
		} else if (!tg->idle && !asc_capture_idle(tg->w)) {
			tg->idle = 1;
		}
	}
	pthread_mutex_unlock(&capture_lock);
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
	p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
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
