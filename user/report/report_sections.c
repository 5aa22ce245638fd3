// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_sections.c - the sections of `ascbpf report`, each rendered as text
 * and as JSON by the two functions next to each other, and the one table
 * (sections[]) both renderings walk.  The JSON keys are what scripts and the
 * integration tests parse: keys may be added, not renamed.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "lib/json_writer.h"
#include "report/report_detect.h"
#include "report/report_int.h"

#define STEP_ROW "%8s %12.1f %12.1f %10.1f %12.1f %12.1f %6.1f%% %10.1f %7.0f %8llu %s\n"

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

/* A step number, null for the steps before the first boundary. */
static void json_step(struct asc_jw *w, const char *key, int64_t step)
{
	if (step == ASC_RPT_NO_STEP)
		asc_jw_null(w, key);
	else
		asc_jw_int(w, key, step);
}

/* header: the capture, its losses and damage, the run's steps, the thresholds */
static void text_header(struct report *r)
{
	const struct asc_rpt_source *src = r->src;
	struct asc_out *o = r->o;
	const char *name;
	double v;
	size_t i;

	asc_out_printf(o, "ascbpf report: %s\n", src->capture);
	asc_out_printf(o,
		       "process %u, rank %d, device %d: %zu recorded steps, %zu kernels, %zu "
		       "copies, %zu CANN calls, %zu queue slots, %zu memory events\n",
		       src->pid, src->rank, src->device, src->in.nr_steps,
		       count_kind(src, ASC_RPT_K_COMPUTE), count_kind(src, ASC_RPT_K_COPY),
		       src->in.nr_apis, src->in.nr_queue, src->in.nr_mem);
	if (src->bpf_drops || src->devtask_drops || src->lost || src->unmatched_kernels)
		asc_out_printf(o,
			       "capture losses: %llu BPF drops, %llu device records lost, %llu "
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
}

static void json_header(struct report *r, struct asc_jw *w)
{
	const struct asc_rpt_source *src = r->src;
	const char *name;
	double v;
	size_t i;

	asc_jw_str(w, "capture", src->capture);
	asc_jw_int(w, "pid", src->pid);
	asc_jw_int(w, "rank", src->rank);
	asc_jw_int(w, "device", src->device);
	asc_jw_bool(w, "damaged", src->damaged);
	asc_jw_str(w, "damage", src->damaged ? src->damage : NULL);
	asc_jw_open(w, "losses", '{');
	asc_jw_int(w, "bpf_drops", (int64_t)src->bpf_drops);
	asc_jw_int(w, "devtask_drops", (int64_t)src->devtask_drops);
	asc_jw_int(w, "lost", (int64_t)src->lost);
	asc_jw_int(w, "unmatched_kernels", (int64_t)src->unmatched_kernels);
	asc_jw_close(w, '}');
	asc_jw_open(w, "run_steps", '[');
	for (i = 0; i < src->nr_only_steps; i++)
		asc_jw_int(w, NULL, src->only_steps[i]);
	asc_jw_close(w, ']');
	asc_jw_open(w, "counts", '{');
	asc_jw_int(w, "steps", (int64_t)src->in.nr_steps);
	asc_jw_int(w, "kernels", (int64_t)count_kind(src, ASC_RPT_K_COMPUTE));
	asc_jw_int(w, "copies", (int64_t)count_kind(src, ASC_RPT_K_COPY));
	asc_jw_int(w, "calls", (int64_t)src->in.nr_apis);
	asc_jw_int(w, "queue_slots", (int64_t)src->in.nr_queue);
	asc_jw_int(w, "memory_events", (int64_t)src->in.nr_mem);
	asc_jw_close(w, '}');
	asc_jw_open(w, "thresholds", '{');
	for (i = 0; (name = asc_rpt_threshold_get(r->t, i, &v)); i++)
		asc_jw_num(w, name, v);
	asc_jw_close(w, '}');
}

/* findings: summary, call site, suggestion; JSON adds evidence and thresholds */
static void text_findings(struct report *r)
{
	struct asc_out *o = r->o;
	int k;

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
}

static void json_findings(struct report *r, struct asc_jw *w)
{
	int k, j;

	asc_jw_open(w, "findings", '[');
	for (k = 0; k < r->nf; k++) {
		const struct finding *f = &r->f[k];

		asc_jw_open(w, NULL, '{');
		asc_jw_str(w, "id", f->id);
		asc_jw_str(w, "summary", f->summary);
		asc_jw_open(w, "evidence", '{');
		for (j = 0; j < f->nev; j++)
			asc_jw_num(w, f->ev[j].key, f->ev[j].value);
		asc_jw_close(w, '}');
		asc_jw_open(w, "thresholds", '{');
		for (j = 0; j < f->nthr; j++)
			asc_jw_num(w, f->thresholds[j], thr(r->t, f->thresholds[j]));
		asc_jw_close(w, '}');
		if (f->op || f->api || f->stack) {
			asc_jw_str(w, "op", f->op);
			asc_jw_str(w, "api", f->api);
			asc_jw_str(w, "stack", f->stack);
		}
		asc_jw_str(w, "suggestion", f->suggestion);
		asc_jw_close(w, '}');
	}
	asc_jw_close(w, ']');
}

/* steps: compute, copy, idle, host-only time, gaps, queue depth; dispatch figures */
static void text_steps(struct report *r)
{
	const struct asc_rpt_result *res = r->res;
	struct asc_out *o = r->o;
	uint64_t tot = 0, comp = 0, copy = 0, idle = 0, host = 0, kern = 0;
	size_t i;

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
			       us(s->idle_ns), us(s->host_only_ns), 100.0 * s->idle_share,
			       s->gap_median_us, s->queue_depth_median,
			       (unsigned long long)s->kernels,
			       s->dispatch_bound ? "dispatch-bound" : "-");
		tot += d;
		comp += s->compute_ns;
		copy += s->copy_ns;
		idle += s->idle_ns;
		host += s->host_only_ns;
		kern += s->kernels;
	}
	asc_out_printf(o, STEP_ROW, "all", us(tot), us(comp), us(copy), us(idle), us(host),
		       100.0 * res->dispatch.idle_share, res->dispatch.gap_median_us,
		       res->dispatch.queue_depth_median, (unsigned long long)kern,
		       res->dispatch.dispatch_bound ? "dispatch-bound" : "-");
	asc_out_printf(o,
		       "gaps between consecutive kernels on a stream: %llu, median %.1f us, "
		       "p99 %.1f us\n",
		       (unsigned long long)res->dispatch.nr_gaps, res->dispatch.gap_median_us,
		       res->dispatch.gap_p99_us);
	asc_out_printf(o,
		       "device waiting for submissions: %.1f us (%.1f%% of its active time) in "
		       "%llu stretches, longest %.1f us; %llu of %llu kernels submitted after the "
		       "previous one on their stream ended%s\n",
		       us(res->dispatch.starved_ns), 100.0 * res->dispatch.starved_share,
		       (unsigned long long)res->dispatch.starved_gaps,
		       us(res->dispatch.starved_max_ns),
		       (unsigned long long)res->dispatch.starved_transitions,
		       (unsigned long long)res->dispatch.transitions,
		       res->dispatch.submissions_known ? "" : " (no submission times captured)");
	if (res->dispatch.queue_measured)
		asc_out_printf(o,
			       "task queue: %llu slots, depth at enqueue median %.0f max %.0f, "
			       "enqueue-to-dequeue median %.1f us\n",
			       (unsigned long long)res->dispatch.queue_pairs,
			       res->dispatch.queue_depth_median, res->dispatch.queue_depth_max,
			       res->dispatch.queue_wait_median_us);
	else
		asc_out_puts(o, "task queue: not measured (no Enqueue/Dequeue pairs captured)\n");
}

static void json_steps(struct report *r, struct asc_jw *w)
{
	const struct asc_rpt_result *res = r->res;
	uint64_t tot = 0, comp = 0, copy = 0, idle = 0, host = 0;
	size_t i;

	asc_jw_open(w, "steps", '[');
	for (i = 0; i < res->nr_steps; i++) {
		const struct asc_rpt_step_split *s = &res->steps[i];

		asc_jw_open(w, NULL, '{');
		json_step(w, "step", s->step);
		asc_jw_num(w, "start_us", us(s->start_ns));
		asc_jw_num(w, "duration_us", us(s->end_ns - s->start_ns));
		asc_jw_num(w, "compute_us", us(s->compute_ns));
		asc_jw_num(w, "copy_us", us(s->copy_ns));
		asc_jw_num(w, "idle_us", us(s->idle_ns));
		asc_jw_num(w, "host_only_us", us(s->host_only_ns));
		asc_jw_num(w, "idle_share", s->idle_share);
		asc_jw_int(w, "kernels", (int64_t)s->kernels);
		asc_jw_int(w, "gaps", (int64_t)s->nr_gaps);
		asc_jw_num(w, "gap_median_us", s->gap_median_us);
		asc_jw_int(w, "queue_slots", (int64_t)s->queue_slots);
		asc_jw_num(w, "queue_depth_median", s->queue_depth_median);
		asc_jw_num(w, "starved_us", us(s->starved_ns));
		asc_jw_num(w, "starved_share", s->starved_share);
		asc_jw_int(w, "starved_gaps", (int64_t)s->starved_gaps);
		asc_jw_num(w, "starved_queued_us", us(s->starved_queued_ns));
		asc_jw_int(w, "transitions", (int64_t)s->transitions);
		asc_jw_int(w, "starved_transitions", (int64_t)s->starved_transitions);
		asc_jw_bool(w, "dispatch_bound", s->dispatch_bound);
		asc_jw_close(w, '}');
		tot += s->end_ns - s->start_ns;
		comp += s->compute_ns;
		copy += s->copy_ns;
		idle += s->idle_ns;
		host += s->host_only_ns;
	}
	asc_jw_close(w, ']');

	asc_jw_open(w, "overall", '{');
	asc_jw_num(w, "duration_us", us(tot));
	asc_jw_num(w, "compute_us", us(comp));
	asc_jw_num(w, "copy_us", us(copy));
	asc_jw_num(w, "idle_us", us(idle));
	asc_jw_num(w, "host_only_us", us(host));
	asc_jw_close(w, '}');

	asc_jw_open(w, "dispatch", '{');
	asc_jw_num(w, "idle_share", res->dispatch.idle_share);
	asc_jw_int(w, "gaps", (int64_t)res->dispatch.nr_gaps);
	asc_jw_num(w, "gap_median_us", res->dispatch.gap_median_us);
	asc_jw_num(w, "gap_p99_us", res->dispatch.gap_p99_us);
	asc_jw_bool(w, "queue_measured", res->dispatch.queue_measured);
	asc_jw_int(w, "queue_slots", (int64_t)res->dispatch.queue_pairs);
	asc_jw_num(w, "queue_depth_median", res->dispatch.queue_depth_median);
	asc_jw_num(w, "queue_depth_max", res->dispatch.queue_depth_max);
	asc_jw_num(w, "queue_wait_median_us", res->dispatch.queue_wait_median_us);
	asc_jw_bool(w, "submissions_known", res->dispatch.submissions_known);
	asc_jw_num(w, "starved_us", us(res->dispatch.starved_ns));
	asc_jw_num(w, "starved_share", res->dispatch.starved_share);
	asc_jw_int(w, "starved_gaps", (int64_t)res->dispatch.starved_gaps);
	asc_jw_num(w, "starved_max_us", us(res->dispatch.starved_max_ns));
	asc_jw_num(w, "starved_queued_us", us(res->dispatch.starved_queued_ns));
	asc_jw_int(w, "transitions", (int64_t)res->dispatch.transitions);
	asc_jw_int(w, "starved_transitions", (int64_t)res->dispatch.starved_transitions);
	asc_jw_num(w, "starved_kernel_share", res->dispatch.starved_kernel_share);
	asc_jw_bool(w, "dispatch_bound", res->dispatch.dispatch_bound);
	asc_jw_bool(w, "by_gaps", res->dispatch.by_gaps);
	asc_jw_bool(w, "by_queue", res->dispatch.by_queue);
	asc_jw_close(w, '}');
}

/* kernels: the top kernel types by device time */
static void text_kernels(struct report *r)
{
	const struct asc_rpt_result *res = r->res;
	struct asc_out *o = r->o;
	size_t i;

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
}

static void json_kernels(struct report *r, struct asc_jw *w)
{
	const struct asc_rpt_result *res = r->res;
	size_t i;

	asc_jw_num(w, "device_us", us(res->device_ns));
	asc_jw_int(w, "kernel_types", (int64_t)res->kernel_types);
	asc_jw_open(w, "top_kernels", '[');
	for (i = 0; i < res->nr_top; i++) {
		const struct asc_rpt_kernel_stat *s = &res->top[i];

		asc_jw_open(w, NULL, '{');
		asc_jw_str(w, "name", s->name);
		asc_jw_int(w, "count", (int64_t)s->count);
		asc_jw_num(w, "total_us", us(s->total_ns));
		asc_jw_num(w, "avg_us", s->avg_us);
		asc_jw_num(w, "max_us", us(s->max_ns));
		asc_jw_num(w, "min_us", us(s->min_ns));
		asc_jw_num(w, "share", s->share);
		asc_jw_close(w, '}');
	}
	asc_jw_close(w, ']');
}

/* optimizer: optimizer kernels, fused or per parameter */
static void text_optimizer(struct report *r)
{
	const struct asc_rpt_result *res = r->res;
	struct asc_out *o = r->o;

	asc_out_puts(o, "\n== Optimizer ==\n");
	if (!res->optimizer.kernels) {
		asc_out_puts(o, "no optimizer kernels recognised\n");
	} else {
		asc_out_printf(o,
			       "%llu optimizer kernels in %llu steps (%llu fused/multi-tensor, "
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
}

static void json_optimizer(struct report *r, struct asc_jw *w)
{
	const struct asc_rpt_result *res = r->res;

	asc_jw_open(w, "optimizer", '{');
	asc_jw_int(w, "kernels", (int64_t)res->optimizer.kernels);
	asc_jw_int(w, "fused_kernels", (int64_t)res->optimizer.fused_kernels);
	asc_jw_int(w, "per_param_kernels", (int64_t)res->optimizer.per_param_kernels);
	asc_jw_int(w, "steps", (int64_t)res->optimizer.steps);
	asc_jw_num(w, "per_param_kernels_per_step", res->optimizer.per_param_per_step);
	asc_jw_int(w, "kernel_types", (int64_t)res->optimizer.distinct_types);
	asc_jw_int(w, "repeats_per_step", (int64_t)res->optimizer.repeats_per_step);
	asc_jw_num(w, "optimizer_us", us(res->optimizer.optimizer_ns));
	asc_jw_bool(w, "fused_would_cut", res->optimizer.flagged);
	asc_jw_close(w, '}');
}

/* conversions: TransData / Cast kernels by call site */
static void text_conversions(struct report *r)
{
	const struct asc_rpt_result *res = r->res;
	struct asc_out *o = r->o;
	size_t i;

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
}

static void json_conversions(struct report *r, struct asc_jw *w)
{
	const struct asc_rpt_result *res = r->res;
	size_t i;

	asc_jw_open(w, "conversions", '[');
	for (i = 0; i < res->nr_conv; i++) {
		const struct asc_rpt_conv_site *c = &res->conv[i];

		asc_jw_open(w, NULL, '{');
		asc_jw_str(w, "kind", c->kind == ASC_RPT_CONV_TRANSDATA ? "TransData" : "Cast");
		asc_jw_str(w, "op", c->op);
		asc_jw_str(w, "api", c->api);
		asc_jw_str(w, "stack", c->stack);
		asc_jw_int(w, "count", (int64_t)c->count);
		asc_jw_num(w, "total_us", us(c->total_ns));
		asc_jw_num(w, "per_step", c->per_step);
		asc_jw_bool(w, "flagged", c->flagged);
		asc_jw_close(w, '}');
	}
	asc_jw_close(w, ']');
}

/* syncs: host-device synchronisations by call site */
static void text_syncs(struct report *r)
{
	const struct asc_rpt_result *res = r->res;
	struct asc_out *o = r->o;
	size_t i;

	asc_out_puts(o, "\n== Host-device synchronisations ==\n");
	if (!res->nr_syncs)
		asc_out_puts(o, "none captured\n");
	for (i = 0; i < res->nr_syncs; i++) {
		const struct asc_rpt_sync_site *s = &res->syncs[i];

		asc_out_printf(o,
			       "%-28s %6llu calls from %s: host blocked %.1f us, device drained "
			       "%.1f us (%.1f%% of step time)\n",
			       s->name ? s->name : "?", (unsigned long long)s->count,
			       s->op ? s->op : "(outside any op)", us(s->blocked_ns),
			       us(s->drained_ns), 100.0 * s->share);
	}
}

static void json_syncs(struct report *r, struct asc_jw *w)
{
	const struct asc_rpt_result *res = r->res;
	size_t i;

	asc_jw_open(w, "syncs", '[');
	for (i = 0; i < res->nr_syncs; i++) {
		const struct asc_rpt_sync_site *s = &res->syncs[i];

		asc_jw_open(w, NULL, '{');
		asc_jw_str(w, "api", s->name);
		asc_jw_str(w, "op", s->op);
		asc_jw_str(w, "stack", s->stack);
		asc_jw_int(w, "count", (int64_t)s->count);
		asc_jw_num(w, "blocked_us", us(s->blocked_ns));
		asc_jw_num(w, "drained_us", us(s->drained_ns));
		asc_jw_num(w, "share", s->share);
		asc_jw_bool(w, "flagged", s->flagged);
		asc_jw_close(w, '}');
	}
	asc_jw_close(w, ']');
}

/* memory: the memory peak, who held it, growth per step */
static void text_memory(struct report *r)
{
	const struct asc_rpt_result *res = r->res;
	struct asc_out *o = r->o;
	size_t i;

	asc_out_puts(o, "\n== Memory ==\n");
	if (!res->mem_peak.measured) {
		asc_out_puts(o, "no allocator events captured (trace with memory profiling on)\n");
	} else {
		const struct asc_rpt_mem_peak *p = &res->mem_peak;
		const struct asc_rpt_mem_growth *g = &res->mem_growth;

		asc_out_printf(o,
			       "peak allocated %.2f MiB (step %lld), peak reserved %.2f MiB; "
			       "held at the peak by:\n",
			       p->peak_allocated / MB, (long long)p->peak_step,
			       p->peak_reserved / MB);
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
}

static void json_memory(struct report *r, struct asc_jw *w)
{
	const struct asc_rpt_result *res = r->res;
	const struct asc_rpt_source *src = r->src;
	size_t i;

	asc_jw_open(w, "memory", '{');
	asc_jw_bool(w, "measured", res->mem_peak.measured);
	asc_jw_int(w, "component", src->mem_component);
	asc_jw_num(w, "peak_allocated_mb", res->mem_peak.peak_allocated / MB);
	asc_jw_num(w, "peak_reserved_mb", res->mem_peak.peak_reserved / MB);
	asc_jw_num(w, "peak_us", us(res->mem_peak.peak_ns));
	json_step(w, "peak_step", res->mem_peak.peak_step);
	asc_jw_num(w, "unattributed_mb", res->mem_peak.unattributed_bytes / MB);
	asc_jw_open(w, "holders", '[');
	for (i = 0; i < res->mem_peak.nr_holders; i++) {
		asc_jw_open(w, NULL, '{');
		asc_jw_str(w, "op", res->mem_peak.holders[i].op);
		asc_jw_num(w, "mb", res->mem_peak.holders[i].bytes / MB);
		asc_jw_int(w, "bytes", (int64_t)res->mem_peak.holders[i].bytes);
		asc_jw_int(w, "blocks", (int64_t)res->mem_peak.holders[i].blocks);
		asc_jw_close(w, '}');
	}
	asc_jw_close(w, ']');
	asc_jw_open(w, "growth", '{');
	asc_jw_num(w, "median_mb_per_step", res->mem_growth.growth_median_mb);
	asc_jw_num(w, "total_mb", res->mem_growth.growth_total_mb);
	asc_jw_int(w, "steps_grown", (int64_t)res->mem_growth.steps_grown);
	asc_jw_bool(w, "flagged", res->mem_growth.flagged);
	asc_jw_open(w, "steps", '[');
	for (i = 0; i < res->mem_growth.nr_steps; i++) {
		asc_jw_open(w, NULL, '{');
		json_step(w, "step", res->mem_growth.steps[i].step);
		asc_jw_num(w, "end_allocated_mb", res->mem_growth.steps[i].end_allocated / MB);
		asc_jw_num(w, "peak_allocated_mb", res->mem_growth.steps[i].peak_allocated / MB);
		asc_jw_close(w, '}');
	}
	asc_jw_close(w, ']');
	asc_jw_close(w, '}');
	asc_jw_close(w, '}');
}

/* allocations: allocation calls and failures (the text shows a failure as its finding only) */
static void json_allocations(struct report *r, struct asc_jw *w)
{
	const struct asc_rpt_result *res = r->res;

	asc_jw_open(w, "allocations", '{');
	asc_jw_int(w, "calls", (int64_t)res->alloc.calls);
	asc_jw_int(w, "failures", (int64_t)res->alloc.failures);
	asc_jw_int(w, "first_error", res->alloc.first_ret);
	asc_jw_str(w, "first_api", res->alloc.name);
	asc_jw_str(w, "first_op", res->alloc.op);
	asc_jw_close(w, '}');
}

/* streams: kernels and busy time per stream, multi-stream overlap */
static void text_streams(struct report *r)
{
	const struct asc_rpt_result *res = r->res;
	struct asc_out *o = r->o;
	size_t i;

	asc_out_puts(o, "\n== Streams ==\n");
	for (i = 0; i < res->overlap.nr_streams; i++)
		asc_out_printf(o, "stream %u: %llu kernels, busy %.1f us\n",
			       res->overlap.streams[i].stream,
			       (unsigned long long)res->overlap.streams[i].kernels,
			       us(res->overlap.streams[i].busy_ns));
	asc_out_printf(o,
		       "multi-stream overlap: %.1f us with two or more streams busy (%.1f%% of "
		       "the least busy stream's time); device busy %.1f us\n",
		       us(res->overlap.overlap_ns), 100.0 * res->overlap.overlap_share,
		       us(res->overlap.busy_ns));
}

static void json_streams(struct report *r, struct asc_jw *w)
{
	const struct asc_rpt_result *res = r->res;
	size_t i;

	asc_jw_open(w, "streams", '{');
	asc_jw_open(w, "streams", '[');
	for (i = 0; i < res->overlap.nr_streams; i++) {
		asc_jw_open(w, NULL, '{');
		asc_jw_int(w, "stream", res->overlap.streams[i].stream);
		asc_jw_int(w, "kernels", (int64_t)res->overlap.streams[i].kernels);
		asc_jw_num(w, "busy_us", us(res->overlap.streams[i].busy_ns));
		asc_jw_close(w, '}');
	}
	asc_jw_close(w, ']');
	asc_jw_num(w, "busy_us", us(res->overlap.busy_ns));
	asc_jw_num(w, "overlap_us", us(res->overlap.overlap_ns));
	asc_jw_num(w, "overlap_share", res->overlap.overlap_share);
	asc_jw_bool(w, "serialised", res->overlap.serialised);
	asc_jw_close(w, '}');
}

/*
 * The report's sections, in output order: the text and the JSON rendering of
 * each are the two columns of one row, so they cannot drift apart.  A NULL
 * text renderer: the section exists in JSON only.
 */
static const struct section {
	void (*text)(struct report *r);
	void (*json)(struct report *r, struct asc_jw *w);
} sections[] = {
	{ text_header, json_header },	    { text_findings, json_findings },
	{ text_steps, json_steps },	    { text_kernels, json_kernels },
	{ text_optimizer, json_optimizer }, { text_conversions, json_conversions },
	{ text_syncs, json_syncs },	    { text_memory, json_memory },
	{ NULL, json_allocations },	    { text_streams, json_streams },
};

void rpt_render(struct report *r, int json)
{
	struct asc_jw w;
	size_t i;

	if (!json) {
		for (i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
			if (sections[i].text)
				sections[i].text(r);
		return;
	}
	asc_jw_init(&w, r->o);
	asc_jw_open(&w, NULL, '{');
	for (i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		sections[i].json(r, &w);
	asc_jw_close(&w, '}');
	asc_out_putc(r->o, '\n');
}
