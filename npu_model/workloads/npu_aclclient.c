// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * npu_aclclient - exercises AscendCL directly (libascendcl, libacl_op_compiler,
 * libruntime, no torch layer), as a CANN sample program would, and checks
 * every return code: device and stream management, events (record, query,
 * synchronize, elapsed time, cross-stream wait), memory (malloc variants,
 * copies, memset, mem info), aclrtLaunchKernel of a function from a binary,
 * aclopCompileAndExecuteV2, and the documented errors for bad parameters.
 *
 *   npu_aclclient            prints "npu_aclclient: N checks passed" and exits 0,
 *                            or names each failed check on stderr and exits 1.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "npu_acl.h"
#include "npu_cost.h"
#include "npu_kernel.h"

static int checks, failures;

#define CHECK(cond)                                                                               \
	do {                                                                                      \
		checks++;                                                                         \
		if (!(cond)) {                                                                    \
			failures++;                                                               \
			fprintf(stderr, "npu_aclclient: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                                 \
	} while (0)

static void test_device(void)
{
	uint32_t n = 0;
	int32_t dev = -1;

	CHECK(aclrtSetDevice(0) == ACL_ERROR_UNINITIALIZE); /* before aclInit */
	CHECK(aclInit(NULL) == ACL_SUCCESS);
	CHECK(aclInit(NULL) == ACL_ERROR_REPEAT_INITIALIZE);
	CHECK(aclrtGetDeviceCount(&n) == ACL_SUCCESS && n >= 1);
	CHECK(aclrtGetDeviceCount(NULL) == ACL_ERROR_INVALID_PARAM);
	CHECK(aclrtSetDevice((int32_t)n) == ACL_ERROR_RT_INVALID_DEVICEID);
	CHECK(aclrtSetDevice(0) == ACL_SUCCESS);
	CHECK(aclrtGetDevice(&dev) == ACL_SUCCESS && dev == 0);
}

static void test_memory(aclrtStream s)
{
	size_t free_b = 0, total_b = 0, free_after = 0;
	void *d = NULL, *d2 = NULL, *h = NULL, *x = NULL;
	char host[4096];

	CHECK(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total_b) == ACL_SUCCESS && total_b > 0);
	CHECK(aclrtMalloc(&d, 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS && d);
	CHECK(aclrtMallocAlign32(&d2, 4096, ACL_MEM_MALLOC_NORMAL_ONLY) == ACL_SUCCESS && d2);
	CHECK(aclrtGetMemInfo(ACL_HBM_MEM, &free_after, &total_b) == ACL_SUCCESS &&
	      free_after < free_b);
	CHECK(aclrtMallocHost(&h, sizeof(host)) == ACL_SUCCESS && h);
	memset(host, 7, sizeof(host));
	CHECK(aclrtMemcpy(d, 1 << 20, host, sizeof(host), ACL_MEMCPY_HOST_TO_DEVICE) ==
	      ACL_SUCCESS);
	CHECK(aclrtMemcpy(h, sizeof(host), host, sizeof(host), ACL_MEMCPY_HOST_TO_HOST) ==
		      ACL_SUCCESS &&
	      !memcmp(h, host, sizeof(host)));
	CHECK(aclrtMemcpyAsync(d2, 4096, d, 4096, ACL_MEMCPY_DEVICE_TO_DEVICE, s) == ACL_SUCCESS);
	CHECK(aclrtMemcpyAsync(h, 4096, d2, 4096, ACL_MEMCPY_DEVICE_TO_HOST, s) == ACL_SUCCESS);
	CHECK(aclrtMemset(d, 1 << 20, 0, 1 << 20) == ACL_SUCCESS);
	CHECK(aclrtSynchronizeStream(s) == ACL_SUCCESS);
	/* bad parameters */
	CHECK(aclrtMalloc(&x, 0, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_ERROR_INVALID_PARAM);
	CHECK(aclrtMalloc(NULL, 64, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_ERROR_INVALID_PARAM);
	CHECK(aclrtMalloc(&x, 64, (aclrtMemMallocPolicy)99) == ACL_ERROR_INVALID_PARAM);
	CHECK(aclrtMemcpy(d, 16, host, sizeof(host), ACL_MEMCPY_HOST_TO_DEVICE) ==
	      ACL_ERROR_INVALID_PARAM);
	CHECK(aclrtMemcpy(d, 1 << 20, host, 16, (aclrtMemcpyKind)42) == ACL_ERROR_INVALID_PARAM);
	CHECK(aclrtFree(NULL) == ACL_ERROR_INVALID_PARAM);
	CHECK(aclrtFree(host) == ACL_ERROR_RT_MEMORY_FREE); /* not device memory */
	/* more than the card has */
	CHECK(aclrtMalloc(&x, (size_t)total_b + (1ull << 30), ACL_MEM_MALLOC_HUGE_FIRST) ==
	      ACL_ERROR_RT_MEMORY_ALLOCATION);
	CHECK(aclrtFree(d2) == ACL_SUCCESS);
	CHECK(aclrtFreeHost(h) == ACL_SUCCESS);
	d2 = NULL;
	CHECK(aclrtGetMemInfo(ACL_HBM_MEM, &free_after, &total_b) == ACL_SUCCESS);
	CHECK(aclrtMalloc(&d2, 4096, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
	CHECK(aclrtFree(d2) == ACL_SUCCESS);
	CHECK(aclrtFree(d) == ACL_SUCCESS);
	CHECK(aclrtFree(d) == ACL_ERROR_RT_MEMORY_FREE); /* double free refused */
}

static void test_streams_events(void)
{
	aclrtStream a = NULL, b = NULL;
	aclrtEvent e1 = NULL, e2 = NULL;
	aclrtEventRecordedStatus rs;
	aclrtEventStatus st;
	int32_t ida = -1, idb = -1;
	float ms = -1;

	CHECK(aclrtCreateStream(&a) == ACL_SUCCESS);
	CHECK(aclrtCreateStreamWithConfig(&b, 0, ACL_STREAM_FAST_LAUNCH) == ACL_SUCCESS);
	CHECK(aclrtStreamGetId(a, &ida) == ACL_SUCCESS);
	CHECK(aclrtStreamGetId(b, &idb) == ACL_SUCCESS && ida != idb && ida >= 0);
	CHECK(aclrtCreateEvent(&e1) == ACL_SUCCESS);
	CHECK(aclrtCreateEventWithFlag(&e2, ACL_EVENT_TIME_LINE) == ACL_SUCCESS);
	CHECK(aclrtRecordEvent(e1, a) == ACL_SUCCESS);
	CHECK(aclrtStreamWaitEvent(b, e1) == ACL_SUCCESS);
	CHECK(aclrtRecordEvent(e2, b) == ACL_SUCCESS);
	CHECK(aclrtSynchronizeEvent(e2) == ACL_SUCCESS);
	CHECK(aclrtQueryEvent(e1, &st) == ACL_SUCCESS && st == ACL_EVENT_STATUS_COMPLETE);
	CHECK(aclrtQueryEventStatus(e2, &rs) == ACL_SUCCESS &&
	      rs == ACL_EVENT_RECORDED_STATUS_COMPLETE);
	CHECK(aclrtEventElapsedTime(&ms, e1, e2) == ACL_SUCCESS && ms >= 0);
	CHECK(aclrtQueryEvent(NULL, &st) == ACL_ERROR_INVALID_PARAM);
	CHECK(aclrtRecordEvent(e1, (aclrtStream)&ms) == ACL_ERROR_RT_PARAM_INVALID);
	CHECK(aclrtSynchronizeDevice() == ACL_SUCCESS);
	CHECK(aclrtDestroyEvent(e1) == ACL_SUCCESS);
	CHECK(aclrtDestroyEvent(e2) == ACL_SUCCESS);
	CHECK(aclrtDestroyStream(b) == ACL_SUCCESS);
	CHECK(aclrtDestroyStream(a) == ACL_SUCCESS);
	CHECK(aclrtDestroyStream(NULL) == ACL_ERROR_INVALID_PARAM);
}

/* A kernel from a "binary": aclrtBinaryLoadFromData, aclrtBinaryGetFunction, aclrtLaunchKernel. */
static void test_launch(aclrtStream s)
{
	static const char blob[] = "custom kernel binary";
	struct npu_kernel_args args = { .flops = 1000000,
					.bytes = 65536,
					.task_type = NPU_TASK_AI_CORE };
	aclrtBinHandle bin = NULL;
	aclrtFuncHandle fn = NULL;

	CHECK(aclrtBinaryLoadFromData(blob, sizeof(blob), NULL, &bin) == ACL_SUCCESS && bin);
	CHECK(aclrtBinaryGetFunction(bin, "AddCustom", &fn) == ACL_SUCCESS && fn);
	for (int i = 0; i < 10; i++)
		CHECK(aclrtLaunchKernel(fn, 8, &args, sizeof(args), s) == ACL_SUCCESS);
	CHECK(aclrtLaunchKernel(fn, 8, &args, 4, s) == ACL_ERROR_RT_PARAM_INVALID);
	CHECK(aclrtLaunchKernel(NULL, 8, &args, sizeof(args), s) == ACL_ERROR_INVALID_PARAM);
	CHECK(aclrtBinaryGetFunction(NULL, "AddCustom", &fn) == ACL_ERROR_INVALID_PARAM);
	CHECK(aclrtSynchronizeStream(s) == ACL_SUCCESS);
}

/* The legacy single-op path: MatMul through aclopCompileAndExecuteV2. */
static void test_aclop(aclrtStream s)
{
	const int64_t a[2] = { 64, 128 }, b[2] = { 128, 32 }, c[2] = { 64, 32 }, bad[2] = { 7, 7 };
	aclTensorDesc *in[2], *out[1];
	aclDataBuffer *ib[2], *ob[1];
	aclopAttr *attr = aclopCreateAttr();
	void *d = NULL;

	CHECK(aclrtMalloc(&d, 1 << 16, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
	in[0] = aclCreateTensorDesc(ACL_FLOAT16, 2, a, ACL_FORMAT_ND);
	in[1] = aclCreateTensorDesc(ACL_FLOAT16, 2, b, ACL_FORMAT_ND);
	out[0] = aclCreateTensorDesc(ACL_FLOAT16, 2, c, ACL_FORMAT_ND);
	ib[0] = aclCreateDataBuffer(d, 1 << 14);
	ib[1] = aclCreateDataBuffer(d, 1 << 14);
	ob[0] = aclCreateDataBuffer(d, 1 << 14);
	CHECK(in[0] && in[1] && out[0] && ib[0] && ib[1] && ob[0] && attr);
	CHECK(aclGetTensorDescNumDims(in[0]) == 2 && aclGetTensorDescDim(in[1], 1) == 32);
	CHECK(aclopSetAttrFloat(attr, "alpha", 1.0f) == ACL_SUCCESS);
	CHECK(aclopCompileAndExecuteV2("MatMul", 2, in, ib, 1, out, ob, attr, ACL_ENGINE_SYS,
				       ACL_COMPILE_SYS, NULL, s) == ACL_SUCCESS);
	CHECK(aclopCompileAndExecuteV2("NoSuchOp", 2, in, ib, 1, out, ob, attr, ACL_ENGINE_SYS,
				       ACL_COMPILE_SYS, NULL, s) == ACL_ERROR_INVALID_PARAM);
	aclDestroyTensorDesc(in[1]);
	in[1] = aclCreateTensorDesc(ACL_FLOAT16, 2, bad, ACL_FORMAT_ND); /* K mismatch */
	CHECK(aclopCompileAndExecuteV2("MatMul", 2, in, ib, 1, out, ob, attr, ACL_ENGINE_SYS,
				       ACL_COMPILE_SYS, NULL, s) == ACL_ERROR_INVALID_PARAM);
	CHECK(aclCreateTensorDesc(ACL_FLOAT16, -1, a, ACL_FORMAT_ND) == NULL);
	CHECK(aclrtSynchronizeStream(s) == ACL_SUCCESS);
	for (int i = 0; i < 2; i++) {
		aclDestroyTensorDesc(in[i]);
		aclDestroyDataBuffer(ib[i]);
	}
	aclDestroyTensorDesc(out[0]);
	aclDestroyDataBuffer(ob[0]);
	aclopDestroyAttr(attr);
	CHECK(aclrtFree(d) == ACL_SUCCESS);
}

int main(void)
{
	aclrtStream s = NULL;

	test_device();
	if (failures) {
		fprintf(stderr, "npu_aclclient: no device (is npu-modeld running?)\n");
		return 1;
	}
	CHECK(aclrtCreateStream(&s) == ACL_SUCCESS);
	test_memory(s);
	test_streams_events();
	test_launch(s);
	test_aclop(s);
	CHECK(aclrtDestroyStream(s) == ACL_SUCCESS);
	CHECK(aclrtResetDevice(0) == ACL_SUCCESS);
	CHECK(aclFinalize() == ACL_SUCCESS);
	CHECK(aclFinalize() == ACL_ERROR_UNINITIALIZE);
	if (failures) {
		fprintf(stderr, "npu_aclclient: %d of %d checks failed\n", failures, checks);
		return 1;
	}
	printf("npu_aclclient: %d checks passed\n", checks);
	return 0;
}
