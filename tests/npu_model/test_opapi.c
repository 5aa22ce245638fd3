// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_opapi.c - the aclnn two-phase API (npu_model/opapi/opapi.c) and its
 * executor (nnopbase.c), with AscendCL's kernel launch faked here to record
 * what phase 2 launches: kernel names, task types, block dims and the
 * FLOPs/bytes phase 1 computed from the shapes; the aclnn error codes for
 * NULL and invalid operands; workspace checks; executor lifetime.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "npu_acl.h"
#include "npu_aclnn.h"
#include "npu_cost.h"
#include "npu_kernel.h"
#include "npu_rt.h"
#include "opapi/nnopbase.h"

/* ---- fake AscendCL: functions by name, launches recorded ---------------------------------- */

struct launch {
	char kernel[32];
	uint32_t block_dim;
	struct npu_kernel_args args;
	aclrtStream stream;
};
static struct launch launches[64];
static int nr_launches;
static char func_names[64][32];
static int nr_funcs;
static int launch_fails;

aclError aclrtBinaryLoadFromData(const void *data, size_t length,
				 const aclrtBinaryLoadOptions *options, aclrtBinHandle *binHandle)
{
	(void)data, (void)length, (void)options;
	*binHandle = (void *)0xb1;
	return ACL_SUCCESS;
}

aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle, const char *kernelName,
				aclrtFuncHandle *funcHandle)
{
	(void)binHandle;
	for (int i = 0; i < nr_funcs; i++) {
		if (!strcmp(func_names[i], kernelName)) {
			*funcHandle = func_names[i];
			return ACL_SUCCESS;
		}
	}
	strcpy(func_names[nr_funcs], kernelName);
	*funcHandle = func_names[nr_funcs++];
	return ACL_SUCCESS;
}

/* A kernel binary from a file: the fake handle is the kernel's name (the file's base name). */
static char bin_names[64][32];
static int nr_bins, nr_by_entry;

aclError aclrtBinaryLoadFromFile(const char *binPath, aclrtBinaryLoadOptions *options,
				 aclrtBinHandle *binHandle)
{
	const char *base = strrchr(binPath, '/');

	(void)options;
	base = base ? base + 1 : binPath;
	snprintf(bin_names[nr_bins], sizeof(bin_names[0]), "%.*s", (int)strcspn(base, "."), base);
	*binHandle = bin_names[nr_bins++];
	return ACL_SUCCESS;
}

aclError aclrtBinaryGetFunctionByEntry(aclrtBinHandle binHandle, uint64_t funcEntry,
				       aclrtFuncHandle *funcHandle)
{
	assert_true(funcEntry >= 1); /* a tiling key */
	nr_by_entry++;
	return aclrtBinaryGetFunction(NULL, binHandle, funcHandle);
}

static struct launch *record_launch(const char *kernel, uint32_t numBlocks, const void *args,
				    aclrtStream stream)
{
	struct launch *l = &launches[nr_launches++];

	snprintf(l->kernel, sizeof(l->kernel), "%s", kernel);
	l->block_dim = numBlocks;
	memcpy(&l->args, args, sizeof(l->args));
	l->stream = stream;
	return l;
}

/* AI CPU kernels: the runtime call of their own, by op name. */
static int nr_aicpu;

rtError_t rtAicpuKernelLaunchExWithArgs(const uint32_t kernelType, const char *const opName,
					const uint32_t numBlocks, const rtAicpuArgsEx_t *argsInfo,
					rtSmDesc_t *const smDesc, const rtStream_t stm,
					const uint32_t flags)
{
	(void)kernelType, (void)smDesc, (void)flags;
	assert_int_equal(argsInfo->argsSize, sizeof(struct npu_kernel_args));
	record_launch(opName, numBlocks, argsInfo->args, stm);
	nr_aicpu++;
	return launch_fails ? ACL_ERROR_RT_PARAM_INVALID : ACL_SUCCESS;
}

aclError aclrtLaunchKernelWithHostArgs(aclrtFuncHandle funcHandle, uint32_t numBlocks,
				       aclrtStream stream, aclrtLaunchKernelCfg *cfg,
				       void *hostArgs, size_t argsSize,
				       aclrtPlaceHolderInfo *placeHolderArray,
				       size_t placeHolderNum)
{
	(void)cfg, (void)placeHolderArray, (void)placeHolderNum;
	assert_int_equal(argsSize, sizeof(struct npu_kernel_args));
	record_launch(funcHandle, numBlocks, hostArgs, stream);
	return launch_fails ? ACL_ERROR_RT_PARAM_INVALID : ACL_SUCCESS;
}

/* ---- helpers ----------------------------------------------------------------------------- */

static char dev_mem[1 << 16];

static aclTensor *tensor(aclDataType t, int n, int64_t a, int64_t b, int64_t c, int64_t d)
{
	int64_t dims[4] = { a, b, c, d };

	return aclCreateTensor(dims, (uint64_t)n, t, NULL, 0,
			       n == 4 ? ACL_FORMAT_NCHW : ACL_FORMAT_ND, dims, (uint64_t)n,
			       dev_mem);
}

/* A test's last step: destroy(each argument), all of one type (tensors, int arrays, ...). */
#define DESTROY(destroy, first, ...)                                           \
	do {                                                                   \
		__typeof__(first) all_[] = { first, __VA_ARGS__ };             \
                                                                               \
		for (size_t i_ = 0; i_ < sizeof(all_) / sizeof(all_[0]); i_++) \
			destroy(all_[i_]);                                     \
	} while (0)

static int setup(void **state)
{
	(void)state;
	nr_launches = 0;
	launch_fails = 0;
	return 0;
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void test_add_two_phase(void **state)
{
	aclTensor *a = tensor(ACL_FLOAT16, 2, 1024, 512, 0, 0);
	aclTensor *o = tensor(ACL_FLOAT16, 2, 1024, 512, 0, 0);
	float one = 1.0f;
	aclScalar *alpha = aclCreateScalar(&one, ACL_FLOAT);
	uint64_t ws = 99;
	aclOpExecutor *ex = NULL;
	int stream_tag;

	assert_int_equal(aclnnAddGetWorkspaceSize(a, a, alpha, o, &ws, &ex), ACLNN_SUCCESS);
	assert_int_equal(ws, 0);
	assert_non_null(ex);
	assert_int_equal(nr_launches, 0); /* phase 1 launches nothing */
	assert_int_equal(aclnnAdd(NULL, 0, ex, &stream_tag), ACLNN_SUCCESS);
	assert_int_equal(nr_launches, 1);
	assert_string_equal(launches[0].kernel, "Add");
	assert_int_equal(launches[0].args.task_type, NPU_TASK_AI_VECTOR_CORE);
	assert_int_equal(launches[0].args.flops, 1024 * 512);
	assert_int_equal(launches[0].args.bytes, 3ull * 1024 * 512 * 2);
	assert_ptr_equal(launches[0].stream, &stream_tag);
	assert_in_range(launches[0].block_dim, 1, NPU_AIV_CORES);
	/* its handle came from the Add binary's function for a tiling key, as opbase gets it */
	assert_int_equal(nr_by_entry, 1);
	/* the executor is gone after phase 2: running it again is refused */
	assert_int_equal(aclnnAdd(NULL, 0, ex, NULL), ACLNN_ERR_PARAM_NULLPTR);
	DESTROY(aclDestroyTensor, a, o);
	aclDestroyScalar(alpha);
}

static void test_matmul_shapes(void **state)
{
	aclTensor *a = tensor(ACL_FLOAT16, 2, 256, 128, 0, 0);
	aclTensor *b = tensor(ACL_FLOAT16, 2, 128, 64, 0, 0);
	aclTensor *o = tensor(ACL_FLOAT16, 2, 256, 64, 0, 0);
	aclTensor *bad = tensor(ACL_FLOAT16, 2, 100, 64, 0, 0);
	aclTensor *a3 = tensor(ACL_FLOAT16, 3, 4, 256, 128, 0);
	uint64_t ws;
	aclOpExecutor *ex;

	assert_int_equal(aclnnMatmulGetWorkspaceSize(a, b, o, 1, &ws, &ex), ACLNN_SUCCESS);
	assert_int_equal(aclnnMatmul(NULL, 0, ex, NULL), ACLNN_SUCCESS);
	assert_string_equal(launches[0].kernel, "MatMulV2");
	assert_int_equal(launches[0].args.task_type, NPU_TASK_AI_CORE);
	assert_int_equal(launches[0].args.flops, 2ull * 256 * 64 * 128);
	assert_int_equal(aclnnMatmulGetWorkspaceSize(a3, b, o, 1, &ws, &ex), ACLNN_SUCCESS);
	assert_int_equal(aclnnMatmul(NULL, 0, ex, NULL), ACLNN_SUCCESS);
	assert_string_equal(launches[1].kernel, "BatchMatMulV2");
	assert_int_equal(launches[1].args.flops, 4ull * 2 * 256 * 64 * 128);
	/* inner dimensions differ */
	assert_int_equal(aclnnMatmulGetWorkspaceSize(a, bad, o, 1, &ws, &ex),
			 ACLNN_ERR_PARAM_INVALID);
	DESTROY(aclDestroyTensor, a, b, o, bad, a3);
}

/* Convolution: a workspace, and phase 2 refuses less than it asked for. */
static void test_conv_workspace(void **state)
{
	aclTensor *x = tensor(ACL_FLOAT16, 4, 8, 16, 32, 32);
	aclTensor *w = tensor(ACL_FLOAT16, 4, 32, 16, 3, 3);
	aclTensor *y = tensor(ACL_FLOAT16, 4, 8, 32, 32, 32);
	int64_t one[2] = { 1, 1 }, zero[2] = { 0, 0 };
	aclIntArray *st = aclCreateIntArray(one, 2), *pd = aclCreateIntArray(one, 2);
	aclIntArray *dl = aclCreateIntArray(one, 2), *op = aclCreateIntArray(zero, 2);
	uint64_t ws = 0;
	aclOpExecutor *ex;

	assert_int_equal(aclnnConvolutionGetWorkspaceSize(x, w, NULL, st, pd, dl, false, op, 1, y,
							  1, &ws, &ex),
			 ACLNN_SUCCESS);
	assert_true(ws > 0);
	assert_int_equal(aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS);
	assert_int_equal(aclnnConvolution(NULL, 0, ex, NULL), ACLNN_ERR_PARAM_INVALID);
	assert_int_equal(aclnnConvolution(dev_mem, ws - 1, ex, NULL), ACLNN_ERR_PARAM_INVALID);
	assert_int_equal(nr_launches, 0);
	assert_int_equal(aclnnConvolution(dev_mem, ws, ex, NULL), ACLNN_SUCCESS);
	/* repeatable: a second run of the same executor */
	assert_int_equal(aclnnConvolution(dev_mem, ws, ex, NULL), ACLNN_SUCCESS);
	assert_int_equal(nr_launches, 2);
	assert_string_equal(launches[0].kernel, "Conv2D");
	assert_int_equal(launches[0].args.flops, 2ull * 8 * 32 * 32 * 32 * 16 * 3 * 3);
	assert_int_equal(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
	/* transposed convolution is not modelled: refused, not faked */
	assert_int_equal(aclnnConvolutionGetWorkspaceSize(x, w, NULL, st, pd, dl, true, op, 1, y, 1,
							  &ws, &ex),
			 ACLNN_ERR_PARAM_INVALID);
	assert_int_equal(aclnnConvolutionGetWorkspaceSize(x, w, NULL, NULL, pd, dl, false, op, 1, y,
							  1, &ws, &ex),
			 ACLNN_ERR_PARAM_NULLPTR);
	DESTROY(aclDestroyTensor, x, w, y);
	DESTROY(aclDestroyIntArray, st, pd, dl, op);
}

/* Backward conv: two cube kernels plus the bias reduction, in one executor. */
static void test_conv_backward(void **state)
{
	aclTensor *x = tensor(ACL_FLOAT16, 4, 8, 16, 32, 32);
	aclTensor *w = tensor(ACL_FLOAT16, 4, 32, 16, 3, 3);
	aclTensor *g = tensor(ACL_FLOAT16, 4, 8, 32, 32, 32);
	aclTensor *gx = tensor(ACL_FLOAT16, 4, 8, 16, 32, 32);
	aclTensor *gw = tensor(ACL_FLOAT16, 4, 32, 16, 3, 3);
	aclTensor *gb = tensor(ACL_FLOAT16, 1, 32, 0, 0, 0);
	int64_t one[2] = { 1, 1 };
	bool m[3] = { 1, 1, 1 };
	aclIntArray *a = aclCreateIntArray(one, 2);
	aclBoolArray *mask = aclCreateBoolArray(m, 3);
	uint64_t ws;
	aclOpExecutor *ex;

	assert_int_equal(aclnnConvolutionBackwardGetWorkspaceSize(g, x, w, a, a, a, a, false, a, 1,
								  mask, 1, gx, gw, gb, &ws, &ex),
			 ACLNN_SUCCESS);
	assert_int_equal(aclnnConvolutionBackward(dev_mem, ws, ex, NULL), ACLNN_SUCCESS);
	assert_int_equal(nr_launches, 3);
	assert_string_equal(launches[0].kernel, "Conv2DBackpropInput");
	assert_string_equal(launches[1].kernel, "Conv2DBackpropFilter");
	assert_string_equal(launches[2].kernel, "ReduceSum");
	assert_int_equal(launches[0].args.flops, launches[1].args.flops);
	DESTROY(aclDestroyTensor, x, w, g, gx, gw, gb);
	aclDestroyIntArray(a);
	aclDestroyBoolArray(mask);
}

/* One multi-tensor kernel over the whole list, with the summed work. */
static void test_foreach(void **state)
{
	const aclTensor *v[3] = { tensor(ACL_FLOAT, 1, 100, 0, 0, 0),
				  tensor(ACL_FLOAT, 1, 200, 0, 0, 0),
				  tensor(ACL_FLOAT, 1, 300, 0, 0, 0) };
	const aclTensor *w[2] = { tensor(ACL_FLOAT, 1, 100, 0, 0, 0),
				  tensor(ACL_FLOAT, 1, 200, 0, 0, 0) };
	aclTensorList *l = aclCreateTensorList(v, 3), *two = aclCreateTensorList(w, 2);
	aclTensor *s = tensor(ACL_FLOAT, 1, 1, 0, 0, 0);
	uint64_t ws;
	aclOpExecutor *ex;

	assert_int_equal(aclnnForeachMulScalarGetWorkspaceSize(l, s, l, &ws, &ex), ACLNN_SUCCESS);
	assert_int_equal(aclnnForeachMulScalar(NULL, 0, ex, NULL), ACLNN_SUCCESS);
	assert_int_equal(nr_launches, 1);
	assert_string_equal(launches[0].kernel, "ForeachMulScalar");
	assert_int_equal(launches[0].args.flops, 600);
	assert_int_equal(launches[0].args.bytes, 2 * 600 * 4);
	/* lists of different lengths */
	assert_int_equal(aclnnForeachMulScalarGetWorkspaceSize(l, s, two, &ws, &ex),
			 ACLNN_ERR_PARAM_INVALID);
	aclDestroyTensorList(l); /* destroys the tensors too */
	aclDestroyTensorList(two);
	aclDestroyTensor(s);
}

static void test_optimizer_and_aicpu(void **state)
{
	aclTensor *p = tensor(ACL_FLOAT, 1, 4096, 0, 0, 0);
	aclTensor *st = tensor(ACL_FLOAT, 1, 1, 0, 0, 0);
	aclTensor *o = tensor(ACL_INT64, 2, 4096, 1, 0, 0);
	uint64_t ws;
	aclOpExecutor *ex;

	assert_int_equal(aclnnApplyAdamWV2GetWorkspaceSize(p, p, p, NULL, p, st, 1e-3f, 0.9f,
							   0.999f, 0.01f, 1e-8f, false, false, &ws,
							   &ex),
			 ACLNN_SUCCESS);
	assert_int_equal(aclnnApplyAdamWV2(NULL, 0, ex, NULL), ACLNN_SUCCESS);
	assert_string_equal(launches[0].kernel, "ApplyAdamW");
	assert_int_equal(launches[0].args.bytes, 7ull * 4096 * 4); /* 4 read, 3 written */
	/* beta1 outside [0, 1) is refused */
	assert_int_equal(aclnnApplyAdamWV2GetWorkspaceSize(p, p, p, NULL, p, st, 1e-3f, 1.5f,
							   0.999f, 0.01f, 1e-8f, false, false, &ws,
							   &ex),
			 ACLNN_ERR_PARAM_INVALID);
	assert_int_equal(aclnnNonzeroGetWorkspaceSize(p, o, &ws, &ex), ACLNN_SUCCESS);
	assert_int_equal(aclnnNonzero(NULL, 0, ex, NULL), ACLNN_SUCCESS);
	assert_int_equal(launches[1].args.task_type, NPU_TASK_AI_CPU);
	/* an AI CPU kernel goes through rtAicpuKernelLaunchExWithArgs, by its op name */
	assert_int_equal(nr_aicpu, 1);
	assert_string_equal(launches[1].kernel, "NonZero");
	DESTROY(aclDestroyTensor, p, st, o);
}

static void test_errors(void **state)
{
	aclTensor *a = tensor(ACL_FLOAT16, 2, 8, 8, 0, 0);
	uint64_t ws;
	aclOpExecutor *ex;
	int64_t dims[1] = { -1 };

	assert_int_equal(aclnnReluGetWorkspaceSize(NULL, a, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
	assert_int_equal(aclnnReluGetWorkspaceSize(a, a, NULL, &ex), ACLNN_ERR_PARAM_NULLPTR);
	assert_int_equal(aclnnAddGetWorkspaceSize(a, a, NULL, a, &ws, &ex),
			 ACLNN_ERR_PARAM_NULLPTR);
	assert_int_equal(aclnnSoftmaxGetWorkspaceSize(a, 5, a, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
	assert_int_equal(aclnnCastGetWorkspaceSize(a, ACL_DT_UNDEFINED, a, &ws, &ex),
			 ACLNN_ERR_PARAM_INVALID);
	assert_int_equal(aclnnRelu(NULL, 0, NULL, NULL), ACLNN_ERR_PARAM_NULLPTR);
	/* a launch failure is a runtime error of phase 2 */
	assert_int_equal(aclnnReluGetWorkspaceSize(a, a, &ws, &ex), ACLNN_SUCCESS);
	launch_fails = 1;
	assert_int_equal(aclnnRelu(NULL, 0, ex, NULL), ACLNN_ERR_RUNTIME_ERROR);
	/* constructors refuse bad input */
	assert_null(aclCreateTensor(dims, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 1, NULL));
	assert_null(aclCreateTensor(dims, 9, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, dims, 1, NULL));
	assert_null(aclCreateScalar(NULL, ACL_FLOAT));
	assert_int_equal(aclDestroyTensor(NULL), ACLNN_SUCCESS);
	assert_int_equal(aclDestroyTensor((aclTensor *)dev_mem), ACLNN_ERR_PARAM_INVALID);
	aclDestroyTensor(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_add_two_phase, setup),
		cmocka_unit_test_setup(test_matmul_shapes, setup),
		cmocka_unit_test_setup(test_conv_workspace, setup),
		cmocka_unit_test_setup(test_conv_backward, setup),
		cmocka_unit_test_setup(test_foreach, setup),
		cmocka_unit_test_setup(test_optimizer_and_aicpu, setup),
		cmocka_unit_test_setup(test_errors, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
