// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * launch.c - fork a child that execs CMD when told to (launch.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "trace/launch.h"
#include "lib/log.h"

int asc_launch_prepare(char *const argv[], struct asc_child *c)
{
	int fds[2];
	pid_t pid;

	memset(c, 0, sizeof(*c));
	c->go_fd = -1;
	if (!argv || !argv[0])
		return -EINVAL;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (pid == 0) {
		char go;
		ssize_t n;

		close(fds[1]);
		/* never left stopped by our loader hook if ascbpf dies */
		prctl(PR_SET_PDEATHSIG, SIGCONT);
		do {
			n = read(fds[0], &go, 1);
		} while (n < 0 && errno == EINTR);
		if (n != 1)
			_exit(127); /* ascbpf went away before tracing started */
		close(fds[0]);
		execvp(argv[0], argv);
		/* the child has no log sink of its own: stderr is the only channel */
		dprintf(2, "ascbpf: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	c->pid = pid;
	c->go_fd = fds[1];
	return 0;
}

int asc_launch_go(struct asc_child *c)
{
	ssize_t n;

	if (c->go_fd < 0)
		return -EINVAL;
	do {
		n = write(c->go_fd, "g", 1);
	} while (n < 0 && errno == EINTR);
	close(c->go_fd);
	c->go_fd = -1;
	return n == 1 ? 0 : -EPIPE;
}

int asc_launch_poll(struct asc_child *c)
{
	int status;
	pid_t r;

	if (c->exited)
		return 1;
	if (c->pid <= 0)
		return -ECHILD;
	r = waitpid(c->pid, &status, WNOHANG);
	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	c->exited = 1;
	c->status = status;
	return 1;
}

void asc_launch_abort(struct asc_child *c)
{
	if (c->pid <= 0 || c->exited)
		return;
	if (c->go_fd >= 0) {
		close(c->go_fd); /* the child reads EOF and exits 127 */
		c->go_fd = -1;
	}
	while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
		;
	c->exited = 1;
}
