// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Weak definitions of the subcommands so the program links while modules
 * are being written; a module's real definition replaces each one.  This
 * file is removed once every command exists.
 */
#include <errno.h>
#include "commands.h"
#include "log.h"

#define PLACEHOLDER(fn)							\
	__attribute__((weak)) int fn(int argc, char **argv)		\
	{								\
		(void)argc;						\
		asc_err("'%s' is not built yet\n", argv[0]);		\
		return -ENOSYS;						\
	}

PLACEHOLDER(cmd_trace)
PLACEHOLDER(cmd_probes)
PLACEHOLDER(cmd_convert)
PLACEHOLDER(cmd_report)
PLACEHOLDER(cmd_dump)
PLACEHOLDER(cmd_version)
