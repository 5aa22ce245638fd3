// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * opguard.c - aten ops used so far, from their static-initialisation guards
 * in the target's memory (opguard.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include "arch/guard.h"
#include "discovery/elfsym.h"
#include "discovery/opguard.h"
#include "discovery/probes.h"
#include "lib/procmaps.h"

#define OPS_CALL_GLOB "_ZN2at4_ops*4callE*"
#define IOV_BATCH     1024 /* UIO_MAXIOV */

bool asc_opguard_site(const struct asc_probe_site *s)
{
	return s->spec && s->spec->kind == ASC_PK_ATEN_OP && s->sym &&
	       asc_glob_match(OPS_CALL_GLOB, s->sym);
}

/* Where file offset off of the file at path (host view) is mapped in maps; 0 if not. */
static uint64_t mapped_at(const struct asc_maps *maps, const char *path, uint64_t off)
{
	struct stat st;
	size_t i;

	if (stat(path, &st))
		return 0;
	for (i = 0; i < maps->nr; i++) {
		const struct asc_map_entry *e = &maps->entries[i];

		if (e->inode == (uint64_t)st.st_ino && e->offset <= off &&
		    off < e->offset + (e->end - e->start))
			return e->start + (off - e->offset);
	}
	return 0;
}

static int guard_of(const struct asc_probe_site *s, const struct asc_maps *maps, uint64_t *addr)
{
	uint8_t code[ASC_GUARD_SCAN_BYTES];
	struct asc_elf *elf = NULL;
	uint64_t vaddr, guard, at;
	int n, err;

	err = asc_elf_open_lazy(s->path, &elf);
	if (err)
		return err;
	err = asc_elf_off_to_vaddr(elf, s->func_offset, &vaddr);
	n = err ? err : asc_elf_read(elf, vaddr, code, sizeof(code));
	err = n < 0 ? n : asc_static_guard(asc_elf_machine(elf), code, (size_t)n, vaddr, &guard);
	asc_elf_close(elf);
	if (err)
		return err;
	at = mapped_at(maps, s->path, s->func_offset);
	if (!at)
		return -ENOENT;
	*addr = guard - vaddr + at; /* the library's load bias added */
	return 0;
}

int asc_opguards_build(const struct asc_probe_plan *plan, size_t first, struct asc_opguards *g)
{
	struct asc_maps maps;
	size_t i;
	int err;

	memset(g, 0, sizeof(*g));
	g->pid = plan->pid;
	err = asc_maps_read(plan->pid, &maps);
	if (err)
		return err;
	g->site = calloc(plan->nr_sites + 1, sizeof(*g->site));
	g->addr = calloc(plan->nr_sites + 1, sizeof(*g->addr));
	if (!g->site || !g->addr) {
		asc_maps_free(&maps);
		asc_opguards_free(g);
		return -ENOMEM;
	}
	for (i = first; i < plan->nr_sites; i++) {
		if (!asc_opguard_site(&plan->sites[i]))
			continue;
		g->nr_ops++;
		if (guard_of(&plan->sites[i], &maps, &g->addr[g->n])) {
			g->nr_undecoded++;
			continue;
		}
		g->site[g->n++] = i;
	}
	asc_maps_free(&maps);
	return 0;
}

int asc_opguards_read(const struct asc_opguards *g, uint8_t *set)
{
	struct iovec local[IOV_BATCH], remote[IOV_BATCH];
	size_t i = 0, k, n;
	ssize_t got;

	while (i < g->n) {
		n = g->n - i < IOV_BATCH ? g->n - i : IOV_BATCH;
		for (k = 0; k < n; k++) {
			set[i + k] = 0;
			local[k].iov_base = &set[i + k];
			local[k].iov_len = 1;
			remote[k].iov_base = (void *)(uintptr_t)g->addr[i + k];
			remote[k].iov_len = 1;
		}
		got = process_vm_readv(g->pid, local, n, remote, n, 0);
		if (got < 0 && errno == ESRCH)
			return -ESRCH;
		if (got < 0)
			got = 0;
		/* reads stop at the first guard that faults: it counts as set, go on after it */
		if ((size_t)got < n)
			set[i + (size_t)got] = 1;
		for (k = 0; k < (size_t)got; k++)
			set[i + k] = set[i + k] != 0;
		i += (size_t)got < n ? (size_t)got + 1 : n;
	}
	return 0;
}

void asc_opguards_free(struct asc_opguards *g)
{
	free(g->site);
	free(g->addr);
	memset(g, 0, sizeof(*g));
}
