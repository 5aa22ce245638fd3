// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * prof.c - the card's profiling channels: reader sessions and the 64-byte
 * STARS ACSQ task log records of channel 50 (PROF_CHANNEL_STARS_SOC_LOG).
 *
 * Any process may start channel 50 on any card; each start is a session with
 * its own ring, so two readers never steal each other's records.  As on the
 * card, a session gets ACSQ task records only when its STARS log
 * configuration (StarsSocLogConfigT, include/ascend/hal.h) enables acsq_task:
 * a reader that passes none starts fine and reads nothing.  A task
 * completing while a session's ring is full loses its records for that
 * session only, and the session counts them (reported with every READ).
 * Caller holds the card lock for everything here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "modeld.h"

#define REC_SIZE sizeof(struct StarsAcsqLog)

_Static_assert(sizeof(struct StarsAcsqLog) == 64, "StarsAcsqLog is 64 bytes");

void md_stars_log(struct StarsAcsqLog out[2], const struct md_task *t, uint64_t c0, uint64_t c1)
{
	int i;

	memset(out, 0, 2 * sizeof(*out));
	for (i = 0; i < 2; i++) {
		uint64_t cnt = i ? c1 : c0;

		out[i].head.logType = i ? ACSQ_TASK_END_FUNC_TYPE : ACSQ_TASK_START_FUNC_TYPE;
		out[i].head.cnt = 0;
		out[i].head.sqeType = t->sqe.header.type & 0x3f;
		out[i].head.hex6bd3 = 0x6bd3;
		out[i].streamId = t->sqe.header.rtStreamId;
		out[i].taskId = t->sqe.header.taskId;
		out[i].sysCountLow = (uint32_t)cnt;
		out[i].sysCountHigh = (uint32_t)(cnt >> 32);
	}
}

struct md_prof_session *md_prof_find(struct md_card *c, uint32_t channel, const void *owner)
{
	int i;

	for (i = 0; i < MD_MAX_PROF_SESSIONS; i++)
		if (c->prof[i].ring && c->prof[i].owner == owner && c->prof[i].channel == channel)
			return &c->prof[i];
	return NULL;
}

/* StarsSocLogConfigT.acsq_task of a configuration of cfg_size bytes; -EINVAL if malformed. */
static int acsq_enabled(const void *cfg, uint32_t cfg_size)
{
	StarsSocLogConfigT full;

	if (!cfg && !cfg_size)
		return 0;
	if (!cfg || cfg_size < STARS_SOC_LOG_CONFIG_MIN_SIZE || cfg_size > sizeof(full) ||
	    cfg_size % sizeof(uint32_t))
		return -EINVAL;
	memset(&full, 0, sizeof(full));
	memcpy(&full, cfg, cfg_size);
	return full.acsq_task == TS_PROFILE_COMMAND_TYPE_PROFILING_ENABLE;
}

int md_prof_start(struct md_card *c, uint32_t channel, const void *owner, const void *cfg,
		  uint32_t cfg_size)
{
	int i, acsq;

	if (channel != PROF_CHANNEL_STARS_SOC_LOG)
		return -EOPNOTSUPP;
	acsq = acsq_enabled(cfg, cfg_size);
	if (acsq < 0)
		return acsq;
	if (md_prof_find(c, channel, owner))
		return -EBUSY;
	for (i = 0; i < MD_MAX_PROF_SESSIONS; i++) {
		struct md_prof_session *s = &c->prof[i];

		if (s->ring)
			continue;
		s->ring = malloc((size_t)NPU_PROF_RING_RECORDS * REC_SIZE);
		if (!s->ring)
			return -ENOMEM;
		s->owner = owner;
		s->channel = channel;
		s->rd = s->wr = s->dropped = 0;
		s->acsq_task = acsq;
		c->prof_active++;
		return 0;
	}
	return -ENOSPC;
}

static void session_end(struct md_card *c, struct md_prof_session *s)
{
	free(s->ring);
	memset(s, 0, sizeof(*s));
	c->prof_active--;
}

int md_prof_stop(struct md_card *c, uint32_t channel, const void *owner)
{
	struct md_prof_session *s = md_prof_find(c, channel, owner);

	if (!s)
		return -ENOENT;
	session_end(c, s);
	return 0;
}

uint32_t md_prof_free_owner(struct md_card *c, const void *owner)
{
	uint32_t n = 0;
	int i;

	for (i = 0; i < MD_MAX_PROF_SESSIONS; i++) {
		if (c->prof[i].ring && c->prof[i].owner == owner) {
			session_end(c, &c->prof[i]);
			n++;
		}
	}
	return n;
}

int md_prof_emit_task_counted(struct md_card *c, const struct md_task *t, int *dropped)
{
	struct StarsAcsqLog rec[2];
	int i, emitted = 0;

	*dropped = 0;

	md_stars_log(rec, t, md_counter_at(c, t->start_ns), md_counter_at(c, t->end_ns));
	for (i = 0; i < MD_MAX_PROF_SESSIONS; i++) {
		struct md_prof_session *s = &c->prof[i];

		if (!s->ring || s->channel != PROF_CHANNEL_STARS_SOC_LOG || !s->acsq_task)
			continue;
		/* Both records or neither: a reader never sees a start without its end. */
		if (s->wr - s->rd + 2 > NPU_PROF_RING_RECORDS) {
			s->dropped += 2;
			(*dropped)++;
			continue;
		}
		memcpy(s->ring + (s->wr % NPU_PROF_RING_RECORDS) * REC_SIZE, &rec[0], REC_SIZE);
		memcpy(s->ring + ((s->wr + 1) % NPU_PROF_RING_RECORDS) * REC_SIZE, &rec[1],
		       REC_SIZE);
		s->wr += 2;
		emitted++;
	}
	if (emitted)
		pthread_cond_broadcast(&c->prof_cond);
	return emitted;
}

int md_prof_emit_task(struct md_card *c, const struct md_task *t)
{
	int dropped;

	return md_prof_emit_task_counted(c, t, &dropped);
}

uint32_t md_prof_take(struct md_prof_session *s, uint8_t *dst, uint32_t max)
{
	uint32_t n = 0;

	while (n < max && s->rd != s->wr) {
		uint32_t at = (uint32_t)(s->rd % NPU_PROF_RING_RECORDS);
		uint32_t run = NPU_PROF_RING_RECORDS - at;

		if (run > s->wr - s->rd)
			run = (uint32_t)(s->wr - s->rd);
		if (run > max - n)
			run = max - n;
		memcpy(dst + (size_t)n * REC_SIZE, s->ring + (size_t)at * REC_SIZE,
		       (size_t)run * REC_SIZE);
		n += run;
		s->rd += run;
	}
	return n;
}
