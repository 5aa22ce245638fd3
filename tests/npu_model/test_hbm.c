// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_hbm.c - npu-modeld's device-memory accounting (npu_model/modeld/hbm.c):
 * capacity, page charging, OOM, overlap, ownership, reclaim.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "modeld/modeld.h"

static int owner_a, owner_b;
#define A  (&owner_a)
#define B  (&owner_b)
#define VA 0x100000000000ull

static void test_charges_whole_pages(void **state)
{
	struct md_hbm h;

	md_hbm_init(&h, 1 << 20);
	assert_int_equal(md_hbm_alloc(&h, VA, 1, A), 0);
	assert_int_equal(h.used, NPU_HBM_PAGE);
	assert_int_equal(md_hbm_alloc(&h, VA + NPU_HBM_PAGE, NPU_HBM_PAGE + 1, A), 0);
	assert_int_equal(h.used, 3 * NPU_HBM_PAGE);
	assert_int_equal(md_hbm_used_by(&h, A), 3 * NPU_HBM_PAGE);
	assert_int_equal(md_hbm_used_by(&h, B), 0);
	md_hbm_fini(&h);
}

static void test_oom_at_capacity(void **state)
{
	struct md_hbm h;

	md_hbm_init(&h, 8 * NPU_HBM_PAGE);
	assert_int_equal(md_hbm_alloc(&h, VA, 6 * NPU_HBM_PAGE, A), 0);
	assert_int_equal(md_hbm_alloc(&h, VA + (1 << 20), 3 * NPU_HBM_PAGE, B), -ENOMEM);
	assert_int_equal(h.oom_count, 1);
	assert_int_equal(h.used, 6 * NPU_HBM_PAGE);
	/* Exactly what is left still fits. */
	assert_int_equal(md_hbm_alloc(&h, VA + (1 << 20), 2 * NPU_HBM_PAGE, B), 0);
	assert_int_equal(h.used, h.capacity);
	assert_int_equal(md_hbm_alloc(&h, VA + (2 << 20), 1, B), -ENOMEM);
	/* Freeing makes room again. */
	assert_int_equal(md_hbm_free(&h, VA, A), 0);
	assert_int_equal(md_hbm_alloc(&h, VA + (2 << 20), 1, B), 0);
	assert_int_equal(h.peak, 8 * NPU_HBM_PAGE);
	md_hbm_fini(&h);
}

static void test_bad_ranges(void **state)
{
	struct md_hbm h;

	md_hbm_init(&h, 1 << 30);
	assert_int_equal(md_hbm_alloc(&h, VA, 0, A), -EINVAL);
	assert_int_equal(md_hbm_alloc(&h, UINT64_MAX - 10, 100, A), -EINVAL);
	assert_int_equal(md_hbm_alloc(&h, VA, 1 << 20, A), 0);
	/* The same owner cannot populate an overlapping range twice ... */
	assert_int_equal(md_hbm_alloc(&h, VA + 4096, 4096, A), -EEXIST);
	/* ... another process has its own address space. */
	assert_int_equal(md_hbm_alloc(&h, VA + 4096, 4096, B), 0);
	md_hbm_fini(&h);
}

static void test_ownership(void **state)
{
	struct md_hbm h;

	md_hbm_init(&h, 1 << 30);
	assert_int_equal(md_hbm_alloc(&h, VA, 1 << 20, A), 0);
	assert_int_equal(md_hbm_free(&h, VA, B), -ENOENT);
	assert_int_equal(md_hbm_free(&h, VA + 4096, A), -ENOENT);
	assert_true(md_hbm_contains(&h, VA + 100, 1000, A));
	assert_false(md_hbm_contains(&h, VA + 100, 1000, B));
	assert_false(md_hbm_contains(&h, VA + (1 << 20) - 10, 20, A));
	assert_false(md_hbm_contains(&h, UINT64_MAX - 1, 10, A));
	assert_int_equal(md_hbm_free(&h, VA, A), 0);
	assert_int_equal(md_hbm_free(&h, VA, A), -ENOENT);
	assert_int_equal(h.used, 0);
	md_hbm_fini(&h);
}

static void test_reclaim_owner(void **state)
{
	struct md_hbm h;
	int i;

	md_hbm_init(&h, 1ull << 32);
	for (i = 0; i < 200; i++) {
		assert_int_equal(md_hbm_alloc(&h, VA + (uint64_t)i * (1 << 20), 1 << 20, A), 0);
		assert_int_equal(md_hbm_alloc(&h, VA + (uint64_t)i * (1 << 20), 4096, B), 0);
	}
	assert_int_equal(md_hbm_free_owner(&h, A), 200);
	assert_int_equal(h.used, 200 * 4096);
	assert_int_equal(h.n, 200);
	assert_int_equal(md_hbm_used_by(&h, A), 0);
	assert_int_equal(md_hbm_free_owner(&h, B), 200);
	assert_int_equal(h.used, 0);
	assert_int_equal(h.peak, 200 * ((1 << 20) + 4096));
	md_hbm_fini(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_charges_whole_pages), cmocka_unit_test(test_oom_at_capacity),
		cmocka_unit_test(test_bad_ranges),	    cmocka_unit_test(test_ownership),
		cmocka_unit_test(test_reclaim_owner),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
