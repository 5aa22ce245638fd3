// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_devtime.c - pairing of STARS ACSQ start/end records (64 bytes, as
 * npu_model's card and the real STARS log write them) into DEVTASK records:
 * in order, interleaved across streams, 16-bit task id reuse after a wrap,
 * ends without starts, starts without ends, a full table, unknown types.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "ascbpf_events.h"
#include "ascend/stars.h"
#include "trace/devtime.h"

static void rec(struct StarsAcsqLog *r, unsigned int type, unsigned int sqe_type, uint16_t stream,
		uint16_t task, uint64_t cnt)
{
	memset(r, 0, sizeof(*r));
	r->head.logType = type;
	r->head.sqeType = sqe_type;
	r->head.hex6bd3 = 0x6bd3;
	r->streamId = stream;
	r->taskId = task;
	r->sysCountLow = (uint32_t)cnt;
	r->sysCountHigh = (uint32_t)(cnt >> 32);
}

static void test_record_is_64_bytes(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct StarsAcsqLog), 64);
}

static void test_start_end_pair(void **state)
{
	struct asc_devtime_pairer *p = asc_devtime_pairer_new(3);
	struct StarsAcsqLog r;
	struct asc_devtask t;

	(void)state;
	rec(&r, ACSQ_TASK_START_FUNC_TYPE, 5, 7, 42, 0x1000000123ull);
	assert_int_equal(asc_devtime_pair(p, &r, &t), 0);
	assert_int_equal(asc_devtime_pairer_pending(p), 1);
	rec(&r, ACSQ_TASK_END_FUNC_TYPE, 5, 7, 42, 0x1000000456ull);
	assert_int_equal(asc_devtime_pair(p, &r, &t), 1);
	assert_int_equal(t.hdr.type, ASC_REC_DEVTASK);
	assert_int_equal(t.hdr.size, sizeof(t));
	assert_int_equal(t.start_cnt, 0x1000000123ull);
	assert_int_equal(t.end_cnt, 0x1000000456ull);
	assert_int_equal(t.dev_id, 3);
	assert_int_equal(t.stream_id, 7);
	assert_int_equal(t.task_id, 42);
	/* word0 >> 10: the sqeType bits of the start record */
	assert_int_equal(t.task_type, 5);
	assert_int_equal(asc_devtime_pairer_pending(p), 0);
	asc_devtime_pairer_free(p);
}

static void test_interleaved_streams(void **state)
{
	struct asc_devtime_pairer *p = asc_devtime_pairer_new(0);
	struct StarsAcsqLog r;
	struct asc_devtask t;
	int s, k, pairs = 0;

	(void)state;
	/* 8 streams x 100 tasks: all starts first, then ends in reverse order */
	for (s = 0; s < 8; s++)
		for (k = 0; k < 100; k++) {
			rec(&r, ACSQ_TASK_START_FUNC_TYPE, 0, s, k, 1000 + s * 1000 + k);
			assert_int_equal(asc_devtime_pair(p, &r, &t), 0);
		}
	assert_int_equal(asc_devtime_pairer_pending(p), 800);
	for (s = 7; s >= 0; s--)
		for (k = 99; k >= 0; k--) {
			rec(&r, ACSQ_TASK_END_FUNC_TYPE, 0, s, k, 500000 + s * 1000 + k);
			assert_int_equal(asc_devtime_pair(p, &r, &t), 1);
			assert_int_equal(t.stream_id, s);
			assert_int_equal(t.task_id, k);
			assert_int_equal(t.start_cnt, 1000 + s * 1000 + k);
			pairs++;
		}
	assert_int_equal(pairs, 800);
	assert_int_equal(asc_devtime_pairer_pending(p), 0);
	asc_devtime_pairer_free(p);
}

static void test_task_id_reuse_after_wrap(void **state)
{
	struct asc_devtime_pairer *p = asc_devtime_pairer_new(0);
	struct StarsAcsqLog r;
	struct asc_devtask t;
	uint32_t i;

	(void)state;
	/* 70000 tasks on one stream: the 16-bit id wraps; each pairs with its own start */
	for (i = 0; i < 70000; i++) {
		rec(&r, ACSQ_TASK_START_FUNC_TYPE, 0, 1, (uint16_t)i, 10ull * i);
		assert_int_equal(asc_devtime_pair(p, &r, &t), 0);
		rec(&r, ACSQ_TASK_END_FUNC_TYPE, 0, 1, (uint16_t)i, 10ull * i + 5);
		assert_int_equal(asc_devtime_pair(p, &r, &t), 1);
		assert_int_equal(t.start_cnt, 10ull * i);
		assert_int_equal(t.task_id, (uint16_t)i);
	}
	assert_int_equal(asc_devtime_pairer_pending(p), 0);
	asc_devtime_pairer_free(p);
}

static void test_end_without_start(void **state)
{
	struct asc_devtime_pairer *p = asc_devtime_pairer_new(0);
	struct StarsAcsqLog r;
	struct asc_devtask t;

	(void)state;
	rec(&r, ACSQ_TASK_END_FUNC_TYPE, 0, 2, 9, 100);
	assert_int_equal(asc_devtime_pair(p, &r, &t), 0);
	/* a start on another stream with the same task id is not its start */
	rec(&r, ACSQ_TASK_START_FUNC_TYPE, 0, 3, 9, 50);
	asc_devtime_pair(p, &r, &t);
	rec(&r, ACSQ_TASK_END_FUNC_TYPE, 0, 2, 9, 100);
	assert_int_equal(asc_devtime_pair(p, &r, &t), 0);
	assert_int_equal(asc_devtime_pairer_pending(p), 1);
	asc_devtime_pairer_free(p);
}

static void test_unknown_type(void **state)
{
	struct asc_devtime_pairer *p = asc_devtime_pairer_new(0);
	struct StarsAcsqLog r;
	struct asc_devtask t;

	(void)state;
	rec(&r, 17, 0, 2, 9, 100);
	assert_int_equal(asc_devtime_pair(p, &r, &t), -EINVAL);
	assert_int_equal(asc_devtime_pairer_pending(p), 0);
	asc_devtime_pairer_free(p);
}

/* Many pending starts with colliding hashes, then removal in a scattered order. */
static void test_many_pending_and_removal(void **state)
{
	struct asc_devtime_pairer *p = asc_devtime_pairer_new(0);
	struct StarsAcsqLog r;
	struct asc_devtask t;
	uint32_t i, n = 30000;

	(void)state;
	for (i = 0; i < n; i++) {
		rec(&r, ACSQ_TASK_START_FUNC_TYPE, 0, i % 997, i / 997, i);
		assert_int_equal(asc_devtime_pair(p, &r, &t), 0);
	}
	assert_int_equal(asc_devtime_pairer_pending(p), n);
	for (i = 0; i < n; i++) {
		/* a permutation of 0..n-1: 7919 is prime and does not divide n */
		uint32_t k = (i * 7919u) % n;

		rec(&r, ACSQ_TASK_END_FUNC_TYPE, 0, k % 997, k / 997, k + 1000000);
		assert_int_equal(asc_devtime_pair(p, &r, &t), 1);
		assert_int_equal(t.start_cnt, k);
	}
	assert_int_equal(asc_devtime_pairer_pending(p), 0);
	asc_devtime_pairer_free(p);
}

static void test_full_table(void **state)
{
	struct asc_devtime_pairer *p = asc_devtime_pairer_new(0);
	struct StarsAcsqLog r;
	struct asc_devtask t;
	uint32_t i;
	int full = 0;

	(void)state;
	for (i = 0; i < 70000 && !full; i++) {
		rec(&r, ACSQ_TASK_START_FUNC_TYPE, 0, i >> 16, (uint16_t)i, i);
		full = asc_devtime_pair(p, &r, &t) == -ENOSPC;
	}
	assert_true(full);
	assert_int_equal(asc_devtime_pairer_pending(p), 65536);
	asc_devtime_pairer_free(p);
}

static void test_null_devtime(void **state)
{
	struct asc_devtime_stats st = { 1, 2, 3, 4, 5 };

	(void)state;
	asc_devtime_stop(NULL);
	asc_devtime_get_stats(NULL, &st);
	assert_int_equal(st.records + st.tasks + st.lost + st.freq_hz + st.clock_bound_ns, 0);
	asc_devtime_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_is_64_bytes),
		cmocka_unit_test(test_start_end_pair),
		cmocka_unit_test(test_interleaved_streams),
		cmocka_unit_test(test_task_id_reuse_after_wrap),
		cmocka_unit_test(test_end_without_start),
		cmocka_unit_test(test_unknown_type),
		cmocka_unit_test(test_many_pending_and_removal),
		cmocka_unit_test(test_full_table),
		cmocka_unit_test(test_null_devtime),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
