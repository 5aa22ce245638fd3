// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * profiler.c - the profiler hook of libtorch_npu.so that the tracer
 * attaches to (with debug symbols: it is hidden in a release build):
 *
 *   torch_npu::profiler::reportMemoryDataToNpuProfiler(const MemoryUsage &)
 *	one call per caching-allocator event; the argument is torch_npu's
 *	56-byte struct MemoryUsage (include/ascend/torch_npu.h, from
 *	torch_npu/csrc/profiler/npu_profiler.h), stamped here on arrival.
 *
 * It writes its journal line (`mem` component=PTA) so tests can compare the
 * capture with it one to one.
 */
#include <stdint.h>

#include "npu_api_journal.h"
#include "torch_npu/torch_npu_priv.h"

static const char *const mem_ops[] = { "malloc", "free", "block_free" };

TNPU_HIDDEN void _ZN9torch_npu8profiler29reportMemoryDataToNpuProfilerERKNS0_11MemoryUsageE(
	const struct MemoryUsage *data)
{
	uint64_t t = npu_now_ns();

	NPU_BARRIER();
	if (npu_journal_on && data->data_type <= NPU_MEM_BLOCK_FREE)
		npu_journal_write("mem",
				  "tid=%d\tcomponent=PTA\top=%s\tt=%llu\tptr=0x%llx"
				  "\tsize=%lld\ttotal_allocated=%llu\ttotal_reserved=%llu"
				  "\ttotal_active=%llu\tstream=0x%llx\tdevice=%u",
				  npu_tid(), mem_ops[data->data_type], (unsigned long long)t,
				  (unsigned long long)data->ptr, (long long)data->alloc_size,
				  (unsigned long long)data->total_allocated,
				  (unsigned long long)data->total_reserved,
				  (unsigned long long)data->total_active,
				  (unsigned long long)data->stream_ptr,
				  (unsigned)(uint8_t)data->device_index);
}
