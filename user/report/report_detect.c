// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report_detect.c - the detectors of `ascbpf report` (see report_detect.h).
 *
 * Everything here is arithmetic over the caller's arrays: no I/O, no
 * globals, so the unit tests can pin each rule at its threshold.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "lib/log.h"
#include "report/report_detect.h"

#define NS_PER_US    1000.0
#define BYTES_PER_MB (1024.0 * 1024.0)

/* ---- thresholds ---- */

struct threshold_def {
	const char *name;
	size_t offset;
	double def;
	int is_share; /* must lie in [0, 1] */
	int is_count; /* must be an integer */
};

/* a macro that expands to an initializer, and its table */
// clang-format off
#define T(field, def, share, count) \
	{ #field, offsetof(struct asc_rpt_thresholds, field), def, share, count }

static const struct threshold_def threshold_defs[] = {
	T(idle_share, 0.30, 1, 0),
	T(gap_us, 5.0, 0, 0),
	T(stall_share, 0.5, 1, 0),
	T(queue_depth, 1.0, 0, 0),
	T(optimizer_kernels, 32.0, 0, 0),
	T(transdata_per_step, 1.0, 0, 0),
	T(cast_per_step, 1.0, 0, 0),
	T(sync_share, 0.05, 1, 0),
	T(mem_growth_mb, 1.0, 0, 0),
	T(overlap_share, 0.05, 1, 0),
	T(alloc_failures, 1.0, 0, 1),
	T(top, 10.0, 0, 1),
};
// clang-format on
#define NR_THRESHOLDS (sizeof(threshold_defs) / sizeof(threshold_defs[0]))

static double *threshold_slot(struct asc_rpt_thresholds *t, size_t i)
{
	return (double *)((char *)t + threshold_defs[i].offset);
}

void asc_rpt_thresholds_default(struct asc_rpt_thresholds *t)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < NR_THRESHOLDS; i++)
		*threshold_slot(t, i) = threshold_defs[i].def;
}

int asc_rpt_threshold_set(struct asc_rpt_thresholds *t, const char *assignment)
{
	const char *eq = strchr(assignment, '=');
	size_t i, len;
	char *end;
	double v;

	if (!eq || eq == assignment) {
		asc_err("--threshold '%s': expected NAME=VALUE\n", assignment);
		return -EINVAL;
	}
	len = (size_t)(eq - assignment);
	for (i = 0; i < NR_THRESHOLDS; i++)
		if (strlen(threshold_defs[i].name) == len &&
		    !strncmp(threshold_defs[i].name, assignment, len))
			break;
	if (i == NR_THRESHOLDS) {
		char known[256];
		size_t off = 0;

		known[0] = 0;
		for (i = 0; i < NR_THRESHOLDS && off < sizeof(known); i++)
			off += (size_t)snprintf(known + off, sizeof(known) - off, "%s%s",
						i ? ", " : "", threshold_defs[i].name);
		asc_err("--threshold: unknown name '%.*s' (known: %s)\n", (int)len, assignment,
			known);
		return -EINVAL;
	}
	errno = 0;
	v = strtod(eq + 1, &end);
	if (errno || end == eq + 1 || *end || !isfinite(v) || v < 0) {
		asc_err("--threshold %s: '%s' is not a non-negative number\n",
			threshold_defs[i].name, eq + 1);
		return -EINVAL;
	}
	if (threshold_defs[i].is_share && v > 1) {
		asc_err("--threshold %s: %g is a share and must lie in [0, 1]\n",
			threshold_defs[i].name, v);
		return -EINVAL;
	}
	if (threshold_defs[i].is_count && (v != floor(v) || v > 1e6)) {
		asc_err("--threshold %s: %g must be a whole number up to 1000000\n",
			threshold_defs[i].name, v);
		return -EINVAL;
	}
	*threshold_slot(t, i) = v;
	return 0;
}

const char *asc_rpt_threshold_get(const struct asc_rpt_thresholds *t, size_t i, double *value)
{
	if (i >= NR_THRESHOLDS)
		return NULL;
	*value = *threshold_slot((struct asc_rpt_thresholds *)t, i);
	return threshold_defs[i].name;
}

/* ---- helpers ---- */

struct interval {
	uint64_t start;
	uint64_t end;
};

static int cmp_interval(const void *a, const void *b)
{
	const struct interval *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

/* Sorts iv[] and merges it in place; returns the merged count. */
static size_t merge_intervals(struct interval *iv, size_t n)
{
	size_t i, m = 0;

	if (!n)
		return 0;
	qsort(iv, n, sizeof(*iv), cmp_interval);
	for (i = 1; i < n; i++) {
		if (iv[i].start <= iv[m].end) {
			if (iv[i].end > iv[m].end)
				iv[m].end = iv[i].end;
		} else {
			iv[++m] = iv[i];
		}
	}
	return m + 1;
}

static uint64_t interval_total(const struct interval *iv, size_t n)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < n; i++)
		sum += iv[i].end - iv[i].start;
	return sum;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array: v[ceil(p/100 * n) - 1]. */
static size_t rank_index(size_t n, double p)
{
	size_t r = (size_t)ceil(p / 100.0 * (double)n);

	if (r < 1)
		r = 1;
	if (r > n)
		r = n;
	return r - 1;
}

/* NULL-safe string order (NULL first), for grouping. */
static int strcmp_null(const char *a, const char *b)
{
	if (a == b)
		return 0;
	if (!a)
		return -1;
	if (!b)
		return 1;
	return strcmp(a, b);
}

static const char *kernel_type(const struct asc_rpt_kernel *k)
{
	if (k->type && *k->type)
		return k->type;
	return k->name ? k->name : "(unnamed)";
}

/*
 * The steps the detectors work on: the input's, or one pseudo step spanning
 * every event when the capture has none.  *pseudo is filled in that case.
 */
static const struct asc_rpt_step *effective_steps(const struct asc_rpt_input *in,
						  struct asc_rpt_step *pseudo, size_t *n)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t i;

	if (in->nr_steps) {
		*n = in->nr_steps;
		return in->steps;
	}
	for (i = 0; i < in->nr_kernels; i++) {
		if (in->kernels[i].start_ns < lo)
			lo = in->kernels[i].start_ns;
		if (in->kernels[i].end_ns > hi)
			hi = in->kernels[i].end_ns;
	}
	for (i = 0; i < in->nr_apis; i++) {
		if (in->apis[i].start_ns < lo)
			lo = in->apis[i].start_ns;
		if (in->apis[i].end_ns > hi)
			hi = in->apis[i].end_ns;
	}
	for (i = 0; i < in->nr_mem; i++) {
		if (in->mem[i].ts_ns < lo)
			lo = in->mem[i].ts_ns;
		if (in->mem[i].ts_ns + 1 > hi)
			hi = in->mem[i].ts_ns + 1;
	}
	if (lo > hi) {
		*n = 0;
		return NULL;
	}
	pseudo->id = ASC_RPT_NO_STEP;
	pseudo->start_ns = lo;
	pseudo->end_ns = hi;
	*n = 1;
	return pseudo;
}

static uint64_t total_step_ns(const struct asc_rpt_input *in)
{
	struct asc_rpt_step pseudo;
	const struct asc_rpt_step *st;
	uint64_t sum = 0;
	size_t i, n;

	st = effective_steps(in, &pseudo, &n);
	for (i = 0; i < n; i++)
		if (st[i].end_ns > st[i].start_ns)
			sum += st[i].end_ns - st[i].start_ns;
	return sum;
}

static int64_t step_of(const struct asc_rpt_input *in, uint64_t ts)
{
	size_t i;

	for (i = 0; i < in->nr_steps; i++)
		if (ts >= in->steps[i].start_ns && ts < in->steps[i].end_ns)
			return in->steps[i].id;
	return ASC_RPT_NO_STEP;
}

/* End of the step holding ts (UINT64_MAX without steps), 0 outside every step. */
static uint64_t step_end(const struct asc_rpt_input *in, uint64_t ts)
{
	size_t i;

	if (!in->nr_steps)
		return UINT64_MAX;
	for (i = 0; i < in->nr_steps; i++)
		if (ts >= in->steps[i].start_ns && ts < in->steps[i].end_ns)
			return in->steps[i].end_ns;
	return 0;
}

/* ---- classification ---- */

/*
 * `word` occurs in s as a CamelCase word: case-sensitive, and not followed
 * by a lowercase letter ("aclnnCast", "trans_TransData_0", not "Castle").
 */
static int has_word(const char *s, const char *word)
{
	size_t len = strlen(word);
	const char *p;

	if (!s)
		return 0;
	for (p = strstr(s, word); p; p = strstr(p + 1, word))
		if (!(p[len] >= 'a' && p[len] <= 'z'))
			return 1;
	return 0;
}

int asc_rpt_is_transdata(const struct asc_rpt_kernel *k)
{
	return has_word(k->type, "TransData") || has_word(k->name, "TransData");
}

int asc_rpt_is_cast(const struct asc_rpt_kernel *k)
{
	return has_word(k->type, "Cast") || has_word(k->name, "Cast");
}

static int starts_with(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

/*
 * Fused / multi-tensor optimizer kernels: one launch covers many parameters
 * (ApplyAdamW, ForeachAddList, FusedAdam...).
 */
int asc_rpt_is_fused_optimizer(const struct asc_rpt_kernel *k)
{
	const char *t = kernel_type(k);

	return starts_with(t, "Apply") || starts_with(t, "Foreach") ||
	       starts_with(t, "MultiTensor") || has_word(t, "Fused");
}

/*
 * A kernel belongs to the optimizer phase when it is a fused optimizer
 * kernel, or the op or call stack that launched it is inside an optimizer
 * (torch.optim: "Optimizer.step#Adam.step", "torch/optim/adam.py", ...).
 */
int asc_rpt_is_optimizer(const struct asc_rpt_kernel *k)
{
	if (asc_rpt_is_fused_optimizer(k))
		return 1;
	if (k->op && (strcasestr(k->op, "optim") || starts_with(k->op, "aten::_foreach_") ||
		      starts_with(k->op, "aten::_fused_")))
		return 1;
	return k->stack && strcasestr(k->stack, "optim") != NULL;
}

/* Calls that block the host until the device (or a stream/event) is done. */
int asc_rpt_is_sync_api(const char *name)
{
	static const char *const prefixes[] = {
		"aclrtSynchronizeStream", "aclrtSynchronizeDevice", "aclrtSynchronizeEvent",
		"rtStreamSynchronize",	  "rtDeviceSynchronize",    "rtEventSynchronize",
	};
	size_t i;

	if (!name)
		return 0;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (starts_with(name, prefixes[i]))
			return 1;
	/* aclrtMemcpy (not ...Async) is synchronous: a D2H copy waits for the stream */
	return !strcmp(name, "aclrtMemcpy") || !strcmp(name, "rtMemcpy");
}

/* Device-memory allocation entry points, CANN and driver. */
int asc_rpt_is_alloc_api(const char *name)
{
	static const char *const prefixes[] = {
		"aclrtMalloc",
		"rtMalloc",
		"halMemAlloc",
		"aclrtMallocPhysical",
	};
	size_t i;

	if (!name)
		return 0;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (starts_with(name, prefixes[i]))
			return strcmp(name, "rtMallocHost") && strcmp(name, "aclrtMallocHost");
	return 0;
}

/* ---- step split ---- */

/* Fills ks[] with the compute kernels of in; returns how many. */
static size_t compute_kernels(const struct asc_rpt_input *in, const struct asc_rpt_kernel **ks)
{
	size_t i, n = 0;

	for (i = 0; i < in->nr_kernels; i++)
		if (in->kernels[i].kind == ASC_RPT_K_COMPUTE)
			ks[n++] = &in->kernels[i];
	return n;
}

static int cmp_kernel_start(const void *a, const void *b)
{
	const struct asc_rpt_kernel *x = *(const struct asc_rpt_kernel *const *)a;
	const struct asc_rpt_kernel *y = *(const struct asc_rpt_kernel *const *)b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return 0;
}

int asc_rpt_detect_steps(const struct asc_rpt_input *in, struct asc_rpt_result *res)
{
	const struct asc_rpt_kernel **ks = NULL;
	struct asc_rpt_step pseudo;
	const struct asc_rpt_step *st;
	struct interval *iv = NULL, *ivc = NULL;
	uint64_t max_dur = 0;
	size_t n, i, j, nk;

	st = effective_steps(in, &pseudo, &n);
	res->nr_steps = 0;
	res->steps = calloc(n ? n : 1, sizeof(*res->steps));
	ks = calloc(in->nr_kernels ? in->nr_kernels : 1, sizeof(*ks));
	iv = calloc(in->nr_kernels ? in->nr_kernels : 1, sizeof(*iv));
	ivc = calloc(in->nr_kernels ? in->nr_kernels : 1, sizeof(*ivc));
	if (!res->steps || !ks || !iv || !ivc) {
		free(ks);
		free(iv);
		free(ivc);
		return -ENOMEM;
	}
	/* every device task counts as busy; compute is the compute kernels' share of it */
	nk = in->nr_kernels;
	for (i = 0; i < nk; i++) {
		ks[i] = &in->kernels[i];
		if (ks[i]->end_ns - ks[i]->start_ns > max_dur && ks[i]->end_ns > ks[i]->start_ns)
			max_dur = ks[i]->end_ns - ks[i]->start_ns;
	}
	qsort(ks, nk, sizeof(*ks), cmp_kernel_start);

	for (j = 0; j < n; j++) {
		struct asc_rpt_step_split *sp = &res->steps[j];
		uint64_t s = st[j].start_ns, e = st[j].end_ns, lo_start, busy;
		uint64_t first = UINT64_MAX, last = 0;
		size_t lo = 0, hi = nk, m = 0, mc = 0;

		sp->step = st[j].id;
		sp->start_ns = s;
		sp->end_ns = e;
		if (e <= s)
			continue;
		/* kernels that can intersect [s, e) start at or after s - max_dur */
		lo_start = s > max_dur ? s - max_dur : 0;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (ks[mid]->start_ns < lo_start)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (i = lo; i < nk && ks[i]->start_ns < e; i++) {
			uint64_t a = ks[i]->start_ns, b = ks[i]->end_ns;

			if (b <= s || b < a)
				continue;
			if (a < s)
				a = s;
			if (b > e)
				b = e;
			iv[m].start = a;
			iv[m].end = b;
			m++;
			if (ks[i]->kind == ASC_RPT_K_COMPUTE)
				ivc[mc++] = iv[m - 1];
			if (a < first)
				first = a;
			if (b > last)
				last = b;
		}
		sp->kernels = mc;
		m = merge_intervals(iv, m);
		mc = merge_intervals(ivc, mc);
		busy = interval_total(iv, m);
		sp->compute_ns = interval_total(ivc, mc);
		sp->copy_ns = busy - sp->compute_ns;
		if (!m) {
			sp->host_only_ns = e - s;
			continue;
		}
		sp->host_only_ns = (first - s) + (e - last);
		sp->idle_ns = (last - first) - busy;
		sp->device_start_ns = first;
		sp->device_end_ns = last;
	}
	res->nr_steps = n;
	free(ks);
	free(iv);
	free(ivc);
	return 0;
}

/* ---- dispatch-bound ---- */

static int cmp_kernel_stream_start(const void *a, const void *b)
{
	const struct asc_rpt_kernel *x = *(const struct asc_rpt_kernel *const *)a;
	const struct asc_rpt_kernel *y = *(const struct asc_rpt_kernel *const *)b;

	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return 0;
}

struct step_gap {
	int64_t step;
	uint64_t gap;
	int known;   /* the second kernel's submission is known */
	int starved; /* ... and it came after the first kernel ended */
};

static int cmp_step_gap(const void *a, const void *b)
{
	const struct step_gap *x = a, *y = b;

	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	return x->gap < y->gap ? -1 : x->gap > y->gap;
}

/* Index into res->steps of the step holding ts, or -1. */
static long step_index(const struct asc_rpt_result *res, uint64_t ts)
{
	size_t j;

	for (j = 0; j < res->nr_steps; j++)
		if (ts >= res->steps[j].start_ns && ts < res->steps[j].end_ns)
			return (long)j;
	return -1;
}

/*
 * Per-step queue depth medians: the depth samples taken by the enqueues that
 * fall in each step.  depth[] is in enqueue order (enq[] sorted).  Best
 * effort: without memory the per-step depths stay 0.
 */
static void step_depths(struct asc_rpt_result *res, const uint64_t *enq, const uint64_t *depth,
			size_t n)
{
	struct step_gap *sd = calloc(n + 1, sizeof(*sd));
	size_t i, k, m = 0;

	if (!sd)
		return;
	for (i = 0; i < n; i++) {
		long j = step_index(res, enq[i]);

		if (j < 0)
			continue;
		sd[m].step = j;
		sd[m].gap = depth[i];
		m++;
	}
	qsort(sd, m, sizeof(*sd), cmp_step_gap);
	for (i = 0; i < m; i = k) {
		for (k = i; k < m && sd[k].step == sd[i].step; k++)
			;
		res->steps[sd[i].step].queue_slots = k - i;
		res->steps[sd[i].step].queue_depth_median =
			(double)sd[i + rank_index(k - i, 50)].gap;
	}
	free(sd);
}

static int queue_stats(const struct asc_rpt_input *in, struct asc_rpt_result *res)
{
	struct asc_rpt_dispatch *d = &res->dispatch;
	uint64_t *enq, *deq, *depth, *wait;
	size_t i, n = 0, di = 0;

	enq = calloc(in->nr_queue + 1, sizeof(*enq));
	deq = calloc(in->nr_queue + 1, sizeof(*deq));
	depth = calloc(in->nr_queue + 1, sizeof(*depth));
	wait = calloc(in->nr_queue + 1, sizeof(*wait));
	if (!enq || !deq || !depth || !wait) {
		free(enq);
		free(deq);
		free(depth);
		free(wait);
		return -ENOMEM;
	}
	for (i = 0; i < in->nr_queue; i++) {
		const struct asc_rpt_queue *q = &in->queue[i];

		if (!q->enqueue_ns || !q->dequeue_ns || q->dequeue_ns < q->enqueue_ns)
			continue;
		enq[n] = q->enqueue_ns;
		deq[n] = q->dequeue_ns;
		wait[n] = q->dequeue_ns - q->enqueue_ns;
		n++;
	}
	d->queue_pairs = n;
	d->queue_measured = n > 0;
	if (n) {
		qsort(enq, n, sizeof(*enq), cmp_u64);
		qsort(deq, n, sizeof(*deq), cmp_u64);
		qsort(wait, n, sizeof(*wait), cmp_u64);
		/* depth seen by the i-th enqueue: earlier enqueues not yet dequeued */
		for (i = 0; i < n; i++) {
			while (di < n && deq[di] <= enq[i])
				di++;
			depth[i] = i > di ? i - di : 0;
		}
		step_depths(res, enq, depth, n);
		qsort(depth, n, sizeof(*depth), cmp_u64);
		d->queue_depth_median = (double)depth[rank_index(n, 50)];
		d->queue_depth_max = (double)depth[n - 1];
		d->queue_wait_median_us = (double)wait[rank_index(n, 50)] / NS_PER_US;
	}
	free(enq);
	free(deq);
	free(depth);
	free(wait);
	return 0;
}

/*
 * A transition a -> b (consecutive kernels of one stream) is starved when b
 * was submitted after a ended, so the device had nothing of this stream left
 * to run, and the device waited at least gap_ns for it.
 */
static int starved_transition(const struct asc_rpt_kernel *a, const struct asc_rpt_kernel *b,
			      double gap_ns)
{
	return b->submit_ns && b->submit_ns > a->end_ns && b->start_ns > a->end_ns &&
	       (double)(b->start_ns - a->end_ns) >= gap_ns;
}

/*
 * Per-step idle shares, gaps and transitions, for the per-step verdicts.
 * ks[] is sorted by (stream, start).  Best effort: a failed allocation leaves
 * the per-step gaps at 0 (the overall verdict does not depend on them).
 */
static void step_gaps(size_t nk, const struct asc_rpt_kernel **ks, double gap_ns,
		      struct asc_rpt_result *res)
{
	struct step_gap *sg = calloc(nk + 1, sizeof(*sg));
	size_t i, j, k, n = 0;

	for (j = 0; j < res->nr_steps; j++) {
		struct asc_rpt_step_split *sp = &res->steps[j];

		if (sp->compute_ns + sp->copy_ns + sp->idle_ns)
			sp->idle_share = (double)sp->idle_ns /
					 (double)(sp->compute_ns + sp->copy_ns + sp->idle_ns);
	}
	if (!sg)
		return;
	for (i = 1; i < nk; i++) {
		const struct asc_rpt_kernel *a = ks[i - 1], *b = ks[i];

		if (a->stream != b->stream || a->step != b->step)
			continue;
		sg[n].step = a->step;
		sg[n].gap = b->start_ns > a->end_ns ? b->start_ns - a->end_ns : 0;
		sg[n].known = b->submit_ns != 0;
		sg[n].starved = starved_transition(a, b, gap_ns);
		n++;
	}
	qsort(sg, n, sizeof(*sg), cmp_step_gap);
	for (i = 0; i < n; i = k) {
		uint64_t known = 0, starved = 0;

		for (k = i; k < n && sg[k].step == sg[i].step; k++) {
			known += (uint64_t)sg[k].known;
			starved += (uint64_t)sg[k].starved;
		}
		for (j = 0; j < res->nr_steps; j++) {
			struct asc_rpt_step_split *sp = &res->steps[j];

			if (sp->step != sg[i].step)
				continue;
			sp->nr_gaps = k - i;
			sp->gap_median_us = (double)sg[i + rank_index(k - i, 50)].gap / NS_PER_US;
			sp->transitions = known;
			sp->starved_transitions = starved;
		}
	}
	free(sg);
}

/*
 * The intervals during which the device has work: each task from its
 * submission (when known and earlier than its start) to its end; sorted,
 * merged.  NULL + *n = 0 on ENOMEM or without kernels.
 */
static struct interval *covered_intervals(const struct asc_rpt_input *in, size_t *n)
{
	struct interval *iv = calloc(in->nr_kernels + 1, sizeof(*iv));
	size_t i, m = 0;

	*n = 0;
	if (!iv)
		return NULL;
	for (i = 0; i < in->nr_kernels; i++) {
		const struct asc_rpt_kernel *k = &in->kernels[i];

		if (k->end_ns < k->start_ns)
			continue;
		iv[m].start = k->submit_ns && k->submit_ns < k->start_ns ? k->submit_ns :
									   k->start_ns;
		iv[m].end = k->end_ns;
		m++;
	}
	*n = merge_intervals(iv, m);
	return iv;
}

/*
 * The intervals with at least `depth` slots waiting in the task queue:
 * enqueued and not yet dequeued, from the complete Enqueue/Dequeue pairs.
 * Sorted, disjoint.  NULL + *n = 0 without pairs or on ENOMEM.
 */
static struct interval *queued_intervals(const struct asc_rpt_input *in, double depth, size_t *n)
{
	uint64_t *enq = calloc(in->nr_queue + 1, sizeof(*enq));
	uint64_t *deq = calloc(in->nr_queue + 1, sizeof(*deq));
	struct interval *iv = calloc(2 * in->nr_queue + 1, sizeof(*iv));
	size_t i, m = 0, ei = 0, di = 0;
	int64_t level = 0;

	*n = 0;
	for (i = 0; enq && deq && iv && i < in->nr_queue; i++) {
		const struct asc_rpt_queue *q = &in->queue[i];

		if (!q->enqueue_ns || !q->dequeue_ns || q->dequeue_ns < q->enqueue_ns)
			continue;
		enq[m] = q->enqueue_ns;
		deq[m] = q->dequeue_ns;
		m++;
	}
	if (!m || !iv) {
		free(enq);
		free(deq);
		free(iv);
		return NULL;
	}
	qsort(enq, m, sizeof(*enq), cmp_u64);
	qsort(deq, m, sizeof(*deq), cmp_u64);
	/* sweep the depth step function; a dequeue at the instant of an enqueue goes first */
	while (ei < m || di < m) {
		int is_deq = di < m && (ei == m || deq[di] <= enq[ei]);
		uint64_t ts = is_deq ? deq[di++] : enq[ei++];
		int was = level > 0 && (double)level >= depth, now;

		level += is_deq ? -1 : 1;
		now = level > 0 && (double)level >= depth;
		if (!was && now) {
			iv[*n].start = ts;
		} else if (was && !now) {
			iv[*n].end = ts;
			if (iv[*n].end > iv[*n].start)
				(*n)++;
		}
	}
	free(enq);
	free(deq);
	return iv;
}

/* Index of the first of the sorted, disjoint iv[0..n) that ends after ts (n if none). */
static size_t first_ending_after(const struct interval *iv, size_t n, uint64_t ts)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (iv[mid].end <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Length of [a, b) inside the sorted, disjoint iv[0..n). */
static uint64_t overlap_len(const struct interval *iv, size_t n, uint64_t a, uint64_t b)
{
	uint64_t sum = 0;
	size_t lo;

	for (lo = first_ending_after(iv, n, a); lo < n && iv[lo].start < b; lo++) {
		uint64_t s = iv[lo].start > a ? iv[lo].start : a;
		uint64_t e = iv[lo].end < b ? iv[lo].end : b;

		if (e > s)
			sum += e - s;
	}
	return sum;
}

static void starved_piece(struct asc_rpt_step_split *sp, uint64_t a, uint64_t b, double gap_ns,
			  const struct interval *qv, size_t nq)
{
	if (b <= a || (double)(b - a) < gap_ns)
		return;
	sp->starved_ns += b - a;
	sp->starved_gaps++;
	if (b - a > sp->starved_max_ns)
		sp->starved_max_ns = b - a;
	sp->starved_queued_ns += overlap_len(qv, nq, a, b);
}

/* The starved stretches of one step: its device window less the covered intervals. */
static void step_starvation(struct asc_rpt_step_split *sp, const struct interval *cv, size_t nc,
			    const struct interval *qv, size_t nq, double gap_ns)
{
	uint64_t w0 = sp->device_start_ns, w1 = sp->device_end_ns, at = w0;
	size_t lo;

	if (w1 <= w0)
		return;
	for (lo = first_ending_after(cv, nc, w0); lo < nc && cv[lo].start < w1; lo++) {
		if (cv[lo].start > at)
			starved_piece(sp, at, cv[lo].start, gap_ns, qv, nq);
		if (cv[lo].end > at)
			at = cv[lo].end;
	}
	if (at < w1)
		starved_piece(sp, at, w1, gap_ns, qv, nq);
}

/* The rule of struct asc_rpt_dispatch, on one step's or the pooled numbers. */
static int starved_verdict(uint64_t active_ns, uint64_t starved_ns, uint64_t starved_max_ns,
			   const struct asc_rpt_thresholds *t)
{
	if (!active_ns || !starved_ns)
		return 0;
	return (double)starved_ns / (double)active_ns >= t->idle_share &&
	       (double)starved_max_ns < t->stall_share * (double)starved_ns;
}

int asc_rpt_detect_dispatch(const struct asc_rpt_input *in, const struct asc_rpt_thresholds *t,
			    struct asc_rpt_result *res)
{
	struct asc_rpt_dispatch *d = &res->dispatch;
	const struct asc_rpt_kernel **ks;
	struct interval *cv, *qv;
	double gap_ns = t->gap_us * NS_PER_US;
	uint64_t *gaps, active;
	size_t i, n = 0, nk, nc, nq;
	int err;

	memset(d, 0, sizeof(*d));
	if (!res->steps && in->nr_kernels + in->nr_apis + in->nr_mem) {
		err = asc_rpt_detect_steps(in, res);
		if (err)
			return err;
	}

	ks = calloc(in->nr_kernels + 1, sizeof(*ks));
	gaps = calloc(in->nr_kernels + 1, sizeof(*gaps));
	if (!ks || !gaps) {
		free(ks);
		free(gaps);
		return -ENOMEM;
	}
	nk = compute_kernels(in, ks);
	qsort(ks, nk, sizeof(*ks), cmp_kernel_stream_start);
	/*
	 * Gaps count only between kernels of one stream in one step: the time
	 * between steps (data loading, logging) is host-only, not dispatch.
	 */
	for (i = 1; i < nk; i++) {
		const struct asc_rpt_kernel *a = ks[i - 1], *b = ks[i];

		if (a->stream != b->stream || a->step != b->step)
			continue;
		if (in->nr_steps && a->step == ASC_RPT_NO_STEP)
			continue;
		gaps[n++] = b->start_ns > a->end_ns ? b->start_ns - a->end_ns : 0;
		if (b->submit_ns)
			d->transitions++;
		d->starved_transitions += (uint64_t)starved_transition(a, b, gap_ns);
	}
	d->nr_gaps = n;
	step_gaps(nk, ks, gap_ns, res);
	if (n) {
		qsort(gaps, n, sizeof(*gaps), cmp_u64);
		d->gap_median_us = (double)gaps[rank_index(n, 50)] / NS_PER_US;
		d->gap_p99_us = (double)gaps[rank_index(n, 99)] / NS_PER_US;
	}
	free(ks);
	free(gaps);
	for (i = 0; i < in->nr_kernels; i++)
		if (in->kernels[i].submit_ns)
			d->submissions_known = 1;

	cv = covered_intervals(in, &nc);
	qv = queued_intervals(in, t->queue_depth, &nq);
	if (in->nr_kernels && !cv) {
		free(qv);
		return -ENOMEM;
	}
	for (i = 0; i < res->nr_steps; i++) {
		struct asc_rpt_step_split *sp = &res->steps[i];

		step_starvation(sp, cv, nc, qv, nq, gap_ns);
		active = sp->compute_ns + sp->copy_ns + sp->idle_ns;
		if (active)
			sp->starved_share = (double)sp->starved_ns / (double)active;
		d->compute_ns += sp->compute_ns;
		d->copy_ns += sp->copy_ns;
		d->idle_ns += sp->idle_ns;
		d->host_only_ns += sp->host_only_ns;
		d->starved_ns += sp->starved_ns;
		d->starved_gaps += sp->starved_gaps;
		d->starved_queued_ns += sp->starved_queued_ns;
		if (sp->starved_max_ns > d->starved_max_ns)
			d->starved_max_ns = sp->starved_max_ns;
	}
	free(cv);
	free(qv);
	active = d->compute_ns + d->copy_ns + d->idle_ns;
	if (active) {
		d->idle_share = (double)d->idle_ns / (double)active;
		d->starved_share = (double)d->starved_ns / (double)active;
	}
	if (d->transitions)
		d->starved_kernel_share = (double)d->starved_transitions / (double)d->transitions;

	err = queue_stats(in, res);
	if (err)
		return err;
	d->dispatch_bound = starved_verdict(active, d->starved_ns, d->starved_max_ns, t);
	/* launch side when the task queue held slots through most of the starvation */
	d->by_queue = d->dispatch_bound && d->starved_queued_ns * 2 > d->starved_ns;
	d->by_gaps = d->dispatch_bound && !d->by_queue;
	/* the same rule on each step's own numbers */
	for (i = 0; i < res->nr_steps; i++) {
		struct asc_rpt_step_split *sp = &res->steps[i];

		sp->dispatch_bound = starved_verdict(sp->compute_ns + sp->copy_ns + sp->idle_ns,
						     sp->starved_ns, sp->starved_max_ns, t);
	}
	return 0;
}

/* ---- top kernels ---- */

static int cmp_kernel_type(const void *a, const void *b)
{
	const struct asc_rpt_kernel *x = *(const struct asc_rpt_kernel *const *)a;
	const struct asc_rpt_kernel *y = *(const struct asc_rpt_kernel *const *)b;

	return strcmp(kernel_type(x), kernel_type(y));
}

static int cmp_stat_total(const void *a, const void *b)
{
	const struct asc_rpt_kernel_stat *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

int asc_rpt_detect_top(const struct asc_rpt_input *in, const struct asc_rpt_thresholds *t,
		       struct asc_rpt_result *res)
{
	const struct asc_rpt_kernel **ks;
	struct asc_rpt_kernel_stat *st;
	size_t i, n = 0, nk, top = (size_t)t->top;

	res->nr_top = 0;
	res->device_ns = 0;
	ks = calloc(in->nr_kernels + 1, sizeof(*ks));
	st = calloc(in->nr_kernels + 1, sizeof(*st));
	if (!ks || !st) {
		free(ks);
		free(st);
		return -ENOMEM;
	}
	nk = compute_kernels(in, ks);
	qsort(ks, nk, sizeof(*ks), cmp_kernel_type);
	for (i = 0; i < nk; i++) {
		uint64_t dur = ks[i]->end_ns > ks[i]->start_ns ? ks[i]->end_ns - ks[i]->start_ns :
								 0;

		if (!n || strcmp(st[n - 1].name, kernel_type(ks[i]))) {
			st[n].name = kernel_type(ks[i]);
			st[n].min_ns = UINT64_MAX;
			n++;
		}
		st[n - 1].count++;
		st[n - 1].total_ns += dur;
		if (dur > st[n - 1].max_ns)
			st[n - 1].max_ns = dur;
		if (dur < st[n - 1].min_ns)
			st[n - 1].min_ns = dur;
		res->device_ns += dur;
	}
	for (i = 0; i < n; i++) {
		st[i].avg_us = (double)st[i].total_ns / (double)st[i].count / NS_PER_US;
		st[i].share = res->device_ns ? (double)st[i].total_ns / (double)res->device_ns : 0;
	}
	qsort(st, n, sizeof(*st), cmp_stat_total);
	free(ks);
	res->kernel_types = n;
	res->top = st;
	res->nr_top = n < top ? n : top;
	return 0;
}

/* ---- optimizer ---- */

/* The innermost op of an op path "outer > ... > inner". */
static const char *innermost_op(const char *path)
{
	const char *p, *last = path;

	if (!path)
		return NULL;
	for (p = strstr(path, " > "); p; p = strstr(p + 3, " > "))
		last = p + 3;
	return last;
}

/*
 * In-place updates only an Adam-family optimizer makes (torch.optim.Adam/
 * AdamW with foreach=False: addcmul_ on the second moment, addcdiv_ on the
 * weight, lerp_ on the first moment).  They mark the optimizer phase when
 * no range or stack names the optimizer.
 */
static int is_adam_update(const struct asc_rpt_kernel *k)
{
	const char *op = innermost_op(k->op);

	return op && (!strcmp(op, "aten::addcmul_") || !strcmp(op, "aten::addcdiv_") ||
		      !strcmp(op, "aten::lerp_"));
}

struct opt_window {
	int64_t step;
	uint32_t stream;
	uint64_t first, last; /* first start, last end of the Adam updates */
};

/*
 * A kernel is an optimizer kernel when asc_rpt_is_optimizer() says so, or
 * when it is an Adam-family update, or when it runs on the same stream in the
 * same optimizer step (opt_step_of()) between the first and the last
 * Adam-family update (the Muls, Sqrt, Adds of a per-parameter AdamW in
 * between).
 */
/* The optimizer step of a kernel: that of its launching op where known. */
static int64_t opt_step_of(const struct asc_rpt_kernel *k)
{
	return k->has_op_step ? k->op_step : k->step;
}

int asc_rpt_detect_optimizer(const struct asc_rpt_input *in, const struct asc_rpt_thresholds *t,
			     struct asc_rpt_result *res)
{
	struct asc_rpt_optimizer *o = &res->optimizer;
	const struct asc_rpt_kernel **pp;
	struct opt_window *win;
	uint64_t *type_counts;
	int64_t *steps;
	size_t i, j, np = 0, ns = 0, nw = 0, nt = 0;
	uint64_t run = 0;

	memset(o, 0, sizeof(*o));
	pp = calloc(in->nr_kernels + 1, sizeof(*pp));
	steps = calloc(in->nr_kernels + 1, sizeof(*steps));
	win = calloc(in->nr_kernels + 1, sizeof(*win));
	type_counts = calloc(in->nr_kernels + 1, sizeof(*type_counts));
	if (!pp || !steps || !win || !type_counts) {
		free(pp);
		free(steps);
		free(win);
		free(type_counts);
		return -ENOMEM;
	}
	for (i = 0; i < in->nr_kernels; i++) {
		const struct asc_rpt_kernel *k = &in->kernels[i];

		if (k->kind != ASC_RPT_K_COMPUTE || !is_adam_update(k))
			continue;
		for (j = 0; j < nw; j++)
			if (win[j].step == opt_step_of(k) && win[j].stream == k->stream)
				break;
		if (j == nw) {
			win[nw++] = (struct opt_window){ opt_step_of(k), k->stream, k->start_ns,
							 k->end_ns };
			continue;
		}
		if (k->start_ns < win[j].first)
			win[j].first = k->start_ns;
		if (k->end_ns > win[j].last)
			win[j].last = k->end_ns;
	}
	for (i = 0; i < in->nr_kernels; i++) {
		const struct asc_rpt_kernel *k = &in->kernels[i];
		int in_window = 0;

		if (k->kind != ASC_RPT_K_COMPUTE)
			continue;
		for (j = 0; j < nw && !in_window; j++)
			in_window = win[j].step == opt_step_of(k) && win[j].stream == k->stream &&
				    k->start_ns >= win[j].first && k->start_ns < win[j].last;
		if (!in_window && !asc_rpt_is_optimizer(k) && !is_adam_update(k))
			continue;
		o->kernels++;
		o->optimizer_ns += k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0;
		steps[ns++] = opt_step_of(k); /* the optimizer calls */
		if (asc_rpt_is_fused_optimizer(k))
			o->fused_kernels++;
		else
			pp[np++] = k;
	}
	o->per_param_kernels = np;
	qsort(steps, ns, sizeof(*steps), cmp_i64);
	for (i = 0; i < ns; i++)
		if (!i || steps[i] != steps[i - 1])
			o->steps++;
	qsort(pp, np, sizeof(*pp), cmp_kernel_type);
	for (i = 0; i < np; i++) {
		if (!i || strcmp(kernel_type(pp[i]), kernel_type(pp[i - 1]))) {
			o->distinct_types++;
			run = 0;
			nt++;
		}
		type_counts[nt - 1] = ++run;
	}
	if (o->steps) {
		o->per_param_per_step = (double)np / (double)o->steps;
		if (nt) {
			/* the median type count: one update kernel per parameter per step */
			qsort(type_counts, nt, sizeof(*type_counts), cmp_u64);
			o->repeats_per_step = (type_counts[rank_index(nt, 50)] + o->steps / 2) /
					      o->steps;
		}
	}
	o->flagged = o->steps > 0 && o->per_param_per_step >= t->optimizer_kernels;
	free(pp);
	free(steps);
	free(win);
	free(type_counts);
	return 0;
}

/* ---- TransData / Cast ---- */

static int conv_kind(const struct asc_rpt_kernel *k)
{
	if (asc_rpt_is_transdata(k))
		return ASC_RPT_CONV_TRANSDATA;
	if (asc_rpt_is_cast(k))
		return ASC_RPT_CONV_CAST;
	return -1;
}

static int cmp_conv_key(const void *a, const void *b)
{
	const struct asc_rpt_kernel *x = *(const struct asc_rpt_kernel *const *)a;
	const struct asc_rpt_kernel *y = *(const struct asc_rpt_kernel *const *)b;
	int r = conv_kind(x) - conv_kind(y);

	if (!r)
		r = strcmp_null(x->op, y->op);
	if (!r)
		r = strcmp_null(x->stack, y->stack);
	if (!r)
		r = strcmp_null(x->api, y->api);
	return r;
}

static int cmp_conv_site(const void *a, const void *b)
{
	const struct asc_rpt_conv_site *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind - y->kind;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return strcmp_null(x->op, y->op);
}

int asc_rpt_detect_conversions(const struct asc_rpt_input *in, const struct asc_rpt_thresholds *t,
			       struct asc_rpt_result *res)
{
	const struct asc_rpt_kernel **ks;
	struct asc_rpt_conv_site *sites;
	struct asc_rpt_step pseudo;
	size_t i, n = 0, m = 0, nsteps;

	res->nr_conv = 0;
	effective_steps(in, &pseudo, &nsteps);
	ks = calloc(in->nr_kernels + 1, sizeof(*ks));
	sites = calloc(in->nr_kernels + 1, sizeof(*sites));
	if (!ks || !sites) {
		free(ks);
		free(sites);
		return -ENOMEM;
	}
	for (i = 0; i < in->nr_kernels; i++)
		if (in->kernels[i].kind == ASC_RPT_K_COMPUTE && conv_kind(&in->kernels[i]) >= 0)
			ks[n++] = &in->kernels[i];
	qsort(ks, n, sizeof(*ks), cmp_conv_key);
	for (i = 0; i < n; i++) {
		const struct asc_rpt_kernel *k = ks[i];

		if (!m || cmp_conv_key(&ks[i - 1], &ks[i])) {
			sites[m].kind = conv_kind(k);
			sites[m].op = k->op;
			sites[m].api = k->api;
			sites[m].stack = k->stack;
			m++;
		}
		sites[m - 1].count++;
		sites[m - 1].total_ns += k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0;
	}
	for (i = 0; i < m; i++) {
		double limit = sites[i].kind == ASC_RPT_CONV_TRANSDATA ? t->transdata_per_step :
									 t->cast_per_step;

		sites[i].per_step = nsteps ? (double)sites[i].count / (double)nsteps : 0;
		sites[i].flagged = sites[i].per_step >= limit;
	}
	qsort(sites, m, sizeof(*sites), cmp_conv_site);
	free(ks);
	res->conv = sites;
	res->nr_conv = m;
	return 0;
}

/* ---- synchronisations ---- */

static int cmp_api_key(const void *a, const void *b)
{
	const struct asc_rpt_api *x = *(const struct asc_rpt_api *const *)a;
	const struct asc_rpt_api *y = *(const struct asc_rpt_api *const *)b;
	int r = strcmp_null(x->name, y->name);

	if (!r)
		r = strcmp_null(x->op, y->op);
	if (!r)
		r = strcmp_null(x->stack, y->stack);
	return r;
}

static int cmp_sync_site(const void *a, const void *b)
{
	const struct asc_rpt_sync_site *x = a, *y = b;

	if (x->drained_ns != y->drained_ns)
		return x->drained_ns > y->drained_ns ? -1 : 1;
	if (x->blocked_ns != y->blocked_ns)
		return x->blocked_ns > y->blocked_ns ? -1 : 1;
	if (strcmp_null(x->name, y->name))
		return strcmp_null(x->name, y->name);
	if (strcmp_null(x->op, y->op))
		return strcmp_null(x->op, y->op);
	return strcmp_null(x->stack, y->stack);
}

int asc_rpt_detect_syncs(const struct asc_rpt_input *in, const struct asc_rpt_thresholds *t,
			 struct asc_rpt_result *res)
{
	const struct asc_rpt_api **as;
	struct asc_rpt_sync_site *sites;
	uint64_t *starts, step_ns = total_step_ns(in);
	size_t i, n = 0, m = 0;

	res->nr_syncs = 0;
	as = calloc(in->nr_apis + 1, sizeof(*as));
	sites = calloc(in->nr_apis + 1, sizeof(*sites));
	starts = calloc(in->nr_kernels + 1, sizeof(*starts));
	if (!as || !sites || !starts) {
		free(as);
		free(sites);
		free(starts);
		return -ENOMEM;
	}
	for (i = 0; i < in->nr_kernels; i++)
		starts[i] = in->kernels[i].start_ns;
	qsort(starts, in->nr_kernels, sizeof(*starts), cmp_u64);
	for (i = 0; i < in->nr_apis; i++)
		if (asc_rpt_is_sync_api(in->apis[i].name) &&
		    !(in->apis[i].flags & ASC_RPT_API_INNER))
			as[n++] = &in->apis[i];
	qsort(as, n, sizeof(*as), cmp_api_key);
	for (i = 0; i < n; i++) {
		const struct asc_rpt_api *a = as[i];
		size_t lo = 0, hi = in->nr_kernels;

		if (!m || cmp_api_key(&as[i - 1], &as[i])) {
			sites[m].name = a->name;
			sites[m].op = a->op;
			sites[m].stack = a->stack;
			m++;
		}
		sites[m - 1].count++;
		sites[m - 1].blocked_ns += a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0;
		/* the queue is empty when the call returns: idle until the next kernel */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (starts[mid] < a->end_ns)
				lo = mid + 1;
			else
				hi = mid;
		}
		/*
		 * Only a stall inside a step counts: the synchronisation that ends
		 * every step is followed by the next step's host-only time, which
		 * the step split already shows.
		 */
		if (lo < in->nr_kernels && starts[lo] < step_end(in, a->end_ns))
			sites[m - 1].drained_ns += starts[lo] - a->end_ns;
	}
	for (i = 0; i < m; i++) {
		sites[i].share = step_ns ? (double)sites[i].drained_ns / (double)step_ns : 0;
		sites[i].flagged = step_ns > 0 && sites[i].share >= t->sync_share;
	}
	qsort(sites, m, sizeof(*sites), cmp_sync_site);
	free(as);
	free(starts);
	res->syncs = sites;
	res->nr_syncs = m;
	return 0;
}

/* ---- memory peak ---- */

struct mem_ref {
	const struct asc_rpt_mem *ev;
	size_t order; /* position in time order */
};

static int cmp_mem_time(const void *a, const void *b)
{
	const struct mem_ref *x = a, *y = b;

	if (x->ev->ts_ns != y->ev->ts_ns)
		return x->ev->ts_ns < y->ev->ts_ns ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_mem_ptr(const void *a, const void *b)
{
	const struct mem_ref *x = a, *y = b;

	if (x->ev->ptr != y->ev->ptr)
		return x->ev->ptr < y->ev->ptr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_holder_op(const void *a, const void *b)
{
	const struct asc_rpt_mem *x = *(const struct asc_rpt_mem *const *)a;
	const struct asc_rpt_mem *y = *(const struct asc_rpt_mem *const *)b;

	return strcmp_null(x->op, y->op);
}

static int cmp_holder_bytes(const void *a, const void *b)
{
	const struct asc_rpt_holder *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return strcmp_null(x->op, y->op);
}

int asc_rpt_detect_mem_peak(const struct asc_rpt_input *in, const struct asc_rpt_thresholds *t,
			    struct asc_rpt_result *res)
{
	struct asc_rpt_mem_peak *p = &res->mem_peak;
	const struct asc_rpt_mem **live;
	struct asc_rpt_holder *h;
	struct mem_ref *refs;
	size_t i, peak = 0, nl = 0, nh = 0, top = (size_t)t->top;
	uint64_t held = 0;

	memset(p, 0, sizeof(*p));
	if (!in->nr_mem)
		return 0;
	refs = calloc(in->nr_mem, sizeof(*refs));
	live = calloc(in->nr_mem, sizeof(*live));
	h = calloc(in->nr_mem, sizeof(*h));
	if (!refs || !live || !h) {
		free(refs);
		free(live);
		free(h);
		return -ENOMEM;
	}
	for (i = 0; i < in->nr_mem; i++) {
		refs[i].ev = &in->mem[i];
		refs[i].order = i;
	}
	qsort(refs, in->nr_mem, sizeof(*refs), cmp_mem_time);
	for (i = 0; i < in->nr_mem; i++) {
		refs[i].order = i;
		if (refs[i].ev->total_allocated > refs[peak].ev->total_allocated)
			peak = i;
		if (refs[i].ev->total_reserved > p->peak_reserved)
			p->peak_reserved = refs[i].ev->total_reserved;
	}
	p->measured = 1;
	p->peak_allocated = refs[peak].ev->total_allocated;
	p->peak_ns = refs[peak].ev->ts_ns;
	p->peak_step = step_of(in, p->peak_ns);

	/* replay up to the peak, pointer by pointer: the last malloc not freed is live */
	qsort(refs, peak + 1, sizeof(*refs), cmp_mem_ptr);
	for (i = 0; i <= peak; i++) {
		const struct asc_rpt_mem *ev = refs[i].ev;
		int last_of_ptr = i == peak || refs[i + 1].ev->ptr != ev->ptr;

		if (last_of_ptr && ev->size > 0) {
			live[nl++] = ev;
			held += (uint64_t)ev->size;
		}
	}
	qsort(live, nl, sizeof(*live), cmp_holder_op);
	for (i = 0; i < nl; i++) {
		if (!nh || strcmp_null(h[nh - 1].op, live[i]->op)) {
			h[nh].op = live[i]->op;
			nh++;
		}
		h[nh - 1].bytes += (uint64_t)live[i]->size;
		h[nh - 1].blocks++;
	}
	qsort(h, nh, sizeof(*h), cmp_holder_bytes);
	p->unattributed_bytes = p->peak_allocated > held ? p->peak_allocated - held : 0;
	p->holders = h;
	p->nr_holders = nh < top ? nh : top;
	free(refs);
	free(live);
	return 0;
}

/* ---- memory growth ---- */

int asc_rpt_detect_mem_growth(const struct asc_rpt_input *in, const struct asc_rpt_thresholds *t,
			      struct asc_rpt_result *res)
{
	struct asc_rpt_mem_growth *g = &res->mem_growth;
	const struct asc_rpt_step *st;
	struct asc_rpt_step pseudo;
	struct mem_ref *refs;
	int64_t *deltas;
	size_t i, j, n, m = 0;

	memset(g, 0, sizeof(*g));
	if (!in->nr_mem)
		return 0;
	st = effective_steps(in, &pseudo, &n);
	refs = calloc(in->nr_mem, sizeof(*refs));
	g->steps = calloc(n + 1, sizeof(*g->steps));
	deltas = calloc(n + 1, sizeof(*deltas));
	if (!refs || !g->steps || !deltas) {
		free(refs);
		free(deltas);
		free(g->steps);
		g->steps = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < in->nr_mem; i++) {
		refs[i].ev = &in->mem[i];
		refs[i].order = i;
	}
	qsort(refs, in->nr_mem, sizeof(*refs), cmp_mem_time);
	/* steps in input order; a step without memory events has nothing to say */
	for (j = 0; j < n; j++) {
		struct asc_rpt_mem_step *ms = &g->steps[m];
		int seen = 0;

		size_t lo = 0, hi = in->nr_mem;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (refs[mid].ev->ts_ns < st[j].start_ns)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (i = lo; i < in->nr_mem && refs[i].ev->ts_ns < st[j].end_ns; i++) {
			const struct asc_rpt_mem *ev = refs[i].ev;

			seen = 1;
			ms->end_allocated = ev->total_allocated;
			if (ev->total_allocated > ms->peak_allocated)
				ms->peak_allocated = ev->total_allocated;
		}
		if (seen) {
			ms->step = st[j].id;
			m++;
		}
	}
	g->nr_steps = m;
	for (i = 1; i < m; i++) {
		deltas[i - 1] = (int64_t)(g->steps[i].end_allocated -
					  g->steps[i - 1].end_allocated);
		if (deltas[i - 1] > 0)
			g->steps_grown++;
	}
	if (m >= 2) {
		qsort(deltas, m - 1, sizeof(*deltas), cmp_i64);
		g->growth_median_mb = (double)deltas[rank_index(m - 1, 50)] / BYTES_PER_MB;
		g->growth_total_mb = ((double)g->steps[m - 1].end_allocated -
				      (double)g->steps[0].end_allocated) /
				     BYTES_PER_MB;
	}
	g->flagged = m >= 3 && g->growth_median_mb >= t->mem_growth_mb && g->growth_median_mb > 0;
	free(refs);
	free(deltas);
	return 0;
}

/* ---- failed allocations ---- */

int asc_rpt_detect_alloc_failures(const struct asc_rpt_input *in,
				  const struct asc_rpt_thresholds *t, struct asc_rpt_result *res)
{
	struct asc_rpt_alloc_fail *a = &res->alloc;
	size_t i;

	memset(a, 0, sizeof(*a));
	for (i = 0; i < in->nr_apis; i++) {
		const struct asc_rpt_api *c = &in->apis[i];

		if (!asc_rpt_is_alloc_api(c->name) || (c->flags & ASC_RPT_API_INNER))
			continue;
		a->calls++;
		/* aclError / rtError_t are 32-bit: the upper half of the register is not theirs */
		if ((int32_t)c->ret == 0)
			continue;
		if (!a->failures++ || c->start_ns < a->first_ns) {
			a->first_ret = (int32_t)c->ret;
			a->first_ns = c->start_ns;
			a->first_step = c->step;
			a->name = c->name;
			a->op = c->op;
			a->stack = c->stack;
		}
	}
	a->flagged = a->failures > 0 && (double)a->failures >= t->alloc_failures;
	return 0;
}

/* ---- multi-stream overlap ---- */

struct edge {
	uint64_t ts;
	int delta;
};

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->delta - y->delta; /* ends before starts at the same instant */
}

int asc_rpt_detect_overlap(const struct asc_rpt_input *in, const struct asc_rpt_thresholds *t,
			   struct asc_rpt_result *res)
{
	struct asc_rpt_overlap *o = &res->overlap;
	const struct asc_rpt_kernel **ks;
	struct interval *iv, *all;
	struct edge *edges;
	size_t i, j, nall = 0, ne = 0;
	uint64_t least = 0;
	int depth = 0;

	memset(o, 0, sizeof(*o));
	ks = calloc(in->nr_kernels + 1, sizeof(*ks));
	iv = calloc(in->nr_kernels + 1, sizeof(*iv));
	all = calloc(in->nr_kernels + 1, sizeof(*all));
	edges = calloc(2 * in->nr_kernels + 1, sizeof(*edges));
	o->streams = calloc(in->nr_kernels + 1, sizeof(*o->streams));
	if (!ks || !iv || !all || !edges || !o->streams) {
		free(o->streams);
		o->streams = NULL;
		free(ks);
		free(iv);
		free(all);
		free(edges);
		return -ENOMEM;
	}
	for (i = 0; i < in->nr_kernels; i++)
		ks[i] = &in->kernels[i];
	qsort(ks, in->nr_kernels, sizeof(*ks), cmp_kernel_stream_start);
	for (i = 0; i < in->nr_kernels; i = j) {
		struct asc_rpt_stream_busy *sb = &o->streams[o->nr_streams++];
		size_t m = 0, k;

		sb->stream = ks[i]->stream;
		for (j = i; j < in->nr_kernels && ks[j]->stream == sb->stream; j++) {
			if (ks[j]->end_ns < ks[j]->start_ns)
				continue;
			iv[m].start = ks[j]->start_ns;
			iv[m].end = ks[j]->end_ns;
			m++;
		}
		sb->kernels = j - i;
		/* merged per stream, so a stream never overlaps itself */
		m = merge_intervals(iv, m);
		sb->busy_ns = interval_total(iv, m);
		for (k = 0; k < m; k++) {
			all[nall++] = iv[k];
			edges[ne++] = (struct edge){ iv[k].start, 1 };
			edges[ne++] = (struct edge){ iv[k].end, -1 };
		}
	}
	nall = merge_intervals(all, nall);
	o->busy_ns = interval_total(all, nall);
	qsort(edges, ne, sizeof(*edges), cmp_edge);
	for (i = 0; i < ne; i++) {
		if (depth >= 2 && i)
			o->overlap_ns += edges[i].ts - edges[i - 1].ts;
		depth += edges[i].delta;
	}
	/* share of the least busy stream's time that ran alongside another stream */
	for (i = 0; i < o->nr_streams; i++)
		if (o->streams[i].busy_ns && (!least || o->streams[i].busy_ns < least))
			least = o->streams[i].busy_ns;
	if (o->nr_streams >= 2 && least)
		o->overlap_share = (double)o->overlap_ns / (double)least;
	o->serialised = o->nr_streams >= 2 && o->overlap_share < t->overlap_share;
	free(ks);
	free(iv);
	free(all);
	free(edges);
	return 0;
}

/* ---- all ---- */

int asc_rpt_analyse(const struct asc_rpt_input *in, const struct asc_rpt_thresholds *t,
		    struct asc_rpt_result *res)
{
	int err;

	memset(res, 0, sizeof(*res));
	err = asc_rpt_detect_steps(in, res);
	if (!err)
		err = asc_rpt_detect_dispatch(in, t, res);
	if (!err)
		err = asc_rpt_detect_top(in, t, res);
	if (!err)
		err = asc_rpt_detect_optimizer(in, t, res);
	if (!err)
		err = asc_rpt_detect_conversions(in, t, res);
	if (!err)
		err = asc_rpt_detect_syncs(in, t, res);
	if (!err)
		err = asc_rpt_detect_mem_peak(in, t, res);
	if (!err)
		err = asc_rpt_detect_mem_growth(in, t, res);
	if (!err)
		err = asc_rpt_detect_overlap(in, t, res);
	if (!err)
		err = asc_rpt_detect_alloc_failures(in, t, res);
	if (err)
		asc_rpt_result_free(res);
	return err;
}

void asc_rpt_result_free(struct asc_rpt_result *res)
{
	free(res->steps);
	free(res->top);
	free(res->conv);
	free(res->syncs);
	free(res->mem_peak.holders);
	free(res->mem_growth.steps);
	free(res->overlap.streams);
	memset(res, 0, sizeof(*res));
}
