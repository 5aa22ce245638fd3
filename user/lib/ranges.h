/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ranges.h - which address range of a sorted table holds an address (the
 * vtables of autograd nodes: discovery/seqnr.c at trace time,
 * analysis/corr_names.c from the NODE_CLASS records).
 */
#ifndef __ASCBPF_RANGES_H
#define __ASCBPF_RANGES_H

#include <stddef.h>
#include <stdint.h>

/*
 * Of n items `stride` bytes apart from base, each with a uint64_t start at
 * byte offset start_off and a uint64_t size at size_off, in ascending order
 * of start and not overlapping: the index of the last one that starts at or
 * below addr if [start, start + size) holds addr, else -1.
 */
static inline long asc_range_find(const void *base, size_t n, size_t stride, size_t start_off,
				  size_t size_off, uint64_t addr)
{
	const char *b = base;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (*(const uint64_t *)(b + mid * stride + start_off) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	lo--;
	b += lo * stride;
	return addr - *(const uint64_t *)(b + start_off) < *(const uint64_t *)(b + size_off) ?
		       (long)lo :
		       -1;
}

#endif /* __ASCBPF_RANGES_H */
