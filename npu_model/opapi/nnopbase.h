/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * nnopbase.h - what libopapi.so uses of libnnopbase.so beyond the public
 * aclnn base API (npu_acl.h): tensor shapes and the executor that holds the
 * kernels an aclnn op planned in phase 1 and launches them in phase 2.
 * The real libnnopbase exports its executor internals the same way (C++
 * op::/Nnopbase* symbols); these are npu_model's plain-C equivalents.
 */
#ifndef __NPU_MODEL_NNOPBASE_H
#define __NPU_MODEL_NNOPBASE_H

#include <stdint.h>

#include "npu_acl.h"
#include "npu_cost.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef NPU_ACL_BOOL_ARRAY
#define NPU_ACL_BOOL_ARRAY
typedef struct aclBoolArray aclBoolArray;
#endif
aclBoolArray *aclCreateBoolArray(const _Bool *value, uint64_t size);
aclnnStatus aclDestroyBoolArray(const aclBoolArray *array);

#define NNOP_MAX_KERNELS 4

/* Shape of a tensor (view dims, element size of its dtype); -EINVAL for NULL/bad. */
int NnopbaseTensorShape(const aclTensor *t, struct npu_shape *s);
/* Number of tensors in a list, and one of them. */
uint64_t NnopbaseTensorListSize(const aclTensorList *l);
const aclTensor *NnopbaseTensorListGet(const aclTensorList *l, uint64_t i);
/* Scalar as double (0 for NULL). */
double NnopbaseScalarValue(const aclScalar *s);

/* An executor for op `op_name` needing `workspace` bytes in phase 2; NULL on ENOMEM. */
aclOpExecutor *NnopbaseExecutorCreate(const char *op_name, uint64_t workspace);
/* Adds one kernel launch (in order); 0, ACLNN_ERR_INNER when full. */
aclnnStatus NnopbaseExecutorAddKernel(aclOpExecutor *ex, const struct npu_op_cost *k);
/*
 * Phase 2: launches the kernels on `stream` with aclrtLaunchKernelWithHostArgs.
 * The executor is destroyed afterwards unless aclSetAclOpExecutorRepeatable()
 * was called.  ACLNN_ERR_PARAM_NULLPTR / _INVALID for a bad executor or a
 * workspace smaller than planned; ACLNN_ERR_RUNTIME_ERROR if a launch fails.
 */
aclnnStatus NnopbaseExecutorRunWithWorkspace(aclOpExecutor *ex, void *workspace,
					     uint64_t workspace_size, aclrtStream stream);
/* The op name an executor was planned for ("aclnnAdd"), "-" if invalid. */
const char *NnopbaseExecutorOpName(const aclOpExecutor *ex);

#ifdef __cplusplus
}
#endif

#endif /* __NPU_MODEL_NNOPBASE_H */
