// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_allocator.c - the caching allocator of libtorch_npu
 * (npu_model/torch_npu/allocator.c) over a fake device defined here
 * (aclrtMallocAlign32 / aclrtFree with a capacity), capturing the reports it
 * makes through reportMemoryDataToNpuProfiler: size classes, reuse, split and
 * merge, per-stream pools, totals, and the OOM path (free the cache, retry).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "npu_acl.h"
#include "torch_npu/torch_npu_priv.h"

#define MiB (1ull << 20)

static uint64_t dev_capacity, dev_used;
static uintptr_t dev_next = 0x10000000000ull;
static int nr_mallocs, nr_frees;
static struct {
	uintptr_t p;
	size_t n;
} dev_live[1024];

aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	(void)policy;
	nr_mallocs++;
	if (dev_used + size > dev_capacity)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	for (int i = 0; i < 1024; i++) {
		if (!dev_live[i].p) {
			dev_live[i].p = dev_next;
			dev_live[i].n = size;
			break;
		}
	}
	*devPtr = (void *)dev_next;
	dev_next += size + MiB;
	dev_used += size;
	return ACL_SUCCESS;
}

aclError aclrtFree(void *devPtr)
{
	nr_frees++;
	for (int i = 0; i < 1024; i++) {
		if (dev_live[i].p == (uintptr_t)devPtr) {
			dev_used -= dev_live[i].n;
			dev_live[i].p = 0;
			return ACL_SUCCESS;
		}
	}
	fail_msg("aclrtFree of a pointer the device never gave: %p", devPtr);
	return ACL_ERROR_RT_MEMORY_FREE;
}

static struct MemoryUsage reports[256];
static int nr_reports;

void _ZN9torch_npu8profiler29reportMemoryDataToNpuProfilerERKNS0_11MemoryUsageE(
	const struct MemoryUsage *data)
{
	if (nr_reports < 256)
		reports[nr_reports] = *data;
	nr_reports++;
}

static int setup(void **state)
{
	(void)state;
	npu_alloc_empty_cache();
	dev_capacity = 1ull << 40;
	nr_mallocs = nr_frees = nr_reports = 0;
	return 0;
}

static void test_sizes(void **state)
{
	assert_int_equal(npu_alloc_round_size(1), 512);
	assert_int_equal(npu_alloc_round_size(512), 512);
	assert_int_equal(npu_alloc_round_size(513), 1024);
	assert_int_equal(npu_alloc_segment_size(512), 2 * MiB);
	assert_int_equal(npu_alloc_segment_size(MiB), 2 * MiB);
	assert_int_equal(npu_alloc_segment_size(MiB + 512), 20 * MiB);
	assert_int_equal(npu_alloc_segment_size(10 * MiB), 10 * MiB);
	assert_int_equal(npu_alloc_segment_size(11 * MiB + 1), 12 * MiB);
}

/* A freed block is reused; small requests share one 2 MiB segment. */
static void test_reuse_and_split(void **state)
{
	void *a, *b, *c;
	struct npu_alloc_stats st;

	a = npu_alloc_malloc(1000, 0, NULL);
	b = npu_alloc_malloc(1000, 0, NULL);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(nr_mallocs, 1);		     /* one segment */
	assert_int_equal((uintptr_t)b - (uintptr_t)a, 1024); /* split, adjacent */
	npu_alloc_free(a);
	c = npu_alloc_malloc(700, 0, NULL);
	assert_ptr_equal(c, a);
	assert_int_equal(nr_mallocs, 1);
	npu_alloc_get_stats(&st);
	assert_int_equal(st.allocated, 2048);
	assert_int_equal(st.reserved, 2 * MiB);
	npu_alloc_free(b);
	npu_alloc_free(c);
}

/* Neighbours merge: two 512 KiB blocks freed make room for one 1 MiB block. */
static void test_merge(void **state)
{
	void *a = npu_alloc_malloc(512 * 1024, 0, NULL);
	void *b = npu_alloc_malloc(512 * 1024, 0, NULL);
	void *hold = npu_alloc_malloc(512 * 1024, 0, NULL); /* keeps the rest split off */
	void *big;

	assert_int_equal(nr_mallocs, 1);
	npu_alloc_free(a);
	npu_alloc_free(b);
	big = npu_alloc_malloc(MiB, 0, NULL);
	assert_ptr_equal(big, a);
	assert_int_equal(nr_mallocs, 1);
	npu_alloc_free(big);
	npu_alloc_free(hold);
}

/* Blocks of one stream are not handed to another. */
static void test_streams(void **state)
{
	int s1, s2;
	void *a = npu_alloc_malloc(4096, 0, &s1), *b;

	npu_alloc_free(a);
	b = npu_alloc_malloc(4096, 0, &s2);
	assert_ptr_not_equal(a, b);
	assert_int_equal(nr_mallocs, 2);
	npu_alloc_free(b);
	b = npu_alloc_malloc(4096, 0, &s1);
	assert_ptr_equal(a, b);
	npu_alloc_free(b);
}

/* malloc, free, block_free reports with the totals after each event. */
static void test_reports(void **state)
{
	int s;
	void *a = npu_alloc_malloc(3000, 1, &s);

	assert_int_equal(nr_reports, 1);
	assert_int_equal(reports[0].data_type, NPU_MEM_MALLOC);
	assert_int_equal(reports[0].ptr, (uintptr_t)a);
	assert_int_equal(reports[0].alloc_size, 3072);
	assert_int_equal(reports[0].total_allocated, 3072);
	assert_int_equal(reports[0].total_active, 3072);
	assert_int_equal(reports[0].total_reserved, 2 * MiB);
	assert_int_equal(reports[0].device_index, 1);
	assert_int_equal(reports[0].device_type, 20); /* PrivateUse1 */
	assert_int_equal(reports[0].stream_ptr, (uintptr_t)&s);
	assert_int_equal(reports[0].component_type, 0);
	npu_alloc_free(a);
	assert_int_equal(nr_reports, 3);
	assert_int_equal(reports[1].data_type, NPU_MEM_FREE);
	assert_int_equal(reports[1].alloc_size, -3072);
	assert_int_equal(reports[1].total_allocated, 0);
	assert_int_equal(reports[1].total_active, 3072); /* still active until block_free */
	assert_int_equal(reports[2].data_type, NPU_MEM_BLOCK_FREE);
	assert_int_equal(reports[2].total_active, 0);
	assert_int_equal(reports[2].total_reserved, 2 * MiB); /* cached, not returned */
	/* unknown and double frees are ignored without a report */
	npu_alloc_free(a);
	npu_alloc_free((void *)0x1234);
	assert_int_equal(nr_reports, 3);
}

/* Out of memory: the cache is released (aclrtFree) and the allocation retried once. */
static void test_oom_retry(void **state)
{
	struct npu_alloc_stats before, after;
	void *a, *big, *again;

	dev_capacity = 40 * MiB;
	a = npu_alloc_malloc(5 * MiB, 0, NULL); /* a 20 MiB segment */
	assert_non_null(a);
	npu_alloc_free(a); /* cached: device still holds 20 MiB */
	npu_alloc_get_stats(&before);
	assert_int_equal(before.reserved, 20 * MiB);
	big = npu_alloc_malloc(30 * MiB, 0, NULL);
	assert_non_null(big);
	assert_int_equal(nr_frees, 1);	 /* the cached segment went back */
	assert_int_equal(nr_mallocs, 3); /* first try failed, retry succeeded */
	npu_alloc_get_stats(&after);
	assert_int_equal(after.nr_oom_retries, before.nr_oom_retries + 1);
	assert_int_equal(after.reserved, 30 * MiB);
	/* Nothing left to free: the retry fails too and the real code comes back. */
	again = npu_alloc_malloc(30 * MiB, 0, NULL);
	assert_null(again);
	assert_int_equal(npu_alloc_last_error(), ACL_ERROR_RT_MEMORY_ALLOCATION);
	npu_alloc_get_stats(&after);
	assert_true(after.nr_alloc_failures >= 1);
	npu_alloc_free(big);
	assert_null(npu_alloc_malloc(0, 0, NULL));
	assert_int_equal(npu_alloc_last_error(), ACL_ERROR_INVALID_PARAM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_sizes, setup),
		cmocka_unit_test_setup(test_reuse_and_split, setup),
		cmocka_unit_test_setup(test_merge, setup),
		cmocka_unit_test_setup(test_streams, setup),
		cmocka_unit_test_setup(test_reports, setup),
		cmocka_unit_test_setup(test_oom_retry, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
