// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include "lib/log.h"

static enum asc_log_level max_level = ASC_LOG_INFO;
static asc_log_fn sink;

static void default_sink(enum asc_log_level level, const char *fmt, va_list ap)
{
	static const char *const prefix[] = { "error: ", "warning: ", "", "debug: " };

	if (level > max_level)
		return;
	fprintf(stderr, "ascbpf: %s", prefix[level]);
	vfprintf(stderr, fmt, ap);
}

void asc_log_set_sink(asc_log_fn fn)
{
	sink = fn;
}

void asc_log_set_level(enum asc_log_level level)
{
	max_level = level;
}

void asc_log(enum asc_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(sink ? sink : default_sink)(level, fmt, ap);
	va_end(ap);
}
