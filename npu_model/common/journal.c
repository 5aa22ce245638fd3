// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * journal.c - the ground-truth journal writer (npu_journal.h, format in
 * npu_model/JOURNAL.md).
 *
 * One journal per process: this file lives in libnpu_common.so, which every
 * model library links, so all layers share npu_journal_on and one buffer.
 * Lines are formatted into a per-call stack buffer first and then copied into
 * the shared buffer under one mutex, so lines never interleave.  The buffer is
 * written out when it fills, on npu_journal_flush() and at exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "npu_journal.h"

#define JOURNAL_BUF_SIZE (1 << 20)
#define JOURNAL_LINE_MAX 1024

volatile int npu_journal_on;

static pthread_mutex_t journal_lock = PTHREAD_MUTEX_INITIALIZER;
static int journal_fd = -1;
static char *journal_buf;
static size_t journal_len;
static char journal_dir[PATH_MAX]; /* for reopening in a forked child */
static int journal_name_is_pid;	   /* the child gets its own file */
static int journal_atexit_done;
static int journal_flusher_started;

/*
 * Lines reach the file within JOURNAL_FLUSH_MS even when a process (the
 * daemon, a long-running workload) goes quiet, so a test can read the
 * journal of a process that is still running.
 */
#define JOURNAL_FLUSH_MS 50

static void *journal_flusher(void *arg)
{
	struct timespec ts = { 0, JOURNAL_FLUSH_MS * 1000000L };

	(void)arg;
	/* Named, so tools listing a traced process's threads can tell it apart. */
	prctl(PR_SET_NAME, "npu_journal", 0, 0, 0);
	for (;;) {
		nanosleep(&ts, NULL);
		npu_journal_flush();
	}
	return NULL;
}

/* Caller holds journal_lock. */
static void journal_start_flusher_locked(void)
{
	pthread_attr_t attr;
	pthread_t th;

	if (journal_flusher_started)
		return;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (!pthread_create(&th, &attr, journal_flusher, NULL))
		journal_flusher_started = 1;
	pthread_attr_destroy(&attr);
}

uint64_t npu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Caller holds journal_lock.  A short write loses the rest of the buffer. */
static void journal_drain_locked(void)
{
	size_t off = 0;

	while (journal_fd >= 0 && off < journal_len) {
		ssize_t n = write(journal_fd, journal_buf + off, journal_len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	journal_len = 0;
}

void npu_journal_flush(void)
{
	pthread_mutex_lock(&journal_lock);
	journal_drain_locked();
	pthread_mutex_unlock(&journal_lock);
}

static void journal_at_exit(void)
{
	npu_journal_flush();
}

int npu_journal_open_dir(const char *dir, const char *name)
{
	char path[PATH_MAX], head[128];
	int fd, n;

	if (!dir || !*dir || !name || !*name)
		return -EINVAL;
	n = snprintf(path, sizeof(path), "%s/journal.%s.tsv", dir, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;

	pthread_mutex_lock(&journal_lock);
	if (journal_fd >= 0) {
		/* An explicit call after the constructor: move to the new file. */
		journal_drain_locked();
		close(journal_fd);
		journal_fd = -1;
	}
	if (!journal_buf) {
		journal_buf = malloc(JOURNAL_BUF_SIZE);
		if (!journal_buf) {
			pthread_mutex_unlock(&journal_lock);
			return -ENOMEM;
		}
	}
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		int err = -errno;

		pthread_mutex_unlock(&journal_lock);
		return err;
	}
	journal_fd = fd;
	snprintf(journal_dir, sizeof(journal_dir), "%s", dir);
	journal_name_is_pid = strspn(name, "0123456789") == strlen(name);
	n = snprintf(head, sizeof(head), "# npu_model journal 1 pid=%d clock=CLOCK_MONOTONIC\n",
		     (int)getpid());
	memcpy(journal_buf, head, (size_t)n);
	journal_len = (size_t)n;
	journal_drain_locked();
	npu_journal_on = 1;
	journal_start_flusher_locked();
	if (!journal_atexit_done) {
		journal_atexit_done = 1;
		atexit(journal_at_exit);
	}
	pthread_mutex_unlock(&journal_lock);
	return 0;
}

void npu_journal_write(const char *kind, const char *fmt, ...)
{
	char line[JOURNAL_LINE_MAX];
	size_t len, klen;
	va_list ap;
	int n;

	if (!npu_journal_on || !kind)
		return;
	klen = strlen(kind);
	if (klen + 2 >= sizeof(line))
		return;
	memcpy(line, kind, klen);
	line[klen] = '\t';
	va_start(ap, fmt);
	n = vsnprintf(line + klen + 1, sizeof(line) - klen - 2, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	len = klen + 1 + (size_t)n;
	if (len > sizeof(line) - 2)
		len = sizeof(line) - 2; /* truncated: still one line */
	line[len] = '\0';
	/* glibc prints a NULL %p as "(nil)"; the format says pointers are 0x hex. */
	for (char *p = strstr(line, "(nil)"); p; p = strstr(p, "(nil)")) {
		memcpy(p, "0x0", 3);
		memmove(p + 3, p + 5, len - (size_t)(p + 5 - line) + 1);
		len -= 2;
	}
	line[len++] = '\n';

	pthread_mutex_lock(&journal_lock);
	if (journal_fd >= 0) {
		if (journal_len + len > JOURNAL_BUF_SIZE)
			journal_drain_locked();
		memcpy(journal_buf + journal_len, line, len);
		journal_len += len;
	}
	pthread_mutex_unlock(&journal_lock);
}

/*
 * fork(): the buffer is drained before the fork so the child inherits none of
 * the parent's lines; a child of a process whose journal is named by its pid
 * (multi-rank npu_train) opens its own journal.<child pid>.tsv.
 */
static void journal_fork_prepare(void)
{
	pthread_mutex_lock(&journal_lock);
	journal_drain_locked();
}

static void journal_fork_parent(void)
{
	pthread_mutex_unlock(&journal_lock);
}

static void journal_fork_child(void)
{
	char name[32];
	int reopen = journal_fd >= 0 && journal_name_is_pid;

	journal_flusher_started = 0; /* threads do not survive fork */
	pthread_mutex_unlock(&journal_lock);
	if (!reopen)
		return;
	close(journal_fd);
	journal_fd = -1;
	npu_journal_on = 0;
	snprintf(name, sizeof(name), "%d", (int)getpid());
	npu_journal_open_dir(journal_dir, name);
}

/*
 * NPU_MODEL_JOURNAL=DIR turns the journal on for every process that loads a
 * model library: DIR/journal.<pid>.tsv, or DIR/journal.modeld.tsv when the
 * program is npu-modeld (which may also call npu_journal_open_dir() for
 * --journal DIR; that moves the journal to the new file).
 */
__attribute__((constructor)) static void journal_init(void)
{
	const char *dir = getenv("NPU_MODEL_JOURNAL");
	char name[32];

	pthread_atfork(journal_fork_prepare, journal_fork_parent, journal_fork_child);
	if (!dir || !*dir)
		return;
	if (program_invocation_short_name && !strcmp(program_invocation_short_name, "npu-modeld"))
		snprintf(name, sizeof(name), "modeld");
	else
		snprintf(name, sizeof(name), "%d", (int)getpid());
	npu_journal_open_dir(dir, name);
}
