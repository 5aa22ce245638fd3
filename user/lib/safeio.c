// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * safeio.c - output created without following links (contract in the header).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/safeio.h"

#define DIR_FLAGS    (O_RDONLY | O_DIRECTORY | O_CLOEXEC)
#define FILE_FLAGS   (O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC)
/* an output tree deeper than this is not ascbpf's: refused, not walked (one fd per level) */
#define RM_DEPTH_MAX 32

const char *asc_safeio_hint(int err)
{
	return err == -ELOOP ? " (a symbolic link: not followed)" : "";
}

/*
 * 1: a link at name the walk may follow: made by root, by the effective user or
 * by the directory's owner, or in a directory others cannot write to; 0: a
 * link another user planted in a directory everyone writes to (/tmp); -1: no link.
 */
static int link_owner_ok(int dirfd, const char *name)
{
	struct stat st, dir;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISLNK(st.st_mode))
		return -1;
	if (fstat(dirfd, &dir))
		return 0;
	return st.st_uid == 0 || st.st_uid == geteuid() || st.st_uid == dir.st_uid ||
	       !(dir.st_mode & S_IWOTH);
}

/* One component of a walk: name in dirfd as a directory, made when create. */
static int walk_one(int dirfd, const char *name, int create, int *created)
{
	int fd;

	*created = 0;
	fd = openat(dirfd, name, DIR_FLAGS | O_NOFOLLOW);
	if (fd >= 0)
		return fd;
	if (errno == ENOENT && create) {
		if (!mkdirat(dirfd, name, 0755))
			*created = 1;
		else if (errno != EEXIST)
			return -errno;
		fd = openat(dirfd, name, DIR_FLAGS | O_NOFOLLOW);
		return fd >= 0 ? fd : -errno;
	}
	/* O_DIRECTORY|O_NOFOLLOW on a link fails with ENOTDIR (ELOOP without O_DIRECTORY) */
	if (errno == ENOTDIR || errno == ELOOP) {
		switch (link_owner_ok(dirfd, name)) {
		case 1:
			fd = openat(dirfd, name, DIR_FLAGS);
			return fd >= 0 ? fd : -errno;
		case 0:
			return -ELOOP;
		}
		return -ENOTDIR;
	}
	return -errno;
}

int asc_dir_open(const char *path, int create, int *created)
{
	char *buf, *comp, *save = NULL;
	int fd, next, made = 0;

	if (created)
		*created = 0;
	if (!path || !*path)
		return -ENOENT;
	buf = strdup(path);
	if (!buf)
		return -ENOMEM;
	fd = open(path[0] == '/' ? "/" : ".", DIR_FLAGS);
	if (fd < 0) {
		free(buf);
		return -errno;
	}
	for (comp = strtok_r(buf, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
		if (!strcmp(comp, "."))
			continue;
		next = walk_one(fd, comp, create, &made);
		close(fd);
		if (next < 0) {
			free(buf);
			return next;
		}
		fd = next;
	}
	free(buf);
	if (created)
		*created = made;
	return fd;
}

int asc_subdir_open(int dirfd, const char *name, int *created)
{
	int fd, made = 0;

	if (created)
		*created = 0;
	if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	fd = openat(dirfd, name, DIR_FLAGS | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT) {
		if (!mkdirat(dirfd, name, 0755))
			made = 1;
		else if (errno != EEXIST)
			return -errno;
		fd = openat(dirfd, name, DIR_FLAGS | O_NOFOLLOW);
	}
	if (fd < 0)
		return errno == ENOTDIR && link_owner_ok(dirfd, name) >= 0 ? -ELOOP : -errno;
	if (created)
		*created = made;
	return fd;
}

int asc_parent_open(const char *path, char *name, size_t len)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char *dir;
	int fd;

	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return -EINVAL;
	if (strlen(base) >= len)
		return -ENAMETOOLONG;
	snprintf(name, len, "%s", base);
	if (!slash)
		return asc_dir_open(".", 0, NULL);
	if (slash == path)
		return asc_dir_open("/", 0, NULL);
	dir = strndup(path, slash - path);
	if (!dir)
		return -ENOMEM;
	fd = asc_dir_open(dir, 0, NULL);
	free(dir);
	return fd;
}

int asc_file_create(int dirfd, const char *name, int replace)
{
	int fd, tries;

	/* a name re-planted between the unlink and the create is unlinked again, a few times */
	for (tries = 0; tries < 8; tries++) {
		fd = openat(dirfd, name, FILE_FLAGS, 0644);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST || !replace)
			return -errno;
		if (unlinkat(dirfd, name, 0) && errno != ENOENT)
			return -errno; /* EISDIR: a directory is never replaced by a file */
	}
	return -EEXIST;
}

int asc_file_create_path(const char *path, int replace)
{
	char name[NAME_MAX + 1];
	int dirfd = asc_parent_open(path, name, sizeof(name)), fd;

	if (dirfd < 0)
		return dirfd;
	fd = asc_file_create(dirfd, name, replace);
	close(dirfd);
	return fd;
}

int asc_tmp_create(int dirfd, const char *name, char *tmp, size_t len)
{
	unsigned int r;
	int fd, tries;

	for (tries = 0; tries < 64; tries++) {
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (unsigned int)getpid() * 2654435761u + (unsigned int)tries;
		if (snprintf(tmp, len, ".%s.tmp.%06x", name, r & 0xffffff) >= (int)len)
			return -ENAMETOOLONG;
		fd = openat(dirfd, tmp, FILE_FLAGS, 0644);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

int asc_tmp_commit(int dirfd, const char *tmp, const char *name)
{
	int err;

	if (!renameat(dirfd, tmp, dirfd, name))
		return 0;
	err = -errno;
	unlinkat(dirfd, tmp, 0);
	return err;
}

static int rm_tree(int dirfd, const char *name, int depth)
{
	struct dirent *e;
	DIR *d;
	int fd, err = 0;

	fd = openat(dirfd, name, DIR_FLAGS | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno == ELOOP || errno == ENOTDIR) /* a link or a file: the name goes */
			return unlinkat(dirfd, name, 0) && errno != ENOENT ? -errno : 0;
		return -errno;
	}
	if (depth >= RM_DEPTH_MAX) {
		close(fd);
		return -ELOOP;
	}
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && !err)
			err = rm_tree(fd, e->d_name, depth + 1);
	closedir(d);
	if (!err && unlinkat(dirfd, name, AT_REMOVEDIR) && errno != ENOENT)
		err = -errno;
	return err;
}

int asc_rm_tree_at(int dirfd, const char *name)
{
	return rm_tree(dirfd, name, 0);
}
