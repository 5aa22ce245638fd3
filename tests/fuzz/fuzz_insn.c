// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_insn - the instruction decoders that read the traced target's code:
 * uprobe placement (user/arch/prologue.c, x86-64 and aarch64) and the
 * x86-64 subset decoder of PyTorch discovery (user/discovery/pytorch.c,
 * asc_x86_decode) walked over the whole input as decode_all does, and from
 * every offset (a hostile library decides where its functions start).
 */
#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include "arch/prologue.h"
#include "arch/x86.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

static void check_prologue(uint16_t machine, const uint8_t *code, size_t len, uint64_t fsize)
{
	struct asc_prologue p;

	if (asc_prologue_analyze(machine, code, len, fsize, &p))
		__builtin_trap();
	if (p.skip > len || p.insn_len > len || !asc_prologue_choice(p.flags))
		__builtin_trap(); /* never a probe outside the bytes it was shown */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct asc_insn in;
	size_t off;
	int n;

	check_prologue(EM_X86_64, data, size, size);
	check_prologue(EM_X86_64, data, size, 0);
	check_prologue(EM_AARCH64, data, size, size);
	check_prologue(EM_AARCH64, data, size, size ? data[0] : 0);
	for (off = 0; off<size; off += n> 0 ? (size_t)n : 1) {
		n = asc_x86_decode(data + off, size - off, 0x400000 + off, &in);
		if (n > 0 && (size_t)n > size - off)
			__builtin_trap(); /* decoded past the bytes it was given */
	}
	for (off = 0; off < size && off < 64; off++)
		asc_x86_decode(data + off, size - off, off, &in);
	return 0;
}
