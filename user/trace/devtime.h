/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * devtime.h - device task timing, read by ascbpf itself from the driver's
 * profiling channel 50 (STARS ACSQ log) through the target's own
 * libascend_hal.so, as msprof does.
 *
 * asc_devtime_start() finds libascend_hal.so in /proc/PID/maps, dlopens it
 * through /proc/PID/root (the HAL finds its device nodes itself, as the real
 * one opens /dev/davinci*), records the clock (ASC_REC_DEVCLOCK: frequency
 * from halGetDeviceInfo(dev, 0, INFO_TYPE_DEV_OSC_FREQUE), the counter
 * INFO_TYPE_SYS_COUNT read between two CLOCK_MONOTONIC reads, the tightest
 * of several, its bound kept), starts channel 50 with prof_drv_start and a
 * StarsSocLogConfigT enabling acsq_task, as msprof does, and reads it in a
 * thread.  Only the real driver interface is used.  Start and end records
 * are paired by (stream id, task id) into ASC_REC_DEVTASK records.  Every
 * record goes to sink(ctx, rec, size) from that thread (the sink
 * serialises).  Records left unpaired are counted and written as one
 * ASC_REC_LOST at stop (the driver reports no drop count of its own).
 *
 * Failure to find or start the channel is a warning, never fatal: the trace
 * goes on without device times (NULL is returned and every function accepts
 * NULL).
 */
#ifndef __ASCBPF_DEVTIME_H
#define __ASCBPF_DEVTIME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct asc_devtime;

typedef int (*asc_devtime_sink_fn)(void *ctx, const void *rec, size_t size);

struct asc_devtime_stats {
	uint64_t records;	 /* channel records read (start and end) */
	uint64_t tasks;		 /* DEVTASK records written */
	uint64_t lost;		 /* unpaired records (start without end and the reverse) */
	uint64_t freq_hz;	 /* counter frequency the driver reported (0: none) */
	uint64_t clock_bound_ns; /* tightest clock-pair bound (+- ns; 0: no pair) */
};

struct asc_devtime *asc_devtime_start(pid_t pid, uint32_t dev_id, asc_devtime_sink_fn sink,
				      void *ctx);

/* Whether device timing works for a target (pid; 0: this host's HAL), and why not. */
struct asc_devtime_status {
	int usable;
	uint64_t freq_hz;
	uint64_t clock_bound_ns;
	char detail[320]; /* "channel 50, STARS acsq_task, counter ..." or the reason */
};

/*
 * Loads the HAL as asc_devtime_start() does, reads the counter frequency and
 * the counter, and starts and stops channel 50 once; fills *st.  0, or
 * -ENOMEM (st->detail says so).
 */
int asc_devtime_check(pid_t pid, uint32_t dev_id, struct asc_devtime_status *st);

/* Stops the reader (drains the channel once more, joins the thread); idempotent. */
void asc_devtime_stop(struct asc_devtime *dt);

void asc_devtime_get_stats(const struct asc_devtime *dt, struct asc_devtime_stats *st);

/* Stops if needed and frees. */
void asc_devtime_free(struct asc_devtime *dt);

/*
 * Pairs one 64-byte StarsAcsqLog record (exposed for unit tests): start
 * records are kept by (stream, task); an end record with a kept start fills
 * *out and returns 1; otherwise returns 0.  Unknown log types return -EINVAL.
 */
struct asc_devtime_pairer;
struct asc_devtask;
struct asc_devtime_pairer *asc_devtime_pairer_new(uint32_t dev_id);
int asc_devtime_pair(struct asc_devtime_pairer *p, const void *rec64, struct asc_devtask *out);
/* Starts still waiting for their end. */
size_t asc_devtime_pairer_pending(const struct asc_devtime_pairer *p);
void asc_devtime_pairer_free(struct asc_devtime_pairer *p);

#endif /* __ASCBPF_DEVTIME_H */
