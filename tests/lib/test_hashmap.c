// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_hashmap.c - user/lib/hashmap: both maps against a plain reference
 * (a sorted array / linear search), including the keys the encoding makes
 * special (0, UINT64_MAX), deletion inside long probe runs, growth, and
 * iteration seeing every entry once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/hashmap.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void test_u64_special_keys(void **state)
{
	struct asc_u64map m = { 0 };
	uint64_t v = 0;

	(void)state;
	assert_int_equal(asc_u64map_get(&m, 0, &v), 0);
	assert_int_equal(asc_u64map_del(&m, 7), 0);
	assert_int_equal(asc_u64map_put(&m, 0, 10), 0);
	assert_int_equal(asc_u64map_put(&m, UINT64_MAX, 20), 0);
	assert_int_equal(asc_u64map_put(&m, UINT64_MAX - 1, 30), 0);
	assert_int_equal(m.nr, 3);
	assert_int_equal(asc_u64map_get(&m, 0, &v), 1);
	assert_int_equal(v, 10);
	assert_int_equal(asc_u64map_get(&m, UINT64_MAX, &v), 1);
	assert_int_equal(v, 20);
	assert_int_equal(asc_u64map_get(&m, UINT64_MAX - 1, &v), 1);
	assert_int_equal(v, 30);
	assert_int_equal(asc_u64map_put(&m, UINT64_MAX, 21), 0); /* replace */
	assert_int_equal(m.nr, 3);
	(*asc_u64map_slot(&m, 0, 0))++;
	assert_int_equal(asc_u64map_get(&m, 0, &v), 1);
	assert_int_equal(v, 11);
	assert_null(asc_u64map_slot(&m, 99, 0));
	assert_int_equal(asc_u64map_del(&m, UINT64_MAX), 1);
	assert_int_equal(asc_u64map_get(&m, UINT64_MAX, NULL), 0);
	assert_int_equal(m.nr, 2);
	asc_u64map_free(&m);
	assert_int_equal(m.nr, 0);
	assert_int_equal(asc_u64map_get(&m, 0, NULL), 0);
}

/* Random puts and deletes over a small key space (long runs, many collisions). */
static void test_u64_random_against_reference(void **state)
{
	enum { SPACE = 5000, OPS = 200000 };
	struct asc_u64map m = { 0 };
	uint64_t *ref = calloc(SPACE, sizeof(*ref)); /* value + 1, 0 = absent */
	size_t live = 0, i, pos, seen;
	uint64_t k, v;

	(void)state;
	assert_non_null(ref);
	for (i = 0; i < OPS; i++) {
		size_t slot = rng() % SPACE;

		k = slot * 0x10000ull; /* keys with equal low bits: a weak hash would cluster */
		if (rng() % 3) {
			v = rng() >> 1;
			live += !ref[slot];
			ref[slot] = v + 1;
			assert_int_equal(asc_u64map_put(&m, k, v), 0);
		} else {
			assert_int_equal(asc_u64map_del(&m, k), ref[slot] != 0);
			live -= ref[slot] != 0;
			ref[slot] = 0;
		}
		if (i % 997 == 0) {
			size_t s = rng() % SPACE;
			int found = asc_u64map_get(&m, s * 0x10000ull, &v);

			assert_int_equal(found, ref[s] != 0);
			if (found)
				assert_int_equal(v + 1, ref[s]);
		}
	}
	assert_int_equal(m.nr, live);
	for (i = 0; i < SPACE; i++) {
		int found = asc_u64map_get(&m, i * 0x10000ull, &v);

		assert_int_equal(found, ref[i] != 0);
		if (found)
			assert_int_equal(v + 1, ref[i]);
	}
	for (pos = 0, seen = 0; asc_u64map_next(&m, &pos, &k, &v); seen++) {
		assert_int_equal(k % 0x10000ull, 0);
		assert_true(k / 0x10000ull < SPACE);
		assert_int_equal(v + 1, ref[k / 0x10000ull]);
	}
	assert_int_equal(seen, live);
	assert_true(asc_u64map_bytes(&m) >= m.nr * 2 * sizeof(uint64_t));
	asc_u64map_free(&m);
	free(ref);
}

struct strs {
	const char **s;
};

static int str_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct strs *t = ctx;

	return !strcmp(t->s[idx], key);
}

/* Every hash equal: find must still tell items apart with eq, in insertion order. */
static int always_eq(const void *ctx, uint32_t idx, const void *key)
{
	(void)ctx;
	(void)idx;
	(void)key;
	return 1;
}

static void test_idx_strings(void **state)
{
	enum { N = 3000 };
	static char buf[N][16];
	const char *arr[N];
	struct strs t = { arr };
	struct asc_idxmap m = { 0 };
	uint32_t idx = 0;
	uint64_t h;
	size_t i;

	(void)state;
	assert_int_equal(asc_idxmap_find(&m, 1, str_eq, &t, "x", &idx), 0);
	for (i = 0; i < N; i++) {
		snprintf(buf[i], sizeof(buf[i]), "op%zu", i);
		arr[i] = buf[i];
		h = asc_hash_str(arr[i]);
		assert_int_equal(asc_idxmap_find(&m, h, str_eq, &t, arr[i], &idx), 0);
		assert_int_equal(asc_idxmap_add(&m, asc_hash_str(arr[i]), (uint32_t)i), 0);
	}
	assert_int_equal(m.nr, N);
	for (i = 0; i < N; i++) {
		h = asc_hash_str(arr[i]);
		assert_int_equal(asc_idxmap_find(&m, h, str_eq, &t, arr[i], &idx), 1);
		assert_int_equal(idx, i);
	}
	assert_int_equal(asc_idxmap_find(&m, asc_hash_str("op3000"), str_eq, &t, "op3000", &idx),
			 0);
	assert_int_equal(asc_idxmap_add(&m, 5, 1u << 31), -EOVERFLOW);
	asc_idxmap_free(&m);

	/* one hash for all: probing order is insertion order */
	for (i = 0; i < 100; i++)
		assert_int_equal(asc_idxmap_add(&m, 42, (uint32_t)(99 - i)), 0);
	assert_int_equal(asc_idxmap_find(&m, 42, always_eq, NULL, NULL, &idx), 1);
	assert_int_equal(idx, 99);
	assert_int_equal(asc_idxmap_find(&m, 42, str_eq, &t, "op7", &idx), 1);
	assert_int_equal(idx, 7);
	assert_true(asc_idxmap_bytes(&m) >= 100 * sizeof(uint64_t));
	asc_idxmap_free(&m);
}

static void test_hash_bytes(void **state)
{
	(void)state;
	assert_int_equal(asc_hash_bytes("abc", 3), asc_hash_str("abc"));
	assert_int_not_equal(asc_hash_str("abc"), asc_hash_str("abd"));
	assert_int_not_equal(asc_hash_u64(1), asc_hash_u64(2));
	assert_int_equal(asc_hash_u64(0), 0); /* fmix64 fixes 0: callers add nothing */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u64_special_keys),
		cmocka_unit_test(test_u64_random_against_reference),
		cmocka_unit_test(test_idx_strings),
		cmocka_unit_test(test_hash_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
