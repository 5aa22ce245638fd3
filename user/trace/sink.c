// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sink.c - where records go: the ring consumer's and the device readers'
 * records into the capture of their process (or kept until it is adopted),
 * and the per-card device readers processes join.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "ascbpf_maps.h"
#include "schedule.h" /* before the skeleton: its .rodata holds a struct asc_sched */
#include "ascbpf.skel.h"
#include "capture/capture.h"
#include "capture/records.h"
#include "discovery/pystack.h"
#include "trace/devtime.h"
#include "lib/log.h"
#include "trace/trace_priv.h"

static int emit_pyframe(const struct asc_pyframe *rec, size_t size, void *ctx)
{
	struct target *tg = ctx;

	return asc_capture_append(tg->w, rec, size);
}

#define ASC_MAX_EARLY 65536 /* records kept for processes being adopted */

/* Serialises capture appends: the ring-buffer consumer and the devtime threads. */
pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;

/* Keeps a record of a process the BPF side traces but we have not adopted yet. */
static int keep_early(struct trace *t, const void *rec, size_t size)
{
	void **ne, *copy;

	if (!(t->o.comm || t->have_child) || t->nr_early >= ASC_MAX_EARLY) {
		t->unrouted++;
		return 0;
	}
	if (!(t->nr_early & (t->nr_early - 1)) || !t->early) {
		size_t cap = t->nr_early ? t->nr_early * 2 : 64;

		ne = realloc(t->early, cap * sizeof(*ne));
		if (!ne) {
			t->unrouted++;
			return 0;
		}
		t->early = ne;
	}
	copy = malloc(size);
	if (!copy) {
		t->unrouted++;
		return 0;
	}
	memcpy(copy, rec, size);
	t->early[t->nr_early++] = copy;
	return 0;
}

/* Hands the kept records of a just-adopted process to its capture, in order. */
void flush_early(struct trace *t, uint32_t tgid)
{
	size_t i, j = 0;

	pthread_mutex_lock(&capture_lock);
	for (i = 0; i < t->nr_early; i++) {
		const struct asc_hdr *h = t->early[i];

		if (h->tgid == tgid) {
			sink_record(t, h, h->size);
			free(t->early[i]);
		} else {
			t->early[j++] = t->early[i];
		}
	}
	t->nr_early = j;
	pthread_mutex_unlock(&capture_lock);
}

/* The last task id per (card, stream) the process sent (struct target used[]). */
static void note_streams(struct target *tg, const struct asc_sqe *q)
{
	uint32_t k, n = q->nr_kept < ASC_MAX_SQES ? q->nr_kept : ASC_MAX_SQES;
	unsigned int i;

	for (k = 0; k < n; k++) {
		uint16_t stream = q->sqe[k].stream_id;

		for (i = 0; i < tg->nr_used; i++)
			if (tg->used[i].dev == q->dev_id && tg->used[i].stream == stream)
				break;
		if (i == tg->nr_used) {
			if (i == PRECHAN_STREAMS)
				continue;
			tg->used[i].dev = q->dev_id;
			tg->used[i].stream = stream;
			tg->nr_used++;
		}
		tg->used[i].last_task = q->sqe[k].task_id;
		tg->used[i].done = 0;
	}
}

/*
 * Whether device record d goes to tg: always while it runs (a card's records
 * carry no pid; the converter joins them through its SQEs); once it is gone
 * and drained, only its own tasks' (struct target used[]).
 */
static int devtask_for(struct target *tg, const struct asc_devtask *d)
{
	unsigned int i;
	uint16_t after;

	if (!tg->gone_drained || tg->nr_used == PRECHAN_STREAMS)
		return 1;
	for (i = 0; i < tg->nr_used; i++) {
		struct used_stream *u = &tg->used[i];

		if (u->dev != d->dev_id || u->stream != d->stream_id)
			continue;
		if (u->done)
			return 0;
		after = (uint16_t)(d->task_id - u->last_task);
		if (after == 0 || (after > 0 && after < 0x8000))
			u->done = 1; /* its last task, or a later job's: nothing more of it */
		return after == 0 || after >= 0x8000;
	}
	return 0;
}

int sink_record(void *ctx, const void *rec, size_t size)
{
	struct trace *t = ctx;
	const struct asc_hdr *h = rec;
	struct target *tg = target_of(t, h->tgid);

	if (!tg || !tg->w)
		return keep_early(t, rec, size);
	tg->records++;
	if (h->type == ASC_REC_SQE) {
		const struct asc_sqe *q = rec;

		if (!tg->first_sqe_ns)
			tg->first_sqe_ns = q->hdr.ts_ns ? q->hdr.ts_ns : 1;
		note_streams(tg, q);
		if (tg->pre.on)
			prechan_on_sqe(&tg->pre, q);
		/*
		 * A process that started later joins its card's reader at its TSDRV
		 * bind; below Level2 the bind is not seen (no ioctl tracepoints), so
		 * its first submission names the card (joined from the main loop).
		 */
		if (!tg->dev_started && !tg->bind_dev)
			tg->bind_dev = q->dev_id + 1;
		if (q->sqe_num > 1 && tg->launch_marks == LAUNCH_MARKS_OFF && t->o.level == 0)
			tg->launch_marks = LAUNCH_MARKS_WANTED;
	}
	if (h->type == ASC_REC_FDBIND) {
		const struct asc_fdbind *b = rec;

		/* a TSDRV bind names the card the process uses (joined from the main loop) */
		if (!strncmp(b->module_name, "TSDRV", sizeof(b->module_name)) && b->device_id >= 0)
			tg->bind_dev = b->device_id + 1;
	}
	if (h->type == ASC_REC_PYSTACK && tg->pyres) {
		int err = asc_capture_append(tg->w, rec, size);

		asc_pystack_resolve_rec(tg->pyres, rec, emit_pyframe, tg);
		return err;
	}
	if (h->type == ASC_REC_STACK) {
		const struct asc_stack *st = rec;
		uint32_t i;

		for (i = 0; i < st->nr && i < ASC_STACK_DEPTH; i++)
			ip_insert(tg, st->ips[i]);
	}
	return asc_capture_append(tg->w, rec, size);
}

/* devtime hands its records (DEVTASK, DEVCLOCK, LOST) here, from its thread. */

static int sink_devtime(void *ctx, const void *rec, size_t size)
{
	struct devreader *r = ctx;
	const struct asc_hdr *rh = rec;
	int i, err = 0;

	pthread_mutex_lock(&capture_lock);
	if (rh->type == ASC_REC_DEVCLOCK && !r->have_clock && size == sizeof(r->start_clock)) {
		memcpy(&r->start_clock, rec, size);
		r->have_clock = 1;
	} else if (rh->type == ASC_REC_DEVTASK && size == sizeof(*r->hist)) {
		if (!r->hist) {
			r->hist = malloc(DEVREADER_HISTORY * sizeof(*r->hist));
			r->hist_ns = malloc(DEVREADER_HISTORY * sizeof(*r->hist_ns));
			if (!r->hist_ns) {
				free(r->hist);
				r->hist = NULL;
			}
		}
		if (r->hist) {
			size_t at = (r->hist_head + r->hist_nr) % DEVREADER_HISTORY;

			memcpy(&r->hist[at], rec, size);
			r->hist_ns[at] = now_ns(CLOCK_MONOTONIC);
			if (r->hist_nr < DEVREADER_HISTORY)
				r->hist_nr++;
			else
				r->hist_head = (r->hist_head + 1) % DEVREADER_HISTORY;
		}
	}
	for (i = 0; i < r->nr_members; i++) {
		struct target *tg = r->members[i];
		struct asc_hdr *h = (struct asc_hdr *)rec;

		if (!tg->w)
			continue;
		if (h->type == ASC_REC_DEVTASK && !devtask_for(tg, rec))
			continue;
		if (h->type == ASC_REC_DEVTASK && tg->pre.on)
			prechan_on_devtask(&tg->pre, rec);
		h->tgid = tg->pid; /* the copy in each capture names its process */
		tg->dev_records++;
		if (asc_capture_append(tg->w, rec, size) && !err)
			err = -EIO;
	}
	pthread_mutex_unlock(&capture_lock);
	return err;
}

static void join_devreader_(struct trace *t, struct target *tg, uint32_t dev);

/*
 * Makes tg a member of dev's reader, starting the reader if needed (through
 * tg's HAL).  Called from the main loop only: a reader's first records go
 * through sink_devtime, which takes capture_lock.
 */
void join_devreader(struct trace *t, struct target *tg, uint32_t dev)
{
	join_devreader_(t, tg, dev);
	/*
	 * Started (or tried once): no process is held at its first submission to
	 * the card any more.  Not before: a task sent while the reader starts
	 * would complete with no channel reading.
	 */
	if (dev < ASC_HOLD_DEVS)
		__atomic_store_n(&t->skel->bss->chan_on[dev], 1, __ATOMIC_RELEASE);
}

static void join_devreader_(struct trace *t, struct target *tg, uint32_t dev)
{
	struct devreader *r = NULL;
	int i;

	if (!(t->o.activities & ASC_ACT_NPU) || !tg->w)
		return;
	for (i = 0; i < t->nr_readers; i++)
		if (t->readers[i]->dev == dev)
			r = t->readers[i];
	if (!r) {
		if (t->nr_readers >= ASC_MAX_DEVREADERS)
			return;
		r = calloc(1, sizeof(*r));
		if (!r)
			return;
		r->dev = dev;
		t->readers[t->nr_readers++] = r;
	}
	for (i = 0; i < r->nr_members; i++)
		if (r->members[i] == tg)
			return;
	if (r->nr_members < MAX_TARGETS) {
		size_t k;

		pthread_mutex_lock(&capture_lock);
		r->members[r->nr_members++] = tg;
		tg->pre.young_drains = 2; /* its records flow from now on */
		/* a reader that already runs: what it delivered before, as if a member */
		if (r->have_clock) {
			r->start_clock.hdr.tgid = tg->pid;
			asc_capture_append(tg->w, &r->start_clock, sizeof(r->start_clock));
		}
		for (k = 0; k < r->hist_nr && tg->first_sqe_ns; k++) {
			size_t at = (r->hist_head + k) % DEVREADER_HISTORY;
			struct asc_devtask *d = &r->hist[at];

			/* a task completes after its submission: earlier ones are not its */
			if (r->hist_ns[at] < tg->first_sqe_ns)
				continue;
			d->hdr.tgid = tg->pid;
			if (tg->pre.on)
				prechan_on_devtask(&tg->pre, d);
			tg->dev_records++;
			asc_capture_append(tg->w, d, sizeof(*d));
		}
		pthread_mutex_unlock(&capture_lock);
	}
	tg->dev_started = 1;
	/*
	 * The reader loads the HAL the process mapped; a short-lived process (a
	 * rank done in 0.1 s) may be gone by then: then through a live traced
	 * process that reads a card (the same HAL).
	 */
	if (!r->dt && !process_gone(tg->pid))
		r->dt = asc_devtime_start(tg->pid, dev, sink_devtime, r);
	for (i = 0; !r->dt && process_gone(tg->pid) && i < t->nr_targets; i++)
		if (&t->targets[i] != tg && t->targets[i].dev_started &&
		    !process_gone(t->targets[i].pid))
			r->dt = asc_devtime_start(t->targets[i].pid, dev, sink_devtime, r);
	/*
	 * From here on every task it submits completes with the channel open.
	 * Without a channel no submission has a device record: nothing to tell.
	 */
	pthread_mutex_lock(&capture_lock);
	if (r->dt && tg->pre.on && !tg->pre.open_ns)
		tg->pre.open_ns = now_ns(CLOCK_MONOTONIC);
	else if (!r->dt && tg->pre.on && process_gone(tg->pid))
		tg->pre.ended_first = 1; /* every submission it made came before a channel */
	else if (!r->dt)
		prechan_free(&tg->pre);
	pthread_mutex_unlock(&capture_lock);
}

int ring_cb(void *ctx, void *data, size_t size)
{
	struct trace *t = ctx;

	pthread_mutex_lock(&capture_lock);
	asc_consumer_handle(&t->cons, data, size);
	pthread_mutex_unlock(&capture_lock);
	return 0; /* a bad record never stops the drain */
}

/*
 * The writes the unwind guard asked for thread tid of pid (ascbpf_maps.h
 * struct asc_unwind_fix), through /proc/PID/mem (CAP_SYS_PTRACE, kept by
 * privs.h), each only where the slot still holds what it replaces; then
 * the process goes on.  Runs at once in the ring callback: the process is
 * stopped meanwhile.
 */
static void unwind_fixup(struct trace *t, pid_t pid, uint32_t tid, int stopped)
{
	int map_fd = bpf_map__fd(t->skel->maps.unwind_fixes), mem = -1;
	struct asc_unwind_fix f;
	char path[64];
	uint32_t i;

	if (!bpf_map_lookup_elem(map_fd, &tid, &f)) {
		snprintf(path, sizeof(path), "/proc/%d/mem", pid);
		mem = open(path, O_RDWR | O_CLOEXEC);
		for (i = 0; i < f.nr && i < ASC_UNWIND_MAX_FRAMES; i++) {
			uint64_t want = f.rearm ? f.val[i] : f.tramp;
			uint64_t put = f.rearm ? f.tramp : f.val[i], cur = 0;

			if (!(f.mask & (1ull << i)))
				continue;
			if (mem >= 0 && pread(mem, &cur, sizeof(cur), (off_t)f.slot[i]) == 8 &&
			    cur == want && pwrite(mem, &put, sizeof(put), (off_t)f.slot[i]) == 8)
				t->unwind_fixed++;
			else if (cur != want || mem < 0)
				t->unwind_failed++;
		}
		if (mem >= 0)
			close(mem);
		bpf_map_delete_elem(map_fd, &tid);
	}
	t->unwind_holds++;
	if (stopped)
		asc_holdwatch_release(&t->holds, pid);
}

void unwind_summary(struct trace *t)
{
	int ncpu = libbpf_num_possible_cpus(), c;
	uint64_t *v = ncpu > 0 ? calloc(ncpu, sizeof(*v)) : NULL, missed = 0;
	uint32_t key = 1; /* bpf/unwind.bpf.h unwind_stats: not held */

	if (t->unwind_guard && v &&
	    !bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.unwind_stats), &key, v))
		for (c = 0; c < ncpu; c++)
			missed += v[c];
	free(v);
	if (missed)
		asc_warn("trace: unwind guard: %llu C++ exception%s through probed functions could "
			 "not be held (no release watchdog, or too many threads unwinding at "
			 "once): the process may have aborted\n",
			 (unsigned long long)missed, missed == 1 ? "" : "s");
	if (t->unwind_holds)
		asc_info("trace: unwind guard: %llu hold%s for C++ exceptions through probed "
			 "functions, %llu return address%s rewritten, %llu not\n",
			 (unsigned long long)t->unwind_holds, t->unwind_holds == 1 ? "" : "s",
			 (unsigned long long)t->unwind_fixed, t->unwind_fixed == 1 ? "" : "es",
			 (unsigned long long)t->unwind_failed);
}

void on_loader(void *ctx, uint32_t tgid, uint64_t hold, uint64_t arg)
{
	struct trace *t = ctx;
	struct target *tg = target_of(t, tgid);

	if ((hold & ~(uint64_t)ASC_HOLD_FAILED) == ASC_HOLD_UNWIND) {
		unwind_fixup(t, (pid_t)tgid, (uint32_t)arg, !(hold & ASC_HOLD_FAILED));
		return;
	}
	if (hold & ASC_HOLD_FAILED) {
		t->holds_failed++; /* not stopped: adopted / read while it runs (summary) */
		hold = ASC_HOLD_NONE;
	}
	if (!tg) {
		__u32 key = tgid;
		struct asc_tgid_state st;

		t->adopt_pending = 1; /* a new process from the exec / fork programs */
		if (hold == ASC_HOLD_NONE)
			return;
		/* its adoption was refused already (no longer in the map): let it go on */
		if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.tgids), &key, &st)) {
			asc_holdwatch_release(&t->holds, tgid);
			return;
		}
		if (t->nr_early_holds < MAX_TARGETS) {
			t->early_holds[t->nr_early_holds].pid = tgid;
			t->early_holds[t->nr_early_holds++].kind = (int)hold;
		} else {
			asc_holdwatch_release(&t->holds, tgid); /* never left stopped */
		}
		return;
	}
	/*
	 * A hold at a first submission is released after a rescan too: the
	 * SIGCONT also ends any other thread's stop at the loader hook whose
	 * record is not consumed yet, and that library is mapped by then.
	 */
	tg->rescan = 1;
	if (hold == ASC_HOLD_CHAN)
		tg->held_chan = (int)(arg < ASC_HOLD_DEVS ? arg : 0) + 1;
	else if (hold != ASC_HOLD_NONE)
		tg->held = 1;
}
