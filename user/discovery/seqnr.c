// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * seqnr.c - autograd sequence numbers: the counter's TLS location, backward
 * node names from vtable symbols, and torch_npu's fwdbwd pairing (seqnr.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/hashmap.h"
#include "lib/log.h"
#include "lib/ranges.h"
#include "arch/arch.h"
#include "arch/x86.h"
#include "discovery/elfsym.h"
#include "discovery/seqnr.h"

int asc_seqnr_tls_decode(const uint8_t *code, size_t len, uint64_t vaddr, struct asc_seqnr_tls *tls)
{
	size_t i;

	/* the lea may follow a stack adjustment (sub $8,%rsp) or an endbr64 */
	for (i = 0; i + 16 <= len && i <= 16; i++) {
		const uint8_t *p = code + i, *m = p + 16;
		int32_t rel;

		if (p[0] != 0x66 || p[1] != 0x48 || p[2] != 0x8d || p[3] != 0x3d || p[8] != 0x66 ||
		    p[9] != 0x66 || p[10] != 0x48 || p[11] != 0xe8)
			continue;
		memcpy(&rel, p + 4, 4);
		tls->tlsidx_vaddr = vaddr + i + 8 + (int64_t)rel;
		/* mov (%rax),%rax | mov d8(%rax),%rax | mov d32(%rax),%rax */
		if (i + 19 <= len && m[0] == 0x48 && m[1] == 0x8b && m[2] == 0x00) {
			tls->disp = 0;
		} else if (i + 20 <= len && m[0] == 0x48 && m[1] == 0x8b && m[2] == 0x40) {
			tls->disp = (int8_t)m[3];
		} else if (i + 23 <= len && m[0] == 0x48 && m[1] == 0x8b && m[2] == 0x80) {
			memcpy(&rel, m + 3, 4);
			tls->disp = rel;
		} else {
			return -ENOEXEC;
		}
		return 0;
	}
	return -ENOEXEC;
}

int asc_seqnr_discover(pid_t pid, const char *lib, uint64_t bias, struct asc_seqnr_tls *tls)
{
	struct asc_elf_sym sym;
	uint64_t idx[2];
	uint8_t code[48];
	char mem[64];
	int fd, err;
	ssize_t n;

	err = asc_elf_lookup(lib, ASC_SYM_SEQ_PEEK, &sym);
	if (err)
		return err;
	err = asc_elf_read_vaddr(lib, sym.vaddr, code, sizeof(code));
	if (err < 0)
		return err;
	err = asc_seqnr_tls_decode(code, sizeof(code), sym.vaddr, tls);
	if (err)
		return err;
	snprintf(mem, sizeof(mem), "/proc/%d/mem", pid);
	fd = open(mem, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = pread(fd, idx, sizeof(idx), (off_t)(tls->tlsidx_vaddr + bias));
	close(fd);
	if (n != (ssize_t)sizeof(idx))
		return -EIO;
	/* 0 while the loader has not relocated the library yet (a dlopen in progress) */
	tls->modid = idx[0];
	tls->offset = idx[0] ? idx[1] + tls->disp : 0;
	return 0;
}

int asc_seqnr_counter_addr(uint64_t tp, const struct asc_seqnr_tls *tls,
			   int (*rd)(uint64_t addr, uint64_t *val, void *ctx), void *ctx,
			   uint64_t *addr)
{
	uint64_t dtv, nr, block;

	if (rd(tp + (uint64_t)asc_arch_target()->dtv_off, &dtv, ctx) || rd(dtv - 16, &nr, ctx))
		return -EFAULT;
	if (tls->modid > nr)
		return 1;
	if (rd(dtv + 16 * tls->modid, &block, ctx))
		return -EFAULT;
	if (!block || block == (uint64_t)-1)
		return 1;
	*addr = block + tls->offset;
	return 0;
}

/* ---- names ---- */

int asc_seqnr_class_name(const char *sym, char *out, size_t len)
{
	static const char gen[] = "torch::autograd::generated::";
	char buf[512];
	size_t o = 0;
	const char *p;

	if (strncmp(sym, "_ZTV", 4))
		return -EINVAL;
	p = sym + 4;
	if (*p == 'N') {
		p++;
		while (*p && *p != 'E') {
			char *end;
			unsigned long n = strtoul(p, &end, 10);

			if (end == p || !n || strnlen(end, n) < n || o + n + 3 > sizeof(buf))
				return -EINVAL;
			if (o) {
				memcpy(buf + o, "::", 2);
				o += 2;
			}
			memcpy(buf + o, end, n);
			o += n;
			p = end + n;
		}
		if (*p != 'E' || p[1])
			return -EINVAL;
	} else {
		char *end;
		unsigned long n = strtoul(p, &end, 10);

		if (end == p || !n || strlen(end) != n || n + 1 > sizeof(buf))
			return -EINVAL;
		memcpy(buf, end, n);
		o = n;
	}
	buf[o] = 0;
	p = buf;
	if (!strncmp(buf, gen, sizeof(gen) - 1) && buf[sizeof(gen) - 1])
		p = buf + sizeof(gen) - 1;
	if (strlen(p) + 1 > len)
		return -ENOSPC;
	strcpy(out, p);
	return 0;
}

struct vtab {
	uint64_t vaddr, size;
	char *name; /* node name */
};

struct asc_seqnr_names {
	uint64_t bias;
	struct vtab *v;
	size_t n;
};

static int cmp_vtab(const void *a, const void *b)
{
	const struct vtab *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* Every _ZTV object of a class in torch::autograd (where Node subclasses live). */
static int scan_vtables(Elf *elf, struct asc_seqnr_names *nm, size_t *cap)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, cnt;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			continue;
		cnt = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < cnt; i++) {
			GElf_Sym s;
			const char *name;
			char cls[256];

			if (!gelf_getsym(d, i, &s) || GELF_ST_TYPE(s.st_info) != STT_OBJECT ||
			    !s.st_value || s.st_size < ASC_VPTR_IN_VTABLE + 8)
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name || strncmp(name, "_ZTVN5torch8autograd", 20) ||
			    asc_seqnr_class_name(name, cls, sizeof(cls)))
				continue;
			if (nm->n == *cap) {
				size_t nc = *cap ? *cap * 2 : 1024;
				struct vtab *nv = realloc(nm->v, nc * sizeof(*nv));

				if (!nv)
					return -ENOMEM;
				nm->v = nv;
				*cap = nc;
			}
			nm->v[nm->n].vaddr = s.st_value;
			nm->v[nm->n].size = s.st_size;
			nm->v[nm->n].name = strdup(cls);
			if (!nm->v[nm->n].name)
				return -ENOMEM;
			nm->n++;
		}
	}
	return 0;
}

struct asc_seqnr_names *asc_seqnr_names_open(const char *lib, uint64_t bias)
{
	struct asc_seqnr_names *nm = calloc(1, sizeof(*nm));
	size_t cap = 0, i, j;
	Elf *elf = NULL;
	int fd = -1, err = 0;

	if (!nm)
		return NULL;
	nm->bias = bias;
	elf_version(EV_CURRENT);
	fd = open(lib, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto fail;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto fail;
	}
	err = scan_vtables(elf, nm, &cap);
	if (err)
		goto fail;
	elf_end(elf);
	close(fd);
	qsort(nm->v, nm->n, sizeof(*nm->v), cmp_vtab);
	/* .dynsym and .symtab list the same objects: keep one of each address */
	for (i = j = 0; i < nm->n; i++) {
		if (j && nm->v[j - 1].vaddr == nm->v[i].vaddr) {
			free(nm->v[i].name);
			continue;
		}
		nm->v[j++] = nm->v[i];
	}
	nm->n = j;
	return nm;
fail:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	asc_seqnr_names_free(nm);
	errno = -err;
	return NULL;
}

const char *asc_seqnr_names_get(struct asc_seqnr_names *nm, uint64_t vptr)
{
	long i = asc_range_find(nm->v, nm->n, sizeof(*nm->v), offsetof(struct vtab, vaddr),
				offsetof(struct vtab, size), vptr - nm->bias);

	return i < 0 ? NULL : nm->v[i].name;
}

size_t asc_seqnr_names_count(const struct asc_seqnr_names *nm)
{
	return nm->n;
}

const char *asc_seqnr_names_at(const struct asc_seqnr_names *nm, size_t i, uint64_t *vaddr,
			       uint64_t *size)
{
	*vaddr = nm->v[i].vaddr + nm->bias;
	*size = nm->v[i].size;
	return nm->v[i].name;
}

void asc_seqnr_names_free(struct asc_seqnr_names *nm)
{
	size_t i;

	if (!nm)
		return;
	for (i = 0; i < nm->n; i++)
		free(nm->v[i].name);
	free(nm->v);
	free(nm);
}
