/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ascbpf_arch.bpf.h - what the BPF programs read differently per target
 * (-D__TARGET_ARCH_x86 / -D__TARGET_ARCH_arm64); the loader's side of the
 * same choices is user/arch/arch.h, which `ascbpf probes` prints.
 *
 *   ASC_ARCH_TP(task)        the thread pointer user space set: fs base on x86-64,
 *                            TPIDR_EL0 (thread.uw.tp_value) on aarch64
 *   ASC_ARCH_DTV_OFF         where glibc's tcbhead_t keeps the dtv: tp + 8 on
 *                            x86-64 (tcb->dtv after tcb->tcb), tp + 0 on aarch64
 *   ASC_ARCH_RET_ADDR(ctx, p)  the caller's return address at a function's first
 *                            instruction: the word at sp on x86-64 (call pushed it),
 *                            x30 (the link register) on aarch64
 *   ASC_ARCH_RET_SP_ADJ      entry sp - sp at the function's return (uretprobe):
 *                            -8 on x86-64 (ret popped the address), 0 on aarch64
 */
#ifndef __ASCBPF_ARCH_BPF_H
#define __ASCBPF_ARCH_BPF_H

#if defined(__TARGET_ARCH_x86)
#define ASC_ARCH_TP(task)	  BPF_CORE_READ((task), thread.fsbase)
#define ASC_ARCH_DTV_OFF	  8
#define ASC_ARCH_RET_SP_ADJ	  8
#define ASC_ARCH_RET_ADDR(ctx, p) bpf_probe_read_user((p), sizeof(__u64), (void *)PT_REGS_SP(ctx))
#elif defined(__TARGET_ARCH_arm64)
#define ASC_ARCH_TP(task)	  BPF_CORE_READ((task), thread.uw.tp_value)
#define ASC_ARCH_DTV_OFF	  0
#define ASC_ARCH_RET_SP_ADJ	  0
#define ASC_ARCH_RET_ADDR(ctx, p) (*(p) = ((struct user_pt_regs *)(ctx))->regs[30], 0)
#else
#error "ascbpf: no BPF architecture rules for this target (bpf/ascbpf_arch.bpf.h)"
#endif

#endif /* __ASCBPF_ARCH_BPF_H */
