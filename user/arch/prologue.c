// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * prologue.c - first-instruction analysis for uprobe placement.
 *
 * The emulated set below is what this project's kernel (6.18, x86-64)
 * really emulates, measured with an entry uprobe on one-instruction
 * functions (tools/bench_attach.sh prints the same table): 0x90 nop (also
 * with a 0x66 prefix), push reg, jmp rel8/rel32, call rel32, jcc: ~0.4 us;
 * endbr64, the 0f 1f multi-byte nop, mov reg,reg, lea, sub, xor: ~15 us
 * (single-stepped).  Anything not recognised is reported single-stepped,
 * the safe assumption for cost.
 */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "ascbpf_events.h"
#include "arch/prologue.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

static const char *const reg64[16] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

/*
 * Decodes the x86-64 instruction at code for the purposes above: sets name,
 * its length when known, and returns 1 if the kernel emulates it.
 */
static int x86_classify(const uint8_t *c, size_t len, char *name, size_t nlen, uint32_t *ilen)
{
	size_t i = 0;
	uint8_t rex = 0;

	*ilen = 0;
	if (len >= 4 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa) {
		snprintf(name, nlen, "endbr64");
		*ilen = 4;
		return 0;
	}
	if (len >= 1 && c[0] == 0x90) {
		snprintf(name, nlen, "nop");
		*ilen = 1;
		return 1;
	}
	if (len >= 2 && c[0] == 0x66 && c[1] == 0x90) {
		snprintf(name, nlen, "xchg %%ax,%%ax");
		*ilen = 2;
		return 1;
	}
	if (len >= 2 && c[0] == 0x0f && c[1] == 0x1f) {
		snprintf(name, nlen, "nopl");
		return 0;
	}
	if (len >= 1 && (c[0] & 0xf0) == 0x40) {
		rex = c[0];
		i = 1;
	}
	if (len > i && c[i] >= 0x50 && c[i] <= 0x57 && !(rex & 0x08)) {
		snprintf(name, nlen, "push %%%s", reg64[(c[i] - 0x50) | ((rex & 1) << 3)]);
		*ilen = (uint32_t)i + 1;
		return 1;
	}
	if (rex)
		goto other;
	/* a branch cut off by the end of the bytes read (or of the function) is not decoded */
	if ((len >= 5 && (c[0] == 0xe8 || c[0] == 0xe9)) || (len >= 2 && c[0] == 0xeb)) {
		snprintf(name, nlen, c[0] == 0xe8 ? "call" : "jmp");
		*ilen = c[0] == 0xeb ? 2 : 5;
		return 1;
	}
	if (len >= 2 && c[0] >= 0x70 && c[0] <= 0x7f) {
		snprintf(name, nlen, "jcc");
		*ilen = 2;
		return 1;
	}
	if (len >= 6 && c[0] == 0x0f && c[1] >= 0x80 && c[1] <= 0x8f) {
		snprintf(name, nlen, "jcc");
		*ilen = 6;
		return 1;
	}
other:
	/* Only a few common prologue instructions are named; the rest are "other". */
	if (len > i) {
		uint8_t op = c[i];

		if (op == 0x89 || op == 0x8b)
			snprintf(name, nlen, "mov");
		else if (op == 0x8d)
			snprintf(name, nlen, "lea");
		else if ((op == 0x83 || op == 0x81) && len > i + 1 && ((c[i + 1] >> 3) & 7) == 5)
			snprintf(name, nlen, "sub");
		else if (op == 0x31 || op == 0x33)
			snprintf(name, nlen, "xor");
		else if (op == 0xc3)
			snprintf(name, nlen, "ret");
		else
			snprintf(name, nlen, "other (%02x)", op);
	} else {
		snprintf(name, nlen, "unknown");
	}
	return 0;
}

/*
 * Whether some byte sequence in code[from..len) decodes as a direct jmp/jcc
 * (rel8 or rel32) whose target is offset `target` of the function.  A
 * compiler may turn a self tail call into a loop whose head is right after
 * the endbr64; a probe there would fire on every iteration.  This is a scan
 * at every byte, not a decode, so it over-reports (data that looks like a
 * jump), which only costs the skip: the safe direction.
 */
static bool x86_jumps_to(const uint8_t *code, size_t len, size_t from, size_t target)
{
	size_t i;

	for (i = from; i + 2 <= len; i++) {
		uint8_t op = code[i];
		int64_t dst;

		if (op == 0xeb || (op >= 0x70 && op <= 0x7f)) {
			dst = (int64_t)i + 2 + (int8_t)code[i + 1];
			if (dst == (int64_t)target)
				return true;
		}
		if ((op == 0xe9 && i + 5 <= len) ||
		    (op == 0x0f && code[i + 1] >= 0x80 && code[i + 1] <= 0x8f && i + 6 <= len)) {
			size_t at = op == 0xe9 ? i + 1 : i + 2;
			int32_t rel;

			memcpy(&rel, code + at, 4);
			dst = (int64_t)at + 4 + rel;
			if (dst == (int64_t)target)
				return true;
		}
	}
	return false;
}

static int x86_analyze(const uint8_t *code, size_t len, uint64_t func_size,
		       struct asc_prologue *out)
{
	uint32_t ilen;
	int emulated = x86_classify(code, len, out->insn, sizeof(out->insn), &ilen);

	/*
	 * Skip endbr64 only when another instruction follows inside the
	 * function (func_size > 4, or unknown size but bytes were read).
	 */
	if (ilen == 4 && !emulated && !strcmp(out->insn, "endbr64") && len > 4 &&
	    (func_size == 0 || func_size > 4) && !x86_jumps_to(code, len, 4, 4)) {
		out->skip = 4;
		out->flags |= ASC_PROBE_SKIPPED_ENDBR;
		emulated = x86_classify(code + 4, len - 4, out->insn, sizeof(out->insn), &ilen);
	}
	out->insn_len = ilen;
	if (!emulated)
		out->flags |= ASC_PROBE_SINGLESTEP;
	return 0;
}

static int a64_analyze(const uint8_t *code, size_t len, struct asc_prologue *out)
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
		return x86_analyze(code, len, func_size, out);
	case EM_AARCH64:
		return a64_analyze(code, len, out);
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
