/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * elfsym.h - ELF function symbols of a shared object or executable, from
 * .dynsym and .symtab (libelf): lookup by exact name or glob, symbol ->
 * file offset through the PT_LOAD segment that holds it, and address ->
 * symbol+offset for stack symbolisation.
 *
 * Opened files are cached by (device, inode, size, mtime): opening the same
 * file twice returns the same object with one more reference, so a library
 * mapped by many processes is read once.  The build-id (NT_GNU_BUILD_ID) is
 * kept for the capture's symbol records.  Safe to call from several threads.
 *
 * Symbols on demand: asc_elf_open_lazy() reads only the headers (segments,
 * build-id), and asc_elf_scan_sym() looks a name up in the tables without
 * loading them, for callers that need a few symbols of a large library
 * (libtorch_cpu has ~10^5 functions) and not the whole sorted table.
 *
 * Addresses called "vaddr" are ELF virtual addresses (st_value, p_vaddr),
 * i.e. what `nm` prints; file offsets are what uprobes attach at.
 */
#ifndef __ASCBPF_ELFSYM_H
#define __ASCBPF_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ASC_SYM_DYNSYM 0x1 /* present in .dynsym */
#define ASC_SYM_SYMTAB 0x2 /* present in .symtab */
#define ASC_SYM_DEBUG  0x4 /* present in the separate debug file's .symtab */

struct asc_elf_symbol {
	const char *name; /* valid while the asc_elf is open */
	uint64_t vaddr;	  /* st_value */
	uint64_t size;	  /* st_size (0 if unknown) */
	uint8_t type;	  /* STT_FUNC or STT_GNU_IFUNC */
	uint8_t bind;	  /* STB_GLOBAL / STB_WEAK / STB_LOCAL */
	uint8_t source;	  /* ASC_SYM_* (both when the tables agree) */
	uint8_t reserved;
};

struct asc_elf;

/* Opens (or finds in the cache) path.  -ENOENT, -EACCES, -ENOEXEC (not ELF). */
int asc_elf_open(const char *path, struct asc_elf **elf);
/*
 * The same, with the separate debug file's symbols when the file has no .symtab ("Debug
 * symbols" below).  Only for the libraries a caller needs hidden functions of (the probe
 * table's): looking for and reading the system's debug files of libc or ld.so costs time a
 * trace's start cannot spare.  A file already open elsewhere keeps the symbols it was read with.
 */
int asc_elf_open_debug(const char *path, struct asc_elf **elf);
/*
 * The same without reading the function symbol tables: asc_elf_nr_syms() is 0,
 * asc_elf_find/for_each_match/symbolize find nothing, until an asc_elf_open() of
 * the same file (which shares the cached object and reads them then).
 */
int asc_elf_open_lazy(const char *path, struct asc_elf **elf);
/* Drops one reference; the last one frees it.  NULL is a no-op. */
void asc_elf_close(struct asc_elf *elf);

const char *asc_elf_path(const struct asc_elf *elf);
/* Lower-case hex build-id, "" if the file has none. */
const char *asc_elf_build_id(const struct asc_elf *elf);
uint16_t asc_elf_machine(const struct asc_elf *elf); /* EM_X86_64, EM_AARCH64, ... */

/*
 * Debug symbols.  A file without a .symtab (a release build stripped as eu-strip leaves it) is
 * read, by asc_elf_open_debug(), together with its separate debug file when one is found as gdb
 * and perf find it: DIR/.build-id/xx/rest.debug for each asc_elf_add_debug_dir() DIR, then
 * /usr/lib/debug; then the .gnu_debuglink name in the library's directory, in its .debug/, and
 * in DIR/<library's directory>/.  The debug file must have the library's build-id.  Its .symtab
 * functions (ASC_SYM_DEBUG; the hidden ones STB_LOCAL) join the symbols; their addresses are
 * the library's, so offsets and code still come from the library.  Without one, only .dynsym.
 * Add the directories before the first open of a file (the search runs once per cached file).
 */
/* Adds DIR (a directory, else -ENOTDIR / -ENOENT) to the debug-file search, after earlier ones. */
int asc_elf_add_debug_dir(const char *dir);
void asc_elf_clear_debug_dirs(void);
/* The debug file whose symbols the file's were read with, or NULL (none found, or not needed). */
const char *asc_elf_debug_file(const struct asc_elf *elf);
/* Whether the file itself has a .symtab (not stripped). */
bool asc_elf_has_symtab(const struct asc_elf *elf);

/* Function symbols (deduplicated across .dynsym, .symtab, debug file), sorted by name. */
size_t asc_elf_nr_syms(const struct asc_elf *elf);
const struct asc_elf_symbol *asc_elf_sym(const struct asc_elf *elf, size_t i);

/* Exact name lookup; NULL + errno = ENOENT if absent. */
const struct asc_elf_symbol *asc_elf_find(const struct asc_elf *elf, const char *name);

/*
 * Calls fn for every function symbol whose name matches the glob pattern
 * (asc_glob_match), in name order.  fn returns 0 to go on, anything else to
 * stop; that value is returned.  Otherwise returns the number of matches.
 */
int asc_elf_for_each_match(const struct asc_elf *elf, const char *pattern,
			   int (*fn)(const struct asc_elf_symbol *sym, void *ctx), void *ctx);

/*
 * vaddr <-> file offset through the PT_LOAD segment containing it (its file
 * part: p_vaddr <= vaddr < p_vaddr + p_filesz; off = vaddr - p_vaddr +
 * p_offset).  -ENOENT if no segment holds it.
 */
int asc_elf_vaddr_to_off(const struct asc_elf *elf, uint64_t vaddr, uint64_t *off);
int asc_elf_off_to_vaddr(const struct asc_elf *elf, uint64_t off, uint64_t *vaddr);

/*
 * The first defined symbol of any type named name, .dynsym before .symtab
 * (read from the file on each call, without the loaded tables); -ENOENT.
 */
int asc_elf_scan_sym(const struct asc_elf *elf, const char *name, struct asc_elf_symbol *sym);

/* File offset and size of the first section named name of type sh_type; -ENOENT. */
int asc_elf_section(const struct asc_elf *elf, const char *name, uint32_t sh_type, uint64_t *off,
		    uint64_t *size);
/* Reads exactly len bytes at file offset off: 0, -EIO on a short read, -errno. */
int asc_elf_pread(const struct asc_elf *elf, uint64_t off, void *buf, size_t len);

/* Whether vaddr lies in the file part of an executable (PF_X) PT_LOAD segment. */
bool asc_elf_vaddr_is_code(const struct asc_elf *elf, uint64_t vaddr);

/* Reads up to len bytes of the file at vaddr; returns the count read or -errno. */
int asc_elf_read(const struct asc_elf *elf, uint64_t vaddr, void *buf, size_t len);
/*
 * Reads exactly [vaddr, vaddr + len), which must lie in the file part of one
 * PT_LOAD: 0, -ENOENT if no segment holds all of it, -EIO on a short read.
 */
int asc_elf_read_exact(const struct asc_elf *elf, uint64_t vaddr, void *buf, size_t len);

/*
 * The function containing vaddr (vaddr - sym->vaddr < size, or, for symbols
 * of unknown size, the nearest one below within the same segment), with
 * *delta = vaddr - sym->vaddr.  NULL + errno = ENOENT if none.
 */
const struct asc_elf_symbol *asc_elf_symbolize(const struct asc_elf *elf, uint64_t vaddr,
					       uint64_t *delta);

/*
 * Shell-style glob as fnmatch(3) without flags: '*', '?', '[...]' (with '!'
 * or '^' negation and ranges), '\' escapes.  Whole-string match.
 */
bool asc_glob_match(const char *pattern, const char *str);
/* Whether s contains glob metacharacters (else it is an exact name). */
bool asc_glob_is_pattern(const char *s);

/*
 * Path-based lookups for callers that need a few names of a large library:
 * each opens the file lazily (asc_elf_open_lazy, so through the cache) and
 * closes it again.  A caller that makes many of them on one file holds it
 * open meanwhile (HELD_OPEN in discovery/pytorch.c).
 */
struct asc_elf_sym {
	uint64_t vaddr; /* st_value */
	uint64_t size;	/* st_size */
};

/* Looks NAME up in .dynsym, then .symtab.  -ENOENT if absent, -ENOEXEC if not ELF. */
int asc_elf_lookup(const char *path, const char *name, struct asc_elf_sym *sym);

/* Reads len bytes at virtual address vaddr of the file (through PT_LOAD). */
int asc_elf_read_vaddr(const char *path, uint64_t vaddr, void *buf, size_t len);

/* Link-time address of the PT_LOAD segment that maps file offset 0. */
int asc_elf_load_base(const char *path, uint64_t *vaddr);

/*
 * Reads the code of function NAME: its st_size bytes, at most cap (cap when
 * the size is unknown); *len gets how many, *vaddr its address.
 */
int asc_elf_read_func(const char *path, const char *name, void *buf, size_t cap, size_t *len,
		      uint64_t *vaddr);

/*
 * The image of PID's first mapped file (asc_maps_next_image: offset 0, a
 * basename starting with one of prefixes[]) that has symbol sym (NULL: any)
 * and an ELF load base: path gets "/proc/PID/root" + its path, *bias where
 * its file offset 0 is mapped minus its link-time address.  -ENOENT if none,
 * -ESRCH if PID is gone.
 */
int asc_elf_find_image(pid_t pid, const char *const *prefixes, const char *sym, char *path,
		       size_t len, uint64_t *bias);

#endif /* __ASCBPF_ELFSYM_H */
