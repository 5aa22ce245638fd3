// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_aten.c - the aten entry points of libtorch_cpu (npu_model/aten/aten.c)
 * over a fake NPU backend defined here: output shapes (broadcast, matmul,
 * convolution, layer norm), views sharing storage with reference counts,
 * composites that nest (_to_copy -> empty + copy_), in-place ops, per-
 * parameter fused AdamW, and errors (bad shapes, a failing kernel, no
 * backend) that leave no tensor behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "npu_acl.h"
#include "npu_aten.h"
#include "npu_torch.h"

/* ---- fake backend --------------------------------------------------------------------------- */

static int nr_allocs, nr_frees, fail_op;
static char ops[64][32];
static int nr_ops;
static double last_args[8];
static int last_nin, last_nout;

static void *fake_alloc(size_t nbytes, int device, void **stream)
{
	(void)device;
	*stream = NULL;
	nr_allocs++;
	return malloc(nbytes);
}

static void fake_free(void *p)
{
	nr_frees++;
	free(p);
}

static int fake_op(const char *op, struct at_tensor *outs, int nout,
		   const struct at_tensor *const *ins, int nin, const double *args, int nargs)
{
	(void)outs;
	(void)ins;
	if (nr_ops < 64)
		strncpy(ops[nr_ops++], op, 31);
	last_nin = nin;
	last_nout = nout;
	for (int i = 0; i < nargs && i < 8; i++)
		last_args[i] = args[i];
	return fail_op ? 561000 : 0;
}

static const struct npu_aten_backend fake = { fake_alloc, fake_free, fake_op };

static int setup(void **state)
{
	(void)state;
	nr_ops = 0;
	fail_op = 0;
	npu_aten_last_error();
	return 0;
}

static struct at_tensor mk(int ndim, int64_t a, int64_t b, int64_t c, int64_t d)
{
	const int64_t s[4] = { a, b, c, d };
	struct at_tensor t = npu_tensor_empty(s, ndim, ACL_FLOAT16, 0);

	assert_non_null(t.impl);
	return t;
}

static void shape_is(const struct at_tensor *t, int ndim, int64_t a, int64_t b, int64_t c,
		     int64_t d)
{
	const int64_t s[4] = { a, b, c, d };

	assert_non_null(t->impl);
	assert_int_equal(t->impl->ndim, ndim);
	for (int i = 0; i < ndim; i++)
		assert_int_equal(t->impl->sizes[i], s[i]);
}

/* ---- tests ---------------------------------------------------------------------------------- */

/* First, before any backend: NPU tensors and ops fail cleanly. */
static void test_no_backend(void **state)
{
	const int64_t s[1] = { 4 };
	struct at_tensor t = npu_tensor_empty(s, 1, ACL_FLOAT16, 0);
	struct at_tensor h = npu_tensor_empty(s, 1, ACL_FLOAT16, -1);	/* host: malloc */

	assert_null(t.impl);
	assert_int_equal(npu_aten_last_error(), ACL_ERROR_UNINITIALIZE);
	assert_non_null(h.impl);
	assert_int_equal(npu_tensor_numel(&h), 4);
	npu_tensor_release(&h);
	assert_null(h.impl);
	assert_int_equal(npu_aten_register_backend(&fake), 0);
	assert_int_equal(npu_aten_register_backend(NULL), -22);
}

static void test_broadcast_add(void **state)
{
	struct at_tensor a = mk(3, 4, 1, 8, 0), b = mk(2, 3, 8, 0, 0), r;
	struct c10_scalar alpha = { 2.5 };

	NPU_ATEN_ADD_TENSOR(&r, &a, &b, &alpha);
	shape_is(&r, 3, 4, 3, 8, 0);
	assert_string_equal(ops[0], "add");
	assert_true(last_args[0] == 2.5);
	npu_tensor_release(&r);
	/* shapes that do not broadcast */
	struct at_tensor c = mk(2, 5, 7, 0, 0);
	NPU_ATEN_ADD_TENSOR(&r, &a, &c, &alpha);
	assert_null(r.impl);
	assert_int_equal(npu_aten_last_error(), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(nr_ops, 1);
	npu_tensor_release(&a);
	npu_tensor_release(&b);
	npu_tensor_release(&c);
}

static void test_matmul_and_conv_shapes(void **state)
{
	struct at_tensor a = mk(3, 2, 16, 32, 0), w = mk(2, 32, 8, 0, 0), r;
	struct at_tensor x = mk(4, 2, 3, 32, 32), k = mk(4, 16, 3, 3, 3), y;
	struct c10_optional_tensor nob = { { NULL }, 0 };
	const int64_t st[2] = { 2, 2 }, pd[2] = { 1, 1 }, one[2] = { 1, 1 }, zero[2] = { 0, 0 };

	NPU_ATEN_MM(&r, &a, &w);
	shape_is(&r, 3, 2, 16, 8, 0);
	npu_tensor_release(&r);
	NPU_ATEN_MM(&r, &w, &a);	/* [32,8] x [2,16,32]: mat2 must be 2-D */
	assert_null(r.impl);
	assert_int_equal(npu_aten_last_error(), ACL_ERROR_INVALID_PARAM);
	NPU_ATEN_CONVOLUTION(&y, &x, &k, &nob, (struct c10_int_array_ref){ st, 2 },
			     (struct c10_int_array_ref){ pd, 2 },
			     (struct c10_int_array_ref){ one, 2 }, false,
			     (struct c10_int_array_ref){ zero, 2 }, 1);
	shape_is(&y, 4, 2, 16, 16, 16);
	assert_int_equal(last_nin, 2);
	assert_true(last_args[0] == 2 && last_args[1] == 1);
	npu_tensor_release(&y);
	NPU_ATEN_CONVOLUTION(&y, &x, &k, &nob, (struct c10_int_array_ref){ st, 2 },
			     (struct c10_int_array_ref){ pd, 2 },
			     (struct c10_int_array_ref){ one, 2 }, true,
			     (struct c10_int_array_ref){ zero, 2 }, 1);
	assert_null(y.impl);
	npu_tensor_release(&a);
	npu_tensor_release(&w);
	npu_tensor_release(&x);
	npu_tensor_release(&k);
}

static void test_layer_norm(void **state)
{
	struct at_tensor x = mk(2, 128, 64, 0, 0), w = mk(1, 64, 0, 0, 0), b = mk(1, 64, 0, 0, 0);
	struct c10_optional_tensor ow = { w, 1 }, ob = { b, 1 };
	int64_t n = 64, bad = 32;
	struct at_tensor3 r;

	NPU_ATEN_NATIVE_LAYER_NORM(&r, &x, (struct c10_int_array_ref){ &n, 1 }, &ow, &ob, 1e-5);
	shape_is(&r.t[0], 2, 128, 64, 0, 0);
	shape_is(&r.t[1], 2, 128, 1, 0, 0);	/* mean */
	assert_int_equal(r.t[2].impl->dtype, ACL_FLOAT);	/* rstd in float */
	assert_int_equal(last_nin, 3);
	assert_int_equal(last_nout, 3);
	for (int i = 0; i < 3; i++)
		npu_tensor_release(&r.t[i]);
	NPU_ATEN_NATIVE_LAYER_NORM(&r, &x, (struct c10_int_array_ref){ &bad, 1 }, &ow, &ob, 1e-5);
	assert_null(r.t[0].impl);
	npu_tensor_release(&x);
	npu_tensor_release(&w);
	npu_tensor_release(&b);
}

/* Views share storage; the storage lives until the last of base and views goes. */
static void test_views(void **state)
{
	struct at_tensor a = mk(2, 6, 4, 0, 0), t, v;
	const int64_t flat[1] = { 24 }, wrong[1] = { 25 };
	int frees = nr_frees;

	NPU_ATEN_T(&t, &a);
	shape_is(&t, 2, 4, 6, 0, 0);
	assert_ptr_equal(t.impl->data, a.impl->data);
	NPU_ATEN_VIEW(&v, &t, (struct c10_int_array_ref){ flat, 1 });
	shape_is(&v, 1, 24, 0, 0, 0);
	npu_tensor_release(&t);				/* v keeps its own reference */
	NPU_ATEN_VIEW(&t, &a, (struct c10_int_array_ref){ wrong, 1 });
	assert_null(t.impl);
	npu_tensor_release(&a);
	assert_int_equal(nr_frees, frees);		/* v still holds the storage */
	npu_tensor_release(&v);
	assert_int_equal(nr_frees, frees + 1);
	assert_int_equal(nr_ops, 0);			/* views launch no kernel */
}

/* _to_copy is a composite: empty_memory_format then copy_ (one Cast kernel). */
static void test_to_copy_nests(void **state)
{
	struct at_tensor a = npu_tensor_empty((const int64_t[]){ 8, 8 }, 2, ACL_FLOAT, 0), r;
	struct c10_optional_scalar_type half = { ACL_FLOAT16, 1 };

	NPU_ATEN_TO_COPY(&r, &a, half, 0, 0, 0, false, 0);
	shape_is(&r, 2, 8, 8, 0, 0);
	assert_int_equal(r.impl->dtype, ACL_FLOAT16);
	assert_int_equal(nr_ops, 1);
	assert_string_equal(ops[0], "cast");
	assert_true(last_args[0] == ACL_FLOAT16);
	npu_tensor_release(&r);
	npu_tensor_release(&a);
}

/* A failing kernel: the op reports it and releases its outputs. */
static void test_kernel_failure(void **state)
{
	struct at_tensor a = mk(1, 16, 0, 0, 0), r;
	struct c10_scalar s = { 3 };
	int allocs = nr_allocs, frees = nr_frees;

	fail_op = 1;
	NPU_ATEN_RELU(&r, &a);
	assert_null(r.impl);
	assert_int_equal(npu_aten_last_error(), 561000);
	assert_int_equal(nr_allocs - allocs, nr_frees - frees);	/* output freed */
	assert_ptr_equal(NPU_ATEN_MUL_SCALAR(&a, &s), &a);	/* in-place returns self */
	assert_int_equal(npu_aten_last_error(), 561000);
	assert_non_null(a.impl);				/* self survives */
	assert_int_equal(a.impl->refcount, 1);
	npu_tensor_release(&a);
}

static void test_fused_adamw(void **state)
{
	struct at_tensor p[3], g[3], m[3], v[3], st[3];

	for (int i = 0; i < 3; i++) {
		p[i] = mk(1, 64, 0, 0, 0);
		g[i] = mk(1, 64, 0, 0, 0);
		m[i] = mk(1, 64, 0, 0, 0);
		v[i] = mk(1, 64, 0, 0, 0);
		st[i] = mk(1, 1, 0, 0, 0);
	}
	NPU_ATEN_FUSED_ADAMW((struct c10_tensor_list){ p, 3 }, (struct c10_tensor_list){ g, 3 },
			     (struct c10_tensor_list){ m, 3 }, (struct c10_tensor_list){ v, 3 },
			     (struct c10_tensor_list){ NULL, 0 }, (struct c10_tensor_list){ st, 3 },
			     1e-3, 0.9, 0.999, 0.01, 1e-8, false, false, NULL, NULL);
	assert_int_equal(nr_ops, 3);
	assert_string_equal(ops[2], "apply_adamw");
	assert_int_equal(last_nin, 5);
	assert_true(last_args[1] == 0.9 && last_args[4] == 1e-8);
	NPU_ATEN_FUSED_ADAMW((struct c10_tensor_list){ p, 3 }, (struct c10_tensor_list){ g, 2 },
			     (struct c10_tensor_list){ m, 3 }, (struct c10_tensor_list){ v, 3 },
			     (struct c10_tensor_list){ NULL, 0 }, (struct c10_tensor_list){ st, 3 },
			     1e-3, 0.9, 0.999, 0.01, 1e-8, false, false, NULL, NULL);
	assert_int_equal(npu_aten_last_error(), ACL_ERROR_INVALID_PARAM);
	assert_int_equal(nr_ops, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(p[i].impl->refcount, 1);
		npu_tensor_release(&p[i]);
		npu_tensor_release(&g[i]);
		npu_tensor_release(&m[i]);
		npu_tensor_release(&v[i]);
		npu_tensor_release(&st[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_no_backend, setup),
		cmocka_unit_test_setup(test_broadcast_add, setup),
		cmocka_unit_test_setup(test_matmul_and_conv_shapes, setup),
		cmocka_unit_test_setup(test_layer_norm, setup),
		cmocka_unit_test_setup(test_views, setup),
		cmocka_unit_test_setup(test_to_copy_nests, setup),
		cmocka_unit_test_setup(test_kernel_failure, setup),
		cmocka_unit_test_setup(test_fused_adamw, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
