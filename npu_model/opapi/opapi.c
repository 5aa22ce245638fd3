// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * opapi.c - libopapi.so: the aclnn two-phase operator API with CANN's real
 * prototypes (aclnn_add.h, aclnn_matmul.h, ...):
 *
 *   aclnnXxxGetWorkspaceSize(inputs..., outputs..., &workspaceSize, &executor)
 *	checks the operands, plans the kernels (name, task type, block dim,
 *	FLOPs and bytes from the shapes: npu_op_cost()) into an executor;
 *   aclnnXxx(workspace, workspaceSize, executor, stream)
 *	launches them (libnnopbase) and frees the executor.
 *
 * torch_npu loads this library with dlopen (op-plugin's GetOpApiLibName()),
 * so nothing links it: a tracer attached before the first op sees it appear.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "npu_acl.h"
#include "npu_aclnn.h"
#include "npu_api_journal.h"
#include "npu_cost.h"
#include "opapi/nnopbase.h"

/* Fills *c with the cost of `kernel` over the given tensors; NULL operands are errors. */
static aclnnStatus cost_of(const char *kernel, const aclTensor *const *in, int nin,
			   const aclTensor *const *out, int nout, struct npu_op_cost *c)
{
	struct npu_shape si[8], so[8];

	for (int i = 0; i < nin; i++)
		if (!in[i])
			return ACLNN_ERR_PARAM_NULLPTR;
	for (int i = 0; i < nout; i++)
		if (!out[i])
			return ACLNN_ERR_PARAM_NULLPTR;
	for (int i = 0; i < nin; i++)
		if (NnopbaseTensorShape(in[i], &si[i]))
			return ACLNN_ERR_PARAM_INVALID;
	for (int i = 0; i < nout; i++)
		if (NnopbaseTensorShape(out[i], &so[i]))
			return ACLNN_ERR_PARAM_INVALID;
	return npu_op_cost(kernel, si, nin, so, nout, c) ? ACLNN_ERR_PARAM_INVALID : ACLNN_SUCCESS;
}

static aclnnStatus plan(const char *op, uint64_t ws, const struct npu_op_cost *k, int nk,
			uint64_t *workspaceSize, aclOpExecutor **executor)
{
	aclOpExecutor *ex;

	if (!workspaceSize || !executor)
		return ACLNN_ERR_PARAM_NULLPTR;
	ex = NnopbaseExecutorCreate(op, ws);
	if (!ex)
		return ACLNN_ERR_INNER;
	for (int i = 0; i < nk; i++) {
		if (NnopbaseExecutorAddKernel(ex, &k[i])) {
			aclDestroyAclOpExecutor(ex);
			return ACLNN_ERR_INNER;
		}
	}
	*workspaceSize = ws;
	*executor = ex;
	return ACLNN_SUCCESS;
}

/* One kernel over in[] -> out[], planned for op `op` with workspace `ws`. */
static aclnnStatus plan1(const char *op, const char *kernel, const aclTensor *const *in, int nin,
			 const aclTensor *const *out, int nout, uint64_t ws,
			 uint64_t *workspaceSize, aclOpExecutor **executor)
{
	struct npu_op_cost k;
	aclnnStatus r = cost_of(kernel, in, nin, out, nout, &k);

	return r ? r : plan(op, ws, &k, 1, workspaceSize, executor);
}

#define T(...) ((const aclTensor *const[]){ __VA_ARGS__ })

#define GWS_EXIT(op, r, workspaceSize)                  \
	NPU_API_EXIT("cann", r, "\top=" op "\tws=%llu", \
		     (unsigned long long)((r) || !(workspaceSize) ? 0 : *(workspaceSize)))

/* Phase 2 of every op: the same body, its own exported symbol. */
#define ACLNN_RUN(fn)                                                                             \
	NPU_NOINLINE aclnnStatus fn(void *workspace, uint64_t workspaceSize,                      \
				    aclOpExecutor *executor, aclrtStream stream)                  \
	{                                                                                         \
		aclnnStatus r;                                                                    \
		NPU_API_ENTER();                                                                  \
		r = NnopbaseExecutorRunWithWorkspace(executor, workspace, workspaceSize, stream); \
		NPU_API_EXIT("cann", r, "\top=" #fn "\tws=%llu\tstream=%p",                       \
			     (unsigned long long)workspaceSize, stream);                          \
		return r;                                                                         \
	}

/* The ops that plan one kernel: the aclnn op name and the kernel its executor launches. */
enum {
	OP_ADD,
	OP_MUL,
	OP_RELU,
	OP_THRESHOLD_BACKWARD,
	OP_GELU,
	OP_GELU_BACKWARD,
	OP_SOFTMAX,
	OP_SOFTMAX_BACKWARD,
	OP_CAST,
	OP_SQRT,
	OP_INPLACE_MULS,
	OP_INPLACE_ADDS,
	OP_INPLACE_ADDCMUL,
	OP_INPLACE_ADDCDIV,
	OP_MATMUL,
	OP_BATCH_MATMUL,
	OP_ADDMM,
	OP_LAYER_NORM,
	OP_LAYER_NORM_BACKWARD,
	OP_REDUCE_SUM,
	OP_CONVOLUTION,
	OP_NPU_FORMAT_CAST,
	OP_APPLY_ADAMW_V2,
	OP_NONZERO,
};

static const struct aclnn_op {
	const char *name;
	const char *kernel;
} OPS[] = {
	[OP_ADD] = { "aclnnAdd", "Add" },
	[OP_MUL] = { "aclnnMul", "Mul" },
	[OP_RELU] = { "aclnnRelu", "Relu" },
	[OP_THRESHOLD_BACKWARD] = { "aclnnThresholdBackward", "ReluGrad" },
	[OP_GELU] = { "aclnnGelu", "Gelu" },
	[OP_GELU_BACKWARD] = { "aclnnGeluBackward", "GeluGrad" },
	[OP_SOFTMAX] = { "aclnnSoftmax", "SoftmaxV2" },
	[OP_SOFTMAX_BACKWARD] = { "aclnnSoftmaxBackward", "SoftmaxGrad" },
	[OP_CAST] = { "aclnnCast", "Cast" },
	[OP_SQRT] = { "aclnnSqrt", "Sqrt" },
	[OP_INPLACE_MULS] = { "aclnnInplaceMuls", "Muls" },
	[OP_INPLACE_ADDS] = { "aclnnInplaceAdds", "Adds" },
	[OP_INPLACE_ADDCMUL] = { "aclnnInplaceAddcmul", "Addcmul" },
	[OP_INPLACE_ADDCDIV] = { "aclnnInplaceAddcdiv", "Addcdiv" },
	[OP_MATMUL] = { "aclnnMatmul", "MatMulV2" },
	[OP_BATCH_MATMUL] = { "aclnnMatmul", "BatchMatMulV2" },
	/* out = beta * self + alpha * (mat1 @ mat2): the bias add is fused into MatMulV2 */
	[OP_ADDMM] = { "aclnnAddmm", "MatMulV2" },
	[OP_LAYER_NORM] = { "aclnnLayerNorm", "LayerNormV3" },
	[OP_LAYER_NORM_BACKWARD] = { "aclnnLayerNormBackward", "LayerNormGradV3" },
	[OP_REDUCE_SUM] = { "aclnnReduceSum", "ReduceSum" },
	[OP_CONVOLUTION] = { "aclnnConvolution", "Conv2D" },
	[OP_NPU_FORMAT_CAST] = { "aclnnNpuFormatCast", "TransData" },
	/* torch_npu's fused AdamW (torch_npu.optim.NpuFusedAdamW / _fused_adamw_ on NPU) */
	[OP_APPLY_ADAMW_V2] = { "aclnnApplyAdamWV2", "ApplyAdamW" },
	[OP_NONZERO] = { "aclnnNonzero", "NonZero" },
};

/*
 * Phase 1 of a one-kernel op, called by its exported entry point `fn` (which
 * took npu_api_t0 = t0): `check` is the op's own argument verdict, returned
 * as is unless ACLNN_SUCCESS; then its kernel is planned over in[] -> out[]
 * with workspace `ws`.  Writes fn's journal line.
 */
static aclnnStatus gws1(const char *fn, unsigned long long t0, int op, aclnnStatus check,
			const aclTensor *const *in, int nin, const aclTensor *const *out, int nout,
			uint64_t ws, uint64_t *workspaceSize, aclOpExecutor **executor)
{
	aclnnStatus r = check;

	if (r == ACLNN_SUCCESS)
		r = plan1(OPS[op].name, OPS[op].kernel, in, nin, out, nout, ws, workspaceSize,
			  executor);
	NPU_API_EXIT_AS(fn, t0, "cann", r, "\top=%s\tws=%llu", OPS[op].name,
			(unsigned long long)(r || !workspaceSize ? 0 : *workspaceSize));
	return r;
}

/* ACLNN_SUCCESS when every listed argument is non-NULL. */
#define NEED(...)                                                                 \
	(all_set((const void *const[]){ __VA_ARGS__ },                            \
		 sizeof((const void *const[]){ __VA_ARGS__ }) / sizeof(void *)) ? \
		 ACLNN_SUCCESS :                                                  \
		 ACLNN_ERR_PARAM_NULLPTR)

static bool all_set(const void *const *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!p[i])
			return false;
	return true;
}

/* Phase 1 of an op with the prototype (self, out, workspaceSize, executor), no check of its own. */
#define ACLNN_GWS_UNARY(fn, op)                                                                \
	NPU_NOINLINE aclnnStatus fn##GetWorkspaceSize(const aclTensor *self, aclTensor *out,   \
						      uint64_t *workspaceSize,                 \
						      aclOpExecutor **executor)                \
	{                                                                                      \
		NPU_API_ENTER();                                                               \
		return gws1(__func__, npu_api_t0, op, ACLNN_SUCCESS, T(self), 1, T(out), 1, 0, \
			    workspaceSize, executor);                                          \
	}

/* ---- elementwise and activations --------------------------------------------------------- */

NPU_NOINLINE aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
						  const aclScalar *alpha, aclTensor *out,
						  uint64_t *workspaceSize, aclOpExecutor **executor)
{
	NPU_API_ENTER();
	return gws1(__func__, npu_api_t0, OP_ADD, NEED(alpha), T(self, other), 2, T(out), 1, 0,
		    workspaceSize, executor);
}
ACLNN_RUN(aclnnAdd)

NPU_NOINLINE aclnnStatus aclnnMulGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
						  aclTensor *out, uint64_t *workspaceSize,
						  aclOpExecutor **executor)
{
	NPU_API_ENTER();
	return gws1(__func__, npu_api_t0, OP_MUL, ACLNN_SUCCESS, T(self, other), 2, T(out), 1, 0,
		    workspaceSize, executor);
}
ACLNN_RUN(aclnnMul)

ACLNN_GWS_UNARY(aclnnRelu, OP_RELU)
ACLNN_RUN(aclnnRelu)

NPU_NOINLINE aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(
	const aclTensor *gradOutput, const aclTensor *self, const aclScalar *threshold,
	aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor)
{
	NPU_API_ENTER();
	return gws1(__func__, npu_api_t0, OP_THRESHOLD_BACKWARD, NEED(threshold),
		    T(gradOutput, self), 2, T(gradInput), 1, 0, workspaceSize, executor);
}
ACLNN_RUN(aclnnThresholdBackward)

ACLNN_GWS_UNARY(aclnnGelu, OP_GELU)
ACLNN_RUN(aclnnGelu)

NPU_NOINLINE aclnnStatus aclnnGeluBackwardGetWorkspaceSize(const aclTensor *gradOutput,
							   const aclTensor *self,
							   aclTensor *gradInput,
							   uint64_t *workspaceSize,
							   aclOpExecutor **executor)
{
	NPU_API_ENTER();
	return gws1(__func__, npu_api_t0, OP_GELU_BACKWARD, ACLNN_SUCCESS, T(gradOutput, self), 2,
		    T(gradInput), 1, 0, workspaceSize, executor);
}
ACLNN_RUN(aclnnGeluBackward)

/* ACLNN_ERR_PARAM_INVALID for a dim outside self's rank (a NULL self is plan1's to refuse). */
static aclnnStatus dim_check(const aclTensor *self, int64_t dim)
{
	struct npu_shape s;

	if (self && !NnopbaseTensorShape(self, &s) && (dim >= s.ndim || dim < -s.ndim))
		return ACLNN_ERR_PARAM_INVALID;
	return ACLNN_SUCCESS;
}

NPU_NOINLINE aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim,
						      aclTensor *out, uint64_t *workspaceSize,
						      aclOpExecutor **executor)
{
	NPU_API_ENTER();
	return gws1(__func__, npu_api_t0, OP_SOFTMAX, dim_check(self, dim), T(self), 1, T(out), 1,
		    0, workspaceSize, executor);
}
ACLNN_RUN(aclnnSoftmax)

NPU_NOINLINE aclnnStatus aclnnSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput,
							      const aclTensor *output, int64_t dim,
							      aclTensor *gradInput,
							      uint64_t *workspaceSize,
							      aclOpExecutor **executor)
{
	NPU_API_ENTER();
	(void)dim;
	return gws1(__func__, npu_api_t0, OP_SOFTMAX_BACKWARD, ACLNN_SUCCESS, T(gradOutput, output),
		    2, T(gradInput), 1, 0, workspaceSize, executor);
}
ACLNN_RUN(aclnnSoftmaxBackward)

NPU_NOINLINE aclnnStatus aclnnCastGetWorkspaceSize(const aclTensor *self, const aclDataType dtype,
						   aclTensor *out, uint64_t *workspaceSize,
						   aclOpExecutor **executor)
{
	NPU_API_ENTER();
	return gws1(__func__, npu_api_t0, OP_CAST,
		    dtype == ACL_DT_UNDEFINED ? ACLNN_ERR_PARAM_INVALID : ACLNN_SUCCESS, T(self), 1,
		    T(out), 1, 0, workspaceSize, executor);
}
ACLNN_RUN(aclnnCast)

ACLNN_GWS_UNARY(aclnnSqrt, OP_SQRT)
ACLNN_RUN(aclnnSqrt)

/* ---- in-place optimizer arithmetic (torch.optim AdamW, foreach=False) --------------------- */

/* Phase 1 of the in-place selfRef += value * (tensor1 op tensor2) ops: value must be given. */
#define ACLNN_GWS_ADDC(fn, op)                                                                   \
	NPU_NOINLINE aclnnStatus fn##GetWorkspaceSize(                                           \
		aclTensor *selfRef, const aclTensor *tensor1, const aclTensor *tensor2,          \
		const aclScalar *value, uint64_t *workspaceSize, aclOpExecutor **executor)       \
	{                                                                                        \
		NPU_API_ENTER();                                                                 \
		return gws1(__func__, npu_api_t0, op, NEED(value), T(selfRef, tensor1, tensor2), \
			    3, T(selfRef), 1, 0, workspaceSize, executor);                       \
	}

NPU_NOINLINE aclnnStatus aclnnInplaceMulsGetWorkspaceSize(aclTensor *selfRef,
							  const aclScalar *other,
							  uint64_t *workspaceSize,
							  aclOpExecutor **executor)
{
	NPU_API_ENTER();
	return gws1(__func__, npu_api_t0, OP_INPLACE_MULS, NEED(other), T(selfRef), 1, T(selfRef),
		    1, 0, workspaceSize, executor);
}
ACLNN_RUN(aclnnInplaceMuls)

NPU_NOINLINE aclnnStatus aclnnInplaceAddsGetWorkspaceSize(aclTensor *selfRef,
							  const aclScalar *other,
							  const aclScalar *alpha,
							  uint64_t *workspaceSize,
							  aclOpExecutor **executor)
{
	NPU_API_ENTER();
	return gws1(__func__, npu_api_t0, OP_INPLACE_ADDS, NEED(other, alpha), T(selfRef), 1,
		    T(selfRef), 1, 0, workspaceSize, executor);
}
ACLNN_RUN(aclnnInplaceAdds)

ACLNN_GWS_ADDC(aclnnInplaceAddcmul, OP_INPLACE_ADDCMUL)
ACLNN_RUN(aclnnInplaceAddcmul)

ACLNN_GWS_ADDC(aclnnInplaceAddcdiv, OP_INPLACE_ADDCDIV)
ACLNN_RUN(aclnnInplaceAddcdiv)

/* ---- matrix products -------------------------------------------------------------------- */

/* BatchMatMulV2 for a batched self (rank > 2), else MatMulV2. */
static int matmul_kind(const aclTensor *self)
{
	struct npu_shape s;

	return self && !NnopbaseTensorShape(self, &s) && s.ndim > 2 ? OP_BATCH_MATMUL : OP_MATMUL;
}

NPU_NOINLINE aclnnStatus aclnnMatmulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2,
						     aclTensor *out, int8_t cubeMathType,
						     uint64_t *workspaceSize,
						     aclOpExecutor **executor)
{
	NPU_API_ENTER();
	(void)cubeMathType;
	return gws1(__func__, npu_api_t0, matmul_kind(self), ACLNN_SUCCESS, T(self, mat2), 2,
		    T(out), 1, 0, workspaceSize, executor);
}
ACLNN_RUN(aclnnMatmul)

NPU_NOINLINE aclnnStatus aclnnAddmmGetWorkspaceSize(const aclTensor *self, const aclTensor *mat1,
						    const aclTensor *mat2, const aclScalar *beta,
						    const aclScalar *alpha, aclTensor *out,
						    int8_t cubeMathType, uint64_t *workspaceSize,
						    aclOpExecutor **executor)
{
	NPU_API_ENTER();
	(void)cubeMathType;
	return gws1(__func__, npu_api_t0, OP_ADDMM, NEED(beta, alpha, self), T(mat1, mat2, self), 3,
		    T(out), 1, 0, workspaceSize, executor);
}
ACLNN_RUN(aclnnAddmm)

/* ---- normalization ------------------------------------------------------------------------ */

NPU_NOINLINE aclnnStatus aclnnLayerNormGetWorkspaceSize(
	const aclTensor *input, const aclIntArray *normalizedShape, const aclTensor *weightOptional,
	const aclTensor *biasOptional, double eps, aclTensor *out, aclTensor *meanOutOptional,
	aclTensor *rstdOutOptional, uint64_t *workspaceSize, aclOpExecutor **executor)
{
	NPU_API_ENTER();
	(void)weightOptional;
	(void)biasOptional;
	(void)meanOutOptional;
	(void)rstdOutOptional;
	return gws1(__func__, npu_api_t0, OP_LAYER_NORM,
		    !normalizedShape ? ACLNN_ERR_PARAM_NULLPTR :
		    !(eps > 0)	     ? ACLNN_ERR_PARAM_INVALID :
				       ACLNN_SUCCESS,
		    T(input), 1, T(out), 1, 0, workspaceSize, executor);
}
ACLNN_RUN(aclnnLayerNorm)

NPU_NOINLINE aclnnStatus aclnnLayerNormBackwardGetWorkspaceSize(
	const aclTensor *gradOut, const aclTensor *input, const aclIntArray *normalizedShape,
	const aclTensor *mean, const aclTensor *rstd, const aclTensor *weightOptional,
	const aclTensor *biasOptional, const aclBoolArray *outputMask, aclTensor *gradInputOut,
	aclTensor *gradWeightOut, aclTensor *gradBiasOut, uint64_t *workspaceSize,
	aclOpExecutor **executor)
{
	NPU_API_ENTER();
	(void)mean;
	(void)rstd;
	(void)weightOptional;
	(void)biasOptional;
	(void)gradWeightOut;
	(void)gradBiasOut;
	return gws1(__func__, npu_api_t0, OP_LAYER_NORM_BACKWARD, NEED(normalizedShape, outputMask),
		    T(gradOut, input), 2, T(gradInputOut), 1, 0, workspaceSize, executor);
}
ACLNN_RUN(aclnnLayerNormBackward)

NPU_NOINLINE aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor *self,
							const aclIntArray *dim, bool keepDim,
							aclDataType dtype, aclTensor *out,
							uint64_t *workspaceSize,
							aclOpExecutor **executor)
{
	NPU_API_ENTER();
	(void)keepDim;
	(void)dtype;
	return gws1(__func__, npu_api_t0, OP_REDUCE_SUM, NEED(dim), T(self), 1, T(out), 1, 0,
		    workspaceSize, executor);
}
ACLNN_RUN(aclnnReduceSum)

/* ---- convolution ---------------------------------------------------------------------------- */

/* im2col-style scratch the cube kernels use: one input tile per core. */
static uint64_t conv_workspace(const aclTensor *input)
{
	struct npu_shape s;

	if (NnopbaseTensorShape(input, &s) || s.ndim != 4)
		return 0;
	return (npu_shape_numel(&s) * s.elem_size / 4 + 511) & ~511ull;
}

NPU_NOINLINE aclnnStatus aclnnConvolutionGetWorkspaceSize(
	const aclTensor *input, const aclTensor *weight, const aclTensor *bias,
	const aclIntArray *stride, const aclIntArray *padding, const aclIntArray *dilation,
	bool transposed, const aclIntArray *outputPadding, const int64_t groups, aclTensor *output,
	int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor)
{
	NPU_API_ENTER();
	aclnnStatus check = NEED(stride, padding, dilation);

	(void)bias;
	(void)outputPadding;
	(void)cubeMathType;
	if (!check && (transposed || groups < 1))
		check = ACLNN_ERR_PARAM_INVALID; /* the model has no transposed conv */
	return gws1(__func__, npu_api_t0, OP_CONVOLUTION, check, T(input, weight), 2, T(output), 1,
		    check ? 0 : conv_workspace(input), workspaceSize, executor);
}
ACLNN_RUN(aclnnConvolution)

/* Two cube kernels (input and filter gradients) plus the bias reduction. */
NPU_NOINLINE aclnnStatus aclnnConvolutionBackwardGetWorkspaceSize(
	const aclTensor *gradOutput, const aclTensor *input, const aclTensor *weight,
	const aclIntArray *biasSizes, const aclIntArray *stride, const aclIntArray *padding,
	const aclIntArray *dilation, bool transposed, const aclIntArray *outputPadding, int groups,
	const aclBoolArray *outputMask, int8_t cubeMathType, aclTensor *gradInput,
	aclTensor *gradWeight, aclTensor *gradBias, uint64_t *workspaceSize,
	aclOpExecutor **executor)
{
	struct npu_op_cost k[3];
	int nk = 0;
	aclnnStatus r;
	NPU_API_ENTER();

	(void)biasSizes;
	(void)outputPadding;
	(void)cubeMathType;
	if (!stride || !padding || !dilation || !outputMask) {
		r = ACLNN_ERR_PARAM_NULLPTR;
		goto out;
	}
	if (transposed || groups < 1) {
		r = ACLNN_ERR_PARAM_INVALID;
		goto out;
	}
	r = cost_of("Conv2DBackpropInput", T(input, weight, gradOutput), 3, T(gradInput), 1,
		    &k[nk++]);
	if (!r)
		r = cost_of("Conv2DBackpropFilter", T(input, weight, gradOutput), 3, T(gradWeight),
			    1, &k[nk++]);
	if (!r && gradBias)
		r = cost_of("ReduceSum", T(gradOutput), 1, T(gradBias), 1, &k[nk++]);
	if (!r)
		r = plan("aclnnConvolutionBackward", conv_workspace(input), k, nk, workspaceSize,
			 executor);
out:
	GWS_EXIT("aclnnConvolutionBackward", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnConvolutionBackward)

/* ---- format conversion ----------------------------------------------------------------------- */

ACLNN_GWS_UNARY(aclnnNpuFormatCast, OP_NPU_FORMAT_CAST)
ACLNN_RUN(aclnnNpuFormatCast)

/* ---- fused and multi-tensor optimizer ops ---------------------------------------------------- */

NPU_NOINLINE aclnnStatus aclnnApplyAdamWV2GetWorkspaceSize(
	aclTensor *varRef, aclTensor *mRef, aclTensor *vRef, aclTensor *maxGradNormOptionalRef,
	const aclTensor *grad, const aclTensor *step, float lr, float beta1, float beta2,
	float weightDecay, float eps, bool amsgrad, bool maximize, uint64_t *workspaceSize,
	aclOpExecutor **executor)
{
	NPU_API_ENTER();
	aclnnStatus check = NEED(step);

	(void)maxGradNormOptionalRef;
	(void)weightDecay;
	(void)amsgrad;
	(void)maximize;
	if (!check &&
	    (!(lr >= 0) || !(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1) || !(eps >= 0)))
		check = ACLNN_ERR_PARAM_INVALID;
	return gws1(__func__, npu_api_t0, OP_APPLY_ADAMW_V2, check, T(varRef, mRef, vRef, grad), 4,
		    T(varRef, mRef, vRef), 3, 0, workspaceSize, executor);
}
ACLNN_RUN(aclnnApplyAdamWV2)

/* One kernel over every tensor of the list (torch._foreach_mul_(tensors, scalar)). */
NPU_NOINLINE aclnnStatus aclnnForeachMulScalarGetWorkspaceSize(const aclTensorList *x,
							       const aclTensor *scalar,
							       const aclTensorList *out,
							       uint64_t *workspaceSize,
							       aclOpExecutor **executor)
{
	struct npu_op_cost k, one;
	uint64_t n = NnopbaseTensorListSize(x);
	aclnnStatus r = ACLNN_SUCCESS;
	NPU_API_ENTER();

	if (!x || !scalar || !out) {
		r = ACLNN_ERR_PARAM_NULLPTR;
		goto done;
	}
	if (!n || NnopbaseTensorListSize(out) != n) {
		r = ACLNN_ERR_PARAM_INVALID;
		goto done;
	}
	memset(&k, 0, sizeof(k));
	for (uint64_t i = 0; i < n && !r; i++) {
		const aclTensor *a = NnopbaseTensorListGet(x, i);
		const aclTensor *b = NnopbaseTensorListGet(out, i);

		r = cost_of("ForeachMulScalar", T(a), 1, T(b), 1, &one);
		if (!r) {
			if (!i)
				k = one;
			else {
				k.flops += one.flops;
				k.bytes += one.bytes;
			}
		}
	}
	if (!r) {
		k.block_dim = NPU_AIV_CORES;
		r = plan("aclnnForeachMulScalar", 0, &k, 1, workspaceSize, executor);
	}
done:
	GWS_EXIT("aclnnForeachMulScalar", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnForeachMulScalar)

/* ---- an AI CPU op ---------------------------------------------------------------------------- */

ACLNN_GWS_UNARY(aclnnNonzero, OP_NONZERO)
ACLNN_RUN(aclnnNonzero)
