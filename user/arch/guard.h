/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * guard.h - the C++ static-initialisation guard a function tests first, read
 * from its first instructions.
 *
 * PyTorch's at::_ops::<op>::call (and ::redispatch) begins with
 *	static auto op = create_<op>_typed_handle();
 * a function-local static: g++ guards it with a 64-bit variable whose first
 * byte becomes non-zero once the initialisation finished (Itanium C++ ABI
 * 3.3.2, __cxa_guard_release).  A guard byte that is set in a process means
 * that process called the function at least once.
 *
 * x86-64 (g++ 12, Debian's libtorch_cpu 1.13, checked with objdump):
 *	movzbl GUARD(%rip),%eax       (or cmpb $0,GUARD(%rip) / mov GUARD(%rip),%al)
 *	test   %al,%al
 *	jne    initialised
 *	lea    GUARD(%rip),%rbx       the argument of __cxa_guard_acquire
 *	mov    %rbx,%rdi
 *	call   __cxa_guard_acquire@plt
 * The guard is the address of a RIP-relative byte read that a later lea of
 * the same address confirms, within the first ASC_GUARD_SCAN_INSNS
 * instructions, before any ret or jmp, or within the first instructions at
 * a conditional branch's target after the read (g++ may lay the
 * __cxa_guard_acquire path out at the function's end: `je cold`).
 *
 * aarch64 (for the arm64 room; not decoded yet: asc_static_guard() answers
 * -EOPNOTSUPP there): g++ loads the byte with acquire semantics,
 *	adrp  xN, GUARD              (page)
 *	add   xN, xN, :lo12:GUARD    (may be folded into the next address)
 *	ldarb wM, [xN]
 *	tbz/cbz wM, slow             (or tbnz to the initialised path)
 *	... mov x0, xN; bl __cxa_guard_acquire
 * i.e. adrp + add gives the address, confirmed by the ldarb and by x0 at the
 * __cxa_guard_acquire call.
 */
#ifndef __ASCBPF_ARCH_GUARD_H
#define __ASCBPF_ARCH_GUARD_H

#include <stddef.h>
#include <stdint.h>

#define ASC_GUARD_SCAN_INSNS 96	  /* instructions looked at from the function's start */
#define ASC_GUARD_SCAN_BYTES 1024 /* bytes of code callers read for it */

/*
 * For ELF machine `machine`: code is len bytes of a function at link-time
 * address pc.  *guard gets the link-time address of the guard variable it
 * tests first.  0, -ENOENT (no such guard found: the function has none or
 * uses another form), -EOPNOTSUPP (machine not decoded), -EINVAL.
 */
int asc_static_guard(uint16_t machine, const uint8_t *code, size_t len, uint64_t pc,
		     uint64_t *guard);

#endif /* __ASCBPF_ARCH_GUARD_H */
