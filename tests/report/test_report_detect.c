// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_report_detect.c - the report detectors (user/report/report_detect.c) on
 * synthetic inputs: each rule exactly at its threshold, just below and just
 * above it, plus the classification helpers and the threshold parser.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "lib/log.h"
#include "report/report_detect.h"

#define US(x) ((uint64_t)(x)*1000ull)
#define MB    (1024ull * 1024ull)

static char last_log[512];

static void capture_sink(enum asc_log_level level, const char *fmt, va_list ap)
{
	(void)level;
	vsnprintf(last_log, sizeof(last_log), fmt, ap);
}

static int setup_log(void **state)
{
	(void)state;
	last_log[0] = 0;
	asc_log_set_sink(capture_sink);
	return 0;
}

static struct asc_rpt_kernel kern(uint64_t start_us, uint64_t dur_us, int64_t step, uint32_t stream,
				  const char *type)
{
	struct asc_rpt_kernel k = { .start_ns = US(start_us),
				    .end_ns = US(start_us + dur_us),
				    .step = step,
				    .stream = stream,
				    .name = type,
				    .type = type };
	return k;
}

/* ---- thresholds ---- */

static void test_threshold_defaults_and_set(void **state)
{
	struct asc_rpt_thresholds t;
	const char *name;
	double v;
	size_t i, n = 0;

	(void)state;
	asc_rpt_thresholds_default(&t);
	assert_true(t.idle_share > 0 && t.idle_share < 1);
	assert_true(t.top >= 1);
	for (i = 0; (name = asc_rpt_threshold_get(&t, i, &v)); i++)
		n++;
	assert_int_equal(n, 12);

	assert_int_equal(asc_rpt_threshold_set(&t, "idle_share=0.75"), 0);
	assert_true(t.idle_share == 0.75);
	assert_int_equal(asc_rpt_threshold_set(&t, "gap_us=12.5"), 0);
	assert_true(t.gap_us == 12.5);
	assert_int_equal(asc_rpt_threshold_set(&t, "top=3"), 0);
	assert_true(t.top == 3);
	/* the table reads back what was set */
	for (i = 0; (name = asc_rpt_threshold_get(&t, i, &v)); i++)
		if (!strcmp(name, "gap_us"))
			assert_true(v == 12.5);
}

static void test_threshold_bad_input(void **state)
{
	struct asc_rpt_thresholds t, before;

	(void)state;
	asc_rpt_thresholds_default(&t);
	before = t;
	assert_int_equal(asc_rpt_threshold_set(&t, "no_such=1"), -EINVAL);
	assert_non_null(strstr(last_log, "unknown name 'no_such'"));
	assert_non_null(strstr(last_log, "idle_share"));
	assert_int_equal(asc_rpt_threshold_set(&t, "idle_share"), -EINVAL);
	assert_int_equal(asc_rpt_threshold_set(&t, "=3"), -EINVAL);
	assert_int_equal(asc_rpt_threshold_set(&t, "idle_share="), -EINVAL);
	assert_int_equal(asc_rpt_threshold_set(&t, "idle_share=abc"), -EINVAL);
	assert_int_equal(asc_rpt_threshold_set(&t, "idle_share=0.5x"), -EINVAL);
	assert_int_equal(asc_rpt_threshold_set(&t, "idle_share=1.01"), -EINVAL);
	assert_non_null(strstr(last_log, "[0, 1]"));
	assert_int_equal(asc_rpt_threshold_set(&t, "gap_us=-1"), -EINVAL);
	assert_int_equal(asc_rpt_threshold_set(&t, "gap_us=nan"), -EINVAL);
	assert_int_equal(asc_rpt_threshold_set(&t, "gap_us=inf"), -EINVAL);
	assert_int_equal(asc_rpt_threshold_set(&t, "top=2.5"), -EINVAL);
	assert_int_equal(asc_rpt_threshold_set(&t, "idle_sharex=0.1"), -EINVAL);
	/* nothing changed by the failures */
	assert_memory_equal(&t, &before, sizeof(t));
	/* the edges of a share are allowed */
	assert_int_equal(asc_rpt_threshold_set(&t, "idle_share=1"), 0);
	assert_int_equal(asc_rpt_threshold_set(&t, "idle_share=0"), 0);
}

/* ---- classification ---- */

static void test_classification(void **state)
{
	struct asc_rpt_kernel k = { 0 };

	(void)state;
	k.name = "trans_TransData_0";
	assert_true(asc_rpt_is_transdata(&k));
	assert_false(asc_rpt_is_cast(&k));
	k.name = "aclnnCast_CastAiCore_Cast";
	assert_true(asc_rpt_is_cast(&k));
	k.name = "BroadcastTo";
	assert_false(asc_rpt_is_cast(&k));
	k.name = "Castle";
	assert_false(asc_rpt_is_cast(&k));
	k.name = "x";
	k.type = "Cast";
	assert_true(asc_rpt_is_cast(&k));
	k.type = NULL;

	k.name = "Mul";
	assert_false(asc_rpt_is_optimizer(&k));
	k.op = "Optimizer.step#Adam.step";
	assert_true(asc_rpt_is_optimizer(&k));
	assert_false(asc_rpt_is_fused_optimizer(&k));
	k.op = "aten::mul_";
	k.stack = "train.py(40): main;torch/optim/adam.py(120): step";
	assert_true(asc_rpt_is_optimizer(&k));
	k.stack = NULL;
	assert_false(asc_rpt_is_optimizer(&k));
	k.name = "ApplyAdamW";
	assert_true(asc_rpt_is_fused_optimizer(&k));
	assert_true(asc_rpt_is_optimizer(&k));
	k.name = "ForeachMulScalar";
	assert_true(asc_rpt_is_fused_optimizer(&k));

	assert_true(asc_rpt_is_sync_api("aclrtSynchronizeStream"));
	assert_true(asc_rpt_is_sync_api("aclrtSynchronizeStreamWithTimeout"));
	assert_true(asc_rpt_is_sync_api("aclrtSynchronizeDevice"));
	assert_true(asc_rpt_is_sync_api("rtStreamSynchronize"));
	assert_true(asc_rpt_is_sync_api("aclrtMemcpy"));
	assert_false(asc_rpt_is_sync_api("aclrtMemcpyAsync"));
	assert_false(asc_rpt_is_sync_api("aclnnAdd"));
	assert_false(asc_rpt_is_sync_api(NULL));
}

/* ---- step split ---- */

static void test_step_split(void **state)
{
	/* step 0 = [0, 100): kernels [10,30) s1, [20,40) s2 (overlap), [60,70) s1 */
	/* step 1 = [100, 200): kernel [90,110) crosses in, nothing else */
	/* step 2 = [200, 300): no kernels */
	struct asc_rpt_kernel ks[] = {
		kern(10, 20, 0, 1, "A"),
		kern(20, 20, 0, 2, "B"),
		kern(60, 10, 0, 1, "A"),
		kern(90, 20, 0, 1, "C"),
	};
	struct asc_rpt_step st[] = { { 0, US(0), US(100) },
				     { 1, US(100), US(200) },
				     { 2, US(200), US(300) } };
	struct asc_rpt_input in = { .kernels = ks, .nr_kernels = 4, .steps = st, .nr_steps = 3 };
	struct asc_rpt_result r = { 0 };

	(void)state;
	assert_int_equal(asc_rpt_detect_steps(&in, &r), 0);
	assert_int_equal(r.nr_steps, 3);
	/* step 0: busy [10,40) + [60,70) + [90,100) = 50; window 10..100 -> idle 40; host 10 */
	assert_int_equal(r.steps[0].compute_ns, US(50));
	assert_int_equal(r.steps[0].idle_ns, US(40));
	assert_int_equal(r.steps[0].host_only_ns, US(10));
	assert_int_equal(r.steps[0].kernels, 4);
	/* step 1: [100,110) busy, the rest host-only */
	assert_int_equal(r.steps[1].compute_ns, US(10));
	assert_int_equal(r.steps[1].idle_ns, 0);
	assert_int_equal(r.steps[1].host_only_ns, US(90));
	assert_int_equal(r.steps[2].compute_ns, 0);
	assert_int_equal(r.steps[2].host_only_ns, US(100));
	assert_int_equal(r.steps[2].kernels, 0);
	/* the split always adds up to the step */
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(r.steps[i].compute_ns + r.steps[i].idle_ns +
					 r.steps[i].host_only_ns,
				 US(100));
	asc_rpt_result_free(&r);
}

static void test_no_steps_uses_whole_capture(void **state)
{
	struct asc_rpt_kernel ks[] = { kern(100, 10, ASC_RPT_NO_STEP, 1, "A"),
				       kern(130, 10, ASC_RPT_NO_STEP, 1, "A") };
	struct asc_rpt_input in = { .kernels = ks, .nr_kernels = 2 };
	struct asc_rpt_thresholds t;
	struct asc_rpt_result r;

	(void)state;
	asc_rpt_thresholds_default(&t);
	assert_int_equal(asc_rpt_analyse(&in, &t, &r), 0);
	assert_int_equal(r.nr_steps, 1);
	assert_int_equal(r.steps[0].step, ASC_RPT_NO_STEP);
	assert_int_equal(r.steps[0].compute_ns, US(20));
	assert_int_equal(r.steps[0].idle_ns, US(20));
	assert_int_equal(r.dispatch.nr_gaps, 1);
	assert_true(r.dispatch.gap_median_us == 20.0);
	asc_rpt_result_free(&r);
}

static void test_empty_input(void **state)
{
	struct asc_rpt_input in = { 0 };
	struct asc_rpt_thresholds t;
	struct asc_rpt_result r;

	(void)state;
	asc_rpt_thresholds_default(&t);
	assert_int_equal(asc_rpt_analyse(&in, &t, &r), 0);
	assert_int_equal(r.nr_steps, 0);
	assert_false(r.dispatch.dispatch_bound);
	assert_false(r.optimizer.flagged);
	assert_int_equal(r.nr_conv, 0);
	assert_int_equal(r.nr_syncs, 0);
	assert_false(r.mem_peak.measured);
	assert_false(r.mem_growth.flagged);
	assert_false(r.overlap.serialised);
	asc_rpt_result_free(&r);
}

/* ---- dispatch-bound ---- */

/* A kernel submitted lead_us before its start (lead 0: at its start). */
static struct asc_rpt_kernel kern_sub(uint64_t start_us, uint64_t dur_us, int64_t step,
				      uint64_t lead_us)
{
	struct asc_rpt_kernel k = kern(start_us, dur_us, step, 3, "MatMul");

	k.submit_ns = US(start_us - lead_us);
	return k;
}

/*
 * One step of 5 kernels of 32 us separated by 40 us gaps, each submitted
 * lead_us before it starts (lead_us > 40: while the previous one ran).
 * With lead 0: compute 160, idle 160, all of it starved in 4 stretches of
 * 40 (the longest 0.25 of the starved time): starved share exactly 0.5.
 */
static int dispatch_verdict(uint64_t lead_us, int known, double idle_share, double gap_us,
			    double stall_share, struct asc_rpt_dispatch *out)
{
	struct asc_rpt_kernel ks[5];
	struct asc_rpt_step st = { 7, 0, 0 };
	struct asc_rpt_input in = { .kernels = ks, .nr_kernels = 5, .steps = &st, .nr_steps = 1 };
	struct asc_rpt_thresholds t;
	struct asc_rpt_result r;
	int i, verdict;

	for (i = 0; i < 5; i++) {
		ks[i] = kern_sub(1000 + (uint64_t)i * 72, 32, 7, lead_us);
		if (!known)
			ks[i].submit_ns = 0;
	}
	st.start_ns = US(1000);
	st.end_ns = ks[4].end_ns;
	asc_rpt_thresholds_default(&t);
	t.idle_share = idle_share;
	t.gap_us = gap_us;
	t.stall_share = stall_share;
	assert_int_equal(asc_rpt_analyse(&in, &t, &r), 0);
	verdict = r.dispatch.dispatch_bound;
	/* one step: the per-step verdict is the overall one */
	assert_int_equal(r.nr_steps, 1);
	assert_int_equal(r.steps[0].dispatch_bound, verdict);
	assert_true(r.steps[0].idle_share == r.dispatch.idle_share);
	assert_true(r.steps[0].starved_share == r.dispatch.starved_share);
	assert_true(r.steps[0].gap_median_us == r.dispatch.gap_median_us);
	/* without a queue the starvation is the framework side's */
	assert_int_equal(r.dispatch.by_gaps, verdict);
	assert_false(r.dispatch.by_queue);
	if (out)
		*out = r.dispatch;
	asc_rpt_result_free(&r);
	return verdict;
}

static void test_dispatch_at_thresholds(void **state)
{
	struct asc_rpt_dispatch d;

	(void)state;
	assert_true(dispatch_verdict(0, 1, 0.5, 40.0, 0.2500001, &d));
	assert_true(d.idle_share == 0.5);
	assert_true(d.starved_share == 0.5);
	assert_int_equal(d.starved_ns, US(160));
	assert_int_equal(d.starved_gaps, 4);
	assert_int_equal(d.starved_max_ns, US(40));
	assert_true(d.submissions_known);
	assert_int_equal(d.transitions, 4);
	assert_int_equal(d.starved_transitions, 4);
	assert_true(d.gap_median_us == 40.0);
	assert_true(d.gap_p99_us == 40.0);
	assert_int_equal(d.nr_gaps, 4);
	assert_int_equal(d.compute_ns, US(160));
	assert_int_equal(d.idle_ns, US(160));
	/* just above the share: not dispatch-bound; just below: still */
	assert_false(dispatch_verdict(0, 1, 0.5000001, 40.0, 0.2500001, NULL));
	assert_true(dispatch_verdict(0, 1, 0.4999999, 40.0, 0.2500001, NULL));
	/* gap_us: a 40 us wait counts at 40, not at 40.001 (then nothing is starved) */
	assert_false(dispatch_verdict(0, 1, 0.5, 40.001, 0.2500001, &d));
	assert_int_equal(d.starved_ns, 0);
	assert_int_equal(d.starved_transitions, 0);
	/* stall_share: the longest stretch is exactly 0.25 of the starved time */
	assert_false(dispatch_verdict(0, 1, 0.5, 40.0, 0.25, NULL));
	/* a kernel submitted 10 us before it starts: 30 us of each gap is starved */
	assert_true(dispatch_verdict(10, 1, 120.0 / 320.0, 30.0, 0.2500001, &d));
	assert_int_equal(d.starved_ns, US(120));
	assert_false(dispatch_verdict(10, 1, 120.0 / 320.0 + 1e-7, 30.0, 0.2500001, NULL));
	/*
	 * Submitted while the previous kernel ran: the device idles with work
	 * queued (an event wait, a dependency), which is not the host's doing.
	 */
	assert_false(dispatch_verdict(50, 1, 0.01, 0.0, 1.0, &d));
	assert_true(d.idle_share == 0.5);
	assert_int_equal(d.starved_ns, 0);
	assert_int_equal(d.starved_transitions, 0);
	assert_int_equal(d.transitions, 4);
	/* submissions unknown: every idle stretch counts as starved, no transitions known */
	assert_true(dispatch_verdict(0, 0, 0.5, 40.0, 0.2500001, &d));
	assert_false(d.submissions_known);
	assert_int_equal(d.starved_ns, US(160));
	assert_int_equal(d.transitions, 0);
}

static void test_dispatch_back_to_back_is_not_dispatch(void **state)
{
	struct asc_rpt_kernel ks[4];
	struct asc_rpt_step st = { 0, US(1000), US(1040) };
	struct asc_rpt_input in = { .kernels = ks, .nr_kernels = 4, .steps = &st, .nr_steps = 1 };
	struct asc_rpt_thresholds t;
	struct asc_rpt_result r;
	int i;

	(void)state;
	/* submitted just in time, one after the other ends: no idle, nothing starved */
	for (i = 0; i < 4; i++)
		ks[i] = kern_sub(1000 + (uint64_t)i * 10, 10, 0, 0);
	asc_rpt_thresholds_default(&t);
	t.idle_share = 0;
	t.gap_us = 0;
	assert_int_equal(asc_rpt_analyse(&in, &t, &r), 0);
	assert_true(r.dispatch.idle_share == 0);
	assert_int_equal(r.dispatch.starved_ns, 0);
	assert_false(r.dispatch.dispatch_bound);
	asc_rpt_result_free(&r);
}

static void test_dispatch_one_long_gap_is_not_dispatch(void **state)
{
	/*
	 * 20 kernels of 10 us back to back, then one 1000 us hole with nothing
	 * submitted: starved, but in one stall (a host pause, a data load), not
	 * the per-op cost dispatch is about.
	 */
	struct asc_rpt_kernel ks[21];
	struct asc_rpt_step st = { 0, US(0), 0 };
	struct asc_rpt_input in = { .kernels = ks, .nr_kernels = 21, .steps = &st, .nr_steps = 1 };
	struct asc_rpt_thresholds t;
	struct asc_rpt_result r;
	int i;

	(void)state;
	for (i = 0; i < 20; i++)
		ks[i] = kern_sub((uint64_t)i * 10, 10, 0, 0);
	ks[20] = kern_sub(1200, 10, 0, 0);
	st.end_ns = US(1210);
	asc_rpt_thresholds_default(&t);
	assert_int_equal(asc_rpt_analyse(&in, &t, &r), 0);
	assert_true(r.dispatch.idle_share > 0.8);
	assert_true(r.dispatch.starved_share > 0.8);
	assert_int_equal(r.dispatch.starved_gaps, 1);
	assert_int_equal(r.dispatch.starved_max_ns, US(1000));
	assert_true(r.dispatch.gap_median_us == 0);
	assert_true(r.dispatch.gap_p99_us == 1000.0);
	assert_false(r.dispatch.dispatch_bound);
	assert_false(r.steps[0].dispatch_bound);
	asc_rpt_result_free(&r);
	/* only a stall_share above 1 would call it dispatch */
	t.stall_share = 1;
	assert_int_equal(asc_rpt_analyse(&in, &t, &r), 0);
	assert_false(r.dispatch.dispatch_bound);
	asc_rpt_result_free(&r);
}

/*
 * Launch-side bottleneck: 4 batches of 4 kernels of 10 us, each batch sent
 * at once (one halSqTaskSend) when it starts, with 300 us holes between
 * batches; the 16 task-queue slots were all enqueued before the first batch
 * and each is dequeued 1 us before its batch is sent.  During the holes the
 * queue holds 12, 8, then 4 slots (each drops 1 us before the hole ends):
 * the device starves with work waiting in the queue.
 */
static void test_dispatch_by_queue_depth(void **state)
{
	struct asc_rpt_kernel ks[16];
	struct asc_rpt_queue q[16];
	struct asc_rpt_step st = { 0, US(800), 0 };
	struct asc_rpt_input in = { .kernels = ks,
				    .nr_kernels = 16,
				    .queue = q,
				    .nr_queue = 16,
				    .steps = &st,
				    .nr_steps = 1 };
	struct asc_rpt_thresholds t;
	struct asc_rpt_result r;
	uint64_t batch = 1000;
	int i;

	(void)state;
	for (i = 0; i < 16; i++) {
		if (i && i % 4 == 0)
			batch += 40 + 300;
		ks[i] = kern_sub(batch + (uint64_t)(i % 4) * 10, 10, 0, (uint64_t)(i % 4) * 10);
		q[i] = (struct asc_rpt_queue){ US(900 + (uint64_t)i), US(batch - 1),
					       (uint64_t)i + 1 };
	}
	st.end_ns = ks[15].end_ns;
	asc_rpt_thresholds_default(&t);
	assert_int_equal(asc_rpt_analyse(&in, &t, &r), 0);
	assert_true(r.dispatch.gap_median_us == 0);
	assert_int_equal(r.dispatch.starved_ns, US(900));
	assert_int_equal(r.dispatch.starved_gaps, 3);
	/* one starved transition per batch: batching hides it from the per-kernel count */
	assert_int_equal(r.dispatch.starved_transitions, 3);
	assert_int_equal(r.dispatch.transitions, 15);
	assert_int_equal(r.dispatch.starved_queued_ns, US(899));
	assert_true(r.dispatch.dispatch_bound);
	assert_true(r.dispatch.by_queue);
	assert_false(r.dispatch.by_gaps);
	assert_true(r.steps[0].dispatch_bound);
	assert_int_equal(r.steps[0].queue_slots, 16);
	asc_rpt_result_free(&r);

	/* 12 slots wait only through the first hole, less its last us */
	t.queue_depth = 12;
	assert_int_equal(asc_rpt_analyse(&in, &t, &r), 0);
	assert_int_equal(r.dispatch.starved_queued_ns, US(299));
	assert_true(r.dispatch.dispatch_bound);
	assert_false(r.dispatch.by_queue);
	assert_true(r.dispatch.by_gaps);
	asc_rpt_result_free(&r);
	t.queue_depth = 12.001;
	assert_int_equal(asc_rpt_analyse(&in, &t, &r), 0);
	assert_int_equal(r.dispatch.starved_queued_ns, 0);
	asc_rpt_result_free(&r);
	/* at 8 slots: 300 + 299 us of the 900, the majority */
	t.queue_depth = 8;
	assert_int_equal(asc_rpt_analyse(&in, &t, &r), 0);
	assert_int_equal(r.dispatch.starved_queued_ns, US(599));
	assert_true(r.dispatch.by_queue);
	asc_rpt_result_free(&r);

	/* a device starved less than the threshold share is not dispatch-bound */
	t.queue_depth = 1;
	t.idle_share = 0.99;
	assert_int_equal(asc_rpt_analyse(&in, &t, &r), 0);
	assert_false(r.dispatch.dispatch_bound);
	assert_false(r.dispatch.by_queue);
	asc_rpt_result_free(&r);
}

static void test_gap_percentiles_and_step_boundaries(void **state)
{
	/* 101 kernels of 1 us on stream 5, gap i us before kernel i (1..100), all in step 0,
	 * plus a kernel in step 1 far away (its gap must not count) and one on stream 6 */
	struct asc_rpt_kernel ks[103];
	struct asc_rpt_step st[] = { { 0, 0, US(100000) }, { 1, US(100000), US(200000) } };
	struct asc_rpt_input in = { .kernels = ks, .nr_kernels = 103, .steps = st, .nr_steps = 2 };
	struct asc_rpt_thresholds t;
	struct asc_rpt_result r;
	uint64_t at = 0;
	int i;

	(void)state;
	for (i = 0; i <= 100; i++) {
		at += (uint64_t)i;
		ks[i] = kern(at, 1, 0, 5, "Add");
		at += 1;
	}
	ks[101] = kern(150000, 1, 1, 5, "Add");
	ks[102] = kern(3, 1, 0, 6, "Mul");
	asc_rpt_thresholds_default(&t);
	assert_int_equal(asc_rpt_analyse(&in, &t, &r), 0);
	assert_int_equal(r.dispatch.nr_gaps, 100);
	assert_true(r.dispatch.gap_median_us == 50.0);
	assert_true(r.dispatch.gap_p99_us == 99.0);
	assert_int_equal(r.steps[0].nr_gaps, 100);
	assert_true(r.steps[0].gap_median_us == 50.0);
	assert_int_equal(r.steps[1].nr_gaps, 0);
	assert_false(r.steps[1].dispatch_bound);
	asc_rpt_result_free(&r);
}

static void test_queue_depth(void **state)
{
	/* enqueues at 1000,1010,1020,1030 us; dequeues at 1100..1103: depths seen 0,1,2,3 */
	struct asc_rpt_queue q[] = {
		{ US(1000), US(1100), 1 }, { US(1010), US(1101), 2 }, { US(1020), US(1102), 3 },
		{ US(1030), US(1103), 4 }, { US(1040), 0, 5 }, /* dequeue not seen: ignored */
		{ 0, US(1050), 6 },			       /* enqueue not seen: ignored */
	};
	struct asc_rpt_input in = { .queue = q, .nr_queue = 6 };
	struct asc_rpt_thresholds t;
	struct asc_rpt_result r = { 0 };

	(void)state;
	asc_rpt_thresholds_default(&t);
	assert_int_equal(asc_rpt_detect_dispatch(&in, &t, &r), 0);
	assert_true(r.dispatch.queue_measured);
	assert_int_equal(r.dispatch.queue_pairs, 4);
	assert_true(r.dispatch.queue_depth_median == 1.0);
	assert_true(r.dispatch.queue_depth_max == 3.0);
	/* waits 100, 91, 82, 73 us: nearest-rank median is 82 */
	assert_true(r.dispatch.queue_wait_median_us == 82.0);
	asc_rpt_result_free(&r);

	/* consumer keeps up: each slot dequeued before the next enqueue */
	for (size_t i = 0; i < 4; i++)
		q[i].dequeue_ns = q[i].enqueue_ns + US(1);
	memset(&r, 0, sizeof(r));
	assert_int_equal(asc_rpt_detect_dispatch(&in, &t, &r), 0);
	assert_true(r.dispatch.queue_depth_max == 0);
	asc_rpt_result_free(&r);
}

/* ---- top kernels ---- */

static void test_top_kernels(void **state)
{
	struct asc_rpt_kernel ks[] = {
		kern(0, 10, 0, 1, "A"),	 kern(20, 12, 0, 1, "A"), kern(40, 8, 0, 1, "A"),
		kern(60, 50, 0, 1, "B"), kern(200, 5, 0, 1, "C"), kern(210, 5, 0, 1, "C"),
	};
	struct asc_rpt_input in = { .kernels = ks, .nr_kernels = 6 };
	struct asc_rpt_thresholds t;
	struct asc_rpt_result r = { 0 };

	(void)state;
	ks[4].type = NULL; /* no type: grouped by name */
	asc_rpt_thresholds_default(&t);
	t.top = 2;
	assert_int_equal(asc_rpt_detect_top(&in, &t, &r), 0);
	assert_int_equal(r.device_ns, US(90));
	assert_int_equal(r.kernel_types, 3);
	assert_int_equal(r.nr_top, 2);
	assert_string_equal(r.top[0].name, "B");
	assert_int_equal(r.top[0].count, 1);
	assert_true(r.top[0].share == 50.0 / 90.0);
	assert_string_equal(r.top[1].name, "A");
	assert_int_equal(r.top[1].count, 3);
	assert_int_equal(r.top[1].total_ns, US(30));
	assert_int_equal(r.top[1].max_ns, US(12));
	assert_int_equal(r.top[1].min_ns, US(8));
	assert_true(r.top[1].avg_us == 10.0);
	/* the cut entries are still there past nr_top */
	assert_string_equal(r.top[2].name, "C");
	assert_int_equal(r.top[2].count, 2);
	asc_rpt_result_free(&r);
}

/* ---- optimizer ---- */

/* steps x params x {Mul, Add, Sqrt, Div} launched under Optimizer.step */
static size_t native_optimizer(struct asc_rpt_kernel *ks, int steps, int params, const char *op)
{
	static const char *const types[] = { "Mul", "Add", "Sqrt", "Div" };
	size_t n = 0;
	int s, p, k;

	for (s = 0; s < steps; s++)
		for (p = 0; p < params; p++)
			for (k = 0; k < 4; k++) {
				ks[n] = kern((uint64_t)s * 100000 + n * 10, 5, s, 1, types[k]);
				ks[n].op = op;
				n++;
			}
	return n;
}

static void test_optimizer_native_at_threshold(void **state)
{
	struct asc_rpt_kernel ks[3 * 10 * 4 + 3];
	struct asc_rpt_input in = { .kernels = ks };
	struct asc_rpt_thresholds t;
	struct asc_rpt_result r = { 0 };

	(void)state;
	in.nr_kernels = native_optimizer(ks, 3, 10, "Optimizer.step#Adam.step");
	/* forward kernels are not optimizer kernels */
	ks[in.nr_kernels++] = kern(1, 1, 0, 1, "MatMul");
	ks[in.nr_kernels++] = kern(2, 1, 1, 1, "Mul");
	ks[in.nr_kernels++] = kern(3, 1, 2, 1, "Add");
	asc_rpt_thresholds_default(&t);
	t.optimizer_kernels = 40;
	assert_int_equal(asc_rpt_detect_optimizer(&in, &t, &r), 0);
	assert_int_equal(r.optimizer.kernels, 120);
	assert_int_equal(r.optimizer.fused_kernels, 0);
	assert_int_equal(r.optimizer.per_param_kernels, 120);
	assert_int_equal(r.optimizer.steps, 3);
	assert_true(r.optimizer.per_param_per_step == 40.0);
	assert_int_equal(r.optimizer.distinct_types, 4);
	assert_int_equal(r.optimizer.repeats_per_step, 10);
	assert_int_equal(r.optimizer.optimizer_ns, US(600));
	assert_true(r.optimizer.flagged);
	t.optimizer_kernels = 40.001;
	assert_int_equal(asc_rpt_detect_optimizer(&in, &t, &r), 0);
	assert_false(r.optimizer.flagged);
	t.optimizer_kernels = 39.999;
	assert_int_equal(asc_rpt_detect_optimizer(&in, &t, &r), 0);
	assert_true(r.optimizer.flagged);
}

static void test_optimizer_fused_not_flagged(void **state)
{
	struct asc_rpt_kernel ks[3 * 4];
	struct asc_rpt_input in = { .kernels = ks, .nr_kernels = 12 };
	static const char *const types[] = { "ForeachMulScalar", "ForeachAddList", "ForeachSqrt",
					     "ForeachDivList" };
	struct asc_rpt_thresholds t;
	struct asc_rpt_result r = { 0 };
	int i;

	(void)state;
	for (i = 0; i < 12; i++)
		ks[i] = kern((uint64_t)i * 100, 50, i / 4, 1, types[i % 4]);
	asc_rpt_thresholds_default(&t);
	assert_int_equal(asc_rpt_detect_optimizer(&in, &t, &r), 0);
	assert_int_equal(r.optimizer.kernels, 12);
	assert_int_equal(r.optimizer.fused_kernels, 12);
	assert_int_equal(r.optimizer.per_param_kernels, 0);
	assert_int_equal(r.optimizer.steps, 3);
	assert_false(r.optimizer.flagged);
	/* no per-parameter kernels: not flagged even at a low threshold */
	t.optimizer_kernels = 0.5;
	assert_int_equal(asc_rpt_detect_optimizer(&in, &t, &r), 0);
	assert_false(r.optimizer.flagged);
}

/*
 * torch.optim.AdamW(foreach=False) as npu_model's npu_train launches it, with
 * no optimizer range or stack: per parameter mul_, mul_, addcmul_, sqrt,
 * add_, addcdiv_.  Forward add_ kernels before the first update and a step of
 * nothing but add_ (a launch storm) are not optimizer kernels.
 */
static void test_optimizer_adamw_by_its_updates(void **state)
{
	static const char *const ops[6] = { "aten::mul_", "aten::mul_", "aten::addcmul_",
					    "aten::sqrt", "aten::add_", "aten::addcdiv_" };
	static const char *const types[6] = {
		"Muls", "Muls", "Addcmul", "Sqrt", "Adds", "Addcdiv"
	};
	struct asc_rpt_kernel ks[2 * (3 + 8 * 6) + 50];
	struct asc_rpt_input in = { .kernels = ks };
	struct asc_rpt_thresholds t;
	struct asc_rpt_result r = { 0 };
	uint64_t at;
	size_t n = 0;
	int s, p, k;

	(void)state;
	for (s = 0; s < 2; s++) {
		at = (uint64_t)s * 100000;
		for (k = 0; k < 3; k++) { /* forward: in-place adds, not the optimizer */
			ks[n] = kern(at, 5, s, 1, "Adds");
			ks[n++].op = "aten::layer_norm > aten::add_";
			at += 10;
		}
		for (p = 0; p < 8; p++)
			for (k = 0; k < 6; k++) {
				ks[n] = kern(at, 5, s, 1, types[k]);
				ks[n++].op = ops[k];
				at += 10;
			}
	}
	for (k = 0; k < 50; k++) { /* step 2: a launch storm of add_ */
		ks[n] = kern(300000 + (uint64_t)k * 10, 5, 2, 1, "Adds");
		ks[n++].op = "aten::add_";
	}
	in.nr_kernels = n;
	asc_rpt_thresholds_default(&t);
	/* 8 params x 6 kernels, less the two mul_ of the first parameter before any addcmul_ */
	t.optimizer_kernels = 46;
	assert_int_equal(asc_rpt_detect_optimizer(&in, &t, &r), 0);
	assert_int_equal(r.optimizer.steps, 2);
	assert_int_equal(r.optimizer.kernels, 2 * 46);
	assert_int_equal(r.optimizer.fused_kernels, 0);
	assert_true(r.optimizer.per_param_per_step == 46.0);
	assert_int_equal(r.optimizer.distinct_types, 5);
	assert_int_equal(r.optimizer.repeats_per_step, 8);
	assert_true(r.optimizer.flagged);
	t.optimizer_kernels = 46.5;
	assert_int_equal(asc_rpt_detect_optimizer(&in, &t, &r), 0);
	assert_false(r.optimizer.flagged);

	/* the storm alone has no optimizer at all */
	in.kernels = &ks[n - 50];
	in.nr_kernels = 50;
	assert_int_equal(asc_rpt_detect_optimizer(&in, &t, &r), 0);
	assert_int_equal(r.optimizer.kernels, 0);
	assert_false(r.optimizer.flagged);
}

/* ---- copies ---- */

static void test_copies_only_count_for_overlap(void **state)
{
	/* compute on stream 1, a 100 us copy on stream 2 overlapping it by 50 us */
	struct asc_rpt_kernel ks[] = { kern(0, 100, 0, 1, "MatMul"), kern(150, 10, 0, 1, "Add"),
				       kern(50, 100, 0, 2, "MEMCPY_ASYNC") };
	struct asc_rpt_step st = { 0, 0, US(200) };
	struct asc_rpt_input in = { .kernels = ks, .nr_kernels = 3, .steps = &st, .nr_steps = 1 };
	struct asc_rpt_thresholds t;
	struct asc_rpt_result r;

	(void)state;
	ks[2].kind = ASC_RPT_K_COPY;
	asc_rpt_thresholds_default(&t);
	assert_int_equal(asc_rpt_analyse(&in, &t, &r), 0);
	assert_int_equal(r.steps[0].compute_ns, US(110));
	/* the copy alone runs [100, 150): busy, not idle, not compute */
	assert_int_equal(r.steps[0].copy_ns, US(50));
	assert_int_equal(r.steps[0].idle_ns, 0);
	assert_int_equal(r.steps[0].host_only_ns, US(40));
	assert_true(r.dispatch.idle_share == 0);
	assert_int_equal(r.steps[0].kernels, 2);
	assert_int_equal(r.device_ns, US(110));
	assert_int_equal(r.kernel_types, 2);
	assert_int_equal(r.dispatch.nr_gaps, 1);
	assert_int_equal(r.overlap.nr_streams, 2);
	assert_int_equal(r.overlap.overlap_ns, US(50));
	assert_int_equal(r.overlap.busy_ns, US(160));
	asc_rpt_result_free(&r);
}

/* ---- TransData / Cast ---- */

static void test_conversions_at_threshold(void **state)
{
	/* 2 steps; per step: 2 TransData from conv2d, 1 TransData from linear, 1 Cast */
	struct asc_rpt_kernel ks[8];
	struct asc_rpt_step st[] = { { 0, 0, US(1000) }, { 1, US(1000), US(2000) } };
	struct asc_rpt_input in = { .kernels = ks, .nr_kernels = 8, .steps = st, .nr_steps = 2 };
	struct asc_rpt_thresholds t;
	struct asc_rpt_result r = { 0 };
	int s;

	(void)state;
	for (s = 0; s < 2; s++) {
		struct asc_rpt_kernel *k = &ks[s * 4];

		k[0] = kern((uint64_t)s * 1000 + 10, 4, s, 1, "TransData");
		k[1] = kern((uint64_t)s * 1000 + 20, 6, s, 1, "TransData");
		k[0].op = k[1].op = "aten::conv2d";
		k[0].stack = k[1].stack = "train.py(30): forward;model.py(12): conv";
		k[2] = kern((uint64_t)s * 1000 + 30, 3, s, 1, "TransData");
		k[2].op = "aten::linear";
		k[3] = kern((uint64_t)s * 1000 + 40, 2, s, 1, "Cast");
		k[3].op = "aten::to";
	}
	asc_rpt_thresholds_default(&t);
	t.transdata_per_step = 2;
	t.cast_per_step = 1.5;
	assert_int_equal(asc_rpt_detect_conversions(&in, &t, &r), 0);
	assert_int_equal(r.nr_conv, 3);
	assert_int_equal(r.conv[0].kind, ASC_RPT_CONV_TRANSDATA);
	assert_string_equal(r.conv[0].op, "aten::conv2d");
	assert_string_equal(r.conv[0].stack, "train.py(30): forward;model.py(12): conv");
	assert_int_equal(r.conv[0].count, 4);
	assert_int_equal(r.conv[0].total_ns, US(20));
	assert_true(r.conv[0].per_step == 2.0);
	assert_true(r.conv[0].flagged);
	assert_string_equal(r.conv[1].op, "aten::linear");
	assert_false(r.conv[1].flagged);
	assert_int_equal(r.conv[2].kind, ASC_RPT_CONV_CAST);
	assert_true(r.conv[2].per_step == 1.0);
	assert_false(r.conv[2].flagged);
	free(r.conv);

	t.transdata_per_step = 2.0001;
	t.cast_per_step = 1;
	assert_int_equal(asc_rpt_detect_conversions(&in, &t, &r), 0);
	assert_false(r.conv[0].flagged);
	assert_true(r.conv[2].flagged);
	free(r.conv);
}

/* ---- synchronisations ---- */

static void test_sync_stall_at_threshold(void **state)
{
	/*
	 * steps of 500 us: kernel, sync [100,300), next kernel at 350 -> drained 50 (5% of
	 * 1000); the end-of-step sync [460,480) is followed by step 1's first kernel at
	 * 600: that idle is step 1's host-only time, not a stall
	 */
	struct asc_rpt_kernel ks[] = { kern(0, 250, 0, 1, "MatMul"), kern(350, 100, 0, 1, "Add"),
				       kern(600, 100, 1, 1, "MatMul") };
	struct asc_rpt_api as[] = {
		{ US(100), US(300), 0, 1, 0, "aclrtSynchronizeStream", "aten::item", "train.py(9)",
		  0 },
		{ US(310), US(320), 0, 1, 0, "aclrtMemcpyAsync", NULL, NULL, 0 },
		{ US(320), US(330), 0, 1, 0, "aclnnAdd", NULL, NULL, 0 },
		{ US(460), US(480), 0, 1, 0, "aclrtSynchronizeDevice", "step_end", NULL, 0 },
		/* the runtime call inside the acl one: not a second synchronisation */
		{ US(101), US(299), 0, 1, ASC_RPT_API_INNER, "rtStreamSynchronize", "aten::item",
		  NULL, 0 },
	};
	struct asc_rpt_step st[] = { { 0, 0, US(500) }, { 1, US(500), US(1000) } };
	struct asc_rpt_input in = {
		.kernels = ks, .nr_kernels = 3, .apis = as, .nr_apis = 5, .steps = st, .nr_steps = 2
	};
	struct asc_rpt_thresholds t;
	struct asc_rpt_result r = { 0 };

	(void)state;
	asc_rpt_thresholds_default(&t);
	t.sync_share = 0.05;
	assert_int_equal(asc_rpt_detect_syncs(&in, &t, &r), 0);
	assert_int_equal(r.nr_syncs, 2);
	assert_string_equal(r.syncs[1].name, "aclrtSynchronizeDevice");
	assert_int_equal(r.syncs[1].blocked_ns, US(20));
	assert_int_equal(r.syncs[1].drained_ns, 0);
	assert_false(r.syncs[1].flagged);
	assert_string_equal(r.syncs[0].name, "aclrtSynchronizeStream");
	assert_string_equal(r.syncs[0].op, "aten::item");
	assert_int_equal(r.syncs[0].count, 1);
	assert_int_equal(r.syncs[0].blocked_ns, US(200));
	assert_int_equal(r.syncs[0].drained_ns, US(50));
	assert_true(r.syncs[0].share == 0.05);
	assert_true(r.syncs[0].flagged);
	free(r.syncs);
	t.sync_share = 0.0500001;
	assert_int_equal(asc_rpt_detect_syncs(&in, &t, &r), 0);
	assert_false(r.syncs[0].flagged);
	free(r.syncs);
}

/* ---- memory ---- */

static void test_mem_peak_holders(void **state)
{
	/* 1000 bytes were allocated before the capture started */
	struct asc_rpt_mem m[] = {
		{ US(10), 0x1000, 100, 1100, 4096, "aten::empty" },
		{ US(20), 0x2000, 200, 1300, 4096, "aten::mm" },
		{ US(30), 0x1000, -100, 1200, 4096, "aten::empty" },
		{ US(40), 0x1000, 300, 1500, 4096, "aten::add" }, /* pointer reused */
		{ US(50), 0x3000, 500, 2000, 8192, "aten::add" }, /* peak */
		{ US(60), 0x3000, -500, 1500, 8192, "aten::add" },
		{ US(70), 0x4000, 400, 1900, 8192, "aten::mm" },
	};
	struct asc_rpt_step st[] = { { 0, 0, US(45) }, { 1, US(45), US(100) } };
	struct asc_rpt_input in = { .mem = m, .nr_mem = 7, .steps = st, .nr_steps = 2 };
	struct asc_rpt_thresholds t;
	struct asc_rpt_result r = { 0 };

	(void)state;
	asc_rpt_thresholds_default(&t);
	assert_int_equal(asc_rpt_detect_mem_peak(&in, &t, &r), 0);
	assert_true(r.mem_peak.measured);
	assert_int_equal(r.mem_peak.peak_allocated, 2000);
	assert_int_equal(r.mem_peak.peak_ns, US(50));
	assert_int_equal(r.mem_peak.peak_step, 1);
	assert_int_equal(r.mem_peak.peak_reserved, 8192);
	assert_int_equal(r.mem_peak.nr_holders, 2);
	assert_string_equal(r.mem_peak.holders[0].op, "aten::add");
	assert_int_equal(r.mem_peak.holders[0].bytes, 800);
	assert_int_equal(r.mem_peak.holders[0].blocks, 2);
	assert_string_equal(r.mem_peak.holders[1].op, "aten::mm");
	assert_int_equal(r.mem_peak.holders[1].bytes, 200);
	assert_int_equal(r.mem_peak.unattributed_bytes, 1000);
	free(r.mem_peak.holders);

	t.top = 1;
	assert_int_equal(asc_rpt_detect_mem_peak(&in, &t, &r), 0);
	assert_int_equal(r.mem_peak.nr_holders, 1);
	free(r.mem_peak.holders);
}

/* steps of 100 us, one malloc per step leaving end-of-step allocated = base + growth[i] */
static int growth_flag(const int64_t *growth, size_t n, double limit,
		       struct asc_rpt_mem_growth *out)
{
	struct asc_rpt_mem m[16];
	struct asc_rpt_step st[16];
	struct asc_rpt_input in = { .mem = m, .nr_mem = n, .steps = st, .nr_steps = n };
	struct asc_rpt_thresholds t;
	struct asc_rpt_result r = { 0 };
	uint64_t level = 512 * MB;
	size_t i;
	int flag;

	for (i = 0; i < n; i++) {
		st[i] = (struct asc_rpt_step){ (int64_t)i, US(i * 100), US(i * 100 + 100) };
		level += (uint64_t)growth[i];
		m[i] = (struct asc_rpt_mem){ US(i * 100 + 50), 0x1000 + i, growth[i], level,
					     level * 2,	       "aten::cat" };
	}
	asc_rpt_thresholds_default(&t);
	t.mem_growth_mb = limit;
	assert_int_equal(asc_rpt_detect_mem_growth(&in, &t, &r), 0);
	flag = r.mem_growth.flagged;
	if (out)
		*out = r.mem_growth;
	if (!out)
		free(r.mem_growth.steps);
	return flag;
}

static void test_mem_growth_at_threshold(void **state)
{
	const int64_t steady[] = { 0, 1 * MB, 1 * MB, 1 * MB, 1 * MB };
	const int64_t flat[] = { 0, 0, 0, 0, 0 };
	const int64_t jump[] = { 0, 100 * MB, 0, 0, 0 };
	const int64_t two[] = { 0, 8 * MB };
	struct asc_rpt_mem_growth g;

	(void)state;
	assert_true(growth_flag(steady, 5, 1.0, &g));
	assert_int_equal(g.nr_steps, 5);
	assert_true(g.growth_median_mb == 1.0);
	assert_true(g.growth_total_mb == 4.0);
	assert_int_equal(g.steps_grown, 4);
	assert_int_equal(g.steps[4].end_allocated - g.steps[0].end_allocated, 4 * MB);
	free(g.steps);
	assert_false(growth_flag(steady, 5, 1.0001, NULL));
	assert_true(growth_flag(steady, 5, 0.9999, NULL));
	assert_false(growth_flag(flat, 5, 1.0, NULL));
	assert_false(growth_flag(flat, 5, 0, NULL)); /* no growth is never growth */
	/* one jump (optimizer state created in step 1) is not growth per step */
	assert_false(growth_flag(jump, 5, 1.0, &g));
	assert_true(g.growth_median_mb == 0);
	assert_true(g.growth_total_mb == 100.0);
	free(g.steps);
	/* two steps are too few to call a trend */
	assert_false(growth_flag(two, 2, 1.0, NULL));
}

/* ---- multi-stream ---- */

static void test_overlap(void **state)
{
	struct asc_rpt_kernel ks[] = { kern(0, 100, 0, 1, "MatMul"),
				       kern(50, 100, 0, 2, "AllReduce"), kern(300, 10, 0, 1, "Add"),
				       kern(305, 10, 0, 1, "Add") };
	struct asc_rpt_input in = { .kernels = ks, .nr_kernels = 4 };
	struct asc_rpt_thresholds t;
	struct asc_rpt_result r = { 0 };

	(void)state;
	asc_rpt_thresholds_default(&t);
	assert_int_equal(asc_rpt_detect_overlap(&in, &t, &r), 0);
	assert_int_equal(r.overlap.nr_streams, 2);
	assert_int_equal(r.overlap.streams[0].stream, 1);
	assert_int_equal(r.overlap.streams[0].kernels, 3);
	/* stream 1's own overlapping kernels [300,315) do not count as overlap */
	assert_int_equal(r.overlap.streams[0].busy_ns, US(115));
	assert_int_equal(r.overlap.streams[1].busy_ns, US(100));
	assert_int_equal(r.overlap.busy_ns, US(165));
	assert_int_equal(r.overlap.overlap_ns, US(50));
	assert_false(r.overlap.serialised);
	/* exactly at the threshold is not serialised; just above it is */
	/* the share is of the least busy stream's time: 50 of stream 2's 100 us */
	assert_true(r.overlap.overlap_share == 0.5);
	t.overlap_share = 0.5;
	free(r.overlap.streams);
	assert_int_equal(asc_rpt_detect_overlap(&in, &t, &r), 0);
	assert_false(r.overlap.serialised);
	t.overlap_share += 1e-9;
	free(r.overlap.streams);
	assert_int_equal(asc_rpt_detect_overlap(&in, &t, &r), 0);
	assert_true(r.overlap.serialised);
	free(r.overlap.streams);

	/* one stream is never "serialised" */
	in.nr_kernels = 1;
	assert_int_equal(asc_rpt_detect_overlap(&in, &t, &r), 0);
	assert_int_equal(r.overlap.nr_streams, 1);
	assert_int_equal(r.overlap.overlap_ns, 0);
	assert_false(r.overlap.serialised);
	free(r.overlap.streams);
}

/* ---- failed allocations ---- */

static void test_alloc_failures(void **state)
{
	struct asc_rpt_api as[] = {
		{ US(10), US(11), 0, 1, 0, "aclrtMalloc", "aten::empty", NULL, 0 },
		{ US(20), US(21), 1, 1, 0, "aclrtMallocAlign32", "aten::empty", "train.py(7)",
		  0x00000000000307d4ll }, /* 207001 ACL_ERROR_RT_MEMORY_ALLOCATION */
		{ US(30), US(31), 1, 1, 0, "aclrtMalloc", "aten::cat", NULL,
		  (int64_t)0xffffffff00000000ull }, /* upper half only: success */
		{ US(40), US(41), 1, 1, 0, "aclrtMallocHost", NULL, NULL, 1 }, /* host memory */
		{ US(50), US(51), 1, 1, 0, "aclrtFree", NULL, NULL, 5 },
		{ US(15), US(16), 0, 1, 0, "halMemAlloc", "aten::zeros", NULL, -12 },
		/* inside the failing aclrtMallocAlign32: the same failure, not a second one */
		{ US(20), US(21), 1, 1, ASC_RPT_API_INNER, "rtMalloc", "aten::empty", NULL,
		  207001 },
	};
	struct asc_rpt_input in = { .apis = as, .nr_apis = 7 };
	struct asc_rpt_thresholds t;
	struct asc_rpt_result r = { 0 };

	(void)state;
	assert_true(asc_rpt_is_alloc_api("aclrtMallocCached"));
	assert_false(asc_rpt_is_alloc_api("aclrtMallocHost"));
	assert_false(asc_rpt_is_alloc_api("aclrtFree"));
	asc_rpt_thresholds_default(&t);
	t.alloc_failures = 2;
	assert_int_equal(asc_rpt_detect_alloc_failures(&in, &t, &r), 0);
	assert_int_equal(r.alloc.calls, 4);
	assert_int_equal(r.alloc.failures, 2);
	/* the first failure in time, not in array order */
	assert_string_equal(r.alloc.name, "halMemAlloc");
	assert_string_equal(r.alloc.op, "aten::zeros");
	assert_int_equal(r.alloc.first_ret, -12);
	assert_int_equal(r.alloc.first_ns, US(15));
	assert_true(r.alloc.flagged);
	t.alloc_failures = 3;
	assert_int_equal(asc_rpt_detect_alloc_failures(&in, &t, &r), 0);
	assert_false(r.alloc.flagged);
	/* no failures are never flagged, whatever the threshold */
	t.alloc_failures = 0;
	in.nr_apis = 1;
	assert_int_equal(asc_rpt_detect_alloc_failures(&in, &t, &r), 0);
	assert_int_equal(r.alloc.failures, 0);
	assert_false(r.alloc.flagged);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_threshold_defaults_and_set, setup_log),
		cmocka_unit_test_setup(test_threshold_bad_input, setup_log),
		cmocka_unit_test(test_classification),
		cmocka_unit_test(test_step_split),
		cmocka_unit_test(test_no_steps_uses_whole_capture),
		cmocka_unit_test(test_empty_input),
		cmocka_unit_test(test_dispatch_at_thresholds),
		cmocka_unit_test(test_dispatch_back_to_back_is_not_dispatch),
		cmocka_unit_test(test_dispatch_one_long_gap_is_not_dispatch),
		cmocka_unit_test(test_dispatch_by_queue_depth),
		cmocka_unit_test(test_gap_percentiles_and_step_boundaries),
		cmocka_unit_test(test_queue_depth),
		cmocka_unit_test(test_top_kernels),
		cmocka_unit_test(test_optimizer_native_at_threshold),
		cmocka_unit_test(test_optimizer_fused_not_flagged),
		cmocka_unit_test(test_optimizer_adamw_by_its_updates),
		cmocka_unit_test(test_copies_only_count_for_overlap),
		cmocka_unit_test(test_conversions_at_threshold),
		cmocka_unit_test(test_sync_stall_at_threshold),
		cmocka_unit_test(test_mem_peak_holders),
		cmocka_unit_test(test_mem_growth_at_threshold),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_alloc_failures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
