// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * devtime.c - device task timing from profiling channel 50 (devtime.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "ascbpf_events.h"
#include "ascend/hal.h"
#include "ascend/stars.h"
#include "trace/devtime.h"
#include "trace/privs.h"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "lib/procmaps.h"

#define CHANNEL	      PROF_CHANNEL_STARS_SOC_LOG
#define READ_BUF      (64 * 1024)
#define IDLE_SLEEP_US 10000	 /* channel empty: look again after 10 ms */
#define PAIR_SLOTS    (1u << 16) /* open addressing, power of two */
#define CLOCK_SAMPLES 16	 /* counter reads per alignment, tightest kept */

struct pair_slot {
	uint32_t key; /* stream << 16 | task; valid when used */
	uint16_t task_type;
	uint16_t used;
	uint64_t start_cnt;
};

struct asc_devtime_pairer {
	uint32_t dev_id;
	size_t pending;
	uint64_t overwritten; /* a start replaced before its end arrived */
	struct pair_slot slots[PAIR_SLOTS];
	struct asc_u64map open;		 /* key -> index in slots of its pending start */
	uint32_t free_slots[PAIR_SLOTS]; /* indices an end released, reused first */
	uint32_t nr_free, next_slot;	 /* slots from next_slot on were never used */
};

struct asc_devtime_pairer *asc_devtime_pairer_new(uint32_t dev_id)
{
	struct asc_devtime_pairer *p = calloc(1, sizeof(*p));

	if (p)
		p->dev_id = dev_id;
	return p;
}

void asc_devtime_pairer_free(struct asc_devtime_pairer *p)
{
	if (p)
		asc_u64map_free(&p->open);
	free(p);
}

size_t asc_devtime_pairer_pending(const struct asc_devtime_pairer *p)
{
	return p ? p->pending : 0;
}

/*
 * The slot of key's pending start; with insert, a new one if none (NULL when
 * PAIR_SLOTS starts are pending or the map cannot grow).
 */
static struct pair_slot *slot_for(struct asc_devtime_pairer *p, uint32_t key, int insert)
{
	uint64_t *idx, i; /* i: the index of a pending start */

	if (asc_u64map_get(&p->open, key, &i))
		return &p->slots[i];
	if (!insert || (!p->nr_free && p->next_slot == PAIR_SLOTS))
		return NULL;
	idx = asc_u64map_slot(&p->open, key, 1);
	if (!idx)
		return NULL;
	*idx = p->nr_free ? p->free_slots[--p->nr_free] : p->next_slot++;
	p->slots[*idx].used = 0;
	return &p->slots[*idx];
}

/* Ends the pending start in s. */
static void slot_remove(struct asc_devtime_pairer *p, struct pair_slot *s)
{
	s->used = 0;
	asc_u64map_del(&p->open, s->key);
	p->free_slots[p->nr_free++] = s - p->slots;
	p->pending--;
}

int asc_devtime_pair(struct asc_devtime_pairer *p, const void *rec64, struct asc_devtask *out)
{
	const struct StarsAcsqLog *r = rec64;
	uint16_t word0;
	uint32_t key, type;
	uint64_t cnt;
	struct pair_slot *s;

	memcpy(&word0, r, sizeof(word0));
	type = word0 & 0x3f;
	key = (uint32_t)r->streamId << 16 | r->taskId;
	cnt = (uint64_t)r->sysCountHigh << 32 | r->sysCountLow;
	if (type == ACSQ_TASK_START_FUNC_TYPE) {
		s = slot_for(p, key, 1);
		if (!s)
			return -ENOSPC;
		if (s->used)
			p->overwritten++;
		else
			p->pending++;
		s->used = 1;
		s->key = key;
		s->start_cnt = cnt;
		s->task_type = word0 >> 10;
		return 0;
	}
	if (type != ACSQ_TASK_END_FUNC_TYPE)
		return -EINVAL;
	s = slot_for(p, key, 0);
	if (!s)
		return 0; /* end without start: counted lost by the caller */
	memset(out, 0, sizeof(*out));
	out->hdr.type = ASC_REC_DEVTASK;
	out->hdr.size = sizeof(*out);
	out->start_cnt = s->start_cnt;
	out->end_cnt = cnt;
	out->dev_id = p->dev_id;
	out->stream_id = r->streamId;
	out->task_id = r->taskId;
	out->task_type = s->task_type;
	slot_remove(p, s);
	return 1;
}

/* ---- the reader ---- */

typedef int (*prof_drv_start_fn)(unsigned int, unsigned int, struct prof_start_para *);
typedef int (*prof_stop_fn)(unsigned int, unsigned int);
typedef int (*prof_channel_read_fn)(unsigned int, unsigned int, char *, unsigned int);
typedef drvError_t (*hal_get_device_info_fn)(uint32_t, int32_t, int32_t, int64_t *);

struct asc_devtime {
	pid_t pid;
	uint32_t dev_id;
	asc_devtime_sink_fn sink;
	void *ctx;
	void *hal;
	prof_drv_start_fn start;
	prof_stop_fn stop_fn;
	prof_channel_read_fn read;
	hal_get_device_info_fn info;
	struct asc_devtime_pairer *pairer;
	pthread_t thread;
	int running;
	volatile int stop;
	uint64_t unpaired_ends;
	struct asc_devtime_stats st;
	char *buf;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * path inside the target's root as seen from here, always through
 * /proc/PID/root (the library loaded from there knows whose it is, as a
 * profiler in the target's container would); -ESTALE if it is not the
 * mapped file (inode).
 */
static int target_path(pid_t pid, const char *path, uint64_t inode, char *buf, size_t len)
{
	struct stat st;
	int n = snprintf(buf, len, "/proc/%d/root%s", (int)pid, path);

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (stat(buf, &st))
		return -errno;
	return inode && (uint64_t)st.st_ino != inode ? -ESTALE : 0;
}

/*
 * dlopens the target's libascend_hal.so from the target's root (the real HAL
 * finds its device nodes, /dev/davinci*, by itself).  Its dependencies are looked up the
 * way the target found them: a "cannot open shared object file" for a name
 * the target has mapped is answered by loading that mapping first.
 */
static void *open_hal(pid_t pid, char *hal_path, size_t len)
{
	struct asc_maps maps;
	void *h = NULL;
	size_t i;
	int tries;

	if (asc_maps_read(pid, &maps))
		return NULL;
	hal_path[0] = 0;
	for (i = 0; i < maps.nr; i++)
		if (maps.entries[i].path &&
		    asc_lib_name_matches(maps.entries[i].path, "libascend_hal.so")) {
			if (target_path(pid, maps.entries[i].path, maps.entries[i].inode, hal_path,
					len))
				hal_path[0] = 0;
			break;
		}
	for (tries = 0; hal_path[0] && tries < 16 && !h; tries++) {
		const char *e;
		char dep[256], host[PATH_MAX];
		size_t dl;

		h = dlopen(hal_path, RTLD_NOW | RTLD_LOCAL);
		if (h)
			break;
		e = dlerror();
		if (!e || !strstr(e, "cannot open shared object file"))
			break;
		dl = strcspn(e, ":");
		snprintf(dep, sizeof(dep), "%.*s", (int)dl, e);
		for (i = 0; i < maps.nr; i++)
			if (maps.entries[i].path && asc_lib_name_matches(maps.entries[i].path, dep))
				break;
		if (i == maps.nr ||
		    target_path(pid, maps.entries[i].path, maps.entries[i].inode, host,
				sizeof(host)) ||
		    !dlopen(host, RTLD_NOW | RTLD_GLOBAL))
			break;
	}
	if (!h && hal_path[0])
		asc_warn("devtime: cannot load %s: %s\n", hal_path, dlerror());
	asc_maps_free(&maps);
	return h;
}

static void emit(struct asc_devtime *dt, void *rec, size_t size)
{
	struct asc_hdr *h = rec;

	h->tgid = dt->pid;
	if (dt->sink)
		dt->sink(dt->ctx, rec, size);
}

/*
 * The device counter (INFO_TYPE_SYS_COUNT) read between two CLOCK_MONOTONIC
 * reads, CLOCK_SAMPLES times: the sample with the narrowest host window
 * gives the pair (counter, window midpoint) and its bound (half the window).
 * -errno / the HAL's error if no read succeeded.
 */
static int sample_clock(struct asc_devtime *dt, uint64_t *cnt, uint64_t *mono, uint64_t *bound)
{
	uint64_t best = UINT64_MAX;
	int i, err = -ENODATA;

	for (i = 0; i < CLOCK_SAMPLES; i++) {
		int64_t c = 0;
		uint64_t t0 = mono_ns(), t1;
		drvError_t r = dt->info(dt->dev_id, MODULE_TYPE_SYSTEM, INFO_TYPE_SYS_COUNT, &c);

		t1 = mono_ns();
		if (r != DRV_ERROR_NONE || c <= 0) {
			err = r ? -(int)r : -ENODATA;
			continue;
		}
		if (t1 - t0 < best) {
			best = t1 - t0;
			*cnt = (uint64_t)c;
			*mono = t0 + best / 2;
		}
	}
	if (best == UINT64_MAX)
		return err;
	*bound = (best + 1) / 2;
	return 0;
}

/* A DEVCLOCK record: frequency (INFO_TYPE_DEV_OSC_FREQUE) and a sampled counter pair. */
static void write_clock(struct asc_devtime *dt)
{
	struct asc_devclock c = {};
	int64_t freq = 0;
	uint64_t cnt = 0, mono = 0, bound = 0;

	c.hdr.type = ASC_REC_DEVCLOCK;
	c.hdr.size = sizeof(c);
	c.dev_id = dt->dev_id;
	if (dt->info(dt->dev_id, MODULE_TYPE_SYSTEM, INFO_TYPE_DEV_OSC_FREQUE, &freq) != 0 ||
	    freq <= 0) {
		asc_warn("devtime: device %u: no counter frequency (info type %d); device times "
			 "cannot be converted\n",
			 dt->dev_id, INFO_TYPE_DEV_OSC_FREQUE);
		freq = 0;
	}
	/* the driver answers in kHz */
	c.freq_hz = (uint64_t)freq * 1000;
	if (!sample_clock(dt, &cnt, &mono, &bound)) {
		c.counter = cnt;
		c.hdr.ts_ns = mono;
		c.bound_ns = bound > UINT32_MAX ? UINT32_MAX : (uint32_t)bound;
		if (!dt->st.clock_bound_ns || bound < dt->st.clock_bound_ns)
			dt->st.clock_bound_ns = bound;
		asc_dbg("devtime: device %u: counter %llu Hz, clock pair within +-%llu ns (best "
			"of %d reads)\n",
			dt->dev_id, (unsigned long long)c.freq_hz, (unsigned long long)bound,
			CLOCK_SAMPLES);
	} else {
		/* no counter read: the converter falls back to alignment */
		c.counter = 0;
		c.hdr.ts_ns = mono_ns();
		asc_dbg("devtime: device %u: the device counter cannot be read\n", dt->dev_id);
	}
	dt->st.freq_hz = c.freq_hz;
	emit(dt, &c, sizeof(c));
}

static int drain_once(struct asc_devtime *dt)
{
	int n = dt->read(dt->dev_id, CHANNEL, dt->buf, READ_BUF);
	int i;

	if (n <= 0)
		return n;
	for (i = 0; i + 64 <= n; i += 64) {
		struct asc_devtask t;
		int r = asc_devtime_pair(dt->pairer, dt->buf + i, &t);

		dt->st.records++;
		if (r == 1) {
			dt->st.tasks++;
			emit(dt, &t, sizeof(t));
		} else if (r == 0) {
			uint16_t w0;

			memcpy(&w0, dt->buf + i, 2);
			if ((w0 & 0x3f) == ACSQ_TASK_END_FUNC_TYPE)
				dt->unpaired_ends++;
		}
	}
	return n;
}

static void *reader(void *arg)
{
	struct asc_devtime *dt = arg;
	int n;

	/* started before trace dropped its capabilities: drop them here too (per thread) */
	if (asc_privs_drop())
		asc_warn("devtime: cannot drop capabilities in the reader thread\n");
	while (!dt->stop) {
		n = drain_once(dt);
		if (n < 0) {
			asc_warn("devtime: device %u: channel read failed (%d); device times stop "
				 "here\n",
				 dt->dev_id, n);
			return NULL;
		}
		if (n == 0)
			usleep(IDLE_SLEEP_US);
	}
	return NULL; /* asc_devtime_stop() drains what is left, just before prof_stop */
}

/*
 * Loads the HAL (the target's; pid 0: this host's, by the library search path)
 * and its profiling API into dt: 0, -ENOENT (no HAL) or -ENOSYS (no API).
 */
static int bind_hal(struct asc_devtime *dt, char *hal_path, size_t len)
{
	if (dt->pid) {
		dt->hal = open_hal(dt->pid, hal_path, len);
	} else {
		snprintf(hal_path, len, "libascend_hal.so");
		dt->hal = dlopen(hal_path, RTLD_NOW | RTLD_LOCAL);
	}
	if (!dt->hal)
		return -ENOENT;
	dt->start = (prof_drv_start_fn)dlsym(dt->hal, "prof_drv_start");
	dt->stop_fn = (prof_stop_fn)dlsym(dt->hal, "prof_stop");
	dt->read = (prof_channel_read_fn)dlsym(dt->hal, "prof_channel_read");
	dt->info = (hal_get_device_info_fn)dlsym(dt->hal, "halGetDeviceInfo");
	return dt->start && dt->stop_fn && dt->read && dt->info ? 0 : -ENOSYS;
}

/* Channel 50 as msprof starts it: ACSQ task logs on (the card writes none otherwise). */
static int start_channel(struct asc_devtime *dt)
{
	struct prof_start_para para = { .channel_type = PROF_CHANNEL_TYPE_TS, .real_time = 1 };
	StarsSocLogConfigT cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.acsq_task = TS_PROFILE_COMMAND_TYPE_PROFILING_ENABLE;
	cfg.ffts_thread_task = TS_PROFILE_COMMAND_TYPE_PROFILING_ENABLE;
	para.user_data = &cfg;
	para.user_data_size = sizeof(cfg);
	return dt->start(dt->dev_id, CHANNEL, &para);
}

int asc_devtime_check(pid_t pid, uint32_t dev_id, struct asc_devtime_status *st)
{
	struct asc_devtime *dt = calloc(1, sizeof(*dt));
	char hal_path[PATH_MAX];
	uint64_t cnt, mono;
	int64_t freq = 0;
	int err;

	memset(st, 0, sizeof(*st));
	if (!dt) {
		snprintf(st->detail, sizeof(st->detail), "out of memory");
		return -ENOMEM;
	}
	dt->pid = pid;
	dt->dev_id = dev_id;
	err = bind_hal(dt, hal_path, sizeof(hal_path));
	if (err == -ENOENT) {
		snprintf(st->detail, sizeof(st->detail), "no libascend_hal.so %s",
			 pid ? "mapped in the target" : "in the library search path");
	} else if (err) {
		snprintf(st->detail, sizeof(st->detail),
			 "%.200s has no prof_drv_start / "
			 "prof_channel_read / halGetDeviceInfo",
			 hal_path);
	} else if (dt->info(dev_id, MODULE_TYPE_SYSTEM, INFO_TYPE_DEV_OSC_FREQUE, &freq) ||
		   freq <= 0) {
		snprintf(st->detail, sizeof(st->detail),
			 "device %u: no counter frequency "
			 "(halGetDeviceInfo info type %d)",
			 dev_id, INFO_TYPE_DEV_OSC_FREQUE);
	} else if (sample_clock(dt, &cnt, &mono, &st->clock_bound_ns)) {
		snprintf(st->detail, sizeof(st->detail),
			 "device %u: no device counter "
			 "(halGetDeviceInfo info type %d)",
			 dev_id, INFO_TYPE_SYS_COUNT);
	} else if ((err = start_channel(dt)) != 0) {
		snprintf(st->detail, sizeof(st->detail),
			 "device %u: prof_drv_start(channel %d) "
			 "failed (%d)",
			 dev_id, CHANNEL, err);
	} else {
		dt->stop_fn(dev_id, CHANNEL);
		st->usable = 1;
		st->freq_hz = (uint64_t)freq * 1000;
		snprintf(st->detail, sizeof(st->detail),
			 "channel %d, STARS acsq_task, counter "
			 "%.6g MHz, clock pair +-%llu ns",
			 CHANNEL, st->freq_hz / 1e6, (unsigned long long)st->clock_bound_ns);
	}
	/* the HAL stays loaded (asc_devtime_free's reason) */
	free(dt);
	return 0;
}

struct asc_devtime *asc_devtime_start(pid_t pid, uint32_t dev_id, asc_devtime_sink_fn sink,
				      void *ctx)
{
	struct asc_devtime *dt;
	char hal_path[PATH_MAX];
	int err;

	dt = calloc(1, sizeof(*dt));
	if (!dt)
		return NULL;
	dt->pid = pid;
	dt->dev_id = dev_id;
	dt->sink = sink;
	dt->ctx = ctx;
	err = bind_hal(dt, hal_path, sizeof(hal_path));
	if (err) {
		if (err == -ENOENT)
			asc_warn("devtime: pid %d: libascend_hal.so not found or not loadable; no "
				 "device task times\n",
				 pid);
		else
			asc_warn("devtime: %s lacks the profiling API; no device task times\n",
				 hal_path);
		goto fail;
	}
	dt->pairer = asc_devtime_pairer_new(dev_id);
	dt->buf = malloc(READ_BUF);
	if (!dt->pairer || !dt->buf)
		goto fail;
	err = start_channel(dt);
	if (err) {
		asc_warn("devtime: device %u: prof_drv_start(channel %d) failed (%d); no device "
			 "task times\n",
			 dev_id, CHANNEL, err);
		goto fail;
	}
	write_clock(dt);
	if (pthread_create(&dt->thread, NULL, reader, dt)) {
		dt->stop_fn(dev_id, CHANNEL);
		goto fail;
	}
	dt->running = 1;
	asc_dbg("devtime: pid %d device %u: reading channel %d through %s\n", pid, dev_id, CHANNEL,
		hal_path);
	return dt;
fail:
	asc_devtime_free(dt);
	return NULL;
}

void asc_devtime_stop(struct asc_devtime *dt)
{
	uint64_t lost;

	if (!dt || !dt->running)
		return;
	dt->stop = 1;
	pthread_join(dt->thread, NULL);
	dt->running = 0;
	/*
	 * What the card wrote before the stop, read as late as possible: the
	 * channel's records still unread at prof_stop are discarded with the
	 * session and counted nowhere, so the last read is the one right before
	 * it (a task completing in between is after the trace's gate closed).
	 */
	while (drain_once(dt) > 0)
		;
	dt->stop_fn(dt->dev_id, CHANNEL);
	write_clock(dt); /* a second pair at the end bounds the drift */
	/* the driver reports no drop count: a lost record shows as an unpaired one */
	lost = dt->unpaired_ends + asc_devtime_pairer_pending(dt->pairer) + dt->pairer->overwritten;
	dt->st.lost = lost;
	if (lost) {
		char text[] = "device task records lost (unpaired start/end)";
		size_t size = (sizeof(struct asc_text) + sizeof(text) + 7) & ~7ul;
		struct asc_text *r = calloc(1, size);

		if (r) {
			r->hdr.type = ASC_REC_LOST;
			r->hdr.size = size;
			r->hdr.ts_ns = mono_ns();
			r->value = lost;
			memcpy(r->text, text, sizeof(text));
			emit(dt, r, size);
			free(r);
		}
	}
}

void asc_devtime_get_stats(const struct asc_devtime *dt, struct asc_devtime_stats *st)
{
	if (!dt) {
		memset(st, 0, sizeof(*st));
		return;
	}
	*st = dt->st;
}

void asc_devtime_free(struct asc_devtime *dt)
{
	if (!dt)
		return;
	asc_devtime_stop(dt);
	asc_devtime_pairer_free(dt->pairer);
	free(dt->buf);
	/* the HAL stays loaded: unloading a library with threads of its own is unsafe */
	free(dt);
}
