// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pystack.c - CPython 3.11 offsets from the interpreter's machine code and
 * type tables, the 3.11 location table, and frame strings.  See pystack.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/procmaps.h"
#include "discovery/pystack.h"
#include "arch/x86.h"
#include "discovery/elfsym.h"

#define MAX_INSNS 96

struct fn {
	uint8_t code[512];
	struct asc_insn in[MAX_INSNS];
	int n;
	uint64_t va;
};

static int load_fn(const char *path, const char *name, struct fn *f)
{
	size_t len;
	int err = asc_elf_read_func(path, name, f->code, sizeof(f->code), &len, &f->va);

	if (err)
		return err;
	f->n = asc_x86_decode_all(f->code, len, f->va, f->in, MAX_INSNS);
	return f->n ? 0 : -EILSEQ;
}

static int is_load(const struct asc_insn *in, int base)
{
	return in->opcode == 0x8b && !in->op2 && in->mem && in->base == base && in->index < 0 &&
	       in->opsize == 8;
}

/* First 8-byte load from D(base); its destination register in *dst. */
static int first_load(const struct fn *f, int from, int base, uint32_t *disp, int *dst, int *at)
{
	int i;

	for (i = from; i < f->n; i++) {
		if (is_load(&f->in[i], base) && f->in[i].disp >= 0) {
			*disp = f->in[i].disp;
			if (dst)
				*dst = f->in[i].reg;
			if (at)
				*at = i;
			return 0;
		}
	}
	return -ENOENT;
}

/* lea D(base),%reg */
static int first_lea(const struct fn *f, int from, int base, uint32_t *disp)
{
	int i;

	for (i = from; i < f->n; i++) {
		const struct asc_insn *in = &f->in[i];

		if (in->opcode == 0x8d && in->mem && in->base == base && in->index < 0 &&
		    in->disp > 0) {
			*disp = in->disp;
			return 0;
		}
	}
	return -ENOENT;
}

static int threads_group(const char *path, struct asc_py_offsets *o)
{
	struct asc_elf_sym rt;
	static struct fn f;
	int reg, i, err;
	uint32_t d;

	err = asc_elf_lookup(path, "_PyRuntime", &rt);
	if (err)
		return err;
	o->runtime_vaddr = rt.vaddr;
	/* PyInterpreterState_Head: mov _PyRuntime+D(%rip),%rax; ret */
	err = load_fn(path, "PyInterpreterState_Head", &f);
	if (err)
		return err;
	if (!is_load(&f.in[0], ASC_X86_RIP) || f.in[0].target < rt.vaddr ||
	    f.in[0].target >= rt.vaddr + (rt.size ? rt.size : 0x10000))
		return -ENOENT;
	o->rt_interp_head = f.in[0].target - rt.vaddr;
	/* PyInterpreterState_ThreadHead: mov D(%rdi),%rax; ret */
	if (load_fn(path, "PyInterpreterState_ThreadHead", &f) ||
	    first_load(&f, 0, ASC_X86_RDI, &o->is_threads_head, NULL, NULL))
		return -ENOENT;
	/* PyThreadState_Next: mov D(%rdi),%rax; ret */
	if (load_fn(path, "PyThreadState_Next", &f) ||
	    first_load(&f, 0, ASC_X86_RDI, &o->ts_next, NULL, NULL))
		return -ENOENT;
	/* PyThreadState_GetFrame: tstate->cframe->current_frame */
	if (load_fn(path, "PyThreadState_GetFrame", &f) ||
	    first_load(&f, 0, ASC_X86_RDI, &o->ts_cframe, &reg, &i) ||
	    first_load(&f, i + 1, reg, &o->cf_current_frame, NULL, NULL))
		return -ENOENT;
	/*
	 * PyThreadState_SetAsyncExc(unsigned long id, ...) walks the threads
	 * comparing p->thread_id with id: "mov %rdi,%rX" then "cmp %rX,D(%rY)".
	 */
	if (load_fn(path, "PyThreadState_SetAsyncExc", &f))
		return -ENOENT;
	reg = ASC_X86_RDI;
	err = -ENOENT;
	for (i = 0; i < f.n; i++) {
		const struct asc_insn *in = &f.in[i];

		if (in->opcode == 0x89 && !in->mem && in->reg == ASC_X86_RDI && in->opsize == 8)
			reg = in->rm;
		if ((in->opcode == 0x39 || in->opcode == 0x3b) && in->mem && in->reg == reg &&
		    in->base >= 0 && in->base != ASC_X86_RIP && in->opsize == 8) {
			d = in->disp;
			o->ts_thread_id = d;
			err = 0;
			break;
		}
	}
	return err;
}

static int frames_group(const char *path, struct asc_py_offsets *o)
{
	static struct fn f;
	uint32_t f_frame, d;
	int reg, creg, i, j;

	/* PyFrame_GetCode: frame->f_frame->f_code */
	if (load_fn(path, "PyFrame_GetCode", &f) ||
	    first_load(&f, 0, ASC_X86_RDI, &f_frame, &reg, &i) ||
	    first_load(&f, i + 1, reg, &o->fr_code, NULL, NULL))
		return -ENOENT;
	/*
	 * PyFrame_GetLasti: f = frame->f_frame; code = f->f_code;
	 * (f->prev_instr - (code + co_code_adaptive)) / 2
	 */
	if (load_fn(path, "PyFrame_GetLasti", &f))
		return -ENOENT;
	for (i = 0; i < f.n; i++)
		if (is_load(&f.in[i], ASC_X86_RDI) && f.in[i].disp == f_frame)
			break;
	if (i == f.n)
		return -ENOENT;
	reg = f.in[i].reg;
	creg = -1;
	o->fr_prev_instr = 0;
	for (j = i + 1; j < f.n; j++) {
		if (!is_load(&f.in[j], reg))
			continue;
		if (f.in[j].disp == o->fr_code)
			creg = f.in[j].reg;
		else if (!o->fr_prev_instr)
			o->fr_prev_instr = f.in[j].disp;
	}
	if (creg < 0 || !o->fr_prev_instr || first_lea(&f, i, creg, &o->co_code_adaptive))
		return -ENOENT;
	/*
	 * PyFrame_GetBack: f = frame->f_frame->previous, skipping incomplete
	 * frames: "cmpb $GENERATOR, owner(%rX)".
	 */
	if (load_fn(path, "PyFrame_GetBack", &f))
		return -ENOENT;
	for (i = 0; i < f.n; i++)
		if (is_load(&f.in[i], ASC_X86_RDI) && f.in[i].disp == f_frame)
			break;
	if (i == f.n || first_load(&f, i + 1, f.in[i].reg, &o->fr_previous, &reg, &j))
		return -ENOENT;
	for (j = j + 1; j < f.n; j++) {
		const struct asc_insn *in = &f.in[j];

		if (in->opcode == 0x80 && (in->reg & 7) == 7 && in->mem && in->base == reg) {
			d = in->disp;
			o->fr_owner = d;
			o->owned_by_generator = (uint8_t)in->imm;
			return 0;
		}
	}
	return -ENOENT;
}

/* PyMemberDef as in structmember.h: name, type, offset, flags, doc (40 bytes on LP64). */
struct member_def {
	uint64_t name;
	int32_t type;
	int32_t pad;
	int64_t offset;
	int32_t flags;
	int32_t pad2;
	uint64_t doc;
};

/*
 * PyTypeObject offsets of tp_basicsize and tp_members: the public type
 * object layout (Include/cpython/object.h), unchanged since Python 3.0.
 */
#define TP_BASICSIZE 32
#define TP_MEMBERS   240

static int code_group(const char *path, struct asc_py_offsets *o)
{
	struct asc_elf_sym ty;
	static struct fn f;
	uint64_t members, basicsize;
	int i, found = 0, reg;

	if (asc_elf_lookup(path, "PyCode_Type", &ty) ||
	    asc_elf_read_vaddr(path, ty.vaddr + TP_BASICSIZE, &basicsize, 8) ||
	    asc_elf_read_vaddr(path, ty.vaddr + TP_MEMBERS, &members, 8) || !members)
		return -ENOENT; /* (a PIE interpreter keeps this pointer in a relocation) */
	if (o->co_code_adaptive && basicsize != o->co_code_adaptive)
		asc_warn("%s: PyCode_Type basicsize %llu != code offset %u\n", path,
			 (unsigned long long)basicsize, o->co_code_adaptive);
	for (i = 0; i < 64; i++) {
		struct member_def m;
		char name[32] = "";

		if (asc_elf_read_vaddr(path, members + i * sizeof(m), &m, sizeof(m)))
			return -ENOENT;
		if (!m.name)
			break;
		if (asc_elf_read_vaddr(path, m.name, name, sizeof(name) - 1))
			continue;
		name[sizeof(name) - 1] = 0;
		if (!strcmp(name, "co_filename")) {
			o->co_filename = m.offset;
			found |= 1;
		} else if (!strcmp(name, "co_name")) {
			o->co_name = m.offset;
			found |= 2;
		} else if (!strcmp(name, "co_firstlineno")) {
			o->co_firstlineno = m.offset;
			found |= 4;
		} else if (!strcmp(name, "co_linetable")) {
			o->co_linetable = m.offset;
			found |= 8;
		} else if (!strcmp(name, "co_qualname")) {
			o->co_qualname = m.offset;
		}
	}
	if (found != 15)
		return -ENOENT;
	/*
	 * PyUnicode_AsUTF8AndSize: for a compact ASCII string "*size =
	 * D1(%rdi)" and "return D2(%rdi)" (lea); the state byte is the one
	 * tested before (movzbl D3(%rdi)).
	 */
	if (load_fn(path, "PyUnicode_AsUTF8AndSize", &f))
		return -ENOENT;
	o->str_state = 0;
	for (i = 0; i < f.n; i++) {
		const struct asc_insn *in = &f.in[i];

		if (in->op2 == (0x100 | 0xb6) && in->mem && in->base == ASC_X86_RDI &&
		    !o->str_state)
			o->str_state = in->disp;
		if (!o->str_length && is_load(in, ASC_X86_RDI) && in->disp > 8 && i + 1 < f.n &&
		    f.in[i + 1].opcode == 0x89 && f.in[i + 1].mem &&
		    f.in[i + 1].base == ASC_X86_RSI && f.in[i + 1].reg == in->reg)
			o->str_length = in->disp;
	}
	if (!o->str_state || !o->str_length || first_lea(&f, 0, ASC_X86_RDI, &o->str_ascii_data))
		return -ENOENT;
	/* PyBytes_AsString: lea D(%rdi),%rax; PyBytes_Size: mov D(%rdi),%rax (after the type check) */
	if (load_fn(path, "PyBytes_AsString", &f) || first_lea(&f, 0, ASC_X86_RDI, &o->bytes_data))
		return -ENOENT;
	if (load_fn(path, "PyBytes_Size", &f))
		return -ENOENT;
	reg = -1;
	for (i = 0; i < f.n; i++) {
		if (is_load(&f.in[i], ASC_X86_RDI) && f.in[i].disp > 8 &&
		    f.in[i].reg == ASC_X86_RAX) {
			o->bytes_size = f.in[i].disp;
			reg = 0;
			break;
		}
	}
	return reg;
}

int asc_py_offsets_discover(const char *path, struct asc_py_offsets *o)
{
	int err;

	memset(o, 0, sizeof(*o));
	err = threads_group(path, o);
	if (!err)
		o->valid |= ASC_PYOFF_THREADS;
	else
		asc_dbg("%s: CPython thread-state offsets not found (%d)\n", path, err);
	if (!frames_group(path, o))
		o->valid |= ASC_PYOFF_FRAMES;
	else
		asc_dbg("%s: CPython frame offsets not found\n", path);
	if (!code_group(path, o))
		o->valid |= ASC_PYOFF_CODE;
	else
		asc_dbg("%s: CPython code object offsets not found\n", path);
	return o->valid ? 0 : -ENOENT;
}

int asc_py_find_image(pid_t pid, char *path, size_t len, uint64_t *bias)
{
	static const char *const prefixes[] = { "python3", "libpython3", NULL };

	return asc_elf_find_image(pid, prefixes, "_PyRuntime", path, len, bias);
}

/* ---- location table (Objects/locations.md, 3.11) ---- */

static int read_varint(const uint8_t *t, size_t len, size_t *pos, unsigned int *v)
{
	unsigned int shift = 0, r = 0;
	uint8_t b;

	do {
		if (*pos >= len || shift > 28)
			return -EINVAL;
		b = t[(*pos)++];
		r |= (unsigned int)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	*v = r;
	return 0;
}

static int read_svarint(const uint8_t *t, size_t len, size_t *pos, int *v)
{
	unsigned int u;
	int err = read_varint(t, len, pos, &u);

	if (err)
		return err;
	*v = (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
	return 0;
}

int asc_py_linetable_line(const uint8_t *t, size_t len, int firstlineno, int lasti, int *line)
{
	size_t pos = 0;
	int addr = 0, cur = firstlineno;

	if (lasti < 0)
		return -ENOENT;
	while (pos < len) {
		uint8_t first = t[pos++];
		int code, n, delta = 0, has_line = 1;
		unsigned int skip;

		if (!(first & 0x80))
			return -EINVAL;
		code = (first >> 3) & 15;
		n = (first & 7) + 1;
		if (code == 15) {
			has_line = 0;
		} else if (code == 14) {
			if (read_svarint(t, len, &pos, &delta) ||
			    read_varint(t, len, &pos, &skip) || read_varint(t, len, &pos, &skip) ||
			    read_varint(t, len, &pos, &skip))
				return -EINVAL;
		} else if (code == 13) {
			if (read_svarint(t, len, &pos, &delta))
				return -EINVAL;
		} else if (code >= 10) {
			delta = code - 10;
			pos += 2;
		} else {
			pos += 1;
		}
		if (pos > len)
			return -EINVAL;
		cur += delta;
		if (lasti < addr + n) {
			if (!has_line)
				return -ENOENT;
			*line = cur;
			return 0;
		}
		addr += n;
	}
	return -ENOENT;
}

/* ---- resolver ---- */

struct code_info {
	uint64_t code;
	char *file;
	char *func;
	int firstlineno;
	uint8_t *table;
	size_t table_len;
};

struct seen {
	uint64_t code;
	int32_t lasti;
};

struct asc_pystack_resolver {
	pid_t pid;
	int memfd;
	struct asc_py_offsets off;
	struct code_info *codes;
	size_t nr_codes, cap_codes;
	struct seen *seen; /* (code, lasti) pairs already emitted */
	size_t nr_seen, cap_seen;
};

struct asc_pystack_resolver *asc_pystack_resolver_new(pid_t pid, const struct asc_py_offsets *off)
{
	struct asc_pystack_resolver *r;
	char p[64];

	if (!(off->valid & ASC_PYOFF_CODE)) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	snprintf(p, sizeof(p), "/proc/%d/mem", pid);
	r->memfd = open(p, O_RDONLY | O_CLOEXEC);
	if (r->memfd < 0) {
		int e = errno;

		free(r);
		errno = e == ENOENT ? ESRCH : e;
		return NULL;
	}
	r->pid = pid;
	r->off = *off;
	return r;
}

void asc_pystack_resolver_free(struct asc_pystack_resolver *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nr_codes; i++) {
		free(r->codes[i].file);
		free(r->codes[i].func);
		free(r->codes[i].table);
	}
	free(r->codes);
	free(r->seen);
	close(r->memfd);
	free(r);
}

static int rd(struct asc_pystack_resolver *r, uint64_t addr, void *buf, size_t len)
{
	return pread(r->memfd, buf, len, addr) == (ssize_t)len ? 0 : -EFAULT;
}

/* A compact ASCII str object; non-ASCII names are left empty (never guessed). */
static char *read_str(struct asc_pystack_resolver *r, uint64_t obj)
{
	int64_t n;
	uint8_t state;
	char *s;

	if (!obj || rd(r, obj + r->off.str_length, &n, 8) ||
	    rd(r, obj + r->off.str_state, &state, 1))
		return NULL;
	/* state bits (Include/cpython/unicodeobject.h): compact 0x20, ascii 0x40 */
	if (n < 0 || n > 4096 || (state & 0x60) != 0x60)
		return strdup("");
	s = malloc(n + 1);
	if (!s)
		return NULL;
	if (rd(r, obj + r->off.str_ascii_data, s, n)) {
		free(s);
		return NULL;
	}
	s[n] = 0;
	return s;
}

static struct code_info *get_code(struct asc_pystack_resolver *r, uint64_t code)
{
	struct code_info ci = { .code = code }, *slot;
	uint64_t fname, name, table;
	int32_t first;
	int64_t tlen;
	size_t i;

	for (i = 0; i < r->nr_codes; i++)
		if (r->codes[i].code == code)
			return &r->codes[i];
	if (rd(r, code + r->off.co_filename, &fname, 8) || rd(r, code + r->off.co_name, &name, 8) ||
	    rd(r, code + r->off.co_firstlineno, &first, 4) ||
	    rd(r, code + r->off.co_linetable, &table, 8)) {
		asc_dbg("pystack: code object %#llx of pid %d unreadable\n",
			(unsigned long long)code, r->pid);
		return NULL;
	}
	if (rd(r, table + r->off.bytes_size, &tlen, 8) || tlen < 0 || tlen > (1 << 24)) {
		asc_dbg("pystack: line table of code object %#llx unreadable\n",
			(unsigned long long)code);
		return NULL;
	}
	ci.firstlineno = first;
	ci.file = read_str(r, fname);
	ci.func = read_str(r, name);
	ci.table = malloc(tlen ? tlen : 1);
	ci.table_len = tlen;
	if (!ci.file || !ci.func || !ci.table || rd(r, table + r->off.bytes_data, ci.table, tlen)) {
		free(ci.file);
		free(ci.func);
		free(ci.table);
		return NULL;
	}
	if (r->nr_codes == r->cap_codes) {
		size_t cap = r->cap_codes ? r->cap_codes * 2 : 64;
		void *p = realloc(r->codes, cap * sizeof(*r->codes));

		if (!p) {
			free(ci.file);
			free(ci.func);
			free(ci.table);
			return NULL;
		}
		r->codes = p;
		r->cap_codes = cap;
	}
	slot = &r->codes[r->nr_codes++];
	*slot = ci;
	return slot;
}

int asc_pystack_frame(struct asc_pystack_resolver *r, uint64_t code, int32_t lasti, char *buf,
		      size_t len, int *line)
{
	struct code_info *ci = get_code(r, code);
	int l = -1;

	if (!ci)
		return -EFAULT;
	if (asc_py_linetable_line(ci->table, ci->table_len, ci->firstlineno, lasti, &l))
		l = -1;
	if (line)
		*line = l;
	snprintf(buf, len, "%s(%d): %s", ci->file, l, ci->func);
	return 0;
}

int asc_pystack_resolve_rec(struct asc_pystack_resolver *r, const struct asc_pystack *rec,
			    asc_pyframe_emit_fn emit, void *ctx)
{
	union {
		struct asc_pyframe f;
		char raw[sizeof(struct asc_pyframe) + 1024];
	} u;
	uint32_t i, nr = rec->nr < ASC_PY_DEPTH ? rec->nr : ASC_PY_DEPTH;
	int emitted = 0;

	for (i = 0; i < nr; i++) {
		size_t j, tl, size;
		int line, err;

		for (j = 0; j < r->nr_seen; j++)
			if (r->seen[j].code == rec->code[i] && r->seen[j].lasti == rec->lasti[i])
				break;
		if (j < r->nr_seen)
			continue;
		if (asc_pystack_frame(r, rec->code[i], rec->lasti[i], u.f.text,
				      sizeof(u.raw) - sizeof(u.f), &line))
			continue;
		if (r->nr_seen == r->cap_seen) {
			size_t cap = r->cap_seen ? r->cap_seen * 2 : 256;
			void *p = realloc(r->seen, cap * sizeof(*r->seen));

			if (!p)
				return -ENOMEM;
			r->seen = p;
			r->cap_seen = cap;
		}
		r->seen[r->nr_seen].code = rec->code[i];
		r->seen[r->nr_seen++].lasti = rec->lasti[i];
		tl = strlen(u.f.text) + 1;
		size = (sizeof(u.f) + tl + 7) & ~7ul;
		memset(u.f.text + tl, 0, size - sizeof(u.f) - tl);
		memset(&u.f.hdr, 0, sizeof(u.f.hdr));
		u.f.hdr.type = ASC_REC_PYFRAME;
		u.f.hdr.size = size;
		u.f.hdr.tgid = r->pid;
		u.f.hdr.tid = rec->hdr.tid;
		u.f.hdr.ts_ns = rec->hdr.ts_ns;
		u.f.code = rec->code[i];
		u.f.lasti = rec->lasti[i];
		u.f.line = line;
		err = emit(&u.f, size, ctx);
		if (err)
			return err;
		emitted++;
	}
	return emitted;
}

int asc_pystack_join(const struct asc_pystack *rec, asc_pyframe_lookup_fn lookup, void *ctx,
		     char *buf, size_t len)
{
	uint32_t i, nr = rec->nr < ASC_PY_DEPTH ? rec->nr : ASC_PY_DEPTH;
	size_t pos = 0;

	if (len)
		buf[0] = 0;
	for (i = 0; i < nr; i++) {
		const char *t = lookup(rec->code[i], rec->lasti[i], ctx);
		int n;

		if (!t)
			continue;
		n = snprintf(buf + pos, pos < len ? len - pos : 0, "%s%s", pos ? ";" : "", t);
		if (n < 0)
			return -EINVAL;
		pos += n;
	}
	if (pos >= len && len)
		buf[len - 1] = 0;
	return pos;
}
