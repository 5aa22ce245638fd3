// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * x86.c - x86-64 instructions: the decoder (arch/x86.h) that discovery uses
 * to read layouts out of small accessors, and the first-instruction rules of
 * uprobe placement (arch/prologue.h).
 *
 * Placement: the emulated set below is what this project's kernel (6.18,
 * x86-64) really emulates, measured with an entry uprobe on one-instruction
 * functions (tools/bench_attach.sh prints the same table): 0x90 nop (also
 * with a 0x66 prefix), push reg, jmp rel8/rel32, call rel32, jcc: ~0.4 us;
 * endbr64, the 0f 1f multi-byte nop, mov reg,reg, lea, sub, xor: ~15 us
 * (single-stepped).  Anything not recognised is reported single-stepped,
 * the safe assumption for cost.  x86_classify() names and sizes only the
 * instructions that matter there (a truncated call still counts as one); it
 * is a classifier of first bytes, not a second decoder.
 */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "ascbpf_events.h"
#include "arch/arch.h"
#include "arch/guard.h"
#include "arch/prologue.h"
#include "arch/x86.h"

/* ---- decoder (subset) ---- */

static int modrm_len(const uint8_t *p, size_t avail, uint8_t rex, struct asc_insn *in)
{
	uint8_t m, mod, rm;
	int n = 1;

	if (avail < 1)
		return -EILSEQ;
	m = p[0];
	mod = m >> 6;
	rm = m & 7;
	in->has_modrm = 1;
	in->reg = ((m >> 3) & 7) | ((rex & 4) << 1);
	in->base = -1;
	in->index = -1;
	in->rm = -1;
	if (mod == 3) {
		in->rm = rm | ((rex & 1) << 3);
		return 1;
	}
	in->mem = 1;
	if (rm == 4) {
		uint8_t sib, base, idx;

		if (avail < 2)
			return -EILSEQ;
		sib = p[1];
		n = 2;
		base = sib & 7;
		idx = ((sib >> 3) & 7) | ((rex & 2) << 2);
		in->index = idx == 4 ? -1 : idx;
		if (base == 5 && mod == 0) {
			in->base = -1;
			if (avail < (size_t)n + 4)
				return -EILSEQ;
			in->disp = (int32_t)(p[n] | p[n + 1] << 8 | p[n + 2] << 16 |
					     (uint32_t)p[n + 3] << 24);
			return n + 4;
		}
		in->base = base | ((rex & 1) << 3);
	} else if (rm == 5 && mod == 0) {
		in->base = ASC_X86_RIP;
		if (avail < 5)
			return -EILSEQ;
		in->disp = (int32_t)(p[1] | p[2] << 8 | p[3] << 16 | (uint32_t)p[4] << 24);
		return 5;
	} else {
		in->base = rm | ((rex & 1) << 3);
	}
	if (mod == 1) {
		if (avail < (size_t)n + 1)
			return -EILSEQ;
		in->disp = (int8_t)p[n];
		n += 1;
	} else if (mod == 2) {
		if (avail < (size_t)n + 4)
			return -EILSEQ;
		in->disp = (int32_t)(p[n] | p[n + 1] << 8 | p[n + 2] << 16 |
				     (uint32_t)p[n + 3] << 24);
		n += 4;
	}
	return n;
}

static int64_t read_imm(const uint8_t *p, int size)
{
	uint64_t v = 0; /* unsigned: an 8-byte immediate shifts into the sign bit */
	int i;

	for (i = size - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	if (size == 1)
		return (int8_t)v;
	if (size == 2)
		return (int16_t)v;
	if (size == 4)
		return (int32_t)v;
	return v;
}

/* Where the decoder stands in the instruction, and what follows the opcode. */
struct x86_cursor {
	const uint8_t *p;
	size_t left;
	uint8_t rex;
	int opsize16; /* 0x66 prefix */
	int imm, rel; /* bytes of immediate / relative displacement to read */
};

/* Decodes the ModRM (and SIB, displacement) at the cursor and steps over it. */
static int take_modrm(struct x86_cursor *c, struct asc_insn *in)
{
	int n = modrm_len(c->p, c->left, c->rex, in);

	if (n < 0)
		return n;
	c->p += n;
	c->left -= n;
	return 0;
}

/* The two-byte opcodes (0x0f escape): operands of o2. */
static int decode_0f(struct x86_cursor *c, uint8_t o2, struct asc_insn *in)
{
	int err;

	in->op2 = 0x100 | o2;
	if (o2 >= 0x80 && o2 <= 0x8f) {
		c->rel = 4;
	} else if (o2 == 0x05 || o2 == 0x0b || o2 == 0xa2) {
		;
	} else if (o2 == 0x1e || o2 == 0x1f || (o2 >= 0x40 && o2 <= 0x4f) ||
		   (o2 >= 0x90 && o2 <= 0x9f) || o2 == 0xaf || o2 == 0xb6 || o2 == 0xb7 ||
		   o2 == 0xbe || o2 == 0xbf || o2 == 0x10 || o2 == 0x11 || o2 == 0x28 ||
		   o2 == 0x29 || o2 == 0x57 || o2 == 0xef || o2 == 0xd6 || o2 == 0x6f ||
		   o2 == 0x7f || o2 == 0x6e || o2 == 0x7e || o2 == 0x2e || o2 == 0x2f ||
		   o2 == 0x16 || o2 == 0x12 || o2 == 0x13 || o2 == 0x17 || o2 == 0xa3 ||
		   o2 == 0xab || o2 == 0xb3 || o2 == 0xbb || o2 == 0xbc || o2 == 0xbd ||
		   o2 == 0xb1 || o2 == 0xc1 || o2 == 0x6c || o2 == 0x6d || o2 == 0xd4 ||
		   o2 == 0xfb || o2 == 0xfe || o2 == 0xd3) {
		err = take_modrm(c, in);
		if (err)
			return err;
		if (o2 == 0xb6 || o2 == 0xbe)
			in->opsize = 1; /* source size */
		else if (o2 == 0xb7 || o2 == 0xbf)
			in->opsize = 2;
	} else if (o2 == 0xba) {
		err = take_modrm(c, in);
		if (err)
			return err;
		c->imm = 1;
	} else {
		return -EILSEQ;
	}
	return 0;
}

/* Opcodes with a ModRM operand (and maybe an immediate); 1 if op is not one of them. */
static int decode_modrm_op(struct x86_cursor *c, uint8_t op, struct asc_insn *in)
{
	int imm32 = c->opsize16 ? 2 : 4, err;

	if (op < 0x40 && (op & 7) < 4) {
		err = take_modrm(c, in); /* ALU r/m, r and r, r/m */
		if (!err && !(op & 1))
			in->opsize = 1;
	} else if (op == 0x63 || (op >= 0x84 && op <= 0x8b) || op == 0x8d || op == 0x8f ||
		   (op >= 0xd0 && op <= 0xd3) || op == 0xfe || op == 0xff) {
		err = take_modrm(c, in);
		if (!err && (op == 0x84 || op == 0x86 || op == 0x88 || op == 0x8a || op == 0xd0 ||
			     op == 0xd2 || op == 0xfe))
			in->opsize = 1;
	} else if (op == 0xc0 || op == 0xc1 || op == 0xc6 || op == 0x80 || op == 0x83 ||
		   op == 0x6b) {
		err = take_modrm(c, in);
		c->imm = 1;
		if (!err && (op == 0xc0 || op == 0xc6 || op == 0x80))
			in->opsize = 1;
	} else if (op == 0xc7 || op == 0x81 || op == 0x69) {
		err = take_modrm(c, in);
		c->imm = imm32;
	} else if (op == 0xf6 || op == 0xf7) {
		err = take_modrm(c, in);
		if (!err && ((in->reg & 7) == 0 || (in->reg & 7) == 1))
			c->imm = op == 0xf6 ? 1 : imm32;
		if (!err && op == 0xf6)
			in->opsize = 1;
	} else {
		return 1;
	}
	return err;
}

/* The one-byte opcodes: operands of op. */
static int decode_op(struct x86_cursor *c, uint8_t op, struct asc_insn *in)
{
	uint8_t rex = c->rex;
	int err = decode_modrm_op(c, op, in);

	if (err <= 0)
		return err;
	if (op >= 0x50 && op <= 0x5f) {
		in->reg = (op & 7) | ((rex & 1) << 3);
		in->opsize = 8;
	} else if (op == 0xc3 || op == 0x90 || op == 0xcc || op == 0xc9 || op == 0xf4 ||
		   op == 0x99 || op == 0x98 || op == 0xfc) {
		;
	} else if (op == 0xc2) {
		c->imm = 2;
	} else if (op < 0x40 && (op & 7) == 4) {
		c->imm = 1;
		in->opsize = 1;
	} else if (op < 0x40 && (op & 7) == 5) {
		c->imm = c->opsize16 ? 2 : 4;
	} else if (op == 0xa8) {
		c->imm = 1;
		in->opsize = 1;
	} else if (op == 0xa9) {
		c->imm = c->opsize16 ? 2 : 4;
	} else if (op >= 0xb0 && op <= 0xb7) {
		in->reg = (op & 7) | ((rex & 1) << 3);
		c->imm = 1;
		in->opsize = 1;
	} else if (op >= 0xb8 && op <= 0xbf) {
		in->reg = (op & 7) | ((rex & 1) << 3);
		c->imm = (rex & 8) ? 8 : c->opsize16 ? 2 : 4;
	} else if ((op >= 0x70 && op <= 0x7f) || op == 0xeb) {
		c->rel = 1;
	} else if (op == 0xe8 || op == 0xe9) {
		c->rel = 4;
	} else {
		return -EILSEQ;
	}
	return 0;
}

int asc_x86_decode(const uint8_t *code, size_t avail, uint64_t pc, struct asc_insn *in)
{
	struct x86_cursor c = { .p = code, .left = avail };
	uint8_t op;
	int err;

	memset(in, 0, sizeof(*in));
	in->reg = in->base = in->index = in->rm = -1;
	while (c.left) {
		uint8_t b = *c.p;

		if (b == 0x66)
			c.opsize16 = 1;
		else if (b == 0xf2 || b == 0xf3 || b == 0x2e || b == 0x3e || b == 0x26 ||
			 b == 0x64 || b == 0x65 || b == 0x36 || b == 0xf0)
			;
		else
			break;
		c.p++;
		c.left--;
	}
	if (c.left && (*c.p & 0xf0) == 0x40) {
		c.rex = *c.p++;
		c.left--;
	}
	if (!c.left)
		return -EILSEQ;
	op = *c.p++;
	c.left--;
	in->opcode = op;
	in->opsize = (c.rex & 8) ? 8 : c.opsize16 ? 2 : 4;

	if (op == 0x0f) {
		if (!c.left)
			return -EILSEQ;
		c.left--;
		err = decode_0f(&c, *c.p++, in);
	} else {
		err = decode_op(&c, op, in);
	}
	if (err)
		return err;
	if (c.imm) {
		if (c.left < (size_t)c.imm)
			return -EILSEQ;
		in->imm = read_imm(c.p, c.imm);
		c.p += c.imm;
		c.left -= c.imm;
	}
	if (c.rel) {
		if (c.left < (size_t)c.rel)
			return -EILSEQ;
		in->imm = read_imm(c.p, c.rel);
		c.p += c.rel;
		c.left -= c.rel;
	}
	in->len = c.p - code;
	if (c.rel)
		in->target = pc + in->len + in->imm;
	else if (in->mem && in->base == ASC_X86_RIP)
		in->target = pc + in->len + in->disp;
	return in->len;
}

int asc_x86_decode_all(const uint8_t *code, size_t len, uint64_t pc, struct asc_insn *out, int max)
{
	size_t off = 0;
	int n = 0;

	while (off < len && n < max) {
		int l = asc_x86_decode(code + off, len - off, pc + off, &out[n]);

		if (l < 0)
			break;
		off += l;
		n++;
	}
	return n;
}

/* ---- uprobe placement ---- */

static const char *const reg64[16] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15",
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

int asc_x86_prologue(const uint8_t *code, size_t len, uint64_t func_size, struct asc_prologue *out)
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

/* ---- static-initialisation guards (arch/guard.h) ---- */

/* A read of one byte at a RIP-relative address: movzbl, cmpb $0, mov to an 8-bit register. */
static bool x86_rip_byte_read(const struct asc_insn *in)
{
	if (!in->mem || in->base != ASC_X86_RIP)
		return false;
	if (in->op2 == 0x1b6) /* movzbl / movzbw */
		return true;
	if (in->opcode == 0x80 && (in->reg & 7) == 7 && in->imm == 0) /* cmpb $0 */
		return true;
	return in->opcode == 0x8a && !in->op2; /* mov m8,r8 */
}

/* Whether some lea X(%rip) among the first max instructions at code[off..) has X in cand[]. */
static bool x86_lea_confirms(const uint8_t *code, size_t len, uint64_t pc, size_t off, int max,
			     const uint64_t *cand, size_t nc, uint64_t *guard)
{
	struct asc_insn in;
	size_t j;
	int i;

	for (i = 0; i < max && off < len; i++) {
		int l = asc_x86_decode(code + off, len - off, pc + off, &in);

		if (l < 0)
			return false;
		off += (size_t)l;
		if (in.opcode == 0x8d && !in.op2 && in.mem && in.base == ASC_X86_RIP)
			for (j = 0; j < nc; j++)
				if (cand[j] == in.target) {
					*guard = in.target;
					return true;
				}
		if (!in.op2 && (in.opcode == 0xc3 || in.opcode == 0xc2 || in.opcode == 0xe9 ||
				in.opcode == 0xeb))
			return false; /* the straight-line code ends here */
	}
	return false;
}

/*
 * The guard test comes first and the lea of the same address either follows
 * in line or at the target of the branch taken when the guard is 0 (the
 * cold path, laid out later in the function).
 */
int asc_x86_static_guard(const uint8_t *code, size_t len, uint64_t pc, uint64_t *guard)
{
	uint64_t cand[4], br[4];
	size_t off = 0, nc = 0, nb = 0, j;
	struct asc_insn in;
	int i;

	for (i = 0; i < ASC_GUARD_SCAN_INSNS && off < len; i++) {
		int l = asc_x86_decode(code + off, len - off, pc + off, &in);

		if (l < 0)
			break;
		if (x86_lea_confirms(code, len, pc, off, 1, cand, nc, guard))
			return 0;
		off += (size_t)l;
		if (x86_rip_byte_read(&in) && nc < sizeof(cand) / sizeof(cand[0]))
			cand[nc++] = in.target;
		else if (nc && nb < sizeof(br) / sizeof(br[0]) &&
			 ((!in.op2 && in.opcode >= 0x70 && in.opcode <= 0x7f) ||
			  (in.op2 >= 0x180 && in.op2 <= 0x18f)))
			br[nb++] = in.target;
		if (!in.op2 && (in.opcode == 0xc3 || in.opcode == 0xc2 || in.opcode == 0xe9 ||
				in.opcode == 0xeb))
			break; /* the function's straight-line head ends here */
	}
	for (j = 0; j < nb; j++)
		if (br[j] >= pc && br[j] < pc + len &&
		    x86_lea_confirms(code, len, pc, (size_t)(br[j] - pc), 8, cand, nc, guard))
			return 0;
	return -ENOENT;
}

/* ---- calling convention (arch/arch.h) ---- */

const struct asc_arch asc_arch_x86_64 = {
	.name = "x86_64",
	.elf_machine = EM_X86_64,
	.nr_arg_regs = 6,
	.arg_regs = { "rdi", "rsi", "rdx", "rcx", "r8", "r9" },
	.ret_reg = "rax",
	.sret_reg = "rdi",
	.sret_shifts_args = 1,
	.ret_addr = "[sp]",
	.tp_reg = "fs base",
	.dtv_off = 8,
	.prologue =
		"endbr64 skipped when an instruction follows; emulated: nop, push, jmp/call/jcc",
};
