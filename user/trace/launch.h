/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * launch.h - the `ascbpf trace -- CMD ARGS` child.
 *
 * asc_launch_prepare() forks a child that waits (on a pipe) before it execs
 * CMD, so the loader can put the child's pid in the BPF filter and attach the
 * dynamic-loader hook first; asc_launch_go() lets it exec.  If ascbpf dies
 * before asc_launch_go(), the child exits (status 127) without running CMD
 * untraced.  The child gets PR_SET_PDEATHSIG(SIGCONT) before exec: the
 * tracer may stop it at the loader hook (bpf_send_signal(SIGSTOP)) until new
 * libraries are attached, and this guarantees it never stays stopped when
 * ascbpf dies.
 */
#ifndef __ASCBPF_LAUNCH_H
#define __ASCBPF_LAUNCH_H

#include <sys/types.h>

struct asc_child {
	pid_t pid;
	int go_fd;  /* write end of the start pipe, -1 once released */
	int exited; /* 1 once reaped */
	int status; /* wait status once exited */
};

/* Forks the waiting child for argv (execvp, PATH searched).  0 or -errno. */
int asc_launch_prepare(char *const argv[], struct asc_child *c);

/*
 * Lets the child exec.  Returns 0, or -errno; an exec failure shows as the
 * child exiting with status 127 (and a message on stderr from the child).
 */
int asc_launch_go(struct asc_child *c);

/*
 * Reaps the child without blocking.  Returns 1 if it has exited (c->status
 * set), 0 if it still runs (or is stopped), -errno on error.
 */
int asc_launch_poll(struct asc_child *c);

/* A child never released exits (127, CMD not run) and is reaped; no-op otherwise. */
void asc_launch_abort(struct asc_child *c);

#endif /* __ASCBPF_LAUNCH_H */
