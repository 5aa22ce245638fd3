// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * profiler.c - the two profiler hooks of libtorch_npu.so that the tracer
 * attaches to:
 *
 *   torch_npu::profiler::reportMemoryDataToNpuProfiler(const MemoryUsage &)
 *	one call per caching-allocator event; the argument is the fixed
 *	64-byte struct npu_memory_usage (torch_npu_priv.h, offsets documented
 *	in npu_model/README.md) that ascbpf's BPF copies as it is;
 *   torch_npu::profiler::stepMarker()
 *	one call at the start of every training step.
 *
 * Both write their journal lines (`mem` component=PTA, `step`) so tests can
 * compare the capture with them one to one.
 */
#include <stdint.h>

#include "npu_api_journal.h"
#include "torch_npu/torch_npu_priv.h"

static const char *const mem_ops[] = { "malloc", "free", "block_free" };
static uint64_t next_step;

NPU_NOINLINE void _ZN9torch_npu8profiler29reportMemoryDataToNpuProfilerERKNS0_11MemoryUsageE(
	const struct npu_memory_usage *data)
{
	NPU_BARRIER();
	if (npu_journal_on && data->data_type <= NPU_MEM_BLOCK_FREE)
		npu_journal_write("mem", "tid=%d\tcomponent=PTA\top=%s\tt=%llu\tptr=0x%llx"
				  "\tsize=%lld\ttotal_allocated=%llu\ttotal_reserved=%llu"
				  "\ttotal_active=%llu\tstream=0x%llx\tdevice=%u", npu_tid(),
				  mem_ops[data->data_type], (unsigned long long)data->time_ns,
				  (unsigned long long)data->ptr, (long long)data->size,
				  (unsigned long long)data->total_allocated,
				  (unsigned long long)data->total_reserved,
				  (unsigned long long)data->total_active,
				  (unsigned long long)data->stream, data->device);
}

NPU_NOINLINE void _ZN9torch_npu8profiler10stepMarkerEv(void)
{
	uint64_t step = __atomic_fetch_add(&next_step, 1, __ATOMIC_RELAXED);

	NPU_BARRIER();
	if (npu_journal_on)
		npu_journal_write("step", "tid=%d\tt=%llu\tstep=%llu", npu_tid(),
				  (unsigned long long)npu_now_ns(), (unsigned long long)step);
}
