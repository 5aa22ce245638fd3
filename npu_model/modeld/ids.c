// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ids.c - per-card id allocation (stream, event, model, notify, SQ, CQ ...)
 * and the 16-bit task-id wrap count.  Pure data structures: no locking here,
 * the card lock covers them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "modeld.h"

int md_ids_init(struct md_ids *ids, uint32_t max)
{
	memset(ids, 0, sizeof(*ids));
	if (max == 0)
		return -EINVAL;
	ids->bits = calloc((max + 63) / 64, sizeof(uint64_t));
	ids->owner = calloc(max, sizeof(*ids->owner));
	if (!ids->bits || !ids->owner) {
		md_ids_fini(ids);
		return -ENOMEM;
	}
	ids->max = max;
	return 0;
}

void md_ids_fini(struct md_ids *ids)
{
	free(ids->bits);
	free(ids->owner);
	memset(ids, 0, sizeof(*ids));
}

int md_ids_busy(const struct md_ids *ids, uint32_t id)
{
	return id < ids->max && (ids->bits[id / 64] >> (id % 64) & 1);
}

const void *md_ids_owner(const struct md_ids *ids, uint32_t id)
{
	return md_ids_busy(ids, id) ? ids->owner[id] : NULL;
}

int md_ids_alloc(struct md_ids *ids, const void *owner)
{
	uint32_t i, id;

	if (ids->used >= ids->max)
		return -ENOSPC;
	for (i = 0; i < ids->max; i++) {
		id = (ids->next + i) % ids->max;
		if (!md_ids_busy(ids, id)) {
			ids->bits[id / 64] |= 1ull << (id % 64);
			ids->owner[id] = owner;
			ids->used++;
			ids->next = (id + 1) % ids->max;
			return (int)id;
		}
	}
	return -ENOSPC;
}

int md_ids_free(struct md_ids *ids, uint32_t id, const void *owner)
{
	if (id >= ids->max)
		return -EINVAL;
	if (!md_ids_busy(ids, id))
		return -ENOENT;
	if (ids->owner[id] != owner)
		return -EPERM;
	ids->bits[id / 64] &= ~(1ull << (id % 64));
	ids->owner[id] = NULL;
	ids->used--;
	return 0;
}

uint32_t md_ids_free_owner(struct md_ids *ids, const void *owner)
{
	uint32_t id, n = 0;

	for (id = 0; id < ids->max; id++) {
		if (md_ids_busy(ids, id) && ids->owner[id] == owner) {
			md_ids_free(ids, id, owner);
			n++;
		}
	}
	return n;
}

/*
 * A task id at or below the previous one on the same stream means the 16-bit
 * counter went round.  (The runtime never skips 65536 ids between two tasks of
 * one stream, so one decrease is exactly one wrap.)
 */
uint32_t md_wrap_next(struct md_wrap *w, uint16_t task)
{
	if (w->seen && task <= w->last)
		w->flip++;
	w->seen = 1;
	w->last = task;
	return w->flip;
}
