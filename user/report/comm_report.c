// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * comm_report.c - `ascbpf report JOBDIR` over every rank of a job: the
 * questions of a distributed job, answered from the ranks' HCCL records
 * (analysis/comm.h), all ranks on one time axis (the lowest rank's wall clock; the others'
 * shifted onto it from the collectives, analysis/comm_align.h):
 *
 *  - slow rank: per collective (group, seq) the rank the others waited for:
 *    every Notify_Wait names the peer it waits on (its dst rank), so the
 *    peer the other ranks' arrival waits (those before the first transfer:
 *    the Synchronization time) add up longest on is the one that arrived
 *    last (no clock shared by the cards needed; waits after a slow transfer
 *    are the slow link's, not a slow rank's), with the others' mean wait on
 *    it; overall the rank last most often.  A finding when one rank
 *    is last in at least half of the collectives and the others waited for
 *    it on average at least slow_rank_wait_share of the op's elapse time and
 *    at least slow_rank_wait_us.
 *  - slow link: bandwidth per (src, dst) rank pair and transport, all ops;
 *    a finding for a pair below slow_link_ratio of the median of its
 *    transport (with at least 3 pairs of that transport to compare).
 *  - per rank and step: step time, communication time, communication not
 *    overlapped by computation, and their shares (a section, no finding).
 *  - hang: per group the last collective seq each rank entered; when some
 *    ranks entered seq M and never completed it (its device tasks stopped)
 *    and others never entered it, or entered it on the host without issuing
 *    a task to the card (the call never returned), those never arrived: the
 *    culprit.
 *
 * Text, or one JSON object with --json ("job" key; keys may be added, not
 * renamed).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "ascbpf_events.h"
#include "analysis/comm.h"
#include "analysis/comm_align.h"
#include "analysis/correlate.h"
#include "capture/capture.h"
#include "lib/json_writer.h"
#include "lib/log.h"
#include "report/comm_report.h"

#define SLOW_RANK_WAIT_SHARE 0.10
#define SLOW_RANK_WAIT_US    20.0
#define SLOW_LINK_RATIO	     0.5
#define MAX_RANKS	     1024

struct rank {
	char path[4096];
	int32_t rank;
	struct asc_corr *c;
	struct asc_comm m;
	int ended;
	struct asc_comm_shift clock; /* its host clock against the lowest rank's (comm_align.h) */
};

struct job {
	struct rank *r;
	size_t n;
};

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && !strcmp(s + a - b, suf);
}

/* Capture files under dir, 3 levels deep: *.ascb, ascbpf-*.cap. */
static void scan(const char *dir, int depth, char (**paths)[4096], size_t *n)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		char p[4096];
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) >= (int)sizeof(p))
			continue;
		if (lstat(p, &st))
			continue;
		if (S_ISDIR(st.st_mode) && depth < 3) {
			scan(p, depth + 1, paths, n);
		} else if (S_ISREG(st.st_mode) &&
			   (ends_with(de->d_name, ".ascb") || (!strncmp(de->d_name, "ascbpf-", 7) &&
							       ends_with(de->d_name, ".cap")))) {
			char(*np)[4096] = realloc(*paths, (*n + 1) * sizeof(*np));

			if (!np)
				break;
			*paths = np;
			snprintf(np[*n], sizeof(np[*n]), "%s", p);
			(*n)++;
		}
	}
	closedir(d);
}

/* The rank of a capture (its PROCESS record), -1 unknown. */
static int32_t capture_rank(const char *path)
{
	struct asc_capture_reader *r = asc_capture_open(path);
	struct asc_comm_member *m = NULL;
	const void *rec;
	size_t size;
	int32_t rank = -1;

	if (!r)
		return -1;
	while (asc_capture_next(r, &rec, &size) > 0) {
		const struct asc_hdr *h = rec;

		if (h->type == ASC_REC_PROCESS && size >= sizeof(struct asc_process)) {
			rank = ((const struct asc_process *)rec)->rank;
			break;
		}
	}
	free(m);
	asc_capture_free(r);
	return rank;
}

int asc_rpt_job_captures(const char *dir, size_t *nranks)
{
	char(*paths)[4096] = NULL;
	int32_t seen[64];
	size_t n = 0, i, j, ns = 0;

	scan(dir, 0, &paths, &n);
	for (i = 0; i < n && ns < 64; i++) {
		int32_t rk = capture_rank(paths[i]);

		for (j = 0; j < ns && seen[j] != rk; j++)
			;
		if (j == ns && rk >= 0)
			seen[ns++] = rk;
	}
	free(paths);
	*nranks = ns;
	return 0;
}

static int align_job(struct job *job);

static int load_job(const char *dir, struct job *job)
{
	char(*paths)[4096] = NULL;
	size_t n = 0, i, j;
	int err = 0;

	memset(job, 0, sizeof(*job));
	scan(dir, 0, &paths, &n);
	job->r = calloc(n + 1, sizeof(*job->r));
	if (!job->r) {
		free(paths);
		return -ENOMEM;
	}
	for (i = 0; i < n && !err; i++) {
		int32_t rk = capture_rank(paths[i]);
		struct asc_capture_reader *r;
		struct rank *k;

		/* one capture per rank (run directories of one process hold the same one) */
		for (j = 0; j < job->n && job->r[j].rank != rk; j++)
			;
		if (rk < 0 || j < job->n)
			continue;
		r = asc_capture_open(paths[i]);
		if (!r) {
			asc_warn("report: cannot read %s: %s\n", paths[i], strerror(errno));
			continue;
		}
		k = &job->r[job->n];
		snprintf(k->path, sizeof(k->path), "%s", paths[i]);
		k->rank = rk;
		k->c = asc_corr_build(r);
		if (!k->c) {
			err = -ENOMEM;
		} else {
			k->ended = k->c->info.ended;
			err = asc_comm_build(r, k->c, &k->m);
			if (err == -ENOMEM)
				asc_corr_free(k->c);
			else
				err = 0, job->n++;
		}
		asc_capture_free(r);
	}
	free(paths);
	/* by rank */
	for (i = 1; i < job->n; i++)
		for (j = i; j > 0 && job->r[j - 1].rank > job->r[j].rank; j--) {
			struct rank t = job->r[j];

			job->r[j] = job->r[j - 1];
			job->r[j - 1] = t;
		}
	return err ? err : align_job(job);
}

/*
 * Puts every rank on the lowest rank's clock: the shifts from the
 * collectives, then each shifted rank read again with its wall times moved
 * (steps, kernels and HCCL ops alike, so a rank's own overlap is unchanged
 * and the cross-rank arrival spread is true time).
 */
static int align_job(struct job *job)
{
	const struct asc_comm **ms = calloc(job->n ? job->n : 1, sizeof(*ms));
	struct asc_comm_shift *sh = calloc(job->n ? job->n : 1, sizeof(*sh));
	size_t i;
	int err = ms && sh ? 0 : -ENOMEM;

	for (i = 0; !err && i < job->n; i++)
		ms[i] = &job->r[i].m;
	if (!err)
		err = asc_comm_align(ms, job->n, sh);
	for (i = 1; !err && i < job->n; i++) {
		struct rank *k = &job->r[i];
		struct asc_capture_reader *r;
		struct asc_corr *c;

		k->clock = sh[i];
		if (!sh[i].used || !sh[i].shift_ns)
			continue;
		r = asc_capture_open(k->path);
		c = r ? asc_corr_build_shifted(r, sh[i].shift_ns) : NULL;
		if (!c) {
			err = r ? -ENOMEM : -errno;
		} else {
			asc_comm_free(&k->m);
			asc_corr_free(k->c);
			k->c = c;
			err = asc_comm_build(r, c, &k->m);
		}
		asc_capture_free(r);
	}
	free(ms);
	free(sh);
	return err;
}

static void free_job(struct job *job)
{
	size_t i;

	for (i = 0; i < job->n; i++) {
		asc_comm_free(&job->r[i].m);
		asc_corr_free(job->r[i].c);
	}
	free(job->r);
}

static const char *op_group(const struct rank *k, const struct asc_comm_op *o)
{
	return o->group >= 0 ? k->m.groups[o->group].name : "";
}

/* The op of rank k in (group, seq), or NULL. */
static const struct asc_comm_op *find_op(const struct rank *k, const char *group, uint64_t seq)
{
	size_t i;

	for (i = 0; i < k->m.nr_ops; i++)
		if (k->m.ops[i].seq == seq && !strcmp(op_group(k, &k->m.ops[i]), group))
			return &k->m.ops[i];
	return NULL;
}

/* ---- slow rank ---- */

struct coll {
	const char *group, *name;
	uint64_t seq;
	int32_t last;	       /* rank the others' Notify_Waits waited on longest */
	double spread_us;      /* latest - earliest device start of the op (card clocks) */
	double others_sync_us; /* the others' mean Notify_Wait time on it */
	double elapse_us;      /* mean elapse */
	size_t nranks;
};

static size_t collectives(const struct job *job, struct coll **out)
{
	const struct rank *k0 = job->n ? &job->r[0] : NULL;
	struct coll *cs;
	double *blame;
	size_t n = 0, i, j;

	*out = NULL;
	if (!k0)
		return 0;
	cs = calloc(k0->m.nr_ops + 1, sizeof(*cs));
	if (!cs)
		return 0;
	blame = calloc(MAX_RANKS, sizeof(*blame));
	if (!blame) {
		free(cs);
		return 0;
	}
	for (i = 0; i < k0->m.nr_ops; i++) {
		const struct asc_comm_op *o0 = &k0->m.ops[i];
		const char *g = op_group(k0, o0);
		int64_t first = INT64_MAX, last = INT64_MIN;
		double el = 0;
		size_t nr = 0, t;
		int32_t lr = -1;
		struct asc_comm_time tm;

		memset(blame, 0, MAX_RANKS * sizeof(*blame));
		for (j = 0; j < job->n; j++) {
			const struct rank *k = &job->r[j];
			const struct asc_comm_op *o = find_op(k, g, o0->seq);

			if (!o || !o->ntasks || (o->flags & ASC_COMM_OP_NO_END) ||
			    asc_comm_op_time(&k->m, (size_t)(o - k->m.ops), &tm))
				break;
			nr++;
			el += tm.elapse.v * 1000.0;
			/* arrival waits only: those before the first transfer (Synchronization) */
			for (t = o->task0; t < o->task0 + o->ntasks; t++) {
				const struct asc_comm_task *w = &k->m.tasks[t];

				if (!w->master)
					continue;
				if ((w->kind == ASC_CT_MEMCPY || w->kind == ASC_CT_REDUCE_INLINE) &&
				    w->link != ASC_LK_ON_CHIP)
					break;
				if (w->kind != ASC_CT_NOTIFY_WAIT || w->dst_rank >= MAX_RANKS)
					continue;
				blame[w->dst_rank] += (double)asc_ns_sub(w->end_ns, w->start_ns) /
						      1000.0;
			}
			if (o->start_ns > last)
				last = o->start_ns;
			if (o->start_ns < first)
				first = o->start_ns;
		}
		if (j < job->n || nr < 2)
			continue; /* not complete on every rank: the hang section */
		for (t = 0; t < MAX_RANKS; t++)
			if (blame[t] > 0 && (lr < 0 || blame[t] > blame[lr]))
				lr = (int32_t)t;
		/* group ranks are global ones in the world group (the one a DP job uses) */
		cs[n] = (struct coll){ g,
				       o0->name,
				       o0->seq,
				       lr,
				       (double)(last - first) / 1000.0,
				       lr >= 0 ? blame[lr] / (double)(nr - 1) : 0,
				       el / (double)nr,
				       nr };
		n++;
	}
	free(blame);
	*out = cs;
	return n;
}

struct slow {
	int found;
	int32_t rank;
	size_t last_count, ncoll;
	double avg_wait_us, avg_elapse_us;
};

static struct slow slow_rank(const struct coll *cs, size_t n)
{
	struct slow s = { 0 };
	size_t i, j, best = 0;
	int32_t br = -1;

	for (i = 0; i < n; i++) {
		size_t cnt = 0;

		for (j = 0; j < n; j++)
			cnt += cs[j].last == cs[i].last;
		if (cnt > best)
			best = cnt, br = cs[i].last;
	}
	s.rank = br;
	s.last_count = best;
	s.ncoll = n;
	for (i = 0; i < n; i++)
		if (cs[i].last == br) {
			s.avg_wait_us += cs[i].others_sync_us;
			s.avg_elapse_us += cs[i].elapse_us;
		}
	if (best) {
		s.avg_wait_us /= (double)best;
		s.avg_elapse_us /= (double)best;
	}
	s.found = n && 2 * best >= n && s.avg_wait_us >= SLOW_RANK_WAIT_US &&
		  s.avg_wait_us >= SLOW_RANK_WAIT_SHARE * s.avg_elapse_us;
	return s;
}

/* ---- links ---- */

struct link {
	uint32_t src, dst; /* global ranks */
	int transport;
	double size_mb, time_ms;
};

static size_t links(const struct job *job, struct link **out)
{
	struct link *l = NULL;
	size_t n = 0, i, j, k, nl;

	for (i = 0; i < job->n; i++) {
		const struct rank *r = &job->r[i];

		for (j = 0; j < r->m.nr_ops; j++) {
			struct asc_comm_link_info *li;
			const struct asc_comm_group *g = r->m.ops[j].group >= 0 ?
								 &r->m.groups[r->m.ops[j].group] :
								 NULL;

			if (asc_comm_op_links(&r->m, j, &li, &nl))
				continue;
			for (k = 0; k < nl; k++) {
				uint32_t src = (uint32_t)r->rank, dst = li[k].dst;
				size_t x;

				if (li[k].src == li[k].dst)
					continue; /* local copies */
				/* group ranks to global ones: only the world group maps 1:1 */
				if (g && g->rank >= 0 && (uint32_t)g->rank != (uint32_t)r->rank)
					continue;
				for (x = 0; x < n; x++)
					if (l[x].src == src && l[x].dst == dst &&
					    l[x].transport == li[k].transport)
						break;
				if (x == n) {
					struct link *nw = realloc(l, (n + 1) * sizeof(*nw));

					if (!nw)
						break;
					l = nw;
					l[n++] = (struct link){ src, dst, li[k].transport, 0, 0 };
				}
				l[x].size_mb += li[k].size_mb;
				l[x].time_ms += li[k].time_ms;
			}
			free(li);
		}
	}
	*out = l;
	return n;
}

static double link_bw(const struct link *l)
{
	return l->time_ms > 0 ? l->size_mb / l->time_ms : 0; /* MB/ms = GB/s */
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median bandwidth of the links of transport tp; *count: how many. */
static double median_bw(const struct link *l, size_t n, int tp, size_t *count)
{
	double *v = malloc((n + 1) * sizeof(*v)), m;
	size_t i, k = 0;

	if (!v)
		return 0;
	for (i = 0; i < n; i++)
		if (l[i].transport == tp)
			v[k++] = link_bw(&l[i]);
	qsort(v, k, sizeof(*v), dcmp);
	m = k ? (k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2) : 0;
	free(v);
	*count = k;
	return m;
}

/* ---- steps: communication share ---- */

struct stepinfo {
	int32_t rank;
	uint64_t step;
	double step_us, comm_us, nov_us;
};

static int span_cmp(const void *a, const void *b)
{
	const struct asc_span64 *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

/* Length of the union of a in [s0, s1) less the union of b. */
static int64_t minus_len(struct asc_span64 *a, size_t na, struct asc_span64 *b, size_t nb,
			 int64_t s0, int64_t s1)
{
	int64_t sum = 0;
	size_t i, j;

	qsort(a, na, sizeof(*a), span_cmp);
	qsort(b, nb, sizeof(*b), span_cmp);
	for (i = 0; i < na; i++) {
		int64_t s = a[i].s > s0 ? a[i].s : s0, e = a[i].e < s1 ? a[i].e : s1;

		for (j = 0; j < nb && s < e; j++) {
			if (b[j].e <= s || b[j].s >= e)
				continue;
			if (b[j].s > s)
				sum = asc_ns_add(sum, asc_ns_sub(b[j].s, s));
			s = b[j].e;
		}
		if (e > s)
			sum = asc_ns_add(sum, asc_ns_sub(e, s));
	}
	return sum;
}

static size_t step_infos(const struct job *job, struct stepinfo **out)
{
	struct stepinfo *si = NULL;
	size_t n = 0, i, s, j;

	for (i = 0; i < job->n; i++) {
		const struct rank *k = &job->r[i];
		const struct asc_corr *c = k->c;
		struct asc_span64 *comm = NULL, *comp = NULL;
		size_t ncomm = 0, ncomp = 0;

		if (asc_comm_spans(&k->m, k->m.nr_ops ? k->m.ops[0].device : 0, &comm, &ncomm))
			continue;
		comp = malloc((c->nr_kernels + 1) * sizeof(*comp));
		if (!comp) {
			free(comm);
			continue;
		}
		for (j = 0; j < c->nr_kernels; j++)
			if (c->kernels[j].flags & ASC_CORR_K_COMPUTE)
				comp[ncomp++] = (struct asc_span64){ c->kernels[j].start_ns,
								     c->kernels[j].end_ns };
		for (s = 0; s < c->nr_steps; s++) {
			const struct asc_corr_step *st = &c->steps[s];
			struct stepinfo *ns = realloc(si, (n + 1) * sizeof(*ns));
			struct asc_span64 none;

			if (!ns)
				break;
			si = ns;
			si[n].rank = k->rank;
			si[n].step = st->step;
			si[n].step_us = (double)asc_ns_sub(st->end_ns, st->start_ns) / 1000.0;
			si[n].comm_us = (double)minus_len(comm, ncomm, &none, 0, st->start_ns,
							  st->end_ns) /
					1000.0;
			si[n].nov_us = (double)minus_len(comm, ncomm, comp, ncomp, st->start_ns,
							 st->end_ns) /
				       1000.0;
			n++;
		}
		free(comm);
		free(comp);
	}
	*out = si;
	return n;
}

/* ---- hang ---- */

struct hang {
	int found;
	const char *group;
	uint64_t seq; /* the collective some never arrived at */
	int32_t culprits[64];
	size_t nculprits;
	int64_t last_seq[MAX_RANKS]; /* per job rank index: last seq entered, -1 none */
	int stuck[MAX_RANKS];	     /* its last op: 0 completed, 1 stuck on the card, 2 entered
					 * on the host but never issued to the card */
};

static void find_hang(const struct job *job, struct hang *h)
{
	size_t i, j, g;

	memset(h, 0, sizeof(*h));
	/* per group of rank 0's view (every rank of a DP job is in it) */
	for (g = 0; job->n && g < job->r[0].m.nr_groups && !h->found; g++) {
		const char *gn = job->r[0].m.groups[g].name;
		int64_t maxs = -1;
		int any_stuck = 0;

		for (i = 0; i < job->n && i < MAX_RANKS; i++) {
			const struct rank *k = &job->r[i];

			h->last_seq[i] = -1;
			h->stuck[i] = 0;
			for (j = 0; j < k->m.nr_ops; j++) {
				const struct asc_comm_op *o = &k->m.ops[j];

				if (strcmp(op_group(k, o), gn) || (int64_t)o->seq < h->last_seq[i])
					continue;
				h->last_seq[i] = (int64_t)o->seq;
				/* 2: entered on the host, nothing issued to the card */
				h->stuck[i] = !(o->flags & ASC_COMM_OP_NO_END) ? 0 :
					      !o->ntasks && !o->host_end_ns    ? 2 :
										 1;
			}
			if (h->last_seq[i] > maxs)
				maxs = h->last_seq[i];
		}
		for (i = 0; i < job->n && i < MAX_RANKS; i++)
			any_stuck |= h->last_seq[i] == maxs && h->stuck[i] == 1;
		if (!any_stuck)
			continue;
		h->group = gn;
		h->seq = (uint64_t)maxs;
		for (i = 0; i < job->n && i < MAX_RANKS; i++)
			if ((h->last_seq[i] < maxs || h->stuck[i] == 2) && h->nculprits < 64)
				h->culprits[h->nculprits++] = job->r[i].rank;
		h->found = 1;
	}
}

/* ---- rendering ---- */

static const char *tp_name(int tp)
{
	return asc_comm_matrix_transport(tp);
}

static void render_json(struct asc_out *o, const struct job *job, const struct coll *cs, size_t ncs,
			const struct slow *sr, const struct link *l, size_t nl,
			const struct stepinfo *si, size_t nsi, const struct hang *h)
{
	struct asc_jw w;
	size_t i, k, cnt;

	asc_jw_init(&w, o);
	asc_jw_open(&w, NULL, '{');
	asc_jw_open(&w, "job", '{');
	asc_jw_open(&w, "ranks", '[');
	for (i = 0; i < job->n; i++) {
		asc_jw_open(&w, NULL, '{');
		asc_jw_int(&w, "rank", job->r[i].rank);
		asc_jw_str(&w, "capture", job->r[i].path);
		asc_jw_int(&w, "collectives", (int64_t)job->r[i].m.nr_ops);
		asc_jw_bool(&w, "ended", job->r[i].ended);
		/* the shift put on its wall times, and the collectives' residual after it */
		asc_jw_num(&w, "clock_shift_us", job->r[i].clock.shift_ns / 1e3);
		asc_jw_num(&w, "clock_spread_us", job->r[i].clock.spread_ns / 1e3);
		asc_jw_int(&w, "clock_pairs", (int64_t)job->r[i].clock.used);
		if (i < MAX_RANKS && h->group) {
			asc_jw_int(&w, "last_seq", h->last_seq[i]);
			asc_jw_bool(&w, "stuck", h->stuck[i] == 1);
			asc_jw_str(&w, "last_state",
				   h->stuck[i] == 2 ? "host" :
				   h->stuck[i]	    ? "device" :
						      "completed");
		}
		asc_jw_close(&w, '}');
	}
	asc_jw_close(&w, ']');
	asc_jw_open(&w, "findings", '[');
	if (sr->found) {
		asc_jw_open(&w, NULL, '{');
		asc_jw_str(&w, "id", "slow_rank");
		asc_jw_int(&w, "rank", sr->rank);
		asc_jw_int(&w, "last_in", (int64_t)sr->last_count);
		asc_jw_int(&w, "collectives", (int64_t)sr->ncoll);
		asc_jw_num(&w, "others_wait_us", sr->avg_wait_us);
		asc_jw_num(&w, "elapse_us", sr->avg_elapse_us);
		asc_jw_close(&w, '}');
	}
	for (i = 0; i < nl; i++) {
		double med = median_bw(l, nl, l[i].transport, &cnt);

		if (cnt < 3 || link_bw(&l[i]) >= SLOW_LINK_RATIO * med)
			continue;
		asc_jw_open(&w, NULL, '{');
		asc_jw_str(&w, "id", "slow_link");
		asc_jw_int(&w, "src", l[i].src);
		asc_jw_int(&w, "dst", l[i].dst);
		asc_jw_str(&w, "transport", tp_name(l[i].transport));
		asc_jw_num(&w, "bandwidth_gbps", link_bw(&l[i]));
		asc_jw_num(&w, "median_gbps", med);
		asc_jw_close(&w, '}');
	}
	if (h->found) {
		asc_jw_open(&w, NULL, '{');
		asc_jw_str(&w, "id", "hang");
		asc_jw_str(&w, "group", h->group);
		asc_jw_int(&w, "seq", (int64_t)h->seq);
		asc_jw_open(&w, "never_arrived", '[');
		for (k = 0; k < h->nculprits; k++)
			asc_jw_int(&w, NULL, h->culprits[k]);
		asc_jw_close(&w, ']');
		asc_jw_close(&w, '}');
	}
	asc_jw_close(&w, ']');
	asc_jw_open(&w, "collectives", '[');
	for (i = 0; i < ncs; i++) {
		asc_jw_open(&w, NULL, '{');
		asc_jw_str(&w, "group", cs[i].group);
		asc_jw_int(&w, "seq", (int64_t)cs[i].seq);
		asc_jw_str(&w, "name", cs[i].name);
		asc_jw_int(&w, "last_rank", cs[i].last);
		asc_jw_num(&w, "arrival_spread_us", cs[i].spread_us);
		asc_jw_num(&w, "others_wait_us", cs[i].others_sync_us);
		asc_jw_num(&w, "elapse_us", cs[i].elapse_us);
		asc_jw_close(&w, '}');
	}
	asc_jw_close(&w, ']');
	asc_jw_open(&w, "links", '[');
	for (i = 0; i < nl; i++) {
		asc_jw_open(&w, NULL, '{');
		asc_jw_int(&w, "src", l[i].src);
		asc_jw_int(&w, "dst", l[i].dst);
		asc_jw_str(&w, "transport", tp_name(l[i].transport));
		asc_jw_num(&w, "size_mb", l[i].size_mb);
		asc_jw_num(&w, "time_ms", l[i].time_ms);
		asc_jw_num(&w, "bandwidth_gbps", link_bw(&l[i]));
		asc_jw_close(&w, '}');
	}
	asc_jw_close(&w, ']');
	asc_jw_open(&w, "steps", '[');
	for (i = 0; i < nsi; i++) {
		asc_jw_open(&w, NULL, '{');
		asc_jw_int(&w, "rank", si[i].rank);
		asc_jw_int(&w, "step", (int64_t)si[i].step);
		asc_jw_num(&w, "step_us", si[i].step_us);
		asc_jw_num(&w, "communication_us", si[i].comm_us);
		asc_jw_num(&w, "not_overlapped_us", si[i].nov_us);
		asc_jw_num(&w, "communication_share",
			   si[i].step_us > 0 ? si[i].comm_us / si[i].step_us : 0);
		asc_jw_num(&w, "not_overlapped_share",
			   si[i].step_us > 0 ? si[i].nov_us / si[i].step_us : 0);
		asc_jw_close(&w, '}');
	}
	asc_jw_close(&w, ']');
	asc_jw_close(&w, '}');
	asc_jw_close(&w, '}');
	asc_out_putc(o, '\n');
}

static void render_text(struct asc_out *o, const struct job *job, const struct coll *cs, size_t ncs,
			const struct slow *sr, const struct link *l, size_t nl,
			const struct stepinfo *si, size_t nsi, const struct hang *h)
{
	size_t i, k, cnt, nf = 0;

	asc_out_printf(o,
		       "ascbpf report: job of %zu ranks, %zu collectives complete on every "
		       "rank\n\nFindings\n",
		       job->n, ncs);
	if (sr->found) {
		nf++;
		asc_out_printf(o,
			       "  [slow_rank] rank %d is the one the others wait for: last to "
			       "arrive in %zu of %zu collectives, the others waited %.1f us for it "
			       "on average (op %.1f us)\n",
			       sr->rank, sr->last_count, sr->ncoll, sr->avg_wait_us,
			       sr->avg_elapse_us);
	}
	for (i = 0; i < nl; i++) {
		double med = median_bw(l, nl, l[i].transport, &cnt);

		if (cnt < 3 || link_bw(&l[i]) >= SLOW_LINK_RATIO * med)
			continue;
		nf++;
		asc_out_printf(o,
			       "  [slow_link] rank %u -> rank %u (%s): %.3f GB/s, the median "
			       "%s link %.3f GB/s\n",
			       l[i].dst, l[i].src, tp_name(l[i].transport), link_bw(&l[i]),
			       tp_name(l[i].transport), med);
	}
	if (h->found) {
		nf++;
		asc_out_printf(o, "  [hang] collective %llu of group %s: rank(s)",
			       (unsigned long long)h->seq, h->group);
		for (k = 0; k < h->nculprits; k++)
			asc_out_printf(o, " %d", h->culprits[k]);
		asc_out_puts(o, " never arrived; the others entered it and wait\n");
	}
	if (!nf)
		asc_out_puts(o, "  none\n");
	if (h->group) {
		asc_out_puts(o, "\nLast collective entered per rank\n");
		for (i = 0; i < job->n && i < MAX_RANKS; i++)
			asc_out_printf(o, "  rank %d: seq %lld%s\n", job->r[i].rank,
				       (long long)h->last_seq[i],
				       h->stuck[i] == 2 ? " (entered, never issued to the card)" :
				       h->stuck[i]	? " (never completed)" :
							  "");
	}
	asc_out_printf(o,
		       "\nClocks (shift onto rank %d's clock from the collectives, us; "
		       "residual)\n",
		       job->n ? job->r[0].rank : -1);
	for (i = 1; i < job->n; i++)
		if (job->r[i].clock.used)
			asc_out_printf(o, "  rank %d: %+.1f (%.1f, %zu collective pairs)\n",
				       job->r[i].rank, job->r[i].clock.shift_ns / 1e3,
				       job->r[i].clock.spread_ns / 1e3, job->r[i].clock.used);
	asc_out_puts(o, "\nCollectives (last to arrive, arrival spread, others' wait)\n");
	for (i = 0; i < ncs && i < 20; i++)
		asc_out_printf(o, "  %s seq %llu: rank %d, %.1f us, %.1f us\n", cs[i].name,
			       (unsigned long long)cs[i].seq, cs[i].last, cs[i].spread_us,
			       cs[i].others_sync_us);
	asc_out_puts(o, "\nLinks (receiving rank <- sending rank, transport, GB/s)\n");
	for (i = 0; i < nl; i++)
		asc_out_printf(o, "  %u <- %u %s %.3f\n", l[i].src, l[i].dst,
			       tp_name(l[i].transport), link_bw(&l[i]));
	asc_out_puts(o, "\nSteps (rank, step, step us, communication us / share, not "
			"overlapped us / share)\n");
	for (i = 0; i < nsi; i++)
		asc_out_printf(o, "  %d %llu %.1f %.1f %.1f%% %.1f %.1f%%\n", si[i].rank,
			       (unsigned long long)si[i].step, si[i].step_us, si[i].comm_us,
			       si[i].step_us > 0 ? 100 * si[i].comm_us / si[i].step_us : 0,
			       si[i].nov_us,
			       si[i].step_us > 0 ? 100 * si[i].nov_us / si[i].step_us : 0);
}

int asc_rpt_job(const char *dir, int json)
{
	struct job job;
	struct coll *cs = NULL;
	struct link *l = NULL;
	struct stepinfo *si = NULL;
	struct hang *h = calloc(1, sizeof(*h));
	struct slow sr;
	struct asc_out o;
	size_t ncs, nl, nsi;
	int err;

	if (!h)
		return -ENOMEM;
	err = load_job(dir, &job);
	if (err) {
		asc_err("report: reading the job in %s: %s\n", dir, strerror(-err));
		free(h);
		return err;
	}
	ncs = collectives(&job, &cs);
	sr = slow_rank(cs, ncs);
	nl = links(&job, &l);
	nsi = step_infos(&job, &si);
	find_hang(&job, h);
	err = asc_out_fdopen(&o, 1);
	if (!err) {
		if (json)
			render_json(&o, &job, cs, ncs, &sr, l, nl, si, nsi, h);
		else
			render_text(&o, &job, cs, ncs, &sr, l, nl, si, nsi, h);
		err = asc_out_close(&o);
	}
	free(cs);
	free(l);
	free(si);
	free(h);
	free_job(&job);
	return err;
}
