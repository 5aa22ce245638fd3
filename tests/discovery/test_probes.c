// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_probes - probe plans (user/discovery/probes.c) resolved against this very
 * process with the test object dlopen()ed: site offsets checked against the
 * kernel's mappings of dlsym() addresses, prologue choices against the
 * fixture's known first instructions, globs, duplicates, missing symbols and
 * libraries, family filters, ids, the update after a later dlopen, and the
 * built-in table's shape.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "ascbpf_events.h"
#include "asctest.h"
#include "discovery/probes.h"
#include "lib/procmaps.h"

#define FIX(name) ASC_TEST_FIXTURES "/" name

static const struct asc_probe_spec table[] = {
	{ "libasctest.so", "asc_test_endbr_push", ASC_LAYER_FRAMEWORK, ASC_PK_CALL,
	  ASC_FAM_FRAMEWORK, 0 },
	{ "libasctest.so", "asc_test_push", ASC_LAYER_FRAMEWORK, ASC_PK_CALL, ASC_FAM_FRAMEWORK,
	  0 },
	{ "libasctest.so", "asc_test_lea", ASC_LAYER_FRAMEWORK, ASC_PK_CALL, ASC_FAM_FRAMEWORK,
	  ASC_SPEC_NO_RETPROBE },
	{ "libasctest.so", "asc_test_counted_*", ASC_LAYER_CANN, ASC_PK_CALL, ASC_FAM_CANN, 0 },
	/* already matched by the glob above: no second site */
	{ "libasctest.so", "asc_test_counted_10", ASC_LAYER_CANN, ASC_PK_CALL, ASC_FAM_CANN, 0 },
	{ "libasctest.so", "asc_test_not_there", ASC_LAYER_CANN, ASC_PK_CALL, ASC_FAM_CANN, 0 },
	{ "libasctest.so", "nomatch_*", ASC_LAYER_CANN, ASC_PK_CALL, ASC_FAM_CANN, 0 },
	/* a glob matches exported functions only: the static asc_test_local is not one */
	{ "libasctest.so", "asc_test_loc?l", ASC_LAYER_CANN, ASC_PK_CALL, ASC_FAM_CANN, 0 },
	/* an exact name finds it in .symtab */
	{ "libasctest.so", "asc_test_local", ASC_LAYER_CANN, ASC_PK_CALL, ASC_FAM_CANN, 0 },
	{ "libnot_mapped_here.so", "foo", ASC_LAYER_DRIVER, ASC_PK_CALL, ASC_FAM_DRIVER,
	  ASC_SPEC_OPTIONAL },
	{ "libasctest-late.so", "asc_test_counted_*", ASC_LAYER_DRIVER, ASC_PK_CALL, ASC_FAM_DRIVER,
	  0 },
	{ NULL, NULL, 0, 0, 0, 0 },
};

static void *lib;

static int setup(void **state)
{
	lib = dlopen(FIX("libasctest.so"), RTLD_NOW | RTLD_LOCAL);
	return lib ? 0 : -1;
}

static uint64_t file_offset_of(const void *addr)
{
	struct asc_maps m;
	uint64_t off = 0;

	assert_int_equal(asc_maps_read(getpid(), &m), 0);
	assert_int_equal(asc_maps_addr_to_off(&m, (uint64_t)(uintptr_t)addr, &off, NULL), 0);
	asc_maps_free(&m);
	return off;
}

static const struct asc_probe_site *find_site(const struct asc_probe_plan *p, const char *sym,
					      const char *lib_base)
{
	size_t i;

	for (i = 0; i < p->nr_sites; i++)
		if (!strcmp(p->sites[i].sym, sym) && strstr(p->sites[i].path, lib_base))
			return &p->sites[i];
	return NULL;
}

static const struct asc_probe_missing *find_missing(const struct asc_probe_plan *p, const char *sym)
{
	size_t i;

	for (i = 0; i < p->nr_missing; i++)
		if (!strcmp(p->missing[i].spec->sym, sym))
			return &p->missing[i];
	return NULL;
}

static void test_plan_sites(void **state)
{
	struct asc_probe_plan p;
	const struct asc_probe_site *s;
	char real[4096];
	size_t i;

	assert_int_equal(asc_probe_plan_build_table(getpid(), table, ASC_FAM_ALL, 100, &p), 0);
	assert_int_equal(p.pid, getpid());
	/* 3 named + 32 from the glob (the duplicate adds none) + the local by exact name */
	assert_int_equal(p.nr_sites, 3 + ASC_TEST_NR_COUNTED + 1);
	assert_int_equal(p.nr_libs, 1);
	assert_non_null(realpath(FIX("libasctest.so"), real));
	assert_string_equal(p.libs_seen[0], real);
	for (i = 0; i < p.nr_sites; i++) {
		assert_int_equal(p.sites[i].id, 100 + i);
		assert_string_equal(p.sites[i].path, real);
		assert_true(p.sites[i].attach_offset >= p.sites[i].func_offset);
	}
	assert_int_equal(p.next_id, 100 + p.nr_sites);

	/* endbr64; push %rbp -> after the endbr64, emulated */
	s = find_site(&p, "asc_test_endbr_push", "libasctest.so");
	assert_non_null(s);
	assert_true(s->func_offset == file_offset_of(dlsym(lib, "asc_test_endbr_push")));
	assert_true(s->attach_offset == s->func_offset + 4);
	assert_int_equal(s->flags, ASC_PROBE_SKIPPED_ENDBR);
	assert_int_equal(s->spec->layer, ASC_LAYER_FRAMEWORK);
	/* push %rbx -> at the entry, emulated */
	s = find_site(&p, "asc_test_push", "libasctest.so");
	assert_non_null(s);
	assert_true(s->func_offset == file_offset_of(dlsym(lib, "asc_test_push")));
	assert_true(s->attach_offset == s->func_offset);
	assert_int_equal(s->flags, 0);
	/* lea -> single-stepped */
	s = find_site(&p, "asc_test_lea", "libasctest.so");
	assert_non_null(s);
	assert_int_equal(s->flags, ASC_PROBE_SINGLESTEP);
	assert_true(s->attach_offset == s->func_offset);
	/* the static function, found by its exact name only, at its real offset */
	s = find_site(&p, "asc_test_local", "libasctest.so");
	assert_non_null(s);
	assert_string_equal(s->spec->sym, "asc_test_local");
	assert_true(s->func_offset ==
		    file_offset_of(((void *(*)(void))dlsym(lib, "asc_test_local_addr"))()));
	/* the glob: every counted function, each at its real offset, first table entry wins */
	for (i = 0; i < ASC_TEST_NR_COUNTED; i++) {
		char name[64];

		snprintf(name, sizeof(name), "asc_test_counted_%d", ASC_TEST_COUNTED_ID((int)i));
		s = find_site(&p, name, "libasctest.so");
		assert_non_null(s);
		assert_true(s->func_offset == file_offset_of(dlsym(lib, name)));
		assert_string_equal(s->spec->sym, "asc_test_counted_*");
		assert_int_equal(s->spec->layer, ASC_LAYER_CANN);
	}
	asc_probe_plan_free(&p);
	assert_int_equal(p.nr_sites, 0);
}

static void test_plan_missing(void **state)
{
	struct asc_probe_plan p;
	const struct asc_probe_missing *m;

	assert_int_equal(asc_probe_plan_build_table(getpid(), table, ASC_FAM_ALL, 1, &p), 0);
	assert_int_equal(p.nr_missing, 5);
	m = find_missing(&p, "asc_test_not_there");
	assert_non_null(m);
	assert_non_null(strstr(m->reason, "symbol not found"));
	m = find_missing(&p, "nomatch_*");
	assert_non_null(m);
	assert_non_null(strstr(m->reason, "no exported symbol matches"));
	m = find_missing(&p, "asc_test_loc?l");
	assert_non_null(m);
	assert_non_null(strstr(m->reason, "no exported symbol matches"));
	m = find_missing(&p, "foo");
	assert_non_null(m);
	assert_string_equal(m->reason, "library not mapped");
	assert_true(m->spec->flags & ASC_SPEC_OPTIONAL);
	asc_probe_plan_free(&p);
}

static void test_plan_families(void **state)
{
	struct asc_probe_plan p;

	assert_int_equal(asc_probe_plan_build_table(getpid(), table, ASC_FAM_FRAMEWORK, 1, &p), 0);
	assert_int_equal(p.nr_sites, 3);
	assert_int_equal(p.nr_missing, 0);
	asc_probe_plan_free(&p);
	/* only families whose libraries are not mapped: -ENOENT, with what was looked for */
	assert_int_equal(asc_probe_plan_build_table(getpid(), table, ASC_FAM_DRIVER, 1, &p),
			 -ENOENT);
	assert_int_equal(p.nr_sites, 0);
	assert_int_equal(p.nr_missing, 2);
	asc_probe_plan_free(&p);
}

static void test_plan_errors(void **state)
{
	struct asc_probe_plan p;
	void *cxx;
	size_t i;

	assert_int_equal(asc_probe_plan_build_table(0x3ffffff0, table, ASC_FAM_ALL, 1, &p), -ESRCH);
	assert_int_equal(asc_probe_plan_build(0x3ffffff0, ASC_FAM_ALL, 1, &p), -ESRCH);
	/* this test process maps none of the Ascend / PyTorch libraries (the sanitizer
	 * build maps the C++ runtime: the guard's sites, as below) */
	assert_int_equal(asc_probe_plan_build(getpid(), ASC_FAM_ALL, 1, &p), -ENOENT);
	for (i = 0; i < p.nr_sites; i++)
		assert_int_equal(p.sites[i].spec->layer, ASC_LAYER_UNWIND);
	assert_true(p.nr_missing > 10);
	asc_probe_plan_free(&p);
	/*
	 * nor does the C++ runtime make it one: still -ENOENT, the plan holding
	 * only the unwind guard's sites (a --step LIB:SYMBOL site may need them)
	 */
	cxx = dlopen("libstdc++.so.6", RTLD_NOW);
	assert_non_null(cxx);
	assert_int_equal(asc_probe_plan_build(getpid(), ASC_FAM_ALL, 1, &p), -ENOENT);
	assert_true(p.nr_sites >= 1);
	for (i = 0; i < p.nr_sites; i++)
		assert_int_equal(p.sites[i].spec->layer, ASC_LAYER_UNWIND);
	asc_probe_plan_free(&p);
	dlclose(cxx);
}

static void test_plan_update_after_dlopen(void **state)
{
	struct asc_probe_plan p;
	size_t first = 0, old_nr, i;
	uint32_t old_next;
	void *late;

	assert_int_equal(asc_probe_plan_build_table(getpid(), table, ASC_FAM_ALL, 1, &p), 0);
	old_nr = p.nr_sites;
	old_next = p.next_id;
	/* the late library is not loaded yet: its entry is missing */
	for (i = 0; i < p.nr_missing; i++)
		if (!strcmp(p.missing[i].spec->lib, "libasctest-late.so"))
			break;
	assert_true(i < p.nr_missing);
	assert_string_equal(p.missing[i].reason, "library not mapped");
	/* nothing changed: nothing added */
	assert_int_equal(asc_probe_plan_update(&p, &first), 0);
	assert_int_equal(first, old_nr);
	assert_int_equal(p.nr_sites, old_nr);

	late = dlopen(FIX("libasctest-late.so"), RTLD_NOW | RTLD_LOCAL);
	assert_non_null(late);
	assert_int_equal(asc_probe_plan_update(&p, &first), ASC_TEST_NR_COUNTED);
	assert_int_equal(first, old_nr);
	assert_int_equal(p.nr_sites, old_nr + ASC_TEST_NR_COUNTED);
	for (i = first; i < p.nr_sites; i++) {
		assert_int_equal(p.sites[i].id, old_next + (i - first));
		assert_non_null(strstr(p.sites[i].path, "libasctest-late.so"));
		assert_int_equal(p.sites[i].spec->layer, ASC_LAYER_DRIVER);
	}
	assert_true(find_site(&p, "asc_test_counted_33", "libasctest-late.so")->func_offset ==
		    file_offset_of(dlsym(late, "asc_test_counted_33")));
	/* the late library is no longer missing; the old sites kept their ids */
	for (i = 0; i < p.nr_missing; i++)
		assert_string_not_equal(p.missing[i].spec->lib, "libasctest-late.so");
	assert_int_equal(p.sites[0].id, 1);
	assert_int_equal(p.nr_libs, 2);
	assert_int_equal(asc_probe_plan_update(&p, &first), 0);
	asc_probe_plan_free(&p);
	dlclose(late);
}

static void test_builtin_table(void **state)
{
	const struct asc_probe_spec *s;
	unsigned int layers = 0, fams = 0;
	size_t n = 0;

	for (s = asc_probe_table; s->lib; s++, n++) {
		assert_non_null(s->sym);
		assert_true(strlen(s->lib) > 3 && !strncmp(s->lib, "lib", 3));
		assert_true((s->layer >= ASC_LAYER_FRAMEWORK && s->layer <= ASC_LAYER_MEMORY) ||
			    s->layer == ASC_LAYER_HCCL || s->layer == ASC_LAYER_UNWIND);
		assert_true(s->kind >= ASC_PK_CALL && s->kind <= ASC_PK_UNWIND_CATCH);
		/* HCCL's kinds are HCCL's layer, and only there */
		assert_int_equal(s->layer == ASC_LAYER_HCCL,
				 (s->kind >= ASC_PK_HCCL_OP && s->kind <= ASC_PK_HCCL_HASH) ||
					 !strncmp(s->sym, "Hccl", 4));
		/* the unwind guard: its kinds are its layer's, entry only, every family */
		assert_int_equal(s->layer == ASC_LAYER_UNWIND, s->kind >= ASC_PK_UNWIND_RAISE);
		if (s->layer == ASC_LAYER_UNWIND)
			assert_true((s->flags & ASC_SPEC_NO_RETPROBE) && s->family == ASC_FAM_ALL &&
				    !asc_probe_spec_level(s));
		/* launch marks are not any level's: only asc_probe_launch_marks[] has them */
		assert_int_not_equal(s->kind, ASC_PK_LAUNCH_MARK);
		/* a node launch has its stream argument (its entry program reads it) */
		if (s->kind == ASC_PK_NODE_LAUNCH)
			assert_true(asc_probe_launch_stream_arg(s->sym) >= 0);
		/* one level at most, and the level is what asc_probe_spec_level() reads */
		assert_false((s->flags & ASC_SPEC_LEVEL1) && (s->flags & ASC_SPEC_LEVEL2));
		assert_true(asc_probe_spec_level(s) <= ASC_LEVEL_MAX);
		assert_true(s->family && !(s->family & ~ASC_FAM_ALL));
		layers |= 1U << s->layer;
		fams |= s->family;
	}
	assert_true(n > 20);
	/* every layer and every family has probes */
	assert_int_equal(layers, (1U << ASC_LAYER_FRAMEWORK) | (1U << ASC_LAYER_CANN) |
					 (1U << ASC_LAYER_DRIVER) | (1U << ASC_LAYER_MEMORY) |
					 (1U << ASC_LAYER_HCCL) | (1U << ASC_LAYER_UNWIND));
	assert_int_equal(fams, ASC_FAM_ALL);
	/* the Level0 launch marks: entry only, level 0, each with its stream argument */
	for (s = asc_probe_launch_marks, n = 0; s->lib; s++, n++) {
		assert_int_equal(s->kind, ASC_PK_LAUNCH_MARK);
		assert_true(s->flags & ASC_SPEC_NO_RETPROBE);
		assert_int_equal(asc_probe_spec_level(s), 0);
		assert_true(asc_probe_launch_stream_arg(s->sym) >= 0 &&
			    asc_probe_launch_stream_arg(s->sym) < 6);
	}
	assert_true(n >= 2);
	assert_int_equal(asc_probe_launch_stream_arg("rtKernelLaunch"), 5);
	assert_int_equal(asc_probe_launch_stream_arg("aclrtMalloc"), -1);
	/* hicann/runtime's prototypes: where each launch path takes its stream */
	assert_int_equal(asc_probe_launch_stream_arg("rtsLaunchKernelWithHostArgs"), 2);
	assert_int_equal(asc_probe_launch_stream_arg("rtKernelLaunchWithFlagV2"), 4);
	assert_int_equal(asc_probe_launch_stream_arg("rtKernelLaunchWithHandleV2"), 5);
	assert_int_equal(asc_probe_launch_stream_arg("rtLaunchKernelByFuncHandleV3"), 3);
	assert_int_equal(asc_probe_launch_stream_arg("rtsLaunchKernelWithConfig"), 2);
	assert_int_equal(asc_probe_launch_stream_arg("rtsLaunchKernelWithDevArgs"), 2);
	assert_int_equal(asc_probe_launch_stream_arg("rtCpuKernelLaunchWithFlag"), 5);
	assert_int_equal(asc_probe_launch_stream_arg("rtAicpuKernelLaunchExWithArgs"), 5);
	assert_int_equal(asc_probe_launch_stream_arg("rtKernelLaunchEx"), 3);
	assert_int_equal(asc_probe_launch_stream_arg("rtMemcpyAsync"), 5);
	assert_int_equal(asc_probe_launch_stream_arg("rtMemcpyAsyncEx"), 5);
	assert_int_equal(asc_probe_launch_stream_arg("rtMemsetAsync"), 4);
	assert_int_equal(asc_probe_launch_stream_arg("rtEventRecord"), 1);
	assert_int_equal(asc_probe_launch_stream_arg("rtStreamWaitEvent"), 0);
	/* AI CPU launches name their kernel with a C string: arg1 */
	assert_int_equal(asc_probe_launch_name_arg("rtCpuKernelLaunchWithFlag"), 1);
	assert_int_equal(asc_probe_launch_name_arg("rtAicpuKernelLaunchExWithArgs"), 1);
	assert_int_equal(asc_probe_launch_name_arg("rtKernelLaunch"), -1);
}

/* A library glob of the table ("libopapi_*.so") matches by basename, also when dlopened later. */
static void test_lib_glob(void **state)
{
	static const struct asc_probe_spec gt[] = {
		{ "libasctest-l*.so", "asc_test_counted_3*", ASC_LAYER_CANN, ASC_PK_CALL,
		  ASC_FAM_CANN, 0 },
		/* the part before .so must match whole: libasctest.so is not libasctest-*.so */
		{ "libasctest-x*.so", "asc_test_*", ASC_LAYER_CANN, ASC_PK_CALL, ASC_FAM_CANN, 0 },
		{ NULL, NULL, 0, 0, 0, 0 },
	};
	struct asc_probe_plan p;
	size_t first = 0, i;
	void *late;

	(void)state;
	assert_int_equal(asc_probe_plan_build_table(getpid(), gt, ASC_FAM_ALL, 1, &p), -ENOENT);
	assert_int_equal(p.nr_sites, 0);
	late = dlopen(FIX("libasctest-late.so"), RTLD_NOW | RTLD_LOCAL);
	assert_non_null(late);
	assert_true(asc_probe_plan_update(&p, &first) > 0);
	for (i = 0; i < p.nr_sites; i++) {
		assert_non_null(strstr(p.sites[i].path, "libasctest-late.so"));
		assert_int_equal(strncmp(p.sites[i].sym, "asc_test_counted_3", 18), 0);
	}
	assert_non_null(find_site(&p, "asc_test_counted_33", "libasctest-late.so"));
	/* the second glob names no mapped library */
	for (i = 0; i < p.nr_missing; i++)
		if (p.missing[i].spec == &gt[1])
			break;
	assert_true(i < p.nr_missing);
	assert_string_equal(p.missing[i].reason, "library not mapped");
	asc_probe_plan_free(&p);
	dlclose(late);
}

/* The level rule: an entry is planned at levels >= its own, memory ones with the memory family. */
static void test_spec_levels(void **state)
{
	const struct asc_probe_spec l0 = { "libx.so",	   "f", ASC_LAYER_DRIVER, ASC_PK_SQE_SEND,
					   ASC_FAM_DRIVER, 0 };
	const struct asc_probe_spec l1 = { "libx.so",	"g",	      ASC_LAYER_CANN,
					   ASC_PK_CALL, ASC_FAM_CANN, ASC_SPEC_LEVEL1 };
	const struct asc_probe_spec l2m = {
		"libx.so",	"h", ASC_LAYER_CANN, ASC_PK_CALL, ASC_FAM_CANN | ASC_FAM_MEMORY,
		ASC_SPEC_LEVEL2
	};
	const struct asc_probe_spec *s;
	int seen_l1 = 0, seen_l2 = 0;

	(void)state;
	assert_int_equal(asc_probe_spec_level(&l0), 0);
	assert_int_equal(asc_probe_spec_level(&l1), 1);
	assert_int_equal(asc_probe_spec_level(&l2m), 2);
	assert_true(asc_probe_spec_wanted(&l0, ASC_FAM_DRIVER, 0));
	assert_false(asc_probe_spec_wanted(&l0, ASC_FAM_CANN, 2)); /* family off */
	assert_false(asc_probe_spec_wanted(&l1, ASC_FAM_CANN, 0));
	assert_true(asc_probe_spec_wanted(&l1, ASC_FAM_CANN, 1));
	assert_true(asc_probe_spec_wanted(&l1, ASC_FAM_CANN, 2));
	assert_false(asc_probe_spec_wanted(&l2m, ASC_FAM_CANN, 1));
	assert_true(asc_probe_spec_wanted(&l2m, ASC_FAM_CANN | ASC_FAM_MEMORY, 0));
	assert_true(asc_probe_spec_wanted(&l2m, ASC_FAM_CANN, 2));
	/* the built-in table: no plain API call at Level0 except memory ones; hal and rt at 2 */
	for (s = asc_probe_table; s->lib; s++) {
		if (s->kind == ASC_PK_CALL && !(s->family & ASC_FAM_MEMORY) &&
		    s->layer != ASC_LAYER_MEMORY)
			assert_true(asc_probe_spec_level(s) >= 1);
		if (!strcmp(s->sym, "hal*") || !strcmp(s->sym, "rt*")) {
			assert_int_equal(asc_probe_spec_level(s), 2);
			seen_l2++;
		}
		if (!strcmp(s->sym, "aclnn*")) {
			assert_int_equal(asc_probe_spec_level(s), 1);
			seen_l1++;
		}
		if (s->kind == ASC_PK_SQE_SEND || s->kind == ASC_PK_ENQUEUE ||
		    s->kind == ASC_PK_DEQUEUE || s->kind == ASC_PK_STEP)
			assert_int_equal(asc_probe_spec_level(s), 0);
		/* kernel names join through the launch calls, which are Level1 */
		if (s->kind == ASC_PK_FUNCNAME_GET || s->kind == ASC_PK_FUNCNAME_REG ||
		    s->kind == ASC_PK_FUNCNAME_ENTRY || s->kind == ASC_PK_BINARY_LOAD)
			assert_int_equal(asc_probe_spec_level(s), 1);
	}
	assert_int_equal(seen_l2, 2);
	/* libopapi.so and the split ones: libopapi_*.so, libaclnn_*.so, libcust_opapi.so */
	assert_int_equal(seen_l1, 4);
}

/* The agent's tier (ASC_SPEC_AGENT): what a plan at ASC_LEVEL_AGENT has, and its rows' shape. */
static void test_agent_tier(void **state)
{
	static const struct asc_probe_spec tier[] = {
		{ "libasctest.so", "asc_test_push", ASC_LAYER_CANN, ASC_PK_CALL, ASC_FAM_CANN,
		  ASC_SPEC_LEVEL2 | ASC_SPEC_AGENT },
		{ "libasctest.so", "asc_test_lea", ASC_LAYER_CANN, ASC_PK_CALL, ASC_FAM_CANN, 0 },
		{ "libasctest.so", "asc_test_endbr_push", ASC_LAYER_MEMORY, ASC_PK_CALL,
		  ASC_FAM_MEMORY, 0 },
		{ NULL, NULL, 0, 0, 0, 0 },
	};
	const char *acl[2][16];
	int nacl[2] = { 0, 0 }, steps = 0, hccl = 0;
	struct asc_probe_plan p;
	const struct asc_probe_spec *s;

	(void)state;
	assert_true(asc_probe_spec_wanted(&tier[0], ASC_FAM_ALL, ASC_LEVEL_AGENT));
	assert_false(asc_probe_spec_wanted(&tier[1], ASC_FAM_ALL, ASC_LEVEL_AGENT));
	/* the memory exception of the trace levels is not the agent's */
	assert_false(asc_probe_spec_wanted(&tier[2], ASC_FAM_ALL, ASC_LEVEL_AGENT));
	/* the trace ignores the flag: Level2 as ever */
	assert_false(asc_probe_spec_wanted(&tier[0], ASC_FAM_ALL, 1));
	assert_int_equal(asc_probe_plan_build_level(getpid(), tier, ASC_FAM_ALL, ASC_LEVEL_AGENT, 1,
						    &p),
			 0);
	assert_int_equal(p.nr_sites, 1);
	assert_string_equal(p.sites[0].sym, "asc_test_push");
	asc_probe_plan_free(&p);
	/*
	 * the built-in table's tier: exact names of the kinds the agent has programs for, but
	 * the step row: torch::optim::<each optimizer>::step (a handful of exports)
	 */
	for (s = asc_probe_table; s->lib; s++) {
		if (!(s->flags & ASC_SPEC_AGENT))
			continue;
		assert_true(s->kind == ASC_PK_STEP || !strchr(s->sym, '*'));
		assert_true(s->kind == ASC_PK_STEP || s->kind == ASC_PK_MEM_REPORT ||
			    s->kind == ASC_PK_SQE_SEND || s->kind == ASC_PK_CALL ||
			    s->kind == ASC_PK_ENQUEUE || s->kind == ASC_PK_DEQUEUE ||
			    s->kind == ASC_PK_HCCL_OP);
		steps += s->kind == ASC_PK_STEP;
		hccl += s->kind == ASC_PK_HCCL_OP;
		if (s->kind == ASC_PK_CALL) {
			int k = !strcmp(s->lib, "libacl_rt.so");

			assert_true(!strncmp(s->sym, "aclrtMalloc", 11) ||
				    !strcmp(s->sym, "aclrtFree") ||
				    !strncmp(s->sym, "aclrtSynchronize", 16));
			assert_true(k || !strcmp(s->lib, "libascendcl.so"));
			assert_true(nacl[k] < 16);
			acl[k][nacl[k]++] = s->sym;
		}
	}
	/* one step source (the `steps` change edits that row), the ops, and the same
	 * aclrt* functions in libascendcl.so and libacl_rt.so (CANN 8.x/9.x implement them in
	 * the second) */
	assert_int_equal(steps, 1);
	assert_int_equal(hccl, 10);
	assert_int_equal(nacl[0], nacl[1]);
	assert_int_equal(nacl[0], 8);
	for (int i = 0; i < nacl[0]; i++)
		assert_string_equal(acl[0][i], acl[1][i]);
}

static void test_families_parse(void **state)
{
	uint32_t f = 0;

	assert_int_equal(asc_probe_families_parse("framework,cann", &f), 0);
	assert_int_equal(f, ASC_FAM_FRAMEWORK | ASC_FAM_CANN);
	assert_int_equal(asc_probe_families_parse("all", &f), 0);
	assert_int_equal(f, ASC_FAM_ALL);
	assert_int_equal(asc_probe_families_parse("driver,memory,step", &f), 0);
	assert_int_equal(f, ASC_FAM_DRIVER | ASC_FAM_MEMORY | ASC_FAM_STEP);
	assert_int_equal(asc_probe_families_parse("cann,bogus", &f), -EINVAL);
	assert_int_equal(asc_probe_families_parse("", &f), -EINVAL);
	assert_string_equal(asc_probe_family_name(ASC_FAM_DRIVER), "driver");
	assert_string_equal(asc_probe_family_name(ASC_FAM_CANN | ASC_FAM_DRIVER), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_sites),
		cmocka_unit_test(test_plan_missing),
		cmocka_unit_test(test_plan_families),
		cmocka_unit_test(test_plan_errors),
		cmocka_unit_test(test_plan_update_after_dlopen),
		cmocka_unit_test(test_builtin_table),
		cmocka_unit_test(test_lib_glob),
		cmocka_unit_test(test_families_parse),
		cmocka_unit_test(test_spec_levels),
		cmocka_unit_test(test_agent_tier),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
