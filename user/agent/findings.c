// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * findings.c - the agent's triggers, from the always-on counters alone:
 *
 * hang: a process that crossed a step boundary has not crossed another for
 *   max(3 x p99 of its last AGENT_RECENT step durations, --hang-min) seconds;
 *   active until its next step;
 * slow_step: a step since the last scan took more than --slow-factor x the
 *   median of the last AGENT_RECENT (at least 8; the BPF ring) AND more than
 *   that median + --slow-min seconds, and it is step --slow-warmup or later;
 *   seen exactly while in the ring, else through the histogram's bucket
 *   bounds; active until a scan whose new steps are none slow. The absolute
 *   excess and the warm-up keep a healthy job quiet: on a loaded machine a
 *   ~10 ms step is delayed by tens of ms (a factor, not a fault), and the
 *   first steps (setup, first launches) are slow by design;
 * alloc_failure: a device allocation (aclrtMalloc*) failed; active 60 s;
 * straggler: of the processes of one job (the job label) on this node with
 *   at least 8 step durations, one whose median step is more than
 *   --straggler-factor x the median of the others' medians; active while so.
 *
 * collective_hang: a thread of the process has been inside one Hccl op (the
 *   oldest call in progress, bpf/agent_maps.h hccl_inflight) for more than
 *   --hang-min seconds; the log line names the op, the call's index among that
 *   op's calls in the process, and the other processes of its job here that
 *   have returned from that call (peers that finished) and those that have not;
 *   active while the call lasts.
 *
 * Each start of a finding is one log line (warning) and one more in
 * ascbpf_findings_total{kind}; ascbpf_finding{kind} is 1 while active.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agent/agent.h"
#include "lib/log.h"

#define SLOW_MIN_SAMPLES 8
#define ALLOC_ACTIVE_S	 60.0

static const char *const names[AGENT_NR_FINDINGS] = { "hang", "slow_step", "alloc_failure",
						      "straggler", "collective_hang" };

const char *agent_finding_name(int kind)
{
	return kind >= 0 && kind < AGENT_NR_FINDINGS ? names[kind] : "?";
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Durations first..last-1 (still in the ring) sorted into out; their count. */
static size_t sorted_window(const struct agent_proc *p, uint64_t first, uint64_t last,
			    uint64_t *out)
{
	size_t n = 0;

	for (uint64_t k = first; k < last; k++)
		out[n++] = p->recent_ns[k % AGENT_RECENT];
	qsort(out, n, sizeof(*out), cmp_u64);
	return n;
}

static void start(struct agent_target *t, int kind)
{
	t->find[kind].active = 1;
	t->find[kind].episodes++;
}

static void check_hang(const struct agent *a, struct agent_target *t, double now,
		       uint64_t durations)
{
	uint64_t w[AGENT_RECENT];
	uint64_t lo = durations > AGENT_RECENT ? durations - AGENT_RECENT : 0;
	size_t n = sorted_window(&t->p, lo, durations, w);
	double p99 = n ? w[(n * 99 + 99) / 100 - 1] / 1e9 : 0;
	double thr = 3 * p99 > a->o.hang_min ? 3 * p99 : a->o.hang_min;
	double age = now - t->p.last_step_ns / 1e9;

	if (!t->p.steps || age <= thr) {
		t->find[AGENT_FIND_HANG].active = 0;
		return;
	}
	if (t->find[AGENT_FIND_HANG].active)
		return;
	start(t, AGENT_FIND_HANG);
	asc_warn("agent: finding hang: pid %d (job %s, rank %s): no step for %.1f s "
		 "(threshold %.1f s = max(3 x p99 %.3f s, %.0f s)) after step %llu\n",
		 t->pid, t->job, t->rank[0] ? t->rank : "-", age, thr, p99, a->o.hang_min,
		 (unsigned long long)t->p.steps - 1);
}

static const uint64_t bounds_ns[AGENT_NR_BOUNDS] = AGENT_BOUNDS_NS;

/*
 * The steps since the last scan: those still in the ring exactly, and every one through the
 * histogram's new counts (steps faster than the scan interval scroll out of the 32-entry
 * ring; a new count in a bucket whose lower bound is over k x the median is a slow step).
 * The median is the ring's (the last 32 steps).
 */
static void check_slow(const struct agent *a, struct agent_target *t, uint64_t durations)
{
	uint64_t w[AGENT_RECENT], worst = 0, lo_ns = 0;
	uint64_t lo = durations > AGENT_RECENT ? durations - AGENT_RECENT : 0;
	uint64_t k = t->durations_seen > lo ? t->durations_seen : lo;
	size_t n = sorted_window(&t->p, lo, durations, w);
	struct agent_finding *f = &t->find[AGENT_FIND_SLOW_STEP];
	double med = n ? (n % 2 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2]) / 2.0) : 0;
	double thr = a->o.slow_factor * med;
	/* the histogram's new counts are judged only when all of them are past the warm-up */
	int judge_hist = n >= SLOW_MIN_SAMPLES && t->durations_seen >= a->o.slow_warmup;

	if (durations == t->durations_seen)
		return;
	if (thr < med + a->o.slow_min * 1e9)
		thr = med + a->o.slow_min * 1e9;
	if (k < a->o.slow_warmup)
		k = a->o.slow_warmup;
	for (; n >= SLOW_MIN_SAMPLES && k < durations; k++)
		if (t->p.recent_ns[k % AGENT_RECENT] > thr &&
		    t->p.recent_ns[k % AGENT_RECENT] > worst)
			worst = t->p.recent_ns[k % AGENT_RECENT];
	for (int b = 1; judge_hist && b < AGENT_NR_BUCKETS; b++)
		if (t->p.step_bucket[b] > t->prev_bucket[b] && bounds_ns[b - 1] > thr)
			lo_ns = bounds_ns[b - 1];
	memcpy(t->prev_bucket, t->p.step_bucket, sizeof(t->prev_bucket));
	t->durations_seen = durations;
	if (!worst && !lo_ns) {
		f->active = 0;
		return;
	}
	if (f->active)
		return;
	start(t, AGENT_FIND_SLOW_STEP);
	if (worst >= lo_ns)
		asc_warn("agent: finding slow_step: pid %d (job %s, rank %s): a step took %.3f s, "
			 "%.1f x the median %.3f s of the last %zu\n",
			 t->pid, t->job, t->rank[0] ? t->rank : "-", worst / 1e9, worst / med,
			 med / 1e9, n);
	else
		asc_warn("agent: finding slow_step: pid %d (job %s, rank %s): a step took over "
			 "%.3f s, %.1f x the median %.3f s of the last %zu\n",
			 t->pid, t->job, t->rank[0] ? t->rank : "-", lo_ns / 1e9, lo_ns / med,
			 med / 1e9, n);
}

static void check_alloc(struct agent_target *t, double now)
{
	struct agent_finding *f = &t->find[AGENT_FIND_ALLOC_FAIL];

	if (t->p.alloc_failures > t->failures_seen) {
		if (f->active == 0)
			start(t, AGENT_FIND_ALLOC_FAIL);
		asc_warn("agent: finding alloc_failure: pid %d (job %s, rank %s): %llu device "
			 "allocation(s) failed at step %llu\n",
			 t->pid, t->job, t->rank[0] ? t->rank : "-",
			 (unsigned long long)(t->p.alloc_failures - t->failures_seen),
			 (unsigned long long)(t->p.steps ? t->p.steps - 1 : 0));
		t->failures_seen = t->p.alloc_failures;
		f->until = now + ALLOC_ACTIVE_S;
	}
	if (f->active && now >= f->until)
		f->active = 0;
}

/* Median of the target's last (up to AGENT_RECENT) step durations in s; 0 with fewer than 8. */
static double median_step(const struct agent_target *t)
{
	uint64_t w[AGENT_RECENT], durations = t->p.steps ? t->p.steps - 1 : 0;
	uint64_t lo = durations > AGENT_RECENT ? durations - AGENT_RECENT : 0;
	size_t n = sorted_window(&t->p, lo, durations, w);

	if (n < SLOW_MIN_SAMPLES)
		return 0;
	return (n % 2 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2]) / 2.0) / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void check_stragglers(const struct agent *a)
{
	double *med = calloc(a->nr_t + 1, sizeof(*med)),
	       *others = calloc(a->nr_t + 1, sizeof(*med));

	for (size_t i = 0; med && others && i < a->nr_t; i++)
		med[i] = a->t[i]->exited ? 0 : median_step(a->t[i]);
	for (size_t i = 0; med && others && i < a->nr_t; i++) {
		struct agent_target *t = a->t[i];
		struct agent_finding *f = &t->find[AGENT_FIND_STRAGGLER];
		size_t n = 0;
		double m;

		if (!med[i]) {
			f->active = 0;
			continue;
		}
		/* one job: the launcher's id; processes named by their command are not one job */
		for (size_t j = 0; t->job_from_env && j < a->nr_t; j++)
			if (j != i && med[j] && a->t[j]->job_from_env &&
			    !strcmp(a->t[j]->job, t->job))
				others[n++] = med[j];
		if (!n) {
			f->active = 0;
			continue;
		}
		qsort(others, n, sizeof(*others), cmp_double);
		m = n % 2 ? others[n / 2] : (others[n / 2 - 1] + others[n / 2]) / 2;
		if (med[i] <= a->o.straggler_factor * m) {
			f->active = 0;
			continue;
		}
		if (f->active)
			continue;
		start(t, AGENT_FIND_STRAGGLER);
		asc_warn("agent: finding straggler: pid %d (job %s, rank %s): median step %.3f s, "
			 "%.1f x the median %.3f s of the job's %zu other process(es) here\n",
			 t->pid, t->job, t->rank[0] ? t->rank : "-", med[i], med[i] / m, m, n);
	}
	free(med);
	free(others);
}

/* The counters of op in t (NULL: t has no such op). */
static const struct agent_hccl *hccl_of(const struct agent_target *t, const char *op)
{
	for (size_t i = 0; i < t->nr_hccl; i++)
		if (!strcmp(t->hccl[i].op, op))
			return &t->hccl[i].h;
	return NULL;
}

/*
 * "rank R (pid P), ..." of the other live processes of t's job that made calls of op and
 * whose call seq of it returned (returned != 0) or did not; "none" when there is none.
 */
static void peers_of(const struct agent *a, const struct agent_target *t, const char *op,
		     uint64_t seq, int returned, char *out, size_t len)
{
	size_t n = 0;

	out[0] = 0;
	for (size_t i = 0; i < a->nr_t && n + 48 < len; i++) {
		const struct agent_target *o = a->t[i];
		const struct agent_hccl *h;

		/*
		 * a peer has made calls of op (a helper process of the job maps libhccl too);
		 * a ranked process's peers are ranked: another job of the same name without
		 * ranks is not its peer
		 */
		if (o == t || o->exited || strcmp(o->job, t->job) || (t->rank[0] && !o->rank[0]) ||
		    !(h = hccl_of(o, op)) || !h->entered)
			continue;
		if ((h->returned > seq) != returned)
			continue;
		n += snprintf(out + n, len - n, "%s%s%s (pid %d)", n ? ", " : "",
			      o->rank[0] ? "rank " : "", o->rank[0] ? o->rank : "", o->pid);
	}
	if (!n)
		snprintf(out, len, "none");
}

static void check_coll_hang(const struct agent *a, struct agent_target *t, double now)
{
	struct agent_finding *f = &t->find[AGENT_FIND_COLL_HANG];
	char done[512], waiting[512];
	const char *op = "?";
	double age;

	if (!t->have_stuck || (age = now - t->stuck.enter_ns / 1e9) <= a->o.hang_min) {
		f->active = 0;
		return;
	}
	if (f->active)
		return;
	for (size_t i = 0; i < t->nr_hccl; i++)
		if (t->hccl[i].site == t->stuck.site)
			op = t->hccl[i].op;
	start(t, AGENT_FIND_COLL_HANG);
	peers_of(a, t, op, t->stuck.seq, 1, done, sizeof(done));
	peers_of(a, t, op, t->stuck.seq, 0, waiting, sizeof(waiting));
	asc_warn("agent: finding collective_hang: pid %d (job %s, rank %s): in %s call %llu for "
		 "%.1f s; returned from it: %s; not returned: %s\n",
		 t->pid, t->job, t->rank[0] ? t->rank : "-", op, (unsigned long long)t->stuck.seq,
		 age, done, waiting);
}

void agent_findings_check(struct agent *a, double now)
{
	check_stragglers(a);
	for (size_t i = 0; i < a->nr_t; i++) {
		struct agent_target *t = a->t[i];
		uint64_t durations = t->p.steps ? t->p.steps - 1 : 0;

		if (t->exited) {
			/* its last counts (read when it was found gone) are looked at once */
			t->find[AGENT_FIND_HANG].active = 0;
			t->find[AGENT_FIND_COLL_HANG].active = 0;
			if (!t->final_checked) {
				check_slow(a, t, durations);
				check_alloc(t, now);
				t->final_checked = 1;
			}
			continue;
		}
		check_hang(a, t, now, durations);
		check_coll_hang(a, t, now);
		check_slow(a, t, durations);
		check_alloc(t, now);
	}
}
