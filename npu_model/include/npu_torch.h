/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * npu_torch.h - npu_model's PyTorch / torch_npu layer: the C layouts that
 * stand in for the C++ objects whose mangled entry points libtorch_cpu.so
 * and libtorch_npu.so export, and the backend table through which the aten
 * ops reach torch_npu.
 *
 * Why C with C++ names: the probe table attaches to torch_npu's and
 * PyTorch's mangled symbols (_ZN7c10_npu10Repository7EnqueueEPv, ...), so
 * npu_model must export exactly those names with arguments in the same
 * registers and layouts as g++ would pass them.  A mangled name is a valid C
 * identifier, and each C prototype below is written to be ABI-identical to
 * the C++ declaration in its comment on x86-64 / aarch64 LP64:
 *   - `const T&` / `T&` -> `const T *` / `T *`; member functions take `this` first;
 *   - a returned at::Tensor / std::tuple (non-trivial classes) comes back through a
 *     hidden result pointer passed first (rdi / x8), which C spells as an explicit
 *     first parameter returning that pointer;
 *   - c10::ArrayRef<T>, c10::string_view (two words, trivially copyable) are passed
 *     by value as a two-word struct; std::array<bool,3> as a 3-byte struct;
 *   - std::string is libstdc++'s layout (data pointer at 0, length at 8, 16-byte
 *     SSO buffer at 16); std::function<int()> is libstdc++'s (16-byte functor
 *     storage, manager at 16, invoker at 24), so a real C++ caller's objects work.
 */
#ifndef __NPU_MODEL_TORCH_H
#define __NPU_MODEL_TORCH_H

#include <stddef.h>
#include <stdint.h>

#include "npu_acl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NPU_TORCH_API __attribute__((visibility("default")))

/* ---- libstdc++ layouts ---------------------------------------------------------------- */

/*
 * std::string in the ABI the library is built for (-D_GLIBCXX_USE_CXX11_ABI=0
 * gives the old one, as torch_npu wheels before 2.7 (2.6 on aarch64) are):
 *   new: std::__cxx11::basic_string<char> {data, len, SSO buffer / capacity};
 *   old: std::basic_string<char> (copy-on-write) {data}; data points just
 *        past its _Rep {size_t length, size_t capacity, int refcount}.
 * Use npu_cxx_string_data() / _len() (torch_npu_priv.h), not the fields.
 */
#if defined(_GLIBCXX_USE_CXX11_ABI) && _GLIBCXX_USE_CXX11_ABI == 0
#define NPU_CXX_OLD_ABI 1
struct cxx_string {
	char *data;
};
struct cxx_string_rep {
	size_t length;
	size_t capacity;
	int refcount;
};
#else
struct cxx_string {
	char *data;
	size_t len;
	union {
		char local[16];
		size_t capacity;
	} u;
};
#endif

/* std::function<int()>: _M_manager(dest, src, op), _M_invoker(functor storage). */
enum cxx_function_op { CXX_FN_GET_TYPE_INFO, CXX_FN_GET_FUNCTOR_PTR, CXX_FN_CLONE, CXX_FN_DESTROY };
struct cxx_function {
	union {
		void *ptr[2];
		unsigned char bytes[16];
	} functor;
	int (*manager)(void *dest, const void *src, int op); /* bool in C++ */
	int (*invoker)(const void *functor);
};

/* ---- at::Tensor and friends ------------------------------------------------------------ */

#define NPU_TENSOR_MAX_DIMS 8

struct npu_tensor_impl {
	uint32_t magic;
	int refcount;
	int ndim;
	int64_t sizes[NPU_TENSOR_MAX_DIMS];
	aclDataType dtype;
	aclFormat format; /* NPU storage format (ND, NCHW, NC1HWC0, FRACTAL_Z, ...) */
	int device;	  /* NPU index, or -1 for a host tensor */
	void *data;
	size_t nbytes;
	void *stream;		      /* the stream the storage was allocated for */
	struct npu_tensor_impl *base; /* a view's base (holds a reference), else NULL */
	/* autograd meta (aten/autograd.c, npu_autograd.h); zero for a new tensor */
	void *grad_fn;	    /* the node that made it (holds a reference) */
	uint32_t output_nr; /* which output of grad_fn it is */
	_Bool requires_grad;
	void *grad_accumulator;	      /* a leaf's AccumulateGrad node while one lives (weak) */
	struct npu_tensor_impl *grad; /* a leaf's .grad (holds a reference) */
};

struct at_tensor { /* at::Tensor: one intrusive pointer */
	struct npu_tensor_impl *impl;
};

struct at_tensor3 { /* std::tuple<at::Tensor, at::Tensor, at::Tensor> */
	struct at_tensor t[3];
};

struct c10_scalar { /* c10::Scalar, the model keeps a double */
	double v;
};

struct c10_int_array_ref { /* c10::IntArrayRef (ArrayRef<int64_t>) */
	const int64_t *data;
	size_t len;
};

struct c10_tensor_list { /* at::TensorList (ArrayRef<at::Tensor>) */
	const struct at_tensor *data;
	size_t len;
};

struct c10_string_view { /* c10::string_view */
	const char *data;
	size_t len;
};

struct c10_optional_tensor { /* c10::optional<at::Tensor> */
	struct at_tensor value;
	_Bool has;
};

struct c10_optional_int_array { /* c10::optional<c10::IntArrayRef>, passed in memory */
	struct c10_int_array_ref value;
	_Bool has;
};

struct c10_optional_scalar_type { /* c10::optional<c10::ScalarType>: 2 bytes */
	int8_t value;
	_Bool has;
};

struct std_array_bool3 { /* std::array<bool, 3> */
	_Bool v[3];
};

/* ---- tensors (libtorch_cpu.so) ---------------------------------------------------------- */

/*
 * New NPU tensor of `sizes` from the backend's caching allocator (NULL impl on
 * failure: out of memory, no backend, bad sizes).  Host tensors (device -1)
 * come from malloc.
 */
NPU_TORCH_API struct at_tensor npu_tensor_empty(const int64_t *sizes, int ndim, aclDataType dtype,
						int device);
/* Drops one reference, frees at zero. */
NPU_TORCH_API void npu_tensor_release(struct at_tensor *t);
/* Adds one reference. */
NPU_TORCH_API struct at_tensor npu_tensor_ref(const struct at_tensor *t);
NPU_TORCH_API uint64_t npu_tensor_numel(const struct at_tensor *t);
/* The last error an aten op hit in this thread (aclnn/acl code, 0 if none), then cleared. */
NPU_TORCH_API int npu_aten_last_error(void);
NPU_TORCH_API void npu_aten_set_error(int err);

/*
 * The backend torch_npu registers (PrivateUse1 in real PyTorch): libtorch_npu's
 * constructor calls npu_aten_register_backend().  The aten ops of libtorch_cpu
 * go through it.  Ops return 0 or an aclnn / acl error code.
 */
struct npu_aten_backend {
	void *(*alloc)(size_t nbytes, int device, void **stream); /* NULL on failure */
	void (*free)(void *ptr);
	/* op(name, outputs, inputs, scalar args): the op-plugin dispatch, see aten.c */
	int (*op)(const char *op, struct at_tensor *outs, int nout,
		  const struct at_tensor *const *ins, int nin, const double *args, int nargs);
};
NPU_TORCH_API int npu_aten_register_backend(const struct npu_aten_backend *b);

/* ---- torch::optim (libtorch_cpu.so): the optimizer step a C++ training loop calls -------- */

/*
 * torch::optim::AdamW::step(LossClosure) -> at::Tensor, exported by real
 * libtorch_cpu.so as by ours: at::Tensor comes back through the hidden return
 * pointer `ret`, `closure` (a std::function<at::Tensor()> by value) by
 * reference; may be an empty one.  `self` is the model's optimizer object:
 * step() runs self->update(self->ctx), under no_grad as libtorch does.
 * Each call is one training step: it writes the journal's `step` line.
 */
struct npu_optimizer {
	void (*update)(void *ctx);
	void *ctx;
};
NPU_TORCH_API struct at_tensor *_ZN5torch5optim5AdamW4stepESt8functionIFN2at6TensorEvEE(
	struct at_tensor *ret, struct npu_optimizer *self, const struct cxx_function *closure);
#define NPU_OPTIM_ADAMW_STEP _ZN5torch5optim5AdamW4stepESt8functionIFN2at6TensorEvEE

/* ---- torch_npu (libtorch_npu.so): what npu_train calls directly --------------------------- */

/* at_npu::native::custom_ops::npu_format_cast(self, acl_format): the TransData call site. */
NPU_TORCH_API struct at_tensor *_ZN6at_npu6native10custom_ops15npu_format_castERKN2at6TensorEl(
	struct at_tensor *ret, const struct at_tensor *self, int64_t acl_format);
#define NPU_FORMAT_CAST _ZN6at_npu6native10custom_ops15npu_format_castERKN2at6TensorEl

/* libruntime: tasks queued by this process so far, and how many of them were kernels. */
uint64_t npu_model_runtime_tasks(uint64_t *kernels);

/* torch.npu.set_device / synchronize / current stream (model helpers, not probed). */
NPU_TORCH_API int npu_torch_init(int device);
/* Drains the task queue, then aclrtSynchronizeDevice; the first queued-task error or 0. */
NPU_TORCH_API int npu_torch_synchronize(void);
NPU_TORCH_API void *npu_torch_current_stream(void);
NPU_TORCH_API int npu_torch_set_stream(void *stream); /* NULL: back to the default stream */
/* Queue an H2D copy (MemcopyAsyncFunc through the task queue, as torch_npu's copy_). */
NPU_TORCH_API int npu_torch_copy_h2d(struct at_tensor *dst, const void *src, size_t nbytes,
				     void *stream);
/* Queue RecordEventFunc / WaitEventFunc. */
NPU_TORCH_API int npu_torch_record_event(aclrtEvent ev, void *stream);
NPU_TORCH_API int npu_torch_wait_event(aclrtEvent ev, void *stream);
/* Allocator statistics and control. */
struct npu_alloc_stats {
	uint64_t allocated, reserved, active;
	uint64_t nr_segments, nr_oom_retries, nr_alloc_failures;
};
NPU_TORCH_API void npu_torch_alloc_stats(struct npu_alloc_stats *st);
NPU_TORCH_API void npu_torch_empty_cache(void);
/* Raw caching-allocator blocks (for workloads that hold memory, e.g. mem-growth). */
NPU_TORCH_API void *npu_torch_alloc(size_t nbytes);
NPU_TORCH_API void npu_torch_free(void *ptr);
/* The error code of the last failed allocation (207001 for out of memory). */
NPU_TORCH_API int npu_torch_alloc_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* __NPU_MODEL_TORCH_H */
