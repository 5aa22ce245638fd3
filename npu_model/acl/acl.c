// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * acl.c - libacl_rt.so: the aclInit / aclrt* API (npu_acl.h) over the rt*
 * runtime, as CANN's AscendCL is layered (aclrtMalloc -> rtMalloc ->
 * halMemAlloc, aclrtSynchronizeStream -> rtStreamSynchronize, ...), where
 * CANN 8.x/9.x implements it (hicann/runtime src/acl/aclrt); libascendcl.so
 * is a compatibility layer that forwards here (compat.c, npu_model/README.md
 * "Libraries above the driver").  rt error codes are ACL_ERROR_RT_* already and pass
 * through; acl's own parameter checks return ACL_ERROR_INVALID_PARAM.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl_priv.h"
#include "npu_acl.h"
#include "npu_api_journal.h"
#include "npu_rt.h"

static pthread_mutex_t acl_lock = PTHREAD_MUTEX_INITIALIZER;
static int acl_initialized;

/* aclrt* memory module id, as the real ACL passes one to rtMalloc. */
#define ACL_MODULE_ID 3

NPU_NOINLINE aclError aclInit(const char *configPath)
{
	aclError r = ACL_SUCCESS;
	NPU_API_ENTER();

	(void)configPath;
	pthread_mutex_lock(&acl_lock);
	if (acl_initialized)
		r = ACL_ERROR_REPEAT_INITIALIZE;
	else
		acl_initialized = 1;
	pthread_mutex_unlock(&acl_lock);
	NPU_API_EXIT("cann", r, "");
	return r;
}

NPU_NOINLINE aclError aclFinalize(void)
{
	aclError r = ACL_SUCCESS;
	NPU_API_ENTER();

	pthread_mutex_lock(&acl_lock);
	if (!acl_initialized)
		r = ACL_ERROR_UNINITIALIZE;
	acl_initialized = 0;
	pthread_mutex_unlock(&acl_lock);
	NPU_API_EXIT("cann", r, "");
	return r;
}

NPU_NOINLINE aclError aclrtSetDevice(int32_t deviceId)
{
	aclError r;
	NPU_API_ENTER();

	r = acl_initialized ? rtSetDevice(deviceId) : ACL_ERROR_UNINITIALIZE;
	NPU_API_EXIT("cann", r, "\tdev=%d", deviceId);
	return r;
}

NPU_NOINLINE aclError aclrtResetDevice(int32_t deviceId)
{
	aclError r;
	NPU_API_ENTER();

	r = rtDeviceReset(deviceId);
	NPU_API_EXIT("cann", r, "\tdev=%d", deviceId);
	return r;
}

NPU_NOINLINE aclError aclrtGetDevice(int32_t *deviceId)
{
	aclError r;
	NPU_API_ENTER();

	r = deviceId ? rtGetDevice(deviceId) : ACL_ERROR_INVALID_PARAM;
	NPU_API_EXIT("cann", r, "");
	return r;
}

NPU_NOINLINE aclError aclrtGetDeviceCount(uint32_t *count)
{
	int32_t n = 0;
	aclError r;
	NPU_API_ENTER();

	r = count ? rtGetDeviceCount(&n) : ACL_ERROR_INVALID_PARAM;
	if (!r)
		*count = (uint32_t)n;
	NPU_API_EXIT("cann", r, "");
	return r;
}

NPU_NOINLINE aclError aclrtCreateStream(aclrtStream *stream)
{
	aclError r;
	NPU_API_ENTER();

	r = stream ? rtStreamCreate(stream, RT_STREAM_PRIORITY_DEFAULT) : ACL_ERROR_INVALID_PARAM;
	NPU_API_EXIT("cann", r, "\tstream=%p", r ? NULL : *stream);
	return r;
}

NPU_NOINLINE aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority,
						  uint32_t flag)
{
	aclError r;
	NPU_API_ENTER();

	r = stream ? rtStreamCreateWithFlags(stream, (int32_t)priority, flag) :
		     ACL_ERROR_INVALID_PARAM;
	NPU_API_EXIT("cann", r, "\tstream=%p", r ? NULL : *stream);
	return r;
}

NPU_NOINLINE aclError aclrtDestroyStream(aclrtStream stream)
{
	aclError r;
	NPU_API_ENTER();

	r = stream ? rtStreamDestroy(stream) : ACL_ERROR_INVALID_PARAM;
	NPU_API_EXIT("cann", r, "\tstream=%p", stream);
	return r;
}

NPU_NOINLINE aclError aclrtSynchronizeStream(aclrtStream stream)
{
	aclError r;
	NPU_API_ENTER();

	r = rtStreamSynchronize(stream);
	NPU_API_EXIT("cann", r, "\tstream=%p", stream);
	return r;
}

NPU_NOINLINE aclError aclrtSynchronizeDevice(void)
{
	aclError r;
	NPU_API_ENTER();

	r = rtDeviceSynchronize();
	NPU_API_EXIT("cann", r, "");
	return r;
}

NPU_NOINLINE aclError aclrtStreamGetId(aclrtStream stream, int32_t *streamId)
{
	aclError r;
	NPU_API_ENTER();

	r = streamId ? rtGetStreamId(stream, streamId) : ACL_ERROR_INVALID_PARAM;
	NPU_API_EXIT("cann", r, "\tstream=%p", stream);
	return r;
}

NPU_NOINLINE aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)
{
	aclError r;
	NPU_API_ENTER();

	r = event ? rtStreamWaitEvent(stream, event) : ACL_ERROR_INVALID_PARAM;
	NPU_API_EXIT("cann", r, "\tstream=%p\tevent=%p", stream, event);
	return r;
}

NPU_NOINLINE aclError aclrtCreateEvent(aclrtEvent *event)
{
	aclError r;
	NPU_API_ENTER();

	r = event ? rtEventCreate(event) : ACL_ERROR_INVALID_PARAM;
	NPU_API_EXIT("cann", r, "\tevent=%p", r ? NULL : *event);
	return r;
}

NPU_NOINLINE aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag)
{
	aclError r;
	NPU_API_ENTER();

	r = event ? rtEventCreateWithFlag(event, flag) : ACL_ERROR_INVALID_PARAM;
	NPU_API_EXIT("cann", r, "\tevent=%p", r ? NULL : *event);
	return r;
}

NPU_NOINLINE aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
	aclError r;
	NPU_API_ENTER();

	r = event ? rtEventRecord(event, stream) : ACL_ERROR_INVALID_PARAM;
	NPU_API_EXIT("cann", r, "\tevent=%p\tstream=%p", event, stream);
	return r;
}

NPU_NOINLINE aclError aclrtSynchronizeEvent(aclrtEvent event)
{
	aclError r;
	NPU_API_ENTER();

	r = event ? rtEventSynchronize(event) : ACL_ERROR_INVALID_PARAM;
	NPU_API_EXIT("cann", r, "\tevent=%p", event);
	return r;
}

/*
 * rtEventQuery for the aclrtQueryEvent* pair: ACL_SUCCESS with *ready set,
 * ACL_ERROR_INVALID_PARAM for a NULL event or status, else rt's error.
 */
static aclError query_event(aclrtEvent event, const void *status, int *ready)
{
	aclError r;

	if (!event || !status)
		return ACL_ERROR_INVALID_PARAM;
	r = rtEventQuery(event);
	if (r != 0 && r != 1)
		return r;
	*ready = !r;
	return ACL_SUCCESS;
}

NPU_NOINLINE aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status)
{
	aclError r;
	int ready = 0;
	NPU_API_ENTER();

	r = query_event(event, status, &ready);
	if (!r)
		*status = ready ? ACL_EVENT_STATUS_COMPLETE : ACL_EVENT_STATUS_NOT_READY;
	NPU_API_EXIT("cann", r, "\tevent=%p", event);
	return r;
}

NPU_NOINLINE aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
{
	aclError r;
	int ready = 0;
	NPU_API_ENTER();

	r = query_event(event, status, &ready);
	if (!r)
		*status = ready ? ACL_EVENT_RECORDED_STATUS_COMPLETE :
				  ACL_EVENT_RECORDED_STATUS_NOT_READY;
	NPU_API_EXIT("cann", r, "\tevent=%p", event);
	return r;
}

NPU_NOINLINE aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent)
{
	aclError r;
	NPU_API_ENTER();

	r = (ms && startEvent && endEvent) ? rtEventElapsedTime(ms, startEvent, endEvent) :
					     ACL_ERROR_INVALID_PARAM;
	NPU_API_EXIT("cann", r, "");
	return r;
}

NPU_NOINLINE aclError aclrtDestroyEvent(aclrtEvent event)
{
	aclError r;
	NPU_API_ENTER();

	r = event ? rtEventDestroy(event) : ACL_ERROR_INVALID_PARAM;
	NPU_API_EXIT("cann", r, "\tevent=%p", event);
	return r;
}

static int policy_ok(aclrtMemMallocPolicy policy)
{
	return (policy & 0xff) <= ACL_MEM_MALLOC_HUGE1G_ONLY_P2P;
}

/*
 * The checks aclrtMalloc* share, then rtMalloc of `bytes` (the caller's
 * rounding of size) from HBM.
 */
static aclError dev_malloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy, size_t bytes)
{
	if (!devPtr || !size || !policy_ok(policy) || size > (SIZE_MAX >> 2))
		return ACL_ERROR_INVALID_PARAM;
	return rtMalloc(devPtr, bytes, RT_MEMORY_HBM, ACL_MODULE_ID);
}

#define ALIGN32(size) (((size) + 31) & ~(size_t)31)

/* aclrtMalloc: the size is rounded up to 32 bytes plus 32 bytes of padding (CANN docs). */
NPU_NOINLINE aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	aclError r;
	NPU_API_ENTER();

	r = dev_malloc(devPtr, size, policy, ALIGN32(size) + 32);
	NPU_API_EXIT("cann", r, "\tsize=%zu\tptr=%p", size, (r || !devPtr) ? NULL : *devPtr);
	return r;
}

/* What torch_npu's caching allocator calls: 32-byte alignment, no padding. */
NPU_NOINLINE aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	aclError r;
	NPU_API_ENTER();

	r = dev_malloc(devPtr, size, policy, ALIGN32(size));
	NPU_API_EXIT("cann", r, "\tsize=%zu\tptr=%p", size, (r || !devPtr) ? NULL : *devPtr);
	return r;
}

NPU_NOINLINE aclError aclrtMallocHost(void **hostPtr, size_t size)
{
	aclError r;
	NPU_API_ENTER();

	if (hostPtr && size)
		r = rtMallocHost(hostPtr, size, ACL_MODULE_ID);
	else
		r = ACL_ERROR_INVALID_PARAM;
	NPU_API_EXIT("cann", r, "\tsize=%zu\tptr=%p", size, (r || !hostPtr) ? NULL : *hostPtr);
	return r;
}

NPU_NOINLINE aclError aclrtFree(void *devPtr)
{
	aclError r;
	NPU_API_ENTER();

	r = devPtr ? rtFree(devPtr) : ACL_ERROR_INVALID_PARAM;
	NPU_API_EXIT("cann", r, "\tptr=%p", devPtr);
	return r;
}

NPU_NOINLINE aclError aclrtFreeHost(void *hostPtr)
{
	aclError r;
	NPU_API_ENTER();

	r = hostPtr ? rtFreeHost(hostPtr) : ACL_ERROR_INVALID_PARAM;
	NPU_API_EXIT("cann", r, "\tptr=%p", hostPtr);
	return r;
}

NPU_NOINLINE aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total)
{
	uint64_t f = 0, t = 0;
	aclError r;
	NPU_API_ENTER();

	if (!free || !total || (unsigned int)attr > ACL_HBM_MEM_HUGE1G) {
		r = ACL_ERROR_INVALID_PARAM;
	} else {
		r = rtMemGetInfo(&f, &t);
		if (!r) {
			*free = f;
			*total = t;
		}
	}
	NPU_API_EXIT("cann", r, "");
	return r;
}

/* The arguments aclrtMemcpy and aclrtMemcpyAsync accept. */
static int memcpy_args_ok(const void *dst, size_t destMax, const void *src, size_t count,
			  aclrtMemcpyKind kind)
{
	return dst && src && count <= destMax && (unsigned int)kind <= ACL_MEMCPY_DEVICE_TO_DEVICE;
}

NPU_NOINLINE aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
				  aclrtMemcpyKind kind)
{
	aclError r;
	NPU_API_ENTER();

	if (!memcpy_args_ok(dst, destMax, src, count, kind))
		r = ACL_ERROR_INVALID_PARAM;
	else
		r = rtMemcpy(dst, destMax, src, count, (rtMemcpyKind_t)kind);
	NPU_API_EXIT("cann", r, "\tsize=%zu\tkind=%d", count, (int)kind);
	return r;
}

NPU_NOINLINE aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
				       aclrtMemcpyKind kind, aclrtStream stream)
{
	aclError r;
	NPU_API_ENTER();

	if (!memcpy_args_ok(dst, destMax, src, count, kind))
		r = ACL_ERROR_INVALID_PARAM;
	else
		/* CANN 8.x/9.x: device-to-host copies go through rtMemcpyAsyncEx */
		r = kind == ACL_MEMCPY_DEVICE_TO_HOST ?
			    rtMemcpyAsyncEx(dst, destMax, src, count, (rtMemcpyKind_t)kind, stream,
					    NULL) :
			    rtMemcpyAsync(dst, destMax, src, count, (rtMemcpyKind_t)kind, stream);
	NPU_API_EXIT("cann", r, "\tsize=%zu\tkind=%d\tstream=%p", count, (int)kind, stream);
	return r;
}

NPU_NOINLINE aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)
{
	aclError r;
	NPU_API_ENTER();

	if (!devPtr || count > maxCount)
		r = ACL_ERROR_INVALID_PARAM;
	else
		r = rtMemset(devPtr, maxCount, (uint32_t)value, count);
	NPU_API_EXIT("cann", r, "\tsize=%zu\tptr=%p", count, devPtr);
	return r;
}

NPU_NOINLINE aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
				       aclrtStream stream)
{
	aclError r;
	NPU_API_ENTER();

	if (!devPtr || count > maxCount)
		r = ACL_ERROR_INVALID_PARAM;
	else
		r = rtMemsetAsync(devPtr, maxCount, (uint32_t)value, count, stream);
	NPU_API_EXIT("cann", r, "\tsize=%zu\tptr=%p\tstream=%p", count, devPtr, stream);
	return r;
}

/* A model binary is only a name space: kernels are looked up by name in the runtime. */
struct acl_bin {
	uint32_t magic;
};
#define ACL_BIN_MAGIC	  0x42494e31U
#define RT_BIN_FILE_MAGIC 0x5242494eU /* the runtime's binary from a file */

NPU_NOINLINE aclError aclrtBinaryLoadFromData(const void *data, size_t length,
					      const aclrtBinaryLoadOptions *options,
					      aclrtBinHandle *binHandle)
{
	struct acl_bin *b;
	aclError r = ACL_SUCCESS;
	NPU_API_ENTER();

	(void)options;
	if (!data || !length || !binHandle) {
		r = ACL_ERROR_INVALID_PARAM;
	} else {
		b = calloc(1, sizeof(*b));
		if (!b) {
			r = ACL_ERROR_BAD_ALLOC;
		} else {
			b->magic = ACL_BIN_MAGIC;
			*binHandle = b;
		}
	}
	NPU_API_EXIT("cann", r, "\tsize=%zu", length);
	return r;
}

NPU_NOINLINE aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle, const char *kernelName,
					     aclrtFuncHandle *funcHandle)
{
	const struct acl_bin *b = binHandle;
	aclError r;
	NPU_API_ENTER();

	if (!b || (b->magic != ACL_BIN_MAGIC && b->magic != RT_BIN_FILE_MAGIC) || !kernelName ||
	    !funcHandle)
		r = ACL_ERROR_INVALID_PARAM;
	else
		r = rtsFuncGetByName(binHandle, kernelName, funcHandle);
	NPU_API_EXIT("cann", r, "\top=%s", kernelName ? kernelName : "-");
	return r;
}

/* A binary from a file is the runtime's (rtsBinaryLoadFromFile); its kernels are by entry. */
NPU_NOINLINE aclError aclrtBinaryLoadFromFile(const char *binPath, aclrtBinaryLoadOptions *options,
					      aclrtBinHandle *binHandle)
{
	aclError r;
	NPU_API_ENTER();

	if (!binPath || !binHandle)
		r = ACL_ERROR_INVALID_PARAM;
	else
		r = rtsBinaryLoadFromFile(binPath, options, binHandle);
	NPU_API_EXIT("cann", r, "\tpath=%s", binPath ? binPath : "-");
	return r;
}

/* How opbase names aclnn kernels: the binary's function for a tiling key. */
NPU_NOINLINE aclError aclrtBinaryGetFunctionByEntry(aclrtBinHandle binHandle, uint64_t funcEntry,
						    aclrtFuncHandle *funcHandle)
{
	aclError r;
	NPU_API_ENTER();

	if (!binHandle || !funcHandle)
		r = ACL_ERROR_INVALID_PARAM;
	else
		r = rtsFuncGetByEntry(binHandle, funcEntry, funcHandle);
	NPU_API_EXIT("cann", r, "\tentry=%llu", (unsigned long long)funcEntry);
	return r;
}

NPU_NOINLINE aclError aclrtLaunchKernel(aclrtFuncHandle funcHandle, uint32_t numBlocks,
					const void *argsData, size_t argsSize, aclrtStream stream)
{
	rtArgsEx_t ai = { .args = (void *)argsData, .argsSize = (uint32_t)argsSize };
	aclError r;
	NPU_API_ENTER();

	if (!funcHandle || !argsData || argsSize > UINT32_MAX)
		r = ACL_ERROR_INVALID_PARAM;
	else /* CANN 8.x/9.x: aclrtLaunchKernel -> rtLaunchKernelByFuncHandleV3 */
		r = rtLaunchKernelByFuncHandleV3(funcHandle, numBlocks, &ai, stream, NULL);
	NPU_API_EXIT("cann", r, "\tstream=%p", stream);
	return r;
}

NPU_NOINLINE aclError aclrtLaunchKernelWithHostArgs(aclrtFuncHandle funcHandle, uint32_t numBlocks,
						    aclrtStream stream, aclrtLaunchKernelCfg *cfg,
						    void *hostArgs, size_t argsSize,
						    aclrtPlaceHolderInfo *placeHolderArray,
						    size_t placeHolderNum)
{
	aclError r;
	NPU_API_ENTER();

	if (!funcHandle || !hostArgs || argsSize > UINT32_MAX || placeHolderNum > UINT32_MAX)
		r = ACL_ERROR_INVALID_PARAM;
	else
		r = rtsLaunchKernelWithHostArgs(funcHandle, numBlocks, stream,
						(rtKernelLaunchCfg_t *)cfg, hostArgs,
						(uint32_t)argsSize,
						(rtPlaceHolderInfo_t *)placeHolderArray,
						(uint32_t)placeHolderNum);
	NPU_API_EXIT("cann", r, "\tstream=%p", stream);
	return r;
}
