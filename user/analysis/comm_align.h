/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * comm_align.h - one time axis for the ranks of a job on several nodes.
 *
 * Each capture's wall clock is its host's CLOCK_REALTIME (ASC_REC_CLOCK):
 * exact within a node, off by the hosts' NTP error (milliseconds) between
 * nodes.  The collectives themselves say by how much: a Notify_Wait that
 * blocked (longer than its rank's shortest, which did not) ends when the
 * peer's matching Notify_Record ends (the k-th wait on a notify is satisfied
 * by the k-th record on it), so each such pairing of ranks i and j gives
 * shift_i - shift_j; the median per pair.  Ranks that never blocked on each
 * other fall back to their op ends (the last sync's waits end in the
 * peers' record order: a few us off).  The lowest rank is fixed at 0 and
 * the set grows by the rank with most pairings to it: every time then reads
 * on the lowest rank's host clock.  Ops that never ended (a hang), p2p ops
 * and collectives no other rank recorded are left out.
 */
#ifndef __ASCBPF_COMM_ALIGN_H
#define __ASCBPF_COMM_ALIGN_H

#include <stddef.h>
#include <stdint.h>

struct asc_comm;

struct asc_comm_shift {
	int64_t shift_ns;  /* add to the rank's wall times */
	int64_t spread_ns; /* median |residual| of its collectives after the shift */
	size_t used;	   /* (partner, collective) pairs it was estimated from (0: no shift) */
};

/*
 * Shifts of n ranks' views ms[0..n) (ms[0]: the reference, shift 0), into
 * out[n].  0 or -ENOMEM.
 */
int asc_comm_align(const struct asc_comm *const *ms, size_t n, struct asc_comm_shift *out);

/*
 * The shift of capture self among self and peers[0..n) (the lowest rank the
 * reference), from their HCCL records: 0 with *shift 0 when there is
 * nothing to align on; -errno for an unreadable capture.
 */
int asc_comm_capture_shift(const char *self, const char *const *peers, size_t n, int64_t *shift_ns);

#endif /* __ASCBPF_COMM_ALIGN_H */
