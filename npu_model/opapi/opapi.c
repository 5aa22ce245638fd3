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

#define GWS_EXIT(op, r, workspaceSize)							\
	NPU_API_EXIT("cann", r, "\top=" op "\tws=%llu",					\
		     (unsigned long long)((r) || !(workspaceSize) ? 0 : *(workspaceSize)))

/* Phase 2 of every op: the same body, its own exported symbol. */
#define ACLNN_RUN(fn)									\
	NPU_NOINLINE aclnnStatus fn(void *workspace, uint64_t workspaceSize,		\
				    aclOpExecutor *executor, aclrtStream stream)	\
	{										\
		aclnnStatus r;								\
		NPU_API_ENTER();							\
		r = NnopbaseExecutorRunWithWorkspace(executor, workspace, workspaceSize, \
						     stream);				\
		NPU_API_EXIT("cann", r, "\top=" #fn "\tws=%llu\tstream=%p",		\
			     (unsigned long long)workspaceSize, stream);		\
		return r;								\
	}

/* ---- elementwise and activations --------------------------------------------------------- */

NPU_NOINLINE aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
						  const aclScalar *alpha, aclTensor *out,
						  uint64_t *workspaceSize, aclOpExecutor **executor)
{
	aclnnStatus r;
	NPU_API_ENTER();

	r = alpha ? plan1("aclnnAdd", "Add", T(self, other), 2, T(out), 1, 0, workspaceSize,
			  executor)
		  : ACLNN_ERR_PARAM_NULLPTR;
	GWS_EXIT("aclnnAdd", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnAdd)

NPU_NOINLINE aclnnStatus aclnnMulGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
						  aclTensor *out, uint64_t *workspaceSize,
						  aclOpExecutor **executor)
{
	aclnnStatus r;
	NPU_API_ENTER();

	r = plan1("aclnnMul", "Mul", T(self, other), 2, T(out), 1, 0, workspaceSize, executor);
	GWS_EXIT("aclnnMul", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnMul)

NPU_NOINLINE aclnnStatus aclnnReluGetWorkspaceSize(const aclTensor *self, aclTensor *out,
						   uint64_t *workspaceSize,
						   aclOpExecutor **executor)
{
	aclnnStatus r;
	NPU_API_ENTER();

	r = plan1("aclnnRelu", "Relu", T(self), 1, T(out), 1, 0, workspaceSize, executor);
	GWS_EXIT("aclnnRelu", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnRelu)

NPU_NOINLINE aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(const aclTensor *gradOutput,
								const aclTensor *self,
								const aclScalar *threshold,
								aclTensor *gradInput,
								uint64_t *workspaceSize,
								aclOpExecutor **executor)
{
	aclnnStatus r;
	NPU_API_ENTER();

	r = threshold ? plan1("aclnnThresholdBackward", "ReluGrad", T(gradOutput, self), 2,
			      T(gradInput), 1, 0, workspaceSize, executor)
		      : ACLNN_ERR_PARAM_NULLPTR;
	GWS_EXIT("aclnnThresholdBackward", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnThresholdBackward)

NPU_NOINLINE aclnnStatus aclnnGeluGetWorkspaceSize(const aclTensor *self, aclTensor *out,
						   uint64_t *workspaceSize,
						   aclOpExecutor **executor)
{
	aclnnStatus r;
	NPU_API_ENTER();

	r = plan1("aclnnGelu", "Gelu", T(self), 1, T(out), 1, 0, workspaceSize, executor);
	GWS_EXIT("aclnnGelu", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnGelu)

NPU_NOINLINE aclnnStatus aclnnGeluBackwardGetWorkspaceSize(const aclTensor *gradOutput,
							   const aclTensor *self,
							   aclTensor *gradInput,
							   uint64_t *workspaceSize,
							   aclOpExecutor **executor)
{
	aclnnStatus r;
	NPU_API_ENTER();

	r = plan1("aclnnGeluBackward", "GeluGrad", T(gradOutput, self), 2, T(gradInput), 1, 0,
		  workspaceSize, executor);
	GWS_EXIT("aclnnGeluBackward", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnGeluBackward)

NPU_NOINLINE aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim,
						      aclTensor *out, uint64_t *workspaceSize,
						      aclOpExecutor **executor)
{
	struct npu_shape s;
	aclnnStatus r;
	NPU_API_ENTER();

	if (self && !NnopbaseTensorShape(self, &s) && (dim >= s.ndim || dim < -s.ndim))
		r = ACLNN_ERR_PARAM_INVALID;
	else
		r = plan1("aclnnSoftmax", "SoftmaxV2", T(self), 1, T(out), 1, 0, workspaceSize,
			  executor);
	GWS_EXIT("aclnnSoftmax", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnSoftmax)

NPU_NOINLINE aclnnStatus aclnnSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput,
							      const aclTensor *output, int64_t dim,
							      aclTensor *gradInput,
							      uint64_t *workspaceSize,
							      aclOpExecutor **executor)
{
	aclnnStatus r;
	NPU_API_ENTER();

	(void)dim;
	r = plan1("aclnnSoftmaxBackward", "SoftmaxGrad", T(gradOutput, output), 2, T(gradInput),
		  1, 0, workspaceSize, executor);
	GWS_EXIT("aclnnSoftmaxBackward", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnSoftmaxBackward)

NPU_NOINLINE aclnnStatus aclnnCastGetWorkspaceSize(const aclTensor *self, const aclDataType dtype,
						   aclTensor *out, uint64_t *workspaceSize,
						   aclOpExecutor **executor)
{
	aclnnStatus r;
	NPU_API_ENTER();

	r = (dtype == ACL_DT_UNDEFINED) ? ACLNN_ERR_PARAM_INVALID
		: plan1("aclnnCast", "Cast", T(self), 1, T(out), 1, 0, workspaceSize, executor);
	GWS_EXIT("aclnnCast", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnCast)

NPU_NOINLINE aclnnStatus aclnnSqrtGetWorkspaceSize(const aclTensor *self, aclTensor *out,
						   uint64_t *workspaceSize,
						   aclOpExecutor **executor)
{
	aclnnStatus r;
	NPU_API_ENTER();

	r = plan1("aclnnSqrt", "Sqrt", T(self), 1, T(out), 1, 0, workspaceSize, executor);
	GWS_EXIT("aclnnSqrt", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnSqrt)

/* ---- in-place optimizer arithmetic (torch.optim AdamW, foreach=False) --------------------- */

NPU_NOINLINE aclnnStatus aclnnInplaceMulsGetWorkspaceSize(aclTensor *selfRef,
							  const aclScalar *other,
							  uint64_t *workspaceSize,
							  aclOpExecutor **executor)
{
	aclnnStatus r;
	NPU_API_ENTER();

	r = other ? plan1("aclnnInplaceMuls", "Muls", T(selfRef), 1, T(selfRef), 1, 0,
			  workspaceSize, executor)
		  : ACLNN_ERR_PARAM_NULLPTR;
	GWS_EXIT("aclnnInplaceMuls", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnInplaceMuls)

NPU_NOINLINE aclnnStatus aclnnInplaceAddsGetWorkspaceSize(aclTensor *selfRef,
							  const aclScalar *other,
							  const aclScalar *alpha,
							  uint64_t *workspaceSize,
							  aclOpExecutor **executor)
{
	aclnnStatus r;
	NPU_API_ENTER();

	r = (other && alpha) ? plan1("aclnnInplaceAdds", "Adds", T(selfRef), 1, T(selfRef), 1, 0,
				     workspaceSize, executor)
			     : ACLNN_ERR_PARAM_NULLPTR;
	GWS_EXIT("aclnnInplaceAdds", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnInplaceAdds)

NPU_NOINLINE aclnnStatus aclnnInplaceAddcmulGetWorkspaceSize(aclTensor *selfRef,
							     const aclTensor *tensor1,
							     const aclTensor *tensor2,
							     const aclScalar *value,
							     uint64_t *workspaceSize,
							     aclOpExecutor **executor)
{
	aclnnStatus r;
	NPU_API_ENTER();

	r = value ? plan1("aclnnInplaceAddcmul", "Addcmul", T(selfRef, tensor1, tensor2), 3,
			  T(selfRef), 1, 0, workspaceSize, executor)
		  : ACLNN_ERR_PARAM_NULLPTR;
	GWS_EXIT("aclnnInplaceAddcmul", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnInplaceAddcmul)

NPU_NOINLINE aclnnStatus aclnnInplaceAddcdivGetWorkspaceSize(aclTensor *selfRef,
							     const aclTensor *tensor1,
							     const aclTensor *tensor2,
							     const aclScalar *value,
							     uint64_t *workspaceSize,
							     aclOpExecutor **executor)
{
	aclnnStatus r;
	NPU_API_ENTER();

	r = value ? plan1("aclnnInplaceAddcdiv", "Addcdiv", T(selfRef, tensor1, tensor2), 3,
			  T(selfRef), 1, 0, workspaceSize, executor)
		  : ACLNN_ERR_PARAM_NULLPTR;
	GWS_EXIT("aclnnInplaceAddcdiv", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnInplaceAddcdiv)

/* ---- matrix products -------------------------------------------------------------------- */

NPU_NOINLINE aclnnStatus aclnnMatmulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2,
						     aclTensor *out, int8_t cubeMathType,
						     uint64_t *workspaceSize,
						     aclOpExecutor **executor)
{
	struct npu_shape s;
	aclnnStatus r;
	NPU_API_ENTER();

	(void)cubeMathType;
	r = (self && !NnopbaseTensorShape(self, &s) && s.ndim > 2)
		? plan1("aclnnMatmul", "BatchMatMulV2", T(self, mat2), 2, T(out), 1, 0,
			workspaceSize, executor)
		: plan1("aclnnMatmul", "MatMulV2", T(self, mat2), 2, T(out), 1, 0, workspaceSize,
			executor);
	GWS_EXIT("aclnnMatmul", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnMatmul)

/* out = beta * self + alpha * (mat1 @ mat2): the bias add is fused into MatMulV2. */
NPU_NOINLINE aclnnStatus aclnnAddmmGetWorkspaceSize(const aclTensor *self, const aclTensor *mat1,
						    const aclTensor *mat2, const aclScalar *beta,
						    const aclScalar *alpha, aclTensor *out,
						    int8_t cubeMathType, uint64_t *workspaceSize,
						    aclOpExecutor **executor)
{
	aclnnStatus r;
	NPU_API_ENTER();

	(void)cubeMathType;
	r = (beta && alpha && self) ? plan1("aclnnAddmm", "MatMulV2", T(mat1, mat2, self), 3,
					    T(out), 1, 0, workspaceSize, executor)
				    : ACLNN_ERR_PARAM_NULLPTR;
	GWS_EXIT("aclnnAddmm", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnAddmm)

/* ---- normalization ------------------------------------------------------------------------ */

NPU_NOINLINE aclnnStatus aclnnLayerNormGetWorkspaceSize(const aclTensor *input,
							const aclIntArray *normalizedShape,
							const aclTensor *weightOptional,
							const aclTensor *biasOptional, double eps,
							aclTensor *out, aclTensor *meanOutOptional,
							aclTensor *rstdOutOptional,
							uint64_t *workspaceSize,
							aclOpExecutor **executor)
{
	aclnnStatus r;
	NPU_API_ENTER();

	(void)weightOptional;
	(void)biasOptional;
	(void)meanOutOptional;
	(void)rstdOutOptional;
	r = !normalizedShape ? ACLNN_ERR_PARAM_NULLPTR
	    : !(eps > 0) ? ACLNN_ERR_PARAM_INVALID
	    : plan1("aclnnLayerNorm", "LayerNormV3", T(input), 1, T(out), 1, 0, workspaceSize,
		    executor);
	GWS_EXIT("aclnnLayerNorm", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnLayerNorm)

NPU_NOINLINE aclnnStatus aclnnLayerNormBackwardGetWorkspaceSize(
	const aclTensor *gradOut, const aclTensor *input, const aclIntArray *normalizedShape,
	const aclTensor *mean, const aclTensor *rstd, const aclTensor *weightOptional,
	const aclTensor *biasOptional, const aclBoolArray *outputMask, aclTensor *gradInputOut,
	aclTensor *gradWeightOut, aclTensor *gradBiasOut, uint64_t *workspaceSize,
	aclOpExecutor **executor)
{
	aclnnStatus r;
	NPU_API_ENTER();

	(void)mean;
	(void)rstd;
	(void)weightOptional;
	(void)biasOptional;
	(void)gradWeightOut;
	(void)gradBiasOut;
	r = (!normalizedShape || !outputMask) ? ACLNN_ERR_PARAM_NULLPTR
		: plan1("aclnnLayerNormBackward", "LayerNormGradV3", T(gradOut, input), 2,
			T(gradInputOut), 1, 0, workspaceSize, executor);
	GWS_EXIT("aclnnLayerNormBackward", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnLayerNormBackward)

NPU_NOINLINE aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor *self,
							const aclIntArray *dim,
							bool keepDim, aclDataType dtype,
							aclTensor *out, uint64_t *workspaceSize,
							aclOpExecutor **executor)
{
	aclnnStatus r;
	NPU_API_ENTER();

	(void)keepDim;
	(void)dtype;
	r = dim ? plan1("aclnnReduceSum", "ReduceSum", T(self), 1, T(out), 1, 0, workspaceSize,
			executor)
		: ACLNN_ERR_PARAM_NULLPTR;
	GWS_EXIT("aclnnReduceSum", r, workspaceSize);
	return r;
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
	aclnnStatus r;
	NPU_API_ENTER();

	(void)bias;
	(void)outputPadding;
	(void)cubeMathType;
	if (!stride || !padding || !dilation)
		r = ACLNN_ERR_PARAM_NULLPTR;
	else if (transposed || groups < 1)
		r = ACLNN_ERR_PARAM_INVALID;	/* the model has no transposed conv */
	else
		r = plan1("aclnnConvolution", "Conv2D", T(input, weight), 2, T(output), 1,
			  conv_workspace(input), workspaceSize, executor);
	GWS_EXIT("aclnnConvolution", r, workspaceSize);
	return r;
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
		r = cost_of("Conv2DBackpropFilter", T(input, weight, gradOutput), 3,
			    T(gradWeight), 1, &k[nk++]);
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

NPU_NOINLINE aclnnStatus aclnnNpuFormatCastGetWorkspaceSize(const aclTensor *srcTensor,
							    aclTensor *dstTensor,
							    uint64_t *workspaceSize,
							    aclOpExecutor **executor)
{
	aclnnStatus r;
	NPU_API_ENTER();

	r = plan1("aclnnNpuFormatCast", "TransData", T(srcTensor), 1, T(dstTensor), 1, 0,
		  workspaceSize, executor);
	GWS_EXIT("aclnnNpuFormatCast", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnNpuFormatCast)

/* ---- fused and multi-tensor optimizer ops ---------------------------------------------------- */

/* torch_npu's fused AdamW (torch_npu.optim.NpuFusedAdamW / _fused_adamw_ on NPU). */
NPU_NOINLINE aclnnStatus aclnnApplyAdamWV2GetWorkspaceSize(
	aclTensor *varRef, aclTensor *mRef, aclTensor *vRef, aclTensor *maxGradNormOptionalRef,
	const aclTensor *grad, const aclTensor *step, float lr, float beta1, float beta2,
	float weightDecay, float eps, bool amsgrad, bool maximize, uint64_t *workspaceSize,
	aclOpExecutor **executor)
{
	aclnnStatus r;
	NPU_API_ENTER();

	(void)maxGradNormOptionalRef;
	(void)weightDecay;
	(void)amsgrad;
	(void)maximize;
	if (!step)
		r = ACLNN_ERR_PARAM_NULLPTR;
	else if (!(lr >= 0) || !(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1) ||
		 !(eps >= 0))
		r = ACLNN_ERR_PARAM_INVALID;
	else
		r = plan1("aclnnApplyAdamWV2", "ApplyAdamW", T(varRef, mRef, vRef, grad), 4,
			  T(varRef, mRef, vRef), 3, 0, workspaceSize, executor);
	GWS_EXIT("aclnnApplyAdamWV2", r, workspaceSize);
	return r;
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

NPU_NOINLINE aclnnStatus aclnnNonzeroGetWorkspaceSize(const aclTensor *self, aclTensor *out,
						      uint64_t *workspaceSize,
						      aclOpExecutor **executor)
{
	aclnnStatus r;
	NPU_API_ENTER();

	r = plan1("aclnnNonzero", "NonZero", T(self), 1, T(out), 1, 0, workspaceSize, executor);
	GWS_EXIT("aclnnNonzero", r, workspaceSize);
	return r;
}
ACLNN_RUN(aclnnNonzero)
