// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * comm.c - msprof's per-op communication numbers over the comm view
 * (comm.h says which rule comes from where).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/comm.h"
#include "analysis/correlate.h"
#include "lib/json_writer.h"

void asc_comm_free(struct asc_comm *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nr_groups; i++)
		free(m->groups[i].global_ranks);
	free(m->groups);
	free(m->ops);
	free(m->tasks);
	memset(m, 0, sizeof(*m));
}

const char *asc_comm_kind_name(unsigned int kind)
{
	static const char *const n[ASC_CT__NR] = {
		"UNKNOWN", "Notify_Record", "Notify_Wait", "Memcpy", "Reduce_Inline", "RDMASend",
	};

	return kind < ASC_CT__NR ? n[kind] : n[0];
}

const char *asc_comm_transport_name(unsigned int tp)
{
	static const char *const n[ASC_TP__NR] = { "SDMA", "RDMA", "LOCAL" };

	return tp < ASC_TP__NR ? n[tp] : "INVALID_TYPE";
}

const char *asc_comm_link_name(unsigned int lk)
{
	static const char *const n[ASC_LK__NR] = {
		"INVALID_TYPE", "ON_CHIP", "HCCS", "PCIE", "ROCE", "SIO", "HCCS_SW",
	};

	return lk < ASC_LK__NR ? n[lk] : n[0];
}

const char *asc_comm_bwtype_name(unsigned int bw)
{
	static const char *const n[ASC_BW__NR] = { "RDMA", "HCCS", "PCIE", "SDMA", "SIO" };

	return bw < ASC_BW__NR ? n[bw] : "SDMA";
}

static int prefix_ci(const char *s, const char *p)
{
	for (; *p; s++, p++)
		if (tolower((unsigned char)*s) != *p)
			return 0;
	return 1;
}

int asc_comm_is_p2p(const char *op_name)
{
	return prefix_ci(op_name, "hcom_send") || prefix_ci(op_name, "hcom_receive") ||
	       prefix_ci(op_name, "hcom_batchsendrecv");
}

/*
 * torch_npu's HCCL_PATTERN: the first match, scanning left to right, of the
 * alternatives in their order (Python's re tries them in order at each
 * position), in the lower-cased name; else the name before "__".
 */
const char *asc_comm_op_type(const char *op_name, char *buf, size_t len)
{
	static const char *const alt[] = {
		"send",	     "reduce",	   "invalid",	    "broadcast", "allreduce",
		"receive",   "allgather",  "reducescatter", "scatter",	 "alltoall",
		"alltoallv", "alltoallvc", "batchsendrecv",
	};
	char low[128];
	size_t n = strlen(op_name), i, a;
	const char *dd;

	if (n >= sizeof(low))
		n = sizeof(low) - 1;
	for (i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)op_name[i]);
	low[n] = '\0';
	for (i = 0; i < n; i++)
		for (a = 0; a < sizeof(alt) / sizeof(alt[0]); a++)
			if (!strncmp(low + i, alt[a], strlen(alt[a]))) {
				snprintf(buf, len, "%s", alt[a]);
				return buf;
			}
	dd = strstr(op_name, "__");
	snprintf(buf, len, "%.*s", dd ? (int)(dd - op_name) : (int)strlen(op_name), op_name);
	return buf;
}

double asc_py_round4(double x)
{
	char b[64];

	/* glibc rounds the exact binary value, half to even, as Python's round() */
	snprintf(b, sizeof(b), "%.4f", x);
	return strtod(b, NULL);
}

static void pv_add(struct asc_pyval *p, double v)
{
	p->v += v;
	p->isf = 1;
}

static void pv_set(struct asc_pyval *p, double v)
{
	p->v = v;
	p->isf = 1;
}

/* An SDMA transit task (msprof is_transit_sdma_event): local copies excluded. */
static int transit_sdma(const struct asc_comm_task *t)
{
	return (t->kind == ASC_CT_MEMCPY || t->kind == ASC_CT_REDUCE_INLINE) &&
	       t->transport == ASC_TP_SDMA && t->link != ASC_LK_ON_CHIP;
}

/*
 * An RDMA copy that is not part of a payload run (rdma_type not
 * RDMA_SEND_PAYLOAD): npu_model's RoCE Memcpy / Reduce_Inline carries its own
 * completion, so its own span is the transfer (msprof has no such task).
 */
static int transit_rdma_direct(const struct asc_comm_task *t)
{
	return (t->kind == ASC_CT_MEMCPY || t->kind == ASC_CT_REDUCE_INLINE) &&
	       t->transport == ASC_TP_RDMA && !(t->flags & ASC_COMM_T_RDMA_PAYLOAD);
}

static double dur_ms(const struct asc_comm_task *t)
{
	return (double)asc_ns_sub(t->end_ns, t->start_ns) / 1000000.0;
}

/*
 * The tasks an RDMA transfer spans (meta_parser.py): the run of payload
 * tasks from p[i], then the closing tasks: 3 for send/receive ops, 5 else
 * (with a barrier).  *time_ms from the first payload's start to the end of
 * the task rdma_n - 2 after the run, *size_mb the payloads; returns the
 * index after the transfer, or i + run when the closing tasks are missing
 * (msprof then skips the run).
 */
static size_t rdma_transfer(const struct asc_comm_task *const *p, size_t n, size_t i, size_t rdma_n,
			    double *time_ms, double *size_mb, int *ok)
{
	size_t run = 0, k, last;
	uint64_t bytes = 0;

	while (i + run < n && (p[i + run]->flags & ASC_COMM_T_RDMA_PAYLOAD))
		bytes += p[i + run]->size, run++;
	last = i + run + rdma_n - 2;
	*ok = last < n;
	if (!*ok)
		return i + run;
	*size_mb = (double)bytes / 1000000.0;
	*time_ms = (double)asc_ns_sub(p[last]->end_ns, p[i]->start_ns) / 1000000.0;
	k = i + rdma_n + run - 1;
	return k;
}

static size_t rdma_closing(const struct asc_comm *m, const struct asc_comm_op *o)
{
	(void)m;
	return strstr(o->name, "send") || strstr(o->name, "Send") || strstr(o->name, "receive") ||
			       strstr(o->name, "Receive") ?
		       3 :
		       5;
}

/* Pointers to the tasks of op o on plane `plane` (or every plane: -1), in order. */
static const struct asc_comm_task **plane_tasks(const struct asc_comm *m,
						const struct asc_comm_op *o, int64_t plane,
						int master, size_t *n)
{
	const struct asc_comm_task **p = malloc((o->ntasks + 1) * sizeof(*p));
	size_t i;

	*n = 0;
	if (!p)
		return NULL;
	for (i = o->task0; i < o->task0 + o->ntasks && i < m->nr_tasks; i++) {
		const struct asc_comm_task *t = &m->tasks[i];

		if (master ? t->master : (plane < 0 || t->plane == (uint32_t)plane))
			p[(*n)++] = t;
	}
	return p;
}

int asc_comm_op_time(const struct asc_comm *m, size_t oi, struct asc_comm_time *t)
{
	const struct asc_comm_op *o = &m->ops[oi];
	const struct asc_comm_task **p;
	size_t n, i, rn = rdma_closing(m, o);
	int64_t first = INT64_MAX, last = INT64_MIN;
	int wait_flag = 1;
	char b[48];

	memset(t, 0, sizeof(*t));
	p = plane_tasks(m, o, -1, 1, &n);
	if (!p)
		return -ENOMEM;
	if (!n) {
		free(p);
		return -ENODATA;
	}
	for (i = 0; i < n;) {
		const struct asc_comm_task *k = p[i];

		if (transit_sdma(k) || transit_rdma_direct(k)) {
			wait_flag = 0;
			pv_add(&t->transit, dur_ms(k));
		}
		if (k->flags & ASC_COMM_T_RDMA_PAYLOAD) {
			double tm = 0, sz = 0;
			int ok;
			size_t next = rdma_transfer(p, n, i, rn, &tm, &sz, &ok);

			if (ok) {
				pv_add(&t->transit, tm);
				wait_flag = 0;
			}
			i = next;
			continue;
		}
		if (k->kind == ASC_CT_NOTIFY_WAIT) {
			if (wait_flag)
				pv_add(&t->sync, dur_ms(k));
			pv_add(&t->wait, dur_ms(k));
		}
		i++;
	}
	for (i = 0; i < n; i++) {
		if (p[i]->start_ns < first)
			first = p[i]->start_ns;
		if (p[i]->end_ns > last)
			last = p[i]->end_ns;
	}
	free(p);
	pv_set(&t->elapse, (double)(last - first) / 1000000.0);
	pv_set(&t->idle, t->elapse.v - t->transit.v - t->wait.v);
	if (t->wait.v + t->transit.v != 0)
		pv_set(&t->wait_ratio, asc_py_round4(t->wait.v / (t->wait.v + t->transit.v)));
	if (t->sync.v + t->transit.v != 0)
		pv_set(&t->sync_ratio, asc_py_round4(t->sync.v / (t->sync.v + t->transit.v)));
	b[asc_fmt_us(b, first)] = '\0';
	t->start_us = strtod(b, NULL);
	t->start_ns = first;
	return 0;
}

/*
 * The planes of op o's tasks in first-seen order (msprof groups tasks by plane_id in a dict,
 * which keeps insertion order), at most OP_PLANES_MAX of them; returns how many.
 */
#define OP_PLANES_MAX 256
static size_t op_planes(const struct asc_comm *m, const struct asc_comm_op *o,
			uint32_t planes[OP_PLANES_MAX])
{
	size_t np = 0, i, j;

	for (i = o->task0; i < o->task0 + o->ntasks && i < m->nr_tasks; i++) {
		for (j = 0; j < np && planes[j] != m->tasks[i].plane; j++)
			;
		if (j == np && np < OP_PLANES_MAX)
			planes[np++] = m->tasks[i].plane;
	}
	return np;
}

static int bin_add(struct asc_comm_bw *b, double size_mb, double time_ms)
{
	size_t i;

	for (i = 0; i < b->nbins; i++)
		if (b->bins[i].size_mb == size_mb) {
			b->bins[i].count++;
			b->bins[i].time_ms += time_ms;
			return 0;
		}
	if (!(b->nbins & (b->nbins + 1)) || !b->bins) {
		struct asc_comm_sizebin *nb = realloc(b->bins, (b->nbins * 2 + 2) * sizeof(*nb));

		if (!nb)
			return -ENOMEM;
		b->bins = nb;
	}
	b->bins[b->nbins++] = (struct asc_comm_sizebin){ size_mb, 1, time_ms };
	return 0;
}

static int bw_record(struct asc_comm_bw *b, double size_mb, double time_ms)
{
	pv_add(&b->size_mb, size_mb);
	pv_add(&b->time_ms, time_ms);
	return bin_add(b, size_mb, time_ms);
}

/* msprof get_communication_bandwidth_info_type */
static int bw_type(const struct asc_comm_task *t)
{
	switch (t->link) {
	case ASC_LK_HCCS_SW:
	case ASC_LK_HCCS:
		return ASC_BW_HCCS;
	case ASC_LK_PCIE:
		return ASC_BW_PCIE;
	case ASC_LK_SIO:
		return ASC_BW_SIO;
	default:
		return ASC_BW_SDMA;
	}
}

/* Large-packet thresholds in MB (number_constant.py *_MESSAGE_SIZE_THRESHOLD). */
static double large_threshold(int bw)
{
	return bw == ASC_BW_RDMA ? 0.5 : 32.0;
}

static void bw_finish(struct asc_comm_bw *bw)
{
	int t;
	size_t i;

	/* SDMA is its own transfers plus HCCS, PCIE and SIO (combine_sdma_info) */
	for (t = 0; t < ASC_BW__NR; t++)
		if (t == ASC_BW_HCCS || t == ASC_BW_PCIE || t == ASC_BW_SIO) {
			if (bw[t].size_mb.isf)
				pv_add(&bw[ASC_BW_SDMA].size_mb, bw[t].size_mb.v);
			if (bw[t].time_ms.isf)
				pv_add(&bw[ASC_BW_SDMA].time_ms, bw[t].time_ms.v);
		}
	for (t = 0; t < ASC_BW__NR; t++) {
		uint64_t packets = 0, large = 0;

		if (bw[t].time_ms.v != 0)
			pv_set(&bw[t].bw, asc_py_round4((bw[t].size_mb.v / 1000.0) /
							(bw[t].time_ms.v / 1000.0)));
		if (t == ASC_BW_SDMA)
			continue; /* msprof leaves SDMA's packet ratio at 0 */
		for (i = 0; i < bw[t].nbins; i++) {
			packets += bw[t].bins[i].count;
			if (bw[t].bins[i].size_mb > large_threshold(t))
				large += bw[t].bins[i].count;
		}
		if (packets)
			pv_set(&bw[t].large_ratio, asc_py_round4((double)large / (double)packets));
	}
}

int asc_comm_op_bw(const struct asc_comm *m, size_t oi, struct asc_comm_bw *bw)
{
	const struct asc_comm_op *o = &m->ops[oi];
	uint32_t planes[OP_PLANES_MAX];
	size_t np, i, j, n, rn = rdma_closing(m, o);
	int err = 0;

	memset(bw, 0, ASC_BW__NR * sizeof(*bw));
	np = op_planes(m, o, planes);
	for (j = 0; j < np && !err; j++) {
		const struct asc_comm_task **p = plane_tasks(m, o, planes[j], 0, &n);

		if (!p)
			return -ENOMEM;
		for (i = 0; i < n && !err;) {
			if (transit_sdma(p[i]))
				err = bw_record(&bw[bw_type(p[i])], (double)p[i]->size / 1000000.0,
						dur_ms(p[i]));
			else if (transit_rdma_direct(p[i]))
				err = bw_record(&bw[ASC_BW_RDMA], (double)p[i]->size / 1000000.0,
						dur_ms(p[i]));
			if (p[i]->flags & ASC_COMM_T_RDMA_PAYLOAD) {
				double tm = 0, sz = 0;
				int ok;

				i = rdma_transfer(p, n, i, rn, &tm, &sz, &ok);
				if (ok)
					err = bw_record(&bw[ASC_BW_RDMA], sz, tm);
				continue;
			}
			i++;
		}
		free(p);
	}
	if (!err)
		bw_finish(bw);
	return err;
}

void asc_comm_bw_free(struct asc_comm_bw *bw)
{
	int t;

	for (t = 0; t < ASC_BW__NR; t++) {
		free(bw[t].bins);
		bw[t].bins = NULL;
		bw[t].nbins = 0;
	}
}

const char *asc_comm_matrix_transport(int link)
{
	if (link == ASC_LK_ON_CHIP)
		return "LOCAL";
	if (link == ASC_LK_HCCS_SW)
		return "HCCS";
	if (link == ASC_LK_ROCE)
		return "RDMA"; /* the transport, as msprof reports RDMA transfers */
	return asc_comm_link_name((unsigned int)link);
}

static int link_add(struct asc_comm_link_info **l, size_t *n, uint32_t src, uint32_t dst,
		    int transport, double size_mb, double time_ms, int large)
{
	size_t i;

	if (dst == ASC_COMM_NO_RANK)
		dst = src;
	for (i = 0; i < *n; i++)
		if ((*l)[i].src == src && (*l)[i].dst == dst)
			break;
	if (i == *n) {
		struct asc_comm_link_info *nl = realloc(*l, (*n + 1) * sizeof(*nl));

		if (!nl)
			return -ENOMEM;
		*l = nl;
		memset(&nl[i], 0, sizeof(nl[i]));
		nl[i].src = src;
		nl[i].dst = dst;
		(*n)++;
	}
	(*l)[i].transport = transport;
	(*l)[i].size_mb += size_mb;
	(*l)[i].time_ms += time_ms;
	(*l)[i].packets++;
	(*l)[i].large_packets += large != 0;
	return 0;
}

int asc_comm_op_links(const struct asc_comm *m, size_t oi, struct asc_comm_link_info **out,
		      size_t *nr)
{
	const struct asc_comm_op *o = &m->ops[oi];
	uint32_t planes[OP_PLANES_MAX];
	size_t np, i, j, n, rn = rdma_closing(m, o);
	int err = 0;

	*out = NULL;
	*nr = 0;
	np = op_planes(m, o, planes);
	for (j = 0; j < np && !err; j++) {
		const struct asc_comm_task **p = plane_tasks(m, o, planes[j], 0, &n);

		if (!p) {
			err = -ENOMEM;
			break;
		}
		for (i = 0; i < n && !err;) {
			const struct asc_comm_task *t = p[i];

			if (t->src_rank == ASC_COMM_NO_RANK) {
				i++; /* not a valid link (is_valid_link) */
				continue;
			}
			if (t->transport == ASC_TP_SDMA &&
			    (t->kind == ASC_CT_MEMCPY || t->kind == ASC_CT_REDUCE_INLINE)) {
				double sz = (double)t->size / 1000000.0;
				int lk = t->link == ASC_LK_HCCS_SW ? ASC_LK_HCCS : t->link;

				err = link_add(out, nr, t->src_rank, t->dst_rank, lk, sz, dur_ms(t),
					       sz > large_threshold(ASC_BW_HCCS));
			} else if (transit_rdma_direct(t)) {
				double sz = (double)t->size / 1000000.0;

				err = link_add(out, nr, t->src_rank, t->dst_rank, ASC_LK_ROCE, sz,
					       dur_ms(t), sz > large_threshold(ASC_BW_RDMA));
			}
			if (t->flags & ASC_COMM_T_RDMA_PAYLOAD) {
				double tm = 0, sz = 0;
				int ok;

				i = rdma_transfer(p, n, i, rn, &tm, &sz, &ok);
				if (ok && !err)
					err = link_add(out, nr, t->src_rank, t->dst_rank,
						       ASC_LK_ROCE, sz, tm,
						       sz > large_threshold(ASC_BW_RDMA));
				continue;
			}
			i++;
		}
		free(p);
	}
	if (err) {
		free(*out);
		*out = NULL;
		*nr = 0;
	}
	return err;
}

static int span_cmp(const void *a, const void *b)
{
	const struct asc_span64 *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

int asc_comm_spans(const struct asc_comm *m, uint32_t dev, struct asc_span64 **out, size_t *nr)
{
	struct asc_span64 *s;
	size_t i, n = 0, k = 0;

	*out = NULL;
	*nr = 0;
	s = malloc((m->nr_ops + 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (i = 0; i < m->nr_ops; i++)
		if (m->ops[i].device == dev && m->ops[i].end_ns > m->ops[i].start_ns)
			s[n++] = (struct asc_span64){ m->ops[i].start_ns, m->ops[i].end_ns };
	qsort(s, n, sizeof(*s), span_cmp);
	for (i = 0; i < n; i++) {
		if (k && s[i].s <= s[k - 1].e) {
			if (s[i].e > s[k - 1].e)
				s[k - 1].e = s[i].e;
			continue;
		}
		s[k++] = s[i];
	}
	*out = s;
	*nr = k;
	return 0;
}
