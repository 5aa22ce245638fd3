// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * db_comm.c - the communication tables of the db export (docs/db_schema.md):
 *
 *  ascend_pytorch_profiler[_{rank}].db
 *    COMMUNICATION_OP          one row per HCCL op of the cycle (msprof SaveCommOpData)
 *    COMMUNICATION_TASK_INFO   one row per comm task, globalTaskId its TASK row
 *  analysis.db (msprof's communication analysis as torch_npu copies it,
 *  _communication_db_parser.py: step and type added)
 *    CommAnalyzerTime          per op: the time info of communication.json
 *    CommAnalyzerBandwidth     per op, transport with data and size bin
 *    CommAnalyzerMatrix        per step and type, the top1/middle/bottom/total
 *                              entries of communication_matrix.json, op_name
 *                              the entry's op ("" for a total)
 *
 * The numbers are the ones of communication.json (analysis/comm.h), so the
 * text and db outputs of one capture agree.  Enum columns use the ids of
 * ENUM_HCCL_* (db_schema.c); unknowns are msprof's (N/A string, 65535 enum,
 * 4294967295 integer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/comm.h"
#include "analysis/correlate.h"
#include "convert/conv.h"
#include "convert/db_int.h"

static int64_t dtype_id(const char *s)
{
	static const char *const n[] = {
		"INT8",	 "INT16",  "INT32",  "FP16", "FP32",  "INT64",	"UINT64",
		"UINT8", "UINT16", "UINT32", "FP64", "BFP16", "INT128",
	};
	size_t i;

	for (i = 0; i < sizeof(n) / sizeof(n[0]); i++)
		if (!strcmp(s, n[i]))
			return (int64_t)i;
	return 65535; /* INVALID_TYPE */
}

/* ENUM_HCCL_LINK_TYPE id of a link enum (comm.h) */
static int64_t link_id(unsigned int lk)
{
	switch (lk) {
	case ASC_LK_ON_CHIP:
		return 0;
	case ASC_LK_HCCS:
		return 1;
	case ASC_LK_PCIE:
		return 2;
	case ASC_LK_ROCE:
		return 3;
	case ASC_LK_SIO:
		return 4;
	case ASC_LK_HCCS_SW:
		return 5;
	default:
		return 65535;
	}
}

/* TASK.globalTaskId per kernel: dense over the cycle's kernels, as db_export's tasks() */
static int64_t *task_ids(struct dbx *x)
{
	const struct asc_corr *c = dbx_corr(x);
	int64_t *id = malloc((c->nr_kernels + 1) * sizeof(*id)), n = 0;
	size_t i;

	for (i = 0; id && i < c->nr_kernels; i++)
		id[i] = dbx_in_cycle(x, c->kernels[i].step) ? n++ : -1;
	return id;
}

static int op_in(struct dbx *x, const struct asc_comm_op *o)
{
	return o->ntasks && dbx_in_cycle(x, o->step);
}

void db_comm_tables(struct dbx *x)
{
	const struct asc_comm *m = dbx_comm(x);
	const struct asc_corr *c = dbx_corr(x);
	struct dbw *w = dbx_writer(x);
	int64_t *tid;
	size_t i, j;

	if (!m || !m->nr_ops)
		return;
	tid = task_ids(x);
	if (!tid)
		return;
	dbw_table(w, "COMMUNICATION_OP", ASC_DBT_COMMUNICATION_OP);
	for (i = 0; i < m->nr_ops; i++) {
		const struct asc_comm_op *o = &m->ops[i];
		const struct asc_comm_group *g = o->group >= 0 ? &m->groups[o->group] : NULL;

		if (!op_in(x, o))
			continue;
		dbw_int(w, dbx_str(x, o->name));
		dbw_int(w, o->start_ns);
		dbw_int(w, o->end_ns);
		/* its API call's CANN_API connectionId at Level1+ (db_export's
		 * kernels + 1 + call), else one past every kernel's and call's */
		dbw_int(w, o->call >= 0 ? (int64_t)(c->nr_kernels + 1 + (size_t)o->call) :
					  (int64_t)(c->nr_kernels + 1 + c->nr_calls + i));
		dbw_int(w, dbx_str(x, g ? g->name : "N/A"));
		dbw_int(w, (int64_t)i); /* opId */
		dbw_int(w, 0);		/* relay */
		dbw_int(w, 0);		/* retry */
		dbw_int(w, dtype_id(o->data_type));
		dbw_int(w, dbx_str(x, "N/A")); /* algType: not captured */
		dbw_real(w, (double)o->count);
		dbw_int(w, dbx_str(x, "N/A")); /* opType: not captured */
		dbw_int(w, o->device);
		dbw_int(w, g && g->rank_size ? g->rank_size : 4294967295ll);
		dbw_row(w);
	}
	dbw_table_end(w);
	dbw_table(w, "COMMUNICATION_TASK_INFO", ASC_DBT_COMMUNICATION_TASK_INFO);
	for (i = 0; i < m->nr_ops; i++) {
		const struct asc_comm_op *o = &m->ops[i];
		const struct asc_comm_group *g = o->group >= 0 ? &m->groups[o->group] : NULL;

		if (!op_in(x, o))
			continue;
		for (j = o->task0; j < o->task0 + o->ntasks; j++) {
			const struct asc_comm_task *t = &m->tasks[j];
			int64_t dur = asc_ns_sub(t->end_ns, t->start_ns);

			dbw_int(w, dbx_str(x, asc_comm_kind_name(t->kind)));
			dbw_int(w, t->kernel >= 0 ? tid[t->kernel] : 4294967295ll);
			dbw_int(w, dbx_str(x, asc_comm_kind_name(t->kind)));
			dbw_int(w, t->plane);
			dbw_int(w, dbx_str(x, g ? g->name : "N/A"));
			dbw_int(w, (int64_t)t->notify_id);
			dbw_int(w, t->rdma_type);
			dbw_int(w, t->src_rank);
			dbw_int(w, t->dst_rank);
			dbw_int(w, t->transport < ASC_TP__NR ? t->transport : 65535);
			dbw_int(w, (int64_t)t->size);
			dbw_int(w, dtype_id(t->data_type));
			dbw_int(w, link_id(t->link));
			dbw_int(w, (int64_t)i);
			dbw_int(w, t->master);
			dbw_real(w, dur > 0 ? (double)t->size / (double)dur : 0.0); /* GB/s */
			dbw_row(w);
		}
	}
	dbw_table_end(w);
	free(tid);
}

/* "step<N>" / "step" of an op, NULL when no recorded step of the cycle holds it. */
static const char *step_name(struct dbx *x, const struct asc_comm_time *t, char *buf, size_t len)
{
	const struct asc_corr *c = dbx_corr(x);
	int s = conv_comm_step(c, dbx_cycle(x), t->start_ns);

	if (s == -2)
		return NULL;
	if (s < 0)
		snprintf(buf, len, "step");
	else
		snprintf(buf, len, "step%llu", (unsigned long long)c->steps[s].step);
	return buf;
}

static void time_rows(struct dbx *x, struct dbw *w)
{
	const struct asc_comm *m = dbx_comm(x);
	size_t i;

	dbw_table(w, "CommAnalyzerTime", ASC_DBT_COMM_ANALYZER_TIME);
	for (i = 0; i < m->nr_ops; i++) {
		const struct asc_comm_op *o = &m->ops[i];
		struct asc_comm_time t;
		char step[40];

		if (!op_in(x, o) || asc_comm_op_time(m, i, &t) ||
		    !step_name(x, &t, step, sizeof(step)))
			continue;
		dbw_text(w, o->name);
		dbw_text(w, o->group >= 0 ? m->groups[o->group].name : "");
		dbw_real(w, t.start_us);
		dbw_real(w, t.elapse.v);
		dbw_real(w, t.transit.v);
		dbw_real(w, t.wait.v);
		dbw_real(w, t.sync.v);
		dbw_real(w, t.idle.v);
		dbw_text(w, step);
		dbw_text(w, asc_comm_is_p2p(o->name) ? "p2p" : "collective");
		dbw_row(w);
	}
	dbw_table_end(w);
}

/* msprof get_band_info: transports with data, one row per size bin (zeros without bins) */
static void bandwidth_rows(struct dbx *x, struct dbw *w)
{
	const struct asc_comm *m = dbx_comm(x);
	size_t i, b;
	int k;

	dbw_table(w, "CommAnalyzerBandwidth", ASC_DBT_COMM_ANALYZER_BANDWIDTH);
	for (i = 0; i < m->nr_ops; i++) {
		const struct asc_comm_op *o = &m->ops[i];
		struct asc_comm_bw bw[ASC_BW__NR];
		struct asc_comm_time t;
		char step[40];

		if (!op_in(x, o) || asc_comm_op_time(m, i, &t) ||
		    !step_name(x, &t, step, sizeof(step)) || asc_comm_op_bw(m, i, bw))
			continue;
		for (k = 0; k < ASC_BW__NR; k++) {
			const struct asc_comm_bw *q = &bw[k];

			if (q->size_mb.v + q->time_ms.v + q->bw.v + q->large_ratio.v == 0)
				continue;
			for (b = 0; b < (q->nbins ? q->nbins : 1); b++) {
				dbw_text(w, o->name);
				dbw_text(w, o->group >= 0 ? m->groups[o->group].name : "");
				dbw_text(w, asc_comm_bwtype_name(k));
				dbw_real(w, q->size_mb.v);
				dbw_real(w, q->time_ms.v);
				dbw_real(w, q->bw.v);
				dbw_real(w, q->large_ratio.v);
				dbw_real(w, q->nbins ? q->bins[b].size_mb : 0);
				dbw_real(w, q->nbins ? (double)q->bins[b].count : 0);
				dbw_real(w, q->nbins ? q->bins[b].time_ms : 0);
				dbw_text(w, step);
				dbw_text(w, asc_comm_is_p2p(o->name) ? "p2p" : "collective");
				dbw_row(w);
			}
		}
		asc_comm_bw_free(bw);
	}
	dbw_table_end(w);
}

struct mx_db {
	struct dbw *w;
	const char *step, *type;
};

static int mx_db_row(void *ctx, const struct conv_mx_entry *e)
{
	struct mx_db *d = ctx;
	char r[16];

	dbw_text(d->w, e->name);
	dbw_text(d->w, e->group);
	snprintf(r, sizeof(r), "%u", e->src);
	dbw_text(d->w, r);
	snprintf(r, sizeof(r), "%u", e->dst);
	dbw_text(d->w, r);
	dbw_text(d->w, e->transport);
	dbw_real(d->w, e->size_mb);
	dbw_real(d->w, e->time_ms);
	dbw_real(d->w, e->bw);
	dbw_text(d->w, d->step);
	dbw_text(d->w, d->type);
	dbw_text(d->w, e->op ? e->op : ""); /* a total has no op: torch_npu writes "" */
	dbw_row(d->w);
	return 0;
}

/*
 * torch_npu's CommAnalyzerMatrix (prof_db_parse/_communication_db_parser.py
 * reformat_matrix_db_data): CANN's per-op links regrouped per step and type
 * as communication_matrix.json, the same entries (conv_comm_matrix()).
 */
static void matrix_rows(struct dbx *x, struct dbw *w)
{
	const struct asc_comm *m = dbx_comm(x);
	const struct asc_corr *c = dbx_corr(x);
	size_t i, n = c->nr_steps ? c->nr_steps : 1;
	int *slot = conv_comm_slots(c, m, dbx_cycle(x));

	if (!slot)
		return;
	dbw_table(w, "CommAnalyzerMatrix", ASC_DBT_COMM_ANALYZER_MATRIX);
	for (i = 0; i < n; i++) {
		int want = c->nr_steps ? (int)i : -1;
		char step[40];
		struct mx_db d = { .w = w, .step = step };

		if (c->nr_steps)
			snprintf(step, sizeof(step), "step%llu",
				 (unsigned long long)c->steps[i].step);
		else
			snprintf(step, sizeof(step), "step");
		d.type = "p2p";
		if (conv_comm_matrix(m, slot, want, 1, mx_db_row, &d))
			break;
		d.type = "collective";
		if (conv_comm_matrix(m, slot, want, 0, mx_db_row, &d))
			break;
	}
	dbw_table_end(w);
	free(slot);
}

void db_comm_analysis(struct dbx *x, struct dbw *w)
{
	const struct asc_comm *m = dbx_comm(x);

	if (!m || !m->nr_ops)
		return;
	bandwidth_rows(x, w);
	matrix_rows(x, w);
	time_rows(x, w);
}

/*
 * analysis.db StepTraceTime: the rows of step_trace_time.csv
 * (conv_step_values(), the same numbers, with or without communication), in
 * us; a device without a compute or comm span has none, as in the csv.
 */
void db_step_trace(struct dbx *x, struct dbw *w)
{
	const struct asc_corr *c = dbx_corr(x);
	struct conv v = { 0 };
	uint32_t devs, d;
	size_t i;

	v.c = c;
	v.comm = dbx_comm(x);
	v.cycle = dbx_cycle(x);
	v.has_steps = c->nr_steps > 0;
	devs = conv_devices_of(&v);
	dbw_table(w, "StepTraceTime", ASC_DBT_STEP_TRACE_TIME);
	for (d = 0; d < 32; d++) {
		struct conv_overlap ov;

		if (!(devs & (1u << d)) || conv_overlap(&v, d, &ov))
			continue;
		if (!ov.ncomp && !ov.ncomm) {
			conv_overlap_free(&ov);
			continue;
		}
		for (i = 0; i < (v.has_steps ? c->nr_steps : 1); i++) {
			struct conv_step_row r;
			char step[32];

			if (!conv_step_values(&v, &ov, d, i, &r))
				continue;
			dbw_int(w, d);
			if (v.has_steps) {
				snprintf(step, sizeof(step), "%llu",
					 (unsigned long long)c->steps[i].step);
				dbw_text(w, step);
			} else {
				dbw_null(w);
			}
			dbw_real(w, r.comp / 1000.0);
			dbw_real(w, r.nov / 1000.0);
			dbw_real(w, (r.comm - r.nov) / 1000.0);
			dbw_real(w, r.comm / 1000.0);
			dbw_real(w, r.freet / 1000.0);
			dbw_real(w, r.stage / 1000.0);
			dbw_real(w, r.bubble / 1000.0);
			dbw_real(w, r.nov_excl / 1000.0);
			dbw_real(w, r.preparing / 1000.0);
			dbw_row(w);
		}
		conv_overlap_free(&ov);
	}
	dbw_table_end(w);
}
