/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ioctl_decode.h - names, argument sizes and argument fields of the davinci
 * driver ioctls ('Z' interface, TSDRV 'X', SVM 'M'), for `ascbpf dump` (the
 * cmd_name and decoded fields of IOCTL records).  Only commands of the real
 * driver's headers are named and decoded; any other shows as its _IOC text.
 * Values are those of the driver headers listed in docs/cann_api.md §3
 * (x86-64 / aarch64 LP64).
 *
 * Magics collide across sub-modules ('M' is SVM and DEVMNG), so lookups take
 * the module the fd was bound to (ASC_MOD_*, from the 'Z' bind); with
 * ASC_MOD_UNKNOWN the module is guessed from the magic and size.
 */
#ifndef __ASCBPF_IOCTL_DECODE_H
#define __ASCBPF_IOCTL_DECODE_H

#include <stddef.h>
#include <stdint.h>

/* _IOC fields (asm-generic layout: nr 0-7, type 8-15, size 16-29, dir 30-31). */
#define ASC_IOC_NR(cmd)	  ((cmd)&0xffu)
#define ASC_IOC_TYPE(cmd) (((cmd) >> 8) & 0xffu)
#define ASC_IOC_SIZE(cmd) (((cmd) >> 16) & 0x3fffu)
#define ASC_IOC_DIR(cmd)  (((cmd) >> 30) & 0x3u)

#define ASC_SVM_ARG_SIZE 344 /* struct devmm_ioctl_arg */

struct asc_ioctl_desc {
	uint32_t cmd;
	uint8_t module;	   /* ASC_MOD_* the command belongs to */
	uint16_t arg_size; /* bytes of the argument struct (260 for the 'Z' bind) */
	const char *name;  /* driver macro name, "TRS_SQCQ_ALLOC" */
};

/* The module a command belongs to judged by magic and size alone (ASC_MOD_*). */
unsigned int asc_ioctl_guess_module(uint32_t cmd);

/*
 * The known command cmd on an fd bound to module (ASC_MOD_UNKNOWN: guessed),
 * or NULL.  A command of another module's magic is not found (a TSDRV
 * number on an SVM fd is not a TSDRV command).
 */
const struct asc_ioctl_desc *asc_ioctl_lookup(uint32_t cmd, unsigned int module);

/*
 * Writes the command's name into buf: the macro name when known, else
 * "_IOWR('X',17,96)"-style text.  Returns what snprintf returns.
 */
int asc_ioctl_name(uint32_t cmd, unsigned int module, char *buf, size_t len);

/*
 * Writes the argument fields that matter as "key=value key=value" (decimal,
 * pointers in 0x hex) from the first arg_len bytes of the argument, after the
 * call.  Fields beyond arg_len are left out.  Unknown commands give "".
 * Returns the number of fields written.
 */
int asc_ioctl_format_args(uint32_t cmd, unsigned int module, const uint8_t *arg, size_t arg_len,
			  char *buf, size_t len);

#endif /* __ASCBPF_IOCTL_DECODE_H */
