/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ascend/torch_npu.h - layouts of torch_npu (Ascend/pytorch) that a profiler
 * reads from the traced process's memory.  Vendor ABI, shared by bpf/, user/
 * and npu_model/ (the simulator's libtorch_npu.so static-asserts against it).
 *
 * Mirrors (torch_npu 2.x, Ascend/pytorch):
 *   QueueParamType, QueueParas   torch_npu/csrc/core/npu/NPUQueue.h / NPUDefine.h
 *                                (c10_npu::queue::QueueParas: the task-queue slot header;
 *                                correlation_id since the profiler's queue marks)
 *   ExecuteParasOpApi(V2)        torch_npu/csrc/framework/NPUDefine.h; the ring slot
 *                                after CopyFunc (torch_npu/csrc/framework/OpParamMaker.cpp)
 *   MemoryUsage                  torch_npu/csrc/profiler/npu_profiler.h (the argument of
 *                                torch_npu::profiler::reportMemoryDataToNpuProfiler):
 *                                five 1-byte fields, then six 64-bit ones
 */
#ifndef __ASCEND_TORCH_NPU_H
#define __ASCEND_TORCH_NPU_H

#ifndef __bpf__ /* BPF programs get these types from vmlinux.h */
#include <stddef.h>
#include <stdint.h>
#endif

#ifndef ASCEND_STATIC_ASSERT
#ifdef __cplusplus
#define ASCEND_STATIC_ASSERT static_assert
#else
#define ASCEND_STATIC_ASSERT _Static_assert
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* QueueParas.paramType. */
enum QueueParamType {
	COMPILE_AND_EXECUTE = 1,
	ASYNC_MEMCPY = 2,
	RECORD_EVENT = 3,
	WAIT_EVENT = 4,
	LAZY_DESTROY_EVENT = 5,
	RESET_EVENT = 6,
	EXECUTE_OPAPI = 7,
	EXECUTE_OPAPI_V2 = 8,
};

struct QueueParas {		 /* 40 bytes */
	void *paramStream;	 /*  0: aclrtStream */
	int32_t paramType;	 /*  8: enum QueueParamType */
	size_t paramLen;	 /* 16 */
	void *paramVal;		 /* 24 */
	uint64_t correlation_id; /* 32 */
};

/*
 * EXECUTE_OPAPI_V2 payload, as OpCommand::RunOpApiV2 passes it to Enqueue: two
 * pointers, to the caller's std::string op name and std::function<int()>.
 */
struct ExecuteParasOpApiV2 { /* 16 bytes */
	void *opName;	     /*  0: const std::string * */
	void *customHandler; /*  8: std::function<int()> * */
};

/*
 * A ring slot: one QueueParas, its payload right behind it (CopyFunc sets
 * paramVal = slot + sizeof(QueueParas)).  CopyFunc turns an EXECUTE_OPAPI_V2
 * entry into an EXECUTE_OPAPI one: the op name copied into opType (at most
 * 99 bytes and a NUL), the std::function moved in.  So a slot never holds
 * type 8; the consumer (AsncExecFunc) sees type 7 and the name in place.
 */
#define TORCH_NPU_OPTYPE_LEN   100
#define TORCH_NPU_SLOT_PAYLOAD 40 /* sizeof(struct QueueParas) */

struct ExecuteParasOpApi {		   /* 136 bytes */
	char opType[TORCH_NPU_OPTYPE_LEN]; /*   0 */
	struct {			   /* 104: std::function<int()> (libstdc++) */
		void *functor[2];
		void *manager;
		void *invoker;
	} customHandler;
};

struct MemoryUsage { /* 56 bytes */
	int8_t device_type;
	int8_t device_index;
	uint8_t component_type;
	uint8_t data_type; /* malloc, free, block free */
	uint8_t allocator_type;
	int64_t ptr;		 /*  8 */
	int64_t alloc_size;	 /* 16 */
	int64_t total_allocated; /* 24 */
	int64_t total_reserved;	 /* 32 */
	int64_t total_active;	 /* 40 */
	int64_t stream_ptr;	 /* 48 */
};

ASCEND_STATIC_ASSERT(__builtin_offsetof(struct QueueParas, paramType) == 8, "QueueParas layout");
ASCEND_STATIC_ASSERT(__builtin_offsetof(struct QueueParas, paramLen) == 16, "QueueParas layout");
ASCEND_STATIC_ASSERT(__builtin_offsetof(struct QueueParas, paramVal) == 24, "QueueParas layout");
ASCEND_STATIC_ASSERT(__builtin_offsetof(struct QueueParas, correlation_id) == 32,
		     "QueueParas layout");
ASCEND_STATIC_ASSERT(sizeof(struct QueueParas) == 40, "QueueParas layout");
ASCEND_STATIC_ASSERT(__builtin_offsetof(struct ExecuteParasOpApi, customHandler) == 104,
		     "ExecuteParasOpApi layout");
ASCEND_STATIC_ASSERT(sizeof(struct ExecuteParasOpApi) == 136, "ExecuteParasOpApi layout");
ASCEND_STATIC_ASSERT(sizeof(struct QueueParas) == TORCH_NPU_SLOT_PAYLOAD, "slot layout");
ASCEND_STATIC_ASSERT(__builtin_offsetof(struct MemoryUsage, ptr) == 8, "MemoryUsage layout");
ASCEND_STATIC_ASSERT(__builtin_offsetof(struct MemoryUsage, stream_ptr) == 48,
		     "MemoryUsage layout");
ASCEND_STATIC_ASSERT(sizeof(struct MemoryUsage) == 56, "MemoryUsage layout");

#ifdef __cplusplus
}
#endif

#endif /* __ASCEND_TORCH_NPU_H */
