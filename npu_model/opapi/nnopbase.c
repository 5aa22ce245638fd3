// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nnopbase.c - libnnopbase.so: aclTensor / aclScalar / aclIntArray /
 * aclTensorList / aclBoolArray, and the aclOpExecutor that carries an aclnn
 * op from phase 1 (aclnnXxxGetWorkspaceSize, in libopapi) to phase 2
 * (aclnnXxx), where its kernels are launched through AscendCL
 * (aclrtLaunchKernelWithHostArgs, as the newest opbase does).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_acl.h"
#include "npu_api_journal.h"
#include "npu_cost.h"
#include "npu_kernel.h"
#include "npu_rt.h"
#include "opapi/nnopbase.h"

#define TENSOR_MAGIC 0x544e5352U
#define SCALAR_MAGIC 0x53434c52U
#define ARRAY_MAGIC  0x41525259U
#define LIST_MAGIC   0x4c495354U
#define BOOLS_MAGIC  0x424f4f4cU
#define EXEC_MAGIC   0x45584543U

struct aclTensor {
	uint32_t magic;
	aclDataType dtype;
	aclFormat format;
	int ndim;
	int64_t dims[NPU_OP_MAX_DIMS];
	int64_t strides[NPU_OP_MAX_DIMS];
	int64_t offset;
	void *data;
};

struct aclScalar {
	uint32_t magic;
	aclDataType dtype;
	double value;
};

struct aclIntArray {
	uint32_t magic;
	uint64_t n;
	int64_t v[];
};

struct aclBoolArray {
	uint32_t magic;
	uint64_t n;
	_Bool v[];
};

struct aclTensorList {
	uint32_t magic;
	uint64_t n;
	const aclTensor *v[];
};

struct aclOpExecutor {
	uint32_t magic;
	int repeatable;
	struct aclOpExecutor *next, *prev; /* the live list (executor_live) */
	uint64_t workspace;
	char op_name[48];
	int nr_kernels;
	struct npu_op_cost kernels[NNOP_MAX_KERNELS];
	aclrtFuncHandle funcs[NNOP_MAX_KERNELS];
};

NPU_NOINLINE aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum,
					aclDataType dataType, const int64_t *stride, int64_t offset,
					aclFormat format, const int64_t *storageDims,
					uint64_t storageDimsNum, void *tensorData)
{
	struct aclTensor *t;

	(void)storageDims;
	(void)storageDimsNum;
	if (viewDimsNum > NPU_OP_MAX_DIMS || (viewDimsNum && !viewDims) ||
	    !npu_acl_dtype_size(dataType) || offset < 0)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->magic = TENSOR_MAGIC;
	t->dtype = dataType;
	t->format = format;
	t->ndim = (int)viewDimsNum;
	t->offset = offset;
	t->data = tensorData;
	for (int i = (int)viewDimsNum - 1, st = 1; i >= 0; i--) {
		if (viewDims[i] < 0) {
			free(t);
			return NULL;
		}
		t->dims[i] = viewDims[i];
		t->strides[i] = stride ? stride[i] : st;
		st *= (int)(viewDims[i] ? viewDims[i] : 1);
	}
	return t;
}

NPU_NOINLINE aclnnStatus aclDestroyTensor(const aclTensor *tensor)
{
	if (!tensor)
		return ACLNN_SUCCESS; /* destroying NULL is allowed, as in CANN */
	if (tensor->magic != TENSOR_MAGIC)
		return ACLNN_ERR_PARAM_INVALID;
	((struct aclTensor *)tensor)->magic = 0;
	free((void *)tensor);
	return ACLNN_SUCCESS;
}

NPU_NOINLINE aclScalar *aclCreateScalar(void *value, aclDataType dataType)
{
	struct aclScalar *s;

	if (!value || !npu_acl_dtype_size(dataType))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->magic = SCALAR_MAGIC;
	s->dtype = dataType;
	/* a table: one case a line */
	// clang-format off
	switch (dataType) {
	case ACL_FLOAT: s->value = *(float *)value; break;
	case ACL_DOUBLE: s->value = *(double *)value; break;
	case ACL_INT32: s->value = *(int32_t *)value; break;
	case ACL_INT64: s->value = (double)*(int64_t *)value; break;
	case ACL_BOOL: s->value = *(_Bool *)value; break;
	default: s->value = 0; break;	/* fp16/bf16 bits are not interpreted by the model */
	}
	// clang-format on
	return s;
}

NPU_NOINLINE aclnnStatus aclDestroyScalar(const aclScalar *scalar)
{
	if (!scalar)
		return ACLNN_SUCCESS;
	if (scalar->magic != SCALAR_MAGIC)
		return ACLNN_ERR_PARAM_INVALID;
	free((void *)scalar);
	return ACLNN_SUCCESS;
}

NPU_NOINLINE aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size)
{
	struct aclIntArray *a;

	if ((size && !value) || size > 1024)
		return NULL;
	a = calloc(1, sizeof(*a) + size * sizeof(int64_t));
	if (!a)
		return NULL;
	a->magic = ARRAY_MAGIC;
	a->n = size;
	if (size)
		memcpy(a->v, value, size * sizeof(int64_t));
	return a;
}

NPU_NOINLINE aclnnStatus aclDestroyIntArray(const aclIntArray *array)
{
	if (!array)
		return ACLNN_SUCCESS;
	if (array->magic != ARRAY_MAGIC)
		return ACLNN_ERR_PARAM_INVALID;
	free((void *)array);
	return ACLNN_SUCCESS;
}

NPU_NOINLINE aclBoolArray *aclCreateBoolArray(const _Bool *value, uint64_t size)
{
	struct aclBoolArray *a;

	if ((size && !value) || size > 1024)
		return NULL;
	a = calloc(1, sizeof(*a) + size);
	if (!a)
		return NULL;
	a->magic = BOOLS_MAGIC;
	a->n = size;
	if (size)
		memcpy(a->v, value, size);
	return a;
}

NPU_NOINLINE aclnnStatus aclDestroyBoolArray(const aclBoolArray *array)
{
	if (!array)
		return ACLNN_SUCCESS;
	if (array->magic != BOOLS_MAGIC)
		return ACLNN_ERR_PARAM_INVALID;
	free((void *)array);
	return ACLNN_SUCCESS;
}

NPU_NOINLINE aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size)
{
	struct aclTensorList *l;

	if ((size && !value) || size > 65536)
		return NULL;
	for (uint64_t i = 0; i < size; i++)
		if (!value[i] || value[i]->magic != TENSOR_MAGIC)
			return NULL;
	l = calloc(1, sizeof(*l) + size * sizeof(l->v[0]));
	if (!l)
		return NULL;
	l->magic = LIST_MAGIC;
	l->n = size;
	for (uint64_t i = 0; i < size; i++)
		l->v[i] = value[i];
	return l;
}

/* Destroys the list and, as in CANN, the tensors in it. */
NPU_NOINLINE aclnnStatus aclDestroyTensorList(const aclTensorList *array)
{
	if (!array)
		return ACLNN_SUCCESS;
	if (array->magic != LIST_MAGIC)
		return ACLNN_ERR_PARAM_INVALID;
	for (uint64_t i = 0; i < array->n; i++)
		aclDestroyTensor(array->v[i]);
	free((void *)array);
	return ACLNN_SUCCESS;
}

/* ---- internals for libopapi ---------------------------------------------------------- */

__attribute__((visibility("default"))) int NnopbaseTensorShape(const aclTensor *t,
							       struct npu_shape *s)
{
	if (!t || t->magic != TENSOR_MAGIC || !s)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->ndim = t->ndim;
	memcpy(s->dims, t->dims, sizeof(s->dims));
	s->elem_size = (uint32_t)npu_acl_dtype_size(t->dtype);
	return 0;
}

__attribute__((visibility("default"))) uint64_t NnopbaseTensorListSize(const aclTensorList *l)
{
	return (l && l->magic == LIST_MAGIC) ? l->n : 0;
}

__attribute__((visibility("default"))) const aclTensor *
NnopbaseTensorListGet(const aclTensorList *l, uint64_t i)
{
	return (l && l->magic == LIST_MAGIC && i < l->n) ? l->v[i] : NULL;
}

__attribute__((visibility("default"))) double NnopbaseScalarValue(const aclScalar *s)
{
	return (s && s->magic == SCALAR_MAGIC) ? s->value : 0.0;
}

/*
 * The executors not yet freed.  A handle is checked against this list, not
 * by reading its memory: running a non-repeatable executor a second time
 * (CANN frees it after its run) is refused without reading freed memory.
 * Few are live at once (one per op between its two phases, plus the
 * repeatable ones), so the walk is short.
 */
static pthread_mutex_t exec_lock = PTHREAD_MUTEX_INITIALIZER;
static struct aclOpExecutor *exec_live;

static int executor_live(const aclOpExecutor *ex)
{
	const struct aclOpExecutor *e;

	if (!ex)
		return 0;
	pthread_mutex_lock(&exec_lock);
	for (e = exec_live; e && e != ex; e = e->next)
		;
	pthread_mutex_unlock(&exec_lock);
	return e && e->magic == EXEC_MAGIC;
}

__attribute__((visibility("default"))) aclOpExecutor *NnopbaseExecutorCreate(const char *op_name,
									     uint64_t workspace)
{
	struct aclOpExecutor *ex = calloc(1, sizeof(*ex));

	if (!ex)
		return NULL;
	ex->magic = EXEC_MAGIC;
	ex->workspace = workspace;
	strncpy(ex->op_name, op_name ? op_name : "-", sizeof(ex->op_name) - 1);
	pthread_mutex_lock(&exec_lock);
	ex->next = exec_live;
	if (exec_live)
		exec_live->prev = ex;
	exec_live = ex;
	pthread_mutex_unlock(&exec_lock);
	return ex;
}

__attribute__((visibility("default"))) aclnnStatus
NnopbaseExecutorAddKernel(aclOpExecutor *ex, const struct npu_op_cost *k)
{
	if (!executor_live(ex) || !k)
		return ACLNN_ERR_PARAM_NULLPTR;
	if (ex->nr_kernels == NNOP_MAX_KERNELS)
		return ACLNN_ERR_INNER;
	ex->kernels[ex->nr_kernels++] = *k;
	return ACLNN_SUCCESS;
}

__attribute__((visibility("default"))) const char *NnopbaseExecutorOpName(const aclOpExecutor *ex)
{
	return executor_live(ex) ? ex->op_name : "-";
}

/*
 * Kernel handles as opbase gets them: the kernel binary of a kernel
 * (<opp>/.../<Kernel>.o, loaded once with aclrtBinaryLoadFromFile) and its
 * function for the tiling key, aclrtBinaryGetFunctionByEntry; the second and
 * later kernels of an op by name from the process's one binary "from data",
 * aclrtBinaryGetFunction.  The model's binaries are name spaces (no file is
 * read); the kernel is called as the binary's file.
 */
#define NNOP_KERNEL_DIR "/usr/local/Ascend/cann/opp/built-in/op_impl/ai_core/tbe/kernel/ascend910b"
#define NNOP_MAX_BINS	64
static aclrtBinHandle nnop_bin;
static struct {
	char name[32];
	aclrtBinHandle bin;
} nnop_bins[NNOP_MAX_BINS];
static int nnop_nr_bins;
static pthread_mutex_t nnop_lock = PTHREAD_MUTEX_INITIALIZER;

static aclrtBinHandle kernel_bin_locked(const char *name)
{
	char path[256];
	aclrtBinHandle b = NULL;
	int i;

	for (i = 0; i < nnop_nr_bins; i++)
		if (!strcmp(nnop_bins[i].name, name))
			return nnop_bins[i].bin;
	snprintf(path, sizeof(path), "%s/%s.o", NNOP_KERNEL_DIR, name);
	if (aclrtBinaryLoadFromFile(path, NULL, &b))
		return NULL;
	if (nnop_nr_bins < NNOP_MAX_BINS && strlen(name) < sizeof(nnop_bins[0].name)) {
		snprintf(nnop_bins[nnop_nr_bins].name, sizeof(nnop_bins[0].name), "%s", name);
		nnop_bins[nnop_nr_bins++].bin = b;
	}
	return b;
}

static aclrtFuncHandle kernel_func(const char *name, int idx, uint64_t tiling_key)
{
	static const char blob[] = "npu_model op binary";
	aclrtFuncHandle f = NULL;
	aclrtBinHandle b;

	pthread_mutex_lock(&nnop_lock);
	if (idx == 0) {
		b = kernel_bin_locked(name);
		if (!b || aclrtBinaryGetFunctionByEntry(b, tiling_key, &f))
			f = NULL;
	} else {
		if (!nnop_bin && aclrtBinaryLoadFromData(blob, sizeof(blob), NULL, &nnop_bin))
			nnop_bin = NULL;
		if (nnop_bin && aclrtBinaryGetFunction(nnop_bin, name, &f))
			f = NULL;
	}
	pthread_mutex_unlock(&nnop_lock);
	return f;
}

/* AI CPU kernels: their own launch call, by op name (task type AI_CPU on the device). */
#define NNOP_AICPU_KERNEL_TYPE 1 /* the kernelType argument: an AI CPU (CCE-style) kernel */

static aclnnStatus launch_aicpu(const struct npu_op_cost *k, struct npu_kernel_args *args,
				aclrtStream stream)
{
	rtAicpuArgsEx_t ai;

	memset(&ai, 0, sizeof(ai));
	ai.args = args;
	ai.argsSize = sizeof(*args);
	ai.soNameAddrOffset = 0xffff;
	ai.kernelNameAddrOffset = 0xffff;
	return rtAicpuKernelLaunchExWithArgs(NNOP_AICPU_KERNEL_TYPE, k->kernel, k->block_dim, &ai,
					     NULL, stream, 0) ?
		       ACLNN_ERR_RUNTIME_ERROR :
		       ACLNN_SUCCESS;
}

static void executor_free(struct aclOpExecutor *ex)
{
	pthread_mutex_lock(&exec_lock);
	if (ex->prev)
		ex->prev->next = ex->next;
	else
		exec_live = ex->next;
	if (ex->next)
		ex->next->prev = ex->prev;
	pthread_mutex_unlock(&exec_lock);
	ex->magic = 0;
	free(ex);
}

__attribute__((visibility("default"))) aclnnStatus
NnopbaseExecutorRunWithWorkspace(aclOpExecutor *ex, void *workspace, uint64_t workspace_size,
				 aclrtStream stream)
{
	struct npu_kernel_args args;
	aclnnStatus r = ACLNN_SUCCESS;

	if (!executor_live(ex))
		return ACLNN_ERR_PARAM_NULLPTR;
	if (ex->workspace && (!workspace || workspace_size < ex->workspace))
		return ACLNN_ERR_PARAM_INVALID;
	for (int i = 0; i < ex->nr_kernels && !r; i++) {
		const struct npu_op_cost *k = &ex->kernels[i];

		args.flops = k->flops;
		args.bytes = k->bytes;
		args.task_type = (uint32_t)k->task_type;
		args.reserved = 0;
		if (k->task_type == NPU_TASK_AI_CPU) {
			r = launch_aicpu(k, &args, stream);
			continue;
		}
		if (!ex->funcs[i])
			ex->funcs[i] = kernel_func(k->kernel, i, (uint64_t)i + 1);
		if (!ex->funcs[i]) {
			r = ACLNN_ERR_RUNTIME_ERROR;
			break;
		}
		if (aclrtLaunchKernelWithHostArgs(ex->funcs[i], k->block_dim, stream, NULL, &args,
						  sizeof(args), NULL, 0))
			r = ACLNN_ERR_RUNTIME_ERROR;
	}
	if (!ex->repeatable)
		executor_free(ex);
	return r;
}

NPU_NOINLINE aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor)
{
	if (!executor_live(executor))
		return ACLNN_ERR_PARAM_NULLPTR;
	executor->repeatable = 1;
	return ACLNN_SUCCESS;
}

NPU_NOINLINE aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor)
{
	if (!executor)
		return ACLNN_SUCCESS;
	if (!executor_live(executor))
		return ACLNN_ERR_PARAM_INVALID;
	executor_free(executor);
	return ACLNN_SUCCESS;
}

NPU_NOINLINE aclnnStatus aclnnInit(const char *configPath)
{
	(void)configPath;
	NPU_BARRIER();
	return ACLNN_SUCCESS;
}

NPU_NOINLINE aclnnStatus aclnnFinalize(void)
{
	NPU_BARRIER();
	return ACLNN_SUCCESS;
}
