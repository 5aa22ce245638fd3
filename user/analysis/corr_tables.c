// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * corr_tables.c - growable arrays and the string table of the correlation
 * pass (corr_build.h); the maps are lib/hashmap.h's.
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

/* ---- string table ---- */

/* A string looked up: n bytes at s. */
struct strkey {
	const char *s;
	size_t n;
};

/* Is string id idx the key? */
static int str_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct strtab *t = ctx;
	const struct strkey *k = key;
	size_t end = idx + 1 < t->nr ? t->offs[idx + 1] : t->len; /* past its NUL */

	return end - t->offs[idx] - 1 == k->n && !memcmp(t->arena + t->offs[idx], k->s, k->n);
}

int strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	if (grow_array((void **)&t->arena, &t->cap, 1, 1) ||
	    grow_array((void **)&t->offs, &t->ocap, 1, sizeof(*t->offs)))
		return -ENOMEM;
	t->arena[0] = '\0'; /* id 0 = "" */
	t->len = 1;
	t->offs[0] = 0;
	t->nr = 1;
	return 0;
}

/* Returns the id of s[0..n) (interned), 0 for an empty string or on ENOMEM. */
uint32_t strtab_add(struct strtab *t, const char *s, size_t n)
{
	struct strkey k = { s, n };
	uint64_t h;
	uint32_t id;

	if (!n)
		return 0;
	h = asc_hash_bytes(s, n);
	if (asc_idxmap_find(&t->index, h, str_eq, t, &k, &id))
		return id;
	if (memchr(s, 0, n))
		return 0;
	/* s may point into the arena (an interned name, type_from_name): the realloc moves it */
	uintptr_t in = (uintptr_t)s - (uintptr_t)t->arena;

	if (grow_array((void **)&t->arena, &t->cap, t->len + n + 1, 1) ||
	    grow_array((void **)&t->offs, &t->ocap, t->nr + 1, sizeof(*t->offs)))
		return 0;
	if (in < t->len)
		s = t->arena + in;
	memcpy(t->arena + t->len, s, n);
	t->arena[t->len + n] = '\0';
	t->offs[t->nr] = t->len;
	if (asc_idxmap_add(&t->index, h, (uint32_t)t->nr))
		return 0;
	t->len += n + 1;
	return (uint32_t)t->nr++;
}

uint32_t strtab_cstr(struct strtab *t, const char *s)
{
	return strtab_add(t, s, strlen(s));
}
