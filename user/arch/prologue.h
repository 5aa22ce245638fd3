/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * prologue.h - where to put a uprobe in a function, from its first
 * instruction(s).
 *
 * A uprobe costs ~0.6 us when the kernel can emulate the probed instruction
 * and ~11 us when it must single-step it out of line (measured on our 6.18
 * VM).  x86-64 CET builds start most functions with endbr64, which is
 * single-stepped; it only marks an indirect-branch target and touches no
 * register, memory or flag, so probing just after it sees the same
 * arguments, stack pointer and return address as probing at the entry
 * (which a uretprobe needs).  We skip it when the function is long enough
 * to have an instruction after it, and report whether the instruction we
 * land on is emulated.  Nothing else is skipped: any other instruction may
 * change what the probe reads.
 *
 * Emulated by the x86-64 kernel (arch/x86/kernel/uprobes.c, 6.x): nop
 * (0x90 and 0f 1f /0 multi-byte nops), push reg, mov reg,reg, jmp/call rel,
 * jcc.  aarch64 (arch/arm64/kernel/probes/decode-insn.c): hints (nop, bti,
 * paciasp ...) and PC-relative branches/adr/adrp/ldr-literal are simulated,
 * so bti is not skipped there: it costs nothing.
 */
#ifndef __ASCBPF_PROLOGUE_H
#define __ASCBPF_PROLOGUE_H

#include <stddef.h>
#include <stdint.h>

#define ASC_PROLOGUE_SCAN 4096 /* bytes of a function read for the analysis */

struct asc_prologue {
	uint32_t skip;	   /* bytes to add to the function's offset */
	uint32_t flags;	   /* ASC_PROBE_SKIPPED_ENDBR, ASC_PROBE_SINGLESTEP (ascbpf_events.h) */
	uint32_t insn_len; /* length of the probed instruction, 0 if not decoded */
	char insn[24];	   /* the probed instruction, e.g. "push %rbp", "endbr64", "lea" */
};

/*
 * Analyses the first bytes of a function of func_size bytes (0 if unknown)
 * for ELF machine (EM_X86_64, EM_AARCH64).  len is how many bytes of code
 * were read: pass the whole function when it is small (probes.c reads up to
 * ASC_PROLOGUE_SCAN bytes), so that an endbr64 is not skipped when the
 * function jumps back to the instruction after it (a loop head there would
 * make the probe fire per iteration).  Unknown machines, unknown instructions and short reads give
 * skip 0 and ASC_PROBE_SINGLESTEP: the safe, slow choice.  Returns 0, or
 * -EINVAL for NULL arguments.
 */
int asc_prologue_analyze(uint16_t machine, const uint8_t *code, size_t len, uint64_t func_size,
			 struct asc_prologue *out);

/* Human description for `ascbpf probes`: "after endbr64, emulated", "single-stepped", ... */
const char *asc_prologue_choice(uint32_t flags);

#endif /* __ASCBPF_PROLOGUE_H */
