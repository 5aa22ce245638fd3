// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * elfsym.c - function symbols from .dynsym/.symtab with libelf, a per-file
 * cache, segment-aware vaddr <-> file offset, symbolisation.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "discovery/elfsym.h"
#include "lib/log.h"
#include "lib/procmaps.h"

struct load_seg {
	uint64_t vaddr;
	uint64_t offset;
	uint64_t filesz;
	uint64_t memsz;
	uint32_t flags; /* PF_X | PF_W | PF_R */
};

struct asc_elf {
	struct asc_elf *next; /* cache list */
	int refs;
	dev_t dev;
	ino_t ino;
	off_t fsize;
	struct timespec mtime;
	char *path;
	int fd;
	Elf *e;
	uint16_t machine;
	char build_id[2 * 64 + 1];
	struct load_seg *segs;
	size_t nr_segs;
	/*
	 * libelf keeps per-section state (elf_getdata): every libelf call after open goes under
	 * lock, so lazy lookups and a later full open of the same cached file can run at once.
	 */
	pthread_mutex_t lock;
	bool syms_loaded;	     /* syms/by_addr read (asc_elf_open) */
	struct asc_elf_symbol *syms; /* sorted by name */
	size_t nr_syms;
	struct asc_elf_symbol **by_addr; /* sorted by vaddr */
	bool has_symtab;		 /* the file itself has a .symtab */
	bool want_debug;		 /* look for a debug file when the symbols are read */
	/* the separate debug file whose .symtab syms also hold (open_debug_file), or none */
	char *debug_path;
	int debug_fd;
	Elf *debug_e;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct asc_elf *cache;

bool asc_glob_is_pattern(const char *s)
{
	return strpbrk(s, "*?[\\") != NULL;
}

bool asc_glob_match(const char *pattern, const char *str)
{
	return fnmatch(pattern, str, 0) == 0;
}

static int cmp_sym_name(const void *a, const void *b)
{
	const struct asc_elf_symbol *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static int cmp_sym_addr(const void *a, const void *b)
{
	const struct asc_elf_symbol *x = *(const struct asc_elf_symbol *const *)a;
	const struct asc_elf_symbol *y = *(const struct asc_elf_symbol *const *)b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	/* Prefer the sized, global one first among aliases. */
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return (x->bind == STB_GLOBAL) > (y->bind == STB_GLOBAL) ? -1 : 0;
}

/* The NT_GNU_BUILD_ID of a note block d as lower-case hex into out (2 * 64 + 1), if it has one. */
static void note_build_id(Elf_Data *d, char *out)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		const unsigned char *desc = (const unsigned char *)d->d_buf + desc_off;
		size_t k;

		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((const char *)d->d_buf + name_off, "GNU", 4) || nh.n_descsz > 64)
			continue;
		for (k = 0; k < nh.n_descsz; k++) {
			static const char hex[] = "0123456789abcdef";

			out[2 * k] = hex[desc[k] >> 4];
			out[2 * k + 1] = hex[desc[k] & 15];
		}
		out[2 * nh.n_descsz] = '\0';
		return;
	}
}

static int load_segments(struct asc_elf *elf)
{
	size_t n, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf->e, &n))
		return -ENOEXEC;
	elf->segs = calloc(n ? n : 1, sizeof(*elf->segs));
	if (!elf->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf->e, i, &ph))
			return -ENOEXEC;
		if (ph.p_type == PT_LOAD) {
			struct load_seg *s = &elf->segs[elf->nr_segs++];

			s->vaddr = ph.p_vaddr;
			s->offset = ph.p_offset;
			s->filesz = ph.p_filesz;
			s->memsz = ph.p_memsz;
			s->flags = ph.p_flags;
		} else if (ph.p_type == PT_NOTE && !elf->build_id[0]) {
			note_build_id(elf_getdata_rawchunk(elf->e, ph.p_offset, ph.p_filesz,
							   ELF_T_NHDR),
				      elf->build_id);
		}
	}
	return 0;
}

/* Appends the function symbols of table scn of e (elf->e or its debug file's) to elf->syms. */
static int load_symtab(struct asc_elf *elf, Elf *e, Elf_Scn *scn, GElf_Shdr *sh, uint8_t source,
		       size_t *cap)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t i, n;

	if (!d || !sh->sh_entsize)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 1; i < n; i++) {
		GElf_Sym s;
		const char *name;
		struct asc_elf_symbol *out;
		int type;

		if (!gelf_getsym(d, i, &s))
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
		    !s.st_value)
			continue;
		name = elf_strptr(e, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if (elf->nr_syms == *cap) {
			size_t ncap = *cap ? *cap * 2 : 1024;
			void *tmp = realloc(elf->syms, ncap * sizeof(*elf->syms));

			if (!tmp)
				return -ENOMEM;
			elf->syms = tmp;
			*cap = ncap;
		}
		out = &elf->syms[elf->nr_syms++];
		out->name = name;
		out->vaddr = s.st_value;
		out->size = s.st_size;
		out->type = type;
		out->bind = GELF_ST_BIND(s.st_info);
		out->source = source;
		out->reserved = 0;
	}
	return 0;
}

/* ---- separate debug files (elfsym.h: "Debug symbols") ---- */

static pthread_mutex_t debug_dirs_lock = PTHREAD_MUTEX_INITIALIZER;
static char **debug_dirs; /* --debug-dir, in the order given */
static size_t nr_debug_dirs;
static const char system_debug_dir[] = "/usr/lib/debug";

int asc_elf_add_debug_dir(const char *dir)
{
	struct stat st;
	char **tmp;
	int err = 0;

	if (!dir || !*dir)
		return -EINVAL;
	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	pthread_mutex_lock(&debug_dirs_lock);
	tmp = realloc(debug_dirs, (nr_debug_dirs + 1) * sizeof(*debug_dirs));
	if (tmp) {
		debug_dirs = tmp;
		debug_dirs[nr_debug_dirs] = strdup(dir);
		if (debug_dirs[nr_debug_dirs])
			nr_debug_dirs++;
		else
			err = -ENOMEM;
	} else {
		err = -ENOMEM;
	}
	pthread_mutex_unlock(&debug_dirs_lock);
	return err;
}

void asc_elf_clear_debug_dirs(void)
{
	size_t i;

	pthread_mutex_lock(&debug_dirs_lock);
	for (i = 0; i < nr_debug_dirs; i++)
		free(debug_dirs[i]);
	free(debug_dirs);
	debug_dirs = NULL;
	nr_debug_dirs = 0;
	pthread_mutex_unlock(&debug_dirs_lock);
}

/* The build-id of a debug file: its SHT_NOTE sections (their segments may have no file part). */
static void debug_build_id(Elf *e, char *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	out[0] = '\0';
	while (!out[0] && (scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE)
			note_build_id(elf_getdata(scn, NULL), out);
}

/*
 * Opens path as elf's debug file if it is one: an ELF file of the same machine whose build-id
 * equals elf's (a file without a build-id is never matched: nothing would tie the two).
 */
static int try_debug_file(struct asc_elf *elf, const char *path)
{
	char id[2 * 64 + 1];
	GElf_Ehdr eh;
	Elf *e;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) || eh.e_machine != elf->machine)
		goto mismatch;
	debug_build_id(e, id);
	if (strcmp(id, elf->build_id))
		goto mismatch;
	elf->debug_path = strdup(path);
	if (!elf->debug_path) {
		elf_end(e);
		close(fd);
		return -ENOMEM;
	}
	elf->debug_e = e;
	elf->debug_fd = fd;
	return 0;
mismatch:
	asc_dbg("%s: not the debug file of %s (build-id or machine differs)\n", path, elf->path);
	if (e)
		elf_end(e);
	close(fd);
	return -ENOENT;
}

/* The .gnu_debuglink file name of elf into name (len), or -ENOENT. */
static int debuglink_name(struct asc_elf *elf, char *name, size_t len)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf->e, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(elf->e, scn))) {
		const char *nm;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		nm = elf_strptr(elf->e, shstrndx, sh.sh_name);
		if (!nm || strcmp(nm, ".gnu_debuglink"))
			continue;
		d = elf_getdata(scn, NULL);
		/* a NUL-terminated base name, padding, a CRC-32 (not needed: build-ids match) */
		if (!d || !d->d_size || !memchr(d->d_buf, '\0', d->d_size) ||
		    strlen(d->d_buf) >= len || strchr(d->d_buf, '/') || !*(char *)d->d_buf)
			return -ENOENT;
		strcpy(name, d->d_buf);
		return 0;
	}
	return -ENOENT;
}

/*
 * The separate debug file of elf, looked up as gdb and perf do: DIR/.build-id/xx/rest.debug in
 * each --debug-dir and /usr/lib/debug; then the .gnu_debuglink name in the library's directory,
 * its .debug/ subdirectory, and DIR/<library's directory>/ of each debug dir.  0 with
 * debug_path / debug_e set, or -ENOENT.
 */
static int open_debug_file(struct asc_elf *elf)
{
	char path[4096], dir[4096], link[256];
	const char *slash, *libdir, *root;
	size_t i, nd;
	int err = -ENOENT;

	if (!elf->build_id[0] || strlen(elf->build_id) < 3)
		return -ENOENT;
	pthread_mutex_lock(&debug_dirs_lock);
	nd = nr_debug_dirs;
	for (i = 0; i <= nd && err; i++) {
		const char *d = i < nd ? debug_dirs[i] : system_debug_dir;

		if (snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", d, elf->build_id,
			     elf->build_id + 2) < (int)sizeof(path))
			err = try_debug_file(elf, path);
	}
	if (err && !debuglink_name(elf, link, sizeof(link))) {
		slash = strrchr(elf->path, '/');
		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - elf->path) : 1,
			 slash ? elf->path : ".");
		/* a container's library (/proc/PID/root/usr/lib): its directory inside the root */
		libdir = dir;
		root = strncmp(dir, "/proc/", 6) ? NULL : strstr(dir + 6, "/root");
		if (root && root[5] == '/')
			libdir = root + 5;
		if (snprintf(path, sizeof(path), "%s/%s", dir, link) < (int)sizeof(path))
			err = try_debug_file(elf, path);
		if (err &&
		    snprintf(path, sizeof(path), "%s/.debug/%s", dir, link) < (int)sizeof(path))
			err = try_debug_file(elf, path);
		for (i = 0; i <= nd && err; i++) {
			const char *d = i < nd ? debug_dirs[i] : system_debug_dir;

			if (snprintf(path, sizeof(path), "%s%s/%s", d, libdir, link) <
			    (int)sizeof(path))
				err = try_debug_file(elf, path);
		}
	}
	pthread_mutex_unlock(&debug_dirs_lock);
	if (!err)
		asc_dbg("%s: debug symbols from %s\n", elf->path, elf->debug_path);
	return err == -ENOMEM ? -ENOMEM : err ? -ENOENT : 0;
}

static int load_symbols(struct asc_elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0, i, j;
	GElf_Shdr sh;
	int err;

	while ((scn = elf_nextscn(elf->e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM) {
			err = load_symtab(elf, elf->e, scn, &sh, ASC_SYM_DYNSYM, &cap);
		} else if (sh.sh_type == SHT_SYMTAB) {
			elf->has_symtab = true;
			err = load_symtab(elf, elf->e, scn, &sh, ASC_SYM_SYMTAB, &cap);
		} else {
			continue;
		}
		if (err)
			return err;
	}
	/* A stripped file: its hidden functions are named only by its separate debug file. */
	if (!elf->has_symtab && elf->want_debug && (elf->debug_e || open_debug_file(elf) == 0)) {
		scn = NULL;
		while ((scn = elf_nextscn(elf->debug_e, scn))) {
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
				continue;
			err = load_symtab(elf, elf->debug_e, scn, &sh, ASC_SYM_DEBUG, &cap);
			if (err)
				return err;
		}
	}
	if (!elf->nr_syms)
		return 0;
	qsort(elf->syms, elf->nr_syms, sizeof(*elf->syms), cmp_sym_name);
	/* Merge the copies a symbol has in both tables (same name and value). */
	for (i = 0, j = 1; j < elf->nr_syms; j++) {
		struct asc_elf_symbol *a = &elf->syms[i], *b = &elf->syms[j];

		if (!strcmp(a->name, b->name) && a->vaddr == b->vaddr) {
			a->source |= b->source;
			if (!a->size)
				a->size = b->size;
			if (b->source == ASC_SYM_DYNSYM)
				a->bind = b->bind;
			continue;
		}
		elf->syms[++i] = *b;
	}
	elf->nr_syms = i + 1;
	elf->by_addr = malloc(elf->nr_syms * sizeof(*elf->by_addr));
	if (!elf->by_addr)
		return -ENOMEM;
	for (i = 0; i < elf->nr_syms; i++)
		elf->by_addr[i] = &elf->syms[i];
	qsort(elf->by_addr, elf->nr_syms, sizeof(*elf->by_addr), cmp_sym_addr);
	return 0;
}

static void elf_destroy(struct asc_elf *elf)
{
	if (!elf)
		return;
	if (elf->e)
		elf_end(elf->e);
	if (elf->fd >= 0)
		close(elf->fd);
	free(elf->by_addr);
	free(elf->syms);
	free(elf->segs);
	free(elf->path);
	if (elf->debug_e)
		elf_end(elf->debug_e);
	if (elf->debug_fd >= 0)
		close(elf->debug_fd);
	free(elf->debug_path);
	pthread_mutex_destroy(&elf->lock);
	free(elf);
}

/*
 * Reads the symbol tables of an object opened lazily (with its debug file's if want_debug);
 * 0 if they are there already (read as they were first read: the table is never rebuilt
 * under a caller that holds symbols of it).
 */
static int elf_load_syms(struct asc_elf *elf, bool want_debug)
{
	int err = 0;

	pthread_mutex_lock(&elf->lock);
	if (!elf->syms_loaded) {
		elf->want_debug = want_debug;
		err = load_symbols(elf);
		if (err) {
			/* a later asc_elf_open may try again: nothing half-built stays */
			free(elf->by_addr);
			free(elf->syms);
			elf->by_addr = NULL;
			elf->syms = NULL;
			elf->nr_syms = 0;
			elf->has_symtab = false;
		}
		elf->syms_loaded = !err;
	}
	pthread_mutex_unlock(&elf->lock);
	return err;
}

#define OPEN_SYMS  0x1
#define OPEN_DEBUG 0x2 /* with the separate debug file's symbols (stripped files) */

static int elf_open(const char *path, unsigned int how, struct asc_elf **out)
{
	bool with_syms = how & OPEN_SYMS;
	struct asc_elf *elf;
	struct stat st;
	GElf_Ehdr eh;
	int fd, err;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	pthread_mutex_lock(&cache_lock);
	for (elf = cache; elf; elf = elf->next) {
		if (elf->dev == st.st_dev && elf->ino == st.st_ino && elf->fsize == st.st_size &&
		    elf->mtime.tv_sec == st.st_mtim.tv_sec &&
		    elf->mtime.tv_nsec == st.st_mtim.tv_nsec) {
			elf->refs++;
			pthread_mutex_unlock(&cache_lock);
			close(fd);
			err = with_syms ? elf_load_syms(elf, how & OPEN_DEBUG) : 0;
			if (err) {
				asc_elf_close(elf);
				return err;
			}
			*out = elf;
			return 0;
		}
	}
	pthread_mutex_unlock(&cache_lock);

	if (elf_version(EV_CURRENT) == EV_NONE) {
		close(fd);
		return -ENOSYS;
	}
	elf = calloc(1, sizeof(*elf));
	if (!elf) {
		close(fd);
		return -ENOMEM;
	}
	pthread_mutex_init(&elf->lock, NULL);
	elf->fd = fd;
	elf->debug_fd = -1;
	elf->refs = 1;
	elf->dev = st.st_dev;
	elf->ino = st.st_ino;
	elf->fsize = st.st_size;
	elf->mtime = st.st_mtim;
	elf->path = strdup(path);
	if (!elf->path) {
		err = -ENOMEM;
		goto fail;
	}
	elf->e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf->e || elf_kind(elf->e) != ELF_K_ELF || !gelf_getehdr(elf->e, &eh)) {
		err = -ENOEXEC;
		goto fail;
	}
	elf->machine = eh.e_machine;
	err = load_segments(elf);
	if (!err && with_syms) {
		elf->want_debug = how & OPEN_DEBUG;
		err = load_symbols(elf);
		elf->syms_loaded = !err;
	}
	if (err)
		goto fail;

	pthread_mutex_lock(&cache_lock);
	elf->next = cache;
	cache = elf;
	pthread_mutex_unlock(&cache_lock);
	*out = elf;
	return 0;
fail:
	if (err == -ENOEXEC)
		asc_dbg("%s: not a readable ELF file: %s\n", path, elf_errmsg(-1));
	elf_destroy(elf);
	return err;
}

int asc_elf_open(const char *path, struct asc_elf **out)
{
	return elf_open(path, OPEN_SYMS, out);
}

int asc_elf_open_debug(const char *path, struct asc_elf **out)
{
	return elf_open(path, OPEN_SYMS | OPEN_DEBUG, out);
}

int asc_elf_open_lazy(const char *path, struct asc_elf **out)
{
	return elf_open(path, 0, out);
}

void asc_elf_close(struct asc_elf *elf)
{
	struct asc_elf **pp;

	if (!elf)
		return;
	pthread_mutex_lock(&cache_lock);
	if (--elf->refs > 0) {
		pthread_mutex_unlock(&cache_lock);
		return;
	}
	for (pp = &cache; *pp; pp = &(*pp)->next) {
		if (*pp == elf) {
			*pp = elf->next;
			break;
		}
	}
	pthread_mutex_unlock(&cache_lock);
	elf_destroy(elf);
}

const char *asc_elf_path(const struct asc_elf *elf)
{
	return elf->path;
}

const char *asc_elf_build_id(const struct asc_elf *elf)
{
	return elf->build_id;
}

uint16_t asc_elf_machine(const struct asc_elf *elf)
{
	return elf->machine;
}

const char *asc_elf_debug_file(const struct asc_elf *elf)
{
	return elf->debug_path;
}

bool asc_elf_has_symtab(const struct asc_elf *elf)
{
	return elf->has_symtab;
}

size_t asc_elf_nr_syms(const struct asc_elf *elf)
{
	return elf->nr_syms;
}

const struct asc_elf_symbol *asc_elf_sym(const struct asc_elf *elf, size_t i)
{
	return i < elf->nr_syms ? &elf->syms[i] : NULL;
}

/* Index of the first symbol whose name is >= key (by strcmp, or by prefix when plen). */
static size_t lower_bound(const struct asc_elf *elf, const char *key, size_t plen)
{
	size_t lo = 0, hi = elf->nr_syms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = plen ? strncmp(elf->syms[mid].name, key, plen) :
			       strcmp(elf->syms[mid].name, key);

		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct asc_elf_symbol *asc_elf_find(const struct asc_elf *elf, const char *name)
{
	size_t i = lower_bound(elf, name, 0);

	if (i < elf->nr_syms && !strcmp(elf->syms[i].name, name))
		return &elf->syms[i];
	errno = ENOENT;
	return NULL;
}

int asc_elf_for_each_match(const struct asc_elf *elf, const char *pattern,
			   int (*fn)(const struct asc_elf_symbol *sym, void *ctx), void *ctx)
{
	/* Names are sorted: only the range sharing the pattern's literal prefix can match. */
	size_t plen = strcspn(pattern, "*?[\\");
	size_t i = plen ? lower_bound(elf, pattern, plen) : 0;
	int count = 0, ret;

	for (; i < elf->nr_syms; i++) {
		const struct asc_elf_symbol *s = &elf->syms[i];

		if (plen && strncmp(s->name, pattern, plen))
			break;
		if (!asc_glob_match(pattern, s->name))
			continue;
		count++;
		ret = fn ? fn(s, ctx) : 0;
		if (ret)
			return ret;
	}
	return count;
}

/* The first PT_LOAD segment whose file part holds vaddr, or NULL. */
static const struct load_seg *seg_of_vaddr(const struct asc_elf *elf, uint64_t vaddr)
{
	size_t i;

	for (i = 0; i < elf->nr_segs; i++) {
		const struct load_seg *s = &elf->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz)
			return s;
	}
	return NULL;
}

int asc_elf_vaddr_to_off(const struct asc_elf *elf, uint64_t vaddr, uint64_t *off)
{
	const struct load_seg *s = seg_of_vaddr(elf, vaddr);

	if (!s)
		return -ENOENT;
	*off = vaddr - s->vaddr + s->offset;
	return 0;
}

bool asc_elf_vaddr_is_code(const struct asc_elf *elf, uint64_t vaddr)
{
	const struct load_seg *s = seg_of_vaddr(elf, vaddr);

	return s && (s->flags & PF_X);
}

int asc_elf_off_to_vaddr(const struct asc_elf *elf, uint64_t off, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < elf->nr_segs; i++) {
		const struct load_seg *s = &elf->segs[i];

		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = off - s->offset + s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

int asc_elf_read(const struct asc_elf *elf, uint64_t vaddr, void *buf, size_t len)
{
	uint64_t off;
	ssize_t n;
	int err = asc_elf_vaddr_to_off(elf, vaddr, &off);

	if (err)
		return err;
	n = pread(elf->fd, buf, len, (off_t)off);
	return n < 0 ? -errno : (int)n;
}

int asc_elf_read_exact(const struct asc_elf *elf, uint64_t vaddr, void *buf, size_t len)
{
	size_t i;

	for (i = 0; i < elf->nr_segs; i++) {
		const struct load_seg *s = &elf->segs[i];

		if (vaddr < s->vaddr || vaddr + len > s->vaddr + s->filesz)
			continue;
		return asc_elf_pread(elf, vaddr - s->vaddr + s->offset, buf, len);
	}
	return -ENOENT;
}

int asc_elf_pread(const struct asc_elf *elf, uint64_t off, void *buf, size_t len)
{
	ssize_t n = pread(elf->fd, buf, len, (off_t)off);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* The first defined symbol named name in the table of type (SHT_DYNSYM / SHT_SYMTAB). */
static int scan_table(struct asc_elf *elf, Elf64_Word type, const char *name,
		      struct asc_elf_symbol *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf->e, scn))) {
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym s;
			const char *nm;

			if (!gelf_getsym(data, i, &s) || s.st_shndx == SHN_UNDEF)
				continue;
			nm = elf_strptr(elf->e, sh.sh_link, s.st_name);
			if (nm && !strcmp(nm, name)) {
				out->name = nm;
				out->vaddr = s.st_value;
				out->size = s.st_size;
				out->type = GELF_ST_TYPE(s.st_info);
				out->bind = GELF_ST_BIND(s.st_info);
				out->source = type == SHT_DYNSYM ? ASC_SYM_DYNSYM : ASC_SYM_SYMTAB;
				out->reserved = 0;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int asc_elf_scan_sym(const struct asc_elf *celf, const char *name, struct asc_elf_symbol *out)
{
	struct asc_elf *elf = (struct asc_elf *)celf; /* libelf state, under elf->lock */
	int err;

	pthread_mutex_lock(&elf->lock);
	err = scan_table(elf, SHT_DYNSYM, name, out);
	if (err)
		err = scan_table(elf, SHT_SYMTAB, name, out);
	pthread_mutex_unlock(&elf->lock);
	return err;
}

int asc_elf_section(const struct asc_elf *celf, const char *name, uint32_t type, uint64_t *off,
		    uint64_t *size)
{
	struct asc_elf *elf = (struct asc_elf *)celf; /* libelf state, under elf->lock */
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int err = -ENOENT;

	pthread_mutex_lock(&elf->lock);
	if (elf_getshdrstrndx(elf->e, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(elf->e, scn))) {
		GElf_Shdr sh;
		const char *nm;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
			continue;
		nm = elf_strptr(elf->e, shstrndx, sh.sh_name);
		if (!nm || strcmp(nm, name))
			continue;
		*off = sh.sh_offset;
		*size = sh.sh_size;
		err = 0;
		break;
	}
out:
	pthread_mutex_unlock(&elf->lock);
	return err;
}

const struct asc_elf_symbol *asc_elf_symbolize(const struct asc_elf *elf, uint64_t vaddr,
					       uint64_t *delta)
{
	size_t lo = 0, hi = elf->nr_syms;
	const struct asc_elf_symbol *s;
	uint64_t o1, o2;

	/* Last symbol with vaddr <= addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (elf->by_addr[mid]->vaddr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo > 0) {
		s = elf->by_addr[--lo];
		/* Walk back over aliases at the same address to the first (preferred) one. */
		while (lo > 0 && elf->by_addr[lo - 1]->vaddr == s->vaddr)
			s = elf->by_addr[--lo];
		if (s->size ? vaddr - s->vaddr < s->size :
			      (!asc_elf_vaddr_to_off(elf, s->vaddr, &o1) &&
			       !asc_elf_vaddr_to_off(elf, vaddr, &o2) &&
			       o2 - o1 == vaddr - s->vaddr)) {
			if (delta)
				*delta = vaddr - s->vaddr;
			return s;
		}
		/* A sized symbol that ends before addr: addr is in padding or an unnamed function. */
		break;
	}
	errno = ENOENT;
	return NULL;
}

/* ---- path-based lookups (discovery/pytorch.c, pystack.c, seqnr.c, trace/env.c) ---- */

/*
 * Through elfsym's symbols-on-demand mode: a few names of libtorch_cpu / libc10 /
 * python are looked up without loading and sorting their whole symbol tables.
 * HELD_OPEN: a discovery step that makes many of these path-based calls on one
 * file holds it open (asc_elf_open_lazy) meanwhile, so that each call finds the
 * opened object in elfsym's cache instead of opening and parsing the file again.
 */
/* Opens path (lazily) and finds name in it: 0 with *elf open for the caller to close, or -errno. */
static int open_sym(const char *path, const char *name, struct asc_elf **elf,
		    struct asc_elf_symbol *s)
{
	int err = asc_elf_open_lazy(path, elf);

	if (err)
		return err;
	err = asc_elf_scan_sym(*elf, name, s);
	if (err)
		asc_elf_close(*elf);
	return err;
}

int asc_elf_lookup(const char *path, const char *name, struct asc_elf_sym *sym)
{
	struct asc_elf_symbol s;
	struct asc_elf *elf;
	int err = open_sym(path, name, &elf, &s);

	if (err)
		return err;
	sym->vaddr = s.vaddr;
	sym->size = s.size;
	asc_elf_close(elf);
	return 0;
}

int asc_elf_read_vaddr(const char *path, uint64_t vaddr, void *buf, size_t len)
{
	struct asc_elf *elf;
	int err = asc_elf_open_lazy(path, &elf);

	if (err)
		return err;
	err = asc_elf_read_exact(elf, vaddr, buf, len);
	asc_elf_close(elf);
	return err;
}

int asc_elf_load_base(const char *path, uint64_t *vaddr)
{
	struct asc_elf *elf;
	int err = asc_elf_open_lazy(path, &elf);

	if (err)
		return err;
	/* the segment whose file part starts at offset 0 */
	err = asc_elf_off_to_vaddr(elf, 0, vaddr);
	asc_elf_close(elf);
	return err;
}

int asc_elf_read_func(const char *path, const char *name, void *buf, size_t cap, size_t *len,
		      uint64_t *vaddr)
{
	struct asc_elf_symbol s;
	struct asc_elf *elf;
	int err = open_sym(path, name, &elf, &s);

	if (err)
		return err;
	*len = s.size && s.size < cap ? s.size : cap;
	*vaddr = s.vaddr;
	err = asc_elf_read_exact(elf, s.vaddr, buf, *len);
	asc_elf_close(elf);
	return err;
}

int asc_elf_find_image(pid_t pid, const char *const *prefixes, const char *sym, char *path,
		       size_t len, uint64_t *bias)
{
	struct asc_maps maps;
	ssize_t i;
	int err = asc_maps_read(pid, &maps);

	if (err)
		return err;
	err = -ENOENT;
	for (i = asc_maps_next_image(&maps, 0, prefixes); i >= 0;
	     i = asc_maps_next_image(&maps, i + 1, prefixes)) {
		struct asc_elf_sym s;
		uint64_t base;

		snprintf(path, len, "/proc/%d/root%s", pid, maps.entries[i].path);
		if (sym && asc_elf_lookup(path, sym, &s))
			continue;
		/* bias: where file offset 0 is mapped minus its link-time address */
		if (asc_elf_load_base(path, &base))
			continue;
		*bias = maps.entries[i].start - base;
		err = 0;
		break;
	}
	asc_maps_free(&maps);
	return err;
}
