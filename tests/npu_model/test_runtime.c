// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_runtime.c - libruntime (npu_model/runtime/runtime.c) against a fake
 * HAL defined here: the SQEs it builds (STARS header, 16-bit task ids that
 * wrap with the flip count, cost payload), batching, SQ-head completion and
 * back-pressure, events, memory errors.  The fake card records every SQE and
 * completes tasks either at once or when the test says so.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ascend_hal.h"
#include "npu_acl.h"
#include "npu_ioctl.h"
#include "npu_kernel.h"
#include "npu_rt.h"
#include "npu_sqe.h"
#include "runtime/taskid.h"

/* ---- the fake card --------------------------------------------------------------------- */

#define FAKE_DEPTH    1024
#define FAKE_MAX_SQES 200000

static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static struct npu_sqe *fake_sqes; /* every SQE ever sent, in order */
static size_t fake_nr_sqes;
static unsigned int fake_sends; /* halSqTaskSend calls */
static unsigned int fake_max_batch;
static uint64_t fake_done; /* SQEs completed, all SQs (in send order) */
#define FAKE_MAX_SQ 4096
static uint64_t fake_sq_sent[FAKE_MAX_SQ]; /* per SQ: SQEs sent */
static uint32_t fake_sq_of[FAKE_MAX_SQES]; /* SQ of each recorded SQE */
static uint64_t fake_max_outstanding;
static int fake_auto_complete = 1;
static unsigned int fake_queries;
static uint32_t fake_next_id = 1;
static int fake_mem_oom;
static uintptr_t fake_next_addr = 0x100000000ull;

drvError_t drvGetDevNum(uint32_t *num_dev)
{
	*num_dev = 2;
	return DRV_ERROR_NONE;
}

drvError_t halResourceIdAlloc(uint32_t devId, struct halResourceIdInputInfo *in,
			      struct halResourceIdOutputInfo *out)
{
	(void)devId;
	(void)in;
	pthread_mutex_lock(&fake_lock);
	out->resourceId = fake_next_id++;
	pthread_mutex_unlock(&fake_lock);
	return DRV_ERROR_NONE;
}

drvError_t halResourceIdFree(uint32_t devId, struct halResourceIdInputInfo *in)
{
	(void)devId;
	(void)in;
	return DRV_ERROR_NONE;
}

drvError_t halSqCqAllocate(uint32_t devId, struct halSqCqInputInfo *in,
			   struct halSqCqOutputInfo *out)
{
	(void)devId;
	assert_int_equal(in->sqeSize, 64);
	assert_int_equal(in->sqeDepth, FAKE_DEPTH);
	out->sqId = in->info[0];
	out->cqId = in->info[0];
	return DRV_ERROR_NONE;
}

drvError_t halSqCqFree(uint32_t devId, struct halSqCqFreeInfo *info)
{
	(void)devId;
	(void)info;
	return DRV_ERROR_NONE;
}

drvError_t halSqTaskSend(uint32_t devId, struct halTaskSendInfo *info)
{
	uint64_t outstanding;

	(void)devId;
	pthread_mutex_lock(&fake_lock);
	assert_true(info->sqe_num >= 1);
	assert_true(fake_nr_sqes + info->sqe_num <= FAKE_MAX_SQES);
	assert_true(info->sqId < FAKE_MAX_SQ);
	memcpy(&fake_sqes[fake_nr_sqes], info->sqe_addr, info->sqe_num * sizeof(struct npu_sqe));
	for (uint32_t i = 0; i < info->sqe_num; i++)
		fake_sq_of[fake_nr_sqes + i] = info->sqId;
	info->pos = (uint32_t)(fake_sq_sent[info->sqId] % FAKE_DEPTH);
	fake_sq_sent[info->sqId] += info->sqe_num;
	fake_nr_sqes += info->sqe_num;
	fake_sends++;
	if (info->sqe_num > fake_max_batch)
		fake_max_batch = info->sqe_num;
	if (fake_auto_complete)
		fake_done = fake_nr_sqes;
	outstanding = fake_nr_sqes - fake_done;
	if (outstanding > fake_max_outstanding)
		fake_max_outstanding = outstanding;
	pthread_mutex_unlock(&fake_lock);
	return DRV_ERROR_NONE;
}

static unsigned int fake_head_waits;
static int fake_no_head_wait;

drvError_t halSqCqQuery(uint32_t devId, struct halSqCqQueryInfo *info)
{
	uint64_t done = 0;

	(void)devId;
	if (info->prop == (drvSqCqPropType_t)NPU_SQCQ_PROP_SQ_HEAD_WAIT) {
		/* the daemon's sleeping query: here a short nap, then the head */
		if (fake_no_head_wait)
			return DRV_ERROR_NOT_SUPPORT;
		fake_head_waits++;
		usleep(100);
	} else {
		assert_int_equal(info->prop, DRV_SQCQ_PROP_SQ_HEAD);
	}
	pthread_mutex_lock(&fake_lock);
	/* This SQ's head: its SQEs among the first fake_done sent are complete. */
	for (size_t i = 0; i < fake_done; i++)
		done += fake_sq_of[i] == info->sqId;
	info->value[0] = (uint32_t)(done % FAKE_DEPTH);
	fake_queries++;
	pthread_mutex_unlock(&fake_lock);
	return DRV_ERROR_NONE;
}

drvError_t halMemAlloc(void **pp, unsigned long long size, unsigned long long flag)
{
	assert_true(flag & MEM_DEV);
	if (fake_mem_oom)
		return DRV_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&fake_lock);
	*pp = (void *)fake_next_addr;
	fake_next_addr += (size + 0xfff) & ~0xfffull;
	pthread_mutex_unlock(&fake_lock);
	return DRV_ERROR_NONE;
}

/* 64 GiB card with 1 GiB in use by "other processes" */
drvError_t halGetDeviceInfo(uint32_t devId, int32_t moduleType, int32_t infoType, int64_t *value)
{
	(void)devId;
	if (moduleType != MODULE_TYPE_SYSTEM)
		return DRV_ERROR_NOT_SUPPORT;
	if (infoType == NPU_INFO_TYPE_HBM_TOTAL)
		*value = 64ll << 30;
	else if (infoType == NPU_INFO_TYPE_HBM_USED)
		*value = 1ll << 30;
	else
		return DRV_ERROR_NOT_SUPPORT;
	return DRV_ERROR_NONE;
}

drvError_t halMemFree(void *pp)
{
	(void)pp;
	return DRV_ERROR_NONE;
}

static void fake_reset(int auto_complete)
{
	pthread_mutex_lock(&fake_lock);
	fake_nr_sqes = 0;
	fake_sends = 0;
	fake_max_batch = 0;
	fake_done = 0;
	fake_max_outstanding = 0;
	fake_queries = 0;
	fake_auto_complete = auto_complete;
	fake_mem_oom = 0;
	pthread_mutex_unlock(&fake_lock);
}

static void fake_complete_all(void)
{
	pthread_mutex_lock(&fake_lock);
	fake_done = fake_nr_sqes;
	pthread_mutex_unlock(&fake_lock);
}

/* ---- helpers ----------------------------------------------------------------------------- */

static const char kernel_stub; /* any address serves as the stub function */

static int setup(void **state)
{
	(void)state;
	fake_reset(1);
	assert_int_equal(rtSetDevice(0), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fake_complete_all();
	fake_auto_complete = 1;
	assert_int_equal(rtDeviceReset(0), 0);
	unsetenv("NPU_MODEL_SQE_BATCH");
	return 0;
}

static rtError_t launch_one(rtStream_t s, uint64_t flops)
{
	struct npu_kernel_args a = { .flops = flops,
				     .bytes = 2 * flops,
				     .task_type = NPU_TASK_AI_VECTOR_CORE };

	return rtKernelLaunch(&kernel_stub, 8, &a, sizeof(a), NULL, s);
}

/* ---- tests ------------------------------------------------------------------------------- */

static void test_taskid_pure(void **state)
{
	struct rt_taskid t = { .next = 65534, .flip = 3 };
	uint16_t flip;

	assert_int_equal(rt_taskid_take(&t, &flip), 65534);
	assert_int_equal(flip, 3);
	assert_int_equal(rt_taskid_take(&t, &flip), 65535);
	assert_int_equal(flip, 3);
	assert_int_equal(rt_taskid_take(&t, &flip), 0);
	assert_int_equal(flip, 4);
	assert_int_equal(rt_taskid_full(4, 7), (4u << 16) | 7);

	/* completion from the SQ head */
	assert_int_equal(rt_sq_completed(10, 10, 10, 1024), 10); /* all done */
	assert_int_equal(rt_sq_completed(10, 10, 7, 1024), 7);
	assert_int_equal(rt_sq_completed(1030, 6, 1020, 1024), 1020); /* head before the wrap */
	/* more outstanding than sent */
	assert_int_equal(rt_sq_completed(3, 3, 1000, 1024), -1);
	assert_int_equal(rt_sq_completed(3, 3, 1024, 1024), -1); /* head out of range */
}

/* 70000 launches on one stream: ids 0..65535, then 0 again with flip 1. */
static void test_task_id_wrap(void **state)
{
	rtStream_t s;

	assert_int_equal(rtFunctionRegister(NULL, &kernel_stub, "AddKernel", NULL, 0), 0);
	assert_int_equal(rtStreamCreate(&s, 0), 0);
	for (uint64_t i = 0; i < 70000; i++)
		assert_int_equal(launch_one(s, i), 0);
	assert_int_equal(rtStreamSynchronize(s), 0);
	assert_int_equal(fake_nr_sqes, 70000);
	for (size_t i = 0; i < 70000; i++) {
		const struct npu_sqe *q = &fake_sqes[i];

		assert_int_equal(q->header.taskId, i % 65536);
		assert_int_equal(q->flip, i / 65536);
		assert_int_equal(q->header.type, RT_STARS_SQE_TYPE_KS_AIV);
		assert_int_equal(q->header.blockDim, 8);
		assert_int_equal(q->kind, NPU_SQE_KIND_KERNEL);
		assert_int_equal(q->flops, i);
		assert_int_equal(q->bytes, 2 * i);
	}
	assert_int_equal(fake_sqes[0].header.rtStreamId, fake_sqes[69999].header.rtStreamId);
	assert_string_equal(fake_sqes[5].u.kernel_name, "AddKernel");
	assert_int_equal(rtStreamDestroy(s), 0);
}

/* Each stream numbers its own tasks from 0. */
static void test_per_stream_ids(void **state)
{
	rtStream_t a, b;

	assert_int_equal(rtFunctionRegister(NULL, &kernel_stub, "AddKernel", NULL, 0), 0);
	assert_int_equal(rtStreamCreate(&a, 0), 0);
	assert_int_equal(rtStreamCreate(&b, 0), 0);
	assert_int_equal(launch_one(a, 1), 0);
	assert_int_equal(launch_one(a, 1), 0);
	assert_int_equal(launch_one(b, 1), 0);
	assert_int_equal(fake_sqes[0].header.taskId, 0);
	assert_int_equal(fake_sqes[1].header.taskId, 1);
	assert_int_equal(fake_sqes[2].header.taskId, 0);
	assert_int_not_equal(fake_sqes[0].header.rtStreamId, fake_sqes[2].header.rtStreamId);
	assert_int_equal(rtStreamDestroy(a), 0);
	assert_int_equal(rtStreamDestroy(b), 0);
}

/* NPU_MODEL_SQE_BATCH=16: 40 launches go out in sends of 16, 16 and (at sync) 8. */
static void test_batching(void **state)
{
	rtStream_t s;

	assert_int_equal(rtDeviceReset(0), 0);
	setenv("NPU_MODEL_SQE_BATCH", "16", 1);
	assert_int_equal(rtSetDevice(0), 0);
	fake_reset(1);
	assert_int_equal(rtFunctionRegister(NULL, &kernel_stub, "AddKernel", NULL, 0), 0);
	assert_int_equal(rtStreamCreate(&s, 0), 0);
	for (int i = 0; i < 40; i++)
		assert_int_equal(launch_one(s, 1), 0);
	assert_int_equal(fake_sends, 2);
	assert_int_equal(fake_nr_sqes, 32);
	assert_int_equal(rtStreamSynchronize(s), 0);
	assert_int_equal(fake_sends, 3);
	assert_int_equal(fake_nr_sqes, 40);
	assert_int_equal(fake_max_batch, 16);
	for (int i = 0; i < 40; i++)
		assert_int_equal(fake_sqes[i].header.taskId, i);
	assert_int_equal(rtStreamDestroy(s), 0);
}

static void *completer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2000; i++) {
		usleep(200);
		pthread_mutex_lock(&fake_lock);
		if (fake_done < fake_nr_sqes)
			fake_done += 1 + (fake_nr_sqes - fake_done) / 2;
		pthread_mutex_unlock(&fake_lock);
	}
	return NULL;
}

/* A card that is slow: synchronize waits for the head, and the SQ never overflows. */
static void test_sync_and_backpressure(void **state)
{
	pthread_t th;
	rtStream_t s;

	fake_reset(0);
	assert_int_equal(rtFunctionRegister(NULL, &kernel_stub, "AddKernel", NULL, 0), 0);
	assert_int_equal(rtStreamCreate(&s, 0), 0);
	assert_int_equal(pthread_create(&th, NULL, completer, NULL), 0);
	for (int i = 0; i < 3000; i++)
		assert_int_equal(launch_one(s, 1), 0);
	assert_true(fake_max_outstanding <= FAKE_DEPTH - 1);
	assert_int_equal(rtStreamSynchronize(s), 0);
	pthread_mutex_lock(&fake_lock);
	assert_int_equal(fake_done, 3000);
	pthread_mutex_unlock(&fake_lock);
	assert_true(fake_queries > 0);
	assert_true(fake_head_waits > 0); /* slept in the HAL, not spinning */
	pthread_join(th, NULL);
	assert_int_equal(rtStreamDestroy(s), 0);
}

static void test_events(void **state)
{
	rtStream_t s;
	rtEvent_t e;

	fake_reset(0);
	assert_int_equal(rtFunctionRegister(NULL, &kernel_stub, "AddKernel", NULL, 0), 0);
	assert_int_equal(rtStreamCreate(&s, 0), 0);
	assert_int_equal(rtEventCreate(&e), 0);
	assert_int_equal(rtEventQuery(e), 0); /* never recorded: complete */
	assert_int_equal(launch_one(s, 1), 0);
	assert_int_equal(rtEventRecord(e, s), 0);
	assert_int_equal(fake_sqes[1].kind, NPU_SQE_KIND_EVENT_RECORD);
	assert_int_equal(fake_sqes[1].header.type, RT_STARS_SQE_TYPE_EVENT_RECORD);
	assert_int_equal(rtEventQuery(e), 1); /* not ready */
	fake_complete_all();
	assert_int_equal(rtEventQuery(e), 0);
	assert_int_equal(rtStreamWaitEvent(s, e), 0);
	assert_int_equal(fake_sqes[2].kind, NPU_SQE_KIND_EVENT_WAIT);
	assert_int_equal(fake_sqes[2].event_id, fake_sqes[1].event_id);
	fake_complete_all();
	assert_int_equal(rtEventSynchronize(e), 0);
	assert_int_equal(rtEventDestroy(e), 0);
	assert_int_equal(rtStreamDestroy(s), 0);
}

static void test_memory(void **state)
{
	void *p = NULL, *q = NULL;
	char host[64] = "x", back[64];

	assert_int_equal(rtMalloc(&p, 4096, RT_MEMORY_HBM, 0), 0);
	assert_non_null(p);
	assert_int_equal(rtMemcpy(p, 4096, host, sizeof(host), RT_MEMCPY_HOST_TO_DEVICE), 0);
	assert_int_equal(fake_sqes[0].kind, NPU_SQE_KIND_MEMCPY);
	assert_int_equal(fake_sqes[0].copy_kind, NPU_COPY_H2D);
	assert_int_equal(fake_sqes[0].bytes, sizeof(host));
	assert_int_equal(fake_sqes[0].u.copy.dst, (uintptr_t)p);
	assert_int_equal(rtMemcpy(back, sizeof(back), host, sizeof(host), RT_MEMCPY_HOST_TO_HOST),
			 0);
	assert_memory_equal(back, host, sizeof(host));
	assert_int_equal(rtMemcpy(p, 8, host, sizeof(host), RT_MEMCPY_HOST_TO_DEVICE),
			 ACL_ERROR_RT_PARAM_INVALID); /* count > destMax */
	fake_mem_oom = 1;
	assert_int_equal(rtMalloc(&q, 1ull << 40, RT_MEMORY_HBM, 0),
			 ACL_ERROR_RT_MEMORY_ALLOCATION);
	fake_mem_oom = 0;
	assert_int_equal(rtMalloc(&q, 0, RT_MEMORY_HBM, 0), ACL_ERROR_RT_PARAM_INVALID);
	{
		uint64_t free_b = 0, total_b = 0;

		assert_int_equal(rtMemGetInfo(&free_b, &total_b), 0);
		assert_int_equal(total_b, 64ull << 30);
		assert_int_equal(free_b, 63ull << 30);
		assert_int_equal(rtMemGetInfo(NULL, &total_b), ACL_ERROR_RT_PARAM_INVALID);
	}
	assert_int_equal(rtFree(p), 0);
	assert_int_equal(rtFree(p), ACL_ERROR_RT_MEMORY_FREE); /* double free refused */
	assert_int_equal(rtFree((void *)0x1234), ACL_ERROR_RT_MEMORY_FREE);
}

/* A HAL without the sleeping head query: synchronize falls back to polling. */
static void test_sync_without_head_wait(void **state)
{
	pthread_t th;
	rtStream_t s;

	fake_reset(0);
	fake_no_head_wait = 1;
	assert_int_equal(rtFunctionRegister(NULL, &kernel_stub, "AddKernel", NULL, 0), 0);
	assert_int_equal(rtStreamCreate(&s, 0), 0);
	assert_int_equal(pthread_create(&th, NULL, completer, NULL), 0);
	for (int i = 0; i < 100; i++)
		assert_int_equal(launch_one(s, 1), 0);
	assert_int_equal(rtStreamSynchronize(s), 0);
	pthread_mutex_lock(&fake_lock);
	assert_int_equal(fake_done, 100);
	pthread_mutex_unlock(&fake_lock);
	pthread_join(th, NULL);
	assert_int_equal(rtStreamDestroy(s), 0);
}

static void test_bad_params(void **state)
{
	static const char unknown_stub;
	struct npu_kernel_args a = { .flops = 1, .task_type = NPU_TASK_AI_CORE };
	rtFuncHandle h;

	assert_int_equal(rtSetDevice(5), ACL_ERROR_RT_INVALID_DEVICEID);
	assert_int_equal(rtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID);
	assert_int_equal(rtKernelLaunch(&unknown_stub, 1, &a, sizeof(a), NULL, NULL),
			 ACL_ERROR_RT_PARAM_INVALID);
	assert_int_equal(rtsFuncGetByName(NULL, "MatMulV2", &h), 0);
	assert_int_equal(rtsLaunchKernelWithHostArgs(h, 1, NULL, NULL, &a, 4, NULL, 0),
			 ACL_ERROR_RT_PARAM_INVALID); /* args too short */
	a.task_type = 77;
	assert_int_equal(rtsLaunchKernelWithHostArgs(h, 1, NULL, NULL, &a, sizeof(a), NULL, 0),
			 ACL_ERROR_RT_PARAM_INVALID); /* no such task type */
	a.task_type = NPU_TASK_AI_CORE;
	assert_int_equal(rtsLaunchKernelWithHostArgs(h, 24, NULL, NULL, &a, sizeof(a), NULL, 0), 0);
	assert_int_equal(fake_sqes[0].header.type, RT_STARS_SQE_TYPE_FFTS);
	assert_int_equal(fake_sqes[0].header.blockDim, 24);
	assert_string_equal(fake_sqes[0].u.kernel_name, "MatMulV2");
	assert_int_equal(rtStreamSynchronize((rtStream_t)&a), ACL_ERROR_RT_PARAM_INVALID);
	assert_int_equal(rtStreamDestroy(NULL), ACL_ERROR_RT_PARAM_INVALID);
	assert_int_equal(rtEventRecord(NULL, NULL), ACL_ERROR_RT_PARAM_INVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_taskid_pure),
		cmocka_unit_test_setup_teardown(test_task_id_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_per_stream_ids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batching, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_and_backpressure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_params, setup, teardown),
		/* last: it turns the HAL's sleeping query off for the rest of the run */
		cmocka_unit_test_setup_teardown(test_sync_without_head_wait, setup, teardown),
	};

	fake_sqes = calloc(FAKE_MAX_SQES, sizeof(*fake_sqes));
	if (!fake_sqes)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
