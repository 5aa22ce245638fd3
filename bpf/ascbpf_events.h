/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ascbpf_events.h - the one ABI shared by the BPF programs, the loader, the
 * capture file and the converter.
 *
 * Contract:
 *  - Every record starts with struct asc_hdr; hdr.type says which struct
 *    follows, hdr.size is the record's total size in bytes.  Readers skip
 *    records whose type they do not know by hdr.size, so new types can be
 *    added without bumping ASC_CAPTURE_VERSION; changing an existing struct
 *    requires a bump.
 *  - Fixed-width fields only (no long, enum, bool or pointers), naturally
 *    aligned, sizes a multiple of 8.  user/capture/records.c holds a _Static_assert
 *    for every size below.
 *  - Records written by BPF have a fixed size per type.  Records written by
 *    userspace (types >= ASC_REC_USER_BASE) may carry a trailing string and
 *    therefore a variable size, always padded to 8 bytes.
 *  - Samples: one ring-buffer sample holds one record, or several that one
 *    BPF program run writes together (ENTER + QUEUE of a Dequeue, QUEUE +
 *    OPNAME of an Enqueue, ENTER + OPNAME), back to back in the order they
 *    would have had as separate samples, each with its own asc_hdr; their
 *    hdr.size values add up to the sample's size.  The consumer
 *    (user/trace/consumer.h) splits them: the capture file holds the same records,
 *    byte for byte, as if each had been a sample of its own.
 *  - All host times are CLOCK_MONOTONIC nanoseconds (bpf_ktime_get_ns()).
 *    Device times are raw system-counter ticks; the capture's clock records
 *    (ASC_REC_CLOCK, ASC_REC_DEVCLOCK) convert both to wall time.
 */
#ifndef __ASCBPF_EVENTS_H
#define __ASCBPF_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define ASC_CAPTURE_VERSION 1

/* Sizes of the inline payloads; changing any of them changes the ABI. */
#define ASC_MAX_ARGS	    6  /* x86-64 / aarch64 integer argument registers we read */
#define ASC_NAME_LEN	    64 /* op names from std::string / const char * */
#define ASC_MAX_SQES	    8  /* SQE headers kept per halSqTaskSend record */
#define ASC_IOCTL_ARG_LEN   48 /* leading bytes of an ioctl argument struct */
#define ASC_STACK_DEPTH	    32 /* user stack frames per stack record */
#define ASC_MODULE_NAME_LEN 16 /* davinci sub-module name ("TSDRV", "SVM", ...) */

/* the record types, aligned on '=' (.clang-format does not align assignments) */
// clang-format off
enum asc_rec_type {
	ASC_REC_INVALID		= 0,
	/* written by BPF (fixed size) */
	ASC_REC_ENTER		= 1,	/* function entry: probe id + raw arguments */
	ASC_REC_EXIT		= 2,	/* function return: probe id + return value */
	ASC_REC_OPNAME		= 3,	/* OpCommand::RunOpApiV2 / aclop op type string */
	ASC_REC_QUEUE		= 4,	/* Enqueue / Dequeue side of a task-queue slot */
	ASC_REC_SQE		= 5,	/* halSqTaskSend: SQE headers of one submission */
	ASC_REC_MEM		= 6,	/* one allocator event with totals */
	ASC_REC_IOCTL		= 7,	/* one ioctl on a davinci node, enter+exit */
	ASC_REC_STACK		= 8,	/* user stack of the ENTER record just before it (same tid) */
	ASC_REC_STEP		= 9,	/* step boundary seen by the step probe */
	ASC_REC_FDBIND		= 10,	/* 'Z' module bind on davinci_manager */
	ASC_REC_PYSTACK		= 11,	/* Python frames (code object ptr, instruction) of an ENTER */
	ASC_REC_TENSOR		= 12,	/* tensor dims/dtype of an aten op argument of an ENTER */
	ASC_REC_FUNCNAME	= 13,	/* kernel function handle -> kernel name (aclrtBinaryGetFunction, rtFunctionRegister) */
	ASC_REC_SEQNR		= 14,	/* autograd sequence number: aten op / backward node */
	ASC_REC_LAUNCH		= 15,	/* task-making runtime call, no API event */
	ASC_REC_HCCL_OP		= 16,	/* HCCL collective / p2p: arguments, result */
	ASC_REC_HCCL_COMM	= 17,	/* HCCL communicator: handle, group, nranks, rank */
	ASC_REC_HCCL_TASK	= 18,	/* HCCL's report of one comm task (MsprofHcclInfo) */
	ASC_REC_HCCL_HASH	= 19,	/* MsprofGetHashId: hash id -> task / group name */

	/* written by userspace into the capture file */
	ASC_REC_USER_BASE	= 64,
	ASC_REC_DEVTASK		= 64,	/* device task start/end from the profiling channel */
	ASC_REC_PROBE		= 65,	/* probe table entry: id -> layer, kind, library, symbol */
	ASC_REC_CLOCK		= 66,	/* CLOCK_MONOTONIC <-> CLOCK_REALTIME pair */
	ASC_REC_DEVCLOCK	= 67,	/* device counter frequency and (counter, monotonic) pair */
	ASC_REC_PROCESS		= 68,	/* traced process: pid, rank, device, comm / cmdline */
	ASC_REC_THREAD		= 69,	/* thread name: tid -> comm */
	ASC_REC_STATS		= 70,	/* per-CPU drop and event counters at end of trace */
	ASC_REC_CONFIG		= 71,	/* options as traced, "key=value" */
	ASC_REC_SYMBOL		= 72,	/* symbolised address (for stacks): addr -> "lib!sym+off" */
	ASC_REC_LOST		= 73,	/* records known lost (e.g. device channel overflow) */
	ASC_REC_PYFRAME		= 74,	/* resolved Python frame: (code, lasti) -> "file(line): func" */
	ASC_REC_ATEN_NAME	= 75,	/* aten op probe -> torch's op name (schemas) */
	ASC_REC_NODE_CLASS	= 76,	/* autograd node vtable range -> Node::name() */
};
// clang-format on

/* Layers, as the output files group events. */
/* aligned on '=' like the enum above */
// clang-format off
enum asc_layer {
	ASC_LAYER_FRAMEWORK	= 1,	/* aten ops, OpCommand, task queue (PTA) */
	ASC_LAYER_CANN		= 2,	/* aclnn*, aclop*, aclrt*, rt* */
	ASC_LAYER_DRIVER	= 3,	/* hal*, ioctls */
	ASC_LAYER_MEMORY	= 4,	/* allocator events */
	ASC_LAYER_DEVICE	= 5,	/* device task timing */
	ASC_LAYER_PYTHON	= 6,	/* Python functions / step markers */
	ASC_LAYER_HCCL		= 7,	/* HCCL API (Hccl*): communication */
	ASC_LAYER_UNWIND	= 8,	/* C++ runtime's unwinder: the unwind guard, no records */
};
// clang-format on

#ifndef __bpf__
/* A layer's name, as `ascbpf probes` and `ascbpf dump` print it; "?" for one not known here. */
static inline const char *asc_layer_label(unsigned int layer)
{
	static const char *const names[] = {
		[ASC_LAYER_FRAMEWORK] = "framework", [ASC_LAYER_CANN] = "cann",
		[ASC_LAYER_DRIVER] = "driver",	     [ASC_LAYER_MEMORY] = "memory",
		[ASC_LAYER_DEVICE] = "device",	     [ASC_LAYER_PYTHON] = "python",
		[ASC_LAYER_HCCL] = "hccl",	     [ASC_LAYER_UNWIND] = "unwind",
	};

	return layer < sizeof(names) / sizeof(names[0]) && names[layer] ? names[layer] : "?";
}
#endif

/* Common header of every record: 24 bytes. */
struct asc_hdr {
	__u16 type;	/* enum asc_rec_type */
	__u16 size;	/* total record size in bytes, including this header */
	__u32 tgid;	/* process (userspace pid) */
	__u32 tid;	/* thread (userspace tid) */
	__u32 probe_id; /* index into the probe table (ASC_REC_PROBE), or 0 */
	__u64 ts_ns;	/* CLOCK_MONOTONIC ns */
};

/* ASC_REC_ENTER: 72 bytes.  args[i] are the raw integer argument registers. */
struct asc_enter {
	struct asc_hdr hdr;
	__u64 args[ASC_MAX_ARGS];
};

/* ASC_REC_EXIT: 32 bytes. */
struct asc_exit {
	struct asc_hdr hdr;
	__u64 ret; /* raw return register (aclError / pointer / ...) */
};

/* ASC_REC_OPNAME: 96 bytes.  Emitted on entry of a probe that carries a name. */
struct asc_opname {
	struct asc_hdr hdr;
	__u32 len;   /* bytes in name, excluding the NUL; may be truncated */
	__u32 flags; /* ASC_OPNAME_TRUNCATED */
	char name[ASC_NAME_LEN];
};
#define ASC_OPNAME_TRUNCATED 0x1

/*
 * ASC_REC_QUEUE: 48 bytes.  One per Repository::Enqueue (producer thread) and
 * one per AsncExecFunc (acl_thread consumer); both carry the slot's
 * correlation id read from QueueParas at the same offset.
 */
struct asc_queue {
	struct asc_hdr hdr;
	__u64 correlation_id;
	__u64 stream;	  /* QueueParas.paramStream */
	__u32 param_type; /* QueueParamType (EXECUTE_OPAPI = 7, ...) */
	__u32 side;	  /* ASC_QUEUE_ENQUEUE / ASC_QUEUE_DEQUEUE */
};
#define ASC_QUEUE_ENQUEUE 0
#define ASC_QUEUE_DEQUEUE 1

/* One 8-byte STARS SQE header as submitted. */
struct asc_sqe_hdr {
	__u8 sqe_type; /* header type:6 */
	__u8 flags;    /* second header byte (ie, pre/post, wrCqe) */
	__u16 block_dim;
	__u16 stream_id; /* rtStreamId */
	__u16 task_id;	 /* 16-bit task id; wraps, the converter counts the wraps */
};

/*
 * ASC_REC_SQE: 104 bytes.  Written on entry of halSqTaskSend: one record per
 * ASC_MAX_SQES SQEs of the call (consecutive records, same tid and ts_ns, at
 * most 8 per call; SQEs beyond them are counted as an ASC_REC_LOST record).
 * Part k keeps the headers of SQEs k * ASC_MAX_SQES ... of the call.
 */
struct asc_sqe {
	struct asc_hdr hdr;
	__u32 dev_id;
	__u32 sq_id;
	__u32 sqe_num; /* SQEs of the call from this record's first one on (part 0: all) */
	__u32 nr_kept; /* headers present in sqe[] */
	struct asc_sqe_hdr sqe[ASC_MAX_SQES];
};

/* ASC_REC_MEM: 80 bytes. */
struct asc_mem {
	struct asc_hdr hdr;
	__u64 ptr;
	__s64 size;	       /* bytes; negative for frees, as torch_npu reports them */
	__u64 total_allocated; /* bytes, after this event */
	__u64 total_reserved;
	__u64 total_active;
	__u64 stream; /* stream pointer (or stream id) the block belongs to */
	__u16 device;
	__u8 component; /* ASC_MEM_PTA / ASC_MEM_GE / ASC_MEM_APP / ASC_MEM_WORKSPACE */
	__u8 data_type; /* ASC_MEM_MALLOC / ASC_MEM_FREE / ASC_MEM_BLOCK_FREE */
	__u32 reserved;
};
#define ASC_MEM_PTA	   0 /* torch_npu caching allocator */
#define ASC_MEM_GE	   1 /* CANN segment allocations (aclrtMalloc* / rtMalloc) */
#define ASC_MEM_APP	   2 /* driver-level device memory (halMemAlloc / SVM) */
#define ASC_MEM_WORKSPACE  3
#define ASC_MEM_MALLOC	   0
#define ASC_MEM_FREE	   1
#define ASC_MEM_BLOCK_FREE 2

/* ASC_REC_IOCTL: 104 bytes.  hdr.ts_ns is the entry time. */
struct asc_ioctl {
	struct asc_hdr hdr;
	__u64 exit_ns;
	__s64 ret; /* syscall return (0 or -errno) */
	__u32 fd;
	__u32 cmd;
	__u8 module;  /* ASC_MOD_* the fd is bound to, ASC_MOD_UNKNOWN if not seen */
	__u8 arg_len; /* bytes copied into arg[] (after the call) */
	__u16 reserved;
	__u32 reserved2;
	__u8 arg[ASC_IOCTL_ARG_LEN];
};
#define ASC_MOD_UNKNOWN 0
#define ASC_MOD_TSDRV	1
#define ASC_MOD_SVM	2
#define ASC_MOD_DEVMNG	3
#define ASC_MOD_OTHER	4

/* ASC_REC_FDBIND: 48 bytes.  hdr.ts_ns is the exit time of the bind ioctl. */
struct asc_fdbind {
	struct asc_hdr hdr;
	__u32 fd;
	__s32 device_id;
	char module_name[ASC_MODULE_NAME_LEN];
};

/* ASC_REC_STACK: 288 bytes.  ips[0] is the probed function's address. */
struct asc_stack {
	struct asc_hdr hdr;
	__u32 nr;    /* valid entries in ips[] */
	__u32 flags; /* ASC_STACK_TRUNCATED */
	__u64 ips[ASC_STACK_DEPTH];
};
#define ASC_STACK_TRUNCATED 0x1

/* ASC_REC_STEP: 40 bytes. */
struct asc_step {
	struct asc_hdr hdr;
	__u64 step;  /* 0-based index of the step that starts at hdr.ts_ns */
	__u32 state; /* enum asc_sched_state of that step (bpf/schedule.h) */
	__u32 reserved;
};

/*
 * ASC_REC_TENSOR: 96 bytes.  One per tensor argument of an aten op, emitted
 * (with --record-shapes) right after the op's ENTER record, with the same
 * tid, probe_id and ts_ns.  Only what was read from the TensorImpl is here:
 * kind UNREADABLE leaves dtype ASC_DTYPE_UNKNOWN and ndim 0.
 */
#define ASC_TENSOR_DIMS 8
struct asc_tensor {
	struct asc_hdr hdr;
	__u16 arg_index;  /* position of the argument in the op's schema (0-based) */
	__u16 list_index; /* element of a Tensor[] argument, else 0 */
	__u8 kind;	  /* ASC_TENSOR_* */
	__u8 dtype;	  /* c10::ScalarType, or ASC_DTYPE_UNKNOWN */
	__u8 ndim;	  /* dims of the tensor (may exceed ASC_TENSOR_DIMS) */
	__u8 flags;	  /* ASC_TENSOR_TRUNCATED */
	__s64 dims[ASC_TENSOR_DIMS];
};
#define ASC_TENSOR_DEFINED    0
#define ASC_TENSOR_UNDEFINED  1	  /* undefined tensor or empty optional */
#define ASC_TENSOR_UNREADABLE 2	  /* user memory could not be read */
#define ASC_TENSOR_TRUNCATED  0x1 /* ndim > ASC_TENSOR_DIMS */
#define ASC_TENSOR_LIST_ELEM  0x2 /* an element (list_index) of a Tensor[] argument */
#define ASC_DTYPE_UNKNOWN     0xff

/*
 * ASC_REC_PYSTACK: 416 bytes.  The Python frames of the thread at an ENTER
 * (with --with-stack), innermost first, emitted right after the ENTER with
 * the same tid, probe_id and ts_ns.  code[i] is the PyCodeObject address in
 * the target, lasti[i] the index (in code units) of the instruction last
 * started in that frame; userspace resolves the pair (ASC_REC_PYFRAME).
 */
#define ASC_PY_DEPTH 32
struct asc_pystack {
	struct asc_hdr hdr;
	__u32 nr;    /* valid frames */
	__u32 flags; /* ASC_PYSTACK_* */
	__u64 code[ASC_PY_DEPTH];
	__s32 lasti[ASC_PY_DEPTH];
};
#define ASC_PYSTACK_TRUNCATED 0x1 /* more than ASC_PY_DEPTH frames */
#define ASC_PYSTACK_NO_THREAD 0x2 /* no PyThreadState for this thread (not a Python thread) */
#define ASC_PYSTACK_FAULT     0x4 /* a frame could not be read; nr frames were */

/*
 * ASC_REC_FUNCNAME: 104 bytes.  A kernel's device function handle and its
 * name, as the runtime learns it: on return of aclrtBinaryGetFunction(bin,
 * kernelName, &funcHandle) (handle = *funcHandle) and on entry of
 * rtFunctionRegister(bin, stubFunc, stubName, ...) (handle = stubFunc).
 * Launches carry the handle (aclrtLaunchKernel* arg0, rtKernelLaunch arg0),
 * so the converter names each kernel by its real kernel name.
 */
struct asc_funcname {
	struct asc_hdr hdr;
	__u64 handle;
	__u32 len;   /* bytes in name, excluding the NUL; may be truncated */
	__u32 flags; /* ASC_OPNAME_TRUNCATED */
	char name[ASC_NAME_LEN];
};

/*
 * ASC_REC_SEQNR: 56 bytes.  PyTorch's autograd sequence numbers (torch's
 * "Sequence number" / "Fwd thread id" of a cpu_op), written by
 * bpf/pytorch.bpf.c; user/discovery/seqnr.h has the rules.
 *  - kind ASC_SEQNR_FORWARD: right after the EXIT of an aten op (same tid,
 *    probe_id, ts_ns) whose range created an autograd node: seq is the
 *    thread's at::sequence_number counter at the op's entry.  An op without
 *    this record has none (-1).
 *  - kind ASC_SEQNR_NODE: right after the ENTER record of an
 *    Engine::evaluate_function probe (same tid, probe_id, ts_ns): that call
 *    is the "autograd::engine::evaluate_function: NAME" range and, with the
 *    same span, the node's own range; seq = Node::sequence_nr_ (UINT64_MAX,
 *    i.e. -1, for AccumulateGrad), fwd_tid = Node::thread_id_, vptr = the
 *    node's vtable pointer (its class, resolved against the library's _ZTV
 *    symbols).
 */
struct asc_seqnr {
	struct asc_hdr hdr;
	__s64 seq;     /* -1: none */
	__u64 fwd_tid; /* RecordFunction::currentThreadId() of the forward thread */
	__u64 vptr;    /* NODE: the node's vptr in the target; FORWARD: 0 */
	__u32 kind;    /* ASC_SEQNR_* */
	__u32 flags;   /* ASC_SEQNR_F_* */
};
#define ASC_SEQNR_FORWARD 1
#define ASC_SEQNR_NODE	  2
#define ASC_SEQNR_F_FAULT 0x1 /* NODE: the node could not be read (seq -1, vptr 0) */

/*
 * ASC_REC_LAUNCH: 48 bytes.  A runtime call that queues one task (kernel
 * launch, event record / wait, async copy), where only the task's origin is
 * wanted, never an API event (user/analysis/correlate.c):
 *  - Level0 after the first batched halSqTaskSend of a process (probe kind
 *    ASC_PK_LAUNCH_MARK, entry only): the pending-launch FIFO of the thread
 *    and stream gets one entry per record, so each task of a batch joins the
 *    op / queue slot open at its launch;
 *  - Level1 rtKernelLaunch (ASC_PK_NODE_LAUNCH, entry + return): the span of
 *    the aclop kernel's launch, its Node@launch; Runtime@ calls stay Level2.
 * side ENTRY: stream = the call's stream argument, handle = arg0 (the
 * function handle / stub of a kernel launch); side RETURN: ret, stream and
 * handle 0.
 */
struct asc_launch {
	struct asc_hdr hdr;
	__u64 stream;
	__u64 handle;
	__u32 side; /* ASC_LAUNCH_ENTRY / ASC_LAUNCH_RETURN */
	__u32 ret;  /* RETURN: the low 32 bits of the return register (rtError_t) */
};
#define ASC_LAUNCH_ENTRY  0
#define ASC_LAUNCH_RETURN 1

/*
 * ---- HCCL: the communication layer (docs/hccl.md; CONTRACT-hccl.md) ----
 *
 * ASC_REC_HCCL_OP: 112 bytes.  One HCCL collective or p2p call (the probe
 * table's ASC_PK_HCCL_OP sites: HcclAllReduce, HcclBroadcast, HcclAllGather,
 * HcclReduceScatter, HcclReduce, HcclAlltoAll, HcclAlltoAllV, HcclSend,
 * HcclRecv, HcclBarrier), at every level: side ENTRY at the call's entry,
 * side RETURN at its return (same tid, probe_id).  At Level1+ the ENTRY is in
 * the same ring-buffer sample right after the call's ENTER record, the
 * RETURN right after its EXIT (same ts_ns), so the API event and the op
 * share their span.  hdr.probe_id names the function (PROBE record):
 * ENTRY's args[] are its first 10 integer arguments in prototype order
 * (registers, then the stack: x86-64 args 7-10 at the entry sp + 8..32), read
 * as the prototype of include/ascend/hccl.h says; user/capture/hccl.h
 * decodes them (op, buffers, count, data type, reduce op, root / peer rank,
 * comm, stream).  RETURN: args[] zero, ret = the HcclResult.
 * The op's sequence number is not in the record: it is the 0-based index of
 * this ENTRY among the ENTRY records of the same (tgid, comm), in capture
 * order (HCCL requires every rank of a communicator to issue its ops in the
 * same order, so (group name, seq) names one collective on every rank).
 * The comm tasks of the op are the SQEs (ASC_REC_SQE headers) that the same
 * tid submits between ENTRY and RETURN, and the HCCL_TASK records between
 * them describe those tasks one for one, in order (see ASC_REC_HCCL_TASK).
 */
#define ASC_HCCL_ARGS 10 /* HcclAlltoAllV has 10 */
struct asc_hccl_op {
	struct asc_hdr hdr;
	__u64 args[ASC_HCCL_ARGS]; /* ENTRY: raw integer arguments 0..9; RETURN: 0 */
	__u32 side;		   /* ASC_HCCL_ENTRY / ASC_HCCL_RETURN */
	__u32 ret;		   /* RETURN: HcclResult (0 = HCCL_SUCCESS) */
};
#define ASC_HCCL_ENTRY	0
#define ASC_HCCL_RETURN 1

/*
 * ASC_REC_HCCL_COMM: 184 bytes, at the return of a communicator's creation
 * (ASC_PK_HCCL_COMM_INIT: HcclCommInitRootInfo, HcclCommInitClusterInfo),
 * every level.  hdr.ts_ns is the return time, enter_ns the entry time.
 *  - HcclCommInitRootInfo(nRanks, rootInfo, rank, comm): nranks, rank as
 *    passed; group = the root info's identifier (HcclRootHandle.identifier,
 *    include/ascend/hccl.h), which is the communicator's name
 *    (HcclGetCommName) and the group name msprof reports.
 *  - HcclCommInitClusterInfo(clusterInfo, rank, comm): rank as passed,
 *    nranks 0 (in the rank table, not read), group "hccl_world_group".
 * comm = *comm after the call (the HcclComm handle that HCCL_OP records
 * carry), 0 when the call failed (ret != 0).
 */
#define ASC_HCCL_GROUP_LEN 128 /* ROOTINFO_INDENTIFIER_MAX_LENGTH */
struct asc_hccl_comm {
	struct asc_hdr hdr;
	__u64 comm;
	__u64 enter_ns;
	__u32 nranks; /* 0: unknown */
	__u32 rank;
	__u32 ret;			/* HcclResult */
	__u32 kind;			/* ASC_HCCL_COMM_ROOTINFO / ASC_HCCL_COMM_CLUSTER */
	char group[ASC_HCCL_GROUP_LEN]; /* NUL-terminated (truncated to 127) */
};
#define ASC_HCCL_COMM_ROOTINFO 1
#define ASC_HCCL_COMM_CLUSTER  2

/*
 * ASC_REC_HCCL_TASK: 112 bytes.  HCCL's profiling report of one
 * communication task, as CANN's HCCL gives it to msprof: a call of
 * MsprofReportAdditionalInfo(flag, data, len) (libprofapi.so; probe kind
 * ASC_PK_HCCL_REPORT, every level) whose MsprofAdditionalInfo has type
 * MSPROF_REPORT_HCCL_INFO_TYPE; the fields below are its MsprofHcclInfo's
 * (include/ascend/hccl.h).  HCCL reports a task right before it submits it,
 * so within an HCCL op (HCCL_OP ENTRY..RETURN of the same tid) the k-th
 * HCCL_TASK describes the k-th SQE the tid submits there: that SQE's
 * (dev, stream_id, task_id) is the device task (ASC_REC_DEVTASK) at Level0.
 * item_id is the hash id of the task name ("Notify_Record", "Notify_Wait",
 * "Memcpy", "Reduce_Inline"), group_hash that of the group name: an
 * ASC_REC_HCCL_HASH record gives each string.
 */
struct asc_hccl_task {
	struct asc_hdr hdr; /* ts_ns: the call; report_ts: the info's own stamp */
	__u64 report_ts;    /* MsprofAdditionalInfo.timeStamp */
	__u64 item_id;	    /* hash id of the task name */
	__u64 group_hash;   /* hash id of the group name */
	__u64 notify_id;
	__u64 src_addr;
	__u64 dst_addr;
	__u64 data_size; /* bytes */
	__u32 local_rank;
	__u32 remote_rank;
	__u32 rank_size;
	__u32 plane_id;
	__u32 data_type;     /* HcclDataType */
	__u32 op_type;	     /* HcclReduceOp */
	__u8 link_type;	     /* ASC_HCCL_LINK_*: 0 ON_CHIP, 1 HCCS, 2 PCIE, 3 ROCE */
	__u8 transport_type; /* ASC_HCCL_TRANSPORT_*: 0 SDMA, 1 RDMA, 2 LOCAL */
	__u8 role;	     /* 0 dst, 1 src */
	__u8 rdma_type;
	__u32 stage;
};
#define ASC_HCCL_LINK_ON_CHIP	 0
#define ASC_HCCL_LINK_HCCS	 1
#define ASC_HCCL_LINK_PCIE	 2
#define ASC_HCCL_LINK_ROCE	 3
#define ASC_HCCL_TRANSPORT_SDMA	 0
#define ASC_HCCL_TRANSPORT_RDMA	 1
#define ASC_HCCL_TRANSPORT_LOCAL 2

/*
 * ASC_REC_HCCL_HASH: 104 bytes, at the return of MsprofGetHashId(str, len)
 * (ASC_PK_HCCL_HASH, every level): the hash id it returned and the string
 * (NUL-terminated, truncated to ASC_NAME_LEN - 1).
 */
struct asc_hccl_hash {
	struct asc_hdr hdr;
	__u64 hash;
	__u32 len;   /* strlen of the string asked for (may exceed name) */
	__u32 flags; /* ASC_OPNAME_TRUNCATED */
	char name[ASC_NAME_LEN];
};

/* ---- records written by userspace ---- */

/*
 * ASC_REC_DEVTASK: 56 bytes.  One device task, start and end paired from the
 * STARS ACSQ log (channel 50).  hdr.ts_ns is 0; times are in start/end_cnt.
 */
struct asc_devtask {
	struct asc_hdr hdr;
	__u64 start_cnt; /* system counter ticks */
	__u64 end_cnt;
	__u32 dev_id;
	__u16 stream_id;
	__u16 task_id;	 /* 16-bit, as the device logs it */
	__u16 task_type; /* ACSQ log task type (word0 >> 10) */
	__u16 flags;
	__u32 reserved;
};

/*
 * What the BPF side does at a site (asc_probe.kind): user/discovery/probes.h
 * gives each table entry its kind, user/trace/ maps a kind to a BPF program.
 */
enum asc_probe_kind {
	ASC_PK_CALL = 1,      /* ENTER (args) on entry, EXIT (ret) on return */
	ASC_PK_OPNAME_STDSTR, /* as CALL, plus OPNAME from arg0 (const std::string &) */
	ASC_PK_OPNAME_CSTR,   /* as CALL, plus OPNAME from arg0 (const char *) */
	ASC_PK_ENQUEUE,	      /* as CALL, plus QUEUE(enqueue) from arg0 (QueueParas *) */
	ASC_PK_DEQUEUE,	      /* as CALL, plus QUEUE(dequeue) from arg0 (QueueParas *) */
	ASC_PK_SQE_SEND,      /* as CALL, plus SQE from (devId, struct halTaskSendInfo *) */
	ASC_PK_MEM_REPORT,    /* MEM from the allocator's report hook argument */
	ASC_PK_STEP,	      /* STEP: a step boundary; advances the schedule gate */
	ASC_PK_ATEN_OP,	      /* as CALL on at::_ops::<op>::call (framework range) */
	/*
	 * FUNCNAME on return of aclrtBinaryGetFunction(bin, kernelName, &funcHandle)
	 * (handle = *funcHandle); ENTER/EXIT too at --level >= 1.
	 */
	ASC_PK_FUNCNAME_GET,
	/*
	 * FUNCNAME on entry of rtFunctionRegister(bin, stubFunc, stubName, ...)
	 * (handle = stubFunc); ENTER/EXIT too at --level 2.
	 */
	ASC_PK_FUNCNAME_REG,
	/*
	 * torch::autograd::Engine::evaluate_function: with the PyTorch object
	 * (user/discovery/pytorch.h) the evaluate_function range and the backward node's
	 * range, with its sequence number (user/discovery/seqnr.h); as CALL without it.
	 */
	ASC_PK_AUTOGRAD_EVAL,
	/*
	 * A backward node's apply() (torch::autograd::...::apply, as CALL): the
	 * converter takes its span as the node's own range inside evaluate_function
	 * (user/discovery/seqnr.h); without it the node's range is evaluate_function's span.
	 */
	ASC_PK_AUTOGRAD_APPLY,
	/*
	 * A task-making runtime call at Level0 (asc_probe_launch_marks[]), attached
	 * only once the process sends a batch (several SQEs in one halSqTaskSend):
	 * LAUNCH (entry: stream argument) only, which tells the converter which
	 * op / queue slot made each task of a batch.  No ENTER/EXIT: no API event.
	 */
	ASC_PK_LAUNCH_MARK,
	/*
	 * rtKernelLaunch at Level1 (aclop kernels): LAUNCH at entry and return, the
	 * span of the kernel's Node@launch and nothing else (a Runtime@ call is
	 * Level2, where the site is a plain CALL).
	 */
	ASC_PK_NODE_LAUNCH,
	/*
	 * aclrtBinaryLoadFromFile(binPath, options, &bin): FUNCNAME of the bin
	 * handle (the file's base name) on return, remembered for
	 * ASC_PK_FUNCNAME_ENTRY; ENTER/EXIT too at --level >= 1.
	 */
	ASC_PK_BINARY_LOAD,
	/*
	 * aclrtBinaryGetFunctionByEntry(bin, funcEntry, &funcHandle): FUNCNAME of
	 * *funcHandle with bin's name on return; ENTER/EXIT too at --level >= 1.
	 */
	ASC_PK_FUNCNAME_ENTRY,
	/* HCCL collective / p2p: HCCL_OP at entry and return; ENTER/EXIT too at Level1+ */
	ASC_PK_HCCL_OP,
	/* HCCL communicator creation: HCCL_COMM at return; ENTER/EXIT too at Level1+ */
	ASC_PK_HCCL_COMM_INIT,
	/* MsprofReportAdditionalInfo: HCCL_TASK for an HCCL info report, entry only */
	ASC_PK_HCCL_REPORT,
	/* MsprofGetHashId: HCCL_HASH at return */
	ASC_PK_HCCL_HASH,
	/*
	 * The unwind guard (bpf/unwind.bpf.h), entry only, no record: the
	 * unwinder's entry points put the return addresses return probes took
	 * back on the stack; __cxa_begin_catch re-arms the frames not unwound.
	 */
	ASC_PK_UNWIND_RAISE,
	ASC_PK_UNWIND_CATCH,
};

#ifndef __bpf__
/*
 * The name of a probe kind, as `ascbpf probes` and `ascbpf dump` print it;
 * "?" for a kind this header does not know.  Beside the enum, so that the
 * probe table (discovery) and the capture reader (capture) share one list.
 */
static inline const char *asc_probe_kind_name(unsigned int kind)
{
	static const char *const names[] = {
		[ASC_PK_CALL] = "call",
		[ASC_PK_OPNAME_STDSTR] = "opname_stdstr",
		[ASC_PK_OPNAME_CSTR] = "opname_cstr",
		[ASC_PK_ENQUEUE] = "enqueue",
		[ASC_PK_DEQUEUE] = "dequeue",
		[ASC_PK_SQE_SEND] = "sqe_send",
		[ASC_PK_MEM_REPORT] = "mem_report",
		[ASC_PK_STEP] = "step",
		[ASC_PK_ATEN_OP] = "aten_op",
		[ASC_PK_FUNCNAME_GET] = "funcname_get",
		[ASC_PK_FUNCNAME_REG] = "funcname_reg",
		[ASC_PK_AUTOGRAD_EVAL] = "autograd_eval",
		[ASC_PK_AUTOGRAD_APPLY] = "autograd_apply",
		[ASC_PK_LAUNCH_MARK] = "launch_mark",
		[ASC_PK_NODE_LAUNCH] = "node_launch",
		[ASC_PK_BINARY_LOAD] = "binary_load",
		[ASC_PK_FUNCNAME_ENTRY] = "funcname_entry",
		[ASC_PK_HCCL_OP] = "hccl_op",
		[ASC_PK_HCCL_COMM_INIT] = "hccl_comm_init",
		[ASC_PK_HCCL_REPORT] = "hccl_report",
		[ASC_PK_HCCL_HASH] = "hccl_hash",
		[ASC_PK_UNWIND_RAISE] = "unwind_raise",
		[ASC_PK_UNWIND_CATCH] = "unwind_catch",
	};

	return kind < sizeof(names) / sizeof(names[0]) && names[kind] ? names[kind] : "?";
}
#endif

/*
 * ASC_REC_PROBE: 48 bytes + "library\0symbol\0" padded to 8.
 * hdr.probe_id is the id that ENTER/EXIT/... records carry.
 */
struct asc_probe {
	struct asc_hdr hdr;
	__u16 layer;   /* enum asc_layer */
	__u16 kind;    /* enum asc_probe_kind */
	__u32 flags;   /* ASC_PROBE_* */
	__u64 offset;  /* file offset attached at (after any prologue skip) */
	__u16 lib_len; /* strlen(library) */
	__u16 sym_len; /* strlen(symbol) */
	__u32 reserved;
	char strings[]; /* library, NUL, symbol, NUL */
};
#define ASC_PROBE_RETPROBE	0x1  /* a uretprobe is attached too */
#define ASC_PROBE_SKIPPED_ENDBR 0x2  /* attached after an endbr64 */
#define ASC_PROBE_SINGLESTEP	0x4  /* first instruction is not emulated by the kernel */
#define ASC_PROBE_MISSING	0x8  /* symbol not found: not attached */
#define ASC_PROBE_CXX_OLD_ABI	0x10 /* its library's std::string is the old (COW) one */

/* ASC_REC_CLOCK: 48 bytes. */
struct asc_clock {
	struct asc_hdr hdr; /* ts_ns = CLOCK_MONOTONIC */
	__u64 realtime_ns;  /* CLOCK_REALTIME at the same instant */
	__u64 monotonic_raw_ns;
	__u32 which;	    /* ASC_CLOCK_START / ASC_CLOCK_END */
	__s32 utc_offset_s; /* local time - UTC, for directory names and local stamps */
};
#define ASC_CLOCK_START 0
#define ASC_CLOCK_END	1

/* ASC_REC_DEVCLOCK: 48 bytes. */
struct asc_devclock {
	struct asc_hdr hdr; /* ts_ns = CLOCK_MONOTONIC when counter was read */
	__u64 counter;	    /* device system counter at hdr.ts_ns */
	__u64 freq_hz;	    /* counter frequency */
	__u32 dev_id;
	__u32 bound_ns; /* pair error bound: half the host window of the read */
};

/* ASC_REC_PROCESS: 40 bytes + cmdline (NUL-separated args, NUL) padded to 8. */
struct asc_process {
	struct asc_hdr hdr; /* tgid = pid */
	__s32 rank;	    /* -1 if unknown */
	__s32 device;	    /* -1 if unknown */
	__u32 cmdline_len;
	char comm[4]; /* first 4 bytes of comm; full comm is in the thread record */
	char strings[];
};

/* ASC_REC_THREAD: 40 bytes. */
struct asc_thread {
	struct asc_hdr hdr; /* tgid, tid */
	char comm[16];
};

/* ASC_REC_STATS: 64 bytes.  Totals over all CPUs, and per source. */
struct asc_stats {
	struct asc_hdr hdr;
	__u64 events;	       /* records committed by BPF */
	__u64 drops;	       /* bpf_ringbuf_reserve failures (summed over CPUs) */
	__u64 devtask_records; /* device records read from the profiling channel */
	__u64 devtask_drops;   /* device records lost (channel overflow, unpaired) */
	__u64 bytes;	       /* ring-buffer bytes consumed */
};

/*
 * ASC_REC_CONFIG / ASC_REC_SYMBOL / ASC_REC_LOST: 32 bytes + text padded to 8.
 * A LOST record's hdr.probe_id is its reason (ASC_LOST_*), the text says it
 * in words.
 */
struct asc_text {
	struct asc_hdr hdr;
	__u64 value; /* SYMBOL: address; LOST: count; CONFIG: 0 */
	char text[]; /* NUL-terminated */
};
#define ASC_LOST_RECORDS		0 /* records that were not kept (drops, full tables) */
/*
 * Submissions (SQE headers) of the process made before its device channel
 * started (the reader of its card for -- CMD, --comm and forked processes
 * starts at their TSDRV bind) that have no device record in the capture: the
 * tasks completed while the channel was not open, so the card reported them
 * to nobody.  Nothing was dropped: these kernels have no device time.
 * Text: ASC_LOST_BEFORE_DEVCHANNEL_TEXT.
 */
#define ASC_LOST_BEFORE_DEVCHANNEL	1
#define ASC_LOST_BEFORE_DEVCHANNEL_TEXT "submitted before the device channel started"

/*
 * ASC_REC_PYFRAME: 40 bytes + text padded to 8.  Written by the loader while
 * the target lives: one per distinct (code, lasti) seen in PYSTACK records.
 * text is "file(line): function" as torch.profiler prints a frame.
 */
struct asc_pyframe {
	struct asc_hdr hdr; /* tgid of the target */
	__u64 code;
	__s32 lasti;
	__s32 line;  /* -1 if the line table had no line */
	char text[]; /* NUL-terminated */
};

/*
 * ASC_REC_ATEN_NAME: struct asc_text (32 bytes + text padded to 8), written
 * with the PROBE records of an attach: hdr.probe_id is an aten op probe
 * (ASC_PK_ATEN_OP), text torch's name of the op ("aten::transpose" for
 * at::_ops::transpose_int) as the operator schemas of the probed library
 * give it, "" where they give none (the converter then names the op from
 * its symbol).  value is 0.  What names ops needs no file of the traced
 * host at convert time.
 */

/*
 * ASC_REC_NODE_CLASS: 40 bytes + name padded to 8, written once per
 * process at attach: one backward node class of the traced libtorch_cpu
 * (a _ZTV object in torch::autograd).  A SEQNR(NODE) record whose vptr lies
 * in [vaddr, vaddr + size) (addresses of the traced process) is a node of
 * class name, Node::name() (user/discovery/seqnr.h).
 */
struct asc_node_class {
	struct asc_hdr hdr; /* tgid of the target */
	__u64 vaddr;
	__u64 size;
	char name[]; /* NUL-terminated */
};

#endif /* __ASCBPF_EVENTS_H */
