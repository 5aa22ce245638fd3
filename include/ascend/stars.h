/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ascend/stars.h - the STARS task scheduler's records as CANN defines them:
 * the 64-byte SQE header the runtime submits and the ACSQ task log record
 * the card writes to profiling channel 50.  Vendor ABI, shared by bpf/,
 * user/ and npu_model/ (the simulator static-asserts its layouts here).
 *
 * Mirrors (CANN 8.x runtime, hicann/runtime):
 *   rtStarsSqeHeader_t, rtStarsCommonSqe_t   rt_external_stars_define.h
 *   RT_STARS_SQE_TYPE_*                      rtStarsSqeType (same header)
 *   StarsLogHead, StarsAcsqLog               msprof's analysis data_struct.h
 *                                            (the A2 "acsq" log, 64 bytes; 950
 *                                            chips use a 32-byte DavidAcsqLog)
 *   ACSQ_TASK_*_FUNC_TYPE                    logType of StarsAcsqLog
 */
#ifndef __ASCEND_STARS_H
#define __ASCEND_STARS_H

#include <stdint.h>

#ifndef ASCEND_STATIC_ASSERT
#ifdef __cplusplus
#define ASCEND_STATIC_ASSERT static_assert
#else
#define ASCEND_STATIC_ASSERT _Static_assert
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* STARS SQE header (packed): 8 bytes, then 56 command bytes. */
#pragma pack(push, 1)
typedef struct tagStarsSqeHeader {
	uint8_t type	 : 6; /* RT_STARS_SQE_TYPE_* */
	uint8_t l1Lock	 : 1;
	uint8_t l1Unlock : 1;
	uint8_t ie	 : 2;
	uint8_t preP	 : 2;
	uint8_t postP	 : 2;
	uint8_t wrCqe	 : 1;
	uint8_t reserved : 1;
	uint16_t blockDim;
	uint16_t rtStreamId;
	uint16_t taskId;
} rtStarsSqeHeader_t;
#pragma pack(pop)

typedef struct tagRtStarsCommonSqe {
	rtStarsSqeHeader_t sqeHeader;
	uint32_t commandCustom[14];
} rtStarsCommonSqe_t;

/* rtStarsSqeHeader_t.type / StarsLogHead.sqeType values (rtStarsSqeType). */
#define RT_STARS_SQE_TYPE_FFTS		0 /* AI core kernel (AIC) */
#define RT_STARS_SQE_TYPE_AICPU		1
#define RT_STARS_SQE_TYPE_KS_AIV	2 /* AI vector core kernel */
#define RT_STARS_SQE_TYPE_PLACE_HOLDER	3
#define RT_STARS_SQE_TYPE_EVENT_RECORD	4
#define RT_STARS_SQE_TYPE_EVENT_WAIT	5
#define RT_STARS_SQE_TYPE_NOTIFY_RECORD 6 /* HCCL's Notify Record (IPC notify) */
#define RT_STARS_SQE_TYPE_NOTIFY_WAIT	7 /* HCCL's Notify Wait */
#define RT_STARS_SQE_TYPE_WRITE_VALUE	8
#define RT_STARS_SQE_TYPE_SDMA		11 /* memcpy / memset / HCCL Memcpy, Reduce_Inline */
#define RT_STARS_SQE_TYPE_ROCCE		16 /* RoCE (RDMA) */

/* STARS ACSQ task log record (64 bytes) delivered on channel 50. */
struct StarsLogHead {
	uint16_t logType : 6; /* ACSQ_TASK_*_FUNC_TYPE */
	uint16_t cnt	 : 4;
	uint16_t sqeType : 6; /* RT_STARS_SQE_TYPE_* */
	uint16_t hex6bd3;
};
struct StarsAcsqLog {
	struct StarsLogHead head;
	uint16_t streamId;
	uint16_t taskId;
	uint32_t sysCountLow; /* device system counter (INFO_TYPE_SYS_COUNT's) */
	uint32_t sysCountHigh;
	uint32_t reserved[12];
};
#define ACSQ_TASK_START_FUNC_TYPE 0
#define ACSQ_TASK_END_FUNC_TYPE	  1
#define STARS_ACSQ_LOG_SIZE	  64

ASCEND_STATIC_ASSERT(sizeof(rtStarsSqeHeader_t) == 8, "rtStarsSqeHeader_t is 8 bytes");
ASCEND_STATIC_ASSERT(sizeof(rtStarsCommonSqe_t) == 64, "rtStarsCommonSqe_t is 64 bytes");
ASCEND_STATIC_ASSERT(sizeof(struct StarsAcsqLog) == STARS_ACSQ_LOG_SIZE, "StarsAcsqLog size");

#ifdef __cplusplus
}
#endif

#endif /* __ASCEND_STARS_H */
