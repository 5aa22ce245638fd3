// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * csv_files.c - the CSV files of ASCEND_PROFILER_OUTPUT: kernel_details,
 * operator_details, step_trace_time, memory_record, operator_memory,
 * op_statistic, api_statistic.
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
#include "lib/hashmap.h"
#include "lib/json_writer.h"
#include "lib/log.h"
#include "schedule.h"

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
#define KD_PMU_COLS 25
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
static const char as_header[] = "Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance";

/* ---- CSV files ---- */

void conv_kernel_details(struct conv *v)
{
	const struct asc_corr *c = v->c;
	struct asc_out o;
	struct asc_csv csv;
	int64_t *last_end = NULL; /* per (device, stream): previous task end, for Wait Time */
	uint64_t *keys = NULL;
	size_t nkeys = 0, i, j, rows = 0;

	for (i = 0; i < c->nr_kernels; i++)
		if ((c->kernels[i].flags & ASC_CORR_K_COMPUTE) && conv_kernel_in(v, &c->kernels[i]))
			rows++;
	if (!rows)
		return; /* torch_npu writes no CSV without rows */
	if (conv_open_out(v, &o, v->out, "kernel_details.csv")) {
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

		if (!conv_kernel_in(v, k))
			continue;
		/* Wait Time: gap to the previous task on the same stream (any task type) */
		for (j = 0; j < nkeys && keys[j] != key; j++)
			;
		if (j < nkeys) {
			if (k->start_ns > last_end[j])
				wait = asc_ns_sub(k->start_ns, last_end[j]);
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
			asc_csv_cstr(&csv, "N/A"); /* OP State: dynamic/static unknown */
		asc_csv_cstr(&csv, asc_corr_task_type_name(k->task_type));
		asc_csv_ts(&csv, k->start_ns);
		conv_csv_3ns(&csv, asc_ns_sub(k->end_ns, k->start_ns));
		conv_csv_3ns(&csv, wait);
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
	conv_close_out(v, &o, "kernel_details.csv");
}

void conv_operator_details(struct conv *v)
{
	const struct asc_corr *c = v->c;
	int64_t *child = NULL;
	struct asc_out o;
	struct asc_csv csv;
	size_t i, rows = 0;

	for (i = 0; i < c->nr_ops; i++)
		if (!(c->ops[i].flags & ASC_CORR_O_STEP) && conv_in_cycle(v, c->ops[i].step))
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
	if (conv_open_out(v, &o, v->out, "operator_details.csv")) {
		free(child);
		v->err = -EIO;
		return;
	}
	asc_csv_init(&csv, &o, 0);
	asc_csv_header(&csv, od_header);
	for (i = 0; i < c->nr_ops; i++) {
		const struct asc_corr_op *op = &c->ops[i];
		int64_t dur = asc_ns_sub(op->end_ns, op->start_ns);

		if ((op->flags & ASC_CORR_O_STEP) || !conv_in_cycle(v, op->step))
			continue;
		asc_csv_cstr(&csv, asc_corr_str(c, op->name));
		asc_csv_cstr(&csv, asc_corr_str(c, op->input_dims)); /* empty without shapes */
		asc_csv_cstr(&csv, asc_corr_str(c, op->stack));
		asc_csv_us_float(&csv, asc_ns_sub(dur, child[i]));
		asc_csv_us_float(&csv, dur);
#define DEV(x)                                       \
	do {                                         \
		if (x)                               \
			asc_csv_us_float(&csv, (x)); \
		else                                 \
			asc_csv_cstr(&csv, "0");     \
	} while (0)
		DEV(op->device_self_ns);
		DEV(op->device_total_ns);
		DEV(op->device_self_aicore_ns);
		DEV(op->device_total_aicore_ns);
#undef DEV
		asc_csv_end(&csv);
	}
	free(child);
	conv_close_out(v, &o, "operator_details.csv");
}

/* Sum of the spans starting in [s0, s1); *first / *last: earliest start, latest end. */
static int64_t step_sum(const struct span *sp, size_t n, int64_t s0, int64_t s1, int64_t *first,
			int64_t *last)
{
	int64_t sum = 0;
	size_t j;

	for (j = 0; j < n; j++) {
		if (sp[j].s < s0 || sp[j].s >= s1)
			continue;
		sum = asc_ns_add(sum, asc_ns_sub(sp[j].e, sp[j].s));
		if (*first < 0 || sp[j].s < *first)
			*first = sp[j].s;
		if (sp[j].e > *last)
			*last = sp[j].e;
	}
	return sum;
}

/* The framework start of the row: the step's start, else the first op of the cycle. */
static int64_t step_fwk_start(struct conv *v, size_t i, int64_t first)
{
	const struct asc_corr *c = v->c;
	size_t j;

	if (v->has_steps)
		return c->steps[i].start_ns;
	for (j = 0; j < c->nr_ops; j++)
		if (conv_in_cycle(v, c->ops[j].step))
			return c->ops[j].start_ns;
	return first;
}

/* Did a task of device dev come from a submission in step id step? (only for empty steps) */
static int step_submitted(const struct asc_corr *c, uint32_t dev, uint64_t step)
{
	for (size_t j = 0; j < c->nr_kernels; j++)
		if (c->kernels[j].device == dev && c->kernels[j].step >= 0 &&
		    (uint64_t)c->kernels[j].step == step)
			return 1;
	return 0;
}

/*
 * One row per device and recorded step (torch_npu _trace_step_time_parser.py):
 * the Overlap Analysis events starting in the step summed per row name,
 * Overlapped = Communication - Not Overlapped, Bubble = the hcom_receive ops,
 * Stage = the events' span less Bubble, Not Overlapped and Exclude Receive =
 * max(Not Overlapped - Bubble, 0), Preparing = first Computing / Communication
 * start less the step's start.  0: no row (a capture without steps and without events).
 * A recorded step in which no event starts (npu_train baseline's ~1 ms steps, whose
 * tasks run after the next step began) still has its row, all 0, when it submitted a task
 * to dev: torch_npu writes one per step with launches (fwk_cann_relation_parser.py
 * get_step_range(); docs/known-issues.md), and its tasks are counted in the step they
 * start in. A step without any submission (oom's refused step 0) has none.
 */
int conv_step_values(struct conv *v, const struct conv_overlap *o, uint32_t d, size_t i,
		     struct conv_step_row *row)
{
	const struct asc_corr *c = v->c;
	int64_t s0 = INT64_MIN, s1 = INT64_MAX, first = -1, last = -1, f2, l2;

	memset(row, 0, sizeof(*row));
	if (v->has_steps) {
		if (c->steps[i].cycle != v->cycle || !asc_sched_recording(c->steps[i].state))
			return 0;
		s0 = c->steps[i].start_ns;
		s1 = c->steps[i].end_ns;
	}
	row->comp = step_sum(o->comp, o->ncomp, s0, s1, &first, &last);
	row->comm = step_sum(o->comm, o->ncomm, s0, s1, &first, &last);
	f2 = first;
	l2 = last;
	row->nov = step_sum(o->nov, o->nnov, s0, s1, &f2, &l2);
	row->freet = step_sum(o->freet, o->nfree, s0, s1, &f2, &l2);
	if (first < 0)
		return v->has_steps && step_submitted(c, d, c->steps[i].step);
	row->bubble = conv_receive_ns(v, d, s0, s1);
	row->stage = (l2 - f2) - row->bubble;
	row->nov_excl = row->nov > row->bubble ? row->nov - row->bubble : 0;
	row->preparing = first - step_fwk_start(v, i, first);
	return 1;
}

static void step_row(struct conv *v, struct asc_csv *csv, const struct conv_overlap *o, uint32_t d,
		     size_t i)
{
	struct conv_step_row r;

	if (!conv_step_values(v, o, d, i, &r))
		return;
	if (v->has_steps)
		asc_csv_printf(csv, "%llu", (unsigned long long)v->c->steps[i].step);
	else
		asc_csv_empty(csv);
	asc_csv_us_float(csv, r.comp);
	asc_csv_us_float(csv, r.nov);	       /* Communication(Not Overlapped) */
	asc_csv_us_float(csv, r.comm - r.nov); /* Overlapped */
	asc_csv_us_float(csv, r.comm);	       /* Communication */
	asc_csv_us_float(csv, r.freet);
	asc_csv_us_float(csv, r.stage);
	if (r.bubble)
		asc_csv_us_float(csv, r.bubble);
	else
		asc_csv_cstr(csv, "0"); /* Bubble: torch_npu's int 0 */
	asc_csv_us_float(csv, r.nov_excl);
	asc_csv_us_float(csv, r.preparing);
	asc_csv_end(csv);
}

void conv_step_trace_time(struct conv *v)
{
	const struct asc_corr *c = v->c;
	uint32_t devs = conv_devices_of(v), d;
	struct asc_out o;
	struct asc_csv csv;
	size_t i;
	int opened = 0;

	for (d = 0; d < 32; d++) {
		struct conv_overlap ov;

		if (!(devs & (1u << d)))
			continue;
		if (conv_overlap(v, d, &ov)) {
			v->err = -ENOMEM;
			break;
		}
		if (!ov.ncomp && !ov.ncomm) {
			conv_overlap_free(&ov);
			continue;
		}
		if (!opened++) {
			if (conv_open_out(v, &o, v->out, "step_trace_time.csv")) {
				conv_overlap_free(&ov);
				v->err = -EIO;
				return;
			}
			asc_csv_init(&csv, &o, 0);
			asc_csv_header(&csv, st_header);
		}
		/* one row per recorded step, or one row for a capture without steps */
		for (i = 0; i < (v->has_steps ? c->nr_steps : 1); i++)
			step_row(v, &csv, &ov, d, i);
		conv_overlap_free(&ov);
	}
	if (opened)
		conv_close_out(v, &o, "step_trace_time.csv");
}

static void mb(struct asc_csv *csv, uint64_t bytes)
{
	asc_csv_pow2_frac(csv, bytes, 20);
}

void conv_memory_record(struct conv *v)
{
	const struct asc_corr *c = v->c;
	const struct asc_corr_mem *last_pta = NULL, *last_ge = NULL;
	struct asc_out o;
	struct asc_csv csv;
	size_t i, rows = 0;
	char dev[16];

	for (i = 0; i < c->nr_mems; i++)
		if (conv_in_cycle(v, c->mems[i].step))
			rows++;
	if (!rows)
		return;
	if (conv_open_out(v, &o, v->out, "memory_record.csv")) {
		v->err = -EIO;
		return;
	}
	asc_csv_init(&csv, &o, 0);
	asc_csv_header(&csv, mr_header);
	/* APP rows first */
	for (i = 0; i < c->nr_mems; i++) {
		const struct asc_corr_mem *m = &c->mems[i];

		if (m->component != ASC_MEM_APP || !conv_in_cycle(v, m->step))
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

		if (m->component == ASC_MEM_APP || !conv_in_cycle(v, m->step))
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
	conv_close_out(v, &o, "memory_record.csv");
}

/*
 * The PTA allocations made inside an aten op in cycle `cycle`, in record
 * order, each joined with the first FREE and BLOCK_FREE record of the same
 * pointer that follows it: a pointer's newest allocation takes the frees
 * that follow.  Allocations made outside any op are not attributed
 * (torch_npu drops them the same way).  Frees are found with a hash of
 * ptr -> open allocation, so this is one pass.  operator_memory.csv and the
 * OP_MEMORY table both read it.  *al is malloc'ed (NULL when *nal is 0);
 * -ENOMEM.
 */
int conv_op_allocations(const struct asc_corr *c, int cycle, struct conv_alloc **al, size_t *nal)
{
	struct asc_u64map open = { 0 }; /* ptr -> a index of its newest allocation */
	struct conv_alloc *a;
	size_t i, n = 0, rows = 0;
	uint64_t j;

	*al = NULL;
	*nal = 0;
	for (i = 0; i < c->nr_mems; i++) {
		const struct asc_corr_mem *m = &c->mems[i];

		if (m->component == ASC_MEM_PTA && m->data_type == ASC_MEM_MALLOC && m->op >= 0 &&
		    conv_step_in_cycle(c, cycle, m->step))
			rows++;
	}
	if (!rows)
		return 0;
	a = malloc(rows * sizeof(*a));
	if (!a)
		return -ENOMEM;
	for (i = 0; i < c->nr_mems; i++) {
		const struct asc_corr_mem *m = &c->mems[i];
		struct conv_alloc *o;

		if (m->component != ASC_MEM_PTA)
			continue;
		if (m->data_type == ASC_MEM_MALLOC) {
			if (m->op < 0 || !conv_step_in_cycle(c, cycle, m->step) || n == rows)
				continue;
			a[n] = (struct conv_alloc){ m->ptr, i, -1, -1 };
			if (asc_u64map_put(&open, m->ptr, n)) {
				asc_u64map_free(&open);
				free(a);
				return -ENOMEM;
			}
			n++;
			continue;
		}
		if (!asc_u64map_get(&open, m->ptr, &j))
			continue;
		o = &a[j];
		if (m->data_type == ASC_MEM_FREE && o->free_i < 0)
			o->free_i = (int64_t)i;
		else if (m->data_type == ASC_MEM_BLOCK_FREE && o->bfree_i < 0)
			o->bfree_i = (int64_t)i;
	}
	asc_u64map_free(&open);
	*al = a;
	*nal = n;
	return 0;
}

/* operator_memory.csv: one row per conv_op_allocations() allocation. */
void conv_operator_memory(struct conv *v)
{
	const struct asc_corr *c = v->c;
	struct conv_alloc *al = NULL;
	size_t nal = 0, i;
	struct asc_out o;
	struct asc_csv csv;

	if (conv_op_allocations(c, v->cycle, &al, &nal)) {
		v->err = -ENOMEM;
		return;
	}
	if (!nal)
		return;
	if (conv_open_out(v, &o, v->out, "operator_memory.csv")) {
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
			asc_csv_ts(&csv, asc_ns_sub(f->ts_ns, m->ts_ns));
		else
			asc_csv_empty(&csv);
		if (b)
			asc_csv_ts(&csv, asc_ns_sub(b->ts_ns, m->ts_ns));
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
	conv_close_out(v, &o, "operator_memory.csv");
out_free:
	free(al);
}

/* Aggregation for op_statistic / api_statistic. */
struct agg {
	uint32_t name, type; /* string ids */
	uint32_t level;
	uint64_t count;
	double total, min, max, sumsq;
};

/* (name, type, level) -> index into a[], so that millions of calls aggregate in O(1) each. */
struct aggtab {
	struct agg *a;
	size_t n, cap;
	struct asc_idxmap idx;
};

struct aggkey {
	uint32_t name, type, level;
};

static uint64_t agg_hash(const struct aggkey *k)
{
	return asc_hash_u64(((uint64_t)k->name << 32 | k->type) ^ (uint64_t)k->level << 56);
}

static int agg_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct agg *g = &((const struct aggtab *)ctx)->a[idx];
	const struct aggkey *k = key;

	return g->name == k->name && g->type == k->type && g->level == k->level;
}

static struct agg *agg_get(struct aggtab *t, uint32_t name, uint32_t type, uint32_t level)
{
	struct aggkey k = { name, type, level };
	uint64_t h = agg_hash(&k);
	struct agg *g;
	uint32_t i;

	if (asc_idxmap_find(&t->idx, h, agg_eq, t, &k, &i))
		return &t->a[i];
	if (t->n == t->cap) {
		struct agg *na = realloc(t->a, (t->cap = t->cap ? t->cap * 2 : 64) * sizeof(*na));

		if (!na)
			return NULL;
		t->a = na;
	}
	if (asc_idxmap_add(&t->idx, h, (uint32_t)t->n))
		return NULL;
	g = &t->a[t->n++];
	memset(g, 0, sizeof(*g));
	g->name = name;
	g->type = type;
	g->level = level;
	g->min = INFINITY;
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

void conv_op_statistic(struct conv *v)
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

		if (!(k->flags & ASC_CORR_K_COMPUTE) || !conv_kernel_in(v, k))
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
	if (conv_open_out(v, &o, v->out, "op_statistic.csv")) {
		v->err = -EIO;
		goto out;
	}
	asc_csv_init(&csv, &o, 0);
	asc_csv_header(&csv, os_header);
	for (i = 0; i < n; i++) {
		asc_csv_cstr(&csv, asc_corr_str(c, a[i].name));
		asc_csv_cstr(&csv, asc_corr_task_type_name(a[i].type));
		asc_csv_printf(&csv, "%llu", (unsigned long long)a[i].count);
		conv_csv_3(&csv, a[i].total);
		conv_csv_3(&csv, a[i].min);
		conv_csv_3(&csv, a[i].total / a[i].count);
		conv_csv_3(&csv, a[i].max);
		conv_csv_3(&csv, sum > 0 ? a[i].total * 100.0 / sum : 0);
		asc_csv_end(&csv);
	}
	conv_close_out(v, &o, "op_statistic.csv");
out:
	free(t.a);
	asc_idxmap_free(&t.idx);
}

void conv_api_statistic(struct conv *v)
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

		if (!conv_call_level_shown(v->level, k) || !conv_in_cycle(v, k->step))
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
	if (conv_open_out(v, &o, v->out, "api_statistic.csv")) {
		v->err = -EIO;
		goto out;
	}
	asc_csv_init(&csv, &o, 0);
	asc_csv_header(&csv, as_header);
	for (i = 0; i < n; i++) {
		double avg = a[i].total / a[i].count;
		double var = a[i].sumsq / a[i].count - avg * avg;

		asc_csv_cstr(&csv, a[i].level == ASC_CORR_LEVEL_RUNTIME ? "runtime" :
				   a[i].level == ASC_CORR_LEVEL_HCCL	? "hccl" :
									  "acl");
		asc_csv_cstr(&csv, asc_corr_str(c, a[i].name));
		conv_csv_3(&csv, a[i].total);
		asc_csv_printf(&csv, "%llu", (unsigned long long)a[i].count);
		conv_csv_3(&csv, avg);
		conv_csv_3(&csv, a[i].min);
		conv_csv_3(&csv, a[i].max);
		conv_csv_3(&csv, var > 0 ? var : 0);
		asc_csv_end(&csv);
	}
	conv_close_out(v, &o, "api_statistic.csv");
out:
	free(t.a);
	asc_idxmap_free(&t.idx);
}
