// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report.c - `ascbpf report [--json] [--top N] [--threshold NAME=VALUE]...
 * OUTPUT_DIR_OR_CAPTURE`: the performance problems the Ascend profiler guide
 * teaches people to find by eye in Trace View, found from a capture.
 *
 * Reading and detecting live elsewhere (report_input.c, report_detect.c);
 * this file turns the result into findings and prints them, as plain text or
 * as one JSON object (--json, the format scripts and the integration tests
 * parse: keys may be added, not renamed).  Every finding carries the numbers
 * it was decided on, the thresholds it was compared with, and the change the
 * profiler guide suggests.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "commands.h"
#include "lib/json_writer.h"
#include "lib/log.h"
#include "report/report_detect.h"

#define MB		(1024.0 * 1024.0)
#define STEP_ROW	"%8s %12.1f %12.1f %10.1f %12.1f %12.1f %6.1f%% %10.1f %7.0f %8llu %s\n"
#define MAX_FINDINGS	64
#define MAX_EVIDENCE	12

static double us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

struct evidence {
	const char *key;
	double value;
};

struct finding {
	const char *id;			/* stable name for scripts */
	char summary[1024];		/* one line with the numbers */
	struct evidence ev[MAX_EVIDENCE];
	int nev;
	const char *thresholds[4];	/* names compared against */
	int nthr;
	const char *op, *api, *stack;	/* call site, when the finding has one */
	const char *suggestion;
};

struct report {
	const struct asc_rpt_source *src;
	const struct asc_rpt_thresholds *t;
	const struct asc_rpt_result *res;
	struct finding f[MAX_FINDINGS];
	int nf;
	struct asc_out *o;
};

static size_t count_kind(const struct asc_rpt_source *src, uint32_t kind)
{
	size_t i, n = 0;

	for (i = 0; i < src->in.nr_kernels; i++)
		n += src->in.kernels[i].kind == kind;
	return n;
}

static double thr(const struct asc_rpt_thresholds *t, const char *name)
{
	const char *n;
	double v;
	size_t i;

	for (i = 0; (n = asc_rpt_threshold_get(t, i, &v)); i++)
		if (!strcmp(n, name))
			return v;
	return NAN;
}

static struct finding *add_finding(struct report *r, const char *id, const char *suggestion)
{
	struct finding *f;

	if (r->nf == MAX_FINDINGS)
		return NULL;
	f = &r->f[r->nf++];
	memset(f, 0, sizeof(*f));
	f->id = id;
	f->suggestion = suggestion;
	return f;
}

static void ev(struct finding *f, const char *key, double value)
{
	if (f->nev < MAX_EVIDENCE)
		f->ev[f->nev++] = (struct evidence){ key, value };
}

static void uses(struct finding *f, const char *name)
{
	if (f->nthr < 4)
		f->thresholds[f->nthr++] = name;
}

static const char *const SUGGEST_DISPATCH =
	"operator dispatch is the bottleneck: the host does not issue kernels as fast as the NPU "
	"runs them. Bind cores (pin the training process and its acl_thread to CPU cores of the "
	"NPU's NUMA node, e.g. CPU_AFFINITY_CONF=1 or taskset/numactl), enable the level-2 task "
	"queue (TASK_QUEUE_ENABLE=2), increase batch size so each kernel does more work, and cut "
	"small operators (fused operators, graph mode).";
static const char *const SUGGEST_OPTIMIZER =
	"the optimizer runs per parameter, launching the same few small kernels once for every "
	"parameter. Use an NPU-affine fused optimizer (torch_npu.optim.NpuFusedAdamW, "
	"NpuFusedAdam, NpuFusedSGD, ... or the optimizer's foreach/fused implementation), which "
	"updates all parameters with a few kernels over flattened buffers.";
static const char *const SUGGEST_TRANSDATA =
	"TransData kernels convert tensors between formats (e.g. NCHW and the NPU-private "
	"NC1HWC0/FRACTAL_Z) before the op can run, every step. Fix tensor format: cast the tensor "
	"to the format the op wants once, outside the step (torch_npu.npu_format_cast), or keep "
	"framework formats (torch.npu.config.allow_internal_format = False).";
static const char *const SUGGEST_CAST =
	"Cast kernels convert data types every step. Keep inputs and weights in the dtype the op "
	"computes in (one consistent mixed-precision policy; cast once, outside the loop).";
static const char *const SUGGEST_SYNC =
	"a host-device synchronisation (aclrtSynchronize*, a blocking copy: .item(), .cpu(), "
	"printing a tensor, torch.npu.synchronize()) empties the task queue, and the NPU then "
	"waits while the host refills it. Remove it from the step, or do it every N steps "
	"(log less often, accumulate on the device).";
static const char *const SUGGEST_GROWTH =
	"allocated memory grows every step: something keeps tensors alive across steps (outputs "
	"appended to a list, a loss summed without .item()/.detach(), a cache). Release those "
	"references; the ops holding most memory at the peak are listed under Memory. Left "
	"alone this ends in an out-of-memory error.";
static const char *const SUGGEST_SERIAL =
	"kernels on different streams do not run at the same time: the streams are serialised "
	"by event waits or synchronisation. Record and wait events only where data flows between "
	"the streams, so copies or communication overlap computation.";

static const char *const SUGGEST_OOM =
	"device memory ran out. Reduce batch size, release tensors that are no longer needed "
	"(the holders at the peak are listed under Memory), recompute activations instead of "
	"keeping them (activation checkpointing), and cut fragmentation "
	"(PYTORCH_NPU_ALLOC_CONF=expandable_segments:True).";

/* ---- findings from the result ---- */

static void find_dispatch(struct report *r)
{
	const struct asc_rpt_dispatch *d = &r->res->dispatch;
	struct finding *f;
	char depth[200] = "queue depth not measured (no Enqueue/Dequeue pairs)";

	if (!d->dispatch_bound || !(f = add_finding(r, "dispatch_bound", SUGGEST_DISPATCH)))
		return;
	if (d->queue_measured)
		snprintf(depth, sizeof(depth),
			 "%.1f%% of that time with >= %g slots waiting in the task queue "
			 "(threshold queue_depth); depth at enqueue median %.0f / max %.0f over "
			 "%llu slots",
			 100.0 * (double)d->starved_queued_ns / (double)d->starved_ns,
			 r->t->queue_depth, d->queue_depth_median, d->queue_depth_max,
			 (unsigned long long)d->queue_pairs);
	snprintf(f->summary, sizeof(f->summary),
		 "dispatch-bound (%s): the device waits for submissions %.1f%% of its active time "
		 "(threshold idle_share=%g; idle %.1f%% in all), in %llu stretches of >= %g us "
		 "(threshold gap_us), the longest %.1f%% of them (below stall_share=%g: not one "
		 "stall); %llu of %llu kernels were submitted after the previous kernel on their "
		 "stream ended; median gap %.1f us; %s",
		 d->by_queue ? "the task queue holds work while the device waits: launching "
			       "(acl_thread) is behind"
			     : "kernels issued late by the host: the task queue runs empty",
		 100.0 * d->starved_share, r->t->idle_share, 100.0 * d->idle_share,
		 (unsigned long long)d->starved_gaps, r->t->gap_us,
		 100.0 * (double)d->starved_max_ns / (double)d->starved_ns, r->t->stall_share,
		 (unsigned long long)d->starved_transitions, (unsigned long long)d->transitions,
		 d->gap_median_us, depth);
	ev(f, "starved_share", d->starved_share);
	ev(f, "starved_us", us(d->starved_ns));
	ev(f, "starved_max_us", us(d->starved_max_ns));
	ev(f, "starved_gaps", (double)d->starved_gaps);
	ev(f, "idle_share", d->idle_share);
	ev(f, "idle_us", us(d->idle_ns));
	ev(f, "compute_us", us(d->compute_ns));
	ev(f, "gap_median_us", d->gap_median_us);
	ev(f, "gaps", (double)d->nr_gaps);
	if (d->queue_measured) {
		ev(f, "starved_queued_us", us(d->starved_queued_ns));
		ev(f, "queue_depth_median", d->queue_depth_median);
	}
	uses(f, "idle_share");
	uses(f, "gap_us");
	uses(f, "stall_share");
	if (d->queue_measured)
		uses(f, "queue_depth");
}

static void find_optimizer(struct report *r)
{
	const struct asc_rpt_optimizer *o = &r->res->optimizer;
	struct finding *f;

	if (!o->flagged || !(f = add_finding(r, "native_optimizer", SUGGEST_OPTIMIZER)))
		return;
	snprintf(f->summary, sizeof(f->summary),
		 "native optimizer: %.1f per-parameter optimizer kernels per step over %llu steps "
		 "(threshold optimizer_kernels=%g): %llu kernel types repeated for about %llu "
		 "parameters per step, %.1f us of device time in all; a fused optimizer launches "
		 "one kernel per parameter (about %llu per step) or fewer (multi-tensor)",
		 o->per_param_per_step, (unsigned long long)o->steps, r->t->optimizer_kernels,
		 (unsigned long long)o->distinct_types, (unsigned long long)o->repeats_per_step,
		 us(o->optimizer_ns), (unsigned long long)o->repeats_per_step);
	ev(f, "per_param_kernels_per_step", o->per_param_per_step);
	ev(f, "kernel_types", (double)o->distinct_types);
	ev(f, "repeats_per_step", (double)o->repeats_per_step);
	ev(f, "fused_kernels", (double)o->fused_kernels);
	ev(f, "steps", (double)o->steps);
	ev(f, "optimizer_us", us(o->optimizer_ns));
	uses(f, "optimizer_kernels");
}

static void find_conversions(struct report *r)
{
	const struct asc_rpt_result *res = r->res;
	size_t i;

	for (i = 0; i < res->nr_conv; i++) {
		const struct asc_rpt_conv_site *c = &res->conv[i];
		int td = c->kind == ASC_RPT_CONV_TRANSDATA;
		struct finding *f;

		if (!c->flagged ||
		    !(f = add_finding(r, td ? "transdata" : "cast",
				      td ? SUGGEST_TRANSDATA : SUGGEST_CAST)))
			continue;
		snprintf(f->summary, sizeof(f->summary),
			 "%s: %.1f %s kernels per step (%llu in all, %.1f us) launched by %s%s%s "
			 "(threshold %s=%g)",
			 td ? "format conversion" : "dtype conversion", c->per_step,
			 td ? "TransData" : "Cast", (unsigned long long)c->count, us(c->total_ns),
			 c->op ? c->op : "an unknown op", c->api ? " via " : "",
			 c->api ? c->api : "",
			 td ? "transdata_per_step" : "cast_per_step",
			 td ? r->t->transdata_per_step : r->t->cast_per_step);
		ev(f, "per_step", c->per_step);
		ev(f, "count", (double)c->count);
		ev(f, "total_us", us(c->total_ns));
		uses(f, td ? "transdata_per_step" : "cast_per_step");
		f->op = c->op;
		f->api = c->api;
		f->stack = c->stack;
	}
}

static void find_syncs(struct report *r)
{
	const struct asc_rpt_result *res = r->res;
	size_t i;

	for (i = 0; i < res->nr_syncs; i++) {
		const struct asc_rpt_sync_site *s = &res->syncs[i];
		struct finding *f;

		if (!s->flagged || !(f = add_finding(r, "sync_stall", SUGGEST_SYNC)))
			continue;
		snprintf(f->summary, sizeof(f->summary),
			 "synchronisation stalls the queue: %s called %llu times from %s; the host "
			 "waited %.1f us in it and the device then sat idle %.1f us until the next "
			 "kernel, %.1f%% of step time (threshold sync_share=%g)",
			 s->name ? s->name : "?", (unsigned long long)s->count,
			 s->op ? s->op : "outside any op", us(s->blocked_ns), us(s->drained_ns),
			 100.0 * s->share, r->t->sync_share);
		ev(f, "count", (double)s->count);
		ev(f, "blocked_us", us(s->blocked_ns));
		ev(f, "drained_us", us(s->drained_ns));
		ev(f, "share", s->share);
		uses(f, "sync_share");
		f->op = s->op;
		f->api = s->name;
		f->stack = s->stack;
	}
}

static void find_memory(struct report *r)
{
	const struct asc_rpt_mem_growth *g = &r->res->mem_growth;
	struct finding *f;

	if (!g->flagged || !(f = add_finding(r, "memory_growth", SUGGEST_GROWTH)))
		return;
	snprintf(f->summary, sizeof(f->summary),
		 "memory growth: allocated memory grows %.2f MiB per step (median over %zu steps, "
		 "grew in %llu of %zu step transitions, %.2f MiB in all) "
		 "(threshold mem_growth_mb=%g)",
		 g->growth_median_mb, g->nr_steps, (unsigned long long)g->steps_grown,
		 g->nr_steps - 1, g->growth_total_mb, r->t->mem_growth_mb);
	ev(f, "growth_mb_per_step", g->growth_median_mb);
	ev(f, "growth_total_mb", g->growth_total_mb);
	ev(f, "steps", (double)g->nr_steps);
	ev(f, "steps_grown", (double)g->steps_grown);
	uses(f, "mem_growth_mb");
}

static void find_alloc(struct report *r)
{
	const struct asc_rpt_alloc_fail *a = &r->res->alloc;
	const struct asc_rpt_mem_peak *p = &r->res->mem_peak;
	struct finding *f;
	char step[32] = "outside the recorded steps";

	if (!a->flagged || !(f = add_finding(r, "alloc_failed", SUGGEST_OOM)))
		return;
	if (a->first_step != ASC_RPT_NO_STEP)
		snprintf(step, sizeof(step), "in step %lld", (long long)a->first_step);
	snprintf(f->summary, sizeof(f->summary),
		 "out of device memory: %llu of %llu allocation calls failed (threshold "
		 "alloc_failures=%g); the first, %s from %s %s, returned %lld; allocated memory "
		 "peaked at %.2f MiB (reserved %.2f MiB)",
		 (unsigned long long)a->failures, (unsigned long long)a->calls,
		 r->t->alloc_failures,
		 a->name ? a->name : "?", a->op ? a->op : "outside any op", step,
		 (long long)a->first_ret, p->peak_allocated / MB, p->peak_reserved / MB);
	ev(f, "failures", (double)a->failures);
	ev(f, "calls", (double)a->calls);
	ev(f, "first_error", (double)a->first_ret);
	ev(f, "peak_allocated_mb", p->peak_allocated / MB);
	ev(f, "peak_reserved_mb", p->peak_reserved / MB);
	uses(f, "alloc_failures");
	f->op = a->op;
	f->api = a->name;
	f->stack = a->stack;
}

static void find_streams(struct report *r)
{
	const struct asc_rpt_overlap *o = &r->res->overlap;
	struct finding *f;

	if (!o->serialised || !(f = add_finding(r, "streams_serialised", SUGGEST_SERIAL)))
		return;
	snprintf(f->summary, sizeof(f->summary),
		 "streams serialised: %zu streams ran work but overlapped only %.1f us, %.1f%% of "
		 "the busy time of the least busy stream (threshold overlap_share=%g); the device "
		 "was busy %.1f us in all",
		 o->nr_streams, us(o->overlap_ns), 100.0 * o->overlap_share, r->t->overlap_share,
		 us(o->busy_ns));
	ev(f, "streams", (double)o->nr_streams);
	ev(f, "overlap_us", us(o->overlap_ns));
	ev(f, "overlap_share", o->overlap_share);
	ev(f, "busy_us", us(o->busy_ns));
	uses(f, "overlap_share");
}

/* ---- text ---- */

/* Call stack frames one per line; the correlation layer joins them with ";\r\n". */
static void text_stack(struct asc_out *o, const char *stack, const char *indent)
{
	const char *p = stack;

	while (p && *p) {
		size_t n = strcspn(p, ";");

		while (n && (*p == '\r' || *p == '\n' || *p == ' ')) {
			p++;
			n--;
		}
		if (n)
			asc_out_printf(o, "%s%.*s\n", indent, (int)n, p);
		p += n;
		if (*p == ';')
			p++;
	}
}

static void text_report(struct report *r)
{
	const struct asc_rpt_result *res = r->res;
	const struct asc_rpt_source *src = r->src;
	struct asc_out *o = r->o;
	uint64_t tot = 0, comp = 0, copy = 0, idle = 0, host = 0, kern = 0;
	const char *name;
	double v;
	size_t i;
	int k;

	asc_out_printf(o, "ascbpf report: %s\n", src->capture);
	asc_out_printf(o, "process %u, rank %d, device %d: %zu recorded steps, %zu kernels, %zu "
		       "copies, %zu CANN calls, %zu queue slots, %zu memory events\n",
		       src->pid, src->rank, src->device, src->in.nr_steps,
		       count_kind(src, ASC_RPT_K_COMPUTE), count_kind(src, ASC_RPT_K_COPY),
		       src->in.nr_apis, src->in.nr_queue, src->in.nr_mem);
	if (src->bpf_drops || src->devtask_drops || src->lost || src->unmatched_kernels)
		asc_out_printf(o, "capture losses: %llu BPF drops, %llu device records lost, %llu "
			       "records lost, %llu kernels without a launch\n",
			       (unsigned long long)src->bpf_drops,
			       (unsigned long long)src->devtask_drops,
			       (unsigned long long)src->lost,
			       (unsigned long long)src->unmatched_kernels);
	if (src->damaged)
		asc_out_printf(o, "capture DAMAGED: %s (the report covers what was read)\n",
			       src->damage);
	if (src->nr_only_steps) {
		asc_out_printf(o, "run directory: only its %zu steps (", src->nr_only_steps);
		for (i = 0; i < src->nr_only_steps; i++)
			asc_out_printf(o, "%s%lld", i ? " " : "", (long long)src->only_steps[i]);
		asc_out_puts(o, ") of the capture's steps\n");
	}
	asc_out_puts(o, "thresholds:");
	for (i = 0; (name = asc_rpt_threshold_get(r->t, i, &v)); i++)
		asc_out_printf(o, " %s=%g", name, v);
	asc_out_puts(o, "\n\n");

	asc_out_printf(o, "== Findings (%d) ==\n", r->nf);
	if (!r->nf)
		asc_out_puts(o, "none at the thresholds above\n");
	for (k = 0; k < r->nf; k++) {
		const struct finding *f = &r->f[k];

		asc_out_printf(o, "[%d] %s\n", k + 1, f->summary);
		if (f->stack) {
			asc_out_puts(o, "    call stack:\n");
			text_stack(o, f->stack, "      ");
		}
		asc_out_printf(o, "    suggested: %s\n", f->suggestion);
	}

	asc_out_puts(o, "\n== Step time (us): device compute / copy only / device idle / "
		     "host-only ==\n");
	asc_out_printf(o, "%8s %12s %12s %10s %12s %12s %7s %10s %7s %8s %s\n", "step", "total",
		       "compute", "copy", "idle", "host-only", "idle%", "gap-med", "q-med",
		       "kernels", "verdict");
	for (i = 0; i < res->nr_steps; i++) {
		const struct asc_rpt_step_split *s = &res->steps[i];
		uint64_t d = s->end_ns - s->start_ns;
		char id[24];

		if (s->step == ASC_RPT_NO_STEP)
			snprintf(id, sizeof(id), "(none)");
		else
			snprintf(id, sizeof(id), "%lld", (long long)s->step);
		asc_out_printf(o, STEP_ROW, id, us(d), us(s->compute_ns), us(s->copy_ns),
			       us(s->idle_ns), us(s->host_only_ns),
			       100.0 * s->idle_share, s->gap_median_us, s->queue_depth_median,
			       (unsigned long long)s->kernels,
			       s->dispatch_bound ? "dispatch-bound" : "-");
		tot += d;
		comp += s->compute_ns;
		copy += s->copy_ns;
		idle += s->idle_ns;
		host += s->host_only_ns;
		kern += s->kernels;
	}
	asc_out_printf(o, STEP_ROW, "all",
		       us(tot), us(comp), us(copy), us(idle), us(host),
		       100.0 * res->dispatch.idle_share, res->dispatch.gap_median_us,
		       res->dispatch.queue_depth_median, (unsigned long long)kern,
		       res->dispatch.dispatch_bound ? "dispatch-bound" : "-");
	asc_out_printf(o, "gaps between consecutive kernels on a stream: %llu, median %.1f us, "
		       "p99 %.1f us\n", (unsigned long long)res->dispatch.nr_gaps,
		       res->dispatch.gap_median_us, res->dispatch.gap_p99_us);
	asc_out_printf(o, "device waiting for submissions: %.1f us (%.1f%% of its active time) in "
		       "%llu stretches, longest %.1f us; %llu of %llu kernels submitted after the "
		       "previous one on their stream ended%s\n",
		       us(res->dispatch.starved_ns), 100.0 * res->dispatch.starved_share,
		       (unsigned long long)res->dispatch.starved_gaps,
		       us(res->dispatch.starved_max_ns),
		       (unsigned long long)res->dispatch.starved_transitions,
		       (unsigned long long)res->dispatch.transitions,
		       res->dispatch.submissions_known ? "" : " (no submission times captured)");
	if (res->dispatch.queue_measured)
		asc_out_printf(o, "task queue: %llu slots, depth at enqueue median %.0f max %.0f, "
			       "enqueue-to-dequeue median %.1f us\n",
			       (unsigned long long)res->dispatch.queue_pairs,
			       res->dispatch.queue_depth_median, res->dispatch.queue_depth_max,
			       res->dispatch.queue_wait_median_us);
	else
		asc_out_puts(o, "task queue: not measured (no Enqueue/Dequeue pairs captured)\n");

	asc_out_printf(o, "\n== Top %zu of %llu kernel types by total device time (%.1f us) ==\n",
		       res->nr_top, (unsigned long long)res->kernel_types, us(res->device_ns));
	asc_out_printf(o, "%-40s %8s %12s %10s %10s %7s\n", "kernel", "count", "total(us)",
		       "avg(us)", "max(us)", "share");
	for (i = 0; i < res->nr_top; i++) {
		const struct asc_rpt_kernel_stat *s = &res->top[i];

		asc_out_printf(o, "%-40s %8llu %12.1f %10.2f %10.2f %6.1f%%\n", s->name,
			       (unsigned long long)s->count, us(s->total_ns), s->avg_us,
			       us(s->max_ns), 100.0 * s->share);
	}

	asc_out_puts(o, "\n== Optimizer ==\n");
	if (!res->optimizer.kernels) {
		asc_out_puts(o, "no optimizer kernels recognised\n");
	} else {
		asc_out_printf(o, "%llu optimizer kernels in %llu steps (%llu fused/multi-tensor, "
			       "%llu per-parameter: %.1f per step, %llu types x ~%llu), %.1f us; "
			       "fused optimizer would cut them: %s\n",
			       (unsigned long long)res->optimizer.kernels,
			       (unsigned long long)res->optimizer.steps,
			       (unsigned long long)res->optimizer.fused_kernels,
			       (unsigned long long)res->optimizer.per_param_kernels,
			       res->optimizer.per_param_per_step,
			       (unsigned long long)res->optimizer.distinct_types,
			       (unsigned long long)res->optimizer.repeats_per_step,
			       us(res->optimizer.optimizer_ns),
			       res->optimizer.flagged ? "yes" : "no");
	}

	asc_out_puts(o, "\n== TransData / Cast kernels by call site ==\n");
	if (!res->nr_conv)
		asc_out_puts(o, "none\n");
	for (i = 0; i < res->nr_conv; i++) {
		const struct asc_rpt_conv_site *c = &res->conv[i];

		asc_out_printf(o, "%-9s %6llu kernels (%.1f per step, %.1f us) from %s%s%s\n",
			       c->kind == ASC_RPT_CONV_TRANSDATA ? "TransData" : "Cast",
			       (unsigned long long)c->count, c->per_step, us(c->total_ns),
			       c->op ? c->op : "(unknown op)", c->api ? " via " : "",
			       c->api ? c->api : "");
		if (c->stack)
			text_stack(o, c->stack, "      ");
	}

	asc_out_puts(o, "\n== Host-device synchronisations ==\n");
	if (!res->nr_syncs)
		asc_out_puts(o, "none captured\n");
	for (i = 0; i < res->nr_syncs; i++) {
		const struct asc_rpt_sync_site *s = &res->syncs[i];

		asc_out_printf(o, "%-28s %6llu calls from %s: host blocked %.1f us, device drained "
			       "%.1f us (%.1f%% of step time)\n", s->name ? s->name : "?",
			       (unsigned long long)s->count, s->op ? s->op : "(outside any op)",
			       us(s->blocked_ns), us(s->drained_ns), 100.0 * s->share);
	}

	asc_out_puts(o, "\n== Memory ==\n");
	if (!res->mem_peak.measured) {
		asc_out_puts(o, "no allocator events captured (trace with memory profiling on)\n");
	} else {
		const struct asc_rpt_mem_peak *p = &res->mem_peak;
		const struct asc_rpt_mem_growth *g = &res->mem_growth;

		asc_out_printf(o, "peak allocated %.2f MiB (step %lld), peak reserved %.2f MiB; "
			       "held at the peak by:\n", p->peak_allocated / MB,
			       (long long)p->peak_step, p->peak_reserved / MB);
		for (i = 0; i < p->nr_holders; i++)
			asc_out_printf(o, "  %10.2f MiB in %6llu blocks  %s\n",
				       p->holders[i].bytes / MB,
				       (unsigned long long)p->holders[i].blocks,
				       p->holders[i].op ? p->holders[i].op : "(outside any op)");
		if (p->unattributed_bytes)
			asc_out_printf(o, "  %10.2f MiB allocated before the capture started\n",
				       p->unattributed_bytes / MB);
		asc_out_printf(o, "allocated at the end of each step (MiB):");
		for (i = 0; i < g->nr_steps; i++)
			asc_out_printf(o, " %lld:%.2f", (long long)g->steps[i].step,
				       g->steps[i].end_allocated / MB);
		asc_out_printf(o, "\ngrowth per step: median %.2f MiB, %.2f MiB in all\n",
			       g->growth_median_mb, g->growth_total_mb);
	}

	asc_out_puts(o, "\n== Streams ==\n");
	for (i = 0; i < res->overlap.nr_streams; i++)
		asc_out_printf(o, "stream %u: %llu kernels, busy %.1f us\n",
			       res->overlap.streams[i].stream,
			       (unsigned long long)res->overlap.streams[i].kernels,
			       us(res->overlap.streams[i].busy_ns));
	asc_out_printf(o, "multi-stream overlap: %.1f us with two or more streams busy (%.1f%% of "
		       "the least busy stream's time); device busy %.1f us\n",
		       us(res->overlap.overlap_ns), 100.0 * res->overlap.overlap_share,
		       us(res->overlap.busy_ns));
}

/* ---- JSON ---- */

struct jw {
	struct asc_out *o;
	int first[32];
	int depth;
};

static void jw_key(struct jw *w, const char *key)
{
	if (!w->first[w->depth])
		asc_out_putc(w->o, ',');
	w->first[w->depth] = 0;
	if (key) {
		asc_json_cstr(w->o, key);
		asc_out_putc(w->o, ':');
	}
}

static void jw_open(struct jw *w, const char *key, char c)
{
	jw_key(w, key);
	asc_out_putc(w->o, c);
	if (w->depth < 31)
		w->first[++w->depth] = 1;
}

static void jw_close(struct jw *w, char c)
{
	asc_out_putc(w->o, c);
	if (w->depth)
		w->depth--;
}

static void jw_num(struct jw *w, const char *key, double v)
{
	jw_key(w, key);
	if (isfinite(v))
		asc_out_printf(w->o, "%.17g", v);	/* round-trips into --threshold */
	else
		asc_out_puts(w->o, "null");
}

static void jw_int(struct jw *w, const char *key, int64_t v)
{
	jw_key(w, key);
	asc_out_s64(w->o, v);
}

static void jw_str(struct jw *w, const char *key, const char *s)
{
	jw_key(w, key);
	if (s)
		asc_json_cstr(w->o, s);
	else
		asc_out_puts(w->o, "null");
}

static void jw_bool(struct jw *w, const char *key, int b)
{
	jw_key(w, key);
	asc_out_puts(w->o, b ? "true" : "false");
}

static void jw_step(struct jw *w, const char *key, int64_t step)
{
	if (step == ASC_RPT_NO_STEP) {
		jw_key(w, key);
		asc_out_puts(w->o, "null");
	} else {
		jw_int(w, key, step);
	}
}

static void json_report(struct report *r)
{
	const struct asc_rpt_result *res = r->res;
	const struct asc_rpt_source *src = r->src;
	struct jw w = { .o = r->o, .first = { 1 } };
	uint64_t tot = 0, comp = 0, copy = 0, idle = 0, host = 0;
	const char *name;
	double v;
	size_t i;
	int k, j;

	jw_open(&w, NULL, '{');
	jw_str(&w, "capture", src->capture);
	jw_int(&w, "pid", src->pid);
	jw_int(&w, "rank", src->rank);
	jw_int(&w, "device", src->device);
	jw_bool(&w, "damaged", src->damaged);
	jw_str(&w, "damage", src->damaged ? src->damage : NULL);
	jw_open(&w, "losses", '{');
	jw_int(&w, "bpf_drops", (int64_t)src->bpf_drops);
	jw_int(&w, "devtask_drops", (int64_t)src->devtask_drops);
	jw_int(&w, "lost", (int64_t)src->lost);
	jw_int(&w, "unmatched_kernels", (int64_t)src->unmatched_kernels);
	jw_close(&w, '}');
	jw_open(&w, "run_steps", '[');
	for (i = 0; i < src->nr_only_steps; i++)
		jw_int(&w, NULL, src->only_steps[i]);
	jw_close(&w, ']');
	jw_open(&w, "counts", '{');
	jw_int(&w, "steps", (int64_t)src->in.nr_steps);
	jw_int(&w, "kernels", (int64_t)count_kind(src, ASC_RPT_K_COMPUTE));
	jw_int(&w, "copies", (int64_t)count_kind(src, ASC_RPT_K_COPY));
	jw_int(&w, "calls", (int64_t)src->in.nr_apis);
	jw_int(&w, "queue_slots", (int64_t)src->in.nr_queue);
	jw_int(&w, "memory_events", (int64_t)src->in.nr_mem);
	jw_close(&w, '}');
	jw_open(&w, "thresholds", '{');
	for (i = 0; (name = asc_rpt_threshold_get(r->t, i, &v)); i++)
		jw_num(&w, name, v);
	jw_close(&w, '}');

	jw_open(&w, "findings", '[');
	for (k = 0; k < r->nf; k++) {
		const struct finding *f = &r->f[k];

		jw_open(&w, NULL, '{');
		jw_str(&w, "id", f->id);
		jw_str(&w, "summary", f->summary);
		jw_open(&w, "evidence", '{');
		for (j = 0; j < f->nev; j++)
			jw_num(&w, f->ev[j].key, f->ev[j].value);
		jw_close(&w, '}');
		jw_open(&w, "thresholds", '{');
		for (j = 0; j < f->nthr; j++)
			jw_num(&w, f->thresholds[j], thr(r->t, f->thresholds[j]));
		jw_close(&w, '}');
		if (f->op || f->api || f->stack) {
			jw_str(&w, "op", f->op);
			jw_str(&w, "api", f->api);
			jw_str(&w, "stack", f->stack);
		}
		jw_str(&w, "suggestion", f->suggestion);
		jw_close(&w, '}');
	}
	jw_close(&w, ']');

	jw_open(&w, "steps", '[');
	for (i = 0; i < res->nr_steps; i++) {
		const struct asc_rpt_step_split *s = &res->steps[i];

		jw_open(&w, NULL, '{');
		jw_step(&w, "step", s->step);
		jw_num(&w, "start_us", us(s->start_ns));
		jw_num(&w, "duration_us", us(s->end_ns - s->start_ns));
		jw_num(&w, "compute_us", us(s->compute_ns));
		jw_num(&w, "copy_us", us(s->copy_ns));
		jw_num(&w, "idle_us", us(s->idle_ns));
		jw_num(&w, "host_only_us", us(s->host_only_ns));
		jw_num(&w, "idle_share", s->idle_share);
		jw_int(&w, "kernels", (int64_t)s->kernels);
		jw_int(&w, "gaps", (int64_t)s->nr_gaps);
		jw_num(&w, "gap_median_us", s->gap_median_us);
		jw_int(&w, "queue_slots", (int64_t)s->queue_slots);
		jw_num(&w, "queue_depth_median", s->queue_depth_median);
		jw_num(&w, "starved_us", us(s->starved_ns));
		jw_num(&w, "starved_share", s->starved_share);
		jw_int(&w, "starved_gaps", (int64_t)s->starved_gaps);
		jw_num(&w, "starved_queued_us", us(s->starved_queued_ns));
		jw_int(&w, "transitions", (int64_t)s->transitions);
		jw_int(&w, "starved_transitions", (int64_t)s->starved_transitions);
		jw_bool(&w, "dispatch_bound", s->dispatch_bound);
		jw_close(&w, '}');
		tot += s->end_ns - s->start_ns;
		comp += s->compute_ns;
		copy += s->copy_ns;
		idle += s->idle_ns;
		host += s->host_only_ns;
	}
	jw_close(&w, ']');

	jw_open(&w, "overall", '{');
	jw_num(&w, "duration_us", us(tot));
	jw_num(&w, "compute_us", us(comp));
	jw_num(&w, "copy_us", us(copy));
	jw_num(&w, "idle_us", us(idle));
	jw_num(&w, "host_only_us", us(host));
	jw_close(&w, '}');

	jw_open(&w, "dispatch", '{');
	jw_num(&w, "idle_share", res->dispatch.idle_share);
	jw_int(&w, "gaps", (int64_t)res->dispatch.nr_gaps);
	jw_num(&w, "gap_median_us", res->dispatch.gap_median_us);
	jw_num(&w, "gap_p99_us", res->dispatch.gap_p99_us);
	jw_bool(&w, "queue_measured", res->dispatch.queue_measured);
	jw_int(&w, "queue_slots", (int64_t)res->dispatch.queue_pairs);
	jw_num(&w, "queue_depth_median", res->dispatch.queue_depth_median);
	jw_num(&w, "queue_depth_max", res->dispatch.queue_depth_max);
	jw_num(&w, "queue_wait_median_us", res->dispatch.queue_wait_median_us);
	jw_bool(&w, "submissions_known", res->dispatch.submissions_known);
	jw_num(&w, "starved_us", us(res->dispatch.starved_ns));
	jw_num(&w, "starved_share", res->dispatch.starved_share);
	jw_int(&w, "starved_gaps", (int64_t)res->dispatch.starved_gaps);
	jw_num(&w, "starved_max_us", us(res->dispatch.starved_max_ns));
	jw_num(&w, "starved_queued_us", us(res->dispatch.starved_queued_ns));
	jw_int(&w, "transitions", (int64_t)res->dispatch.transitions);
	jw_int(&w, "starved_transitions", (int64_t)res->dispatch.starved_transitions);
	jw_num(&w, "starved_kernel_share", res->dispatch.starved_kernel_share);
	jw_bool(&w, "dispatch_bound", res->dispatch.dispatch_bound);
	jw_bool(&w, "by_gaps", res->dispatch.by_gaps);
	jw_bool(&w, "by_queue", res->dispatch.by_queue);
	jw_close(&w, '}');

	jw_num(&w, "device_us", us(res->device_ns));
	jw_int(&w, "kernel_types", (int64_t)res->kernel_types);
	jw_open(&w, "top_kernels", '[');
	for (i = 0; i < res->nr_top; i++) {
		const struct asc_rpt_kernel_stat *s = &res->top[i];

		jw_open(&w, NULL, '{');
		jw_str(&w, "name", s->name);
		jw_int(&w, "count", (int64_t)s->count);
		jw_num(&w, "total_us", us(s->total_ns));
		jw_num(&w, "avg_us", s->avg_us);
		jw_num(&w, "max_us", us(s->max_ns));
		jw_num(&w, "min_us", us(s->min_ns));
		jw_num(&w, "share", s->share);
		jw_close(&w, '}');
	}
	jw_close(&w, ']');

	jw_open(&w, "optimizer", '{');
	jw_int(&w, "kernels", (int64_t)res->optimizer.kernels);
	jw_int(&w, "fused_kernels", (int64_t)res->optimizer.fused_kernels);
	jw_int(&w, "per_param_kernels", (int64_t)res->optimizer.per_param_kernels);
	jw_int(&w, "steps", (int64_t)res->optimizer.steps);
	jw_num(&w, "per_param_kernels_per_step", res->optimizer.per_param_per_step);
	jw_int(&w, "kernel_types", (int64_t)res->optimizer.distinct_types);
	jw_int(&w, "repeats_per_step", (int64_t)res->optimizer.repeats_per_step);
	jw_num(&w, "optimizer_us", us(res->optimizer.optimizer_ns));
	jw_bool(&w, "fused_would_cut", res->optimizer.flagged);
	jw_close(&w, '}');

	jw_open(&w, "conversions", '[');
	for (i = 0; i < res->nr_conv; i++) {
		const struct asc_rpt_conv_site *c = &res->conv[i];

		jw_open(&w, NULL, '{');
		jw_str(&w, "kind", c->kind == ASC_RPT_CONV_TRANSDATA ? "TransData" : "Cast");
		jw_str(&w, "op", c->op);
		jw_str(&w, "api", c->api);
		jw_str(&w, "stack", c->stack);
		jw_int(&w, "count", (int64_t)c->count);
		jw_num(&w, "total_us", us(c->total_ns));
		jw_num(&w, "per_step", c->per_step);
		jw_bool(&w, "flagged", c->flagged);
		jw_close(&w, '}');
	}
	jw_close(&w, ']');

	jw_open(&w, "syncs", '[');
	for (i = 0; i < res->nr_syncs; i++) {
		const struct asc_rpt_sync_site *s = &res->syncs[i];

		jw_open(&w, NULL, '{');
		jw_str(&w, "api", s->name);
		jw_str(&w, "op", s->op);
		jw_str(&w, "stack", s->stack);
		jw_int(&w, "count", (int64_t)s->count);
		jw_num(&w, "blocked_us", us(s->blocked_ns));
		jw_num(&w, "drained_us", us(s->drained_ns));
		jw_num(&w, "share", s->share);
		jw_bool(&w, "flagged", s->flagged);
		jw_close(&w, '}');
	}
	jw_close(&w, ']');

	jw_open(&w, "memory", '{');
	jw_bool(&w, "measured", res->mem_peak.measured);
	jw_int(&w, "component", src->mem_component);
	jw_num(&w, "peak_allocated_mb", res->mem_peak.peak_allocated / MB);
	jw_num(&w, "peak_reserved_mb", res->mem_peak.peak_reserved / MB);
	jw_num(&w, "peak_us", us(res->mem_peak.peak_ns));
	jw_step(&w, "peak_step", res->mem_peak.peak_step);
	jw_num(&w, "unattributed_mb", res->mem_peak.unattributed_bytes / MB);
	jw_open(&w, "holders", '[');
	for (i = 0; i < res->mem_peak.nr_holders; i++) {
		jw_open(&w, NULL, '{');
		jw_str(&w, "op", res->mem_peak.holders[i].op);
		jw_num(&w, "mb", res->mem_peak.holders[i].bytes / MB);
		jw_int(&w, "bytes", (int64_t)res->mem_peak.holders[i].bytes);
		jw_int(&w, "blocks", (int64_t)res->mem_peak.holders[i].blocks);
		jw_close(&w, '}');
	}
	jw_close(&w, ']');
	jw_open(&w, "growth", '{');
	jw_num(&w, "median_mb_per_step", res->mem_growth.growth_median_mb);
	jw_num(&w, "total_mb", res->mem_growth.growth_total_mb);
	jw_int(&w, "steps_grown", (int64_t)res->mem_growth.steps_grown);
	jw_bool(&w, "flagged", res->mem_growth.flagged);
	jw_open(&w, "steps", '[');
	for (i = 0; i < res->mem_growth.nr_steps; i++) {
		jw_open(&w, NULL, '{');
		jw_step(&w, "step", res->mem_growth.steps[i].step);
		jw_num(&w, "end_allocated_mb", res->mem_growth.steps[i].end_allocated / MB);
		jw_num(&w, "peak_allocated_mb", res->mem_growth.steps[i].peak_allocated / MB);
		jw_close(&w, '}');
	}
	jw_close(&w, ']');
	jw_close(&w, '}');
	jw_close(&w, '}');

	jw_open(&w, "allocations", '{');
	jw_int(&w, "calls", (int64_t)res->alloc.calls);
	jw_int(&w, "failures", (int64_t)res->alloc.failures);
	jw_int(&w, "first_error", res->alloc.first_ret);
	jw_str(&w, "first_api", res->alloc.name);
	jw_str(&w, "first_op", res->alloc.op);
	jw_close(&w, '}');

	jw_open(&w, "streams", '{');
	jw_open(&w, "streams", '[');
	for (i = 0; i < res->overlap.nr_streams; i++) {
		jw_open(&w, NULL, '{');
		jw_int(&w, "stream", res->overlap.streams[i].stream);
		jw_int(&w, "kernels", (int64_t)res->overlap.streams[i].kernels);
		jw_num(&w, "busy_us", us(res->overlap.streams[i].busy_ns));
		jw_close(&w, '}');
	}
	jw_close(&w, ']');
	jw_num(&w, "busy_us", us(res->overlap.busy_ns));
	jw_num(&w, "overlap_us", us(res->overlap.overlap_ns));
	jw_num(&w, "overlap_share", res->overlap.overlap_share);
	jw_bool(&w, "serialised", res->overlap.serialised);
	jw_close(&w, '}');
	jw_close(&w, '}');
	asc_out_putc(r->o, '\n');
}

/* ---- command ---- */

static void usage(FILE *f)
{
	struct asc_rpt_thresholds t;
	const char *name;
	double v;
	size_t i;

	asc_rpt_thresholds_default(&t);
	fprintf(f,
		"Usage: ascbpf report [--json] [--top N] [--threshold NAME=VALUE]... "
		"OUTPUT_DIR_OR_CAPTURE\n\n"
		"Finds what the Ascend profiler guide teaches to look for in Trace View: a\n"
		"dispatch-bound step, a per-parameter optimizer, TransData/Cast kernels and their\n"
		"call sites, synchronisations that stall the task queue, the memory peak and\n"
		"growth, and multi-stream overlap.  OUTPUT_DIR_OR_CAPTURE is a capture file, a\n"
		"{run}_ascend_pt directory (its ascbpf/capture.ascb) or a directory holding\n"
		"one.\n\n"
		"  --json                 one JSON object instead of text\n"
		"  --top N                kernels and memory holders listed (default %g)\n"
		"  --threshold NAME=VAL   change a threshold (repeatable); a value exactly at a\n"
		"                         threshold reaches it.  Names and defaults:\n", t.top);
	for (i = 0; (name = asc_rpt_threshold_get(&t, i, &v)); i++)
		fprintf(f, "                           %-20s %g\n", name, v);
	fprintf(f, "\nExit status: 0 report printed (findings or not), 1 capture damaged or\n"
		   "unreadable, 2 usage error or no capture found.\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "top", required_argument, NULL, 'n' },
		{ "threshold", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct report rep;
	struct asc_rpt_thresholds t;
	struct asc_rpt_source src;
	struct asc_rpt_result res;
	char capture[4096], arg[64];
	int64_t *run_steps = NULL;
	size_t nr_run_steps = 0;
	struct asc_out o;
	int c, json = 0, err;

	asc_rpt_thresholds_default(&t);
	optind = 1;
	while ((c = getopt_long(argc, argv, "jn:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'n':
			if (snprintf(arg, sizeof(arg), "top=%s", optarg) >= (int)sizeof(arg) ||
			    asc_rpt_threshold_set(&t, arg))
				return -EINVAL;
			if (t.top < 1) {
				asc_err("report: --top must be at least 1\n");
				return -EINVAL;
			}
			break;
		case 't':
			if (asc_rpt_threshold_set(&t, optarg))
				return -EINVAL;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind != argc - 1) {
		asc_err("report: expected one OUTPUT_DIR_OR_CAPTURE argument\n");
		usage(stderr);
		return -EINVAL;
	}
	err = asc_rpt_find_capture(argv[optind], capture, sizeof(capture));
	if (err)
		return err;
	/* a {run}_ascend_pt directory holds one cycle: report its steps only */
	err = asc_rpt_run_steps(capture, &run_steps, &nr_run_steps);
	if (err)
		return err;
	memset(&src, 0, sizeof(src));
	src.only_steps = run_steps;
	src.nr_only_steps = nr_run_steps;
	err = asc_rpt_source_load(capture, &src);
	if (err) {
		free(run_steps);
		return err;
	}
	if (nr_run_steps && !src.in.nr_steps) {
		asc_err("report: %s: its run directory lists %zu steps (step_trace_time.csv) that "
			"the capture does not record\n", capture, nr_run_steps);
		asc_rpt_source_free(&src);
		free(run_steps);
		return -ENODATA;
	}
	if (!src.in.nr_kernels && !src.in.nr_apis && !src.in.nr_mem) {
		if (src.damaged)
			asc_err("report: %s is damaged (%s) and holds nothing to analyse "
				"before the damage\n", capture, src.damage);
		else
			asc_err("report: %s holds no kernels, CANN calls or memory events to "
				"analyse\n", capture);
		asc_rpt_source_free(&src);
		free(run_steps);
		return -ENODATA;
	}
	err = asc_rpt_analyse(&src.in, &t, &res);
	if (err) {
		asc_err("report: analysis failed: %s\n", strerror(-err));
		asc_rpt_source_free(&src);
		free(run_steps);
		return err;
	}
	memset(&rep, 0, sizeof(rep));
	rep.src = &src;
	rep.t = &t;
	rep.res = &res;
	find_dispatch(&rep);
	find_optimizer(&rep);
	find_conversions(&rep);
	find_syncs(&rep);
	find_memory(&rep);
	find_streams(&rep);
	find_alloc(&rep);

	err = asc_out_fdopen(&o, STDOUT_FILENO);
	if (!err) {
		rep.o = &o;
		if (json)
			json_report(&rep);
		else
			text_report(&rep);
		err = asc_out_close(&o);
		if (err)
			asc_err("report: writing the report: %s\n", strerror(-err));
	}
	if (!src.in.nr_kernels)
		asc_warn("report: no device kernels in %s: was NPU activity traced?\n", capture);
	if (!err && src.damaged) {
		asc_err("report: %s is damaged (%s): the report covers only what was read\n",
			capture, src.damage);
		err = -EBADMSG;
	}
	asc_rpt_result_free(&res);
	asc_rpt_source_free(&src);
	free(run_steps);
	return err;
}
