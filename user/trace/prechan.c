// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * prechan.c - submissions of a process made before its device channel
 * started, and whether their device records reached its capture
 * (ASC_LOST_BEFORE_DEVCHANNEL): struct prechan in trace_priv.h.
 */
#include "lib/hashmap.h"
#include "trace/trace_priv.h"

static uint64_t prechan_key(uint32_t dev, uint16_t stream, uint16_t task)
{
	return (uint64_t)dev << 32 | (uint32_t)stream << 16 | task;
}

/*
 * The value of key; with insert, a new zero one if absent.  NULL if absent
 * without insert, or when the set holds PRECHAN_MAX keys or cannot grow.
 */
static uint64_t *prechan_slot(struct prechan *p, uint64_t key, int insert)
{
	/* full: only the keys already kept */
	return asc_u64map_slot(&p->kept, key, insert && p->kept.nr < PRECHAN_MAX);
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
		uint64_t *v = prechan_slot(
			p, prechan_key(q->dev_id, q->sqe[k].stream_id, q->sqe[k].task_id), 1);

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
	uint64_t *v;

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
	uint64_t n = p->overflow, key, v;
	size_t pos = 0;

	while (asc_u64map_next(&p->kept, &pos, &key, &v))
		if (!(v & PRECHAN_SEEN))
			n += v;
	return n;
}

void prechan_free(struct prechan *p)
{
	asc_u64map_free(&p->kept);
	p->on = 0;
}
