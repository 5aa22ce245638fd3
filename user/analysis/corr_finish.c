// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * corr_finish.c - the phases after the pass over the records: steps and
 * cycles, sorting with remaps, op nesting, the kernel join, step ids, device
 * times, native and Python stacks, wall clock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ascbpf_events.h"
#include "ascend/stars.h"
#include "analysis/correlate.h"
#include "analysis/corr_build.h"
#include "schedule.h"

/* ---- finishing ---- */

struct sortkey {
	int64_t a, b;
	size_t idx;
};

static int cmp_sortkey(const void *x, const void *y)
{
	const struct sortkey *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return p->idx < q->idx ? -1 : p->idx > q->idx;
}

/*
 * Sorts arr (n elements of size elem) by (a, b) taken from each element and
 * returns old index -> new index, or NULL on ENOMEM.
 */
static int32_t *sort_remap(void *arr, size_t n, size_t elem,
			   void (*key)(const void *e, int64_t *a, int64_t *b))
{
	struct sortkey *k = malloc((n ? n : 1) * sizeof(*k));
	int32_t *map = malloc((n ? n : 1) * sizeof(*map));
	char *tmp = malloc((n ? n : 1) * elem);
	size_t i;

	if (!k || !map || !tmp) {
		free(k);
		free(map);
		free(tmp);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		key((char *)arr + i * elem, &k[i].a, &k[i].b);
		k[i].idx = i;
	}
	qsort(k, n, sizeof(*k), cmp_sortkey);
	for (i = 0; i < n; i++) {
		memcpy(tmp + i * elem, (char *)arr + k[i].idx * elem, elem);
		map[k[i].idx] = (int32_t)i;
	}
	if (n) /* arr is NULL when empty (every Level0 capture's ops) */
		memcpy(arr, tmp, n * elem);
	free(tmp);
	free(k);
	return map;
}

static int32_t remap(const int32_t *map, int32_t i)
{
	return i < 0 ? -1 : map[i];
}

static void key_op(const void *e, int64_t *a, int64_t *b)
{
	const struct asc_corr_op *o = e;

	*a = o->start_ns;
	*b = ~o->end_ns; /* enclosing ops first (~x = -x - 1: no overflow at INT64_MIN) */
}

static void key_call(const void *e, int64_t *a, int64_t *b)
{
	const struct asc_corr_call *o = e;

	*a = o->start_ns;
	*b = ~o->end_ns;
}

static void key_kernel(const void *e, int64_t *a, int64_t *b)
{
	const struct asc_corr_kernel *o = e;

	*a = o->start_ns;
	*b = o->stream;
}

static void key_queue(const void *e, int64_t *a, int64_t *b)
{
	const struct asc_corr_queue *o = e;

	*a = o->enq_start_ns ? o->enq_start_ns : o->deq_start_ns;
	*b = (int64_t)o->correlation_id;
}

static void key_mem(const void *e, int64_t *a, int64_t *b)
{
	const struct asc_corr_mem *o = e;

	*a = o->ts_ns;
	*b = 0;
}

/* Step index (into steps[]) containing mono time t, -1 if none (before the first). */
static int32_t step_at(const struct asc_corr *c, int64_t t)
{
	size_t lo = 0, hi = c->nr_steps;

	if (!c->nr_steps || t < c->steps[0].start_ns)
		return -1;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (c->steps[mid].start_ns <= t)
			lo = mid;
		else
			hi = mid;
	}
	return (int32_t)lo;
}

static int32_t step_id_at(const struct asc_corr *c, int64_t t)
{
	int32_t i = step_at(c, t);

	return i < 0 ? -1 : (int32_t)c->steps[i].step;
}

static int cmp_step(const void *x, const void *y)
{
	const struct asc_corr_step *p = x, *q = y;

	return p->start_ns < q->start_ns ? -1 : p->start_ns > q->start_ns;
}

/* The probed library whose file name is base, or NULL. */
static const char *probe_lib_path(const struct asc_corr *c, const struct priv *p, const char *base,
				  size_t blen)
{
	size_t i;

	for (i = 0; i < p->nr_probes; i++) {
		const char *lib, *b;

		if (!p->probes[i].known || !p->probes[i].lib)
			continue;
		lib = asc_corr_str(c, p->probes[i].lib);
		b = strrchr(lib, '/');
		b = b ? b + 1 : lib;
		if (strlen(b) == blen && !strncmp(b, base, blen))
			return lib;
	}
	return NULL;
}

/* The formatted frame of a SYMBOL string id, made once per symbol (cache: sid -> frame id). */
static uint32_t native_frame(const struct asc_corr *c, struct priv *p, struct asc_u64map *cache,
			     uint32_t sid)
{
	const char *sym = asc_corr_str(c, sid), *bang = strchr(sym, '!');
	char out[1024];
	uint64_t v;
	size_t blen;
	uint32_t id;

	if (asc_u64map_get(cache, sid, &v))
		return (uint32_t)v;
	blen = bang ? (size_t)(bang - sym) : strcspn(sym, "+");
	asc_corr_native_frame(sym, probe_lib_path(c, p, sym, blen), out, sizeof(out));
	id = strtab_cstr(&p->strs, out);
	if (asc_u64map_put(cache, sid, id))
		return sid;
	return id;
}

/* Builds the call stack string of each op with a stack record. */
static void resolve_stacks(struct asc_corr *c, struct priv *p, const int32_t *opmap)
{
	char *buf = malloc(ASC_STACK_DEPTH * 512);
	struct asc_u64map cache = { 0 };
	size_t i, len;
	uint32_t k;

	if (!buf)
		return;
	for (i = 0; i < p->nr_stacks; i++) {
		struct stackrec *sr = &p->stacks[i];

		len = 0;
		for (k = 0; k < sr->nr; k++) {
			uint64_t sid;
			const char *s;
			int n;

			s = asc_u64map_get(&p->symbols, sr->ips[k], &sid) ?
				    asc_corr_str(c, native_frame(c, p, &cache, (uint32_t)sid)) :
				    NULL;
			/* demangled C++ names are long: up to 500 bytes a native frame */
			n = s ? snprintf(buf + len, 512, "%s%.500s", k ? ";\r\n" : "", s) :
				snprintf(buf + len, 512, "%s0x%llx", k ? ";\r\n" : "",
					 (unsigned long long)sr->ips[k]);
			if (n > 0)
				len += n < 512 ? n : 511;
		}
		if (sr->op >= 0 && (size_t)sr->op < c->nr_ops)
			c->ops[remap(opmap, sr->op)].stack = strtab_add(&p->strs, buf, len);
	}
	/* Python frames win over native ones: torch's "Call stack" is Python's */
	for (i = 0; i < p->nr_pystacks; i++) {
		struct pystackrec *ps = &p->pystacks[i];
		int any = 0;

		len = 0;
		for (k = 0; k < ps->nr; k++) {
			uint64_t sid;
			int n;

			if (!asc_u64map_get(&p->pyframes, pyframe_key(ps->code[k], ps->lasti[k]),
					    &sid))
				continue; /* unresolved frames are left out */
			n = snprintf(buf + len, 160, "%s%.150s", any++ ? ";\r\n" : "",
				     asc_corr_str(c, sid));
			if (n > 0)
				len += n < 160 ? n : 159;
		}
		if (any && ps->op >= 0 && (size_t)ps->op < c->nr_ops)
			c->ops[remap(opmap, ps->op)].stack = strtab_add(&p->strs, buf, len);
	}
	asc_u64map_free(&cache);
	free(buf);
}

/*
 * corr_finish() below runs these phases in order; each returns 0 or -ENOMEM.  The
 * remaps are old index -> new index of the arrays sorted by start time.
 */
struct remaps {
	int32_t *op, *call, *queue;
};

/* steps: sorted by start, end = next start; ProfilerStep#N ops of the recorded ones */
static int finish_steps(struct asc_corr *c, struct priv *p)
{
	size_t i;

	if (c->nr_steps) /* qsort(NULL, 0): undefined */
		qsort(c->steps, c->nr_steps, sizeof(*c->steps), cmp_step);
	for (i = 0; i < c->nr_steps; i++) {
		struct asc_corr_op *o;
		char name[40];
		int64_t end = i + 1 < c->nr_steps ?
				      c->steps[i + 1].start_ns :
				      (c->info.end_mono_ns > p->max_mono ? c->info.end_mono_ns :
									   p->max_mono);

		c->steps[i].end_ns = end > c->steps[i].start_ns ? end : c->steps[i].start_ns;
		if (!asc_sched_recording(c->steps[i].state))
			continue;
		if (PUSH(c->ops, c->nr_ops, p->ops_cap, o))
			return -ENOMEM;
		snprintf(name, sizeof(name), "ProfilerStep#%llu",
			 (unsigned long long)c->steps[i].step);
		o->start_ns = c->steps[i].start_ns;
		o->end_ns = c->steps[i].end_ns;
		o->tid = c->steps[i].tid;
		o->name = strtab_cstr(&p->strs, name);
		o->seq = -1;
		o->parent = -1;
		o->flags = ASC_CORR_O_STEP;
	}
	return 0;
}

/* cycles: warmup/record steps up to a RECORD_AND_SAVE (or the last recorded step) */
static int finish_cycles(struct asc_corr *c, struct priv *p)
{
	int32_t first = -1, last_rec = -1;
	size_t i;

	for (i = 0; i <= c->nr_steps; i++) {
		uint32_t st = i < c->nr_steps ? c->steps[i].state : ASC_SCHED_NONE;
		int end_cycle = 0;

		if (st != ASC_SCHED_NONE && first < 0)
			first = i;
		if (asc_sched_recording(st))
			last_rec = i;
		if (st == ASC_SCHED_RECORD_AND_SAVE)
			end_cycle = 1;
		else if (first >= 0 && (i == c->nr_steps || st == ASC_SCHED_NONE ||
					(st == ASC_SCHED_WARMUP && last_rec >= first)))
			end_cycle = 2; /* cycle interrupted: keep it if it recorded */
		if (!end_cycle)
			continue;
		if (last_rec >= first && first >= 0) {
			struct asc_corr_cycle *cy;
			int32_t lastidx = end_cycle == 1 ? (int32_t)i : last_rec;
			int32_t j;

			if (PUSH(c->cycles, c->nr_cycles, p->cycles_cap, cy))
				return -ENOMEM;
			cy->first_step = first;
			cy->last_step = lastidx;
			cy->start_ns = c->steps[first].start_ns;
			cy->end_ns = c->steps[lastidx].end_ns;
			for (j = first; j <= lastidx; j++)
				c->steps[j].cycle = (int32_t)c->nr_cycles - 1;
		}
		first = st == ASC_SCHED_WARMUP && end_cycle == 2 ? (int32_t)i : -1;
		last_rec = -1;
	}
	return 0;
}

/* ops: sorted by (start, -end), then nesting per thread with a stack walk */
static int finish_ops(struct asc_corr *c, struct remaps *m)
{
	struct asc_u64map last = { 0 }; /* tid -> innermost open op index */
	size_t i;

	m->op = sort_remap(c->ops, c->nr_ops, sizeof(*c->ops), key_op);
	if (!m->op)
		return -ENOMEM;
	for (i = 0; i < c->nr_ops; i++)
		c->ops[i].parent = -1;
	for (i = 0; i < c->nr_ops; i++) {
		struct asc_corr_op *o = &c->ops[i];
		uint64_t v;
		int32_t par = -1;

		if (asc_u64map_get(&last, o->tid, &v))
			par = (int32_t)v;
		/* sorted by start: an earlier op encloses o iff it ends no earlier */
		while (par >= 0 && c->ops[par].end_ns < o->end_ns)
			par = c->ops[par].parent;
		o->parent = par;
		o->depth = par >= 0 ? c->ops[par].depth + 1 : 0;
		if (asc_u64map_put(&last, o->tid, i)) {
			asc_u64map_free(&last);
			return -ENOMEM;
		}
	}
	asc_u64map_free(&last);
	return 0;
}

/* calls sorted, their call_queue entries moved along; then queues, which name calls' ops */
static int finish_calls_queues(struct asc_corr *c, struct priv *p, struct remaps *m)
{
	int32_t *cq;
	size_t i;

	m->call = sort_remap(c->calls, c->nr_calls, sizeof(*c->calls), key_call);
	if (!m->call)
		return -ENOMEM;
	cq = malloc((c->nr_calls ? c->nr_calls : 1) * sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	for (i = 0; i < c->nr_calls; i++)
		cq[m->call[i]] = p->call_queue ? p->call_queue[i] : -1;
	free(p->call_queue);
	p->call_queue = cq;
	p->call_queue_cap = c->nr_calls;
	for (i = 0; i < c->nr_calls; i++) {
		c->calls[i].parent = remap(m->call, c->calls[i].parent);
		c->calls[i].op = remap(m->op, c->calls[i].op);
	}

	for (i = 0; i < c->nr_queues; i++)
		c->queues[i].op = remap(m->op, c->queues[i].op);
	m->queue = sort_remap(c->queues, c->nr_queues, sizeof(*c->queues), key_queue);
	if (!m->queue)
		return -ENOMEM;
	for (i = 0; i < c->nr_calls; i++) {
		int32_t q = remap(m->queue, p->call_queue[i]);

		if (q >= 0 && c->calls[i].op < 0)
			c->calls[i].op = c->queues[q].op;
	}
	return 0;
}

/* A matched kernel takes the context of the submission sb. */
static void kernel_from_sub(struct asc_corr *c, struct priv *p, const struct remaps *m,
			    const struct devt *d, const struct sub *sb, struct asc_corr_kernel *k)
{
	struct lctx x = {
		.api = sb->api,
		.launch_call = sb->launch_call,
		.op = sb->op,
		.queue = sb->queue,
		.node_call = sb->node_call,
		.handle = sb->handle,
		.kname = sb->kname,
	};
	uint64_t si;

	/* batched capture: the launch that made the task, if it is known */
	if (p->saw_batch && sb->use_alt) {
		if (sb->alt >= 0) {
			x = p->alts[sb->alt];
		} else {
			memset(&x, 0, sizeof(x));
			x.api = x.launch_call = x.op = x.queue = x.node_call = -1;
		}
		if (x.op < 0 && x.queue < 0)
			c->info.batch_unattributed++;
	}
	k->flags |= ASC_CORR_K_MATCHED;
	k->submit_ns = sb->ts;
	k->submit_tid = sb->tid;
	k->block_dim = sb->block_dim;
	k->api = remap(m->call, x.api);
	k->launch_call = remap(m->call, x.launch_call);
	if (d->type == 0 || d->type == 1 || d->type == 2)
		k->node_call = remap(m->call, x.node_call);
	k->queue = remap(m->queue, x.queue);
	k->op = k->queue >= 0 && c->queues[k->queue].op >= 0 ? c->queues[k->queue].op :
							       remap(m->op, x.op);
	if (k->queue >= 0)
		k->correlation_id = c->queues[k->queue].correlation_id;
	k->kernel_name = x.kname;
	/* a handle named only after the launch */
	if (!k->kernel_name && x.handle && asc_u64map_get(&p->funcnames, x.handle, &si))
		k->kernel_name = (uint32_t)si;
	if (x.qname && (k->flags & ASC_CORR_K_COMPUTE))
		k->name = x.qname;
}

/* A kernel's name and type: its API's op name, the aclnn call, the queue slot's, ... */
static void name_kernel(struct asc_corr *c, struct priv *p, const struct devt *d,
			struct asc_corr_kernel *k)
{
	const char *nm = NULL;

	if (k->api >= 0 && c->calls[k->api].opname)
		k->name = c->calls[k->api].opname;
	else if (k->api >= 0 && !strncmp(asc_corr_str(c, c->calls[k->api].name), "aclnn", 5))
		k->name = c->calls[k->api].name;
	else if (k->queue >= 0 && c->queues[k->queue].name)
		k->name = c->queues[k->queue].name;
	else if (k->api >= 0)
		k->name = c->calls[k->api].name;
	if (!(k->flags & ASC_CORR_K_COMPUTE))
		k->name = 0; /* event / copy tasks are named by kind, not by their API */
	if (k->name)
		nm = asc_corr_str(c, k->name);
	else
		k->name = strtab_cstr(&p->strs, corr_task_default_name(d->type));
	k->type = nm ? corr_type_from_name(p, nm) : k->name;
	/* the real kernel name, where the launch's function handle was named */
	if (k->kernel_name && (k->flags & ASC_CORR_K_COMPUTE)) {
		k->name = k->kernel_name;
		k->flags |= ASC_CORR_K_KERNEL_NAME;
	}
}

/* kernels: one per device task, joined to its submission */
static int finish_kernels(struct asc_corr *c, struct priv *p, const struct remaps *m)
{
	size_t i;

	c->kernels = calloc(p->nr_devts ? p->nr_devts : 1, sizeof(*c->kernels));
	if (!c->kernels)
		return -ENOMEM;
	c->nr_kernels = p->nr_devts;
	for (i = 0; i < p->nr_devts; i++) {
		const struct devt *d = &p->devts[i];
		struct asc_corr_kernel *k = &c->kernels[i];
		uint64_t si;

		k->start_ns = corr_dev_to_mono(c, d->start_cnt);
		k->end_ns = corr_dev_to_mono(c, d->end_cnt);
		k->device = d->dev;
		k->stream = d->stream;
		k->task_id = d->task;
		k->wrap = d->wrap;
		k->task_type = d->type;
		k->api = k->launch_call = k->op = k->queue = -1;
		k->step = -1;
		if (d->type == 0 || d->type == 1 || d->type == 2)
			k->flags |= ASC_CORR_K_COMPUTE;
		k->node_call = -1;
		if (asc_u64map_get(&p->sub_index, task_key(d->dev, d->stream, d->task, d->wrap),
				   &si))
			kernel_from_sub(c, p, m, d, &p->subs[si], k);
		else
			c->info.unmatched_kernels++;
		name_kernel(c, p, d, k);
	}
	c->info.unmatched_sqes = p->nr_subs > c->nr_kernels - c->info.unmatched_kernels ?
					 p->nr_subs - (c->nr_kernels - c->info.unmatched_kernels) :
					 0;
	return 0;
}

/* steps of everything (mono times still), memory events' ops remapped */
static void finish_step_ids(struct asc_corr *c, const struct remaps *m)
{
	size_t i;

	for (i = 0; i < c->nr_ops; i++)
		c->ops[i].step = step_id_at(c, c->ops[i].start_ns);
	for (i = 0; i < c->nr_calls; i++)
		c->calls[i].step = step_id_at(c, c->calls[i].start_ns);
	for (i = 0; i < c->nr_queues; i++)
		c->queues[i].step = step_id_at(c, c->queues[i].enq_start_ns ?
							  c->queues[i].enq_start_ns :
							  c->queues[i].deq_start_ns);
	for (i = 0; i < c->nr_mems; i++) {
		c->mems[i].op = remap(m->op, c->mems[i].op);
		c->mems[i].step = step_id_at(c, c->mems[i].ts_ns);
	}
	for (i = 0; i < c->nr_kernels; i++) {
		struct asc_corr_kernel *k = &c->kernels[i];

		k->step = step_id_at(c, k->submit_ns ? k->submit_ns : k->start_ns);
	}
}

struct stream_pos {
	uint64_t stream; /* device << 32 | stream */
	int64_t start_ns;
	uint32_t i; /* index into kernels[] */
};

static int cmp_stream_pos(const void *x, const void *y)
{
	const struct stream_pos *a = x, *b = y;

	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/*
 * The step of a task whose submission was not captured.  Every submission
 * made while the schedule records is captured (halSqTaskSend); a task sent
 * while it did not (wait, warmup) reaches the capture through the device
 * channel alone, and when the card lags behind the host it runs inside the
 * next recorded step, where its start time would misfile it.  A stream runs
 * its tasks in the order they were sent, so such a task was sent between
 * the captured sends of its stream's tasks that ran just before (lo) and
 * just after (hi) it: when a step that was not recorded lies in (lo, hi),
 * the task is the last such step's; else its start time, held inside
 * [lo, hi], names the step.  A stream without any captured send (no driver
 * probes) keeps the start-time step.  lastoff[s]: the last step index <= s
 * that was not recorded, -1 if none.
 */
static int finish_unsent_steps(struct asc_corr *c)
{
	struct stream_pos *v;
	int32_t *lastoff;
	size_t i, j, g, n = c->nr_kernels;

	if (!n || !c->nr_steps)
		return 0;
	v = malloc(n * sizeof(*v));
	lastoff = malloc(c->nr_steps * sizeof(*lastoff));
	if (!v || !lastoff) {
		free(v);
		free(lastoff);
		return -ENOMEM;
	}
	for (i = 0; i < c->nr_steps; i++)
		lastoff[i] = asc_sched_recording(c->steps[i].state) ? (i ? lastoff[i - 1] : -1) :
								      (int32_t)i;
	for (i = 0; i < n; i++) {
		v[i].stream = (uint64_t)c->kernels[i].device << 32 | c->kernels[i].stream;
		v[i].start_ns = c->kernels[i].start_ns;
		v[i].i = (uint32_t)i;
	}
	qsort(v, n, sizeof(*v), cmp_stream_pos);
	for (g = 0; g < n; g = j) {
		int64_t lo = INT64_MIN, hi;
		size_t k, next = g;

		for (j = g; j < n && v[j].stream == v[g].stream; j++)
			;
		for (k = g; k < j && !c->kernels[v[k].i].submit_ns; k++)
			;
		if (k == j)
			continue; /* no captured send on this stream */
		for (k = g; k < j; k++) {
			struct asc_corr_kernel *t = &c->kernels[v[k].i];
			int32_t slo, shi, off;

			if (t->submit_ns) {
				lo = t->submit_ns;
				continue;
			}
			if (next <= k)
				for (next = k + 1; next < j && !c->kernels[v[next].i].submit_ns;
				     next++)
					;
			hi = next < j ? c->kernels[v[next].i].submit_ns : INT64_MAX;
			slo = step_at(c, lo);
			shi = step_at(c, hi);
			off = shi >= 0 ? lastoff[shi] : -1;
			if (off >= 0 && off >= slo)
				t->step = (int32_t)c->steps[off].step;
			else
				t->step = step_id_at(c, t->start_ns < lo ? lo :
							t->start_ns > hi ? hi :
									   t->start_ns);
		}
	}
	free(v);
	free(lastoff);
	return 0;
}

/* device durations of compute kernels onto their op (self) and its ancestors (total) */
static void finish_device_times(struct asc_corr *c)
{
	size_t i;

	for (i = 0; i < c->nr_kernels; i++) {
		const struct asc_corr_kernel *k = &c->kernels[i];
		int64_t dur = asc_ns_sub(k->end_ns, k->start_ns);
		int aic = k->task_type == RT_STARS_SQE_TYPE_FFTS;
		int32_t o = k->op;

		if (o < 0 || !(k->flags & ASC_CORR_K_COMPUTE))
			continue;
		c->ops[o].device_self_ns = asc_ns_add(c->ops[o].device_self_ns, dur);
		if (aic)
			c->ops[o].device_self_aicore_ns =
				asc_ns_add(c->ops[o].device_self_aicore_ns, dur);
		for (; o >= 0; o = c->ops[o].parent) {
			c->ops[o].device_total_ns = asc_ns_add(c->ops[o].device_total_ns, dur);
			if (aic)
				c->ops[o].device_total_aicore_ns =
					asc_ns_add(c->ops[o].device_total_aicore_ns, dur);
		}
	}
}

/* everything to wall clock (0 stays 0: unknown) */
static void finish_wall_clock(struct asc_corr *c, const struct priv *p)
{
	size_t i;

#define WALL(x) ((x) = (x) ? asc_ns_add((x), p->wall_off) : 0)
	for (i = 0; i < c->nr_ops; i++) {
		WALL(c->ops[i].start_ns);
		WALL(c->ops[i].end_ns);
	}
	for (i = 0; i < c->nr_calls; i++) {
		WALL(c->calls[i].start_ns);
		WALL(c->calls[i].end_ns);
	}
	for (i = 0; i < c->nr_queues; i++) {
		WALL(c->queues[i].enq_start_ns);
		WALL(c->queues[i].enq_end_ns);
		WALL(c->queues[i].deq_start_ns);
		WALL(c->queues[i].deq_end_ns);
	}
	for (i = 0; i < c->nr_mems; i++)
		WALL(c->mems[i].ts_ns);
	for (i = 0; i < c->nr_kernels; i++) {
		WALL(c->kernels[i].start_ns);
		WALL(c->kernels[i].end_ns);
		WALL(c->kernels[i].submit_ns);
	}
	for (i = 0; i < c->nr_steps; i++) {
		WALL(c->steps[i].start_ns);
		WALL(c->steps[i].end_ns);
	}
	for (i = 0; i < c->nr_cycles; i++) {
		WALL(c->cycles[i].start_ns);
		WALL(c->cycles[i].end_ns);
	}
#undef WALL
}

/* After the pass over the records: the phases above, in this order. */
int corr_finish(struct asc_corr *c, struct priv *p)
{
	struct remaps m = { 0 };
	size_t i;
	int err;

	for (i = 0; i < p->nr_threads; i++)
		corr_flush_tensors(c, p, &p->threads[i]);
	err = finish_steps(c, p);
	if (!err)
		err = finish_cycles(c, p);
	if (!err)
		err = finish_ops(c, &m);
	if (!err)
		err = finish_calls_queues(c, p, &m);
	if (!err)
		err = finish_kernels(c, p, &m);
	if (!err) {
		finish_step_ids(c, &m);
		err = finish_unsent_steps(c);
	}
	if (!err) {
		finish_device_times(c);
		resolve_stacks(c, p, m.op);
		finish_wall_clock(c, p);
		/* kernels sorted by start; remap nothing refers to kernels */
		free(sort_remap(c->kernels, c->nr_kernels, sizeof(*c->kernels), key_kernel));
		/* memory events sorted by time (stable for equal times) */
		free(sort_remap(c->mems, c->nr_mems, sizeof(*c->mems), key_mem));
	}
	free(m.op);
	free(m.call);
	free(m.queue);
	return err;
}
