/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * torch_npu_priv.h - libtorch_npu.so internals shared by its modules (task
 * queue, caching allocator, profiler hooks, op plugin) and their unit tests.
 */
#ifndef __NPU_MODEL_TORCH_NPU_PRIV_H
#define __NPU_MODEL_TORCH_NPU_PRIV_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "npu_acl.h"
#include "npu_torch.h"
#include "ascend/torch_npu.h"

/* ---- c10_npu::queue::QueueParas: the vendor layout (include/ascend/torch_npu.h) ---------- */

/*
 * EXECUTE_OPAPI_V2 (caller side) and EXECUTE_OPAPI (ring slot) payloads: the
 * vendor layouts of include/ascend/torch_npu.h; opName / customHandler are
 * struct cxx_string * / struct cxx_function * here.
 */
_Static_assert(sizeof(struct cxx_function) ==
		       sizeof(((struct ExecuteParasOpApi *)0)->customHandler),
	       "std::function layout");

/* COMPILE_AND_EXECUTE payload (the aclop path): what ExecFunc passes to aclop. */
#define NPU_ACLOP_MAX_IO 4
struct ExecuteParas {
	char opType[100];
	int nin, nout;
	aclTensorDesc *in_desc[NPU_ACLOP_MAX_IO];
	aclDataBuffer *in_buf[NPU_ACLOP_MAX_IO];
	aclTensorDesc *out_desc[NPU_ACLOP_MAX_IO];
	aclDataBuffer *out_buf[NPU_ACLOP_MAX_IO];
	aclopAttr *attr; /* owned: destroyed after execution */
};

struct CopyParas {
	void *dst;
	size_t dstLen;
	const void *src;
	size_t srcLen;
	aclrtMemcpyKind kind;
};

struct EventParas {
	aclrtEvent event;
};

/* ---- c10_npu::Repository ------------------------------------------------------------------ */

#define NPU_QUEUE_CAPACITY 4096 /* kQueueCapacity */

/* A slot as CopyFunc leaves it: the payload right behind the QueueParas. */
struct npu_queue_slot {
	struct QueueParas paras;
	union {
		struct ExecuteParasOpApi opapi; /* an EXECUTE_OPAPI_V2 entry, converted */
		struct ExecuteParas aclop;
		struct CopyParas copy;
		struct EventParas event;
	} u;
};
_Static_assert(offsetof(struct npu_queue_slot, u) == TORCH_NPU_SLOT_PAYLOAD, "slot layout");

struct Repository {
	struct npu_queue_slot *slots;
	volatile uint32_t read_idx;  /* next slot the consumer runs */
	volatile uint32_t write_idx; /* next slot the producer fills */
	int efd_read;		     /* wakes the consumer */
	int efd_write;		     /* wakes a producer blocked on a full ring */
	volatile int consumer_sleeping;
	volatile int producer_sleeping;
	volatile int running; /* consumer is executing a slot */
	volatile int stop;
	int device;
	int first_error; /* first failure of a queued task (acl/aclnn code) */
	pthread_t thread;
	pthread_mutex_t drain_lock;
	pthread_cond_t drain_cond;
	volatile int drain_waiters;
};

/*
 * Mangled torch_npu entry points (npu_torch.h explains the ABI).  Release visibility (issue 13):
 * the library is built as the wheel is, -fvisibility=hidden, exporting only what the real headers
 * mark TORCH_NPU_API / C10_NPU_API (npu_model/README.md lists the set and its headers).
 * TNPU_HIDDEN marks a function that real torch_npu has but does not export (no export macro, or
 * in no header): it stays out of .dynsym and is named only by the split debug file's .symtab;
 * noinline so that name still labels a real function body a debug-symbols tracer can probe.
 */
#define TNPU_HIDDEN __attribute__((noinline, visibility("hidden")))
void _ZN7c10_npu10Repository7EnqueueEPv(struct Repository *self, void *cur_paras);
void _ZN7c10_npu10Repository7DequeueEv(struct Repository *self);
void _ZN7c10_npu18enCurrentNPUStreamEPvaPNS_9NPUStreamE(void *cur_paras, signed char device_index,
							void *stream);
void _ZN6at_npu6native12AsncExecFuncEPv(void *data);
int _ZN6at_npu6native13ExecFuncOpApiEPN7c10_npu5queue10QueueParasEPv(struct QueueParas *in,
								     void *stream);
int _ZN6at_npu6native8ExecFuncEPN7c10_npu5queue10QueueParasEPv(struct QueueParas *in, void *stream);
int _ZN6at_npu6native16MemcopyAsyncFuncEPN7c10_npu5queue10QueueParasEPv(struct QueueParas *in,
									void *stream);
int _ZN6at_npu6native15RecordEventFuncEPN7c10_npu5queue10QueueParasEPv(struct QueueParas *in,
								       void *stream);
int _ZN6at_npu6native13WaitEventFuncEPN7c10_npu5queue10QueueParasEPv(struct QueueParas *in,
								     void *stream);
/*
 * at_npu::native::OpCommand::RunOpApiV2(const std::string &, const PROC_FUNC &, bool):
 * its mangled name names the std::string of the ABI built for (npu_torch.h).
 */
#ifdef NPU_CXX_OLD_ABI
#define NPU_RUN_OP_API_V2 _ZN6at_npu6native9OpCommand10RunOpApiV2ERKSsRKSt8functionIFivEEb
#else
#define NPU_RUN_OP_API_V2 \
	_ZN6at_npu6native9OpCommand10RunOpApiV2ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKSt8functionIFivEEb
#endif
void NPU_RUN_OP_API_V2(const struct cxx_string *op_name, const struct cxx_function *func,
		       _Bool sync);

/* Queue control (queue.c). */
int npu_queue_start(int device);		      /* creates the repository and acl_thread */
struct Repository *npu_queue_get(void);		      /* NULL before npu_queue_start */
int npu_queue_enabled(void);			      /* TASK_QUEUE_ENABLE != 0 */
int npu_queue_drain(void);			      /* waits until empty; first task error or 0 */
void npu_queue_set_stream(void *stream);	      /* this thread's current stream */
int npu_queue_submit_copy(const struct CopyParas *c); /* ASYNC_MEMCPY */
int npu_queue_submit_event(int type, aclrtEvent ev);  /* RECORD_EVENT / WAIT_EVENT */
int npu_queue_submit_aclop(struct ExecuteParas *e);   /* COMPILE_AND_EXECUTE, takes ownership */
void *npu_queue_current_stream(void);

/* libstdc++ object helpers (queue.c). */
void npu_cxx_string_init(struct cxx_string *s, const char *text);
void npu_cxx_string_destroy(struct cxx_string *s);
const char *npu_cxx_string_data(const struct cxx_string *s);
size_t npu_cxx_string_len(const struct cxx_string *s);
/* A std::function<int()> owning a heap copy of `ctx` (size bytes); run(ctx) is the body. */
int npu_cxx_function_init(struct cxx_function *f, int (*run)(void *ctx), const void *ctx,
			  size_t size);
void npu_cxx_function_destroy(struct cxx_function *f);
int npu_cxx_function_call(const struct cxx_function *f);

/* ---- c10_npu::NPUCachingAllocator (allocator.c) -------------------------------------------- */

/*
 * reportMemoryDataToNpuProfiler() receives torch_npu's own struct MemoryUsage
 * (include/ascend/torch_npu.h): no timestamp in it, the report is stamped on
 * arrival as torch_npu's reporter does.
 */
#define NPU_MEM_DEVICE_PRIVATEUSE1 20 /* c10::DeviceType::PrivateUse1 */
#define NPU_MEM_COMPONENT_CACHING  0  /* MemoryComponentType::CACHING_ALLOCATOR */
#define NPU_MEM_ALLOCATOR_INNER	   0  /* MemoryAllocatorType::ALLOCATOR_INNER */
#define NPU_MEM_MALLOC		   0
#define NPU_MEM_FREE		   1
#define NPU_MEM_BLOCK_FREE	   2

void _ZN9torch_npu8profiler29reportMemoryDataToNpuProfilerERKNS0_11MemoryUsageE(
	const struct MemoryUsage *data);

void *npu_alloc_malloc(size_t size, int device, void *stream); /* NULL + last error */
int npu_plugin_device(void); /* opplugin.c: the device npu_torch_init bound, else 0 */
void npu_alloc_free(void *ptr);
int npu_alloc_last_error(void);
void npu_alloc_empty_cache(void);
void npu_alloc_get_stats(struct npu_alloc_stats *st);
size_t npu_alloc_round_size(size_t size);   /* block size a request gets */
size_t npu_alloc_segment_size(size_t size); /* segment a miss allocates */

#endif /* __NPU_MODEL_TORCH_NPU_PRIV_H */
