// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_safeio - lib/safeio: the walk follows a link root, the user or the
 * directory's owner made, or one in a directory others cannot write to, and
 * refuses one another user planted in a world-writable directory (-ELOOP);
 * asc_subdir_open never follows; asc_file_create is O_EXCL and, replacing,
 * unlinks the link, never its target; asc_tmp_create + asc_tmp_commit
 * replace a link by the file; asc_rm_tree_at removes a tree holding links
 * without touching what they point to.  Runs as root (links are chowned).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "lib/safeio.h"

#define NOBODY 65534

static char dir[] = "/tmp/test_safeio.XXXXXX";
static char p[PATH_MAX], q[PATH_MAX], victim[PATH_MAX];

static const char *at(char *buf, const char *rel)
{
	snprintf(buf, PATH_MAX, "%s/%s", dir, rel);
	return buf;
}

static void plant(const char *target, const char *rel, uid_t owner)
{
	at(q, rel);
	unlink(q);
	assert_int_equal(symlink(target, q), 0);
	assert_int_equal(lchown(q, owner, owner), 0);
}

static void victim_intact(void)
{
	char buf[32] = { 0 };
	int fd = open(victim, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf) - 1), 9);
	close(fd);
	assert_string_equal(buf, "precious\n");
}

static int setup(void **state)
{
	int fd;

	(void)state;
	if (!mkdtemp(dir) || chmod(dir, 0755))
		return -1;
	at(victim, "victim");
	fd = open(victim, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0 || write(fd, "precious\n", 9) != 9)
		return -1;
	close(fd);
	/* shared: everyone writes (as /tmp); own: nobody's own 0755 directory; real: a target */
	if (mkdir(at(p, "shared"), 0755) || chmod(p, 01777) || mkdir(at(p, "own"), 0755) ||
	    chown(p, NOBODY, NOBODY) || mkdir(at(p, "real"), 0755))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static void test_walk_trust(void **state)
{
	int fd;

	(void)state;
	at(p, "real");
	plant(p, "shared/mine", 0); /* root's link in /tmp-like: followed */
	fd = asc_dir_open(at(p, "shared/mine"), 0, NULL);
	assert_true(fd >= 0);
	close(fd);
	at(p, "real");
	plant(p, "shared/theirs", NOBODY); /* planted by another user: refused */
	assert_int_equal(asc_dir_open(at(p, "shared/theirs"), 0, NULL), -ELOOP);
	assert_int_equal(asc_dir_open(at(p, "shared/theirs/x"), 1, NULL), -ELOOP);
	at(p, "real");
	plant(p, "own/home", NOBODY); /* the directory's owner's link: followed */
	fd = asc_dir_open(at(p, "own/home"), 0, NULL);
	assert_true(fd >= 0);
	/* the names ascbpf chooses are never followed, whoever made the link */
	at(p, "real");
	plant(p, "shared/sub", 0);
	close(fd);
	fd = asc_dir_open(at(p, "shared"), 0, NULL);
	assert_true(fd >= 0);
	assert_int_equal(asc_subdir_open(fd, "sub", NULL), -ELOOP);
	close(fd);
}

static void test_create_and_replace(void **state)
{
	char tmp[NAME_MAX + 1];
	int dfd, fd;

	(void)state;
	dfd = asc_dir_open(at(p, "shared"), 0, NULL);
	assert_true(dfd >= 0);
	plant(victim, "shared/out", NOBODY);
	assert_int_equal(asc_file_create(dfd, "out", 0), -EEXIST);
	fd = asc_file_create(dfd, "out", 1); /* the link goes, the file is new */
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "new\n", 4), 4);
	close(fd);
	victim_intact();
	plant(victim, "shared/out2", NOBODY);
	fd = asc_tmp_create(dfd, "out2", tmp, sizeof(tmp));
	assert_true(fd >= 0);
	assert_non_null(strstr(tmp, ".tmp."));
	assert_int_equal(write(fd, "new\n", 4), 4);
	close(fd);
	assert_int_equal(asc_tmp_commit(dfd, tmp, "out2"), 0);
	victim_intact();
	assert_int_equal(faccessat(dfd, tmp, F_OK, 0), -1);
	fd = openat(dfd, "out2", O_RDONLY | O_NOFOLLOW);
	assert_true(fd >= 0); /* a file now, not a link */
	close(fd);
	/* asc_file_create_path: the same through a path */
	plant(victim, "shared/out3", NOBODY);
	fd = asc_file_create_path(at(p, "shared/out3"), 1);
	assert_true(fd >= 0);
	close(fd);
	victim_intact();
	close(dfd);
}

static void test_rm_tree_keeps_targets(void **state)
{
	int dfd, fd;

	(void)state;
	dfd = asc_dir_open(dir, 0, NULL);
	assert_true(dfd >= 0);
	fd = asc_subdir_open(dfd, "tree", NULL);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(mkdir(at(p, "tree/d"), 0755), 0);
	at(p, "real");
	plant(p, "tree/d/dirlink", NOBODY);
	plant(victim, "tree/filelink", NOBODY);
	assert_int_equal(asc_rm_tree_at(dfd, "tree"), 0);
	assert_int_equal(faccessat(dfd, "tree", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	assert_int_equal(faccessat(dfd, "real", F_OK, 0), 0);
	victim_intact();
	assert_int_equal(asc_rm_tree_at(dfd, "tree"), 0); /* missing: not an error */
	close(dfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_trust),
		cmocka_unit_test(test_create_and_replace),
		cmocka_unit_test(test_rm_tree_keeps_targets),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
