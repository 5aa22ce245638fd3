// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * corr_tasks.c - submitted tasks: the calls that make them (launches, marks,
 * batched sends), the SQE headers of each halSqTaskSend, wraps of task ids
 * per (device, stream), and the task key that joins a device task to its
 * submission.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ascbpf_events.h"
#include "analysis/correlate.h"
#include "analysis/corr_build.h"

static uint8_t sqe_class(uint8_t sqe_type)
{
	/* a table: one case a line */
	// clang-format off
	switch (sqe_type) {
	case 0: case 1: case 2: return PROD_KERNEL;
	case 4: return PROD_EVENT_RECORD;
	case 5: return PROD_EVENT_WAIT;
	case 11: return PROD_COPY;
	default: return PROD_NONE;
	}
	// clang-format on
}

int32_t corr_queue_for(struct asc_corr *c, struct priv *p, uint64_t corr)
{
	struct asc_corr_queue *q;
	uint64_t idx;

	if (asc_u64map_get(&p->queue_index, corr, &idx))
		return (int32_t)idx;
	if (PUSH(c->queues, c->nr_queues, p->queues_cap, q))
		return -1;
	q->correlation_id = corr;
	q->op = -1;
	q->step = -1;
	if (asc_u64map_put(&p->queue_index, corr, c->nr_queues - 1))
		return -1;
	return (int32_t)(c->nr_queues - 1);
}

uint32_t corr_count_wrap(struct priv *p, struct asc_u64map *m, uint32_t dev, uint32_t stream,
			 uint32_t task)
{
	uint64_t key = (uint64_t)dev << 32 | stream, idx;
	struct wrapstate *w;

	if (!asc_u64map_get(m, key, &idx)) {
		if (grow_array((void **)&p->wraps, &p->wraps_cap, p->nr_wraps + 1,
			       sizeof(*p->wraps)) ||
		    asc_u64map_put(m, key, p->nr_wraps))
			return 0;
		idx = p->nr_wraps++;
		memset(&p->wraps[idx], 0, sizeof(p->wraps[idx]));
	}
	w = &p->wraps[idx];
	if (w->seen && task < w->last && w->last - task > 0x8000)
		w->wrap++;
	w->seen = 1;
	w->last = task;
	return w->wrap;
}

/*
 * What a task made now on thread t inherits from the calls open there: the
 * launching API (outermost aclnn / aclop, else outermost acl*, else the
 * innermost CANN call), the innermost CANN call, the aten op, the Dequeue
 * slot, the function handle of the innermost kernel launch and the
 * outermost kernel launch (Node@launch).
 */
static void ctx_from_stack(const struct priv *p, const struct tstate *t, struct lctx *x)
{
	uint32_t i;
	uint64_t v;

	memset(x, 0, sizeof(*x));
	x->api = x->launch_call = x->op = x->queue = x->node_call = -1;
	for (i = t->depth; i-- > 0;) {
		const struct frame *f = &t->frames[i];

		if (f->kind == FR_CALL && x->launch_call < 0)
			x->launch_call = f->item;
		if (f->kind == FR_OP && x->op < 0)
			x->op = f->item;
		if (f->kind == FR_DEQ && x->queue < 0)
			x->queue = f->item;
		if (f->kind == FR_CALL && p->probes[f->probe_id].is_kernel_launch) {
			if (!x->handle)
				x->handle = f->arg0;
			x->node_call = f->item; /* ends as the outermost */
		}
	}
	if (x->handle && asc_u64map_get(&p->funcnames, x->handle, &v))
		x->kname = (uint32_t)v;
	for (i = 0; i < t->depth; i++) {
		const struct frame *f = &t->frames[i];

		if (f->kind == FR_CALL && p->probes[f->probe_id].is_launch_api) {
			x->api = f->item;
			break;
		}
	}
	for (i = 0; x->api < 0 && i < t->depth; i++) {
		const struct frame *f = &t->frames[i];

		if (f->kind == FR_CALL && p->probes[f->probe_id].level == ASC_CORR_LEVEL_ACL)
			x->api = f->item;
	}
	if (x->api < 0)
		x->api = x->launch_call;
}

/* The outermost open task-making call on t, or NULL. */
static const struct frame *open_producer(const struct priv *p, const struct tstate *t)
{
	uint32_t i;

	for (i = 0; i < t->depth; i++)
		if (t->frames[i].kind == FR_CALL && p->probes[t->frames[i].probe_id].producer)
			return &t->frames[i];
	return NULL;
}

struct pend_launch *corr_pending_of_call(struct tstate *t, int32_t call)
{
	uint32_t i;

	for (i = t->nlaunches; i-- > 0;)
		if (t->launches[i].call == call)
			return &t->launches[i];
	return NULL;
}

void corr_drop_pending(struct tstate *t, uint32_t i)
{
	memmove(&t->launches[i], &t->launches[i + 1],
		(t->nlaunches - i - 1) * sizeof(*t->launches));
	t->nlaunches--;
}

/*
 * ENTER of a task-making call (the frame is already pushed): its task is
 * pending until a halSqTaskSend carries it.  A producer inside another
 * (aclrtLaunchKernel -> rtsLaunchKernelWithHostArgs at Level2) makes the same
 * task: only the innermost CANN call is updated.
 */
int corr_on_producer_enter(struct priv *p, struct tstate *t, const struct asc_hdr *h,
			   const struct probe_info *pi, int32_t call)
{
	const struct frame *outer = open_producer(p, t);
	struct pend_launch *pl;

	p->have_producers = 1;

	if (outer && outer->item != call) {
		pl = corr_pending_of_call(t, outer->item);
		if (pl)
			pl->ctx.launch_call = call;
		return 0;
	}
	if (!t->launches) {
		t->launches = malloc(MAX_PEND_LAUNCH * sizeof(*t->launches));
		if (!t->launches)
			return -ENOMEM;
	}
	if (t->nlaunches == MAX_PEND_LAUNCH)
		corr_drop_pending(t, 0); /* never sent (or sent unseen): the oldest goes */
	pl = &t->launches[t->nlaunches++];
	ctx_from_stack(p, t, &pl->ctx);
	pl->call = call;
	pl->cls = pi->producer;
	pl->ctx.cls = pi->producer;
	pl->stream = 0;
	if (pi->stream_arg >= 0 && h->size >= sizeof(struct asc_enter))
		pl->stream = ((const struct asc_enter *)h)->args[pi->stream_arg];
	return 0;
}

/*
 * Takes the pending launches of thread t on stream for a halSqTaskSend of n
 * SQEs (s: its first record): the n latest, in order, when there are at
 * least n (exact: exactly n) and the kept headers' types agree with them.
 * out == NULL only tests.  Taking drops the older ones of that stream too:
 * the runtime sends a stream's SQEs in order, so they were sent already.
 */
static int take_pending(struct tstate *t, uint64_t stream, uint32_t n, const struct asc_sqe *s,
			int exact, struct lctx *out)
{
	uint32_t idx[MAX_PEND_LAUNCH], cnt = 0, i, k;

	for (i = 0; i < t->nlaunches; i++)
		if (t->launches[i].stream == stream)
			idx[cnt++] = i;
	if (!n || cnt < n || (exact && cnt != n))
		return 0;
	for (i = 0; i < s->nr_kept && i < n; i++)
		if (t->launches[idx[cnt - n + i]].cls != sqe_class(s->sqe[i].sqe_type))
			return 0;
	if (!out)
		return 1;
	for (i = 0; i < n; i++)
		out[i] = t->launches[idx[cnt - n + i]].ctx;
	for (i = 0, k = 0; i < t->nlaunches; i++)
		if (t->launches[i].stream != stream)
			t->launches[k++] = t->launches[i];
	t->nlaunches = k;
	return 1;
}

/*
 * The launches of a halSqTaskSend of n SQEs on thread t that carries more
 * than its own call's task: first the pending tasks of the stream of the
 * producer open around it (a launch that fills the batch sends its own
 * stream), else the one (thread, stream) whose pending tasks are exactly n
 * (a synchronize, an event wait flushing another stream).  Fills out[0..n);
 * 0 if no such set exists or more than one does.
 */
static int batch_launches(struct priv *p, struct tstate *t, uint32_t n, const struct asc_sqe *s,
			  struct lctx *out)
{
	const struct frame *pf = open_producer(p, t);
	struct tstate *found = NULL;
	uint64_t fstream = 0;
	size_t ti;
	uint32_t i, j;
	int matches = 0;

	if (pf) {
		struct pend_launch *pl = corr_pending_of_call(t, pf->item);

		if (pl && take_pending(t, pl->stream, n, s, 0, out))
			return 1;
	}
	for (ti = 0; ti < p->nr_threads && matches < 2; ti++) {
		struct tstate *o = &p->threads[ti];

		for (i = 0; i < o->nlaunches && matches < 2; i++) {
			for (j = 0; j < i && o->launches[j].stream != o->launches[i].stream; j++)
				;
			if (j < i)
				continue; /* stream already tried */
			if (take_pending(o, o->launches[i].stream, n, s, 1, NULL)) {
				matches++;
				found = o;
				fstream = o->launches[i].stream;
			}
		}
	}
	if (matches != 1)
		return 0;
	return take_pending(found, fstream, n, s, 1, out);
}

static uint32_t stream_pending(const struct tstate *t, uint64_t stream)
{
	uint32_t i, n = 0;

	for (i = 0; i < t->nlaunches; i++)
		n += t->launches[i].stream == stream;
	return n;
}

/*
 * Whether the pending launches of t on stream, fewer than the n SQEs of s,
 * can be the last ones of the send: their classes agree with the headers
 * they would be (those kept in s; beyond them nothing is known).
 */
static int tail_agrees(const struct tstate *t, uint64_t stream, uint32_t n, const struct asc_sqe *s)
{
	uint32_t i, j = 0, cnt = stream_pending(t, stream);

	if (!cnt || cnt >= n)
		return 0;
	for (i = 0; i < t->nlaunches; i++) {
		uint32_t h;

		if (t->launches[i].stream != stream)
			continue;
		h = n - cnt + j++;
		if (h < s->nr_kept && t->launches[i].cls != sqe_class(s->sqe[h].sqe_type))
			return 0;
	}
	return 1;
}

static void drop_stream(struct tstate *t, uint64_t stream)
{
	uint32_t i, k;

	for (i = 0, k = 0; i < t->nlaunches; i++)
		if (t->launches[i].stream != stream)
			t->launches[k++] = t->launches[i];
	t->nlaunches = k;
}

/*
 * Level0 launch marks (entry only, so no launch is "open" around a send):
 * the launches of a halSqTaskSend of n SQEs of hardware stream sid.
 * A stream argument whose sid was learned from an earlier exact match: on
 * the thread that sends, its n latest pending launches (a launch that fills
 * the batch sends inside itself; older ones were sent already), fewer than
 * n: launches made before the marks were attached are in the batch, so
 * none is taken and those pending are dropped; from another thread (a
 * synchronize flushing it) exactly n.  An unlearned stream: the one
 * (thread, stream) with exactly n pending (then sid is learned), else, on
 * the sending thread, its only unlearned stream with fewer than n pending
 * that can end the batch (tail_agrees) is dropped (the batch that straddles
 * the switch-on).  0: not known.
 */
static int mark_launches(struct priv *p, struct tstate *t, uint32_t n, const struct asc_sqe *s,
			 struct lctx *out)
{
	struct tstate *known = NULL, *match = NULL, *only = NULL;
	uint64_t kstream = 0, mstream = 0, ostream = 0, v;
	uint32_t sid, i, j, nknown = 0, nonly = 0;
	size_t ti;
	int matches = 0;

	if (!s->nr_kept)
		return 0;
	sid = s->sqe[0].stream_id;
	for (ti = 0; ti < p->nr_threads; ti++) {
		struct tstate *o = &p->threads[ti];

		for (i = 0; i < o->nlaunches; i++) {
			uint64_t st = o->launches[i].stream;

			for (j = 0; j < i && o->launches[j].stream != st; j++)
				;
			if (j < i)
				continue; /* stream already seen */
			if (asc_u64map_get(&p->mark_streams, st, &v)) {
				if (v == sid) {
					nknown++;
					known = o;
					kstream = st;
				}
				continue;
			}
			if (o == t && tail_agrees(o, st, n, s)) {
				nonly++;
				only = o;
				ostream = st;
			}
			if (matches < 2 && take_pending(o, st, n, s, 1, NULL)) {
				matches++;
				match = o;
				mstream = st;
			}
		}
	}
	if (nknown == 1) {
		if (known != t)
			return take_pending(known, kstream, n, s, 1, out);
		if (stream_pending(known, kstream) < n) {
			drop_stream(known, kstream);
			return 0;
		}
		return take_pending(known, kstream, n, s, 0, out);
	}
	if (nknown > 1)
		return 0;
	if (matches == 1) {
		if (asc_u64map_put(&p->mark_streams, mstream, sid))
			return 0;
		return take_pending(match, mstream, n, s, 1, out);
	}
	if (!matches && nonly == 1)
		drop_stream(only, ostream);
	return 0;
}

/*
 * ASC_REC_LAUNCH.  A mark (ASC_PK_LAUNCH_MARK) is a pending launch of its
 * thread and stream with what is open there (op, Dequeue slot), no call.
 * A node launch (ASC_PK_NODE_LAUNCH) is traced as a call of its own level
 * (ASC_CORR_LEVEL_NODE: its Node@launch and the kernel's HostToDevice start,
 * no API event), through the ENTER / EXIT handlers.
 */
int corr_on_launch(struct asc_corr *c, struct priv *p, const struct asc_launch *l)
{
	const struct probe_info *pi = corr_probe_of(p, l->hdr.probe_id);
	struct pend_launch *pl;
	struct tstate *t;

	if (!pi)
		return 0;
	if (pi->kind == ASC_PK_NODE_LAUNCH) {
		if (l->side == ASC_LAUNCH_ENTRY) {
			struct asc_enter e;

			memset(&e, 0, sizeof(e));
			e.hdr = l->hdr;
			e.hdr.type = ASC_REC_ENTER;
			e.hdr.size = sizeof(e);
			e.args[pi->handle_arg & (ASC_MAX_ARGS - 1)] = l->handle;
			if (pi->stream_arg >= 0 && pi->stream_arg < ASC_MAX_ARGS)
				e.args[pi->stream_arg] = l->stream;
			return corr_on_enter(c, p, &e.hdr);
		} else {
			struct asc_exit x;

			memset(&x, 0, sizeof(x));
			x.hdr = l->hdr;
			x.hdr.type = ASC_REC_EXIT;
			x.hdr.size = sizeof(x);
			x.ret = l->ret;
			corr_on_exit_rec(c, p, &x);
			return 0;
		}
	}
	if (pi->kind != ASC_PK_LAUNCH_MARK || l->side != ASC_LAUNCH_ENTRY || !pi->producer)
		return 0;
	t = corr_thread_of(p, l->hdr.tid);
	if (!t)
		return -ENOMEM;
	if (!t->launches) {
		t->launches = malloc(MAX_PEND_LAUNCH * sizeof(*t->launches));
		if (!t->launches)
			return -ENOMEM;
	}
	p->have_producers = 1;
	p->have_marks = 1;
	if (t->nlaunches == MAX_PEND_LAUNCH)
		corr_drop_pending(t, 0);
	pl = &t->launches[t->nlaunches++];
	ctx_from_stack(p, t, &pl->ctx);
	pl->call = -1;
	pl->cls = pi->producer;
	pl->ctx.cls = pi->producer;
	pl->stream = l->stream;
	return 0;
}

/* Level0: a Dequeue slot joins the thread's batch window. */
void corr_window_add(const struct asc_corr *c, struct tstate *t, int32_t q)
{
	uint32_t name = c->queues[q].name;

	if (q == t->win_last)
		return;
	t->win_last = q;
	if (!t->win_cnt++)
		t->win_name = name ? name : WIN_MIXED;
	else if (t->win_name != name)
		t->win_name = WIN_MIXED;
}

static int32_t push_alts(struct priv *p, const struct lctx *x, uint32_t n)
{
	if (grow_array((void **)&p->alts, &p->alts_cap, p->nr_alts + n, sizeof(*p->alts)))
		return -1;
	if (n)
		memcpy(p->alts + p->nr_alts, x, n * sizeof(*x));
	p->nr_alts += n;
	return (int32_t)(p->nr_alts - n);
}

/*
 * Record 0 of a halSqTaskSend of n SQEs: decides where its tasks come from.
 * The enclosure (the calls open around the send) is exact when the runtime
 * sends every task inside the call that made it; whether it does is only
 * known at the end (priv.saw_batch), so the batch answer is kept beside it
 * (send_use_alt).  Level1+: the pending launches (batch_launches()).
 * Level0, where no launch is probed: the send is the open slot's alone when
 * that slot is the only one since the thread's last send; else the tasks
 * cannot be split among the slots, and only a name that all of them share
 * is kept.  Level0 with launch marks: mark_launches(), else as without.
 */
static int send_begin(struct asc_corr *c, struct priv *p, struct tstate *t, const struct asc_sqe *s)
{
	uint32_t n = s->sqe_num < MAX_SEND_SQES ? s->sqe_num : MAX_SEND_SQES;
	const struct frame *pf = open_producer(p, t);
	struct lctx ctx[MAX_SEND_SQES];
	int32_t deq = corr_open_item(t, FR_DEQ);

	(void)c;
	t->send_ts = s->hdr.ts_ns;
	t->send_dev = s->dev_id;
	t->send_n = s->sqe_num;
	t->send_alt = -1;
	t->send_use_alt = 0;
	t->send_per_header = 0;
	if (s->sqe_num > 1)
		p->saw_batch = 1;
	if (p->have_marks && !pf) {
		/* Level0 launch marks; without an exact answer, the answer without them */
		if (n && mark_launches(p, t, n, s, ctx)) {
			t->send_use_alt = 1;
			t->send_alt = push_alts(p, ctx, n);
			t->send_per_header = 1;
			if (t->send_alt < 0)
				return -ENOMEM;
			goto next_window;
		}
	} else if (p->have_producers) {
		struct pend_launch *own = pf ? corr_pending_of_call(t, pf->item) : NULL;

		/* the producer's own task sent inside it: the enclosure, as unbatched */
		if (n == 1 && own && own->cls == sqe_class(s->sqe[0].sqe_type) &&
		    own == &t->launches[t->nlaunches - 1]) {
			take_pending(t, own->stream, 1, s, 0, ctx);
			return 0;
		}
		t->send_use_alt = 1;
		if (n && batch_launches(p, t, n, s, ctx)) {
			t->send_alt = push_alts(p, ctx, n);
			t->send_per_header = 1;
			if (t->send_alt < 0)
				return -ENOMEM;
		}
		return 0;
	}
	if (deq >= 0 && t->win_cnt == 1 && t->win_last == deq) {
		/* the enclosure */
	} else {
		struct tstate *o = t;
		uint32_t name = 0;

		t->send_use_alt = 1;
		if (deq < 0 && !t->win_cnt) {
			/* sent from outside any slot (a synchronize): the one thread with slots */
			size_t i;

			o = NULL;
			for (i = 0; i < p->nr_threads; i++) {
				if (!p->threads[i].win_cnt)
					continue;
				o = o ? NULL : &p->threads[i];
				if (!o)
					break;
			}
		}
		if (o && o->win_cnt && o->win_name != WIN_MIXED)
			name = o->win_name;
		if (o && o != t) {
			o->win_cnt = 0;
			o->win_last = -1;
		}
		if (name) {
			memset(ctx, 0, sizeof(ctx[0]));
			ctx[0].api = ctx[0].launch_call = ctx[0].op = ctx[0].queue = -1;
			ctx[0].node_call = -1;
			ctx[0].qname = name;
			t->send_alt = push_alts(p, ctx, 1);
			if (t->send_alt < 0)
				return -ENOMEM;
		}
	}
next_window:
	/* the slot open now may still make tasks: it starts the next window */
	t->win_cnt = 0;
	t->win_last = -1;
	if (deq >= 0)
		corr_window_add(c, t, deq);
	return 0;
}

int corr_on_sqe(struct asc_corr *c, struct priv *p, const struct asc_sqe *s)
{
	struct tstate *t = corr_thread_of(p, s->hdr.tid);
	struct lctx enc;
	uint32_t i, first;
	int ret;

	if (!t)
		return -ENOMEM;
	/* records 1.. of a call: same thread and ts, sqe_num counts from their first header */
	if (t->send_ts == s->hdr.ts_ns && t->send_dev == s->dev_id && s->sqe_num < t->send_n) {
		first = t->send_n - s->sqe_num;
	} else {
		ret = send_begin(c, p, t, s);
		if (ret)
			return ret;
		first = 0;
	}
	ctx_from_stack(p, t, &enc);
	for (i = 0; i < s->nr_kept; i++) {
		const struct asc_sqe_hdr *q = &s->sqe[i];
		uint32_t wrap = corr_count_wrap(p, &p->sub_wraps, s->dev_id, q->stream_id,
						q->task_id);
		uint32_t j = first + i;
		struct sub *sb;

		if (PUSH(p->subs, p->nr_subs, p->subs_cap, sb))
			return -ENOMEM;
		sb->ts = s->hdr.ts_ns;
		sb->tid = s->hdr.tid;
		sb->api = enc.api;
		sb->launch_call = enc.launch_call;
		sb->op = enc.op;
		sb->queue = enc.queue;
		sb->handle = enc.handle;
		sb->kname = enc.kname;
		sb->node_call = enc.node_call;
		sb->block_dim = q->block_dim;
		sb->sqe_type = q->sqe_type;
		sb->use_alt = t->send_use_alt;
		sb->alt = -1;
		if (t->send_alt >= 0 && !t->send_per_header)
			sb->alt = t->send_alt;
		else if (t->send_alt >= 0 && j < MAX_SEND_SQES && j < t->send_n &&
			 p->alts[t->send_alt + j].cls == sqe_class(q->sqe_type))
			sb->alt = t->send_alt + (int32_t)j;
		if (asc_u64map_put(&p->sub_index,
				   task_key(s->dev_id, q->stream_id, q->task_id, wrap),
				   p->nr_subs - 1))
			return -ENOMEM;
	}
	return 0;
}
