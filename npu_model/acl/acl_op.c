// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * acl_op.c - libascendcl.so's own part: the operator descriptions
 * (aclTensorDesc, aclDataBuffer, aclopAttr) the aclop path uses.  The
 * aclInit / aclrt* API is libacl_rt.so's (acl.c); libascendcl.so forwards
 * it there (compat.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl_priv.h"
#include "npu_acl.h"
#include "npu_api_journal.h"

/* ---- operator descriptions (acl_op.h) --------------------------------------------------- */

NPU_NOINLINE size_t aclDataTypeSize(aclDataType dataType)
{
	return npu_acl_dtype_size(dataType);
}

NPU_NOINLINE aclTensorDesc *aclCreateTensorDesc(aclDataType dataType, int numDims,
						const int64_t *dims, aclFormat format)
{
	struct aclTensorDesc *d;

	if (numDims < 0 || numDims > ACL_MAX_DIMS || (numDims && !dims) ||
	    !aclDataTypeSize(dataType))
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->dtype = dataType;
	d->format = format;
	d->ndim = numDims;
	for (int i = 0; i < numDims; i++) {
		if (dims[i] < 0) {
			free(d);
			return NULL;
		}
		d->dims[i] = dims[i];
	}
	return d;
}

NPU_NOINLINE void aclDestroyTensorDesc(const aclTensorDesc *desc)
{
	free((void *)desc);
	NPU_BARRIER();
}

NPU_NOINLINE size_t aclGetTensorDescNumDims(const aclTensorDesc *desc)
{
	return desc ? (size_t)desc->ndim : 0;
}

NPU_NOINLINE int64_t aclGetTensorDescDim(const aclTensorDesc *desc, size_t index)
{
	return (desc && index < (size_t)desc->ndim) ? desc->dims[index] : -1;
}

NPU_NOINLINE aclDataType aclGetTensorDescType(const aclTensorDesc *desc)
{
	return desc ? desc->dtype : ACL_DT_UNDEFINED;
}

NPU_NOINLINE aclDataBuffer *aclCreateDataBuffer(void *data, size_t size)
{
	struct aclDataBuffer *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->data = data;
	b->size = size;
	return b;
}

NPU_NOINLINE aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer)
{
	if (!dataBuffer)
		return ACL_ERROR_INVALID_PARAM;
	free((void *)dataBuffer);
	return ACL_SUCCESS;
}

NPU_NOINLINE aclopAttr *aclopCreateAttr(void)
{
	return calloc(1, sizeof(struct aclopAttr));
}

NPU_NOINLINE void aclopDestroyAttr(const aclopAttr *attr)
{
	free((void *)attr);
	NPU_BARRIER();
}

static aclError attr_set(aclopAttr *attr, const char *name, double v)
{
	if (!attr || !name || !*name)
		return ACL_ERROR_INVALID_PARAM;
	for (int i = 0; i < attr->n; i++) {
		if (!strcmp(attr->names[i], name)) {
			attr->values[i] = v;
			return ACL_SUCCESS;
		}
	}
	if (attr->n == ACL_MAX_ATTRS)
		return ACL_ERROR_STORAGE_OVER_LIMIT;
	strncpy(attr->names[attr->n], name, sizeof(attr->names[0]) - 1);
	attr->values[attr->n++] = v;
	return ACL_SUCCESS;
}

NPU_NOINLINE aclError aclopSetAttrFloat(aclopAttr *attr, const char *attrName, float attrValue)
{
	return attr_set(attr, attrName, attrValue);
}

NPU_NOINLINE aclError aclopSetAttrInt(aclopAttr *attr, const char *attrName, int64_t attrValue)
{
	return attr_set(attr, attrName, (double)attrValue);
}
