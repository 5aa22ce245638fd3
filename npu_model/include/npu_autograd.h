/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * npu_autograd.h - the autograd objects and entry points libtorch_cpu.so
 * exports, laid out and named as PyTorch 1.13 has them on x86-64 / aarch64
 * LP64, so that a tracer reads sequence numbers, forward thread ids and
 * backward node names from npu_train with the same probes and offsets it
 * uses on a real torch job.  (Contract header: change additively only.)
 *
 * What a tracer may rely on (the same in PyTorch 1.13's libtorch_cpu.so):
 *
 *  - at::sequence_number: one thread_local uint64 counter per thread, read by
 *    peek() and post-incremented by get_and_increment().  Both accessors
 *    reach it general-dynamic, as `data16 lea TLSIDX(%rip),%rdi; data16 data16
 *    rex.W call __tls_get_addr`; the tls_index that lea addresses (module id,
 *    offset) locates the counter in any thread's TLS block.
 *  - at::RecordFunction::currentThreadId(): 1 for the first thread of the
 *    process that asks, then 2, 3, ...; fixed per thread (thread_local).
 *  - struct torch_autograd_node below, offsets 0..55 (the first members of
 *    torch::autograd::Node); what follows is the model's own.
 *  - The vptr of a node points 16 bytes into an exported data object named as
 *    PyTorch's vtable (_ZTVN5torch8autograd9generated13ReluBackward0E, ...,
 *    _ZTVN5torch8autograd14AccumulateGradE), so the class name is the vtable
 *    symbol that contains the vptr.
 *  - torch::autograd::Engine::evaluate_function(this, graph_task&, Node *func,
 *    InputBuffer&, const shared_ptr<ReadyQueue>&): func in the third argument
 *    register (rdx / x2); it runs func's backward with grad mode off, on the
 *    engine's device thread.
 *
 * Sequence numbers, as PyTorch assigns them: a forward op dispatched at an
 * Autograd key with grad mode on records seqNr = peek() at its entry; its
 * autograd kernel then creates the backward node (sequence_nr_ =
 * get_and_increment()) before calling the implementation, whose nested ops
 * are dispatched below autograd (seqNr -1).  Ops run with grad mode off
 * (backward, optimizer) record -1.  AccumulateGrad nodes use UINT64_MAX.
 */
#ifndef __NPU_MODEL_AUTOGRAD_H
#define __NPU_MODEL_AUTOGRAD_H

#include <stddef.h>
#include <stdint.h>

#include "npu_torch.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NPU_AUTOGRAD_API __attribute__((visibility("default")))

/* sequence_nr_ of AccumulateGrad (a leaf's gradient sink): never matches a forward op. */
#define NPU_AUTOGRAD_NO_SEQ UINT64_MAX

struct torch_autograd_node;
struct torch_autograd_input_buffer;

/*
 * An Itanium C++ ABI vtable as the model exports it: the vptr of a node is
 * &vtable->apply (the symbol's address + 16).  `type_info` is NULL (the model
 * has no RTTI).  apply runs the node's backward ops on `inputs` (the incoming
 * gradients) and hands the gradients for the next nodes back in `inputs`.
 */
struct torch_autograd_vtable {
	intptr_t offset_to_top; /* 0 */
	const void *type_info;	/* 8 */
	void (*apply)(struct torch_autograd_node *node,
		      struct torch_autograd_input_buffer *inputs); /* 16: vptr[0] */
};

#define NPU_AUTOGRAD_VPTR_OFFSET 16

/*
 * torch::autograd::Node : std::enable_shared_from_this<Node>, PyTorch 1.13:
 * vptr, weak_this_ (std::weak_ptr: pointer + control block), then the members
 * in declaration order.  thread_id_ is currentThreadId() of the thread that
 * created the node (the forward thread); Node::operator() reports it as the
 * backward range's "Fwd thread id".
 */
struct torch_autograd_node {
	const void *vptr;	 /* 0: &vtable->apply */
	void *weak_this_ptr;	 /* 8: weak_this_ */
	void *weak_this_ctrl;	 /* 16 */
	uint64_t sequence_nr;	 /* 24: const sequence_nr_ */
	uint64_t topological_nr; /* 32: topological_nr_ */
	_Bool has_parent;	 /* 40: has_parent_ */
	uint64_t thread_id;	 /* 48: thread_id_ */
	/* ---- model-private from here (PyTorch: mutex_, next_edges_, ...) ---- */
	const char *name; /* 56: what Node::name() returns */
	/* aten/autograd.c keeps the edges, saved tensors and engine state after this */
};

_Static_assert(offsetof(struct torch_autograd_vtable, apply) == NPU_AUTOGRAD_VPTR_OFFSET,
	       "vptr = vtable + 16");
_Static_assert(offsetof(struct torch_autograd_node, vptr) == 0, "Node::vptr @0");
_Static_assert(offsetof(struct torch_autograd_node, weak_this_ptr) == 8, "weak_this_ @8");
_Static_assert(offsetof(struct torch_autograd_node, sequence_nr) == 24, "sequence_nr_ @24");
_Static_assert(offsetof(struct torch_autograd_node, topological_nr) == 32, "topological_nr_ @32");
_Static_assert(offsetof(struct torch_autograd_node, has_parent) == 40, "has_parent_ @40");
_Static_assert(offsetof(struct torch_autograd_node, thread_id) == 48, "thread_id_ @48");

/* ---- libtorch_cpu.so entry points (real mangled names) ----------------------------------- */

/* uint64_t at::sequence_number::peek() */
NPU_AUTOGRAD_API uint64_t _ZN2at15sequence_number4peekEv(void);
/* uint64_t at::sequence_number::get_and_increment(): the value before the increment */
NPU_AUTOGRAD_API uint64_t _ZN2at15sequence_number17get_and_incrementEv(void);
/* static uint64_t at::RecordFunction::currentThreadId() */
NPU_AUTOGRAD_API uint64_t _ZN2at14RecordFunction15currentThreadIdEv(void);

#define NPU_SEQ_PEEK		  _ZN2at15sequence_number4peekEv
#define NPU_SEQ_GET_AND_INCREMENT _ZN2at15sequence_number17get_and_incrementEv
#define NPU_CURRENT_THREAD_ID	  _ZN2at14RecordFunction15currentThreadIdEv

/*
 * void torch::autograd::Engine::evaluate_function(std::shared_ptr<GraphTask> &graph_task,
 *	Node *func, InputBuffer &inputs, const std::shared_ptr<ReadyQueue> &cpu_ready_queue)
 */
NPU_AUTOGRAD_API void
_ZN5torch8autograd6Engine17evaluate_functionERSt10shared_ptrINS0_9GraphTaskEEPNS0_4NodeERNS0_11InputBufferERKS2_INS0_10ReadyQueueEE(
	void *engine, void *graph_task, struct torch_autograd_node *func,
	struct torch_autograd_input_buffer *inputs, const void *ready_queue);
#define NPU_ENGINE_EVALUATE_FUNCTION \
	_ZN5torch8autograd6Engine17evaluate_functionERSt10shared_ptrINS0_9GraphTaskEEPNS0_4NodeERNS0_11InputBufferERKS2_INS0_10ReadyQueueEE

/*
 * Node::name() of each class: the generated classes answer their short name
 * (ReluBackward0), AccumulateGrad its qualified one, as torch's profiler shows
 * "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad".
 * The exported vtable objects (data, not functions), as PyTorch names them. */
#define NPU_AUTOGRAD_NODE_CLASSES(X)                                                             \
	X(_ZTVN5torch8autograd14AccumulateGradE, "torch::autograd::AccumulateGrad")              \
	X(_ZTVN5torch8autograd9generated13ReluBackward0E, "ReluBackward0")                       \
	X(_ZTVN5torch8autograd9generated13GeluBackward0E, "GeluBackward0")                       \
	X(_ZTVN5torch8autograd9generated14AddmmBackward0E, "AddmmBackward0")                     \
	X(_ZTVN5torch8autograd9generated11MmBackward0E, "MmBackward0")                           \
	X(_ZTVN5torch8autograd9generated12AddBackward0E, "AddBackward0")                         \
	X(_ZTVN5torch8autograd9generated12MulBackward0E, "MulBackward0")                         \
	X(_ZTVN5torch8autograd9generated10TBackward0E, "TBackward0")                             \
	X(_ZTVN5torch8autograd9generated13ViewBackward0E, "ViewBackward0")                       \
	X(_ZTVN5torch8autograd9generated16SoftmaxBackward0E, "SoftmaxBackward0")                 \
	X(_ZTVN5torch8autograd9generated24NativeLayerNormBackward0E, "NativeLayerNormBackward0") \
	X(_ZTVN5torch8autograd9generated20ConvolutionBackward0E, "ConvolutionBackward0")

#define NPU_AUTOGRAD_DECLARE_VTABLE(sym, name) \
	extern NPU_AUTOGRAD_API const struct torch_autograd_vtable sym;
NPU_AUTOGRAD_NODE_CLASSES(NPU_AUTOGRAD_DECLARE_VTABLE)
#undef NPU_AUTOGRAD_DECLARE_VTABLE

/* ---- model helpers (libtorch_cpu.so, not PyTorch API; not probed) ------------------------- */

/* c10::GradMode of the calling thread (on by default); torch.no_grad() sets it off. */
NPU_AUTOGRAD_API _Bool npu_autograd_grad_enabled(void);
NPU_AUTOGRAD_API void npu_autograd_set_grad_enabled(_Bool on);

/*
 * The dispatcher's RecordFunction sequence number for an op entering it on
 * this thread: peek() when the op is dispatched at the Autograd key (not
 * nested inside another op) with grad mode on, else -1.  Every call is paired
 * with npu_autograd_op_exit(); ops called between the two are nested.
 */
NPU_AUTOGRAD_API int64_t npu_autograd_op_enter(void);
NPU_AUTOGRAD_API void npu_autograd_op_exit(void);

/* tensor.requires_grad_(on) on a leaf; its gradient after a backward pass: */
NPU_AUTOGRAD_API int npu_tensor_set_requires_grad(struct at_tensor *t, _Bool on);
/* tensor.grad, handed over (the tensor's .grad becomes undefined: zero_grad(set_to_none)). */
NPU_AUTOGRAD_API struct at_tensor npu_tensor_take_grad(struct at_tensor *t);
/*
 * out stands for in in the graph (same grad_fn and output_nr, or the same leaf
 * requirement): for ops without a backward class of their own that pass the
 * gradient through unchanged (the model's npu_format_cast).
 */
NPU_AUTOGRAD_API void npu_tensor_share_grad_fn(struct at_tensor *out, const struct at_tensor *in);
/* The node that made t (t.grad_fn), NULL for leaves and tensors made with grad mode off. */
NPU_AUTOGRAD_API struct torch_autograd_node *npu_tensor_grad_fn(const struct at_tensor *t);

/*
 * torch.autograd.backward(root, grad): runs the graph behind root on the
 * engine's device thread ("pt_autograd_<device>", started on first use), the
 * caller waiting, nodes in the engine's order (ready nodes by sequence_nr,
 * highest first).  Saved tensors are released as each node runs (no
 * retain_graph).  0, -EINVAL (root has no grad_fn), or -EIO (a backward op
 * failed; npu_aten_last_error() on the caller then says why).
 */
NPU_AUTOGRAD_API int npu_autograd_backward(const struct at_tensor *root,
					   const struct at_tensor *grad);

/*
 * torch_npu's part of the device thread's start (the device guard): binds the
 * calling thread to the current NPU and returns its index (used in the
 * thread's name), or a negative error.  libtorch_npu registers it at load.
 */
NPU_AUTOGRAD_API int npu_autograd_register_device_init(int (*init)(void));

#ifdef __cplusplus
}
#endif

#endif /* __NPU_MODEL_AUTOGRAD_H */
