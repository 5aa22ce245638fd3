// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * autograd.c - libtorch_cpu.so's autograd as PyTorch 1.13 has it, in the
 * parts a profiler sees (npu_autograd.h is the contract):
 *
 *  - at::sequence_number (one thread_local counter, general-dynamic TLS) and
 *    at::RecordFunction::currentThreadId();
 *  - grad mode and the dispatcher's seqNr rule (npu_autograd_op_enter);
 *  - backward nodes (torch::autograd::Node layout, vptr into exported
 *    vtables named as torch's generated classes) with edges to the nodes of
 *    their inputs, AccumulateGrad for leaves, saved tensors;
 *  - the engine: torch.autograd.backward runs on the device thread
 *    "pt_autograd_<device>" (the caller waits), ready nodes by sequence_nr
 *    (highest first, AccumulateGrad's UINT64_MAX first of all), each through
 *    Engine::evaluate_function with grad mode off, gradients for a node fed
 *    by two edges summed with aten::add inside the producer's
 *    evaluate_function (InputBuffer::add).
 *
 * The backward formulas are torch's derivatives.yaml ones for the ops the
 * model has, on the ops the model has (addmm's bias gradient is the sum over
 * dim 0 that validate_outputs' sum_to makes).  Node lifetime: tensors hold
 * a reference to their grad_fn, edges to the next node; a node's saved
 * tensors (which may include its own outputs, hence a cycle) are released
 * when it runs, as without retain_graph.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "npu_api_journal.h"
#include "npu_aten.h"
#include "npu_autograd.h"
#include "aten/aten_priv.h"

/* ---- at::sequence_number, at::RecordFunction::currentThreadId ------------------------------ */

/*
 * Exported, general-dynamic: the accessors reach it through __tls_get_addr
 * with a tls_index in the GOT, the code pattern a tracer decodes (the real
 * counter is an anonymous-namespace thread_local accessed the same way).
 */
__attribute__((visibility("default"),
	       tls_model("global-dynamic"))) __thread uint64_t npu_sequence_nr;

static __thread uint64_t current_thread_id;
static _Atomic uint64_t next_thread_id;

NPU_NOINLINE uint64_t _ZN2at15sequence_number4peekEv(void)
{
	return npu_sequence_nr;
}

NPU_NOINLINE uint64_t _ZN2at15sequence_number17get_and_incrementEv(void)
{
	return npu_sequence_nr++;
}

NPU_NOINLINE uint64_t _ZN2at14RecordFunction15currentThreadIdEv(void)
{
	if (!current_thread_id)
		current_thread_id = atomic_fetch_add(&next_thread_id, 1) + 1;
	return current_thread_id;
}

/* ---- grad mode and the dispatcher ------------------------------------------------------------ */

static __thread bool grad_disabled; /* c10::GradMode, enabled by default */
static __thread int dispatch_depth; /* ops in progress on this thread */

bool npu_autograd_grad_enabled(void)
{
	return !grad_disabled;
}

void npu_autograd_set_grad_enabled(bool on)
{
	grad_disabled = !on;
}

int64_t npu_autograd_op_enter(void)
{
	/*
	 * A nested op runs below the Autograd key (the outer op's autograd kernel
	 * set AutoDispatchBelowADInplaceOrView), so only the outermost records
	 * a sequence number.
	 */
	int64_t seq = !grad_disabled && !dispatch_depth ? (int64_t)NPU_SEQ_PEEK() : -1;

	dispatch_depth++;
	return seq;
}

void npu_autograd_op_exit(void)
{
	if (dispatch_depth > 0)
		dispatch_depth--;
}

/* ---- nodes ----------------------------------------------------------------------------------- */

#define AG_MAX_EDGES  3 /* inputs of a forward op that can need a gradient */
#define AG_MAX_INPUTS 3 /* outputs of a forward op (native_layer_norm: 3) */
#define AG_MAX_SAVED  6
#define AG_MAX_INTS   (2 + NPU_TENSOR_MAX_DIMS)

struct ag_node;

struct ag_edge {
	struct ag_node *fn; /* holds a reference; NULL: no gradient wanted */
	uint32_t input_nr;
};

struct torch_autograd_input_buffer {
	struct at_tensor in[AG_MAX_INPUTS]; /* gradients of the forward op's outputs */
	struct at_tensor out[AG_MAX_EDGES]; /* apply's gradients for the next edges */
};

struct ag_node {
	struct torch_autograd_node base; /* first: a Node * is an ag_node * */
	_Atomic int refs;
	int nedges;
	struct ag_edge next[AG_MAX_EDGES];
	struct at_tensor saved[AG_MAX_SAVED];
	unsigned int saved_weak; /* bit i: saved[i] is an output, held weakly */
	int64_t ints[AG_MAX_INTS];
	struct at_tensor variable; /* AccumulateGrad: the leaf */
	/* engine state, touched only by the engine thread during a pass */
	uint64_t visit;
	int deps;
	struct torch_autograd_input_buffer *buf;
};

static struct ag_node *AG(struct torch_autograd_node *n)
{
	return (struct ag_node *)n;
}

static void node_put(struct ag_node *n);

static void release_saved(struct ag_node *n)
{
	for (int i = 0; i < AG_MAX_SAVED; i++)
		if (n->saved_weak & 1u << i)
			n->saved[i].impl = NULL;
		else
			npu_tensor_release(&n->saved[i]);
	n->saved_weak = 0;
}

static void node_put(struct ag_node *n)
{
	if (!n || atomic_fetch_sub(&n->refs, 1) != 1)
		return;
	for (int i = 0; i < n->nedges; i++)
		node_put(n->next[i].fn);
	release_saved(n);
	if (n->variable.impl) {
		if (n->variable.impl->grad_accumulator == n)
			n->variable.impl->grad_accumulator = NULL;
		npu_tensor_release(&n->variable);
	}
	free(n);
}

static void node_get(struct ag_node *n)
{
	atomic_fetch_add(&n->refs, 1);
}

/* The Itanium ABI points the vptr past offset_to_top and typeinfo: at the first slot. */
static const void *vptr_of(const struct torch_autograd_vtable *vt)
{
	return (const char *)vt + NPU_AUTOGRAD_VPTR_OFFSET;
}

static const struct torch_autograd_vtable *vtable_of(const struct torch_autograd_node *n)
{
	return (const void *)((const char *)n->vptr - NPU_AUTOGRAD_VPTR_OFFSET);
}

static struct ag_node *node_alloc(const struct torch_autograd_vtable *vt, const char *name,
				  uint64_t seq)
{
	struct ag_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->base.vptr = vptr_of(vt);
	n->base.weak_this_ptr = n; /* enable_shared_from_this; no control block */
	n->base.sequence_nr = seq;
	n->base.thread_id = NPU_CURRENT_THREAD_ID();
	n->base.name = name;
	atomic_init(&n->refs, 1);
	return n;
}

static const char *class_name(const struct torch_autograd_vtable *vt);

/* Variable::grad_accumulator(): one AccumulateGrad per leaf while the graph holds it. */
static struct ag_node *grad_accumulator(struct npu_tensor_impl *leaf)
{
	struct ag_node *acc = leaf->grad_accumulator;
	struct at_tensor t = { leaf };

	if (acc) {
		node_get(acc);
		return acc;
	}
	acc = node_alloc(&_ZTVN5torch8autograd14AccumulateGradE,
			 class_name(&_ZTVN5torch8autograd14AccumulateGradE), NPU_AUTOGRAD_NO_SEQ);
	if (!acc)
		return NULL;
	acc->variable = npu_tensor_ref(&t);
	leaf->grad_accumulator = acc;
	return acc;
}

struct torch_autograd_node *npu_ag_node_new(int64_t seq, const struct torch_autograd_vtable *vt,
					    const struct at_tensor *const *ins, int nin)
{
	struct ag_node *n;
	bool needed = false;

	if (seq < 0 || nin > AG_MAX_EDGES)
		return NULL;
	for (int i = 0; i < nin; i++)
		if (ins[i] && ins[i]->impl && ins[i]->impl->requires_grad)
			needed = true;
	if (!needed)
		return NULL;
	/* sequence_nr_ = get_and_increment(): the forward op recorded peek() just before */
	n = node_alloc(vt, class_name(vt), NPU_SEQ_GET_AND_INCREMENT());
	if (!n)
		return NULL;
	n->nedges = nin;
	for (int i = 0; i < nin; i++) {
		struct npu_tensor_impl *in = ins[i] ? ins[i]->impl : NULL;
		struct ag_node *next = NULL;

		if (!in || !in->requires_grad)
			continue;
		if (in->grad_fn) {
			next = in->grad_fn;
			node_get(next);
			n->next[i].input_nr = in->output_nr;
		} else {
			next = grad_accumulator(in);
		}
		n->next[i].fn = next;
		if (next) {
			next->base.has_parent = true;
			if (next->base.topological_nr + 1 > n->base.topological_nr)
				n->base.topological_nr = next->base.topological_nr + 1;
		}
	}
	return &n->base;
}

void npu_ag_set_outputs(struct torch_autograd_node *node, struct at_tensor *outs, int nout)
{
	struct ag_node *n = AG(node);

	if (!n)
		return;
	for (int i = 0; i < nout && i < AG_MAX_INPUTS; i++) {
		struct npu_tensor_impl *o = outs[i].impl;

		if (!o)
			continue;
		node_get(n);
		o->grad_fn = n;
		o->output_nr = (uint32_t)i;
		o->requires_grad = true;
		/*
		 * A saved output is held weakly, as torch's SavedVariable(is_output)
		 * is: held strongly it makes a cycle (output -> grad_fn -> saved
		 * output) that only a backward breaks, and a graph never run leaked.
		 * npu_autograd_release_meta() hands it to the node if the node
		 * outlives the output.
		 */
		for (int s = 0; s < AG_MAX_SAVED; s++)
			if (n->saved[s].impl == o && !(n->saved_weak & 1u << s)) {
				__atomic_sub_fetch(&o->refcount, 1, __ATOMIC_ACQ_REL);
				n->saved_weak |= 1u << s;
			}
	}
	node_put(n); /* the creation reference */
}

void npu_ag_save(struct torch_autograd_node *node, int slot, const struct at_tensor *t)
{
	if (node && slot >= 0 && slot < AG_MAX_SAVED && t && t->impl)
		AG(node)->saved[slot] = npu_tensor_ref(t);
}

void npu_ag_save_int(struct torch_autograd_node *node, int slot, int64_t v)
{
	if (node && slot >= 0 && slot < AG_MAX_INTS)
		AG(node)->ints[slot] = v;
}

bool npu_autograd_release_meta(struct npu_tensor_impl *impl)
{
	struct npu_tensor_impl *g = impl->grad;
	struct ag_node *fn = impl->grad_fn;

	/* the last reference to an output its (surviving) node saved: the node keeps it */
	if (fn && atomic_load(&fn->refs) > 1)
		for (int s = 0; s < AG_MAX_SAVED; s++)
			if ((fn->saved_weak & 1u << s) && fn->saved[s].impl == impl) {
				fn->saved_weak &= ~(1u << s);
				__atomic_store_n(&impl->refcount, 1, __ATOMIC_RELEASE);
				impl->grad_fn = NULL;
				node_put(fn);
				return true;
			}
	impl->grad_fn = NULL;
	impl->grad = NULL;
	node_put(fn);
	if (g) {
		struct at_tensor t = { g };

		npu_tensor_release(&t);
	}
	return false;
}

int npu_tensor_set_requires_grad(struct at_tensor *t, bool on)
{
	if (!t || !t->impl)
		return -EINVAL;
	if (t->impl->grad_fn && !on)
		return -EINVAL; /* torch: only leaves can stop requiring grad */
	t->impl->requires_grad = on;
	return 0;
}

struct at_tensor npu_tensor_take_grad(struct at_tensor *t)
{
	struct at_tensor g = { NULL };

	if (t && t->impl) {
		g.impl = t->impl->grad;
		t->impl->grad = NULL;
	}
	return g;
}

void npu_tensor_share_grad_fn(struct at_tensor *out, const struct at_tensor *in)
{
	struct npu_tensor_impl *o = out ? out->impl : NULL, *i = in ? in->impl : NULL;

	if (!o || !i || o == i || o->grad_fn || grad_disabled)
		return;
	if (i->grad_fn) {
		node_get(i->grad_fn);
		o->grad_fn = i->grad_fn;
		o->output_nr = i->output_nr;
		o->requires_grad = true;
	} else if (i->requires_grad) {
		/* a leaf's gradient: out gets the leaf's accumulator as its grad_fn */
		struct ag_node *acc = grad_accumulator(i);

		if (acc) {
			o->grad_fn = acc;
			o->output_nr = 0;
			o->requires_grad = true;
		}
	}
}

struct torch_autograd_node *npu_tensor_grad_fn(const struct at_tensor *t)
{
	return t && t->impl ? t->impl->grad_fn : NULL;
}

/* ---- the backward formulas (Node::apply of each class) --------------------------------------- */

static bool wants(const struct ag_node *n, int i)
{
	return i < n->nedges && n->next[i].fn;
}

/* output_mask of a three-output backward: the gradients some next node takes */
static struct std_array_bool3 wanted3(const struct ag_node *n)
{
	return (struct std_array_bool3){ { wants(n, 0), wants(n, 1), wants(n, 2) } };
}

/* A three-output backward's results: the wanted ones to the buffer, the others released. */
static void take_wanted3(const struct ag_node *n, struct torch_autograd_input_buffer *b,
			 struct at_tensor3 *r)
{
	for (int i = 0; i < 3; i++) {
		if (wants(n, i))
			b->out[i] = r->t[i];
		else
			npu_tensor_release(&r->t[i]);
	}
}

static struct at_tensor t_of(const struct at_tensor *a)
{
	struct at_tensor r;

	return *NPU_ATEN_T(&r, a);
}

static struct at_tensor mm_of(const struct at_tensor *a, const struct at_tensor *b)
{
	struct at_tensor r;

	return *NPU_ATEN_MM(&r, a, b);
}

/* grad_self = grad.mm(mat2.t()), grad_mat2 = self.t().mm(grad) */
static void mm_grads(struct ag_node *n, const struct at_tensor *g, const struct at_tensor *self,
		     const struct at_tensor *mat2, struct at_tensor *out_self,
		     struct at_tensor *out_mat2, int self_ix, int mat2_ix)
{
	struct at_tensor tmp;

	if (wants(n, self_ix)) {
		tmp = t_of(mat2);
		*out_self = mm_of(g, &tmp);
		npu_tensor_release(&tmp);
	}
	if (wants(n, mat2_ix)) {
		tmp = t_of(self);
		*out_mat2 = mm_of(&tmp, g);
		npu_tensor_release(&tmp);
	}
}

static void apply_mm(struct torch_autograd_node *node, struct torch_autograd_input_buffer *b)
{
	struct ag_node *n = AG(node);

	mm_grads(n, &b->in[0], &n->saved[0], &n->saved[1], &b->out[0], &b->out[1], 0, 1);
}

/* addmm(self=bias, mat1, mat2): mat1 / mat2 as mm; the bias gradient is sum_to(grad, [N]). */
static void apply_addmm(struct torch_autograd_node *node, struct torch_autograd_input_buffer *b)
{
	struct ag_node *n = AG(node);

	mm_grads(n, &b->in[0], &n->saved[0], &n->saved[1], &b->out[1], &b->out[2], 1, 2);
	if (wants(n, 0)) {
		struct c10_optional_int_array dim = { { (const int64_t[]){ 0 }, 1 }, 1 };
		struct at_tensor r;

		b->out[0] = *NPU_ATEN_SUM_DIM_INTLIST(&r, &b->in[0], dim, false,
						      (struct c10_optional_scalar_type){ 0, 0 });
	}
}

static void apply_add(struct torch_autograd_node *node, struct torch_autograd_input_buffer *b)
{
	struct ag_node *n = AG(node);

	for (int i = 0; i < 2; i++)
		if (wants(n, i))
			b->out[i] = npu_tensor_ref(&b->in[0]);
}

static void apply_mul(struct torch_autograd_node *node, struct torch_autograd_input_buffer *b)
{
	struct ag_node *n = AG(node);
	struct at_tensor r;

	if (wants(n, 0))
		b->out[0] = *NPU_ATEN_MUL_TENSOR(&r, &b->in[0], &n->saved[1]);
	if (wants(n, 1))
		b->out[1] = *NPU_ATEN_MUL_TENSOR(&r, &b->in[0], &n->saved[0]);
}

static void apply_t(struct torch_autograd_node *node, struct torch_autograd_input_buffer *b)
{
	if (wants(AG(node), 0))
		b->out[0] = t_of(&b->in[0]);
}

/* ViewBackward0: grad.reshape(self_sym_sizes), a view for the contiguous gradients here */
static void apply_view(struct torch_autograd_node *node, struct torch_autograd_input_buffer *b)
{
	struct ag_node *n = AG(node);
	struct at_tensor r;

	if (wants(n, 0))
		b->out[0] = *NPU_ATEN_VIEW(&r, &b->in[0],
					   (struct c10_int_array_ref){ &n->ints[1],
								       (size_t)n->ints[0] });
}

static void apply_relu(struct torch_autograd_node *node, struct torch_autograd_input_buffer *b)
{
	static const struct c10_scalar zero = { 0.0 };
	struct ag_node *n = AG(node);
	struct at_tensor r;

	if (wants(n, 0)) /* threshold_backward(grad, result, 0) */
		b->out[0] = *NPU_ATEN_THRESHOLD_BACKWARD(&r, &b->in[0], &n->saved[0], &zero);
}

static void apply_gelu(struct torch_autograd_node *node, struct torch_autograd_input_buffer *b)
{
	struct ag_node *n = AG(node);
	struct at_tensor r;

	if (wants(n, 0))
		b->out[0] = *NPU_ATEN_GELU_BACKWARD(&r, &b->in[0], &n->saved[0],
						    (struct c10_string_view){ "none", 4 });
}

static void apply_softmax(struct torch_autograd_node *node, struct torch_autograd_input_buffer *b)
{
	struct ag_node *n = AG(node);
	struct at_tensor r;

	if (wants(n, 0) && n->saved[0].impl) /* _softmax_backward_data(grad, result, dim) */
		b->out[0] = *NPU_ATEN_SOFTMAX_BACKWARD_DATA(&r, &b->in[0], &n->saved[0], n->ints[0],
							    (int8_t)n->saved[0].impl->dtype);
}

/* saved: input, mean, rstd, weight, bias; ints[0] the normalized size */
static void apply_layer_norm(struct torch_autograd_node *node,
			     struct torch_autograd_input_buffer *b)
{
	struct ag_node *n = AG(node);
	struct c10_optional_tensor w = { n->saved[3], n->saved[3].impl != NULL };
	struct c10_optional_tensor bias = { n->saved[4], n->saved[4].impl != NULL };
	struct at_tensor3 r;

	if (!wants(n, 0) && !wants(n, 1) && !wants(n, 2))
		return;
	NPU_ATEN_NATIVE_LAYER_NORM_BACKWARD(&r, &b->in[0], &n->saved[0],
					    (struct c10_int_array_ref){ &n->ints[0], 1 },
					    &n->saved[1], &n->saved[2], &w, &bias, wanted3(n));
	take_wanted3(n, b, &r);
}

/* saved: input, weight; ints: stride, padding (square), bias defined */
static void apply_convolution(struct torch_autograd_node *node,
			      struct torch_autograd_input_buffer *b)
{
	struct ag_node *n = AG(node);
	const int64_t st[2] = { n->ints[0], n->ints[0] }, pd[2] = { n->ints[1], n->ints[1] };
	const int64_t dl[2] = { 1, 1 }, op[2] = { 0, 0 };
	struct c10_optional_int_array bias_sizes = { { NULL, 0 }, 0 };
	struct at_tensor3 r;

	if (!n->saved[1].impl)
		return;
	if (n->ints[2])
		bias_sizes = (struct c10_optional_int_array){ { n->saved[1].impl->sizes, 1 }, 1 };
	NPU_ATEN_CONVOLUTION_BACKWARD(&r, &b->in[0], &n->saved[0], &n->saved[1], bias_sizes,
				      (struct c10_int_array_ref){ st, 2 },
				      (struct c10_int_array_ref){ pd, 2 },
				      (struct c10_int_array_ref){ dl, 2 }, false,
				      (struct c10_int_array_ref){ op, 2 }, 1, wanted3(n));
	take_wanted3(n, b, &r);
}

/* variable.grad = grad (the model does not accumulate into an existing .grad: it replaces it) */
static void apply_accumulate_grad(struct torch_autograd_node *node,
				  struct torch_autograd_input_buffer *b)
{
	struct ag_node *n = AG(node);
	struct npu_tensor_impl *v = n->variable.impl;
	struct at_tensor old;

	if (!v || !b->in[0].impl)
		return;
	old.impl = v->grad;
	v->grad = npu_tensor_ref(&b->in[0]).impl;
	npu_tensor_release(&old);
}

/* Itanium vtables: { offset_to_top, typeinfo, apply }, exported under torch's names. */
#define VTABLE(sym, fn) NPU_AUTOGRAD_API const struct torch_autograd_vtable sym = { 0, NULL, fn }
VTABLE(_ZTVN5torch8autograd14AccumulateGradE, apply_accumulate_grad);
VTABLE(_ZTVN5torch8autograd9generated13ReluBackward0E, apply_relu);
VTABLE(_ZTVN5torch8autograd9generated13GeluBackward0E, apply_gelu);
VTABLE(_ZTVN5torch8autograd9generated14AddmmBackward0E, apply_addmm);
VTABLE(_ZTVN5torch8autograd9generated11MmBackward0E, apply_mm);
VTABLE(_ZTVN5torch8autograd9generated12AddBackward0E, apply_add);
VTABLE(_ZTVN5torch8autograd9generated12MulBackward0E, apply_mul);
VTABLE(_ZTVN5torch8autograd9generated10TBackward0E, apply_t);
VTABLE(_ZTVN5torch8autograd9generated13ViewBackward0E, apply_view);
VTABLE(_ZTVN5torch8autograd9generated16SoftmaxBackward0E, apply_softmax);
VTABLE(_ZTVN5torch8autograd9generated24NativeLayerNormBackward0E, apply_layer_norm);
VTABLE(_ZTVN5torch8autograd9generated20ConvolutionBackward0E, apply_convolution);

static const char *class_name(const struct torch_autograd_vtable *vt)
{
#define NAME_OF(sym, name) \
	if (vt == &sym)    \
		return name;
	NPU_AUTOGRAD_NODE_CLASSES(NAME_OF)
#undef NAME_OF
	return "?";
}

/* ---- the engine ------------------------------------------------------------------------------ */

struct graph_task {
	struct ag_node *root;
	uint32_t root_nr;
	struct at_tensor grad;
	struct ag_node **nodes; /* every node of the graph (for clean-up) */
	size_t nr_nodes, cap_nodes;
	struct ag_node **ready; /* ReadyQueue: highest sequence_nr first */
	size_t nr_ready, cap_ready;
	int error; /* first aten error of a backward op, -errno, or 0 */
	bool done;
};

static int push(struct ag_node ***v, size_t *nr, size_t *cap, struct ag_node *n)
{
	if (*nr == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct ag_node **p = realloc(*v, c * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*v = p;
		*cap = c;
	}
	(*v)[(*nr)++] = n;
	return 0;
}

static struct ag_node *pop_ready(struct graph_task *task)
{
	size_t best = 0;
	struct ag_node *n;

	for (size_t i = 1; i < task->nr_ready; i++)
		if (task->ready[i]->base.sequence_nr > task->ready[best]->base.sequence_nr)
			best = i;
	n = task->ready[best];
	task->ready[best] = task->ready[--task->nr_ready];
	return n;
}

static struct torch_autograd_input_buffer *buffer_of(struct ag_node *n)
{
	if (!n->buf)
		n->buf = calloc(1, sizeof(*n->buf));
	return n->buf;
}

static void buffer_free(struct ag_node *n)
{
	if (!n->buf)
		return;
	for (int i = 0; i < AG_MAX_INPUTS; i++)
		npu_tensor_release(&n->buf->in[i]);
	for (int i = 0; i < AG_MAX_EDGES; i++)
		npu_tensor_release(&n->buf->out[i]);
	free(n->buf);
	n->buf = NULL;
}

/* compute_dependencies(): how many edges of this graph point at each node */
static int compute_dependencies(struct graph_task *task, uint64_t generation)
{
	struct ag_node **stack = NULL;
	size_t nr = 0, cap = 0;
	int r = 0;

	task->root->visit = generation;
	task->root->deps = 0;
	if (push(&stack, &nr, &cap, task->root) ||
	    push(&task->nodes, &task->nr_nodes, &task->cap_nodes, task->root))
		r = -ENOMEM;
	while (!r && nr) {
		struct ag_node *n = stack[--nr];

		for (int i = 0; i < n->nedges && !r; i++) {
			struct ag_node *next = n->next[i].fn;

			if (!next)
				continue;
			if (next->visit != generation) {
				next->visit = generation;
				next->deps = 0;
				if (push(&stack, &nr, &cap, next) ||
				    push(&task->nodes, &task->nr_nodes, &task->cap_nodes, next))
					r = -ENOMEM;
			}
			next->deps++;
		}
	}
	free(stack);
	return r;
}

/*
 * void Engine::evaluate_function(shared_ptr<GraphTask> &graph_task, Node *func,
 *	InputBuffer &inputs, const shared_ptr<ReadyQueue> &cpu_ready_queue)
 * Runs func with grad mode off, then hands each output gradient to the input
 * buffer of the next node (summing with aten::add where one is there already)
 * and queues the nodes whose dependencies are all met.
 */
NPU_NOINLINE void
_ZN5torch8autograd6Engine17evaluate_functionERSt10shared_ptrINS0_9GraphTaskEEPNS0_4NodeERNS0_11InputBufferERKS2_INS0_10ReadyQueueEE(
	void *engine, void *graph_task, struct torch_autograd_node *func,
	struct torch_autograd_input_buffer *inputs, const void *ready_queue)
{
	struct graph_task *task = *(struct graph_task **)graph_task;
	struct ag_node *n = AG(func);
	bool was_enabled = npu_autograd_grad_enabled();
	int err;
	NPU_API_ENTER();

	(void)engine;
	(void)ready_queue;
	npu_autograd_set_grad_enabled(false);
	vtable_of(func)->apply(func, inputs);
	release_saved(n); /* release_variables(): no retain_graph */
	for (int i = 0; i < n->nedges; i++) {
		struct ag_node *next = n->next[i].fn;
		struct torch_autograd_input_buffer *nb;
		struct at_tensor *slot, sum;

		if (!next)
			continue;
		nb = buffer_of(next);
		if (!nb) {
			task->error = -ENOMEM;
			break;
		}
		slot = &nb->in[n->next[i].input_nr < AG_MAX_INPUTS ? n->next[i].input_nr : 0];
		if (inputs->out[i].impl && slot->impl) {
			NPU_ATEN_ADD_TENSOR(&sum, slot, &inputs->out[i],
					    &(const struct c10_scalar){ 1.0 });
			npu_tensor_release(slot);
			npu_tensor_release(&inputs->out[i]);
			*slot = sum;
		} else if (inputs->out[i].impl) {
			*slot = inputs->out[i];
			inputs->out[i].impl = NULL;
		}
		if (--next->deps == 0 &&
		    push(&task->ready, &task->nr_ready, &task->cap_ready, next))
			task->error = -ENOMEM;
	}
	err = npu_aten_last_error();
	if (err && !task->error)
		task->error = err;
	npu_autograd_set_grad_enabled(was_enabled);
	NPU_API_EXIT("framework", 0, "\tnode=%s\tseq=%lld\tfwd=%llu", func->name,
		     (long long)func->sequence_nr, (unsigned long long)func->thread_id);
}

static void run_graph_task(struct graph_task *task)
{
	static uint64_t generation;
	struct graph_task *task_ref = task;
	struct torch_autograd_input_buffer *rb;
	char engine[8] = { 0 }, ready_queue[16] = { 0 }; /* stand-ins for this / the queue */

	task->error = compute_dependencies(task, ++generation);
	rb = task->error ? NULL : buffer_of(task->root);
	if (!rb) {
		task->error = task->error ? task->error : -ENOMEM;
	} else {
		rb->in[task->root_nr < AG_MAX_INPUTS ? task->root_nr : 0] = npu_tensor_ref(
			&task->grad);
		task->error = push(&task->ready, &task->nr_ready, &task->cap_ready, task->root);
	}
	while (!task->error && task->nr_ready) {
		struct ag_node *n = pop_ready(task);

		NPU_ENGINE_EVALUATE_FUNCTION(engine, &task_ref, &n->base, n->buf, ready_queue);
		buffer_free(n);
	}
	for (size_t i = 0; i < task->nr_nodes; i++)
		buffer_free(task->nodes[i]);
	free(task->nodes);
	free(task->ready);
}

/* The device thread (one: the model's processes use one NPU each). */
static pthread_mutex_t eng_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t eng_cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t eng_call_lock = PTHREAD_MUTEX_INITIALIZER; /* one backward at a time */
static struct graph_task *eng_pending;
static bool eng_started;
static int (*device_init)(void);

int npu_autograd_register_device_init(int (*init)(void))
{
	device_init = init;
	return 0;
}

static void *engine_thread_main(void *arg)
{
	int device = device_init ? device_init() : 0;
	char name[24]; /* the kernel keeps 15 bytes */

	(void)arg;
	/* PyTorch 2.x names its device threads pt_autograd_<device> (1.13 leaves them unnamed) */
	snprintf(name, sizeof(name), "pt_autograd_%d", device < 0 ? 0 : device);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	npu_autograd_set_grad_enabled(false);
	for (;;) {
		struct graph_task *task;

		pthread_mutex_lock(&eng_lock);
		while (!eng_pending)
			pthread_cond_wait(&eng_cond, &eng_lock);
		task = eng_pending;
		eng_pending = NULL;
		pthread_mutex_unlock(&eng_lock);
		run_graph_task(task);
		pthread_mutex_lock(&eng_lock);
		task->done = true;
		pthread_cond_broadcast(&eng_cond);
		pthread_mutex_unlock(&eng_lock);
	}
	return NULL;
}

static int start_engine_thread(void)
{
	pthread_attr_t attr;
	pthread_t t;
	int r;

	if (eng_started)
		return 0;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&t, &attr, engine_thread_main, NULL);
	pthread_attr_destroy(&attr);
	if (r)
		return -r;
	eng_started = true;
	return 0;
}

/*
 * A fork()ed child has no engine thread even if its parent started one
 * (PyTorch re-creates the engine after fork too).
 */
static void engine_atfork_child(void)
{
	eng_started = false;
	eng_pending = NULL;
	pthread_mutex_init(&eng_lock, NULL);
	pthread_cond_init(&eng_cond, NULL);
	pthread_mutex_init(&eng_call_lock, NULL);
}

__attribute__((constructor)) static void engine_register_atfork(void)
{
	pthread_atfork(NULL, NULL, engine_atfork_child);
}

int npu_autograd_backward(const struct at_tensor *root, const struct at_tensor *grad)
{
	struct graph_task task = { 0 };
	int r;

	if (!root || !root->impl || !root->impl->grad_fn || !grad || !grad->impl)
		return -EINVAL;
	task.root = root->impl->grad_fn;
	task.root_nr = root->impl->output_nr;
	task.grad = *grad;
	pthread_mutex_lock(&eng_call_lock);
	r = start_engine_thread();
	if (r) {
		pthread_mutex_unlock(&eng_call_lock);
		return r;
	}
	pthread_mutex_lock(&eng_lock);
	eng_pending = &task;
	pthread_cond_broadcast(&eng_cond);
	while (!task.done)
		pthread_cond_wait(&eng_cond, &eng_lock);
	pthread_mutex_unlock(&eng_lock);
	pthread_mutex_unlock(&eng_call_lock);
	if (task.error > 0) {
		npu_aten_set_error(task.error);
		return -EIO;
	}
	return task.error;
}
