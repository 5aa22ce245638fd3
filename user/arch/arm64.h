/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * arm64.h - aarch64 rules of uprobe placement behind asc_prologue_analyze()
 * (arch/prologue.h).
 */
#ifndef __ASCBPF_ARCH_ARM64_H
#define __ASCBPF_ARCH_ARM64_H

#include <stddef.h>
#include <stdint.h>

struct asc_prologue;

/* asc_prologue_analyze() for EM_AARCH64: len bytes of code, out zeroed. */
int asc_arm64_prologue(const uint8_t *code, size_t len, struct asc_prologue *out);

#endif /* __ASCBPF_ARCH_ARM64_H */
