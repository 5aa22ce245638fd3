/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * hashmap.h - the one hash map of ascbpf's user space.
 *
 * Two shapes, both open addressing with linear probing at most half full,
 * and a power-of-two table that doubles on growth:
 *
 *  - struct asc_u64map: uint64_t key -> uint64_t value, every key allowed.
 *    For pointers, tids, packed (device, stream, task) keys, set members.
 *    Deletion shifts the run back (no tombstones), so a map that sees
 *    many insert/delete cycles does not degrade.
 *
 *  - struct asc_idxmap: a hash index over an array the caller owns
 *    (strings, records with composite keys).  A slot holds the item's
 *    index and 32 bits of its hash; the caller supplies the hash of what it
 *    looks for and an equality callback.  Growth needs no callback: an
 *    item's place is recomputed from the stored hash bits.  Holds at most
 *    2^31 items.
 *
 * Both start empty and zeroed (`struct asc_u64map m = { 0 };`) and allocate
 * on first insertion.  Functions return 0 / -errno (-ENOMEM on growth
 * failure, the map unchanged), lookups 1 (found) / 0 (absent).  Not
 * thread-safe: each map has one owner.
 */
#ifndef __ASCBPF_LIB_HASHMAP_H
#define __ASCBPF_LIB_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

/* A 64-bit finaliser (MurmurHash3's fmix64): every input bit moves every output bit. */
static inline uint64_t asc_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* FNV-1a over n bytes, finalised with asc_hash_u64. */
uint64_t asc_hash_bytes(const void *p, size_t n);

/* The hash of a NUL-terminated string. */
uint64_t asc_hash_str(const char *s);

struct asc_u64map {
	uint64_t *keys; /* key + 1; 0 = empty slot */
	uint64_t *vals;
	size_t cap;  /* slots, 0 or a power of two */
	size_t nr;   /* entries, the UINT64_MAX key included */
	int has_max; /* UINT64_MAX (which key + 1 cannot encode) is present */
	uint64_t max_val;
};

/* Inserts or replaces. */
int asc_u64map_put(struct asc_u64map *m, uint64_t key, uint64_t val);

/* 1 and *val (if val is not NULL) when key is present, else 0. */
int asc_u64map_get(const struct asc_u64map *m, uint64_t key, uint64_t *val);

/*
 * The value slot of key, for updates in place.  With insert, a missing key
 * is added with value 0 (NULL with errno ENOMEM if the map cannot grow);
 * without, NULL when absent.  The pointer is valid until the next insertion
 * or deletion.
 */
uint64_t *asc_u64map_slot(struct asc_u64map *m, uint64_t key, int insert);

/* 1 if key was present and is removed, 0 if absent. */
int asc_u64map_del(struct asc_u64map *m, uint64_t key);

/*
 * Iteration in table order: start with *pos = 0; returns 1 with key/val set
 * while entries remain, then 0.  The map must not change meanwhile.
 */
int asc_u64map_next(const struct asc_u64map *m, size_t *pos, uint64_t *key, uint64_t *val);

/* Empties the map and frees its memory; the map can be used again. */
void asc_u64map_free(struct asc_u64map *m);

/* Memory the map holds, in bytes (for the benchmarks' per-event figures). */
size_t asc_u64map_bytes(const struct asc_u64map *m);

struct asc_idxmap {
	uint64_t *slots; /* (hash32 << 32) | (index + 1); 0 = empty */
	size_t cap, nr;
};

/* Does item idx of the caller's array equal key?  Non-zero when it does. */
typedef int (*asc_idxmap_eq_fn)(const void *ctx, uint32_t idx, const void *key);

/*
 * 1 and *idx when an item with this hash equals key (eq decides), else 0.
 * Items of equal hash are tried in insertion order.
 */
int asc_idxmap_find(const struct asc_idxmap *m, uint64_t hash, asc_idxmap_eq_fn eq, const void *ctx,
		    const void *key, uint32_t *idx);

/*
 * Adds item idx (< 2^31) under hash.  The caller looks it up first if
 * duplicates must not be added: the map does not compare on insertion.
 */
int asc_idxmap_add(struct asc_idxmap *m, uint64_t hash, uint32_t idx);

void asc_idxmap_free(struct asc_idxmap *m);
size_t asc_idxmap_bytes(const struct asc_idxmap *m);

#endif /* __ASCBPF_LIB_HASHMAP_H */
