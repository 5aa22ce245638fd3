/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* asctest.h - what libasctest.so exports (tests/lib/probes/libasctest.c). */
#ifndef __ASCBPF_ASCTEST_H
#define __ASCBPF_ASCTEST_H

/* naked functions whose first bytes the tests know (no compiler-added endbr64) */
#ifdef __CET__
#define ASC_TEST_NOCF __attribute__((nocf_check))
#else
#define ASC_TEST_NOCF
#endif

/* asc_test_counted_10 .. _17, _20 .. _27, _30 .. _37, _40 .. _47 */
#define ASC_TEST_NR_COUNTED    32
#define ASC_TEST_COUNTED_ID(i) (((i) / 8 + 1) * 10 + (i) % 8)

ASC_TEST_NOCF void asc_test_endbr_push(void);
ASC_TEST_NOCF void asc_test_push(void);
ASC_TEST_NOCF void asc_test_lea(void);
ASC_TEST_NOCF void asc_test_endbr_lea(void);
ASC_TEST_NOCF void asc_test_nop(void);
ASC_TEST_NOCF void asc_test_nopl(void);
void *asc_test_local_addr(void);
long asc_test_call_local(long x);

#endif /* __ASCBPF_ASCTEST_H */
