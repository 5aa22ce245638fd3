/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * log.h - the one diagnostics sink for library code in user/.
 *
 * Modules never print: they call asc_log(), which main routes to stderr
 * (and, with -v, lets ASC_LOG_DEBUG through).  Tests may install their own
 * sink to capture messages.
 */
#ifndef __ASCBPF_LOG_H
#define __ASCBPF_LOG_H

#include <stdarg.h>

enum asc_log_level {
	ASC_LOG_ERROR = 0,
	ASC_LOG_WARN = 1,
	ASC_LOG_INFO = 2,
	ASC_LOG_DEBUG = 3,
};

typedef void (*asc_log_fn)(enum asc_log_level level, const char *fmt, va_list ap);

/* Installs fn as the sink (NULL restores the default stderr sink). */
void asc_log_set_sink(asc_log_fn fn);
/* Messages above level are dropped by the default sink. */
void asc_log_set_level(enum asc_log_level level);

void asc_log(enum asc_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define asc_err(...)  asc_log(ASC_LOG_ERROR, __VA_ARGS__)
#define asc_warn(...) asc_log(ASC_LOG_WARN, __VA_ARGS__)
#define asc_info(...) asc_log(ASC_LOG_INFO, __VA_ARGS__)
#define asc_dbg(...)  asc_log(ASC_LOG_DEBUG, __VA_ARGS__)

#endif /* __ASCBPF_LOG_H */
