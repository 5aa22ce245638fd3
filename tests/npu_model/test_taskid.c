// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_taskid.c - npu-modeld's id allocation and 16-bit task-id wrap count
 * (npu_model/modeld/ids.c), and that the card's wrap count reaches the exec
 * record of a task whose id wrapped.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "modeld/modeld.h"

static int owner_a, owner_b;
#define A (&owner_a)
#define B (&owner_b)

static void test_ids_round_robin(void **state)
{
	struct md_ids ids;

	assert_int_equal(md_ids_init(&ids, 4), 0);
	assert_int_equal(md_ids_alloc(&ids, A), 0);
	assert_int_equal(md_ids_alloc(&ids, A), 1);
	assert_int_equal(md_ids_free(&ids, 0, A), 0);
	/* A freed id is not handed out again at once. */
	assert_int_equal(md_ids_alloc(&ids, B), 2);
	assert_int_equal(md_ids_alloc(&ids, B), 3);
	assert_int_equal(md_ids_alloc(&ids, B), 0);
	assert_int_equal(md_ids_alloc(&ids, B), -ENOSPC);
	assert_int_equal(ids.used, 4);
	md_ids_fini(&ids);
}

static void test_ids_free_errors(void **state)
{
	struct md_ids ids;

	assert_int_equal(md_ids_init(&ids, 0), -EINVAL);
	assert_int_equal(md_ids_init(&ids, 8), 0);
	assert_int_equal(md_ids_alloc(&ids, A), 0);
	assert_int_equal(md_ids_free(&ids, 8, A), -EINVAL);
	assert_int_equal(md_ids_free(&ids, 1, A), -ENOENT);
	assert_int_equal(md_ids_free(&ids, 0, B), -EPERM);
	assert_ptr_equal(md_ids_owner(&ids, 0), A);
	assert_null(md_ids_owner(&ids, 1));
	assert_null(md_ids_owner(&ids, 1000));
	assert_int_equal(md_ids_free(&ids, 0, A), 0);
	assert_false(md_ids_busy(&ids, 0));
	md_ids_fini(&ids);
}

static void test_ids_free_owner(void **state)
{
	struct md_ids ids;
	int i;

	assert_int_equal(md_ids_init(&ids, 1024), 0);
	for (i = 0; i < 1024; i++)
		assert_int_equal(md_ids_alloc(&ids, i % 3 ? A : B), i);
	assert_int_equal(md_ids_free_owner(&ids, A), 682);
	assert_int_equal(ids.used, 342);
	for (i = 0; i < 1024; i++)
		assert_int_equal(md_ids_busy(&ids, (uint32_t)i), i % 3 == 0);
	md_ids_fini(&ids);
}

static void test_wrap_counts_decreases(void **state)
{
	struct md_wrap w = { 0 };
	uint32_t i, flip = 0;

	assert_int_equal(md_wrap_next(&w, 65530), 0);
	for (i = 65531; i < 65536; i++)
		assert_int_equal(md_wrap_next(&w, (uint16_t)i), 0);
	assert_int_equal(md_wrap_next(&w, 0), 1);
	assert_int_equal(md_wrap_next(&w, 1), 1);
	/* Three full turns of the 16-bit counter. */
	for (i = 2; i < 3 * 65536 + 2; i++)
		flip = md_wrap_next(&w, (uint16_t)i);
	assert_int_equal(flip, 4);
	/* The first task of a stream never counts as a wrap, whatever its id. */
	memset(&w, 0, sizeof(w));
	assert_int_equal(md_wrap_next(&w, 0), 0);
	assert_int_equal(md_wrap_next(&w, 0), 1);
}

/* A stream whose task id wraps on the card: exec order and the card's flip agree. */
static void test_wrap_on_card(void **state)
{
	struct md_config cfg;
	struct md_card *c = calloc(1, sizeof(*c));
	struct md_sq *sq;
	struct npu_sqe s[4];
	uint64_t deadline;
	int i;

	memset(&cfg, 0, sizeof(cfg));
	npu_card_config_default(&cfg.card);
	cfg.cards = 1;
	cfg.cnt_freq_hz = 1000000;
	assert_int_equal(md_card_init(c, 0, &cfg, 0), 0);
	sq = md_sq_create(c, 0, 0, 7, A, 1);
	assert_non_null(sq);
	memset(s, 0, sizeof(s));
	for (i = 0; i < 4; i++) {
		s[i].header.rtStreamId = 7;
		s[i].header.taskId = (uint16_t)(65534 + i);
		s[i].kind = NPU_SQE_KIND_KERNEL;
		s[i].task_type = NPU_TASK_AI_CORE;
		s[i].flip = (uint16_t)(i >= 2);
	}
	assert_int_equal(md_sched_submit(c, sq, s, 4, 1000), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(sq->q[i].wrap, i >= 2 ? 1u : 0u);
	assert_int_equal(md_sched_run(c, UINT64_MAX - 1, &deadline), 4);
	assert_int_equal(sq->head, 4);
	md_card_fini(c);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids_round_robin),
		cmocka_unit_test(test_ids_free_errors),
		cmocka_unit_test(test_ids_free_owner),
		cmocka_unit_test(test_wrap_counts_decreases),
		cmocka_unit_test(test_wrap_on_card),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
