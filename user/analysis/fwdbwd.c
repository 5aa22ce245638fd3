// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fwdbwd.c - pairing forward ops with backward nodes by sequence number
 * (fwdbwd.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "analysis/fwdbwd.h"
#include "lib/hashmap.h"

/* One sequence number, in the order numbers first appear. */
struct slot {
	int64_t seq;
	long fwd, bwd; /* op indices, -1 none */
	int64_t fwd_ts, bwd_ts;
	uint32_t fwd_os_tid, bwd_os_tid;
};

/* The slot of o's number, added (in first-appearance order) if new; NULL on ENOMEM. */
static struct slot *slot_of(struct asc_u64map *index, struct slot **tab, size_t *n, size_t *cap,
			    const struct asc_fwdbwd_op *o)
{
	uint64_t i;

	if (asc_u64map_get(index, (uint64_t)o->seq, &i))
		return &(*tab)[i];
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct slot *nt = realloc(*tab, ncap * sizeof(*nt));

		if (!nt)
			return NULL;
		*tab = nt;
		*cap = ncap;
	}
	if (asc_u64map_put(index, (uint64_t)o->seq, *n))
		return NULL;
	(*tab)[*n] = (struct slot){ .seq = o->seq, .fwd = -1, .bwd = -1 };
	return &(*tab)[(*n)++];
}

long asc_fwdbwd_pairs(size_t nr_ops, const struct asc_fwdbwd_op *(*op)(size_t i, void *ctx),
		      void *ctx, struct asc_fwdbwd **out)
{
	struct asc_u64map index = { 0 }; /* seq -> tab index */
	struct slot *tab = NULL;
	size_t used = 0, cap = 0, i, n;
	struct asc_fwdbwd *res;

	*out = NULL;
	for (i = 0; i < nr_ops; i++) {
		const struct asc_fwdbwd_op *o = op(i, ctx);
		struct slot *s;

		if (!o || o->seq < 0)
			continue;
		s = slot_of(&index, &tab, &used, &cap, o);
		if (!s) {
			asc_u64map_free(&index);
			free(tab);
			return -ENOMEM;
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
	asc_u64map_free(&index);
	for (i = n = 0; i < used; i++)
		if (tab[i].fwd >= 0 && tab[i].bwd >= 0 && tab[i].fwd_os_tid != tab[i].bwd_os_tid)
			tab[n++] = tab[i];
	res = n ? malloc(n * sizeof(*res)) : NULL;
	if (n && !res) {
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
