// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_elfsym - ELF symbols of the test object built in tests/lib/probes/:
 * .dynsym + .symtab merged, the stripped variant (.dynsym only), the variant
 * whose text segment's vaddr differs from its file offset, glob matching,
 * symbolisation, the cache, the split release variant with its debug file found by
 * build-id (the two symbol modes), symbols on demand (open_lazy / scan_sym / section /
 * read_exact, and a full open upgrading the lazily opened object).  Expected
 * offsets come from the kernel, not from the code under test: each variant is
 * dlopen()ed and the file offset of a function is its dlsym() address mapped
 * back through /proc/self/maps.
 */
#include <dlfcn.h>
#include <elf.h>
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
#include "asctest.h"
#include "discovery/elfsym.h"
#include "lib/procmaps.h"

#define FIX(name) ASC_TEST_FIXTURES "/" name

static const char *const exported[] = {
	"asc_test_endbr_push", "asc_test_push",	      "asc_test_lea",
	"asc_test_endbr_lea",  "asc_test_nop",	      "asc_test_nopl",
	"asc_test_local_addr", "asc_test_counted_10", "asc_test_counted_47",
};

/* File offset of a runtime address, from this process's maps. */
static uint64_t file_offset_of(const void *addr)
{
	struct asc_maps m;
	uint64_t off = 0;

	assert_int_equal(asc_maps_read(getpid(), &m), 0);
	assert_int_equal(asc_maps_addr_to_off(&m, (uint64_t)(uintptr_t)addr, &off, NULL), 0);
	asc_maps_free(&m);
	return off;
}

static void check_variant(const char *path, bool has_symtab)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	struct asc_elf *elf;
	const struct asc_elf_symbol *s;
	uint64_t off, vaddr;
	uint8_t file_bytes[8];
	size_t i;

	assert_non_null(h);
	assert_int_equal(asc_elf_open(path, &elf), 0);
	assert_int_equal(asc_elf_machine(elf), EM_X86_64);
	assert_int_equal(strlen(asc_elf_build_id(elf)), 40); /* gcc's default sha1 build-id */
	for (i = 0; i < sizeof(exported) / sizeof(exported[0]); i++) {
		void *addr = dlsym(h, exported[i]);

		assert_non_null(addr);
		s = asc_elf_find(elf, exported[i]);
		assert_non_null(s);
		assert_string_equal(s->name, exported[i]);
		assert_int_equal(s->type, STT_FUNC);
		assert_true(s->source & ASC_SYM_DYNSYM);
		assert_int_equal(!!(s->source & ASC_SYM_SYMTAB), has_symtab);
		assert_int_equal(asc_elf_vaddr_to_off(elf, s->vaddr, &off), 0);
		assert_true(off == file_offset_of(addr));
		assert_true(asc_elf_vaddr_is_code(elf, s->vaddr));
		assert_int_equal(asc_elf_off_to_vaddr(elf, off, &vaddr), 0);
		assert_true(vaddr == s->vaddr);
		/* the bytes read from the file are the bytes the process runs */
		assert_int_equal(asc_elf_read(elf, s->vaddr, file_bytes, sizeof(file_bytes)), 8);
		assert_memory_equal(file_bytes, addr, 4);
	}
	/* the static function: only .symtab names it */
	s = asc_elf_find(elf, "asc_test_local");
	if (has_symtab) {
		void *(*local_addr)(void) = (void *(*)(void))dlsym(h, "asc_test_local_addr");

		assert_non_null(s);
		assert_int_equal(s->source, ASC_SYM_SYMTAB);
		assert_int_equal(s->bind, STB_LOCAL);
		assert_int_equal(asc_elf_vaddr_to_off(elf, s->vaddr, &off), 0);
		assert_true(off == file_offset_of(local_addr()));
	} else {
		assert_null(s);
		assert_int_equal(errno, ENOENT);
	}
	assert_null(asc_elf_find(elf, "asc_test_no_such_function"));
	asc_elf_close(elf);
	dlclose(h);
}

static void test_plain(void **state)
{
	check_variant(FIX("libasctest.so"), true);
}

static void test_stripped(void **state)
{
	check_variant(FIX("libasctest-stripped.so"), false);
}

/*
 * A release build's two modes: without a debug directory only .dynsym (the static function is
 * not found); with FIX(debug) it is, from the debug file its build-id names, as a local
 * function at the address the loaded library runs it.  Bad directories are refused.
 */
static void test_split_debug(void **state)
{
	const char *path = FIX("libasctest-split.so");
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	void *(*local_addr)(void);
	const struct asc_elf_symbol *s;
	struct asc_elf *elf;
	char want[4096];
	uint64_t off;

	(void)state;
	assert_non_null(h);
	local_addr = (void *(*)(void))dlsym(h, "asc_test_local_addr");
	assert_non_null(local_addr);
	assert_int_equal(asc_elf_open_debug(path, &elf), 0);
	assert_false(asc_elf_has_symtab(elf));
	assert_null(asc_elf_debug_file(elf));
	assert_null(asc_elf_find(elf, "asc_test_local"));
	assert_non_null(asc_elf_find(elf, "asc_test_push"));
	asc_elf_close(elf);

	assert_int_equal(asc_elf_add_debug_dir(FIX("no-such-dir")), -ENOENT);
	assert_int_equal(asc_elf_add_debug_dir(path), -ENOTDIR);
	assert_int_equal(asc_elf_add_debug_dir(FIX("debug")), 0);
	assert_int_equal(asc_elf_open_debug(path, &elf), 0);
	snprintf(want, sizeof(want), "%s/.build-id/%.2s/%s.debug", FIX("debug"),
		 asc_elf_build_id(elf), asc_elf_build_id(elf) + 2);
	assert_non_null(asc_elf_debug_file(elf));
	assert_string_equal(asc_elf_debug_file(elf), want);
	s = asc_elf_find(elf, "asc_test_local");
	assert_non_null(s);
	assert_int_equal(s->source, ASC_SYM_DEBUG);
	assert_int_equal(s->bind, STB_LOCAL);
	assert_int_equal(asc_elf_vaddr_to_off(elf, s->vaddr, &off), 0);
	assert_true(off == file_offset_of(local_addr()));
	/* an exported function is in both tables, merged */
	s = asc_elf_find(elf, "asc_test_push");
	assert_non_null(s);
	assert_int_equal(s->source, ASC_SYM_DYNSYM | ASC_SYM_DEBUG);
	asc_elf_close(elf);
	/* a plain open does not look for it (libc, ld.so: not needed, and it costs) */
	assert_int_equal(asc_elf_open(path, &elf), 0);
	assert_null(asc_elf_debug_file(elf));
	assert_null(asc_elf_find(elf, "asc_test_local"));
	asc_elf_close(elf);
	asc_elf_clear_debug_dirs();

	/* gdb's other place: DIR/<library's directory>/<.gnu_debuglink name> */
	{
		char root[] = "/tmp/test_elfsym.XXXXXX", dir[4096], link[4300], cmd[12600];
		const char *id;

		assert_non_null(mkdtemp(root));
		assert_int_equal(asc_elf_open_debug(path, &elf), 0);
		id = asc_elf_build_id(elf);
		snprintf(dir, sizeof(dir), "%s%s", root, ASC_TEST_FIXTURES);
		snprintf(link, sizeof(link), "%s/%s.debug", dir, id + 2);
		snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp '%s' '%s'", dir, want, link);
		asc_elf_close(elf);
		assert_int_equal(system(cmd), 0);
		assert_int_equal(asc_elf_add_debug_dir(root), 0);
		assert_int_equal(asc_elf_open_debug(path, &elf), 0);
		assert_non_null(asc_elf_debug_file(elf));
		assert_string_equal(asc_elf_debug_file(elf), link);
		assert_non_null(asc_elf_find(elf, "asc_test_local"));
		asc_elf_close(elf);
		asc_elf_clear_debug_dirs();
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		assert_int_equal(system(cmd), 0);
	}
	dlclose(h);
}

static void test_offset_segment(void **state)
{
	struct asc_elf *elf;
	const struct asc_elf_symbol *s;
	uint64_t off;

	/* the fixture really has vaddr != offset (else this test proves nothing) */
	assert_int_equal(asc_elf_open(FIX("libasctest-offset.so"), &elf), 0);
	s = asc_elf_find(elf, "asc_test_push");
	assert_non_null(s);
	assert_int_equal(asc_elf_vaddr_to_off(elf, s->vaddr, &off), 0);
	assert_true(off != s->vaddr);
	assert_true(s->vaddr - off == 0x10000);
	/* an address in no segment */
	assert_int_equal(asc_elf_vaddr_to_off(elf, 0x10, &off), -ENOENT);
	assert_false(asc_elf_vaddr_is_code(elf, 0x10));
	/* the first segment (ELF header, read-only) is not code */
	assert_false(asc_elf_vaddr_is_code(elf, 0x10000));
	asc_elf_close(elf);
	check_variant(FIX("libasctest-offset.so"), true);
}

/* Symbols on demand: the same symbols, offsets and bytes as the full open, no table loaded. */
static void check_lazy(const char *path, bool has_symtab)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	struct asc_elf_symbol s;
	struct asc_elf *elf, *full;
	uint64_t off, text_off, text_size;
	uint8_t file_bytes[8];
	size_t i;

	assert_non_null(h);
	assert_int_equal(asc_elf_open_lazy(path, &elf), 0);
	assert_int_equal(asc_elf_nr_syms(elf), 0);
	assert_null(asc_elf_find(elf, "asc_test_push"));
	assert_int_equal(strlen(asc_elf_build_id(elf)), 40);
	assert_int_equal(asc_elf_section(elf, ".text", SHT_PROGBITS, &text_off, &text_size), 0);
	for (i = 0; i < sizeof(exported) / sizeof(exported[0]); i++) {
		void *addr = dlsym(h, exported[i]);

		assert_non_null(addr);
		assert_int_equal(asc_elf_scan_sym(elf, exported[i], &s), 0);
		assert_string_equal(s.name, exported[i]);
		assert_int_equal(s.type, STT_FUNC);
		assert_int_equal(s.source, ASC_SYM_DYNSYM); /* .dynsym is looked at first */
		assert_int_equal(asc_elf_vaddr_to_off(elf, s.vaddr, &off), 0);
		assert_true(off == file_offset_of(addr));
		assert_true(off >= text_off && off < text_off + text_size);
		assert_int_equal(asc_elf_read_exact(elf, s.vaddr, file_bytes, sizeof(file_bytes)),
				 0);
		assert_memory_equal(file_bytes, addr, 4);
		assert_int_equal(asc_elf_pread(elf, off, file_bytes, sizeof(file_bytes)), 0);
		assert_memory_equal(file_bytes, addr, 4);
	}
	assert_int_equal(asc_elf_scan_sym(elf, "asc_test_local", &s), has_symtab ? 0 : -ENOENT);
	if (has_symtab)
		assert_int_equal(s.source, ASC_SYM_SYMTAB);
	assert_int_equal(asc_elf_scan_sym(elf, "asc_test_no_such_function", &s), -ENOENT);
	assert_int_equal(asc_elf_section(elf, ".no_such_section", SHT_PROGBITS, &off, &text_size),
			 -ENOENT);
	/* a range that runs past the end of every segment's file part */
	assert_int_equal(asc_elf_read_exact(elf, s.vaddr, file_bytes, 1 << 30), -ENOENT);
	/* a full open of the same file loads the tables into the shared object */
	assert_int_equal(asc_elf_open(path, &full), 0);
	assert_ptr_equal(full, elf);
	assert_true(asc_elf_nr_syms(full) > 0);
	assert_non_null(asc_elf_find(full, "asc_test_push"));
	asc_elf_close(full);
	asc_elf_close(elf);
	dlclose(h);
}

static void test_lazy(void **state)
{
	check_lazy(FIX("libasctest.so"), true);
	check_lazy(FIX("libasctest-stripped.so"), false);
	check_lazy(FIX("libasctest-offset.so"), true);
}

static int count_cb(const struct asc_elf_symbol *s, void *ctx)
{
	int *n = ctx;

	assert_true(strncmp(s->name, "asc_test_counted_", 17) == 0);
	(*n)++;
	return 0;
}

static int stop_cb(const struct asc_elf_symbol *s, void *ctx)
{
	return 42;
}

static void test_glob_symbols(void **state)
{
	struct asc_elf *elf;
	int n = 0;

	assert_int_equal(asc_elf_open(FIX("libasctest.so"), &elf), 0);
	assert_int_equal(asc_elf_for_each_match(elf, "asc_test_counted_*", count_cb, &n),
			 ASC_TEST_NR_COUNTED);
	assert_int_equal(n, ASC_TEST_NR_COUNTED);
	assert_int_equal(asc_elf_for_each_match(elf, "asc_test_counted_1?", NULL, NULL), 8);
	assert_int_equal(asc_elf_for_each_match(elf, "asc_test_counted_[24]0", NULL, NULL), 2);
	assert_int_equal(asc_elf_for_each_match(elf, "*endbr*", NULL, NULL), 2);
	assert_int_equal(asc_elf_for_each_match(elf, "nomatch*", NULL, NULL), 0);
	assert_int_equal(asc_elf_for_each_match(elf, "asc_test_counted_*", stop_cb, NULL), 42);
	asc_elf_close(elf);
}

static void test_glob_match(void **state)
{
	assert_true(asc_glob_match("aclnn*", "aclnnAddGetWorkspaceSize"));
	assert_true(asc_glob_match("aclnn*", "aclnn"));
	assert_false(asc_glob_match("aclnn*", "xaclnnAdd"));
	assert_true(asc_glob_match("_ZN2at4_ops*4callE*",
				   "_ZN2at4_ops10add_Tensor4callERKNS_6TensorES4_RKN3c106ScalarE"));
	assert_false(asc_glob_match("_ZN2at4_ops*4callE*",
				    "_ZN2at4_ops10add_Tensor10redispatchEN3c1014DispatchKeySetE"));
	assert_true(asc_glob_match("hal?qTaskSend", "halSqTaskSend"));
	assert_true(asc_glob_match("rt[A-Z]*", "rtMalloc"));
	assert_false(asc_glob_match("rt[A-Z]*", "rtc"));
	assert_true(asc_glob_match("a\\*b", "a*b"));
	assert_false(asc_glob_match("a\\*b", "axb"));
	assert_true(asc_glob_is_pattern("aclrt*"));
	assert_true(asc_glob_is_pattern("a[bc]"));
	assert_false(asc_glob_is_pattern("aclrtMalloc"));
	assert_false(asc_glob_is_pattern("_ZN7c10_npu10Repository7EnqueueEPv"));
}

static void test_symbolize(void **state)
{
	struct asc_elf *elf;
	const struct asc_elf_symbol *s, *t;
	uint64_t delta = 99;

	assert_int_equal(asc_elf_open(FIX("libasctest.so"), &elf), 0);
	s = asc_elf_find(elf, "asc_test_counted_23");
	assert_non_null(s);
	assert_true(s->size > 2);
	t = asc_elf_symbolize(elf, s->vaddr, &delta);
	assert_ptr_equal(t, s);
	assert_true(delta == 0);
	t = asc_elf_symbolize(elf, s->vaddr + s->size - 1, &delta);
	assert_ptr_equal(t, s);
	assert_true(delta == s->size - 1);
	/* below every function */
	assert_null(asc_elf_symbolize(elf, 0x10, &delta));
	asc_elf_close(elf);
}

static void test_cache_and_errors(void **state)
{
	struct asc_elf *a, *b;

	assert_int_equal(asc_elf_open(FIX("libasctest.so"), &a), 0);
	assert_int_equal(asc_elf_open(FIX("libasctest.so"), &b), 0);
	assert_ptr_equal(a, b); /* same file: one object */
	asc_elf_close(b);
	assert_non_null(asc_elf_find(a, "asc_test_push")); /* still open */
	asc_elf_close(a);
	assert_int_equal(asc_elf_open(FIX("no-such-file.so"), &a), -ENOENT);
	assert_null(a);
	{
		char text[] = "/tmp/asc-notelf-XXXXXX";
		int fd = mkstemp(text);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, "not an ELF file\n", 16), 16);
		close(fd);
		assert_int_equal(asc_elf_open(text, &a), -ENOEXEC);
		unlink(text);
	}
	assert_int_equal(asc_elf_open("/proc/self/status", &a), -ENOEXEC);
	asc_elf_close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_offset_segment),
		cmocka_unit_test(test_split_debug),
		cmocka_unit_test(test_lazy),
		cmocka_unit_test(test_glob_symbols),
		cmocka_unit_test(test_glob_match),
		cmocka_unit_test(test_symbolize),
		cmocka_unit_test(test_cache_and_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
