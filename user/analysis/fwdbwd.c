// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fwdbwd.c - pairing forward ops with backward nodes by sequence number
 * (fwdbwd.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "analysis/fwdbwd.h"

struct slot {
	int64_t seq;		/* -1: empty */
	long fwd, bwd;		/* op indices, -1 none */
	int64_t fwd_ts, bwd_ts;
	uint32_t fwd_os_tid, bwd_os_tid;
	size_t order;
};

static int cmp_order(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return x->order < y->order ? -1 : x->order > y->order;
}

long asc_fwdbwd_pairs(size_t nr_ops, const struct asc_fwdbwd_op *(*op)(size_t i, void *ctx),
		      void *ctx, struct asc_fwdbwd **out)
{
	size_t cap = 64, used = 0, i, k, n = 0;
	struct slot *tab = malloc(cap * sizeof(*tab));
	struct asc_fwdbwd *res;

	*out = NULL;
	if (!tab)
		return -ENOMEM;
	for (k = 0; k < cap; k++)
		tab[k].seq = -1;
	for (i = 0; i < nr_ops; i++) {
		const struct asc_fwdbwd_op *o = op(i, ctx);
		struct slot *s;
		size_t h;

		if (!o || o->seq < 0)
			continue;
		if ((used + 1) * 2 > cap) {	/* grow and rehash */
			size_t ncap = cap * 2;
			struct slot *nt = malloc(ncap * sizeof(*nt));

			if (!nt) {
				free(tab);
				return -ENOMEM;
			}
			for (k = 0; k < ncap; k++)
				nt[k].seq = -1;
			for (k = 0; k < cap; k++) {
				if (tab[k].seq < 0)
					continue;
				h = (uint64_t)tab[k].seq * 0x9e3779b97f4a7c15ull >> 7;
				while (nt[h & (ncap - 1)].seq >= 0)
					h++;
				nt[h & (ncap - 1)] = tab[k];
			}
			free(tab);
			tab = nt;
			cap = ncap;
		}
		h = (uint64_t)o->seq * 0x9e3779b97f4a7c15ull >> 7;
		while (tab[h & (cap - 1)].seq >= 0 && tab[h & (cap - 1)].seq != o->seq)
			h++;
		s = &tab[h & (cap - 1)];
		if (s->seq < 0) {
			s->seq = o->seq;
			s->fwd = s->bwd = -1;
			s->order = used++;
		}
		if (o->fwd_tid == 0 && (s->fwd < 0 || s->fwd_ts < o->start_ns)) {
			s->fwd = i;
			s->fwd_ts = o->start_ns;
			s->fwd_os_tid = o->tid;
		} else if (o->fwd_tid != 0 && (s->bwd < 0 || s->bwd_ts < o->start_ns)) {
			s->bwd = i;
			s->bwd_ts = o->start_ns;
			s->bwd_os_tid = o->tid;
		}
	}
	for (i = k = 0; i < cap; i++)
		if (tab[i].seq >= 0 && tab[i].fwd >= 0 && tab[i].bwd >= 0 &&
		    tab[i].fwd_os_tid != tab[i].bwd_os_tid)
			tab[k++] = tab[i];
	n = k;
	if (!n) {
		free(tab);
		return 0;
	}
	qsort(tab, n, sizeof(*tab), cmp_order);
	res = malloc(n * sizeof(*res));
	if (!res) {
		free(tab);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		res[i].seq = tab[i].seq;
		res[i].fwd = tab[i].fwd;
		res[i].bwd = tab[i].bwd;
	}
	free(tab);
	*out = res;
	return n;
}
