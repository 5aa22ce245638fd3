/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * consumer.h - the ring-buffer record handler of `ascbpf trace`, a pure
 * function of the bytes it is given so it can be tested on synthetic input.
 *
 * Contract: asc_consumer_handle() is called once per ring-buffer sample.  A
 * sample holds one record or several written together by one BPF program
 * run (bpf/ascbpf_events.h "Samples"), back to back, each with its own
 * asc_hdr: their hdr.size must tile the sample exactly (each at least a
 * header and a multiple of 8), or no record boundary in it can be trusted
 * and the whole sample is counted once in `bad` and none of it reaches the
 * sink.  Within a well-formed sample each record is checked on its own: it
 * is accepted only if BPF may write it (type below ASC_REC_USER_BASE, exact
 * fixed size, counts within bounds, as asc_rec_check() defines); a bad one
 * is counted in `bad` and skipped, the others are handed to the sink in
 * order, byte for byte, exactly as if each had been a sample of its own.
 * Accepted records are counted (records, bytes, per type, per layer).  The
 * loader hook record (ENTER with probe id == loader_probe_id) goes to
 * on_loader instead of the sink, so the capture holds only traced calls.
 */
#ifndef __ASCBPF_CONSUMER_H
#define __ASCBPF_CONSUMER_H

#include <stddef.h>
#include <stdint.h>
#include "ascbpf_events.h"

#define ASC_CONSUMER_LAYERS 8 /* enum asc_layer values 0..7; 0 = unknown */

/* Receives one accepted record; a non-zero return is counted in sink_errors. */
typedef int (*asc_consumer_sink_fn)(void *ctx, const void *rec, size_t size);
/*
 * Called for each loader-hook notification (tgid whose link map changed, or a
 * new process); hold: ASC_HOLD_* (ascbpf_maps.h), the process is stopped until
 * the loader lets it go on; arg: the hold's argument (the card of ASC_HOLD_CHAN).
 */
typedef void (*asc_consumer_loader_fn)(void *ctx, uint32_t tgid, uint64_t hold, uint64_t arg);

struct asc_consumer {
	/* set by the caller */
	asc_consumer_sink_fn sink;
	void *sink_ctx;
	asc_consumer_loader_fn on_loader;
	void *loader_ctx;
	uint32_t loader_probe_id;    /* 0: no loader hook */
	const uint16_t *probe_layer; /* layer of each probe id, indexed by id */
	size_t nr_probe_layer;	     /* entries in probe_layer */

	/* counters */
	uint64_t records;	/* records accepted (and passed to the sink) */
	uint64_t bytes;		/* bytes of accepted records */
	uint64_t bad;		/* malformed samples and records dropped */
	uint64_t sink_errors;	/* sink failures */
	uint64_t loader_events; /* loader-hook notifications */
	uint64_t groups;	/* well-formed samples of more than one record */
	uint64_t by_type[ASC_REC_USER_BASE];
	uint64_t by_layer[ASC_CONSUMER_LAYERS];
};

/* Zeroes the counters, keeps the callbacks and the probe layer table. */
void asc_consumer_reset(struct asc_consumer *c);

/*
 * Returns 0 (every record accepted), else the first failure among the
 * sample's records: -EBADMSG (malformed, counted) or the sink's error.
 */
int asc_consumer_handle(struct asc_consumer *c, const void *data, size_t size);

/* Layer a record counts under (ASC_LAYER_*, 0 when not known). */
unsigned int asc_consumer_layer_of(const struct asc_consumer *c, const struct asc_hdr *h);

/*
 * "framework=N cann=N driver=N memory=N python=N hccl=N other=N" into buf; returns
 * what snprintf returns.
 */
int asc_consumer_layer_summary(const struct asc_consumer *c, char *buf, size_t len);

/*
 * The reading side of the BPF ring buffer (`events`), in place of libbpf's
 * ring_buffer__poll/consume.  The difference is when the consumer position
 * is published: libbpf stores it after every sample, and every BPF reserve
 * (and wake-up check) on the other CPU reads it, so while a drain runs each
 * record's reservation misses on a line the consumer just wrote.  Here it is
 * published every ASC_RING_PUBLISH_BYTES consumed (a sixteenth of the ring
 * when that is less) and at the end of a drain: the ring looks that much
 * fuller to BPF for a moment, nothing else changes (samples are handed over
 * in ring order, discarded ones skipped).  A quarter of a 1 MiB ring held
 * back (256 KiB) made it drop 30x more at launch-storm's rate.
 */
#define ASC_RING_PUBLISH_BYTES (256u << 10)

/* Receives one ring sample (asc_consumer_handle's input); a negative return stops the drain. */
typedef int (*asc_ring_sample_fn)(void *ctx, void *data, size_t size);

struct asc_ring {
	int map_fd;
	int epoll_fd;
	size_t page_size;
	uint64_t mask;		      /* data size - 1 */
	uint64_t *consumer_pos;	      /* the writable page */
	const uint64_t *producer_pos; /* read-only: producer page, then the data twice */
	const unsigned char *data;
	size_t map_len;	  /* of the read-only mapping */
	uint64_t publish; /* bytes consumed between publications */
	asc_ring_sample_fn fn;
	void *ctx;
};

/* Maps the ring of BPF_MAP_TYPE_RINGBUF map_fd; 0 or -errno (nothing left to close). */
int asc_ring_open(struct asc_ring *r, int map_fd, asc_ring_sample_fn fn, void *ctx);

/*
 * Hands every committed sample to fn, in order, until the ring is empty or
 * the next sample is still being written.  Returns the samples handed over
 * or fn's negative return.
 */
int asc_ring_consume(struct asc_ring *r);

/*
 * Waits up to timeout_ms for a wake-up from BPF (or data left from before),
 * then consumes.  Returns what asc_ring_consume returns, or -errno of the
 * wait (-EINTR on a signal).
 */
int asc_ring_poll(struct asc_ring *r, int timeout_ms);

void asc_ring_close(struct asc_ring *r);

#endif /* __ASCBPF_CONSUMER_H */
