/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * holds.h - the release watchdog of the processes the BPF side stops
 * (ascbpf_maps.h ASC_HOLD_*).
 *
 * Our -- CMD child has PR_SET_PDEATHSIG(SIGCONT), but the processes it forks
 * do not inherit it, and --comm processes are not ours: to stop those until
 * their probes or their card's channel are in place, a process must exist
 * that lets them go on if ascbpf dies.  asc_holdwatch_start() forks it (before
 * any thread starts): it keeps only CAP_KILL and the tgids map's fd, sends
 * SIGCONT to every pid ascbpf writes to its pipe (ascbpf's releases go
 * through it, so ascbpf itself needs no CAP_KILL), and when the pipe ends --
 * ascbpf exited, normally or killed, SIGKILL included -- sends SIGCONT to
 * every process left in the map that the BPF side may have stopped, then
 * exits.  Without it (fork failed) only our direct child is ever stopped.
 */
#ifndef __ASCBPF_HOLDS_H
#define __ASCBPF_HOLDS_H

#include <sys/types.h>

struct asc_holdwatch {
	pid_t pid; /* the watchdog; 0: none */
	int fd;	   /* write end of its pipe; -1: none */
};

/*
 * 0, or -errno (no watchdog: w->pid 0).  all: every process in the map may be
 * stopped (the unwind guard holds any traced process), so all get SIGCONT
 * when ascbpf is gone; else only forks and --comm execs.
 */
int asc_holdwatch_start(struct asc_holdwatch *w, int tgids_fd, int all);
/* SIGCONT to pid, through the watchdog when there is one. */
void asc_holdwatch_release(struct asc_holdwatch *w, pid_t pid);
/* Ends the pipe and reaps the watchdog (it releases what is left in the map); idempotent. */
void asc_holdwatch_stop(struct asc_holdwatch *w);

#endif /* __ASCBPF_HOLDS_H */
