// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * convert.c - `ascbpf convert CAPTURE [-o DIR]`: the torch_npu.profiler
 * output (../shared/reference/ascend_output_format.md) from a capture.
 *
 * One *_ascend_pt directory per RECORD_AND_SAVE cycle of the schedule (one
 * for the whole capture when it has no step records).  Everything is
 * streamed from the joined view (correlate.h) straight into files; nothing
 * builds a JSON or CSV document in memory.
 *
 * The dialect is the one of the reference sample (torch_npu 2.1 / CANN 8.0:
 * "Block Dim", no Device_id column, "NPU" process labels, msprof sort
 * indices 7/13/19/23), so the output compares with the sample header for
 * header.  Values ascbpf cannot know are written as torch_npu writes an
 * unknown: "N/A" in CANN-derived kernel columns (OP State, HF32 Eligible,
 * shapes, formats, Context ID, PMU columns), empty where torch_npu leaves
 * None.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "ascbpf_events.h"
#include "capture/capture.h"
#include "commands.h"
#include "convert/convert.h"
#include "analysis/correlate.h"
#include "lib/csv_writer.h"
#include "lib/json_writer.h"
#include "lib/log.h"
#include "lib/safeio.h"
#include "schedule.h"
#include "discovery/seqnr.h"

/* msprof process sort indices as in the sample (older CANN). */
#define SORT_CANN		7
#define SORT_HARDWARE		13
#define SORT_NPU_MEM		19
#define SORT_OVERLAP		23
#define MODEL_ID_INVALID	"4294967295"

/* Kernel_details headers of the sample (Level1/2) and of a Level0 run. */
static const char kd_header_l1[] =
	"Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),"
	"Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,"
	"Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID";
/* PMU columns (aic_metrics PipeUtilization): ascbpf has no counters, they are N/A. */
static const char kd_pmu[] =
	"aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,aic_scalar_time(us),"
	"aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,"
	"aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),"
	"aiv_total_cycles,aiv_vec_time(us),aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,"
	"aiv_mte2_time(us),aiv_mte2_ratio,aiv_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,"
	"cube_utilization(%)";
#define KD_PMU_COLS	25
static const char kd_header_l0[] =
	"Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim";
static const char od_header[] =
	"Name,Input Shapes,Call Stack,Host Self Duration(us),Host Total Duration(us),"
	"Device Self Duration(us),Device Total Duration(us),Device Self Duration With AICore(us),"
	"Device Total Duration With AICore(us)";
static const char st_header[] =
	"Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
	"Communication(Not Overlapped and Exclude Receive),Preparing";
static const char mr_header[] =
	"Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),"
	"Stream Ptr,Device Type";
static const char om_header[] =
	"Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),"
	"Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),"
	"Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),"
	"Release Total Active(MB),Stream Ptr,Device Type";
static const char os_header[] =
	"OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)";
static const char as_header[] =
	"Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance";

static const char *const env_names[] = {
	"ASCEND_GLOBAL_LOG_LEVEL", "HCCL_RDMA_TC", "HCCL_RDMA_SL", "ACLNN_CACHE_LIMIT",
	"HOST_CACHE_CAPACITY", "ASCEND_ENHANCE_ENABLE", "PYTORCH_NPU_ALLOC_CONF",
	"ASCEND_LAUNCH_BLOCKING", NULL,
};

struct conv {
	const struct asc_corr *c;
	const struct asc_convert_opts *opts;
	int level;
	int cycle;			/* index into c->cycles, -1 = whole capture */
	int has_steps;
	uint32_t pid;
	char dir[PATH_MAX];		/* the *_ascend_pt directory */
	char out[PATH_MAX];		/* its ASCEND_PROFILER_OUTPUT */
	int err;
	int64_t last_stamp_ms;		/* run directory stamps stay unique within one convert */
};

/* ---- small helpers ---- */

static uint32_t fmt_pid(uint32_t pid, uint32_t sort, uint32_t dev)
{
	return (uint32_t)((pid << 10) | (sort << 5) | (dev & 31));
}

/* Step index (in c->steps) of a step id, or -1. */
static int32_t step_index(const struct asc_corr *c, int64_t id)
{
	size_t lo = 0, hi = c->nr_steps;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if ((int64_t)c->steps[mid].step < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->nr_steps && (int64_t)c->steps[lo].step == id ? (int32_t)lo : -1;
}

/* Is an item of step id `step` part of the cycle being written? */
static int in_cycle(const struct conv *v, int32_t step)
{
	int32_t i;

	if (v->cycle < 0)
		return 1;
	if (step < 0)
		return 0;
	i = step_index(v->c, step);
	return i >= 0 && v->c->steps[i].cycle == v->cycle &&
	       asc_sched_recording(v->c->steps[i].state);
}

/* "%.3f" without trailing zeros ("53.741", "0", "4.5"), as CANN's summaries read. */
static void fmt_3(char *buf, size_t len, double v)
{
	char *p;

	snprintf(buf, len, "%.3f", v);
	p = buf + strlen(buf) - 1;
	while (*p == '0')
		*p-- = '\0';
	if (*p == '.')
		*p = '\0';
	if (!strcmp(buf, "-0"))
		strcpy(buf, "0");
}

static void csv_3(struct asc_csv *c, double v)
{
	char buf[48];

	fmt_3(buf, sizeof(buf), v);
	asc_csv_cstr(c, buf);
}

/* The same for an integer ns shown in us, without floating point. */
static void csv_3ns(struct asc_csv *c, int64_t ns)
{
	char buf[48];
	int n = asc_fmt_us_float(buf, ns);

	if (n > 2 && !strcmp(buf + n - 2, ".0"))
		n -= 2;
	asc_csv_cell(c, buf, n);
}

static void join(char *dst, size_t len, const char *a, const char *b)
{
	if (snprintf(dst, len, "%s/%s", a, b) >= (int)len)
		dst[0] = '\0';
}

static int open_out(struct conv *v, struct asc_out *o, const char *dir, const char *name)
{
	char path[PATH_MAX + 64];

	(void)v;
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	return asc_out_open(o, path, 1);
}

static int close_out(struct conv *v, struct asc_out *o, const char *name)
{
	int err = asc_out_close(o);

	if (err) {
		asc_err("convert: writing %s: %s\n", name, strerror(-err));
		if (!v->err)
			v->err = err;
	}
	return err;
}

/* ---- trace_view.json ---- */

struct trace {
	struct asc_out *o;
	int n;		/* events written in the current half */
};

static void ev_begin(struct trace *t)
{
	asc_out_puts(t->o, t->n++ ? ", {" : "{");
}

/* `"key": "<us.3f>"` (every ts of the trace is a string). */
static void put_ts(struct asc_out *o, const char *key, int64_t ns)
{
	char buf[40];

	asc_out_putc(o, '"');
	asc_out_puts(o, key);
	asc_out_write(o, "\": \"", 4);
	asc_out_write(o, buf, asc_fmt_us(buf, ns));
	asc_out_putc(o, '"');
}

/* `"dur": <float us>` */
static void put_dur(struct asc_out *o, int64_t ns)
{
	char buf[40];

	asc_out_write(o, "\"dur\": ", 7);
	asc_out_write(o, buf, asc_fmt_us_float(buf, ns));
}

static void put_u(struct asc_out *o, const char *prefix, uint64_t v)
{
	asc_out_puts(o, prefix);
	asc_out_u64(o, v);
}

static void meta(struct trace *t, const char *name, uint32_t pid, uint32_t tid, const char *key,
		 const char *sval, long long ival, int fwk)
{
	ev_begin(t);
	if (fwk)
		asc_out_printf(t->o, "\"ph\": \"M\", \"name\": \"%s\", \"pid\": %u, \"tid\": %u, "
			       "\"args\": {\"%s\": ", name, pid, tid, key);
	else
		asc_out_printf(t->o, "\"name\": \"%s\", \"pid\": %u, \"tid\": %u, \"args\": {\"%s\": ",
			       name, pid, tid, key);
	if (sval)
		asc_json_cstr(t->o, sval);
	else
		asc_out_printf(t->o, "%lld", ival);
	asc_out_puts(t->o, fwk ? "}}" : "}, \"ph\": \"M\"}");
}

static void flow(struct trace *t, const char *ph, const char *name, uint64_t id, uint32_t pid,
		 uint32_t tid, int64_t ts, const char *cat)
{
	ev_begin(t);
	asc_out_write(t->o, "\"ph\": \"", 7);
	asc_out_puts(t->o, ph);
	asc_out_puts(t->o, "\", \"bp\": \"e\", \"name\": \"");
	asc_out_puts(t->o, name);
	put_u(t->o, "\", \"id\": ", id);
	put_u(t->o, ", \"pid\": ", pid);
	put_u(t->o, ", \"tid\": ", tid);
	asc_out_write(t->o, ", ", 2);
	put_ts(t->o, "ts", ts);
	asc_out_puts(t->o, ", \"cat\": \"");
	asc_out_puts(t->o, cat);
	asc_out_write(t->o, "\"}", 2);
}

static int kernel_in(const struct conv *v, const struct asc_corr_kernel *k)
{
	if (!in_cycle(v, k->step))
		return 0;
	return 1;
}

/* Connection id of a kernel (HostToDevice flow, connection_id args): its index + 1. */
static uint64_t conn_id(const struct asc_corr *c, const struct asc_corr_kernel *k)
{
	return (uint64_t)(k - c->kernels) + 1;
}

/*
 * Where a kernel's HostToDevice flow starts.  In the reference (torch_npu
 * Level1 sample) the s end of a kernel's flow lies inside its Node@launch
 * span (msprof's task record, taken inside the launch), the s end of a copy
 * or event task at its AscendCL@ API's ts.  ascbpf knows the halSqTaskSend
 * inside the launch when the runtime sends at once: that time, else (the
 * task was sent later, batched) the launch's start.
 */
static int64_t h2d_start_ns(const struct asc_corr *c, const struct asc_corr_kernel *k)
{
	const struct asc_corr_call *a;

	if (k->node_call < 0)
		return c->calls[k->api].start_ns;
	a = &c->calls[k->node_call];
	if (k->submit_tid == a->tid && k->submit_ns >= a->start_ns && k->submit_ns <= a->end_ns)
		return k->submit_ns;
	return a->start_ns;
}

static uint32_t h2d_tid(const struct asc_corr *c, const struct asc_corr_kernel *k)
{
	return c->calls[k->node_call >= 0 ? k->node_call : k->api].tid;
}

static void h2d_start(struct trace *t, const struct asc_corr *c, const struct asc_corr_kernel *k,
		      uint32_t cann)
{
	ev_begin(t);
	asc_out_printf(t->o, "\"name\": \"HostToDevice%llu\", \"ph\": \"s\", "
		       "\"cat\": \"HostToDevice\", \"id\": \"%llu\", \"pid\": %u, "
		       "\"tid\": %u, ", (unsigned long long)conn_id(c, k),
		       (unsigned long long)conn_id(c, k), cann, h2d_tid(c, k));
	put_ts(t->o, "ts", h2d_start_ns(c, k));
	asc_out_putc(t->o, '}');
}

/*
 * torch_npu's Level1+ "Node@launch": one per kernel launch call, on the
 * launching thread, the span of the launch call, item_id the kernel's name
 * and connection_id its HostToDevice flow's id; its flow's s end follows it.
 */
static void node_launch(struct trace *t, const struct asc_corr *c, const struct asc_corr_kernel *k,
			uint32_t cann)
{
	const struct asc_corr_call *a = &c->calls[k->node_call];

	ev_begin(t);
	asc_out_printf(t->o, "\"name\": \"Node@launch\", \"pid\": %u, \"tid\": %u, ", cann, a->tid);
	put_ts(t->o, "ts", a->start_ns);
	asc_out_puts(t->o, ", ");
	put_dur(t->o, asc_ns_sub(a->end_ns, a->start_ns));
	asc_out_printf(t->o, ", \"args\": {\"Thread Id\": %u, \"Mode\": \"launch\", "
		       "\"level\": \"node\", \"id\": \"0\", \"item_id\": ", a->tid);
	asc_json_cstr(t->o, asc_corr_str(c, k->name));
	put_u(t->o, ", \"connection_id\": ", conn_id(c, k));
	asc_out_puts(t->o, "}, \"ph\": \"X\"}");
	h2d_start(t, c, k, cann);
}

static int call_level_shown(const struct conv *v, const struct asc_corr_call *k)
{
	if (v->level == 0 || k->level == ASC_CORR_LEVEL_NODE)
		return 0;	/* Level0 prunes every CANN event; a node launch: its Node only */
	return k->level == ASC_CORR_LEVEL_ACL || v->level >= 2;
}

static const char *call_mode(const char *name)
{
	if (!strncmp(name, "aclrt", 5))
		return "ACL_RTS";
	if (!strncmp(name, "aclnn", 5) || !strncmp(name, "aclop", 5))
		return "ACL_OP";
	if (!strncmp(name, "rt", 2))
		return "RUNTIME";
	return "ACL_OTHERS";
}

/* One op for the fwdbwd pairing (user/discovery/seqnr.h), NULL outside this cycle. */
static const struct asc_fwdbwd_op *fwdbwd_op(size_t i, void *ctx)
{
	static struct asc_fwdbwd_op fo;
	const struct conv *v = ctx;
	const struct asc_corr_op *o = &v->c->ops[i];

	if (!in_cycle(v, o->step))
		return NULL;
	fo.start_ns = o->start_ns;
	fo.seq = o->seq;
	fo.tid = o->tid;
	fo.fwd_tid = o->fwd_tid;
	return &fo;
}

static void write_fwdbwd(struct conv *v, struct trace *t)
{
	struct asc_fwdbwd *pairs;
	long n = asc_fwdbwd_pairs(v->c->nr_ops, fwdbwd_op, v, &pairs), i;

	for (i = 0; i < n; i++) {
		const struct asc_corr_op *f = &v->c->ops[pairs[i].fwd];
		const struct asc_corr_op *b = &v->c->ops[pairs[i].bwd];

		flow(t, "s", "fwdbwd", pairs[i].seq, v->pid, f->tid, f->start_ns, "fwdbwd");
		flow(t, "f", "fwdbwd", pairs[i].seq, v->pid, b->tid, b->start_ns, "fwdbwd");
	}
	free(pairs);
	if (n < 0)
		v->err = (int)n;
}

static void write_fwk_half(struct conv *v, struct trace *t)
{
	const struct asc_corr *c = v->c;
	uint32_t pid = v->pid, max_tid = 0, deq_tid = 0;
	uint32_t tids[256];
	size_t i, ntids = 0, j;

#define ADD_TID(x) do {							\
		for (j = 0; j < ntids && tids[j] != (x); j++)		\
			;						\
		if (j == ntids && ntids < 256)				\
			tids[ntids++] = (x);				\
	} while (0)

	for (i = 0; i < c->nr_ops; i++) {
		const struct asc_corr_op *o = &c->ops[i];

		if (!in_cycle(v, o->step))
			continue;
		ev_begin(t);
		asc_out_puts(t->o, "\"ph\": \"X\", \"name\": ");
		asc_json_cstr(t->o, asc_corr_str(c, o->name));
		put_u(t->o, ", \"pid\": ", pid);
		put_u(t->o, ", \"tid\": ", o->tid);
		asc_out_write(t->o, ", ", 2);
		put_ts(t->o, "ts", o->start_ns);
		asc_out_write(t->o, ", ", 2);
		put_dur(t->o, asc_ns_sub(o->end_ns, o->start_ns));
		asc_out_puts(t->o, ", \"cat\": \"cpu_op\", \"args\": {\"Sequence number\": ");
		asc_out_s64(t->o, o->seq);
		asc_out_puts(t->o, ", \"Fwd thread id\": ");
		asc_out_u64(t->o, o->fwd_tid);
		if (o->input_dims || o->input_types) {	/* --record-shapes */
			asc_out_puts(t->o, ", \"Input Dims\": ");
			asc_json_cstr(t->o, asc_corr_str(c, o->input_dims));
			asc_out_puts(t->o, ", \"Input type\": ");
			asc_json_cstr(t->o, asc_corr_str(c, o->input_types));
		}
		if (o->stack) {
			asc_out_puts(t->o, ", \"Call stack\": ");
			asc_json_cstr(t->o, asc_corr_str(c, o->stack));
		}
		asc_out_puts(t->o, "}}");
		ADD_TID(o->tid);
	}
	/* dequeues (X + f), then enqueues (X + s), as torch_npu orders them */
	for (int side = 1; side >= 0; side--) {
		for (i = 0; i < c->nr_queues; i++) {
			const struct asc_corr_queue *q = &c->queues[i];
			int64_t s = side ? q->deq_start_ns : q->enq_start_ns;
			int64_t e = side ? q->deq_end_ns : q->enq_end_ns;
			uint32_t tid = side ? q->deq_tid : q->enq_tid;
			const char *nm = q->name ? asc_corr_str(c, q->name) :
					 q->op >= 0 ? asc_corr_str(c, c->ops[q->op].name) : "";
			int matched = q->enq_start_ns && q->deq_start_ns;

			if (!s || !in_cycle(v, q->step))
				continue;
			ev_begin(t);
			asc_out_puts(t->o, "\"ph\": \"X\", \"name\": ");
			{
				char name[160];

				snprintf(name, sizeof(name), "%s%s%s", side ? "Dequeue" : "Enqueue",
					 matched && *nm ? "@" : "", matched ? nm : "");
				asc_json_cstr(t->o, name);
			}
			asc_out_printf(t->o, ", \"pid\": %u, \"tid\": %u, ", pid, tid);
			put_ts(t->o, "ts", s);
			asc_out_puts(t->o, ", ");
			put_dur(t->o, asc_ns_sub(e, s));
			asc_out_printf(t->o, ", \"cat\": \"%s\", \"args\": {\"correlation_id\": %llu}}",
				       side ? "dequeue" : "enqueue",
				       (unsigned long long)q->correlation_id);
			if (matched)
				flow(t, side ? "f" : "s", "enqueue_to_dequeue", q->correlation_id,
				     pid, tid, s, "async_task_queue");
			ADD_TID(tid);
			if (side)
				deq_tid = tid;
		}
	}
	/* process and thread metadata */
	meta(t, "process_name", pid, 0, "name", "Python", 0, 1);
	meta(t, "process_labels", pid, 0, "labels", "CPU", 0, 1);
	meta(t, "process_sort_index", pid, 0, "sort_index", NULL, 0, 1);
	for (j = 0; j < ntids; j++)
		if (tids[j] > max_tid)
			max_tid = tids[j];
	for (j = 0; j < ntids; j++) {
		char name[32];

		snprintf(name, sizeof(name), "Thread %u", tids[j]);
		meta(t, "thread_name", pid, tids[j], "name", name, 0, 1);
		/* the dequeue thread sorts after every other: max(tid) + 1 */
		meta(t, "thread_sort_index", pid, tids[j], "sort_index", NULL,
		     tids[j] == deq_tid ? (long long)max_tid + 1 : (long long)tids[j], 1);
	}
	write_fwdbwd(v, t);
#undef ADD_TID
}

/* Computing intervals: union of the compute kernels of a device, in time order. */
struct span {
	int64_t s, e;
};

static struct span *computing_spans(const struct conv *v, uint32_t dev, size_t *nr)
{
	const struct asc_corr *c = v->c;
	struct span *sp = NULL;
	size_t i, n = 0, cap = 0;

	/* kernels are sorted by start: merge as we go */
	for (i = 0; i < c->nr_kernels; i++) {
		const struct asc_corr_kernel *k = &c->kernels[i];

		if (k->device != dev || !(k->flags & ASC_CORR_K_COMPUTE) || !kernel_in(v, k))
			continue;
		if (n && k->start_ns <= sp[n - 1].e) {
			if (k->end_ns > sp[n - 1].e)
				sp[n - 1].e = k->end_ns;
			continue;
		}
		if (n == cap) {
			struct span *ns = realloc(sp, (cap = cap ? cap * 2 : 256) * sizeof(*sp));

			if (!ns) {
				free(sp);
				*nr = 0;
				return NULL;
			}
			sp = ns;
		}
		sp[n].s = k->start_ns;
		sp[n].e = k->end_ns;
		n++;
	}
	*nr = n;
	return sp;
}

/* Devices with kernels in this cycle (bit mask, devices 0..31). */
static uint32_t devices_of(const struct conv *v)
{
	uint32_t mask = 0;
	size_t i;

	for (i = 0; i < v->c->nr_kernels; i++)
		if (kernel_in(v, &v->c->kernels[i]))
			mask |= 1u << (v->c->kernels[i].device & 31);
	for (i = 0; i < v->c->nr_mems; i++)
		if (in_cycle(v, v->c->mems[i].step))
			mask |= 1u << (v->c->mems[i].device & 31);
	return mask;
}

static void write_npu_half(struct conv *v, struct trace *t)
{
	const struct asc_corr *c = v->c;
	uint32_t pid = v->pid, cann = fmt_pid(pid, SORT_CANN, 0), devs = devices_of(v);
	int32_t *node_kernel = NULL;	/* call index -> the kernel it launched (Level1+) */
	size_t i, j;
	uint32_t d;

	if (v->level > 0 && c->nr_calls) {
		node_kernel = malloc(c->nr_calls * sizeof(*node_kernel));
		if (!node_kernel) {
			v->err = -ENOMEM;
			return;
		}
		for (i = 0; i < c->nr_calls; i++)
			node_kernel[i] = -1;
		for (i = 0; i < c->nr_kernels; i++) {
			const struct asc_corr_kernel *k = &c->kernels[i];

			if (k->node_call >= 0 && k->api >= 0 && kernel_in(v, k) &&
			    node_kernel[k->node_call] < 0)
				node_kernel[k->node_call] = (int32_t)i;
		}
	}

	/* CANN: process, threads, API events, HostToDevice starts */
	if (v->level > 0) {
		uint32_t tids[256];
		size_t ntids = 0;

		for (i = 0; i < c->nr_calls; i++) {
			const struct asc_corr_call *k = &c->calls[i];

			if (!call_level_shown(v, k) || !in_cycle(v, k->step))
				continue;
			for (j = 0; j < ntids && tids[j] != k->tid; j++)
				;
			if (j == ntids && ntids < 256)
				tids[ntids++] = k->tid;
		}
		meta(t, "process_name", cann, 0, "name", "CANN", 0, 0);
		for (j = 0; j < ntids; j++) {
			char name[32];

			snprintf(name, sizeof(name), "Thread %u", tids[j]);
			meta(t, "thread_name", cann, tids[j], "name", name, 0, 0);
		}
		for (j = 0; j < ntids; j++)
			meta(t, "thread_sort_index", cann, tids[j], "sort_index", NULL, tids[j], 0);
		meta(t, "process_labels", cann, 0, "labels", "CPU", 0, 0);
		meta(t, "process_sort_index", cann, 0, "sort_index", NULL, SORT_CANN, 0);
	}
	for (i = 0; i < c->nr_calls; i++) {
		const struct asc_corr_call *k = &c->calls[i];
		const char *nm = asc_corr_str(c, k->name);
		char full[160];

		if (node_kernel && node_kernel[i] >= 0 && (!call_level_shown(v, k) ||
							   !in_cycle(v, k->step)))
			node_launch(t, c, &c->kernels[node_kernel[i]], cann);
		if (!call_level_shown(v, k) || !in_cycle(v, k->step))
			continue;
		snprintf(full, sizeof(full), "%s@%s",
			 k->level == ASC_CORR_LEVEL_RUNTIME ? "Runtime" : "AscendCL", nm);
		ev_begin(t);
		asc_out_puts(t->o, "\"name\": ");
		asc_json_cstr(t->o, full);
		asc_out_printf(t->o, ", \"pid\": %u, \"tid\": %u, ", cann, k->tid);
		put_ts(t->o, "ts", k->start_ns);
		asc_out_puts(t->o, ", ");
		put_dur(t->o, asc_ns_sub(k->end_ns, k->start_ns));
		asc_out_printf(t->o, ", \"args\": {\"Thread Id\": %u, \"Mode\": \"%s\", "
			       "\"level\": \"%s\", \"id\": ", k->tid, call_mode(nm),
			       k->level == ASC_CORR_LEVEL_RUNTIME ? "runtime" : "acl");
		asc_json_cstr(t->o, nm);
		asc_out_printf(t->o, ", \"item_id\": \"0\", \"connection_id\": %zu}, \"ph\": \"X\"}",
			       i + 1);
		if (node_kernel && node_kernel[i] >= 0)
			node_launch(t, c, &c->kernels[node_kernel[i]], cann);
	}
	/*
	 * HostToDevice starts of the other kernels: at the launching API (kept at
	 * Level0 too, where torch_npu keeps msprof's s ends)
	 */
	for (i = 0; i < c->nr_kernels; i++) {
		const struct asc_corr_kernel *k = &c->kernels[i];

		if (k->api < 0 || !kernel_in(v, k))
			continue;
		if (node_kernel && k->node_call >= 0 && node_kernel[k->node_call] == (int32_t)i)
			continue;	/* written after its Node@launch */
		h2d_start(t, c, k, cann);
	}
	free(node_kernel);

	for (d = 0; d < 32; d++) {
		uint32_t hw = fmt_pid(pid, SORT_HARDWARE, d), ov = fmt_pid(pid, SORT_OVERLAP, d);
		uint32_t streams[256];
		size_t ns = 0, nspan;
		struct span *sp;

		if (!(devs & (1u << d)))
			continue;
		for (i = 0; i < c->nr_kernels; i++) {
			const struct asc_corr_kernel *k = &c->kernels[i];

			if (k->device != d || !kernel_in(v, k))
				continue;
			for (j = 0; j < ns && streams[j] != k->stream; j++)
				;
			if (j == ns && ns < 256)
				streams[ns++] = k->stream;
		}
		/* Ascend Hardware */
		meta(t, "process_name", hw, 0, "name", "Ascend Hardware", 0, 0);
		for (j = 0; j < ns; j++) {
			char name[32];

			snprintf(name, sizeof(name), "Stream %u", streams[j]);
			meta(t, "thread_name", hw, streams[j], "name", name, 0, 0);
			meta(t, "thread_sort_index", hw, streams[j], "sort_index", NULL,
			     streams[j], 0);
		}
		meta(t, "process_labels", hw, 0, "labels", "NPU", 0, 0);
		meta(t, "process_sort_index", hw, 0, "sort_index", NULL, SORT_HARDWARE, 0);
		for (i = 0; i < c->nr_kernels; i++) {
			const struct asc_corr_kernel *k = &c->kernels[i];

			if (k->device != d || !kernel_in(v, k))
				continue;
			ev_begin(t);
			asc_out_puts(t->o, "\"name\": ");
			asc_json_cstr(t->o, asc_corr_str(c, k->name));
			put_u(t->o, ", \"pid\": ", hw);
			put_u(t->o, ", \"tid\": ", k->stream);
			asc_out_write(t->o, ", ", 2);
			put_ts(t->o, "ts", k->start_ns);
			asc_out_write(t->o, ", ", 2);
			put_dur(t->o, asc_ns_sub(k->end_ns, k->start_ns));
			asc_out_puts(t->o, ", \"args\": {\"Model Id\": 4294967295, \"Task Type\": \"");
			asc_out_puts(t->o, asc_corr_task_type_name(k->task_type));
			put_u(t->o, "\", \"Physic Stream Id\": ", k->stream);
			put_u(t->o, ", \"Stream Id\": ", k->stream);
			put_u(t->o, ", \"Task Id\": ", k->task_id);
			put_u(t->o, ", \"Batch Id\": 0, \"Subtask Id\": 4294967295, \"connection_id\": ",
			      conn_id(c, k));
			asc_out_puts(t->o, "}, \"ph\": \"X\"}");
			if (k->api >= 0) {
				ev_begin(t);
				put_u(t->o, "\"name\": \"HostToDevice", conn_id(c, k));
				put_u(t->o, "\", \"ph\": \"f\", \"id\": \"", conn_id(c, k));
				asc_out_write(t->o, "\", ", 3);
				put_ts(t->o, "ts", k->start_ns);
				put_u(t->o, ", \"cat\": \"HostToDevice\", \"pid\": ", hw);
				put_u(t->o, ", \"tid\": ", k->stream);
				asc_out_puts(t->o, ", \"bp\": \"e\"}");
			}
		}
		/* Overlap Analysis: Computing = union of compute kernels, Free = the gaps */
		sp = computing_spans(v, d, &nspan);
		meta(t, "process_name", ov, 0, "name", "Overlap Analysis", 0, 0);
		meta(t, "thread_name", ov, 0, "name", "Computing", 0, 0);
		meta(t, "thread_name", ov, 1, "name", "Communication", 0, 0);
		meta(t, "thread_name", ov, 2, "name", "Communication(Not Overlapped)", 0, 0);
		meta(t, "thread_name", ov, 3, "name", "Free", 0, 0);
		meta(t, "process_labels", ov, 0, "labels", "NPU", 0, 0);
		meta(t, "process_sort_index", ov, 0, "sort_index", NULL, SORT_OVERLAP, 0);
		for (i = 0; i < nspan; i++) {
			ev_begin(t);
			asc_out_printf(t->o, "\"name\": \"Computing\", \"pid\": %u, \"tid\": 0, ", ov);
			put_ts(t->o, "ts", sp[i].s);
			asc_out_puts(t->o, ", ");
			put_dur(t->o, sp[i].e - sp[i].s);
			asc_out_puts(t->o, ", \"ph\": \"X\"}");
			if (i + 1 < nspan) {
				ev_begin(t);
				asc_out_printf(t->o, "\"name\": \"Free\", \"pid\": %u, \"tid\": 3, ", ov);
				put_ts(t->o, "ts", sp[i].e);
				asc_out_puts(t->o, ", ");
				put_dur(t->o, sp[i + 1].s - sp[i].e);
				asc_out_puts(t->o, ", \"ph\": \"X\"}");
			}
		}
		free(sp);
		/* NPU MEM counters from the driver-level (APP) memory records */
		{
			uint32_t mp = fmt_pid(pid, SORT_NPU_MEM, d);
			int any = 0;

			for (i = 0; i < c->nr_mems; i++) {
				const struct asc_corr_mem *m = &c->mems[i];
				char kb[40];

				if (m->component != ASC_MEM_APP || m->device != d ||
				    !in_cycle(v, m->step))
					continue;
				if (!any++) {
					meta(t, "process_name", mp, 0, "name", "NPU MEM", 0, 0);
					meta(t, "process_labels", mp, 0, "labels", "NPU", 0, 0);
					meta(t, "process_sort_index", mp, 0, "sort_index", NULL,
					     SORT_NPU_MEM, 0);
				}
				ev_begin(t);
				asc_out_puts(t->o, "\"name\": \"APP/HBM\", ");
				put_ts(t->o, "ts", m->ts_ns);
				asc_fmt_pyfloat(kb, (double)m->total_reserved / 1024.0);
				asc_out_printf(t->o, ", \"pid\": %u, \"tid\": 0, \"args\": {\"KB\": %s}, "
					       "\"ph\": \"C\"}", mp, kb);
			}
		}
	}
	/* torch_to_npu: from the aten op that launched each kernel */
	for (i = 0; i < c->nr_kernels; i++) {
		const struct asc_corr_kernel *k = &c->kernels[i];
		const struct asc_corr_op *o;
		uint64_t id;

		if (k->op < 0 || !kernel_in(v, k))
			continue;
		o = &c->ops[k->op];
		if (!in_cycle(v, o->step))
			continue;
		id = (uint64_t)k->start_ns;	/* the kernel ts string without its dot */
		flow(t, "s", "torch_to_npu", id, pid, o->tid, o->start_ns, "async_npu");
		flow(t, "f", "torch_to_npu", id, fmt_pid(pid, SORT_HARDWARE, k->device), k->stream,
		     k->start_ns, "async_npu");
	}
}

static int write_trace(struct conv *v, const char *path)
{
	struct asc_out o;
	struct trace t = { &o, 0 };
	int err;

	err = asc_out_open(&o, path, 1);
	if (err)
		return err;
	asc_out_putc(&o, '[');
	write_fwk_half(v, &t);
	if (v->c->nr_kernels || v->c->nr_calls) {
		/* the NPU half is appended after a bare "," seam, as torch_npu joins them */
		size_t before = o.bytes + o.len;

		if (t.n)
			asc_out_putc(&o, ',');
		t.n = 0;
		write_npu_half(v, &t);
		if (!t.n && o.bytes + o.len == before + 1)
			o.len--;	/* nothing followed the seam (still in the buffer) */
	}
	asc_out_putc(&o, ']');
	return close_out(v, &o, path);
}

/* ---- CSV files ---- */

static void kernel_details(struct conv *v)
{
	const struct asc_corr *c = v->c;
	struct asc_out o;
	struct asc_csv csv;
	int64_t *last_end = NULL;	/* per (device, stream): previous task end, for Wait Time */
	uint64_t *keys = NULL;
	size_t nkeys = 0, i, j, rows = 0;

	for (i = 0; i < c->nr_kernels; i++)
		if ((c->kernels[i].flags & ASC_CORR_K_COMPUTE) && kernel_in(v, &c->kernels[i]))
			rows++;
	if (!rows)
		return;		/* torch_npu writes no CSV without rows */
	if (open_out(v, &o, v->out, "kernel_details.csv")) {
		v->err = -EIO;
		return;
	}
	asc_csv_init(&csv, &o, ASC_CSV_ONE_LINE);
	if (v->has_steps)
		asc_out_puts(&o, "Step Id,");
	if (v->level == 0) {
		asc_csv_header(&csv, kd_header_l0);
	} else {
		asc_out_puts(&o, kd_header_l1);
		asc_out_putc(&o, ',');
		asc_csv_header(&csv, kd_pmu);
	}
	keys = calloc(c->nr_kernels + 1, sizeof(*keys));
	last_end = calloc(c->nr_kernels + 1, sizeof(*last_end));
	if (!keys || !last_end) {
		v->err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < c->nr_kernels; i++) {
		const struct asc_corr_kernel *k = &c->kernels[i];
		uint64_t key = (uint64_t)k->device << 32 | k->stream;
		int64_t wait = 0;

		if (!kernel_in(v, k))
			continue;
		/* Wait Time: gap to the previous task on the same stream (any task type) */
		for (j = 0; j < nkeys && keys[j] != key; j++)
			;
		if (j < nkeys) {
			if (k->start_ns > last_end[j])
				wait = k->start_ns - last_end[j];
		} else {
			keys[nkeys++] = key;
		}
		last_end[j] = k->end_ns;
		if (!(k->flags & ASC_CORR_K_COMPUTE))
			continue;
		if (v->has_steps) {
			if (k->step >= 0)
				asc_csv_printf(&csv, "%d", k->step);
			else
				asc_csv_empty(&csv);
		}
		if (v->level > 0) {
			asc_csv_cstr(&csv, MODEL_ID_INVALID);
			asc_csv_printf(&csv, "%u", k->task_id);
			asc_csv_printf(&csv, "%u", k->stream);
		}
		asc_csv_cstr(&csv, asc_corr_str(c, k->name));
		asc_csv_cstr(&csv, asc_corr_str(c, k->type));
		if (v->level > 0)
			asc_csv_cstr(&csv, "N/A");	/* OP State: dynamic/static unknown */
		asc_csv_cstr(&csv, asc_corr_task_type_name(k->task_type));
		asc_csv_ts(&csv, k->start_ns);
		csv_3ns(&csv, asc_ns_sub(k->end_ns, k->start_ns));
		csv_3ns(&csv, wait);
		asc_csv_printf(&csv, "%u", k->block_dim);
		if (v->level > 0) {
			/* Mix Block Dim, HF32, 6 tensor columns, Context ID: not observable */
			for (j = 0; j < 9; j++)
				asc_csv_cstr(&csv, "N/A");
			for (j = 0; j < KD_PMU_COLS; j++)
				asc_csv_cstr(&csv, "N/A");
		}
		asc_csv_end(&csv);
	}
out:
	free(keys);
	free(last_end);
	close_out(v, &o, "kernel_details.csv");
}

static void operator_details(struct conv *v)
{
	const struct asc_corr *c = v->c;
	int64_t *child = NULL;
	struct asc_out o;
	struct asc_csv csv;
	size_t i, rows = 0;

	for (i = 0; i < c->nr_ops; i++)
		if (!(c->ops[i].flags & ASC_CORR_O_STEP) && in_cycle(v, c->ops[i].step))
			rows++;
	if (!rows)
		return;
	child = calloc(c->nr_ops, sizeof(*child));
	if (!child) {
		v->err = -ENOMEM;
		return;
	}
	for (i = 0; i < c->nr_ops; i++)
		if (c->ops[i].parent >= 0)
			child[c->ops[i].parent] = asc_ns_add(child[c->ops[i].parent],
							     asc_ns_sub(c->ops[i].end_ns,
									c->ops[i].start_ns));
	if (open_out(v, &o, v->out, "operator_details.csv")) {
		free(child);
		v->err = -EIO;
		return;
	}
	asc_csv_init(&csv, &o, 0);
	asc_csv_header(&csv, od_header);
	for (i = 0; i < c->nr_ops; i++) {
		const struct asc_corr_op *op = &c->ops[i];
		int64_t dur = asc_ns_sub(op->end_ns, op->start_ns);

		if ((op->flags & ASC_CORR_O_STEP) || !in_cycle(v, op->step))
			continue;
		asc_csv_cstr(&csv, asc_corr_str(c, op->name));
		asc_csv_cstr(&csv, asc_corr_str(c, op->input_dims));	/* empty without shapes */
		asc_csv_cstr(&csv, asc_corr_str(c, op->stack));
		asc_csv_us_float(&csv, asc_ns_sub(dur, child[i]));
		asc_csv_us_float(&csv, dur);
#define DEV(x) do { if (x) asc_csv_us_float(&csv, (x)); \
		    else asc_csv_cstr(&csv, "0"); } while (0)
		DEV(op->device_self_ns);
		DEV(op->device_total_ns);
		DEV(op->device_self_aicore_ns);
		DEV(op->device_total_aicore_ns);
#undef DEV
		asc_csv_end(&csv);
	}
	free(child);
	close_out(v, &o, "operator_details.csv");
}

static void step_trace_time(struct conv *v)
{
	const struct asc_corr *c = v->c;
	uint32_t devs = devices_of(v), d;
	struct asc_out o;
	struct asc_csv csv;
	size_t i, j, nspan;
	int opened = 0;

	for (d = 0; d < 32; d++) {
		struct span *sp;

		if (!(devs & (1u << d)))
			continue;
		sp = computing_spans(v, d, &nspan);
		if (!nspan) {
			free(sp);
			continue;
		}
		if (!opened++) {
			if (open_out(v, &o, v->out, "step_trace_time.csv")) {
				free(sp);
				v->err = -EIO;
				return;
			}
			asc_csv_init(&csv, &o, 0);
			asc_csv_header(&csv, st_header);
		}
		/* one row per recorded step, or one row for a capture without steps */
		for (i = 0; i < (v->has_steps ? c->nr_steps : 1); i++) {
			int64_t s0 = INT64_MIN, s1 = INT64_MAX, comp = 0, freet = 0;
			int64_t first = -1, last = -1, fwk_start;

			if (v->has_steps) {
				if (c->steps[i].cycle != v->cycle ||
				    !asc_sched_recording(c->steps[i].state))
					continue;
				s0 = c->steps[i].start_ns;
				s1 = c->steps[i].end_ns;
			}
			for (j = 0; j < nspan; j++) {
				if (sp[j].s < s0 || sp[j].s >= s1)
					continue;
				comp += sp[j].e - sp[j].s;
				if (first < 0)
					first = sp[j].s;
				last = sp[j].e;
				if (j + 1 < nspan) {
					freet += sp[j + 1].s - sp[j].e;
					if (sp[j + 1].s > last)
						last = sp[j + 1].s;
				}
			}
			if (first < 0)
				continue;
			if (v->has_steps)
				asc_csv_printf(&csv, "%llu", (unsigned long long)c->steps[i].step);
			else
				asc_csv_empty(&csv);
			asc_csv_us_float(&csv, comp);
			asc_csv_pyfloat(&csv, 0.0);	/* Communication(Not Overlapped) */
			asc_csv_pyfloat(&csv, 0.0);	/* Overlapped */
			asc_csv_pyfloat(&csv, 0.0);	/* Communication */
			asc_csv_us_float(&csv, freet);
			asc_csv_us_float(&csv, (last - first));	/* Stage (Bubble 0) */
			asc_csv_cstr(&csv, "0");			/* Bubble */
			asc_csv_pyfloat(&csv, 0.0);
			if (v->has_steps) {
				fwk_start = c->steps[i].start_ns;
			} else {
				fwk_start = first;
				for (j = 0; j < c->nr_ops; j++)
					if (in_cycle(v, c->ops[j].step)) {
						fwk_start = c->ops[j].start_ns;
						break;
					}
			}
			asc_csv_us_float(&csv, (first - fwk_start));	/* Preparing */
			asc_csv_end(&csv);
		}
		free(sp);
	}
	if (opened)
		close_out(v, &o, "step_trace_time.csv");
}

static void mb(struct asc_csv *csv, uint64_t bytes)
{
	asc_csv_pow2_frac(csv, bytes, 20);
}

static void memory_record(struct conv *v)
{
	const struct asc_corr *c = v->c;
	const struct asc_corr_mem *last_pta = NULL, *last_ge = NULL;
	struct asc_out o;
	struct asc_csv csv;
	size_t i, rows = 0;
	char dev[16];

	for (i = 0; i < c->nr_mems; i++)
		if (in_cycle(v, c->mems[i].step))
			rows++;
	if (!rows)
		return;
	if (open_out(v, &o, v->out, "memory_record.csv")) {
		v->err = -EIO;
		return;
	}
	asc_csv_init(&csv, &o, 0);
	asc_csv_header(&csv, mr_header);
	/* APP rows first */
	for (i = 0; i < c->nr_mems; i++) {
		const struct asc_corr_mem *m = &c->mems[i];

		if (m->component != ASC_MEM_APP || !in_cycle(v, m->step))
			continue;
		asc_csv_cstr(&csv, "APP");
		asc_csv_ts(&csv, m->ts_ns);
		asc_csv_empty(&csv);
		mb(&csv, m->total_reserved);
		asc_csv_empty(&csv);
		asc_csv_empty(&csv);
		asc_csv_printf(&csv, "NPU:%u", m->device);
		asc_csv_end(&csv);
	}
	/* PTA / GE / WORKSPACE rows by time, each PTA or GE row followed by PTA+GE */
	for (i = 0; i < c->nr_mems; i++) {
		const struct asc_corr_mem *m = &c->mems[i], *other;

		if (m->component == ASC_MEM_APP || !in_cycle(v, m->step))
			continue;
		snprintf(dev, sizeof(dev), "NPU:%u", m->device);
		if (m->component == ASC_MEM_GE) {
			asc_csv_cstr(&csv, "GE");
			asc_csv_ts(&csv, m->ts_ns);
			mb(&csv, m->total_allocated);
			mb(&csv, m->total_reserved);
			asc_csv_empty(&csv);
			asc_csv_empty(&csv);
			asc_csv_cstr(&csv, dev);
			asc_csv_end(&csv);
			last_ge = m;
			other = last_pta;
		} else {
			asc_csv_cstr(&csv, m->component == ASC_MEM_PTA ? "PTA" : "WORKSPACE");
			asc_csv_ts(&csv, m->ts_ns);
			mb(&csv, m->total_allocated);
			mb(&csv, m->total_reserved);
			mb(&csv, m->total_active);
			asc_csv_printf(&csv, "%llu", (unsigned long long)m->stream);
			asc_csv_cstr(&csv, dev);
			asc_csv_end(&csv);
			if (m->component != ASC_MEM_PTA)
				continue;
			last_pta = m;
			other = last_ge;
		}
		/* PTA+GE: this record plus the latest of the other component */
		asc_csv_cstr(&csv, "PTA+GE");
		asc_csv_ts(&csv, m->ts_ns);
		mb(&csv, m->total_allocated + (other ? other->total_allocated : 0));
		mb(&csv, m->total_reserved + (other ? other->total_reserved : 0));
		if (last_pta)
			mb(&csv, last_pta->total_active);
		else
			asc_csv_empty(&csv);
		if (last_pta)
			asc_csv_printf(&csv, "%llu", (unsigned long long)last_pta->stream);
		else
			asc_csv_empty(&csv);
		asc_csv_cstr(&csv, dev);
		asc_csv_end(&csv);
	}
	close_out(v, &o, "memory_record.csv");
}

/*
 * operator_memory.csv: one row per PTA allocation made inside an aten op,
 * joined with the FREE and BLOCK_FREE records of the same pointer that
 * follow it.  Allocations made outside any op are not attributed (torch_npu
 * drops them the same way).  Frees are found with a hash of ptr -> open
 * allocation, so this is one pass.
 */
struct openalloc {
	uint64_t ptr;
	size_t mem;		/* index of the malloc */
	int64_t free_i, bfree_i;	/* indices or -1 */
};

static void operator_memory(struct conv *v)
{
	const struct asc_corr *c = v->c;
	struct openalloc *al = NULL;
	size_t nal = 0, i, j, rows = 0, cap = 0;
	size_t *slots = NULL, nslots;
	struct asc_out o;
	struct asc_csv csv;

	for (i = 0; i < c->nr_mems; i++) {
		const struct asc_corr_mem *m = &c->mems[i];

		if (m->component == ASC_MEM_PTA && m->data_type == ASC_MEM_MALLOC && m->op >= 0 &&
		    in_cycle(v, m->step))
			rows++;
	}
	if (!rows)
		return;
	nslots = 16;
	while (nslots < rows * 2)
		nslots *= 2;
	slots = malloc(nslots * sizeof(*slots));
	al = malloc(rows * sizeof(*al));
	if (!slots || !al) {
		v->err = -ENOMEM;
		goto out_free;
	}
	cap = rows;
	memset(slots, 0xff, nslots * sizeof(*slots));
	for (i = 0; i < c->nr_mems; i++) {
		const struct asc_corr_mem *m = &c->mems[i];
		size_t h = (m->ptr * 0x9e3779b97f4a7c15ull) >> 20;

		if (m->component != ASC_MEM_PTA)
			continue;
		if (m->data_type == ASC_MEM_MALLOC) {
			if (m->op < 0 || !in_cycle(v, m->step) || nal == cap)
				continue;
			al[nal] = (struct openalloc){ m->ptr, i, -1, -1 };
			/* the newest allocation of a pointer replaces an older one */
			for (j = h & (nslots - 1);; j = (j + 1) & (nslots - 1)) {
				if (slots[j] == (size_t)-1 || al[slots[j]].ptr == m->ptr) {
					slots[j] = nal;
					break;
				}
			}
			nal++;
			continue;
		}
		for (j = h & (nslots - 1); slots[j] != (size_t)-1; j = (j + 1) & (nslots - 1)) {
			struct openalloc *a = &al[slots[j]];

			if (a->ptr != m->ptr)
				continue;
			if (m->data_type == ASC_MEM_FREE && a->free_i < 0)
				a->free_i = i;
			else if (m->data_type == ASC_MEM_BLOCK_FREE && a->bfree_i < 0)
				a->bfree_i = i;
			break;
		}
	}
	if (open_out(v, &o, v->out, "operator_memory.csv")) {
		v->err = -EIO;
		goto out_free;
	}
	asc_csv_init(&csv, &o, 0);
	asc_csv_header(&csv, om_header);
	for (i = 0; i < nal; i++) {
		const struct asc_corr_mem *m = &c->mems[al[i].mem];
		const struct asc_corr_mem *f = al[i].free_i >= 0 ? &c->mems[al[i].free_i] : NULL;
		const struct asc_corr_mem *b = al[i].bfree_i >= 0 ? &c->mems[al[i].bfree_i] : NULL;

		asc_csv_cstr(&csv, asc_corr_str(c, c->ops[m->op].name));
		asc_csv_pow2_frac(&csv, m->size > 0 ? (uint64_t)m->size : 0, 10);
		asc_csv_ts(&csv, m->ts_ns);
		if (f)
			asc_csv_ts(&csv, f->ts_ns);
		else
			asc_csv_empty(&csv);
		if (b)
			asc_csv_ts(&csv, b->ts_ns);
		else
			asc_csv_empty(&csv);
		if (f)
			asc_csv_ts(&csv, f->ts_ns - m->ts_ns);
		else
			asc_csv_empty(&csv);
		if (b)
			asc_csv_ts(&csv, b->ts_ns - m->ts_ns);
		else
			asc_csv_empty(&csv);
		mb(&csv, m->total_allocated);
		mb(&csv, m->total_reserved);
		mb(&csv, m->total_active);
		if (f) {
			mb(&csv, f->total_allocated);
			mb(&csv, f->total_reserved);
			mb(&csv, f->total_active);
		} else {
			asc_csv_empty(&csv);
			asc_csv_empty(&csv);
			asc_csv_empty(&csv);
		}
		asc_csv_printf(&csv, "%llu", (unsigned long long)m->stream);
		asc_csv_printf(&csv, "NPU:%u", m->device);
		asc_csv_end(&csv);
	}
	close_out(v, &o, "operator_memory.csv");
out_free:
	free(slots);
	free(al);
}

/* Aggregation for op_statistic / api_statistic: small tables, linear lookup by name. */
struct agg {
	uint32_t name, type;	/* string ids */
	uint32_t level;
	uint64_t count;
	double total, min, max, sumsq;
};

/* A hash of (name, type, level) -> index, so that millions of calls aggregate in O(1) each. */
struct aggtab {
	struct agg *a;
	size_t n, cap;
	int32_t *slots;		/* nslots entries, -1 empty */
	size_t nslots;
};

static size_t agg_hash(uint32_t name, uint32_t type, uint32_t level)
{
	uint64_t x = ((uint64_t)name << 32 | type) * 0x9e3779b97f4a7c15ull ^ level;

	return (size_t)(x ^ (x >> 29));
}

static int agg_rehash(struct aggtab *t)
{
	size_t i, j, ns = t->nslots ? t->nslots * 2 : 256;
	int32_t *sl = malloc(ns * sizeof(*sl));

	if (!sl)
		return -ENOMEM;
	memset(sl, 0xff, ns * sizeof(*sl));
	for (i = 0; i < t->n; i++) {
		for (j = agg_hash(t->a[i].name, t->a[i].type, t->a[i].level) & (ns - 1); sl[j] >= 0;
		     j = (j + 1) & (ns - 1))
			;
		sl[j] = (int32_t)i;
	}
	free(t->slots);
	t->slots = sl;
	t->nslots = ns;
	return 0;
}

static struct agg *agg_get(struct aggtab *t, uint32_t name, uint32_t type, uint32_t level)
{
	size_t j;
	struct agg *g;

	if ((t->n + 1) * 2 > t->nslots && agg_rehash(t))
		return NULL;
	for (j = agg_hash(name, type, level) & (t->nslots - 1); t->slots[j] >= 0;
	     j = (j + 1) & (t->nslots - 1)) {
		g = &t->a[t->slots[j]];
		if (g->name == name && g->type == type && g->level == level)
			return g;
	}
	if (t->n == t->cap) {
		struct agg *na = realloc(t->a, (t->cap = t->cap ? t->cap * 2 : 64) * sizeof(*na));

		if (!na)
			return NULL;
		t->a = na;
	}
	g = &t->a[t->n];
	memset(g, 0, sizeof(*g));
	g->name = name;
	g->type = type;
	g->level = level;
	g->min = INFINITY;
	t->slots[j] = (int32_t)t->n++;
	return g;
}

static void agg_add(struct agg *g, double us)
{
	g->count++;
	g->total += us;
	g->sumsq += us * us;
	if (us < g->min)
		g->min = us;
	if (us > g->max)
		g->max = us;
}

static int cmp_agg_total(const void *x, const void *y)
{
	const struct agg *a = x, *b = y;

	return a->total > b->total ? -1 : a->total < b->total;
}

static void op_statistic(struct conv *v)
{
	const struct asc_corr *c = v->c;
	struct aggtab t = { 0 };
	struct agg *a;
	size_t n, i;
	double sum = 0;
	struct asc_out o;
	struct asc_csv csv;

	for (i = 0; i < c->nr_kernels; i++) {
		const struct asc_corr_kernel *k = &c->kernels[i];
		struct agg *g;

		if (!(k->flags & ASC_CORR_K_COMPUTE) || !kernel_in(v, k))
			continue;
		g = agg_get(&t, k->type, k->task_type, 0);
		if (!g) {
			v->err = -ENOMEM;
			goto out;
		}
		agg_add(g, (double)asc_ns_sub(k->end_ns, k->start_ns) / 1000.0);
		sum += (double)asc_ns_sub(k->end_ns, k->start_ns) / 1000.0;
	}
	a = t.a;
	n = t.n;
	if (!n)
		goto out;
	qsort(a, n, sizeof(*a), cmp_agg_total);
	if (open_out(v, &o, v->out, "op_statistic.csv")) {
		v->err = -EIO;
		goto out;
	}
	asc_csv_init(&csv, &o, 0);
	asc_csv_header(&csv, os_header);
	for (i = 0; i < n; i++) {
		asc_csv_cstr(&csv, asc_corr_str(c, a[i].name));
		asc_csv_cstr(&csv, asc_corr_task_type_name(a[i].type));
		asc_csv_printf(&csv, "%llu", (unsigned long long)a[i].count);
		csv_3(&csv, a[i].total);
		csv_3(&csv, a[i].min);
		csv_3(&csv, a[i].total / a[i].count);
		csv_3(&csv, a[i].max);
		csv_3(&csv, sum > 0 ? a[i].total * 100.0 / sum : 0);
		asc_csv_end(&csv);
	}
	close_out(v, &o, "op_statistic.csv");
out:
	free(t.a);
	free(t.slots);
}

static void api_statistic(struct conv *v)
{
	const struct asc_corr *c = v->c;
	struct aggtab t = { 0 };
	struct agg *a;
	size_t n, i;
	struct asc_out o;
	struct asc_csv csv;

	for (i = 0; i < c->nr_calls; i++) {
		const struct asc_corr_call *k = &c->calls[i];
		struct agg *g;

		if (!call_level_shown(v, k) || !in_cycle(v, k->step))
			continue;
		g = agg_get(&t, k->name, 0, k->level);
		if (!g) {
			v->err = -ENOMEM;
			goto out;
		}
		agg_add(g, (double)asc_ns_sub(k->end_ns, k->start_ns) / 1000.0);
	}
	a = t.a;
	n = t.n;
	if (!n)
		goto out;
	qsort(a, n, sizeof(*a), cmp_agg_total);
	if (open_out(v, &o, v->out, "api_statistic.csv")) {
		v->err = -EIO;
		goto out;
	}
	asc_csv_init(&csv, &o, 0);
	asc_csv_header(&csv, as_header);
	for (i = 0; i < n; i++) {
		double avg = a[i].total / a[i].count;
		double var = a[i].sumsq / a[i].count - avg * avg;

		asc_csv_cstr(&csv, a[i].level == ASC_CORR_LEVEL_RUNTIME ? "runtime" : "acl");
		asc_csv_cstr(&csv, asc_corr_str(c, a[i].name));
		csv_3(&csv, a[i].total);
		asc_csv_printf(&csv, "%llu", (unsigned long long)a[i].count);
		csv_3(&csv, avg);
		csv_3(&csv, a[i].min);
		csv_3(&csv, a[i].max);
		csv_3(&csv, var > 0 ? var : 0);
		asc_csv_end(&csv);
	}
	close_out(v, &o, "api_statistic.csv");
out:
	free(t.a);
	free(t.slots);
}

/* ---- profiler_info / metadata ---- */

static const char *cfg(const struct conv *v, const char *key, const char *def)
{
	const char *s = asc_corr_config(v->c, key);

	return s ? s : def;
}

static const char *jbool(const struct conv *v, const char *key)
{
	const char *s = cfg(v, key, "0");

	return (!strcmp(s, "1") || !strcmp(s, "true")) ? "true" : "false";
}

static void profiler_info(struct conv *v)
{
	const struct asc_corr *c = v->c;
	const struct asc_corr_info *in = &c->info;
	const char *acts = cfg(v, "activities", "cpu,npu");
	const char *sched = asc_corr_config(c, "schedule");
	char name[64];
	struct asc_out o;
	int rank = in->rank;

	/* torch_npu: profiler_info_{rank}.json with "rank_id" when a rank is known */
	if (rank >= 0)
		snprintf(name, sizeof(name), "profiler_info_%d.json", rank);
	else
		snprintf(name, sizeof(name), "profiler_info.json");
	if (open_out(v, &o, v->dir, name)) {
		v->err = -EIO;
		return;
	}
	asc_out_puts(&o, "{\n    \"config\": {\n        \"common_config\": {\n"
		     "            \"activities\": [");
	{
		int n = 0;

		if (strstr(acts, "cpu"))
			asc_out_printf(&o, "%s\n                \"ProfilerActivity.CPU\"", n++ ? "," : "");
		if (strstr(acts, "npu"))
			asc_out_printf(&o, "%s\n                \"ProfilerActivity.NPU\"", n++ ? "," : "");
		asc_out_puts(&o, n ? "\n            ],\n" : "],\n");
	}
	/* schedule: "wait=W,warmup=U,active=A,repeat=R,skip_first=S" as traced */
	if (sched && *sched) {
		static const char *const keys[] = { "wait", "active", "warmup", "repeat",
						    "skip_first", NULL };
		int k;

		asc_out_puts(&o, "            \"schedule\": {");
		for (k = 0; keys[k]; k++) {
			const char *p = strstr(sched, keys[k]);
			long val = 0;

			while (p && p != sched && p[-1] != ',')
				p = strstr(p + 1, keys[k]);
			if (p && p[strlen(keys[k])] == '=')
				val = strtol(p + strlen(keys[k]) + 1, NULL, 10);
			asc_out_printf(&o, "%s\n                \"%s\": %ld", k ? "," : "", keys[k],
				       val);
		}
		asc_out_puts(&o, "\n            },\n");
	} else {
		asc_out_puts(&o, "            \"schedule\": {},\n");
	}
	asc_out_printf(&o, "            \"record_shapes\": %s,\n            \"profile_memory\": %s,\n"
		       "            \"with_stack\": %s,\n            \"with_flops\": false,\n"
		       "            \"with_modules\": %s\n        },\n",
		       jbool(v, "record_shapes"), jbool(v, "profile_memory"),
		       jbool(v, "with_stack"), jbool(v, "with_modules"));
	asc_out_printf(&o, "        \"experimental_config\": {\n"
		       "            \"_profiler_level\": \"Level%d\",\n"
		       "            \"_aic_metrics\": \"%s\",\n"
		       "            \"_l2_cache\": false,\n            \"_msprof_tx\": false,\n"
		       "            \"_data_simplification\": true,\n"
		       "            \"record_op_args\": false,\n"
		       "            \"_export_type\": \"text\",\n            \"_op_attr\": false,\n"
		       "            \"_gc_detect_threshold\": null\n        }\n    },\n",
		       v->level, v->level == 0 ? "ACL_AICORE_NONE" : "ACL_AICORE_PIPE_UTILIZATION");
	asc_out_printf(&o, "    \"start_info\": {\n        \"syscnt_enable\": %s,\n"
		       "        \"freq\": %llu,\n        \"start_cnt\": %llu,\n"
		       "        \"start_monotonic\": %lld\n    },\n",
		       in->have_devclock ? "true" : "false",
		       (unsigned long long)(in->devclock_freq_hz / 1000000),
		       (unsigned long long)in->devclock_counter, (long long)in->devclock_mono_ns);
	asc_out_printf(&o, "    \"end_info\": {\n        \"collectionTimeEnd\": %lld,\n"
		       "        \"MonotonicTimeEnd\": %lld\n    }",
		       (long long)in->end_wall_ns, (long long)in->end_mono_ns);
	if (rank >= 0)
		asc_out_printf(&o, ",\n    \"rank_id\": %d", rank);
	asc_out_puts(&o, "\n}");
	close_out(v, &o, name);
}

/* profiler_metadata.json: only when the capture carries the env (config "env.NAME=value"). */
static void profiler_metadata(struct conv *v)
{
	struct asc_out o;
	char key[64];
	int i, any = 0;

	for (i = 0; env_names[i]; i++) {
		snprintf(key, sizeof(key), "env.%s", env_names[i]);
		if (asc_corr_config(v->c, key))
			any = 1;
	}
	if (!any)
		return;
	if (open_out(v, &o, v->dir, "profiler_metadata.json")) {
		v->err = -EIO;
		return;
	}
	asc_out_puts(&o, "{\"ENV_VARIABLES\": {");
	for (i = 0; env_names[i]; i++) {
		snprintf(key, sizeof(key), "env.%s", env_names[i]);
		asc_out_printf(&o, "%s\"%s\": ", i ? ", " : "", env_names[i]);
		asc_json_cstr(&o, cfg(v, key, ""));
	}
	asc_out_puts(&o, "}}");
	close_out(v, &o, "profiler_metadata.json");
}

/* ---- directories ---- */

static int copy_file(const char *src, const char *dst)
{
	char buf[1 << 16];
	int in, out, err = 0;
	ssize_t n;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = asc_file_create_path(dst, 1);	/* never through a link (lib/safeio.h) */
	if (out < 0) {
		close(in);
		return out;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n) {
			err = -EIO;
			break;
		}
	if (n < 0)
		err = -errno;
	close(in);
	if (close(out) && !err)
		err = -errno;
	return err;
}

/* "{worker}_{pid}_{YYYYmmddHHMMSSmmm}_ascend_pt" for a wall-clock ns (local time). */
static void run_name(struct conv *v, int64_t wall_ns, char *buf, size_t len)
{
	char host[256] = "localhost";
	time_t secs;
	struct tm tm;
	char stamp[32];
	int64_t ms = wall_ns / 1000000;

	/* two cycles less than 1 ms apart would get one name: keep them apart */
	if (ms <= v->last_stamp_ms)
		ms = v->last_stamp_ms + 1;
	v->last_stamp_ms = ms;
	wall_ns = ms * 1000000;
	const char *worker = v->opts->worker_name ? v->opts->worker_name :
			     asc_corr_config(v->c, "worker_name");	/* as traced */

	if (!worker || !*worker || strchr(worker, '/') || strlen(worker) >= 226) {
		gethostname(host, sizeof(host) - 1);
		worker = host;
	}
	secs = (time_t)(wall_ns / 1000000000) + v->c->info.utc_offset_s;
	gmtime_r(&secs, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm);
	snprintf(buf, len, "%s_%u_%s%03d_ascend_pt", worker, v->pid, stamp,
		 (int)((wall_ns / 1000000) % 1000));
}

/*
 * DIR/NAME and its ASCEND_PROFILER_OUTPUT, made without following a link
 * (lib/safeio.h): NAME is predictable, and another user may have planted a
 * link there.  An existing NAME is kept (exit 2) unless --force: then a link
 * or file there is removed (never its target), and in a directory the two
 * subdirectories ascbpf writes are removed and made anew.
 */
static int make_run_dir(struct conv *v, const char *name)
{
	const char *out = v->opts->out_dir;
	int outfd, runfd, fd, err = 0;
	struct stat st;

	outfd = asc_dir_open(out, 1, NULL);
	if (outfd < 0) {
		asc_err("convert: cannot create %s: %s%s\n", out, strerror(-outfd),
			asc_safeio_hint(outfd));
		return outfd;
	}
	if (!fstatat(outfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (!v->opts->force) {
			asc_err("convert: %s exists; use --force to overwrite it\n", v->dir);
			close(outfd);
			return -EEXIST;
		}
		if (!S_ISDIR(st.st_mode))
			err = asc_rm_tree_at(outfd, name);
	}
	runfd = err ? err : asc_subdir_open(outfd, name, NULL);
	close(outfd);
	if (runfd < 0) {
		asc_err("convert: cannot create %s: %s%s\n", v->dir, strerror(-runfd),
			asc_safeio_hint(runfd));
		return runfd;
	}
	err = asc_rm_tree_at(runfd, "ASCEND_PROFILER_OUTPUT");
	if (!err)
		err = asc_rm_tree_at(runfd, "ascbpf");
	fd = err ? err : asc_subdir_open(runfd, "ASCEND_PROFILER_OUTPUT", NULL);
	close(runfd);
	if (fd < 0) {
		asc_err("convert: cannot create %s: %s%s\n", v->out, strerror(-fd),
			asc_safeio_hint(fd));
		return fd;
	}
	close(fd);
	return 0;
}

static int convert_cycle(struct conv *v, const char *capture)
{
	const struct asc_corr *c = v->c;
	int64_t start = v->cycle >= 0 ? c->cycles[v->cycle].start_ns : c->info.start_wall_ns;
	char name[400], sub[PATH_MAX + 32];
	int err;

	run_name(v, start, name, sizeof(name));
	snprintf(v->dir, sizeof(v->dir), "%s/%s", v->opts->out_dir, name);
	join(v->out, sizeof(v->out), v->dir, "ASCEND_PROFILER_OUTPUT");
	err = make_run_dir(v, name);
	if (err)
		return err;
	profiler_info(v);
	profiler_metadata(v);
	join(sub, sizeof(sub), v->out, "trace_view.json");
	if (write_trace(v, sub) && !v->err)
		v->err = -EIO;
	kernel_details(v);
	operator_details(v);
	step_trace_time(v);
	memory_record(v);
	operator_memory(v);
	if (v->level >= 1) {
		op_statistic(v);
		api_statistic(v);
	}
	/* the capture itself, for `ascbpf report DIR` (a hard link when on one file system) */
	join(sub, sizeof(sub), v->dir, "ascbpf");
	err = asc_dir_open(sub, 1, NULL);
	if (err < 0) {
		asc_err("convert: cannot create %s: %s%s\n", sub, strerror(-err),
			asc_safeio_hint(err));
		return err;
	}
	close(err);
	join(sub, sizeof(sub), v->dir, "ascbpf/capture.ascb");
	if (link(capture, sub)) {
		err = copy_file(capture, sub);
		if (err) {
			asc_err("convert: cannot copy the capture to %s: %s\n", sub,
				strerror(-err));
			return err;
		}
	}
	if (!v->err)
		asc_info("wrote %s\n", v->dir);
	return v->err;
}

/*
 * gzip-compresses the file tmp into path (created as asc_out_open would: O_EXCL
 * unless force), streaming, so memory stays bounded whatever the trace's size.
 */
static int gzip_file(const char *tmp, const char *path, int force)
{
	char buf[1 << 16], name[NAME_MAX + 1], tname[NAME_MAX + 1];
	ssize_t n;
	gzFile gz;
	int in, out, dirfd, err = 0;

	in = open(tmp, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	/* never through a link: a new name O_EXCL, a replacement through a temporary name */
	dirfd = asc_parent_open(path, name, sizeof(name));
	out = dirfd < 0 ? dirfd : force ? asc_tmp_create(dirfd, name, tname, sizeof(tname)) :
					  asc_file_create(dirfd, name, 0);
	if (out < 0) {
		asc_err("cannot create %s: %s%s\n", path, strerror(-out), asc_safeio_hint(out));
		if (dirfd >= 0)
			close(dirfd);
		close(in);
		return out;
	}
	gz = gzdopen(out, "wb");
	if (!gz) {
		close(out);
		err = -ENOMEM;
		goto out;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (gzwrite(gz, buf, (unsigned int)n) != (int)n) {
			err = -EIO;
			break;
		}
	if (n < 0 && !err)
		err = -errno;
	if (gzclose(gz) != Z_OK && !err)
		err = -EIO;
out:
	if (force && !err)
		err = asc_tmp_commit(dirfd, tname, name);
	else if (force)
		unlinkat(dirfd, tname, 0);
	close(dirfd);
	close(in);
	if (err)
		asc_err("convert: writing %s: %s\n", path, strerror(-err));
	return err;
}

/*
 * The trace array into path; a path ending in ".gz" is written gzip-compressed,
 * as torch.profiler's export_chrome_trace does (it writes a temporary JSON file
 * and gzips it): chrome://tracing and Perfetto open .json.gz directly.
 */
static int write_chrome_file(struct conv *v, const char *path)
{
	size_t len = strlen(path);
	char tmp[PATH_MAX];
	int fd, err;

	if (len < 3 || strcmp(path + len - 3, ".gz"))
		return write_trace(v, path);
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		asc_err("convert: cannot create a temporary file beside %s: %s\n", path,
			strerror(-err));
		return err;
	}
	close(fd);
	err = write_trace(v, tmp);
	if (!err)
		err = gzip_file(tmp, path, v->opts->force);
	unlink(tmp);
	return err;
}

/* --export chrome: the trace_view array alone, in one file per cycle. */
static int export_chrome(struct conv *v)
{
	const char *out = v->opts->out_dir;
	char path[PATH_MAX];
	int err;

	if (v->cycle > 0 || (v->c->nr_cycles > 1)) {
		size_t ol = strlen(out);
		/* trace.json.gz -> trace_0.json.gz: the cycle before both extensions */
		const char *dot = ol > 8 && !strcmp(out + ol - 8, ".json.gz") ? out + ol - 8 :
				  strrchr(out, '.');
		int base = dot && !strchr(dot, '/') ? (int)(dot - out) : (int)strlen(out);

		snprintf(path, sizeof(path), "%.*s_%d%s", base, out, v->cycle < 0 ? 0 : v->cycle,
			 dot && !strchr(dot, '/') ? dot : ".json");
	} else {
		snprintf(path, sizeof(path), "%s", out);
	}
	if (!v->opts->force && !access(path, F_OK)) {
		asc_err("convert: %s exists; use --force to overwrite it\n", path);
		return -EEXIST;
	}
	err = write_chrome_file(v, path);
	if (!err)
		asc_info("wrote %s\n", path);
	return err ? err : v->err;
}

int asc_convert(const struct asc_corr *c, const char *capture, const struct asc_convert_opts *opts)
{
	struct conv v = { 0 };
	const char *lv;
	size_t i;
	int err = 0, ret;

	v.c = c;
	v.opts = opts;
	v.pid = c->info.pid;
	v.has_steps = c->nr_steps > 0;
	v.last_stamp_ms = INT64_MIN;
	lv = asc_corr_config(c, "level");
	v.level = opts->level >= 0 ? opts->level : lv ? atoi(lv) : 0;
	if (v.level < 0 || v.level > 2)
		v.level = 0;
	if (v.has_steps && !c->nr_cycles) {
		asc_err("convert: the capture has %zu steps but none was recorded (schedule)\n",
			c->nr_steps);
		return -ENODATA;
	}
	for (i = 0; i < (v.has_steps ? c->nr_cycles : 1); i++) {
		v.cycle = v.has_steps ? (int)i : -1;
		v.err = 0;
		ret = opts->chrome ? export_chrome(&v) : convert_cycle(&v, capture);
		if (ret && !err)
			err = ret;
		if (ret == -EEXIST)
			break;
	}
	/* here, not in cmd_convert: `ascbpf trace` converts through this function too */
	if (c->info.batch_unattributed)
		asc_warn("convert: %llu kernels of batched submissions (several launches in "
			 "one halSqTaskSend) could not be joined to the launch that made them: "
			 "they have no op or API\n",
			 (unsigned long long)c->info.batch_unattributed);
	return err;
}

static void convert_usage(FILE *f)
{
	fprintf(f, "Usage: ascbpf convert CAPTURE [-o DIR] [--level 0|1|2] [--worker-name NAME]\n"
		   "                      [--export text|chrome] [--force]\n"
		   "  Writes DIR/{worker}_{pid}_{YYYYmmddHHMMSSmmm}_ascend_pt/ (default DIR ./result)\n"
		   "  as torch_npu.profiler does, one per RECORD_AND_SAVE cycle.\n"
		   "  -o DIR            output directory (with --export chrome: the output file)\n"
		   "  --level N         profiler level of the output (default: as traced, else 0)\n"
		   "  --worker-name S   worker name instead of the host name\n"
		   "  --export chrome   one Chrome trace JSON file (as export_chrome_trace;\n"
		   "                    gzip-compressed when the -o name ends in .gz)\n"
		   "  --force           overwrite an existing output directory\n"
		   "  --gzip            refused: the TensorBoard plugin does not read trace_view.json.gz\n");
}

int cmd_convert(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "level", required_argument, NULL, 'l' },
		{ "worker-name", required_argument, NULL, 'w' },
		{ "export", required_argument, NULL, 'e' },
		{ "force", no_argument, NULL, 'f' },
		{ "gzip", no_argument, NULL, 'z' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct asc_convert_opts o = { .out_dir = NULL, .level = -1 };
	struct asc_capture_reader *r;
	struct asc_corr *c;
	char *end;
	int ch, err;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "o:fh", opts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			o.out_dir = optarg;
			break;
		case 'l':
			o.level = strtol(optarg, &end, 10);
			if (*end || o.level < 0 || o.level > 2) {
				asc_err("convert: --level must be 0, 1 or 2 (got '%s')\n", optarg);
				return -EINVAL;
			}
			break;
		case 'w':
			if (!*optarg || strlen(optarg) >= 226 || strchr(optarg, '/')) {
				asc_err("convert: --worker-name must be 1..225 characters without '/'\n");
				return -EINVAL;
			}
			o.worker_name = optarg;
			break;
		case 'e':
			if (!strcmp(optarg, "chrome")) {
				o.chrome = 1;
			} else if (strcmp(optarg, "text")) {
				asc_err("convert: --export must be 'text' or 'chrome' (got '%s')\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'f':
			o.force = 1;
			break;
		case 'z':
			asc_err("convert: --gzip is not supported: torch-tb-profiler-ascend only "
				"loads a plain ASCEND_PROFILER_OUTPUT/trace_view.json\n");
			return -EINVAL;
		case 'h':
			convert_usage(stdout);
			return 0;
		default:
			convert_usage(stderr);
			return -EINVAL;
		}
	}
	if (optind != argc - 1) {
		asc_err("convert: expected exactly one capture file\n");
		convert_usage(stderr);
		return -EINVAL;
	}
	if (!o.out_dir)
		o.out_dir = o.chrome ? "trace.json" : "./result";
	r = asc_capture_open(argv[optind]);
	if (!r)
		return -errno;
	c = asc_corr_build(r);
	asc_capture_free(r);
	if (!c)
		return -errno;
	if (!c->info.pid && c->info.damaged) {
		/* the damage hid the process record: say what happened, as dump and report do */
		asc_err("convert: %s is damaged (%s; %llu bytes not read): nothing to convert "
			"before the damage\n", argv[optind], c->info.damage,
			(unsigned long long)c->info.bytes_unread);
		asc_corr_free(c);
		return -EIO;
	}
	if (!c->info.pid) {
		asc_err("convert: %s has no process record (not written by ascbpf trace?)\n",
			argv[optind]);
		asc_corr_free(c);
		return -EINVAL;
	}
	err = asc_convert(c, argv[optind], &o);
	if (c->info.bad_records)
		asc_warn("convert: %llu malformed records were skipped\n",
			 (unsigned long long)c->info.bad_records);
	if (c->info.bpf_drops || c->info.devtask_drops || c->info.lost)
		asc_warn("convert: the tracer lost records (%llu ring-buffer drops, %llu device "
			 "records, %llu other): the output is incomplete\n",
			 (unsigned long long)c->info.bpf_drops,
			 (unsigned long long)c->info.devtask_drops,
			 (unsigned long long)c->info.lost);
	if (c->info.before_devchannel)
		asc_info("convert: %llu submissions were made before the device channel started "
			 "(the tasks completed before it opened): no kernel row, nothing lost\n",
			 (unsigned long long)c->info.before_devchannel);
	if (c->info.damaged) {
		asc_err("convert: %s is damaged (%s): converted up to the last good frame, "
			"%llu bytes after it were lost\n", argv[optind], c->info.damage,
			(unsigned long long)c->info.bytes_unread);
		if (!err)
			err = -EBADMSG;
	} else if (!c->info.ended) {
		/* whole frames but no end record: the tracer died between two frames */
		char ts[40];

		ts[asc_fmt_us(ts, c->info.last_ts_ns)] = '\0';
		asc_err("convert: %s: the trace did not end (ascbpf killed?): it has no end "
			"record, records after %s us (the last one) may be missing\n",
			argv[optind], ts);
		if (!err)
			err = -EBADMSG;
	}
	asc_corr_free(c);
	return err;
}
