// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * comm_build.c - the comm view (comm.h) of one capture, from its HCCL
 * records (bpf/ascbpf_events.h "HCCL"), joined with the device tasks the
 * correlation already timed:
 *
 *   HCCL_COMM  comm handle -> group name, rank in group, group size
 *   HCCL_HASH  hash id -> string (task names, group names)
 *   HCCL_OP    ENTRY .. RETURN on one tid = one op; its kind from the probe's
 *              symbol, count / data type / root / comm / stream from the
 *              arguments (capture/hccl.h's decoder);
 *              seq = index of the ENTRY among those of the same comm
 *   HCCL_TASK  inside an op's window on its tid: the k-th one describes the
 *              k-th SQE the tid submits there, i.e. the k-th device task
 *              (corr kernels with that submit_tid, submit time in the window,
 *              in submission order)
 *
 * The op's msprof name is hcom_<op>__<g>_<seq>_1, g = the group's hash id
 * mod 1000 (the group_hash of its tasks, else the HCCL_HASH of the group).
 * Memory: O(ops + tasks).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/comm.h"
#include "analysis/correlate.h"
#include "ascbpf_events.h"
#include "ascend/hccl.h"
#include "capture/capture.h"
#include "capture/hccl.h"
#include "capture/records.h"

static const char *dtype_name(uint32_t t)
{
	static const char *const n[] = {
		"INT8",	 "INT16",  "INT32",  "FP16", "FP32",  "INT64",	"UINT64",
		"UINT8", "UINT16", "UINT32", "FP64", "BFP16", "INT128",
	};

	return t < sizeof(n) / sizeof(n[0]) ? n[t] : "INVALID_TYPE";
}

struct hashname {
	uint64_t hash;
	char name[ASC_NAME_LEN];
};

/* One op being read: its record-level facts until the join. */
struct raw_op {
	enum asc_hccl_opk kind;
	struct asc_hccl_call call;
	uint32_t tid;
	uint64_t comm;
	int64_t enter_mono, ret_mono; /* ret 0: no RETURN */
	uint32_t ret;
	size_t task0, ntasks; /* into raw tasks */
};

struct raw_comm {
	uint64_t handle;
	int32_t group;
};

struct builder {
	const struct asc_corr *c;
	struct asc_comm *m;
	struct hashname *hashes;
	size_t nh, caph;
	struct raw_op *ops;
	size_t nops, capops;
	struct asc_hccl_task *tasks;
	size_t ntasks, captasks;
	struct raw_comm *comms;
	size_t ncomms, capcomms;
	const char **probes;
	size_t nprobes;	   /* probe id -> symbol */
	char *probe_store; /* copies of the symbols of HCCL probes */
};

static int grow(void **p, size_t *cap, size_t need, size_t sz)
{
	void *np;
	size_t nc;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap * 2 : 64;
	while (nc < need)
		nc *= 2;
	np = realloc(*p, nc * sz);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = nc;
	return 0;
}

static const char *hash_name(const struct builder *b, uint64_t h)
{
	size_t i;

	for (i = 0; i < b->nh; i++)
		if (b->hashes[i].hash == h)
			return b->hashes[i].name;
	return NULL;
}

static int on_probe(struct builder *b, const struct asc_probe *p, size_t size)
{
	const char *sym;
	char *copy;
	size_t id = p->hdr.probe_id;

	if (size < sizeof(*p) + (size_t)p->lib_len + p->sym_len + 2 || p->layer != ASC_LAYER_HCCL)
		return 0;
	sym = asc_probe_sym(p);
	if (id >= 65536)
		return 0;
	if (id >= b->nprobes) {
		const char **np = realloc(b->probes, (id + 1) * sizeof(*np));

		if (!np)
			return -ENOMEM;
		memset(np + b->nprobes, 0, (id + 1 - b->nprobes) * sizeof(*np));
		b->probes = np;
		b->nprobes = id + 1;
	}
	copy = strndup(sym, p->sym_len);
	if (!copy)
		return -ENOMEM;
	free((void *)b->probes[id]);
	b->probes[id] = copy;
	return 0;
}

static int on_comm(struct builder *b, const struct asc_hccl_comm *r)
{
	struct asc_comm *m = b->m;
	struct asc_comm_group *g;
	size_t i;

	if (r->ret || !r->comm)
		return 0;
	for (i = 0; i < m->nr_groups; i++)
		if (!strncmp(m->groups[i].name, r->group, sizeof(m->groups[i].name)))
			break;
	if (i == m->nr_groups) {
		g = realloc(m->groups, (i + 1) * sizeof(*g));
		if (!g)
			return -ENOMEM;
		m->groups = g;
		memset(&g[i], 0, sizeof(g[i]));
		snprintf(g[i].name, sizeof(g[i].name), "%.*s", (int)sizeof(r->group), r->group);
		g[i].rank = (int32_t)r->rank;
		g[i].rank_size = r->nranks;
		g[i].create_ns = asc_corr_wall_ns(b->c, r->hdr.ts_ns);
		m->nr_groups++;
	}
	if (grow((void **)&b->comms, &b->capcomms, b->ncomms + 1, sizeof(*b->comms)))
		return -ENOMEM;
	b->comms[b->ncomms++] = (struct raw_comm){ r->comm, (int32_t)i };
	return 0;
}

/* The open op of tid (no RETURN yet), or -1. */
static ssize_t open_op(const struct builder *b, uint32_t tid)
{
	size_t i = b->nops;

	while (i-- > 0)
		if (b->ops[i].tid == tid)
			return b->ops[i].ret_mono ? -1 : (ssize_t)i;
	return -1;
}

static int on_op(struct builder *b, const struct asc_hccl_op *r)
{
	const char *sym = r->hdr.probe_id < b->nprobes ? b->probes[r->hdr.probe_id] : NULL;
	ssize_t o = open_op(b, r->hdr.tid);
	struct raw_op *op;

	if (r->side == ASC_HCCL_RETURN) {
		if (o >= 0) {
			b->ops[o].ret_mono = (int64_t)r->hdr.ts_ns;
			b->ops[o].ret = r->ret;
		}
		return 0;
	}
	if (r->side != ASC_HCCL_ENTRY || !sym || asc_hccl_op_of(sym) == ASC_HCCL_OPK_UNKNOWN)
		return 0;
	if (o >= 0)
		b->ops[o].ret_mono = (int64_t)r->hdr.ts_ns; /* never returned: close it */
	if (grow((void **)&b->ops, &b->capops, b->nops + 1, sizeof(*b->ops)))
		return -ENOMEM;
	op = &b->ops[b->nops++];
	memset(op, 0, sizeof(*op));
	op->kind = asc_hccl_op_of(sym);
	asc_hccl_decode(op->kind, r, &op->call);
	op->tid = r->hdr.tid;
	op->enter_mono = (int64_t)r->hdr.ts_ns;
	op->comm = op->call.comm;
	op->task0 = b->ntasks;
	return 0;
}

static int on_task(struct builder *b, const struct asc_hccl_task *r)
{
	ssize_t o = open_op(b, r->hdr.tid);

	if (o < 0)
		return 0; /* a report outside any op: not one of its tasks */
	if (grow((void **)&b->tasks, &b->captasks, b->ntasks + 1, sizeof(*b->tasks)))
		return -ENOMEM;
	b->tasks[b->ntasks++] = *r;
	b->ops[o].ntasks++;
	return 0;
}

static int on_hash(struct builder *b, const struct asc_hccl_hash *r)
{
	if (hash_name(b, r->hash))
		return 0;
	if (grow((void **)&b->hashes, &b->caph, b->nh + 1, sizeof(*b->hashes)))
		return -ENOMEM;
	b->hashes[b->nh].hash = r->hash;
	snprintf(b->hashes[b->nh].name, sizeof(b->hashes[b->nh].name), "%.*s", (int)sizeof(r->name),
		 r->name);
	b->nh++;
	return 0;
}

static int read_records(struct builder *b, struct asc_capture_reader *r)
{
	const void *rec;
	size_t size;
	int ret, err = 0;

	if (asc_capture_rewind(r))
		return -EIO;
	while (!err && (ret = asc_capture_next(r, &rec, &size)) > 0) {
		const struct asc_hdr *h = rec;

		if (size < sizeof(*h))
			continue;
		switch (h->type) {
		case ASC_REC_PROBE:
			err = on_probe(b, rec, size);
			break;
		case ASC_REC_HCCL_COMM:
			if (size >= sizeof(struct asc_hccl_comm))
				err = on_comm(b, rec);
			break;
		case ASC_REC_HCCL_OP:
			if (size >= sizeof(struct asc_hccl_op))
				err = on_op(b, rec);
			break;
		case ASC_REC_HCCL_TASK:
			if (size >= sizeof(struct asc_hccl_task))
				err = on_task(b, rec);
			break;
		case ASC_REC_HCCL_HASH:
			if (size >= sizeof(struct asc_hccl_hash))
				err = on_hash(b, rec);
			break;
		default:
			break;
		}
	}
	return err;
}

/* Matched device tasks ordered by (submit tid, submit time, wrap, task id). */
static const struct asc_corr *sort_c;
static int ksub_cmp(const void *a, const void *b)
{
	const struct asc_corr_kernel *x = &sort_c->kernels[*(const size_t *)a];
	const struct asc_corr_kernel *y = &sort_c->kernels[*(const size_t *)b];

	if (x->submit_tid != y->submit_tid)
		return x->submit_tid < y->submit_tid ? -1 : 1;
	if (x->submit_ns != y->submit_ns)
		return x->submit_ns < y->submit_ns ? -1 : 1;
	if (x->wrap != y->wrap)
		return x->wrap < y->wrap ? -1 : 1;
	return x->task_id < y->task_id ? -1 : x->task_id > y->task_id;
}

static size_t first_at(const struct asc_corr *c, const size_t *ix, size_t n, uint32_t tid,
		       int64_t ns)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct asc_corr_kernel *k = &c->kernels[ix[mid]];

		if (k->submit_tid < tid || (k->submit_tid == tid && k->submit_ns < ns))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int32_t group_of(const struct builder *b, const struct raw_op *o)
{
	const struct asc_comm *m = b->m;
	const char *gn;
	size_t i;

	for (i = 0; i < b->ncomms; i++)
		if (b->comms[i].handle == o->comm && o->comm)
			return b->comms[i].group;
	/* an unknown handle (created before the trace): its tasks name the group */
	gn = o->ntasks ? hash_name(b, b->tasks[o->task0].group_hash) : NULL;
	for (i = 0; gn && i < m->nr_groups; i++)
		if (!strncmp(m->groups[i].name, gn, ASC_NAME_LEN - 1))
			return (int32_t)i;
	return -1;
}

static uint8_t kind_of(const char *n)
{
	static const char *const k[ASC_CT__NR] = {
		"", "Notify_Record", "Notify_Wait", "Memcpy", "Reduce_Inline", "RDMASend",
	};
	uint8_t i;

	for (i = 1; n && i < ASC_CT__NR; i++)
		if (!strcmp(n, k[i]))
			return i;
	return ASC_CT_OTHER;
}

static uint8_t link_of(uint8_t lt)
{
	switch (lt) {
	case ASC_HCCL_LINK_ON_CHIP:
		return ASC_LK_ON_CHIP;
	case ASC_HCCL_LINK_HCCS:
		return ASC_LK_HCCS;
	case ASC_HCCL_LINK_PCIE:
		return ASC_LK_PCIE;
	case ASC_HCCL_LINK_ROCE:
		return ASC_LK_ROCE;
	default:
		return ASC_LK_INVALID;
	}
}

/* The group's hash id: its tasks' group_hash, else the HCCL_HASH of its name, else 0. */
static uint64_t group_hash(const struct builder *b, const struct raw_op *o, int32_t g)
{
	size_t i;

	if (o->ntasks)
		return b->tasks[o->task0].group_hash;
	for (i = 0; g >= 0 && i < b->nh; i++)
		if (!strncmp(b->hashes[i].name, b->m->groups[g].name, ASC_NAME_LEN - 1))
			return b->hashes[i].hash;
	return 0;
}

static void fill_task(struct builder *b, struct asc_comm_task *t, const struct asc_hccl_task *r,
		      const struct asc_corr_kernel *k, int32_t op)
{
	memset(t, 0, sizeof(*t));
	t->start_ns = k->start_ns;
	t->end_ns = k->end_ns;
	t->op = op;
	t->plane = r->plane_id;
	t->kind = kind_of(hash_name(b, r->item_id));
	t->transport = r->transport_type < ASC_TP__NR ? r->transport_type : ASC_TP_SDMA;
	t->link = link_of(r->link_type);
	t->src_rank = r->local_rank;
	t->dst_rank = r->remote_rank;
	t->size = r->data_size;
	t->notify_id = r->notify_id;
	t->stream = k->stream;
	t->task_id = k->task_id;
	t->kernel = (int32_t)(k - b->c->kernels);
	t->rdma_type = r->transport_type == ASC_HCCL_TRANSPORT_RDMA ? r->rdma_type : 65535;
	if (r->transport_type == ASC_HCCL_TRANSPORT_RDMA && r->rdma_type == 1)
		t->flags |= ASC_COMM_T_RDMA_PAYLOAD;
	snprintf(t->data_type, sizeof(t->data_type), "%s",
		 t->kind == ASC_CT_MEMCPY || t->kind == ASC_CT_REDUCE_INLINE ?
			 dtype_name(r->data_type) :
			 "INVALID_TYPE");
}

/* The HCCL API call of an op: same thread, entered at the same time (one sample). */
static int32_t api_call(const struct asc_corr *c, uint32_t tid, int64_t w0)
{
	size_t lo = 0, hi = c->nr_calls, i;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->calls[mid].start_ns < w0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < c->nr_calls && c->calls[i].start_ns == w0; i++)
		if (c->calls[i].tid == tid && c->calls[i].level == ASC_CORR_LEVEL_HCCL)
			return (int32_t)i;
	return -1;
}

/* One op of the view from raw op ro; its tasks appended.  -ENOMEM. */
static int join_op(struct builder *b, const struct raw_op *ro, const size_t *ix, size_t nix,
		   uint64_t *seqs)
{
	const struct asc_corr *c = b->c;
	struct asc_comm *m = b->m;
	struct asc_comm_op *o = &m->ops[m->nr_ops];
	int64_t w0 = asc_corr_wall_ns(c, (uint64_t)ro->enter_mono);
	int64_t w1 = ro->ret_mono ? asc_corr_wall_ns(c, (uint64_t)ro->ret_mono) : INT64_MAX;
	size_t k = first_at(c, ix, nix, ro->tid, w0), j;
	int32_t g = group_of(b, ro);
	uint32_t main_stream = 0;

	memset(o, 0, sizeof(*o));
	o->group = g;
	o->host_start_ns = w0;
	o->host_end_ns = ro->ret_mono ? w1 : 0;
	o->tid = ro->tid;
	o->call = api_call(c, ro->tid, w0);
	o->seq = g >= 0 ? seqs[g]++ : 0;
	o->root = ro->call.root >= 0 ? ro->call.root : ro->call.peer;
	o->count = ro->call.count;
	if (ro->kind != ASC_HCCL_OPK_BARRIER) {
		snprintf(o->data_type, sizeof(o->data_type), "%s", dtype_name(ro->call.dtype));
		o->bytes = o->count * hccl_dtype_size(ro->call.dtype);
	}
	snprintf(o->name, sizeof(o->name), "hcom_%s__%llu_%llu_1", asc_hccl_op_msprof(ro->kind),
		 (unsigned long long)(group_hash(b, ro, g) % 1000), (unsigned long long)o->seq);
	o->step = -1;
	o->task0 = m->nr_tasks;
	for (j = 0; j < ro->ntasks; j++, k++) {
		const struct asc_corr_kernel *kk;
		struct asc_comm_task *t;

		if (k >= nix)
			break;
		kk = &c->kernels[ix[k]];
		if (kk->submit_tid != ro->tid || kk->submit_ns > w1)
			break; /* the device tasks of the rest were not captured */
		if (!j)
			main_stream = kk->stream;
		t = &m->tasks[m->nr_tasks++];
		fill_task(b, t, &b->tasks[ro->task0 + j], kk, (int32_t)m->nr_ops);
		t->master = kk->stream == main_stream;
		if (!o->ntasks || t->start_ns < o->start_ns)
			o->start_ns = t->start_ns;
		if (t->end_ns > o->end_ns)
			o->end_ns = t->end_ns;
		o->device = kk->device;
		o->ntasks++;
		if (kk->step >= 0)
			o->step = kk->step;
	}
	if (!ro->ret_mono || (ro->ntasks && o->ntasks < ro->ntasks))
		o->flags |= ASC_COMM_OP_NO_END;
	m->nr_ops++;
	return 0;
}

static int op_cmp(const void *a, const void *b)
{
	const struct asc_comm_op *x = a, *y = b;
	int64_t xs = x->ntasks ? x->start_ns : x->host_start_ns;
	int64_t ys = y->ntasks ? y->start_ns : y->host_start_ns;

	return xs < ys ? -1 : xs > ys;
}

static int join(struct builder *b)
{
	const struct asc_corr *c = b->c;
	struct asc_comm *m = b->m;
	size_t *ix, nix = 0, i, j;
	uint64_t *seqs;
	int err = 0;

	m->ops = calloc(b->nops + 1, sizeof(*m->ops));
	m->tasks = calloc(b->ntasks + 1, sizeof(*m->tasks));
	ix = malloc((c->nr_kernels + 1) * sizeof(*ix));
	seqs = calloc(m->nr_groups + 1, sizeof(*seqs));
	if (!m->ops || !m->tasks || !ix || !seqs) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < c->nr_kernels; i++)
		if (c->kernels[i].flags & ASC_CORR_K_MATCHED)
			ix[nix++] = i;
	sort_c = c;
	qsort(ix, nix, sizeof(*ix), ksub_cmp);
	for (i = 0; i < b->nops && !err; i++)
		err = join_op(b, &b->ops[i], ix, nix, seqs);
	if (err)
		goto out;
	/* ops by device start; their tasks keep their blocks (op indices fixed up) */
	for (i = 0; i < m->nr_ops; i++)
		m->ops[i].flags |= (uint32_t)i << 8; /* old index, restored below */
	qsort(m->ops, m->nr_ops, sizeof(*m->ops), op_cmp);
	for (i = 0; i < m->nr_ops; i++) {
		size_t old = m->ops[i].flags >> 8;

		m->ops[i].flags &= 0xff;
		for (j = m->ops[i].task0; j < m->ops[i].task0 + m->ops[i].ntasks; j++)
			if (m->tasks[j].op == (int32_t)old)
				m->tasks[j].op = (int32_t)i;
	}
out:
	free(ix);
	free(seqs);
	return err;
}

int asc_comm_build(struct asc_capture_reader *r, const struct asc_corr *c, struct asc_comm *m)
{
	struct builder b = { .c = c, .m = m };
	size_t i;
	int err;

	memset(m, 0, sizeof(*m));
	m->global_rank = c->info.rank;
	err = read_records(&b, r);
	if (!err && b.nops)
		err = join(&b);
	for (i = 0; i < b.nprobes; i++)
		free((void *)b.probes[i]);
	free(b.probes);
	free(b.hashes);
	free(b.ops);
	free(b.tasks);
	free(b.comms);
	if (err)
		asc_comm_free(m);
	return err;
}

/*
 * The communicators a capture's process joined: its global rank (PROCESS
 * record) and, per HCCL_COMM, the group, its size and the rank in it.  A
 * cheap pass for reading the other ranks of a job (parallel_group_info's
 * global ranks, `ascbpf report`).  *out: malloc'd, free() it.
 */
int asc_comm_members(struct asc_capture_reader *r, struct asc_comm_member **out, size_t *nr)
{
	const void *rec;
	size_t size, n = 0, cap = 0;
	int32_t global = -1;
	int ret, err = 0;

	*out = NULL;
	*nr = 0;
	if (asc_capture_rewind(r))
		return -EIO;
	while (!err && (ret = asc_capture_next(r, &rec, &size)) > 0) {
		const struct asc_hdr *h = rec;

		if (size >= sizeof(struct asc_process) && h->type == ASC_REC_PROCESS) {
			global = ((const struct asc_process *)rec)->rank;
		} else if (size >= sizeof(struct asc_hccl_comm) && h->type == ASC_REC_HCCL_COMM) {
			const struct asc_hccl_comm *c = rec;

			if (c->ret || !c->comm)
				continue;
			err = grow((void **)out, &cap, n + 1, sizeof(**out));
			if (err)
				break;
			memset(&(*out)[n], 0, sizeof(**out));
			snprintf((*out)[n].group, sizeof((*out)[n].group), "%.*s",
				 (int)sizeof(c->group), c->group);
			(*out)[n].group_rank = (int32_t)c->rank;
			(*out)[n].nranks = c->nranks;
			n++;
		}
	}
	for (size_t i = 0; i < n; i++)
		(*out)[i].global_rank = global;
	if (err) {
		free(*out);
		*out = NULL;
		return err;
	}
	*nr = n;
	return 0;
}
