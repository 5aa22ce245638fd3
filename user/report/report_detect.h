/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report_detect.h - the detectors behind `ascbpf report`: pure functions over
 * plain arrays (kernels, API calls, queue slots, memory events, steps), so
 * they can be unit-tested on synthetic data without BPF or a capture.
 *
 * Contract for every input array:
 *  - All times are nanoseconds on one clock, host and device alike (the
 *    adapter, user/report/report_input.c, passes the correlation layer's wall-clock
 *    times); 0 means "not seen" where a field says so.
 *  - Strings are borrowed (owned by whoever filled the input) and may be
 *    NULL when unknown; detectors never free or keep them past the call.
 *  - Arrays need not be sorted; detectors sort private copies.
 *  - Steps are [start_ns, end_ns) host intervals.  With no steps at all the
 *    detectors use one pseudo step (id ASC_RPT_NO_STEP) spanning every event.
 *
 * Every threshold a detector applies is in struct asc_rpt_thresholds, has a
 * name settable with `--threshold name=value`, and is printed with the
 * finding.  A value exactly at a threshold counts as reaching it (>=).
 *
 * Functions return 0 or -errno (-ENOMEM, -EINVAL).  Results own their arrays;
 * asc_rpt_result_free() releases them.
 */
#ifndef __ASCBPF_REPORT_DETECT_H
#define __ASCBPF_REPORT_DETECT_H

#include <stddef.h>
#include <stdint.h>

#define ASC_RPT_NO_STEP (-1) /* kernel/event outside any known step */

/* One device kernel (task) with what launched it. */
struct asc_rpt_kernel {
	uint64_t start_ns;  /* device start, host clock */
	uint64_t end_ns;    /* device end, host clock (>= start_ns) */
	int64_t step;	    /* step id, or ASC_RPT_NO_STEP */
	uint32_t stream;    /* device stream id */
	uint32_t kind;	    /* ASC_RPT_K_COMPUTE, ASC_RPT_K_COPY */
	const char *name;   /* kernel name ("trans_TransData_0", "Add") */
	const char *type;   /* op type ("TransData", "Add"), NULL: use name */
	const char *op;	    /* launching framework op ("aten::add_"), or NULL */
	const char *api;    /* launching CANN API ("aclnnAdd"), or NULL */
	const char *stack;  /* call stack, frames separated by ';', or NULL */
	uint64_t submit_ns; /* when the host handed it to the device (halSqTaskSend),
				 * host clock; 0 if unknown */
	/*
	 * The step of its launching framework op when has_op_step: an op of an
	 * optimizer step runs before the step's end (its return), a kernel it
	 * launched may reach the device after it, in the next step.
	 */
	int64_t op_step;
	uint32_t has_op_step;
};

/*
 * Kinds of device task.  Only compute kernels (the kernel_details rows) count
 * as device compute, in the top list, the optimizer, conversions and
 * dispatch gaps; copies (SDMA) count as device activity for the multi-stream
 * overlap and end a synchronisation's drain.
 */
#define ASC_RPT_K_COMPUTE 0
#define ASC_RPT_K_COPY	  1

/* One host API call (aclrt*, aclnn*, rt*, ...). */
struct asc_rpt_api {
	uint64_t start_ns;
	uint64_t end_ns;
	int64_t step;
	uint32_t tid;
	uint32_t flags;	   /* ASC_RPT_API_INNER */
	const char *name;  /* "aclrtSynchronizeStream" */
	const char *op;	   /* enclosing framework op, or NULL */
	const char *stack; /* call stack, or NULL */
	int64_t ret;	   /* return value (aclError / rtError_t / drvError_t), 0 = success */
};

/*
 * The call runs inside another call of the same kind on its thread
 * (rtDeviceSynchronize inside aclrtSynchronizeDevice, rtMalloc inside
 * aclrtMalloc): counted once, as the outer call.
 */
#define ASC_RPT_API_INNER 0x1

/* One task-queue slot: Enqueue on the producer, Dequeue on acl_thread. */
struct asc_rpt_queue {
	uint64_t enqueue_ns; /* 0 if the enqueue was not seen */
	uint64_t dequeue_ns; /* 0 if the dequeue was not seen */
	uint64_t correlation_id;
};

/* One allocator event, with the allocator's totals after it. */
struct asc_rpt_mem {
	uint64_t ts_ns;
	uint64_t ptr;
	int64_t size;		  /* > 0 malloc, < 0 free (torch_npu convention) */
	uint64_t total_allocated; /* bytes after this event */
	uint64_t total_reserved;
	const char *op; /* framework op that made the allocation, or NULL */
};

struct asc_rpt_step {
	int64_t id;
	uint64_t start_ns;
	uint64_t end_ns;
};

struct asc_rpt_input {
	const struct asc_rpt_kernel *kernels;
	size_t nr_kernels;
	const struct asc_rpt_api *apis;
	size_t nr_apis;
	const struct asc_rpt_queue *queue;
	size_t nr_queue;
	const struct asc_rpt_mem *mem;
	size_t nr_mem;
	const struct asc_rpt_step *steps;
	size_t nr_steps;
};

/*
 * Thresholds.  Names (for --threshold) are the field names.  Shares are
 * fractions in [0, 1]; times in microseconds; sizes in MiB.
 */
struct asc_rpt_thresholds {
	double idle_share;	   /* dispatch-bound: device starved (idle, nothing submitted)
					 * / device active window */
	double gap_us;		   /* dispatch-bound: shortest wait that counts as starving
					 * (shorter: launch latency, clock noise) */
	double stall_share;	   /* dispatch-bound: the longest starved stretch at this share
					 * of all starved time or more is one stall, not dispatch */
	double queue_depth;	   /* dispatch-bound: task-queue slots waiting during the
					 * starvation that make it the launch side's (acl_thread) */
	double optimizer_kernels;  /* per-parameter optimizer kernels per step */
	double transdata_per_step; /* TransData kernels per step */
	double cast_per_step;	   /* Cast kernels per step */
	double sync_share;	   /* host blocked in synchronisations / step time */
	double mem_growth_mb;	   /* median growth of allocated memory per step, MiB */
	double overlap_share;	   /* multi-stream: overlap / least busy stream below
					 * this = serialised */
	double alloc_failures;	   /* failed device-memory allocations */
	double top;		   /* number of kernels / holders listed */
};

void asc_rpt_thresholds_default(struct asc_rpt_thresholds *t);

/*
 * Sets one threshold from "name=value".  -EINVAL (with a message through
 * asc_log) for an unknown name, a malformed or negative value, or a share
 * above 1.
 */
int asc_rpt_threshold_set(struct asc_rpt_thresholds *t, const char *assignment);

/* Iterates the threshold table: returns the name of entry i and its value, NULL past the end. */
const char *asc_rpt_threshold_get(const struct asc_rpt_thresholds *t, size_t i, double *value);

/* ---- step time split ---- */

struct asc_rpt_step_split {
	int64_t step;
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t compute_ns;   /* union of compute kernel intervals (all streams), clipped */
	uint64_t copy_ns;      /* device busy with copies only (no compute kernel running) */
	uint64_t idle_ns;      /* nothing running, between the step's first task start and
				 * last task end */
	uint64_t host_only_ns; /* step time before the first / after the last task;
				 * compute + copy + idle + host_only = the step */
	uint64_t kernels;      /* kernels that intersect the step */
	uint64_t nr_gaps;      /* per-step dispatch evidence (asc_rpt_detect_dispatch) */
	double gap_median_us;
	uint64_t queue_slots; /* enqueues inside the step */
	double queue_depth_median;
	double idle_share;	  /* idle / (compute + copy + idle) */
	uint64_t device_start_ns; /* the step's first task start / last task end (clipped),
					 * 0 when it has none */
	uint64_t device_end_ns;
	uint64_t starved_ns; /* per-step starvation (see struct asc_rpt_dispatch) */
	uint64_t starved_gaps;
	uint64_t starved_max_ns;
	uint64_t starved_queued_ns;
	uint64_t transitions;
	uint64_t starved_transitions;
	double starved_share;
	int dispatch_bound; /* same rule as the overall verdict, on this step alone */
};

/* ---- dispatch-bound verdict ---- */

struct asc_rpt_dispatch {
	uint64_t compute_ns; /* sums over the steps */
	uint64_t copy_ns;
	uint64_t idle_ns;
	uint64_t host_only_ns;
	double idle_share;    /* idle / (compute + copy + idle), 0 without kernels */
	uint64_t nr_gaps;     /* gaps between consecutive kernels of a stream, within a step */
	double gap_median_us; /* nearest-rank median */
	double gap_p99_us;    /* nearest-rank 99th percentile */
	int queue_measured;   /* 1 if enqueue/dequeue pairs were seen */
	uint64_t queue_pairs;
	double queue_depth_median; /* slots waiting, seen at each enqueue */
	double queue_depth_max;
	double queue_wait_median_us; /* dequeue - enqueue */
	/*
	 * Starvation: the device idle with nothing to run, i.e. inside a step's
	 * device window and outside every task's [submission, end] interval
	 * (tasks whose submission is unknown cover only [start, end]), counted
	 * in stretches of at least t.gap_us.  It is what the host makes the
	 * device wait; idle time with work submitted (event waits, the start
	 * latency) is not.
	 */
	uint64_t starved_ns;
	uint64_t starved_gaps;	    /* stretches counted */
	uint64_t starved_max_ns;    /* the longest one */
	uint64_t starved_queued_ns; /* of starved_ns: >= t.queue_depth slots waiting in the
					 * task queue (Enqueued, not yet Dequeued) */
	double starved_share;	    /* starved / (compute + copy + idle) */
	/*
	 * Transitions (evidence only): consecutive kernels of one stream in one
	 * step whose second kernel's submission is known; starved when it was
	 * submitted after the first ended and the gap is >= t.gap_us.  Batched
	 * submissions (several SQEs per halSqTaskSend) starve once per batch,
	 * so this share is no part of the verdict.
	 */
	uint64_t transitions;
	uint64_t starved_transitions;
	double starved_kernel_share; /* starved_transitions / transitions */
	int submissions_known;	     /* 1 if any kernel has a submission time */
	/*
	 * starved_share >= t.idle_share and starved_max_ns < t.stall_share *
	 * starved_ns: the device waits for the host, and not in one stall (a
	 * data load or a host pause inside the step) but spread over the step,
	 * which is what dispatch costs look like.  Then
	 * by_queue when most of the starved time had the task queue holding
	 * >= t.queue_depth slots (acl_thread, the launch side, is behind), else
	 * by_gaps (the framework / Python side issues ops late).
	 */
	int dispatch_bound;
	int by_gaps; /* which of the two held */
	int by_queue;
};

/* ---- top kernels ---- */

struct asc_rpt_kernel_stat {
	const char *name; /* type, or name when the type is unknown */
	uint64_t count;
	uint64_t total_ns;
	uint64_t max_ns;
	uint64_t min_ns;
	double avg_us;
	double share; /* total / sum of all kernel durations */
};

/* ---- optimizer ---- */

struct asc_rpt_optimizer {
	uint64_t kernels;	    /* optimizer kernels in all steps */
	uint64_t fused_kernels;	    /* of which fused / multi-tensor (Foreach*, Apply*...) */
	uint64_t per_param_kernels; /* kernels - fused_kernels */
	uint64_t steps;		    /* steps with at least one optimizer kernel */
	double per_param_per_step;  /* per_param_kernels / steps */
	uint64_t distinct_types;    /* distinct per-parameter kernel types */
	uint64_t repeats_per_step;  /* median per-type count / steps: ~ parameters */
	uint64_t optimizer_ns;	    /* device time of all optimizer kernels */
	int flagged;		    /* per_param_per_step >= t.optimizer_kernels */
};

/* ---- TransData / Cast ---- */

enum asc_rpt_conv_kind {
	ASC_RPT_CONV_TRANSDATA = 0,
	ASC_RPT_CONV_CAST = 1,
};

/* One call site of format/dtype conversion kernels: (kind, op, stack). */
struct asc_rpt_conv_site {
	int kind; /* enum asc_rpt_conv_kind */
	const char *op;
	const char *api;
	const char *stack;
	uint64_t count;
	uint64_t total_ns;
	double per_step; /* count / steps analysed */
	int flagged;	 /* per_step >= the kind's threshold */
};

/* ---- synchronisations ---- */

struct asc_rpt_sync_site {
	const char *name; /* API */
	const char *op;
	const char *stack;
	uint64_t count;
	uint64_t blocked_ns; /* host time inside the call */
	uint64_t drained_ns; /* device idle after the call returned until the next kernel,
				 * when that kernel starts in the same step (a mid-step stall) */
	double share;	     /* blocked / total step time */
	int flagged;	     /* share >= t.sync_share */
};

/* ---- memory ---- */

struct asc_rpt_holder {
	const char *op; /* NULL: unknown */
	uint64_t bytes; /* live bytes at the peak */
	uint64_t blocks;
};

struct asc_rpt_mem_peak {
	int measured; /* 1 if memory events were seen */
	uint64_t peak_allocated;
	uint64_t peak_ns;
	int64_t peak_step;
	uint64_t peak_reserved;
	uint64_t unattributed_bytes;	/* peak minus blocks allocated inside the capture */
	struct asc_rpt_holder *holders; /* top-N by bytes */
	size_t nr_holders;
};

struct asc_rpt_mem_step {
	int64_t step;
	uint64_t end_allocated; /* allocated after the step's last event */
	uint64_t peak_allocated;
};

struct asc_rpt_mem_growth {
	struct asc_rpt_mem_step *steps;
	size_t nr_steps;
	double growth_median_mb; /* median of consecutive end_allocated deltas, MiB */
	double growth_total_mb;	 /* last - first end_allocated, MiB */
	uint64_t steps_grown;	 /* deltas > 0 */
	int flagged;		 /* >= 3 steps and growth_median_mb >= t.mem_growth_mb */
};

/* ---- multi-stream overlap ---- */

struct asc_rpt_stream_busy {
	uint32_t stream;
	uint64_t kernels;
	uint64_t busy_ns;
};

struct asc_rpt_overlap {
	struct asc_rpt_stream_busy *streams;
	size_t nr_streams;
	uint64_t busy_ns;     /* union over all streams */
	uint64_t overlap_ns;  /* time with >= 2 streams busy */
	double overlap_share; /* overlap / busy time of the least busy stream (0: one stream) */
	int serialised;	      /* >= 2 streams and overlap_share < t.overlap_share */
};

/* ---- failed device-memory allocations ---- */

struct asc_rpt_alloc_fail {
	uint64_t calls;	   /* allocation calls seen */
	uint64_t failures; /* of which returned an error */
	int64_t first_ret; /* error of the first failure */
	uint64_t first_ns;
	int64_t first_step;
	const char *name; /* API of the first failure */
	const char *op;
	const char *stack;
	int flagged; /* failures >= t.alloc_failures (and > 0) */
};

struct asc_rpt_result {
	struct asc_rpt_step_split *steps;
	size_t nr_steps;
	struct asc_rpt_dispatch dispatch;
	struct asc_rpt_kernel_stat *top;
	size_t nr_top;
	uint64_t kernel_types; /* distinct kernel types before the top-N cut */
	uint64_t device_ns;    /* sum of all kernel durations */
	struct asc_rpt_optimizer optimizer;
	struct asc_rpt_conv_site *conv;
	size_t nr_conv;
	struct asc_rpt_sync_site *syncs;
	size_t nr_syncs;
	struct asc_rpt_mem_peak mem_peak;
	struct asc_rpt_mem_growth mem_growth;
	struct asc_rpt_overlap overlap;
	struct asc_rpt_alloc_fail alloc;
};

/* Each detector fills its part of *res (zeroed by the caller or by asc_rpt_analyse). */
int asc_rpt_detect_steps(const struct asc_rpt_input *in, struct asc_rpt_result *res);
int asc_rpt_detect_dispatch(const struct asc_rpt_input *in, const struct asc_rpt_thresholds *t,
			    struct asc_rpt_result *res);
int asc_rpt_detect_top(const struct asc_rpt_input *in, const struct asc_rpt_thresholds *t,
		       struct asc_rpt_result *res);
int asc_rpt_detect_optimizer(const struct asc_rpt_input *in, const struct asc_rpt_thresholds *t,
			     struct asc_rpt_result *res);
int asc_rpt_detect_conversions(const struct asc_rpt_input *in, const struct asc_rpt_thresholds *t,
			       struct asc_rpt_result *res);
int asc_rpt_detect_syncs(const struct asc_rpt_input *in, const struct asc_rpt_thresholds *t,
			 struct asc_rpt_result *res);
int asc_rpt_detect_mem_peak(const struct asc_rpt_input *in, const struct asc_rpt_thresholds *t,
			    struct asc_rpt_result *res);
int asc_rpt_detect_mem_growth(const struct asc_rpt_input *in, const struct asc_rpt_thresholds *t,
			      struct asc_rpt_result *res);
int asc_rpt_detect_alloc_failures(const struct asc_rpt_input *in,
				  const struct asc_rpt_thresholds *t, struct asc_rpt_result *res);
int asc_rpt_detect_overlap(const struct asc_rpt_input *in, const struct asc_rpt_thresholds *t,
			   struct asc_rpt_result *res);

/* Runs every detector into a zeroed *res; on error *res is freed. */
int asc_rpt_analyse(const struct asc_rpt_input *in, const struct asc_rpt_thresholds *t,
		    struct asc_rpt_result *res);
void asc_rpt_result_free(struct asc_rpt_result *res);

/* Classification used by the detectors, exposed for tests and the adapter. */
int asc_rpt_is_transdata(const struct asc_rpt_kernel *k);
int asc_rpt_is_cast(const struct asc_rpt_kernel *k);
int asc_rpt_is_optimizer(const struct asc_rpt_kernel *k);
int asc_rpt_is_fused_optimizer(const struct asc_rpt_kernel *k);
int asc_rpt_is_sync_api(const char *name);
int asc_rpt_is_alloc_api(const char *name);

/* ---- the adapter: a capture -> the arrays above (user/report/report_input.c) ---- */

struct asc_corr;

struct asc_rpt_source {
	struct asc_rpt_input in;
	char capture[4096]; /* the capture file read */
	uint32_t pid;
	int32_t rank, device;	     /* -1 if unknown */
	uint64_t steps_in_capture;   /* step records, recorded or not */
	uint64_t kernels_in_capture; /* device tasks, compute or not */
	uint64_t unmatched_kernels;  /* of the kernels taken, those without a launch */
	uint64_t bpf_drops, devtask_drops, lost;
	int mem_component; /* ASC_MEM_* used for the memory detectors, -1 none */
	int damaged;
	char damage[128];
	/*
	 * Set by the caller before loading (and owned by it): only these steps
	 * (a run directory's cycle) and the events in them are taken; none =
	 * the whole capture.
	 */
	const int64_t *only_steps;
	size_t nr_only_steps;
	void *priv; /* the correlation view and the strings made here */
};

/*
 * Finds the capture for `ascbpf report PATH`: PATH itself if it is a file;
 * for a directory PATH/ascbpf/capture.ascb ({run}_ascend_pt, written by
 * convert), PATH/capture.ascb, or the one {run}_ascend_pt/ascbpf/capture.ascb
 * below PATH.  -ENOENT (with a message) when none is found, -EINVAL when
 * several runs are found (the message lists them).
 */
int asc_rpt_find_capture(const char *path, char *out, size_t size);

/*
 * The steps of the run a capture path belongs to: for
 * {run}_ascend_pt/ascbpf/capture.ascb (one copy per cycle, all of the same
 * capture), the Step column of {run}_ascend_pt/ASCEND_PROFILER_OUTPUT/
 * step_trace_time.csv.  *n = 0 when the path is not inside a run directory
 * or the file has no steps.  0 or -ENOMEM; *steps is malloc'ed.
 */
int asc_rpt_run_steps(const char *capture, int64_t **steps, size_t *n);

/*
 * Reads the capture through the correlation layer (user/analysis/correlate.h) and
 * fills src->in: compute kernels, CANN calls, queue slots, allocator events
 * of one component (PTA, else GE, else APP) and the recorded steps.  The
 * strings in src->in live until asc_rpt_source_free().  A damaged capture
 * still loads (src->damaged set).  0 or -errno.
 */
int asc_rpt_source_load(const char *capture, struct asc_rpt_source *src);

/* The same from a view built elsewhere; src takes no ownership of c (only_steps kept). */
int asc_rpt_source_from_corr(const struct asc_corr *c, struct asc_rpt_source *src);

void asc_rpt_source_free(struct asc_rpt_source *src);

#endif /* __ASCBPF_REPORT_DETECT_H */
