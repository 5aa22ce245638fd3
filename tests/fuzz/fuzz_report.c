// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_report - `ascbpf report` (user/report/report_input.c through
 * correlation, then the detectors and both output formats) of an arbitrary
 * record stream, wrapped into a valid capture as in fuzz_convert.  Odd
 * input sizes take --json.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <limits.h>
#include "commands.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char cap[PATH_MAX];
	const char *path = fz_write_capture("in.cap", data, size);
	char *json[] = { "report", "--json", cap, NULL };
	char *text[] = { "report", "--top", "3", cap, NULL };

	if (!path)
		return 0;
	snprintf(cap, sizeof(cap), "%s", path);
	if (size & 1)
		cmd_report(3, json);
	else
		cmd_report(4, text);
	return 0;
}
