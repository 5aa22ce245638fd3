// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * runtime.c - libruntime.so: devices, streams, events, memory and kernel
 * launch of the rt* API (npu_rt.h), on top of the driver HAL (ascend_hal.h).
 *
 * Every task becomes one 64-byte SQE (npu_sqe.h) with the real STARS header:
 * the stream's id and a per-stream 16-bit task id that wraps, with the wrap
 * count (flip) in the payload.  SQEs go to the card with halSqTaskSend, one
 * SQ per stream; NPU_MODEL_SQE_BATCH=N (1..64, default 1) lets a stream hold
 * up to N SQEs and send them in one call (the real HAL takes sqe_num > 1).
 * Pending SQEs are always sent before anything waits or queries.
 * Completion is the SQ head the card reports (halSqCqQuery SQ_HEAD), as on a
 * real card where only failed tasks write CQEs.
 *
 * Event times: the model has no CQE timestamps, so an event's completion
 * time is when this process first saw it complete (within one poll of the
 * SQ head); aclrtEventElapsedTime is therefore accurate to the poll interval.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ascend_hal.h"
#include "npu_acl.h"
#include "npu_api_journal.h"
#include "npu_cost.h"
#include "npu_ioctl.h"
#include "npu_kernel.h"
#include "npu_rt.h"
#include "npu_sqe.h"
#include "runtime/taskid.h"

#define RT_MAX_DEVICES	16
#define RT_SQ_DEPTH	1024
#define RT_BATCH_MAX	64
#define RT_STREAM_MAGIC 0x5354524dU /* "STRM" */
#define RT_EVENT_MAGIC	0x4556544eU /* "EVTN" */
#define RT_KERNEL_MAGIC 0x4b524e4cU /* "KRNL" */
#define RT_POLL_MIN_NS	20000
#define RT_POLL_MAX_NS	500000

struct rt_stream {
	uint32_t magic;
	int32_t dev;
	uint32_t id; /* halResourceIdAlloc(DRV_STREAM_ID) */
	uint32_t sq_id, cq_id;
	pthread_mutex_t lock;
	struct rt_taskid tid;
	uint64_t queued; /* tasks given an id (sent + pending) */
	uint64_t sent;	 /* SQEs handed to halSqTaskSend */
	uint64_t done;	 /* SQEs the card has completed, last seen */
	uint32_t tail;	 /* SQ position after the last sent SQE */
	uint32_t head;	 /* SQ head the card last reported */
	unsigned int nr_pending;
	struct npu_sqe pending[RT_BATCH_MAX];
};

struct rt_event {
	uint32_t magic;
	int32_t dev;
	uint32_t id; /* halResourceIdAlloc(DRV_EVENT_ID) */
	uint32_t flags;
	struct rt_stream *stream; /* of the latest record, NULL if never recorded */
	uint64_t seq;		  /* stream task count that completes the record */
	uint64_t done_ns;	  /* when first seen complete, 0 if not yet */
	int unstamped;		  /* in rt_unstamped[] */
	struct rt_event *next;	  /* rt_events list */
};

struct rt_kernel {
	uint32_t magic;
	uint32_t id;
	const void *stub;
	char name[NPU_SQE_KERNEL_NAME_LEN];
	struct rt_kernel *next;
};

struct rt_device {
	int refs;
	struct rt_stream *default_stream;
	uint64_t reserved; /* bytes from rtMalloc, live */
};

static pthread_mutex_t rt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rt_device rt_devices[RT_MAX_DEVICES];
static __thread int32_t rt_cur_dev = -1;
static __thread uint32_t rt_last_task, rt_last_stream;
static unsigned int rt_batch = 1;
static uint64_t rt_tasks_total, rt_kernels_total;

static rtError_t rt_sync_all_streams(int32_t dev);

/*
 * Event times.  The model's card reports no event timestamps, so an event
 * is stamped with the host time of the first SQ-head poll of its stream
 * that shows it complete.  Every event query, synchronize and elapsed-time
 * call polls the streams of all events not yet stamped, so events complete
 * at the same moment get stamps within one poll of each other and causally
 * ordered records (B waited for A) never come out reversed.
 * rt_ev_lock guards the stream / seq / done_ns of every event; lock order:
 * a stream's lock, then rt_ev_lock.
 */
#define RT_MAX_UNSTAMPED 1024
static pthread_mutex_t rt_ev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rt_event *rt_unstamped[RT_MAX_UNSTAMPED];
static int rt_nr_unstamped;
static struct rt_event *rt_events; /* every live event */
static void poll_event_streams(void);

/* ptr -> (size, dev) of live rtMalloc blocks, for rtFree and the GE totals. */
struct rt_block {
	void *ptr;
	uint64_t size;
	int32_t dev;
	struct rt_block *next;
};
#define RT_BLOCK_BUCKETS 4096
static struct rt_block *rt_blocks[RT_BLOCK_BUCKETS];

#define RT_KERNEL_BUCKETS 256
static struct rt_kernel *rt_kernels[RT_KERNEL_BUCKETS];
static uint32_t rt_next_kernel_id = 1;

/* Read when a device is first opened, so a process can set it up to then. */
static void rt_read_env(void)
{
	const char *b = getenv("NPU_MODEL_SQE_BATCH");

	rt_batch = 1;
	if (b && *b) {
		long v = strtol(b, NULL, 10);

		rt_batch = v < 1 ? 1 : v > RT_BATCH_MAX ? RT_BATCH_MAX : (unsigned int)v;
	}
}

/*
 * NPU_MODEL_COMPUTE_SCALE=K (fault injection: a slow rank, npu_train
 * --slow-rank): every kernel of this process takes K times as long on the
 * card (the SQE's `slow`).
 */
static uint64_t rt_compute_scale(void)
{
	static uint64_t scale;

	if (!scale) {
		const char *v = getenv("NPU_MODEL_COMPUTE_SCALE");
		long k = v ? strtol(v, NULL, 10) : 1;

		scale = k >= 1 && k <= 1000 ? (uint64_t)k : 1;
	}
	return scale;
}

static size_t hash_ptr(const void *p, size_t buckets)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)(x % buckets);
}

static rtError_t drv_to_rt(drvError_t e)
{
	switch (e) {
	case DRV_ERROR_NONE:
		return ACL_SUCCESS;
	case DRV_ERROR_NO_DEVICE:
		return ACL_ERROR_RT_NO_DEVICE;
	case DRV_ERROR_INVALID_DEVICE:
		return ACL_ERROR_RT_INVALID_DEVICEID;
	case DRV_ERROR_OUT_OF_MEMORY:
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	case DRV_ERROR_INVALID_VALUE:
	case DRV_ERROR_PARA_ERROR:
		return ACL_ERROR_RT_PARAM_INVALID;
	case DRV_ERROR_WAIT_TIMEOUT:
		return ACL_ERROR_RT_TASK_TIMEOUT;
	default:
		return ACL_ERROR_RT_DRV_INTERNAL_ERROR;
	}
}

static void rt_sleep_ns(long ns)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ns };

	nanosleep(&ts, NULL);
}

static uint64_t rt_sync_timeout_ns(void)
{
	static uint64_t cached;
	const char *s;

	if (!cached) {
		s = getenv("NPU_MODEL_SYNC_TIMEOUT_S");
		cached = (s && atoi(s) > 0 ? (uint64_t)atoi(s) : 120) * 1000000000ull;
	}
	return cached;
}

/* ---- streams and submission ---------------------------------------------------------- */

static int stream_ok(const struct rt_stream *s)
{
	return s && s->magic == RT_STREAM_MAGIC;
}

/* Stamps the events of stream s that its completed count now covers.  Caller holds s->lock. */
static void stamp_events_locked(struct rt_stream *s)
{
	uint64_t now = npu_now_ns();

	pthread_mutex_lock(&rt_ev_lock);
	for (int i = 0; i < rt_nr_unstamped;) {
		struct rt_event *e = rt_unstamped[i];

		if (e->stream == s && e->seq <= s->done) {
			e->done_ns = now;
			e->unstamped = 0;
			rt_unstamped[i] = rt_unstamped[--rt_nr_unstamped];
			continue;
		}
		i++;
	}
	pthread_mutex_unlock(&rt_ev_lock);
}

/* Reads the SQ head and updates s->done.  Caller holds s->lock. */
static rtError_t stream_poll_locked(struct rt_stream *s)
{
	struct halSqCqQueryInfo q;
	drvError_t e;
	int64_t done;

	memset(&q, 0, sizeof(q));
	q.type = DRV_NORMAL_TYPE;
	q.sqId = s->sq_id;
	q.cqId = s->cq_id;
	q.prop = DRV_SQCQ_PROP_SQ_HEAD;
	e = halSqCqQuery((uint32_t)s->dev, &q);
	if (e)
		return drv_to_rt(e);
	done = rt_sq_completed(s->sent, s->tail, q.value[0], RT_SQ_DEPTH);
	if (done < 0)
		return ACL_ERROR_RT_DRV_INTERNAL_ERROR;
	s->done = (uint64_t)done;
	s->head = q.value[0];
	if (rt_nr_unstamped)
		stamp_events_locked(s);
	return ACL_SUCCESS;
}

/* Sends the pending SQEs, waiting for SQ space if needed.  Caller holds s->lock. */
static rtError_t stream_flush_locked(struct rt_stream *s)
{
	struct halTaskSendInfo info;
	uint64_t start = 0;
	long nap = RT_POLL_MIN_NS;
	drvError_t e;
	rtError_t r;

	if (!s->nr_pending)
		return ACL_SUCCESS;
	while (s->sent - s->done + s->nr_pending > RT_SQ_DEPTH - 1) {
		r = stream_poll_locked(s);
		if (r)
			return r;
		if (s->sent - s->done + s->nr_pending <= RT_SQ_DEPTH - 1)
			break;
		if (!start)
			start = npu_now_ns();
		else if (npu_now_ns() - start > rt_sync_timeout_ns())
			return ACL_ERROR_RT_TASK_TIMEOUT;
		rt_sleep_ns(nap);
		nap = nap * 2 > RT_POLL_MAX_NS ? RT_POLL_MAX_NS : nap * 2;
	}
	memset(&info, 0, sizeof(info));
	info.type = DRV_NORMAL_TYPE;
	info.sqId = s->sq_id;
	info.timeout = 0;
	info.sqe_addr = (uint8_t *)s->pending;
	info.sqe_num = s->nr_pending;
	e = halSqTaskSend((uint32_t)s->dev, &info);
	if (e) {
		/* The tasks are lost; keep the counters consistent with the card. */
		s->queued -= s->nr_pending;
		s->nr_pending = 0;
		return drv_to_rt(e);
	}
	s->sent += s->nr_pending;
	s->tail = (info.pos + s->nr_pending) % RT_SQ_DEPTH;
	s->nr_pending = 0;
	return ACL_SUCCESS;
}

/*
 * Gives *sqe (payload filled by the caller) its header and queues it on s;
 * sends at once unless batching.  Returns the task count that completes it.
 */
static rtError_t stream_submit(struct rt_stream *s, struct npu_sqe *sqe, uint8_t sqe_type,
			       uint16_t block_dim, const char *kernel, uint64_t *seq_out)
{
	struct npu_sqe *slot;
	uint16_t flip, task;
	rtError_t r = ACL_SUCCESS;

	pthread_mutex_lock(&s->lock);
	if (s->nr_pending == RT_BATCH_MAX) {
		r = stream_flush_locked(s);
		if (r)
			goto out;
	}
	task = rt_taskid_take(&s->tid, &flip);
	slot = &s->pending[s->nr_pending++];
	*slot = *sqe;
	memset(&slot->header, 0, sizeof(slot->header));
	slot->header.type = sqe_type & 0x3f;
	slot->header.blockDim = block_dim;
	slot->header.rtStreamId = (uint16_t)s->id;
	slot->header.taskId = task;
	slot->flip = flip;
	s->queued++;
	__atomic_add_fetch(&rt_tasks_total, 1, __ATOMIC_RELAXED);
	if (slot->kind == NPU_SQE_KIND_KERNEL)
		__atomic_add_fetch(&rt_kernels_total, 1, __ATOMIC_RELAXED);
	if (seq_out)
		*seq_out = s->queued;
	rt_last_task = rt_taskid_full(flip, task);
	rt_last_stream = s->id;
	if (npu_journal_on)
		npu_journal_write("task",
				  "tid=%d\tt=%llu\tdev=%d\tstream=%u\ttask=%u\twrap=%u"
				  "\tsqe_type=%u\tkernel=%s\ttask_type=%s\tblock_dim=%u\tflops=%llu"
				  "\tbytes=%llu",
				  npu_tid(), (unsigned long long)npu_now_ns(), s->dev, s->id, task,
				  flip, sqe_type, kernel ? kernel : "-",
				  npu_task_type_name(slot->task_type), block_dim,
				  (unsigned long long)slot->flops, (unsigned long long)slot->bytes);
	if (s->nr_pending >= rt_batch)
		r = stream_flush_locked(s);
out:
	pthread_mutex_unlock(&s->lock);
	return r;
}

/*
 * Sleeps until the card reports an SQ head other than `seen` (npu-modeld's
 * NPU_SQCQ_PROP_SQ_HEAD_WAIT, npu_ioctl.h) or 50 ms pass.  0 if the HAL did
 * the waiting; -1 if it cannot (then the caller naps and polls).
 */
static int rt_head_wait_broken;

static int stream_sleep_on_head(struct rt_stream *s, uint32_t seen)
{
	struct halSqCqQueryInfo q;

	if (rt_head_wait_broken)
		return -1;
	memset(&q, 0, sizeof(q));
	q.type = DRV_NORMAL_TYPE;
	q.sqId = s->sq_id;
	q.cqId = s->cq_id;
	q.prop = (drvSqCqPropType_t)NPU_SQCQ_PROP_SQ_HEAD_WAIT;
	q.value[1] = seen;
	q.value[2] = 50000;
	if (halSqCqQuery((uint32_t)s->dev, &q)) {
		rt_head_wait_broken = 1; /* ioctl mode or an older daemon: poll */
		return -1;
	}
	return 0;
}

/* Waits until the stream has completed `target` tasks (all queued if 0). */
static rtError_t stream_wait(struct rt_stream *s, uint64_t target)
{
	uint64_t start = npu_now_ns();
	long nap = RT_POLL_MIN_NS;
	uint32_t seen;
	rtError_t r;

	for (;;) {
		/* Other streams' events first, so causally earlier events get earlier stamps. */
		if (rt_nr_unstamped)
			poll_event_streams();
		pthread_mutex_lock(&s->lock);
		if (!target)
			target = s->queued;
		r = stream_flush_locked(s);
		if (!r && s->done < target)
			r = stream_poll_locked(s);
		if (!r && s->done >= target) {
			pthread_mutex_unlock(&s->lock);
			return ACL_SUCCESS;
		}
		if (!r && s->sent + s->nr_pending < target)
			r = ACL_ERROR_RT_INTERNAL_ERROR; /* tasks lost by a failed send */
		seen = s->head;
		pthread_mutex_unlock(&s->lock);
		if (r)
			return r;
		if (npu_now_ns() - start > rt_sync_timeout_ns())
			return ACL_ERROR_RT_TASK_TIMEOUT;
		/* Without the stream lock: other threads may keep submitting meanwhile. */
		if (stream_sleep_on_head(s, seen)) {
			rt_sleep_ns(nap);
			nap = nap * 2 > RT_POLL_MAX_NS ? RT_POLL_MAX_NS : nap * 2;
		}
	}
}

static rtError_t stream_create(int32_t dev, int32_t priority, struct rt_stream **out)
{
	struct halResourceIdInputInfo rin;
	struct halResourceIdOutputInfo rout;
	struct halSqCqInputInfo sin;
	struct halSqCqOutputInfo sout;
	struct rt_stream *s;
	drvError_t e;

	s = calloc(1, sizeof(*s));
	if (!s)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	memset(&rin, 0, sizeof(rin));
	memset(&rout, 0, sizeof(rout));
	rin.type = DRV_STREAM_ID;
	rin.res[0] = (uint32_t)priority;
	e = halResourceIdAlloc((uint32_t)dev, &rin, &rout);
	if (e) {
		free(s);
		if (e == DRV_ERROR_OUT_OF_MEMORY)
			return ACL_ERROR_RT_NO_STREAM_RESOURCE;
		return drv_to_rt(e);
	}
	memset(&sin, 0, sizeof(sin));
	memset(&sout, 0, sizeof(sout));
	sin.type = DRV_NORMAL_TYPE;
	sin.sqeSize = sizeof(struct npu_sqe);
	sin.cqeSize = 12;
	sin.sqeDepth = RT_SQ_DEPTH;
	sin.cqeDepth = RT_SQ_DEPTH;
	sin.info[0] = rout.resourceId;
	e = halSqCqAllocate((uint32_t)dev, &sin, &sout);
	if (e) {
		rin.resourceId = rout.resourceId;
		halResourceIdFree((uint32_t)dev, &rin);
		free(s);
		return drv_to_rt(e);
	}
	s->magic = RT_STREAM_MAGIC;
	s->dev = dev;
	s->id = rout.resourceId;
	s->sq_id = sout.sqId;
	s->cq_id = sout.cqId;
	pthread_mutex_init(&s->lock, NULL);
	*out = s;
	return ACL_SUCCESS;
}

static void stream_release(struct rt_stream *s)
{
	struct halSqCqFreeInfo f;
	struct halResourceIdInputInfo rin;
	uint64_t now = npu_now_ns();

	/* Events last recorded here: complete (the stream was drained), and forget s. */
	pthread_mutex_lock(&rt_ev_lock);
	for (struct rt_event *e = rt_events; e; e = e->next) {
		if (e->stream != s)
			continue;
		if (!e->done_ns)
			e->done_ns = now;
		e->stream = NULL;
	}
	for (int i = 0; i < rt_nr_unstamped;) {
		if (!rt_unstamped[i]->stream) {
			rt_unstamped[i]->unstamped = 0;
			rt_unstamped[i] = rt_unstamped[--rt_nr_unstamped];
			continue;
		}
		i++;
	}
	pthread_mutex_unlock(&rt_ev_lock);

	memset(&f, 0, sizeof(f));
	f.type = DRV_NORMAL_TYPE;
	f.sqId = s->sq_id;
	f.cqId = s->cq_id;
	halSqCqFree((uint32_t)s->dev, &f);
	memset(&rin, 0, sizeof(rin));
	rin.type = DRV_STREAM_ID;
	rin.resourceId = s->id;
	halResourceIdFree((uint32_t)s->dev, &rin);
	s->magic = 0;
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* The stream a call means: NULL is the current device's default stream. */
static struct rt_stream *stream_of(rtStream_t stm)
{
	struct rt_stream *s = stm;

	if (!s) {
		if (rt_cur_dev < 0 || rt_cur_dev >= RT_MAX_DEVICES)
			return NULL;
		s = rt_devices[rt_cur_dev].default_stream;
	}
	return stream_ok(s) ? s : NULL;
}

/* ---- devices ------------------------------------------------------------------------- */

NPU_NOINLINE rtError_t rtGetDeviceCount(int32_t *cnt)
{
	uint32_t n = 0;
	drvError_t e;
	rtError_t r;
	NPU_API_ENTER();

	if (!cnt) {
		r = ACL_ERROR_RT_PARAM_INVALID;
	} else {
		e = drvGetDevNum(&n);
		r = drv_to_rt(e);
		if (!r)
			*cnt = (int32_t)n;
	}
	NPU_API_EXIT("cann", r, "");
	return r;
}

NPU_NOINLINE rtError_t rtSetDevice(int32_t devId)
{
	uint32_t n = 0;
	drvError_t e;
	rtError_t r = ACL_SUCCESS;
	NPU_API_ENTER();

	if (devId < 0 || devId >= RT_MAX_DEVICES) {
		r = ACL_ERROR_RT_INVALID_DEVICEID;
		goto out;
	}
	e = drvGetDevNum(&n);
	if (e) {
		r = drv_to_rt(e);
		goto out;
	}
	if ((uint32_t)devId >= n) {
		r = ACL_ERROR_RT_INVALID_DEVICEID;
		goto out;
	}
	pthread_mutex_lock(&rt_lock);
	if (!rt_devices[devId].refs) {
		rt_read_env();
		r = stream_create(devId, RT_STREAM_PRIORITY_DEFAULT,
				  &rt_devices[devId].default_stream);
		if (!r)
			rt_devices[devId].refs = 1;
	} else {
		rt_devices[devId].refs++;
	}
	pthread_mutex_unlock(&rt_lock);
	if (!r)
		rt_cur_dev = devId;
out:
	NPU_API_EXIT("cann", r, "\tdev=%d", devId);
	return r;
}

NPU_NOINLINE rtError_t rtDeviceReset(int32_t devId)
{
	struct rt_stream *s = NULL;
	rtError_t r = ACL_SUCCESS;
	NPU_API_ENTER();

	if (devId < 0 || devId >= RT_MAX_DEVICES) {
		r = ACL_ERROR_RT_INVALID_DEVICEID;
		goto out;
	}
	pthread_mutex_lock(&rt_lock);
	if (!rt_devices[devId].refs) {
		r = ACL_ERROR_RT_CONTEXT_NULL;
	} else if (--rt_devices[devId].refs == 0) {
		s = rt_devices[devId].default_stream;
		rt_devices[devId].default_stream = NULL;
	}
	pthread_mutex_unlock(&rt_lock);
	if (s) {
		stream_wait(s, 0);
		stream_release(s);
	}
out:
	NPU_API_EXIT("cann", r, "\tdev=%d", devId);
	return r;
}

NPU_NOINLINE rtError_t rtGetDevice(int32_t *devId)
{
	rtError_t r = ACL_SUCCESS;
	NPU_API_ENTER();

	if (!devId)
		r = ACL_ERROR_RT_PARAM_INVALID;
	else if (rt_cur_dev < 0)
		r = ACL_ERROR_RT_CONTEXT_NULL;
	else
		*devId = rt_cur_dev;
	NPU_API_EXIT("cann", r, "");
	return r;
}

NPU_NOINLINE rtError_t rtDeviceSynchronize(void)
{
	rtError_t r = ACL_SUCCESS;
	NPU_API_ENTER();

	/* Every stream of the current device: the default one plus those created on it. */
	if (rt_cur_dev < 0)
		r = ACL_ERROR_RT_CONTEXT_NULL;
	else
		r = rt_sync_all_streams(rt_cur_dev);
	NPU_API_EXIT("cann", r, "\tdev=%d", rt_cur_dev);
	return r;
}

/* ---- stream API ---------------------------------------------------------------------- */

/* All streams, for rtDeviceSynchronize. */
#define RT_MAX_STREAMS 1024
static struct rt_stream *rt_streams[RT_MAX_STREAMS];

static void stream_register(struct rt_stream *s)
{
	pthread_mutex_lock(&rt_lock);
	for (int i = 0; i < RT_MAX_STREAMS; i++) {
		if (!rt_streams[i]) {
			rt_streams[i] = s;
			break;
		}
	}
	pthread_mutex_unlock(&rt_lock);
}

static void stream_unregister(struct rt_stream *s)
{
	pthread_mutex_lock(&rt_lock);
	for (int i = 0; i < RT_MAX_STREAMS; i++)
		if (rt_streams[i] == s)
			rt_streams[i] = NULL;
	pthread_mutex_unlock(&rt_lock);
}

static rtError_t rt_sync_all_streams(int32_t dev)
{
	struct rt_stream *list[RT_MAX_STREAMS + 1];
	int n = 0;
	rtError_t r, first = ACL_SUCCESS;

	pthread_mutex_lock(&rt_lock);
	if (dev >= 0 && dev < RT_MAX_DEVICES && rt_devices[dev].default_stream)
		list[n++] = rt_devices[dev].default_stream;
	for (int i = 0; i < RT_MAX_STREAMS; i++)
		if (rt_streams[i] && rt_streams[i]->dev == dev)
			list[n++] = rt_streams[i];
	pthread_mutex_unlock(&rt_lock);
	for (int i = 0; i < n; i++) {
		r = stream_wait(list[i], 0);
		if (r && !first)
			first = r;
	}
	return first;
}

NPU_NOINLINE rtError_t rtStreamCreateWithFlags(rtStream_t *stm, int32_t priority, uint32_t flags)
{
	struct rt_stream *s = NULL;
	rtError_t r;
	NPU_API_ENTER();

	(void)flags;
	if (!stm)
		r = ACL_ERROR_RT_PARAM_INVALID;
	else if (rt_cur_dev < 0)
		r = ACL_ERROR_RT_CONTEXT_NULL;
	else
		r = stream_create(rt_cur_dev, priority, &s);
	if (!r) {
		stream_register(s);
		*stm = s;
	}
	NPU_API_EXIT("cann", r, "\tstream=%p\tstream_id=%d", (void *)s, s ? (int)s->id : -1);
	return r;
}

NPU_NOINLINE rtError_t rtStreamCreate(rtStream_t *stm, int32_t priority)
{
	rtError_t r;
	NPU_API_ENTER();

	r = rtStreamCreateWithFlags(stm, priority, 0);
	NPU_API_EXIT("cann", r, "");
	return r;
}

NPU_NOINLINE rtError_t rtStreamDestroy(rtStream_t stm)
{
	struct rt_stream *s = stm;
	rtError_t r = ACL_SUCCESS;
	NPU_API_ENTER();

	if (!stream_ok(s)) {
		r = ACL_ERROR_RT_PARAM_INVALID;
	} else {
		stream_unregister(s);
		r = stream_wait(s, 0);
		stream_release(s);
	}
	NPU_API_EXIT("cann", r, "\tstream=%p", stm);
	return r;
}

NPU_NOINLINE rtError_t rtStreamSynchronize(rtStream_t stm)
{
	struct rt_stream *s = stream_of(stm);
	rtError_t r;
	NPU_API_ENTER();

	r = s ? stream_wait(s, 0) : (stm ? ACL_ERROR_RT_PARAM_INVALID : ACL_ERROR_RT_CONTEXT_NULL);
	NPU_API_EXIT("cann", r, "\tstream=%p", stm);
	return r;
}

NPU_NOINLINE rtError_t rtGetStreamId(rtStream_t stm, int32_t *streamId)
{
	struct rt_stream *s = stream_of(stm);
	rtError_t r = ACL_SUCCESS;
	NPU_API_ENTER();

	if (!s || !streamId)
		r = ACL_ERROR_RT_PARAM_INVALID;
	else
		*streamId = (int32_t)s->id;
	NPU_API_EXIT("cann", r, "\tstream=%p", stm);
	return r;
}

/* The last task this thread queued: (flip << 16 | 16-bit id) and its stream id. */
NPU_NOINLINE rtError_t rtGetTaskIdAndStreamID(uint32_t *taskId, uint32_t *streamId)
{
	rtError_t r = ACL_SUCCESS;
	NPU_API_ENTER();

	if (!taskId || !streamId) {
		r = ACL_ERROR_RT_PARAM_INVALID;
	} else {
		*taskId = rt_last_task;
		*streamId = rt_last_stream;
	}
	NPU_API_EXIT("cann", r, "");
	return r;
}

/* ---- events -------------------------------------------------------------------------- */

static int event_ok(const struct rt_event *e)
{
	return e && e->magic == RT_EVENT_MAGIC;
}

NPU_NOINLINE rtError_t rtEventCreateWithFlag(rtEvent_t *evt, uint32_t flag)
{
	struct halResourceIdInputInfo rin;
	struct halResourceIdOutputInfo rout;
	struct rt_event *e = NULL;
	drvError_t d;
	rtError_t r = ACL_SUCCESS;
	NPU_API_ENTER();

	if (!evt) {
		r = ACL_ERROR_RT_PARAM_INVALID;
		goto out;
	}
	if (rt_cur_dev < 0) {
		r = ACL_ERROR_RT_CONTEXT_NULL;
		goto out;
	}
	memset(&rin, 0, sizeof(rin));
	memset(&rout, 0, sizeof(rout));
	rin.type = DRV_EVENT_ID;
	d = halResourceIdAlloc((uint32_t)rt_cur_dev, &rin, &rout);
	if (d) {
		r = drv_to_rt(d);
		goto out;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		rin.resourceId = rout.resourceId;
		halResourceIdFree((uint32_t)rt_cur_dev, &rin);
		r = ACL_ERROR_RT_MEMORY_ALLOCATION;
		goto out;
	}
	e->magic = RT_EVENT_MAGIC;
	e->dev = rt_cur_dev;
	e->id = rout.resourceId;
	e->flags = flag;
	pthread_mutex_lock(&rt_ev_lock);
	e->next = rt_events;
	rt_events = e;
	pthread_mutex_unlock(&rt_ev_lock);
	*evt = e;
out:
	NPU_API_EXIT("cann", r, "\tevent=%p", (void *)e);
	return r;
}

NPU_NOINLINE rtError_t rtEventCreate(rtEvent_t *evt)
{
	rtError_t r;
	NPU_API_ENTER();

	r = rtEventCreateWithFlag(evt, ACL_EVENT_SYNC);
	NPU_API_EXIT("cann", r, "");
	return r;
}

NPU_NOINLINE rtError_t rtEventRecord(rtEvent_t evt, rtStream_t stm)
{
	struct rt_event *e = evt;
	struct rt_stream *s = stream_of(stm);
	struct npu_sqe sqe;
	uint64_t seq = 0;
	rtError_t r;
	NPU_API_ENTER();

	if (!event_ok(e) || !s) {
		r = ACL_ERROR_RT_PARAM_INVALID;
		goto out;
	}
	memset(&sqe, 0, sizeof(sqe));
	sqe.kind = NPU_SQE_KIND_EVENT_RECORD;
	sqe.task_type = NPU_TASK_EVENT_RECORD;
	sqe.event_id = e->id;
	r = stream_submit(s, &sqe, RT_STARS_SQE_TYPE_EVENT_RECORD, 0, "EVENT_RECORD", &seq);
	if (!r) {
		pthread_mutex_lock(&rt_ev_lock);
		e->stream = s;
		e->seq = seq;
		e->done_ns = 0;
		if (!e->unstamped && rt_nr_unstamped < RT_MAX_UNSTAMPED) {
			e->unstamped = 1;
			rt_unstamped[rt_nr_unstamped++] = e;
		}
		pthread_mutex_unlock(&rt_ev_lock);
	}
out:
	NPU_API_EXIT("cann", r, "\tevent=%p\tstream=%p", evt, stm);
	return r;
}

NPU_NOINLINE rtError_t rtStreamWaitEvent(rtStream_t stm, rtEvent_t evt)
{
	struct rt_event *e = evt;
	struct rt_stream *s = stream_of(stm), *rs;
	struct npu_sqe sqe;
	rtError_t r;
	NPU_API_ENTER();

	if (!event_ok(e) || !s) {
		r = ACL_ERROR_RT_PARAM_INVALID;
		goto out;
	}
	/* The record must reach the card before the wait can be satisfied by it. */
	pthread_mutex_lock(&rt_ev_lock);
	rs = e->stream;
	pthread_mutex_unlock(&rt_ev_lock);
	if (rs && rs != s) {
		pthread_mutex_lock(&rs->lock);
		r = stream_flush_locked(rs);
		pthread_mutex_unlock(&rs->lock);
		if (r)
			goto out;
	}
	memset(&sqe, 0, sizeof(sqe));
	sqe.kind = NPU_SQE_KIND_EVENT_WAIT;
	sqe.task_type = NPU_TASK_EVENT_WAIT;
	sqe.event_id = e->id;
	r = stream_submit(s, &sqe, RT_STARS_SQE_TYPE_EVENT_WAIT, 0, "EVENT_WAIT", NULL);
out:
	NPU_API_EXIT("cann", r, "\tevent=%p\tstream=%p", evt, stm);
	return r;
}

/* Polls the stream of every event not stamped yet (stamp_events_locked does the rest). */
static void poll_event_streams(void)
{
	struct rt_stream *list[16];
	int n = 0;

	pthread_mutex_lock(&rt_ev_lock);
	for (int i = 0; i < rt_nr_unstamped && n < 16; i++) {
		int seen = 0;

		for (int j = 0; j < n; j++)
			seen |= list[j] == rt_unstamped[i]->stream;
		if (!seen)
			list[n++] = rt_unstamped[i]->stream;
	}
	pthread_mutex_unlock(&rt_ev_lock);
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&list[i]->lock);
		if (!stream_flush_locked(list[i]))
			stream_poll_locked(list[i]);
		pthread_mutex_unlock(&list[i]->lock);
	}
}

/* 0: complete (or never recorded); 1: not yet; else an rt error. */
static rtError_t event_check(struct rt_event *e, int wait)
{
	struct rt_stream *s;
	uint64_t seq;
	rtError_t r;

	pthread_mutex_lock(&rt_ev_lock);
	s = e->stream;
	seq = e->seq;
	pthread_mutex_unlock(&rt_ev_lock);
	if (!s)
		return ACL_SUCCESS;
	if (wait) {
		r = stream_wait(s, seq);
	} else {
		poll_event_streams();
		pthread_mutex_lock(&s->lock);
		r = stream_flush_locked(s);
		if (!r && s->done < seq)
			r = stream_poll_locked(s);
		if (!r && s->done < seq)
			r = 1;
		pthread_mutex_unlock(&s->lock);
	}
	return r;
}

NPU_NOINLINE rtError_t rtEventSynchronize(rtEvent_t evt)
{
	struct rt_event *e = evt;
	rtError_t r;
	NPU_API_ENTER();

	r = event_ok(e) ? event_check(e, 1) : ACL_ERROR_RT_PARAM_INVALID;
	NPU_API_EXIT("cann", r, "\tevent=%p", evt);
	return r;
}

/* ACL_SUCCESS when complete, 1 (not ready) otherwise; ACL_ERROR_RT_* on error. */
NPU_NOINLINE rtError_t rtEventQuery(rtEvent_t evt)
{
	struct rt_event *e = evt;
	rtError_t r;
	NPU_API_ENTER();

	r = event_ok(e) ? event_check(e, 0) : ACL_ERROR_RT_PARAM_INVALID;
	NPU_API_EXIT("cann", r, "\tevent=%p", evt);
	return r;
}

NPU_NOINLINE rtError_t rtEventElapsedTime(float *timeInterval, rtEvent_t startEvent,
					  rtEvent_t endEvent)
{
	struct rt_event *a = startEvent, *b = endEvent;
	rtError_t r;
	NPU_API_ENTER();

	if (!timeInterval || !event_ok(a) || !event_ok(b) || (!a->stream && !a->done_ns) ||
	    (!b->stream && !b->done_ns)) {
		r = ACL_ERROR_RT_PARAM_INVALID;
		goto out;
	}
	r = event_check(a, 0);
	if (!r)
		r = event_check(b, 0);
	if (r == 1) {
		r = ACL_ERROR_RT_PARAM_INVALID; /* not complete yet: CANN refuses too */
		goto out;
	}
	if (!r) {
		pthread_mutex_lock(&rt_ev_lock);
		*timeInterval = (float)((double)((int64_t)b->done_ns - (int64_t)a->done_ns) / 1e6);
		pthread_mutex_unlock(&rt_ev_lock);
	}
out:
	NPU_API_EXIT("cann", r, "");
	return r;
}

NPU_NOINLINE rtError_t rtEventDestroy(rtEvent_t evt)
{
	struct rt_event *e = evt;
	struct halResourceIdInputInfo rin;
	rtError_t r = ACL_SUCCESS;
	NPU_API_ENTER();

	if (!event_ok(e)) {
		r = ACL_ERROR_RT_PARAM_INVALID;
	} else {
		memset(&rin, 0, sizeof(rin));
		rin.type = DRV_EVENT_ID;
		rin.resourceId = e->id;
		halResourceIdFree((uint32_t)e->dev, &rin);
		pthread_mutex_lock(&rt_ev_lock);
		for (int i = 0; i < rt_nr_unstamped; i++) {
			if (rt_unstamped[i] == e) {
				rt_unstamped[i] = rt_unstamped[--rt_nr_unstamped];
				break;
			}
		}
		for (struct rt_event **pp = &rt_events; *pp; pp = &(*pp)->next) {
			if (*pp == e) {
				*pp = e->next;
				break;
			}
		}
		pthread_mutex_unlock(&rt_ev_lock);
		e->magic = 0;
		free(e);
	}
	NPU_API_EXIT("cann", r, "\tevent=%p", evt);
	return r;
}

/* ---- memory -------------------------------------------------------------------------- */

static void mem_journal(const char *op, void *ptr, int64_t size, int32_t dev, uint64_t total)
{
	if (npu_journal_on)
		npu_journal_write("mem",
				  "tid=%d\tcomponent=GE\top=%s\tt=%llu\tptr=%p\tsize=%lld"
				  "\ttotal_allocated=%llu\ttotal_reserved=%llu\ttotal_active=%llu"
				  "\tstream=0\tdevice=%d",
				  npu_tid(), op, (unsigned long long)npu_now_ns(), ptr,
				  (long long)size, (unsigned long long)total,
				  (unsigned long long)total, (unsigned long long)total, dev);
}

NPU_NOINLINE rtError_t rtMalloc(void **devPtr, uint64_t size, rtMemType_t type,
				const uint16_t moduleId)
{
	unsigned long long flag;
	struct rt_block *b;
	int32_t dev = rt_cur_dev;
	drvError_t e;
	rtError_t r = ACL_SUCCESS;
	uint64_t total;
	NPU_API_ENTER();

	(void)type;
	if (!devPtr || !size) {
		r = ACL_ERROR_RT_PARAM_INVALID;
		goto out;
	}
	if (dev < 0) {
		r = ACL_ERROR_RT_CONTEXT_NULL;
		goto out;
	}
	b = malloc(sizeof(*b));
	if (!b) {
		r = ACL_ERROR_RT_MEMORY_ALLOCATION;
		goto out;
	}
	flag = MEM_DEV | MEM_TYPE_HBM | (unsigned long long)dev |
	       ((unsigned long long)(moduleId & 0xff) << 56);
	e = halMemAlloc(devPtr, size, flag);
	if (e) {
		free(b);
		r = drv_to_rt(e);
		if (npu_journal_on)
			npu_journal_write("oom",
					  "tid=%d\tt=%llu\tsize=%llu\tret=%d\tlayer=rtMalloc",
					  npu_tid(), (unsigned long long)npu_now_ns(),
					  (unsigned long long)size, r);
		goto out;
	}
	b->ptr = *devPtr;
	b->size = size;
	b->dev = dev;
	pthread_mutex_lock(&rt_lock);
	size_t h = hash_ptr(b->ptr, RT_BLOCK_BUCKETS);
	b->next = rt_blocks[h];
	rt_blocks[h] = b;
	rt_devices[dev].reserved += size;
	total = rt_devices[dev].reserved;
	pthread_mutex_unlock(&rt_lock);
	mem_journal("malloc", b->ptr, (int64_t)size, dev, total);
out:
	NPU_API_EXIT("cann", r, "\tsize=%llu\tptr=%p\tdev=%d", (unsigned long long)size,
		     (r || !devPtr) ? NULL : *devPtr, dev);
	return r;
}

NPU_NOINLINE rtError_t rtFree(void *devPtr)
{
	struct rt_block **pp, *b = NULL;
	drvError_t e;
	rtError_t r = ACL_SUCCESS;
	uint64_t total = 0;
	NPU_API_ENTER();

	if (!devPtr) {
		r = ACL_ERROR_RT_PARAM_INVALID;
		goto out;
	}
	pthread_mutex_lock(&rt_lock);
	for (pp = &rt_blocks[hash_ptr(devPtr, RT_BLOCK_BUCKETS)]; *pp; pp = &(*pp)->next) {
		if ((*pp)->ptr == devPtr) {
			b = *pp;
			*pp = b->next;
			rt_devices[b->dev].reserved -= b->size;
			total = rt_devices[b->dev].reserved;
			break;
		}
	}
	pthread_mutex_unlock(&rt_lock);
	if (!b) {
		r = ACL_ERROR_RT_MEMORY_FREE; /* not ours: refuse, never touch the HAL */
		goto out;
	}
	e = halMemFree(devPtr);
	if (e)
		r = ACL_ERROR_RT_MEMORY_FREE;
	mem_journal("free", devPtr, -(int64_t)b->size, b->dev, total);
	free(b);
out:
	NPU_API_EXIT("cann", r, "\tptr=%p", devPtr);
	return r;
}

NPU_NOINLINE rtError_t rtMallocHost(void **hostPtr, uint64_t size, const uint16_t moduleId)
{
	rtError_t r = ACL_SUCCESS;
	NPU_API_ENTER();

	(void)moduleId;
	if (!hostPtr || !size)
		r = ACL_ERROR_RT_PARAM_INVALID;
	else if (posix_memalign(hostPtr, 64, size))
		r = ACL_ERROR_RT_MEMORY_ALLOCATION;
	NPU_API_EXIT("cann", r, "\tsize=%llu\tptr=%p", (unsigned long long)size,
		     r ? NULL : *hostPtr);
	return r;
}

NPU_NOINLINE rtError_t rtFreeHost(void *hostPtr)
{
	rtError_t r = ACL_SUCCESS;
	NPU_API_ENTER();

	if (!hostPtr)
		r = ACL_ERROR_RT_PARAM_INVALID;
	else
		free(hostPtr);
	NPU_API_EXIT("cann", r, "\tptr=%p", hostPtr);
	return r;
}

/*
 * Card memory: what the driver reports for the whole card (halGetDeviceInfo,
 * npu-modeld's HBM total and used), as aclrtGetMemInfo does on a real host.
 * A HAL without those info types: the NPU_MODEL_CARD spec's size minus this
 * process's rtMalloc bytes.
 */
NPU_NOINLINE rtError_t rtMemGetInfo(uint64_t *freeSize, uint64_t *totalSize)
{
	struct npu_card_config cfg;
	const char *spec = getenv("NPU_MODEL_CARD");
	int64_t total = 0, used = 0;
	rtError_t r = ACL_SUCCESS;
	NPU_API_ENTER();

	if (!freeSize || !totalSize) {
		r = ACL_ERROR_RT_PARAM_INVALID;
	} else if (rt_cur_dev < 0) {
		r = ACL_ERROR_RT_CONTEXT_NULL;
	} else if (!halGetDeviceInfo((uint32_t)rt_cur_dev, MODULE_TYPE_SYSTEM,
				     NPU_INFO_TYPE_HBM_TOTAL, &total) &&
		   !halGetDeviceInfo((uint32_t)rt_cur_dev, MODULE_TYPE_SYSTEM,
				     NPU_INFO_TYPE_HBM_USED, &used) &&
		   total > 0) {
		*totalSize = (uint64_t)total;
		*freeSize = used < total ? (uint64_t)(total - used) : 0;
	} else {
		npu_card_config_default(&cfg);
		if (spec)
			npu_card_config_parse(&cfg, spec);
		pthread_mutex_lock(&rt_lock);
		used = (int64_t)rt_devices[rt_cur_dev].reserved;
		pthread_mutex_unlock(&rt_lock);
		*totalSize = cfg.hbm_bytes;
		*freeSize = (uint64_t)used < cfg.hbm_bytes ? cfg.hbm_bytes - (uint64_t)used : 0;
	}
	NPU_API_EXIT("cann", r, "");
	return r;
}

static int card_of_va(const void *p);
static rtError_t submit_link_copy(struct rt_stream *s, void *dst, const void *src, uint64_t cnt,
				  int reduce);

static int copy_kind_of(rtMemcpyKind_t kind)
{
	switch (kind) {
	case RT_MEMCPY_HOST_TO_DEVICE:
	case RT_MEMCPY_HOST_TO_DEVICE_EX:
		return NPU_COPY_H2D;
	case RT_MEMCPY_DEVICE_TO_HOST:
	case RT_MEMCPY_DEVICE_TO_HOST_EX:
		return NPU_COPY_D2H;
	case RT_MEMCPY_DEVICE_TO_DEVICE:
	case RT_MEMCPY_ADDR_DEVICE_TO_DEVICE:
		return NPU_COPY_D2D;
	case RT_MEMCPY_HOST_TO_HOST:
		return NPU_COPY_H2H;
	default:
		return -1;
	}
}

static rtError_t submit_copy(struct rt_stream *s, void *dst, const void *src, uint64_t cnt, int ck,
			     uint64_t *seq)
{
	struct npu_sqe sqe;

	memset(&sqe, 0, sizeof(sqe));
	sqe.kind = NPU_SQE_KIND_MEMCPY;
	sqe.task_type = NPU_TASK_MEMCPY;
	sqe.copy_kind = (uint8_t)ck;
	sqe.bytes = cnt;
	sqe.u.copy.src = (uint64_t)(uintptr_t)src;
	sqe.u.copy.dst = (uint64_t)(uintptr_t)dst;
	return stream_submit(s, &sqe, RT_STARS_SQE_TYPE_SDMA, 1, "MEMCPY", seq);
}

NPU_NOINLINE rtError_t rtMemcpy(void *dst, uint64_t destMax, const void *src, uint64_t cnt,
				rtMemcpyKind_t kind)
{
	struct rt_stream *s;
	int ck = copy_kind_of(kind);
	uint64_t seq = 0;
	rtError_t r;
	NPU_API_ENTER();

	if (!dst || !src || cnt > destMax || ck < 0) {
		r = ACL_ERROR_RT_PARAM_INVALID;
	} else if (ck == NPU_COPY_H2H) {
		memmove(dst, src, cnt);
		r = ACL_SUCCESS;
	} else if (!(s = stream_of(NULL))) {
		r = ACL_ERROR_RT_CONTEXT_NULL;
	} else {
		/* A synchronous copy: its own task on the default stream, waited for. */
		r = submit_copy(s, dst, src, cnt, ck, &seq);
		if (!r)
			r = stream_wait(s, seq);
	}
	NPU_API_EXIT("cann", r, "\tsize=%llu\tkind=%d", (unsigned long long)cnt, (int)kind);
	return r;
}

NPU_NOINLINE rtError_t rtMemcpyAsync(void *dst, uint64_t destMax, const void *src, uint64_t cnt,
				     rtMemcpyKind_t kind, rtStream_t stm)
{
	struct rt_stream *s = stream_of(stm);
	int ck = copy_kind_of(kind);
	rtError_t r;
	NPU_API_ENTER();

	if (!dst || !src || cnt > destMax || ck < 0 || !s)
		r = ACL_ERROR_RT_PARAM_INVALID;
	else if (ck == NPU_COPY_D2D && card_of_va(src) >= 0 && card_of_va(dst) >= 0 &&
		 card_of_va(src) != card_of_va(dst))
		r = submit_link_copy(s, dst, src, cnt, 0); /* peer memory: over the link */
	else
		r = submit_copy(s, dst, src, cnt, ck == NPU_COPY_H2H ? NPU_COPY_D2D : ck, NULL);
	NPU_API_EXIT("cann", r, "\tsize=%llu\tkind=%d\tstream=%p", (unsigned long long)cnt,
		     (int)kind, stm);
	return r;
}

NPU_NOINLINE rtError_t rtMemset(void *devPtr, uint64_t destMax, uint32_t val, uint64_t cnt)
{
	struct rt_stream *s = stream_of(NULL);
	struct npu_sqe sqe;
	uint64_t seq = 0;
	rtError_t r;
	NPU_API_ENTER();

	if (!devPtr || cnt > destMax) {
		r = ACL_ERROR_RT_PARAM_INVALID;
	} else if (!s) {
		r = ACL_ERROR_RT_CONTEXT_NULL;
	} else {
		memset(&sqe, 0, sizeof(sqe));
		sqe.kind = NPU_SQE_KIND_MEMSET;
		sqe.task_type = NPU_TASK_MEMSET;
		sqe.bytes = cnt;
		sqe.u.copy.dst = (uint64_t)(uintptr_t)devPtr;
		sqe.u.copy.value = val & 0xff;
		r = stream_submit(s, &sqe, RT_STARS_SQE_TYPE_SDMA, 1, "MEMSET", &seq);
		if (!r)
			r = stream_wait(s, seq);
	}
	NPU_API_EXIT("cann", r, "\tsize=%llu\tptr=%p", (unsigned long long)cnt, devPtr);
	return r;
}

/* ---- kernels ------------------------------------------------------------------------- */

static struct rt_kernel *kernel_find_stub_locked(const void *stub)
{
	for (struct rt_kernel *k = rt_kernels[hash_ptr(stub, RT_KERNEL_BUCKETS)]; k; k = k->next)
		if (k->stub == stub)
			return k;
	return NULL;
}

static struct rt_kernel *kernel_find_name_locked(const char *name)
{
	for (size_t i = 0; i < RT_KERNEL_BUCKETS; i++)
		for (struct rt_kernel *k = rt_kernels[i]; k; k = k->next)
			if (!strncmp(k->name, name, sizeof(k->name) - 1))
				return k;
	return NULL;
}

static struct rt_kernel *kernel_add_locked(const void *stub, const char *name)
{
	struct rt_kernel *k = calloc(1, sizeof(*k));
	size_t h;

	if (!k)
		return NULL;
	k->magic = RT_KERNEL_MAGIC;
	k->id = rt_next_kernel_id++;
	k->stub = stub ? stub : k;
	snprintf(k->name, sizeof(k->name), "%s", name);
	h = hash_ptr(k->stub, RT_KERNEL_BUCKETS);
	k->next = rt_kernels[h];
	rt_kernels[h] = k;
	return k;
}

NPU_NOINLINE rtError_t rtFunctionRegister(void *binHandle, const void *stubFunc,
					  const char *stubName, const void *kernelInfoExt,
					  uint32_t funcMode)
{
	rtError_t r = ACL_SUCCESS;
	NPU_API_ENTER();

	(void)binHandle;
	(void)kernelInfoExt;
	(void)funcMode;
	if (!stubFunc || !stubName || !*stubName) {
		r = ACL_ERROR_RT_PARAM_INVALID;
	} else {
		pthread_mutex_lock(&rt_lock);
		if (!kernel_find_stub_locked(stubFunc) && !kernel_add_locked(stubFunc, stubName))
			r = ACL_ERROR_RT_MEMORY_ALLOCATION;
		pthread_mutex_unlock(&rt_lock);
	}
	NPU_API_EXIT("cann", r, "\top=%s", stubName ? stubName : "-");
	return r;
}

/* Handles are per kernel name; the binary handle is not needed by the model. */
NPU_NOINLINE rtError_t rtsFuncGetByName(const rtBinHandle binHandle, const char *kernelName,
					rtFuncHandle *funcHandle)
{
	struct rt_kernel *k;
	rtError_t r = ACL_SUCCESS;
	NPU_API_ENTER();

	(void)binHandle;
	if (!kernelName || !*kernelName || !funcHandle) {
		r = ACL_ERROR_RT_PARAM_INVALID;
	} else {
		pthread_mutex_lock(&rt_lock);
		k = kernel_find_name_locked(kernelName);
		if (!k)
			k = kernel_add_locked(NULL, kernelName);
		pthread_mutex_unlock(&rt_lock);
		if (k)
			*funcHandle = k;
		else
			r = ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	NPU_API_EXIT("cann", r, "\top=%s", kernelName ? kernelName : "-");
	return r;
}

/*
 * One kernel task.  args starts with struct npu_kernel_args (the model's
 * cost of the launch); force_type >= 0 is the task type of a launch call
 * that has its own (the AI CPU calls), whatever args says.
 */
static rtError_t launch(struct rt_kernel *k, uint32_t numBlocks, const void *args,
			uint32_t argsSize, rtStream_t stm, int force_type)
{
	const struct npu_kernel_args *ka = args;
	struct rt_stream *s = stream_of(stm);
	struct npu_sqe sqe;
	uint8_t sqe_type;
	int type;

	if (!k || !s || !args || argsSize < sizeof(*ka) || numBlocks == 0 || numBlocks > 0xffff)
		return ACL_ERROR_RT_PARAM_INVALID;
	type = force_type >= 0 ? force_type : (int)ka->task_type;
	switch (type) {
	case NPU_TASK_AI_CORE:
		sqe_type = RT_STARS_SQE_TYPE_FFTS;
		break;
	case NPU_TASK_AI_VECTOR_CORE:
		sqe_type = RT_STARS_SQE_TYPE_KS_AIV;
		break;
	case NPU_TASK_AI_CPU:
		sqe_type = RT_STARS_SQE_TYPE_AICPU;
		break;
	default:
		return ACL_ERROR_RT_PARAM_INVALID;
	}
	memset(&sqe, 0, sizeof(sqe));
	sqe.kind = NPU_SQE_KIND_KERNEL;
	sqe.task_type = (uint8_t)type;
	sqe.kernel_id = k->id;
	sqe.flops = ka->flops;
	sqe.bytes = ka->bytes;
	sqe.slow = (uint16_t)rt_compute_scale();
	memcpy(sqe.u.kernel_name, k->name, sizeof(sqe.u.kernel_name));
	return stream_submit(s, &sqe, sqe_type, (uint16_t)numBlocks, k->name, NULL);
}

NPU_NOINLINE rtError_t rtKernelLaunch(const void *stubFunc, uint32_t numBlocks, void *args,
				      uint32_t argsSize, rtSmDesc_t *smDesc, rtStream_t stm)
{
	struct rt_kernel *k;
	rtError_t r;
	NPU_API_ENTER();

	(void)smDesc;
	pthread_mutex_lock(&rt_lock);
	k = stubFunc ? kernel_find_stub_locked(stubFunc) : NULL;
	pthread_mutex_unlock(&rt_lock);
	r = launch(k, numBlocks, args, argsSize, stm, -1);
	NPU_API_EXIT("cann", r, "\tstream=%p\top=%s", stm, k ? k->name : "-");
	return r;
}

NPU_NOINLINE rtError_t rtsLaunchKernelWithHostArgs(rtFuncHandle funcHandle, uint32_t numBlocks,
						   rtStream_t stm, rtKernelLaunchCfg_t *cfg,
						   void *hostArgs, uint32_t argsSize,
						   rtPlaceHolderInfo_t *placeHolderArray,
						   uint32_t placeHolderNum)
{
	struct rt_kernel *k = funcHandle;
	rtError_t r;
	NPU_API_ENTER();

	(void)cfg;
	(void)placeHolderArray;
	(void)placeHolderNum;
	if (k && k->magic != RT_KERNEL_MAGIC)
		k = NULL;
	r = launch(k, numBlocks, hostArgs, argsSize, stm, -1);
	NPU_API_EXIT("cann", r, "\tstream=%p\top=%s", stm, k ? k->name : "-");
	return r;
}

/* ---- CANN 8.x/9.x launch paths (prototypes: npu_rt.h) --------------------------------- */

static struct rt_kernel *kernel_of_stub(const void *stub)
{
	struct rt_kernel *k;

	pthread_mutex_lock(&rt_lock);
	k = stub ? kernel_find_stub_locked(stub) : NULL;
	pthread_mutex_unlock(&rt_lock);
	return k;
}

static struct rt_kernel *kernel_of_handle(void *fh)
{
	struct rt_kernel *k = fh;

	return k && k->magic == RT_KERNEL_MAGIC ? k : NULL;
}

/* An AI CPU kernel is named by the launch (its .so and function name): one per name. */
static struct rt_kernel *kernel_of_name(const char *name)
{
	struct rt_kernel *k;

	if (!name || !*name)
		return NULL;
	pthread_mutex_lock(&rt_lock);
	k = kernel_find_name_locked(name);
	if (!k)
		k = kernel_add_locked(NULL, name);
	pthread_mutex_unlock(&rt_lock);
	return k;
}

#define ARGS_OF(ai)   ((ai) ? (ai)->args : NULL)
#define ARGS_SIZE(ai) ((ai) ? (ai)->argsSize : 0)

/* aclop kernels (registered stubs, rtFunctionRegister), flag and config ignored */
NPU_NOINLINE rtError_t rtKernelLaunchWithFlagV2(const void *stubFunc, uint32_t numBlocks,
						rtArgsEx_t *argsInfo, rtSmDesc_t *smDesc,
						rtStream_t stm, uint32_t flags,
						const rtTaskCfgInfo_t *cfgInfo)
{
	struct rt_kernel *k = kernel_of_stub(stubFunc);
	rtError_t r;
	NPU_API_ENTER();

	(void)smDesc;
	(void)flags;
	(void)cfgInfo;
	r = launch(k, numBlocks, ARGS_OF(argsInfo), ARGS_SIZE(argsInfo), stm, -1);
	NPU_API_EXIT("cann", r, "\tstream=%p\top=%s", stm, k ? k->name : "-");
	return r;
}

/* hdl: a binary (rtsBinaryLoadFromFile); its kernel for tilingKey */
NPU_NOINLINE rtError_t rtKernelLaunchWithHandleV2(void *hdl, const uint64_t tilingKey,
						  uint32_t numBlocks, rtArgsEx_t *argsInfo,
						  rtSmDesc_t *smDesc, rtStream_t stm,
						  const rtTaskCfgInfo_t *cfgInfo)
{
	rtFuncHandle fh = NULL;
	struct rt_kernel *k;
	rtError_t r;
	NPU_API_ENTER();

	(void)smDesc;
	(void)cfgInfo;
	k = rtsFuncGetByEntry(hdl, tilingKey, &fh) ? NULL : kernel_of_handle(fh);
	r = launch(k, numBlocks, ARGS_OF(argsInfo), ARGS_SIZE(argsInfo), stm, -1);
	NPU_API_EXIT("cann", r, "\tstream=%p\top=%s\tentry=%llu", stm, k ? k->name : "-",
		     (unsigned long long)tilingKey);
	return r;
}

NPU_NOINLINE rtError_t rtLaunchKernelByFuncHandleV3(rtFuncHandle funcHandle, uint32_t numBlocks,
						    const rtArgsEx_t *const argsInfo,
						    rtStream_t stm,
						    const rtTaskCfgInfo_t *const cfgInfo)
{
	struct rt_kernel *k = kernel_of_handle(funcHandle);
	rtError_t r;
	NPU_API_ENTER();

	(void)cfgInfo;
	r = launch(k, numBlocks, ARGS_OF(argsInfo), ARGS_SIZE(argsInfo), stm, -1);
	NPU_API_EXIT("cann", r, "\tstream=%p\top=%s", stm, k ? k->name : "-");
	return r;
}

/*
 * argsHandle: in the model the host argument block itself (real CANN builds
 * an rtArgsHandle with rtsKernelArgsInit / AppendArgs; the model has no use
 * for the builder).
 */
NPU_NOINLINE rtError_t rtsLaunchKernelWithConfig(rtFuncHandle funcHandle, uint32_t numBlocks,
						 rtStream_t stm, rtKernelLaunchCfg_t *cfg,
						 rtArgsHandle argsHandle, void *reserve)
{
	struct rt_kernel *k = kernel_of_handle(funcHandle);
	rtError_t r;
	NPU_API_ENTER();

	(void)cfg;
	(void)reserve;
	r = launch(k, numBlocks, argsHandle, sizeof(struct npu_kernel_args), stm, -1);
	NPU_API_EXIT("cann", r, "\tstream=%p\top=%s", stm, k ? k->name : "-");
	return r;
}

/* args: device memory on a card; the model reads its npu_kernel_args from the host pointer */
NPU_NOINLINE rtError_t rtsLaunchKernelWithDevArgs(rtFuncHandle funcHandle, uint32_t numBlocks,
						  rtStream_t stm, rtKernelLaunchCfg_t *cfg,
						  const void *args, uint32_t argsSize,
						  void *reserve)
{
	struct rt_kernel *k = kernel_of_handle(funcHandle);
	rtError_t r;
	NPU_API_ENTER();

	(void)cfg;
	(void)reserve;
	r = launch(k, numBlocks, args, argsSize, stm, -1);
	NPU_API_EXIT("cann", r, "\tstream=%p\top=%s", stm, k ? k->name : "-");
	return r;
}

/* AI CPU kernel of a CPU kernel library (aclop AI CPU ops): task type AI_CPU always */
NPU_NOINLINE rtError_t rtCpuKernelLaunchWithFlag(const void *soName, const void *kernelName,
						 uint32_t numBlocks, const rtArgsEx_t *argsInfo,
						 rtSmDesc_t *smDesc, rtStream_t stm, uint32_t flags)
{
	struct rt_kernel *k = soName ? kernel_of_name(kernelName) : NULL;
	rtError_t r;
	NPU_API_ENTER();

	(void)smDesc;
	(void)flags;
	r = launch(k, numBlocks, ARGS_OF(argsInfo), ARGS_SIZE(argsInfo), stm, NPU_TASK_AI_CPU);
	NPU_API_EXIT("cann", r, "\tstream=%p\top=%s", stm, k ? k->name : "-");
	return r;
}

/* AI CPU op by name (aclnn AI CPU ops, opbase): task type AI_CPU always */
NPU_NOINLINE rtError_t rtAicpuKernelLaunchExWithArgs(const uint32_t kernelType,
						     const char *const opName,
						     const uint32_t numBlocks,
						     const rtAicpuArgsEx_t *argsInfo,
						     rtSmDesc_t *const smDesc, const rtStream_t stm,
						     const uint32_t flags)
{
	struct rt_kernel *k = kernel_of_name(opName);
	rtError_t r;
	NPU_API_ENTER();

	(void)smDesc;
	(void)flags;
	r = launch(k, numBlocks, ARGS_OF(argsInfo), ARGS_SIZE(argsInfo), stm, NPU_TASK_AI_CPU);
	NPU_API_EXIT("cann", r, "\tstream=%p\top=%s\tkernel_type=%u", stm, k ? k->name : "-",
		     kernelType);
	return r;
}

/* AI CPU framework op: args is struct npu_fwk_kernel_args (its op name after the cost) */
NPU_NOINLINE rtError_t rtKernelLaunchEx(void *args, uint32_t argsSize, uint32_t flags,
					rtStream_t stm)
{
	const struct npu_fwk_kernel_args *fa = args;
	struct rt_kernel *k = NULL;
	char name[sizeof(fa->op_name) + 1];
	rtError_t r;
	NPU_API_ENTER();

	(void)flags;
	if (fa && argsSize >= sizeof(*fa)) {
		snprintf(name, sizeof(name), "%.*s", (int)sizeof(fa->op_name), fa->op_name);
		k = kernel_of_name(name);
	}
	r = launch(k, 1, args, argsSize, stm, NPU_TASK_AI_CPU);
	NPU_API_EXIT("cann", r, "\tstream=%p\top=%s", stm, k ? k->name : "-");
	return r;
}

NPU_NOINLINE rtError_t rtMemcpyAsyncEx(void *dst, uint64_t destMax, const void *src, uint64_t cnt,
				       rtMemcpyKind_t kind, rtStream_t stm,
				       rtMemcpyConfig_t *memcpyConfig)
{
	struct rt_stream *s = stream_of(stm);
	int ck = copy_kind_of(kind);
	rtError_t r;
	NPU_API_ENTER();

	(void)memcpyConfig;
	if (!dst || !src || cnt > destMax || ck < 0 || !s)
		r = ACL_ERROR_RT_PARAM_INVALID;
	else
		r = submit_copy(s, dst, src, cnt, ck == NPU_COPY_H2H ? NPU_COPY_D2D : ck, NULL);
	NPU_API_EXIT("cann", r, "\tsize=%llu\tkind=%d\tstream=%p", (unsigned long long)cnt,
		     (int)kind, stm);
	return r;
}

NPU_NOINLINE rtError_t rtMemsetAsync(void *ptr, uint64_t destMax, uint32_t val, uint64_t cnt,
				     rtStream_t stm)
{
	struct rt_stream *s = stream_of(stm);
	struct npu_sqe sqe;
	rtError_t r;
	NPU_API_ENTER();

	if (!ptr || cnt > destMax || !s) {
		r = ACL_ERROR_RT_PARAM_INVALID;
	} else {
		memset(&sqe, 0, sizeof(sqe));
		sqe.kind = NPU_SQE_KIND_MEMSET;
		sqe.task_type = NPU_TASK_MEMSET;
		sqe.bytes = cnt;
		sqe.u.copy.dst = (uint64_t)(uintptr_t)ptr;
		sqe.u.copy.value = val & 0xff;
		r = stream_submit(s, &sqe, RT_STARS_SQE_TYPE_SDMA, 1, "MEMSET", NULL);
	}
	NPU_API_EXIT("cann", r, "\tsize=%llu\tptr=%p\tstream=%p", (unsigned long long)cnt, ptr,
		     stm);
	return r;
}

/* A kernel binary: the model keeps its file's base name (no extension) as the kernel name. */
struct rt_bin {
	uint32_t magic;
	char name[NPU_SQE_KERNEL_NAME_LEN];
};
#define RT_BIN_MAGIC 0x5242494eU /* "RBIN" */

NPU_NOINLINE rtError_t rtsBinaryLoadFromFile(const char *binPath, const void *optionalCfg,
					     rtBinHandle *handle)
{
	const char *base;
	struct rt_bin *b;
	rtError_t r = ACL_SUCCESS;
	size_t n;
	NPU_API_ENTER();

	(void)optionalCfg;
	base = binPath ? strrchr(binPath, '/') : NULL;
	base = base ? base + 1 : binPath;
	if (!base || !*base || !handle) {
		r = ACL_ERROR_RT_PARAM_INVALID;
	} else if (!(b = calloc(1, sizeof(*b)))) {
		r = ACL_ERROR_RT_MEMORY_ALLOCATION;
	} else {
		n = strcspn(base, ".");
		b->magic = RT_BIN_MAGIC;
		snprintf(b->name, sizeof(b->name), "%.*s", (int)n, base);
		*handle = b;
	}
	NPU_API_EXIT("cann", r, "\tpath=%s", binPath ? binPath : "-");
	return r;
}

/* funcEntry (the tiling key) selects a kernel of the binary; the model's binaries hold one */
NPU_NOINLINE rtError_t rtsFuncGetByEntry(const rtBinHandle binHandle, const uint64_t funcEntry,
					 rtFuncHandle *funcHandle)
{
	const struct rt_bin *b = binHandle;
	struct rt_kernel *k = NULL;
	rtError_t r = ACL_SUCCESS;
	NPU_API_ENTER();

	if (!b || b->magic != RT_BIN_MAGIC || !funcHandle) {
		r = ACL_ERROR_RT_PARAM_INVALID;
	} else {
		k = kernel_of_name(b->name);
		if (k)
			*funcHandle = k;
		else
			r = ACL_ERROR_RT_MEMORY_ALLOCATION;
	}
	NPU_API_EXIT("cann", r, "\top=%s\tentry=%llu", k ? k->name : "-",
		     (unsigned long long)funcEntry);
	return r;
}

/* Not an rt* API: npu_train's summary line (tasks and kernels this process queued). */
__attribute__((visibility("default"))) uint64_t npu_model_runtime_tasks(uint64_t *kernels)
{
	if (kernels)
		*kernels = __atomic_load_n(&rt_kernels_total, __ATOMIC_RELAXED);
	return __atomic_load_n(&rt_tasks_total, __ATOMIC_RELAXED);
}

/* ---- notifies and copies between cards (HCCL's primitives) --------------------------- */

/*
 * rtNotify_t: a notify of card `dev` with id `id` (halResourceIdAlloc
 * DRV_NOTIFY_ID).  One created here owns the id; one opened by name
 * (rtIpcOpenNotify, another process's notify) only names it.  The card
 * counts records and waits per notify (npu_model/modeld/link.c).
 */
#define RT_NOTIFY_MAGIC 0x4e4f5446U /* "NOTF" */
struct rt_notify {
	uint32_t magic;
	int32_t dev;
	uint32_t id;
	int owned;
};

static struct rt_notify *notify_of(rtNotify_t n)
{
	struct rt_notify *p = n;

	return p && p->magic == RT_NOTIFY_MAGIC ? p : NULL;
}

NPU_NOINLINE rtError_t rtNotifyCreate(int32_t deviceId, rtNotify_t *notify)
{
	struct halResourceIdInputInfo rin;
	struct halResourceIdOutputInfo rout;
	struct rt_notify *n = NULL;
	drvError_t d;
	rtError_t r = ACL_SUCCESS;
	NPU_API_ENTER();

	if (!notify || deviceId < 0 || deviceId >= RT_MAX_DEVICES) {
		r = ACL_ERROR_RT_PARAM_INVALID;
		goto out;
	}
	memset(&rin, 0, sizeof(rin));
	memset(&rout, 0, sizeof(rout));
	rin.type = DRV_NOTIFY_ID;
	d = halResourceIdAlloc((uint32_t)deviceId, &rin, &rout);
	if (d) {
		r = drv_to_rt(d);
		goto out;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		rin.resourceId = rout.resourceId;
		halResourceIdFree((uint32_t)deviceId, &rin);
		r = ACL_ERROR_RT_MEMORY_ALLOCATION;
		goto out;
	}
	n->magic = RT_NOTIFY_MAGIC;
	n->dev = deviceId;
	n->id = rout.resourceId;
	n->owned = 1;
	*notify = n;
out:
	NPU_API_EXIT("cann", r, "\tdev=%d\tid=%u", deviceId, n ? n->id : 0);
	return r;
}

NPU_NOINLINE rtError_t rtNotifyDestroy(rtNotify_t notify)
{
	struct rt_notify *n = notify_of(notify);
	struct halResourceIdInputInfo rin;
	rtError_t r = ACL_SUCCESS;
	NPU_API_ENTER();

	if (!n) {
		r = ACL_ERROR_RT_PARAM_INVALID;
	} else {
		if (n->owned) {
			memset(&rin, 0, sizeof(rin));
			rin.type = DRV_NOTIFY_ID;
			rin.resourceId = n->id;
			halResourceIdFree((uint32_t)n->dev, &rin);
		}
		n->magic = 0;
		free(n);
	}
	NPU_API_EXIT("cann", r, "");
	return r;
}

NPU_NOINLINE rtError_t rtGetNotifyID(rtNotify_t notify, uint32_t *notifyId)
{
	struct rt_notify *n = notify_of(notify);
	rtError_t r = n && notifyId ? ACL_SUCCESS : ACL_ERROR_RT_PARAM_INVALID;
	NPU_API_ENTER();

	if (!r)
		*notifyId = n->id;
	NPU_API_EXIT("cann", r, "");
	return r;
}

/* The IPC name of a notify: "npu_notify_<dev>_<id>" (what rtIpcOpenNotify parses). */
NPU_NOINLINE rtError_t rtIpcSetNotifyName(rtNotify_t notify, char *name, uint32_t len)
{
	struct rt_notify *n = notify_of(notify);
	rtError_t r = ACL_SUCCESS;
	NPU_API_ENTER();

	if (!n || !name || (uint32_t)snprintf(name, len, "npu_notify_%d_%u", n->dev, n->id) >= len)
		r = ACL_ERROR_RT_PARAM_INVALID;
	NPU_API_EXIT("cann", r, "");
	return r;
}

NPU_NOINLINE rtError_t rtIpcOpenNotify(rtNotify_t *notify, const char *name)
{
	struct rt_notify *n;
	int dev;
	unsigned int id;
	char tail;
	rtError_t r = ACL_SUCCESS;
	NPU_API_ENTER();

	if (!notify || !name || sscanf(name, "npu_notify_%d_%u%c", &dev, &id, &tail) != 2 ||
	    dev < 0 || dev >= RT_MAX_DEVICES || id > 0xffff) {
		r = ACL_ERROR_RT_PARAM_INVALID;
	} else if (!(n = calloc(1, sizeof(*n)))) {
		r = ACL_ERROR_RT_MEMORY_ALLOCATION;
	} else {
		n->magic = RT_NOTIFY_MAGIC;
		n->dev = dev;
		n->id = id;
		*notify = n;
	}
	NPU_API_EXIT("cann", r, "");
	return r;
}

static rtError_t submit_notify(rtNotify_t notify, rtStream_t stm, int wait)
{
	struct rt_notify *n = notify_of(notify);
	struct rt_stream *s = stream_of(stm);
	struct npu_sqe sqe;

	if (!n || !s)
		return ACL_ERROR_RT_PARAM_INVALID;
	memset(&sqe, 0, sizeof(sqe));
	sqe.kind = wait ? NPU_SQE_KIND_NOTIFY_WAIT : NPU_SQE_KIND_NOTIFY_RECORD;
	sqe.task_type = wait ? NPU_TASK_EVENT_WAIT : NPU_TASK_EVENT_RECORD;
	sqe.event_id = (uint32_t)n->dev << 16 | n->id;
	return stream_submit(s, &sqe,
			     wait ? RT_STARS_SQE_TYPE_NOTIFY_WAIT : RT_STARS_SQE_TYPE_NOTIFY_RECORD,
			     1, wait ? "Notify_Wait" : "Notify_Record", NULL);
}

NPU_NOINLINE rtError_t rtNotifyRecord(rtNotify_t notify, rtStream_t stm)
{
	rtError_t r;
	NPU_API_ENTER();

	r = submit_notify(notify, stm, 0);
	NPU_API_EXIT("cann", r, "\tstream=%p", stm);
	return r;
}

NPU_NOINLINE rtError_t rtNotifyWait(rtNotify_t notify, rtStream_t stm)
{
	rtError_t r;
	NPU_API_ENTER();

	r = submit_notify(notify, stm, 1);
	NPU_API_EXIT("cann", r, "\tstream=%p", stm);
	return r;
}

static int card_of_va(const void *p)
{
	uint64_t va = (uint64_t)(uintptr_t)p;

	if (va < NPU_VA_BASE)
		return -1;
	va = (va - NPU_VA_BASE) / NPU_VA_PER_CARD;
	return va < RT_MAX_DEVICES ? (int)va : -1;
}

/* A copy between two cards' memories (HCCL's SDMA over HCCS or RoCE). */
static rtError_t submit_link_copy(struct rt_stream *s, void *dst, const void *src, uint64_t cnt,
				  int reduce)
{
	struct npu_sqe sqe;

	memset(&sqe, 0, sizeof(sqe));
	sqe.kind = NPU_SQE_KIND_LINK_COPY;
	sqe.task_type = NPU_TASK_MEMCPY;
	sqe.copy_kind = NPU_COPY_D2D;
	sqe.flags = reduce ? NPU_SQE_F_REDUCE : 0;
	sqe.bytes = cnt;
	sqe.u.copy.src = (uint64_t)(uintptr_t)src;
	sqe.u.copy.dst = (uint64_t)(uintptr_t)dst;
	return stream_submit(s, &sqe, RT_STARS_SQE_TYPE_SDMA, 1,
			     reduce ? "Reduce_Inline" : "Memcpy", NULL);
}

/* rtRecudeKind_t / rtDataType_t are the runtime's (spelling as in rt_mem.h). */
NPU_NOINLINE rtError_t rtReduceAsync(void *dst, uint64_t destMax, const void *src, uint64_t cnt,
				     int32_t kind, int32_t type, rtStream_t stm)
{
	struct rt_stream *s = stream_of(stm);
	rtError_t r;
	NPU_API_ENTER();

	if (!dst || !src || cnt > destMax || !s || card_of_va(dst) < 0 || card_of_va(src) < 0)
		r = ACL_ERROR_RT_PARAM_INVALID;
	else
		r = submit_link_copy(s, dst, src, cnt, 1);
	NPU_API_EXIT("cann", r, "\tsize=%llu\tkind=%d\ttype=%d\tstream=%p", (unsigned long long)cnt,
		     kind, type, stm);
	return r;
}
