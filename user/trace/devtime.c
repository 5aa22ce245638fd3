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
#include <time.h>
#include <unistd.h>
#include "ascbpf_events.h"
#include "../../npu_model/include/ascend_hal.h"	/* the HAL ABI (contract file) */
#include "trace/devtime.h"
#include "trace/privs.h"
#include "lib/log.h"
#include "lib/procmaps.h"

#define CHANNEL			PROF_CHANNEL_STARS_SOC_LOG
#define READ_BUF		(64 * 1024)
#define IDLE_SLEEP_US		10000	/* channel empty: look again after 10 ms */
#define PAIR_SLOTS		(1u << 16)	/* open addressing, power of two */

/* npu_model's clock pair and drop counter (npu_model/include/npu_ioctl.h, MODEL). */
#define NPU_INFO_TYPE_SYS_COUNT		0x4e50
#define NPU_INFO_TYPE_SYS_COUNT_MONO	0x4e51
#define NPU_INFO_TYPE_PROF_DROPS	0x4e54

struct pair_slot {
	uint32_t key;		/* stream << 16 | task; valid when used */
	uint16_t task_type;
	uint16_t used;
	uint64_t start_cnt;
};

struct asc_devtime_pairer {
	uint32_t dev_id;
	size_t pending;
	uint64_t overwritten;	/* a start replaced before its end arrived */
	struct pair_slot slots[PAIR_SLOTS];
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
	free(p);
}

size_t asc_devtime_pairer_pending(const struct asc_devtime_pairer *p)
{
	return p ? p->pending : 0;
}

static struct pair_slot *slot_for(struct asc_devtime_pairer *p, uint32_t key, int insert)
{
	uint32_t h = (key * 2654435761u) & (PAIR_SLOTS - 1), i;

	for (i = 0; i < PAIR_SLOTS; i++) {
		struct pair_slot *s = &p->slots[(h + i) & (PAIR_SLOTS - 1)];

		if (s->used && s->key == key)
			return s;
		if (!s->used)
			return insert ? s : NULL;
	}
	return NULL;
}

/* Removes s keeping every probe chain intact (backward-shift deletion). */
static void slot_remove(struct asc_devtime_pairer *p, struct pair_slot *s)
{
	uint32_t i = s - p->slots, j = i;

	s->used = 0;
	for (;;) {
		uint32_t home;

		j = (j + 1) & (PAIR_SLOTS - 1);
		if (!p->slots[j].used)
			break;
		home = (p->slots[j].key * 2654435761u) & (PAIR_SLOTS - 1);
		/* move j back to i if its home is not in (i, j] (cyclically) */
		if (((j - home) & (PAIR_SLOTS - 1)) >= ((j - i) & (PAIR_SLOTS - 1))) {
			p->slots[i] = p->slots[j];
			p->slots[j].used = 0;
			i = j;
		}
	}
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
		return 0;	/* end without start: counted lost by the caller */
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

/* Takes the target's NPU_MODEL_DEV_DIR so the HAL in this process finds the same card. */
static void copy_target_env(pid_t pid)
{
	static const char *const names[] = { "NPU_MODEL_DEV_DIR", "NPU_MODEL_SQ_MODE" };
	char path[64], *buf, *p;
	FILE *f;
	size_t n, i;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	buf = malloc(1 << 16);
	if (!buf) {
		fclose(f);
		return;
	}
	n = fread(buf, 1, (1 << 16) - 1, f);
	fclose(f);
	buf[n] = 0;
	for (p = buf; p < buf + n; p += strlen(p) + 1)
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			size_t l = strlen(names[i]);

			if (!strncmp(p, names[i], l) && p[l] == '=')
				setenv(names[i], p + l + 1, 1);
		}
	free(buf);
}

/*
 * dlopens the target's libascend_hal.so.  Its dependencies are looked up the
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
			if (asc_maps_host_path(pid, maps.entries[i].path, maps.entries[i].inode,
					       hal_path, len))
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
		if (i == maps.nr || asc_maps_host_path(pid, maps.entries[i].path,
						       maps.entries[i].inode, host, sizeof(host)) ||
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

static void write_clock(struct asc_devtime *dt)
{
	struct asc_devclock c = {};
	int64_t freq = 0, cnt = 0, mono = 0;

	c.hdr.type = ASC_REC_DEVCLOCK;
	c.hdr.size = sizeof(c);
	c.dev_id = dt->dev_id;
	if (dt->info(dt->dev_id, MODULE_TYPE_SYSTEM, INFO_TYPE_SYS_COUNT_FREQ, &freq) != 0 ||
	    freq <= 0) {
		asc_warn("devtime: device %u: no system counter frequency; device times "
			 "cannot be converted\n", dt->dev_id);
		freq = 0;
	}
	/* the driver answers in kHz (torch_npu divides by 1000 for MHz) */
	c.freq_hz = freq * 1000;
	if (dt->info(dt->dev_id, MODULE_TYPE_SYSTEM, NPU_INFO_TYPE_SYS_COUNT, &cnt) == 0 &&
	    dt->info(dt->dev_id, MODULE_TYPE_SYSTEM, NPU_INFO_TYPE_SYS_COUNT_MONO, &mono) == 0 &&
	    mono > 0) {
		c.counter = cnt;
		c.hdr.ts_ns = mono;
	} else {
		/* no (counter, monotonic) pair: the converter falls back to alignment */
		c.counter = 0;
		c.hdr.ts_ns = mono_ns();
		asc_dbg("devtime: device %u has no counter/monotonic pair\n", dt->dev_id);
	}
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
				 "here\n", dt->dev_id, n);
			return NULL;
		}
		if (n == 0)
			usleep(IDLE_SLEEP_US);
	}
	return NULL;	/* asc_devtime_stop() drains what is left, just before prof_stop */
}

struct asc_devtime *asc_devtime_start(pid_t pid, uint32_t dev_id, asc_devtime_sink_fn sink,
				      void *ctx)
{
	struct prof_start_para para = { .channel_type = 0, .sample_period = 0, .real_time = 1 };
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
	copy_target_env(pid);
	/* npu_model's ground-truth journal is the target's, never ours */
	unsetenv("NPU_MODEL_JOURNAL");
	dt->hal = open_hal(pid, hal_path, sizeof(hal_path));
	if (!dt->hal) {
		asc_warn("devtime: pid %d: libascend_hal.so not found or not loadable; no device "
			 "task times\n", pid);
		goto fail;
	}
	dt->start = (prof_drv_start_fn)dlsym(dt->hal, "prof_drv_start");
	dt->stop_fn = (prof_stop_fn)dlsym(dt->hal, "prof_stop");
	dt->read = (prof_channel_read_fn)dlsym(dt->hal, "prof_channel_read");
	dt->info = (hal_get_device_info_fn)dlsym(dt->hal, "halGetDeviceInfo");
	if (!dt->start || !dt->stop_fn || !dt->read || !dt->info) {
		asc_warn("devtime: %s lacks the profiling API; no device task times\n", hal_path);
		goto fail;
	}
	dt->pairer = asc_devtime_pairer_new(dev_id);
	dt->buf = malloc(READ_BUF);
	if (!dt->pairer || !dt->buf)
		goto fail;
	err = dt->start(dev_id, CHANNEL, &para);
	if (err) {
		asc_warn("devtime: device %u: prof_drv_start(channel %d) failed (%d); no device "
			 "task times\n", dev_id, CHANNEL, err);
		goto fail;
	}
	write_clock(dt);
	if (pthread_create(&dt->thread, NULL, reader, dt)) {
		dt->stop_fn(dev_id, CHANNEL);
		goto fail;
	}
	dt->running = 1;
	asc_dbg("devtime: pid %d device %u: reading channel %d through %s\n", pid, dev_id,
		CHANNEL, hal_path);
	return dt;
fail:
	asc_devtime_free(dt);
	return NULL;
}

void asc_devtime_stop(struct asc_devtime *dt)
{
	int64_t drops = 0;
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
	if (dt->info(dt->dev_id, MODULE_TYPE_SYSTEM, NPU_INFO_TYPE_PROF_DROPS, &drops) || drops < 0)
		drops = 0;
	dt->stop_fn(dt->dev_id, CHANNEL);
	write_clock(dt);	/* a second pair at the end bounds the drift */
	lost = drops + dt->unpaired_ends + asc_devtime_pairer_pending(dt->pairer) +
	       dt->pairer->overwritten;
	dt->st.lost = lost;
	if (lost) {
		char text[] = "device task records lost (channel drops, unpaired start/end)";
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
