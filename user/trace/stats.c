// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stats.c - the BPF side's counters and what ends each capture (STATS,
 * LOST, SYMBOL, the end CLOCK).
 */
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "ascbpf_events.h"
#include "schedule.h" /* before the skeleton: its .rodata holds a struct asc_sched */
#include "ascbpf.skel.h"
#include "ascbpf_maps.h"
#include "capture/capture.h"
#include "capture/records.h"
#include "trace/devtime.h"
#include "lib/log.h"
#include "trace/trace_priv.h"

void read_bpf_stats(struct trace *t, uint64_t *drops, uint64_t *ioctl_lost, uint64_t *sqe_lost,
		    uint64_t *name_lost)
{
	int ncpu = libbpf_num_possible_cpus();
	struct asc_cpu_stats *v;
	__u32 zero = 0;
	int i;

	*drops = *ioctl_lost = *sqe_lost = *name_lost = 0;
	if (ncpu <= 0 || !t->skel)
		return;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return;
	if (!bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.stats), &zero, v))
		for (i = 0; i < ncpu; i++) {
			*drops += v[i].drops;
			*ioctl_lost += v[i].ioctl_lost;
			*sqe_lost += v[i].sqe_lost;
			*name_lost += v[i].name_lost;
		}
	free(v);
}

void finish_target(struct trace *t, struct target *tg, uint64_t drops, uint64_t lost,
		   uint64_t sqe_lost, uint64_t name_lost)
{
	struct asc_stats st = {};
	struct asc_devtime_stats ds = {};
	int i;

	if (!tg->w)
		return;
	if (!tg->process_written)
		write_process(t, tg);
	finish_process(t, tg, 1);
	if (!tg->nr_attached) {
		char libs[512] = "";
		size_t pos = 0, k;

		for (k = 0; asc_probe_table[k].lib && pos < sizeof(libs) - 1; k++)
			if (asc_probe_table[k].family & t->families)
				lib_list_add(libs, sizeof(libs), &pos, asc_probe_table[k].lib);
		asc_warn("trace: pid %d (%s): no Ascend library was loaded, nothing traced; "
			 "looked for: %s\n",
			 tg->pid, tg->comm, libs);
	}
	for (i = 0; i < t->nr_readers; i++) {
		struct devreader *r = t->readers[i];
		struct asc_devtime_stats one;
		int k;

		for (k = 0; k < r->nr_members; k++)
			if (r->members[k] == tg)
				break;
		if (k == r->nr_members)
			continue;
		asc_devtime_get_stats(r->dt, &one);
		ds.records += one.records;
		ds.tasks += one.tasks;
		ds.lost += one.lost;
	}
	append_threads(tg);
	if (t->o.with_stack) {
		if (!tg->gone)
			snapshot_maps(tg);
		write_symbols(tg);
	}
	st.hdr.type = ASC_REC_STATS;
	st.hdr.size = sizeof(st);
	st.hdr.tgid = tg->pid;
	st.hdr.ts_ns = now_ns(CLOCK_MONOTONIC);
	st.events = tg->records;
	st.drops = drops;
	st.devtask_records = ds.records;
	st.devtask_drops = ds.lost;
	st.bytes = t->cons.bytes;
	asc_capture_append(tg->w, &st, sizeof(st));
	if (drops)
		append_text(tg, ASC_REC_LOST, drops, "ring buffer reserve failures (all CPUs)");
	if (lost)
		append_text(tg, ASC_REC_LOST, lost, "ioctls not recorded (in-flight table full)");
	if (sqe_lost)
		append_text(tg, ASC_REC_LOST, sqe_lost,
			    "SQE headers not recorded (halSqTaskSend calls over 64 SQEs)");
	if (name_lost)
		append_text(tg, ASC_REC_LOST, name_lost,
			    "op names not read (user memory faulted; OPNAME empty or missing)");
	pthread_mutex_lock(&capture_lock);
	if (tg->pre.on && (tg->pre.open_ns || tg->pre.ended_first)) {
		uint64_t n = prechan_count(&tg->pre);

		if (tg->pre.overflow)
			asc_dbg("trace: pid %d: %llu early submissions not kept (set full)\n",
				tg->pid, (unsigned long long)tg->pre.overflow);
		if (n) {
			asc_info("trace: pid %d: %llu submission%s before its device channel "
				 "started (no device time)%s\n",
				 tg->pid, (unsigned long long)n, n == 1 ? "" : "s",
				 tg->pre.ended_first ? ": it ended before a channel could start" :
						       "");
			append_lost(tg, ASC_LOST_BEFORE_DEVCHANNEL, n,
				    ASC_LOST_BEFORE_DEVCHANNEL_TEXT);
		}
	}
	prechan_free(&tg->pre);
	pthread_mutex_unlock(&capture_lock);
	append_clock(tg, ASC_CLOCK_END);
}
