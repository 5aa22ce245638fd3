// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libasctest.so - a small shared object for the attach-layer tests
 * (test_elfsym, test_probes, test_attach): exported functions with known
 * first instructions, a local function that only .symtab names, and
 * ASC_TEST_NR_COUNTED plain functions the attach test probes and calls a
 * known number of times.  Built three ways by tests/lib/probes/build.mk: plain,
 * stripped (.dynsym only) and with the text segment at a virtual address
 * different from its file offset.
 */
#include <stdint.h>
#include "asctest.h"

#if defined(__x86_64__)
/* Naked and nocf_check: the first bytes are exactly these instructions (no added endbr64). */
#define NAKED(name, body)                                                  \
	__attribute__((naked, noinline, used, nocf_check)) void name(void) \
	{                                                                  \
		__asm__ volatile(body "\n\tret");                          \
	}

NAKED(asc_test_endbr_push, "endbr64\n\tpush %rbp\n\tpop %rbp")
NAKED(asc_test_push, "push %rbx\n\tpop %rbx")
NAKED(asc_test_lea, "lea 8(%rdi),%rax")
NAKED(asc_test_endbr_lea, "endbr64\n\tlea 8(%rdi),%rax")
NAKED(asc_test_nop, "nop")
NAKED(asc_test_nopl, "nopl 0(%rax,%rax,1)")
#elif defined(__aarch64__)
/*
 * GCC has no naked functions on aarch64: the same names, defined in assembly,
 * with the aarch64 counterparts of the x86-64 bodies (bti c for endbr64, a
 * frame-record stp for push, add for lea).
 */
#define NAKED(name, body)                                                                      \
	__asm__(".text\n\t.globl " #name "\n\t.type " #name ", %function\n" #name ":\n\t" body \
		"\n\tret\n\t.size " #name ", .-" #name "\n");

NAKED(asc_test_endbr_push, "bti c\n\tstp x29, x30, [sp, #-16]!\n\tldp x29, x30, [sp], #16")
NAKED(asc_test_push, "stp x29, x30, [sp, #-16]!\n\tldp x29, x30, [sp], #16")
NAKED(asc_test_lea, "add x0, x0, #8")
NAKED(asc_test_endbr_lea, "bti c\n\tadd x0, x0, #8")
NAKED(asc_test_nop, "nop")
NAKED(asc_test_nopl, "nop")
#else
#error "libasctest: no entry instructions for this architecture"
#endif

/* Only in .symtab: static, so not exported. */
__attribute__((noinline, used)) static long asc_test_local(long x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3;
}

void *asc_test_local_addr(void)
{
	return (void *)&asc_test_local;
}

long asc_test_call_local(long x)
{
	return asc_test_local(x);
}

/* macros that define functions, a row of them a line: clang-format does not keep one layout */
// clang-format off
#define COUNTED(n)							\
	__attribute__((noinline)) long asc_test_counted_##n(long x)	\
	{								\
		__asm__ volatile("" : "+r"(x));				\
		return x + n;						\
	}
#define COUNTED8(n) COUNTED(n##0) COUNTED(n##1) COUNTED(n##2) COUNTED(n##3) \
		    COUNTED(n##4) COUNTED(n##5) COUNTED(n##6) COUNTED(n##7)
COUNTED8(1) COUNTED8(2) COUNTED8(3) COUNTED8(4)
	// clang-format on
