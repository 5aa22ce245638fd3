/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * npu_journal.h - the ground-truth journal writer (format: npu_model/JOURNAL.md).
 *
 * Implemented once, in libnpu_common.so, which every npu_model library and
 * npu-modeld link, so a process has one journal file however many model
 * libraries it loads.  Off unless NPU_MODEL_JOURNAL=DIR is set (or
 * npu_journal_open_dir() is called, as npu-modeld does for --journal).
 */
#ifndef __NPU_MODEL_JOURNAL_H
#define __NPU_MODEL_JOURNAL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Nonzero while the journal is on: test it before formatting anything. */
extern volatile int npu_journal_on;

/* CLOCK_MONOTONIC in ns: the clock every journal time uses. */
uint64_t npu_now_ns(void);

/* Opens DIR/journal.<name>.tsv (name: the pid, or "modeld"); 0 or -errno. */
int npu_journal_open_dir(const char *dir, const char *name);

/*
 * Writes one line: KIND, TAB, then the printf-formatted fields
 * ("key=value\tkey=value"), newline.  Thread-safe; lines are never
 * interleaved; buffered and flushed at exit and when the buffer fills.
 */
void npu_journal_write(const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Writes buffered lines to the file now. */
void npu_journal_flush(void);

#ifdef __cplusplus
}
#endif

#endif /* __NPU_MODEL_JOURNAL_H */
