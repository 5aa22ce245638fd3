// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * quota.c - DIR/captures stays under --quota MB: before a capture starts, the
 * oldest entries (by modification time; a capture's directory, its .cap and
 * .log, the flight records) are removed until the total is under the quota,
 * never an entry of a capture still running (so the newest capture may take
 * the total over the quota until the next one starts).
 * Sizes are summed without following links (fstatat AT_SYMLINK_NOFOLLOW,
 * directories opened O_NOFOLLOW), removal is asc_rm_tree_at (lib/safeio.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "agent/agent.h"
#include "lib/log.h"
#include "lib/safeio.h"

#define QUOTA_MAX_ENTRIES 4096
#define QUOTA_MAX_DEPTH	  16

/* Bytes under name in dirfd (allocated blocks), links not followed. */
static uint64_t du_at(int dirfd, const char *name, int depth)
{
	struct stat st;
	struct dirent *de;
	uint64_t sum;
	DIR *d;
	int fd;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return 0;
	sum = (uint64_t)st.st_blocks * 512;
	if (!S_ISDIR(st.st_mode) || depth >= QUOTA_MAX_DEPTH)
		return sum;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sum;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return sum;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			sum += du_at(fd, de->d_name, depth + 1);
	closedir(d);
	return sum;
}

/* One entry of DIR/captures; a capture's "P-N", "P-N.cap", "P-N.log" are one group "P-N". */
struct entry {
	char name[256];
	size_t key_len; /* the group: name up to its first '.' */
	double mtime, group_mtime;
	uint64_t bytes;
};

static int same_group(const struct entry *x, const struct entry *y)
{
	return x->key_len == y->key_len && !strncmp(x->name, y->name, x->key_len);
}

/* oldest group first (its newest entry's time), a group's entries together */
static int by_group(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c;

	if (x->group_mtime != y->group_mtime)
		return x->group_mtime < y->group_mtime ? -1 : 1;
	c = strncmp(x->name, y->name, x->key_len < y->key_len ? x->key_len : y->key_len);
	return c ? c : (int)x->key_len - (int)y->key_len;
}

void agent_quota_enforce(struct agent *a, int (*busy)(const char *name))
{
	struct entry *e = calloc(QUOTA_MAX_ENTRIES, sizeof(*e));
	uint64_t total = 0, quota = (uint64_t)(a->o.quota_mb * 1048576.0);
	size_t n = 0;
	struct dirent *de;
	DIR *d = NULL;
	int dfd, cfd;

	dfd = asc_dir_open(a->o.dir, 0, NULL);
	cfd = dfd < 0 ? dfd :
			openat(dfd, "captures", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd >= 0)
		close(dfd);
	if (cfd >= 0 && e)
		d = fdopendir(dup(cfd));
	while (d && n < QUOTA_MAX_ENTRIES && (de = readdir(d))) {
		struct stat st;

		if (de->d_name[0] == '.' || fstatat(cfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		snprintf(e[n].name, sizeof(e[n].name), "%s", de->d_name);
		e[n].key_len = strcspn(e[n].name, ".");
		e[n].mtime = st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
		e[n].bytes = du_at(cfd, de->d_name, 0);
		total += e[n++].bytes;
	}
	if (d)
		closedir(d);
	for (size_t i = 0; i < n; i++) {
		e[i].group_mtime = e[i].mtime;
		for (size_t j = 0; j < n; j++)
			if (same_group(&e[i], &e[j]) && e[j].mtime > e[i].group_mtime)
				e[i].group_mtime = e[j].mtime;
	}
	if (e)
		qsort(e, n, sizeof(*e), by_group);
	/* whole groups, oldest first, until under the quota (checked between groups) */
	for (size_t i = 0; e && i < n && total > quota;) {
		size_t j = i;
		int keep = busy(e[i].name);

		for (; j < n && same_group(&e[i], &e[j]); j++) {
			if (keep || asc_rm_tree_at(cfd, e[j].name))
				continue;
			total -= e[j].bytes;
			asc_info("agent: --quota: removed captures/%s\n", e[j].name);
		}
		i = j;
	}
	if (cfd >= 0)
		close(cfd);
	free(e);
}
