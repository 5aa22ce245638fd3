/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * npu_acl.h - AscendCL as npu_model implements it: the types, error codes and
 * prototypes of acl_base.h / acl_rt.h / acl_op.h / acl_op_compiler.h and the
 * aclnn base (acl_meta.h), with the real names and values
 * (docs/cann_api.md §2.1, §2.2, §2.4).  libascendcl.so,
 * libacl_op_compiler.so, libnnopbase.so and libopapi.so implement it.
 */
#ifndef __NPU_MODEL_ACL_H
#define __NPU_MODEL_ACL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int aclError;
typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef void *aclrtContext;
typedef void *aclrtBinHandle;
typedef void *aclrtFuncHandle;
typedef struct aclrtLaunchKernelCfg aclrtLaunchKernelCfg;
typedef struct aclrtPlaceHolderInfo aclrtPlaceHolderInfo;
typedef struct aclrtBinaryLoadOptions aclrtBinaryLoadOptions;

#define ACL_SUCCESS			 0
#define ACL_ERROR_NONE			 0
#define ACL_ERROR_INVALID_PARAM		 100000
#define ACL_ERROR_UNINITIALIZE		 100001
#define ACL_ERROR_REPEAT_INITIALIZE	 100002
#define ACL_ERROR_BAD_ALLOC		 200000
#define ACL_ERROR_API_NOT_SUPPORT	 200001
#define ACL_ERROR_INVALID_DEVICE	 200002
#define ACL_ERROR_STORAGE_OVER_LIMIT	 300000
#define ACL_ERROR_INTERNAL_ERROR	 500000
#define ACL_ERROR_FAILURE		 500001
#define ACL_ERROR_RT_FAILURE		 500003
#define ACL_ERROR_DRV_FAILURE		 500004
#define ACL_ERROR_RT_PARAM_INVALID	 107000
#define ACL_ERROR_RT_INVALID_DEVICEID	 107001
#define ACL_ERROR_RT_CONTEXT_NULL	 107002
#define ACL_ERROR_RT_STREAM_CONTEXT	 107003
#define ACL_ERROR_RT_WAIT_TIMEOUT	 107019
#define ACL_ERROR_RT_TASK_TIMEOUT	 107020
#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT 207000
#define ACL_ERROR_RT_MEMORY_ALLOCATION	 207001
#define ACL_ERROR_RT_MEMORY_FREE	 207002
#define ACL_ERROR_RT_NO_DEVICE		 207004
#define ACL_ERROR_RT_NO_STREAM_RESOURCE	 207008
#define ACL_ERROR_RT_DEVICE_OOM		 207018
#define ACL_ERROR_RT_INTERNAL_ERROR	 507000
#define ACL_ERROR_RT_DRV_INTERNAL_ERROR	 507899

typedef enum aclrtMemMallocPolicy {
	ACL_MEM_MALLOC_HUGE_FIRST,
	ACL_MEM_MALLOC_HUGE_ONLY,
	ACL_MEM_MALLOC_NORMAL_ONLY,
	ACL_MEM_MALLOC_HUGE_FIRST_P2P,
	ACL_MEM_MALLOC_HUGE_ONLY_P2P,
	ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
	ACL_MEM_MALLOC_HUGE1G_ONLY,
	ACL_MEM_MALLOC_HUGE1G_ONLY_P2P,
	ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x0100,
	ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000,
	ACL_MEM_ACCESS_USER_SPACE_READONLY = 0x100000,
} aclrtMemMallocPolicy;

typedef enum aclrtMemcpyKind {
	ACL_MEMCPY_HOST_TO_HOST,
	ACL_MEMCPY_HOST_TO_DEVICE,
	ACL_MEMCPY_DEVICE_TO_HOST,
	ACL_MEMCPY_DEVICE_TO_DEVICE,
	ACL_MEMCPY_DEFAULT,
	ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE,
	ACL_MEMCPY_INNER_DEVICE_TO_DEVICE,
	ACL_MEMCPY_INTER_DEVICE_TO_DEVICE,
} aclrtMemcpyKind;

typedef enum aclrtMemAttr {
	ACL_DDR_MEM,
	ACL_HBM_MEM,
	ACL_DDR_MEM_HUGE,
	ACL_DDR_MEM_NORMAL,
	ACL_HBM_MEM_HUGE,
	ACL_HBM_MEM_NORMAL,
	ACL_DDR_MEM_P2P_HUGE,
	ACL_DDR_MEM_P2P_NORMAL,
	ACL_HBM_MEM_P2P_HUGE,
	ACL_HBM_MEM_P2P_NORMAL,
	ACL_HBM_MEM_HUGE1G,
} aclrtMemAttr;

typedef enum aclrtEventStatus {
	ACL_EVENT_STATUS_COMPLETE = 0,
	ACL_EVENT_STATUS_NOT_READY = 1,
	ACL_EVENT_STATUS_RESERVED = 2
} aclrtEventStatus;
typedef enum aclrtEventRecordedStatus {
	ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
	ACL_EVENT_RECORDED_STATUS_COMPLETE = 1,
} aclrtEventRecordedStatus;

#define ACL_EVENT_SYNC			  0x1
#define ACL_EVENT_CAPTURE_STREAM_PROGRESS 0x2
#define ACL_EVENT_TIME_LINE		  0x8
#define ACL_STREAM_FAST_LAUNCH		  0x1
#define ACL_STREAM_FAST_SYNC		  0x2

typedef enum {
	ACL_DT_UNDEFINED = -1,
	ACL_FLOAT = 0,
	ACL_FLOAT16 = 1,
	ACL_INT8 = 2,
	ACL_INT32 = 3,
	ACL_UINT8 = 4,
	ACL_INT16 = 6,
	ACL_UINT16 = 7,
	ACL_UINT32 = 8,
	ACL_INT64 = 9,
	ACL_UINT64 = 10,
	ACL_DOUBLE = 11,
	ACL_BOOL = 12,
	ACL_BF16 = 27,
} aclDataType;

typedef enum {
	ACL_FORMAT_UNDEFINED = -1,
	ACL_FORMAT_NCHW = 0,
	ACL_FORMAT_NHWC = 1,
	ACL_FORMAT_ND = 2,
	ACL_FORMAT_NC1HWC0 = 3,
	ACL_FORMAT_FRACTAL_Z = 4,
	ACL_FORMAT_FRACTAL_NZ = 29,
} aclFormat;

/* acl_rt.h */
aclError aclInit(const char *configPath);
aclError aclFinalize(void);
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtGetDevice(int32_t *deviceId);
aclError aclrtGetDeviceCount(uint32_t *count);
aclError aclrtCreateStream(aclrtStream *stream);
aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtSynchronizeDevice(void);
aclError aclrtStreamGetId(aclrtStream stream, int32_t *streamId);
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
aclError aclrtCreateEvent(aclrtEvent *event);
aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag);
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtSynchronizeEvent(aclrtEvent event);
aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status);
aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status);
aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent);
aclError aclrtDestroyEvent(aclrtEvent event);
aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtMallocHost(void **hostPtr, size_t size);
aclError aclrtFree(void *devPtr);
aclError aclrtFreeHost(void *hostPtr);
aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total);
aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
		     aclrtMemcpyKind kind);
aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
			  aclrtMemcpyKind kind, aclrtStream stream);
aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count);
aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
			  aclrtStream stream);
aclError aclrtBinaryLoadFromFile(const char *binPath, aclrtBinaryLoadOptions *options,
				 aclrtBinHandle *binHandle);
aclError aclrtBinaryGetFunctionByEntry(aclrtBinHandle binHandle, uint64_t funcEntry,
				       aclrtFuncHandle *funcHandle);
aclError aclrtBinaryLoadFromData(const void *data, size_t length,
				 const aclrtBinaryLoadOptions *options, aclrtBinHandle *binHandle);
aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle, const char *kernelName,
				aclrtFuncHandle *funcHandle);
aclError aclrtLaunchKernel(aclrtFuncHandle funcHandle, uint32_t numBlocks, const void *argsData,
			   size_t argsSize, aclrtStream stream);
aclError aclrtLaunchKernelWithHostArgs(aclrtFuncHandle funcHandle, uint32_t numBlocks,
				       aclrtStream stream, aclrtLaunchKernelCfg *cfg,
				       void *hostArgs, size_t argsSize,
				       aclrtPlaceHolderInfo *placeHolderArray,
				       size_t placeHolderNum);

/* acl_op.h / acl_op_compiler.h: tensor descriptions and data buffers (libascendcl). */
typedef struct aclTensorDesc aclTensorDesc;
typedef struct aclDataBuffer aclDataBuffer;
typedef struct aclopAttr aclopAttr;
typedef enum aclEngineType { ACL_ENGINE_SYS, ACL_ENGINE_AICORE, ACL_ENGINE_VECTOR } aclopEngineType;
typedef enum aclCompileType { ACL_COMPILE_SYS, ACL_COMPILE_UNREGISTERED } aclopCompileType;

aclTensorDesc *aclCreateTensorDesc(aclDataType dataType, int numDims, const int64_t *dims,
				   aclFormat format);
void aclDestroyTensorDesc(const aclTensorDesc *desc);
aclDataBuffer *aclCreateDataBuffer(void *data, size_t size);
aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer);
aclopAttr *aclopCreateAttr(void);
void aclopDestroyAttr(const aclopAttr *attr);
aclError aclopSetAttrFloat(aclopAttr *attr, const char *attrName, float attrValue);
aclError aclopSetAttrInt(aclopAttr *attr, const char *attrName, int64_t attrValue);
size_t aclGetTensorDescNumDims(const aclTensorDesc *desc);
int64_t aclGetTensorDescDim(const aclTensorDesc *desc, size_t index);
aclDataType aclGetTensorDescType(const aclTensorDesc *desc);
size_t aclDataTypeSize(aclDataType dataType);

/*
 * aclDataTypeSize's table, for libnnopbase's aclCreateTensor too (not a CANN
 * symbol): bytes per element, 0 for a type the model does not know.
 */
static inline size_t npu_acl_dtype_size(aclDataType dataType)
{
	switch (dataType) {
	case ACL_FLOAT:
	case ACL_INT32:
	case ACL_UINT32:
		return 4;
	case ACL_FLOAT16:
	case ACL_BF16:
	case ACL_INT16:
	case ACL_UINT16:
		return 2;
	case ACL_INT8:
	case ACL_UINT8:
	case ACL_BOOL:
		return 1;
	case ACL_INT64:
	case ACL_UINT64:
	case ACL_DOUBLE:
		return 8;
	default:
		return 0;
	}
}
aclError aclopCompileAndExecute(const char *opType, int numInputs,
				const aclTensorDesc *const inputDesc[],
				const aclDataBuffer *const inputs[], int numOutputs,
				const aclTensorDesc *const outputDesc[],
				aclDataBuffer *const outputs[], const aclopAttr *attr,
				aclopEngineType engineType, aclopCompileType compileFlag,
				const char *opPath, aclrtStream stream);
aclError aclopCompileAndExecuteV2(const char *opType, int numInputs, aclTensorDesc *inputDesc[],
				  aclDataBuffer *inputs[], int numOutputs,
				  aclTensorDesc *outputDesc[], aclDataBuffer *outputs[],
				  aclopAttr *attr, aclopEngineType engineType,
				  aclopCompileType compileFlag, const char *opPath,
				  aclrtStream stream);

/* aclnn base (acl_meta.h, op_errno.h): libnnopbase. */
typedef int32_t aclnnStatus;
typedef struct aclOpExecutor aclOpExecutor;
typedef struct aclTensor aclTensor;
typedef struct aclScalar aclScalar;
typedef struct aclIntArray aclIntArray;
typedef struct aclTensorList aclTensorList;
typedef struct aclScalarList aclScalarList;
#define ACLNN_SUCCESS		0
#define ACLNN_ERR_PARAM_NULLPTR 161001
#define ACLNN_ERR_PARAM_INVALID 161002
#define ACLNN_ERR_RUNTIME_ERROR 361001
#define ACLNN_ERR_INNER		561000

aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
			   const int64_t *stride, int64_t offset, aclFormat format,
			   const int64_t *storageDims, uint64_t storageDimsNum, void *tensorData);
aclScalar *aclCreateScalar(void *value, aclDataType dataType);
aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size);
aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size);
aclnnStatus aclDestroyTensor(const aclTensor *tensor);
aclnnStatus aclDestroyScalar(const aclScalar *scalar);
aclnnStatus aclDestroyIntArray(const aclIntArray *array);
aclnnStatus aclDestroyTensorList(const aclTensorList *array);
aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor);
aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor);
aclnnStatus aclnnInit(const char *configPath);
aclnnStatus aclnnFinalize(void);

#ifdef __cplusplus
}
#endif

#endif /* __NPU_MODEL_ACL_H */
