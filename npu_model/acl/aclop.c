// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * aclop.c - libacl_op_compiler.so: the legacy single-operator path,
 * aclopCompileAndExecute(V2), which torch_npu's ExecFunc calls on the
 * consumer thread for ops without an aclnn kernel.  The op type selects the
 * kernel (and its cost, npu_op_cost()); "compilation" happens once per op
 * type and registers the kernel with the runtime (rtFunctionRegister); the
 * launch is rtKernelLaunchWithFlagV2 (CANN 8.x/9.x's single-op executor;
 * older ones used rtKernelLaunch), and an AI CPU op type's is
 * rtCpuKernelLaunchWithFlag of the CPU kernel library, by name.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "acl/acl_priv.h"
#include "npu_acl.h"
#include "npu_api_journal.h"
#include "npu_cost.h"
#include "npu_kernel.h"
#include "npu_rt.h"

#define ACLOP_MAX_IO 16

/* aclop op type -> kernel (most are the same name). */
static const char *kernel_of(const char *op_type)
{
	static const char *const map[][2] = {
		{ "MatMul", "MatMulV2" },
		{ "BatchMatMul", "BatchMatMulV2" },
		{ "Softmax", "SoftmaxV2" },
		{ "LayerNorm", "LayerNormV3" },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(op_type, map[i][0]))
			return map[i][1];
	return op_type;
}

/* One stub address per known kernel: the "compiled" kernel rtKernelLaunch names. */
static char kernel_stubs[64];
static unsigned int kernel_registered[64];
static pthread_mutex_t aclop_lock = PTHREAD_MUTEX_INITIALIZER;

static const void *compile(const char *kernel)
{
	const char *const *names = npu_op_cost_kernels();
	const void *stub = NULL;

	for (int i = 0; names[i] && i < 64; i++) {
		if (strcmp(names[i], kernel))
			continue;
		pthread_mutex_lock(&aclop_lock);
		if (kernel_registered[i] ||
		    !rtFunctionRegister(NULL, &kernel_stubs[i], names[i], NULL, 0)) {
			kernel_registered[i] = 1;
			stub = &kernel_stubs[i];
		}
		pthread_mutex_unlock(&aclop_lock);
		break;
	}
	return stub;
}

static int to_shape(const aclTensorDesc *d, struct npu_shape *s)
{
	if (!d || d->ndim > NPU_OP_MAX_DIMS)
		return -1;
	memset(s, 0, sizeof(*s));
	s->ndim = d->ndim;
	for (int i = 0; i < d->ndim; i++)
		s->dims[i] = d->dims[i];
	s->elem_size = (uint32_t)aclDataTypeSize(d->dtype);
	return 0;
}

static aclError execute(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
			const aclDataBuffer *const inputs[], int numOutputs,
			const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
			aclrtStream stream)
{
	struct npu_shape in[ACLOP_MAX_IO], out[ACLOP_MAX_IO];
	struct npu_kernel_args args;
	rtArgsEx_t ai = { 0 };
	struct npu_op_cost cost;
	const void *stub;

	if (!opType || numInputs < 0 || numOutputs < 1 || numInputs > ACLOP_MAX_IO ||
	    numOutputs > ACLOP_MAX_IO || (numInputs && (!inputDesc || !inputs)) || !outputDesc ||
	    !outputs)
		return ACL_ERROR_INVALID_PARAM;
	for (int i = 0; i < numInputs; i++)
		if (to_shape(inputDesc[i], &in[i]) || !inputs[i])
			return ACL_ERROR_INVALID_PARAM;
	for (int i = 0; i < numOutputs; i++)
		if (to_shape(outputDesc[i], &out[i]) || !outputs[i])
			return ACL_ERROR_INVALID_PARAM;
	if (npu_op_cost(kernel_of(opType), in, numInputs, out, numOutputs, &cost))
		return ACL_ERROR_INVALID_PARAM; /* unknown op type or shapes that do not fit */
	stub = compile(cost.kernel);
	if (!stub)
		return ACL_ERROR_FAILURE;
	args.flops = cost.flops;
	args.bytes = cost.bytes;
	args.task_type = (uint32_t)cost.task_type;
	args.reserved = 0;
	ai.args = &args;
	ai.argsSize = sizeof(args);
	if (cost.task_type == NPU_TASK_AI_CPU)
		return rtCpuKernelLaunchWithFlag("libcpu_kernels.so", cost.kernel, cost.block_dim,
						 &ai, NULL, stream, 0);
	return rtKernelLaunchWithFlagV2(stub, cost.block_dim, &ai, NULL, stream, 0, NULL);
}

/*
 * Both entry points, for `fn` entered at t0: the model compiles nothing, so
 * the attributes, engine, compile flag and op path change nothing.
 */
static aclError compile_and_execute(const char *fn, unsigned long long t0, const char *opType,
				    int numInputs, const aclTensorDesc *const inputDesc[],
				    const aclDataBuffer *const inputs[], int numOutputs,
				    const aclTensorDesc *const outputDesc[],
				    aclDataBuffer *const outputs[], aclrtStream stream)
{
	aclError r;

	r = execute(opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs, stream);
	NPU_API_EXIT_AS(fn, t0, "cann", r, "\top=%s\tstream=%p", opType ? opType : "-", stream);
	return r;
}

NPU_NOINLINE aclError aclopCompileAndExecute(const char *opType, int numInputs,
					     const aclTensorDesc *const inputDesc[],
					     const aclDataBuffer *const inputs[], int numOutputs,
					     const aclTensorDesc *const outputDesc[],
					     aclDataBuffer *const outputs[], const aclopAttr *attr,
					     aclopEngineType engineType,
					     aclopCompileType compileFlag, const char *opPath,
					     aclrtStream stream)
{
	NPU_API_ENTER();
	(void)attr;
	(void)engineType;
	(void)compileFlag;
	(void)opPath;
	return compile_and_execute(__func__, npu_api_t0, opType, numInputs, inputDesc, inputs,
				   numOutputs, outputDesc, outputs, stream);
}

NPU_NOINLINE aclError aclopCompileAndExecuteV2(const char *opType, int numInputs,
					       aclTensorDesc *inputDesc[], aclDataBuffer *inputs[],
					       int numOutputs, aclTensorDesc *outputDesc[],
					       aclDataBuffer *outputs[], aclopAttr *attr,
					       aclopEngineType engineType,
					       aclopCompileType compileFlag, const char *opPath,
					       aclrtStream stream)
{
	NPU_API_ENTER();
	(void)attr;
	(void)engineType;
	(void)compileFlag;
	(void)opPath;
	return compile_and_execute(__func__, npu_api_t0, opType, numInputs,
				   (const aclTensorDesc *const *)inputDesc,
				   (const aclDataBuffer *const *)inputs, numOutputs,
				   (const aclTensorDesc *const *)outputDesc, outputs, stream);
}
