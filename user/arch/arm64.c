// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * arm64.c - aarch64: the first-instruction rules of uprobe placement
 * (arch/prologue.h) and the calling convention (arch/arch.h).
 *
 * What the arm64 kernel does with the probed instruction
 * (arch/arm64/kernel/probes/decode-insn.c, arm_probe_decode_insn(), which
 * arch_uprobe_analyze_insn() calls; 5.10 to 6.x):
 *   simulated (no out-of-line slot): b, bl, b.cond, cbz/cbnz, tbz/tbnz,
 *     adr/adrp, br/blr/ret;
 *   rejected (the uprobe fails with EINVAL): loads of PC-relative literals
 *     (ldr/ldrsw/prfm literal: the kprobe path simulates ldr literal, the
 *     uprobe path does not), exclusive and acquire/release loads/stores
 *     (the kernel's mask takes both), msr, exception-generating instructions
 *     (svc, brk, hvc ...), hints outside its steppable list;
 *   single-stepped out of line: the rest, hints of the steppable list
 *     included: nop, bti (c/j/jc), paciasp/pacibsp, paciaz/pacibz,
 *     pacia1716/pacib1716, xpaclri.
 * So a bti c or paciasp at the entry costs a single step, as an x86-64
 * endbr64 does.  Nothing is skipped: probing after paciasp would let a
 * uretprobe replace the already signed x30, and the function's autiasp
 * would then fail; probing after bti c lands on the stp/paciasp that
 * follows, single-stepped as well, for no gain.
 */
#include <elf.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "ascbpf_events.h"
#include "arch/arch.h"
#include "arch/arm64.h"
#include "arch/prologue.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

enum { A64_STEP, A64_SIM, A64_REJECT };

/* HINT #op: its name, and whether the kernel single-steps it (else rejects). */
static int hint_class(uint32_t op, const char **name)
{
	switch (op) {
	case 0:
		*name = "nop";
		return A64_STEP;
	case 7:
		*name = "xpaclri";
		return A64_STEP;
	case 8:
		*name = "pacia1716";
		return A64_STEP;
	case 10:
		*name = "pacib1716";
		return A64_STEP;
	case 24:
		*name = "paciaz";
		return A64_STEP;
	case 25:
		*name = "paciasp";
		return A64_STEP;
	case 26:
		*name = "pacibz";
		return A64_STEP;
	case 27:
		*name = "pacibsp";
		return A64_STEP;
	case 32:
	case 34:
	case 36:
	case 38:
		*name = "bti";
		return A64_STEP;
	default:
		*name = "hint";
		return A64_REJECT;
	}
}

/* The kernel's class of one instruction word, and its mnemonic as objdump spells it. */
static int a64_classify(uint32_t insn, const char **name)
{
	*name = "other";
	if ((insn & 0xfffff01f) == 0xd503201f)
		return hint_class((insn >> 5) & 0x7f, name);
	if ((insn & 0x7c000000) == 0x14000000)
		return *name = insn >> 31 ? "bl" : "b", A64_SIM;
	if ((insn & 0xff000010) == 0x54000000)
		return *name = "b.cond", A64_SIM;
	if ((insn & 0x7e000000) == 0x34000000)
		return *name = insn & 0x01000000 ? "cbnz" : "cbz", A64_SIM;
	if ((insn & 0x7e000000) == 0x36000000)
		return *name = insn & 0x01000000 ? "tbnz" : "tbz", A64_SIM;
	if ((insn & 0x1f000000) == 0x10000000)
		return *name = insn >> 31 ? "adrp" : "adr", A64_SIM;
	if ((insn & 0xff9ffc1f) == 0xd61f0000) {
		static const char *const br[] = { "br", "blr", "ret" };

		return *name = br[(insn >> 21) & 3], A64_SIM;
	}
	if ((insn & 0x3b000000) == 0x18000000)
		return *name = (insn & 0xc4000000) == 0xc0000000 ? "prfm" :
			       (insn & 0xc4000000) == 0x80000000 ? "ldrsw" :
								   "ldr",
		       A64_REJECT;
	if ((insn & 0x3f000000) == 0x08000000)
		return *name = "exclusive", A64_REJECT;
	if ((insn & 0xff000000) == 0xd4000000)
		return *name = "exception", A64_REJECT;
	if ((insn & 0xfff8f01f) == 0xd500401f || (insn & 0xfff00000) == 0xd5100000)
		return *name = "msr", A64_REJECT;
	if ((insn & 0x7fc00000) == 0x29800000 || (insn & 0x7fc00000) == 0x29000000 ||
	    (insn & 0x7fc00000) == 0x28800000)
		*name = "stp";
	else if ((insn & 0x7f800000) == 0x51000000)
		*name = "sub";
	else if ((insn & 0x7f800000) == 0x11000000)
		*name = (insn & 0x003ffc00) == 0 &&
					((insn & 0x1f) == 31 || ((insn >> 5) & 0x1f) == 31) ?
				"mov" :
				"add";
	else if ((insn & 0x7fe0ffe0) == 0x2a0003e0)
		*name = "mov";
	else if ((insn & 0x7f800000) == 0x52800000)
		*name = "mov";
	return A64_STEP;
}

int asc_arm64_prologue(const uint8_t *code, size_t len, struct asc_prologue *out)
{
	const char *name;
	uint32_t insn;
	int cls;

	if (len < 4) {
		snprintf(out->insn, sizeof(out->insn), "unknown");
		out->flags |= ASC_PROBE_SINGLESTEP;
		return 0;
	}
	memcpy(&insn, code, 4); /* aarch64 Linux is little-endian */
	out->insn_len = 4;
	cls = a64_classify(insn, &name);
	snprintf(out->insn, sizeof(out->insn), "%s%s", name,
		 cls == A64_REJECT ? " (rejected)" : "");
	if (cls != A64_SIM)
		out->flags |= ASC_PROBE_SINGLESTEP;
	return 0;
}

/* ---- calling convention (arch/arch.h) ---- */

const struct asc_arch asc_arch_aarch64 = {
	.name = "aarch64",
	.elf_machine = EM_AARCH64,
	.nr_arg_regs = 8,
	.arg_regs = { "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7" },
	.ret_reg = "x0",
	.sret_reg = "x8",
	.sret_shifts_args = 0,
	.ret_addr = "x30",
	.tp_reg = "tpidr_el0",
	.dtv_off = 0,
	.prologue = "nothing skipped; simulated: hints (nop, bti, paciasp), b/bl/b.cond/cbz/tbz, "
		    "adr/adrp, ldr literal",
	/* the kernel replaces x30; where the callee saves it is its own business */
	.no_unwind_guard = "on arm64 the kernel does not record where a return probe's "
			   "return address is kept",
};
