/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * taskid.h - per-stream task ids and SQ completion arithmetic (libruntime).
 *
 * The real runtime gives each task of a stream a 16-bit id that wraps and
 * counts the wraps (the flip number; profiling task ids are flip << 16 | id).
 * Completion is read from the SQ head position the card reports (mod the SQ
 * depth), so the runtime keeps 64-bit counts and converts.  Pure functions,
 * unit-tested in tests/npu_model/test_taskid.c.
 */
#ifndef __NPU_MODEL_RT_TASKID_H
#define __NPU_MODEL_RT_TASKID_H

#include <stdint.h>

struct rt_taskid {
	uint16_t next; /* id the next task gets */
	uint16_t flip; /* how many times `next` has wrapped to 0 */
};

/* Takes the next id; *flip is the wrap count the task belongs to. */
static inline uint16_t rt_taskid_take(struct rt_taskid *t, uint16_t *flip)
{
	uint16_t id = t->next;

	*flip = t->flip;
	t->next = (uint16_t)(id + 1);
	if (t->next == 0)
		t->flip++;
	return id;
}

/* The 32-bit profiling task id of (flip, id), as the real runtime reports it. */
static inline uint32_t rt_taskid_full(uint16_t flip, uint16_t id)
{
	return ((uint32_t)flip << 16) | id;
}

/*
 * Tasks completed on an SQ: `sent` SQEs were submitted in total, the last one
 * ending at position `tail`; the card reports `head` (first SQE not done).
 * Valid while fewer than `depth` SQEs are outstanding, which the runtime
 * guarantees.  A head beyond the outstanding range is a protocol error: -1.
 */
static inline int64_t rt_sq_completed(uint64_t sent, uint32_t tail, uint32_t head, uint32_t depth)
{
	uint32_t outstanding;

	if (depth == 0 || head >= depth || tail >= depth)
		return -1;
	outstanding = (tail + depth - head) % depth;
	if (outstanding > sent)
		return -1;
	return (int64_t)(sent - outstanding);
}

#endif /* __NPU_MODEL_RT_TASKID_H */
