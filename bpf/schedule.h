/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * schedule.h - torch_npu.profiler.schedule() as a pure function of the step
 * index, shared by the BPF gate (bpf/) and by userspace (the converter and
 * the unit tests), so both sides agree on which steps are recorded.
 *
 * Semantics are those of torch_npu's Schedule.__call__ (see
 * docs/torch_npu_format.md §5): steps below skip_first
 * are NONE; then, counting from skip_first (+ wait when skip_first_wait, which skips the first cycle's wait),
 * with n = wait + warmup + active, once repeat > 0 and step / n >= repeat
 * the action is NONE; else m = step % n gives NONE (< wait), WARMUP
 * (< wait + warmup), RECORD (< n - 1) or RECORD_AND_SAVE (the last step).
 * Parameters must already be sanitised (asc_sched_sanitise()).
 */
#ifndef __ASCBPF_SCHEDULE_H
#define __ASCBPF_SCHEDULE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

enum asc_sched_state {
	ASC_SCHED_NONE = 0,
	ASC_SCHED_WARMUP = 1,
	ASC_SCHED_RECORD = 2,
	ASC_SCHED_RECORD_AND_SAVE = 3,
};

struct asc_sched {
	__u32 skip_first;
	__u32 skip_first_wait; /* 0 or 1 */
	__u32 wait;
	__u32 warmup;
	__u32 active;  /* >= 1 */
	__u32 repeat;  /* 0 = forever */
	__u32 enabled; /* 0: no schedule, every step is RECORD */
	__u32 reserved;
};

/* torch_npu's parameter fixes: active <= 0 becomes 1 (negatives are 0 by type). */
static inline void asc_sched_sanitise(struct asc_sched *s)
{
	if (s->active == 0)
		s->active = 1;
	if (s->skip_first_wait > 1)
		s->skip_first_wait = 1;
}

static inline __u32 asc_sched_action(const struct asc_sched *s, __u64 step)
{
	__u64 n, m;

	if (!s->enabled)
		return ASC_SCHED_RECORD;
	if (step < s->skip_first)
		return ASC_SCHED_NONE;
	step -= s->skip_first;
	if (s->skip_first_wait)
		step += s->wait; /* the first cycle starts without its wait */
	n = (__u64)s->wait + s->warmup + s->active;
	/* "step / n >= repeat" with true division is the same as integer division here */
	if (s->repeat > 0 && step / n >= s->repeat)
		return ASC_SCHED_NONE;
	m = step % n;
	if (m < s->wait)
		return ASC_SCHED_NONE;
	if (m < (__u64)s->wait + s->warmup)
		return ASC_SCHED_WARMUP;
	if (m < n - 1)
		return ASC_SCHED_RECORD;
	return ASC_SCHED_RECORD_AND_SAVE;
}

/* The BPF gate is open only while a step is being recorded. */
static inline int asc_sched_recording(__u32 action)
{
	return action == ASC_SCHED_RECORD || action == ASC_SCHED_RECORD_AND_SAVE;
}

#endif /* __ASCBPF_SCHEDULE_H */
