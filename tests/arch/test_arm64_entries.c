// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_arm64_entries - the aarch64 placement rules (user/arch/arm64.c) on the
 * first instruction of every function of Debian's libc6:arm64 libc.so.6,
 * against binutils' aarch64 disassembler (aarch64-linux-gnu-objdump -d), the
 * independent reference: objdump gives each entry's word and mnemonic; this
 * test maps the mnemonic to what arch/arm64/kernel/probes/decode-insn.c does
 * with it for a uprobe (simulated, single-stepped, rejected) and checks the
 * code under test agrees, and names the mnemonic as objdump does where it
 * names one.  Built and run for x86-64 and, under qemu-aarch64, for arm64
 * (make check-arm64).  ASC_ARM64_LIBC / ASC_ARM64_OBJDUMP override the paths.
 */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "ascbpf_events.h"
#include "arch/prologue.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

enum { SIM, STEP, REJECT };

static int starts(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* The kernel's treatment of one objdump line's instruction (mnemonic, operands). */
static int expected_class(const char *mn, const char *ops)
{
	static const char *const sim[] = { "b",	  "bl",	  "cbz", "cbnz", "tbz", "tbnz",
					   "adr", "adrp", "br",	 "blr",	 "ret", NULL };
	static const char *const hints[] = { "nop",	"bti",	  "paciasp",   "pacibsp",
					     "paciaz",	"pacibz", "pacia1716", "pacib1716",
					     "xpaclri", NULL };
	int i;

	for (i = 0; sim[i]; i++)
		if (!strcmp(mn, sim[i]))
			return SIM;
	if (starts(mn, "b."))
		return SIM;
	for (i = 0; hints[i]; i++)
		if (!strcmp(mn, hints[i]))
			return STEP;
	if (starts(mn, "hint") || starts(mn, "auti") || !strcmp(mn, "svc") || !strcmp(mn, "brk") ||
	    !strcmp(mn, "msr"))
		return REJECT;
	/* ldr/ldrsw/prfm literal: objdump prints the target address, no [base] */
	if ((!strcmp(mn, "ldr") || !strcmp(mn, "ldrsw") || !strcmp(mn, "prfm")) &&
	    !strchr(ops, '['))
		return REJECT;
	/* load/store exclusive and acquire/release, as the kernel's mask takes them */
	if (starts(mn, "ldx") || starts(mn, "stx") || starts(mn, "ldax") || starts(mn, "stlx") ||
	    starts(mn, "ldar") || starts(mn, "stlr") || starts(mn, "ldlar") || starts(mn, "stllr"))
		return REJECT;
	return STEP;
}

static const char *libc_path(void)
{
	static const char *const c[] = { "/usr/lib/aarch64-linux-gnu/libc.so.6",
					 "/usr/aarch64-linux-gnu/lib/libc.so.6", NULL };
	const char *e = getenv("ASC_ARM64_LIBC");
	int i;

	if (e)
		return e;
	for (i = 0; c[i]; i++)
		if (!access(c[i], R_OK))
			return c[i];
	return NULL;
}

static void test_libc_entries(void **state)
{
	const char *lib = libc_path(), *od = getenv("ASC_ARM64_OBJDUMP");
	int counts[3] = { 0 }, total = 0, named = 0, want_entry = 0;
	char cmd[512], line[512];
	FILE *f;

	if (!lib)
		fail_msg("no libc6:arm64 libc.so.6 (make deps installs libc6:arm64)");
	snprintf(cmd, sizeof(cmd), "%s -d '%s'", od ? od : "aarch64-linux-gnu-objdump", lib);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char hex[16] = "", mn[32] = "", ops[256] = "";
		struct asc_prologue p;
		uint8_t code[4];
		uint32_t word;
		const char *base;
		int cls;
		char *t;

		if (strstr(line, ">:\n") && line[0] != ' ') {
			want_entry = 1;
			continue;
		}
		if (!want_entry || !(t = strchr(line, ':')))
			continue;
		want_entry = 0;
		/* "   29f40:\td503233f \tpaciasp" or "...\tstp\tx29, x30, [sp, #-32]!" */
		if (sscanf(t + 1, " %15[0-9a-f] %31s %255[^\n]", hex, mn, ops) < 2 ||
		    strlen(hex) != 8)
			continue;
		word = (uint32_t)strtoul(hex, NULL, 16);
		memcpy(code, &word, 4); /* objdump prints the little-endian word */
		assert_int_equal(asc_prologue_analyze(EM_AARCH64, code, 4, 0, &p), 0);
		cls = expected_class(mn, ops);
		if (cls == SIM)
			assert_int_equal(p.flags & ASC_PROBE_SINGLESTEP, 0);
		else
			assert_int_equal(p.flags & ASC_PROBE_SINGLESTEP, ASC_PROBE_SINGLESTEP);
		if ((cls == REJECT) != (strstr(p.insn, "(rejected)") != NULL))
			fail_msg("%s %s %s: arm64.c says '%s'", hex, mn, ops, p.insn);
		assert_int_equal(p.skip, 0);
		base = p.insn;
		if (strcmp(base, "other") && strcmp(base, "exclusive (rejected)") &&
		    strcmp(base, "b.cond") && !starts(base, "hint")) {
			size_t n = strcspn(base, " ");

			if (strncmp(base, mn, n) || mn[n])
				fail_msg("%s: objdump '%s', arm64.c '%s'", hex, mn, base);
			named++;
		}
		counts[cls]++;
		total++;
	}
	assert_int_equal(pclose(f), 0);
	print_message("%d entries: %d simulated, %d single-stepped, %d rejected; %d named\n", total,
		      counts[SIM], counts[STEP], counts[REJECT], named);
	/* Debian's libc has thousands of functions, most starting with stp/sub/mov/adrp. */
	assert_true(total > 1000);
	assert_true(counts[SIM] > 0 && counts[STEP] > 0);
	assert_true(named > total / 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libc_entries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
