// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * corr_tables.c - growable arrays, the u64 -> u64 map and the string table
 * of the correlation pass (corr_build.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ascbpf_events.h"
#include "analysis/correlate.h"
#include "analysis/corr_build.h"

/* ---- growable arrays ---- */

int grow_array(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 64;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}


/* ---- u64 -> u64 hash map (open addressing, key 0 reserved: stored as key+1) ---- */


static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

int hmap_put(struct hmap *h, uint64_t key, uint64_t val);

static int hmap_grow(struct hmap *h)
{
	struct hmap n = { 0 };
	size_t i;

	n.cap = h->cap ? h->cap * 2 : 1024;
	n.keys = calloc(n.cap, sizeof(*n.keys));
	n.vals = malloc(n.cap * sizeof(*n.vals));
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return -ENOMEM;
	}
	for (i = 0; i < h->cap; i++)
		if (h->keys[i])
			hmap_put(&n, h->keys[i] - 1, h->vals[i]);
	free(h->keys);
	free(h->vals);
	*h = n;
	return 0;
}

/* Inserts or replaces. */
int hmap_put(struct hmap *h, uint64_t key, uint64_t val)
{
	size_t i;

	if ((h->nr + 1) * 2 > h->cap && hmap_grow(h))
		return -ENOMEM;
	for (i = mix64(key) & (h->cap - 1);; i = (i + 1) & (h->cap - 1)) {
		if (!h->keys[i]) {
			h->keys[i] = key + 1;
			h->vals[i] = val;
			h->nr++;
			return 0;
		}
		if (h->keys[i] == key + 1) {
			h->vals[i] = val;
			return 0;
		}
	}
}

int hmap_get(const struct hmap *h, uint64_t key, uint64_t *val)
{
	size_t i;

	if (!h->cap)
		return 0;
	for (i = mix64(key) & (h->cap - 1); h->keys[i]; i = (i + 1) & (h->cap - 1))
		if (h->keys[i] == key + 1) {
			*val = h->vals[i];
			return 1;
		}
	return 0;
}

void hmap_free(struct hmap *h)
{
	free(h->keys);
	free(h->vals);
	memset(h, 0, sizeof(*h));
}

/* ---- string table ---- */


static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

int strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	if (grow_array((void **)&t->arena, &t->cap, 1, 1) ||
	    grow_array((void **)&t->offs, &t->ocap, 1, sizeof(*t->offs)))
		return -ENOMEM;
	t->arena[0] = '\0';	/* id 0 = "" */
	t->len = 1;
	t->offs[0] = 0;
	t->nr = 1;
	return 0;
}

/* Returns the id of s[0..n) (interned), 0 for an empty string or on ENOMEM. */
uint32_t strtab_add(struct strtab *t, const char *s, size_t n)
{
	uint64_t h, id;
	int probe;

	if (!n)
		return 0;
	h = hash_bytes(s, n);
	/* collisions: probe h, h+1, ... in the index until the bytes match or a slot is free */
	for (probe = 0; probe < 64; probe++) {
		if (!hmap_get(&t->index, h + probe, &id))
			break;
		if (strlen(t->arena + t->offs[id]) == n && !memcmp(t->arena + t->offs[id], s, n))
			return (uint32_t)id;
	}
	if (probe == 64 || memchr(s, 0, n))
		return 0;
	if (grow_array((void **)&t->arena, &t->cap, t->len + n + 1, 1) ||
	    grow_array((void **)&t->offs, &t->ocap, t->nr + 1, sizeof(*t->offs)))
		return 0;
	memcpy(t->arena + t->len, s, n);
	t->arena[t->len + n] = '\0';
	t->offs[t->nr] = t->len;
	t->len += n + 1;
	if (hmap_put(&t->index, h + probe, t->nr))
		return 0;
	return (uint32_t)t->nr++;
}

uint32_t strtab_cstr(struct strtab *t, const char *s)
{
	return strtab_add(t, s, strlen(s));
}
