// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * corr_calls.c - what is open on each thread: ENTER / EXIT frames, the op
 * names, sequence numbers, queue slots, memory events, tensors and stacks
 * that attach to them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ascbpf_events.h"
#include "analysis/correlate.h"
#include "analysis/corr_build.h"
#include "capture/records.h"
#include "schedule.h"

const struct probe_info *corr_probe_of(const struct priv *p, uint32_t id)
{
	return id < p->nr_probes && p->probes[id].known ? &p->probes[id] : NULL;
}

struct tstate *corr_thread_of(struct priv *p, uint32_t tid)
{
	struct tstate *t;
	uint64_t idx;

	if (asc_u64map_get(&p->tid_index, tid, &idx))
		return &p->threads[idx];
	if (grow_array((void **)&p->threads, &p->threads_cap, p->nr_threads + 1,
		       sizeof(*p->threads)))
		return NULL;
	t = &p->threads[p->nr_threads];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->last_op = -1;
	t->enter_op = -1;
	t->last_queue = -1;
	t->exit_op = -1;
	t->win_last = -1;
	t->send_alt = -1;
	t->frames = malloc(MAX_OPEN * sizeof(*t->frames));
	if (!t->frames || asc_u64map_put(&p->tid_index, tid, p->nr_threads)) {
		free(t->frames);
		return NULL;
	}
	p->nr_threads++;
	return t;
}

/* Innermost open frame of a kind, or NULL. */
static struct frame *open_frame(struct tstate *t, int kind)
{
	uint32_t i;

	for (i = t->depth; i-- > 0;)
		if (t->frames[i].kind == kind)
			return &t->frames[i];
	return NULL;
}

int32_t corr_open_item(struct tstate *t, int kind)
{
	struct frame *f = open_frame(t, kind);

	return f ? f->item : -1;
}

static int cmp_pend(const void *x, const void *y)
{
	const struct pend_tensor *a = x, *b = y;

	if (a->arg != b->arg)
		return a->arg < b->arg ? -1 : 1;
	return a->list < b->list ? -1 : a->list > b->list;
}

/* Appends the dims of one tensor ("32,3,224,224") to buf at *len. */
static void put_dims(char *buf, size_t cap, size_t *len, const struct pend_tensor *t)
{
	unsigned int i, n = t->ndim < ASC_TENSOR_DIMS ? t->ndim : ASC_TENSOR_DIMS;
	int k;

	if (t->kind != ASC_TENSOR_DEFINED)
		return;
	for (i = 0; i < n && *len < cap; i++) {
		k = snprintf(buf + *len, cap - *len, "%s%lld", i ? "," : "", (long long)t->dims[i]);
		if (k > 0)
			*len += (size_t)k < cap - *len ? (size_t)k : cap - *len - 1;
	}
}

static void put_str(char *buf, size_t cap, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (*len + n >= cap)
		n = cap - *len - 1;
	memcpy(buf + *len, s, n);
	*len += n;
	buf[*len] = '\0';
}

/*
 * Turns the TENSOR records of the thread's latest op into its "Input Dims"
 * and "Input type": arguments 0..last tensor argument joined by ";\r\n",
 * a Tensor[] argument as "[d,d],[d]".
 */
void corr_flush_tensors(struct asc_corr *c, struct priv *p, struct tstate *t)
{
	const size_t cap = 8192;
	char *dims = p->scratch, *types = p->scratch + cap;
	size_t dl = 0, tl = 0, i, j;
	unsigned int arg;

	if (!t->npend)
		return;
	if (t->enter_op < 0 || (size_t)t->enter_op >= c->nr_ops) {
		t->npend = 0;
		return;
	}
	qsort(t->pend, t->npend, sizeof(*t->pend), cmp_pend);
	dims[0] = types[0] = '\0';
	for (arg = 0, i = 0; i < t->npend; arg++) {
		if (arg) {
			put_str(dims, cap, &dl, ";\r\n");
			put_str(types, cap, &tl, ";\r\n");
		}
		for (j = i; j < t->npend && t->pend[j].arg == arg; j++)
			;
		if (j - i > 1 || (j > i && t->pend[i].list)) {
			size_t k;

			for (k = i; k < j; k++) {
				put_str(dims, cap, &dl, k > i ? ",[" : "[");
				put_dims(dims, cap, &dl, &t->pend[k]);
				put_str(dims, cap, &dl, "]");
			}
			put_str(types, cap, &tl, "TensorList");
		} else if (j > i) {
			const char *tn = t->pend[i].kind == ASC_TENSOR_DEFINED ?
						 asc_scalar_type_name(t->pend[i].dtype) :
						 NULL;

			/* an empty optional is torch's None; an unreadable dtype stays empty */
			if (t->pend[i].kind == ASC_TENSOR_UNDEFINED)
				tn = "None";
			put_dims(dims, cap, &dl, &t->pend[i]);
			put_str(types, cap, &tl, tn ? tn : "");
		}
		i = j;
		if (arg > 1000)
			break;
	}
	c->ops[t->enter_op].input_dims = strtab_add(&p->strs, dims, dl);
	c->ops[t->enter_op].input_types = strtab_add(&p->strs, types, tl);
	t->npend = 0;
}

int corr_on_tensor(struct asc_corr *c, struct priv *p, const struct asc_tensor *r)
{
	struct tstate *t = corr_thread_of(p, r->hdr.tid);
	struct pend_tensor *pt;

	(void)c;
	if (!t)
		return -ENOMEM;
	if (t->enter_op < 0 || t->enter_probe != r->hdr.probe_id || t->npend >= MAX_PEND)
		return 0;
	if (!t->pend) {
		t->pend = malloc(MAX_PEND * sizeof(*t->pend));
		if (!t->pend)
			return -ENOMEM;
	}
	pt = &t->pend[t->npend++];
	pt->arg = r->arg_index;
	pt->list = r->list_index;
	pt->kind = r->kind;
	pt->dtype = r->dtype;
	pt->ndim = r->ndim;
	pt->flags = r->flags;
	memcpy(pt->dims, r->dims, sizeof(pt->dims));
	return 0;
}

int corr_on_pystack(struct priv *p, const struct asc_pystack *r)
{
	struct tstate *t = corr_thread_of(p, r->hdr.tid);
	struct pystackrec *ps;

	if (!t)
		return -ENOMEM;
	if (t->enter_op < 0 || t->enter_probe != r->hdr.probe_id || !r->nr)
		return 0;
	if (PUSH(p->pystacks, p->nr_pystacks, p->pystacks_cap, ps))
		return -ENOMEM;
	ps->op = t->enter_op;
	ps->nr = r->nr;
	memcpy(ps->code, r->code, r->nr * sizeof(r->code[0]));
	memcpy(ps->lasti, r->lasti, r->nr * sizeof(r->lasti[0]));
	return 0;
}

/* ---- record handlers ---- */

/*
 * The first apply() entered directly inside an evaluate_function range is
 * its node's (Node::operator() records the node's range around it): the
 * node's range (the frame's twin) gets apply's span.
 */
static void node_apply(struct asc_corr *c, struct priv *p, struct tstate *t, struct frame *apply)
{
	struct frame *ev = open_frame(t, FR_OP);
	const struct probe_info *pi = ev ? corr_probe_of(p, ev->probe_id) : NULL;

	if (!pi || pi->kind != ASC_PK_AUTOGRAD_EVAL || !ev->twin || ev->refined)
		return;
	ev->refined = 1;
	apply->twin = ev->twin;
	c->ops[ev->twin - 1].start_ns = apply->start;
}

int corr_on_enter(struct asc_corr *c, struct priv *p, const struct asc_hdr *h)
{
	const struct probe_info *pi = corr_probe_of(p, h->probe_id);
	struct tstate *t;
	struct frame *f;
	int kind;

	if (!pi)
		return 0;
	if (!pi->named)
		corr_name_aten_probe(p, h->probe_id);
	switch (pi->kind) {
	case ASC_PK_ATEN_OP:
	case ASC_PK_AUTOGRAD_EVAL:
		kind = FR_OP;
		break;
	case ASC_PK_ENQUEUE:
		kind = FR_ENQ;
		break;
	case ASC_PK_DEQUEUE:
		kind = FR_DEQ;
		break;
	case ASC_PK_STEP:
	case ASC_PK_MEM_REPORT:
		return 0;
	default:
		kind = pi->layer == ASC_LAYER_CANN || pi->layer == ASC_LAYER_HCCL ? FR_CALL :
										    FR_OTHER;
		break;
	}
	t = corr_thread_of(p, h->tid);
	if (!t)
		return -ENOMEM;
	corr_flush_tensors(c, p, t);
	t->enter_op = -1;
	if (t->depth >= MAX_OPEN)
		return 0;
	f = &t->frames[t->depth];
	memset(f, 0, sizeof(*f));
	f->probe_id = h->probe_id;
	f->kind = kind;
	f->item = -1;
	f->start = h->ts_ns;
	/* the handle: arg0, arg1 for the AI CPU calls (probe_info.handle_arg) */
	if (h->size >= sizeof(struct asc_enter))
		f->arg0 = ((const struct asc_enter *)h)->args[pi->handle_arg & (ASC_MAX_ARGS - 1)];
	if (kind == FR_OP) {
		struct asc_corr_op *o;

		if (PUSH(c->ops, c->nr_ops, p->ops_cap, o))
			return -ENOMEM;
		o->start_ns = o->end_ns = h->ts_ns;
		o->tid = h->tid;
		o->name = pi->name;
		o->seq = -1;
		o->parent = -1;
		o->step = -1;
		o->flags = ASC_CORR_O_NO_EXIT;
		f->item = c->nr_ops - 1;
		t->last_op = f->item;
		t->enter_op = f->item;
		t->enter_probe = h->probe_id;
	} else if (kind == FR_CALL) {
		struct asc_corr_call *k;

		if (PUSH(c->calls, c->nr_calls, p->calls_cap, k))
			return -ENOMEM;
		if (grow_array((void **)&p->call_queue, &p->call_queue_cap, c->nr_calls,
			       sizeof(*p->call_queue)))
			return -ENOMEM;
		k->start_ns = k->end_ns = h->ts_ns;
		k->tid = h->tid;
		k->name = pi->name;
		k->probe_id = h->probe_id;
		k->level = pi->level;
		k->parent = corr_open_item(t, FR_CALL);
		k->op = corr_open_item(t, FR_OP);
		k->step = -1;
		p->call_queue[c->nr_calls - 1] = corr_open_item(t, FR_DEQ);
		f->item = c->nr_calls - 1;
		t->last_op = -1;
	} else {
		t->last_op = -1;
		if (pi->kind == ASC_PK_AUTOGRAD_APPLY)
			node_apply(c, p, t, f);
	}
	t->depth++;
	if (kind == FR_CALL && pi->producer)
		return corr_on_producer_enter(p, t, h, pi, f->item);
	return 0;
}

void corr_on_exit_rec(struct asc_corr *c, struct priv *p, const struct asc_exit *e)
{
	const struct asc_hdr *h = &e->hdr;
	struct tstate *t = corr_thread_of(p, h->tid);
	uint32_t i;

	if (!t)
		return;
	corr_flush_tensors(c, p, t);
	for (i = t->depth; i-- > 0;)
		if (t->frames[i].probe_id == h->probe_id)
			break;
	if (i == (uint32_t)-1)
		return; /* exit without a captured entry */
	/* frames above i lost their exits: they keep end = start and NO_EXIT */
	{
		struct frame *f = &t->frames[i];

		switch (f->kind) {
		case FR_OP:
			c->ops[f->item].end_ns = h->ts_ns;
			c->ops[f->item].flags &= ~ASC_CORR_O_NO_EXIT;
			if (f->twin && !f->refined) {
				c->ops[f->twin - 1].end_ns = h->ts_ns;
				c->ops[f->twin - 1].flags &= ~ASC_CORR_O_NO_EXIT;
			}
			t->exit_op = f->item;
			t->exit_probe = h->probe_id;
			break;
		case FR_CALL:
			c->calls[f->item].end_ns = h->ts_ns;
			c->calls[f->item].ret = (int64_t)e->ret;
			/* a failed launch queued nothing (aclError / rtError_t: 32 bits) */
			if ((uint32_t)e->ret && p->probes[f->probe_id].producer) {
				struct pend_launch *pl = corr_pending_of_call(t, f->item);

				if (pl)
					corr_drop_pending(t, (uint32_t)(pl - t->launches));
			}
			break;
		case FR_ENQ:
			if (f->item >= 0) {
				c->queues[f->item].enq_start_ns = f->start;
				c->queues[f->item].enq_end_ns = h->ts_ns;
			}
			break;
		case FR_DEQ:
			if (f->item >= 0) {
				c->queues[f->item].deq_start_ns = f->start;
				c->queues[f->item].deq_end_ns = h->ts_ns;
			}
			break;
		case FR_OTHER: /* a backward node's apply(): the node's own range */
			if (f->twin) {
				c->ops[f->twin - 1].end_ns = h->ts_ns;
				c->ops[f->twin - 1].flags &= ~ASC_CORR_O_NO_EXIT;
			}
			break;
		}
	}
	t->depth = i;
}

void corr_on_opname(struct asc_corr *c, struct priv *p, const struct asc_opname *o)
{
	struct tstate *t = corr_thread_of(p, o->hdr.tid);
	size_t n = strnlen(o->name, o->len);
	uint32_t i, id;

	if (!t)
		return;
	id = strtab_add(&p->strs, o->name, n);
	for (i = t->depth; i-- > 0;) {
		struct frame *f = &t->frames[i];

		if (f->probe_id != o->hdr.probe_id)
			continue;
		f->name = id;
		if (f->kind == FR_CALL)
			c->calls[f->item].opname = id;
		else if (f->kind == FR_OP && id)
			c->ops[f->item].name = id;
		else if (f->kind == FR_ENQ && f->item >= 0 && id)
			c->queues[f->item].name = id; /* slot's op name, after its QUEUE */
		return;
	}
	/* an Enqueue probe without ENTER/EXIT: the OPNAME follows its QUEUE (same probe, ts) */
	if (t->last_queue >= 0 && t->last_queue_probe == o->hdr.probe_id &&
	    t->last_queue_ts == o->hdr.ts_ns && id)
		c->queues[t->last_queue].name = id;
}

/*
 * ASC_REC_SEQNR (user/discovery/seqnr.h): FORWARD numbers the op its EXIT just closed;
 * NODE names the open range of its evaluate_function probe and adds the
 * node's range inside it (same span, closed with it: the frame's twin).
 */
int corr_on_seqnr(struct asc_corr *c, struct priv *p, const struct asc_seqnr *r)
{
	struct tstate *t = corr_thread_of(p, r->hdr.tid);
	const char *node = NULL;
	struct asc_corr_op *o;
	struct frame *f;
	char buf[320], nodename[256];
	uint32_t i;

	if (!t)
		return -ENOMEM;
	if (r->kind == ASC_SEQNR_FORWARD) {
		if (t->exit_op >= 0 && t->exit_probe == r->hdr.probe_id)
			c->ops[t->exit_op].seq = r->seq;
		return 0;
	}
	for (i = t->depth; i-- > 0;)
		if (t->frames[i].probe_id == r->hdr.probe_id && t->frames[i].kind == FR_OP)
			break;
	if (i == (uint32_t)-1 || r->kind != ASC_SEQNR_NODE || t->frames[i].twin)
		return 0;
	if (r->vptr)
		node = corr_node_class(c, p, r->vptr);
	if (!node)
		node = ASC_NODE_UNKNOWN;
	f = &t->frames[i];
	/* node may point into p->strs, which strtab_cstr() can move: copy it first */
	snprintf(nodename, sizeof(nodename), "%s", node);
	snprintf(buf, sizeof(buf), "%s%s", ASC_EVAL_PREFIX, nodename);
	c->ops[f->item].name = strtab_cstr(&p->strs, buf);
	if (PUSH(c->ops, c->nr_ops, p->ops_cap, o))
		return -ENOMEM;
	*o = c->ops[f->item]; /* start, tid, step, NO_EXIT until the EXIT */
	o->name = strtab_cstr(&p->strs, nodename);
	o->seq = r->seq;
	o->fwd_tid = r->fwd_tid;
	f->twin = c->nr_ops; /* after it in ops[]: sorted inside it */
	return 0;
}

/* The name of the innermost open frame that captured an OPNAME (RunOpApiV2's op). */
static uint32_t open_name(struct tstate *t)
{
	uint32_t i;

	for (i = t->depth; i-- > 0;)
		if (t->frames[i].name)
			return t->frames[i].name;
	return 0;
}

int corr_on_queue(struct asc_corr *c, struct priv *p, const struct asc_queue *q)
{
	struct tstate *t = corr_thread_of(p, q->hdr.tid);
	struct asc_corr_queue *qq;
	struct frame *f;
	int32_t idx;

	if (!t)
		return -ENOMEM;
	idx = corr_queue_for(c, p, q->correlation_id);
	if (idx < 0)
		return -ENOMEM;
	qq = &c->queues[idx];
	qq->param_type = q->param_type;
	t->last_queue = q->side == ASC_QUEUE_ENQUEUE ? idx : -1;
	t->last_queue_probe = q->hdr.probe_id;
	t->last_queue_ts = q->hdr.ts_ns;
	if (q->side == ASC_QUEUE_ENQUEUE) {
		f = open_frame(t, FR_ENQ);
		qq->enq_tid = q->hdr.tid;
		qq->enq_start_ns = f ? f->start : (int64_t)q->hdr.ts_ns;
		qq->enq_end_ns = qq->enq_start_ns;
		qq->op = corr_open_item(t, FR_OP);
		if (!qq->name)
			qq->name = open_name(t);
	} else {
		f = open_frame(t, FR_DEQ);
		qq->deq_tid = q->hdr.tid;
		qq->deq_start_ns = f ? f->start : (int64_t)q->hdr.ts_ns;
		qq->deq_end_ns = qq->deq_start_ns;
		corr_window_add(c, t, idx);
	}
	if (f)
		f->item = idx;
	return 0;
}

int corr_on_mem(struct asc_corr *c, struct priv *p, const struct asc_mem *m)
{
	struct tstate *t = corr_thread_of(p, m->hdr.tid);
	struct asc_corr_mem *o;

	if (!t || PUSH(c->mems, c->nr_mems, p->mems_cap, o))
		return -ENOMEM;
	o->ts_ns = m->hdr.ts_ns;
	o->ptr = m->ptr;
	o->size = m->size;
	o->total_allocated = m->total_allocated;
	o->total_reserved = m->total_reserved;
	o->total_active = m->total_active;
	o->stream = m->stream;
	o->tid = m->hdr.tid;
	o->device = m->device;
	o->component = m->component;
	o->data_type = m->data_type;
	o->op = corr_open_item(t, FR_OP);
	o->step = -1;
	return 0;
}

int corr_on_stack(struct priv *p, const struct asc_stack *s)
{
	struct tstate *t = corr_thread_of(p, s->hdr.tid);
	struct stackrec *sr;

	if (!t)
		return -ENOMEM;
	if (t->last_op < 0)
		return 0;
	if (PUSH(p->stacks, p->nr_stacks, p->stacks_cap, sr))
		return -ENOMEM;
	sr->op = t->last_op;
	sr->nr = s->nr;
	memcpy(sr->ips, s->ips, s->nr * sizeof(s->ips[0]));
	t->last_op = -1;
	return 0;
}
