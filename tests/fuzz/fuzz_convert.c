// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_convert - correlation (user/analysis/correlate.c) and `ascbpf
 * convert` (user/convert/convert.c) of an arbitrary record stream.  The
 * input is the records (what a frame holds after decompression, struct
 * asc_hdr first); fuzz_common wraps it into a valid capture, so every
 * mutation reaches the record parsers.  The output goes to a scratch
 * directory on tmpfs that is emptied after each input.  The input's size
 * picks the variant: torch_npu directories at the traced level, at level 0
 * or 2, or the Chrome trace export.
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
	char out[PATH_MAX], chrome[PATH_MAX], cap[PATH_MAX];
	const char *path = fz_write_capture("in.cap", data, size);

	if (!path)
		return 0;
	snprintf(cap, sizeof(cap), "%s", path);
	snprintf(out, sizeof(out), "%s/out", fz_dir());
	snprintf(chrome, sizeof(chrome), "%s/out/trace.json", fz_dir());
	char *variants[4][9] = {
		{ "convert", cap, "-o", out, "--force", "--worker-name", "fz", NULL },
		{ "convert", cap, "-o", out, "--force", "--level", "2", NULL },
		{ "convert", cap, "-o", chrome, "--export", "chrome", "--force", NULL },
		{ "convert", cap, "-o", out, "--force", "--level", "0", NULL },
	};
	char **argv = variants[size % 4];
	int argc = 0;

	while (argv[argc])
		argc++;
	cmd_convert(argc, argv);
	fz_rm_tree("out");
	return 0;
}
