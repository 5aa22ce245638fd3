// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_capture - the capture reader (user/capture/capture.c) and `ascbpf
 * dump` (user/capture/dump.c) on an arbitrary file: the input is the whole
 * capture file, headers and checksums included, so this harness exercises
 * the framing (magic, CRC-32C, sizes, zstd) that the record-level harnesses
 * (fuzz_convert, fuzz_report) always get right.
 */
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include "capture/capture.h"
#include "commands.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_init();
	return 0;
}

/* Reads every record twice (the converter rewinds once) and checks the reader's own accounting. */
static void read_all(const char *path)
{
	struct asc_capture_reader *r = asc_capture_open(path);
	struct asc_capture_info info;
	uint64_t first = 0, n;
	const void *rec;
	size_t size;
	int pass, ret;

	if (!r)
		return;
	for (pass = 0; pass < 2; pass++) {
		n = 0;
		while ((ret = asc_capture_next(r, &rec, &size)) == 1) {
			if (size < 24 || size % 8)
				__builtin_trap(); /* the reader promises whole records */
			n++;
		}
		asc_capture_info(r, &info);
		if (info.records_read != n)
			__builtin_trap();
		if (pass == 0)
			first = n;
		else if (n != first)
			__builtin_trap(); /* a rewind reads the same records again */
		asc_capture_rewind(r);
	}
	asc_capture_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_write_file("in.cap", data, size);
	char *dump_json[] = { "dump", "--json", (char *)path, NULL };
	char *dump_text[] = { "dump", (char *)path, NULL };

	read_all(path);
	cmd_dump(3, dump_json);
	cmd_dump(2, dump_text);
	return 0;
}
