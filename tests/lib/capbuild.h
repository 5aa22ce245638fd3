/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * tests/lib/capbuild.h - hand-made captures for the converter's unit tests
 * (test_correlate, test_seqnr): one capture at a time is written between
 * capture_begin() and capture_corr(), record by record, each record's header
 * filled by hdr() for the traced process CAP_TGID.  Every failure is a cmocka
 * assertion (these run inside cmocka tests only).  The names are the ones
 * the tests always used, kept so that tests added beside them read alike.
 */
#ifndef __ASCBPF_CAPBUILD_H
#define __ASCBPF_CAPBUILD_H

#include <stdint.h>
#include "ascbpf_events.h"
#include "analysis/correlate.h"

#define CAP_TGID 100 /* the tgid of every record hdr() fills */

/* Starts the capture file path (one compressed stream); put() appends to it. */
void capture_begin(const char *path);
/* Closes the capture begun last and returns the converter's join of it (asc_corr_build). */
struct asc_corr *capture_corr(const char *path);
/* The writer of the capture being built (for writers of the code under test). */
struct asc_capture_writer *capture_writer(void);

/* Appends one record of h->size bytes. */
void put(const void *rec);
void hdr(struct asc_hdr *h, uint16_t type, uint16_t size, uint32_t tid, uint32_t probe,
	 uint64_t ts);
/* A PROBE record for sym in library "lib". */
void probe(uint32_t id, const char *sym, uint16_t layer, uint16_t kind);
/* A CLOCK record (ASC_CLOCK_START / _END): CLOCK_MONOTONIC mono is CLOCK_REALTIME realtime. */
void clock_rec(uint32_t which, uint64_t mono, uint64_t realtime);
/* A DEVCLOCK record: the device counter reads counter at mono and ticks freq_hz a second. */
void devclock(uint64_t mono, uint64_t counter, uint64_t freq_hz);
/* The PROCESS record of CAP_TGID (rank, device: -1 unknown). */
void process_rec(int32_t rank, int32_t device);
/* A CONFIG record (key=value, e.g. pytorch_autograd_lib=PATH). */
void config(const char *text);
void enter(uint32_t tid, uint32_t probe_id, uint64_t ts);
/* An ENTER with argument i set to v (a launch call's function handle, its stream). */
void enter_argn(uint32_t tid, uint32_t probe_id, uint64_t ts, int i, uint64_t v);
/* An ENTER with its first argument (a launch call's function handle). */
void enter_arg0(uint32_t tid, uint32_t probe_id, uint64_t ts, uint64_t arg0);
void leave(uint32_t tid, uint32_t probe_id, uint64_t ts);
void leave_ret(uint32_t tid, uint32_t probe_id, uint64_t ts, uint64_t ret);
/* A QUEUE record of one task-queue side (ASC_QUEUE_ENQUEUE / _DEQUEUE), param type 8. */
void queue(uint32_t tid, uint32_t probe_id, uint64_t ts, uint64_t corr, uint32_t side);

#endif
