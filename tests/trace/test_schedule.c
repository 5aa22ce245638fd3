// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_schedule.c - bpf/schedule.h against torch_npu.profiler.schedule():
 * the reference's worked example, each parameter alone, repeat=0 (forever),
 * the sanitiser, and the gate predicate the BPF step program uses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "schedule.h"

#define N ASC_SCHED_NONE
#define W ASC_SCHED_WARMUP
#define R ASC_SCHED_RECORD
#define S ASC_SCHED_RECORD_AND_SAVE

static void expect_steps(const struct asc_sched *s, const __u32 *want, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (asc_sched_action(s, i) != want[i])
			fail_msg("step %d: action %u, expected %u", i, asc_sched_action(s, i),
				 want[i]);
	}
}

/*
 * docs/torch_npu_format.md §5: wait=2, warmup=1, active=2, repeat=2,
 * skip_first=1, skip_first_wait=1
 */
static void test_reference_worked_example(void **state)
{
	struct asc_sched s = { .skip_first = 1,
			       .skip_first_wait = 1,
			       .wait = 2,
			       .warmup = 1,
			       .active = 2,
			       .repeat = 2,
			       .enabled = 1 };
	const __u32 want[] = { N, W, R, S, N, N, W, R, S, N, N, N };

	(void)state;
	expect_steps(&s, want, 12);
}

static void test_same_without_skip_first_wait(void **state)
{
	struct asc_sched s = {
		.skip_first = 1, .wait = 2, .warmup = 1, .active = 2, .repeat = 2, .enabled = 1
	};
	/* step-1 counted from 0: N N W R S | N N W R S | then NONE forever */
	const __u32 want[] = { N, N, N, W, R, S, N, N, W, R, S, N, N, N };

	(void)state;
	expect_steps(&s, want, 14);
}

static void test_disabled_records_everything(void **state)
{
	struct asc_sched s = { .skip_first = 5, .wait = 3, .active = 1, .repeat = 1 };
	int i;

	(void)state;
	for (i = 0; i < 100; i++)
		assert_int_equal(asc_sched_action(&s, i), R);
}

static void test_repeat_zero_cycles_forever(void **state)
{
	struct asc_sched s = { .wait = 1, .warmup = 0, .active = 2, .repeat = 0, .enabled = 1 };
	__u64 step;

	(void)state;
	for (step = 0; step < 3000; step += 3) {
		assert_int_equal(asc_sched_action(&s, step), N);
		assert_int_equal(asc_sched_action(&s, step + 1), R);
		assert_int_equal(asc_sched_action(&s, step + 2), S);
	}
	/* far steps still follow the cycle (64-bit step index) */
	assert_int_equal(asc_sched_action(&s, 3000000000ULL), N);
	assert_int_equal(asc_sched_action(&s, 3000000002ULL), S);
}

static void test_active_one_is_save_only(void **state)
{
	struct asc_sched s = { .active = 1, .repeat = 3, .enabled = 1 };
	const __u32 want[] = { S, S, S, N, N };

	(void)state;
	expect_steps(&s, want, 5);
}

static void test_skip_first_only(void **state)
{
	struct asc_sched s = { .skip_first = 3, .active = 2, .repeat = 1, .enabled = 1 };
	const __u32 want[] = { N, N, N, R, S, N, N };

	(void)state;
	expect_steps(&s, want, 7);
}

static void test_warmup_then_record(void **state)
{
	struct asc_sched s = { .warmup = 2, .active = 3, .repeat = 1, .enabled = 1 };
	const __u32 want[] = { W, W, R, R, S, N };

	(void)state;
	expect_steps(&s, want, 6);
}

static void test_sanitise(void **state)
{
	struct asc_sched s = { .active = 0, .skip_first_wait = 7, .enabled = 1 };
	const __u32 want[] = { S, S, S };

	(void)state;
	asc_sched_sanitise(&s);
	assert_int_equal(s.active, 1);
	assert_int_equal(s.skip_first_wait, 1);
	expect_steps(&s, want, 3);
}

static void test_gate_predicate(void **state)
{
	(void)state;
	assert_false(asc_sched_recording(N));
	assert_false(asc_sched_recording(W));
	assert_true(asc_sched_recording(R));
	assert_true(asc_sched_recording(S));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_worked_example),
		cmocka_unit_test(test_same_without_skip_first_wait),
		cmocka_unit_test(test_disabled_records_everything),
		cmocka_unit_test(test_repeat_zero_cycles_forever),
		cmocka_unit_test(test_active_one_is_save_only),
		cmocka_unit_test(test_skip_first_only),
		cmocka_unit_test(test_warmup_then_record),
		cmocka_unit_test(test_sanitise),
		cmocka_unit_test(test_gate_predicate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
