/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * x86.h - x86-64: one instruction decoder (the subset compilers emit in
 * small accessors and prologues) and the x86-64 rules of uprobe placement
 * behind asc_prologue_analyze() (arch/prologue.h).
 */
#ifndef __ASCBPF_ARCH_X86_H
#define __ASCBPF_ARCH_X86_H

#include <stddef.h>
#include <stdint.h>

struct asc_prologue;

/* One decoded x86-64 instruction. */
struct asc_insn {
	uint8_t len;
	uint8_t opcode; /* primary opcode byte (0x0f for the escapes: see op2) */
	uint16_t op2;	/* 0x100 | second opcode byte for 0x0f escapes, else 0 */
	uint8_t opsize; /* operand size in bytes: 1, 2, 4 or 8 */
	uint8_t has_modrm;
	uint8_t mem;  /* r/m is a memory operand */
	int8_t reg;   /* ModRM.reg (with REX.R), or the register of push/pop/mov-imm */
	int8_t base;  /* memory base register, -1 none, 16 = RIP */
	int8_t index; /* SIB index register, -1 none */
	int8_t rm;    /* register operand when !mem */
	int64_t disp;
	int64_t imm;
	uint64_t target; /* RIP-relative memory address or branch target (absolute) */
};
#define ASC_X86_RAX 0
#define ASC_X86_RCX 1
#define ASC_X86_RDX 2
#define ASC_X86_RBX 3
#define ASC_X86_RSP 4
#define ASC_X86_RBP 5
#define ASC_X86_RSI 6
#define ASC_X86_RDI 7
#define ASC_X86_RIP 16

/*
 * Decodes one instruction at code (avail bytes, at address pc).  Returns its
 * length or -EILSEQ for an instruction outside the supported subset.
 */
int asc_x86_decode(const uint8_t *code, size_t avail, uint64_t pc, struct asc_insn *in);

/*
 * Decodes the instructions of code (len bytes at pc) into out, up to max,
 * stopping at the first outside the subset.  Returns how many.
 */
int asc_x86_decode_all(const uint8_t *code, size_t len, uint64_t pc, struct asc_insn *out, int max);

/* asc_static_guard() for EM_X86_64 (arch/guard.h): 0 or -ENOENT. */
int asc_x86_static_guard(const uint8_t *code, size_t len, uint64_t pc, uint64_t *guard);

/*
 * asc_prologue_analyze() for EM_X86_64: code is len bytes of a function of
 * func_size bytes (0 if unknown), len already cut at func_size; out zeroed.
 */
int asc_x86_prologue(const uint8_t *code, size_t len, uint64_t func_size, struct asc_prologue *out);

#endif /* __ASCBPF_ARCH_X86_H */
