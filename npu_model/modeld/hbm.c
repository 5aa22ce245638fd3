// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * hbm.c - one card's device-memory accounting: capacity, populated ranges
 * and their owners.  Ranges are charged in NPU_HBM_PAGE units, so many tiny
 * allocations fill the card sooner than their byte sum, as on a real one.
 * No locking here (the card lock covers it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "modeld.h"

void md_hbm_init(struct md_hbm *h, uint64_t capacity)
{
	memset(h, 0, sizeof(*h));
	h->capacity = capacity;
}

void md_hbm_fini(struct md_hbm *h)
{
	free(h->r);
	memset(h, 0, sizeof(*h));
}

static int overlaps(const struct md_hbm_range *r, uint64_t va, uint64_t size)
{
	return va < r->va + r->size && r->va < va + size;
}

int md_hbm_alloc(struct md_hbm *h, uint64_t va, uint64_t size, const void *owner)
{
	uint64_t charged;
	uint32_t i;

	if (size == 0 || va + size < va || size > UINT64_MAX - NPU_HBM_PAGE)
		return -EINVAL;
	charged = (size + NPU_HBM_PAGE - 1) / NPU_HBM_PAGE * NPU_HBM_PAGE;
	for (i = 0; i < h->n; i++)
		if (h->r[i].owner == owner && overlaps(&h->r[i], va, size))
			return -EEXIST;
	if (charged > h->capacity - h->used) {
		h->oom_count++;
		return -ENOMEM;
	}
	if (h->n == h->cap) {
		uint32_t ncap = h->cap ? h->cap * 2 : 64;
		struct md_hbm_range *nr = realloc(h->r, ncap * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		h->r = nr;
		h->cap = ncap;
	}
	h->r[h->n++] = (struct md_hbm_range){
		.va = va, .size = size, .charged = charged, .owner = owner
	};
	h->used += charged;
	if (h->used > h->peak)
		h->peak = h->used;
	return 0;
}

static void remove_at(struct md_hbm *h, uint32_t i)
{
	h->used -= h->r[i].charged;
	h->r[i] = h->r[--h->n];
}

int md_hbm_free(struct md_hbm *h, uint64_t va, const void *owner)
{
	uint32_t i;

	for (i = 0; i < h->n; i++) {
		if (h->r[i].owner == owner && h->r[i].va == va) {
			remove_at(h, i);
			return 0;
		}
	}
	return -ENOENT;
}

int md_hbm_contains(const struct md_hbm *h, uint64_t va, uint64_t size, const void *owner)
{
	uint32_t i;

	if (va + size < va)
		return 0;
	for (i = 0; i < h->n; i++) {
		const struct md_hbm_range *r = &h->r[i];

		if (r->owner == owner && va >= r->va && va + size <= r->va + r->size)
			return 1;
	}
	return 0;
}

uint64_t md_hbm_used_by(const struct md_hbm *h, const void *owner)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < h->n; i++)
		if (h->r[i].owner == owner)
			sum += h->r[i].charged;
	return sum;
}

uint32_t md_hbm_free_owner(struct md_hbm *h, const void *owner)
{
	uint32_t i = 0, n = 0;

	while (i < h->n) {
		if (h->r[i].owner == owner) {
			remove_at(h, i);
			n++;
		} else {
			i++;
		}
	}
	return n;
}
