// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pytorch.c - aten op names and schemas, and the c10::TensorImpl layout of
 * the PyTorch build in the target, read out of machine code (ELF symbols
 * through discovery/elfsym.h, the x86-64 decoder of arch/x86.h for the
 * instructions small accessors consist of).
 *
 * Why machine code: Debian ships no debug data for libtorch or for this exact
 * python3.11 build, and layouts change between versions.  The exported
 * accessors (TensorImpl::dim_custom, PyFrame_GetCode, ...) are a few loads
 * each; decoding them gives the offsets this very binary uses.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "arch/arch.h"
#include "arch/x86.h"
#include "discovery/elfsym.h"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "lib/procmaps.h"
#include "discovery/probes.h"
#include "discovery/pystack.h"
#include "discovery/pytorch.h"
#include "discovery/seqnr.h"
#include "schedule.h"
#include "pytorch_bpf.h"
#include "pytorch.skel.h"

static int is_load(const struct asc_insn *in, int base)
{
	return in->opcode == 0x8b && !in->op2 && in->mem && in->base == base && in->index < 0;
}

/* ---- c10::TensorImpl ---- */

#define SYM_DIM_CUSTOM	 "_ZNK3c1010TensorImpl10dim_customEv"
#define SYM_SIZES_CUSTOM "_ZNK3c1010TensorImpl12sizes_customEv"
#define SYM_CTOR_TYPEMETA \
	"_ZN3c1010TensorImplC2EONS_7StorageENS_14DispatchKeySetEN6caffe28TypeMetaENS_8optionalINS_6DeviceEEE"
#define SYM_CTOR_TYPEMETA_C1 \
	"_ZN3c1010TensorImplC1EONS_7StorageENS_14DispatchKeySetEN6caffe28TypeMetaENS_8optionalINS_6DeviceEEE"

#define MAX_INSNS 512

/*
 * dim_custom() ends its fast path with "mov D(%rdi),%rax; [pop]; ret": D is
 * sizes_and_strides_.size_.  (The other returns load through a pointer first.)
 */
static int find_dim_off(const struct asc_insn *in, int n, uint32_t *dim_off)
{
	int i, j;

	for (i = 0; i < n; i++) {
		if (!is_load(&in[i], ASC_X86_RDI) || in[i].reg != ASC_X86_RAX || in[i].opsize != 8)
			continue;
		for (j = i + 1; j < n && in[j].opcode >= 0x58 && in[j].opcode <= 0x5f; j++)
			;
		if (j < n && in[j].opcode == 0xc3 && in[i].disp > 0) {
			*dim_off = in[i].disp;
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * sizes_custom(): "mov D(%rdi),%rX; cmp $N,%rX; ja <out of line>; lea S(%rdi),%rax"
 * and on the out-of-line path "mov S(%rdi),%rax": inline while size <= N.
 */
static int find_sizes(const struct asc_insn *in, int n, uint32_t dim_off, uint32_t *sizes_off,
		      uint32_t *inline_max)
{
	int i, j;

	for (i = 0; i + 1 < n; i++) {
		if (!is_load(&in[i], ASC_X86_RDI) || in[i].disp != dim_off)
			continue;
		if (in[i + 1].opcode != 0x83 || in[i + 1].mem || (in[i + 1].reg & 7) != 7 ||
		    in[i + 1].rm != in[i].reg)
			continue;
		for (j = i + 2; j < n && j < i + 6; j++) {
			if (in[j].opcode == 0x8d && in[j].mem && in[j].base == ASC_X86_RDI &&
			    in[j].index < 0 && in[j].disp > 0) {
				*sizes_off = in[j].disp;
				*inline_max = in[i + 1].imm;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* TensorImpl(Storage&&, DispatchKeySet, TypeMeta, ...): "mov %cx,D(%rdi)" stores data_type_. */
static int find_dtype_off(const struct asc_insn *in, int n, uint32_t *dtype_off)
{
	int i;

	for (i = 0; i < n; i++) {
		if (in[i].opcode == 0x89 && !in[i].op2 && in[i].opsize == 2 && in[i].mem &&
		    in[i].base == ASC_X86_RDI && in[i].index < 0 && in[i].reg == ASC_X86_RCX &&
		    in[i].disp > 0) {
			*dtype_off = in[i].disp;
			return 0;
		}
	}
	return -ENOENT;
}

int asc_tensor_layout_discover(const char *path, struct asc_tensor_layout *tl)
{
	static uint8_t code[4096];
	static struct asc_insn in[MAX_INSNS];
	uint64_t va;
	size_t len;
	int n, err;

	memset(tl, 0, sizeof(*tl));
	err = asc_elf_read_func(path, SYM_DIM_CUSTOM, code, sizeof(code), &len, &va);
	if (!err) {
		n = asc_x86_decode_all(code, len, va, in, MAX_INSNS);
		err = find_dim_off(in, n, &tl->dim_off);
	}
	if (!err) {
		err = asc_elf_read_func(path, SYM_SIZES_CUSTOM, code, sizeof(code), &len, &va);
		if (!err) {
			n = asc_x86_decode_all(code, len, va, in, MAX_INSNS);
			err = find_sizes(in, n, tl->dim_off, &tl->sizes_off, &tl->inline_max);
		}
	}
	if (!err && tl->inline_max > 0 && tl->inline_max <= 64)
		tl->valid |= ASC_TL_DIMS;
	else
		asc_dbg("%s: TensorImpl sizes layout not found (%d)\n", path, err);

	err = asc_elf_read_func(path, SYM_CTOR_TYPEMETA, code, sizeof(code), &len, &va);
	if (err)
		err = asc_elf_read_func(path, SYM_CTOR_TYPEMETA_C1, code, sizeof(code), &len, &va);
	if (!err) {
		n = asc_x86_decode_all(code, len, va, in, MAX_INSNS);
		err = find_dtype_off(in, n, &tl->dtype_off);
	}
	if (!err)
		tl->valid |= ASC_TL_DTYPE;
	else
		asc_dbg("%s: TensorImpl data_type_ not found (%d)\n", path, err);
	return tl->valid ? 0 : -ENOENT;
}

/* ---- schemas ---- */

struct schema_ent {
	char *head;	    /* "add.Tensor" (name[.overload]) */
	const char *schema; /* points into the library copy: "add.Tensor(...) -> ..." */
	int full;	    /* 1: head is a whole string, 0: a suffix of a longer one */
};

struct asc_aten_schemas {
	char *data; /* .rodata copy */
	size_t data_len;
	struct schema_ent *ents;
	size_t nr, cap;
	struct asc_idxmap index; /* head -> its entry in ents */
};

static int is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

static int add_ent(struct asc_aten_schemas *s, const char *head, size_t hlen, const char *schema,
		   int full)
{
	struct schema_ent *e;

	if (s->nr == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4096;
		void *p = realloc(s->ents, cap * sizeof(*s->ents));

		if (!p)
			return -ENOMEM;
		s->ents = p;
		s->cap = cap;
	}
	e = &s->ents[s->nr];
	e->head = strndup(head, hlen);
	if (!e->head)
		return -ENOMEM;
	e->schema = schema;
	e->full = full;
	s->nr++;
	return 0;
}

/*
 * A schema string: "ident[.ident](...) -> ...".  The linker merges strings
 * that are suffixes of others ("addmm(...)" lives inside "sspaddmm(...)"),
 * so every identifier boundary of the head starts a candidate too.
 */
static int scan_string(struct asc_aten_schemas *s, const char *str, size_t len)
{
	const char *paren = memchr(str, '(', len), *q;
	size_t hlen, i;
	int err;

	if (!paren || paren == str || !memmem(paren, len - (paren - str), ") -> ", 5))
		return 0;
	hlen = paren - str;
	if (hlen > 120)
		return 0;
	for (q = str; q < paren; q++)
		if (!is_ident(*q) && *q != '.')
			return 0;
	if (str[0] == '.' || (str[0] >= '0' && str[0] <= '9'))
		return 0;
	for (i = 0; i < hlen; i++) {
		if (str[i] == '.')
			break;
		err = add_ent(s, str + i, hlen - i, str + i, i == 0);
		if (err)
			return err;
	}
	return 0;
}

static int ent_is(const void *ctx, uint32_t idx, const void *head)
{
	const struct asc_aten_schemas *s = ctx;

	return !strcmp(s->ents[idx].head, head);
}

/*
 * Indexes one entry per head: the first, unless a later one is a whole
 * string and the first a suffix (a whole string beats a suffix): then the
 * two trade places in ents, so the indexed place holds the whole string.
 */
static int build_hash(struct asc_aten_schemas *s)
{
	size_t i;

	for (i = 0; i < s->nr; i++) {
		struct schema_ent *e = &s->ents[i];
		uint64_t h = asc_hash_str(e->head);
		uint32_t at;
		int err;

		if (asc_idxmap_find(&s->index, h, ent_is, s, e->head, &at)) {
			if (e->full && !s->ents[at].full) {
				struct schema_ent first = s->ents[at];

				s->ents[at] = *e;
				*e = first;
			}
			continue;
		}
		err = asc_idxmap_add(&s->index, h, i);
		if (err)
			return err;
	}
	return 0;
}

static const struct schema_ent *find_ent(const struct asc_aten_schemas *s, const char *head)
{
	uint32_t at;

	if (!s || !asc_idxmap_find(&s->index, asc_hash_str(head), ent_is, s, head, &at))
		return NULL;
	return &s->ents[at];
}

void asc_aten_schemas_free(struct asc_aten_schemas *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nr; i++)
		free(s->ents[i].head);
	free(s->ents);
	asc_idxmap_free(&s->index);
	free(s->data);
	free(s);
}

size_t asc_aten_schemas_count(const struct asc_aten_schemas *s)
{
	size_t i, n = 0;

	for (i = 0; s && i < s->nr; i++)
		n += s->ents[i].full;
	return n;
}

struct asc_aten_schemas *asc_aten_schemas_load(const char *path)
{
	struct asc_aten_schemas *s = calloc(1, sizeof(*s));
	struct asc_elf *elf;
	uint64_t off, size;
	size_t i, start;
	int err;

	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	err = asc_elf_open_lazy(path, &elf);
	if (err) {
		asc_err("%s: cannot read as ELF (%s)\n", path, strerror(-err));
		free(s);
		errno = -err;
		return NULL;
	}
	err = asc_elf_section(elf, ".rodata", SHT_PROGBITS, &off, &size);
	if (err)
		goto out;
	s->data = malloc(size + 1);
	if (!s->data) {
		err = -ENOMEM;
		goto out;
	}
	err = asc_elf_pread(elf, off, s->data, size);
	if (err)
		goto out;
	s->data[size] = 0;
	s->data_len = size;
	for (i = 0, start = 0; i <= s->data_len; i++) {
		if (i < s->data_len && s->data[i])
			continue;
		if (i > start + 4) {
			err = scan_string(s, s->data + start, i - start);
			if (err)
				goto out;
		}
		start = i + 1;
	}
	err = build_hash(s);
out:
	asc_elf_close(elf);
	if (err) {
		if (err == -ENOENT)
			asc_err("%s: no .rodata section\n", path);
		asc_aten_schemas_free(s);
		errno = -err;
		return NULL;
	}
	return s;
}

/* ---- names ---- */

int asc_aten_struct_name(const char *sym, char *buf, size_t len)
{
	static const char prefix[] = "_ZN2at4_ops";
	const char *p;
	char *end;
	unsigned long n;

	if (!sym || strncmp(sym, prefix, sizeof(prefix) - 1))
		return -EINVAL;
	p = sym + sizeof(prefix) - 1;
	if (*p < '1' || *p > '9')
		return -EINVAL;
	n = strtoul(p, &end, 10);
	if (n == 0 || strnlen(end, n) < n || strncmp(end + n, "4callE", 6))
		return -EINVAL;
	if (n + 1 > len)
		return -ENAMETOOLONG;
	memcpy(buf, end, n);
	buf[n] = 0;
	return 0;
}

/* ---- schema parsing and register assignment (x86-64 SysV) ---- */

/*
 * How torchgen's dispatcher signature (at::_ops::<op>::call) passes each
 * schema type, in integer registers.  Sizes and triviality are those of this
 * build's headers (libtorch-dev 1.13: c10::optional<T> is {bool init_; T} for
 * plain T, OptionalArrayRef is 16 bytes without a flag, SymInt and Scalar are
 * not trivially copyable and so go by reference):
 *   Tensor / Tensor(a) / Tensor(a!)      const Tensor & / Tensor &      1, TENSOR
 *   Tensor?                              const optional<Tensor> &       1, OPT_TENSOR
 *   Tensor[] / Tensor(a!)[]              ArrayRef<Tensor> by value      2, TENSOR_LIST
 *   Tensor?[] (const List<optional<Tensor>> &), Scalar, Scalar?, Generator?,
 *   Storage, SymInt, SymInt?, int, bool, ScalarType, Layout, MemoryFormat,
 *   Device, Dimname and their 1..8-byte optionals, bool[N]             1
 *   int[] / SymInt[] / float[] / Dimname[] / Scalar[] and their ?-forms,
 *   Tensor[]?, int?, Dimname?, Stream (16 trivially copyable bytes)      2
 *   float (double, SSE)                                                   0
 *   float? (optional<double>: an INTEGER then an SSE eightbyte)           1
 * A 2-register argument that does not fit in the remaining registers goes
 * on the stack as a whole.  Anything else (str: c10::string_view's calling
 * convention is not certain from the headers) stops the mapping: later
 * arguments get reg -1, we never guess a register.
 */
static int type_regs(const char *t, uint8_t *kind)
{
	size_t n = strlen(t);
	int opt = n && t[n - 1] == '?';
	int list = strchr(t, '[') != NULL;
	char base[32];
	size_t i;

	*kind = ASC_ARGK_OTHER;
	for (i = 0; t[i] && t[i] != '[' && t[i] != '(' && t[i] != '?' && i < sizeof(base) - 1; i++)
		base[i] = t[i];
	base[i] = 0;
	if (!strcmp(base, "Tensor")) {
		if (list) {
			if (strstr(t, "?[]"))
				return 1; /* const List<optional<Tensor>> & */
			if (!opt)
				*kind = ASC_ARGK_TENSOR_LIST;
			return 2; /* ArrayRef / optional<ArrayRef>: 16 bytes */
		}
		*kind = opt ? ASC_ARGK_OPT_TENSOR : ASC_ARGK_TENSOR;
		return 1;
	}
	if (list) {
		if (!strcmp(base, "bool"))
			return opt ? -1 : 1; /* std::array<bool, N> */
		if (!strcmp(base, "int") || !strcmp(base, "SymInt") || !strcmp(base, "float") ||
		    !strcmp(base, "Dimname") || !strcmp(base, "Scalar"))
			return 2;
		return -1;
	}
	if (!strcmp(base, "float"))
		return opt ? 1 : 0;
	if (!strcmp(base, "int") || !strcmp(base, "Dimname"))
		return opt ? 2 : 1;
	if (!strcmp(base, "Stream"))
		return opt ? -1 : 2;
	if (!strcmp(base, "Scalar") || !strcmp(base, "Generator") || !strcmp(base, "Storage") ||
	    !strcmp(base, "SymInt") || !strcmp(base, "bool") || !strcmp(base, "ScalarType") ||
	    !strcmp(base, "Layout") || !strcmp(base, "MemoryFormat") || !strcmp(base, "Device"))
		return 1;
	return -1;
}

/*
 * Returns are by hidden pointer (arch/arch.h: rdi, x8) unless void, a reference or a small
 * trivially copyable value.
 */
static int returns_sret(const char *rets)
{
	while (*rets == ' ')
		rets++;
	if (!strcmp(rets, "()") || !strcmp(rets, "bool") || !strcmp(rets, "int") ||
	    !strcmp(rets, "float") || !strcmp(rets, "ScalarType") || !strcmp(rets, "SymInt") ||
	    !strcmp(rets, "QScheme") || !strcmp(rets, "Layout"))
		return 0;
	if (!strncmp(rets, "Tensor(", 7) && strstr(rets, "!)") && !strchr(rets, ',') &&
	    !strchr(rets, '['))
		return 0; /* Tensor & */
	if (rets[0] == '(') {
		/* std::tuple<Tensor &, Tensor &> is trivially copyable: rax:rdx */
		const char *c = strchr(rets, ',');

		if (c && !strchr(c + 1, ',') && strstr(rets, "!)") &&
		    strstr(strstr(rets, "!)") + 2, "!)") && !strchr(rets, '['))
			return 0;
	}
	return 1;
}

int asc_aten_parse_schema(const char *schema, struct asc_aten_op *op)
{
	const char *p = schema, *paren, *close, *arrow;
	int depth, reg, stop = 0;
	size_t n;

	memset(op, 0, sizeof(*op));
	paren = strchr(p, '(');
	if (!paren || paren == p)
		return -EINVAL;
	/* matching ')' of the argument list */
	for (close = paren, depth = 0; *close; close++) {
		if (*close == '(')
			depth++;
		else if (*close == ')' && --depth == 0)
			break;
	}
	if (!*close)
		return -EINVAL;
	arrow = strstr(close, " -> ");
	if (!arrow)
		return -EINVAL;
	{
		const char *dot = memchr(p, '.', paren - p);
		size_t nl = (dot ? dot : paren) - p;
		int has_ns = memmem(p, nl, "::", 2) != NULL;

		if (nl + 7 > sizeof(op->name))
			return -EINVAL;
		snprintf(op->name, sizeof(op->name), "%s%.*s", has_ns ? "" : "aten::", (int)nl, p);
		if (dot) {
			n = paren - dot - 1;
			if (n >= sizeof(op->overload))
				return -EINVAL;
			memcpy(op->overload, dot + 1, n);
			op->overload[n] = 0;
		}
	}
	op->sret = returns_sret(arrow + 4);
	reg = op->sret && asc_arch_target()->sret_shifts_args; /* x86-64: rdi; aarch64: x8 */
	p = paren + 1;
	while (p < close) {
		const char *end = p, *sp;
		struct asc_aten_arg *a;
		int nr;

		for (depth = 0; end < close; end++) {
			if (*end == '(' || *end == '[')
				depth++;
			else if (*end == ')' || *end == ']')
				depth--;
			else if (*end == ',' && depth == 0)
				break;
		}
		while (p < end && *p == ' ')
			p++;
		if (end - p == 1 && *p == '*') {
			p = end + 1;
			continue;
		}
		if (op->nargs == ASC_ATEN_MAX_ARGS)
			return -E2BIG;
		a = &op->args[op->nargs++];
		/* "Type name[=default]": the type may contain spaces only inside (...) */
		for (sp = p, depth = 0; sp < end; sp++) {
			if (*sp == '(')
				depth++;
			else if (*sp == ')')
				depth--;
			else if (*sp == ' ' && depth == 0)
				break;
		}
		n = sp - p;
		snprintf(a->type, sizeof(a->type), "%.*s", (int)n, p);
		if (sp < end) {
			const char *eq = memchr(sp, '=', end - sp);
			const char *ne = eq ? eq : end;

			snprintf(a->name, sizeof(a->name), "%.*s", (int)(ne - sp - 1), sp + 1);
		}
		a->reg = -1;
		nr = stop ? -1 : type_regs(a->type, &a->kind);
		if (nr < 0) {
			stop = 1; /* unknown passing: later registers are unknown */
			a->kind = ASC_ARGK_OTHER;
		} else if (nr > 0 && reg + nr <= 6) {
			a->reg = reg;
			a->nregs = nr;
			reg += nr;
		} else if (nr == 0) {
			a->kind = ASC_ARGK_OTHER;
		} else {
			a->kind = ASC_ARGK_OTHER; /* on the stack */
			if (nr == 1)
				reg = 6;
		}
		p = end + 1;
	}
	return 0;
}

/* Overload names that look like words of an op name: used only without schemas. */
static int looks_like_overload(const char *s)
{
	static const char *const words[] = { "out",    "int",	     "dim",   "self",  "names",
					     "Tensor", "Scalar",     "input", "other", "grad_input",
					     "values", "using_ints", "float", NULL };
	int i;

	if (*s >= 'A' && *s <= 'Z')
		return 1;
	for (i = 0; words[i]; i++)
		if (!strcmp(s, words[i]))
			return 1;
	return 0;
}

int asc_aten_name(const struct asc_aten_schemas *s, const char *sym, struct asc_aten_op *op)
{
	char st[256], head[260];
	const struct schema_ent *best = NULL;
	size_t n, i;
	int err = asc_aten_struct_name(sym, st, sizeof(st));

	if (err)
		return err;
	memset(op, 0, sizeof(*op));
	n = strlen(st);
	/* Candidates: "st" (no overload) and "name.overload" for every '_' split. */
	best = find_ent(s, st);
	if (!best || !best->full) {
		for (i = n - 1; i > 0; i--) {
			const struct schema_ent *e;

			if (st[i] != '_' || i == n - 1)
				continue;
			snprintf(head, sizeof(head), "%.*s.%s", (int)i, st, st + i + 1);
			e = find_ent(s, head);
			if (e && (!best || (e->full && !best->full)))
				best = e;
			if (best && best->full)
				break;
		}
	}
	if (best) {
		err = asc_aten_parse_schema(best->schema, op);
		if (!err) {
			op->exact = 1;
			return 0;
		}
		memset(op, 0, sizeof(*op));
	}
	/* No schema: split at the last '_' followed by an overload-looking word. */
	for (i = n - 1; i > 0; i--) {
		if (st[i] == '_' && i < n - 1 && st[i - 1] != '_' &&
		    looks_like_overload(st + i + 1))
			break;
	}
	if (i > 0) {
		snprintf(op->name, sizeof(op->name), "aten::%.*s", (int)i, st);
		snprintf(op->overload, sizeof(op->overload), "%s", st + i + 1);
	} else {
		snprintf(op->name, sizeof(op->name), "aten::%s", st);
	}
	return 0;
}

/* ---- trace hooks ---- */

#define SYM_UNDEFINED_SINGLETON "_ZN3c1019UndefinedTensorImpl10_singletonE"

struct asc_pytorch {
	pid_t pid;
	struct asc_pytorch_opts opts;
	struct pytorch_bpf *skel;
	struct asc_aten_schemas *schemas;
	struct asc_tensor_layout tl;
	struct asc_py_offsets py;
	char c10_path[4096], torch_path[4096], py_path[4096];
	uint64_t c10_bias, py_bias;
	int shapes, pystack, step_py; /* what is switched on after discovery */
	int seqnr;		      /* SEQNR records (autograd sequence numbers) */
	struct asc_seqnr_tls tls;
	uint64_t torch_bias;
	struct bpf_link *mem_link;
	int nr_sites, nr_mapped;
};

/* Host path and load bias of the first mapping of a file whose basename starts with prefix. */
static int find_mapped(pid_t pid, const char *prefix, char *path, size_t len, uint64_t *bias)
{
	const char *const prefixes[] = { prefix, NULL };

	return asc_elf_find_image(pid, prefixes, NULL, path, len, bias);
}

static void discover_shapes(struct asc_pytorch *pt)
{
	struct asc_elf_sym und;
	const char *c10 = pt->opts.libc10_path;
	struct asc_elf *held = NULL;

	if (!c10) {
		if (find_mapped(pt->pid, "libc10.so", pt->c10_path, sizeof(pt->c10_path),
				&pt->c10_bias)) {
			asc_warn("pytorch: libc10.so is not mapped in pid %d; no tensor shapes\n",
				 pt->pid);
			return;
		}
		c10 = pt->c10_path;
	} else {
		snprintf(pt->c10_path, sizeof(pt->c10_path), "%s", c10);
		find_mapped(pt->pid, "libc10.so", pt->c10_path, sizeof(pt->c10_path),
			    &pt->c10_bias);
	}
	asc_elf_open_lazy(c10, &held); /* HELD_OPEN */
	if (asc_tensor_layout_discover(c10, &pt->tl) || !(pt->tl.valid & ASC_TL_DIMS)) {
		asc_warn("pytorch: no c10::TensorImpl layout found in %s; no tensor shapes\n", c10);
		asc_elf_close(held);
		return;
	}
	if (!asc_elf_lookup(c10, SYM_UNDEFINED_SINGLETON, &und))
		pt->skel->rodata->cfg.undefined_impl = und.vaddr + pt->c10_bias;
	asc_elf_close(held);
	pt->skel->rodata->cfg.tl_dim_off = pt->tl.dim_off;
	pt->skel->rodata->cfg.tl_sizes_off = pt->tl.sizes_off;
	pt->skel->rodata->cfg.tl_inline_max = pt->tl.inline_max;
	pt->skel->rodata->cfg.tl_dtype_off = (pt->tl.valid & ASC_TL_DTYPE) ? pt->tl.dtype_off : 0;
	/* c10::optional<at::Tensor>: {bool init_; Tensor value} (c10/util/Optional.h optional_base) */
	pt->skel->rodata->cfg.opt_value_off = 8;
	pt->skel->rodata->cfg.shapes = 1;
	pt->shapes = 1;
}

static int discover_python(struct asc_pytorch *pt)
{
	struct asc_elf *held = NULL;
	int err;

	if (pt->opts.python_path) {
		snprintf(pt->py_path, sizeof(pt->py_path), "%s", pt->opts.python_path);
		if (asc_py_find_image(pt->pid, pt->py_path, sizeof(pt->py_path), &pt->py_bias))
			pt->py_bias = 0;
		snprintf(pt->py_path, sizeof(pt->py_path), "%s", pt->opts.python_path);
	} else if (asc_py_find_image(pt->pid, pt->py_path, sizeof(pt->py_path), &pt->py_bias)) {
		return -ENOENT;
	}
	asc_elf_open_lazy(pt->py_path, &held); /* HELD_OPEN */
	err = asc_py_offsets_discover(pt->py_path, &pt->py);
	asc_elf_close(held);
	return err;
}

/* The CPython frame walk (thread states, frames, code objects) in the object's config. */
static void set_frame_walk(struct asc_pytorch *pt)
{
	const struct asc_py_offsets *o = &pt->py;
	volatile struct asc_pt_cfg *c = &pt->skel->rodata->cfg;

	c->runtime_addr = o->runtime_vaddr + pt->py_bias;
	c->rt_interp_head = o->rt_interp_head;
	c->is_threads_head = o->is_threads_head;
	c->ts_next = o->ts_next;
	c->ts_thread_id = o->ts_thread_id;
	c->ts_cframe = o->ts_cframe;
	c->cf_current_frame = o->cf_current_frame;
	c->fr_code = o->fr_code;
	c->fr_previous = o->fr_previous;
	c->fr_prev_instr = o->fr_prev_instr;
	c->co_code_adaptive = o->co_code_adaptive;
	c->tp_self_off = (uint32_t)asc_arch_tp_self_off();
}

static void discover_stack(struct asc_pytorch *pt)
{
	const struct asc_py_offsets *o = &pt->py;
	volatile struct asc_pt_cfg *c = &pt->skel->rodata->cfg;

	if ((o->valid & (ASC_PYOFF_THREADS | ASC_PYOFF_FRAMES)) !=
	    (ASC_PYOFF_THREADS | ASC_PYOFF_FRAMES)) {
		asc_warn("pytorch: no CPython 3.11 frame layout in pid %d; no Python stacks\n",
			 pt->pid);
		return;
	}
	if (!(o->valid & ASC_PYOFF_CODE))
		asc_warn("pytorch: CPython code objects cannot be read; stacks stay unresolved\n");
	set_frame_walk(pt);
	c->pystack = 1;
	pt->pystack = 1;
}

/* --step-py needs the frame walk of --with-stack and co_name / str layouts. */
static void discover_step_py(struct asc_pytorch *pt)
{
	const struct asc_py_offsets *o = &pt->py;
	volatile struct asc_pt_cfg *c = &pt->skel->rodata->cfg;
	size_t n = strlen(pt->opts.step_py);

	if (n == 0 || n >= ASC_PT_STEP_NAME_LEN) {
		asc_warn("pytorch: --step-py name must have 1..%d bytes; no Python step boundary\n",
			 ASC_PT_STEP_NAME_LEN - 1);
		return;
	}
	if (o->valid != ASC_PYOFF_ALL) {
		asc_warn("pytorch: no CPython 3.11 layout in pid %d; no --step-py boundary\n",
			 pt->pid);
		return;
	}
	set_frame_walk(pt);
	c->co_name = o->co_name;
	c->str_state = o->str_state;
	c->str_ascii_data = o->str_ascii_data;
	c->step_name_len = n;
	c->step_absent_only = pt->opts.step_py_default;
	memcpy((char *)c->step_name, pt->opts.step_py, n + 1);
	c->step_py = 1;
	pt->step_py = 1;
}

/*
 * Sequence numbers need the counter's TLS slot (seqnr.h); backward node
 * ranges need only the Node layout.  Both come with libtorch_cpu.so.
 */
static void discover_seqnr(struct asc_pytorch *pt)
{
	volatile struct asc_pt_cfg *c = &pt->skel->rodata->cfg;
	int err;

	c->node_seq_off = ASC_NODE_SEQ_OFF;
	c->node_tid_off = ASC_NODE_TID_OFF;
	c->node = 1;
	err = asc_seqnr_discover(pt->pid, pt->opts.libtorch_cpu_path, pt->torch_bias, &pt->tls);
	if (err) {
		asc_warn("pytorch: no at::sequence_number counter in %s (%s); cpu_ops get "
			 "Sequence number -1\n",
			 pt->opts.libtorch_cpu_path, strerror(-err));
		return;
	}
	c->seq_tlsidx = pt->tls.tlsidx_vaddr + pt->torch_bias;
	c->seq_disp = pt->tls.disp;
	c->seqnr = 1;
	pt->seqnr = 1;
}

struct asc_pytorch *asc_pytorch_open(pid_t pid, const struct asc_pytorch_opts *opts)
{
	struct asc_pytorch *pt = calloc(1, sizeof(*pt));
	struct asc_elf *held = NULL;
	int err;

	if (!pt)
		return NULL;
	pt->pid = pid;
	pt->opts = *opts;
	pt->skel = pytorch_bpf__open();
	if (!pt->skel) {
		err = -errno;
		asc_err("pytorch: cannot open the BPF object: %s\n", strerror(-err));
		free(pt);
		errno = -err;
		return NULL;
	}
	if (opts->record_shapes)
		discover_shapes(pt);
	if (!opts->profile_memory)
		bpf_program__set_autoload(pt->skel->progs.asc_c10_mem_enter, false);
	if (opts->with_stack || opts->step_py) {
		/* the default step boundary is only tried: a C++ job has no interpreter */
		if (discover_python(pt) && (opts->with_stack || !opts->step_py_default))
			asc_warn("pytorch: pid %d runs no CPython 3.11 interpreter we can read\n",
				 pid);
	}
	if (opts->with_stack && pt->py.valid)
		discover_stack(pt);
	if (opts->step_py && pt->py.valid)
		discover_step_py(pt);
	else if (opts->step_py && !opts->step_py_default)
		asc_warn("pytorch: no --step-py boundary without a readable CPython 3.11\n");
	if (!pt->opts.libtorch_cpu_path) {
		if (!find_mapped(pid, "libtorch_cpu.so", pt->torch_path, sizeof(pt->torch_path),
				 &pt->torch_bias))
			pt->opts.libtorch_cpu_path = pt->torch_path;
	} else {
		char host[4096];

		if (!find_mapped(pid, "libtorch_cpu.so", host, sizeof(host), &pt->torch_bias))
			snprintf(pt->torch_path, sizeof(pt->torch_path), "%s", host);
	}
	if (pt->opts.libtorch_cpu_path)
		asc_elf_open_lazy(pt->opts.libtorch_cpu_path, &held); /* HELD_OPEN */
	if (pt->opts.libtorch_cpu_path && pt->torch_path[0] && !opts->no_seqnr)
		discover_seqnr(pt);
	if (pt->shapes && pt->opts.libtorch_cpu_path) {
		pt->schemas = asc_aten_schemas_load(pt->opts.libtorch_cpu_path);
		if (!pt->schemas) {
			asc_warn("pytorch: no operator schemas in %s; no tensor shapes\n",
				 pt->opts.libtorch_cpu_path);
			pt->shapes = 0;
			pt->skel->rodata->cfg.shapes = 0;
		}
	}
	asc_elf_close(held);
	return pt;
}

int asc_pytorch_load(struct asc_pytorch *pt, int events_fd, int tgids_fd, int stats_fd,
		     const struct asc_sched *sched)
{
	int err = 0;

	if (events_fd >= 0)
		err = bpf_map__reuse_fd(pt->skel->maps.events, events_fd);
	if (!err && tgids_fd >= 0)
		err = bpf_map__reuse_fd(pt->skel->maps.tgids, tgids_fd);
	if (!err && stats_fd >= 0)
		err = bpf_map__reuse_fd(pt->skel->maps.stats, stats_fd);
	if (err) {
		asc_err("pytorch: cannot share the trace maps: %s\n", strerror(-err));
		return err;
	}
	if (sched)
		pt->skel->rodata->sched_cfg = *sched;
	/*
	 * The wake-up mark as the main object's (user/trace/trace.c: half the ring,
	 * whose size reuse_fd took over).  Left at its 1 MiB default, every
	 * aten record asked for a wake-up (a self-IPI) whenever more than 1 MiB
	 * of a 16 MiB ring waited for the 100 ms drain.
	 */
	pt->skel->rodata->wakeup_bytes = bpf_map__max_entries(pt->skel->maps.events) / 2;
	/* -EOPNOTSUPP: the kernel has no uprobe_multi, the programs stay single */
	if (pt->opts.prepare_prog) {
		pt->opts.prepare_prog(pt->skel->progs.asc_aten_enter);
		pt->opts.prepare_prog(pt->skel->progs.asc_aten_exit);
		pt->opts.prepare_prog(pt->skel->progs.asc_autograd_eval_enter);
		pt->opts.prepare_prog(pt->skel->progs.asc_autograd_eval_exit);
	}
	err = pytorch_bpf__load(pt->skel);
	if (err) {
		asc_err("pytorch: cannot load the BPF programs: %s\n", strerror(-err));
		return err;
	}
	return 0;
}

struct bpf_program *asc_pytorch_aten_prog(struct asc_pytorch *pt)
{
	return pt->skel->progs.asc_aten_enter;
}

struct bpf_program *asc_pytorch_aten_ret_prog(struct asc_pytorch *pt)
{
	return pt->skel->progs.asc_aten_exit;
}

struct bpf_program *asc_pytorch_autograd_prog(struct asc_pytorch *pt)
{
	return pt->skel->progs.asc_autograd_eval_enter;
}

struct bpf_program *asc_pytorch_autograd_ret_prog(struct asc_pytorch *pt)
{
	return pt->skel->progs.asc_autograd_eval_exit;
}

int asc_pytorch_seqnr(const struct asc_pytorch *pt)
{
	return pt->seqnr;
}

int asc_pytorch_events_fd(struct asc_pytorch *pt)
{
	return bpf_map__fd(pt->skel->maps.events);
}

int asc_pytorch_tgids_fd(struct asc_pytorch *pt)
{
	return bpf_map__fd(pt->skel->maps.tgids);
}

int asc_pytorch_add_site(struct asc_pytorch *pt, uint32_t probe_id, const char *sym)
{
	struct asc_pt_argspec spec = {};
	struct asc_aten_op op;
	int i, mapped = 0;

	pt->nr_sites++;
	if (!pt->shapes || asc_aten_name(pt->schemas, sym, &op))
		return 0;
	for (i = 0; i < op.nargs; i++) {
		const struct asc_aten_arg *a = &op.args[i];

		if (a->reg < 0 || a->reg > 5 || a->kind == ASC_ARGK_OTHER)
			continue;
		spec.kind[a->reg] = a->kind; /* enum asc_aten_argk == ASC_PT_ARG_* */
		spec.arg_index[a->reg] = i;
		mapped++;
	}
	if (!mapped)
		return 0;
	if (bpf_map_update_elem(bpf_map__fd(pt->skel->maps.aten_args), &probe_id, &spec, BPF_ANY))
		return -errno;
	pt->nr_mapped++;
	return 1;
}

int asc_pytorch_add_sites(struct asc_pytorch *pt, const struct asc_probe_plan *plan)
{
	size_t i;
	int n = 0, err;

	for (i = 0; i < plan->nr_sites; i++) {
		const struct asc_probe_site *s = &plan->sites[i];

		if (!s->spec || s->spec->kind != ASC_PK_ATEN_OP)
			continue;
		err = asc_pytorch_add_site(pt, s->id, s->sym);
		if (err < 0)
			return err;
		n += err;
	}
	return n;
}

int asc_pytorch_attach_step_py(struct asc_pytorch *pt)
{
	return pt->step_py ? 0 : -ENOENT;
}

const char *asc_pytorch_torch_lib(const struct asc_pytorch *pt, uint64_t *bias)
{
	*bias = pt->torch_bias;
	return pt->torch_path[0] ? pt->torch_path : NULL;
}

int asc_pytorch_describe(const struct asc_pytorch *pt, char *buf, size_t len)
{
	char root[64];
	const char *lib = pt->torch_path;
	size_t rl = snprintf(root, sizeof(root), "/proc/%d/root", pt->pid);
	int n;

	/* the library as the target names it: what convert reads the vtable symbols from */
	if (!strncmp(lib, root, rl) && lib[rl] == '/')
		lib += rl;
	n = snprintf(buf, len,
		     "pytorch_seqnr=%d\npytorch_seq_tls=module %llu offset %llu\n"
		     "pytorch_autograd_lib=%s\npytorch_autograd_bias=0x%llx\n",
		     pt->seqnr, (unsigned long long)pt->tls.modid,
		     (unsigned long long)pt->tls.offset, *lib ? lib : "-",
		     (unsigned long long)pt->torch_bias);
	if (n < 0 || (size_t)n >= len)
		return n;
	buf += n;
	len -= n;
	return n +
	       snprintf(
		       buf, len,
		       "pytorch_shapes=%d\npytorch_tensor_layout=dim@%u,sizes@%u,inline<=%u,dtype@%u\n"
		       "pytorch_aten_sites=%d\npytorch_aten_sites_with_tensors=%d\n"
		       "pytorch_pystack=%d\npytorch_python=%s\npytorch_step_py=%s\n",
		       pt->shapes, pt->tl.dim_off, pt->tl.sizes_off, pt->tl.inline_max,
		       pt->tl.dtype_off, pt->nr_sites, pt->nr_mapped, pt->pystack,
		       pt->py_path[0] ? pt->py_path : "-", pt->step_py ? pt->opts.step_py : "-");
}

#define SYM_REPORT_MEMORY "_ZN3c1027reportMemoryUsageToProfilerEPvlllNS_6DeviceE"

int asc_pytorch_attach_memory(struct asc_pytorch *pt)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = ASC_PYTORCH_MEM_ID);
	struct asc_elf_symbol sym;
	struct asc_elf *elf = NULL;
	uint64_t off;
	int err;

	if (!pt->c10_path[0] &&
	    find_mapped(pt->pid, "libc10.so", pt->c10_path, sizeof(pt->c10_path), &pt->c10_bias)) {
		asc_warn("pytorch: libc10.so is not mapped in pid %d; no PyTorch memory events\n",
			 pt->pid);
		return -ENOENT;
	}
	err = asc_elf_open_lazy(pt->c10_path, &elf);
	if (!err)
		err = asc_elf_scan_sym(elf, SYM_REPORT_MEMORY, &sym);
	if (!err)
		err = asc_elf_vaddr_to_off(elf, sym.vaddr, &off);
	asc_elf_close(elf);
	if (err) {
		asc_warn("pytorch: %s has no c10::reportMemoryUsageToProfiler; no PyTorch memory "
			 "events\n",
			 pt->c10_path);
		return err;
	}
	/* the prologue starts with push (emulated by the kernel): attach at the entry */
	pt->mem_link = bpf_program__attach_uprobe_opts(pt->skel->progs.asc_c10_mem_enter, pt->pid,
						       pt->c10_path, off, &uo);
	if (!pt->mem_link) {
		err = -errno;
		asc_err("pytorch: cannot attach c10::reportMemoryUsageToProfiler: %s\n",
			strerror(-err));
		return err;
	}
	return 0;
}

void asc_pytorch_close(struct asc_pytorch *pt)
{
	if (!pt)
		return;
	bpf_link__destroy(pt->mem_link);
	pytorch_bpf__destroy(pt->skel);
	asc_aten_schemas_free(pt->schemas);
	free(pt);
}
