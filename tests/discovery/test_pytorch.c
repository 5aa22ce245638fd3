// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_pytorch: aten names and schemas, register mapping, and the
 * c10::TensorImpl layout, against the installed PyTorch (python3-torch,
 * libtorch1.13).  Expected values come from PyTorch itself at run time
 * (torch._C._jit_get_all_schemas(), live tensors read through /proc/PID/mem),
 * never from this code.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <gelf.h>
#include <libelf.h>
#include <cmocka.h>

#include "arch/x86.h"
#include "discovery/pytorch.h"

#define LIBDIR	     "/usr/lib/x86_64-linux-gnu/"
#define LIBC10	     LIBDIR "libc10.so"
#define LIBTORCH_CPU LIBDIR "libtorch_cpu.so"
#define PYTHON	     "/usr/bin/python3"

/* ---- names without the library ---- */

/*
 * Register index of an argument of an op returning by value through memory,
 * given its index N on x86-64 (where the result pointer takes rdi): the
 * same on x86-64, one less on aarch64, where it goes in x8 (AAPCS64).
 */
#if defined(__x86_64__)
#define R(n) (n)
#else
#define R(n) ((n)-1)
#endif

static void test_struct_name(void **state)
{
	char buf[64];

	assert_int_equal(
		asc_aten_struct_name("_ZN2at4_ops10add_Tensor4callERKNS_6TensorES4_RKN3c106ScalarE",
				     buf, sizeof(buf)),
		0);
	assert_string_equal(buf, "add_Tensor");
	assert_int_equal(asc_aten_struct_name("_ZN2at4_ops5addmm4callERKNS_6TensorE", buf,
					      sizeof(buf)),
			 0);
	assert_string_equal(buf, "addmm");
	/* redispatch, other namespaces, truncated lengths are not op call symbols */
	assert_int_equal(asc_aten_struct_name("_ZN2at4_ops10add_Tensor10redispatchEN3c10", buf,
					      sizeof(buf)),
			 -EINVAL);
	assert_int_equal(asc_aten_struct_name("_ZN2at6native3addE", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(asc_aten_struct_name("_ZN2at4_ops99add", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(asc_aten_struct_name(NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(asc_aten_struct_name("_ZN2at4_ops5addmm4callE", buf, 4), -ENAMETOOLONG);
}

static void test_parse_schema_registers(void **state)
{
	struct asc_aten_op op;

	/* returns Tensor by value: hidden pointer in rdi, self in rsi */
	assert_int_equal(
		asc_aten_parse_schema(
			"add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", &op),
		0);
	assert_string_equal(op.name, "aten::add");
	assert_string_equal(op.overload, "Tensor");
	assert_int_equal(op.sret, 1);
	assert_int_equal(op.nargs, 3);
	assert_string_equal(op.args[0].name, "self");
	assert_int_equal(op.args[0].reg, R(1));
	assert_int_equal(op.args[0].kind, ASC_ARGK_TENSOR);
	assert_int_equal(op.args[1].reg, R(2));
	assert_int_equal(op.args[2].reg, R(3));
	assert_int_equal(op.args[2].kind, ASC_ARGK_OTHER);
	assert_string_equal(op.args[2].type, "Scalar");

	/* in-place: returns Tensor &, no hidden pointer */
	assert_int_equal(asc_aten_parse_schema("relu_(Tensor(a!) self) -> Tensor(a!)", &op), 0);
	assert_string_equal(op.name, "aten::relu_");
	assert_string_equal(op.overload, "");
	assert_int_equal(op.sret, 0);
	assert_int_equal(op.args[0].reg, 0);
	assert_int_equal(op.args[0].kind, ASC_ARGK_TENSOR);

	/* int[] takes two registers, float none, Tensor? is a reference */
	assert_int_equal(
		asc_aten_parse_schema(
			"native_layer_norm(Tensor input, SymInt[] "
			"normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)",
			&op),
		0);
	assert_int_equal(op.sret, 1);
	assert_int_equal(op.args[0].reg, R(1));
	assert_int_equal(op.args[1].reg, R(2));
	assert_int_equal(op.args[1].nregs, 2);
	assert_int_equal(op.args[2].reg, R(4));
	assert_int_equal(op.args[2].kind, ASC_ARGK_OPT_TENSOR);
	assert_int_equal(op.args[3].reg, R(5));
	assert_int_equal(op.args[4].reg, -1);

	/* a TensorList, then an argument that no longer fits in registers */
	assert_int_equal(asc_aten_parse_schema("cat(Tensor[] tensors, int dim=0) -> Tensor", &op),
			 0);
	assert_int_equal(op.args[0].kind, ASC_ARGK_TENSOR_LIST);
	assert_int_equal(op.args[0].reg, R(1));
	assert_int_equal(op.args[1].reg, R(3));

	/* an unknown type stops the mapping: nothing after it is guessed */
	assert_int_equal(asc_aten_parse_schema("foo(Tensor a, Any x, Tensor b) -> Tensor", &op), 0);
	assert_int_equal(op.args[0].reg, R(1));
	assert_int_equal(op.args[1].reg, -1);
	assert_int_equal(op.args[2].reg, -1);

	assert_int_equal(asc_aten_parse_schema("not a schema", &op), -EINVAL);
	assert_int_equal(asc_aten_parse_schema("(Tensor a) -> Tensor", &op), -EINVAL);
	assert_int_equal(asc_aten_parse_schema("f(Tensor a -> Tensor", &op), -EINVAL);
}

static void test_name_without_schemas(void **state)
{
	struct asc_aten_op op;

	assert_int_equal(asc_aten_name(NULL, "_ZN2at4_ops10add_Tensor4callERKNS_6TensorE", &op), 0);
	assert_string_equal(op.name, "aten::add");
	assert_string_equal(op.overload, "Tensor");
	assert_int_equal(op.exact, 0);
	assert_int_equal(op.nargs, 0);
	assert_int_equal(asc_aten_name(NULL, "_ZN2at4_ops5addmm4callERKNS_6TensorE", &op), 0);
	assert_string_equal(op.name, "aten::addmm");
	assert_int_equal(asc_aten_name(NULL, "malloc", &op), -EINVAL);
}

/* ---- against the installed PyTorch ---- */

/* Every at::_ops::<op>::call symbol of the library. */
static char **op_symbols(const char *path, size_t *nr)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	char **v = NULL;
	size_t n = 0, cap = 0;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(elf);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *nm;
			char buf[256];

			gelf_getsym(d, i, &s);
			nm = elf_strptr(elf, sh.sh_link, s.st_name);
			if (s.st_shndx == SHN_UNDEF || !nm ||
			    asc_aten_struct_name(nm, buf, sizeof(buf)))
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 1024;
				v = realloc(v, cap * sizeof(*v));
			}
			v[n++] = strdup(nm);
		}
	}
	elf_end(elf);
	close(fd);
	*nr = n;
	return v;
}

/* "struct_name name overload" lines from torch's own schema registry. */
struct truth {
	char st[160], name[128], overload[96];
};

static struct truth *torch_schemas(size_t *nr)
{
	FILE *f = popen(PYTHON
			" -c 'import torch\n"
			"for s in torch._C._jit_get_all_schemas():\n"
			"  n = s.name\n"
			"  if not n.startswith(\"aten::\"): continue\n"
			"  b = n[6:]\n"
			"  print(b + (\"_\" + s.overload_name if s.overload_name else \"\"), n, "
			"s.overload_name or \"-\")\n'",
			"r");
	struct truth *t = NULL;
	size_t n = 0, cap = 0;
	char line[512];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			t = realloc(t, cap * sizeof(*t));
		}
		if (sscanf(line, "%159s %127s %95s", t[n].st, t[n].name, t[n].overload) == 3) {
			if (!strcmp(t[n].overload, "-"))
				t[n].overload[0] = 0;
			n++;
		}
	}
	assert_int_equal(pclose(f), 0);
	*nr = n;
	return t;
}

static void test_names_match_torch(void **state)
{
	struct asc_aten_schemas *s = asc_aten_schemas_load(LIBTORCH_CPU);
	size_t nsym, ntruth, i, j, checked = 0, exact = 0, wrong = 0;
	char **syms;
	struct truth *t;

	assert_non_null(s);
	assert_true(asc_aten_schemas_count(s) > 1000);
	syms = op_symbols(LIBTORCH_CPU, &nsym);
	assert_true(nsym > 2000); /* about 3,000 in 1.13 */
	t = torch_schemas(&ntruth);
	assert_true(ntruth > 2000);
	for (i = 0; i < nsym; i++) {
		struct asc_aten_op op;
		char st[256];

		assert_int_equal(asc_aten_struct_name(syms[i], st, sizeof(st)), 0);
		assert_int_equal(asc_aten_name(s, syms[i], &op), 0);
		for (j = 0; j < ntruth; j++)
			if (!strcmp(t[j].st, st))
				break;
		if (j == ntruth)
			continue; /* not in the JIT registry (none expected, but not ours to judge) */
		checked++;
		exact += op.exact;
		if (strcmp(op.name, t[j].name) || strcmp(op.overload, t[j].overload)) {
			wrong++;
			print_message("%s: got %s.%s, torch says %s.%s\n", st, op.name, op.overload,
				      t[j].name, t[j].overload);
		}
	}
	print_message("%zu op symbols, %zu checked against torch, %zu from schemas, %zu wrong\n",
		      nsym, checked, exact, wrong);
	assert_true(checked > nsym * 9 / 10);
	assert_int_equal(wrong, 0);
	assert_true(exact > checked * 95 / 100);
	for (i = 0; i < nsym; i++)
		free(syms[i]);
	free(syms);
	free(t);
	asc_aten_schemas_free(s);
}

/* Register mapping checked against the machine code of one op: add_Tensor saves rdi..rcx. */
static void test_mapping_known_ops(void **state)
{
	struct asc_aten_schemas *s = asc_aten_schemas_load(LIBTORCH_CPU);
	struct asc_aten_op op;

	assert_non_null(s);
	assert_int_equal(
		asc_aten_name(s, "_ZN2at4_ops10add_Tensor4callERKNS_6TensorES4_RKN3c106ScalarE",
			      &op),
		0);
	assert_int_equal(op.exact, 1);
	assert_int_equal(op.sret, 1);
	assert_int_equal(op.args[0].reg, R(1));
	assert_int_equal(op.args[1].reg, R(2));
	/* addmm: suffix-merged string in the library ("sspaddmm(...)" holds it) */
	assert_int_equal(
		asc_aten_name(s, "_ZN2at4_ops5addmm4callERKNS_6TensorES4_S4_RKN3c106ScalarES8_",
			      &op),
		0);
	assert_string_equal(op.name, "aten::addmm");
	assert_int_equal(op.exact, 1);
	assert_int_equal(op.nargs, 5);
	assert_int_equal(op.args[2].reg, R(3));
	assert_int_equal(op.args[2].kind, ASC_ARGK_TENSOR);
	asc_aten_schemas_free(s);
	assert_null(asc_aten_schemas_load("/nonexistent/libtorch_cpu.so"));
	assert_int_equal(errno, ENOENT);
}

/* ---- TensorImpl layout, verified on live tensors ---- */

struct expect {
	uint64_t impl;
	int dtype;
	int ndim;
	int64_t dims[12];
};

static void test_tensor_layout_live(void **state)
{
	struct asc_tensor_layout tl;
	int to_py[2], from_py[2], n = 0, i, k, memfd;
	struct expect ex[16];
	char path[64], line[512];
	pid_t pid;
	FILE *f;

	assert_int_equal(asc_tensor_layout_discover(LIBC10, &tl), 0);
	assert_true(tl.valid & ASC_TL_DIMS);
	assert_true(tl.valid & ASC_TL_DTYPE);
	print_message("TensorImpl: dim @%u, sizes @%u (inline <= %u), dtype @%u\n", tl.dim_off,
		      tl.sizes_off, tl.inline_max, tl.dtype_off);
	assert_int_equal(asc_tensor_layout_discover("/nonexistent", &tl), -ENOENT);
	assert_int_equal(asc_tensor_layout_discover(LIBC10, &tl), 0);

	assert_int_equal(pipe(to_py), 0);
	assert_int_equal(pipe(from_py), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(to_py[0], 0);
		dup2(from_py[1], 1);
		close(to_py[1]);
		close(from_py[0]);
		/* the dtype number is torch's own ScalarType of the tensor */
		execl(PYTHON, PYTHON, "-c",
		      "import sys, torch\n"
		      "ts = [torch.zeros(3, 5), torch.ones(2, 3, 4, dtype=torch.int64),\n"
		      "      torch.zeros(7, dtype=torch.float64), torch.zeros(()),\n"
		      "      torch.zeros(1, 2, 1, 2, 1, 2, 1, dtype=torch.bool),\n"
		      "      torch.zeros(2, 3).t(), torch.zeros(4, 4, 4, 4, 4, dtype=torch.uint8),\n"
		      "      torch.zeros(1, 1, 1, 1, 1, 1, 1, 1, 1, 3, dtype=torch.bfloat16)]\n"
		      "st = {torch.uint8: 0, torch.int64: 4, torch.float32: 6, torch.float64: 7,\n"
		      "      torch.bool: 11, torch.bfloat16: 15}\n"
		      "for t in ts:\n"
		      "  print(t._cdata, st[t.dtype], t.dim(), *t.shape)\n"
		      "print('end', flush=True)\n"
		      "sys.stdin.read()\n",
		      (char *)NULL);
		_exit(127);
	}
	close(to_py[0]);
	close(from_py[1]);
	f = fdopen(from_py[0], "r");
	while (fgets(line, sizeof(line), f) && strncmp(line, "end", 3)) {
		char *p = line, *e;

		ex[n].impl = strtoull(p, &e, 10);
		ex[n].dtype = strtol(e, &e, 10);
		ex[n].ndim = strtol(e, &e, 10);
		for (k = 0; k < ex[n].ndim; k++)
			ex[n].dims[k] = strtoll(e, &e, 10);
		n++;
	}
	assert_int_equal(n, 8);
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	memfd = open(path, O_RDONLY);
	assert_true(memfd >= 0);
	for (i = 0; i < n; i++) {
		int64_t dim, dims[12];
		uint16_t dtype;
		uint64_t where = ex[i].impl + tl.sizes_off;

		assert_int_equal(pread(memfd, &dim, 8, ex[i].impl + tl.dim_off), 8);
		assert_int_equal(dim, ex[i].ndim);
		assert_int_equal(pread(memfd, &dtype, 2, ex[i].impl + tl.dtype_off), 2);
		assert_int_equal(dtype, ex[i].dtype);
		if (dim > (int64_t)tl.inline_max)
			assert_int_equal(pread(memfd, &where, 8, where), 8);
		if (dim)
			assert_int_equal(pread(memfd, dims, dim * 8, where), dim * 8);
		for (k = 0; k < dim; k++)
			assert_int_equal(dims[k], ex[i].dims[k]);
	}
	close(memfd);
	close(to_py[1]);
	fclose(f);
	assert_int_equal(waitpid(pid, &k, 0), pid);
	assert_true(WIFEXITED(k) && WEXITSTATUS(k) == 0);
}

static void test_x86_decode(void **state)
{
	/* mov 0x48(%rdi),%rax ; mov %cx,0xb0(%rdi) ; cmp $0x5,%rdx ; lea 0x3cd99(%rip),%rcx */
	static const uint8_t code[] = { 0x48, 0x8b, 0x47, 0x48, 0x66, 0x89, 0x8f, 0xb0,
					0,    0,    0,	  0x48, 0x83, 0xfa, 0x05, 0x48,
					0x8d, 0x0d, 0x99, 0xcd, 0x03, 0x00, 0x06 };
	struct asc_insn in;

	assert_int_equal(asc_x86_decode(code, sizeof(code), 0x1000, &in), 4);
	assert_int_equal(in.opcode, 0x8b);
	assert_int_equal(in.base, ASC_X86_RDI);
	assert_int_equal(in.disp, 0x48);
	assert_int_equal(in.reg, ASC_X86_RAX);
	assert_int_equal(in.opsize, 8);
	assert_int_equal(asc_x86_decode(code + 4, sizeof(code) - 4, 0x1004, &in), 7);
	assert_int_equal(in.opsize, 2);
	assert_int_equal(in.reg, ASC_X86_RCX);
	assert_int_equal(in.disp, 0xb0);
	assert_int_equal(asc_x86_decode(code + 11, sizeof(code) - 11, 0, &in), 4);
	assert_int_equal(in.imm, 5);
	assert_int_equal(in.rm, ASC_X86_RDX);
	assert_int_equal(asc_x86_decode(code + 15, sizeof(code) - 15, 0x2000, &in), 7);
	assert_int_equal(in.base, ASC_X86_RIP);
	assert_int_equal(in.target, 0x2000 + 7 + 0x3cd99);
	assert_int_equal(asc_x86_decode(code + 22, 1, 0, &in), -EILSEQ);
	assert_int_equal(asc_x86_decode(code, 2, 0, &in), -EILSEQ); /* cut short */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_struct_name),
		cmocka_unit_test(test_parse_schema_registers),
		cmocka_unit_test(test_name_without_schemas),
		cmocka_unit_test(test_x86_decode),
		cmocka_unit_test(test_mapping_known_ops),
		cmocka_unit_test(test_names_match_torch),
		cmocka_unit_test(test_tensor_layout_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
