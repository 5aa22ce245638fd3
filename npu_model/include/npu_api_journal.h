/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * npu_api_journal.h - the `api` journal line every probed entry point writes
 * (npu_model/JOURNAL.md).  Private to npu_model's libraries.
 *
 *	NPU_API_ENTER();
 *	... body ...
 *	NPU_API_EXIT("cann", ret, "\tsize=%zu", size);
 *
 * `name` is __func__, which is the exported symbol exactly: the C++ entry
 * points are C functions whose identifiers are the mangled names.  With the
 * journal off the cost is the npu_journal_on test, nothing else.
 */
#ifndef __NPU_MODEL_API_JOURNAL_H
#define __NPU_MODEL_API_JOURNAL_H

#include <unistd.h>

#include "npu_journal.h"

static inline int npu_tid(void)
{
	static __thread int tid;

	if (!tid)
		tid = (int)gettid();
	return tid;
}

#define NPU_API_ENTER() const unsigned long long npu_api_t0 = npu_journal_on ? npu_now_ns() : 0

#define NPU_API_EXIT(layer, ret, fmt, ...)                                                    \
	do {                                                                                  \
		if (npu_journal_on)                                                           \
			npu_journal_write("api",                                              \
					  "tid=%d\tlayer=" layer "\tname=%s\tt0=%llu"         \
					  "\tt1=%llu\tret=%lld" fmt,                          \
					  npu_tid(), __func__, npu_api_t0,                    \
					  (unsigned long long)npu_now_ns(), (long long)(ret), \
					  ##__VA_ARGS__);                                     \
	} while (0)

/*
 * The same line written by a helper on behalf of the entry point `name`
 * (its __func__) that ran NPU_API_ENTER(): `t0` is that npu_api_t0.
 */
#define NPU_API_EXIT_AS(name, t0, layer, ret, fmt, ...)                                       \
	do {                                                                                  \
		if (npu_journal_on)                                                           \
			npu_journal_write("api",                                              \
					  "tid=%d\tlayer=" layer "\tname=%s\tt0=%llu"         \
					  "\tt1=%llu\tret=%lld" fmt,                          \
					  npu_tid(), (name), (unsigned long long)(t0),        \
					  (unsigned long long)npu_now_ns(), (long long)(ret), \
					  ##__VA_ARGS__);                                     \
	} while (0)

/* Keeps a trivial exported function a real, probe-able function body. */
#define NPU_NOINLINE  __attribute__((noinline, visibility("default")))
#define NPU_BARRIER() asm volatile("" ::: "memory")

#endif /* __NPU_MODEL_API_JOURNAL_H */
