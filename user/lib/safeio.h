/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * safeio.h - creating output without writing through a link (issue 19).
 *
 * ascbpf runs as root and writes into directories other users may write to
 * (/tmp, a shared log directory) under names they can predict
 * (ascbpf-PID.cap, {worker}_{pid}_{stamp}_ascend_pt, profiler_info.json).
 * Every writer in user/ creates its output through these helpers:
 *
 * - directories are made with mkdirat() and opened with
 *   O_DIRECTORY|O_NOFOLLOW, one component at a time;
 * - files are created with openat(dirfd, name, O_CREAT|O_EXCL|O_NOFOLLOW);
 * - an existing output is replaced (--force) either through a temporary name
 *   in the same directory and renameat() (asc_tmp_create, the converter's
 *   files: the old file stays whole until the new one is), or by unlinking
 *   the name itself (never its target) and creating it O_EXCL again
 *   (asc_file_create with replace: the capture, written while the job runs,
 *   must have its final name from the first frame on).
 *
 * The user's own path (the -o / --capture argument) is walked from "/" or
 * ".", one component at a time: a symbolic link on the way is followed when
 * root, the effective user or the owner of its directory made it, or when
 * others cannot write to its directory (/var/run -> /run, a link in the
 * user's home); a link another user planted in a directory everyone may write
 * to (/tmp) is refused with -ELOOP: the kernel's fs.protected_symlinks rule,
 * for every world-writable directory, sticky or not.  The
 * names ascbpf itself chooses (asc_subdir_open, asc_file_create,
 * asc_tmp_create) are never followed, whoever owns the link.
 *
 * All functions return a file descriptor (>= 0) or 0, or -errno.
 */
#ifndef __ASCBPF_SAFEIO_H
#define __ASCBPF_SAFEIO_H

#include <stddef.h>

/*
 * Opens the directory path (O_DIRECTORY|O_CLOEXEC) by the walk above; with
 * create, missing components are made (0755).  *created (may be NULL) is set
 * when the last component was made by this call.
 */
int asc_dir_open(const char *path, int create, int *created);

/* The directory name in dirfd, made (0755) when missing; a link at name: -ELOOP. */
int asc_subdir_open(int dirfd, const char *name, int *created);

/*
 * Opens the directory holding path (asc_dir_open without create) and copies
 * the last component into name (len bytes): "." and ".." and an empty last
 * component give -EINVAL.
 */
int asc_parent_open(const char *path, char *name, size_t len);

/*
 * Creates name in dirfd for writing (O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|
 * O_CLOEXEC, 0644).  With replace, an existing name that is not a directory
 * is unlinked (a link: the link itself) and the create retried; without it,
 * an existing name gives -EEXIST.
 */
int asc_file_create(int dirfd, const char *name, int replace);

/* asc_file_create() in the directory of path (asc_parent_open). */
int asc_file_create_path(const char *path, int replace);

/*
 * Creates a new file ".NAME.tmp.XXXXXX" in dirfd as asc_file_create does and
 * writes its name into tmp (len bytes): the caller writes it and renameat()s
 * it over name (asc_tmp_commit) or unlinkat()s it.
 */
int asc_tmp_create(int dirfd, const char *name, char *tmp, size_t len);

/*
 * renameat(dirfd, tmp, dirfd, name): replaces whatever name is (a file, a
 * link: never what a link points to); on failure tmp is removed.
 */
int asc_tmp_commit(int dirfd, const char *tmp, const char *name);

/*
 * Removes name in dirfd: a file or a link with unlinkat(), a directory with
 * everything in it, never following a link.  A missing name is not an error.
 */
int asc_rm_tree_at(int dirfd, const char *name);

/* " (a symbolic link: not followed)" for -ELOOP, "" otherwise: for messages. */
const char *asc_safeio_hint(int err);

#endif /* __ASCBPF_SAFEIO_H */
