/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * opguard.h - which aten ops a process has called so far, read from outside
 * without stopping it: the static-initialisation guard of each probed
 * at::_ops::<op>::call (arch/guard.h) is non-zero once the op was called.
 *
 * For kernels without uprobe_multi (user/trace/lazyops.c): every probe there
 * is a perf-event uprobe whose detach waits for RCU grace periods, one after
 * another, so only the ops a job really uses are attached.
 *
 *	asc_opguards_build(plan, first, &g);	// the sites' guards, in the target
 *	asc_opguards_read(&g, set);		// set[i]: guard i is set (op used)
 *	asc_opguards_free(&g);
 *
 * Functions return 0 / -errno.
 */
#ifndef __ASCBPF_OPGUARD_H
#define __ASCBPF_OPGUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct asc_probe_plan;
struct asc_probe_site;

struct asc_opguards {
	pid_t pid;
	size_t n;	     /* sites with a guard */
	size_t *site;	     /* [n] index into plan->sites */
	uint64_t *addr;	     /* [n] the guard's address in the target */
	size_t nr_ops;	     /* at::_ops::*::call sites looked at */
	size_t nr_undecoded; /* of them without a guard found (to attach always) */
};

/* Whether the site is an at::_ops::<op>::call (the sites that have a guard). */
bool asc_opguard_site(const struct asc_probe_site *s);

/*
 * The guards of plan->sites[first..nr_sites) that asc_opguard_site() names,
 * at their addresses in plan->pid (its current maps).  -ESRCH: process gone.
 */
int asc_opguards_build(const struct asc_probe_plan *plan, size_t first, struct asc_opguards *g);

/*
 * Reads every guard's first byte (process_vm_readv, 1024 at a time): set[i]
 * = 1 when guard i is non-zero.  A guard that cannot be read counts as set
 * (its site is then attached: the safe side).  -ESRCH: process gone.
 */
int asc_opguards_read(const struct asc_opguards *g, uint8_t *set);

void asc_opguards_free(struct asc_opguards *g);

#endif /* __ASCBPF_OPGUARD_H */
