// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * hashmap.c - open-addressing maps (see hashmap.h for the contract).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hashmap.h"

#define MIN_CAP 64

uint64_t asc_hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return asc_hash_u64(h);
}

uint64_t asc_hash_str(const char *s)
{
	return asc_hash_bytes(s, strlen(s));
}

/* ---- u64 -> u64 ---- */

static size_t u64_home(const struct asc_u64map *m, uint64_t stored)
{
	return asc_hash_u64(stored) & (m->cap - 1);
}

/* Places stored (key + 1) known to be absent; the table has room. */
static void u64_place(struct asc_u64map *m, uint64_t stored, uint64_t val)
{
	size_t i = u64_home(m, stored);

	while (m->keys[i])
		i = (i + 1) & (m->cap - 1);
	m->keys[i] = stored;
	m->vals[i] = val;
}

static int u64_grow(struct asc_u64map *m)
{
	struct asc_u64map n = *m;
	size_t i;

	n.cap = m->cap ? m->cap * 2 : MIN_CAP;
	if (n.cap < m->cap)
		return -ENOMEM;
	n.keys = calloc(n.cap, sizeof(*n.keys));
	n.vals = malloc(n.cap * sizeof(*n.vals));
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++)
		if (m->keys[i])
			u64_place(&n, m->keys[i], m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = n;
	return 0;
}

/* The slot index holding stored, or -1. */
static long u64_find(const struct asc_u64map *m, uint64_t stored)
{
	size_t i;

	if (!m->cap)
		return -1;
	for (i = u64_home(m, stored); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == stored)
			return (long)i;
	return -1;
}

uint64_t *asc_u64map_slot(struct asc_u64map *m, uint64_t key, int insert)
{
	uint64_t stored = key + 1;
	long at;
	size_t i;

	if (key == UINT64_MAX) {
		if (!m->has_max) {
			if (!insert)
				return NULL;
			m->has_max = 1;
			m->max_val = 0;
			m->nr++;
		}
		return &m->max_val;
	}
	at = u64_find(m, stored);
	if (at >= 0)
		return &m->vals[at];
	if (!insert)
		return NULL;
	if ((m->nr + 1) * 2 > m->cap && u64_grow(m)) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = u64_home(m, stored); m->keys[i]; i = (i + 1) & (m->cap - 1))
		;
	m->keys[i] = stored;
	m->vals[i] = 0;
	m->nr++;
	return &m->vals[i];
}

int asc_u64map_put(struct asc_u64map *m, uint64_t key, uint64_t val)
{
	uint64_t *v = asc_u64map_slot(m, key, 1);

	if (!v)
		return -ENOMEM;
	*v = val;
	return 0;
}

int asc_u64map_get(const struct asc_u64map *m, uint64_t key, uint64_t *val)
{
	long at;

	if (key == UINT64_MAX) {
		if (m->has_max && val)
			*val = m->max_val;
		return m->has_max;
	}
	at = u64_find(m, key + 1);
	if (at < 0)
		return 0;
	if (val)
		*val = m->vals[at];
	return 1;
}

int asc_u64map_del(struct asc_u64map *m, uint64_t key)
{
	size_t mask = m->cap - 1, hole, j, home;
	long at;

	if (key == UINT64_MAX) {
		if (!m->has_max)
			return 0;
		m->has_max = 0;
		m->nr--;
		return 1;
	}
	at = u64_find(m, key + 1);
	if (at < 0)
		return 0;
	/*
	 * Backward shift: move each later member of the run into the hole
	 * unless its home lies cyclically in (hole, j], where it must stay.
	 */
	hole = (size_t)at;
	for (j = (hole + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
		home = u64_home(m, m->keys[j]);
		if (((j - home) & mask) < ((j - hole) & mask))
			continue;
		m->keys[hole] = m->keys[j];
		m->vals[hole] = m->vals[j];
		hole = j;
	}
	m->keys[hole] = 0;
	m->nr--;
	return 1;
}

int asc_u64map_next(const struct asc_u64map *m, size_t *pos, uint64_t *key, uint64_t *val)
{
	/* positions 0..cap-1 are slots; cap is the UINT64_MAX entry */
	while (*pos < m->cap) {
		size_t i = (*pos)++;

		if (m->keys[i]) {
			*key = m->keys[i] - 1;
			*val = m->vals[i];
			return 1;
		}
	}
	if (*pos == m->cap && m->has_max) {
		(*pos)++;
		*key = UINT64_MAX;
		*val = m->max_val;
		return 1;
	}
	return 0;
}

void asc_u64map_free(struct asc_u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

size_t asc_u64map_bytes(const struct asc_u64map *m)
{
	return m->cap * (sizeof(*m->keys) + sizeof(*m->vals));
}

/* ---- index over the caller's array ---- */

#define IDX_HASH(slot) ((uint32_t)((slot) >> 32))
#define IDX_ITEM(slot) ((uint32_t)(slot)-1)

static uint32_t idx_hash32(uint64_t hash)
{
	return (uint32_t)(hash >> 32) ^ (uint32_t)hash;
}

static void idx_place(struct asc_idxmap *m, uint64_t slot)
{
	size_t i = IDX_HASH(slot) & (m->cap - 1);

	while (m->slots[i])
		i = (i + 1) & (m->cap - 1);
	m->slots[i] = slot;
}

static int idx_grow(struct asc_idxmap *m)
{
	uint64_t *old = m->slots;
	size_t oldcap = m->cap, i, start;

	/* positions come from 32 hash bits, so the table stops growing there */
	if (oldcap >= ((size_t)1 << 32))
		return -ENOMEM;
	m->cap = oldcap ? oldcap * 2 : MIN_CAP;
	m->slots = calloc(m->cap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		m->cap = oldcap;
		return -ENOMEM;
	}
	/*
	 * Start after an empty slot (the table is at most half full), so that
	 * each run is moved from its start: items of equal hash keep their
	 * relative order, which find's "insertion order" promise needs.
	 */
	for (start = 0; start < oldcap && old[start]; start++)
		;
	for (i = 0; i < oldcap; i++) {
		uint64_t s = old[(start + i) & (oldcap - 1)];

		if (s)
			idx_place(m, s);
	}
	free(old);
	return 0;
}

int asc_idxmap_find(const struct asc_idxmap *m, uint64_t hash, asc_idxmap_eq_fn eq, const void *ctx,
		    const void *key, uint32_t *idx)
{
	uint32_t h = idx_hash32(hash);
	size_t i;

	if (!m->cap)
		return 0;
	for (i = h & (m->cap - 1); m->slots[i]; i = (i + 1) & (m->cap - 1)) {
		uint64_t s = m->slots[i];

		if (IDX_HASH(s) == h && eq(ctx, IDX_ITEM(s), key)) {
			*idx = IDX_ITEM(s);
			return 1;
		}
	}
	return 0;
}

int asc_idxmap_add(struct asc_idxmap *m, uint64_t hash, uint32_t idx)
{
	if (idx >= (1u << 31))
		return -EOVERFLOW;
	if ((m->nr + 1) * 2 > m->cap && idx_grow(m))
		return -ENOMEM;
	idx_place(m, ((uint64_t)idx_hash32(hash) << 32) | ((uint64_t)idx + 1));
	m->nr++;
	return 0;
}

void asc_idxmap_free(struct asc_idxmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

size_t asc_idxmap_bytes(const struct asc_idxmap *m)
{
	return m->cap * sizeof(*m->slots);
}
