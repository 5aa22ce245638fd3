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
#include <sys/stat.h>
#include <unistd.h>
#include "commands.h"
#include "lib/json_writer.h"
#include "lib/log.h"
#include "report/comm_report.h"
#include "report/report_detect.h"
#include "report/report_int.h"

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
			       "(acl_thread) is behind" :
			       "kernels issued late by the host: the task queue runs empty",
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

		if (!c->flagged || !(f = add_finding(r, td ? "transdata" : "cast",
						     td ? SUGGEST_TRANSDATA : SUGGEST_CAST)))
			continue;
		snprintf(f->summary, sizeof(f->summary),
			 "%s: %.1f %s kernels per step (%llu in all, %.1f us) launched by %s%s%s "
			 "(threshold %s=%g)",
			 td ? "format conversion" : "dtype conversion", c->per_step,
			 td ? "TransData" : "Cast", (unsigned long long)c->count, us(c->total_ns),
			 c->op ? c->op : "an unknown op", c->api ? " via " : "",
			 c->api ? c->api : "", td ? "transdata_per_step" : "cast_per_step",
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
		 r->t->alloc_failures, a->name ? a->name : "?", a->op ? a->op : "outside any op",
		 step, (long long)a->first_ret, p->peak_allocated / MB, p->peak_reserved / MB);
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
		"one.  A directory holding the captures of two or more ranks (a job) gets the\n"
		"job report instead: the slow rank, slow links, communication share per step\n"
		"and, for a hung job, the rank that never arrived.\n\n"
		"  --json                 one JSON object instead of text\n"
		"  --top N                kernels and memory holders listed (default %g)\n"
		"  --threshold NAME=VAL   change a threshold (repeatable); a value exactly at a\n"
		"                         threshold reaches it.  Names and defaults:\n",
		t.top);
	for (i = 0; (name = asc_rpt_threshold_get(&t, i, &v)); i++)
		fprintf(f, "                           %-20s %g\n", name, v);
	fprintf(f, "\nExit status: 0 report printed (findings or not), 1 capture damaged or\n"
		   "unreadable, 2 usage error or no capture found.\n");
}

/*
 * The capture ARG names (a capture, a run directory or a directory holding
 * one) into src, with only the steps of a run directory's cycle (*steps,
 * malloc'd, for the caller to free after src); nothing to free on error.
 * A capture holding nothing to analyse: -ENODATA.
 */
static int load_source(const char *arg, char *capture, size_t len, struct asc_rpt_source *src,
		       int64_t **steps)
{
	int64_t *run_steps = NULL;
	size_t nr_run_steps = 0;
	int err;

	*steps = NULL;
	err = asc_rpt_find_capture(arg, capture, len);
	if (err)
		return err;
	/* a {run}_ascend_pt directory holds one cycle: report its steps only */
	err = asc_rpt_run_steps(capture, &run_steps, &nr_run_steps);
	if (err)
		return err;
	memset(src, 0, sizeof(*src));
	src->only_steps = run_steps;
	src->nr_only_steps = nr_run_steps;
	err = asc_rpt_source_load(capture, src);
	if (err) {
		free(run_steps);
		return err;
	}
	if (nr_run_steps && !src->in.nr_steps) {
		asc_err("report: %s: its run directory lists %zu steps (step_trace_time.csv) that "
			"the capture does not record\n",
			capture, nr_run_steps);
		err = -ENODATA;
	} else if (!src->in.nr_kernels && !src->in.nr_apis && !src->in.nr_mem) {
		if (src->damaged)
			asc_err("report: %s is damaged (%s) and holds nothing to analyse "
				"before the damage\n",
				capture, src->damage);
		else
			asc_err("report: %s holds no kernels, CANN calls or memory events to "
				"analyse\n",
				capture);
		err = -ENODATA;
	}
	if (err) {
		asc_rpt_source_free(src);
		free(run_steps);
		return err;
	}
	*steps = run_steps;
	return 0;
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
	int64_t *run_steps;
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
	{
		/* a job directory (captures of two or more ranks): the cross-rank report */
		struct stat st;
		size_t nranks = 0;

		if (!stat(argv[optind], &st) && S_ISDIR(st.st_mode) &&
		    !asc_rpt_job_captures(argv[optind], &nranks) && nranks >= 2)
			return asc_rpt_job(argv[optind], json);
	}
	err = load_source(argv[optind], capture, sizeof(capture), &src, &run_steps);
	if (err)
		return err;
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
		rpt_render(&rep, json);
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
