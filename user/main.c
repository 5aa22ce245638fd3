// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ascbpf - eBPF tracing for PyTorch on Ascend NPUs.
 *
 * main only dispatches: a table of subcommands, exact-match lookup, and the
 * one place where a -errno becomes an exit status.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "lib/log.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

/* the command table, in aligned columns */
// clang-format off
static const struct cmd cmds[] = {
	{ "trace",   cmd_trace,   "trace a running process (-p PID) or a command (-- CMD)" },
	{ "probes",  cmd_probes,  "list what would attach where in a process, and what is missing" },
	{ "convert", cmd_convert, "turn a capture file into *_ascend_pt/ASCEND_PROFILER_OUTPUT" },
	{ "report",  cmd_report,  "find dispatch, optimizer, TransData and memory problems" },
	{ "dump",    cmd_dump,    "print the records of a capture file (text or --json lines)" },
	{ "version", cmd_version, "print versions and the kernel features found" },
	{ "agent",   cmd_agent,   "always-on node daemon: Prometheus metrics of every NPU job" },
	{ "ctl",     cmd_ctl,     "ask the running agent for a deep capture of a job" },
	{ NULL, NULL, NULL },
};
// clang-format on

static void usage(FILE *f)
{
	const struct cmd *c;

	fprintf(f, "Usage: ascbpf COMMAND [OPTIONS]\n\nCommands:\n");
	for (c = cmds; c->name; c++)
		fprintf(f, "  %-8s %s\n", c->name, c->summary);
	fprintf(f, "\n'ascbpf COMMAND --help' describes each command.\n"
		   "Examples:\n"
		   "  sudo ascbpf trace -p 4242\n"
		   "  sudo ascbpf trace --schedule wait=1,warmup=1,active=3 -- python train.py\n"
		   "  ascbpf report ./result/host_4242_20261202104500123_ascend_pt\n");
}

static int exit_status(int err)
{
	switch (err) {
	case 0:
		return 0;
	case -EINVAL:
	case -EPERM:
	case -ESRCH:
	case -ENOENT:
	case -EEXIST:
	case -ENOTDIR:
	case -EACCES:
	case -ENOSYS:
	case -EPROTONOSUPPORT:
	case -ELOOP:
		return 2;
	default:
		return 1;
	}
}

int main(int argc, char **argv)
{
	const struct cmd *c;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version"))
		argv[1] = "version";
	for (c = cmds; c->name; c++)
		if (!strcmp(argv[1], c->name))
			return exit_status(c->fn(argc - 1, argv + 1));
	asc_err("unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
