// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * hal.c - libascend_hal.so: the driver's user-space HAL (ascend_hal.h) on top
 * of npu-modeld's device nodes (npu_ioctl.h).
 *
 * As the real HAL does, each sub-module opens its own davinci_manager fd and
 * binds it with DAVINCI_INTF_IOCTL_OPEN: one "TSDRV" fd per device (ids,
 * SQ/CQ, submission, completion), one "SVM" fd (device memory) and one
 * "PROF" fd (profiling channels, model).  /dev/davinciN is opened when a
 * device is first used and kept open, as the runtime does.
 *
 * Submission (halSqTaskSend) has two modes, chosen by NPU_MODEL_SQ_MODE:
 *   uio   (default) SQEs are written into the SQ ring in the card's shared
 *         memory and the doorbell is rung: no system call unless the card
 *         sleeps (then one futex wake).  The real UIO path works this way.
 *   ioctl one TRS_SQCQ_SEND ioctl per call (several SQEs may go in one).
 * halSqTaskSend is the uprobe point in both.
 *
 * Every exported hal* / drv* / prof_* entry point writes an `api` journal
 * line and every ioctl an `ioctl` line (npu_model/JOURNAL.md).  `task` lines
 * are libruntime's (it knows the kernel names), not ours.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hal_internal.h"
#include "npu_journal.h"

struct hal_state hal = { .svm_fd = -1, .prof_fd = -1 };
static pthread_mutex_t hal_lock = PTHREAD_MUTEX_INITIALIZER;

#define HAL_API_VERSION 0x071905	  /* torch_npu uses the sys counter from 0x071905 */
#define VA_BASE		0x100000000000ull /* device VA of card 0 */
#define VA_PER_CARD	(1ull << 40)

static pid_t gettid_cached(void)
{
	static __thread pid_t tid;

	if (!tid)
		tid = (pid_t)syscall(SYS_gettid);
	return tid;
}

uint64_t hal_now_ns(void)
{
	return npu_now_ns();
}

drvError_t hal_errno_to_drv(int err)
{
	switch (err) {
	case 0:
		return DRV_ERROR_NONE;
	case -ENOMEM:
		return DRV_ERROR_OUT_OF_MEMORY;
	case -ENOSPC:
		return DRV_ERROR_NO_RESOURCES;
	case -EINVAL:
	case -EFAULT:
	case -EEXIST:
		return DRV_ERROR_INVALID_VALUE;
	case -EPERM:
		return DRV_ERROR_INVALID_HANDLE;
	case -ENODEV:
	case -ENOENT:
	case -ENOTCONN:
	case -ENXIO:
		return DRV_ERROR_NO_DEVICE;
	case -ETIMEDOUT:
		return DRV_ERROR_WAIT_TIMEOUT;
	case -EBUSY:
		return DRV_ERROR_BUSY;
	case -ENOTTY:
	case -EOPNOTSUPP:
		return DRV_ERROR_NOT_SUPPORT;
	default:
		return DRV_ERROR_IOCRL_FAIL;
	}
}

static long futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, FUTEX_BITSET_MATCH_ANY);
}

/* ---- journal helpers ---------------------------------------------------------------- */

/* Entry time of an api line; with the journal off the clock is not even read. */
#define API_T0() (npu_journal_on ? hal_now_ns() : 0)

#define API_LINE(name, t0, ret, fmt, ...)                                                       \
	do {                                                                                    \
		if (npu_journal_on)                                                             \
			npu_journal_write("api",                                                \
					  "tid=%d\tlayer=driver\tname=%s\tt0=%llu\t"            \
					  "t1=%llu\tret=%d" fmt,                                \
					  (int)gettid_cached(), name, (unsigned long long)(t0), \
					  (unsigned long long)hal_now_ns(), (int)(ret),         \
					  ##__VA_ARGS__);                                       \
	} while (0)

/* The daemon's end of the nodes is gone (killed, unmounted): say so once. */
static void daemon_gone(int err)
{
	static int said;

	if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "libascend_hal (npu_model): npu-modeld at %s went away (%s)\n",
			hal.dir, strerror(-err));
}

int hal_ioctl(int fd, const char *module, unsigned long cmd, void *arg)
{
	uint64_t t0 = npu_journal_on ? hal_now_ns() : 0;
	int ret;

	do
		ret = ioctl(fd, cmd, arg);
	while (ret < 0 && errno == EINTR);
	ret = ret < 0 ? -errno : ret;
	/*
	 * FUSE fails a request the daemon was serving when it died with
	 * ECONNABORTED, every later one with ENOTCONN: both mean the daemon is
	 * gone, and a caller must not get another answer (IOCRL_FAIL, no
	 * message) just because its ioctl was in flight at that moment.
	 */
	if (ret == -ECONNABORTED)
		ret = -ENOTCONN;
	if (ret == -ENOTCONN)
		daemon_gone(ret);
	if (npu_journal_on)
		npu_journal_write("ioctl",
				  "tid=%d\tt0=%llu\tt1=%llu\tfd=%d\tcmd=0x%lx\tret=%d\tmodule=%s",
				  (int)gettid_cached(), (unsigned long long)t0,
				  (unsigned long long)hal_now_ns(), fd, cmd, ret, module);
	return ret;
}

/* ---- discovery ---------------------------------------------------------------------- */

static int read_info(const char *path, char *buf, size_t len)
{
	size_t off = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (off + 1 < len) {
		ssize_t n = read(fd, buf + off, len - 1 - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	buf[off] = '\0';
	return off ? 0 : -EIO;
}

static const char *info_value(const char *text, const char *key)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == '=')
			return p + klen + 1;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

static uint64_t info_u64(const char *text, const char *key)
{
	const char *v = info_value(text, key);

	return v ? strtoull(v, NULL, 0) : 0;
}

/*
 * Where the device nodes are.  A real HAL opens /dev/davinci_manager, the
 * same nodes for every process of the host, so a profiler that loads the
 * target's libascend_hal.so reaches the target's card.  npu_model's nodes are
 * wherever its daemon mounted them (NPU_MODEL_DEV_DIR, per process): to give
 * a profiler the same property without it knowing anything of the model, a
 * HAL loaded through /proc/PID/root/... (as ascbpf loads the target's) serves
 * the card of process PID: PID's NPU_MODEL_DEV_DIR (or the default), inside
 * PID's root.  Otherwise: this process's NPU_MODEL_DEV_DIR, else the default.
 * The observed process's other variables (journal, SQ mode) are not taken.
 */
static int observed_dev_dir(char *out, size_t len)
{
	char env_path[64], *buf, *p;
	const char *dir = NPU_MODEL_DEV_DIR_DEFAULT;
	size_t klen = strlen(NPU_MODEL_DEV_DIR_ENV), n;
	Dl_info di;
	FILE *f;
	int pid, off = 0;

	if (!dladdr((void *)observed_dev_dir, &di) || !di.dli_fname ||
	    sscanf(di.dli_fname, "/proc/%d/root/%n", &pid, &off) != 1 || !off || pid <= 0)
		return -ENOENT;
	snprintf(env_path, sizeof(env_path), "/proc/%d/environ", pid);
	buf = malloc(65536);
	f = buf ? fopen(env_path, "re") : NULL;
	n = f ? fread(buf, 1, 65535, f) : 0;
	if (f)
		fclose(f);
	if (buf) {
		buf[n] = '\0';
		for (p = buf; p < buf + n; p += strlen(p) + 1)
			if (!strncmp(p, NPU_MODEL_DEV_DIR_ENV, klen) && p[klen] == '=' &&
			    p[klen + 1] == '/')
				dir = p + klen + 1;
	}
	snprintf(out, len, "/proc/%d/root%s", pid, dir);
	free(buf);
	return 0;
}

static int parse_info(const char *text)
{
	uint32_t d;
	const char *priv = info_value(text, "private");

	/* absent (an older daemon): private queries answered */
	hal.no_private = priv && *priv == '0';

	hal.cards = (uint32_t)info_u64(text, "cards");
	if (hal.cards == 0 || hal.cards > NPU_MODEL_MAX_CARDS ||
	    info_u64(text, "sq_depth") != NPU_UIO_SQ_DEPTH ||
	    info_u64(text, "max_sq") != NPU_UIO_MAX_SQ)
		return -EPROTO;
	for (d = 0; d < hal.cards; d++) {
		struct hal_dev *dv = &hal.dev[d];
		char key[64];
		const char *v;
		size_t n;

		snprintf(key, sizeof(key), "dev%u.shm", d);
		v = info_value(text, key);
		if (!v)
			return -EPROTO;
		n = strcspn(v, "\n");
		if (n >= sizeof(dv->shm))
			return -EPROTO;
		memcpy(dv->shm, v, n);
		dv->shm[n] = '\0';
		snprintf(key, sizeof(key), "dev%u.syscnt_freq_hz", d);
		dv->cnt_freq_hz = info_u64(text, key);
		snprintf(key, sizeof(key), "dev%u.syscnt_offset", d);
		dv->cnt_offset = info_u64(text, key);
		snprintf(key, sizeof(key), "dev%u.syscnt_base_ns", d);
		dv->cnt_base_ns = info_u64(text, key);
		if (!dv->cnt_freq_hz)
			return -EPROTO;
	}
	return 0;
}

drvError_t hal_init(void)
{
	static int warned;
	char path[4200], *text;
	const char *dir, *mode;
	uint32_t d, i;
	int err;

	if (__atomic_load_n(&hal.ready, __ATOMIC_ACQUIRE))
		return DRV_ERROR_NONE;
	pthread_mutex_lock(&hal_lock);
	if (hal.ready) {
		pthread_mutex_unlock(&hal_lock);
		return DRV_ERROR_NONE;
	}
	if (observed_dev_dir(hal.dir, sizeof(hal.dir))) {
		dir = getenv(NPU_MODEL_DEV_DIR_ENV);
		if (!dir || !*dir)
			dir = NPU_MODEL_DEV_DIR_DEFAULT;
		snprintf(hal.dir, sizeof(hal.dir), "%s", dir);
	}
	mode = getenv(NPU_MODEL_SQ_MODE_ENV);
	hal.uio_mode = !(mode && !strcmp(mode, "ioctl"));
	if (mode && *mode && strcmp(mode, "ioctl") && strcmp(mode, "uio") && !warned)
		fprintf(stderr,
			"libascend_hal (npu_model): %s='%s' is neither 'uio' nor 'ioctl'; "
			"using uio\n",
			NPU_MODEL_SQ_MODE_ENV, mode);
	snprintf(path, sizeof(path), "%s/%s", hal.dir, NPU_MODEL_INFO_NAME);
	text = malloc(65536);
	err = text ? read_info(path, text, 65536) : -ENOMEM;
	if (!err)
		err = parse_info(text);
	free(text);
	if (err) {
		/* Say it once per process; every call then fails fast, nothing waits. */
		if (!warned++)
			fprintf(stderr,
				"libascend_hal (npu_model): no NPU at %s (%s): is npu-modeld "
				"running? Start it with --mount DIR and set %s=DIR\n",
				hal.dir,
				err == -EPROTO ? "unreadable npu_model_info" : strerror(-err),
				NPU_MODEL_DEV_DIR_ENV);
		pthread_mutex_unlock(&hal_lock);
		return DRV_ERROR_NO_DEVICE;
	}
	for (d = 0; d < hal.cards; d++) {
		struct hal_dev *dv = &hal.dev[d];

		pthread_mutex_init(&dv->lock, NULL);
		dv->tsdrv_fd = -1;
		dv->davinci_fd = -1;
		dv->va_next = VA_BASE + d * VA_PER_CARD;
		dv->va_end = dv->va_next + VA_PER_CARD;
		for (i = 0; i < NPU_UIO_MAX_SQ; i++)
			pthread_mutex_init(&dv->sq[i].lock, NULL);
	}
	__atomic_store_n(&hal.ready, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&hal_lock);
	return DRV_ERROR_NONE;
}

int hal_module_fd(const char *module, int device_id, int *cache)
{
	struct davinci_intf_open_arg a;
	char path[4200];
	int fd, err;

	if (*cache >= 0)
		return *cache;
	snprintf(path, sizeof(path), "%s/davinci_manager", hal.dir);
	fd = open(path, O_RDWR | O_SYNC | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		fprintf(stderr, "libascend_hal (npu_model): cannot open %s: %s\n", path,
			strerror(-err));
		return err;
	}
	memset(&a, 0, sizeof(a));
	snprintf(a.module_name, sizeof(a.module_name), "%s", module);
	a.device_id = device_id;
	err = hal_ioctl(fd, "-", DAVINCI_INTF_IOCTL_OPEN, &a);
	if (err < 0) {
		close(fd);
		return err;
	}
	*cache = fd;
	return fd;
}

struct hal_dev *hal_dev_get(uint32_t dev, drvError_t *err)
{
	struct hal_dev *dv;
	char path[4200];
	int fd;

	*err = hal_init();
	if (*err)
		return NULL;
	if (dev >= hal.cards) {
		*err = DRV_ERROR_INVALID_DEVICE;
		return NULL;
	}
	dv = &hal.dev[dev];
	if (__atomic_load_n(&dv->dead, __ATOMIC_RELAXED)) {
		*err = DRV_ERROR_NO_DEVICE;
		return NULL;
	}
	if (__atomic_load_n(&dv->tsdrv_fd, __ATOMIC_ACQUIRE) >= 0)
		return dv;
	pthread_mutex_lock(&dv->lock);
	if (dv->tsdrv_fd >= 0) { /* another thread bound it meanwhile */
		pthread_mutex_unlock(&dv->lock);
		return dv;
	}
	if (dv->davinci_fd < 0) {
		snprintf(path, sizeof(path), "%s/davinci%u", hal.dir, dev);
		dv->davinci_fd = open(path, O_RDWR | O_CLOEXEC);
		if (dv->davinci_fd < 0) {
			*err = hal_errno_to_drv(-errno);
			pthread_mutex_unlock(&dv->lock);
			return NULL;
		}
	}
	if (!dv->uio) {
		int sfd = open(dv->shm, O_RDWR | O_CLOEXEC);
		void *p = MAP_FAILED;

		if (sfd >= 0) {
			p = mmap(NULL, NPU_UIO_FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, sfd,
				 0);
			close(sfd);
		}
		if (p == MAP_FAILED || ((struct npu_uio_card *)p)->magic != NPU_UIO_MAGIC) {
			fprintf(stderr, "libascend_hal (npu_model): cannot map %s: %s\n", dv->shm,
				p == MAP_FAILED ? strerror(errno) : "bad magic");
			if (p != MAP_FAILED)
				munmap(p, NPU_UIO_FILE_BYTES);
			*err = DRV_ERROR_NO_DEVICE;
			pthread_mutex_unlock(&dv->lock);
			return NULL;
		}
		dv->uio = p;
	}
	{
		int cache = -1;

		fd = hal_module_fd(DAVINCI_MODULE_TSDRV, (int)dev, &cache);
	}
	if (fd < 0) {
		*err = hal_errno_to_drv(fd);
		pthread_mutex_unlock(&dv->lock);
		return NULL;
	}
	__atomic_store_n(&dv->tsdrv_fd, fd, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&dv->lock);
	return dv;
}

drvError_t hal_dev_alive(struct hal_dev *dv)
{
	uint64_t now = hal_now_ns();
	int err;

	if (__atomic_load_n(&dv->dead, __ATOMIC_RELAXED))
		return DRV_ERROR_NO_DEVICE;
	if (now - __atomic_load_n(&dv->alive_checked_ns, __ATOMIC_RELAXED) < 200000000ull)
		return DRV_ERROR_NONE;
	__atomic_store_n(&dv->alive_checked_ns, now, __ATOMIC_RELAXED);
	err = hal_ioctl(dv->tsdrv_fd, DAVINCI_MODULE_TSDRV, DAVINCI_INTF_IOCTL_GET_MODULE_STATUS,
			NULL);
	if (err == -ENOTCONN || err == -EIO || err == -ENODEV || err == -EBADF) {
		__atomic_store_n(&dv->dead, 1, __ATOMIC_RELAXED);
		daemon_gone(err);
		return DRV_ERROR_NO_DEVICE;
	}
	return DRV_ERROR_NONE;
}

static int svm_fd(void)
{
	int fd;

	pthread_mutex_lock(&hal_lock);
	fd = hal_module_fd(DAVINCI_MODULE_SVM, 0, &hal.svm_fd);
	pthread_mutex_unlock(&hal_lock);
	return fd;
}

static int prof_fd(void)
{
	int fd;

	pthread_mutex_lock(&hal_lock);
	fd = hal_module_fd(DAVINCI_MODULE_PROF, 0, &hal.prof_fd);
	pthread_mutex_unlock(&hal_lock);
	return fd;
}

/*
 * After fork() the child must not act on the parent's binds: the daemon
 * would count its ids, SQs and memory as the parent's (same open files).
 * So the child drops everything inherited and binds afresh on first use, as
 * a new process (CANN likewise wants a forked child to initialise again).
 */
static void heap_reset_in_child(void);

static void hal_atfork_child(void)
{
	uint32_t d;

	pthread_mutex_init(&hal_lock, NULL);
	if (!hal.ready)
		return;
	for (d = 0; d < hal.cards; d++) {
		struct hal_dev *dv = &hal.dev[d];

		if (dv->tsdrv_fd >= 0)
			close(dv->tsdrv_fd);
		if (dv->davinci_fd >= 0)
			close(dv->davinci_fd);
		if (dv->uio)
			munmap(dv->uio, NPU_UIO_FILE_BYTES);
	}
	if (hal.svm_fd >= 0)
		close(hal.svm_fd);
	if (hal.prof_fd >= 0)
		close(hal.prof_fd);
	memset(hal.dev, 0, sizeof(hal.dev));
	hal.svm_fd = hal.prof_fd = -1;
	hal.ready = 0;
	heap_reset_in_child();
}

__attribute__((constructor)) static void hal_register_atfork(void)
{
	pthread_atfork(NULL, NULL, hal_atfork_child);
}

/* ---- version, devices ----------------------------------------------------------------- */

HAL_API drvError_t halGetAPIVersion(int *halAPIVersion)
{
	uint64_t t0 = API_T0();
	drvError_t ret = DRV_ERROR_NONE;

	if (!halAPIVersion)
		ret = DRV_ERROR_INVALID_VALUE;
	else
		*halAPIVersion = HAL_API_VERSION;
	API_LINE("halGetAPIVersion", t0, ret, "");
	return ret;
}

HAL_API drvError_t drvGetDevNum(uint32_t *num_dev)
{
	uint64_t t0 = API_T0();
	drvError_t ret = num_dev ? hal_init() : DRV_ERROR_INVALID_VALUE;

	if (!ret)
		*num_dev = hal.cards;
	API_LINE("drvGetDevNum", t0, ret, "");
	return ret;
}

static __thread uint64_t last_cnt_mono_ns;

static uint64_t counter_now(const struct hal_dev *dv, uint64_t *mono)
{
	uint64_t t = hal_now_ns();
	unsigned __int128 d;

	*mono = t;
	if (t < dv->cnt_base_ns)
		return dv->cnt_offset;
	d = (unsigned __int128)(t - dv->cnt_base_ns) * dv->cnt_freq_hz / 1000000000u;
	return dv->cnt_offset + (uint64_t)d;
}

static drvError_t mem_info(uint32_t dev, struct devmm_query_mem_usedinfo_para *q)
{
	struct devmm_ioctl_arg a;
	int fd = svm_fd(), err;

	if (fd < 0)
		return hal_errno_to_drv(fd);
	memset(&a, 0, sizeof(a));
	a.head.devid = dev;
	a.head.logical_devid = dev;
	err = hal_ioctl(fd, DAVINCI_MODULE_SVM, DEVMM_SVM_QUERY_MEM_USEDINFO, &a);
	if (err < 0)
		return hal_errno_to_drv(err);
	*q = *NPU_DEVMM_QUERY(&a);
	return DRV_ERROR_NONE;
}

static drvError_t prof_drops(uint32_t dev, int64_t *value);

HAL_API drvError_t halGetDeviceInfo(uint32_t devId, int32_t moduleType, int32_t infoType,
				    int64_t *value)
{
	uint64_t t0 = API_T0();
	drvError_t ret = hal_init();
	struct devmm_query_mem_usedinfo_para q = { 0 };
	uint64_t mono;

	if (!ret && (!value || moduleType != MODULE_TYPE_SYSTEM))
		ret = value ? DRV_ERROR_NOT_SUPPORT : DRV_ERROR_INVALID_VALUE;
	if (!ret && devId >= hal.cards)
		ret = DRV_ERROR_INVALID_DEVICE;
	if (!ret) {
		struct hal_dev *dv = &hal.dev[devId];

		switch (infoType) {
		case INFO_TYPE_DEV_OSC_FREQUE:
			/* in kHz, as the real driver answers it */
			*value = (int64_t)(dv->cnt_freq_hz / 1000);
			break;
		case INFO_TYPE_SYS_COUNT:
			/* the counter now; no host time with it (the caller brackets the call) */
			*value = (int64_t)counter_now(dv, &mono);
			break;
		case INFO_TYPE_HOST_OSC_FREQUE:
			/*
			 * The host oscillator: the model's host clock is CLOCK_MONOTONIC, which
			 * has no counter frequency (torch_npu then uses CLOCK_MONOTONIC_RAW).
			 */
			ret = DRV_ERROR_NOT_SUPPORT;
			break;
		case NPU_INFO_TYPE_SYS_COUNT:
		case NPU_INFO_TYPE_SYS_COUNT_MONO:
		case NPU_INFO_TYPE_PROF_DROPS:
			if (hal.no_private) {
				ret = DRV_ERROR_NOT_SUPPORT; /* --no-private */
			} else if (infoType == NPU_INFO_TYPE_SYS_COUNT) {
				*value = (int64_t)counter_now(dv, &last_cnt_mono_ns);
			} else if (infoType == NPU_INFO_TYPE_SYS_COUNT_MONO) {
				*value = (int64_t)last_cnt_mono_ns;
			} else {
				ret = prof_drops(devId, value);
			}
			break;
		case NPU_INFO_TYPE_HBM_TOTAL:
		case NPU_INFO_TYPE_HBM_USED:
			ret = mem_info(devId, &q);
			if (!ret)
				*value = (int64_t)(infoType == NPU_INFO_TYPE_HBM_TOTAL ? q.total :
											 q.used);
			break;
		default:
			ret = DRV_ERROR_NOT_SUPPORT;
		}
	}
	API_LINE("halGetDeviceInfo", t0, ret, "\tdev=%u\tmodule_type=%d\tinfo_type=%d", devId,
		 moduleType, infoType);
	return ret;
}

/* ---- memory ----------------------------------------------------------------------------- */

/*
 * The process's device VA heap: live allocations and freed extents per device
 * (first fit over the freed ones, else the bump pointer).  The card only
 * accounts capacity; choosing VAs in user space is what the real SVM heap does.
 */
struct hal_alloc {
	uint64_t va;
	uint64_t size; /* rounded to NPU_HBM_PAGE */
	uint64_t req;  /* size asked for */
	int dev;       /* -1: host memory */
};

static struct {
	pthread_mutex_t lock;
	struct hal_alloc *live;
	uint32_t nlive, caplive;
	struct hal_alloc *freed;
	uint32_t nfreed, capfreed;
	uint64_t app_total[NPU_MODEL_MAX_CARDS]; /* live device bytes asked for, per card */
} heap = { .lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * The `mem component=APP` journal line of one device allocation or free
 * (npu_model/JOURNAL.md): the process's device memory as the driver sees
 * it, sizes as asked of halMemAlloc, totals = this process's live bytes on
 * that device (allocated = reserved = active: the driver does not cache).
 */
static void app_mem_line(const char *op, uint64_t va, int64_t size, int dev, uint64_t total)
{
	if (npu_journal_on)
		npu_journal_write("mem",
				  "tid=%d\tcomponent=APP\top=%s\tt=%llu\tptr=0x%llx\t"
				  "size=%lld\ttotal_allocated=%llu\ttotal_reserved=%llu\t"
				  "total_active=%llu\tstream=0\tdevice=%d",
				  (int)gettid_cached(), op, (unsigned long long)hal_now_ns(),
				  (unsigned long long)va, (long long)size,
				  (unsigned long long)total, (unsigned long long)total,
				  (unsigned long long)total, dev);
}

static int push(struct hal_alloc **arr, uint32_t *n, uint32_t *cap, struct hal_alloc a)
{
	if (*n == *cap) {
		uint32_t ncap = *cap ? *cap * 2 : 64;
		struct hal_alloc *p = realloc(*arr, ncap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*arr = p;
		*cap = ncap;
	}
	(*arr)[(*n)++] = a;
	return 0;
}

static void heap_reset_in_child(void)
{
	uint32_t i, n = 0;

	pthread_mutex_init(&heap.lock, NULL);
	/* Host allocations stay valid in the child; device ones were the parent's. */
	for (i = 0; i < heap.nlive; i++)
		if (heap.live[i].dev == -1)
			heap.live[n++] = heap.live[i];
	heap.nlive = n;
	heap.nfreed = 0;
	memset(heap.app_total, 0, sizeof(heap.app_total));
}

/* Caller holds heap.lock. */
static uint64_t va_take(struct hal_dev *dv, int dev, uint64_t size)
{
	uint32_t i;
	uint64_t va;

	for (i = 0; i < heap.nfreed; i++) {
		struct hal_alloc *f = &heap.freed[i];

		if (f->dev == dev && f->size >= size) {
			va = f->va;
			f->va += size;
			f->size -= size;
			if (!f->size)
				heap.freed[i] = heap.freed[--heap.nfreed];
			return va;
		}
	}
	if (size > dv->va_end - dv->va_next)
		return 0;
	va = dv->va_next;
	dv->va_next += size;
	return va;
}

/* Caller holds heap.lock. */
static void va_give_back(int dev, uint64_t va, uint64_t size)
{
	uint32_t i;

	for (i = 0; i < heap.nfreed; i++) {
		struct hal_alloc *f = &heap.freed[i];

		if (f->dev == dev && f->va + f->size == va) {
			f->size += size;
			return;
		}
		if (f->dev == dev && va + size == f->va) {
			f->va = va;
			f->size += size;
			return;
		}
	}
	push(&heap.freed, &heap.nfreed, &heap.capfreed,
	     (struct hal_alloc){ .va = va, .size = size, .dev = dev });
}

static drvError_t dev_mem_alloc(void **pp, unsigned long long size, uint32_t dev)
{
	struct devmm_ioctl_arg a;
	struct hal_dev *dv;
	uint64_t rounded, va;
	drvError_t ret;
	int fd, err;

	dv = hal_dev_get(dev, &ret);
	if (!dv)
		return ret;
	fd = svm_fd();
	if (fd < 0)
		return hal_errno_to_drv(fd);
	if (size > (1ull << 50))
		return DRV_ERROR_OUT_OF_MEMORY;
	rounded = (size + NPU_HBM_PAGE - 1) / NPU_HBM_PAGE * NPU_HBM_PAGE;
	pthread_mutex_lock(&heap.lock);
	va = va_take(dv, (int)dev, rounded);
	pthread_mutex_unlock(&heap.lock);
	if (!va)
		return DRV_ERROR_OUT_OF_MEMORY;
	memset(&a, 0, sizeof(a));
	a.head.devid = dev;
	a.head.logical_devid = dev;
	a.data.alloc_svm_para.p = va;
	a.data.alloc_svm_para.size = size;
	err = hal_ioctl(fd, DAVINCI_MODULE_SVM, DEVMM_SVM_ALLOC, &a);
	if (!err) {
		memset(&a.data, 0, sizeof(a.data));
		a.data.advise_para.ptr = va;
		a.data.advise_para.count = size;
		a.data.advise_para.advise = DV_ADVISE_POPULATE | DV_ADVISE_LOCK_DEV;
		err = hal_ioctl(fd, DAVINCI_MODULE_SVM, DEVMM_SVM_ADVISE, &a);
		if (err) {
			memset(&a.data, 0, sizeof(a.data));
			a.data.free_pages_para.va = va;
			hal_ioctl(fd, DAVINCI_MODULE_SVM, DEVMM_SVM_FREE_PAGES, &a);
		}
	}
	pthread_mutex_lock(&heap.lock);
	if (err ||
	    push(&heap.live, &heap.nlive, &heap.caplive,
		 (struct hal_alloc){ .va = va, .size = rounded, .req = size, .dev = (int)dev })) {
		va_give_back((int)dev, va, rounded);
		pthread_mutex_unlock(&heap.lock);
		return err ? hal_errno_to_drv(err) : DRV_ERROR_OUT_OF_MEMORY;
	}
	heap.app_total[dev] += size;
	app_mem_line("malloc", va, (int64_t)size, (int)dev, heap.app_total[dev]);
	pthread_mutex_unlock(&heap.lock);
	*pp = (void *)(uintptr_t)va;
	return DRV_ERROR_NONE;
}

HAL_API drvError_t halMemAlloc(void **pp, unsigned long long size, unsigned long long flag)
{
	uint64_t t0 = API_T0();
	uint32_t dev = MEM_DEVID(flag);
	int is_host = (flag & (0xfull << 10)) == MEM_HOST;
	drvError_t ret;
	void *p = NULL;

	if (!pp || size == 0) {
		ret = DRV_ERROR_INVALID_VALUE;
	} else if (is_host) {
		/* Host memory is the process's own; the card does not account it. */
		ret = posix_memalign(&p, 4096, size) ? DRV_ERROR_OUT_OF_MEMORY : DRV_ERROR_NONE;
		if (!ret) {
			pthread_mutex_lock(&heap.lock);
			if (push(&heap.live, &heap.nlive, &heap.caplive,
				 (struct hal_alloc){
					 .va = (uint64_t)(uintptr_t)p, .size = size, .dev = -1 })) {
				free(p);
				p = NULL;
				ret = DRV_ERROR_OUT_OF_MEMORY;
			}
			pthread_mutex_unlock(&heap.lock);
		}
	} else {
		ret = dev_mem_alloc(&p, size, dev);
	}
	if (!ret)
		*pp = p;
	if (ret == DRV_ERROR_OUT_OF_MEMORY && npu_journal_on)
		npu_journal_write("oom",
				  "tid=%d\tt=%llu\tsize=%llu\tret=%d\tdev=%u\tlayer=driver\t"
				  "name=halMemAlloc",
				  (int)gettid_cached(), (unsigned long long)hal_now_ns(), size, ret,
				  dev);
	API_LINE("halMemAlloc", t0, ret, "\tsize=%llu\tptr=0x%llx\tdev=%u\tflag=0x%llx", size,
		 (unsigned long long)(uintptr_t)p, dev, flag);
	return ret;
}

HAL_API drvError_t halMemFree(void *pp)
{
	uint64_t t0 = API_T0(), va = (uint64_t)(uintptr_t)pp;
	struct hal_alloc a = { .dev = -2 };
	drvError_t ret = DRV_ERROR_NONE;
	uint32_t i;

	pthread_mutex_lock(&heap.lock);
	for (i = 0; i < heap.nlive; i++) {
		if (heap.live[i].va == va) {
			a = heap.live[i];
			heap.live[i] = heap.live[--heap.nlive];
			break;
		}
	}
	pthread_mutex_unlock(&heap.lock);
	if (!pp || a.dev == -2) {
		ret = DRV_ERROR_INVALID_VALUE;
	} else if (a.dev == -1) {
		free(pp);
	} else {
		struct devmm_ioctl_arg arg;
		int fd = svm_fd(), err;

		memset(&arg, 0, sizeof(arg));
		arg.head.devid = (uint32_t)a.dev;
		arg.head.logical_devid = (uint32_t)a.dev;
		arg.data.free_pages_para.va = va;
		err = fd < 0 ? fd : hal_ioctl(fd, DAVINCI_MODULE_SVM, DEVMM_SVM_FREE_PAGES, &arg);
		ret = hal_errno_to_drv(err);
		pthread_mutex_lock(&heap.lock);
		va_give_back(a.dev, va, a.size);
		heap.app_total[a.dev] -= a.req;
		app_mem_line("free", va, -(int64_t)a.req, a.dev, heap.app_total[a.dev]);
		pthread_mutex_unlock(&heap.lock);
	}
	API_LINE("halMemFree", t0, ret, "\tptr=0x%llx\tsize=%llu\tdev=%d", (unsigned long long)va,
		 (unsigned long long)(a.dev >= -1 ? a.size : 0), a.dev >= 0 ? a.dev : -1);
	return ret;
}

/* ---- ids, SQ/CQ ------------------------------------------------------------------------- */

/*
 * TRS_RES_ID_ALLOC (with the stream priority and flag from in->res) or
 * TRS_RES_ID_FREE (of in->resourceId) of an id of in->type; *p holds the
 * answer.
 */
static drvError_t res_id_ioctl(struct hal_dev *dv, const struct halResourceIdInputInfo *in,
			       unsigned long cmd, struct trs_res_id_para *p)
{
	memset(p, 0, sizeof(*p));
	p->tsid = in->tsId;
	p->res_type = (int)in->type;
	if (cmd == TRS_RES_ID_ALLOC) {
		p->usr_para.stream_pri = in->res[0];
		p->usr_para.flag = in->res[1];
	} else {
		p->id = in->resourceId;
	}
	return hal_errno_to_drv(hal_ioctl(dv->tsdrv_fd, DAVINCI_MODULE_TSDRV, cmd, p));
}

HAL_API drvError_t halResourceIdAlloc(uint32_t devId, struct halResourceIdInputInfo *in,
				      struct halResourceIdOutputInfo *out)
{
	uint64_t t0 = API_T0();
	struct trs_res_id_para p;
	struct hal_dev *dv;
	drvError_t ret;

	dv = hal_dev_get(devId, &ret);
	if (dv && (!in || !out || in->type >= DRV_SQ_ID))
		ret = DRV_ERROR_INVALID_VALUE;
	else if (dv) {
		ret = res_id_ioctl(dv, in, TRS_RES_ID_ALLOC, &p);
		if (!ret) {
			memset(out, 0, sizeof(*out));
			out->resourceId = p.id;
		}
	}
	API_LINE("halResourceIdAlloc", t0, ret, "\tdev=%u\ttype=%d\tid=%d", devId,
		 in ? (int)in->type : -1, !ret ? (int)out->resourceId : -1);
	return ret;
}

HAL_API drvError_t halResourceIdFree(uint32_t devId, struct halResourceIdInputInfo *in)
{
	uint64_t t0 = API_T0();
	struct trs_res_id_para p;
	struct hal_dev *dv;
	drvError_t ret;

	dv = hal_dev_get(devId, &ret);
	if (dv && (!in || in->type >= DRV_SQ_ID))
		ret = DRV_ERROR_INVALID_VALUE;
	else if (dv)
		ret = res_id_ioctl(dv, in, TRS_RES_ID_FREE, &p);
	API_LINE("halResourceIdFree", t0, ret, "\tdev=%u\ttype=%d\tid=%d", devId,
		 in ? (int)in->type : -1, in ? (int)in->resourceId : -1);
	return ret;
}

HAL_API drvError_t halSqCqAllocate(uint32_t devId, struct halSqCqInputInfo *in,
				   struct halSqCqOutputInfo *out)
{
	uint64_t t0 = API_T0();
	struct halSqCqInputInfo arg;
	struct hal_dev *dv;
	drvError_t ret;
	int err;

	dv = hal_dev_get(devId, &ret);
	if (dv && (!in || !out))
		ret = DRV_ERROR_INVALID_VALUE;
	else if (dv) {
		arg = *in;
		err = hal_ioctl(dv->tsdrv_fd, DAVINCI_MODULE_TSDRV, TRS_SQCQ_ALLOC, &arg);
		ret = hal_errno_to_drv(err);
		if (!ret && arg.sqId >= NPU_UIO_MAX_SQ)
			ret = DRV_ERROR_INNER_ERR;
		if (!ret) {
			struct hal_sq *sq = &dv->sq[arg.sqId];

			pthread_mutex_lock(&sq->lock);
			sq->used = 1;
			sq->tail = 0;
			sq->cq_id = arg.cqId;
			sq->u = npu_uio_sq_at(dv->uio, arg.sqId);
			pthread_mutex_unlock(&sq->lock);
			memset(out, 0, sizeof(*out));
			out->sqId = arg.sqId;
			out->cqId = arg.cqId;
			out->queueVAddr = hal.uio_mode ? (unsigned long long)(uintptr_t)sq->u->sqe :
							 0;
			in->sqId = arg.sqId;
			in->cqId = arg.cqId;
		}
	}
	API_LINE("halSqCqAllocate", t0, ret, "\tdev=%u\tsq=%d\tcq=%d\tstream=%u", devId,
		 !ret ? (int)out->sqId : -1, !ret ? (int)out->cqId : -1, in ? in->info[0] : 0);
	return ret;
}

HAL_API drvError_t halSqCqFree(uint32_t devId, struct halSqCqFreeInfo *info)
{
	uint64_t t0 = API_T0();
	struct hal_dev *dv;
	drvError_t ret;

	dv = hal_dev_get(devId, &ret);
	if (dv && !info)
		ret = DRV_ERROR_INVALID_VALUE;
	else if (dv) {
		ret = hal_errno_to_drv(
			hal_ioctl(dv->tsdrv_fd, DAVINCI_MODULE_TSDRV, TRS_SQCQ_FREE, info));
		if (!ret && info->sqId < NPU_UIO_MAX_SQ) {
			struct hal_sq *sq = &dv->sq[info->sqId];

			pthread_mutex_lock(&sq->lock);
			sq->used = 0;
			pthread_mutex_unlock(&sq->lock);
		}
	}
	API_LINE("halSqCqFree", t0, ret, "\tdev=%u\tsq=%d", devId, info ? (int)info->sqId : -1);
	return ret;
}

/*
 * Waits (futex) until the SQ head differs from `seen` or timeout_us passes;
 * returns the head.  *err becomes DRV_ERROR_NO_DEVICE if the daemon died.
 */
static uint32_t wait_head(struct hal_dev *dv, struct hal_sq *sq, uint32_t seen, uint64_t timeout_us,
			  drvError_t *err)
{
	struct npu_uio_card *card = dv->uio;
	uint64_t deadline = hal_now_ns() + timeout_us * 1000ull;
	uint32_t head;

	*err = DRV_ERROR_NONE;
	for (;;) {
		uint32_t gen = atomic_load((_Atomic uint32_t *)&card->completions);
		uint64_t now, slice;
		struct timespec ts;

		head = atomic_load_explicit((_Atomic uint32_t *)&sq->u->head, memory_order_acquire);
		now = hal_now_ns();
		if (head % NPU_UIO_SQ_DEPTH != seen || now >= deadline)
			return head;
		*err = hal_dev_alive(dv);
		if (*err)
			return head;
		/* Sleep in slices so a dead daemon is noticed within one. */
		slice = deadline - now < 200000000ull ? deadline - now : 200000000ull;
		ts.tv_sec = (time_t)(slice / 1000000000ull);
		ts.tv_nsec = (long)(slice % 1000000000ull);
		atomic_fetch_add((_Atomic uint32_t *)&card->completion_waiters, 1);
		head = atomic_load_explicit((_Atomic uint32_t *)&sq->u->head, memory_order_acquire);
		if (head % NPU_UIO_SQ_DEPTH == seen)
			futex(&card->completions, FUTEX_WAIT, gen, &ts);
		atomic_fetch_sub((_Atomic uint32_t *)&card->completion_waiters, 1);
	}
}

HAL_API drvError_t halSqCqQuery(uint32_t devId, struct halSqCqQueryInfo *info)
{
	uint64_t t0 = API_T0();
	struct hal_dev *dv;
	drvError_t ret;

	dv = hal_dev_get(devId, &ret);
	if (dv && (!info || info->sqId >= NPU_UIO_MAX_SQ || !dv->sq[info->sqId].used))
		ret = DRV_ERROR_INVALID_VALUE;
	else if (dv) {
		struct hal_sq *sq = &dv->sq[info->sqId];

		if (info->prop == NPU_SQCQ_PROP_SQ_HEAD_WAIT) {
			info->value[0] = wait_head(dv, sq, info->value[1], info->value[2], &ret) %
					 NPU_UIO_SQ_DEPTH;
		} else if (hal.uio_mode && info->prop == DRV_SQCQ_PROP_SQ_HEAD) {
			uint32_t head = atomic_load_explicit((_Atomic uint32_t *)&sq->u->head,
							     memory_order_acquire);

			/* Work outstanding: make sure someone is still there to do it. */
			if (head != sq->tail)
				ret = hal_dev_alive(dv);
			info->value[0] = head % NPU_UIO_SQ_DEPTH;
		} else if (hal.uio_mode && info->prop == DRV_SQCQ_PROP_SQ_TAIL) {
			info->value[0] = sq->tail % NPU_UIO_SQ_DEPTH;
		} else {
			ret = hal_errno_to_drv(hal_ioctl(dv->tsdrv_fd, DAVINCI_MODULE_TSDRV,
							 TRS_SQCQ_QUERY, info));
		}
	}
	API_LINE("halSqCqQuery", t0, ret, "\tdev=%u\tsq=%d\tprop=%d\tvalue=%u", devId,
		 info ? (int)info->sqId : -1, info ? (int)info->prop : -1,
		 info && !ret ? info->value[0] : 0);
	return ret;
}

HAL_API drvError_t halSqCqConfig(uint32_t devId, struct halSqCqConfigInfo *info)
{
	uint64_t t0 = API_T0();
	struct hal_dev *dv;
	drvError_t ret;

	dv = hal_dev_get(devId, &ret);
	if (dv && !info)
		ret = DRV_ERROR_INVALID_VALUE;
	else if (dv)
		ret = hal_errno_to_drv(
			hal_ioctl(dv->tsdrv_fd, DAVINCI_MODULE_TSDRV, TRS_SQCQ_CONFIG, info));
	API_LINE("halSqCqConfig", t0, ret, "\tdev=%u\tsq=%d\tprop=%d", devId,
		 info ? (int)info->sqId : -1, info ? (int)info->prop : -1);
	return ret;
}

/* uio: copy into the shared ring, stamp, publish, ring the doorbell.  Caller holds sq->lock. */
static drvError_t send_uio(struct hal_dev *dv, struct hal_sq *sq, uint32_t sq_id,
			   struct halTaskSendInfo *info)
{
	struct npu_uio_card *card = dv->uio;
	uint32_t n = info->sqe_num, head, i;
	uint64_t seq;

	head = atomic_load_explicit((_Atomic uint32_t *)&sq->u->head, memory_order_acquire);
	if (sq->tail + n - head > NPU_UIO_SQ_DEPTH - 1) {
		/* Full: wait for the card up to the caller's timeout (ms; <= 0: 10 s). */
		uint64_t limit = info->timeout > 0 ? (uint64_t)info->timeout : 10000;
		uint64_t deadline = hal_now_ns() + limit * 1000000ull;

		while (sq->tail + n - head > NPU_UIO_SQ_DEPTH - 1) {
			uint64_t now = hal_now_ns();
			drvError_t err;

			if (now >= deadline)
				return DRV_ERROR_WAIT_TIMEOUT;
			head = wait_head(dv, sq, head % NPU_UIO_SQ_DEPTH, (deadline - now) / 1000,
					 &err);
			if (err)
				return err;
		}
	}
	seq = atomic_fetch_add((_Atomic uint64_t *)&card->submit_seq, n);
	for (i = 0; i < n; i++) {
		uint32_t slot = (sq->tail + i) % NPU_UIO_SQ_DEPTH;

		memcpy(sq->u->sqe[slot], info->sqe_addr + (size_t)i * NPU_UIO_SQE_SIZE,
		       NPU_UIO_SQE_SIZE);
		sq->u->seq[slot] = seq + i;
	}
	info->pos = sq->tail % NPU_UIO_SQ_DEPTH;
	sq->tail += n;
	atomic_store_explicit((_Atomic uint32_t *)&sq->u->tail, sq->tail, memory_order_release);
	atomic_fetch_or((_Atomic uint64_t *)&card->pending[sq_id / 64], 1ull << (sq_id % 64));
	atomic_fetch_add((_Atomic uint32_t *)&card->doorbell, 1);
	if (atomic_load((_Atomic uint32_t *)&card->card_sleeping))
		futex(&card->doorbell, FUTEX_WAKE, 1, NULL);
	return DRV_ERROR_NONE;
}

/* ioctl: one TRS_SQCQ_SEND; retried while the SQ is full.  Caller holds sq->lock. */
static drvError_t send_ioctl(struct hal_dev *dv, struct hal_sq *sq, struct halTaskSendInfo *info)
{
	uint64_t limit = info->timeout > 0 ? (uint64_t)info->timeout : 10000;
	uint64_t deadline = hal_now_ns() + limit * 1000000ull;
	int err;

	for (;;) {
		err = hal_ioctl(dv->tsdrv_fd, DAVINCI_MODULE_TSDRV, TRS_SQCQ_SEND, info);
		drvError_t derr;

		if (err != -EBUSY || hal_now_ns() >= deadline)
			break;
		wait_head(dv, sq, atomic_load((_Atomic uint32_t *)&sq->u->head) % NPU_UIO_SQ_DEPTH,
			  1000, &derr);
	}
	if (err)
		return hal_errno_to_drv(err);
	info->pos = sq->tail % NPU_UIO_SQ_DEPTH;
	sq->tail += info->sqe_num;
	return DRV_ERROR_NONE;
}

HAL_API drvError_t halSqTaskSend(uint32_t devId, struct halTaskSendInfo *info)
{
	uint64_t t0 = API_T0();
	const rtStarsSqeHeader_t *h = NULL;
	struct hal_dev *dv;
	drvError_t ret;

	dv = hal_dev_get(devId, &ret);
	if (dv && (!info || info->type != DRV_NORMAL_TYPE || info->sqId >= NPU_UIO_MAX_SQ ||
		   !info->sqe_addr || info->sqe_num == 0 || info->sqe_num >= NPU_UIO_SQ_DEPTH))
		ret = DRV_ERROR_INVALID_VALUE;
	else if (dv) {
		struct hal_sq *sq = &dv->sq[info->sqId];

		h = (const rtStarsSqeHeader_t *)info->sqe_addr;
		pthread_mutex_lock(&sq->lock);
		if (!sq->used)
			ret = DRV_ERROR_INVALID_VALUE;
		else if (hal.uio_mode)
			ret = send_uio(dv, sq, info->sqId, info);
		else
			ret = send_ioctl(dv, sq, info);
		pthread_mutex_unlock(&sq->lock);
	}
	API_LINE("halSqTaskSend", t0, ret,
		 "\tdev=%u\tsq=%d\tsqe_num=%u\tstream=%d\ttask=%d\tpos=%d", devId,
		 info ? (int)info->sqId : -1, info ? info->sqe_num : 0, h ? (int)h->rtStreamId : -1,
		 h ? (int)h->taskId : -1, info && !ret ? (int)info->pos : -1);
	return ret;
}

HAL_API drvError_t halCqReportRecv(uint32_t devId, struct halReportRecvInfo *info)
{
	uint64_t t0 = API_T0();
	struct hal_dev *dv;
	drvError_t ret;

	dv = hal_dev_get(devId, &ret);
	if (dv && !info)
		ret = DRV_ERROR_INVALID_VALUE;
	else if (dv)
		ret = hal_errno_to_drv(
			hal_ioctl(dv->tsdrv_fd, DAVINCI_MODULE_TSDRV, TRS_SQCQ_RECV, info));
	API_LINE("halCqReportRecv", t0, ret, "\tdev=%u\tcq=%d\treport_cqe_num=%u", devId,
		 info ? (int)info->cqId : -1, info && !ret ? info->report_cqe_num : 0);
	return ret;
}

/* ---- profiling channels ------------------------------------------------------------------ */

/* Return values: 0 / bytes / ready count on success, -(drvError_t) on failure. */

/* acsq_task of a start's STARS configuration, for the journal (0: none). */
static uint32_t start_acsq(const struct prof_start_para *p)
{
	uint32_t v;

	if (!p || !p->user_data || p->user_data_size < sizeof(v))
		return 0;
	memcpy(&v, p->user_data, sizeof(v));
	return v;
}

HAL_API int prof_drv_start(unsigned int device_id, unsigned int channel_id,
			   struct prof_start_para *start_para)
{
	uint64_t t0 = API_T0();
	struct npu_prof_ctl a;
	drvError_t ret = hal_init();
	int fd;

	/* the real driver's argument checks (dmc/prof: prof_drv_start) */
	if (!ret && (channel_id >= PROF_CHANNEL_NUM_MAX || !start_para ||
		     (!start_para->user_data && start_para->user_data_size)))
		ret = DRV_ERROR_INVALID_VALUE;
	if (!ret && device_id >= hal.cards)
		ret = DRV_ERROR_INVALID_DEVICE;
	if (!ret) {
		fd = prof_fd();
		memset(&a, 0, sizeof(a));
		a.device_id = device_id;
		a.channel_id = channel_id;
		a.sample_period = start_para->sample_period;
		a.real_time = start_para->real_time;
		a.channel_type = start_para->channel_type;
		/* the configuration goes to the card as given; the card judges it */
		a.user_data = (uint64_t)(uintptr_t)start_para->user_data;
		a.user_data_size = start_para->user_data_size;
		ret = fd < 0 ? hal_errno_to_drv(fd) :
			       hal_errno_to_drv(hal_ioctl(fd, DAVINCI_MODULE_PROF,
							  NPU_PROF_IOCTL_START, &a));
		if (!ret)
			hal.dev[device_id].prof_dropped = 0;
	}
	API_LINE("prof_drv_start", t0, -(int)ret,
		 "\tdev=%u\tchannel=%u\tuser_data_size=%u"
		 "\tacsq_task=%u",
		 device_id, channel_id, start_para ? start_para->user_data_size : 0,
		 start_acsq(start_para));
	return -(int)ret;
}

HAL_API int prof_stop(unsigned int device_id, unsigned int channel_id)
{
	uint64_t t0 = API_T0();
	struct npu_prof_ctl a;
	drvError_t ret = hal_init();
	int fd;

	if (!ret && device_id >= hal.cards)
		ret = DRV_ERROR_INVALID_DEVICE;
	if (!ret) {
		fd = prof_fd();
		memset(&a, 0, sizeof(a));
		a.device_id = device_id;
		a.channel_id = channel_id;
		ret = fd < 0 ? hal_errno_to_drv(fd) :
			       hal_errno_to_drv(
				       hal_ioctl(fd, DAVINCI_MODULE_PROF, NPU_PROF_IOCTL_STOP, &a));
	}
	API_LINE("prof_stop", t0, -(int)ret, "\tdev=%u\tchannel=%u", device_id, channel_id);
	return -(int)ret;
}

static int prof_read(unsigned int device_id, unsigned int channel_id, char *buf, unsigned int size,
		     struct npu_prof_read_arg *a)
{
	int fd = prof_fd(), err;

	if (fd < 0)
		return fd;
	memset(a, 0, sizeof(*a));
	a->device_id = device_id;
	a->channel_id = channel_id;
	a->buf = (uint64_t)(uintptr_t)buf;
	a->buf_size = buf ? size : 0;
	err = hal_ioctl(fd, DAVINCI_MODULE_PROF, NPU_PROF_IOCTL_READ, a);
	if (!err)
		__atomic_store_n(&hal.dev[device_id].prof_dropped, a->dropped, __ATOMIC_RELAXED);
	return err;
}

static drvError_t prof_drops(uint32_t dev, int64_t *value)
{
	struct npu_prof_read_arg a;
	int err = prof_read(dev, PROF_CHANNEL_STARS_SOC_LOG, NULL, 0, &a);

	/* No session now: the count of the last one (0 if there was none). */
	if (err == -ENOENT)
		err = 0;
	*value = (int64_t)__atomic_load_n(&hal.dev[dev].prof_dropped, __ATOMIC_RELAXED);
	return hal_errno_to_drv(err);
}

HAL_API int prof_channel_read(unsigned int device_id, unsigned int channel_id, char *out_buf,
			      unsigned int buf_size)
{
	uint64_t t0 = API_T0();
	struct npu_prof_read_arg a;
	drvError_t ret = hal_init();
	int bytes = 0;

	if (!ret && (device_id >= hal.cards))
		ret = DRV_ERROR_INVALID_DEVICE;
	if (!ret && (!out_buf || buf_size < sizeof(struct StarsAcsqLog) || buf_size > INT32_MAX))
		ret = DRV_ERROR_INVALID_VALUE;
	if (!ret) {
		ret = hal_errno_to_drv(prof_read(device_id, channel_id, out_buf, buf_size, &a));
		bytes = ret ? 0 : (int)a.bytes;
	}
	API_LINE("prof_channel_read", t0, ret ? -(int)ret : bytes,
		 "\tdev=%u\tchannel=%u\tdropped=%llu", device_id, channel_id,
		 (unsigned long long)(device_id < NPU_MODEL_MAX_CARDS ?
					      hal.dev[device_id].prof_dropped :
					      0));
	return ret ? -(int)ret : bytes;
}

/* Model: the card has no private buffer, so this only reports what a read would get now. */
HAL_API int halProfDataFlush(unsigned int device_id, unsigned int channel_id,
			     unsigned int *data_len)
{
	uint64_t t0 = API_T0();
	struct npu_prof_read_arg a;
	drvError_t ret = hal_init();

	if (!ret && device_id >= hal.cards)
		ret = DRV_ERROR_INVALID_DEVICE;
	if (!ret && !data_len)
		ret = DRV_ERROR_INVALID_VALUE;
	if (!ret)
		ret = hal_errno_to_drv(prof_read(device_id, channel_id, NULL, 0, &a));
	if (!ret)
		*data_len = a.pending * 64 > UINT32_MAX ? UINT32_MAX :
							  (unsigned int)(a.pending * 64);
	API_LINE("halProfDataFlush", t0, -(int)ret, "\tdev=%u\tchannel=%u\tdata_len=%u", device_id,
		 channel_id, !ret ? *data_len : 0);
	return -(int)ret;
}

HAL_API int prof_channel_poll(struct prof_poll_info *out_buf, int num, int timeout)
{
	uint64_t t0 = API_T0();
	struct npu_prof_poll_arg a;
	drvError_t ret = hal_init();
	int fd, n = 0, err;

	if (!ret && (!out_buf || num <= 0 || timeout < 0))
		ret = DRV_ERROR_INVALID_VALUE;
	if (!ret) {
		fd = prof_fd();
		memset(&a, 0, sizeof(a));
		/* timeout is in seconds (the collector passes whole seconds); 0 = do not wait. */
		a.timeout_ms = timeout > 3600 ? 3600000 : timeout * 1000;
		a.num = (uint32_t)num;
		a.out = (uint64_t)(uintptr_t)out_buf;
		err = fd < 0 ? fd : hal_ioctl(fd, DAVINCI_MODULE_PROF, NPU_PROF_IOCTL_POLL, &a);
		ret = hal_errno_to_drv(err);
		n = ret ? 0 : (int)a.ready;
	}
	API_LINE("prof_channel_poll", t0, ret ? -(int)ret : n, "\tnum=%d\ttimeout=%d", num,
		 timeout);
	return ret ? -(int)ret : n;
}
