// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_guard - static-initialisation guards from first instructions
 * (user/arch/guard.c) on the real code of Debian's libtorch_cpu.so: for
 * at::_ops::<op>::call functions of both layouts (guard-acquire path in line,
 * and out of line behind `je`), the guard found equals the address objdump
 * prints for the function's first RIP-relative movzbl, which the next
 * `lea X(%rip)` before __cxa_guard_acquire repeats (read here from objdump's
 * text, not from the decoder).  A function without a static (an autograd
 * apply()) has none; synthetic cmpb $0 forms; unknown machines.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "arch/guard.h"
#include "discovery/elfsym.h"

#define LIBTORCH   "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13.0"
#define BYTES(...) ((const uint8_t[]){ __VA_ARGS__ }), sizeof((const uint8_t[]){ __VA_ARGS__ })

/* objdump's view: the first `movzbl X(%rip)`, and X again if a `lea X(%rip)` follows. */
static void objdump_guard(uint64_t vaddr, uint64_t size, uint64_t *movzbl, uint64_t *lea)
{
	char cmd[512], line[1024];
	FILE *f;

	*movzbl = *lea = 0;
	snprintf(cmd, sizeof(cmd),
		 "objdump -d --no-show-raw-insn --start-address=0x%" PRIx64
		 " --stop-address=0x%" PRIx64 " %s",
		 vaddr, vaddr + size, LIBTORCH);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *hash = strstr(line, "# ");

		if (!*movzbl && strstr(line, "movzbl") && strstr(line, "(%rip)") && hash)
			*movzbl = strtoull(hash + 2, NULL, 16);
		if (!*lea && strstr(line, "lea ") && strstr(line, "(%rip)") && hash && *movzbl &&
		    strtoull(hash + 2, NULL, 16) == *movzbl)
			*lea = *movzbl;
	}
	pclose(f);
}

static void check_op(const char *sym)
{
	struct asc_elf *elf = NULL;
	const struct asc_elf_symbol *s;
	uint8_t code[ASC_GUARD_SCAN_BYTES];
	uint64_t guard = 0, movzbl, lea;
	int n;

	assert_int_equal(asc_elf_open(LIBTORCH, &elf), 0);
	s = asc_elf_find(elf, sym);
	assert_non_null(s);
	n = asc_elf_read(elf, s->vaddr, code, sizeof(code));
	assert_true(n > 64);
	objdump_guard(s->vaddr, s->size, &movzbl, &lea);
	assert_true(movzbl != 0);
	assert_int_equal(lea, movzbl); /* objdump shows the lea of the same byte */
	assert_int_equal(asc_static_guard(EM_X86_64, code, (size_t)n, s->vaddr, &guard), 0);
	assert_int_equal(guard, movzbl);
	asc_elf_close(elf);
}

static void test_inline_acquire(void **state)
{
	/* movzbl G; test; jne; lea G; mov; call __cxa_guard_acquire */
	check_op("_ZN2at4_ops10add_Tensor4callERKNS_6TensorES4_RKN3c106ScalarE");
	check_op("_ZN2at4_ops10stride_int4callERKNS_6TensorEl");
}

static void test_cold_acquire(void **state)
{
	/* movzbl G; test; je cold ... cold: lea G; mov; call __cxa_guard_acquire */
	check_op("_ZN2at4_ops10as_strided4callERKNS_6TensorEN3c108ArrayRefINS5_6SymIntEEES8_NS5_"
		 "8optionalIS7_EE");
}

static void test_long_head(void **state)
{
	/* 46 instructions (argument spills) before the guard's movzbl */
	check_op(
		"_ZN2at4_ops14_cudnn_rnn_out4callERKNS_6TensorEN3c108ArrayRefIS2_EElRKNS5_8optional"
		"IS2_EES4_SB_lNS5_6SymIntESC_lbdbbNS6_ISC_EESB_RS2_SE_SE_SE_SE_");
}

static void test_no_static(void **state)
{
	struct asc_elf *elf = NULL;
	const struct asc_elf_symbol *s;
	uint8_t code[ASC_GUARD_SCAN_BYTES];
	uint64_t guard;
	int n;

	assert_int_equal(asc_elf_open(LIBTORCH, &elf), 0);
	s = asc_elf_find(elf, "_ZN5torch8autograd9generated12MulBackward05applyEOSt6vectorIN2at"
			      "6TensorESaIS5_EE");
	assert_non_null(s);
	n = asc_elf_read(elf, s->vaddr, code, sizeof(code));
	assert_true(n > 0);
	assert_int_equal(asc_static_guard(EM_X86_64, code, (size_t)n, s->vaddr, &guard), -ENOENT);
	asc_elf_close(elf);
}

static void test_synthetic(void **state)
{
	uint64_t guard = 0;

	/* cmpb $0,0x100(%rip); jne +7; lea 0xf9(%rip),%rdi: the same byte (0x1007 + 0x100) */
	assert_int_equal(asc_static_guard(EM_X86_64,
					  BYTES(0x80, 0x3d, 0x00, 0x01, 0x00, 0x00, 0x00, 0x75,
						0x07, 0x48, 0x8d, 0x3d, 0xf7, 0x00, 0x00, 0x00),
					  0x1000, &guard),
			 0);
	assert_int_equal(guard, 0x1107);
	/* the lea names another address: no guard */
	assert_int_equal(asc_static_guard(EM_X86_64,
					  BYTES(0x80, 0x3d, 0x00, 0x01, 0x00, 0x00, 0x00, 0x75,
						0x07, 0x48, 0x8d, 0x3d, 0x00, 0x02, 0x00, 0x00),
					  0x1000, &guard),
			 -ENOENT);
	/* a ret ends the head: a lea after it does not count */
	assert_int_equal(asc_static_guard(EM_X86_64,
					  BYTES(0x80, 0x3d, 0x00, 0x01, 0x00, 0x00, 0x00, 0xc3,
						0x48, 0x8d, 0x3d, 0xf8, 0x00, 0x00, 0x00),
					  0x1000, &guard),
			 -ENOENT);
	assert_int_equal(asc_static_guard(EM_AARCH64, BYTES(0x1f, 0x20, 0x03, 0xd5), 0, &guard),
			 -EOPNOTSUPP);
	assert_int_equal(asc_static_guard(EM_X86_64, NULL, 4, 0, &guard), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inline_acquire), cmocka_unit_test(test_cold_acquire),
		cmocka_unit_test(test_long_head),      cmocka_unit_test(test_no_static),
		cmocka_unit_test(test_synthetic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
