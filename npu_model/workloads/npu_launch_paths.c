// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * npu_launch_paths - one task through every launch path of CANN 8.x/9.x's
 * runtime, each on its own stream (tests/trace/test_trace_launch_paths.py):
 * what opbase, the single-op executor, AI CPU ops and AscendCL's own
 * launch calls end in, with the real prototypes (npu_rt.h), then the
 * aclnn ops of a split operator library dlopened afterwards.
 *
 *   npu_launch_paths [ROUNDS]   runs the paths ROUNDS times (default 1) and
 *                               prints "npu_launch_paths: N tasks on M streams";
 *                               exits 1 (naming the call) if any call fails.
 *   NPU_LAUNCH_PATHS_GO=FILE    before the dlopen, print "npu_launch_paths: ready"
 *                               and wait (up to 120 s) until FILE exists; after it,
 *                               print "npu_launch_paths: loaded" and wait for FILE.2
 *                               before the call: a test attaches by pid, lets the
 *                               library load, and lets it run once the tracer has
 *                               attached it (a -p target is never stopped).
 *
 * The journal is the ground truth: each runtime call writes its `api` line
 * with `stream` and `op` (npu_model/JOURNAL.md); the streams here are
 * distinct, so a capture's stream per launch can be checked call by call.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "npu_acl.h"
#include "npu_aclnn.h"
#include "npu_cost.h"
#include "npu_kernel.h"
#include "npu_rt.h"

#define NR_STREAMS 16

static int failures;

#define RUN(call)                                                                        \
	do {                                                                             \
		int __r = (call);                                                        \
                                                                                         \
		if (__r) {                                                               \
			fprintf(stderr, "npu_launch_paths: %s: error %d\n", #call, __r); \
			failures++;                                                      \
		}                                                                        \
	} while (0)

static const char kernel_stub; /* the registered "compiled" kernel's address */
static const char kernel_stub2;

static struct npu_kernel_args args_of(uint32_t type)
{
	struct npu_kernel_args a = { .flops = 1 << 20, .bytes = 1 << 16, .task_type = type };

	return a;
}

static void run_paths(aclrtStream *st, void *dev, void *host)
{
	struct npu_kernel_args a = args_of(NPU_TASK_AI_CORE);
	struct npu_kernel_args v = args_of(NPU_TASK_AI_VECTOR_CORE);
	struct npu_kernel_args c = args_of(NPU_TASK_AI_CPU);
	struct npu_fwk_kernel_args fwk = { .cost = args_of(NPU_TASK_AI_CPU) };
	static const char blob[] = "npu_launch_paths binary";
	rtArgsEx_t ai = { .args = &a, .argsSize = sizeof(a) };
	rtArgsEx_t ci = { .args = &c, .argsSize = sizeof(c) };
	rtAicpuArgsEx_t xi = { .args = &c, .argsSize = sizeof(c) };
	aclrtBinHandle file_bin = NULL, hdl_bin = NULL, data_bin = NULL;
	aclrtFuncHandle by_entry = NULL, by_name = NULL;
	aclrtEvent ev = NULL;

	snprintf(fwk.op_name, sizeof(fwk.op_name), "LpFwkOp");
	/* opbase: a kernel binary from a file, its function for a tiling key */
	RUN(aclrtBinaryLoadFromFile("/opp/kernel/LpHostArgs.o", NULL, &file_bin));
	RUN(aclrtBinaryGetFunctionByEntry(file_bin, 1, &by_entry));
	RUN(aclrtLaunchKernelWithHostArgs(by_entry, 4, st[0], NULL, &v, sizeof(v), NULL, 0));
	/* the single-op executor: registered stubs */
	RUN(rtFunctionRegister(NULL, &kernel_stub, "LpStub", NULL, 0));
	RUN(rtFunctionRegister(NULL, &kernel_stub2, "LpFlagV2", NULL, 0));
	RUN(rtKernelLaunch(&kernel_stub, 2, &a, sizeof(a), NULL, st[1]));
	RUN(rtKernelLaunchWithFlagV2(&kernel_stub2, 2, &ai, NULL, st[2], 0, NULL));
	RUN(aclrtBinaryLoadFromFile("/opp/kernel/LpHandleV2.o", NULL, &hdl_bin));
	RUN(rtKernelLaunchWithHandleV2(hdl_bin, 3, 2, &ai, NULL, st[3], NULL));
	/* AscendCL's own launch: aclrtLaunchKernel -> rtLaunchKernelByFuncHandleV3 */
	RUN(aclrtBinaryLoadFromData(blob, sizeof(blob), NULL, &data_bin));
	RUN(aclrtBinaryGetFunction(data_bin, "LpFuncV3", &by_name));
	RUN(aclrtLaunchKernel(by_name, 2, &a, sizeof(a), st[4]));
	RUN(rtsLaunchKernelWithConfig(by_entry, 2, st[5], NULL, &a, NULL));
	RUN(rtsLaunchKernelWithDevArgs(by_name, 2, st[6], NULL, &a, sizeof(a), NULL));
	/* AI CPU: by name, task type AI_CPU on the card */
	RUN(rtCpuKernelLaunchWithFlag("libcpu_kernels.so", "LpCpuKernel", 1, &ci, NULL, st[7], 0));
	RUN(rtAicpuKernelLaunchExWithArgs(1, "LpAicpuOp", 1, &xi, NULL, st[8], 0));
	RUN(rtKernelLaunchEx(&fwk, sizeof(fwk), 0, st[9]));
	/* copies, memset, events */
	RUN(aclrtMemcpyAsync(dev, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE, st[10]));
	RUN(aclrtMemcpyAsync(host, 4096, dev, 4096, ACL_MEMCPY_DEVICE_TO_HOST, st[11]));
	RUN(aclrtMemsetAsync(dev, 4096, 0, 4096, st[12]));
	RUN(aclrtCreateEvent(&ev));
	RUN(aclrtRecordEvent(ev, st[13]));
	RUN(aclrtStreamWaitEvent(st[14], ev));
	for (int i = 0; i < NR_STREAMS; i++)
		RUN(aclrtSynchronizeStream(st[i]));
	RUN(aclrtDestroyEvent(ev));
}

/*
 * NPU_LAUNCH_PATHS_GO: print what, then wait for the file (plus suffix), polled every
 * 10 ms, 120 s at most.
 */
static void wait_go(const char *what, const char *suffix)
{
	const char *go = getenv("NPU_LAUNCH_PATHS_GO");
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	char path[4096];

	if (!go || !*go)
		return;
	snprintf(path, sizeof(path), "%s%s", go, suffix);
	printf("npu_launch_paths: %s\n", what);
	fflush(stdout);
	for (int i = 0; i < 12000 && access(path, F_OK); i++)
		nanosleep(&ts, NULL);
}

/* A split operator library loaded now (after any attach): its aclnn ops, phase 1 only. */
static void late_opapi(void)
{
	void *h = dlopen("libopapi_math.so", RTLD_NOW | RTLD_LOCAL);
	__typeof__(&aclnnAddGetWorkspaceSize) gws;
	aclOpExecutor *ex = NULL;
	uint64_t ws = 0;

	if (!h) {
		fprintf(stderr, "npu_launch_paths: dlopen libopapi_math.so: %s\n", dlerror());
		failures++;
		return;
	}
	wait_go("loaded", ".2");
	gws = (__typeof__(gws))dlsym(h, "aclnnAddGetWorkspaceSize");
	/* no tensors: the op refuses (ACLNN_ERR_PARAM_NULLPTR), as the journal records */
	if (!gws || gws(NULL, NULL, NULL, NULL, &ws, &ex) != ACLNN_ERR_PARAM_NULLPTR) {
		fprintf(stderr, "npu_launch_paths: aclnnAddGetWorkspaceSize\n");
		failures++;
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1;
	aclrtStream st[NR_STREAMS] = { 0 };
	void *dev = NULL, *host = NULL;

	if (rounds < 1 || argc > 2) {
		fprintf(stderr, "usage: npu_launch_paths [ROUNDS]\n");
		return 2;
	}
	RUN(aclInit(NULL));
	RUN(aclrtSetDevice(0));
	if (failures)
		return 1;
	for (int i = 0; i < NR_STREAMS; i++)
		RUN(aclrtCreateStream(&st[i]));
	RUN(aclrtMalloc(&dev, 1 << 16, ACL_MEM_MALLOC_HUGE_FIRST));
	RUN(aclrtMallocHost(&host, 1 << 16));
	for (int r = 0; r < rounds && !failures; r++)
		run_paths(st, dev, host);
	wait_go("ready", "");
	late_opapi();
	RUN(aclrtFree(dev));
	RUN(aclrtFreeHost(host));
	for (int i = 0; i < NR_STREAMS; i++)
		RUN(aclrtDestroyStream(st[i]));
	RUN(aclrtResetDevice(0));
	RUN(aclFinalize());
	if (failures)
		return 1;
	printf("npu_launch_paths: %d tasks on %d streams\n", 15 * rounds, 15);
	return 0;
}
