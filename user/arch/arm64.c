// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * arm64.c - aarch64 first-instruction rules of uprobe placement
 * (arch/prologue.h): hints (nop, bti, paciasp ...) and PC-relative
 * branches/adr are simulated by the kernel (arch/arm64/kernel/probes/
 * decode-insn.c), so nothing is skipped; the rest is single-stepped.
 */
#include <stdio.h>
#include <string.h>
#include "ascbpf_events.h"
#include "arch/arm64.h"
#include "arch/prologue.h"

int asc_arm64_prologue(const uint8_t *code, size_t len, struct asc_prologue *out)
{
	uint32_t insn;

	if (len < 4) {
		snprintf(out->insn, sizeof(out->insn), "unknown");
		out->flags |= ASC_PROBE_SINGLESTEP;
		return 0;
	}
	memcpy(&insn, code, 4);		/* aarch64 Linux is little-endian */
	out->insn_len = 4;
	if ((insn & 0xfffff01f) == 0xd503201f) {
		/* HINT space: nop, bti, paciasp, ...: simulated as a nop. */
		if ((insn & 0xffffff3f) == 0xd503241f)
			snprintf(out->insn, sizeof(out->insn), "bti");
		else if (insn == 0xd503233f)
			snprintf(out->insn, sizeof(out->insn), "paciasp");
		else if (insn == 0xd503201f)
			snprintf(out->insn, sizeof(out->insn), "nop");
		else
			snprintf(out->insn, sizeof(out->insn), "hint");
		return 0;
	}
	if ((insn & 0x7c000000) == 0x14000000 || (insn & 0xff000010) == 0x54000000 ||
	    (insn & 0x7e000000) == 0x34000000 || (insn & 0x7e000000) == 0x36000000) {
		snprintf(out->insn, sizeof(out->insn), "branch");
		return 0;
	}
	if ((insn & 0x1f000000) == 0x10000000) {
		snprintf(out->insn, sizeof(out->insn), "adr");
		return 0;
	}
	if ((insn & 0xffc003e0) == 0xa98003e0 || (insn & 0xffc003e0) == 0xa90003e0)
		snprintf(out->insn, sizeof(out->insn), "stp ...,[sp]");
	else
		snprintf(out->insn, sizeof(out->insn), "other");
	out->flags |= ASC_PROBE_SINGLESTEP;
	return 0;
}
