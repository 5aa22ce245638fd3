/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * acl_priv.h - layouts of AscendCL's opaque operator descriptions, shared
 * by libascendcl.so (which creates them) and libacl_op_compiler.so (which
 * reads them in aclopCompileAndExecute).  Not an API.
 */
#ifndef __NPU_MODEL_ACL_PRIV_H
#define __NPU_MODEL_ACL_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "npu_acl.h"

#define ACL_MAX_DIMS  8
#define ACL_MAX_ATTRS 16

struct aclTensorDesc {
	aclDataType dtype;
	aclFormat format;
	int ndim;
	int64_t dims[ACL_MAX_DIMS];
};

struct aclDataBuffer {
	void *data;
	size_t size;
};

struct aclopAttr {
	int n;
	char names[ACL_MAX_ATTRS][32];
	double values[ACL_MAX_ATTRS];
};

#endif /* __NPU_MODEL_ACL_PRIV_H */
