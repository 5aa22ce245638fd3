/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * hccl.h - what an ASC_REC_HCCL_OP record's raw arguments mean: the op
 * from the probe's symbol, and its arguments by the prototypes of
 * include/ascend/hccl.h.  For every reader of captures (dump, convert,
 * report), so the decoding exists once.
 */
#ifndef __ASCBPF_CAPTURE_HCCL_H
#define __ASCBPF_CAPTURE_HCCL_H

#include <stdint.h>
#include "ascbpf_events.h"

enum asc_hccl_opk {
	ASC_HCCL_OPK_UNKNOWN = 0,
	ASC_HCCL_OPK_ALLREDUCE,
	ASC_HCCL_OPK_BROADCAST,
	ASC_HCCL_OPK_ALLGATHER,
	ASC_HCCL_OPK_REDUCESCATTER,
	ASC_HCCL_OPK_REDUCE,
	ASC_HCCL_OPK_ALLTOALL,
	ASC_HCCL_OPK_ALLTOALLV,
	ASC_HCCL_OPK_SEND,
	ASC_HCCL_OPK_RECV,
	ASC_HCCL_OPK_BARRIER,
};

/* One decoded call; fields an op does not have are 0 (root/peer: -1). */
struct asc_hccl_call {
	enum asc_hccl_opk op;
	uint64_t send_buf, recv_buf;
	uint64_t count;	     /* count of its prototype (AllGather sendCount, RS recvCount) */
	uint32_t dtype;	     /* HcclDataType (AlltoAll(V): sendType) */
	int32_t redop;	     /* HcclReduceOp, -1 if none */
	int32_t root;	     /* Broadcast / Reduce root, -1 if none */
	int32_t peer;	     /* Send destRank / Recv srcRank, -1 if none */
	uint64_t comm;	     /* HcclComm handle (the HCCL_COMM record's comm) */
	uint64_t stream;     /* aclrtStream */
	uint64_t counts_ptr; /* AlltoAllV: sendCounts (target address, uint64_t[nranks]) */
};

/* The op of an HCCL API symbol ("HcclAllReduce" -> ALLREDUCE), UNKNOWN if not an op. */
enum asc_hccl_opk asc_hccl_op_of(const char *sym);
/* The API name ("HcclAllReduce") and msprof's op name ("allReduce") of an op. */
const char *asc_hccl_op_api(enum asc_hccl_opk op);
const char *asc_hccl_op_msprof(enum asc_hccl_opk op);
/* Decodes an ENTRY record's args for op; 0, or -1 for an unknown op. */
int asc_hccl_decode(enum asc_hccl_opk op, const struct asc_hccl_op *rec, struct asc_hccl_call *out);

#endif /* __ASCBPF_CAPTURE_HCCL_H */
