// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * holds.c - the release watchdog of held processes (contract in holds.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>
#include <bpf/bpf.h>
#include "ascbpf_maps.h"
#include "trace/holds.h"
#include "trace/privs.h"

/* Closes every fd but keep1 and keep2 (the watchdog holds nothing of ascbpf's). */
static void close_others(int keep1, int keep2)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int fd, dfd;

	if (!d) {
		for (fd = 3; fd < 4096; fd++)
			if (fd != keep1 && fd != keep2)
				close(fd);
		return;
	}
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		fd = atoi(de->d_name);
		if (fd > 2 && fd != keep1 && fd != keep2 && fd != dfd)
			close(fd);
	}
	closedir(d);
}

/*
 * SIGCONT to every process in the map the BPF side may have stopped (ascbpf
 * is gone): all of them, or only forks and --comm execs.  A SIGCONT to a
 * process that runs changes nothing.
 */
static void release_map(int map_fd, int all)
{
	struct asc_tgid_state st;
	__u32 key, next, *prev = NULL;

	while (!bpf_map_get_next_key(map_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(map_fd, &key, &st) &&
		    (all || (st.flags & (ASC_TGID_FROM_FORK | ASC_TGID_FROM_EXEC))))
			kill((pid_t)key, SIGCONT);
	}
}

static void __attribute__((noreturn)) watch_main(int rfd, int map_fd, int all)
{
	static const int ignored[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP };
	pid_t pid;
	size_t i;
	ssize_t n;

	close_others(rfd, map_fd);
	/* Ctrl-C reaches the whole foreground group: ascbpf ends the trace, we outlive it */
	for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		signal(ignored[i], SIG_IGN);
	prctl(PR_SET_NAME, "ascbpf-holds", 0, 0, 0);
	asc_privs_keep_only(1ull << CAP_KILL); /* SIGCONT to --comm processes of any user */
	for (;;) {
		n = read(rfd, &pid, sizeof(pid));
		if (n == (ssize_t)sizeof(pid)) {
			if (pid > 0)
				kill(pid, SIGCONT);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		break; /* EOF: ascbpf has exited */
	}
	release_map(map_fd, all);
	_exit(0);
}

int asc_holdwatch_start(struct asc_holdwatch *w, int tgids_fd, int all)
{
	int fds[2];
	pid_t pid;

	w->pid = 0;
	w->fd = -1;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (pid == 0) {
		close(fds[1]);
		watch_main(fds[0], tgids_fd, all);
	}
	close(fds[0]);
	w->pid = pid;
	w->fd = fds[1];
	return 0;
}

void asc_holdwatch_release(struct asc_holdwatch *w, pid_t pid)
{
	ssize_t n;

	if (w->fd >= 0) {
		do {
			n = write(w->fd, &pid, sizeof(pid));
		} while (n < 0 && errno == EINTR);
		if (n == (ssize_t)sizeof(pid))
			return;
	}
	kill(pid, SIGCONT); /* no watchdog (or it is gone): our own right to signal */
}

void asc_holdwatch_stop(struct asc_holdwatch *w)
{
	if (w->fd >= 0) {
		close(w->fd);
		w->fd = -1;
	}
	if (w->pid > 0)
		while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
			;
	w->pid = 0;
}
