// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * guard.c - static-initialisation guards from first instructions, by ELF
 * machine (arch/guard.h); the x86-64 decoder is asc_x86_static_guard().
 */
#include <elf.h>
#include <errno.h>
#include "arch/guard.h"
#include "arch/x86.h"

int asc_static_guard(uint16_t machine, const uint8_t *code, size_t len, uint64_t pc,
		     uint64_t *guard)
{
	if (!guard || (!code && len))
		return -EINVAL;
	switch (machine) {
	case EM_X86_64:
		return asc_x86_static_guard(code, len, pc, guard);
	default:
		return -EOPNOTSUPP; /* aarch64: adrp + ldarb (arch/guard.h), for the arm64 room */
	}
}
