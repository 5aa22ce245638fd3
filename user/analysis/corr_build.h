/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * corr_build.h - the state of one asc_corr_build() pass, shared by the
 * files of the correlation stage (not an interface of the stage: that is
 * correlate.h).
 *
 *   correlate.c     the pass over the records, accessors, build and free
 *   corr_tables.c   growable arrays, string table
 *   corr_names.c    probe and op names, demangling, native frames
 *   corr_calls.c    threads' open calls: ENTER/EXIT, op names, queue, memory, stacks
 *   corr_tasks.c    submissions: launches, halSqTaskSend SQEs, wraps, task keys
 *   corr_finish.c   the phases after the pass (sorting, nesting, joins, wall clock)
 */
#ifndef __ASCBPF_CORR_BUILD_H
#define __ASCBPF_CORR_BUILD_H

#include <stdint.h>
#include <string.h>
#include "ascbpf_events.h"
#include "analysis/correlate.h"
#include "lib/hashmap.h"

#define MAX_OPEN 256 /* open frames kept per thread; deeper ENTERs are ignored */

/* ---- growable arrays, string table (corr_tables.c); maps: lib/hashmap.h ---- */

int grow_array(void **arr, size_t *cap, size_t need, size_t elem);

#define PUSH(arr, nr, cap, out)                                          \
	(grow_array((void **)&(arr), &(cap), (nr) + 1, sizeof(*(arr))) ? \
		 -ENOMEM :                                               \
		 ((out) = &(arr)[(nr)++], memset((out), 0, sizeof(*(out))), 0))

struct strtab {
	char *arena;
	size_t len, cap;
	uint64_t *offs; /* id -> offset */
	size_t nr, ocap;
	struct asc_idxmap index; /* hash of the bytes -> id */
};

int strtab_init(struct strtab *t);
/* The id of the n bytes at s, added if new (0 on ENOMEM: the empty string). */
uint32_t strtab_add(struct strtab *t, const char *s, size_t n);
uint32_t strtab_cstr(struct strtab *t, const char *s);

/* ---- build state ---- */

enum frame_kind {
	FR_OP = 1, /* aten op: item = ops index */
	FR_CALL,   /* CANN call: item = calls index */
	FR_ENQ,	   /* Enqueue: item = queues index or -1 */
	FR_DEQ,	   /* Dequeue side: item = queues index or -1 */
	FR_OTHER,  /* anything else with an exit (RunOpApi, halSqTaskSend, ...) */
};

struct frame {
	uint32_t probe_id;
	uint8_t kind;
	int32_t item;
	uint32_t name;	 /* OPNAME captured inside this frame */
	int64_t start;	 /* mono ns */
	uint64_t arg0;	 /* first argument (kernel launches: the function handle) */
	int32_t twin;	 /* 1 + ops index of a range with this frame's span (a backward
				 * node inside its evaluate_function range), 0 none */
	uint8_t refined; /* the twin's span came from its apply() frame instead */
};

struct pend_tensor { /* a TENSOR record waiting for the rest of its op's arguments */
	uint16_t arg, list;
	uint8_t kind, dtype, ndim, flags;
	int64_t dims[ASC_TENSOR_DIMS];
};

#define MAX_PEND 32

struct tstate {
	uint32_t tid;
	uint32_t depth;
	struct frame *frames; /* MAX_OPEN */
	int32_t last_op;      /* op created by the latest ENTER on this thread (for STACK) */
	int32_t enter_op;     /* the same, kept for TENSOR / PYSTACK records */
	uint32_t enter_probe;
	int32_t last_queue; /* queues index of this thread's latest Enqueue QUEUE, or -1 */
	uint32_t last_queue_probe;
	uint64_t last_queue_ts;
	uint32_t npend;
	struct pend_tensor *pend; /* MAX_PEND, allocated on first use */
	int32_t exit_op; /* op closed by the latest EXIT on this thread (SEQNR follows it) */
	uint32_t exit_probe;
	struct pend_launch *launches; /* MAX_PEND_LAUNCH, oldest first, allocated when used */
	uint32_t nlaunches;
	/*
	 * Level0 (no launch probed): the Dequeue slots seen since this thread's
	 * last halSqTaskSend (the slot open at that send counts as the first),
	 * their count and the op name they all share (WIN_MIXED if not).
	 */
	uint32_t win_cnt, win_name;
	int32_t win_last;
	/* the halSqTaskSend whose SQE records are being read (records 1..7 follow record 0) */
	uint64_t send_ts;
	uint32_t send_dev, send_n;
	int32_t send_alt;	 /* alts[] index of header 0's context, -1 = none */
	uint8_t send_use_alt;	 /* 1: headers take alts[], not the calls around the send */
	uint8_t send_per_header; /* alts[send_alt + j] is header j's (else one for all) */
};

struct probe_info {
	uint16_t layer, kind;
	uint32_t name;	       /* derived name string id (aten ops: on first use) */
	uint32_t sym, lib;     /* string ids of the symbol and library path */
	uint8_t named;	       /* name is final */
	uint8_t is_launch_api; /* aclnn* (not GetWorkspaceSize) / aclop*: names kernels */
	uint8_t level;	       /* ASC_CORR_LEVEL_* for CANN probes */
	uint8_t known;
	uint8_t is_kernel_launch; /* aclrtLaunchKernel*, rtKernelLaunch*: arg0 = handle */
	uint8_t producer;	  /* PROD_*: the call queues exactly one task (SQE) */
	int8_t stream_arg;	  /* argument holding the stream, -1 if unknown */
	uint8_t handle_arg;	  /* argument naming the kernel (FUNCNAME handle): 0, or
					 * 1 for the AI CPU calls (a C string) */
};

/*
 * Calls that queue one task on a stream: the runtime may hold the SQE and
 * send it later in one halSqTaskSend with others (NPU_MODEL_SQE_BATCH, the
 * real HAL's sqe_num > 1), so the call around the halSqTaskSend is not
 * always the call that made the task.  The class is what the SQE header
 * type must be.
 */
enum {
	PROD_NONE = 0,
	PROD_KERNEL,	   /* header types 0, 1, 2 (AIC, AICPU, AIV) */
	PROD_EVENT_RECORD, /* 4 */
	PROD_EVENT_WAIT,   /* 5 */
	PROD_COPY,	   /* 11 (SDMA: async memcpy / memset) */
};

/* What a submitted task inherits from the call that made it. */
struct lctx {
	int32_t api, launch_call, op, queue, node_call;
	uint64_t handle; /* function handle of the kernel launch, 0 if none */
	uint32_t kname;	 /* kernel name of that handle when the launch was seen, 0 */
	uint32_t qname;	 /* Level0 batch: the name all slots of the batch share, 0 */
	uint8_t cls;	 /* PROD_* of the call that made the task */
};

/* A task-making call whose SQE has not been seen in a halSqTaskSend yet. */
struct pend_launch {
	struct lctx ctx;
	uint64_t stream; /* the call's stream argument (0 if unknown) */
	int32_t call;	 /* calls[] index of the (outermost) producer call */
	uint8_t cls;	 /* PROD_* */
};

#define MAX_PEND_LAUNCH 256		   /* per thread; the runtime holds at most 64 per stream */
#define MAX_SEND_SQES	(8 * ASC_MAX_SQES) /* headers kept per halSqTaskSend */
#define WIN_MIXED	UINT32_MAX

struct sub { /* one submitted task (SQE header) */
	int64_t ts;
	uint32_t tid;
	int32_t api, launch_call, op, queue;
	uint64_t handle; /* function handle of the enclosing kernel launch, 0 if none */
	uint32_t kname;	 /* kernel name of that handle when the SQE was seen, 0 */
	uint16_t block_dim;
	uint8_t sqe_type;
	uint8_t use_alt;   /* batched capture: take alt (the launch that made it) */
	int32_t alt;	   /* alts[] index, -1: its launch is not known exactly */
	int32_t node_call; /* outermost kernel launch call around the send, -1 */
};

struct devt {
	uint64_t start_cnt, end_cnt;
	uint32_t dev, wrap;
	uint16_t stream, task, type;
};

struct stackrec {
	int32_t op;
	uint32_t nr;
	uint64_t ips[ASC_STACK_DEPTH];
};

struct pystackrec {
	int32_t op;
	uint32_t nr;
	uint64_t code[ASC_PY_DEPTH];
	int32_t lasti[ASC_PY_DEPTH];
};

struct node_class {
	uint64_t vaddr, size;
	uint32_t name;
};

struct wrapstate {
	uint32_t last;
	uint32_t wrap;
	int seen;
};

#define ASC_CORR_PROBE_SLACK 4096 /* probe ids accepted beyond the PROBE records read */

struct priv {
	struct strtab strs;
	struct probe_info *probes;
	size_t nr_probes, probes_cap;
	size_t nr_probe_recs; /* PROBE records accepted: bound the ids */
	struct tstate *threads;
	size_t nr_threads, threads_cap;
	struct asc_u64map tid_index;   /* tid -> threads index */
	struct asc_u64map queue_index; /* correlation id -> queues index */
	struct asc_u64map sub_index;   /* task key -> subs index */
	struct asc_u64map sub_wraps;   /* (dev, stream) -> wrapstates index */
	struct asc_u64map dev_wraps;
	struct wrapstate *wraps;
	size_t nr_wraps, wraps_cap;
	struct sub *subs;
	size_t nr_subs, subs_cap;
	struct lctx *alts; /* launch contexts of batched submissions */
	size_t nr_alts, alts_cap;
	int saw_batch;			/* some halSqTaskSend carried more than one SQE */
	int have_producers;		/* a task-making call was seen (Level1+, or Level0 marks) */
	int have_marks;			/* Level0 launch marks (ASC_PK_LAUNCH_MARK) were seen */
	struct asc_u64map mark_streams; /* marks: stream argument -> SQE stream id, learned */
	struct devt *devts;
	size_t nr_devts, devts_cap;
	struct stackrec *stacks;
	size_t nr_stacks, stacks_cap;
	struct asc_u64map symbols;   /* address -> string id */
	struct asc_u64map funcnames; /* kernel function handle -> kernel name string id */
	struct pystackrec *pystacks;
	size_t nr_pystacks, pystacks_cap;
	struct asc_u64map pyframes;   /* pyframe_key(code, lasti) -> string id */
	struct asc_u64map aten_names; /* aten probe id -> torch's name (ATEN_NAME records) */
	int have_aten_names;	      /* some ATEN_NAME record was read */
	int have_aten_probes;	      /* some probe is an aten op */
	char *scratch;		      /* 8 KiB for building strings */
	int32_t *call_queue;	      /* per call: queue index of the Dequeue it ran in */
	size_t call_queue_cap;
	size_t ops_cap, calls_cap, queues_cap, mems_cap, steps_cap, thr_cap, cfg_cap, cycles_cap;
	struct node_class *classes; /* backward node vtables (NODE_CLASS records) */
	size_t nr_classes, classes_cap;
	int classes_sorted; /* by vaddr, one per vaddr */
	int64_t wall_off;   /* realtime - monotonic */
	int64_t max_mono;
	int64_t min_mono;
};

static inline uint64_t pyframe_key(uint64_t code, int32_t lasti)
{
	return code * 1000003ull + (uint32_t)lasti;
}

static inline uint64_t task_key(uint32_t dev, uint32_t stream, uint32_t task, uint32_t wrap)
{
	return (uint64_t)(dev & 0xff) << 56 | (uint64_t)(wrap & 0xffffff) << 32 |
	       (uint64_t)(stream & 0xffff) << 16 | (task & 0xffff);
}

/* corr_calls.c */
void corr_flush_tensors(struct asc_corr *c, struct priv *p, struct tstate *t);
int corr_on_enter(struct asc_corr *c, struct priv *p, const struct asc_hdr *h);
void corr_on_exit_rec(struct asc_corr *c, struct priv *p, const struct asc_exit *e);
int corr_on_mem(struct asc_corr *c, struct priv *p, const struct asc_mem *m);
void corr_on_opname(struct asc_corr *c, struct priv *p, const struct asc_opname *o);
int corr_on_pystack(struct priv *p, const struct asc_pystack *r);
int corr_on_queue(struct asc_corr *c, struct priv *p, const struct asc_queue *q);
int corr_on_seqnr(struct asc_corr *c, struct priv *p, const struct asc_seqnr *r);
int corr_on_stack(struct priv *p, const struct asc_stack *s);
int corr_on_tensor(struct asc_corr *c, struct priv *p, const struct asc_tensor *r);
int32_t corr_open_item(struct tstate *t, int kind);
const struct probe_info *corr_probe_of(const struct priv *p, uint32_t id);
struct tstate *corr_thread_of(struct priv *p, uint32_t tid);

/* corr_finish.c */
int corr_finish(struct asc_corr *c, struct priv *p);

/* corr_names.c */
int corr_add_probe(struct asc_corr *c, struct priv *p, const struct asc_probe *pr);
void corr_name_aten_probe(struct priv *p, uint32_t id);
const char *corr_node_class(const struct asc_corr *c, struct priv *p, uint64_t vptr);
uint32_t corr_type_from_name(struct priv *p, const char *name);

/* corr_tasks.c */
uint32_t corr_count_wrap(struct priv *p, struct asc_u64map *m, uint32_t dev, uint32_t stream,
			 uint32_t task);
void corr_drop_pending(struct tstate *t, uint32_t i);
int corr_on_launch(struct asc_corr *c, struct priv *p, const struct asc_launch *l);
int corr_on_producer_enter(struct priv *p, struct tstate *t, const struct asc_hdr *h,
			   const struct probe_info *pi, int32_t call);
int corr_on_sqe(struct asc_corr *c, struct priv *p, const struct asc_sqe *s);
struct pend_launch *corr_pending_of_call(struct tstate *t, int32_t call);
int32_t corr_queue_for(struct asc_corr *c, struct priv *p, uint64_t corr);
void corr_window_add(const struct asc_corr *c, struct tstate *t, int32_t q);

/* correlate.c */
int64_t corr_dev_to_mono(const struct asc_corr *c, uint64_t cnt);
const char *corr_task_default_name(uint32_t t);

#endif /* __ASCBPF_CORR_BUILD_H */
