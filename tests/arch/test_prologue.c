// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_prologue - uprobe placement from first instructions (user/arch/prologue.c):
 * endbr64 skipped only when an instruction follows, the emulated set of our
 * kernel (nop, push reg, jmp/call/jcc) vs single-stepped (endbr64, nopl,
 * mov, lea, sub, ...), aarch64 hints (single-stepped or rejected), unknown
 * machines.
 */
#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "ascbpf_events.h"
#include "arch/prologue.h"

#define BYTES(...) ((const uint8_t[]){ __VA_ARGS__ }), sizeof((const uint8_t[]){ __VA_ARGS__ })

static struct asc_prologue analyze(uint16_t machine, const uint8_t *code, size_t len, uint64_t size)
{
	struct asc_prologue p;

	assert_int_equal(asc_prologue_analyze(machine, code, len, size, &p), 0);
	return p;
}

static void test_endbr_then_push_rbp(void **state)
{
	/* endbr64; push %rbp; mov %rsp,%rbp */
	struct asc_prologue p = analyze(EM_X86_64,
					BYTES(0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5), 64);

	assert_int_equal(p.skip, 4);
	assert_int_equal(p.flags, ASC_PROBE_SKIPPED_ENDBR);
	assert_string_equal(p.insn, "push %rbp");
	assert_int_equal(p.insn_len, 1);
	assert_string_equal(asc_prologue_choice(p.flags), "after endbr64, emulated");
}

static void test_endbr_then_lea(void **state)
{
	/* endbr64; lea 0x8(%rdi),%rax: skipping still helps nothing but costs nothing */
	struct asc_prologue p = analyze(EM_X86_64,
					BYTES(0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x8d, 0x47, 0x08, 0xc3),
					9);

	assert_int_equal(p.skip, 4);
	assert_int_equal(p.flags, ASC_PROBE_SKIPPED_ENDBR | ASC_PROBE_SINGLESTEP);
	assert_string_equal(p.insn, "lea");
	assert_string_equal(asc_prologue_choice(p.flags), "after endbr64, single-stepped");
}

static void test_endbr_alone_not_skipped(void **state)
{
	/* a 4-byte function holding only endbr64: nothing follows it inside the function */
	struct asc_prologue p = analyze(EM_X86_64, BYTES(0xf3, 0x0f, 0x1e, 0xfa, 0xcc, 0xcc), 4);

	assert_int_equal(p.skip, 0);
	assert_int_equal(p.flags, ASC_PROBE_SINGLESTEP);
	assert_string_equal(p.insn, "endbr64");
	/* only the endbr64 itself could be read */
	p = analyze(EM_X86_64, BYTES(0xf3, 0x0f, 0x1e, 0xfa), 0);
	assert_int_equal(p.skip, 0);
	assert_int_equal(p.flags, ASC_PROBE_SINGLESTEP);
}

static void test_endbr_loop_head_not_skipped(void **state)
{
	/* endbr64; nop; nop; jmp .-4 (rel8 back to offset 4): the loop head is after endbr64 */
	struct asc_prologue p = analyze(EM_X86_64,
					BYTES(0xf3, 0x0f, 0x1e, 0xfa, 0x90, 0x90, 0xeb, 0xfc), 8);

	assert_int_equal(p.skip, 0);
	assert_int_equal(p.flags, ASC_PROBE_SINGLESTEP);
	/* endbr64; push %rbp; jmp rel32 to offset 4 */
	p = analyze(EM_X86_64, BYTES(0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0xe9, 0xfa, 0xff, 0xff, 0xff),
		    10);
	assert_int_equal(p.skip, 0);
	/* endbr64; test; jne rel32 (0f 85) to offset 4 */
	p = analyze(EM_X86_64,
		    BYTES(0xf3, 0x0f, 0x1e, 0xfa, 0x85, 0xc0, 0x0f, 0x85, 0xf8, 0xff, 0xff, 0xff),
		    12);
	assert_int_equal(p.skip, 0);
	/* a jump elsewhere (to offset 5) does not stop the skip */
	p = analyze(EM_X86_64, BYTES(0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x90, 0xeb, 0xfd), 8);
	assert_int_equal(p.skip, 4);
	assert_int_equal(p.flags, ASC_PROBE_SKIPPED_ENDBR);
}

static void test_push_variants(void **state)
{
	struct asc_prologue p = analyze(EM_X86_64, BYTES(0x55, 0x48, 0x89, 0xe5), 0);

	assert_int_equal(p.skip, 0);
	assert_int_equal(p.flags, 0);
	assert_string_equal(p.insn, "push %rbp");
	assert_string_equal(asc_prologue_choice(p.flags), "emulated");
	/* push %r12 (REX.B) */
	p = analyze(EM_X86_64, BYTES(0x41, 0x54, 0x55), 0);
	assert_int_equal(p.flags, 0);
	assert_string_equal(p.insn, "push %r12");
	assert_int_equal(p.insn_len, 2);
	/* push %rbx */
	p = analyze(EM_X86_64, BYTES(0x53), 0);
	assert_string_equal(p.insn, "push %rbx");
	assert_int_equal(p.flags, 0);
}

static void test_nops(void **state)
{
	struct asc_prologue p = analyze(EM_X86_64, BYTES(0x90, 0xc3), 2);

	assert_int_equal(p.flags, 0);
	assert_string_equal(p.insn, "nop");
	p = analyze(EM_X86_64, BYTES(0x66, 0x90, 0xc3), 3);
	assert_int_equal(p.flags, 0);
	/* nopl 0x0(%rax,%rax,1): single-stepped on our kernel (measured) */
	p = analyze(EM_X86_64, BYTES(0x0f, 0x1f, 0x44, 0x00, 0x00), 0);
	assert_int_equal(p.flags, ASC_PROBE_SINGLESTEP);
	assert_string_equal(p.insn, "nopl");
}

static void test_branches_emulated(void **state)
{
	struct asc_prologue p = analyze(EM_X86_64, BYTES(0xe9, 0x10, 0x00, 0x00, 0x00), 0);

	assert_int_equal(p.flags, 0);
	assert_string_equal(p.insn, "jmp");
	assert_int_equal(p.insn_len, 5);
	p = analyze(EM_X86_64, BYTES(0xe8, 0x00, 0x00, 0x00, 0x00), 0);
	assert_int_equal(p.flags, 0);
	assert_string_equal(p.insn, "call");
	p = analyze(EM_X86_64, BYTES(0x74, 0x05), 0);
	assert_int_equal(p.flags, 0);
	p = analyze(EM_X86_64, BYTES(0x0f, 0x84, 0x00, 0x01, 0x00, 0x00), 0);
	assert_int_equal(p.flags, 0);
	assert_int_equal(p.insn_len, 6);
}

static void test_single_stepped(void **state)
{
	/* sub $0x18,%rsp */
	struct asc_prologue p = analyze(EM_X86_64, BYTES(0x48, 0x83, 0xec, 0x18), 0);

	assert_int_equal(p.skip, 0);
	assert_int_equal(p.flags, ASC_PROBE_SINGLESTEP);
	assert_string_equal(p.insn, "sub");
	assert_string_equal(asc_prologue_choice(p.flags), "single-stepped");
	/* mov %rdi,%rax */
	p = analyze(EM_X86_64, BYTES(0x48, 0x89, 0xf8), 0);
	assert_int_equal(p.flags, ASC_PROBE_SINGLESTEP);
	assert_string_equal(p.insn, "mov");
	/* lea (%rdi,%rdi,2),%rax */
	p = analyze(EM_X86_64, BYTES(0x48, 0x8d, 0x04, 0x7f), 0);
	assert_int_equal(p.flags, ASC_PROBE_SINGLESTEP);
	assert_string_equal(p.insn, "lea");
	/* xor %eax,%eax */
	p = analyze(EM_X86_64, BYTES(0x31, 0xc0), 0);
	assert_int_equal(p.flags, ASC_PROBE_SINGLESTEP);
	/* REX.W 0x50 is not a push we know: not emulated */
	p = analyze(EM_X86_64, BYTES(0x48, 0x50), 0);
	assert_int_equal(p.flags, ASC_PROBE_SINGLESTEP);
}

static void test_short_and_bad_input(void **state)
{
	struct asc_prologue p = analyze(EM_X86_64, NULL, 0, 0);

	assert_int_equal(p.skip, 0);
	assert_int_equal(p.flags, ASC_PROBE_SINGLESTEP);
	assert_int_equal(asc_prologue_analyze(EM_X86_64, NULL, 4, 0, &p), -EINVAL);
	assert_int_equal(asc_prologue_analyze(EM_X86_64, (const uint8_t *)"\x90", 1, 0, NULL),
			 -EINVAL);
	/* the function size bounds what is decoded: push after endbr is outside a 4-byte function */
	p = analyze(EM_X86_64, BYTES(0xf3, 0x0f, 0x1e, 0xfa, 0x55), 4);
	assert_int_equal(p.skip, 0);
}

/* Found by tests/fuzz (fuzz_insn): a branch longer than the bytes given was called emulated. */
static void test_truncated_branch_not_decoded(void **state)
{
	/* a 4-byte read of a call rel32: its displacement is cut off */
	struct asc_prologue p = analyze(EM_X86_64, BYTES(0xe8, 0xdb, 0xb4, 0xd4), 0);

	assert_int_equal(p.flags, ASC_PROBE_SINGLESTEP);
	assert_int_equal(p.insn_len, 0);
	/* the same cut by the function's size, and the short forms */
	p = analyze(EM_X86_64, BYTES(0xe9, 0x10, 0x00, 0x00, 0x00), 3);
	assert_int_equal(p.flags, ASC_PROBE_SINGLESTEP);
	p = analyze(EM_X86_64, BYTES(0x74), 0);
	assert_int_equal(p.flags, ASC_PROBE_SINGLESTEP);
	p = analyze(EM_X86_64, BYTES(0xeb), 0);
	assert_int_equal(p.flags, ASC_PROBE_SINGLESTEP);
	p = analyze(EM_X86_64, BYTES(0x0f, 0x84, 0x00, 0x01, 0x00), 0);
	assert_int_equal(p.flags, ASC_PROBE_SINGLESTEP);
	assert_int_equal(p.insn_len, 0);
	/* after an endbr64: the jmp that follows it is cut at the end of the read */
	p = analyze(EM_X86_64, BYTES(0xf3, 0x0f, 0x1e, 0xfa, 0xe9, 0x00), 0);
	assert_int_equal(p.skip, 4);
	assert_int_equal(p.flags, ASC_PROBE_SKIPPED_ENDBR | ASC_PROBE_SINGLESTEP);
}

static void test_aarch64(void **state)
{
	/*
	 * bti c (0xd503245f): a hint of the kernel's steppable list
	 * (aarch64_insn_is_steppable_hint): single-stepped, never skipped
	 */
	struct asc_prologue p = analyze(EM_AARCH64, BYTES(0x5f, 0x24, 0x03, 0xd5), 0);

	assert_int_equal(p.skip, 0);
	assert_int_equal(p.flags, ASC_PROBE_SINGLESTEP);
	assert_string_equal(p.insn, "bti");
	/* paciasp (0xd503233f): single-stepped; skipping it would break a uretprobe */
	p = analyze(EM_AARCH64, BYTES(0x3f, 0x23, 0x03, 0xd5), 0);
	assert_int_equal(p.skip, 0);
	assert_int_equal(p.flags, ASC_PROBE_SINGLESTEP);
	assert_string_equal(p.insn, "paciasp");
	/* autiasp (0xd50323bf): not on the list: the kernel rejects the probe */
	p = analyze(EM_AARCH64, BYTES(0xbf, 0x23, 0x03, 0xd5), 0);
	assert_string_equal(p.insn, "hint (rejected)");
	/* stp x29, x30, [sp, #-16]! (0xa9bf7bfd): stepped out of line */
	p = analyze(EM_AARCH64, BYTES(0xfd, 0x7b, 0xbf, 0xa9), 0);
	assert_int_equal(p.flags, ASC_PROBE_SINGLESTEP);
	/* b .+8 (0x14000002): simulated */
	p = analyze(EM_AARCH64, BYTES(0x02, 0x00, 0x00, 0x14), 0);
	assert_int_equal(p.flags, 0);
	/* adrp x0, ... (0x90000000) */
	p = analyze(EM_AARCH64, BYTES(0x00, 0x00, 0x00, 0x90), 0);
	assert_int_equal(p.flags, 0);
}

static void test_unknown_machine(void **state)
{
	struct asc_prologue p = analyze(EM_RISCV, BYTES(0x13, 0x00, 0x00, 0x00), 0);

	assert_int_equal(p.skip, 0);
	assert_int_equal(p.flags, ASC_PROBE_SINGLESTEP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_endbr_then_push_rbp),
		cmocka_unit_test(test_endbr_then_lea),
		cmocka_unit_test(test_endbr_alone_not_skipped),
		cmocka_unit_test(test_endbr_loop_head_not_skipped),
		cmocka_unit_test(test_push_variants),
		cmocka_unit_test(test_nops),
		cmocka_unit_test(test_branches_emulated),
		cmocka_unit_test(test_single_stepped),
		cmocka_unit_test(test_short_and_bad_input),
		cmocka_unit_test(test_truncated_branch_not_decoded),
		cmocka_unit_test(test_aarch64),
		cmocka_unit_test(test_unknown_machine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
