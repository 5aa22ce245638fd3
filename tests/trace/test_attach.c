// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_attach - real uprobes (user/trace/attach.c): the counter program of
 * tests/lib/probes/attach_counter.bpf.c is attached to a plan over the test
 * object loaded in this process, once through single perf-event uprobes and
 * once through uprobe_multi links; every function is called a different,
 * known number of times and every site must report exactly that many entry
 * and return hits under its own cookie (the site id).  Also: the per-site
 * fallback when one offset of a uprobe_multi group is bad, detach on free,
 * the ASCBPF_NO_UPROBE_MULTI switch and the load-order contract, a library
 * deleted after it was loaded, and a process in a container (own mount
 * namespace and root, set up with pivot_root) probed from outside.
 * Needs root (CAP_BPF + CAP_PERFMON), as every test on our machines has.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cmocka.h>
#include "ascbpf_events.h"
#include "asctest.h"
#include "trace/attach.h"
#include "discovery/probes.h"

#define FIX(name) ASC_TEST_FIXTURES "/" name

static const struct asc_probe_spec table[] = {
	{ "libasctest.so", "asc_test_counted_*", ASC_LAYER_CANN, ASC_PK_CALL, ASC_FAM_CANN, 0 },
	{ "libasctest.so", "asc_test_endbr_push", ASC_LAYER_CANN, ASC_PK_CALL, ASC_FAM_CANN, 0 },
	{ "libasctest.so", "asc_test_push", ASC_LAYER_CANN, ASC_PK_CALL, ASC_FAM_CANN, 0 },
	{ "libasctest.so", "asc_test_endbr_lea", ASC_LAYER_CANN, ASC_PK_CALL, ASC_FAM_CANN, 0 },
	{ "libasctest.so", "asc_test_nopl", ASC_LAYER_CANN, ASC_PK_CALL, ASC_FAM_CANN,
	  ASC_SPEC_NO_RETPROBE },
	{ NULL, NULL, 0, 0, 0, 0 },
};

struct counter {
	struct bpf_object *obj;
	struct bpf_program *entry, *ret;
	int entry_fd, ret_fd;
};

static void *lib;

static int setup(void **state)
{
	lib = dlopen(FIX("libasctest.so"), RTLD_NOW | RTLD_LOCAL);
	return lib ? 0 : -1;
}

static void counter_open(struct counter *c, bool multi)
{
	c->obj = bpf_object__open_file(FIX("attach_counter.bpf.o"), NULL);
	assert_non_null(c->obj);
	c->entry = bpf_object__find_program_by_name(c->obj, "count_entry");
	c->ret = bpf_object__find_program_by_name(c->obj, "count_return");
	assert_non_null(c->entry);
	assert_non_null(c->ret);
	if (multi) {
		assert_int_equal(asc_attach_prepare_multi(c->entry), 0);
		assert_int_equal(asc_attach_prepare_multi(c->ret), 0);
	}
	assert_int_equal(bpf_object__load(c->obj), 0);
	assert_int_equal(asc_attach_prog_is_multi(c->entry), multi);
	assert_int_equal(asc_attach_prog_is_multi(c->ret), multi);
	/* the load-order contract: too late to change the attach type now */
	assert_int_equal(asc_attach_prepare_multi(c->entry), -EBUSY);
	c->entry_fd = bpf_object__find_map_fd_by_name(c->obj, "entry_hits");
	c->ret_fd = bpf_object__find_map_fd_by_name(c->obj, "return_hits");
	assert_true(c->entry_fd >= 0 && c->ret_fd >= 0);
}

static uint64_t hits(int map_fd, uint64_t cookie)
{
	uint64_t v = 0;

	if (bpf_map_lookup_elem(map_fd, &cookie, &v))
		return 0;
	return v;
}

static size_t map_entries(int map_fd)
{
	uint64_t key, next;
	size_t n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(map_fd, prev, &next)) {
		key = next;
		prev = &key;
		n++;
	}
	return n;
}

static int select_both(const struct asc_probe_site *site, void *ctx, struct bpf_program **entry,
		       struct bpf_program **ret)
{
	struct counter *c = ctx;

	*entry = c->entry;
	*ret = c->ret;
	return 0;
}

/* How often the test calls the function of a site: distinct per site. */
static unsigned int calls_for(const struct asc_probe_site *s)
{
	return 1 + (s->id * 7) % 23;
}

static void call_site_function(const struct asc_probe_site *s, unsigned int times)
{
	void *fn = dlsym(lib, s->sym);
	unsigned int i;

	assert_non_null(fn);
	for (i = 0; i < times; i++) {
		if (!strncmp(s->sym, "asc_test_counted_", 17))
			((long (*)(long))fn)(i);
		else
			((void (*)(void))fn)();
	}
}

/* A second thread of the process: probes attached with a pid filter must see it too. */
static void *thread_calls(void *arg)
{
	call_site_function(arg, 5);
	return NULL;
}

static void run_mode(bool multi)
{
	struct asc_probe_plan plan;
	struct asc_attach_set *set;
	struct asc_attach_stats st;
	struct counter c;
	size_t i, nr_ret = 0;
	int *errs;

	assert_int_equal(asc_probe_plan_build_table(getpid(), table, ASC_FAM_ALL, 1000, &plan), 0);
	assert_int_equal(plan.nr_sites, ASC_TEST_NR_COUNTED + 4);
	assert_int_equal(plan.nr_missing, 0);
	counter_open(&c, multi);
	set = asc_attach_set_new();
	assert_non_null(set);
	errs = calloc(plan.nr_sites, sizeof(*errs));
	assert_int_equal(asc_attach_plan(set, &plan, 0, select_both, &c, getpid(), errs),
			 plan.nr_sites);
	for (i = 0; i < plan.nr_sites; i++) {
		bool noret = plan.sites[i].spec->flags & ASC_SPEC_NO_RETPROBE;

		assert_int_equal(errs[i], 0);
		assert_int_equal(!!(plan.sites[i].flags & ASC_PROBE_RETPROBE), !noret);
		nr_ret += !noret;
	}
	asc_attach_set_stats(set, &st);
	assert_int_equal(st.sites, plan.nr_sites + nr_ret);
	assert_int_equal(st.failed, 0);
	if (multi) {
		assert_int_equal(st.multi_links, 2); /* one library, two programs */
		assert_int_equal(st.single_links, 0);
	} else {
		assert_int_equal(st.multi_links, 0);
		assert_int_equal(st.single_links, plan.nr_sites + nr_ret);
	}

	for (i = 0; i < plan.nr_sites; i++)
		call_site_function(&plan.sites[i], calls_for(&plan.sites[i]));
	{
		pthread_t th;
		pid_t other;
		int status;

		assert_int_equal(pthread_create(&th, NULL, thread_calls, &plan.sites[0]), 0);
		assert_int_equal(pthread_join(th, NULL), 0);
		/* another process (a fork, same code) is outside the pid filter: not counted */
		other = fork();
		assert_true(other >= 0);
		if (other == 0) {
			call_site_function(&plan.sites[1], 7);
			_exit(0);
		}
		assert_int_equal(waitpid(other, &status, 0), other);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	for (i = 0; i < plan.nr_sites; i++) {
		const struct asc_probe_site *s = &plan.sites[i];
		bool noret = s->spec->flags & ASC_SPEC_NO_RETPROBE;
		unsigned int extra = i == 0 ? 5 : 0; /* the second thread's calls */

		if (hits(c.entry_fd, s->id) != calls_for(s) + extra)
			fail_msg("%s site %u (%s, %s): %llu entry hits, expected %u",
				 multi ? "multi" : "single", s->id, s->sym,
				 s->flags & ASC_PROBE_SKIPPED_ENDBR ? "after endbr64" : "at entry",
				 (unsigned long long)hits(c.entry_fd, s->id), calls_for(s) + extra);
		assert_int_equal(hits(c.ret_fd, s->id), noret ? 0 : calls_for(s) + extra);
	}
	/* no cookie that is not a site id */
	assert_int_equal(map_entries(c.entry_fd), plan.nr_sites);
	assert_int_equal(map_entries(c.ret_fd), nr_ret);

	/* freeing the set detaches: more calls change nothing */
	asc_attach_set_free(set);
	for (i = 0; i < plan.nr_sites; i++)
		call_site_function(&plan.sites[i], 2);
	for (i = 0; i < plan.nr_sites; i++)
		assert_int_equal(hits(c.entry_fd, plan.sites[i].id),
				 calls_for(&plan.sites[i]) + (i == 0 ? 5 : 0));
	free(errs);
	bpf_object__close(c.obj);
	asc_probe_plan_free(&plan);
}

static void test_single_uprobes(void **state)
{
	run_mode(false);
}

static void test_uprobe_multi(void **state)
{
	/* the kernel of our machines (6.18) has the link: it must be used */
	assert_int_equal(asc_uprobe_multi_supported(), 1);
	run_mode(true);
}

static void test_multi_group_fallback(void **state)
{
	struct asc_probe_plan plan;
	struct asc_attach_site sites[4];
	struct asc_attach_set *set;
	struct asc_attach_stats st;
	struct counter c;
	int errs[4];

	assert_int_equal(asc_probe_plan_build_table(getpid(), table, ASC_FAM_ALL, 1, &plan), 0);
	counter_open(&c, true);
	set = asc_attach_set_new();
	/* three good sites and one offset far beyond the end of the file */
	sites[0] = (struct asc_attach_site){ plan.sites[0].path, plan.sites[0].attach_offset, 501 };
	sites[1] = (struct asc_attach_site){ plan.sites[1].path, 1ULL << 40, 502 };
	sites[2] = (struct asc_attach_site){ plan.sites[2].path, plan.sites[2].attach_offset, 503 };
	sites[3] = (struct asc_attach_site){ "/nonexistent/libx.so", 0x1000, 504 };
	assert_int_equal(asc_attach_uprobes(set, c.entry, false, getpid(), sites, 4, errs), 2);
	assert_int_equal(errs[0], 0);
	assert_true(errs[1] < 0);
	assert_int_equal(errs[2], 0);
	assert_int_equal(errs[3], -ENOENT);
	asc_attach_set_stats(set, &st);
	assert_int_equal(st.sites, 2);
	assert_int_equal(st.failed, 2);
	call_site_function(&plan.sites[0], 3);
	call_site_function(&plan.sites[2], 5);
	assert_int_equal(hits(c.entry_fd, 501), 3);
	assert_int_equal(hits(c.entry_fd, 503), 5);
	assert_int_equal(hits(c.entry_fd, 502), 0);
	/* bad arguments */
	assert_int_equal(asc_attach_uprobes(set, NULL, false, 0, sites, 1, NULL), -EINVAL);
	assert_int_equal(asc_attach_uprobes(set, c.entry, false, 0, NULL, 1, NULL), -EINVAL);
	assert_int_equal(asc_attach_uprobes(set, c.entry, false, 0, sites, 0, NULL), 0);
	asc_attach_set_free(set);
	asc_attach_set_free(NULL);
	bpf_object__close(c.obj);
	asc_probe_plan_free(&plan);
}

static void test_multi_switch(void **state)
{
	struct bpf_object *obj;
	struct bpf_program *p;

	setenv("ASCBPF_NO_UPROBE_MULTI", "1", 1);
	assert_int_equal(asc_uprobe_multi_supported(), 0);
	obj = bpf_object__open_file(FIX("attach_counter.bpf.o"), NULL);
	assert_non_null(obj);
	p = bpf_object__find_program_by_name(obj, "count_entry");
	assert_int_equal(asc_attach_prepare_multi(p), -EOPNOTSUPP);
	assert_false(asc_attach_prog_is_multi(p));
	bpf_object__close(obj);
	unsetenv("ASCBPF_NO_UPROBE_MULTI");
	assert_int_equal(asc_uprobe_multi_supported(), 1);
	assert_int_equal(asc_attach_prepare_multi(NULL), -EINVAL);
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n;

	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			return -1;
	close(in);
	return close(out) || n < 0 ? -1 : 0;
}

static const struct asc_probe_spec del_table[] = {
	{ "libasctest-del.so", "asc_test_counted_*", ASC_LAYER_CANN, ASC_PK_CALL, ASC_FAM_CANN, 0 },
	{ NULL, NULL, 0, 0, 0, 0 },
};

/* A library unlinked after dlopen: maps say "(deleted)", attach goes through map_files. */
static void test_deleted_library(void **state)
{
	char dir[] = "/tmp/asc-del-XXXXXX", path[128];
	struct asc_probe_plan plan;
	struct asc_attach_set *set;
	struct counter c;
	void *h;
	size_t i;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/libasctest-del.so", dir);
	assert_int_equal(copy_file(FIX("libasctest.so"), path), 0);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);

	assert_int_equal(asc_probe_plan_build_table(getpid(), del_table, ASC_FAM_ALL, 1, &plan), 0);
	assert_int_equal(plan.nr_sites, ASC_TEST_NR_COUNTED);
	assert_non_null(strstr(plan.sites[0].path, "/map_files/"));
	counter_open(&c, true);
	set = asc_attach_set_new();
	assert_int_equal(asc_attach_plan(set, &plan, 0, select_both, &c, getpid(), NULL),
			 plan.nr_sites);
	for (i = 0; i < plan.nr_sites; i++) {
		long (*fn)(long) = (long (*)(long))dlsym(h, plan.sites[i].sym);

		assert_non_null(fn);
		for (unsigned int k = 0; k < calls_for(&plan.sites[i]); k++)
			fn(k);
	}
	for (i = 0; i < plan.nr_sites; i++) {
		assert_int_equal(hits(c.entry_fd, plan.sites[i].id), calls_for(&plan.sites[i]));
		assert_int_equal(hits(c.ret_fd, plan.sites[i].id), calls_for(&plan.sites[i]));
	}
	asc_attach_set_free(set);
	bpf_object__close(c.obj);
	asc_probe_plan_free(&plan);
	dlclose(h);
}

static const struct asc_probe_spec ct_table[] = {
	{ "libasctest-ct.so", "asc_test_counted_*", ASC_LAYER_CANN, ASC_PK_CALL, ASC_FAM_CANN, 0 },
	{ NULL, NULL, 0, 0, 0, 0 },
};

/*
 * The container: own mount namespace, a tmpfs root holding only
 * /lib/libasctest-ct.so (a copy of libasctest.so under a name no other test
 * maps), pivot_root into it.  It dlopen()s the library,
 * says so on `ready`, waits for a byte on `go`, calls counted function i
 * (i + 1) * 3 times, reports on `ready` again and waits to be killed.
 */
static void container_child(const char *root, int ready, int go)
{
	char lib_path[256], old[256];
	void *h;
	char b;
	int i;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", root, "tmpfs", 0, "mode=0755"))
		_exit(10);
	snprintf(lib_path, sizeof(lib_path), "%s/lib", root);
	snprintf(old, sizeof(old), "%s/old", root);
	if (mkdir(lib_path, 0755) || mkdir(old, 0755))
		_exit(11);
	snprintf(lib_path, sizeof(lib_path), "%s/lib/libasctest-ct.so", root);
	if (copy_file(FIX("libasctest.so"), lib_path))
		_exit(12);
	if (syscall(SYS_pivot_root, root, old) || chdir("/") || umount2("/old", MNT_DETACH))
		_exit(13);
	h = dlopen("/lib/libasctest-ct.so", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		_exit(14);
	if (write(ready, "r", 1) != 1 || read(go, &b, 1) != 1)
		_exit(15);
	for (i = 0; i < ASC_TEST_NR_COUNTED; i++) {
		char name[64];
		long (*fn)(long);
		int k;

		snprintf(name, sizeof(name), "asc_test_counted_%d", ASC_TEST_COUNTED_ID(i));
		fn = (long (*)(long))dlsym(h, name);
		if (!fn)
			_exit(16);
		for (k = 0; k < (i + 1) * 3; k++)
			fn(k);
	}
	if (write(ready, "d", 1) != 1)
		_exit(17);
	pause();
	_exit(0);
}

static void test_container_process(void **state)
{
	char root[] = "/tmp/asc-ct-XXXXXX", prefix[64], b;
	int ready[2], go[2], status, i;
	struct asc_probe_plan plan;
	struct asc_attach_set *set;
	struct counter c;
	pid_t child;

	assert_non_null(mkdtemp(root));
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		container_child(root, ready[1], go[0]);
	if (read(ready[0], &b, 1) != 1) {
		waitpid(child, &status, 0);
		fail_msg("container child failed to start (exit %d)", WEXITSTATUS(status));
	}

	/* the container sees /lib/libasctest-ct.so; we open it through its root */
	assert_int_equal(asc_probe_plan_build_table(child, ct_table, ASC_FAM_ALL, 1, &plan), 0);
	assert_int_equal(plan.nr_sites, ASC_TEST_NR_COUNTED);
	snprintf(prefix, sizeof(prefix), "/proc/%d/root/lib/libasctest-ct.so", (int)child);
	assert_string_equal(plan.sites[0].path, prefix);
	assert_string_equal(plan.libs_seen[0], prefix);

	counter_open(&c, true);
	set = asc_attach_set_new();
	assert_int_equal(asc_attach_plan(set, &plan, 0, select_both, &c, child, NULL),
			 plan.nr_sites);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(ready[0], &b, 1), 1);
	for (i = 0; i < ASC_TEST_NR_COUNTED; i++) {
		char name[64];
		size_t j;

		snprintf(name, sizeof(name), "asc_test_counted_%d", ASC_TEST_COUNTED_ID(i));
		for (j = 0; j < plan.nr_sites; j++)
			if (!strcmp(plan.sites[j].sym, name))
				break;
		assert_true(j < plan.nr_sites);
		assert_int_equal(hits(c.entry_fd, plan.sites[j].id), (i + 1) * 3);
		assert_int_equal(hits(c.ret_fd, plan.sites[j].id), (i + 1) * 3);
	}
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	asc_attach_set_free(set);
	bpf_object__close(c.obj);
	asc_probe_plan_free(&plan);
	rmdir(root);
}

static const struct asc_probe_spec late_table[] = {
	{ "libasctest.so", "asc_test_counted_*", ASC_LAYER_CANN, ASC_PK_CALL, ASC_FAM_CANN, 0 },
	{ "libasctest-late.so", "asc_test_counted_*", ASC_LAYER_DRIVER, ASC_PK_CALL, ASC_FAM_DRIVER,
	  0 },
	{ NULL, NULL, 0, 0, 0, 0 },
};

/* The dlopen flow: plan, attach, dlopen, update, attach only the new sites. */
static void test_attach_after_update(void **state)
{
	struct asc_probe_plan plan;
	struct asc_attach_set *set;
	struct counter c;
	size_t first, i;
	void *late;

	assert_int_equal(asc_probe_plan_build_table(getpid(), late_table, ASC_FAM_ALL, 1, &plan),
			 0);
	assert_int_equal(plan.nr_sites, ASC_TEST_NR_COUNTED);
	counter_open(&c, true);
	set = asc_attach_set_new();
	assert_int_equal(asc_attach_plan(set, &plan, 0, select_both, &c, getpid(), NULL),
			 ASC_TEST_NR_COUNTED);
	late = dlopen(FIX("libasctest-late.so"), RTLD_NOW | RTLD_LOCAL);
	assert_non_null(late);
	assert_int_equal(asc_probe_plan_update(&plan, &first), ASC_TEST_NR_COUNTED);
	assert_int_equal(first, ASC_TEST_NR_COUNTED);
	assert_int_equal(asc_attach_plan(set, &plan, first, select_both, &c, getpid(), NULL),
			 ASC_TEST_NR_COUNTED);
	for (i = 0; i < plan.nr_sites; i++) {
		void *h = i < first ? lib : late;
		long (*fn)(long) = (long (*)(long))dlsym(h, plan.sites[i].sym);

		assert_non_null(fn);
		for (unsigned int k = 0; k < calls_for(&plan.sites[i]); k++)
			fn(k);
	}
	/* each site once: the old ones were not attached a second time */
	for (i = 0; i < plan.nr_sites; i++) {
		assert_int_equal(hits(c.entry_fd, plan.sites[i].id), calls_for(&plan.sites[i]));
		assert_int_equal(hits(c.ret_fd, plan.sites[i].id), calls_for(&plan.sites[i]));
	}
	assert_int_equal(asc_attach_plan(set, &plan, plan.nr_sites, select_both, &c, 0, NULL), 0);
	assert_int_equal(asc_attach_plan(set, &plan, plan.nr_sites + 1, select_both, &c, 0, NULL),
			 -EINVAL);
	asc_attach_set_free(set);
	bpf_object__close(c.obj);
	asc_probe_plan_free(&plan);
	dlclose(late);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_uprobes),
		cmocka_unit_test(test_uprobe_multi),
		cmocka_unit_test(test_multi_group_fallback),
		cmocka_unit_test(test_multi_switch),
		cmocka_unit_test(test_deleted_library),
		cmocka_unit_test(test_attach_after_update),
		cmocka_unit_test(test_container_process),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
