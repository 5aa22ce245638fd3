// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * hccl.c - decoding of HCCL_OP records (hccl.h).
 */
#include <string.h>
#include "capture/hccl.h"

static const struct {
	const char *api;
	const char *msprof;
} ops[] = {
	[ASC_HCCL_OPK_ALLREDUCE] = { "HcclAllReduce", "allReduce" },
	[ASC_HCCL_OPK_BROADCAST] = { "HcclBroadcast", "broadcast" },
	[ASC_HCCL_OPK_ALLGATHER] = { "HcclAllGather", "allGather" },
	[ASC_HCCL_OPK_REDUCESCATTER] = { "HcclReduceScatter", "reduceScatter" },
	[ASC_HCCL_OPK_REDUCE] = { "HcclReduce", "reduce" },
	[ASC_HCCL_OPK_ALLTOALL] = { "HcclAlltoAll", "alltoall" },
	[ASC_HCCL_OPK_ALLTOALLV] = { "HcclAlltoAllV", "alltoallv" },
	[ASC_HCCL_OPK_SEND] = { "HcclSend", "send" },
	[ASC_HCCL_OPK_RECV] = { "HcclRecv", "receive" },
	[ASC_HCCL_OPK_BARRIER] = { "HcclBarrier", "barrier" },
};
#define NR_OPS (sizeof(ops) / sizeof(ops[0]))

enum asc_hccl_opk asc_hccl_op_of(const char *sym)
{
	size_t i;

	for (i = 1; sym && i < NR_OPS; i++)
		if (!strcmp(sym, ops[i].api))
			return (enum asc_hccl_opk)i;
	return ASC_HCCL_OPK_UNKNOWN;
}

const char *asc_hccl_op_api(enum asc_hccl_opk op)
{
	return op > 0 && (size_t)op < NR_OPS ? ops[op].api : "?";
}

const char *asc_hccl_op_msprof(enum asc_hccl_opk op)
{
	return op > 0 && (size_t)op < NR_OPS ? ops[op].msprof : "?";
}

int asc_hccl_decode(enum asc_hccl_opk op, const struct asc_hccl_op *rec, struct asc_hccl_call *c)
{
	const __u64 *a = rec->args;

	memset(c, 0, sizeof(*c));
	c->op = op;
	c->redop = c->root = c->peer = -1;
	switch (op) {
	case ASC_HCCL_OPK_ALLREDUCE:	 /* send, recv, count, dtype, op, comm, stream */
	case ASC_HCCL_OPK_REDUCESCATTER: /* send, recv, recvCount, dtype, op, comm, stream */
		c->send_buf = a[0], c->recv_buf = a[1], c->count = a[2];
		c->dtype = (uint32_t)a[3], c->redop = (int32_t)a[4];
		c->comm = a[5], c->stream = a[6];
		return 0;
	case ASC_HCCL_OPK_REDUCE: /* send, recv, count, dtype, op, root, comm, stream */
		c->send_buf = a[0], c->recv_buf = a[1], c->count = a[2];
		c->dtype = (uint32_t)a[3], c->redop = (int32_t)a[4], c->root = (int32_t)a[5];
		c->comm = a[6], c->stream = a[7];
		return 0;
	case ASC_HCCL_OPK_BROADCAST: /* buf, count, dtype, root, comm, stream */
		c->send_buf = c->recv_buf = a[0], c->count = a[1], c->dtype = (uint32_t)a[2];
		c->root = (int32_t)a[3], c->comm = a[4], c->stream = a[5];
		return 0;
	case ASC_HCCL_OPK_ALLGATHER: /* send, recv, sendCount, dtype, comm, stream */
		c->send_buf = a[0], c->recv_buf = a[1], c->count = a[2];
		c->dtype = (uint32_t)a[3], c->comm = a[4], c->stream = a[5];
		return 0;
	case ASC_HCCL_OPK_ALLTOALL:
		/* send, sendCount, sendType, recv, recvCount, recvType, comm, stream */
		c->send_buf = a[0], c->count = a[1], c->dtype = (uint32_t)a[2], c->recv_buf = a[3];
		c->comm = a[6], c->stream = a[7];
		return 0;
	case ASC_HCCL_OPK_ALLTOALLV:
		/* send, sendCounts, sdispls, sendType, recv, recvCounts, rdispls, recvType,
		 * comm, stream */
		c->send_buf = a[0], c->counts_ptr = a[1], c->dtype = (uint32_t)a[3];
		c->recv_buf = a[4], c->comm = a[8], c->stream = a[9];
		return 0;
	case ASC_HCCL_OPK_SEND: /* buf, count, dtype, destRank, comm, stream */
	case ASC_HCCL_OPK_RECV: /* buf, count, dtype, srcRank, comm, stream */
		c->send_buf = c->recv_buf = a[0], c->count = a[1], c->dtype = (uint32_t)a[2];
		c->peer = (int32_t)a[3], c->comm = a[4], c->stream = a[5];
		return 0;
	case ASC_HCCL_OPK_BARRIER: /* comm, stream */
		c->comm = a[0], c->stream = a[1];
		return 0;
	default:
		return -1;
	}
}
