// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * aten.c - libtorch_cpu.so: the aten operator entry points the workloads
 * call, exported as PyTorch names them (at::_ops::<op>::call, mangled; see
 * npu_torch.h for why C and how the arguments map), and the tensor objects.
 *
 * As in PyTorch, an op computes its output shapes (the meta function),
 * allocates the outputs through the device's allocator and dispatches to the
 * backend kernel -- here the NPU backend libtorch_npu registers at load
 * time (PrivateUse1), which turns it into aclnn calls.  Some ops are
 * composites that call other aten ops (_to_copy -> empty_memory_format +
 * copy_), so aten ranges nest as they do in PyTorch.
 *
 * Errors: C++ would throw; here an op that fails returns an undefined
 * tensor (impl NULL) and npu_aten_last_error() says why.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npu_acl.h"
#include "npu_api_journal.h"
#include "npu_torch.h"
#include "aten/aten_priv.h"

#define TENSOR_MAGIC 0x41544e53U

static const struct npu_aten_backend *backend;
static __thread int aten_error;

int npu_aten_register_backend(const struct npu_aten_backend *b)
{
	if (!b || !b->alloc || !b->free || !b->op)
		return -EINVAL;
	backend = b;
	return 0;
}

int npu_aten_last_error(void)
{
	int e = aten_error;

	aten_error = 0;
	return e;
}

void npu_aten_set_error(int err)
{
	if (!aten_error)
		aten_error = err;
}

static size_t elem_size(aclDataType t)
{
	switch (t) {
	case ACL_FLOAT:
	case ACL_INT32:
		return 4;
	case ACL_FLOAT16:
	case ACL_BF16:
		return 2;
	case ACL_INT8:
	case ACL_UINT8:
	case ACL_BOOL:
		return 1;
	case ACL_INT64:
	case ACL_DOUBLE:
		return 8;
	default:
		return 0;
	}
}

/* ---- tensors ------------------------------------------------------------------------------- */

struct at_tensor npu_tensor_empty(const int64_t *sizes, int ndim, aclDataType dtype, int device)
{
	struct at_tensor t = { NULL };
	struct npu_tensor_impl *i;
	uint64_t n = 1;

	if (ndim < 0 || ndim > NPU_TENSOR_MAX_DIMS || (ndim && !sizes) || !elem_size(dtype)) {
		npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
		return t;
	}
	for (int d = 0; d < ndim; d++) {
		if (sizes[d] < 0) {
			npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
			return t;
		}
		n *= (uint64_t)sizes[d];
	}
	i = calloc(1, sizeof(*i));
	if (!i) {
		npu_aten_set_error(ACL_ERROR_BAD_ALLOC);
		return t;
	}
	i->magic = TENSOR_MAGIC;
	i->refcount = 1;
	i->ndim = ndim;
	memcpy(i->sizes, sizes, (size_t)ndim * sizeof(int64_t));
	i->dtype = dtype;
	i->format = ndim == 4 ? ACL_FORMAT_NCHW : ACL_FORMAT_ND;
	i->device = device;
	i->nbytes = n * elem_size(dtype);
	if (device < 0) {
		i->data = malloc(i->nbytes ? i->nbytes : 1);
	} else if (!backend) {
		npu_aten_set_error(ACL_ERROR_UNINITIALIZE); /* no NPU backend loaded */
	} else {
		i->data = backend->alloc(i->nbytes ? i->nbytes : 1, device, &i->stream);
		if (!i->data)
			npu_aten_set_error(ACL_ERROR_RT_MEMORY_ALLOCATION);
	}
	if (!i->data) {
		free(i);
		return t;
	}
	t.impl = i;
	return t;
}

struct at_tensor npu_tensor_ref(const struct at_tensor *t)
{
	struct at_tensor r = { t ? t->impl : NULL };

	if (r.impl)
		__atomic_add_fetch(&r.impl->refcount, 1, __ATOMIC_RELAXED);
	return r;
}

void npu_tensor_release(struct at_tensor *t)
{
	struct npu_tensor_impl *i = t ? t->impl : NULL;

	if (!i)
		return;
	t->impl = NULL;
	if (__atomic_sub_fetch(&i->refcount, 1, __ATOMIC_ACQ_REL))
		return;
	if (npu_autograd_release_meta(i))
		return;
	if (i->base) {
		struct at_tensor b = { i->base };

		npu_tensor_release(&b); /* a view: the storage is the base's */
	} else if (i->device < 0)
		free(i->data);
	else if (backend)
		backend->free(i->data);
	i->magic = 0;
	free(i);
}

uint64_t npu_tensor_numel(const struct at_tensor *t)
{
	uint64_t n = 1;

	if (!t || !t->impl)
		return 0;
	for (int d = 0; d < t->impl->ndim; d++)
		n *= (uint64_t)t->impl->sizes[d];
	return n;
}

static int defined(const struct at_tensor *t)
{
	return t && t->impl && t->impl->magic == TENSOR_MAGIC;
}

static struct at_tensor like(const struct at_tensor *t)
{
	return npu_tensor_empty(t->impl->sizes, t->impl->ndim, t->impl->dtype, t->impl->device);
}

/* Runs backend op `op`; on failure releases the outputs and records the error. */
static int dispatch(const char *op, struct at_tensor *outs, int nout,
		    const struct at_tensor *const *ins, int nin, const double *x, int nx)
{
	int r;

	for (int i = 0; i < nout; i++)
		if (!outs[i].impl)
			goto fail;
	for (int i = 0; i < nin; i++)
		if (!defined(ins[i])) {
			npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
			goto fail;
		}
	if (!backend) {
		npu_aten_set_error(ACL_ERROR_UNINITIALIZE);
		goto fail;
	}
	r = backend->op(op, outs, nout, ins, nin, x, nx);
	if (!r)
		return 0;
	npu_aten_set_error(r);
fail:
	for (int i = 0; i < nout; i++)
		npu_tensor_release(&outs[i]);
	return -1;
}

/* Broadcast shape of a and b (numpy rules); -1 if they do not broadcast. */
static int broadcast(const struct npu_tensor_impl *a, const struct npu_tensor_impl *b, int64_t *out)
{
	int n = a->ndim > b->ndim ? a->ndim : b->ndim;

	for (int i = 0; i < n; i++) {
		int ia = a->ndim - n + i, ib = b->ndim - n + i;
		int64_t da = ia >= 0 ? a->sizes[ia] : 1, db = ib >= 0 ? b->sizes[ib] : 1;

		if (da != db && da != 1 && db != 1)
			return -1;
		out[i] = da == 1 ? db : da;
	}
	return n;
}

static struct at_tensor binary(const char *op, const struct at_tensor *a, const struct at_tensor *b,
			       const double *x, int nx)
{
	struct at_tensor out = { NULL };
	int64_t sizes[NPU_TENSOR_MAX_DIMS];
	int n;

	if (!defined(a) || !defined(b)) {
		npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
		return out;
	}
	n = broadcast(a->impl, b->impl, sizes);
	if (n < 0) {
		npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
		return out;
	}
	out = npu_tensor_empty(sizes, n, a->impl->dtype, a->impl->device);
	dispatch(op, &out, 1, (const struct at_tensor *const[]){ a, b }, 2, x, nx);
	return out;
}

static struct at_tensor unary(const char *op, const struct at_tensor *a, const double *x, int nx)
{
	struct at_tensor out = { NULL };

	if (!defined(a)) {
		npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
		return out;
	}
	out = like(a);
	dispatch(op, &out, 1, (const struct at_tensor *const[]){ a }, 1, x, nx);
	return out;
}

/* In-place op on self with extra tensor operands. */
static struct at_tensor *inplace(const char *op, struct at_tensor *self, const struct at_tensor *t1,
				 const struct at_tensor *t2, const double *x, int nx)
{
	const struct at_tensor *ins[3] = { self, t1, t2 };
	int nin = 1 + !!t1 + !!t2;
	struct at_tensor out;

	if (!defined(self)) {
		npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
		return self;
	}
	out = npu_tensor_ref(self);
	if (dispatch(op, &out, 1, ins, nin, x, nx))
		return self; /* dispatch released our extra reference */
	npu_tensor_release(&out);
	return self;
}

/* A view of t with other sizes (same element count), sharing t's storage. */
static struct at_tensor make_view(const struct at_tensor *t, const int64_t *sizes, int ndim)
{
	struct at_tensor v = { NULL };
	struct npu_tensor_impl *i;
	uint64_t n = 1;

	if (!defined(t) || ndim < 0 || ndim > NPU_TENSOR_MAX_DIMS)
		goto bad;
	for (int d = 0; d < ndim; d++) {
		if (sizes[d] < 0)
			goto bad;
		n *= (uint64_t)sizes[d];
	}
	if (n != npu_tensor_numel(t))
		goto bad;
	i = calloc(1, sizeof(*i));
	if (!i) {
		npu_aten_set_error(ACL_ERROR_BAD_ALLOC);
		return v;
	}
	*i = *t->impl;
	i->refcount = 1;
	i->grad_fn = NULL; /* the view op gives it its own */
	i->output_nr = 0;
	i->requires_grad = false;
	i->grad_accumulator = NULL;
	i->grad = NULL;
	i->ndim = ndim;
	memcpy(i->sizes, sizes, (size_t)ndim * sizeof(int64_t));
	i->base = npu_tensor_ref(t).impl;
	v.impl = i;
	return v;
bad:
	npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
	return v;
}

/*
 * Every op enters the dispatcher (npu_autograd_op_enter: its RecordFunction
 * seqNr, -1 when nested or with grad mode off) and leaves it; the journal
 * line carries seq, fwd (0: the forward thread id is only set on backward
 * nodes' ranges) and grad_fn, the class of the backward node the op created.
 */
#define ATEN_ENTER()                                      \
	NPU_API_ENTER();                                  \
	const int64_t aten_seq = npu_autograd_op_enter(); \
	const char *aten_grad_fn = NULL

#define ATEN_EXIT(r, op)                                                                 \
	do {                                                                             \
		npu_autograd_op_exit();                                                  \
		NPU_API_EXIT("framework", (r), "\top=aten::" op "\tseq=%lld\tfwd=0%s%s", \
			     (long long)aten_seq, aten_grad_fn ? "\tgrad_fn=" : "",      \
			     aten_grad_fn ? aten_grad_fn : "");                          \
	} while (0)

/* The op's autograd kernel: its backward node before the implementation runs (or NULL). */
#define AG_NODE(cls, nin, ...)                                                             \
	ag_node(aten_seq, &(cls), (const struct at_tensor *const[]){ __VA_ARGS__ }, (nin), \
		&aten_grad_fn)

static struct torch_autograd_node *ag_node(int64_t seq, const struct torch_autograd_vtable *vt,
					   const struct at_tensor *const *ins, int nin,
					   const char **name)
{
	struct torch_autograd_node *n = npu_ag_node_new(seq, vt, ins, nin);

	if (n)
		*name = n->name;
	return n;
}
#define TRET(t) ((t)->impl ? 0 : -1)

/* ---- the ops -------------------------------------------------------------------------------- */

/* at::Tensor at::_ops::add_Tensor::call(const Tensor &self, const Tensor &other,
 *				      const Scalar &alpha) */
NPU_NOINLINE struct at_tensor *_ZN2at4_ops10add_Tensor4callERKNS_6TensorES4_RKN3c106ScalarE(
	struct at_tensor *ret, const struct at_tensor *self, const struct at_tensor *other,
	const struct c10_scalar *alpha)
{
	double x = alpha ? alpha->v : 1.0;
	ATEN_ENTER();
	struct torch_autograd_node *fn = AG_NODE(_ZTVN5torch8autograd9generated12AddBackward0E, 2,
						 self, other);

	*ret = binary("add", self, other, &x, 1);
	npu_ag_set_outputs(fn, ret, 1);
	ATEN_EXIT(TRET(ret), "add");
	return ret;
}

/* at::Tensor at::_ops::mul_Tensor::call(const Tensor &self, const Tensor &other) */
NPU_NOINLINE struct at_tensor *
_ZN2at4_ops10mul_Tensor4callERKNS_6TensorES4_(struct at_tensor *ret, const struct at_tensor *self,
					      const struct at_tensor *other)
{
	ATEN_ENTER();
	struct torch_autograd_node *fn = AG_NODE(_ZTVN5torch8autograd9generated12MulBackward0E, 2,
						 self, other);

	npu_ag_save(fn, 0, self);
	npu_ag_save(fn, 1, other);
	*ret = binary("mul", self, other, NULL, 0);
	npu_ag_set_outputs(fn, ret, 1);
	ATEN_EXIT(TRET(ret), "mul");
	return ret;
}

/* at::Tensor at::_ops::mm::call(const Tensor &self, const Tensor &mat2): [..,M,K] x [K,N] */
NPU_NOINLINE struct at_tensor *_ZN2at4_ops2mm4callERKNS_6TensorES4_(struct at_tensor *ret,
								    const struct at_tensor *self,
								    const struct at_tensor *mat2)
{
	int64_t sizes[NPU_TENSOR_MAX_DIMS];
	const struct npu_tensor_impl *a, *b;
	ATEN_ENTER();
	struct torch_autograd_node *fn = AG_NODE(_ZTVN5torch8autograd9generated11MmBackward0E, 2,
						 self, mat2);

	npu_ag_save(fn, 0, self);
	npu_ag_save(fn, 1, mat2);
	ret->impl = NULL;
	if (!defined(self) || !defined(mat2) || self->impl->ndim < 2 || mat2->impl->ndim != 2 ||
	    self->impl->sizes[self->impl->ndim - 1] != mat2->impl->sizes[0]) {
		npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
		goto out;
	}
	a = self->impl;
	b = mat2->impl;
	memcpy(sizes, a->sizes, sizeof(sizes));
	sizes[a->ndim - 1] = b->sizes[1];
	*ret = npu_tensor_empty(sizes, a->ndim, a->dtype, a->device);
	dispatch("mm", ret, 1, (const struct at_tensor *const[]){ self, mat2 }, 2, NULL, 0);
out:
	npu_ag_set_outputs(fn, ret, 1);
	ATEN_EXIT(TRET(ret), "mm");
	return ret;
}

/* at::Tensor at::_ops::addmm::call(self, mat1, mat2, const Scalar &beta, const Scalar &alpha) */
NPU_NOINLINE struct at_tensor *_ZN2at4_ops5addmm4callERKNS_6TensorES4_S4_RKN3c106ScalarES8_(
	struct at_tensor *ret, const struct at_tensor *self, const struct at_tensor *mat1,
	const struct at_tensor *mat2, const struct c10_scalar *beta, const struct c10_scalar *alpha)
{
	double x[2] = { beta ? beta->v : 1.0, alpha ? alpha->v : 1.0 };
	int64_t sizes[2];
	ATEN_ENTER();
	struct torch_autograd_node *fn = AG_NODE(_ZTVN5torch8autograd9generated14AddmmBackward0E, 3,
						 self, mat1, mat2);

	npu_ag_save(fn, 0, mat1);
	npu_ag_save(fn, 1, mat2);
	ret->impl = NULL;
	if (!defined(self) || !defined(mat1) || !defined(mat2) || mat1->impl->ndim != 2 ||
	    mat2->impl->ndim != 2 || mat1->impl->sizes[1] != mat2->impl->sizes[0]) {
		npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
		goto out;
	}
	sizes[0] = mat1->impl->sizes[0];
	sizes[1] = mat2->impl->sizes[1];
	*ret = npu_tensor_empty(sizes, 2, mat1->impl->dtype, mat1->impl->device);
	dispatch("addmm", ret, 1, (const struct at_tensor *const[]){ self, mat1, mat2 }, 3, x, 2);
out:
	npu_ag_set_outputs(fn, ret, 1);
	ATEN_EXIT(TRET(ret), "addmm");
	return ret;
}

/* at::Tensor at::_ops::t::call(const Tensor &self): a 2-D transpose view (no kernel). */
NPU_NOINLINE struct at_tensor *_ZN2at4_ops1t4callERKNS_6TensorE(struct at_tensor *ret,
								const struct at_tensor *self)
{
	int64_t sizes[2];
	ATEN_ENTER();
	struct torch_autograd_node *fn = AG_NODE(_ZTVN5torch8autograd9generated10TBackward0E, 1,
						 self);

	ret->impl = NULL;
	if (defined(self) && self->impl->ndim == 2) {
		sizes[0] = self->impl->sizes[1];
		sizes[1] = self->impl->sizes[0];
		*ret = make_view(self, sizes, 2);
	} else {
		npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
	}
	npu_ag_set_outputs(fn, ret, 1);
	ATEN_EXIT(TRET(ret), "t");
	return ret;
}

/* at::Tensor at::_ops::view::call(const Tensor &self, IntArrayRef size): no kernel. */
NPU_NOINLINE struct at_tensor *_ZN2at4_ops4view4callERKNS_6TensorEN3c108ArrayRefIlEE(
	struct at_tensor *ret, const struct at_tensor *self, struct c10_int_array_ref size)
{
	ATEN_ENTER();
	struct torch_autograd_node *fn = AG_NODE(_ZTVN5torch8autograd9generated13ViewBackward0E, 1,
						 self);

	if (fn && defined(self)) { /* self_sym_sizes */
		npu_ag_save_int(fn, 0, self->impl->ndim);
		for (int d = 0; d < self->impl->ndim; d++)
			npu_ag_save_int(fn, 1 + d, self->impl->sizes[d]);
	}
	*ret = make_view(self, size.data, (int)size.len);
	npu_ag_set_outputs(fn, ret, 1);
	ATEN_EXIT(TRET(ret), "view");
	return ret;
}

/* at::Tensor at::_ops::relu::call(const Tensor &self) */
NPU_NOINLINE struct at_tensor *_ZN2at4_ops4relu4callERKNS_6TensorE(struct at_tensor *ret,
								   const struct at_tensor *self)
{
	ATEN_ENTER();
	struct torch_autograd_node *fn = AG_NODE(_ZTVN5torch8autograd9generated13ReluBackward0E, 1,
						 self);

	*ret = unary("relu", self, NULL, 0);
	npu_ag_save(fn, 0, ret); /* result */
	npu_ag_set_outputs(fn, ret, 1);
	ATEN_EXIT(TRET(ret), "relu");
	return ret;
}

/* at::Tensor at::_ops::threshold_backward::call(grad_output, self, const Scalar &threshold) */
NPU_NOINLINE struct at_tensor *_ZN2at4_ops18threshold_backward4callERKNS_6TensorES4_RKN3c106ScalarE(
	struct at_tensor *ret, const struct at_tensor *grad_output, const struct at_tensor *self,
	const struct c10_scalar *threshold)
{
	double x = threshold ? threshold->v : 0.0;
	ATEN_ENTER();

	*ret = binary("threshold_backward", grad_output, self, &x, 1);
	ATEN_EXIT(TRET(ret), "threshold_backward");
	return ret;
}

/* at::Tensor at::_ops::gelu::call(const Tensor &self, c10::string_view approximate) */
NPU_NOINLINE struct at_tensor *_ZN2at4_ops4gelu4callERKNS_6TensorEN3c1017basic_string_viewIcEE(
	struct at_tensor *ret, const struct at_tensor *self, struct c10_string_view approximate)
{
	ATEN_ENTER();
	struct torch_autograd_node *fn = AG_NODE(_ZTVN5torch8autograd9generated13GeluBackward0E, 1,
						 self);

	(void)approximate;
	npu_ag_save(fn, 0, self);
	*ret = unary("gelu", self, NULL, 0);
	npu_ag_set_outputs(fn, ret, 1);
	ATEN_EXIT(TRET(ret), "gelu");
	return ret;
}

/* at::Tensor at::_ops::gelu_backward::call(grad_output, self, c10::string_view approximate) */
NPU_NOINLINE struct at_tensor *
_ZN2at4_ops13gelu_backward4callERKNS_6TensorES4_N3c1017basic_string_viewIcEE(
	struct at_tensor *ret, const struct at_tensor *grad_output, const struct at_tensor *self,
	struct c10_string_view approximate)
{
	ATEN_ENTER();

	(void)approximate;
	*ret = binary("gelu_backward", grad_output, self, NULL, 0);
	ATEN_EXIT(TRET(ret), "gelu_backward");
	return ret;
}

/* at::Tensor at::_ops::_softmax::call(const Tensor &self, int64_t dim, bool half_to_float) */
NPU_NOINLINE struct at_tensor *
_ZN2at4_ops8_softmax4callERKNS_6TensorElb(struct at_tensor *ret, const struct at_tensor *self,
					  int64_t dim, bool half_to_float)
{
	double x = (double)dim;
	ATEN_ENTER();
	struct torch_autograd_node *fn = AG_NODE(_ZTVN5torch8autograd9generated16SoftmaxBackward0E,
						 1, self);

	(void)half_to_float;
	*ret = unary("softmax", self, &x, 1);
	npu_ag_save(fn, 0, ret); /* result */
	npu_ag_save_int(fn, 0, dim);
	npu_ag_set_outputs(fn, ret, 1);
	ATEN_EXIT(TRET(ret), "_softmax");
	return ret;
}

/* at::Tensor at::_ops::_softmax_backward_data::call(grad, output, int64_t dim, ScalarType) */
NPU_NOINLINE struct at_tensor *
_ZN2at4_ops22_softmax_backward_data4callERKNS_6TensorES4_lN3c1010ScalarTypeE(
	struct at_tensor *ret, const struct at_tensor *grad_output, const struct at_tensor *output,
	int64_t dim, int8_t input_dtype)
{
	double x = (double)dim;
	ATEN_ENTER();

	(void)input_dtype;
	*ret = binary("softmax_backward", grad_output, output, &x, 1);
	ATEN_EXIT(TRET(ret), "_softmax_backward_data");
	return ret;
}

/* rows x 1 float statistics of a layer norm over the last dimension */
static struct at_tensor stats_like(const struct at_tensor *input)
{
	int64_t rows = 1;

	for (int d = 0; d < input->impl->ndim - 1; d++)
		rows *= input->impl->sizes[d];
	return npu_tensor_empty((const int64_t[]){ rows, 1 }, 2, ACL_FLOAT, input->impl->device);
}

/*
 * std::tuple<Tensor,Tensor,Tensor> at::_ops::native_layer_norm::call(const Tensor &input,
 *	IntArrayRef normalized_shape, const optional<Tensor> &weight,
 *	const optional<Tensor> &bias, double eps)
 */
NPU_NOINLINE struct at_tensor3 *
_ZN2at4_ops17native_layer_norm4callERKNS_6TensorEN3c108ArrayRefIlEERKNS5_8optionalIS2_EESB_d(
	struct at_tensor3 *ret, const struct at_tensor *input,
	struct c10_int_array_ref normalized_shape, const struct c10_optional_tensor *weight,
	const struct c10_optional_tensor *bias, double eps)
{
	const struct at_tensor *ins[3] = { input };
	int nin = 1, r = -1;
	ATEN_ENTER();
	const struct at_tensor *w = weight && weight->has ? &weight->value : NULL;
	const struct at_tensor *b = bias && bias->has ? &bias->value : NULL;
	struct torch_autograd_node *fn =
		AG_NODE(_ZTVN5torch8autograd9generated24NativeLayerNormBackward0E, 3, input, w, b);

	memset(ret, 0, sizeof(*ret));
	if (!defined(input) || normalized_shape.len != 1 ||
	    normalized_shape.data[0] != input->impl->sizes[input->impl->ndim - 1]) {
		npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
		goto out;
	}
	if (weight && weight->has)
		ins[nin++] = &weight->value;
	if (bias && bias->has && nin == 2)
		ins[nin++] = &bias->value;
	ret->t[0] = like(input);
	ret->t[1] = stats_like(input);
	ret->t[2] = stats_like(input);
	r = dispatch("layer_norm", ret->t, 3, ins, nin, &eps, 1);
out:
	if (fn && !r) {
		npu_ag_save(fn, 0, input);
		npu_ag_save(fn, 1, &ret->t[1]); /* mean */
		npu_ag_save(fn, 2, &ret->t[2]); /* rstd */
		npu_ag_save(fn, 3, w);
		npu_ag_save(fn, 4, b);
		npu_ag_save_int(fn, 0, normalized_shape.data[0]);
	}
	npu_ag_set_outputs(fn, ret->t, 3);
	ATEN_EXIT(r, "native_layer_norm");
	return ret;
}

/*
 * std::tuple<Tensor,Tensor,Tensor> at::_ops::native_layer_norm_backward::call(
 *	const Tensor &grad_out, const Tensor &input, IntArrayRef normalized_shape,
 *	const Tensor &mean, const Tensor &rstd, const optional<Tensor> &weight,
 *	const optional<Tensor> &bias, std::array<bool,3> output_mask)
 */
NPU_NOINLINE struct at_tensor3 *
_ZN2at4_ops26native_layer_norm_backward4callERKNS_6TensorES4_N3c108ArrayRefIlEES4_S4_RKNS5_8optionalIS2_EESB_St5arrayIbLm3EE(
	struct at_tensor3 *ret, const struct at_tensor *grad_out, const struct at_tensor *input,
	struct c10_int_array_ref normalized_shape, const struct at_tensor *mean,
	const struct at_tensor *rstd, const struct c10_optional_tensor *weight,
	const struct c10_optional_tensor *bias, struct std_array_bool3 output_mask)
{
	const struct at_tensor *ins[5] = { grad_out, input, mean, rstd };
	int64_t n = normalized_shape.len == 1 ? normalized_shape.data[0] : -1;
	int nin = 4, r = -1;
	ATEN_ENTER();

	(void)bias;
	(void)output_mask;
	memset(ret, 0, sizeof(*ret));
	if (!defined(input) || n != input->impl->sizes[input->impl->ndim - 1]) {
		npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
		goto out;
	}
	if (weight && weight->has)
		ins[nin++] = &weight->value;
	ret->t[0] = like(input);
	ret->t[1] = npu_tensor_empty(&n, 1, input->impl->dtype, input->impl->device);
	ret->t[2] = npu_tensor_empty(&n, 1, input->impl->dtype, input->impl->device);
	r = dispatch("layer_norm_backward", ret->t, 3, ins, nin, NULL, 0);
out:
	ATEN_EXIT(r, "native_layer_norm_backward");
	return ret;
}

static int conv_out_shape(const struct npu_tensor_impl *in, const struct npu_tensor_impl *w,
			  int64_t stride, int64_t pad, int64_t *out)
{
	if (in->ndim != 4 || w->ndim != 4 || in->sizes[1] != w->sizes[1] || stride < 1 || pad < 0)
		return -1;
	out[0] = in->sizes[0];
	out[1] = w->sizes[0];
	out[2] = (in->sizes[2] + 2 * pad - w->sizes[2]) / stride + 1;
	out[3] = (in->sizes[3] + 2 * pad - w->sizes[3]) / stride + 1;
	return out[2] > 0 && out[3] > 0 ? 0 : -1;
}

/*
 * at::Tensor at::_ops::convolution::call(input, weight, const optional<Tensor> &bias,
 *	IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
 *	IntArrayRef output_padding, int64_t groups)
 * (the model takes square stride/padding, dilation 1, groups 1)
 */
NPU_NOINLINE struct at_tensor *
_ZN2at4_ops11convolution4callERKNS_6TensorES4_RKN3c108optionalIS2_EENS5_8ArrayRefIlEESB_SB_bSB_l(
	struct at_tensor *ret, const struct at_tensor *input, const struct at_tensor *weight,
	const struct c10_optional_tensor *bias, struct c10_int_array_ref stride,
	struct c10_int_array_ref padding, struct c10_int_array_ref dilation, bool transposed,
	struct c10_int_array_ref output_padding, int64_t groups)
{
	const struct at_tensor *ins[3] = { input, weight };
	double x[2];
	int64_t sizes[4];
	int nin = 2;
	ATEN_ENTER();
	struct torch_autograd_node *fn =
		AG_NODE(_ZTVN5torch8autograd9generated20ConvolutionBackward0E, 3, input, weight,
			bias && bias->has ? &bias->value : NULL);

	(void)dilation;
	(void)output_padding;
	ret->impl = NULL;
	x[0] = stride.len ? (double)stride.data[0] : 1;
	x[1] = padding.len ? (double)padding.data[0] : 0;
	if (!defined(input) || !defined(weight) || transposed || groups != 1 ||
	    conv_out_shape(input->impl, weight->impl, (int64_t)x[0], (int64_t)x[1], sizes)) {
		npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
		goto out;
	}
	if (bias && bias->has)
		ins[nin++] = &bias->value;
	*ret = npu_tensor_empty(sizes, 4, input->impl->dtype, input->impl->device);
	dispatch("convolution", ret, 1, ins, nin, x, 2);
	if (fn) {
		npu_ag_save(fn, 0, input);
		npu_ag_save(fn, 1, weight);
		npu_ag_save_int(fn, 0, (int64_t)x[0]);
		npu_ag_save_int(fn, 1, (int64_t)x[1]);
		npu_ag_save_int(fn, 2, bias && bias->has);
	}
out:
	npu_ag_set_outputs(fn, ret, 1);
	ATEN_EXIT(TRET(ret), "convolution");
	return ret;
}

/*
 * std::tuple<Tensor,Tensor,Tensor> at::_ops::convolution_backward::call(grad_output, input,
 *	weight, optional<IntArrayRef> bias_sizes, IntArrayRef stride, IntArrayRef padding,
 *	IntArrayRef dilation, bool transposed, IntArrayRef output_padding, int64_t groups,
 *	std::array<bool,3> output_mask)
 */
NPU_NOINLINE struct at_tensor3 *
_ZN2at4_ops20convolution_backward4callERKNS_6TensorES4_S4_N3c108optionalINS5_8ArrayRefIlEEEES8_S8_S8_bS8_lSt5arrayIbLm3EE(
	struct at_tensor3 *ret, const struct at_tensor *grad_output, const struct at_tensor *input,
	const struct at_tensor *weight, struct c10_optional_int_array bias_sizes,
	struct c10_int_array_ref stride, struct c10_int_array_ref padding,
	struct c10_int_array_ref dilation, bool transposed, struct c10_int_array_ref output_padding,
	int64_t groups, struct std_array_bool3 output_mask)
{
	double x[2];
	int nout = 2, r = -1;
	ATEN_ENTER();

	(void)dilation;
	(void)output_padding;
	memset(ret, 0, sizeof(*ret));
	x[0] = stride.len ? (double)stride.data[0] : 1;
	x[1] = padding.len ? (double)padding.data[0] : 0;
	if (!defined(input) || !defined(weight) || !defined(grad_output) || transposed ||
	    groups != 1) {
		npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
		goto out;
	}
	ret->t[0] = like(input);
	ret->t[1] = like(weight);
	if (bias_sizes.has && output_mask.v[2]) {
		ret->t[2] = npu_tensor_empty(weight->impl->sizes, 1, weight->impl->dtype,
					     weight->impl->device);
		nout = 3;
	}
	r = dispatch("convolution_backward", ret->t, nout,
		     (const struct at_tensor *const[]){ grad_output, input, weight }, 3, x, 2);
out:
	ATEN_EXIT(r, "convolution_backward");
	return ret;
}

/*
 * at::Tensor at::_ops::empty_memory_format::call(IntArrayRef size, optional<ScalarType> dtype,
 *	optional<Layout>, optional<Device>, optional<bool> pin_memory, optional<MemoryFormat>)
 * (the model puts it on the NPU of the current process: device 0 unless set otherwise)
 */
static int aten_device;
NPU_NOINLINE struct at_tensor *
_ZN2at4_ops19empty_memory_format4callEN3c108ArrayRefIlEENS2_8optionalINS2_10ScalarTypeEEENS5_INS2_6LayoutEEENS5_INS2_6DeviceEEENS5_IbEENS5_INS2_12MemoryFormatEEE(
	struct at_tensor *ret, struct c10_int_array_ref size, struct c10_optional_scalar_type dtype,
	uint16_t layout, uint32_t device, uint16_t pin_memory, uint16_t memory_format)
{
	ATEN_ENTER();

	(void)layout;
	(void)device;
	(void)pin_memory;
	(void)memory_format;
	*ret = npu_tensor_empty(size.data, (int)size.len,
				dtype.has ? (aclDataType)dtype.value : ACL_FLOAT, aten_device);
	ATEN_EXIT(TRET(ret), "empty");
	return ret;
}

/* at::Tensor &at::_ops::copy_::call(Tensor &self, const Tensor &src, bool non_blocking) */
NPU_NOINLINE struct at_tensor *
_ZN2at4_ops5copy_4callERNS_6TensorERKS2_b(struct at_tensor *self, const struct at_tensor *src,
					  bool non_blocking)
{
	struct at_tensor out;
	double x;
	int r = -1;
	ATEN_ENTER();

	(void)non_blocking;
	if (!defined(self) || !defined(src) || npu_tensor_numel(self) != npu_tensor_numel(src)) {
		npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
		goto out;
	}
	/* Same-device copies with or without a dtype change run the Cast kernel. */
	x = (double)self->impl->dtype;
	out = npu_tensor_ref(self);
	r = dispatch("cast", &out, 1, (const struct at_tensor *const[]){ src }, 1, &x, 1);
	if (!r)
		npu_tensor_release(&out);
out:
	ATEN_EXIT(r, "copy_");
	return self;
}

/*
 * at::Tensor at::_ops::_to_copy::call(const Tensor &self, optional<ScalarType> dtype,
 *	optional<Layout>, optional<Device>, optional<bool> pin_memory, bool non_blocking,
 *	optional<MemoryFormat>)
 * A composite, as in PyTorch: empty_memory_format, then copy_.
 */
NPU_NOINLINE struct at_tensor *
_ZN2at4_ops8_to_copy4callERKNS_6TensorEN3c108optionalINS5_10ScalarTypeEEENS6_INS5_6LayoutEEENS6_INS5_6DeviceEEENS6_IbEEbNS6_INS5_12MemoryFormatEEE(
	struct at_tensor *ret, const struct at_tensor *self, struct c10_optional_scalar_type dtype,
	uint16_t layout, uint32_t device, uint16_t pin_memory, bool non_blocking,
	uint16_t memory_format)
{
	struct c10_optional_scalar_type dt;
	ATEN_ENTER();

	ret->impl = NULL;
	if (!defined(self)) {
		npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
		goto out;
	}
	dt.has = 1;
	dt.value = (int8_t)(dtype.has ? dtype.value : self->impl->dtype);
	aten_device = self->impl->device;
	_ZN2at4_ops19empty_memory_format4callEN3c108ArrayRefIlEENS2_8optionalINS2_10ScalarTypeEEENS5_INS2_6LayoutEEENS5_INS2_6DeviceEEENS5_IbEENS5_INS2_12MemoryFormatEEE(
		ret, (struct c10_int_array_ref){ self->impl->sizes, (size_t)self->impl->ndim }, dt,
		layout, device, pin_memory, memory_format);
	if (ret->impl) {
		_ZN2at4_ops5copy_4callERNS_6TensorERKS2_b(ret, self, non_blocking);
		if (aten_error)
			npu_tensor_release(ret);
	}
out:
	ATEN_EXIT(TRET(ret), "_to_copy");
	return ret;
}

/*
 * at::Tensor at::_ops::sum_dim_IntList::call(const Tensor &self, optional<IntArrayRef> dim,
 *	bool keepdim, optional<ScalarType> dtype)
 * (the model reduces dimension 0, what bias gradients need)
 */
NPU_NOINLINE struct at_tensor *
_ZN2at4_ops15sum_dim_IntList4callERKNS_6TensorEN3c108optionalINS5_8ArrayRefIlEEEEbNS6_INS5_10ScalarTypeEEE(
	struct at_tensor *ret, const struct at_tensor *self, struct c10_optional_int_array dim,
	bool keepdim, struct c10_optional_scalar_type dtype)
{
	ATEN_ENTER();

	(void)dim;
	(void)dtype;
	ret->impl = NULL;
	if (!defined(self) || self->impl->ndim < 1) {
		npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
		goto out;
	}
	if (self->impl->ndim == 1 || keepdim)
		*ret = npu_tensor_empty((const int64_t[]){ 1 }, 1, self->impl->dtype,
					self->impl->device);
	else
		*ret = npu_tensor_empty(self->impl->sizes + 1, self->impl->ndim - 1,
					self->impl->dtype, self->impl->device);
	dispatch("sum", ret, 1, (const struct at_tensor *const[]){ self }, 1, NULL, 0);
out:
	ATEN_EXIT(TRET(ret), "sum");
	return ret;
}

/* at::Tensor at::_ops::sqrt::call(const Tensor &self) */
NPU_NOINLINE struct at_tensor *_ZN2at4_ops4sqrt4callERKNS_6TensorE(struct at_tensor *ret,
								   const struct at_tensor *self)
{
	ATEN_ENTER();

	*ret = unary("sqrt", self, NULL, 0);
	ATEN_EXIT(TRET(ret), "sqrt");
	return ret;
}

/* at::Tensor at::_ops::nonzero::call(const Tensor &self): [numel, ndim] (upper bound) */
NPU_NOINLINE struct at_tensor *_ZN2at4_ops7nonzero4callERKNS_6TensorE(struct at_tensor *ret,
								      const struct at_tensor *self)
{
	ATEN_ENTER();

	ret->impl = NULL;
	if (!defined(self)) {
		npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
		goto out;
	}
	*ret = npu_tensor_empty((const int64_t[]){ (int64_t)npu_tensor_numel(self),
						   self->impl->ndim },
				2, ACL_INT64, self->impl->device);
	dispatch("nonzero", ret, 1, (const struct at_tensor *const[]){ self }, 1, NULL, 0);
out:
	ATEN_EXIT(TRET(ret), "nonzero");
	return ret;
}

/* at::Tensor &at::_ops::mul__Scalar::call(Tensor &self, const Scalar &other) */
NPU_NOINLINE struct at_tensor *
_ZN2at4_ops11mul__Scalar4callERNS_6TensorERKN3c106ScalarE(struct at_tensor *self,
							  const struct c10_scalar *other)
{
	double x = other ? other->v : 1.0;
	ATEN_ENTER();

	inplace("mul_scalar_", self, NULL, NULL, &x, 1);
	ATEN_EXIT(0, "mul_");
	return self;
}

/* at::Tensor &at::_ops::add__Scalar::call(Tensor &self, const Scalar &other,
 *					 const Scalar &alpha) */
NPU_NOINLINE struct at_tensor *_ZN2at4_ops11add__Scalar4callERNS_6TensorERKN3c106ScalarES7_(
	struct at_tensor *self, const struct c10_scalar *other, const struct c10_scalar *alpha)
{
	double x[2] = { other ? other->v : 0.0, alpha ? alpha->v : 1.0 };
	ATEN_ENTER();

	inplace("add_scalar_", self, NULL, NULL, x, 2);
	ATEN_EXIT(0, "add_");
	return self;
}

/* at::Tensor &at::_ops::addcmul_::call(Tensor &self, const Tensor &t1, const Tensor &t2,
 *				      const Scalar &value) */
NPU_NOINLINE struct at_tensor *_ZN2at4_ops8addcmul_4callERNS_6TensorERKS2_S5_RKN3c106ScalarE(
	struct at_tensor *self, const struct at_tensor *t1, const struct at_tensor *t2,
	const struct c10_scalar *value)
{
	double x = value ? value->v : 1.0;
	ATEN_ENTER();

	inplace("addcmul_", self, t1, t2, &x, 1);
	ATEN_EXIT(0, "addcmul_");
	return self;
}

/* at::Tensor &at::_ops::addcdiv_::call(Tensor &self, const Tensor &t1, const Tensor &t2,
 *				      const Scalar &value) */
NPU_NOINLINE struct at_tensor *_ZN2at4_ops8addcdiv_4callERNS_6TensorERKS2_S5_RKN3c106ScalarE(
	struct at_tensor *self, const struct at_tensor *t1, const struct at_tensor *t2,
	const struct c10_scalar *value)
{
	double x = value ? value->v : 1.0;
	ATEN_ENTER();

	inplace("addcdiv_", self, t1, t2, &x, 1);
	ATEN_EXIT(0, "addcdiv_");
	return self;
}

/*
 * void at::_ops::_foreach_mul__Scalar::call(TensorList self, const Scalar &scalar):
 * one multi-tensor kernel per chunk of up to 15 tensors (torch_npu's foreach
 * ops split long lists the same way).
 */
NPU_NOINLINE void _ZN2at4_ops20_foreach_mul__Scalar4callEN3c108ArrayRefINS_6TensorEEERKNS2_6ScalarE(
	struct c10_tensor_list self, const struct c10_scalar *scalar)
{
	const struct at_tensor *ins[16];
	struct at_tensor s = { NULL }, outs[15];
	double x = scalar ? scalar->v : 1.0;
	int r = -1;
	ATEN_ENTER();

	if (!self.len || !self.data || !defined(&self.data[0])) {
		npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
		goto out;
	}
	/* The scalar travels as a one-element tensor, as torch_npu passes it to aclnn. */
	s = npu_tensor_empty((const int64_t[]){ 1 }, 1, ACL_FLOAT, self.data[0].impl->device);
	if (!s.impl)
		goto out;
	r = 0;
	for (size_t at = 0; at < self.len && !r; at += 15) {
		size_t n = self.len - at < 15 ? self.len - at : 15;

		for (size_t i = 0; i < n; i++) {
			ins[i] = &self.data[at + i];
			outs[i] = npu_tensor_ref(&self.data[at + i]);
		}
		ins[n] = &s;
		r = dispatch("foreach_mul_scalar_", outs, 1, ins, (int)n + 1, &x, 1);
		if (!r)
			npu_tensor_release(&outs[0]);
		for (size_t i = 1; i < n; i++)
			npu_tensor_release(&outs[i]);
	}
	npu_tensor_release(&s);
out:
	ATEN_EXIT(r, "_foreach_mul_");
}

/*
 * void at::_ops::_fused_adamw_::call(TensorList self, TensorList grads, TensorList exp_avgs,
 *	TensorList exp_avg_sqs, TensorList max_exp_avg_sqs, TensorList state_steps, double lr,
 *	double beta1, double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,
 *	const optional<Tensor> &grad_scale, const optional<Tensor> &found_inf)
 * One ApplyAdamW kernel per parameter.
 */
NPU_NOINLINE void
_ZN2at4_ops13_fused_adamw_4callEN3c108ArrayRefINS_6TensorEEES5_S5_S5_S5_S5_dddddbbRKNS2_8optionalIS4_EES9_(
	struct c10_tensor_list self, struct c10_tensor_list grads, struct c10_tensor_list exp_avgs,
	struct c10_tensor_list exp_avg_sqs, struct c10_tensor_list max_exp_avg_sqs,
	struct c10_tensor_list state_steps, double lr, double beta1, double beta2,
	double weight_decay, double eps, bool amsgrad, bool maximize,
	const struct c10_optional_tensor *grad_scale, const struct c10_optional_tensor *found_inf)
{
	double x[5] = { lr, beta1, beta2, weight_decay, eps };
	int r = 0;
	ATEN_ENTER();

	(void)amsgrad;
	(void)maximize;
	(void)max_exp_avg_sqs;
	(void)grad_scale;
	(void)found_inf;
	if (grads.len != self.len || exp_avgs.len != self.len || exp_avg_sqs.len != self.len ||
	    state_steps.len != self.len) {
		npu_aten_set_error(ACL_ERROR_INVALID_PARAM);
		r = -1;
		goto out;
	}
	for (size_t i = 0; i < self.len && !r; i++) {
		struct at_tensor out = npu_tensor_ref(&self.data[i]);

		const struct at_tensor *ins[5] = { &self.data[i], &exp_avgs.data[i],
						   &exp_avg_sqs.data[i], &grads.data[i],
						   &state_steps.data[i] };

		r = dispatch("apply_adamw", &out, 1, ins, 5, x, 5);
		if (!r)
			npu_tensor_release(&out);
	}
out:
	ATEN_EXIT(r, "_fused_adamw_");
}
