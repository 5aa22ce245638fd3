/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * npu_rt.h - the rt* runtime API of libruntime.so as npu_model implements it
 * (real prototypes: docs/cann_api.md §2.2).  rt*
 * functions return the ACL_ERROR_RT_* codes of npu_acl.h (rt_error_codes.h),
 * which AscendCL passes through unchanged.
 */
#ifndef __NPU_MODEL_RT_H
#define __NPU_MODEL_RT_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t rtError_t;
typedef void *rtStream_t;
typedef void *rtEvent_t;
typedef void *rtFuncHandle;
typedef void *rtBinHandle;
typedef uint32_t rtMemType_t;
typedef struct rtSmDesc rtSmDesc_t;
typedef struct rtKernelLaunchCfg rtKernelLaunchCfg_t;
typedef struct rtPlaceHolderInfo rtPlaceHolderInfo_t;

typedef enum tagRtMemcpyKind {
	RT_MEMCPY_HOST_TO_HOST = 0,
	RT_MEMCPY_HOST_TO_DEVICE,
	RT_MEMCPY_DEVICE_TO_HOST,
	RT_MEMCPY_DEVICE_TO_DEVICE,
	RT_MEMCPY_MANAGED,
	RT_MEMCPY_ADDR_DEVICE_TO_DEVICE,
	RT_MEMCPY_HOST_TO_DEVICE_EX,
	RT_MEMCPY_DEVICE_TO_HOST_EX,
	RT_MEMCPY_DEFAULT,
	RT_MEMCPY_RESERVED,
} rtMemcpyKind_t;

#define RT_MEMORY_DEFAULT		 0x0
#define RT_MEMORY_HBM			 0x2
#define RT_MEMORY_DDR			 0x4
#define RT_MEMORY_POLICY_HUGE_PAGE_FIRST 0x400
#define RT_STREAM_PRIORITY_DEFAULT	 0

rtError_t rtSetDevice(int32_t devId);
rtError_t rtDeviceReset(int32_t devId);
rtError_t rtGetDevice(int32_t *devId);
rtError_t rtGetDeviceCount(int32_t *cnt);
rtError_t rtStreamCreate(rtStream_t *stm, int32_t priority);
rtError_t rtStreamCreateWithFlags(rtStream_t *stm, int32_t priority, uint32_t flags);
rtError_t rtStreamDestroy(rtStream_t stm);
rtError_t rtStreamSynchronize(rtStream_t stm);
rtError_t rtStreamWaitEvent(rtStream_t stm, rtEvent_t evt);
rtError_t rtGetStreamId(rtStream_t stm, int32_t *streamId);
rtError_t rtEventCreate(rtEvent_t *evt);
rtError_t rtEventCreateWithFlag(rtEvent_t *evt, uint32_t flag);
rtError_t rtEventRecord(rtEvent_t evt, rtStream_t stm);
rtError_t rtEventSynchronize(rtEvent_t evt);
rtError_t rtEventQuery(rtEvent_t evt); /* 0 done, ACL_ERROR_RT_... not ready */
rtError_t rtEventElapsedTime(float *timeInterval, rtEvent_t startEvent, rtEvent_t endEvent);
rtError_t rtEventDestroy(rtEvent_t evt);
rtError_t rtDeviceSynchronize(void);
rtError_t rtMalloc(void **devPtr, uint64_t size, rtMemType_t type, const uint16_t moduleId);
rtError_t rtFree(void *devPtr);
rtError_t rtMallocHost(void **hostPtr, uint64_t size, const uint16_t moduleId);
rtError_t rtFreeHost(void *hostPtr);
rtError_t rtMemGetInfo(uint64_t *freeSize, uint64_t *totalSize);
rtError_t rtMemcpy(void *dst, uint64_t destMax, const void *src, uint64_t cnt, rtMemcpyKind_t kind);
rtError_t rtMemcpyAsync(void *dst, uint64_t destMax, const void *src, uint64_t cnt,
			rtMemcpyKind_t kind, rtStream_t stm);
rtError_t rtMemset(void *devPtr, uint64_t destMax, uint32_t val, uint64_t cnt);
rtError_t rtFunctionRegister(void *binHandle, const void *stubFunc, const char *stubName,
			     const void *kernelInfoExt, uint32_t funcMode);
rtError_t rtsFuncGetByName(const rtBinHandle binHandle, const char *kernelName,
			   rtFuncHandle *funcHandle);
rtError_t rtKernelLaunch(const void *stubFunc, uint32_t numBlocks, void *args, uint32_t argsSize,
			 rtSmDesc_t *smDesc, rtStream_t stm);
rtError_t rtsLaunchKernelWithHostArgs(rtFuncHandle funcHandle, uint32_t numBlocks, rtStream_t stm,
				      rtKernelLaunchCfg_t *cfg, void *hostArgs, uint32_t argsSize,
				      rtPlaceHolderInfo_t *placeHolderArray,
				      uint32_t placeHolderNum);
rtError_t rtGetTaskIdAndStreamID(uint32_t *taskId, uint32_t *streamId);

/*
 * CANN 8.x/9.x launch paths (hicann/runtime pkg_inc/runtime/rt_external_kernel.h,
 * runtime/kernel.h, runtime/mem.h, runtime/rts/rts_kernel.h): real prototypes,
 * stream argument index in the comment (what a probe reads).
 */
typedef struct rtHostInputInfo rtHostInputInfo_t;
typedef struct rtTaskCfgInfo rtTaskCfgInfo_t;
typedef struct rtMemcpyConfig rtMemcpyConfig_t;
typedef void *rtArgsHandle;
typedef struct tagRtArgsEx {
	void *args;
	rtHostInputInfo_t *hostInputInfoPtr;
	uint32_t argsSize;
	uint32_t tilingAddrOffset;
	uint32_t tilingDataOffset;
	uint16_t hostInputInfoNum;
	uint8_t hasTiling;
	uint8_t isNoNeedH2DCopy;
	uint8_t reserved[4];
} rtArgsEx_t;
typedef struct tagRtAicpuArgsEx {
	void *args;
	rtHostInputInfo_t *hostInputInfoPtr;
	rtHostInputInfo_t *kernelOffsetInfoPtr;
	uint32_t argsSize;
	uint16_t hostInputInfoNum;
	uint16_t kernelOffsetInfoNum;
	uint32_t soNameAddrOffset;
	uint32_t kernelNameAddrOffset;
	bool isNoNeedH2DCopy;
	uint16_t timeout;
	uint8_t reserved;
} rtAicpuArgsEx_t;

/* stream 4 */
rtError_t rtKernelLaunchWithFlagV2(const void *stubFunc, uint32_t numBlocks, rtArgsEx_t *argsInfo,
				   rtSmDesc_t *smDesc, rtStream_t stm, uint32_t flags,
				   const rtTaskCfgInfo_t *cfgInfo);
/* stream 5 */
rtError_t rtKernelLaunchWithHandleV2(void *hdl, const uint64_t tilingKey, uint32_t numBlocks,
				     rtArgsEx_t *argsInfo, rtSmDesc_t *smDesc, rtStream_t stm,
				     const rtTaskCfgInfo_t *cfgInfo);
/* stream 3 */
rtError_t rtLaunchKernelByFuncHandleV3(rtFuncHandle funcHandle, uint32_t numBlocks,
				       const rtArgsEx_t *const argsInfo, rtStream_t stm,
				       const rtTaskCfgInfo_t *const cfgInfo);
/* stream 2 */
rtError_t rtsLaunchKernelWithConfig(rtFuncHandle funcHandle, uint32_t numBlocks, rtStream_t stm,
				    rtKernelLaunchCfg_t *cfg, rtArgsHandle argsHandle,
				    void *reserve);
/* stream 2 */
rtError_t rtsLaunchKernelWithDevArgs(rtFuncHandle funcHandle, uint32_t numBlocks, rtStream_t stm,
				     rtKernelLaunchCfg_t *cfg, const void *args, uint32_t argsSize,
				     void *reserve);
/* stream 5; kernelName (arg1) is a C string */
rtError_t rtCpuKernelLaunchWithFlag(const void *soName, const void *kernelName, uint32_t numBlocks,
				    const rtArgsEx_t *argsInfo, rtSmDesc_t *smDesc, rtStream_t stm,
				    uint32_t flags);
/* stream 5; opName (arg1) is a C string */
rtError_t rtAicpuKernelLaunchExWithArgs(const uint32_t kernelType, const char *const opName,
					const uint32_t numBlocks, const rtAicpuArgsEx_t *argsInfo,
					rtSmDesc_t *const smDesc, const rtStream_t stm,
					const uint32_t flags);
/* stream 3 */
rtError_t rtKernelLaunchEx(void *args, uint32_t argsSize, uint32_t flags, rtStream_t stm);
/* stream 5 */
rtError_t rtMemcpyAsyncEx(void *dst, uint64_t destMax, const void *src, uint64_t cnt,
			  rtMemcpyKind_t kind, rtStream_t stm, rtMemcpyConfig_t *memcpyConfig);
/* stream 4 */
rtError_t rtMemsetAsync(void *ptr, uint64_t destMax, uint32_t val, uint64_t cnt, rtStream_t stm);
rtError_t rtsBinaryLoadFromFile(const char *binPath, const void *optionalCfg, rtBinHandle *handle);
rtError_t rtsFuncGetByEntry(const rtBinHandle binHandle, const uint64_t funcEntry,
			    rtFuncHandle *funcHandle);
/* Notifies and copies between cards: what HCCL's tasks are made of (rt_stars.h, rt_mem.h). */
typedef void *rtNotify_t;
rtError_t rtNotifyCreate(int32_t deviceId, rtNotify_t *notify);
rtError_t rtNotifyDestroy(rtNotify_t notify);
rtError_t rtNotifyRecord(rtNotify_t notify, rtStream_t stm);
rtError_t rtNotifyWait(rtNotify_t notify, rtStream_t stm);
rtError_t rtGetNotifyID(rtNotify_t notify, uint32_t *notifyId);
rtError_t rtIpcSetNotifyName(rtNotify_t notify, char *name, uint32_t len);
rtError_t rtIpcOpenNotify(rtNotify_t *notify, const char *name);
rtError_t rtReduceAsync(void *dst, uint64_t destMax, const void *src, uint64_t cnt, int32_t kind,
			int32_t type, rtStream_t stm);

#ifdef __cplusplus
}
#endif

#endif /* __NPU_MODEL_RT_H */
