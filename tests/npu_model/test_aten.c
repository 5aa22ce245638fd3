// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_aten.c - the aten entry points of libtorch_cpu (npu_model/aten/aten.c)
 * over a fake NPU backend defined here: output shapes (broadcast, matmul,
 * convolution, layer norm), views sharing storage with reference counts,
 * composites that nest (_to_copy -> empty + copy_), in-place ops, per-
 * parameter fused AdamW, and errors (bad shapes, a failing kernel, no
 * backend) that leave no tensor behind.  Autograd (aten/autograd.c):
 * at::sequence_number and currentThreadId, the seqNr rule, the Node layout
 * of npu_autograd.h read as raw bytes, and the engine (order, thread,
 * gradient accumulation, errors, no leaked tensor).
 */
#include <errno.h>
#include <pthread.h>
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
#include "npu_autograd.h"
#include "npu_torch.h"

/* ---- fake backend --------------------------------------------------------------------------- */

static int nr_allocs, nr_frees, fail_op;
static char ops[64][32];
static int nr_ops;
static double last_args[8];
static int last_nin, last_nout;
static pthread_t op_thread[64];

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
	if (nr_ops < 64) {
		op_thread[nr_ops] = pthread_self();
		strncpy(ops[nr_ops++], op, 31);
	}
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
	struct at_tensor h = npu_tensor_empty(s, 1, ACL_FLOAT16, -1); /* host: malloc */

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
	NPU_ATEN_MM(&r, &w, &a); /* [32,8] x [2,16,32]: mat2 must be 2-D */
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
	shape_is(&r.t[1], 2, 128, 1, 0, 0);		 /* mean */
	assert_int_equal(r.t[2].impl->dtype, ACL_FLOAT); /* rstd in float */
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
	npu_tensor_release(&t); /* v keeps its own reference */
	NPU_ATEN_VIEW(&t, &a, (struct c10_int_array_ref){ wrong, 1 });
	assert_null(t.impl);
	npu_tensor_release(&a);
	assert_int_equal(nr_frees, frees); /* v still holds the storage */
	npu_tensor_release(&v);
	assert_int_equal(nr_frees, frees + 1);
	assert_int_equal(nr_ops, 0); /* views launch no kernel */
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
	assert_int_equal(nr_allocs - allocs, nr_frees - frees); /* output freed */
	assert_ptr_equal(NPU_ATEN_MUL_SCALAR(&a, &s), &a);	/* in-place returns self */
	assert_int_equal(npu_aten_last_error(), 561000);
	assert_non_null(a.impl); /* self survives */
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

/* ---- autograd ------------------------------------------------------------------------------- */

static void *thread_id_of_new_thread(void *arg)
{
	uint64_t *out = arg;

	out[0] = NPU_CURRENT_THREAD_ID();
	out[1] = NPU_CURRENT_THREAD_ID();
	out[2] = NPU_SEQ_PEEK(); /* thread_local: a new thread starts at 0 */
	return NULL;
}

static void test_sequence_number(void **state)
{
	uint64_t me = NPU_CURRENT_THREAD_ID(), other[3], s = NPU_SEQ_PEEK();
	pthread_t t;

	(void)state;
	assert_true(me >= 1);
	assert_int_equal(NPU_CURRENT_THREAD_ID(), me);
	assert_int_equal(NPU_SEQ_GET_AND_INCREMENT(), s);
	assert_int_equal(NPU_SEQ_PEEK(), s + 1);
	assert_int_equal(pthread_create(&t, NULL, thread_id_of_new_thread, other), 0);
	pthread_join(t, NULL);
	assert_true(other[0] > me);
	assert_int_equal(other[1], other[0]);
	assert_int_equal(other[2], 0);
	assert_int_equal(NPU_SEQ_PEEK(), s + 1);
}

static void test_seq_rule(void **state)
{
	int64_t outer, inner;

	(void)state;
	assert_true(npu_autograd_grad_enabled());
	outer = npu_autograd_op_enter();
	inner = npu_autograd_op_enter();
	assert_int_equal(outer, (int64_t)NPU_SEQ_PEEK());
	assert_int_equal(inner, -1); /* nested: below the Autograd key */
	npu_autograd_op_exit();
	npu_autograd_op_exit();
	npu_autograd_set_grad_enabled(false);
	assert_int_equal(npu_autograd_op_enter(), -1);
	npu_autograd_op_exit();
	npu_autograd_set_grad_enabled(true);
	assert_int_equal(npu_autograd_op_enter(), (int64_t)NPU_SEQ_PEEK());
	npu_autograd_op_exit();
}

static uint64_t u64_at(const void *p, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)p + off, sizeof(v));
	return v;
}

/* Node creation and the raw layout a tracer reads (offsets as PyTorch 1.13's Node). */
static void test_node_layout(void **state)
{
	struct at_tensor x = mk(2, 4, 8, 0, 0), w = mk(2, 8, 3, 0, 0), b = mk(1, 3, 0, 0, 0), y, z;
	struct torch_autograd_node *n, *acc;
	const struct torch_autograd_vtable *vt;
	uint64_t s;
	void *vptr;

	(void)state;
	/* nothing requires grad: no node, the counter does not move */
	s = NPU_SEQ_PEEK();
	NPU_ATEN_ADDMM(&y, &b, &x, &w, &(struct c10_scalar){ 1 }, &(struct c10_scalar){ 1 });
	assert_null(npu_tensor_grad_fn(&y));
	assert_int_equal(NPU_SEQ_PEEK(), s);
	npu_tensor_release(&y);
	/* grad mode off: none either */
	assert_int_equal(npu_tensor_set_requires_grad(&w, true), 0);
	npu_autograd_set_grad_enabled(false);
	NPU_ATEN_ADDMM(&y, &b, &x, &w, &(struct c10_scalar){ 1 }, &(struct c10_scalar){ 1 });
	npu_autograd_set_grad_enabled(true);
	assert_null(npu_tensor_grad_fn(&y));
	assert_int_equal(NPU_SEQ_PEEK(), s);
	npu_tensor_release(&y);
	/* w requires grad: AddmmBackward0 with sequence_nr = the old counter */
	NPU_ATEN_ADDMM(&y, &b, &x, &w, &(struct c10_scalar){ 1 }, &(struct c10_scalar){ 1 });
	n = npu_tensor_grad_fn(&y);
	assert_non_null(n);
	assert_int_equal(NPU_SEQ_PEEK(), s + 1);
	assert_int_equal(u64_at(n, 8), (uint64_t)(uintptr_t)n); /* weak_this_ */
	assert_int_equal(u64_at(n, 24), s);
	assert_int_equal(u64_at(n, 32), 1); /* topological_nr_: one above the leaf's */
	assert_int_equal(u64_at(n, 48), NPU_CURRENT_THREAD_ID());
	memcpy(&vptr, n, sizeof(vptr));
	vt = &_ZTVN5torch8autograd9generated14AddmmBackward0E;
	assert_ptr_equal((char *)vptr - 16, (const void *)vt);
	assert_ptr_equal(vptr, (const void *)&vt->apply);
	assert_string_equal(n->name, "AddmmBackward0");
	/* an op on y chains to it; relu's node is one higher */
	NPU_ATEN_RELU(&z, &y);
	assert_int_equal(u64_at(npu_tensor_grad_fn(&z), 24), s + 1);
	assert_int_equal(u64_at(npu_tensor_grad_fn(&z), 32), 2);
	assert_true(*((const char *)n + 40)); /* has_parent_ */
	/* a leaf's AccumulateGrad stands in for it when it is passed through */
	npu_tensor_share_grad_fn(&x, &w);
	acc = npu_tensor_grad_fn(&x);
	assert_non_null(acc);
	assert_int_equal(u64_at(acc, 24), UINT64_MAX);
	assert_string_equal(acc->name, "torch::autograd::AccumulateGrad");
	memcpy(&vptr, acc, sizeof(vptr));
	assert_ptr_equal((char *)vptr - 16, (const void *)&_ZTVN5torch8autograd14AccumulateGradE);
	npu_tensor_release(&z);
	npu_tensor_release(&y);
	npu_tensor_release(&x);
	npu_tensor_release(&w);
	npu_tensor_release(&b);
}

/* z = relu(mm(x, w)) with only w requiring grad; backward on the engine thread. */
static void test_backward_engine(void **state)
{
	struct at_tensor x = mk(2, 4, 8, 0, 0), w = mk(2, 8, 3, 0, 0), y, z, g = mk(2, 4, 3, 0, 0);
	struct at_tensor gw;
	int allocs = nr_allocs - nr_frees;

	(void)state;
	npu_tensor_set_requires_grad(&w, true);
	NPU_ATEN_MM(&y, &x, &w);
	NPU_ATEN_RELU(&z, &y);
	npu_tensor_release(&y); /* the nodes keep what they saved */
	nr_ops = 0;
	assert_int_equal(npu_autograd_backward(&z, &g), 0);
	/* ReluBackward0, then MmBackward0 for mat2 only (x wants no gradient) */
	assert_int_equal(nr_ops, 2);
	assert_string_equal(ops[0], "threshold_backward");
	assert_string_equal(ops[1], "mm");
	assert_false(pthread_equal(op_thread[0], pthread_self()));
	assert_true(pthread_equal(op_thread[0], op_thread[1]));
	assert_true(npu_autograd_grad_enabled()); /* the caller's grad mode is its own */
	gw = npu_tensor_take_grad(&w);
	shape_is(&gw, 2, 8, 3, 0, 0);
	assert_null(npu_tensor_take_grad(&w).impl);
	assert_null(npu_tensor_take_grad(&x).impl);
	/* errors: no grad_fn */
	assert_int_equal(npu_autograd_backward(&x, &g), -EINVAL);
	npu_tensor_release(&gw);
	npu_tensor_release(&z);
	npu_tensor_release(&x);
	npu_tensor_release(&w);
	npu_tensor_release(&g);
	assert_int_equal(nr_allocs - nr_frees, allocs - 3); /* x, w, g; nothing left behind */
}

/* s = mm(x, w) + mm(x, w): w's gradient arrives twice and is summed with aten::add. */
static void test_backward_accumulates(void **state)
{
	struct at_tensor x = mk(2, 4, 8, 0, 0), w = mk(2, 8, 3, 0, 0), g = mk(2, 4, 3, 0, 0);
	struct at_tensor a, b, s;
	struct at_tensor gw;
	int adds = 0, mms = 0, allocs = nr_allocs - nr_frees;

	(void)state;
	npu_tensor_set_requires_grad(&w, true);
	NPU_ATEN_MM(&a, &x, &w);
	NPU_ATEN_MM(&b, &x, &w);
	NPU_ATEN_ADD_TENSOR(&s, &a, &b, &(struct c10_scalar){ 1 });
	npu_tensor_release(&a);
	npu_tensor_release(&b);
	nr_ops = 0;
	assert_int_equal(npu_autograd_backward(&s, &g), 0);
	for (int i = 0; i < nr_ops; i++) {
		adds += !strcmp(ops[i], "add");
		mms += !strcmp(ops[i], "mm");
	}
	assert_int_equal(mms, 2);
	assert_int_equal(adds, 1);
	gw = npu_tensor_take_grad(&w);
	shape_is(&gw, 2, 8, 3, 0, 0);
	npu_tensor_release(&gw);
	npu_tensor_release(&s);
	npu_tensor_release(&x);
	npu_tensor_release(&w);
	npu_tensor_release(&g);
	assert_int_equal(nr_allocs - nr_frees, allocs - 3); /* x, w, g */
}

/* A failing backward kernel: -EIO, the error on the caller, the engine still usable. */
static void test_backward_failure(void **state)
{
	struct at_tensor x = mk(2, 4, 8, 0, 0), w = mk(2, 8, 3, 0, 0), y, g = mk(2, 4, 3, 0, 0);

	(void)state;
	npu_tensor_set_requires_grad(&w, true);
	NPU_ATEN_MM(&y, &x, &w);
	fail_op = 1;
	assert_int_equal(npu_autograd_backward(&y, &g), -EIO);
	assert_int_equal(npu_aten_last_error(), 561000);
	fail_op = 0;
	npu_tensor_release(&y);
	NPU_ATEN_MM(&y, &x, &w);
	assert_int_equal(npu_autograd_backward(&y, &g), 0);
	npu_tensor_release(&y);
	npu_tensor_release(&x);
	npu_tensor_release(&w);
	npu_tensor_release(&g);
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
		cmocka_unit_test_setup(test_sequence_number, setup),
		cmocka_unit_test_setup(test_seq_rule, setup),
		cmocka_unit_test_setup(test_node_layout, setup),
		cmocka_unit_test_setup(test_backward_engine, setup),
		cmocka_unit_test_setup(test_backward_accumulates, setup),
		cmocka_unit_test_setup(test_backward_failure, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
