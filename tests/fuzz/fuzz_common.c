// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_common.c - see fuzz_common.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ascbpf_events.h"
#include "capture/capture.h"
#include "lib/log.h"
#include "fuzz_common.h"

static char scratch[PATH_MAX];

/* Formats the message (so its arguments are checked by the sanitizers) and drops it. */
static void quiet_sink(enum asc_log_level level, const char *fmt, va_list ap)
{
	char buf[1024];

	(void)level;
	vsnprintf(buf, sizeof(buf), fmt, ap);
}

static void rm_scratch(void)
{
	if (scratch[0]) {
		fz_rm_tree(".");
		rmdir(scratch);
	}
}

void fz_init(void)
{
	int fd;

	asc_log_set_sink(quiet_sink);
	/* the commands print their results on stdout; libFuzzer and the sanitizers use stderr */
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		close(fd);
	}
	fz_dir();
	atexit(rm_scratch);
}

const char *fz_dir(void)
{
	if (!scratch[0]) {
		const char *base = access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";

		snprintf(scratch, sizeof(scratch), "%s/ascbpf-fuzz-XXXXXX", base);
		if (!mkdtemp(scratch)) {
			perror("fuzz: mkdtemp");
			abort();
		}
	}
	return scratch;
}

const char *fz_write_file(const char *name, const void *data, size_t size)
{
	static char path[PATH_MAX];
	const char *p = data;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", fz_dir(), name);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror("fuzz: create input file");
		abort();
	}
	while (size) {
		n = write(fd, p, size);
		if (n <= 0) {
			perror("fuzz: write input file");
			abort();
		}
		p += n;
		size -= n;
	}
	close(fd);
	return path;
}

const char *fz_write_capture(const char *name, const uint8_t *data, size_t size)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", fz_dir(), name);
	return fz_write_capture_at(path, data, size);
}

const char *fz_write_capture_at(const char *path, const uint8_t *data, size_t size)
{
	struct asc_capture_writer *w;
	uint8_t *copy;
	size_t off = 0, n;

	if (size < sizeof(struct asc_hdr))
		return NULL;
	copy = malloc(size);
	if (!copy)
		abort();
	memcpy(copy, data, size);
	unlink(path);
	w = asc_capture_create(path, 0);
	if (!w) {
		perror("fuzz: asc_capture_create");
		abort();
	}
	while (size - off >= sizeof(struct asc_hdr)) {
		struct asc_hdr *h = (void *)(copy + off);
		size_t left = (size - off) & ~(size_t)7;

		n = h->size < sizeof(*h) ? sizeof(*h) : ((size_t)h->size + 7) & ~(size_t)7;
		if (n > left)
			n = left;
		if (n > UINT16_MAX)
			n = UINT16_MAX & ~7u;
		h->size = (uint16_t)n;
		if (asc_capture_append(w, h, n))
			abort();
		off += n;
	}
	free(copy);
	if (asc_capture_close(w))
		abort();
	return path;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	if (ftw->level > 0)
		remove(path);
	return 0;
}

void fz_rm_tree(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", fz_dir(), name);
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	if (strcmp(name, "."))
		remove(path);
}
