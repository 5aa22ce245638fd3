/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * arch.h - the calling-convention and thread-pointer facts of the target
 * architecture that ascbpf was built for, one descriptor per architecture
 * (arch/x86.c, arch/arm64.c).  The BPF side of the same choices is
 * bpf/ascbpf_arch.bpf.h; `ascbpf probes` prints them, `ascbpf version` names
 * the architecture.
 */
#ifndef __ASCBPF_ARCH_ARCH_H
#define __ASCBPF_ARCH_ARCH_H

#include <stdint.h>

#define ASC_ARCH_ARG_REGS 8

struct asc_arch {
	const char *name;     /* "x86_64", "aarch64" (uname -m) */
	uint16_t elf_machine; /* EM_X86_64, EM_AARCH64 */
	int nr_arg_regs;      /* integer argument registers: 6, 8 */
	const char *arg_regs[ASC_ARCH_ARG_REGS];
	const char *ret_reg; /* integer return value: "rax", "x0" */
	/*
	 * The result pointer of a function returning a class by value through
	 * memory (at::_ops::*::call returning a Tensor): rdi on x86-64, where it
	 * takes the first argument register and shifts the arguments by one;
	 * x8 on aarch64 (AAPCS64 "indirect result location register"), apart
	 * from x0-x7, which keep the arguments.
	 */
	const char *sret_reg;
	int sret_shifts_args; /* 1: sret_reg is arg_regs[0] */
	const char *ret_addr; /* where the return address is at a function's entry */
	const char *tp_reg;   /* the thread pointer: "fs base", "tpidr_el0" */
	int dtv_off;	      /* glibc's dtv at tp + dtv_off (ASC_ARCH_DTV_OFF in BPF) */
	const char *prologue; /* one line: the uprobe placement rule (arch/prologue.h) */
	/*
	 * NULL where the unwind guard (bpf/unwind.bpf.h) works: the return
	 * address a return probe took is in the stack slot the kernel records;
	 * else why it does not, for the warning trace prints
	 */
	const char *no_unwind_guard;
};

extern const struct asc_arch asc_arch_x86_64;
extern const struct asc_arch asc_arch_aarch64;

/* The architecture this ascbpf was built for (the traced processes'). */
const struct asc_arch *asc_arch_target(void);

/* The descriptor of an ELF machine, or NULL. */
const struct asc_arch *asc_arch_by_machine(uint16_t machine);

/*
 * The thread pointer minus pthread_self() in this process: 0 on x86-64 (the
 * TCB is at fs base), sizeof(struct pthread) of this glibc on aarch64 (the
 * TCB sits at tp, the struct pthread just below it).  The traced processes
 * use the host's glibc as ascbpf does, so the BPF side matches a
 * PyThreadState.thread_id (a pthread_t) with tp - this.
 */
uint64_t asc_arch_tp_self_off(void);

#endif /* __ASCBPF_ARCH_ARCH_H */
