/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * comm.h - the communication (HCCL) view of one rank's capture, and the
 * numbers msprof's communication analysis derives from it: what
 * communication.json, communication_matrix.json, the HCCL rows of
 * trace_view.json and `ascbpf report`'s cluster findings are made of.
 *
 * The view is three flat arrays: communicators (groups), collective / p2p
 * operations (one per HCCL API call that ran on the device), and their
 * device tasks (Notify_Record, Notify_Wait, Memcpy, Reduce_Inline,
 * RDMASend), each task pointing at its op, each op at its group.  Times are
 * wall-clock ns as in correlate.h.  Tests and the builder fill it; the
 * functions below only read it.
 *
 * The analysis follows msprof (github.com/Ascend/msprof,
 * analysis/msparser/cluster/communication_parser.py, communication_matrix_parser.py,
 * meta_parser.py) as recorded in tests/data/torch_npu_format/communication.json:
 *   - time info is computed on the op's master plane only: Elapse = last end -
 *     first start of its tasks; Transit = sum of its transit tasks (SDMA
 *     Memcpy / Reduce_Inline not ON_CHIP, RDMA payload runs); Wait = sum of
 *     its Notify_Wait; Synchronization = the Notify_Waits before the first
 *     transit; Idle = Elapse - Transit - Wait; ratios wait/(wait+transit) and
 *     sync/(sync+transit) rounded to 4 places;
 *   - bandwidth info uses every plane, per link type HCCS / PCIE / SIO
 *     (SDMA for any other link type), SDMA adding the three;
 *   - the matrix, per link "src-dst", uses every transit task, ON_CHIP ones
 *     as LOCAL.
 */
#ifndef __ASCBPF_COMM_H
#define __ASCBPF_COMM_H

#include <stddef.h>
#include <stdint.h>

#define ASC_COMM_NO_RANK 0xffffffffu /* dst rank of a local task */

/* Task kinds, named as msprof names them ("task type" in trace_view.json). */
enum asc_comm_kind {
	ASC_CT_OTHER = 0,
	ASC_CT_NOTIFY_RECORD, /* "Notify_Record" */
	ASC_CT_NOTIFY_WAIT,   /* "Notify_Wait" */
	ASC_CT_MEMCPY,	      /* "Memcpy" */
	ASC_CT_REDUCE_INLINE, /* "Reduce_Inline" */
	ASC_CT_RDMA_SEND,     /* "RDMASend" */
	ASC_CT__NR
};

/* transport type of a task ("transport type") */
enum asc_comm_transport { ASC_TP_SDMA = 0, ASC_TP_RDMA, ASC_TP_LOCAL, ASC_TP__NR };

/* link type of a task ("link type") */
enum asc_comm_link {
	ASC_LK_INVALID = 0, /* "INVALID_TYPE" */
	ASC_LK_ON_CHIP,
	ASC_LK_HCCS,
	ASC_LK_PCIE,
	ASC_LK_ROCE,
	ASC_LK_SIO,
	ASC_LK_HCCS_SW,
	ASC_LK__NR
};

/* The bandwidth-info transports of communication.json, in its key order. */
enum asc_comm_bwtype {
	ASC_BW_RDMA = 0,
	ASC_BW_HCCS,
	ASC_BW_PCIE,
	ASC_BW_SDMA,
	ASC_BW_SIO,
	ASC_BW__NR
};

struct asc_comm_group {
	char name[128];	  /* HCCL communicator name (the "@group" of op keys) */
	char pg_name[64]; /* torch process-group name, "" if unknown */
	uint32_t rank_size;
	int32_t rank;	       /* this rank in the group, -1 unknown */
	int32_t *global_ranks; /* rank_size entries, NULL if unknown */
	int64_t create_ns;
};

struct asc_comm_op {
	char name[64]; /* "hcom_allReduce__586_0_1" */
	int32_t group; /* index into groups[], -1 unknown */
	uint32_t device;
	int64_t start_ns, end_ns;	    /* on the device (the op's task span), 0 if none */
	int64_t host_start_ns, host_end_ns; /* the HCCL API call, 0 if not captured */
	uint32_t tid;			    /* thread of the API call */
	uint64_t seq;			    /* per-group sequence number of the collective */
	uint64_t count;			    /* elements */
	uint64_t bytes;			    /* payload bytes, 0 unknown */
	char data_type[16];		    /* "FP32"; "" unknown */
	char alg_type[32];		    /* "MESH-RING"; "" unknown */
	int32_t root;			    /* root / peer rank, -1 none */
	size_t task0, ntasks;		    /* its tasks: tasks[task0 .. task0 + ntasks) */
	int32_t step;			    /* step id or -1 */
	uint32_t flags;			    /* ASC_COMM_OP_* */
	int32_t call; /* its Hccl* API call (Level1+), index into calls[], -1 */
};
#define ASC_COMM_OP_NO_END 0x1 /* entered but never completed on the device (hang) */

struct asc_comm_task {
	int64_t start_ns, end_ns;
	int32_t op; /* index into ops[] */
	uint32_t plane;
	uint8_t kind, transport, link, master; /* master: on the op's master plane */
	uint32_t src_rank, dst_rank; /* ranks in the group; dst ASC_COMM_NO_RANK for local */
	uint64_t size;		     /* bytes */
	uint64_t notify_id;
	uint32_t stream, task_id, context_id;
	uint32_t flags;	    /* ASC_COMM_T_* */
	char data_type[16]; /* "FP32", "INVALID_TYPE" */
	int32_t kernel;	    /* its device task in the correlation (kernels[]), -1 */
	uint32_t rdma_type; /* msprof's RdmaType: 0 notify, 1 payload, 65535 none */
};
#define ASC_COMM_T_RDMA_PAYLOAD 0x1 /* msprof's rdma_type RDMA_SEND_PAYLOAD */

struct asc_comm {
	struct asc_comm_group *groups;
	size_t nr_groups;
	struct asc_comm_op *ops;
	size_t nr_ops; /* by device start */
	struct asc_comm_task *tasks;
	size_t nr_tasks;     /* grouped by op, by start */
	int32_t global_rank; /* this process's rank, -1 unknown */
};

struct asc_capture_reader;
struct asc_corr;
/*
 * Reads the HCCL records of the capture (from its first frame) and joins
 * them with c's device tasks (comm_build.c).  An empty view without HCCL
 * records.  0 or -errno (m is then empty).
 */
int asc_comm_build(struct asc_capture_reader *r, const struct asc_corr *c, struct asc_comm *m);
void asc_comm_free(struct asc_comm *m);

/* One communicator a process joined (asc_comm_members()). */
struct asc_comm_member {
	char group[128];
	int32_t group_rank;  /* its rank in the group */
	int32_t global_rank; /* the process's rank (PROCESS record), -1 unknown */
	uint32_t nranks;     /* group size, 0 unknown */
};
int asc_comm_members(struct asc_capture_reader *r, struct asc_comm_member **out, size_t *nr);

const char *asc_comm_kind_name(unsigned int kind);
const char *asc_comm_transport_name(unsigned int tp);
const char *asc_comm_link_name(unsigned int lk);
const char *asc_comm_bwtype_name(unsigned int bw);
/* p2p (hcom_send / hcom_receive / hcom_batchsendrecv, any case) or collective? */
int asc_comm_is_p2p(const char *op_name);
/* torch_npu's op type of a name ("allreduce" for hcom_allReduce__1_0_1), into buf. */
const char *asc_comm_op_type(const char *op_name, char *buf, size_t len);

/*
 * A value as Python holds it: msprof's dicts start at int 0 and become
 * floats when anything is added, and json.dumps shows which (`0` / `0.0`).
 */
struct asc_pyval {
	double v;
	int isf;
};

struct asc_comm_time {
	double start_us;  /* "Start Timestamp(us)" */
	int64_t start_ns; /* the same, ns: first master task start */
	struct asc_pyval elapse, transit, wait, sync, idle, wait_ratio, sync_ratio; /* ms */
};

struct asc_comm_sizebin {
	double size_mb;
	uint64_t count;
	double time_ms;
};

struct asc_comm_bw {
	struct asc_pyval size_mb, time_ms, bw, large_ratio;
	struct asc_comm_sizebin *bins; /* "Size Distribution", in first-seen order */
	size_t nbins;
};

/* Python's round(x, 4). */
double asc_py_round4(double x);

/* Time info of op i (0 on a op without master tasks: -ENODATA). */
int asc_comm_op_time(const struct asc_comm *m, size_t i, struct asc_comm_time *t);
/* Bandwidth info of op i, bw[ASC_BW__NR]; free with asc_comm_bw_free(). -ENOMEM. */
int asc_comm_op_bw(const struct asc_comm *m, size_t i, struct asc_comm_bw *bw);
void asc_comm_bw_free(struct asc_comm_bw *bw);

/* One link of one op in the matrix. */
struct asc_comm_link_info {
	uint32_t src, dst;
	int transport; /* matrix Transport Type as a link enum (HCCS, ON_CHIP) */
	double size_mb, time_ms;
	uint64_t packets, large_packets;
};
/* The links of op i in msprof's order (planes in first-seen order); free(*out). */
int asc_comm_op_links(const struct asc_comm *m, size_t i, struct asc_comm_link_info **out,
		      size_t *nr);
/* The matrix's transport name of a link enum (ON_CHIP -> "LOCAL", HCCS_SW -> "HCCS"). */
const char *asc_comm_matrix_transport(int link);

/* Union of the device spans of the ops of device dev, sorted; free(*out). -ENOMEM. */
struct asc_span64 {
	int64_t s, e;
};
int asc_comm_spans(const struct asc_comm *m, uint32_t dev, struct asc_span64 **out, size_t *nr);

#endif /* __ASCBPF_COMM_H */
