// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * trace_view.c - ASCEND_PROFILER_OUTPUT/trace_view.json of one cycle: the
 * framework half (aten ops, task queue, Python and step ranges, flows) and
 * the NPU half (CANN API, Ascend Hardware, Overlap Analysis, NPU MEM),
 * joined as torch_npu joins them.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ascbpf_events.h"
#include "analysis/correlate.h"
#include "convert/conv.h"
#include "lib/csv_writer.h"
#include "lib/json_writer.h"
#include "lib/log.h"
#include "analysis/fwdbwd.h"

/* ---- trace_view.json ---- */

struct trace {
	struct asc_out *o;
	int n; /* events written in the current half */
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
		asc_out_printf(t->o,
			       "\"ph\": \"M\", \"name\": \"%s\", \"pid\": %u, \"tid\": %u, "
			       "\"args\": {\"%s\": ",
			       name, pid, tid, key);
	else
		asc_out_printf(t->o,
			       "\"name\": \"%s\", \"pid\": %u, \"tid\": %u, "
			       "\"args\": {\"%s\": ",
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

int conv_kernel_in(const struct conv *v, const struct asc_corr_kernel *k)
{
	if (!conv_in_cycle(v, k->step))
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
	asc_out_printf(t->o,
		       "\"name\": \"HostToDevice%llu\", \"ph\": \"s\", "
		       "\"cat\": \"HostToDevice\", \"id\": \"%llu\", \"pid\": %u, "
		       "\"tid\": %u, ",
		       (unsigned long long)conn_id(c, k), (unsigned long long)conn_id(c, k), cann,
		       h2d_tid(c, k));
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
	asc_out_printf(t->o,
		       ", \"args\": {\"Thread Id\": %u, \"Mode\": \"launch\", "
		       "\"level\": \"node\", \"id\": \"0\", \"item_id\": ",
		       a->tid);
	asc_json_cstr(t->o, asc_corr_str(c, k->name));
	put_u(t->o, ", \"connection_id\": ", conn_id(c, k));
	asc_out_puts(t->o, "}, \"ph\": \"X\"}");
	h2d_start(t, c, k, cann);
}

int conv_call_level_shown(int level, const struct asc_corr_call *k)
{
	if (level == 0 || k->level == ASC_CORR_LEVEL_NODE)
		return 0; /* Level0 prunes every CANN event; a node launch: its Node only */
	return k->level == ASC_CORR_LEVEL_ACL || k->level == ASC_CORR_LEVEL_HCCL || level >= 2;
}

static const char *call_mode(const char *name)
{
	if (!strncmp(name, "aclrt", 5))
		return "ACL_RTS";
	if (!strncmp(name, "aclnn", 5) || !strncmp(name, "aclop", 5))
		return "ACL_OP";
	if (!strncmp(name, "rt", 2))
		return "RUNTIME";
	if (!strncmp(name, "Hccl", 4))
		return "HCCL";
	return "ACL_OTHERS";
}

/* One op for the fwdbwd pairing (user/discovery/seqnr.h), NULL outside this cycle. */
static const struct asc_fwdbwd_op *fwdbwd_op(size_t i, void *ctx)
{
	static struct asc_fwdbwd_op fo;
	const struct conv *v = ctx;
	const struct asc_corr_op *o = &v->c->ops[i];

	if (!conv_in_cycle(v, o->step))
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

/* The threads of a process, or the streams of a device, that the trace names (first MAX_IDS). */
#define MAX_IDS 256

/* Adds id to ids[*n] unless it is there or the set is full. */
static void add_id(uint32_t *ids, size_t *n, uint32_t id)
{
	size_t j;

	for (j = 0; j < *n && ids[j] != id; j++)
		;
	if (j == *n && *n < MAX_IDS)
		ids[(*n)++] = id;
}

static void write_fwk_half(struct conv *v, struct trace *t)
{
	const struct asc_corr *c = v->c;
	uint32_t pid = v->pid, max_tid = 0, deq_tid = 0;
	uint32_t tids[MAX_IDS];
	size_t i, ntids = 0, j;

	for (i = 0; i < c->nr_ops; i++) {
		const struct asc_corr_op *o = &c->ops[i];

		if (!conv_in_cycle(v, o->step))
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
		if (o->input_dims || o->input_types) { /* --record-shapes */
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
		add_id(tids, &ntids, o->tid);
	}
	/* dequeues (X + f), then enqueues (X + s), as torch_npu orders them */
	for (int side = 1; side >= 0; side--) {
		for (i = 0; i < c->nr_queues; i++) {
			const struct asc_corr_queue *q = &c->queues[i];
			int64_t s = side ? q->deq_start_ns : q->enq_start_ns;
			int64_t e = side ? q->deq_end_ns : q->enq_end_ns;
			uint32_t tid = side ? q->deq_tid : q->enq_tid;
			const char *nm = q->name    ? asc_corr_str(c, q->name) :
					 q->op >= 0 ? asc_corr_str(c, c->ops[q->op].name) :
						      "";
			int matched = q->enq_start_ns && q->deq_start_ns;

			if (!s || !conv_in_cycle(v, q->step))
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
			asc_out_printf(t->o,
				       ", \"cat\": \"%s\", "
				       "\"args\": {\"correlation_id\": %llu}}",
				       side ? "dequeue" : "enqueue",
				       (unsigned long long)q->correlation_id);
			if (matched)
				flow(t, side ? "f" : "s", "enqueue_to_dequeue", q->correlation_id,
				     pid, tid, s, "async_task_queue");
			add_id(tids, &ntids, tid);
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
}

struct span *conv_computing_spans(const struct conv *v, uint32_t dev, size_t *nr)
{
	const struct asc_corr *c = v->c;
	struct span *sp = NULL;
	size_t i, n = 0, cap = 0;

	/* kernels are sorted by start: merge as we go */
	for (i = 0; i < c->nr_kernels; i++) {
		const struct asc_corr_kernel *k = &c->kernels[i];

		if (k->device != dev || !(k->flags & ASC_CORR_K_COMPUTE) || !conv_kernel_in(v, k))
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
uint32_t conv_devices_of(const struct conv *v)
{
	uint32_t mask = 0;
	size_t i;

	for (i = 0; i < v->c->nr_kernels; i++)
		if (conv_kernel_in(v, &v->c->kernels[i]))
			mask |= 1u << (v->c->kernels[i].device & 31);
	for (i = 0; i < v->c->nr_mems; i++)
		if (conv_in_cycle(v, v->c->mems[i].step))
			mask |= 1u << (v->c->mems[i].device & 31);
	return mask;
}

/*
 * *out: call index -> the kernel it launched, -1 for other calls (Level1+;
 * NULL when no call launched one).  -ENOMEM (v->err set).
 */
static int node_kernels(struct conv *v, int32_t **out)
{
	const struct asc_corr *c = v->c;
	int32_t *node_kernel;
	size_t i;

	*out = NULL;
	if (v->level <= 0 || !c->nr_calls)
		return 0;
	node_kernel = malloc(c->nr_calls * sizeof(*node_kernel));
	if (!node_kernel) {
		v->err = -ENOMEM;
		return -ENOMEM;
	}
	for (i = 0; i < c->nr_calls; i++)
		node_kernel[i] = -1;
	for (i = 0; i < c->nr_kernels; i++) {
		const struct asc_corr_kernel *k = &c->kernels[i];

		if (k->node_call >= 0 && k->api >= 0 && conv_kernel_in(v, k) &&
		    node_kernel[k->node_call] < 0)
			node_kernel[k->node_call] = (int32_t)i;
	}
	*out = node_kernel;
	return 0;
}

/* The CANN process and its threads (those with a shown call in this cycle). */
static void cann_meta(struct conv *v, struct trace *t, uint32_t cann)
{
	const struct asc_corr *c = v->c;
	uint32_t tids[MAX_IDS];
	size_t ntids = 0, i, j;

	for (i = 0; i < c->nr_calls; i++) {
		const struct asc_corr_call *k = &c->calls[i];

		if (!conv_call_level_shown(v->level, k) || !conv_in_cycle(v, k->step))
			continue;
		add_id(tids, &ntids, k->tid);
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

/* One AscendCL / Runtime API event (call i). */
static void cann_call(struct trace *t, const struct asc_corr *c, size_t i, uint32_t cann)
{
	const struct asc_corr_call *k = &c->calls[i];
	const char *nm = asc_corr_str(c, k->name);
	char full[160];

	snprintf(full, sizeof(full), "%s@%s",
		 k->level == ASC_CORR_LEVEL_RUNTIME ? "Runtime" :
		 k->level == ASC_CORR_LEVEL_HCCL    ? "Hccl" :
						      "AscendCL",
		 nm);
	ev_begin(t);
	asc_out_puts(t->o, "\"name\": ");
	asc_json_cstr(t->o, full);
	asc_out_printf(t->o, ", \"pid\": %u, \"tid\": %u, ", cann, k->tid);
	put_ts(t->o, "ts", k->start_ns);
	asc_out_puts(t->o, ", ");
	put_dur(t->o, asc_ns_sub(k->end_ns, k->start_ns));
	asc_out_printf(t->o,
		       ", \"args\": {\"Thread Id\": %u, \"Mode\": \"%s\", "
		       "\"level\": \"%s\", \"id\": ",
		       k->tid, call_mode(nm),
		       k->level == ASC_CORR_LEVEL_RUNTIME ? "runtime" :
		       k->level == ASC_CORR_LEVEL_HCCL	  ? "hccl" :
							    "acl");
	asc_json_cstr(t->o, nm);
	asc_out_printf(t->o, ", \"item_id\": \"0\", \"connection_id\": %zu}, \"ph\": \"X\"}",
		       i + 1);
}

/* CANN: process, threads, API events, Node@launch spans and HostToDevice starts. */
static int write_cann(struct conv *v, struct trace *t, uint32_t cann)
{
	const struct asc_corr *c = v->c;
	int32_t *node_kernel;
	size_t i;

	if (node_kernels(v, &node_kernel))
		return -ENOMEM;
	if (v->level > 0)
		cann_meta(v, t, cann);
	for (i = 0; i < c->nr_calls; i++) {
		const struct asc_corr_call *k = &c->calls[i];
		int shown = conv_call_level_shown(v->level, k) && conv_in_cycle(v, k->step);

		if (node_kernel && node_kernel[i] >= 0 && !shown)
			node_launch(t, c, &c->kernels[node_kernel[i]], cann);
		if (!shown)
			continue;
		cann_call(t, c, i, cann);
		if (node_kernel && node_kernel[i] >= 0)
			node_launch(t, c, &c->kernels[node_kernel[i]], cann);
	}
	/*
	 * HostToDevice starts of the other kernels: at the launching API (kept at
	 * Level0 too, where torch_npu keeps msprof's s ends)
	 */
	for (i = 0; i < c->nr_kernels; i++) {
		const struct asc_corr_kernel *k = &c->kernels[i];

		if (k->api < 0 || !conv_kernel_in(v, k))
			continue;
		if (node_kernel && k->node_call >= 0 && node_kernel[k->node_call] == (int32_t)i)
			continue; /* written after its Node@launch */
		h2d_start(t, c, k, cann);
	}
	free(node_kernel);
	return 0;
}

/* One device task on its stream of Ascend Hardware, with its HostToDevice end. */
static void hw_kernel(struct trace *t, const struct asc_corr *c, const struct asc_corr_kernel *k,
		      uint32_t hw)
{
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
	put_u(t->o,
	      ", \"Batch Id\": 0, \"Subtask Id\": 4294967295, \"connection_id\": ", conn_id(c, k));
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

/* Ascend Hardware of device d: one thread per stream, its kernels. */
static void write_hardware(struct conv *v, struct trace *t, uint32_t d)
{
	const struct asc_corr *c = v->c;
	uint32_t hw = conv_fmt_pid(v->pid, SORT_HARDWARE, d);
	uint32_t streams[MAX_IDS];
	size_t ns = 0, i, j;

	for (i = 0; i < c->nr_kernels; i++) {
		const struct asc_corr_kernel *k = &c->kernels[i];

		if (k->device != d || !conv_kernel_in(v, k))
			continue;
		add_id(streams, &ns, k->stream);
	}
	meta(t, "process_name", hw, 0, "name", "Ascend Hardware", 0, 0);
	for (j = 0; j < ns; j++) {
		char name[32];

		snprintf(name, sizeof(name), "Stream %u", streams[j]);
		meta(t, "thread_name", hw, streams[j], "name", name, 0, 0);
		meta(t, "thread_sort_index", hw, streams[j], "sort_index", NULL, streams[j], 0);
	}
	meta(t, "process_labels", hw, 0, "labels", "NPU", 0, 0);
	meta(t, "process_sort_index", hw, 0, "sort_index", NULL, SORT_HARDWARE, 0);
	for (i = 0; i < c->nr_kernels; i++) {
		const struct asc_corr_kernel *k = &c->kernels[i];

		if (k->device == d && conv_kernel_in(v, k))
			hw_kernel(t, c, k, hw);
	}
}

/* The groups of device d's ops in this cycle, first seen first; returns their count. */
static size_t hccl_groups(const struct conv *v, uint32_t d, int32_t *gs, size_t max)
{
	const struct asc_comm *m = v->comm;
	size_t i, j, n = 0;

	for (i = 0; i < m->nr_ops; i++) {
		const struct asc_comm_op *o = &m->ops[i];

		if (o->device != d || !o->ntasks || !conv_in_cycle(v, o->step))
			continue;
		for (j = 0; j < n && gs[j] != o->group; j++)
			;
		if (j == n && n < max)
			gs[n++] = o->group;
	}
	return n;
}

static void hccl_task(struct trace *t, const struct asc_comm *m, size_t ti, uint32_t pid,
		      uint32_t tid)
{
	const struct asc_comm_task *k = &m->tasks[ti];
	int64_t dur = asc_ns_sub(k->end_ns, k->start_ns);
	char bw[40];

	ev_begin(t);
	asc_out_printf(t->o, "\"name\": \"%s\", \"pid\": %u, \"tid\": %u, ",
		       asc_comm_kind_name(k->kind), pid, tid);
	put_ts(t->o, "ts", k->start_ns);
	asc_out_puts(t->o, ", ");
	put_dur(t->o, dur);
	/* bytes / ns = GB/s; "duration estimated(us)" is HCCL's model, not captured: 0 */
	asc_fmt_pyfloat(bw, dur > 0 ? (double)k->size / (double)dur : 0.0);
	asc_out_printf(t->o,
		       ", \"args\": {\"notify_id\": \"%llu\", \"duration estimated(us)\": 0, "
		       "\"stream id\": %u, \"task id\": %u, \"context id\": %zu, "
		       "\"task type\": \"%s\", \"src rank\": %u, \"dst rank\": %u, "
		       "\"transport type\": \"%s\", \"size(Byte)\": %llu, \"data type\": \"%s\", "
		       "\"link type\": \"%s\", \"bandwidth(GB/s)\": %s, \"model id\": 4294967295}, "
		       "\"ph\": \"X\"}",
		       (unsigned long long)k->notify_id, k->stream, k->task_id,
		       ti - m->ops[k->op].task0, asc_comm_kind_name(k->kind), k->src_rank,
		       k->dst_rank, asc_comm_transport_name(k->transport),
		       (unsigned long long)k->size, k->data_type, asc_comm_link_name(k->link), bw);
}

static void hccl_op(struct trace *t, const struct conv *v, size_t oi, uint32_t pid, uint32_t tid)
{
	const struct asc_comm_op *o = &v->comm->ops[oi];

	ev_begin(t);
	asc_out_puts(t->o, "\"name\": ");
	asc_json_cstr(t->o, o->name);
	asc_out_printf(t->o, ", \"pid\": %u, \"tid\": %u, ", pid, tid);
	put_ts(t->o, "ts", o->start_ns);
	asc_out_puts(t->o, ", ");
	put_dur(t->o, asc_ns_sub(o->end_ns, o->start_ns));
	/*
	 * connection_id: its Hccl@ API event's (call index + 1) at Level1+, joined
	 * by a HostToDevice flow; else one after every call's.  alg_type: not captured.
	 */
	asc_out_printf(t->o,
		       ", \"args\": {\"connection_id\": %zu, \"model id\": 4294967295, "
		       "\"data_type\": \"%s\", \"alg_type\": \"N/A\", \"count\": %llu}, "
		       "\"ph\": \"X\"}",
		       conv_comm_conn(v, oi), o->data_type[0] ? o->data_type : "INVALID_TYPE",
		       (unsigned long long)o->count);
	if (o->call >= 0 && conv_call_level_shown(v->level, &v->c->calls[o->call])) {
		const struct asc_corr_call *k = &v->c->calls[o->call];
		unsigned long long id = (unsigned long long)o->call + 1;

		ev_begin(t);
		asc_out_printf(t->o,
			       "\"name\": \"HostToDevice%llu\", \"ph\": \"s\", "
			       "\"cat\": \"HostToDevice\", \"id\": \"%llu\", \"pid\": %u, "
			       "\"tid\": %u, ",
			       id, id, conv_fmt_pid(v->pid, SORT_CANN, 0), k->tid);
		put_ts(t->o, "ts", k->start_ns);
		asc_out_putc(t->o, '}');
		ev_begin(t);
		asc_out_printf(t->o,
			       "\"name\": \"HostToDevice%llu\", \"ph\": \"f\", "
			       "\"id\": \"%llu\", ",
			       id, id);
		put_ts(t->o, "ts", o->start_ns);
		asc_out_printf(t->o,
			       ", \"cat\": \"HostToDevice\", \"pid\": %u, \"tid\": %u, "
			       "\"bp\": \"e\"}",
			       pid, tid);
	}
}

/*
 * The HCCL process of device d (msprof's hccl_assembler): per group a
 * "Group N Communication" row with its ops, then one "Plane P" row per plane
 * of its tasks at tid = the group's tid + P + 1; the next group's row after
 * its last plane.
 */
static void write_hccl(struct conv *v, struct trace *t, uint32_t d)
{
	const struct asc_comm *m = v->comm;
	uint32_t pid = conv_fmt_pid(v->pid, SORT_HCCL, d), base[64], maxp[64];
	int32_t gs[64];
	size_t ng, g, i, j;

	if (!m || !(ng = hccl_groups(v, d, gs, 64)))
		return;
	meta(t, "process_name", pid, 0, "name", "HCCL", 0, 0);
	for (g = 0; g < ng; g++) {
		char name[48];
		uint64_t planes = 0;

		maxp[g] = 0;
		base[g] = g ? base[g - 1] + maxp[g - 1] + 2 : 0;
		for (i = 0; i < m->nr_ops; i++)
			for (j = m->ops[i].task0;
			     m->ops[i].group == gs[g] && m->ops[i].device == d &&
			     j < m->ops[i].task0 + m->ops[i].ntasks;
			     j++) {
				if (m->tasks[j].plane < 64)
					planes |= 1ull << m->tasks[j].plane;
				if (m->tasks[j].plane < 64 && m->tasks[j].plane > maxp[g])
					maxp[g] = m->tasks[j].plane;
			}
		snprintf(name, sizeof(name), "Group %zu Communication", g);
		meta(t, "thread_name", pid, base[g], "name", name, 0, 0);
		meta(t, "thread_sort_index", pid, base[g], "sort_index", NULL, base[g], 0);
		for (i = 0; i < 64; i++)
			if (planes & (1ull << i)) {
				snprintf(name, sizeof(name), "Plane %zu", i);
				meta(t, "thread_name", pid, base[g] + i + 1, "name", name, 0, 0);
			}
		for (i = 0; i < 64; i++)
			if (planes & (1ull << i))
				meta(t, "thread_sort_index", pid, base[g] + i + 1, "sort_index",
				     NULL, base[g] + i + 1, 0);
	}
	meta(t, "process_labels", pid, 0, "labels", "NPU", 0, 0);
	meta(t, "process_sort_index", pid, 0, "sort_index", NULL, SORT_HCCL, 0);
	for (i = 0; i < m->nr_ops; i++) { /* tasks first, then ops, as msprof */
		const struct asc_comm_op *o = &m->ops[i];

		for (g = 0; g < ng && gs[g] != o->group; g++)
			;
		if (g == ng || o->device != d || !conv_in_cycle(v, o->step))
			continue;
		for (j = o->task0; j < o->task0 + o->ntasks; j++)
			hccl_task(t, m, j, pid,
				  base[g] + (m->tasks[j].plane < 64 ? m->tasks[j].plane : 0) + 1);
	}
	for (i = 0; i < m->nr_ops; i++) {
		const struct asc_comm_op *o = &m->ops[i];

		for (g = 0; g < ng && gs[g] != o->group; g++)
			;
		if (g < ng && o->device == d && o->ntasks && conv_in_cycle(v, o->step))
			hccl_op(t, v, i, pid, base[g]);
	}
}

/* One Overlap Analysis row's X events (no args, no cat, as msprof writes them). */
static void overlap_row(struct trace *t, uint32_t ov, uint32_t tid, const char *name,
			const struct span *sp, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		ev_begin(t);
		asc_out_printf(t->o, "\"name\": \"%s\", \"pid\": %u, \"tid\": %u, ", name, ov, tid);
		put_ts(t->o, "ts", sp[i].s);
		asc_out_puts(t->o, ", ");
		put_dur(t->o, asc_ns_sub(sp[i].e, sp[i].s));
		asc_out_puts(t->o, ", \"ph\": \"X\"}");
	}
}

/*
 * Overlap Analysis of device d (conv_overlap()): Computing, Communication,
 * Communication(Not Overlapped) and Free rows, tids 0..3.
 */
static void write_overlap(struct conv *v, struct trace *t, uint32_t d)
{
	uint32_t ov = conv_fmt_pid(v->pid, SORT_OVERLAP, d);
	struct conv_overlap o;

	meta(t, "process_name", ov, 0, "name", "Overlap Analysis", 0, 0);
	meta(t, "thread_name", ov, 0, "name", "Computing", 0, 0);
	meta(t, "thread_name", ov, 1, "name", "Communication", 0, 0);
	meta(t, "thread_name", ov, 2, "name", "Communication(Not Overlapped)", 0, 0);
	meta(t, "thread_name", ov, 3, "name", "Free", 0, 0);
	meta(t, "process_labels", ov, 0, "labels", "NPU", 0, 0);
	meta(t, "process_sort_index", ov, 0, "sort_index", NULL, SORT_OVERLAP, 0);
	if (conv_overlap(v, d, &o)) {
		v->err = -ENOMEM;
		return;
	}
	overlap_row(t, ov, 0, "Computing", o.comp, o.ncomp);
	overlap_row(t, ov, 1, "Communication", o.comm, o.ncomm);
	overlap_row(t, ov, 2, "Communication(Not Overlapped)", o.nov, o.nnov);
	overlap_row(t, ov, 3, "Free", o.freet, o.nfree);
	conv_overlap_free(&o);
}

/* NPU MEM counters of device d from the driver-level (APP) memory records. */
static void write_npu_mem(struct conv *v, struct trace *t, uint32_t d)
{
	const struct asc_corr *c = v->c;
	uint32_t mp = conv_fmt_pid(v->pid, SORT_NPU_MEM, d);
	int any = 0;
	size_t i;

	for (i = 0; i < c->nr_mems; i++) {
		const struct asc_corr_mem *m = &c->mems[i];
		char kb[40];

		if (m->component != ASC_MEM_APP || m->device != d || !conv_in_cycle(v, m->step))
			continue;
		if (!any++) {
			meta(t, "process_name", mp, 0, "name", "NPU MEM", 0, 0);
			meta(t, "process_labels", mp, 0, "labels", "NPU", 0, 0);
			meta(t, "process_sort_index", mp, 0, "sort_index", NULL, SORT_NPU_MEM, 0);
		}
		ev_begin(t);
		asc_out_puts(t->o, "\"name\": \"APP/HBM\", ");
		put_ts(t->o, "ts", m->ts_ns);
		asc_fmt_pyfloat(kb, (double)m->total_reserved / 1024.0);
		asc_out_printf(t->o,
			       ", \"pid\": %u, \"tid\": 0, \"args\": {\"KB\": %s}, "
			       "\"ph\": \"C\"}",
			       mp, kb);
	}
}

/* torch_to_npu: from the aten op that launched each kernel */
static void write_torch_to_npu(struct conv *v, struct trace *t)
{
	const struct asc_corr *c = v->c;
	size_t i;

	for (i = 0; i < c->nr_kernels; i++) {
		const struct asc_corr_kernel *k = &c->kernels[i];
		const struct asc_corr_op *o;
		uint64_t id;

		if (k->op < 0 || !conv_kernel_in(v, k))
			continue;
		o = &c->ops[k->op];
		if (!conv_in_cycle(v, o->step))
			continue;
		id = (uint64_t)k->start_ns; /* the kernel ts string without its dot */
		flow(t, "s", "torch_to_npu", id, v->pid, o->tid, o->start_ns, "async_npu");
		flow(t, "f", "torch_to_npu", id, conv_fmt_pid(v->pid, SORT_HARDWARE, k->device),
		     k->stream, k->start_ns, "async_npu");
	}
}

/* The NPU half of trace_view.json: CANN, then per device hardware, overlap, memory. */
static void write_npu_half(struct conv *v, struct trace *t)
{
	uint32_t devs = conv_devices_of(v), d;

	if (write_cann(v, t, conv_fmt_pid(v->pid, SORT_CANN, 0)))
		return;
	for (d = 0; d < 32; d++) {
		if (!(devs & (1u << d)))
			continue;
		write_hardware(v, t, d);
		write_hccl(v, t, d);
		write_overlap(v, t, d);
		write_npu_mem(v, t, d);
	}
	write_torch_to_npu(v, t);
}

int conv_write_trace(struct conv *v, const char *path)
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
			o.len--; /* nothing followed the seam (still in the buffer) */
	}
	asc_out_putc(&o, ']');
	return conv_close_out(v, &o, path);
}
