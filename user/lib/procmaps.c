// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * procmaps.c - parsing /proc/PID/maps, container path view, address <->
 * file offset, /proc/PID/environ.  See procmaps.h for the contracts.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/log.h"
#include "lib/procmaps.h"

/* Parses one maps line (without its newline) into e; 0 or -EINVAL. */
static int parse_line(const char *line, struct asc_map_entry *e)
{
	unsigned long long start, end, off, ino;
	unsigned int maj, min;
	char perms[8];
	int n = 0;
	const char *p;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu%n", &start, &end, perms, &off, &maj, &min,
		   &ino, &n) != 7 ||
	    n == 0)
		return -EINVAL;
	if (end < start || strlen(perms) != 4)
		return -EINVAL;
	memset(e, 0, sizeof(*e));
	e->start = start;
	e->end = end;
	e->offset = off;
	e->dev_major = maj;
	e->dev_minor = min;
	e->inode = ino;
	if (perms[0] == 'r')
		e->prot |= ASC_MAP_R;
	if (perms[1] == 'w')
		e->prot |= ASC_MAP_W;
	if (perms[2] == 'x')
		e->prot |= ASC_MAP_X;
	if (perms[3] == 's')
		e->prot |= ASC_MAP_SHARED;

	/* The path is the rest of the line after the padding; it may contain spaces. */
	p = line + n;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p) {
		size_t len = strlen(p);
		static const char deleted[] = " (deleted)";
		size_t dlen = sizeof(deleted) - 1;

		if (len > dlen && !strcmp(p + len - dlen, deleted)) {
			e->deleted = true;
			len -= dlen;
		}
		e->path = strndup(p, len);
		if (!e->path)
			return -ENOMEM;
	}
	return 0;
}

int asc_maps_parse(const char *text, struct asc_maps *maps)
{
	const char *p = text;
	size_t cap = 0, lineno = 0;
	char *line = NULL;
	int err = 0;

	memset(maps, 0, sizeof(*maps));
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		struct asc_map_entry *e;

		lineno++;
		if (len == 0) {
			p += nl ? 1 : 0;
			if (!nl)
				break;
			continue;
		}
		free(line);
		line = strndup(p, len);
		if (!line) {
			err = -ENOMEM;
			goto fail;
		}
		if (maps->nr == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			void *tmp = realloc(maps->entries, ncap * sizeof(*maps->entries));

			if (!tmp) {
				err = -ENOMEM;
				goto fail;
			}
			maps->entries = tmp;
			cap = ncap;
		}
		e = &maps->entries[maps->nr];
		err = parse_line(line, e);
		if (err) {
			if (err == -EINVAL)
				asc_err("maps line %zu is malformed: '%.120s'\n", lineno, line);
			goto fail;
		}
		maps->nr++;
		p += len + (nl ? 1 : 0);
	}
	free(line);
	return 0;
fail:
	free(line);
	asc_maps_free(maps);
	return err;
}

int asc_maps_read(pid_t pid, struct asc_maps *maps)
{
	char fname[64];
	char *text = NULL;
	size_t size = 0;
	FILE *f, *mem;
	char buf[8192];
	size_t n;
	int err;

	memset(maps, 0, sizeof(*maps));
	if (pid <= 0)
		return -ESRCH;
	snprintf(fname, sizeof(fname), "/proc/%d/maps", (int)pid);
	f = fopen(fname, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	mem = open_memstream(&text, &size);
	if (!mem) {
		err = -errno;
		fclose(f);
		return err;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, mem);
	err = ferror(f) ? -EIO : 0;
	fclose(f);
	if (fclose(mem) && !err)
		err = -ENOMEM;
	if (!err)
		err = asc_maps_parse(text ? text : "", maps);
	free(text);
	if (!err)
		maps->pid = pid;
	return err;
}

void asc_maps_free(struct asc_maps *maps)
{
	size_t i;

	if (!maps)
		return;
	for (i = 0; i < maps->nr; i++)
		free(maps->entries[i].path);
	free(maps->entries);
	memset(maps, 0, sizeof(*maps));
}

const struct asc_map_entry *asc_maps_find(const struct asc_maps *maps, uint64_t addr)
{
	size_t lo = 0, hi = maps->nr;

	/* Entries are sorted and disjoint, as the kernel prints them. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct asc_map_entry *e = &maps->entries[mid];

		if (addr < e->start)
			hi = mid;
		else if (addr >= e->end)
			lo = mid + 1;
		else
			return e;
	}
	return NULL;
}

int asc_maps_addr_to_off(const struct asc_maps *maps, uint64_t addr, uint64_t *off,
			 const struct asc_map_entry **entry)
{
	const struct asc_map_entry *e = asc_maps_find(maps, addr);

	if (!e || !e->inode || !e->path)
		return -ENOENT;
	*off = e->offset + (addr - e->start);
	if (entry)
		*entry = e;
	return 0;
}

int asc_maps_off_to_addr(const struct asc_maps *maps, const char *path, uint64_t off,
			 uint64_t *addr)
{
	size_t i;

	for (i = 0; i < maps->nr; i++) {
		const struct asc_map_entry *e = &maps->entries[i];

		if (!e->inode || !e->path || strcmp(e->path, path))
			continue;
		if (off >= e->offset && off - e->offset < e->end - e->start) {
			*addr = e->start + (off - e->offset);
			return 0;
		}
	}
	return -ENOENT;
}

bool asc_lib_name_matches(const char *path, const char *lib)
{
	const char *base = strrchr(path, '/');
	size_t len = strlen(lib);

	base = base ? base + 1 : path;
	if (strncmp(base, lib, len))
		return false;
	return base[len] == '\0' || base[len] == '.';
}

int asc_maps_host_path(pid_t pid, const char *path, uint64_t inode, char *buf, size_t len)
{
	char root[64];
	struct stat ours, theirs, st;
	int n;

	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	if (stat("/", &ours))
		return -errno;
	if (stat(root, &theirs))
		return errno == ENOENT ? -ESRCH : -errno;
	if (ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino)
		n = snprintf(buf, len, "%s", path);
	else
		n = snprintf(buf, len, "%s%s", root, path);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (inode) {
		if (stat(buf, &st))
			return -errno;
		if ((uint64_t)st.st_ino != inode)
			return -ESTALE;
	}
	return 0;
}

/* Whether path names the file with inode ino (and is a regular file). */
static bool is_that_file(const char *path, uint64_t ino)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && (uint64_t)st.st_ino == ino;
}

int asc_maps_entry_host_path(pid_t pid, const struct asc_map_entry *e, char *buf, size_t len)
{
	char root[64];
	struct stat ours, theirs;
	int n;

	if (!e->inode || !e->path || e->path[0] != '/')
		return -ENOENT;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	if (stat("/", &ours))
		return -errno;
	if (stat(root, &theirs))
		return errno == ENOENT ? -ESRCH : -errno;
	if (!e->deleted) {
		bool same_root = ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;

		if (same_root) {
			n = snprintf(buf, len, "%s", e->path);
			if (n < 0 || (size_t)n >= len)
				return -ENAMETOOLONG;
			if (is_that_file(buf, e->inode))
				return 0;
		}
		n = snprintf(buf, len, "%s%s", root, e->path);
		if (n < 0 || (size_t)n >= len)
			return -ENAMETOOLONG;
		if (!same_root && is_that_file(buf, e->inode))
			return 0;
		n = snprintf(buf, len, "%s", e->path);
		if (n >= 0 && (size_t)n < len && is_that_file(buf, e->inode))
			return 0;
	}
	n = snprintf(buf, len, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, e->start,
		     e->end);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (is_that_file(buf, e->inode))
		return 0;
	return -ENOENT;
}

ssize_t asc_maps_next_image(const struct asc_maps *maps, size_t from, const char *const *prefixes)
{
	size_t i, k;

	for (i = from; i < maps->nr; i++) {
		const struct asc_map_entry *e = &maps->entries[i];
		const char *base;

		if (!e->path || e->path[0] != '/' || e->offset || e->deleted)
			continue;
		base = strrchr(e->path, '/') + 1;
		for (k = 0; prefixes[k]; k++)
			if (!strncmp(base, prefixes[k], strlen(prefixes[k])))
				return i;
	}
	return -1;
}

int asc_proc_environ(pid_t pid, char **buf, size_t *len)
{
	char path[64], *b;
	size_t n = 0;
	int fd, err = 0;

	b = malloc(ASC_ENVIRON_MAX);
	if (!b)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(b);
		return err;
	}
	while (n < ASC_ENVIRON_MAX - 1) {
		ssize_t r = read(fd, b + n, ASC_ENVIRON_MAX - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			err = -errno;
		if (r <= 0)
			break;
		n += r;
	}
	close(fd);
	if (err) {
		free(b);
		return err;
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}

const char *asc_environ_value(const char *entry, const char *name)
{
	size_t nl = strlen(name);

	return !strncmp(entry, name, nl) && entry[nl] == '=' ? entry + nl + 1 : NULL;
}
