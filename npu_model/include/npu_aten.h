/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * npu_aten.h - the aten operator entry points libtorch_cpu.so exports, with
 * their PyTorch (mangled) names; C prototypes ABI-identical to the C++ ones
 * (npu_torch.h explains the mapping).  Generated from aten/aten.c; the short
 * aliases (NPU_ATEN_ADD_TENSOR, ...) keep callers readable.
 */
#ifndef __NPU_MODEL_ATEN_H
#define __NPU_MODEL_ATEN_H

#include <stdbool.h>
#include <stdint.h>

#include "npu_torch.h"

#ifdef __cplusplus
extern "C" {
#endif

struct at_tensor *_ZN2at4_ops10add_Tensor4callERKNS_6TensorES4_RKN3c106ScalarE(
	struct at_tensor *ret, const struct at_tensor *self, const struct at_tensor *other,
	const struct c10_scalar *alpha);
struct at_tensor *_ZN2at4_ops10mul_Tensor4callERKNS_6TensorES4_(struct at_tensor *ret,
								const struct at_tensor *self,
								const struct at_tensor *other);
struct at_tensor *_ZN2at4_ops2mm4callERKNS_6TensorES4_(struct at_tensor *ret,
						       const struct at_tensor *self,
						       const struct at_tensor *mat2);
struct at_tensor *_ZN2at4_ops5addmm4callERKNS_6TensorES4_S4_RKN3c106ScalarES8_(
	struct at_tensor *ret, const struct at_tensor *self, const struct at_tensor *mat1,
	const struct at_tensor *mat2, const struct c10_scalar *beta,
	const struct c10_scalar *alpha);
struct at_tensor *_ZN2at4_ops1t4callERKNS_6TensorE(struct at_tensor *ret,
						   const struct at_tensor *self);
struct at_tensor *_ZN2at4_ops4view4callERKNS_6TensorEN3c108ArrayRefIlEE(
	struct at_tensor *ret, const struct at_tensor *self, struct c10_int_array_ref size);
struct at_tensor *_ZN2at4_ops4relu4callERKNS_6TensorE(struct at_tensor *ret,
						      const struct at_tensor *self);
struct at_tensor *_ZN2at4_ops18threshold_backward4callERKNS_6TensorES4_RKN3c106ScalarE(
	struct at_tensor *ret, const struct at_tensor *grad_output, const struct at_tensor *self,
	const struct c10_scalar *threshold);
struct at_tensor *_ZN2at4_ops4gelu4callERKNS_6TensorEN3c1017basic_string_viewIcEE(
	struct at_tensor *ret, const struct at_tensor *self, struct c10_string_view approximate);
struct at_tensor *_ZN2at4_ops13gelu_backward4callERKNS_6TensorES4_N3c1017basic_string_viewIcEE(
	struct at_tensor *ret, const struct at_tensor *grad_output, const struct at_tensor *self,
	struct c10_string_view approximate);
struct at_tensor *_ZN2at4_ops8_softmax4callERKNS_6TensorElb(struct at_tensor *ret,
							    const struct at_tensor *self,
							    int64_t dim, bool half_to_float);
struct at_tensor *_ZN2at4_ops22_softmax_backward_data4callERKNS_6TensorES4_lN3c1010ScalarTypeE(
	struct at_tensor *ret, const struct at_tensor *grad_output, const struct at_tensor *output,
	int64_t dim, int8_t input_dtype);
struct at_tensor3 *
_ZN2at4_ops17native_layer_norm4callERKNS_6TensorEN3c108ArrayRefIlEERKNS5_8optionalIS2_EESB_d(
	struct at_tensor3 *ret, const struct at_tensor *input,
	struct c10_int_array_ref normalized_shape, const struct c10_optional_tensor *weight,
	const struct c10_optional_tensor *bias, double eps);
struct at_tensor3 *
_ZN2at4_ops26native_layer_norm_backward4callERKNS_6TensorES4_N3c108ArrayRefIlEES4_S4_RKNS5_8optionalIS2_EESB_St5arrayIbLm3EE(
	struct at_tensor3 *ret, const struct at_tensor *grad_out, const struct at_tensor *input,
	struct c10_int_array_ref normalized_shape, const struct at_tensor *mean,
	const struct at_tensor *rstd, const struct c10_optional_tensor *weight,
	const struct c10_optional_tensor *bias, struct std_array_bool3 output_mask);
struct at_tensor *
_ZN2at4_ops11convolution4callERKNS_6TensorES4_RKN3c108optionalIS2_EENS5_8ArrayRefIlEESB_SB_bSB_l(
	struct at_tensor *ret, const struct at_tensor *input, const struct at_tensor *weight,
	const struct c10_optional_tensor *bias, struct c10_int_array_ref stride,
	struct c10_int_array_ref padding, struct c10_int_array_ref dilation, bool transposed,
	struct c10_int_array_ref output_padding, int64_t groups);
struct at_tensor3 *
_ZN2at4_ops20convolution_backward4callERKNS_6TensorES4_S4_N3c108optionalINS5_8ArrayRefIlEEEES8_S8_S8_bS8_lSt5arrayIbLm3EE(
	struct at_tensor3 *ret, const struct at_tensor *grad_output, const struct at_tensor *input,
	const struct at_tensor *weight, struct c10_optional_int_array bias_sizes,
	struct c10_int_array_ref stride, struct c10_int_array_ref padding,
	struct c10_int_array_ref dilation, bool transposed, struct c10_int_array_ref output_padding,
	int64_t groups, struct std_array_bool3 output_mask);
struct at_tensor *
_ZN2at4_ops19empty_memory_format4callEN3c108ArrayRefIlEENS2_8optionalINS2_10ScalarTypeEEENS5_INS2_6LayoutEEENS5_INS2_6DeviceEEENS5_IbEENS5_INS2_12MemoryFormatEEE(
	struct at_tensor *ret, struct c10_int_array_ref size, struct c10_optional_scalar_type dtype,
	uint16_t layout, uint32_t device, uint16_t pin_memory, uint16_t memory_format);
struct at_tensor *_ZN2at4_ops5copy_4callERNS_6TensorERKS2_b(struct at_tensor *self,
							    const struct at_tensor *src,
							    bool non_blocking);
struct at_tensor *
_ZN2at4_ops8_to_copy4callERKNS_6TensorEN3c108optionalINS5_10ScalarTypeEEENS6_INS5_6LayoutEEENS6_INS5_6DeviceEEENS6_IbEEbNS6_INS5_12MemoryFormatEEE(
	struct at_tensor *ret, const struct at_tensor *self, struct c10_optional_scalar_type dtype,
	uint16_t layout, uint32_t device, uint16_t pin_memory, bool non_blocking,
	uint16_t memory_format);
struct at_tensor *
_ZN2at4_ops15sum_dim_IntList4callERKNS_6TensorEN3c108optionalINS5_8ArrayRefIlEEEEbNS6_INS5_10ScalarTypeEEE(
	struct at_tensor *ret, const struct at_tensor *self, struct c10_optional_int_array dim,
	bool keepdim, struct c10_optional_scalar_type dtype);
struct at_tensor *_ZN2at4_ops4sqrt4callERKNS_6TensorE(struct at_tensor *ret,
						      const struct at_tensor *self);
struct at_tensor *_ZN2at4_ops7nonzero4callERKNS_6TensorE(struct at_tensor *ret,
							 const struct at_tensor *self);
struct at_tensor *
_ZN2at4_ops11mul__Scalar4callERNS_6TensorERKN3c106ScalarE(struct at_tensor *self,
							  const struct c10_scalar *other);
struct at_tensor *_ZN2at4_ops11add__Scalar4callERNS_6TensorERKN3c106ScalarES7_(
	struct at_tensor *self, const struct c10_scalar *other, const struct c10_scalar *alpha);
struct at_tensor *_ZN2at4_ops8addcmul_4callERNS_6TensorERKS2_S5_RKN3c106ScalarE(
	struct at_tensor *self, const struct at_tensor *t1, const struct at_tensor *t2,
	const struct c10_scalar *value);
struct at_tensor *_ZN2at4_ops8addcdiv_4callERNS_6TensorERKS2_S5_RKN3c106ScalarE(
	struct at_tensor *self, const struct at_tensor *t1, const struct at_tensor *t2,
	const struct c10_scalar *value);
void _ZN2at4_ops20_foreach_mul__Scalar4callEN3c108ArrayRefINS_6TensorEEERKNS2_6ScalarE(
	struct c10_tensor_list self, const struct c10_scalar *scalar);
void _ZN2at4_ops13_fused_adamw_4callEN3c108ArrayRefINS_6TensorEEES5_S5_S5_S5_S5_dddddbbRKNS2_8optionalIS4_EES9_(
	struct c10_tensor_list self, struct c10_tensor_list grads, struct c10_tensor_list exp_avgs,
	struct c10_tensor_list exp_avg_sqs, struct c10_tensor_list max_exp_avg_sqs,
	struct c10_tensor_list state_steps, double lr, double beta1, double beta2,
	double weight_decay, double eps, bool amsgrad, bool maximize,
	const struct c10_optional_tensor *grad_scale, const struct c10_optional_tensor *found_inf);

#define NPU_ATEN_ADD_TENSOR _ZN2at4_ops10add_Tensor4callERKNS_6TensorES4_RKN3c106ScalarE
#define NPU_ATEN_MUL_TENSOR _ZN2at4_ops10mul_Tensor4callERKNS_6TensorES4_
#define NPU_ATEN_MM	    _ZN2at4_ops2mm4callERKNS_6TensorES4_
#define NPU_ATEN_ADDMM	    _ZN2at4_ops5addmm4callERKNS_6TensorES4_S4_RKN3c106ScalarES8_
#define NPU_ATEN_T	    _ZN2at4_ops1t4callERKNS_6TensorE
#define NPU_ATEN_VIEW	    _ZN2at4_ops4view4callERKNS_6TensorEN3c108ArrayRefIlEE
#define NPU_ATEN_RELU	    _ZN2at4_ops4relu4callERKNS_6TensorE
#define NPU_ATEN_THRESHOLD_BACKWARD \
	_ZN2at4_ops18threshold_backward4callERKNS_6TensorES4_RKN3c106ScalarE
#define NPU_ATEN_GELU _ZN2at4_ops4gelu4callERKNS_6TensorEN3c1017basic_string_viewIcEE
#define NPU_ATEN_GELU_BACKWARD \
	_ZN2at4_ops13gelu_backward4callERKNS_6TensorES4_N3c1017basic_string_viewIcEE
#define NPU_ATEN_SOFTMAX _ZN2at4_ops8_softmax4callERKNS_6TensorElb
#define NPU_ATEN_SOFTMAX_BACKWARD_DATA \
	_ZN2at4_ops22_softmax_backward_data4callERKNS_6TensorES4_lN3c1010ScalarTypeE
#define NPU_ATEN_NATIVE_LAYER_NORM \
	_ZN2at4_ops17native_layer_norm4callERKNS_6TensorEN3c108ArrayRefIlEERKNS5_8optionalIS2_EESB_d
#define NPU_ATEN_NATIVE_LAYER_NORM_BACKWARD \
	_ZN2at4_ops26native_layer_norm_backward4callERKNS_6TensorES4_N3c108ArrayRefIlEES4_S4_RKNS5_8optionalIS2_EESB_St5arrayIbLm3EE
#define NPU_ATEN_CONVOLUTION \
	_ZN2at4_ops11convolution4callERKNS_6TensorES4_RKN3c108optionalIS2_EENS5_8ArrayRefIlEESB_SB_bSB_l
#define NPU_ATEN_CONVOLUTION_BACKWARD \
	_ZN2at4_ops20convolution_backward4callERKNS_6TensorES4_S4_N3c108optionalINS5_8ArrayRefIlEEEES8_S8_S8_bS8_lSt5arrayIbLm3EE
#define NPU_ATEN_EMPTY_MEMORY_FORMAT \
	_ZN2at4_ops19empty_memory_format4callEN3c108ArrayRefIlEENS2_8optionalINS2_10ScalarTypeEEENS5_INS2_6LayoutEEENS5_INS2_6DeviceEEENS5_IbEENS5_INS2_12MemoryFormatEEE
#define NPU_ATEN_COPY _ZN2at4_ops5copy_4callERNS_6TensorERKS2_b
#define NPU_ATEN_TO_COPY \
	_ZN2at4_ops8_to_copy4callERKNS_6TensorEN3c108optionalINS5_10ScalarTypeEEENS6_INS5_6LayoutEEENS6_INS5_6DeviceEEENS6_IbEEbNS6_INS5_12MemoryFormatEEE
#define NPU_ATEN_SUM_DIM_INTLIST \
	_ZN2at4_ops15sum_dim_IntList4callERKNS_6TensorEN3c108optionalINS5_8ArrayRefIlEEEEbNS6_INS5_10ScalarTypeEEE
#define NPU_ATEN_SQRT	    _ZN2at4_ops4sqrt4callERKNS_6TensorE
#define NPU_ATEN_NONZERO    _ZN2at4_ops7nonzero4callERKNS_6TensorE
#define NPU_ATEN_MUL_SCALAR _ZN2at4_ops11mul__Scalar4callERNS_6TensorERKN3c106ScalarE
#define NPU_ATEN_ADD_SCALAR _ZN2at4_ops11add__Scalar4callERNS_6TensorERKN3c106ScalarES7_
#define NPU_ATEN_ADDCMUL    _ZN2at4_ops8addcmul_4callERNS_6TensorERKS2_S5_RKN3c106ScalarE
#define NPU_ATEN_ADDCDIV    _ZN2at4_ops8addcdiv_4callERNS_6TensorERKS2_S5_RKN3c106ScalarE
#define NPU_ATEN_FOREACH_MUL_SCALAR \
	_ZN2at4_ops20_foreach_mul__Scalar4callEN3c108ArrayRefINS_6TensorEEERKNS2_6ScalarE
#define NPU_ATEN_FUSED_ADAMW \
	_ZN2at4_ops13_fused_adamw_4callEN3c108ArrayRefINS_6TensorEEES5_S5_S5_S5_S5_dddddbbRKNS2_8optionalIS4_EES9_

#ifdef __cplusplus
}
#endif

#endif /* __NPU_MODEL_ATEN_H */
