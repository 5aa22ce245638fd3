// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lazyops.c - without uprobe_multi (kernels before 6.6), only the aten ops a
 * process has used are attached.
 *
 * Why: there every probe is a perf-event uprobe, and each one's detach
 * waits for RCU grace periods under the kernel's event_mutex, one after
 * another (BENCHMARKS.md "Kernels": 247 s for the 3557 framework sites of
 * libtorch_cpu on 6.1, 71-142 ms a probe on 6.18).  A job calls a few
 * hundred of the ~3000 at::_ops::<op>::call functions.
 *
 * How: each such function's static-initialisation guard (arch/guard.h,
 * discovery/opguard.h) is non-zero once it was called.  At attach the guards
 * are read from the target (process_vm_readv, without stopping it): the ops
 * used so far are attached, the others are pending; every second the loop
 * reads the pending guards again and attaches the ops that became used.
 * The calls of an op first used after the attach, before the next check
 * (up to a second of them), are not captured: counted per process in the
 * end line and in CONFIG "aten_ops.late=N".  The autograd engine's per-class
 * apply() sites (ASC_PK_AUTOGRAD_APPLY, ~600) have no guard and are not
 * attached on this path: node ranges come from evaluate_function's span
 * (discovery/seqnr.h).  ASCBPF_ALL_OPS=1 attaches everything as before.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "discovery/opguard.h"
#include "lib/log.h"
#include "trace/trace_priv.h"

#define LAZY_EVERY_NS 1000000000ull /* pending guards read this often */

struct lazy_site {
	size_t plan, site;
	uint64_t addr; /* the guard in the target */
};

struct lazyops {
	struct lazy_site *pending;
	size_t nr_pending, cap;
	size_t ops;	  /* at::_ops::*::call sites planned */
	size_t at_start;  /* attached when planned (used, or no guard found) */
	size_t late;	  /* attached by a later check: first used after the attach */
	size_t undecoded; /* no guard found: attached always */
	size_t no_apply;  /* autograd apply() sites left out */
	uint64_t next_ns; /* the next check */
};

static int lazy_enabled(void)
{
	const char *e = getenv("ASCBPF_ALL_OPS");

	if (e && *e && strcmp(e, "0"))
		return 0;
	return !asc_uprobe_multi_supported();
}

static int pending_add(struct lazyops *lz, size_t plan, size_t site, uint64_t addr)
{
	if (lz->nr_pending == lz->cap) {
		size_t ncap = lz->cap ? 2 * lz->cap : 256;
		void *tmp = realloc(lz->pending, ncap * sizeof(*lz->pending));

		if (!tmp)
			return -ENOMEM;
		lz->pending = tmp;
		lz->cap = ncap;
	}
	lz->pending[lz->nr_pending++] = (struct lazy_site){ plan, site, addr };
	return 0;
}

static void config_line(struct target *tg, const char *text)
{
	pthread_mutex_lock(&capture_lock);
	if (tg->w)
		append_text(tg, ASC_REC_CONFIG, 0, text);
	pthread_mutex_unlock(&capture_lock);
}

/* Marks the guarded sites of plan idx that are unused as pending (mask 0). */
static int defer_unused(struct target *tg, size_t idx, const struct asc_opguards *g, uint8_t *mask,
			size_t *deferred)
{
	const struct asc_probe_plan *plan = &tg->plans[idx];
	uint8_t *set = calloc(g->n + 1, 1);
	size_t i;
	int err;

	if (!set)
		return -ENOMEM;
	err = asc_opguards_read(g, set);
	for (i = 0; !err && i < g->n; i++) {
		const struct asc_probe_site *s = &plan->sites[g->site[i]];

		if (set[i] || (idx && site_in_earlier_plan(tg, idx, s->path, s->attach_offset)))
			continue;
		err = pending_add(tg->lazy, idx, g->site[i], g->addr[i]);
		mask[g->site[i]] = 0;
		(*deferred)++;
	}
	free(set);
	return err;
}

/* Aten op sites of plan idx that no earlier plan of tg has (a rescan plans everything again). */
static size_t new_ops(const struct target *tg, size_t idx)
{
	const struct asc_probe_plan *plan = &tg->plans[idx];
	size_t i, n = 0;

	for (i = 0; i < plan->nr_sites; i++)
		n += asc_opguard_site(&plan->sites[i]) &&
		     !(idx && site_in_earlier_plan(tg, idx, plan->sites[i].path,
						   plan->sites[i].attach_offset));
	return n;
}

uint8_t *lazy_plan_mask(struct trace *t, struct target *tg, size_t idx)
{
	const struct asc_probe_plan *plan = &tg->plans[idx];
	size_t i, napply = 0, deferred = 0, nr_new;
	struct asc_opguards g;
	uint8_t *mask;
	char line[192];

	if (!lazy_enabled() || !(t->families & ASC_FAM_FRAMEWORK) || !plan->nr_sites)
		return NULL;
	nr_new = new_ops(tg, idx);
	if (!nr_new || asc_opguards_build(plan, 0, &g))
		return NULL; /* nothing new (earlier plans' sites are skipped), or attach all */
	for (i = 0; i < plan->nr_sites; i++)
		napply += plan->sites[i].spec && plan->sites[i].spec->kind == ASC_PK_AUTOGRAD_APPLY;
	mask = malloc(plan->nr_sites);
	if (!tg->lazy)
		tg->lazy = calloc(1, sizeof(*tg->lazy));
	if (!mask || !tg->lazy) {
		asc_opguards_free(&g);
		free(mask);
		return NULL;
	}
	memset(mask, 1, plan->nr_sites);
	for (i = 0; i < plan->nr_sites; i++)
		if (plan->sites[i].spec && plan->sites[i].spec->kind == ASC_PK_AUTOGRAD_APPLY)
			mask[i] = 0;
	if (defer_unused(tg, idx, &g, mask, &deferred)) {
		asc_opguards_free(&g);
		free(mask);
		return NULL;
	}
	tg->lazy->ops += nr_new;
	tg->lazy->undecoded += idx ? 0 : g.nr_undecoded; /* a rescan's are those of plan 0 */
	tg->lazy->at_start += nr_new - deferred;
	tg->lazy->no_apply += idx ? 0 : napply;
	tg->lazy->next_ns = now_ns(CLOCK_MONOTONIC) + LAZY_EVERY_NS;
	asc_info("trace: pid %d: no uprobe_multi: %zu of %zu aten ops attached (used so far, or "
		 "without a guard found: %zu), the others once used (checked every second); "
		 "autograd apply() sites left out\n",
		 tg->pid, nr_new - deferred, nr_new, g.nr_undecoded);
	snprintf(line, sizeof(line), "aten_ops.attach=used ops=%zu attached=%zu undecoded=%zu",
		 nr_new, nr_new - deferred, g.nr_undecoded);
	config_line(tg, line);
	asc_opguards_free(&g);
	return mask;
}

/* Reads tg's pending guards; attaches the ops that became used, plan by plan. */
static void lazy_check(struct trace *t, struct target *tg)
{
	struct lazyops *lz = tg->lazy;
	struct asc_opguards g = { .pid = tg->pid, .n = lz->nr_pending };
	uint8_t *set = calloc(lz->nr_pending + 1, 1), *mask = NULL;
	size_t i, j, k, now = 0;

	g.addr = calloc(lz->nr_pending + 1, sizeof(*g.addr));
	for (i = 0; g.addr && i < lz->nr_pending; i++)
		g.addr[i] = lz->pending[i].addr;
	if (!set || !g.addr || asc_opguards_read(&g, set))
		goto out;
	for (i = 0; i < lz->nr_pending; i++) {
		size_t plan = lz->pending[i].plan;

		if (!set[i] || set[i] == 2)
			continue;
		free(mask);
		mask = calloc(tg->plans[plan].nr_sites, 1);
		if (!mask)
			goto out;
		for (j = i; j < lz->nr_pending; j++)
			if (set[j] == 1 && lz->pending[j].plan == plan) {
				mask[lz->pending[j].site] = 1;
				set[j] = 2; /* taken */
				now++;
			}
		attach_sites(t, tg, plan, mask);
	}
	for (i = k = 0; i < lz->nr_pending; i++)
		if (set[i] != 2)
			lz->pending[k++] = lz->pending[i];
	lz->nr_pending = k;
	lz->late += now;
	if (now)
		asc_dbg("trace: pid %d: %zu more aten ops attached (first used since the last "
			"check), %zu pending\n",
			tg->pid, now, lz->nr_pending);
out:
	free(mask);
	free(set);
	free(g.addr);
}

void lazy_tick(struct trace *t)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	int i;

	for (i = 0; i < t->nr_targets; i++) {
		struct target *tg = &t->targets[i];

		if (!tg->lazy || !tg->lazy->nr_pending || tg->gone || now < tg->lazy->next_ns)
			continue;
		tg->lazy->next_ns = now + LAZY_EVERY_NS;
		lazy_check(t, tg);
	}
}

void lazy_report(struct trace *t)
{
	char line[160];
	int i;

	for (i = 0; i < t->nr_targets; i++) {
		struct target *tg = &t->targets[i];
		struct lazyops *lz = tg->lazy;

		if (!lz)
			continue;
		asc_info("trace: pid %d: aten ops: %zu attached at the start, %zu later once "
			 "first used (their calls before that, up to a second of them, are not "
			 "captured), %zu never used\n",
			 tg->pid, lz->at_start, lz->late, lz->nr_pending);
		snprintf(line, sizeof(line), "aten_ops.late=%zu unused=%zu", lz->late,
			 lz->nr_pending);
		config_line(tg, line);
	}
}

void lazy_free(struct target *tg)
{
	if (!tg->lazy)
		return;
	free(tg->lazy->pending);
	free(tg->lazy);
	tg->lazy = NULL;
}
