// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * npu_train - a training loop that drives npu_model the way PyTorch drives
 * torch_npu: every op is an aten entry point (libtorch_cpu) -> op plugin ->
 * OpCommand::RunOpApiV2 -> task queue -> acl_thread -> aclnn (libopapi,
 * dlopen'ed) -> aclrtLaunchKernelWithHostArgs -> libruntime SQEs ->
 * halSqTaskSend -> npu-modeld.  Forward, backward and optimizer of a small
 * transformer and a small CNN, H2D copies of each batch, the caching
 * allocator, one optimizer step per training step (torch::optim::AdamW::
 * step() of libtorch_cpu, the step boundary)
 * and a synchronize at its end.
 *
 *   npu_train --list
 *   npu_train [--scenario NAME] [--steps N] [--duration S] [--batch N]
 *             [--card SPEC] [--ranks N] [--start-after FILE]
 *
 * --steps 0 runs until killed (or until --duration seconds have passed).
 * --card SPEC names the card npu-modeld was started with (same syntax as its
 * --card); npu_train uses it to pace the dispatch-bound scenario and
 * reports it.  Exit status: 0 done, 1 runtime failure, 2 usage error.
 * Prints one summary line on stdout:
 *   npu_train: scenario=NAME steps=N ops=N kernels=N tasks=N wall_s=S kernels_per_s=R ranks=N
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ascend/hccl.h"
#include "npu_acl.h"
#include "npu_aten.h"
#include "npu_autograd.h"
#include "npu_cost.h"
#include "npu_journal.h"
#include "npu_torch.h"

typedef struct at_tensor T;

struct run {
	const char *scenario;
	long steps;	 /* 0: until killed / duration */
	double duration; /* seconds, 0: none */
	int batch;	 /* 0: the scenario's default */
	int ranks;
	int device;
	struct npu_card_config card;
	uint64_t host_delay_ns; /* per aten op: the "Python" time of dispatch-bound */
	uint64_t ops;		/* aten ops called */
	long steps_done;
	double t_start;
	const char *start_after; /* --start-after FILE: wait for it before the first call */
	/* multi-rank: data-parallel gradient all-reduce (ddp_allreduce) */
	HcclRootInfo root;
	HcclComm comm;
	void *hccl_stream;
	const char *slow_rank; /* --slow-rank R:K */
	int rank;	       /* --rank R: this process is one rank (-1: fork them) */
	const char *root_info; /* --root-info FILE: rank 0 writes it, the others read */
	bool pipeline;	       /* scenario pipeline: stages instead of data parallel */
	bool dptp;	       /* scenario dp-tp: 2 x 2 data x tensor parallel */
	HcclRootInfo tp_root[2], dp_root[2];
	HcclComm tp_comm;
};

static struct run R;
static volatile sig_atomic_t stop_requested;

static double now_s(void)
{
	return (double)npu_now_ns() / 1e9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "npu_train: %s failed: error %d\n", what, err);
	exit(1);
}

/* The host side of one op: PyTorch's Python and dispatcher time, emulated when asked. */
static void host_time(void)
{
	uint64_t until;

	R.ops++;
	if (!R.host_delay_ns)
		return;
	until = npu_now_ns() + R.host_delay_ns;
	while (npu_now_ns() < until)
		;
}

static T checked(T t, const char *op)
{
	if (!t.impl)
		die(op, npu_aten_last_error());
	return t;
}

/* ---- aten wrappers ------------------------------------------------------------------------ */

static const struct c10_scalar ONE = { 1.0 };

static T add(const T *a, const T *b)
{
	T r;

	host_time();
	return checked(*NPU_ATEN_ADD_TENSOR(&r, a, b, &ONE), "aten::add");
}

static T addmm(const T *bias, const T *x, const T *w)
{
	T r;

	host_time();
	return checked(*NPU_ATEN_ADDMM(&r, bias, x, w, &ONE, &ONE), "aten::addmm");
}

static T mm(const T *a, const T *b)
{
	T r;

	host_time();
	return checked(*NPU_ATEN_MM(&r, a, b), "aten::mm");
}

static T view(const T *a, const int64_t *sizes, size_t n)
{
	T r;

	return checked(*NPU_ATEN_VIEW(&r, a, (struct c10_int_array_ref){ sizes, n }), "aten::view");
}

static T softmax(const T *a)
{
	T r;

	host_time();
	return checked(*NPU_ATEN_SOFTMAX(&r, a, -1, false), "aten::_softmax");
}

static const struct c10_string_view GELU_NONE = { "none", 4 };

static T gelu(const T *a)
{
	T r;

	host_time();
	return checked(*NPU_ATEN_GELU(&r, a, GELU_NONE), "aten::gelu");
}

static T relu(const T *a)
{
	T r;

	host_time();
	return checked(*NPU_ATEN_RELU(&r, a), "aten::relu");
}

static struct at_tensor3 layer_norm(const T *x, const T *w, const T *b)
{
	struct c10_optional_tensor ow = { *w, 1 }, ob = { *b, 1 };
	int64_t h = x->impl->sizes[x->impl->ndim - 1];
	struct at_tensor3 r;

	host_time();
	NPU_ATEN_NATIVE_LAYER_NORM(&r, x, (struct c10_int_array_ref){ &h, 1 }, &ow, &ob, 1e-5);
	checked(r.t[0], "aten::native_layer_norm");
	return r;
}

static T conv(const T *x, const T *w, const T *b, int64_t stride, int64_t pad)
{
	struct c10_optional_tensor ob = { *b, 1 };
	const int64_t st[2] = { stride, stride }, pd[2] = { pad, pad }, dl[2] = { 1, 1 };
	const int64_t op[2] = { 0, 0 };
	T r;

	host_time();
	return checked(*NPU_ATEN_CONVOLUTION(&r, x, w, &ob, (struct c10_int_array_ref){ st, 2 },
					     (struct c10_int_array_ref){ pd, 2 },
					     (struct c10_int_array_ref){ dl, 2 }, false,
					     (struct c10_int_array_ref){ op, 2 }, 1),
		       "aten::convolution");
}

static T format_cast(const T *x, int64_t fmt)
{
	T r;

	host_time();
	return checked(*NPU_FORMAT_CAST(&r, x, fmt), "npu_format_cast");
}

static T empty(const int64_t *sizes, int ndim)
{
	T t = npu_tensor_empty(sizes, ndim, ACL_FLOAT16, R.device);

	if (!t.impl)
		die("allocating a tensor", npu_aten_last_error());
	return t;
}

static void rel(T *t)
{
	npu_tensor_release(t);
}

static void rel3(struct at_tensor3 *t)
{
	for (int i = 0; i < 3; i++)
		npu_tensor_release(&t->t[i]);
}

/* ---- parameters and optimizers ------------------------------------------------------------- */

#define MAX_PARAMS 64

struct params {
	int n;
	T w[MAX_PARAMS], m[MAX_PARAMS], v[MAX_PARAMS], step[MAX_PARAMS];
	T g[MAX_PARAMS]; /* this step's gradients */
};

static T *param(struct params *p, const int64_t *sizes, int ndim)
{
	int i = p->n++;

	if (i >= MAX_PARAMS)
		die("too many parameters", -E2BIG);
	p->w[i] = empty(sizes, ndim);
	npu_tensor_set_requires_grad(&p->w[i], true);
	p->m[i] = empty(sizes, ndim);
	p->v[i] = empty(sizes, ndim);
	p->step[i] = npu_tensor_empty((const int64_t[]){ 1 }, 1, ACL_FLOAT, R.device);
	return &p->w[i];
}

/* After the backward pass: each parameter's .grad, handed over (zero_grad(set_to_none)). */
static void params_take_grads(struct params *p)
{
	for (int i = 0; i < p->n; i++) {
		rel(&p->g[i]);
		p->g[i] = npu_tensor_take_grad(&p->w[i]);
		if (!p->g[i].impl)
			die("backward (a parameter got no gradient)", -EINVAL);
	}
}

/* torch.autograd.backward(root, grad): on the engine's device thread, this one waiting */
static void backward(const T *root, const T *grad)
{
	int r = npu_autograd_backward(root, grad);

	if (r)
		die("backward", r == -EIO ? npu_aten_last_error() : r);
}

enum optim { OPT_FUSED, OPT_NATIVE, OPT_FOREACH_FUSED };

static void optimizer_step_ops(struct params *p, enum optim kind, double lr, double b1, double b2,
			       double wd, double eps);

/*
 * One training step's optimizer call, torch::optim::AdamW::step() of
 * libtorch_cpu.so, running update(ctx) under no_grad (its ops record no
 * sequence number).  It is the job's step boundary (and writes the journal's
 * `step` line), so every scenario's step makes exactly one.
 */
static void optim_call(void (*update)(void *ctx), void *ctx)
{
	struct npu_optimizer opt = { update, ctx };
	struct cxx_function no_closure = { 0 };
	T loss;

	NPU_OPTIM_ADAMW_STEP(&loss, &opt, &no_closure);
}

struct adamw_ctx {
	struct params *p;
	enum optim kind;
};

static void adamw_update(void *ctx)
{
	const double lr = 1e-3, b1 = 0.9, b2 = 0.999, wd = 0.01, eps = 1e-8;
	struct adamw_ctx *c = ctx;

	optimizer_step_ops(c->p, c->kind, lr, b1, b2, wd, eps);
}

static void optimizer_step(struct params *p, enum optim kind)
{
	struct adamw_ctx c = { p, kind };

	optim_call(adamw_update, &c);
}

static void optimizer_step_ops(struct params *p, enum optim kind, double lr, double b1, double b2,
			       double wd, double eps)
{
	if (kind == OPT_FOREACH_FUSED) {
		/* gradient scaling first: multi-tensor kernels over all gradients */
		struct c10_scalar clip = { 0.5 };

		host_time();
		NPU_ATEN_FOREACH_MUL_SCALAR((struct c10_tensor_list){ p->g, (size_t)p->n }, &clip);
		if (npu_aten_last_error())
			die("aten::_foreach_mul_", -1);
	}
	if (kind == OPT_NATIVE) {
		/* torch.optim.AdamW(foreach=False): several small kernels per parameter */
		struct c10_scalar decay = { 1 - lr * wd }, beta1 = { b1 }, value = { 1 - b2 };
		struct c10_scalar e = { eps }, step = { -lr };

		for (int i = 0; i < p->n; i++) {
			T s, r;

			host_time();
			NPU_ATEN_MUL_SCALAR(&p->w[i], &decay);
			host_time();
			NPU_ATEN_MUL_SCALAR(&p->m[i], &beta1);
			host_time();
			NPU_ATEN_ADDCMUL(&p->v[i], &p->g[i], &p->g[i], &value);
			host_time();
			s = checked(*NPU_ATEN_SQRT(&r, &p->v[i]), "aten::sqrt");
			host_time();
			NPU_ATEN_ADD_SCALAR(&s, &e, &ONE);
			host_time();
			NPU_ATEN_ADDCDIV(&p->w[i], &p->m[i], &s, &step);
			rel(&s);
			if (npu_aten_last_error())
				die("AdamW (native)", -1);
		}
		return;
	}
	host_time();
	NPU_ATEN_FUSED_ADAMW((struct c10_tensor_list){ p->w, (size_t)p->n },
			     (struct c10_tensor_list){ p->g, (size_t)p->n },
			     (struct c10_tensor_list){ p->m, (size_t)p->n },
			     (struct c10_tensor_list){ p->v, (size_t)p->n },
			     (struct c10_tensor_list){ NULL, 0 },
			     (struct c10_tensor_list){ p->step, (size_t)p->n }, lr, b1, b2, wd, eps,
			     false, false, NULL, NULL);
	if (npu_aten_last_error())
		die("aten::_fused_adamw_", -1);
}

static void params_drop_grads(struct params *p)
{
	for (int i = 0; i < p->n; i++)
		rel(&p->g[i]);
}

static void params_free(struct params *p)
{
	for (int i = 0; i < p->n; i++) {
		rel(&p->w[i]);
		rel(&p->m[i]);
		rel(&p->v[i]);
		rel(&p->step[i]);
		rel(&p->g[i]);
	}
	p->n = 0;
}

/* ---- a small transformer -------------------------------------------------------------------- */

struct tf_layer {
	T *ln1_w, *ln1_b, *wq, *bq, *kt, *v, *wo, *bo, *ln2_w, *ln2_b, *w1, *b1, *w2, *b2;
};

struct tf {
	int64_t tokens, hidden, seq, ffn, vocab;
	int layers;
	struct tf_layer L[4];
	T *head_w, *head_b;
	struct params p;
};

static void tf_init(struct tf *m, int64_t batch, int64_t seq, int64_t hidden, int layers)
{
	memset(m, 0, sizeof(*m));
	m->tokens = batch * seq;
	m->seq = seq;
	m->hidden = hidden;
	m->ffn = 4 * hidden;
	m->vocab = 2 * hidden;
	m->layers = layers;
	for (int l = 0; l < layers; l++) {
		struct tf_layer *L = &m->L[l];
		int64_t H = hidden, F = m->ffn, S = seq;

		L->ln1_w = param(&m->p, &H, 1);
		L->ln1_b = param(&m->p, &H, 1);
		L->wq = param(&m->p, (const int64_t[]){ H, H }, 2);
		L->bq = param(&m->p, &H, 1);
		L->kt = param(&m->p, (const int64_t[]){ H, S }, 2);
		L->v = param(&m->p, (const int64_t[]){ S, H }, 2);
		L->wo = param(&m->p, (const int64_t[]){ H, H }, 2);
		L->bo = param(&m->p, &H, 1);
		L->ln2_w = param(&m->p, &H, 1);
		L->ln2_b = param(&m->p, &H, 1);
		L->w1 = param(&m->p, (const int64_t[]){ H, F }, 2);
		L->b1 = param(&m->p, &F, 1);
		L->w2 = param(&m->p, (const int64_t[]){ F, H }, 2);
		L->b2 = param(&m->p, &H, 1);
	}
	m->head_w = param(&m->p, (const int64_t[]){ hidden, m->vocab }, 2);
	m->head_b = param(&m->p, &m->vocab, 1);
}

struct tf_acts {
	T x, q, p, ctx, x1, h, a;
	struct at_tensor3 ln1, ln2;
};

/*
 * Forward and backward of one batch; gradients land in m->p.g.  The forward
 * keeps no activations: the backward nodes hold what they saved, and the
 * backward runs on the autograd engine's thread (torch.autograd.backward).
 */
static void tf_fwd_bwd(struct tf *m, const T *input)
{
	T x = npu_tensor_ref(input), logits, probs;

	for (int l = 0; l < m->layers; l++) {
		struct tf_layer *L = &m->L[l];
		struct at_tensor3 ln1, ln2;
		T q, s, p, ctx, o, x1, h, a, f, y;

		ln1 = layer_norm(&x, L->ln1_w, L->ln1_b);
		q = addmm(L->bq, &ln1.t[0], L->wq);
		s = mm(&q, L->kt);
		p = softmax(&s);
		ctx = mm(&p, L->v);
		o = addmm(L->bo, &ctx, L->wo);
		x1 = add(&x, &o);
		ln2 = layer_norm(&x1, L->ln2_w, L->ln2_b);
		h = addmm(L->b1, &ln2.t[0], L->w1);
		a = gelu(&h);
		f = addmm(L->b2, &a, L->w2);
		y = add(&x1, &f);
		rel3(&ln1);
		rel3(&ln2);
		T *tmp[] = { &q, &s, &p, &ctx, &o, &x1, &h, &a, &f, &x };
		for (size_t i = 0; i < sizeof(tmp) / sizeof(tmp[0]); i++)
			rel(tmp[i]);
		x = y;
	}
	logits = addmm(m->head_b, &x, m->head_w);
	probs = softmax(&logits);
	rel(&logits);
	rel(&x);
	/* the loss gradient stands in as probs itself */
	backward(&probs, &probs);
	rel(&probs);
	params_take_grads(&m->p);
}

/* ---- a small CNN ----------------------------------------------------------------------------- */

/* channels of the three 3x3 convs (32x32 -> 32x32 -> 16x16 -> 8x8) */
#define CNN_C1 64
#define CNN_C2 128
#define CNN_C3 256

struct cnn {
	int64_t batch;
	T *c1w, *c1b, *c2w, *c2b, *c3w, *c3b, *fcw, *fcb;
	struct params p;
};

static void cnn_init(struct cnn *m, int64_t batch)
{
	memset(m, 0, sizeof(*m));
	m->batch = batch;
	m->c1w = param(&m->p, (const int64_t[]){ CNN_C1, 3, 3, 3 }, 4);
	m->c1b = param(&m->p, (const int64_t[]){ CNN_C1 }, 1);
	m->c2w = param(&m->p, (const int64_t[]){ CNN_C2, CNN_C1, 3, 3 }, 4);
	m->c2b = param(&m->p, (const int64_t[]){ CNN_C2 }, 1);
	m->c3w = param(&m->p, (const int64_t[]){ CNN_C3, CNN_C2, 3, 3 }, 4);
	m->c3b = param(&m->p, (const int64_t[]){ CNN_C3 }, 1);
	m->fcw = param(&m->p, (const int64_t[]){ CNN_C3 * 8 * 8, 10 }, 2);
	m->fcb = param(&m->p, (const int64_t[]){ 10 }, 1);
}

/* transdata: every conv input goes through npu_format_cast (NCHW -> NC1HWC0) first. */
static void cnn_fwd_bwd(struct cnn *m, const T *input, bool transdata)
{
	const int64_t flat[2] = { m->batch, CNN_C3 * 8 * 8 };
	T x = transdata ? format_cast(input, ACL_FORMAT_NC1HWC0) : npu_tensor_ref(input);
	T y1, r1, r1c, y2, r2, r2c, y3, r3, f, logits, probs, nz;

	y1 = conv(&x, m->c1w, m->c1b, 1, 1);
	r1 = relu(&y1);
	r1c = transdata ? format_cast(&r1, ACL_FORMAT_NC1HWC0) : npu_tensor_ref(&r1);
	y2 = conv(&r1c, m->c2w, m->c2b, 2, 1);
	r2 = relu(&y2);
	r2c = transdata ? format_cast(&r2, ACL_FORMAT_NC1HWC0) : npu_tensor_ref(&r2);
	y3 = conv(&r2c, m->c3w, m->c3b, 2, 1);
	r3 = relu(&y3);
	f = view(&r3, flat, 2);
	logits = addmm(m->fcb, &f, m->fcw);
	probs = softmax(&logits);
	/* "accuracy": an AI CPU kernel, as nonzero is on the real card */
	host_time();
	nz = checked(*NPU_ATEN_NONZERO(&nz, &probs), "aten::nonzero");
	rel(&nz);
	T *all[] = { &x, &y1, &r1, &r1c, &y2, &r2, &r2c, &y3, &r3, &f, &logits };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		rel(all[i]);
	backward(&probs, &probs);
	rel(&probs);
	params_take_grads(&m->p);
}

/* ---- the loop -------------------------------------------------------------------------------- */

/*
 * Multi-rank: the ranks of one launcher stop at the same step, or a rank would
 * wait in a collective for a peer that stopped.  A rank that wants to stop
 * (duration, signal) at the start of step s runs s and says "stop at s + 1"
 * in memory shared by the ranks: no peer can be past s then (each step's
 * collective needs every rank), so every rank stops at s + 1.
 */
static _Atomic long *stop_at_shared;

/* multi-rank: the root info rank 0 makes, published to the ranks forked beside it */
static struct {
	_Atomic int ready; /* 1: root is set; -1: rank 0 failed */
	HcclRootInfo root;
} * root_shared;

/* Rank 0 makes the root info and publishes it; the others wait for it.  0 or -1. */
static int share_root(int rank)
{
	struct timespec ms = { 0, 1000000 };
	int i, ready;

	if (rank == 0) {
		int err = HcclGetRootInfo(&root_shared->root);

		atomic_store(&root_shared->ready, err ? -1 : 1);
		if (err)
			fprintf(stderr, "npu_train: HcclGetRootInfo failed\n");
		R.root = root_shared->root;
		return err ? -1 : 0;
	}
	for (i = 0; i < 120000 && !(ready = atomic_load(&root_shared->ready)); i++)
		nanosleep(&ms, NULL);
	if (ready != 1) {
		fprintf(stderr, "npu_train: rank %d: no root info from rank 0\n", rank);
		return -1;
	}
	R.root = root_shared->root;
	return 0;
}

static bool more_steps(void)
{
	long s = R.steps_done, cur;
	bool soft = stop_requested || (R.duration > 0 && now_s() - R.t_start >= R.duration);

	if (R.steps != 0 && R.steps_done >= R.steps)
		return false;
	if (!stop_at_shared)
		return !soft;
	cur = atomic_load(stop_at_shared);
	while (soft && cur > s + 1 && !atomic_compare_exchange_weak(stop_at_shared, &cur, s + 1))
		;
	return atomic_load(stop_at_shared) > s;
}

/* A batch on the NPU: a new tensor and an H2D copy through the task queue (tensor.to("npu")). */
static T h2d(const int64_t *sizes, int ndim, void *host, void *stream)
{
	T t = empty(sizes, ndim);
	int r = npu_torch_copy_h2d(&t, host, t.impl->nbytes, stream);

	if (r)
		die("H2D copy", r);
	return t;
}

static void *host_buffer(size_t n)
{
	void *p;
	int r = aclrtMallocHost(&p, n);

	if (r)
		die("aclrtMallocHost", r);
	memset(p, 0, n);
	return p;
}

static void end_step(void)
{
	int r = npu_torch_synchronize();

	if (r)
		die("synchronize", r);
	R.steps_done++;
}

/*
 * Data parallel (multi-rank): the gradients of the step, all-reduced as
 * DDP does in buckets of up to 25 MiB on the rank's HCCL stream once the
 * backward is done (the card drained first, so a slow rank's compute shows
 * as its peers' Notify Wait); the optimizer runs when the stream is done.
 */
static void ddp_allreduce(struct params *p)
{
	const uint64_t bucket_max = 25u << 20;
	uint64_t bucket = 0;
	void *first = NULL;
	int r = npu_torch_synchronize();

	if (r)
		die("synchronize before the all-reduce", r);
	for (int i = 0; i <= p->n; i++) {
		struct npu_tensor_impl *g = i < p->n ? p->g[i].impl : NULL;

		if (bucket && (!g || bucket + g->nbytes > bucket_max)) {
			HcclResult h = HcclAllReduce(first, first, bucket / 2, HCCL_DATA_TYPE_FP16,
						     HCCL_REDUCE_SUM, R.comm, R.hccl_stream);

			if (h)
				die("HcclAllReduce", (int)h);
			bucket = 0;
		}
		if (!g)
			break;
		if (!bucket)
			first = g->data;
		bucket += g->nbytes;
	}
	r = aclrtSynchronizeStream(R.hccl_stream);
	if (r)
		die("the all-reduce (aclrtSynchronizeStream of the HCCL stream)", r);
}

/* Transformer shapes per scenario: device-bound ones are big, dispatch-bound tiny. */
struct tf_shape {
	int64_t batch, seq, hidden;
	int layers;
};

static void train_transformer(struct tf_shape sh, enum optim opt, bool leak, bool two_streams)
{
	int64_t batch = R.batch ? R.batch : sh.batch;
	struct tf m;
	int64_t in_sizes[2];
	void *host, *copy_stream = NULL, *shard_host = NULL;
	aclrtEvent ready = NULL;
	T next = { NULL }, shard = { NULL };
	const int64_t shard_sizes[2] = { 4096, 4096 }; /* 32 MiB of fp16: ~1.3 ms over PCIe */
	int r;

	tf_init(&m, batch, sh.seq, sh.hidden, sh.layers);
	in_sizes[0] = m.tokens;
	in_sizes[1] = m.hidden;
	host = host_buffer((size_t)(m.tokens * m.hidden * 2));
	if (two_streams) {
		r = aclrtCreateStream(&copy_stream);
		if (!r)
			r = aclrtCreateEvent(&ready);
		if (r)
			die("creating the copy stream", r);
		shard_host = host_buffer(4096 * 4096 * 2);
		/* first batch: copy on the copy stream, compute waits for its event */
		next = h2d(in_sizes, 2, host, copy_stream);
		if ((r = npu_torch_record_event(ready, copy_stream)))
			die("record event", r);
	}
	while (more_steps()) {
		T input;

		if (two_streams) {
			input = next;
			if ((r = npu_torch_wait_event(ready, NULL)))
				die("wait event", r);
			/* prefetch the next batch (and a data shard) while this one computes */
			rel(&shard);
			shard = h2d(shard_sizes, 2, shard_host, copy_stream);
			next = h2d(in_sizes, 2, host, copy_stream);
			if ((r = npu_torch_record_event(ready, copy_stream)))
				die("record event", r);
		} else {
			input = h2d(in_sizes, 2, host, NULL);
		}
		tf_fwd_bwd(&m, &input);
		if (R.comm)
			ddp_allreduce(&m.p);
		optimizer_step(&m.p, opt);
		params_drop_grads(&m.p);
		rel(&input);
		if (leak) {
			/* a cache that is never emptied: 8 MiB more held every step */
			if (!npu_torch_alloc(8u << 20))
				die("mem-growth allocation", npu_torch_alloc_last_error());
		}
		end_step();
	}
	rel(&next);
	rel(&shard);
	if (two_streams) {
		npu_torch_synchronize();
		aclrtFreeHost(shard_host);
		aclrtDestroyEvent(ready);
		aclrtDestroyStream(copy_stream);
	}
	aclrtFreeHost(host);
	params_free(&m.p);
}

/* images arrive as float32 and are cast on the card: tensor.to("npu").half() */
static T to_half(const T *x)
{
	struct c10_optional_scalar_type half = { ACL_FLOAT16, 1 };
	T r;

	host_time();
	return checked(*NPU_ATEN_TO_COPY(&r, x, half, 0, 0, 0, false, 0), "aten::_to_copy");
}

static T h2d_images(const int64_t *sizes, void *host)
{
	T f32 = npu_tensor_empty(sizes, 4, ACL_FLOAT, R.device), f16;
	int r;

	if (!f32.impl)
		die("allocating a tensor", npu_aten_last_error());
	r = npu_torch_copy_h2d(&f32, host, f32.impl->nbytes, NULL);
	if (r)
		die("H2D copy", r);
	f16 = to_half(&f32);
	rel(&f32);
	return f16;
}

static void train_cnn(int64_t batch, bool transdata)
{
	const int64_t sizes[4] = { batch, 3, 32, 32 };
	void *host = host_buffer((size_t)(batch * 3 * 32 * 32 * 4));
	struct cnn m;

	cnn_init(&m, batch);
	while (more_steps()) {
		T input;

		input = h2d_images(sizes, host);
		cnn_fwd_bwd(&m, &input, transdata);
		optimizer_step(&m.p, OPT_FUSED);
		params_drop_grads(&m.p);
		rel(&input);
		end_step();
	}
	aclrtFreeHost(host);
	params_free(&m.p);
}

static const struct tf_shape TF_BIG = { 16, 512, 1024, 2 }; /* device-bound */
static const struct tf_shape TF_MID = { 4, 128, 256, 2 };
static const struct tf_shape TF_TINY = { 2, 32, 64, 1 };

/* baseline: transformer and CNN steps alternate; both device-bound. */
static int sc_baseline(void)
{
	struct tf_shape sh = TF_BIG;
	int64_t cnn_batch = R.batch ? R.batch * 16 : 256;
	long total = R.steps;

	/* one loop, two models: even steps transformer, odd steps CNN */
	struct tf tm;
	struct cnn cm;
	int64_t tf_in[2], cnn_in[4] = { cnn_batch, 3, 32, 32 };
	void *host;

	(void)total;
	tf_init(&tm, R.batch ? R.batch : sh.batch, sh.seq, sh.hidden, sh.layers);
	cnn_init(&cm, cnn_batch);
	tf_in[0] = tm.tokens;
	tf_in[1] = tm.hidden;
	host = host_buffer((size_t)(tm.tokens * tm.hidden * 2 > cnn_batch * 3 * 32 * 32 * 4 ?
					    tm.tokens * tm.hidden * 2 :
					    cnn_batch * 3 * 32 * 32 * 4));
	while (more_steps()) {
		T input;

		if (R.steps_done % 2 == 0) {
			input = h2d(tf_in, 2, host, NULL);
			tf_fwd_bwd(&tm, &input);
			optimizer_step(&tm.p, OPT_FOREACH_FUSED);
			params_drop_grads(&tm.p);
		} else {
			input = h2d_images(cnn_in, host);
			cnn_fwd_bwd(&cm, &input, false);
			optimizer_step(&cm.p, OPT_FOREACH_FUSED);
			params_drop_grads(&cm.p);
		}
		rel(&input);
		end_step();
	}
	aclrtFreeHost(host);
	params_free(&tm.p);
	params_free(&cm.p);
	return 0;
}

/*
 * dispatch-bound: tiny kernels (a few us on the card) behind 200 us of host
 * time per op, as an un-jitted Python loop over small tensors: the card idles
 * most of the time and the queue runs empty.
 */
static int sc_dispatch_bound(void)
{
	/* 200 us, or more on a card whose launch latency alone would keep up */
	R.host_delay_ns = 200000;
	if (R.host_delay_ns < 50 * R.card.launch_latency_ns)
		R.host_delay_ns = 50 * R.card.launch_latency_ns;
	train_transformer(TF_TINY, OPT_FUSED, false, false);
	return 0;
}

static int sc_native_optimizer(void)
{
	train_transformer(TF_MID, OPT_NATIVE, false, false);
	return 0;
}

static int sc_fused_optimizer(void)
{
	train_transformer(TF_MID, OPT_FUSED, false, false);
	return 0;
}

static int sc_transdata(void)
{
	train_cnn(R.batch ? R.batch : 32, true);
	return 0;
}

static int sc_mem_growth(void)
{
	train_transformer(TF_MID, OPT_FUSED, true, false);
	return 0;
}

/*
 * oom: fill the card with cached 64 MiB blocks, return them to the cache,
 * then ask for one block too large for any cached segment: aclrtMallocAlign32
 * fails with ACL_ERROR_RT_MEMORY_ALLOCATION (207001), the allocator frees its
 * cache and retries, and training continues.  Run npu-modeld with a small
 * --hbm-mib so filling is quick.
 */
struct oom_fill {
	int n, err; /* 64 MiB blocks held when it failed, its error */
	size_t big;
	void *p; /* the block too large for the cache, after the retry */
	struct npu_alloc_stats st;
};

/*
 * The first step's optimizer call allocates (as Adam does its state on the
 * first step): it fills the card, then asks for the block too large.
 */
static void oom_update(void *ctx)
{
	enum { MAX_FILL = 4096 };
	static void *held[MAX_FILL];
	struct oom_fill *f = ctx;

	while (f->n < MAX_FILL && (held[f->n] = npu_torch_alloc(64u << 20)))
		f->n++;
	f->err = npu_torch_alloc_last_error();
	if (f->n == MAX_FILL || f->err != ACL_ERROR_RT_MEMORY_ALLOCATION)
		return;
	for (int i = 0; i < f->n; i++)
		npu_torch_free(held[i]);
	npu_torch_alloc_stats(&f->st);
	f->big = (size_t)(f->st.reserved / 2) & ~((size_t)(2u << 20) - 1);
	if (f->big <= (64u << 20))
		f->big = 128u << 20;
	f->p = npu_torch_alloc(f->big);
	npu_torch_alloc_stats(&f->st);
}

static int sc_oom(void)
{
	struct oom_fill f = { 0 };

	optim_call(oom_update, &f);
	if (f.n == 4096 || f.err != ACL_ERROR_RT_MEMORY_ALLOCATION) {
		fprintf(stderr,
			"npu_train: oom: could not fill the card (%d blocks, error %d); "
			"start npu-modeld with a small --hbm-mib\n",
			f.n, f.err);
		return 1;
	}
	fprintf(stderr,
		"npu_train: oom: filled %d x 64 MiB, then %zu MiB %s after %llu cache "
		"release(s)\n",
		f.n, f.big >> 20, f.p ? "succeeded" : "FAILED",
		(unsigned long long)f.st.nr_oom_retries);
	if (!f.p)
		die("allocation after emptying the cache", npu_torch_alloc_last_error());
	npu_torch_free(f.p);
	npu_torch_empty_cache();
	end_step();
	train_transformer(TF_TINY, OPT_FUSED, false, false);
	return 0;
}

static int sc_multi_stream(void)
{
	train_transformer(TF_MID, OPT_FUSED, false, true);
	return 0;
}

/*
 * launch-storm: as many tiny kernels as the stack can launch: in-place adds
 * on a 16-element tensor through the whole stack, SQEs batched 32 per
 * halSqTaskSend (NPU_MODEL_SQE_BATCH, set before the device opens).
 */
struct storm_ctx {
	T *t;
	const struct c10_scalar *one;
};

/* The step's update: 20000 in-place adds, each one kernel (a per-element update loop). */
static void storm_update(void *ctx)
{
	struct storm_ctx *c = ctx;

	for (int i = 0; i < 20000; i++) {
		R.ops++;
		NPU_ATEN_ADD_SCALAR(c->t, c->one, c->one);
	}
}

static int sc_launch_storm(void)
{
	const int64_t n = 16;
	struct c10_scalar one = { 1.0 };
	T t = empty(&n, 1);
	struct storm_ctx c = { &t, &one };

	while (more_steps()) {
		optim_call(storm_update, &c);
		if (npu_aten_last_error())
			die("aten::add_", -1);
		end_step();
	}
	rel(&t);
	return 0;
}

static int sc_multi_rank(void);
static int sc_pipeline(void);
static int sc_dptp(void);

struct scenario {
	const char *name;
	int (*run)(void);
	long default_steps;
	const char *what;
};

static const struct scenario scenarios[] = {
	{ "baseline", sc_baseline, 10,
	  "transformer and CNN steps, device-bound, foreach grad scaling + fused AdamW" },
	{ "dispatch-bound", sc_dispatch_bound, 10,
	  "tiny kernels behind 200 us of host time per op: the card idles between kernels" },
	{ "native-optimizer", sc_native_optimizer, 10,
	  "AdamW as 6 small kernels per parameter (Muls, Addcmul, Sqrt, Adds, Addcdiv)" },
	{ "fused-optimizer", sc_fused_optimizer, 10,
	  "the same model with one ApplyAdamW kernel per parameter" },
	{ "transdata", sc_transdata, 10,
	  "CNN whose conv inputs pass through npu_format_cast: TransData kernels" },
	{ "mem-growth", sc_mem_growth, 10, "8 MiB more allocator memory held every step" },
	{ "oom", sc_oom, 3,
	  "an allocation fails with 207001, the cache is released and it is retried" },
	{ "multi-stream", sc_multi_stream, 10,
	  "H2D copies on a second stream with events, overlapping compute" },
	{ "launch-storm", sc_launch_storm, 5, "20000 tiny kernel launches per step" },
	{ "multi-rank", sc_multi_rank, 5,
	  "--ranks N processes (default 2), one card each, on one daemon" },
	{ "pipeline", sc_pipeline, 5,
	  "two pipeline stages (ranks 0, 1): activations and gradients by HcclSend / HcclRecv" },
	{ "dp-tp", sc_dptp, 5,
	  "4 ranks, 2-way tensor parallel (groups 0-1, 2-3) x 2-way data parallel (0-2, 1-3)" },
};

static const struct scenario *find_scenario(const char *name)
{
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (!strcmp(scenarios[i].name, name))
			return &scenarios[i];
	return NULL;
}

static void summary(const char *scenario)
{
	uint64_t kernels = 0, tasks = npu_model_runtime_tasks(&kernels);
	double wall = now_s() - R.t_start;

	printf("npu_train: scenario=%s steps=%ld ops=%llu kernels=%llu tasks=%llu wall_s=%.3f "
	       "kernels_per_s=%.0f ranks=%d device=%d\n",
	       scenario, R.steps_done, (unsigned long long)R.ops, (unsigned long long)kernels,
	       (unsigned long long)tasks, wall, wall > 0 ? (double)kernels / wall : 0.0, R.ranks,
	       R.device);
	fflush(stdout);
}

/* `adds` in-place adds on t: a stage's compute. */
static void stage_compute(T *t, int adds)
{
	struct c10_scalar one = { 1.0 };

	for (int i = 0; i < adds; i++) {
		R.ops++;
		NPU_ATEN_ADD_SCALAR(t, &one, &one);
	}
	if (npu_aten_last_error())
		die("aten::add_", -1);
}

static void p2p(bool send, T *t, int peer)
{
	uint64_t n = npu_tensor_numel(t);
	HcclResult h;
	int r = send ? npu_torch_synchronize() : 0; /* the stage's compute is done */

	if (r)
		die("synchronize before HcclSend", r);
	h = send ? HcclSend(t->impl->data, n, HCCL_DATA_TYPE_FP16, (uint32_t)peer, R.comm,
			    R.hccl_stream) :
		   HcclRecv(t->impl->data, n, HCCL_DATA_TYPE_FP16, (uint32_t)peer, R.comm,
			    R.hccl_stream);
	if (h)
		die(send ? "HcclSend" : "HcclRecv", (int)h);
	r = aclrtSynchronizeStream(R.hccl_stream);
	if (r)
		die("the p2p transfer (aclrtSynchronizeStream of the HCCL stream)", r);
}

/*
 * Two pipeline stages: stage 0 (rank 0) runs its forward, sends the
 * activations to stage 1 and waits for their gradient; stage 1 (rank 1)
 * receives, runs forward and backward, sends the gradient back.  Each
 * stage idles while the other works (the pipeline's bubble).
 */
static void train_pipeline(int rank)
{
	const int64_t n = 1 << 20; /* 2 MiB of fp16 activations */
	T act = empty(&n, 1);

	while (more_steps()) {
		if (rank == 0) {
			stage_compute(&act, 20); /* forward */
			p2p(true, &act, 1);
			p2p(false, &act, 1);
			stage_compute(&act, 20); /* backward */
		} else {
			p2p(false, &act, 0);
			stage_compute(&act, 40); /* forward and backward */
			p2p(true, &act, 0);
		}
		optim_call(NULL, NULL); /* the stage's optimizer step (no update modelled) */
		end_step();
	}
	rel(&act);
}

/* One all-reduce of t on comm, waited for. */
static void allreduce_wait(T *t, HcclComm comm, const char *what)
{
	int r = npu_torch_synchronize();
	HcclResult h;

	if (r)
		die("synchronize before the all-reduce", r);
	h = HcclAllReduce(t->impl->data, t->impl->data, npu_tensor_numel(t), HCCL_DATA_TYPE_FP16,
			  HCCL_REDUCE_SUM, comm, R.hccl_stream);
	if (h)
		die(what, (int)h);
	r = aclrtSynchronizeStream(R.hccl_stream);
	if (r)
		die(what, r);
}

/*
 * Data x tensor parallel: each step the tensor-parallel pair all-reduces a
 * layer's partial output (1 MiB) in the forward and the data-parallel pair
 * all-reduces the gradients (2 MiB) after the backward.
 */
static void train_dptp(void)
{
	const int64_t na = 1 << 19, ng = 1 << 20;
	T act = empty(&na, 1), grad = empty(&ng, 1);

	while (more_steps()) {
		stage_compute(&act, 10);
		allreduce_wait(&act, R.tp_comm, "tensor-parallel HcclAllReduce");
		stage_compute(&grad, 20);
		allreduce_wait(&grad, R.comm, "data-parallel HcclAllReduce");
		optim_call(NULL, NULL); /* the optimizer step (no update modelled) */
		end_step();
	}
	rel(&act);
	rel(&grad);
}

/* One rank: its own card, a small transformer. */
static int rank_main(int rank)
{
	int r;

	const char *local = R.rank >= 0 ? getenv("LOCAL_RANK") : NULL;

	/* a rank started from outside uses its node's card LOCAL_RANK, as torchrun sets it */
	R.device = local && *local ? atoi(local) : rank;
	r = npu_torch_init(R.device);
	if (r == ACL_ERROR_RT_INVALID_DEVICEID) {
		uint32_t cards = 0;

		/* name the missing card and the fix, not only the error number */
		if (aclrtGetDeviceCount(&cards) == 0)
			fprintf(stderr,
				"npu_train: rank %d needs card %d, but npu-modeld has "
				"%u card%s (0..%u): start it with --cards %d or more, or run "
				"fewer --ranks\n",
				rank, rank, cards, cards == 1 ? "" : "s", cards ? cards - 1 : 0,
				R.ranks);
		else
			fprintf(stderr,
				"npu_train: rank %d: card %d does not exist (error %d): "
				"start npu-modeld with --cards %d or more\n",
				rank, rank, r, R.ranks);
		return 1;
	}
	if (r) {
		fprintf(stderr, "npu_train: rank %d: aclrtSetDevice(%d) failed: error %d\n", rank,
			rank, r);
		return 1;
	}
	if (R.ranks > 1) {
		HcclResult h;

		r = aclrtCreateStream(&R.hccl_stream);
		if (R.dptp) { /* tensor-parallel group rank / 2, data-parallel group rank % 2 */
			uint32_t tp = (uint32_t)rank / 2, dp = (uint32_t)rank % 2;

			h = r ? HCCL_E_RUNTIME :
				HcclCommInitRootInfo(2, &R.tp_root[tp], dp, &R.tp_comm);
			if (!h)
				h = HcclCommInitRootInfo(2, &R.dp_root[dp], tp, &R.comm);
		} else {
			h = r ? HCCL_E_RUNTIME :
				HcclCommInitRootInfo((uint32_t)R.ranks, &R.root, (uint32_t)rank,
						     &R.comm);
		}
		if (h) {
			fprintf(stderr, "npu_train: rank %d: HcclCommInitRootInfo failed: %d\n",
				rank, (int)h);
			return 1;
		}
	}
	if (R.pipeline)
		train_pipeline(rank);
	else if (R.dptp)
		train_dptp();
	else
		train_transformer(TF_TINY, OPT_FUSED, false, false);
	if (R.comm)
		HcclCommDestroy(R.comm);
	if (R.tp_comm)
		HcclCommDestroy(R.tp_comm);
	summary(R.scenario);
	return 0;
}

/* --slow-rank R:K: rank R's kernels take K times as long (libruntime's compute scale). */
static void slow_rank_env(int rank)
{
	unsigned int r, k;

	if (R.slow_rank && sscanf(R.slow_rank, "%u:%u", &r, &k) == 2 && (int)r == rank) {
		char v[16];

		snprintf(v, sizeof(v), "%u", k);
		setenv("NPU_MODEL_COMPUTE_SCALE", v, 1);
	}
}

/*
 * One rank of a job launched from outside (as torchrun starts each rank):
 * rank 0 makes the root info and publishes it in FILE (written whole, then
 * renamed), the others wait up to 120 s for it.
 */
static int one_rank(void)
{
	char tmp[4096];
	int status;

	if (!R.root_info) {
		fprintf(stderr, "npu_train: --rank needs --root-info FILE\n");
		return 2;
	}
	if (R.rank == 0) {
		FILE *f;

		snprintf(tmp, sizeof(tmp), "%s.tmp.%d", R.root_info, (int)getpid());
		f = fopen(tmp, "we");
		if (HcclGetRootInfo(&R.root) || !f || fwrite(&R.root, sizeof(R.root), 1, f) != 1 ||
		    fclose(f) || rename(tmp, R.root_info)) {
			fprintf(stderr, "npu_train: cannot publish the root info in %s\n",
				R.root_info);
			return 1;
		}
	} else {
		for (int i = 0;; i++) {
			FILE *f = fopen(R.root_info, "re");
			size_t n = f ? fread(&R.root, 1, sizeof(R.root), f) : 0;

			if (f)
				fclose(f);
			if (n == sizeof(R.root))
				break;
			if (i == 120000) {
				fprintf(stderr,
					"npu_train: rank %d: no root info in %s "
					"after 120 s\n",
					R.rank, R.root_info);
				return 1;
			}
			usleep(1000);
		}
	}
	slow_rank_env(R.rank);
	status = rank_main(R.rank);
	npu_torch_synchronize();
	aclrtResetDevice(R.device);
	return status;
}

static int sc_pipeline(void)
{
	R.pipeline = true;
	R.ranks = 2;
	return R.rank >= 0 ? one_rank() : sc_multi_rank();
}

static int sc_dptp(void)
{
	R.dptp = true;
	R.ranks = 4;
	if (R.rank >= 0) {
		fprintf(stderr, "npu_train: dp-tp runs its 4 ranks itself (no --rank)\n");
		return 2;
	}
	for (int g = 0; g < 2; g++)
		if (HcclGetRootInfo(&R.tp_root[g]) || HcclGetRootInfo(&R.dp_root[g])) {
			fprintf(stderr, "npu_train: HcclGetRootInfo failed\n");
			return 1;
		}
	return sc_multi_rank();
}

static int sc_multi_rank(void)
{
	pid_t pids[64];
	int failed = 0, status;

	if (R.ranks > 1) {
		void *m = mmap(NULL, sizeof(*stop_at_shared), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		if (m != MAP_FAILED) {
			stop_at_shared = m;
			atomic_store(stop_at_shared, LONG_MAX);
		}
	}
	/*
	 * The root info every rank joins with: rank 0 makes it and the others read it
	 * (torch's rank 0 broadcasts it through its store), so the launcher itself makes no
	 * HCCL call, as torchrun makes none.
	 */
	if (R.ranks > 1 && !R.dptp) {
		void *m = mmap(NULL, sizeof(*root_shared), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED) {
			perror("npu_train: mmap");
			return 1;
		}
		root_shared = m;
	}
	for (int i = 0; i < R.ranks; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("npu_train: fork");
			return 1;
		}
		if (pids[i] == 0) {
			char v[16];

			snprintf(v, sizeof(v), "%d", i);
			setenv("RANK", v, 1);
			setenv("LOCAL_RANK", v, 1);
			slow_rank_env(i);
			if (root_shared && share_root(i))
				_exit(1);
			status = rank_main(i);
			npu_torch_synchronize();
			aclrtResetDevice(i);
			npu_journal_flush(); /* _exit skips atexit */
			_exit(status);
		}
	}
	/*
	 * As torchrun: when a rank fails, the others are stopped (they would wait
	 * for it in HCCL until a timeout), after a grace of 10 s in which they see
	 * the failure themselves (a peer's wait fails at the card's task timeout).
	 */
	double failed_at = 0;
	int killed = 0;

	for (int left = R.ranks; left > 0;) {
		pid_t pid = waitpid(-1, &status, failed ? WNOHANG : 0);
		int i;

		if (pid < 0)
			break;
		if (pid == 0) {
			if (!killed && now_s() - failed_at > 10) {
				for (int k = 0; k < R.ranks; k++)
					if (pids[k] > 0)
						kill(pids[k], SIGKILL);
				killed = 1;
			}
			usleep(50000);
			continue;
		}
		for (i = 0; i < R.ranks && pids[i] != pid; i++)
			;
		if (i == R.ranks)
			continue;
		pids[i] = 0;
		left--;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			continue;
		fprintf(stderr, "npu_train: rank %d failed%s\n", i,
			failed ? "" : "; stopping the other ranks in 10 s");
		if (!failed)
			failed_at = now_s();
		failed = 1;
	}
	return failed;
}

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static const char usage_text[] =
	"usage: npu_train [--scenario NAME] [--steps N] [--duration S] [--batch N]\n"
	"                 [--card SPEC] [--ranks N] | --list\n"
	"  --scenario NAME  what to run (default baseline; --list shows them)\n"
	"  --steps N        training steps (default per scenario; 0 = until killed or --duration)\n"
	"  --duration S     stop after S seconds\n"
	"  --batch N        batch size (default per scenario)\n"
	"  --card SPEC      the card npu-modeld runs (its --card syntax): pacing, report\n"
	"  --ranks N        processes for multi-rank (default 2), rank i uses card i;\n"
	"                   every step all-reduces the gradients through libhccl\n"
	"  --start-after F  wait until file F exists before starting (a tracer attaches first)\n"
	"  --slow-rank R:K  multi-rank: rank R's kernels take K times as long\n"
	"  --hang-rank R:N  multi-rank: rank R hangs before its HCCL op N (0-based)\n"
	"  --die-rank R:N   multi-rank: rank R dies (SIGKILL) before its HCCL op N\n"
	"  --rank R         multi-rank: be rank R of --ranks N started separately (no fork),\n"
	"  --root-info FILE   meeting through FILE (rank 0 writes the root info there)\n";

static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "list", no_argument, NULL, 'l' },
		{ "scenario", required_argument, NULL, 's' },
		{ "steps", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'd' },
		{ "batch", required_argument, NULL, 'b' },
		{ "card", required_argument, NULL, 'c' },
		{ "ranks", required_argument, NULL, 'r' },
		{ "start-after", required_argument, NULL, 'w' },
		{ "slow-rank", required_argument, NULL, 'S' },
		{ "hang-rank", required_argument, NULL, 'H' },
		{ "die-rank", required_argument, NULL, 'D' },
		{ "rank", required_argument, NULL, 'k' },
		{ "root-info", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct scenario *sc;
	bool steps_given = false;
	char *end;
	long v;
	int c, r;

	R.scenario = "baseline";
	R.ranks = 2;
	R.rank = -1;
	npu_card_config_default(&R.card);
	while ((c = getopt_long(argc, argv, "ls:n:d:b:c:r:h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
				printf("%-18s %s\n", scenarios[i].name, scenarios[i].what);
			return 0;
		case 's':
			R.scenario = optarg;
			break;
		case 'n':
			if (parse_long(optarg, 0, 100000000, &v)) {
				fprintf(stderr, "npu_train: --steps wants a count >= 0, not '%s'\n",
					optarg);
				return 2;
			}
			R.steps = v;
			steps_given = true;
			break;
		case 'd':
			R.duration = strtod(optarg, &end);
			if (end == optarg || *end || !(R.duration > 0) || R.duration > 1e6) {
				fprintf(stderr,
					"npu_train: --duration wants seconds > 0, "
					"not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'b':
			if (parse_long(optarg, 1, 4096, &v)) {
				fprintf(stderr, "npu_train: --batch wants 1..4096, not '%s'\n",
					optarg);
				return 2;
			}
			R.batch = (int)v;
			break;
		case 'c':
			if (npu_card_config_parse(&R.card, optarg)) {
				fprintf(stderr,
					"npu_train: bad --card '%s' (keys: tflops, "
					"vector_tflops, aicpu_gflops, hbm_gbps, pcie_gbps, "
					"launch_us, hbm_gib)\n",
					optarg);
				return 2;
			}
			setenv("NPU_MODEL_CARD", optarg, 1);
			break;
		case 'r':
			if (parse_long(optarg, 1, 64, &v)) {
				fprintf(stderr, "npu_train: --ranks wants 1..64, not '%s'\n",
					optarg);
				return 2;
			}
			R.ranks = (int)v;
			break;
		case 'w':
			R.start_after = optarg;
			break;
		case 'k':
			if (parse_long(optarg, 0, 63, &v)) {
				fprintf(stderr, "npu_train: --rank wants 0..63, not '%s'\n",
					optarg);
				return 2;
			}
			R.rank = (int)v;
			break;
		case 'I':
			R.root_info = optarg;
			break;
		case 'S':
		case 'H':
		case 'D': {
			unsigned int a, b;
			char tail;

			if (sscanf(optarg, "%u:%u%c", &a, &b, &tail) != 2 || (c == 'S' && b < 1)) {
				fprintf(stderr, "npu_train: --%s wants RANK:%s, not '%s'\n",
					c == 'S' ? "slow-rank" :
					c == 'H' ? "hang-rank" :
						   "die-rank",
					c == 'S' ? "FACTOR" : "SEQ", optarg);
				return 2;
			}
			if (c == 'S')
				R.slow_rank = optarg;
			else /* libhccl reads it in every rank and acts in that one */
				setenv(c == 'H' ? "NPU_MODEL_HCCL_HANG" : "NPU_MODEL_HCCL_DIE",
				       optarg, 1);
			break;
		}
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "npu_train: unexpected argument '%s'\n%s", argv[optind],
			usage_text);
		return 2;
	}
	sc = find_scenario(R.scenario);
	if (!sc) {
		fprintf(stderr, "npu_train: no scenario '%s' (npu_train --list shows them)\n",
			R.scenario);
		return 2;
	}
	if (!steps_given)
		R.steps = R.duration > 0 ? 0 : sc->default_steps;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* the libraries are mapped already: a tracer that finds processes by them attaches now */
	while (R.start_after && access(R.start_after, F_OK) && !stop_requested)
		usleep(10000);
	R.t_start = now_s();
	if (sc->run == sc_pipeline)
		return R.rank >= 2 ? 2 : sc_pipeline();
	if (sc->run == sc_dptp)
		return sc_dptp();
	if (sc->run == sc_multi_rank) {
		if (R.rank >= 0 && R.rank >= R.ranks) {
			fprintf(stderr, "npu_train: --rank %d is not below --ranks %d\n", R.rank,
				R.ranks);
			return 2;
		}
		r = R.rank >= 0 ? one_rank() : sc_multi_rank();
		return r;
	}
	if (sc->run == sc_launch_storm && !getenv("NPU_MODEL_SQE_BATCH"))
		setenv("NPU_MODEL_SQE_BATCH", "32", 1);
	r = npu_torch_init(0);
	if (r) {
		fprintf(stderr,
			"npu_train: aclInit/aclrtSetDevice(0) failed: error %d "
			"(is npu-modeld running at NPU_MODEL_DEV_DIR=%s?)\n",
			r, getenv("NPU_MODEL_DEV_DIR") ? getenv("NPU_MODEL_DEV_DIR") : "(default)");
		return 1;
	}
	r = sc->run();
	if (!r)
		summary(sc->name);
	npu_torch_synchronize();
	aclrtResetDevice(0);
	return r ? 1 : 0;
}
