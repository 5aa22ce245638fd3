// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * probes.c - the built-in probe table, its resolution against a process
 * (maps -> ELF symbols -> file offsets -> prologue choice), plan updates
 * after dlopen, and `ascbpf probes`.
 *
 * Names are the real exported ones (docs/cann_api.md §1;
 * C++ names mangled by g++ for the declarations given there); npu_model
 * exports the same ones.
 */
#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
#include "ascbpf_events.h"
#include "ascend/rt_launch.h"
#include "commands.h"
#include "discovery/elfsym.h"
#include "discovery/opguard.h"
#include "lib/json_writer.h"
#include "lib/log.h"
#include "discovery/probes.h"
#include "lib/procmaps.h"
#include "arch/arch.h"
#include "arch/prologue.h"

#define FW    ASC_LAYER_FRAMEWORK
#define CANN  ASC_LAYER_CANN
#define DRV   ASC_LAYER_DRIVER
#define MEM   ASC_LAYER_MEMORY
#define HCCL  ASC_LAYER_HCCL
#define OPT   ASC_SPEC_OPTIONAL
#define L1    ASC_SPEC_LEVEL1
#define L2    ASC_SPEC_LEVEL2
#define AG    ASC_SPEC_AGENT
#define UNW   ASC_LAYER_UNWIND
#define GUARD (OPT | ASC_SPEC_NO_RETPROBE)

/*
 * Order matters where entries overlap: a function matched by two entries is
 * attached once, as the first entry says (explicit memory and SQE entries
 * come before the aclrt* / hal* globs that also match them).
 */
/* the probe tables: one entry a line (tools/lint-long-lines.txt counts the long rows) */
// clang-format off
const struct asc_probe_spec asc_probe_table[] = {
	/* ---- framework: PyTorch aten dispatch (libtorch_cpu.so, also under torch_npu) ---- */
	{ "libtorch_cpu.so", "_ZN2at4_ops*4callE*", FW, ASC_PK_ATEN_OP, ASC_FAM_FRAMEWORK, 0 },
	/* the autograd engine running one backward node (user/discovery/seqnr.h) */
	{ "libtorch_cpu.so",
	  "_ZN5torch8autograd6Engine17evaluate_functionERSt10shared_ptrINS0_9GraphTaskEEPNS0_4Node"
	  "ERNS0_11InputBufferERKS2_INS0_10ReadyQueueEE",
	  FW, ASC_PK_AUTOGRAD_EVAL, ASC_FAM_FRAMEWORK, OPT },
	/* ... and the node classes' apply(variable_list&&): MulBackward0, AccumulateGrad, ... */
	{ "libtorch_cpu.so", "_ZN5torch8autograd*5applyEOSt6vectorIN2at6TensorESaI*EE", FW,
	  ASC_PK_AUTOGRAD_APPLY, ASC_FAM_FRAMEWORK, OPT },
	/* ---- framework: torch_npu (libtorch_npu.so) ---- */
	{ "libtorch_npu.so",
	  "_ZN6at_npu6native9OpCommand10RunOpApiV2ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKSt8functionIFivEEb",
	  FW, ASC_PK_OPNAME_STDSTR, ASC_FAM_FRAMEWORK, L1 },
	/* the same on an old-C++-ABI build (torch_npu < 2.7; 2.6 on aarch64): COW std::string */
	{ "libtorch_npu.so", "_ZN6at_npu6native9OpCommand10RunOpApiV2ERKSsRKSt8functionIFivEEb", FW,
	  ASC_PK_OPNAME_STDSTR, ASC_FAM_FRAMEWORK, OPT | L1 | ASC_SPEC_CXX_OLD_ABI },
	/* torch_npu.npu_format_cast, a framework op outside at::_ops: the TransData call site */
	{ "libtorch_npu.so", "_ZN6at_npu6native10custom_ops15npu_format_castERKN2at6TensorEl", FW,
	  ASC_PK_ATEN_OP, ASC_FAM_FRAMEWORK, OPT },
	{ "libtorch_npu.so", "_ZN7c10_npu10Repository7EnqueueEPv", FW, ASC_PK_ENQUEUE,
	  ASC_FAM_FRAMEWORK, AG },
	{ "libtorch_npu.so", "_ZN6at_npu6native12AsncExecFuncEPv", FW, ASC_PK_DEQUEUE,
	  ASC_FAM_FRAMEWORK, AG },
	/* the caching allocator's profiler report (one call per block malloc/free) */
	{ "libtorch_npu.so",
	  "_ZN9torch_npu8profiler29reportMemoryDataToNpuProfilerERKNS0_11MemoryUsageE", MEM,
	  ASC_PK_MEM_REPORT, ASC_FAM_MEMORY, ASC_SPEC_NO_RETPROBE | AG },
	/* real PyTorch's allocator report: raw arguments (ptr, size, allocated, reserved, device) */
	{ "libc10.so", "_ZN3c1027reportMemoryUsageToProfiler*", MEM, ASC_PK_CALL, ASC_FAM_MEMORY,
	  OPT | ASC_SPEC_NO_RETPROBE },
	/*
	 * the default step boundary of a C++ job: the return of its optimizer's
	 * step(LossClosure), exported by libtorch_cpu.so (torch::optim::AdamW,
	 * Adam, SGD, ...), ends a step; a Python job's is optimizer.step()
	 * (user/trace/programs.c).  Return probe only (user/trace/programs.c).
	 */
	{ "libtorch_cpu.so", "_ZN5torch5optim*4stepESt8functionIFN2at6TensorEvEE", FW, ASC_PK_STEP,
	  ASC_FAM_STEP, OPT | AG },

	/* ---- CANN: memory first (family MEMORY too), then everything aclrt* ---- */
	{ "libascendcl.so", "aclrtMalloc",
	  CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, L1 | AG },
	{ "libascendcl.so", "aclrtMallocAlign32",
	  CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, L1 | AG },
	{ "libascendcl.so", "aclrtMallocCached",
	  CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, OPT | L1 | AG },
	{ "libascendcl.so", "aclrtMallocWithCfg", CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, OPT | L1 },
	{ "libascendcl.so", "aclrtMallocHost", CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, L1 },
	{ "libascendcl.so", "aclrtFree",
	  CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, L1 | AG },
	{ "libascendcl.so", "aclrtFreeHost", CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, L1 },
	{ "libascendcl.so", "aclInit", CANN, ASC_PK_CALL, ASC_FAM_CANN, L1 },
	{ "libascendcl.so", "aclFinalize", CANN, ASC_PK_CALL, ASC_FAM_CANN, L1 },
	/*
	 * handle -> kernel name, from Level1 where the launches (which carry the
	 * handle) are probed: npu_model's nnopbase, as CANN's, looks the handle up
	 * per launch, so at Level0 it would be two more probes per launch for
	 * names nothing could join
	 */
	{ "libascendcl.so", "aclrtBinaryGetFunction", CANN, ASC_PK_FUNCNAME_GET, ASC_FAM_CANN,
	  OPT | L1 },
	{ "libascendcl.so", "aclrtBinaryLoadFromFile", CANN, ASC_PK_BINARY_LOAD, ASC_FAM_CANN,
	  OPT | L1 },
	{ "libascendcl.so", "aclrtBinaryGetFunctionByEntry", CANN, ASC_PK_FUNCNAME_ENTRY,
	  ASC_FAM_CANN, OPT | L1 },
	/* the synchronisations: the agent times them (ASC_SPEC_AGENT) */
	{ "libascendcl.so", "aclrtSynchronizeDevice",
	  CANN, ASC_PK_CALL, ASC_FAM_CANN, OPT | L1 | AG },
	{ "libascendcl.so", "aclrtSynchronizeStream",
	  CANN, ASC_PK_CALL, ASC_FAM_CANN, OPT | L1 | AG },
	{ "libascendcl.so", "aclrtSynchronizeStreamWithTimeout",
	  CANN, ASC_PK_CALL, ASC_FAM_CANN, OPT | L1 | AG },
	{ "libascendcl.so", "aclrtSynchronizeEvent",
	  CANN, ASC_PK_CALL, ASC_FAM_CANN, OPT | L1 | AG },
	{ "libascendcl.so", "aclrt*", CANN, ASC_PK_CALL, ASC_FAM_CANN, L1 },
	/*
	 * CANN 8.x/9.x implements aclInit / aclrt* in libacl_rt.so, the same
	 * memory family entries as libascendcl.so's; libascendcl.so's copies
	 * that forward here are not attached (compat_forwarder() below)
	 */
	{ "libacl_rt.so", "aclrtMalloc",
	  CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, OPT | L1 | AG },
	{ "libacl_rt.so", "aclrtMallocAlign32",
	  CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, OPT | L1 | AG },
	{ "libacl_rt.so", "aclrtMallocCached",
	  CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, OPT | L1 | AG },
	{ "libacl_rt.so", "aclrtMallocWithCfg", CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY,
	  OPT | L1 },
	{ "libacl_rt.so", "aclrtMallocHost", CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY,
	  OPT | L1 },
	{ "libacl_rt.so", "aclrtFree",
	  CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, OPT | L1 | AG },
	{ "libacl_rt.so", "aclrtFreeHost", CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY,
	  OPT | L1 },
	{ "libacl_rt.so", "aclInit", CANN, ASC_PK_CALL, ASC_FAM_CANN, OPT | L1 },
	{ "libacl_rt.so", "aclFinalize", CANN, ASC_PK_CALL, ASC_FAM_CANN, OPT | L1 },
	{ "libacl_rt.so", "aclrtBinaryGetFunction", CANN, ASC_PK_FUNCNAME_GET, ASC_FAM_CANN,
	  OPT | L1 },
	/* opbase's aclnn kernel names: the binary's file, then its function for a tiling key */
	{ "libacl_rt.so", "aclrtBinaryLoadFromFile", CANN, ASC_PK_BINARY_LOAD, ASC_FAM_CANN,
	  OPT | L1 },
	{ "libacl_rt.so", "aclrtBinaryGetFunctionByEntry", CANN, ASC_PK_FUNCNAME_ENTRY,
	  ASC_FAM_CANN, OPT | L1 },
	{ "libacl_rt.so", "aclrtSynchronizeDevice",
	  CANN, ASC_PK_CALL, ASC_FAM_CANN, OPT | L1 | AG },
	{ "libacl_rt.so", "aclrtSynchronizeStream",
	  CANN, ASC_PK_CALL, ASC_FAM_CANN, OPT | L1 | AG },
	{ "libacl_rt.so", "aclrtSynchronizeStreamWithTimeout",
	  CANN, ASC_PK_CALL, ASC_FAM_CANN, OPT | L1 | AG },
	{ "libacl_rt.so", "aclrtSynchronizeEvent", CANN, ASC_PK_CALL, ASC_FAM_CANN, OPT | L1 | AG },
	{ "libacl_rt.so", "aclrt*", CANN, ASC_PK_CALL, ASC_FAM_CANN, OPT | L1 },
	/* aclop: the op type is argument 0 */
	{ "libacl_op_compiler.so", "aclopCompileAndExecute", CANN, ASC_PK_OPNAME_CSTR, ASC_FAM_CANN, L1 },
	{ "libacl_op_compiler.so", "aclopCompileAndExecuteV2", CANN, ASC_PK_OPNAME_CSTR, ASC_FAM_CANN,
	  L1 },
	{ "libacl_op_compiler.so", "aclopExecuteV2", CANN, ASC_PK_OPNAME_CSTR, ASC_FAM_CANN, OPT | L1 },
	{ "libacl_op_compiler.so", "aclopCompile", CANN, ASC_PK_OPNAME_CSTR, ASC_FAM_CANN, OPT | L1 },
	/* aclnn two-phase API (libopapi.so is dlopened by torch_npu on first use) */
	{ "libopapi.so", "aclnn*", CANN, ASC_PK_CALL, ASC_FAM_CANN, L1 },
	/* CANN 8.x/9.x's split operator libraries (a library glob: spec_lib_mapped) */
	{ "libopapi_*.so", "aclnn*", CANN, ASC_PK_CALL, ASC_FAM_CANN, OPT | L1 },
	{ "libaclnn_*.so", "aclnn*", CANN, ASC_PK_CALL, ASC_FAM_CANN, OPT | L1 },
	{ "libcust_opapi.so", "aclnn*", CANN, ASC_PK_CALL, ASC_FAM_CANN, OPT | L1 },
	/* runtime */
	{ "libruntime.so", "rtMalloc", CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, OPT | L2 },
	{ "libruntime.so", "rtFree", CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY, OPT | L2 },
	/* Level1 entry only (the loader's choice), FUNCNAME at entry; a Runtime@ call at Level2 */
	{ "libruntime.so", "rtFunctionRegister", CANN, ASC_PK_FUNCNAME_REG, ASC_FAM_CANN, OPT | L1 },
	/*
	 * aclop kernels' launch: Level1 has their Node@launch (torch_npu's msprof
	 * records it inside the runtime), so the span is traced from Level1 as
	 * LAUNCH records only; a Runtime@ call (plain CALL) at Level2
	 */
	{ "libruntime.so", "rtKernelLaunch", CANN, ASC_PK_NODE_LAUNCH, ASC_FAM_CANN, OPT | L1 },
	/* CANN 8.x/9.x: aclop kernels launch with flags / by handle, AI CPU ops by name */
	{ "libruntime.so", "rtKernelLaunchWithFlagV2", CANN, ASC_PK_NODE_LAUNCH, ASC_FAM_CANN,
	  OPT | L1 },
	{ "libruntime.so", "rtKernelLaunchWithHandleV2", CANN, ASC_PK_NODE_LAUNCH, ASC_FAM_CANN,
	  OPT | L1 },
	{ "libruntime.so", "rtCpuKernelLaunchWithFlag", CANN, ASC_PK_NODE_LAUNCH, ASC_FAM_CANN,
	  OPT | L1 },
	{ "libruntime.so", "rtAicpuKernelLaunchExWithArgs", CANN, ASC_PK_NODE_LAUNCH, ASC_FAM_CANN,
	  OPT | L1 },
	{ "libruntime.so", "rt*", CANN, ASC_PK_CALL, ASC_FAM_CANN, L2 },

	/* ---- driver ---- */
	/* entry only below Level2: the SQE record is what the device join needs */
	{ "libascend_hal.so", "halSqTaskSend", DRV, ASC_PK_SQE_SEND, ASC_FAM_DRIVER, AG },
	{ "libascend_hal.so", "halMemAlloc", DRV, ASC_PK_CALL, ASC_FAM_DRIVER | ASC_FAM_MEMORY, L2 },
	{ "libascend_hal.so", "halMemFree", DRV, ASC_PK_CALL, ASC_FAM_DRIVER | ASC_FAM_MEMORY, L2 },
	{ "libascend_hal.so", "hal*", DRV, ASC_PK_CALL, ASC_FAM_DRIVER, L2 },

	/*
	 * ---- HCCL (bpf/ascbpf_events.h "HCCL"): ops and communicators at every
	 * level (HCCL_OP / HCCL_COMM; ENTER/EXIT too from Level1), the other Hccl*
	 * calls from Level1; HCCL's task reports and hash ids (libprofapi.so)
	 * at every level ----
	 */
	{ "libhccl.so", "HcclAllReduce", HCCL, ASC_PK_HCCL_OP, ASC_FAM_CANN, OPT | AG },
	{ "libhccl.so", "HcclBroadcast", HCCL, ASC_PK_HCCL_OP, ASC_FAM_CANN, OPT | AG },
	{ "libhccl.so", "HcclAllGather", HCCL, ASC_PK_HCCL_OP, ASC_FAM_CANN, OPT | AG },
	{ "libhccl.so", "HcclReduceScatter", HCCL, ASC_PK_HCCL_OP, ASC_FAM_CANN, OPT | AG },
	{ "libhccl.so", "HcclReduce", HCCL, ASC_PK_HCCL_OP, ASC_FAM_CANN, OPT | AG },
	{ "libhccl.so", "HcclAlltoAll", HCCL, ASC_PK_HCCL_OP, ASC_FAM_CANN, OPT | AG },
	{ "libhccl.so", "HcclAlltoAllV", HCCL, ASC_PK_HCCL_OP, ASC_FAM_CANN, OPT | AG },
	{ "libhccl.so", "HcclSend", HCCL, ASC_PK_HCCL_OP, ASC_FAM_CANN, OPT | AG },
	{ "libhccl.so", "HcclRecv", HCCL, ASC_PK_HCCL_OP, ASC_FAM_CANN, OPT | AG },
	{ "libhccl.so", "HcclBarrier", HCCL, ASC_PK_HCCL_OP, ASC_FAM_CANN, OPT | AG },
	{ "libhccl.so", "HcclCommInitRootInfo", HCCL, ASC_PK_HCCL_COMM_INIT, ASC_FAM_CANN, OPT },
	{ "libhccl.so", "HcclCommInitClusterInfo", HCCL, ASC_PK_HCCL_COMM_INIT, ASC_FAM_CANN,
	  OPT },
	{ "libhccl.so", "Hccl*", HCCL, ASC_PK_CALL, ASC_FAM_CANN, OPT | L1 },
	{ "libprofapi.so", "MsprofReportAdditionalInfo", HCCL, ASC_PK_HCCL_REPORT, ASC_FAM_CANN,
	  OPT | ASC_SPEC_NO_RETPROBE },
	{ "libprofapi.so", "MsprofGetHashId", HCCL, ASC_PK_HCCL_HASH, ASC_FAM_CANN, OPT },

	/*
	 * ---- the unwind guard (bpf/unwind.bpf.h): wherever return probes are,
	 * every family and level (not the agent's tier: docs/known-issues.md);
	 * entry only, no records ----
	 */
#define RAISE(sym) { "libgcc_s.so", #sym, UNW, ASC_PK_UNWIND_RAISE, ASC_FAM_ALL, GUARD }
	RAISE(_Unwind_RaiseException),
	RAISE(_Unwind_Resume_or_Rethrow),
	RAISE(_Unwind_ForcedUnwind),
#undef RAISE
	{ "libstdc++.so", "__cxa_begin_catch", UNW, ASC_PK_UNWIND_CATCH, ASC_FAM_ALL, GUARD },
	{ NULL, NULL, 0, 0, 0, 0 },
};

/*
 * The runtime calls that queue one task each, innermost (the aclrt* wrappers
 * and aclop/aclnn paths all end in one of them), with their stream argument.
 */
static const struct {
	const char *sym;
	int stream_arg;
} launch_calls[] = {
#define LC(sym) { #sym, RT_STREAM_ARG_##sym }
	LC(rtsLaunchKernelWithHostArgs),
	LC(rtKernelLaunch),
	LC(rtEventRecord),
	LC(rtStreamWaitEvent),
	LC(rtMemcpyAsync),
	LC(rtMemsetAsync),
	LC(rtKernelLaunchWithFlagV2),
	LC(rtKernelLaunchWithHandleV2),
	LC(rtLaunchKernelByFuncHandleV3),
	LC(rtsLaunchKernelWithConfig),
	LC(rtsLaunchKernelWithDevArgs),
	LC(rtCpuKernelLaunchWithFlag),
	LC(rtAicpuKernelLaunchExWithArgs),
	LC(rtKernelLaunchEx),
	LC(rtMemcpyAsyncEx),
#undef LC
};

const struct asc_probe_spec asc_probe_launch_marks[] = {
	{ "libruntime.so", "rtsLaunchKernelWithHostArgs", CANN, ASC_PK_LAUNCH_MARK, ASC_FAM_CANN,
	  OPT | ASC_SPEC_NO_RETPROBE },
	{ "libruntime.so", "rtKernelLaunch", CANN, ASC_PK_LAUNCH_MARK, ASC_FAM_CANN,
	  OPT | ASC_SPEC_NO_RETPROBE },
	{ "libruntime.so", "rtEventRecord", CANN, ASC_PK_LAUNCH_MARK, ASC_FAM_CANN,
	  OPT | ASC_SPEC_NO_RETPROBE },
	{ "libruntime.so", "rtStreamWaitEvent", CANN, ASC_PK_LAUNCH_MARK, ASC_FAM_CANN,
	  OPT | ASC_SPEC_NO_RETPROBE },
	{ "libruntime.so", "rtMemcpyAsync", CANN, ASC_PK_LAUNCH_MARK, ASC_FAM_CANN,
	  OPT | ASC_SPEC_NO_RETPROBE },
	{ "libruntime.so", "rtMemsetAsync", CANN, ASC_PK_LAUNCH_MARK, ASC_FAM_CANN,
	  OPT | ASC_SPEC_NO_RETPROBE },
#define MARK(sym) { "libruntime.so", #sym, CANN, ASC_PK_LAUNCH_MARK, ASC_FAM_CANN, \
		    OPT | ASC_SPEC_NO_RETPROBE }
	MARK(rtKernelLaunchWithFlagV2),
	MARK(rtKernelLaunchWithHandleV2),
	MARK(rtLaunchKernelByFuncHandleV3),
	MARK(rtsLaunchKernelWithConfig),
	MARK(rtsLaunchKernelWithDevArgs),
	MARK(rtCpuKernelLaunchWithFlag),
	MARK(rtAicpuKernelLaunchExWithArgs),
	MARK(rtKernelLaunchEx),
	MARK(rtMemcpyAsyncEx),
#undef MARK
	{ NULL, NULL, 0, 0, 0, 0 },
};
// clang-format on

int asc_probe_launch_name_arg(const char *sym)
{
	if (sym && !strcmp(sym, "rtCpuKernelLaunchWithFlag"))
		return RT_NAME_ARG_rtCpuKernelLaunchWithFlag;
	if (sym && !strcmp(sym, "rtAicpuKernelLaunchExWithArgs"))
		return RT_NAME_ARG_rtAicpuKernelLaunchExWithArgs;
	return -1;
}

int asc_probe_launch_stream_arg(const char *sym)
{
	size_t i;

	for (i = 0; sym && i < sizeof(launch_calls) / sizeof(launch_calls[0]); i++)
		if (!strcmp(sym, launch_calls[i].sym))
			return launch_calls[i].stream_arg;
	return -1;
}

static const char *const family_names[] = { "framework", "cann", "driver", "memory", "step" };

const char *asc_probe_family_name(uint32_t family)
{
	size_t i;

	for (i = 0; i < sizeof(family_names) / sizeof(family_names[0]); i++)
		if (family == 1U << i)
			return family_names[i];
	return "?";
}

int asc_probe_families_parse(const char *list, uint32_t *families)
{
	char *copy = strdup(list), *tok, *save = NULL;
	uint32_t fam = 0;
	size_t i;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) {
			fam |= ASC_FAM_ALL;
			continue;
		}
		for (i = 0; i < sizeof(family_names) / sizeof(family_names[0]); i++)
			if (!strcmp(tok, family_names[i]))
				break;
		if (i == sizeof(family_names) / sizeof(family_names[0])) {
			asc_err("unknown probe family '%s' (known: framework, cann, driver, memory, "
				"step, all)\n",
				tok);
			free(copy);
			return -EINVAL;
		}
		fam |= 1U << i;
	}
	free(copy);
	if (!fam) {
		asc_err("empty probe family list\n");
		return -EINVAL;
	}
	*families = fam;
	return 0;
}

/* ---- plan building ---- */

struct builder {
	struct asc_probe_plan *plan;
	size_t cap_sites, cap_missing, cap_libs;
	const struct asc_probe_spec *spec; /* the entry being resolved */
	const char *host_path;		   /* its library, as we open it */
	struct asc_elf *elf;
	struct asc_elf *acl_rt; /* libacl_rt.so when mapped (compat_forwarder) */
};

static int add_missing(struct builder *b, const struct asc_probe_spec *spec, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int add_missing(struct builder *b, const struct asc_probe_spec *spec, const char *fmt, ...)
{
	struct asc_probe_plan *plan = b->plan;
	struct asc_probe_missing *m;
	va_list ap;

	if (plan->nr_missing == b->cap_missing) {
		size_t ncap = b->cap_missing ? 2 * b->cap_missing : 16;
		void *tmp = realloc(plan->missing, ncap * sizeof(*plan->missing));

		if (!tmp)
			return -ENOMEM;
		plan->missing = tmp;
		b->cap_missing = ncap;
	}
	m = &plan->missing[plan->nr_missing++];
	m->spec = spec;
	va_start(ap, fmt);
	vsnprintf(m->reason, sizeof(m->reason), fmt, ap);
	va_end(ap);
	return 0;
}

static int add_lib(struct builder *b, const char *path)
{
	struct asc_probe_plan *plan = b->plan;
	size_t i;

	for (i = 0; i < plan->nr_libs; i++)
		if (!strcmp(plan->libs_seen[i], path))
			return 0;
	if (plan->nr_libs == b->cap_libs) {
		size_t ncap = b->cap_libs ? 2 * b->cap_libs : 8;
		void *tmp = realloc(plan->libs_seen, ncap * sizeof(*plan->libs_seen));

		if (!tmp)
			return -ENOMEM;
		plan->libs_seen = tmp;
		tmp = realloc(plan->libs_debug, ncap * sizeof(*plan->libs_debug));
		if (!tmp)
			return -ENOMEM;
		plan->libs_debug = tmp;
		tmp = realloc(plan->libs_symtab, ncap * sizeof(*plan->libs_symtab));
		if (!tmp)
			return -ENOMEM;
		plan->libs_symtab = tmp;
		b->cap_libs = ncap;
	}
	plan->libs_seen[plan->nr_libs] = strdup(path);
	if (!plan->libs_seen[plan->nr_libs])
		return -ENOMEM;
	plan->libs_debug[plan->nr_libs] = NULL;
	plan->libs_symtab[plan->nr_libs] = false;
	plan->nr_libs++;
	return 0;
}

/* Records the symbol mode of the library at path (added by add_lib), opened as elf. */
static int note_lib_mode(struct builder *b, const char *path, const struct asc_elf *elf)
{
	struct asc_probe_plan *plan = b->plan;
	const char *dbg = asc_elf_debug_file(elf);
	size_t i;

	for (i = 0; i < plan->nr_libs; i++) {
		if (strcmp(plan->libs_seen[i], path))
			continue;
		plan->libs_symtab[i] = asc_elf_has_symtab(elf);
		if (dbg && !plan->libs_debug[i]) {
			plan->libs_debug[i] = strdup(dbg);
			if (!plan->libs_debug[i])
				return -ENOMEM;
		}
		return 0;
	}
	return 0;
}

/*
 * CANN 8.x/9.x implements aclInit / aclrt* in libacl_rt.so and keeps
 * libascendcl.so as a compatibility layer whose functions of the same names
 * forward there (npu_model/README.md): every call through libascendcl.so
 * also runs libacl_rt.so's function.  So where both are mapped, a
 * libascendcl.so function that libacl_rt.so exports too is not attached:
 * one API event per user call, whichever library the caller linked.
 */
static bool compat_forwarder(const struct builder *b, const struct asc_elf_symbol *sym)
{
	const struct asc_elf_symbol *impl;

	if (!b->acl_rt || strcmp(b->spec->lib, "libascendcl.so"))
		return false;
	impl = asc_elf_find(b->acl_rt, sym->name);
	return impl && impl->bind != STB_LOCAL && impl->type == STT_FUNC && impl->vaddr;
}

/* Adds one site for sym of the current spec/library; 0 (also when skipped) or -errno. */
static int add_site(struct builder *b, const struct asc_elf_symbol *sym)
{
	struct asc_probe_plan *plan = b->plan;
	struct asc_probe_site *s;
	struct asc_prologue pro;
	uint8_t code[ASC_PROLOGUE_SCAN];
	uint64_t off;
	size_t i;
	int n;

	if (compat_forwarder(b, sym)) {
		if (!asc_glob_is_pattern(b->spec->sym))
			return add_missing(b, b->spec, ASC_PROBE_COMPAT_REASON);
		return 0;
	}
	if (sym->type == STT_GNU_IFUNC) {
		/* The symbol is the resolver, which runs once at load: nothing to trace there. */
		if (!asc_glob_is_pattern(b->spec->sym))
			return add_missing(b, b->spec,
					   "%s is an ifunc (only its resolver is named)",
					   sym->name);
		return 0;
	}
	/* A breakpoint anywhere but at an instruction of mapped code would corrupt the target. */
	if (asc_elf_vaddr_to_off(b->elf, sym->vaddr, &off) ||
	    !asc_elf_vaddr_is_code(b->elf, sym->vaddr)) {
		if (!asc_glob_is_pattern(b->spec->sym))
			return add_missing(b, b->spec,
					   "address 0x%" PRIx64 " is not in an "
					   "executable segment",
					   sym->vaddr);
		return 0;
	}
	for (i = 0; i < plan->nr_sites; i++)
		if (plan->sites[i].func_offset == off && !strcmp(plan->sites[i].path, b->host_path))
			return 0; /* an alias or an earlier entry has it */

	n = asc_elf_read(b->elf, sym->vaddr, code,
			 sym->size && sym->size < sizeof(code) ? (size_t)sym->size : sizeof(code));
	asc_prologue_analyze(asc_elf_machine(b->elf), code, n > 0 ? (size_t)n : 0, sym->size, &pro);

	if (plan->nr_sites == b->cap_sites) {
		size_t ncap = b->cap_sites ? 2 * b->cap_sites : 64;
		void *tmp = realloc(plan->sites, ncap * sizeof(*plan->sites));

		if (!tmp)
			return -ENOMEM;
		plan->sites = tmp;
		b->cap_sites = ncap;
	}
	s = &plan->sites[plan->nr_sites];
	memset(s, 0, sizeof(*s));
	s->spec = b->spec;
	s->path = strdup(b->host_path);
	s->sym = strdup(sym->name);
	if (!s->path || !s->sym) {
		free(s->path);
		free(s->sym);
		return -ENOMEM;
	}
	s->id = plan->next_id++;
	s->func_offset = off;
	s->attach_offset = off + pro.skip;
	s->flags = pro.flags;
	s->from_debug = (sym->source & ASC_SYM_DEBUG) && !(sym->source & ASC_SYM_DYNSYM);
	plan->nr_sites++;
	return 0;
}

/*
 * A glob names an API: it matches exported (global or weak) functions only,
 * never the library's internal ones that .symtab also lists (npu_model's
 * libruntime.so has static rt_* helpers next to the rt* API).  An exact name
 * may be local: that is how a user targets an internal function.
 */
static int glob_cb(const struct asc_elf_symbol *sym, void *ctx)
{
	struct builder *b = ctx;

	if (sym->bind == STB_LOCAL)
		return 0;
	return add_site(b, sym);
}

static int exported_cb(const struct asc_elf_symbol *sym, void *ctx)
{
	bool *found = ctx;

	if (sym->bind == STB_LOCAL)
		return 0;
	*found = true;
	return 1; /* stop at the first exported match */
}

/* Whether an exported function matches spec's glob (its sites may come from earlier entries). */
static bool glob_matched_any(struct builder *b, const struct asc_probe_spec *spec)
{
	bool found = false;

	asc_elf_for_each_match(b->elf, spec->sym, exported_cb, &found);
	return found;
}

/* Resolves spec in the library at host_path (opened as elf). */
static int resolve_spec(struct builder *b, const struct asc_probe_spec *spec)
{
	const struct asc_elf_symbol *sym;
	int n;

	b->spec = spec;
	if (asc_glob_is_pattern(spec->sym)) {
		size_t before = b->plan->nr_sites;

		n = asc_elf_for_each_match(b->elf, spec->sym, glob_cb, b);
		if (n < 0)
			return n;
		if (b->plan->nr_sites == before && !glob_matched_any(b, spec))
			return add_missing(b, spec, "no exported symbol matches in %s",
					   b->host_path);
		return 0;
	}
	sym = asc_elf_find(b->elf, spec->sym);
	if (!sym && !asc_elf_has_symtab(b->elf) && !asc_elf_debug_file(b->elf))
		return add_missing(b, spec,
				   "not exported, and no debug symbols found (--debug-dir)");
	if (!sym)
		return add_missing(b, spec, "symbol not found in %s", b->host_path);
	return add_site(b, sym);
}

/*
 * A library name of the table: a soname basename ("libopapi.so", also as
 * libopapi.so.1) or a glob over basenames ("libopapi_*.so": libopapi_math.so,
 * libopapi_nn.so.8, ...), the part after ".so" being a version as before.
 */
static bool lib_glob_matches(const char *path, const char *lib)
{
	const char *base = strrchr(path, '/'), *so;
	char stem[256];

	base = base ? base + 1 : path;
	so = strstr(base, ".so");
	if (!so || (so[3] && so[3] != '.') || (size_t)(so - base) + 4 > sizeof(stem))
		return false;
	snprintf(stem, sizeof(stem), "%.*s.so", (int)(so - base), base);
	return asc_glob_match(lib, stem);
}

static bool spec_lib_mapped(const struct asc_map_entry *e, const char *lib)
{
	if (!e->inode || !e->path || e->path[0] != '/')
		return false;
	return asc_glob_is_pattern(lib) ? lib_glob_matches(e->path, lib) :
					  asc_lib_name_matches(e->path, lib);
}

void asc_probe_plan_free(struct asc_probe_plan *plan)
{
	size_t i;

	if (!plan)
		return;
	for (i = 0; i < plan->nr_sites; i++) {
		free(plan->sites[i].path);
		free(plan->sites[i].sym);
	}
	free(plan->sites);
	free(plan->missing);
	for (i = 0; i < plan->nr_libs; i++) {
		free(plan->libs_seen[i]);
		free(plan->libs_debug[i]);
	}
	free(plan->libs_seen);
	free(plan->libs_debug);
	free(plan->libs_symtab);
	memset(plan, 0, sizeof(*plan));
}

unsigned int asc_probe_spec_level(const struct asc_probe_spec *spec)
{
	return spec->flags & ASC_SPEC_LEVEL2 ? 2 : spec->flags & ASC_SPEC_LEVEL1 ? 1 : 0;
}

int asc_probe_spec_wanted(const struct asc_probe_spec *spec, uint32_t families, uint32_t level)
{
	if (!(spec->family & families))
		return 0;
	if (level == ASC_LEVEL_AGENT)
		return !!(spec->flags & ASC_SPEC_AGENT);
	return level >= asc_probe_spec_level(spec) || (spec->family & families & ASC_FAM_MEMORY);
}

int asc_probe_plan_build_table(pid_t pid, const struct asc_probe_spec *table, uint32_t families,
			       uint32_t first_id, struct asc_probe_plan *plan)
{
	return asc_probe_plan_build_level(pid, table, families, ASC_LEVEL_MAX, first_id, plan);
}

/*
 * A library's C++ ABI, from which name of a std::string function it has: all
 * sites of a library where an ASC_SPEC_CXX_OLD_ABI entry resolved read their
 * std::string arguments (and those their QueueParas point to) in the old
 * layout.  Quadratic only where such a site exists.
 */
static void mark_old_abi(struct asc_probe_plan *plan)
{
	size_t i, j;

	for (i = 0; i < plan->nr_sites; i++) {
		const struct asc_probe_site *s = &plan->sites[i];

		if (!s->spec || !(s->spec->flags & ASC_SPEC_CXX_OLD_ABI))
			continue;
		for (j = 0; j < plan->nr_sites; j++)
			if (!strcmp(plan->sites[j].path, s->path))
				plan->sites[j].flags |= ASC_PROBE_CXX_OLD_ABI;
	}
}

/* libacl_rt.so's ELF in b->acl_rt when pid maps it (else NULL: nothing is a forwarder). */
static void open_acl_rt(pid_t pid, const struct asc_maps *maps, struct builder *b)
{
	char host[4096];
	size_t i;

	for (i = 0; i < maps->nr; i++) {
		const struct asc_map_entry *e = &maps->entries[i];

		if (!spec_lib_mapped(e, "libacl_rt.so") ||
		    asc_maps_entry_host_path(pid, e, host, sizeof(host)))
			continue;
		if (!asc_elf_open(host, &b->acl_rt))
			return;
	}
	b->acl_rt = NULL;
}

int asc_probe_plan_build_level(pid_t pid, const struct asc_probe_spec *table, uint32_t families,
			       uint32_t level, uint32_t first_id, struct asc_probe_plan *plan)
{
	struct builder b = { .plan = plan };
	const struct asc_probe_spec *spec;
	struct asc_maps maps;
	size_t i, j, nr_mapped_specs = 0;
	int err;

	memset(plan, 0, sizeof(*plan));
	plan->pid = pid;
	plan->table = table;
	plan->families = families;
	plan->level = level;
	plan->next_id = first_id ? first_id : 1;
	err = asc_maps_read(pid, &maps);
	if (err)
		return err;
	open_acl_rt(pid, &maps, &b);

	for (spec = table; spec->lib; spec++) {
		bool found = false;

		if (!asc_probe_spec_wanted(spec, families, level))
			continue;
		/* Each distinct file mapped under the library's name (normally one). */
		for (i = 0; i < maps.nr; i++) {
			const struct asc_map_entry *e = &maps.entries[i];
			char host[4096];
			bool dup = false;

			if (!spec_lib_mapped(e, spec->lib))
				continue;
			for (j = 0; j < i && !dup; j++)
				dup = spec_lib_mapped(&maps.entries[j], spec->lib) &&
				      maps.entries[j].inode == e->inode &&
				      !strcmp(maps.entries[j].path, e->path);
			if (dup)
				continue;
			found = true;
			err = asc_maps_entry_host_path(pid, e, host, sizeof(host));
			if (!err)
				err = add_lib(&b, host);
			if (err == -ENOMEM || err == -ESRCH)
				goto out; /* out of memory, or the process is gone */
			if (!err)
				err = asc_elf_open_debug(host, &b.elf);
			if (!err && note_lib_mode(&b, host, b.elf) == -ENOMEM) {
				asc_elf_close(b.elf);
				err = -ENOMEM;
				goto out;
			}
			if (err) {
				err = add_missing(&b, spec, "cannot read %s: %s", e->path,
						  strerror(-err));
				if (err)
					goto out;
				continue;
			}
			b.host_path = host;
			err = resolve_spec(&b, spec);
			asc_elf_close(b.elf);
			b.elf = NULL;
			if (err)
				goto out;
		}
		if (found) {
			/* the unwind guard alone does not make it an Ascend process */
			nr_mapped_specs += spec->layer != ASC_LAYER_UNWIND;
			continue;
		}
		err = add_missing(&b, spec, "library not mapped");
		if (err)
			goto out;
	}
	/* -ENOENT keeps the guard's sites: a --step LIB:SYMBOL site may still need them */
	err = nr_mapped_specs ? 0 : -ENOENT;
	mark_old_abi(plan);
out:
	asc_maps_free(&maps);
	asc_elf_close(b.acl_rt);
	if (err && err != -ENOENT) {
		asc_probe_plan_free(plan);
		return err;
	}
	return err;
}

int asc_probe_plan_build(pid_t pid, uint32_t families, uint32_t first_id,
			 struct asc_probe_plan *plan)
{
	return asc_probe_plan_build_table(pid, asc_probe_table, families, first_id, plan);
}

int asc_probe_plan_update(struct asc_probe_plan *plan, size_t *first_new)
{
	struct asc_probe_plan fresh;
	size_t i, j, added = 0, old_nr = plan->nr_sites;
	void *tmp;
	int err;

	*first_new = old_nr;
	err = asc_probe_plan_build_level(plan->pid, plan->table, plan->families, plan->level,
					 plan->next_id, &fresh);
	if (err && err != -ENOENT)
		return err;
	if (fresh.nr_sites) {
		tmp = realloc(plan->sites, (old_nr + fresh.nr_sites) * sizeof(*plan->sites));
		if (!tmp) {
			asc_probe_plan_free(&fresh);
			return -ENOMEM;
		}
		plan->sites = tmp;
	}
	for (i = 0; i < fresh.nr_sites; i++) {
		struct asc_probe_site *s = &fresh.sites[i];
		bool known = false;

		for (j = 0; j < old_nr && !known; j++)
			known = plan->sites[j].attach_offset == s->attach_offset &&
				!strcmp(plan->sites[j].path, s->path);
		if (known)
			continue;
		plan->sites[plan->nr_sites] = *s;
		plan->sites[plan->nr_sites].id = plan->next_id++;
		s->path = s->sym = NULL; /* moved */
		plan->nr_sites++;
		added++;
	}
	/* The fresh scan's missing list and libraries replace the old ones. */
	free(plan->missing);
	plan->missing = fresh.missing;
	plan->nr_missing = fresh.nr_missing;
	fresh.missing = NULL;
	fresh.nr_missing = 0;
	for (i = 0; i < plan->nr_libs; i++) {
		free(plan->libs_seen[i]);
		free(plan->libs_debug[i]);
	}
	free(plan->libs_seen);
	free(plan->libs_debug);
	free(plan->libs_symtab);
	plan->libs_seen = fresh.libs_seen;
	plan->libs_debug = fresh.libs_debug;
	plan->libs_symtab = fresh.libs_symtab;
	plan->nr_libs = fresh.nr_libs;
	fresh.libs_seen = NULL;
	fresh.libs_debug = NULL;
	fresh.libs_symtab = NULL;
	fresh.nr_libs = 0;
	asc_probe_plan_free(&fresh);
	return (int)added;
}

/*
 * The load address of pid's program interpreter (AT_BASE in /proc/PID/auxv):
 * the dynamic loader, whatever its file is called; 0 if none (static) or
 * unreadable.
 */
static uint64_t loader_base(pid_t pid)
{
	uint64_t av[2], base = 0;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (read(fd, av, sizeof(av)) == (ssize_t)sizeof(av) && av[0] != AT_NULL)
		if (av[0] == AT_BASE) {
			base = av[1];
			break;
		}
	close(fd);
	return base;
}

/*
 * A loader's file name, when AT_BASE is not known: ld-linux*.so*, ld-musl*,
 * ld64.so.N, ld-2.NN.so, ld.so.N; never the loader's own data files
 * (/etc/ld.so.cache is mapped while ld.so searches the libraries, so a
 * process caught at its exec can show it, before the loader in the maps).
 */
static bool is_loader_file(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (!strncmp(base, "ld-linux", 8) || !strncmp(base, "ld-musl", 7) ||
	    !strncmp(base, "ld64.so.", 8))
		return true;
	if (!strncmp(base, "ld-2.", 5))
		return strstr(base, ".so") != NULL;
	return !strncmp(base, "ld.so.", 6) && isdigit((unsigned char)base[6]);
}

/* The loader's mapping: the one holding AT_BASE, else the first loader-named file. */
static const struct asc_map_entry *loader_mapping(pid_t pid, const struct asc_maps *maps)
{
	uint64_t base = loader_base(pid);
	size_t i;

	for (i = 0; base && i < maps->nr; i++) {
		const struct asc_map_entry *e = &maps->entries[i];

		if (e->inode && e->path && e->path[0] == '/' && e->start <= base && base < e->end)
			return e;
	}
	for (i = 0; i < maps->nr; i++) {
		const struct asc_map_entry *e = &maps->entries[i];

		if (e->inode && e->path && e->path[0] == '/' && is_loader_file(e->path))
			return e;
	}
	return NULL;
}

int asc_probe_find_loader(pid_t pid, char *path, size_t len, uint64_t *offset, uint32_t *flags)
{
	const struct asc_elf_symbol *sym;
	struct asc_prologue pro;
	struct asc_elf *elf = NULL;
	struct asc_maps maps;
	const struct asc_map_entry *e;
	uint8_t code[16];
	uint64_t off;
	int err, n;

	err = asc_maps_read(pid, &maps);
	if (err)
		return err;
	e = loader_mapping(pid, &maps);
	err = e ? asc_maps_entry_host_path(pid, e, path, len) : -ENOENT;
	asc_maps_free(&maps);
	if (err)
		return err;
	err = asc_elf_open(path, &elf);
	if (err)
		return err;
	sym = asc_elf_find(elf, "_dl_debug_state");
	if (!sym || asc_elf_vaddr_to_off(elf, sym->vaddr, &off) ||
	    !asc_elf_vaddr_is_code(elf, sym->vaddr)) {
		asc_elf_close(elf);
		return -ENOENT;
	}
	n = asc_elf_read(elf, sym->vaddr, code, sizeof(code));
	asc_prologue_analyze(asc_elf_machine(elf), code, n > 0 ? (size_t)n : 0, sym->size, &pro);
	asc_elf_close(elf);
	*offset = off + pro.skip;
	*flags = pro.flags;
	return 0;
}

/* ---- ascbpf probes ---- */

static void probes_usage(FILE *f)
{
	fprintf(f,
		"Usage: ascbpf probes -p PID [--json] [--families LIST] [--level N]\n"
		"                     [--debug-dir DIR]\n"
		"\n"
		"Lists, per layer, what `ascbpf trace -p PID` would attach where in the process:\n"
		"library, symbol, file offset, and where the uprobe goes (\"after endbr64, emulated\",\n"
		"\"single-stepped\", ...), then what is missing and why, each library's\n"
		"symbol mode (.dynsym only, or debug symbols from a separate debug file)\n"
		"and, per view (framework ops, task queue, memory, steps, kernel names,\n"
		"device timing), its mode and sites.\n"
		"Attaches nothing.\n"
		"\n"
		"  -p, --pid PID        process to inspect (required)\n"
		"  -j, --json           one JSON object on stdout, for scripts\n"
		"  -f, --families LIST  framework,cann,driver,memory,step or all (default all)\n"
		"  -l, --level N        only what `ascbpf trace --level N` attaches: 0 aten ops, task\n"
		"                       queue, SQE, step; 1 + aclnn/aclop/aclrt, kernel names; 2 (default)\n"
		"                       + rt*/hal*\n"
		"  -D, --debug-dir DIR  also look for separate debug files in DIR\n"
		"                       (DIR/.build-id/xx/rest.debug, DIR/<library dir>/NAME),\n"
		"                       before /usr/lib/debug\n"
		"  -h, --help           this text\n"
		"\n"
		"Exit status: 0 listed, 2 no such process, no Ascend/PyTorch library mapped, or bad usage.\n"
		"Examples:\n"
		"  ascbpf probes -p 4242\n"
		"  ascbpf probes -p 4242 --json | python3 -m json.tool\n");
}

static int parse_pid(const char *s, pid_t *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > 0x3fffffff) {
		asc_err("invalid PID '%s'\n", s);
		return -EINVAL;
	}
	*pid = (pid_t)v;
	return 0;
}

static void read_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	buf[0] = '\0';
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* The distinct library names the table looks for in families, ", "-separated. */
static void libs_looked_for(const struct asc_probe_spec *table, uint32_t families, char *buf,
			    size_t len)
{
	const struct asc_probe_spec *s, *t;
	size_t used = 0;

	buf[0] = '\0';
	for (s = table; s->lib; s++) {
		bool dup = false;

		if (!(s->family & families))
			continue;
		for (t = table; t < s && !dup; t++)
			dup = (t->family & families) && !strcmp(t->lib, s->lib);
		if (dup)
			continue;
		used += snprintf(buf + used, used < len ? len - used : 0, "%s%s", used ? ", " : "",
				 s->lib);
	}
}

struct loader_info {
	int err;
	char path[4096];
	uint64_t offset;
	uint32_t flags;
};

/*
 * The views of the output and the probe kinds that serve them (issue 14: `probes` says, per
 * view, which mode and which sites serve it).  A view's mode is "debug symbols" when one of its
 * sites is named only by a separate debug file, "exported symbols" when all are in .dynsym (or
 * a .symtab the library itself has), else "unavailable", with what is missing in `without`.
 */
struct view_def {
	const char *name;
	uint16_t kinds[4]; /* 0-terminated */
	uint32_t family;   /* or every site of this family (0: none) */
	const char *without;
};

static const struct view_def views[] = {
	{ "framework ops",
	  { ASC_PK_ATEN_OP, ASC_PK_OPNAME_STDSTR, ASC_PK_AUTOGRAD_EVAL, 0 },
	  0,
	  "no at::_ops / OpCommand entry point mapped" },
	{ "task queue",
	  { ASC_PK_ENQUEUE, ASC_PK_DEQUEUE, 0 },
	  0,
	  "Repository::Enqueue and AsncExecFunc are not exported: no Enqueue/Dequeue spans "
	  "(install torch_npu's debug file, or --debug-dir DIR)" },
	{ "memory",
	  { ASC_PK_MEM_REPORT, 0 },
	  ASC_FAM_MEMORY,
	  "no allocator report and no memory call mapped" },
	{ "steps",
	  { ASC_PK_STEP, 0 },
	  0,
	  "no optimizer step mapped: the whole run is step 0 (--step LIB:SYMBOL, --step-py FUNC)" },
	{ "kernel names",
	  { ASC_PK_FUNCNAME_GET, ASC_PK_FUNCNAME_REG, 0 },
	  0,
	  "no kernel-name source mapped (aclrtBinaryGetFunction, rtFunctionRegister; Level1)" },
	{ "device timing",
	  { ASC_PK_SQE_SEND, 0 },
	  0,
	  "halSqTaskSend not mapped: device tasks cannot be joined to their launches" },
};

static bool view_has(const struct view_def *v, const struct asc_probe_site *s)
{
	size_t k;

	for (k = 0; k < sizeof(v->kinds) / sizeof(v->kinds[0]) && v->kinds[k]; k++)
		if (s->spec->kind == v->kinds[k])
			return true;
	return v->family && (s->spec->family & v->family);
}

struct view_state {
	size_t nr_sites, nr_debug;
	bool pta; /* memory: the allocator's own report is probed */
};

static void view_scan(const struct asc_probe_plan *plan, const struct view_def *v,
		      struct view_state *st)
{
	size_t i;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < plan->nr_sites; i++) {
		const struct asc_probe_site *s = &plan->sites[i];

		if (!view_has(v, s))
			continue;
		st->nr_sites++;
		st->nr_debug += s->from_debug;
		st->pta |= s->spec->kind == ASC_PK_MEM_REPORT;
	}
}

static const char *view_mode(const struct view_state *st)
{
	return st->nr_debug ? "debug symbols" : st->nr_sites ? "exported symbols" : "unavailable";
}

/* What the view lacks or rebuilds although it has sites, or NULL. */
static const char *view_note(const struct view_def *v, const struct view_state *st)
{
	if (!st->nr_sites)
		return v->without;
	if (v->family == ASC_FAM_MEMORY && !st->pta)
		return "PTA block events unavailable (reportMemoryDataToNpuProfiler is not "
		       "exported; --debug-dir DIR); GE/APP from the memory calls";
	if (v->kinds[0] == ASC_PK_SQE_SEND)
		return "not probed: the tasks' device start/end, read from the profiling channel "
		       "(`ascbpf version`: device_channel) and joined to these submissions";
	return NULL;
}

static const char *lib_mode(const struct asc_probe_plan *plan, size_t i)
{
	return plan->libs_debug[i] ? "debug" : plan->libs_symtab[i] ? "symtab" : "dynsym";
}

static void print_views_text(const struct asc_probe_plan *plan)
{
	size_t i, v;

	printf("\nsymbols\n");
	for (i = 0; i < plan->nr_libs; i++) {
		if (plan->libs_debug[i])
			printf("  %s: debug symbols from %s\n", plan->libs_seen[i],
			       plan->libs_debug[i]);
		else
			printf("  %s: %s\n", plan->libs_seen[i],
			       plan->libs_symtab[i] ?
				       "its own .symtab" :
				       ".dynsym only (stripped, no debug file found)");
	}
	printf("\nviews\n");
	for (v = 0; v < sizeof(views) / sizeof(views[0]); v++) {
		struct view_state st;
		const char *note;
		size_t n = 0;

		view_scan(plan, &views[v], &st);
		printf("  %-14s %-*s", views[v].name, st.nr_sites ? 16 : 0, view_mode(&st));
		for (i = 0; i < plan->nr_sites && n < 4; i++) {
			const struct asc_probe_site *s = &plan->sites[i];

			if (!view_has(&views[v], s))
				continue;
			printf("%s%u%s", n ? "," : " sites ", s->id,
			       s->from_debug ? "(debug)" : "");
			n++;
		}
		if (st.nr_sites > n)
			printf(" +%zu more", st.nr_sites - n);
		note = view_note(&views[v], &st);
		printf("%s%s\n", note ? "\n                 " : "", note ? note : "");
	}
}

static void print_views_json(struct asc_out *o, const struct asc_probe_plan *plan)
{
	size_t i, v;

	asc_out_puts(o, ",\"symbols\":[");
	for (i = 0; i < plan->nr_libs; i++) {
		asc_out_printf(o, "%s{\"library\":", i ? "," : "");
		asc_json_cstr(o, plan->libs_seen[i]);
		asc_out_printf(o, ",\"mode\":\"%s\",\"debug_file\":", lib_mode(plan, i));
		if (plan->libs_debug[i])
			asc_json_cstr(o, plan->libs_debug[i]);
		else
			asc_out_puts(o, "null");
		asc_out_putc(o, '}');
	}
	asc_out_puts(o, "],\"views\":[");
	for (v = 0; v < sizeof(views) / sizeof(views[0]); v++) {
		struct view_state st;
		const char *note;
		bool first = true;

		view_scan(plan, &views[v], &st);
		asc_out_printf(o, "%s\n{\"view\":\"%s\",\"mode\":\"%s\",\"sites\":[", v ? "," : "",
			       views[v].name, view_mode(&st));
		for (i = 0; i < plan->nr_sites; i++) {
			if (!view_has(&views[v], &plan->sites[i]))
				continue;
			asc_out_printf(o, "%s%u", first ? "" : ",", plan->sites[i].id);
			first = false;
		}
		asc_out_puts(o, "],\"note\":");
		note = view_note(&views[v], &st);
		if (note)
			asc_json_cstr(o, note);
		else
			asc_out_puts(o, "null");
		asc_out_putc(o, '}');
	}
	asc_out_putc(o, ']');
}

/* An operator library (op-plugin dlopens them on the first aclnn op): libopapi*.so, ... */
static bool op_library(const char *lib)
{
	return !strncmp(lib, "libopapi", 8) || !strncmp(lib, "libaclnn_", 9) ||
	       !strcmp(lib, "libcust_opapi.so");
}

/*
 * Per site: 1 an aten op the process called so far (its static-init guard is set), 0 one it
 * did not, -1 not known (not an at::_ops::*::call, or no guard found).  NULL on failure.
 */
static int8_t *aten_used(const struct asc_probe_plan *plan, size_t *ops, size_t *used,
			 size_t *undecoded)
{
	struct asc_opguards g;
	int8_t *u = malloc(plan->nr_sites + 1);
	uint8_t *set = NULL;
	size_t i;

	*ops = *used = *undecoded = 0;
	if (!u || asc_opguards_build(plan, 0, &g)) {
		free(u);
		return NULL;
	}
	memset(u, -1, plan->nr_sites + 1);
	set = calloc(g.n + 1, 1);
	if (set && !asc_opguards_read(&g, set))
		for (i = 0; i < g.n; i++) {
			u[g.site[i]] = (int8_t)set[i];
			*used += set[i];
		}
	*ops = g.nr_ops;
	*undecoded = g.nr_undecoded;
	free(set);
	asc_opguards_free(&g);
	return u;
}

static void print_aten_used(const struct asc_probe_plan *plan)
{
	size_t ops, used, undecoded;
	int8_t *u = aten_used(plan, &ops, &used, &undecoded);

	free(u);
	if (!u || !ops)
		return;
	printf("\naten ops: %zu of %zu used so far (static-init guard set; %zu without a guard "
	       "found); without uprobe_multi `ascbpf trace` attaches only the used ones (and "
	       "those without a guard), the others once used\n",
	       used, ops, undecoded);
}

/* The target architecture's choices (arch/arch.h), one line. */
static void print_arch(void)
{
	const struct asc_arch *a = asc_arch_target();

	printf("arch %s: arguments %s-%s, result pointer %s%s, return %s, return address %s, "
	       "thread pointer %s; placement: %s\n",
	       a->name, a->arg_regs[0], a->arg_regs[a->nr_arg_regs - 1], a->sret_reg,
	       a->sret_shifts_args ? " (shifts the arguments)" : "", a->ret_reg, a->ret_addr,
	       a->tp_reg, a->prologue);
}

static void print_text(const struct asc_probe_plan *plan, const char *comm,
		       const struct loader_info *ld)
{
	static const unsigned int layers[] = {
		ASC_LAYER_FRAMEWORK,
		ASC_LAYER_CANN,
		ASC_LAYER_DRIVER,
		ASC_LAYER_MEMORY,
	};
	size_t i, l, nss = 0;

	for (i = 0; i < plan->nr_sites; i++)
		nss += !!(plan->sites[i].flags & ASC_PROBE_SINGLESTEP);
	printf("pid %d (%s): %zu probe sites in %zu libraries, %zu single-stepped, %zu missing\n",
	       (int)plan->pid, comm, plan->nr_sites, plan->nr_libs, nss, plan->nr_missing);
	print_arch();
	if (!ld->err)
		printf("dlopen watch: %s _dl_debug_state 0x%" PRIx64 "  %s\n", ld->path, ld->offset,
		       asc_prologue_choice(ld->flags));
	else
		printf("dlopen watch: none (%s): libraries loaded later are not seen\n",
		       strerror(-ld->err));
	for (l = 0; l < sizeof(layers) / sizeof(layers[0]); l++) {
		const char *cur = NULL;
		size_t count = 0;

		for (i = 0; i < plan->nr_sites; i++)
			count += plan->sites[i].spec->layer == layers[l];
		if (!count)
			continue;
		printf("\n%s (%zu)\n", asc_layer_label(layers[l]), count);
		for (i = 0; i < plan->nr_sites; i++) {
			const struct asc_probe_site *s = &plan->sites[i];

			if (s->spec->layer != layers[l])
				continue;
			if (!cur || strcmp(cur, s->path)) {
				cur = s->path;
				printf("  %s\n", cur);
			}
			printf("    %5u %-13s %s  0x%" PRIx64 " -> 0x%" PRIx64 "  %s%s\n", s->id,
			       asc_probe_kind_name(s->spec->kind), s->sym, s->func_offset,
			       s->attach_offset, asc_prologue_choice(s->flags),
			       s->spec->flags & ASC_SPEC_NO_RETPROBE ? ", entry only" : "");
		}
	}
	if (plan->nr_missing) {
		printf("\nmissing (%zu)\n", plan->nr_missing);
		/* Symbols first, one line each; then unmapped libraries, one line per library. */
		for (i = 0; i < plan->nr_missing; i++) {
			const struct asc_probe_missing *m = &plan->missing[i];

			if (!strcmp(m->reason, "library not mapped"))
				continue;
			printf("  %-9s %s %s: %s%s\n", asc_layer_label(m->spec->layer),
			       m->spec->lib, m->spec->sym, m->reason,
			       m->spec->flags & ASC_SPEC_OPTIONAL ? " (optional)" : "");
		}
		for (i = 0; i < plan->nr_missing; i++) {
			const struct asc_probe_missing *m = &plan->missing[i];
			size_t j, n = 0;
			bool seen = false, all_optional = true;

			if (strcmp(m->reason, "library not mapped"))
				continue;
			for (j = 0; j < i && !seen; j++)
				seen = !strcmp(plan->missing[j].reason, m->reason) &&
				       !strcmp(plan->missing[j].spec->lib, m->spec->lib);
			if (seen)
				continue;
			for (j = i; j < plan->nr_missing; j++) {
				const struct asc_probe_missing *o = &plan->missing[j];

				if (strcmp(o->reason, m->reason) ||
				    strcmp(o->spec->lib, m->spec->lib))
					continue;
				n++;
				all_optional &= !!(o->spec->flags & ASC_SPEC_OPTIONAL);
			}
			printf("  %-9s %s: library not mapped (%zu %s)%s\n",
			       asc_layer_label(m->spec->layer), m->spec->lib, n,
			       n == 1 ? "entry" : "entries",
			       op_library(m->spec->lib) ?
				       "; dlopened on the first aclnn op, traced when it loads" :
			       all_optional ? " (optional)" :
					      "");
		}
	}
	print_views_text(plan);
	print_aten_used(plan);
}

static int print_json(const struct asc_probe_plan *plan, const char *comm,
		      const struct loader_info *ld)
{
	size_t i, ops = 0, used = 0, undecoded = 0;
	int8_t *u = aten_used(plan, &ops, &used, &undecoded);
	struct asc_out o;
	int err = asc_out_fdopen(&o, STDOUT_FILENO);

	if (err) {
		free(u);
		return err;
	}
	asc_out_printf(&o, "{\"pid\":%d,\"comm\":", (int)plan->pid);
	asc_json_cstr(&o, comm);
	asc_out_printf(&o, ",\"arch\":{\"name\":\"%s\",\"sret\":\"%s\",\"sret_shifts_args\":%s}",
		       asc_arch_target()->name, asc_arch_target()->sret_reg,
		       asc_arch_target()->sret_shifts_args ? "true" : "false");
	asc_out_puts(&o, ",\"libraries\":[");
	for (i = 0; i < plan->nr_libs; i++) {
		if (i)
			asc_out_putc(&o, ',');
		asc_json_cstr(&o, plan->libs_seen[i]);
	}
	asc_out_puts(&o, "],\"loader\":");
	if (ld->err) {
		asc_out_puts(&o, "null");
	} else {
		asc_out_puts(&o, "{\"library\":");
		asc_json_cstr(&o, ld->path);
		asc_out_printf(&o,
			       ",\"symbol\":\"_dl_debug_state\",\"attach_offset\":%" PRIu64
			       ",\"prologue\":\"%s\"}",
			       ld->offset, asc_prologue_choice(ld->flags));
	}
	asc_out_puts(&o, ",\"sites\":[");
	for (i = 0; i < plan->nr_sites; i++) {
		const struct asc_probe_site *s = &plan->sites[i];

		asc_out_printf(&o, "%s\n{\"id\":%u,\"layer\":\"%s\",\"kind\":\"%s\",\"library\":",
			       i ? "," : "", s->id, asc_layer_label(s->spec->layer),
			       asc_probe_kind_name(s->spec->kind));
		asc_json_cstr(&o, s->path);
		asc_out_puts(&o, ",\"symbol\":");
		asc_json_cstr(&o, s->sym);
		asc_out_puts(&o, ",\"spec\":");
		asc_json_cstr(&o, s->spec->sym);
		asc_out_printf(&o,
			       ",\"func_offset\":%" PRIu64 ",\"attach_offset\":%" PRIu64
			       ",\"skipped_endbr\":%s,\"singlestep\":%s,\"prologue\":\"%s\""
			       ",\"retprobe\":%s,\"level\":%u,\"used\":%s}",
			       s->func_offset, s->attach_offset,
			       s->flags & ASC_PROBE_SKIPPED_ENDBR ? "true" : "false",
			       s->flags & ASC_PROBE_SINGLESTEP ? "true" : "false",
			       asc_prologue_choice(s->flags),
			       s->spec->flags & ASC_SPEC_NO_RETPROBE ? "false" : "true",
			       asc_probe_spec_level(s->spec),
			       !u || u[i] < 0 ? "null" :
			       u[i]	      ? "true" :
						"false");
	}
	asc_out_puts(&o, "],\"missing\":[");
	for (i = 0; i < plan->nr_missing; i++) {
		const struct asc_probe_missing *m = &plan->missing[i];

		asc_out_printf(&o, "%s\n{\"layer\":\"%s\",\"library\":", i ? "," : "",
			       asc_layer_label(m->spec->layer));
		asc_json_cstr(&o, m->spec->lib);
		asc_out_puts(&o, ",\"symbol\":");
		asc_json_cstr(&o, m->spec->sym);
		asc_out_puts(&o, ",\"reason\":");
		asc_json_cstr(&o, m->reason);
		asc_out_printf(&o, ",\"optional\":%s}",
			       m->spec->flags & ASC_SPEC_OPTIONAL ? "true" : "false");
	}
	asc_out_putc(&o, ']');
	print_views_json(&o, plan);
	asc_out_printf(&o, ",\"aten_ops\":{\"planned\":%zu,\"used\":%zu,\"no_guard\":%zu}", ops,
		       used, undecoded);
	asc_out_puts(&o, "}\n");
	free(u);
	return asc_out_close(&o);
}

int cmd_probes(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "families", required_argument, NULL, 'f' },
		{ "level", required_argument, NULL, 'l' },
		{ "debug-dir", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct loader_info ld;
	struct asc_probe_plan plan;
	uint32_t families = ASC_FAM_ALL, level = ASC_LEVEL_MAX;
	bool json = false, have_pid = false;
	char comm[64], looked[512];
	pid_t pid = 0;
	int c, err;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "p:jf:l:D:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			err = parse_pid(optarg, &pid);
			if (err)
				return err;
			have_pid = true;
			break;
		case 'j':
			json = true;
			break;
		case 'f':
			err = asc_probe_families_parse(optarg, &families);
			if (err)
				return err;
			break;
		case 'l':
			if (strlen(optarg) != 1 || optarg[0] < '0' ||
			    optarg[0] > '0' + ASC_LEVEL_MAX) {
				asc_err("probes: --level must be 0, 1 or 2, not '%s'\n", optarg);
				return -EINVAL;
			}
			level = optarg[0] - '0';
			break;
		case 'D':
			err = asc_elf_add_debug_dir(optarg);
			if (err) {
				asc_err("probes: --debug-dir %s: %s\n", optarg, strerror(-err));
				return -EINVAL;
			}
			break;
		case 'h':
			probes_usage(stdout);
			return 0;
		default:
			asc_err("probes: unknown or incomplete option '%s'\n", argv[optind - 1]);
			probes_usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		asc_err("probes: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (!have_pid) {
		asc_err("probes: -p PID is required\n");
		probes_usage(stderr);
		return -EINVAL;
	}

	err = asc_probe_plan_build_level(pid, asc_probe_table, families, level, 1, &plan);
	if (err == -ESRCH) {
		asc_err("probes: no process with PID %d\n", (int)pid);
		return err;
	}
	if (err == -EACCES || err == -EPERM) {
		asc_err("probes: cannot read /proc/%d/maps: %s (run as root)\n", (int)pid,
			strerror(-err));
		return err;
	}
	read_comm(pid, comm, sizeof(comm));
	if (err == -ENOENT) {
		libs_looked_for(asc_probe_table, families, looked, sizeof(looked));
		asc_err("probes: process %d (%s) has none of the libraries ascbpf traces mapped; "
			"looked for: %s\n",
			(int)pid, comm, looked);
		asc_probe_plan_free(&plan);
		return err;
	}
	if (err) {
		asc_err("probes: resolving probes in process %d failed: %s\n", (int)pid,
			strerror(-err));
		return err;
	}
	ld.err = asc_probe_find_loader(pid, ld.path, sizeof(ld.path), &ld.offset, &ld.flags);
	if (json)
		err = print_json(&plan, comm, &ld);
	else
		print_text(&plan, comm, &ld);
	if (!json && fflush(stdout))
		err = -errno;
	asc_probe_plan_free(&plan);
	return err;
}
