// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * comm_align.c - the clock shift of each rank of a job from its collectives
 * (comm_align.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/comm.h"
#include "analysis/comm_align.h"
#include "analysis/correlate.h"
#include "capture/capture.h"
#include "lib/log.h"

/* One collective end of one rank, keyed by (its group name's hash, seq). */
struct cend {
	uint64_t key, seq;
	int64_t end_ns;
	size_t op; /* index into its view's ops[] */
};

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static int cend_cmp(const void *a, const void *b)
{
	const struct cend *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int64_t median(int64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), i64_cmp);
	return n % 2 ? v[n / 2] : v[n / 2 - 1] / 2 + v[n / 2] / 2;
}

/* The ended collectives of m, sorted by key; *nr of them.  NULL on ENOMEM (or none). */
static struct cend *ends_of(const struct asc_comm *m, size_t *nr)
{
	struct cend *e = calloc(m->nr_ops ? m->nr_ops : 1, sizeof(*e));
	size_t i;

	*nr = 0;
	if (!e)
		return NULL;
	for (i = 0; i < m->nr_ops; i++) {
		const struct asc_comm_op *o = &m->ops[i];

		if (o->group < 0 || (size_t)o->group >= m->nr_groups || !o->end_ns ||
		    (o->flags & ASC_COMM_OP_NO_END) || asc_comm_is_p2p(o->name))
			continue;
		e[*nr].key = name_hash(m->groups[o->group].name);
		e[*nr].seq = o->seq;
		e[*nr].op = i;
		e[(*nr)++].end_ns = o->end_ns;
	}
	qsort(e, *nr, sizeof(*e), cend_cmp);
	return e;
}

/* A growable list of int64 (the pair estimates). */
struct vec {
	int64_t *v;
	size_t n, cap;
};

static int vec_push(struct vec *x, int64_t v)
{
	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 64;
		int64_t *nv = realloc(x->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		x->v = nv;
		x->cap = cap;
	}
	x->v[x->n++] = v;
	return 0;
}

/* The shortest Notify_Wait of m: one that did not block (the peer had recorded). */
static int64_t min_wait(const struct asc_comm *m)
{
	int64_t best = INT64_MAX;
	size_t t;

	for (t = 0; t < m->nr_tasks; t++)
		if (m->tasks[t].kind == ASC_CT_NOTIFY_WAIT &&
		    m->tasks[t].end_ns - m->tasks[t].start_ns < best)
			best = m->tasks[t].end_ns - m->tasks[t].start_ns;
	return best;
}

/*
 * The waits of rank a's op oa on its peer of group rank pb, against the
 * records of b's op ob to a (group rank pa), paired in order (the k-th wait
 * on a notify is satisfied by the k-th record on it).  A wait that blocked
 * (longer than a's shortest by BLOCKED_NS) ended when the record did: b's
 * record end - a's wait end is a's shift - b's, pushed with sign.
 */
#define BLOCKED_NS 500
static int pair_notifies(const struct asc_comm *ma, size_t oa, const struct asc_comm *mb, size_t ob,
			 int64_t minw, int sign, struct vec *out)
{
	const struct asc_comm_op *A = &ma->ops[oa], *B = &mb->ops[ob];
	int32_t pa = ma->groups[A->group].rank, pb = mb->groups[B->group].rank;
	size_t ta = A->task0, tb = B->task0;
	int err = 0;

	if (pa < 0 || pb < 0)
		return 0;
	for (;;) {
		const struct asc_comm_task *w = NULL, *r = NULL;

		for (; ta < A->task0 + A->ntasks && !w; ta++)
			if (ma->tasks[ta].kind == ASC_CT_NOTIFY_WAIT &&
			    ma->tasks[ta].dst_rank == (uint32_t)pb)
				w = &ma->tasks[ta];
		for (; tb < B->task0 + B->ntasks && !r; tb++)
			if (mb->tasks[tb].kind == ASC_CT_NOTIFY_RECORD &&
			    mb->tasks[tb].dst_rank == (uint32_t)pa)
				r = &mb->tasks[tb];
		if (!w || !r || err)
			return err;
		if (w->end_ns - w->start_ns > minw + BLOCKED_NS)
			err = vec_push(out, sign * (r->end_ns - w->end_ns));
	}
}

/*
 * Rank i's offset against rank j (i's shift = j's + *off) from their shared
 * collectives: the median of the blocked waits' pairings both ways, else
 * of (j's op end - i's).  Returns the collectives it used (0: no estimate).
 */
static size_t pair_offset(const struct asc_comm *const *ms, struct cend *const *ends,
			  const size_t *nends, const int64_t *minw, size_t i, size_t j,
			  struct vec *ev, struct vec *nv, int64_t *off)
{
	size_t k, used = 0;

	ev->n = nv->n = 0;
	for (k = 0; k < nends[i]; k++) {
		const struct cend *hit = bsearch(&ends[i][k], ends[j], nends[j], sizeof(**ends),
						 cend_cmp);

		if (!hit)
			continue;
		used++;
		if (vec_push(ev, hit->end_ns - ends[i][k].end_ns) ||
		    pair_notifies(ms[i], ends[i][k].op, ms[j], hit->op, minw[i], 1, nv) ||
		    pair_notifies(ms[j], hit->op, ms[i], ends[i][k].op, minw[j], -1, nv))
			return 0;
	}
	if (nv->n)
		*off = median(nv->v, nv->n);
	else if (ev->n)
		*off = median(ev->v, ev->n);
	return used;
}

/*
 * Grows the set of ranks on the reference's clock from rank 0: each round the
 * rank with the most blocked-wait pairings (then shared collectives) with the
 * set joins it, its shift the median over its partners in the set (those
 * with pairings, when it has any) of (partner's shift + pair offset);
 * spread: the median |partner's estimate - that shift|.  (A
 * median over all other ranks at once would follow the larger node, not the
 * reference.)
 */
static int grow(const struct asc_comm *const *ms, struct cend *const *ends, const size_t *nends,
		size_t n, struct asc_comm_shift *out, int64_t *cand)
{
	char *in = calloc(n, 1);
	int64_t *minw = calloc(n, sizeof(*minw));
	struct vec ev = {}, nv = {};
	size_t round, i, j;

	if (!in || !minw) {
		free(in);
		free(minw);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		minw[i] = min_wait(ms[i]);
	in[0] = 1;
	for (round = 1; round < n; round++) {
		size_t best = n, best_used = 0, best_tight = 0;

		/* the next: most blocked-wait pairings with the set, then most collectives */
		for (i = 0; i < n; i++) {
			size_t used = 0, tight = 0;

			for (j = 0; !in[i] && j < n; j++) {
				int64_t off;

				if (!in[j])
					continue;
				used += pair_offset(ms, ends, nends, minw, i, j, &ev, &nv, &off);
				tight += nv.n;
			}
			if (!in[i] && used &&
			    (tight > best_tight || (tight == best_tight && used > best_used)))
				best = i, best_used = used, best_tight = tight;
		}
		if (best == n)
			break; /* the rest share no collective with the set */
		/* its partners with pairings when it has any (op ends are a few us off) */
		for (j = 0, i = 0; j < n; j++) {
			int64_t off;

			if (in[j] && pair_offset(ms, ends, nends, minw, best, j, &ev, &nv, &off) &&
			    (!best_tight || nv.n))
				cand[i++] = out[j].shift_ns + off;
		}
		out[best].shift_ns = median(cand, i);
		out[best].used = best_used;
		in[best] = 1;
		for (j = 0; j < i; j++) {
			int64_t r = cand[j] - out[best].shift_ns;

			cand[j] = r < 0 ? -r : r;
		}
		out[best].spread_ns = i ? median(cand, i) : 0;
	}
	free(in);
	free(minw);
	free(ev.v);
	free(nv.v);
	return 0;
}

int asc_comm_align(const struct asc_comm *const *ms, size_t n, struct asc_comm_shift *out)
{
	struct cend **ends = calloc(n ? n : 1, sizeof(*ends));
	size_t *nends = calloc(n ? n : 1, sizeof(*nends)), i, most = 1;
	int64_t *cand = NULL;
	int err = 0;

	memset(out, 0, n * sizeof(*out));
	for (i = 0; ends && nends && i < n; i++) {
		ends[i] = ends_of(ms[i], &nends[i]);
		if (!ends[i])
			err = -ENOMEM;
		if (nends[i] > most)
			most = nends[i];
	}
	cand = calloc(n, sizeof(*cand));
	if (!ends || !nends || !cand)
		err = -ENOMEM;
	if (!err && n > 1)
		err = grow(ms, ends, nends, n, out, cand);
	for (i = 0; ends && i < n; i++)
		free(ends[i]);
	free(ends);
	free(nends);
	free(cand);
	return err;
}

struct view {
	struct asc_corr *c;
	struct asc_comm m;
	int32_t rank;
	int self;
};

static int view_open(const char *path, struct view *v)
{
	struct asc_capture_reader *r = asc_capture_open(path);
	int err = 0;

	if (!r)
		return -errno;
	v->c = asc_corr_build(r);
	if (!v->c)
		err = -errno;
	else
		err = asc_comm_build(r, v->c, &v->m);
	asc_capture_free(r);
	v->rank = v->c ? v->c->info.rank : -1;
	return err;
}

int asc_comm_capture_shift(const char *self, const char *const *peers, size_t n, int64_t *shift_ns)
{
	struct view *v = calloc(n + 1, sizeof(*v));
	const struct asc_comm **ms = calloc(n + 1, sizeof(*ms));
	struct asc_comm_shift *sh = calloc(n + 1, sizeof(*sh));
	size_t i, ref = 0, me = 0;
	int err = v && ms && sh ? 0 : -ENOMEM;

	*shift_ns = 0;
	for (i = 0; !err && i <= n; i++) {
		err = view_open(i ? peers[i - 1] : self, &v[i]);
		if (err)
			asc_err("align: %s: %s\n", i ? peers[i - 1] : self, strerror(-err));
	}
	/* the lowest known rank is the reference: ms[0] */
	for (i = 1; !err && i <= n; i++)
		if (v[i].rank >= 0 && (v[ref].rank < 0 || v[i].rank < v[ref].rank))
			ref = i;
	if (!err) {
		size_t at = 1;

		ms[0] = &v[ref].m;
		for (i = 0; i <= n; i++)
			if (i != ref) {
				if (i == 0)
					me = at; /* where self (v[0]) sits */
				ms[at++] = &v[i].m;
			}
		if (ref == 0)
			me = 0;
	}
	if (!err)
		err = asc_comm_align(ms, n + 1, sh);
	if (!err && sh[me].used) {
		*shift_ns = sh[me].shift_ns;
		asc_info("align: rank %d's clock %+.1f us against rank %d's (%zu collective pairs, "
			 "spread %.1f us)\n",
			 v[0].rank, *shift_ns / 1e3, v[ref].rank, sh[me].used,
			 sh[me].spread_ns / 1e3);
	}
	for (i = 0; v && i <= n; i++) {
		asc_comm_free(&v[i].m);
		asc_corr_free(v[i].c);
	}
	free(v);
	free(ms);
	free(sh);
	return err;
}
