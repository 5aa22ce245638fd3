/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * npu_sqe.h - the 64-byte SQE npu_model's libruntime submits with
 * halSqTaskSend() and npu-modeld executes.
 *
 * THIS IS THE CONTRACT between the runtime (engineer A: npu_model/runtime/)
 * and the card daemon (engineer B: npu_model/modeld/): the daemon executes
 * tasks from exactly this layout, nothing else.  Change it only additively
 * (use the reserved bytes) and tell the other side.
 *
 * Bytes 0..7 are the real STARS SQE header (rtStarsSqeHeader_t, include/ascend/stars.h),
 * filled as the real runtime fills it: type = STARS SQE type (below),
 * blockDim, rtStreamId = the stream id halResourceIdAlloc(DRV_STREAM_ID) gave,
 * taskId = the stream's 16-bit task id (wraps at 65536).  That header is all
 * ascbpf reads at halSqTaskSend.  Bytes 8..63 are npu_model's own payload in
 * place of the real command words: what the card needs to run the task with
 * the cost model (npu_cost.h) and to journal it.
 *
 * Task semantics for the daemon:
 *   NPU_SQE_KIND_KERNEL     runs npu_cost_duration_ns(cfg, flops, bytes, task_type)
 *   NPU_SQE_KIND_MEMCPY     runs npu_cost_copy_ns(cfg, bytes, copy_kind); src/dst are
 *                           the addresses (device addresses from halMemAlloc, host
 *                           addresses of the submitting process); no data moves
 *   NPU_SQE_KIND_MEMSET     runs npu_cost_duration_ns(cfg, 0, bytes, NPU_TASK_MEMSET)
 *   NPU_SQE_KIND_EVENT_RECORD  marks event `event_id` (an id from
 *                           halResourceIdAlloc(DRV_EVENT_ID)) recorded when every earlier
 *                           task of the stream has finished
 *   NPU_SQE_KIND_EVENT_WAIT blocks the stream until event `event_id`'s latest record
 *                           (as of submission) has completed
 * Tasks of one stream run in submission order; different streams overlap.
 *
 * How the runtime uses the HAL (what the daemon must provide):
 *   - one SQ/CQ pair per stream: halResourceIdAlloc(DRV_STREAM_ID) for the stream id,
 *     then halSqCqAllocate(DRV_NORMAL_TYPE, sqeSize 64, cqeSize 12, sqeDepth 1024,
 *     info[0] = stream id) -> sqId, cqId;
 *   - submission: halSqTaskSend(dev, {DRV_NORMAL_TYPE, tsId 0, sqId, timeout, sqes,
 *     sqe_num >= 1}) returns in info->pos the SQ position of the first SQE; the
 *     runtime never has more than sqeDepth - 1 SQEs outstanding on one SQ;
 *   - completion (as on the real card, no CQE for tasks that succeed):
 *     halSqCqQuery(dev, {DRV_NORMAL_TYPE, tsId 0, sqId, cqId, DRV_SQCQ_PROP_SQ_HEAD})
 *     returns in value[0] the SQ head, i.e. the position of the first SQE not yet
 *     completed (mod sqeDepth).  Stream / event / device synchronize poll it until
 *     the head has passed the task waited for (sqHead == sqTail for a stream);
 *   - teardown: halSqCqFree, halResourceIdFree.
 */
#ifndef __NPU_MODEL_SQE_H
#define __NPU_MODEL_SQE_H

#include <stddef.h>
#include <stdint.h>

#include "ascend_hal.h"
#include "npu_cost.h"

#ifdef __cplusplus
extern "C" {
#endif

/* rtStarsSqeHeader_t.type values: RT_STARS_SQE_TYPE_* (include/ascend/stars.h). */

enum npu_sqe_kind {
	NPU_SQE_KIND_KERNEL = 1,
	NPU_SQE_KIND_MEMCPY = 2,
	NPU_SQE_KIND_MEMSET = 3,
	NPU_SQE_KIND_EVENT_RECORD = 4,
	NPU_SQE_KIND_EVENT_WAIT = 5,
	/*
	 * HCCL (npu_model/modeld/link.c): event_id is the notify key
	 * (card << 16 | id); a record may target another card's notify, a wait
	 * only its own card's; the k-th wait on a notify is satisfied by the end
	 * of its k-th record.
	 */
	NPU_SQE_KIND_NOTIFY_RECORD = 6,
	NPU_SQE_KIND_NOTIFY_WAIT = 7,
	/*
	 * A copy between cards (u.copy.src on the peer card, dst here, or the
	 * other way), timed by the link model; NPU_SQE_F_REDUCE: an inline
	 * reduce (Reduce_Inline) instead of a plain Memcpy.
	 */
	NPU_SQE_KIND_LINK_COPY = 8,
};

#define NPU_SQE_KERNEL_NAME_LEN 24 /* NUL-terminated, truncated if longer */

#pragma pack(push, 1)
struct npu_sqe {
	rtStarsSqeHeader_t header; /*  0: type, blockDim, rtStreamId, taskId */
	uint8_t kind;		   /*  8: enum npu_sqe_kind */
	uint8_t task_type;	   /*  9: enum npu_task_type (npu_cost.h) */
	uint8_t copy_kind;	   /* 10: NPU_COPY_* (MEMCPY only) */
	uint8_t flags;		   /* 11: NPU_SQE_F_* */
	uint16_t flip;		   /* 12: times this stream's taskId wrapped before it */
	uint16_t slow;		   /* 14: KERNEL: slow x as long (0, 1: normal; a fault) */
	uint32_t event_id;	   /* 16: EVENT_RECORD / EVENT_WAIT */
	uint32_t kernel_id;	   /* 20: the runtime's kernel id, 0 if none */
	uint64_t flops;		   /* 24: KERNEL: floating-point operations */
	uint64_t bytes;		   /* 32: KERNEL: HBM bytes moved; MEMCPY/MEMSET: count */
	union {			   /* 40: 24 bytes */
		char kernel_name[NPU_SQE_KERNEL_NAME_LEN]; /* KERNEL */
		struct {
			uint64_t src;	/* MEMCPY source address */
			uint64_t dst;	/* MEMCPY / MEMSET destination address */
			uint32_t value; /* MEMSET byte value */
			uint32_t reserved1;
		} copy;
	} u;
};
#pragma pack(pop)

/* The last SQE of one halSqTaskSend batch asks for a CQE (header.wrCqe = 1). */
#define NPU_SQE_F_SYNC	 0x1 /* runtime will wait for this task (synchronize) */
#define NPU_SQE_F_REDUCE 0x2 /* LINK_COPY: reduce into dst (Reduce_Inline) */

/* Device VAs: card N's heap starts at NPU_VA_BASE + N * NPU_VA_PER_CARD (the HAL's choice). */
#define NPU_VA_BASE	0x100000000000ull
#define NPU_VA_PER_CARD (1ull << 40)

_Static_assert(sizeof(struct npu_sqe) == 64, "an SQE is 64 bytes");
_Static_assert(offsetof(struct npu_sqe, kind) == 8, "payload starts after the STARS header");
_Static_assert(offsetof(struct npu_sqe, flops) == 24, "npu_sqe layout");
_Static_assert(offsetof(struct npu_sqe, u) == 40, "npu_sqe layout");

#ifdef __cplusplus
}
#endif

#endif /* __NPU_MODEL_SQE_H */
