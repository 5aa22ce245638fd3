// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_procmaps - /proc/PID/maps parsing on synthetic text (paths with
 * spaces, deleted files, anonymous and special mappings, malformed lines),
 * address <-> file offset, library name matching, the live maps of this
 * process checked against dladdr(), images by basename prefix, and
 * /proc/PID/environ against this process's own environment.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "lib/procmaps.h"

static const char sample[] =
	"55d0a0000000-55d0a0002000 r--p 00000000 08:01 1311 /usr/bin/npu train\n"
	"55d0a0002000-55d0a0009000 r-xp 00002000 08:01 1311 /usr/bin/npu train\n"
	"55d0a1000000-55d0a1021000 rw-p 00000000 00:00 0                          [heap]\n"
	"7f0000000000-7f0000010000 r--p 00000000 fd:02 424242                     /opt/cann/lib64/libascendcl.so\n"
	"7f0000010000-7f0000050000 r-xp 00010000 fd:02 424242                     /opt/cann/lib64/libascendcl.so\n"
	"7f0000050000-7f0000058000 rw-p 00050000 fd:02 424242                     /opt/cann/lib64/libascendcl.so\n"
	"7f0000060000-7f0000070000 rw-s 00000000 00:05 77                         /dev/davinci_manager\n"
	"7f0000080000-7f0000090000 r-xp 00001000 fd:02 999                        /tmp/libopapi.so.8.1 (deleted)\n"
	"7f00000a0000-7f00000b0000 rw-p 00000000 00:00 0 \n"
	"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]\n";

static void test_parse_fields(void **state)
{
	struct asc_maps m;
	const struct asc_map_entry *e;

	assert_int_equal(asc_maps_parse(sample, &m), 0);
	assert_int_equal(m.nr, 10);
	e = &m.entries[1];
	assert_true(e->start == 0x55d0a0002000ULL && e->end == 0x55d0a0009000ULL);
	assert_true(e->offset == 0x2000);
	assert_int_equal(e->prot, ASC_MAP_R | ASC_MAP_X);
	assert_int_equal(e->dev_major, 8);
	assert_int_equal(e->dev_minor, 1);
	assert_int_equal(e->inode, 1311);
	assert_string_equal(e->path, "/usr/bin/npu train"); /* spaces kept */
	assert_false(e->deleted);
	assert_string_equal(m.entries[2].path, "[heap]");
	assert_int_equal(m.entries[2].inode, 0);
	assert_int_equal(m.entries[3].dev_major, 0xfd);
	assert_int_equal(m.entries[6].prot, ASC_MAP_R | ASC_MAP_W | ASC_MAP_SHARED);
	assert_string_equal(m.entries[7].path, "/tmp/libopapi.so.8.1");
	assert_true(m.entries[7].deleted);
	assert_null(m.entries[8].path); /* anonymous, trailing blank */
	asc_maps_free(&m);
	assert_int_equal(m.nr, 0);
}

static void test_addr_offset(void **state)
{
	struct asc_maps m;
	const struct asc_map_entry *e = NULL;
	uint64_t off, addr;

	assert_int_equal(asc_maps_parse(sample, &m), 0);
	assert_int_equal(asc_maps_addr_to_off(&m, 0x7f0000012345ULL, &off, &e), 0);
	assert_true(off == 0x12345);
	assert_ptr_equal(e, &m.entries[4]);
	assert_int_equal(asc_maps_addr_to_off(&m, 0x7f0000050010ULL, &off, NULL), 0);
	assert_true(off == 0x50010);
	/* anonymous and unmapped addresses have no file offset */
	assert_int_equal(asc_maps_addr_to_off(&m, 0x55d0a1000010ULL, &off, NULL), -ENOENT);
	assert_int_equal(asc_maps_addr_to_off(&m, 0x1000, &off, NULL), -ENOENT);
	assert_int_equal(asc_maps_addr_to_off(&m, 0x7f0000058000ULL, &off, NULL), -ENOENT);
	/* end is exclusive, start inclusive */
	assert_ptr_equal(asc_maps_find(&m, 0x7f0000010000ULL), &m.entries[4]);
	assert_ptr_equal(asc_maps_find(&m, 0x7f000000ffffULL), &m.entries[3]);

	assert_int_equal(asc_maps_off_to_addr(&m, "/opt/cann/lib64/libascendcl.so", 0x10040, &addr),
			 0);
	assert_true(addr == 0x7f0000010040ULL);
	assert_int_equal(asc_maps_off_to_addr(&m, "/opt/cann/lib64/libascendcl.so", 0x60000, &addr),
			 -ENOENT);
	assert_int_equal(asc_maps_off_to_addr(&m, "/nope.so", 0, &addr), -ENOENT);
	asc_maps_free(&m);
}

static void test_malformed(void **state)
{
	struct asc_maps m;

	assert_int_equal(asc_maps_parse("garbage line\n", &m), -EINVAL);
	assert_int_equal(m.nr, 0);
	assert_int_equal(asc_maps_parse("7f00-7e00 r-xp 00000000 08:01 1 /x\n", &m), -EINVAL);
	assert_int_equal(asc_maps_parse("7f00-7f10 r-xpq 00000000 08:01 1 /x\n", &m), -EINVAL);
	assert_int_equal(asc_maps_parse("7f00-7f10 r-xp 00000000 08:01\n", &m), -EINVAL);
	/* empty text and a last line without newline are fine */
	assert_int_equal(asc_maps_parse("", &m), 0);
	assert_int_equal(m.nr, 0);
	assert_int_equal(asc_maps_parse("1000-2000 r-xp 00000000 08:01 5 /lib/a.so", &m), 0);
	assert_int_equal(m.nr, 1);
	assert_string_equal(m.entries[0].path, "/lib/a.so");
	asc_maps_free(&m);
}

static void test_lib_name(void **state)
{
	assert_true(asc_lib_name_matches("/usr/lib/libascendcl.so", "libascendcl.so"));
	assert_true(asc_lib_name_matches("/usr/lib/libtorch_cpu.so.1.13.0", "libtorch_cpu.so"));
	assert_true(asc_lib_name_matches("libopapi.so", "libopapi.so"));
	assert_false(asc_lib_name_matches("/usr/lib/libascendcl.so_old", "libascendcl.so"));
	assert_false(asc_lib_name_matches("/usr/lib/libascendcl.sox", "libascendcl.so"));
	assert_false(asc_lib_name_matches("/usr/lib/mylibascendcl.so", "libascendcl.so"));
	assert_false(asc_lib_name_matches("/libascendcl.so/other.so", "libascendcl.so"));
}

static void test_live_self(void **state)
{
	struct asc_maps m;
	Dl_info info;
	const struct asc_map_entry *e = NULL;
	uint64_t off;
	char host[4096];

	/* dladdr knows where libc's dlopen lives; the maps must agree. */
	assert_true(dladdr((void *)&dlopen, &info) != 0);
	assert_int_equal(asc_maps_read(getpid(), &m), 0);
	assert_int_equal(m.pid, getpid());
	assert_int_equal(asc_maps_addr_to_off(&m, (uint64_t)(uintptr_t)&dlopen, &off, &e), 0);
	assert_non_null(e->path);
	assert_true(e->prot & ASC_MAP_X);
	assert_string_equal(realpath(info.dli_fname, host), e->path);
	/* same root: the host path is the path itself, and the inode matches */
	assert_int_equal(asc_maps_host_path(getpid(), e->path, e->inode, host, sizeof(host)), 0);
	assert_string_equal(host, e->path);
	assert_int_equal(asc_maps_host_path(getpid(), e->path, e->inode + 1, host, sizeof(host)),
			 -ESTALE);
	assert_int_equal(asc_maps_host_path(getpid(), e->path, 0, host, 4), -ENAMETOOLONG);
	asc_maps_free(&m);
}

static void test_missing_pid(void **state)
{
	struct asc_maps m;
	char host[64];

	assert_int_equal(asc_maps_read(0x3ffffff0, &m), -ESRCH);
	assert_int_equal(asc_maps_read(-1, &m), -ESRCH);
	assert_int_equal(asc_maps_host_path(0x3ffffff0, "/x", 0, host, sizeof(host)), -ESRCH);
}

/* The first offset-0 mapping of a file, by basename prefix; deleted and special ones never. */
static void test_next_image(void **state)
{
	static const char text[] =
		"1000-2000 r--p 00000000 08:01 1 /usr/lib/libc.so.6\n"
		"2000-3000 r-xp 00001000 08:01 1 /usr/lib/libc.so.6\n"
		"3000-4000 r--p 00000000 08:01 2 /opt/py/libpython3.11.so.1.0 (deleted)\n"
		"4000-5000 r--p 00000000 00:00 0 [vdso]\n"
		"5000-6000 r--p 00000000 08:01 3 /usr/bin/python3.11\n"
		"6000-7000 r--p 00000000 08:01 4 /opt/py/libpython3.11.so.1.0\n";
	static const char *const py[] = { "python3", "libpython3", NULL };
	static const char *const libc[] = { "libc.so", "libc-", NULL };
	static const char *const none[] = { "libtorch", NULL };
	struct asc_maps m;

	assert_int_equal(asc_maps_parse(text, &m), 0);
	assert_int_equal(asc_maps_next_image(&m, 0, libc), 0);
	/* the second libc line maps from offset 0x1000: not an image */
	assert_int_equal(asc_maps_next_image(&m, 1, libc), -1);
	assert_int_equal(asc_maps_next_image(&m, 0, py), 4); /* the deleted one is skipped */
	assert_int_equal(asc_maps_next_image(&m, 5, py), 5);
	assert_int_equal(asc_maps_next_image(&m, 6, py), -1);
	assert_int_equal(asc_maps_next_image(&m, 0, none), -1);
	asc_maps_free(&m);
}

static void test_environ_value(void **state)
{
	assert_string_equal(asc_environ_value("RANK=3", "RANK"), "3");
	assert_string_equal(asc_environ_value("RANK=", "RANK"), "");
	assert_string_equal(asc_environ_value("RANK==x", "RANK"), "=x");
	assert_null(asc_environ_value("RANKS=3", "RANK"));
	assert_null(asc_environ_value("RAN=3", "RANK"));
	assert_null(asc_environ_value("RANK", "RANK"));
}

/* This process's exec-time environment: PATH as getenv sees it (the runner sets it, we do not). */
static void test_environ_self(void **state)
{
	const char *want = getenv("PATH"), *got = NULL;
	char *buf, *p;
	size_t len;
	int entries = 0;

	assert_non_null(want);
	assert_int_equal(asc_proc_environ(getpid(), &buf, &len), 0);
	assert_true(len > 0 && len < ASC_ENVIRON_MAX && buf[len] == 0);
	for (p = buf; p < buf + len; p += strlen(p) + 1, entries++)
		if (!got)
			got = asc_environ_value(p, "PATH");
	assert_non_null(got);
	assert_string_equal(got, want);
	assert_true(entries > 1);
	free(buf);
	assert_int_equal(asc_proc_environ(0x7ffffff0, &buf, &len), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_fields), cmocka_unit_test(test_addr_offset),
		cmocka_unit_test(test_malformed),    cmocka_unit_test(test_lib_name),
		cmocka_unit_test(test_live_self),    cmocka_unit_test(test_missing_pid),
		cmocka_unit_test(test_next_image),   cmocka_unit_test(test_environ_value),
		cmocka_unit_test(test_environ_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
