// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * metrics.c - the Prometheus text exposition format (version 0.0.4) of what
 * the agent counted: one family at a time (# HELP, # TYPE, then every
 * sample), label values escaped (\\, \", \n), counters named *_total,
 * histograms as cumulative _bucket{le=...} with +Inf, _sum and _count.
 * README.md ("ascbpf agent") lists every family and label.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "agent.skel.h"
#include "agent/agent.h"

struct buf {
	char *p;
	size_t len, cap;
	int err;
};

static void out(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->err)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->err = -EINVAL;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += n;
			return;
		}
		size_t ncap = b->cap * 2 + n + 1;
		char *np = realloc(b->p, ncap);

		if (!np) {
			b->err = -ENOMEM;
			return;
		}
		b->p = np;
		b->cap = ncap;
	}
}

static void family(struct buf *b, const char *name, const char *type, const char *help)
{
	out(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value as the format wants it: backslash, double quote and newline escaped. */
static void escape(const char *s, char *dst, size_t len)
{
	size_t j = 0;

	for (; *s && j + 3 < len; s++) {
		if (*s == '\\' || *s == '"') {
			dst[j++] = '\\';
			dst[j++] = *s;
		} else if (*s == '\n') {
			dst[j++] = '\\';
			dst[j++] = 'n';
		} else {
			dst[j++] = *s;
		}
	}
	dst[j] = 0;
}

/* pid="..",rank="..",job=".." of a target, into lbl */
static void proc_labels(const struct agent_target *t, char *lbl, size_t len)
{
	char job[2 * sizeof(t->job)], rank[2 * sizeof(t->rank)];

	escape(t->job, job, sizeof(job));
	escape(t->rank, rank, sizeof(rank));
	snprintf(lbl, len, "pid=\"%d\",rank=\"%s\",job=\"%s\"", t->pid, rank, job);
}

static const unsigned long long bounds_ns[AGENT_NR_BOUNDS] = AGENT_BOUNDS_NS;

static void steps(struct buf *b, struct agent *a, double now)
{
	char lbl[512];
	size_t i;

	family(b, "ascbpf_steps_total", "counter",
	       "Training step boundaries seen (optimizer step returns).");
	for (i = 0; i < a->nr_t; i++) {
		proc_labels(a->t[i], lbl, sizeof(lbl));
		out(b, "ascbpf_steps_total{%s} %llu\n", lbl, (unsigned long long)a->t[i]->p.steps);
	}
	family(b, "ascbpf_step_duration_seconds", "histogram",
	       "Time from one step boundary to the next.");
	for (i = 0; i < a->nr_t; i++) {
		const struct agent_proc *p = &a->t[i]->p;
		unsigned long long cum = 0;

		proc_labels(a->t[i], lbl, sizeof(lbl));
		for (int k = 0; k < AGENT_NR_BUCKETS; k++) {
			cum += p->step_bucket[k];
			if (k < AGENT_NR_BOUNDS)
				out(b, "ascbpf_step_duration_seconds_bucket{%s,le=\"%g\"} %llu\n",
				    lbl, bounds_ns[k] / 1e9, cum);
			else
				out(b, "ascbpf_step_duration_seconds_bucket{%s,le=\"+Inf\"} %llu\n",
				    lbl, cum);
		}
		out(b, "ascbpf_step_duration_seconds_sum{%s} %.9f\n", lbl, p->step_sum_ns / 1e9);
		out(b, "ascbpf_step_duration_seconds_count{%s} %llu\n", lbl, cum);
	}
	family(b, "ascbpf_last_step_age_seconds", "gauge",
	       "Seconds since the last step boundary (processes that crossed one).");
	for (i = 0; i < a->nr_t; i++) {
		const struct agent_target *t = a->t[i];
		double last = t->p.last_step_ns / 1e9;

		if (!t->p.steps)
			continue;
		proc_labels(t, lbl, sizeof(lbl));
		out(b, "ascbpf_last_step_age_seconds{%s} %.3f\n", lbl,
		    (t->exited ? t->exited : now) > last ? (t->exited ? t->exited : now) - last :
							   0);
	}
}

/* One counter per process from a field of struct agent_proc, scaled. */
static void per_proc(struct buf *b, struct agent *a, const char *name, const char *type,
		     const char *help, size_t off, double scale)
{
	char lbl[512];

	family(b, name, type, help);
	for (size_t i = 0; i < a->nr_t; i++) {
		uint64_t v;

		memcpy(&v, (const char *)&a->t[i]->p + off, sizeof(v));
		proc_labels(a->t[i], lbl, sizeof(lbl));
		if (scale == 1)
			out(b, "%s{%s} %llu\n", name, lbl, (unsigned long long)v);
		else
			out(b, "%s{%s} %.9f\n", name, lbl, v * scale);
	}
}

static void devices(struct buf *b, struct agent *a)
{
	char lbl[512];
	size_t i, j, k;

	family(b, "ascbpf_kernel_launches_total", "counter",
	       "Tasks submitted to the device (SQEs of halSqTaskSend), per device.");
	for (i = 0; i < a->nr_t; i++) {
		const struct agent_target *t = a->t[i];

		proc_labels(t, lbl, sizeof(lbl));
		/* per device: the sum over its streams (rows of one device are few) */
		for (j = 0; j < t->nr_streams; j++) {
			unsigned long long sum = 0;

			for (k = 0; k < j && t->streams[k].dev != t->streams[j].dev; k++)
				;
			if (k < j)
				continue; /* that device was written already */
			for (k = j; k < t->nr_streams; k++)
				if (t->streams[k].dev == t->streams[j].dev)
					sum += t->streams[k].s.tasks;
			out(b, "ascbpf_kernel_launches_total{%s,device=\"%u\"} %llu\n", lbl,
			    t->streams[j].dev, sum);
		}
	}
	family(b, "ascbpf_stream_tasks_total", "counter",
	       "Tasks submitted, per device and stream (submission queue).");
	for (i = 0; i < a->nr_t; i++) {
		proc_labels(a->t[i], lbl, sizeof(lbl));
		for (j = 0; j < a->t[i]->nr_streams; j++)
			out(b, "ascbpf_stream_tasks_total{%s,device=\"%u\",stream=\"%u\"} %llu\n",
			    lbl, a->t[i]->streams[j].dev, a->t[i]->streams[j].sq,
			    (unsigned long long)a->t[i]->streams[j].s.tasks);
	}
	family(b, "ascbpf_stream_submissions_total", "counter",
	       "halSqTaskSend calls, per device and stream.");
	for (i = 0; i < a->nr_t; i++) {
		proc_labels(a->t[i], lbl, sizeof(lbl));
		for (j = 0; j < a->t[i]->nr_streams; j++)
			out(b,
			    "ascbpf_stream_submissions_total{%s,device=\"%u\",stream=\"%u\"} "
			    "%llu\n",
			    lbl, a->t[i]->streams[j].dev, a->t[i]->streams[j].sq,
			    (unsigned long long)a->t[i]->streams[j].s.calls);
	}
}

static void memory(struct buf *b, struct agent *a)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} f[] = {
		{ "ascbpf_hbm_allocated_bytes",
		  "Device memory in blocks the caching allocator handed out (--memory-blocks).",
		  offsetof(struct agent_mem, allocated) },
		{ "ascbpf_hbm_peak_allocated_bytes",
		  "Highest ascbpf_hbm_allocated_bytes reported since the agent saw the process.",
		  offsetof(struct agent_mem, peak_allocated) },
	};
	char lbl[512];

	for (size_t n = 0; n < sizeof(f) / sizeof(f[0]); n++) {
		family(b, f[n].name, "gauge", f[n].help);
		for (size_t i = 0; i < a->nr_t; i++) {
			proc_labels(a->t[i], lbl, sizeof(lbl));
			for (size_t j = 0; j < a->t[i]->nr_mem; j++) {
				uint64_t v;

				memcpy(&v, (const char *)&a->t[i]->mem[j].m + f[n].off, sizeof(v));
				out(b, "%s{%s,device=\"%u\"} %llu\n", f[n].name, lbl,
				    a->t[i]->mem[j].dev, (unsigned long long)v);
			}
		}
	}
}

static const unsigned long long hccl_bounds_ns[AGENT_HCCL_NR_BOUNDS] = AGENT_HCCL_BOUNDS_NS;

/* One counter per (process, collective op) from a field of struct agent_hccl, scaled. */
static void per_op(struct buf *b, struct agent *a, const char *name, const char *type,
		   const char *help, size_t off, double scale)
{
	char lbl[512];

	family(b, name, type, help);
	for (size_t i = 0; i < a->nr_t; i++) {
		proc_labels(a->t[i], lbl, sizeof(lbl));
		for (size_t j = 0; j < a->t[i]->nr_hccl; j++) {
			const struct agent_hccl_row *r = &a->t[i]->hccl[j];
			uint64_t v;

			memcpy(&v, (const char *)&r->h + off, sizeof(v));
			if (off == offsetof(struct agent_hccl, entered))
				v -= r->h.returned; /* in progress */
			if (scale == 1)
				out(b, "%s{%s,op=\"%s\"} %llu\n", name, lbl, r->op,
				    (unsigned long long)v);
			else
				out(b, "%s{%s,op=\"%s\"} %.9f\n", name, lbl, r->op, v * scale);
		}
	}
}

/* One op's duration histogram: cumulative buckets, +Inf, _sum, _count. */
static void op_histogram(struct buf *b, const char *lbl, const struct agent_hccl_row *r)
{
	const char *name = "ascbpf_collective_duration_seconds";
	unsigned long long cum = 0;
	char le[32];

	for (int k = 0; k <= AGENT_HCCL_NR_BOUNDS; k++) {
		cum += r->h.bucket[k];
		if (k < AGENT_HCCL_NR_BOUNDS)
			snprintf(le, sizeof(le), "%g", hccl_bounds_ns[k] / 1e9);
		else
			snprintf(le, sizeof(le), "+Inf");
		out(b, "%s_bucket{%s,op=\"%s\",le=\"%s\"} %llu\n", name, lbl, r->op, le, cum);
	}
	out(b, "%s_sum{%s,op=\"%s\"} %.9f\n", name, lbl, r->op, r->h.ns / 1e9);
	out(b, "%s_count{%s,op=\"%s\"} %llu\n", name, lbl, r->op, cum);
}

static void collectives(struct buf *b, struct agent *a)
{
	char lbl[512];

	per_op(b, a, "ascbpf_collective_calls_total", "counter",
	       "HCCL op calls returned (libhccl Hccl<Op>), per op.",
	       offsetof(struct agent_hccl, returned), 1);
	per_op(b, a, "ascbpf_collective_failures_total", "counter",
	       "HCCL op calls that returned an error.", offsetof(struct agent_hccl, failures), 1);
	per_op(b, a, "ascbpf_collective_bytes_total", "counter",
	       "Bytes of the HCCL calls entered: count x element size (none for AlltoAllV, "
	       "Barrier).",
	       offsetof(struct agent_hccl, bytes), 1);
	per_op(b, a, "ascbpf_collective_wait_seconds_total", "counter",
	       "Host time inside HCCL op calls (they queue the op's tasks; they block on a "
	       "missing peer).",
	       offsetof(struct agent_hccl, ns), 1e-9);
	per_op(b, a, "ascbpf_collectives_in_progress", "gauge",
	       "HCCL op calls entered and not returned.", offsetof(struct agent_hccl, entered), 1);
	family(b, "ascbpf_collective_duration_seconds", "histogram",
	       "Host time of one HCCL op call, per op.");
	for (size_t i = 0; i < a->nr_t; i++) {
		proc_labels(a->t[i], lbl, sizeof(lbl));
		for (size_t j = 0; j < a->t[i]->nr_hccl; j++)
			op_histogram(b, lbl, &a->t[i]->hccl[j]);
	}
}

/* torch_npu's task queue: depth = entries queued and not yet run by its consumer thread. */
static void task_queue(struct buf *b, struct agent *a)
{
	char lbl[512];

	per_proc(b, a, "ascbpf_task_queue_enqueued_total", "counter",
		 "Entries put on torch_npu's task queue (Repository::Enqueue).",
		 offsetof(struct agent_proc, enqueues), 1);
	per_proc(b, a, "ascbpf_task_queue_dequeued_total", "counter",
		 "Entries its consumer thread ran (AsncExecFunc).",
		 offsetof(struct agent_proc, dequeues), 1);
	family(b, "ascbpf_task_queue_depth", "gauge",
	       "Entries on torch_npu's task queue not yet run, at the scrape.");
	for (size_t i = 0; i < a->nr_t; i++) {
		const struct agent_proc *p = &a->t[i]->p;

		proc_labels(a->t[i], lbl, sizeof(lbl));
		out(b, "ascbpf_task_queue_depth{%s} %llu\n", lbl,
		    (unsigned long long)(p->enqueues > p->dequeues ? p->enqueues - p->dequeues :
								     0));
	}
}

static void findings(struct buf *b, struct agent *a)
{
	char lbl[512];

	family(b, "ascbpf_finding", "gauge",
	       "1 while a trigger's condition holds (kind: hang, slow_step, alloc_failure, "
	       "straggler, collective_hang).");
	for (size_t i = 0; i < a->nr_t; i++) {
		proc_labels(a->t[i], lbl, sizeof(lbl));
		for (int k = 0; k < AGENT_NR_FINDINGS; k++)
			out(b, "ascbpf_finding{%s,kind=\"%s\"} %d\n", lbl, agent_finding_name(k),
			    a->t[i]->find[k].active);
	}
	family(b, "ascbpf_findings_total", "counter", "Times a trigger's condition began.");
	for (size_t i = 0; i < a->nr_t; i++) {
		proc_labels(a->t[i], lbl, sizeof(lbl));
		for (int k = 0; k < AGENT_NR_FINDINGS; k++)
			out(b, "ascbpf_findings_total{%s,kind=\"%s\"} %llu\n", lbl,
			    agent_finding_name(k), (unsigned long long)a->t[i]->find[k].episodes);
	}
}

static void self_metrics(struct buf *b, struct agent *a)
{
	static const char *const reasons[AGENT_NR_STATS] = { "map_full", "no_entry", "read" };
	struct rusage ru;
	long size_pages, rss_pages = 0;
	FILE *f;

	family(b, "ascbpf_events_dropped_total", "counter",
	       "Probe hits that could not be counted, by reason.");
	for (uint32_t k = 0; k < AGENT_NR_STATS; k++) {
		uint64_t v = 0;

		bpf_map_lookup_elem(bpf_map__fd(a->skel->maps.stats), &k, &v);
		out(b, "ascbpf_events_dropped_total{reason=\"%s\"} %llu\n", reasons[k],
		    (unsigned long long)v);
	}
	getrusage(RUSAGE_SELF, &ru);
	family(b, "ascbpf_agent_cpu_seconds_total", "counter", "CPU time of the agent.");
	out(b, "ascbpf_agent_cpu_seconds_total %.6f\n",
	    ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
		    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	f = fopen("/proc/self/statm", "re");
	if (f) {
		if (fscanf(f, "%ld %ld", &size_pages, &rss_pages) != 2)
			rss_pages = 0;
		fclose(f);
	}
	family(b, "ascbpf_agent_rss_bytes", "gauge", "Resident memory of the agent.");
	out(b, "ascbpf_agent_rss_bytes %lld\n", (long long)rss_pages * sysconf(_SC_PAGESIZE));
	family(b, "ascbpf_agent_probes_attached", "gauge", "Uprobes the agent holds.");
	out(b, "ascbpf_agent_probes_attached %zu\n", agent_probes_attached(a));
	family(b, "ascbpf_agent_processes", "gauge", "Processes followed (and exited ones shown).");
	out(b, "ascbpf_agent_processes %zu\n", a->nr_t);
	family(b, "ascbpf_agent_processes_discovered_total", "counter",
	       "Processes the agent started to follow.");
	out(b, "ascbpf_agent_processes_discovered_total %llu\n", (unsigned long long)a->discovered);
	family(b, "ascbpf_agent_scrapes_total", "counter",
	       "/metrics requests served and --textfile writes.");
	out(b, "ascbpf_agent_scrapes_total %llu\n", (unsigned long long)a->scrapes);
}

int agent_metrics_render(struct agent *a, double now, char **res, size_t *len)
{
	struct buf b = { .cap = 1 << 14 };

	b.p = malloc(b.cap);
	if (!b.p)
		return -ENOMEM;
	b.p[0] = 0;
	agent_procs_snapshot(a);
	a->scrapes++;
	family(&b, "ascbpf_process_probes", "gauge",
	       "Uprobes attached to the process (0 once it exited).");
	for (size_t i = 0; i < a->nr_t; i++) {
		char lbl[512], comm[2 * sizeof(a->t[i]->comm)];

		proc_labels(a->t[i], lbl, sizeof(lbl));
		escape(a->t[i]->comm, comm, sizeof(comm));
		out(&b, "ascbpf_process_probes{%s,comm=\"%s\"} %zu\n", lbl, comm, a->t[i]->probes);
	}
	steps(&b, a, now);
	per_proc(&b, a, "ascbpf_synchronizations_total", "counter",
		 "aclrtSynchronize{Device,Stream,Event} calls returned.",
		 offsetof(struct agent_proc, syncs), 1);
	per_proc(&b, a, "ascbpf_synchronization_seconds_total", "counter",
		 "Time the host spent in aclrtSynchronize* calls.",
		 offsetof(struct agent_proc, sync_ns), 1e-9);
	per_proc(&b, a, "ascbpf_segment_allocations_total", "counter",
		 "Device memory segments allocated (aclrtMalloc* that succeeded).",
		 offsetof(struct agent_proc, seg_allocs), 1);
	per_proc(&b, a, "ascbpf_segment_allocated_bytes_total", "counter",
		 "Bytes of those segments.", offsetof(struct agent_proc, seg_bytes), 1);
	per_proc(&b, a, "ascbpf_hbm_reserved_bytes", "gauge",
		 "Device memory in segments allocated (aclrtMalloc*) and not freed, since attach.",
		 offsetof(struct agent_proc, seg_live_bytes), 1);
	per_proc(&b, a, "ascbpf_alloc_failures_total", "counter",
		 "Device memory allocations (aclrtMalloc*) that returned an error.",
		 offsetof(struct agent_proc, alloc_failures), 1);
	devices(&b, a);
	task_queue(&b, a);
	collectives(&b, a);
	memory(&b, a);
	findings(&b, a);
	self_metrics(&b, a);
	if (b.err) {
		free(b.p);
		return b.err;
	}
	for (size_t i = 0; i < a->nr_t; i++)
		if (a->t[i]->exited)
			a->t[i]->scraped = 1;
	*res = b.p;
	*len = b.len;
	return 0;
}
