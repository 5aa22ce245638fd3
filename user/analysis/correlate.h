/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * correlate.h - the joined view of a capture: what `ascbpf convert` writes
 * and what `ascbpf report` (engineer G) analyses.  G DEPENDS ON THIS HEADER:
 * change it only additively (new fields at the end of a struct, new
 * functions).
 *
 * asc_corr_build() reads a capture once (plus a rewind) and returns flat
 * arrays, each sorted by start time, that refer to each other by index
 * (-1 = none) and to names by string id (asc_corr_str(), 0 = "").  Memory is
 * O(items), a few tens of bytes per captured record: no JSON or record copy
 * is kept.
 *
 * Times: every *_ns field is wall-clock nanoseconds (CLOCK_REALTIME axis,
 * what torch_npu writes, microseconds = ns / 1000) converted with the
 * capture's ASC_REC_CLOCK pair; device times are converted from counter
 * ticks with ASC_REC_DEVCLOCK first.  A capture without a clock record keeps
 * CLOCK_MONOTONIC values (info.have_clock = 0).
 *
 * The chain (docs/design.md):
 *   aten op (ASC_PK_ATEN_OP range) encloses Enqueue on the Python thread
 *   -> Enqueue/Dequeue share the correlation id (ASC_REC_QUEUE)
 *   -> the CANN call on acl_thread inside the Dequeue encloses halSqTaskSend
 *      (ASC_REC_SQE: device, stream, 16-bit task id; wraps counted per
 *      (device, stream) in submission order)
 *   -> ASC_REC_DEVTASK with the same (device, stream, task id, wrap).
 * Without a task queue (TASK_QUEUE_ENABLE=0) the aten op enclosing the
 * submission on the same thread is taken.
 *
 * Names: aten ops take the name of an ASC_REC_OPNAME record of the same
 * probe, else the name the tracer found in the traced library's schemas
 * (ASC_REC_ATEN_NAME), else "aten::<op>" from an at::_ops::<op>_<overload>::call symbol
 * (the overload suffix is dropped when it starts with an upper-case letter
 * or is "out"), else the symbol.  CANN calls are named by their symbol;
 * kernels by the aclnn/aclop name of their launching API (the OPNAME of
 * RunOpApi / aclopCompileAndExecute when captured), else the API symbol,
 * else the task type; compute kernels whose launch call's function handle
 * was named (ASC_REC_FUNCNAME) take that real kernel name, their type stays
 * the op type.  Queue slots are named by the OPNAME inside RunOpApiV2 around
 * the Enqueue, or by an OPNAME of the Enqueue probe itself (after its QUEUE
 * record, same probe and ts), which wins.
 */
#ifndef __ASCBPF_CORRELATE_H
#define __ASCBPF_CORRELATE_H

#include <stddef.h>
#include <stdint.h>

/*
 * b - a and a + b saturated at the int64_t limits: times and durations come
 * from a file and may be anything, and signed overflow is undefined (issue 19).
 * Every difference of two times and every sum of durations goes through these.
 */
static inline int64_t asc_ns_sub(int64_t b, int64_t a)
{
	int64_t r;

	return __builtin_sub_overflow(b, a, &r) ? (b < 0 ? INT64_MIN : INT64_MAX) : r;
}

static inline int64_t asc_ns_add(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? (a < 0 ? INT64_MIN : INT64_MAX) : r;
}

struct asc_capture_reader;

/* Backward nodes (SEQNR records): the evaluate_function range is renamed PREFIX + node name. */
#define ASC_EVAL_PREFIX	 "autograd::engine::evaluate_function: "
/* A node whose class is unknown (no NODE_CLASS record holds its vptr): its base class. */
#define ASC_NODE_UNKNOWN "torch::autograd::Node"

/* One device task (ASC_REC_DEVTASK) with what launched it. */
struct asc_corr_kernel {
	int64_t start_ns, end_ns; /* on the NPU, wall clock */
	uint32_t device;
	uint32_t stream;	 /* physical stream id (SQE header rtStreamId) */
	uint32_t task_id;	 /* 16-bit id as logged */
	uint32_t wrap;		 /* wraps of this (device, stream) before this task */
	uint32_t task_type;	 /* STARS SQE type as logged (devtask.task_type) */
	uint32_t name;		 /* string id: kernel name (see above) */
	uint32_t type;		 /* string id: op type ("Add" for aclnnAdd) */
	uint32_t block_dim;	 /* from the SQE header, 0 if unknown */
	int32_t step;		 /* step id (ASC_REC_STEP.step) or -1 */
	int32_t api;		 /* launching CANN call: the outermost aclnn / aclop call
					 * enclosing the submission, else the outermost acl*
					 * call (aclrtMemcpyAsync ...), else the innermost CANN
					 * call; index into calls[], -1 if unmatched */
	int32_t launch_call;	 /* innermost CANN call enclosing the submission, or -1 */
	int32_t op;		 /* aten op, index into ops[], or -1 */
	int32_t queue;		 /* index into queues[] or -1 */
	uint64_t correlation_id; /* queue correlation id, 0 if none */
	int64_t submit_ns;	 /* halSqTaskSend time, 0 if unmatched */
	uint32_t submit_tid;	 /* thread that submitted, 0 if unmatched */
	uint32_t flags;		 /* ASC_CORR_K_* */
	/*
	 * String id of the kernel's real name (ASC_REC_FUNCNAME of the function
	 * handle its enclosing launch call passed, aclrtLaunchKernel* /
	 * rtKernelLaunch arg0), 0 if unknown.  When set (compute tasks only),
	 * name above is this name and type stays the op type.
	 */
	uint32_t kernel_name;
	uint32_t reserved;
	/*
	 * The kernel launch call (aclrtLaunchKernel*, rtKernelLaunch*,
	 * rtsLaunchKernel*: the outermost one) that made this task, index into
	 * calls[], -1 if not captured (Level0) or not a kernel: torch_npu's
	 * "Node@launch" event.  With batched submissions (several launches'
	 * SQEs in one halSqTaskSend) every field above comes from the launch
	 * that made the task, not from the call around the halSqTaskSend.
	 */
	int32_t node_call;
	uint32_t flags2; /* reserved, 0 */
};
#define ASC_CORR_K_MATCHED     0x1 /* a submission (SQE) was found for it */
#define ASC_CORR_K_COMPUTE     0x2 /* AI_CORE / AI_VECTOR_CORE / AI_CPU: kernel_details row */
#define ASC_CORR_K_KERNEL_NAME 0x4 /* name is the real kernel name (kernel_name) */

/* One framework op range (ASC_PK_ATEN_OP) or ProfilerStep#N. */
struct asc_corr_op {
	int64_t start_ns, end_ns; /* end_ns = start_ns if the exit was not captured */
	uint32_t tid;
	uint32_t name;		       /* string id */
	int64_t seq;		       /* sequence number, -1 if unknown */
	int32_t parent;		       /* enclosing op on the same thread, or -1 */
	int32_t step;		       /* step id or -1 */
	uint32_t stack;		       /* string id: call stack ("frame;\r\nframe"), 0 none */
	uint32_t depth;		       /* nesting depth on its thread, 0 = outermost */
	int64_t device_self_ns;	       /* sum of kernel durations launched directly */
	int64_t device_total_ns;       /* ... by this op and its children */
	int64_t device_self_aicore_ns; /* the same, AI_CORE kernels only */
	int64_t device_total_aicore_ns;
	uint32_t flags;	  /* ASC_CORR_O_* */
	uint32_t fwd_tid; /* torch's "Fwd thread id": 0 forward op, else the
					 * forward thread's index of a backward node */
	/*
	 * With --record-shapes (ASC_REC_TENSOR): torch's "Input Dims" and
	 * "Input type" strings, one ";\r\n"-separated segment per argument up
	 * to the last tensor argument (non-tensor arguments give empty
	 * segments), string ids, 0 if not captured.  The call stack above
	 * prefers Python frames (ASC_REC_PYSTACK + ASC_REC_PYFRAME) over native
	 * ones (ASC_REC_STACK + ASC_REC_SYMBOL).
	 */
	uint32_t input_dims;
	uint32_t input_types;
};
#define ASC_CORR_O_STEP	   0x1 /* a ProfilerStep#N range made from step records */
#define ASC_CORR_O_NO_EXIT 0x2 /* exit not captured */

/* One CANN-layer call (aclnn*, aclop*, aclrt*, rt*) with entry and exit. */
struct asc_corr_call {
	int64_t start_ns, end_ns;
	uint32_t tid;
	uint32_t name; /* string id: the symbol */
	uint32_t probe_id;
	uint32_t level; /* ASC_CORR_LEVEL_* */
	int64_t ret;	/* return register as a signed value */
	int32_t parent; /* enclosing CANN call on the same thread, or -1 */
	int32_t op;	/* aten op it runs for (through the queue), or -1 */
	int32_t step;
	uint32_t opname; /* string id: OPNAME captured inside it (aclop type), 0 */
};
#define ASC_CORR_LEVEL_ACL     1 /* acl*: "AscendCL@", api_statistic level "acl" */
#define ASC_CORR_LEVEL_RUNTIME 2 /* rt*: "Runtime@", level "runtime" */
/*
 * A launch traced only for its Node@launch (ASC_REC_LAUNCH of a Level1
 * rtKernelLaunch): no API event, no api_statistic row, at any level.
 */
#define ASC_CORR_LEVEL_NODE    3
/* Hccl* (layer HCCL, Level1+): "Hccl@" events, msprof's communication API level */
#define ASC_CORR_LEVEL_HCCL    4

/* One task-queue slot: Enqueue on the producer, Dequeue on acl_thread. */
struct asc_corr_queue {
	uint64_t correlation_id;
	int64_t enq_start_ns, enq_end_ns; /* Enqueue call; 0 if not captured */
	int64_t deq_start_ns, deq_end_ns; /* Dequeue side (AsncExecFunc); 0 if not captured */
	uint32_t enq_tid, deq_tid;
	uint32_t name;	     /* string id: op name of the slot (RunOpApi OPNAME), 0 */
	uint32_t param_type; /* QueueParamType */
	int32_t op;	     /* aten op enclosing the Enqueue, or -1 */
	int32_t step;
};

/* One allocator event (ASC_REC_MEM) with its totals. */
struct asc_corr_mem {
	int64_t ts_ns;
	uint64_t ptr;
	int64_t size; /* bytes, negative for frees */
	uint64_t total_allocated, total_reserved, total_active;
	uint64_t stream;
	uint32_t tid;
	uint16_t device;
	uint8_t component; /* ASC_MEM_PTA / GE / APP / WORKSPACE */
	uint8_t data_type; /* ASC_MEM_MALLOC / FREE / BLOCK_FREE */
	int32_t op;	   /* aten op open on tid at ts (the allocating op), or -1 */
	int32_t step;
};

/* One step (ASC_REC_STEP) and its time range [start_ns, end_ns). */
struct asc_corr_step {
	uint64_t step;
	uint32_t state;		  /* enum asc_sched_state */
	int32_t cycle;		  /* RECORD_AND_SAVE cycle it belongs to, -1 if none */
	int64_t start_ns, end_ns; /* end = next step's start, or the end of the trace */
	uint32_t tid;
	uint32_t reserved;
};

/* One RECORD_AND_SAVE cycle: one *_ascend_pt directory. */
struct asc_corr_cycle {
	int32_t first_step, last_step; /* indices into steps[] */
	int64_t start_ns, end_ns;      /* first recorded (or warmup) step start .. last step end */
};

struct asc_corr_thread {
	uint32_t tid;
	char comm[16];
};

struct asc_corr_info {
	uint32_t pid;
	int32_t rank, device; /* -1 if unknown */
	int have_clock, have_devclock;
	int64_t start_wall_ns, end_wall_ns; /* ASC_REC_CLOCK start/end (0 if none) */
	int64_t start_mono_ns, end_mono_ns;
	int32_t utc_offset_s;
	uint64_t devclock_counter, devclock_freq_hz;
	int64_t devclock_mono_ns;
	uint64_t records, bad_records, unknown_records;
	uint64_t bpf_events, bpf_drops, devtask_drops, lost; /* from STATS / LOST records */
	uint64_t before_devchannel; /* LOST ASC_LOST_BEFORE_DEVCHANNEL: no device record */
	uint64_t unmatched_kernels, unmatched_sqes;
	int damaged; /* the capture stopped at a bad frame */
	uint64_t bytes_unread;
	char damage[128];
	/*
	 * ended: the capture has its end (the ASC_REC_STATS record the tracer
	 * writes when it stops); 0 for a tracer killed between frames, whose
	 * records after last_ts_ns (wall ns of the latest record) may be lost.
	 */
	int ended;
	int64_t last_ts_ns;
	/*
	 * Kernels of batched submissions (one halSqTaskSend carrying the SQEs of
	 * several launches) whose launch could not be told exactly: they keep
	 * their submission (ASC_CORR_K_MATCHED) but have no op, queue or API
	 * (at Level0 a name shared by every slot of the batch, if any).
	 */
	uint64_t batch_unattributed;
	/* HCCL_OP / HCCL_COMM records read: 0 means no communication (analysis/comm.h) */
	uint64_t hccl_records;
};

struct asc_corr {
	struct asc_corr_info info;
	struct asc_corr_kernel *kernels;
	size_t nr_kernels;
	struct asc_corr_op *ops;
	size_t nr_ops;
	struct asc_corr_call *calls;
	size_t nr_calls;
	struct asc_corr_queue *queues;
	size_t nr_queues;
	struct asc_corr_mem *mems;
	size_t nr_mems;
	struct asc_corr_step *steps;
	size_t nr_steps;
	struct asc_corr_cycle *cycles;
	size_t nr_cycles;
	struct asc_corr_thread *threads;
	size_t nr_threads;
	char **config;
	size_t nr_config; /* "key=value" */
	void *priv;	  /* string table and indexes */
};

/*
 * Reads the capture from its first frame and builds the view.  Returns NULL
 * with errno set on I/O or memory errors.  A damaged capture still returns
 * the view of what was read, with info.damaged set (callers must report it
 * and exit non-zero); malformed records are counted in info.bad_records and
 * skipped.
 */
struct asc_corr *asc_corr_build(struct asc_capture_reader *r);
/*
 * The same with every wall time moved by shift_ns: the capture's host clock
 * put on another host's (the job's reference rank, analysis/comm_align.h).
 */
struct asc_corr *asc_corr_build_shifted(struct asc_capture_reader *r, int64_t shift_ns);

void asc_corr_free(struct asc_corr *c);

/* The string for a string id ("" for 0 or an unknown id). */
const char *asc_corr_str(const struct asc_corr *c, uint32_t id);

/* Trace "Task Type" of a STARS SQE type: "AI_CORE", "AI_VECTOR_CORE", "EVENT_RECORD_SQE", ... */
const char *asc_corr_task_type_name(uint32_t task_type);

/* Thread name of tid ("" if unknown). */
const char *asc_corr_thread_name(const struct asc_corr *c, uint32_t tid);

/* Value of a config record "key=value" (NULL if absent). */
const char *asc_corr_config(const struct asc_corr *c, const char *key);

/*
 * Native call-stack frames.  asc_corr_demangle(): the demangled C++ name of
 * sym (libstdc++'s __cxa_demangle where the program links libstdc++), else
 * sym; returns its length.  asc_corr_native_frame(): a SYMBOL text
 * ("lib!symbol+0xoff" / "lib+0xoff") as torch prints a frame,
 * "file(line): function" with the library (libpath if not NULL) as file,
 * line 0 (unknown) and the demangled symbol (or "0xoff") as function.
 */
size_t asc_corr_demangle(const char *sym, char *out, size_t outlen);
void asc_corr_native_frame(const char *sym, const char *libpath, char *out, size_t outlen);

/* Wall-clock ns for a CLOCK_MONOTONIC ns of this capture. */
int64_t asc_corr_wall_ns(const struct asc_corr *c, uint64_t mono_ns);

#endif /* __ASCBPF_CORRELATE_H */
