// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_ioctl - the davinci ioctl decoder (user/capture/ioctl_decode.c):
 * input = u32 command, u8 module (ASC_MOD_*, any value), then the argument
 * bytes as captured (any length, also shorter than the command's struct).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "capture/ioctl_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[128], args[1024], small[8];
	const struct asc_ioctl_desc *d;
	unsigned int module;
	uint32_t cmd;

	if (size < 5)
		return 0;
	memcpy(&cmd, data, 4);
	module = data[4];
	data += 5;
	size -= 5;
	d = asc_ioctl_lookup(cmd, module);
	if (d && d->cmd != cmd)
		__builtin_trap(); /* a lookup returns the command asked for */
	asc_ioctl_lookup(cmd, asc_ioctl_guess_module(cmd));
	if (asc_ioctl_name(cmd, module, name, sizeof(name)) < 0 || !memchr(name, 0, sizeof(name)))
		__builtin_trap();
	asc_ioctl_name(cmd, module, small, sizeof(small));
	asc_ioctl_format_args(cmd, module, data, size, args, sizeof(args));
	asc_ioctl_format_args(cmd, module, data, size, small, sizeof(small));
	return 0;
}
