// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_elf - the ELF/symbol reader (user/discovery/elfsym.c) and what
 * discovery does with a library it found mapped in the target: a hostile
 * process can map a crafted ELF, and ascbpf (root) reads it.  Per input
 * file: the symbol tables (eager and lazy open), lookups by name and glob,
 * address <-> offset, symbolisation, sections, code reads and the uprobe
 * placement of each function (user/arch/prologue.c), and PyTorch's lookup
 * + TensorImpl layout discovery (user/discovery/pytorch.c, which decodes
 * the code of named functions).
 */
#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "arch/prologue.h"
#include "discovery/elfsym.h"
#include "discovery/pytorch.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_init();
	return 0;
}

static int count_match(const struct asc_elf_symbol *sym, void *ctx)
{
	(void)sym;
	++*(int *)ctx;
	return 0;
}

static void probe_symbols(struct asc_elf *e)
{
	size_t i, n = asc_elf_nr_syms(e);
	uint8_t code[256];
	int matches = 0;

	for (i = 0; i < n && i < 64; i++) {
		const struct asc_elf_symbol *s = asc_elf_sym(e, i), *f;
		struct asc_prologue p;
		uint64_t off, va, delta;
		int got;

		f = asc_elf_find(e, s->name);
		if (!f || strcmp(f->name, s->name))
			__builtin_trap(); /* every listed symbol is found by its name */
		if (!asc_elf_vaddr_to_off(e, s->vaddr, &off))
			asc_elf_off_to_vaddr(e, off, &va);
		asc_elf_symbolize(e, s->vaddr + s->size / 2, &delta);
		asc_elf_vaddr_is_code(e, s->vaddr);
		got = asc_elf_read(e, s->vaddr, code, sizeof(code));
		if (got > (int)sizeof(code))
			__builtin_trap();
		if (got > 0)
			asc_prologue_analyze(asc_elf_machine(e), code, got, s->size, &p);
		asc_elf_read_exact(e, s->vaddr, code,
				   s->size < sizeof(code) ? s->size : sizeof(code));
	}
	asc_elf_for_each_match(e, "*", count_match, &matches);
	asc_elf_for_each_match(e, "asc_[a-f]*", count_match, &matches);
	asc_elf_symbolize(e, 0x1000, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_write_file("in.so", data, size);
	struct asc_elf *e = NULL, *lazy = NULL;
	struct asc_elf_symbol sym;
	struct asc_tensor_layout tl;
	struct asc_elf_sym ps;
	uint64_t off, sz, va;
	uint8_t buf[64];

	if (!asc_elf_open_lazy(path, &lazy)) {
		asc_elf_build_id(lazy);
		asc_elf_scan_sym(lazy, "main", &sym);
		asc_elf_scan_sym(lazy, "_ZNK3c1010TensorImpl10dim_customEv", &sym);
		asc_elf_section(lazy, ".text", SHT_PROGBITS, &off, &sz);
		if (!asc_elf_section(lazy, ".rodata", SHT_PROGBITS, &off, &sz))
			asc_elf_pread(lazy, off, buf, sz < sizeof(buf) ? sz : sizeof(buf));
	}
	if (!asc_elf_open(path, &e)) {
		probe_symbols(e);
		asc_elf_close(e);
	}
	asc_elf_close(lazy);
	asc_elf_lookup(path, "aclnnAdd", &ps);
	asc_elf_load_base(path, &va);
	asc_elf_read_vaddr(path, 0x1000, buf, sizeof(buf));
	asc_tensor_layout_discover(path, &tl);
	return 0;
}
