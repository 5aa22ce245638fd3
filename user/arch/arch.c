// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * arch.c - the target's descriptor (arch/arch.h): the one chosen at build
 * time, by the compiler's target, as the BPF objects are (-D__TARGET_ARCH_*).
 */
#include <elf.h>
#include <pthread.h>
#include <stddef.h>
#include "arch/arch.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

const struct asc_arch *asc_arch_target(void)
{
#if defined(__x86_64__)
	return &asc_arch_x86_64;
#elif defined(__aarch64__)
	return &asc_arch_aarch64;
#else
#error "ascbpf: no architecture descriptor for this target (user/arch/)"
#endif
}

const struct asc_arch *asc_arch_by_machine(uint16_t machine)
{
	if (machine == EM_X86_64)
		return &asc_arch_x86_64;
	if (machine == EM_AARCH64)
		return &asc_arch_aarch64;
	return NULL;
}

uint64_t asc_arch_tp_self_off(void)
{
	return (uint64_t)(uintptr_t)__builtin_thread_pointer() - (uint64_t)pthread_self();
}
