// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * profapi.c - libprofapi.so: the two msprof entry points HCCL reports its
 * tasks through (include/ascend/hccl.h).  The model keeps no profiling data
 * itself: a report is a call a profiler sees (ascbpf probes it), as on a
 * host where msprof's collector sits behind these functions.
 */
#include <stddef.h>
#include <stdint.h>

#include "ascend/hccl.h"
#include "npu_api_journal.h"

/* 0 (MSPROF_ERROR_NONE) for a well-formed report, -1 otherwise. */
NPU_NOINLINE int32_t MsprofReportAdditionalInfo(uint32_t nonPersistantFlag, const void *data,
						uint32_t length)
{
	const struct MsprofAdditionalInfo *i = data;

	(void)nonPersistantFlag;
	NPU_BARRIER();
	if (!i || length != sizeof(*i) || i->magicNumber != MSPROF_REPORT_DATA_MAGIC_NUM)
		return -1;
	return 0;
}

/* 64-bit FNV-1a of the string: the same string gives the same id in every process. */
NPU_NOINLINE uint64_t MsprofGetHashId(const char *hashInfo, size_t length)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; hashInfo && i < length; i++) {
		h ^= (uint8_t)hashInfo[i];
		h *= 0x100000001b3ull;
	}
	return h;
}
