// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * compat.c - libascendcl.so's AscendCL runtime API as a compatibility
 * layer over libacl_rt.so, the library CANN 8.x/9.x implements aclInit and
 * aclrt* in (hicann/runtime: src/acl/aclrt builds libacl_rt.so, whose
 * aclrt* forward to the aclrt*Impl of the runtime; libascendcl.so comes as
 * the prebuilt "acl-compat" package, cmake/third_party/acl_compat.cmake).
 *
 * Every function here forwards to libacl_rt.so's function of the same name
 * (looked up in that library alone, so not back to itself) and does no work
 * and writes no journal line of its own: one user call is one `api` line
 * (the one libacl_rt.so writes) but two exported functions on the stack.  A
 * tracer that probes both libraries sees the call twice (npu_model/README.md).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "npu_acl.h"
#include "npu_api_journal.h"

/* libacl_rt.so's definition of name (a DT_NEEDED library: already loaded). */
static void *acl_rt_sym(const char *name)
{
	static void *lib;
	void *fn;

	if (!__atomic_load_n(&lib, __ATOMIC_ACQUIRE)) {
		void *h = dlopen("libacl_rt.so", RTLD_NOW | RTLD_NOLOAD);

		if (!h)
			h = dlopen("libacl_rt.so", RTLD_NOW);
		__atomic_store_n(&lib, h, __ATOMIC_RELEASE);
	}
	fn = lib ? dlsym(lib, name) : NULL;
	if (!fn)
		fprintf(stderr, "libascendcl.so: %s not found in libacl_rt.so\n", name);
	return fn;
}

#define FWD(name, sig, args)                                               \
	NPU_NOINLINE aclError name sig                                     \
	{                                                                  \
		static aclError(*fn) sig;                                  \
		aclError(*f) sig = __atomic_load_n(&fn, __ATOMIC_RELAXED); \
                                                                           \
		if (!f) {                                                  \
			f = (aclError(*) sig)acl_rt_sym(#name);            \
			if (!f)                                            \
				return ACL_ERROR_INTERNAL_ERROR;           \
			__atomic_store_n(&fn, f, __ATOMIC_RELAXED);        \
		}                                                          \
		return f args;                                             \
	}

FWD(aclInit, (const char *configPath), (configPath))
FWD(aclFinalize, (void), ())
FWD(aclrtSetDevice, (int32_t deviceId), (deviceId))
FWD(aclrtResetDevice, (int32_t deviceId), (deviceId))
FWD(aclrtGetDevice, (int32_t * deviceId), (deviceId))
FWD(aclrtGetDeviceCount, (uint32_t * count), (count))
FWD(aclrtCreateStream, (aclrtStream * stream), (stream))
FWD(aclrtCreateStreamWithConfig, (aclrtStream * stream, uint32_t priority, uint32_t flag),
    (stream, priority, flag))
FWD(aclrtDestroyStream, (aclrtStream stream), (stream))
FWD(aclrtSynchronizeStream, (aclrtStream stream), (stream))
FWD(aclrtSynchronizeDevice, (void), ())
FWD(aclrtStreamGetId, (aclrtStream stream, int32_t *streamId), (stream, streamId))
FWD(aclrtStreamWaitEvent, (aclrtStream stream, aclrtEvent event), (stream, event))
FWD(aclrtCreateEvent, (aclrtEvent * event), (event))
FWD(aclrtCreateEventWithFlag, (aclrtEvent * event, uint32_t flag), (event, flag))
FWD(aclrtRecordEvent, (aclrtEvent event, aclrtStream stream), (event, stream))
FWD(aclrtSynchronizeEvent, (aclrtEvent event), (event))
FWD(aclrtQueryEvent, (aclrtEvent event, aclrtEventStatus *status), (event, status))
FWD(aclrtQueryEventStatus, (aclrtEvent event, aclrtEventRecordedStatus *status), (event, status))
FWD(aclrtEventElapsedTime, (float *ms, aclrtEvent startEvent, aclrtEvent endEvent),
    (ms, startEvent, endEvent))
FWD(aclrtDestroyEvent, (aclrtEvent event), (event))
FWD(aclrtMalloc, (void **devPtr, size_t size, aclrtMemMallocPolicy policy), (devPtr, size, policy))
FWD(aclrtMallocAlign32, (void **devPtr, size_t size, aclrtMemMallocPolicy policy),
    (devPtr, size, policy))
FWD(aclrtMallocHost, (void **hostPtr, size_t size), (hostPtr, size))
FWD(aclrtFree, (void *devPtr), (devPtr))
FWD(aclrtFreeHost, (void *hostPtr), (hostPtr))
FWD(aclrtGetMemInfo, (aclrtMemAttr attr, size_t *free, size_t *total), (attr, free, total))
FWD(aclrtMemcpy, (void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind),
    (dst, destMax, src, count, kind))
FWD(aclrtMemcpyAsync,
    (void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind,
     aclrtStream stream),
    (dst, destMax, src, count, kind, stream))
FWD(aclrtMemset, (void *devPtr, size_t maxCount, int32_t value, size_t count),
    (devPtr, maxCount, value, count))
FWD(aclrtMemsetAsync,
    (void *devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream),
    (devPtr, maxCount, value, count, stream))
FWD(aclrtBinaryLoadFromData,
    (const void *data, size_t length, const aclrtBinaryLoadOptions *options,
     aclrtBinHandle *binHandle),
    (data, length, options, binHandle))
FWD(aclrtBinaryGetFunction,
    (const aclrtBinHandle binHandle, const char *kernelName, aclrtFuncHandle *funcHandle),
    (binHandle, kernelName, funcHandle))
FWD(aclrtBinaryLoadFromFile,
    (const char *binPath, aclrtBinaryLoadOptions *options, aclrtBinHandle *binHandle),
    (binPath, options, binHandle))
FWD(aclrtBinaryGetFunctionByEntry,
    (aclrtBinHandle binHandle, uint64_t funcEntry, aclrtFuncHandle *funcHandle),
    (binHandle, funcEntry, funcHandle))
FWD(aclrtLaunchKernel,
    (aclrtFuncHandle funcHandle, uint32_t numBlocks, const void *argsData, size_t argsSize,
     aclrtStream stream),
    (funcHandle, numBlocks, argsData, argsSize, stream))
FWD(aclrtLaunchKernelWithHostArgs,
    (aclrtFuncHandle funcHandle, uint32_t numBlocks, aclrtStream stream, aclrtLaunchKernelCfg *cfg,
     void *hostArgs, size_t argsSize, aclrtPlaceHolderInfo *placeHolderArray,
     size_t placeHolderNum),
    (funcHandle, numBlocks, stream, cfg, hostArgs, argsSize, placeHolderArray, placeHolderNum))
