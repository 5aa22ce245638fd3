// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * prologue.c - first-instruction analysis for uprobe placement, by ELF
 * machine: the rules of each architecture are in arch/x86.c and
 * arch/arm64.c.  Unknown machines get the safe, slow choice.
 */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "ascbpf_events.h"
#include "arch/arm64.h"
#include "arch/prologue.h"
#include "arch/x86.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

int asc_prologue_analyze(uint16_t machine, const uint8_t *code, size_t len, uint64_t func_size,
			 struct asc_prologue *out)
{
	if (!out || (!code && len))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (func_size && len > func_size)
		len = func_size;
	switch (machine) {
	case EM_X86_64:
		return asc_x86_prologue(code, len, func_size, out);
	case EM_AARCH64:
		return asc_arm64_prologue(code, len, out);
	default:
		snprintf(out->insn, sizeof(out->insn), "unknown");
		out->flags |= ASC_PROBE_SINGLESTEP;
		return 0;
	}
}

const char *asc_prologue_choice(uint32_t flags)
{
	bool skipped = flags & ASC_PROBE_SKIPPED_ENDBR;

	if (flags & ASC_PROBE_SINGLESTEP)
		return skipped ? "after endbr64, single-stepped" : "single-stepped";
	return skipped ? "after endbr64, emulated" : "emulated";
}
