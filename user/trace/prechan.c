// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * prechan.c - submissions of a process made before its device channel
 * started, and whether their device records reached its capture
 * (ASC_LOST_BEFORE_DEVCHANNEL): struct prechan in trace_priv.h.
 */
#include <errno.h>
#include <stdlib.h>
#include "trace/trace_priv.h"

static uint64_t prechan_key(uint32_t dev, uint16_t stream, uint16_t task)
{
	return ((uint64_t)dev << 32 | (uint32_t)stream << 16 | task) + 1;
}

static size_t prechan_home(uint64_t key, size_t cap)
{
	return (key * 0x9e3779b97f4a7c15ull) >> 20 & (cap - 1);
}

/* Doubles the table (load kept under 1/2); -ENOMEM, or -ENOSPC at PRECHAN_MAX. */
static int prechan_grow(struct prechan *p)
{
	size_t ncap = p->cap ? p->cap * 2 : 1024, i, j;
	uint64_t *nk;
	uint32_t *nv;

	if (p->nr >= PRECHAN_MAX)
		return -ENOSPC;
	nk = calloc(ncap, sizeof(*nk));
	nv = calloc(ncap, sizeof(*nv));
	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	for (j = 0; j < p->cap; j++) {
		if (!p->keys[j])
			continue;
		for (i = prechan_home(p->keys[j], ncap); nk[i]; i = (i + 1) & (ncap - 1))
			;
		nk[i] = p->keys[j];
		nv[i] = p->vals[j];
	}
	free(p->keys);
	free(p->vals);
	p->keys = nk;
	p->vals = nv;
	p->cap = ncap;
	return 0;
}

/* The value of key; with insert, a new zero one if absent (NULL if the set is full). */
static uint32_t *prechan_slot(struct prechan *p, uint64_t key, int insert)
{
	size_t i;

	if (p->cap)
		for (i = prechan_home(key, p->cap); p->keys[i]; i = (i + 1) & (p->cap - 1))
			if (p->keys[i] == key)
				return &p->vals[i];
	if (!insert || ((p->nr + 1) * 2 > p->cap && prechan_grow(p)))
		return NULL;
	for (i = prechan_home(key, p->cap); p->keys[i]; i = (i + 1) & (p->cap - 1))
		;
	p->keys[i] = key;
	p->vals[i] = 0;
	p->nr++;
	return &p->vals[i];
}

static struct prechan_stream *prechan_stream(struct prechan *p, uint32_t dev, uint16_t stream)
{
	unsigned int i;

	for (i = 0; i < p->nr_streams; i++)
		if (p->streams[i].dev == dev && p->streams[i].stream == stream)
			return &p->streams[i];
	if (p->nr_streams == PRECHAN_STREAMS)
		return NULL;
	p->streams[i] = (struct prechan_stream){ .dev = dev, .stream = stream };
	p->nr_streams++;
	return &p->streams[i];
}

/*
 * An SQE record of the process: keeps its headers stamped before the channel
 * opened; of the later ones notes each stream's first.
 */
void prechan_on_sqe(struct prechan *p, const struct asc_sqe *q)
{
	uint32_t k, n = q->nr_kept < ASC_MAX_SQES ? q->nr_kept : ASC_MAX_SQES;

	if (!p->on)
		return;
	if (p->open_ns && q->hdr.ts_ns >= p->open_ns) {
		for (k = 0; k < n; k++) {
			struct prechan_stream *st = prechan_stream(p, q->dev_id,
								   q->sqe[k].stream_id);

			if (st && !st->has_first) {
				st->first_after = q->sqe[k].task_id;
				st->has_first = 1;
			}
		}
		return;
	}
	for (k = 0; k < n; k++) {
		uint32_t *v = prechan_slot(p, prechan_key(q->dev_id, q->sqe[k].stream_id,
							  q->sqe[k].task_id), 1);

		if (v)
			(*v)++;
		else
			p->overflow++;
	}
}

/* A device record delivered to the process's capture. */
void prechan_on_devtask(struct prechan *p, const struct asc_devtask *d)
{
	struct prechan_stream *st;
	uint32_t *v;

	if (!p->on)
		return;
	st = prechan_stream(p, d->dev_id, d->stream_id);
	if (st && st->settled)
		return;
	if (st && st->has_first && (uint16_t)(d->task_id - st->first_after) < 0x8000) {
		st->settled = 1;
		return;
	}
	v = prechan_slot(p, prechan_key(d->dev_id, d->stream_id, d->task_id), p->young_drains > 0);
	if (v)
		*v |= PRECHAN_SEEN;
}

/* Kept submissions without a device record. */
uint64_t prechan_count(const struct prechan *p)
{
	uint64_t n = p->overflow;
	size_t i;

	for (i = 0; i < p->cap; i++)
		if (p->keys[i] && !(p->vals[i] & PRECHAN_SEEN))
			n += p->vals[i];
	return n;
}

void prechan_free(struct prechan *p)
{
	free(p->keys);
	free(p->vals);
	p->keys = NULL;
	p->vals = NULL;
	p->cap = p->nr = 0;
	p->on = 0;
}
