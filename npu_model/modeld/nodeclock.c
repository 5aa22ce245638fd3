// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nodeclock.c - libnpu_nodeclock.so: the wall clock of a simulated node.
 *
 * Several npu-modeld daemons on one machine are the nodes of one job, but
 * they share the machine's clocks; real nodes share none: each has its own
 * CLOCK_MONOTONIC (that is harmless, ascbpf pairs it with the wall clock)
 * and an NTP-synced CLOCK_REALTIME that is off by up to milliseconds.  A
 * process given LD_PRELOAD=libnpu_nodeclock.so and $NPU_MODEL_DEV_DIR of
 * one daemon sees CLOCK_REALTIME (clock_gettime, gettimeofday, time) moved
 * by that daemon's --clock-offset-ns (npu_model_info's clock_offset_ns=),
 * read once.  Its other clocks, and BPF's, are the machine's: the job's true
 * time, which the daemons' journals use.  A test harness shim, never part of
 * the tool.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

#include "npu_ioctl.h"

/* the model's libraries hide what they do not name: these are the interposed ones */
#define NC_EXPORT __attribute__((visibility("default")))

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

static pthread_once_t nc_once = PTHREAD_ONCE_INIT;
static clock_gettime_fn nc_real;
static long long nc_offset_ns;

static void nc_init(void)
{
	const char *dir = getenv(NPU_MODEL_DEV_DIR_ENV);
	char path[512], line[128];
	long long v;
	FILE *f;

	nc_real = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
	snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : NPU_MODEL_DEV_DIR_DEFAULT,
		 NPU_MODEL_INFO_NAME);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "clock_offset_ns=%lld", &v) == 1)
			nc_offset_ns = v;
	fclose(f);
}

NC_EXPORT int clock_gettime(clockid_t clk, struct timespec *ts)
{
	long long ns;
	int r;

	pthread_once(&nc_once, nc_init);
	if (!nc_real)
		return -1;
	r = nc_real(clk, ts);
	if (r || (clk != CLOCK_REALTIME && clk != CLOCK_REALTIME_COARSE) || !nc_offset_ns)
		return r;
	ns = (long long)ts->tv_sec * 1000000000ll + ts->tv_nsec + nc_offset_ns;
	ts->tv_sec = ns / 1000000000ll;
	ts->tv_nsec = ns % 1000000000ll;
	return 0;
}

NC_EXPORT int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	struct timespec ts;

	(void)tz;
	if (clock_gettime(CLOCK_REALTIME, &ts))
		return -1;
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

NC_EXPORT time_t time(time_t *t)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts))
		return (time_t)-1;
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
