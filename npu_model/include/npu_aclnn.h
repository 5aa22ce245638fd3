/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * npu_aclnn.h - prototypes of the aclnn operators libopapi.so exports (the
 * real CANN prototypes of aclnnop/aclnn_*.h).  libtorch_npu does not link
 * libopapi; it uses these types for the pointers dlsym() returns.
 */
#ifndef __NPU_MODEL_ACLNN_H
#define __NPU_MODEL_ACLNN_H

#include <stdbool.h>
#include <stdint.h>

#include "npu_acl.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef NPU_ACL_BOOL_ARRAY
#define NPU_ACL_BOOL_ARRAY
typedef struct aclBoolArray aclBoolArray;
#endif

aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
				     const aclScalar *alpha, aclTensor *out,
				     uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnMulGetWorkspaceSize(const aclTensor *self, const aclTensor *other, aclTensor *out,
				     uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnReluGetWorkspaceSize(const aclTensor *self, aclTensor *out,
				      uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(const aclTensor *gradOutput,
						   const aclTensor *self,
						   const aclScalar *threshold, aclTensor *gradInput,
						   uint64_t *workspaceSize,
						   aclOpExecutor **executor);
aclnnStatus aclnnGeluGetWorkspaceSize(const aclTensor *self, aclTensor *out,
				      uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnGeluBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
					      aclTensor *gradInput, uint64_t *workspaceSize,
					      aclOpExecutor **executor);
aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim, aclTensor *out,
					 uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput,
						 const aclTensor *output, int64_t dim,
						 aclTensor *gradInput, uint64_t *workspaceSize,
						 aclOpExecutor **executor);
aclnnStatus aclnnCastGetWorkspaceSize(const aclTensor *self, const aclDataType dtype,
				      aclTensor *out, uint64_t *workspaceSize,
				      aclOpExecutor **executor);
aclnnStatus aclnnSqrtGetWorkspaceSize(const aclTensor *self, aclTensor *out,
				      uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceMulsGetWorkspaceSize(aclTensor *selfRef, const aclScalar *other,
					     uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceAddsGetWorkspaceSize(aclTensor *selfRef, const aclScalar *other,
					     const aclScalar *alpha, uint64_t *workspaceSize,
					     aclOpExecutor **executor);
aclnnStatus aclnnInplaceAddcmulGetWorkspaceSize(aclTensor *selfRef, const aclTensor *tensor1,
						const aclTensor *tensor2, const aclScalar *value,
						uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnInplaceAddcdivGetWorkspaceSize(aclTensor *selfRef, const aclTensor *tensor1,
						const aclTensor *tensor2, const aclScalar *value,
						uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnMatmulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2,
					aclTensor *out, int8_t cubeMathType,
					uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnAddmmGetWorkspaceSize(const aclTensor *self, const aclTensor *mat1,
				       const aclTensor *mat2, const aclScalar *beta,
				       const aclScalar *alpha, aclTensor *out, int8_t cubeMathType,
				       uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnLayerNormGetWorkspaceSize(
	const aclTensor *input, const aclIntArray *normalizedShape, const aclTensor *weightOptional,
	const aclTensor *biasOptional, double eps, aclTensor *out, aclTensor *meanOutOptional,
	aclTensor *rstdOutOptional, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnLayerNormBackwardGetWorkspaceSize(
	const aclTensor *gradOut, const aclTensor *input, const aclIntArray *normalizedShape,
	const aclTensor *mean, const aclTensor *rstd, const aclTensor *weightOptional,
	const aclTensor *biasOptional, const aclBoolArray *outputMask, aclTensor *gradInputOut,
	aclTensor *gradWeightOut, aclTensor *gradBiasOut, uint64_t *workspaceSize,
	aclOpExecutor **executor);
aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor *self, const aclIntArray *dim,
					   bool keepDim, aclDataType dtype, aclTensor *out,
					   uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnConvolutionGetWorkspaceSize(const aclTensor *input, const aclTensor *weight,
					     const aclTensor *bias, const aclIntArray *stride,
					     const aclIntArray *padding,
					     const aclIntArray *dilation, bool transposed,
					     const aclIntArray *outputPadding, const int64_t groups,
					     aclTensor *output, int8_t cubeMathType,
					     uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnConvolutionBackwardGetWorkspaceSize(
	const aclTensor *gradOutput, const aclTensor *input, const aclTensor *weight,
	const aclIntArray *biasSizes, const aclIntArray *stride, const aclIntArray *padding,
	const aclIntArray *dilation, bool transposed, const aclIntArray *outputPadding, int groups,
	const aclBoolArray *outputMask, int8_t cubeMathType, aclTensor *gradInput,
	aclTensor *gradWeight, aclTensor *gradBias, uint64_t *workspaceSize,
	aclOpExecutor **executor);
aclnnStatus aclnnNpuFormatCastGetWorkspaceSize(const aclTensor *srcTensor, aclTensor *dstTensor,
					       uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnApplyAdamWV2GetWorkspaceSize(aclTensor *varRef, aclTensor *mRef, aclTensor *vRef,
					      aclTensor *maxGradNormOptionalRef,
					      const aclTensor *grad, const aclTensor *step,
					      float lr, float beta1, float beta2, float weightDecay,
					      float eps, bool amsgrad, bool maximize,
					      uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnForeachMulScalarGetWorkspaceSize(const aclTensorList *x, const aclTensor *scalar,
						  const aclTensorList *out, uint64_t *workspaceSize,
						  aclOpExecutor **executor);
aclnnStatus aclnnNonzeroGetWorkspaceSize(const aclTensor *self, aclTensor *out,
					 uint64_t *workspaceSize, aclOpExecutor **executor);

aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
		     aclrtStream stream);
aclnnStatus aclnnMul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
		     aclrtStream stream);
aclnnStatus aclnnRelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
		      aclrtStream stream);
aclnnStatus aclnnThresholdBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
				   aclrtStream stream);
aclnnStatus aclnnGelu(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
		      aclrtStream stream);
aclnnStatus aclnnGeluBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
			      aclrtStream stream);
aclnnStatus aclnnSoftmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
			 aclrtStream stream);
aclnnStatus aclnnSoftmaxBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
				 aclrtStream stream);
aclnnStatus aclnnCast(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
		      aclrtStream stream);
aclnnStatus aclnnSqrt(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
		      aclrtStream stream);
aclnnStatus aclnnInplaceMuls(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
			     aclrtStream stream);
aclnnStatus aclnnInplaceAdds(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
			     aclrtStream stream);
aclnnStatus aclnnInplaceAddcmul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
				aclrtStream stream);
aclnnStatus aclnnInplaceAddcdiv(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
				aclrtStream stream);
aclnnStatus aclnnMatmul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
			aclrtStream stream);
aclnnStatus aclnnAddmm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
		       aclrtStream stream);
aclnnStatus aclnnLayerNorm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
			   aclrtStream stream);
aclnnStatus aclnnLayerNormBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
				   aclrtStream stream);
aclnnStatus aclnnReduceSum(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
			   aclrtStream stream);
aclnnStatus aclnnConvolution(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
			     aclrtStream stream);
aclnnStatus aclnnConvolutionBackward(void *workspace, uint64_t workspaceSize,
				     aclOpExecutor *executor, aclrtStream stream);
aclnnStatus aclnnNpuFormatCast(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
			       aclrtStream stream);
aclnnStatus aclnnApplyAdamWV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
			      aclrtStream stream);
aclnnStatus aclnnForeachMulScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
				  aclrtStream stream);
aclnnStatus aclnnNonzero(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
			 aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* __NPU_MODEL_ACLNN_H */
