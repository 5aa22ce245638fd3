/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * procmaps.h - /proc/PID/maps of a target process: which files are mapped
 * where, the /proc/PID/root view of those files for processes in other mount
 * namespaces (containers), and address <-> file offset conversion; and the
 * environment a target was started with (/proc/PID/environ).
 *
 * Paths in a map entry are the target's view (what it sees under its root);
 * asc_maps_host_path() gives the path this process opens, the same file.
 */
#ifndef __ASCBPF_PROCMAPS_H
#define __ASCBPF_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ASC_MAP_R      0x1
#define ASC_MAP_W      0x2
#define ASC_MAP_X      0x4
#define ASC_MAP_SHARED 0x8

struct asc_map_entry {
	uint64_t start;	 /* first address */
	uint64_t end;	 /* one past the last address */
	uint64_t offset; /* file offset mapped at start */
	uint64_t inode;	 /* 0 for anonymous mappings */
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t prot; /* ASC_MAP_* */
	bool deleted;  /* the kernel appended " (deleted)": file unlinked */
	char *path;    /* target's view; NULL for anonymous, "[heap]" etc. kept */
};

struct asc_maps {
	pid_t pid;		       /* 0 when parsed from text */
	struct asc_map_entry *entries; /* in the order of the maps file (ascending addresses) */
	size_t nr;
};

/*
 * Parses the text of a maps file (NUL-terminated).  A malformed line makes
 * the whole parse fail with -EINVAL (and an error naming the line).
 */
int asc_maps_parse(const char *text, struct asc_maps *maps);

/* Reads /proc/PID/maps.  -ESRCH if PID does not exist, -EACCES without permission. */
int asc_maps_read(pid_t pid, struct asc_maps *maps);

void asc_maps_free(struct asc_maps *maps);

/* The entry containing addr, or NULL. */
const struct asc_map_entry *asc_maps_find(const struct asc_maps *maps, uint64_t addr);

/*
 * File offset of addr in the file mapped there (entry->offset + addr -
 * entry->start).  -ENOENT if addr is not in a file mapping.
 */
int asc_maps_addr_to_off(const struct asc_maps *maps, uint64_t addr, uint64_t *off,
			 const struct asc_map_entry **entry);

/*
 * Address at which file offset off of path (target view) is mapped, looking
 * at every mapping of that file.  -ENOENT if that part of the file is not mapped.
 */
int asc_maps_off_to_addr(const struct asc_maps *maps, const char *path, uint64_t off,
			 uint64_t *addr);

/*
 * Basename match used for libraries: "libascendcl.so" matches a path whose
 * last component is "libascendcl.so" or starts with "libascendcl.so."
 * (versioned sonames such as libfoo.so.1.2).
 */
bool asc_lib_name_matches(const char *path, const char *lib);

/*
 * The path this process must open for the target's path: path itself when
 * PID shares our root directory, else "/proc/PID/root" + path.  If the file
 * found there is not the mapped one (dev/inode differ; pass inode 0 to skip
 * the check) returns -ESTALE.  -ENAMETOOLONG if buf is too small.
 */
int asc_maps_host_path(pid_t pid, const char *path, uint64_t inode, char *buf, size_t len);

/*
 * The path this process opens (and attaches uprobes at) for the file of a
 * file-backed entry, the first of these that is that very file (same inode):
 *   1. e->path, when PID shares our root directory;
 *   2. "/proc/PID/root" + e->path: a container (other mount namespace and
 *      root), whose maps show paths as the container sees them;
 *   3. e->path as we see it (a chroot inside our mount namespace);
 *   4. "/proc/PID/map_files/START-END": always that file, even when it was
 *      deleted or is unreachable from both roots (needs CAP_SYS_ADMIN).
 * -ENOENT for anonymous entries or when none works, -ESRCH if PID is gone.
 */
int asc_maps_entry_host_path(pid_t pid, const struct asc_map_entry *e, char *buf, size_t len);

/*
 * Index of the first entry at or after from that maps a file from its
 * offset 0 (the file's first mapping: its image) whose path is absolute,
 * not deleted, and whose basename starts with one of prefixes[]
 * (NULL-terminated); -1 if none.
 */
ssize_t asc_maps_next_image(const struct asc_maps *maps, size_t from, const char *const *prefixes);

/* Bytes of /proc/PID/environ read at most, its final NUL included. */
#define ASC_ENVIRON_MAX (1 << 16)

/*
 * The environment PID was exec'ed with (/proc/PID/environ; a later setenv()
 * is not in it): NUL-separated NAME=value entries, at most
 * ASC_ENVIRON_MAX - 1 bytes, NUL-terminated.  *buf is malloc'ed (the caller
 * frees it), *len its length without the final NUL.  0 or -errno (-ENOENT:
 * no such process, -EACCES).  Walk it with
 *	for (p = buf; p < buf + len; p += strlen(p) + 1)
 */
int asc_proc_environ(pid_t pid, char **buf, size_t *len);

/* The value in entry when it is "NAME=value", else NULL. */
const char *asc_environ_value(const char *entry, const char *name);

#endif /* __ASCBPF_PROCMAPS_H */
