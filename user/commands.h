/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * commands.h - the subcommands main.c dispatches to.  Each returns 0 on
 * success or -errno; main turns that into the exit status once:
 * 0 success, 2 usage or environment error (-EINVAL, -EPERM, -ESRCH, -ENOENT,
 * -EEXIST, -ENOTDIR, -EACCES, -ENOSYS, -EPROTONOSUPPORT), 1 anything else.
 * argv[0] is the subcommand name.
 */
#ifndef __ASCBPF_COMMANDS_H
#define __ASCBPF_COMMANDS_H

int cmd_trace(int argc, char **argv);	/* user/trace/trace.c */
int cmd_probes(int argc, char **argv);	/* user/discovery/probes.c */
int cmd_convert(int argc, char **argv); /* user/convert/convert.c */
int cmd_report(int argc, char **argv);	/* user/report/report.c */
int cmd_dump(int argc, char **argv);	/* user/capture/dump.c */
int cmd_version(int argc, char **argv); /* user/trace/version.c */
int cmd_agent(int argc, char **argv);	/* user/agent/agent.c */
int cmd_ctl(int argc, char **argv);	/* user/agent/ctl.c */

#endif /* __ASCBPF_COMMANDS_H */
