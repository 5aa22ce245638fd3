// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * opplugin.c - torch_npu's operator layer (op-plugin, compiled into
 * libtorch_npu as in torch_npu): the NPU backend the aten ops of
 * libtorch_cpu dispatch to, and the torch.npu helpers npu_train uses.
 *
 * Each op is op-plugin's EXEC_NPU_CMD(aclnnXxx, ...) with TASK_QUEUE_ENABLE=1
 * semantics: on the calling thread, convert the tensors to aclTensor, call
 * aclnnXxxGetWorkspaceSize, allocate the workspace from the caching
 * allocator, then hand a std::function that calls aclnnXxx(workspace, size,
 * executor, stream) to OpCommand::RunOpApiV2("aclnnXxx", ...), which queues
 * it for acl_thread.  The aclnn functions are found with dlopen + dlsym of
 * the operator libraries on first use, as op-plugin's GetOpApiFuncAddr does
 * (opapi_sym below).
 *
 * The one TransData call site: at_npu::native::custom_ops::npu_format_cast
 * (exported below), which runs TransData through the legacy aclop path
 * (OpCommand "TransData" -> COMPILE_AND_EXECUTE -> ExecFunc ->
 * aclopCompileAndExecute), as torch_npu's format cast does.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_acl.h"
#include "npu_aclnn.h"
#include "npu_api_journal.h"
#include "npu_autograd.h"
#include "npu_torch.h"
#include "opapi/nnopbase.h"
#include "torch_npu/torch_npu_priv.h"

static int npu_device = -1;

/* ---- the operator libraries, loaded on first use ------------------------------------------ */

/*
 * op-plugin's order (GetOpApiFuncAddr, op_api_common.hpp): a custom op
 * package's libcust_opapi.so first (it overrides built-in ops), then every
 * libopapi_*.so of the CANN lib64 (CANN 8.x/9.x split the ops by family),
 * then libopapi.so (deprecated from CANN 9.0, still shipped), then every
 * libaclnn_*.so; a symbol comes from the first library that has it.  lib64
 * here is the directory libnnopbase.so was loaded from.  Each dlopen writes
 * an `oplib` journal line (lib, idx) in that order.
 */
#define OPAPI_MAX_LIBS 32

static void *opapi_handles[OPAPI_MAX_LIBS];
static int opapi_nr = -1; /* -1: not loaded yet */
static pthread_mutex_t opapi_lock = PTHREAD_MUTEX_INITIALIZER;

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void opapi_open(const char *dir, const char *name)
{
	char path[4096];
	void *h;

	if (opapi_nr >= OPAPI_MAX_LIBS)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	h = dlopen(path, RTLD_LAZY);
	if (!h)
		return;
	if (npu_journal_on)
		npu_journal_write("oplib", "tid=%d\tlib=%s\tidx=%d", npu_tid(), name, opapi_nr);
	opapi_handles[opapi_nr++] = h;
}

/* Every file of dir named prefix*.so (not prefix.so itself), in name order. */
static void opapi_open_glob(const char *dir, const char *prefix)
{
	char *names[OPAPI_MAX_LIBS];
	size_t pl = strlen(prefix), n = 0, i, len;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d)) && n < OPAPI_MAX_LIBS) {
		len = strlen(de->d_name);
		if (len > pl + 3 && !strncmp(de->d_name, prefix, pl) &&
		    !strcmp(de->d_name + len - 3, ".so") && (names[n] = strdup(de->d_name)))
			n++;
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), name_cmp);
	for (i = 0; i < n; i++) {
		opapi_open(dir, names[i]);
		free(names[i]);
	}
}

static void opapi_load_locked(void)
{
	char dir[4096];
	Dl_info info;
	char *slash;

	opapi_nr = 0;
	if (!dladdr((void *)&aclCreateTensor, &info) || !info.dli_fname)
		return;
	snprintf(dir, sizeof(dir), "%s", info.dli_fname);
	slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = 0;
	opapi_open(dir, "libcust_opapi.so");
	opapi_open_glob(dir, "libopapi_");
	opapi_open(dir, "libopapi.so");
	opapi_open_glob(dir, "libaclnn_");
}

static void *opapi_sym(const char *name)
{
	void *f = NULL;
	int i;

	pthread_mutex_lock(&opapi_lock);
	if (opapi_nr < 0)
		opapi_load_locked();
	for (i = 0; i < opapi_nr && !f; i++)
		f = dlsym(opapi_handles[i], name);
	pthread_mutex_unlock(&opapi_lock);
	return f;
}

/* Caches one aclnn symbol per call site (a static pointer each). */
#define OPAPI(var, fn)                                       \
	static __typeof__(&fn) var##_sym;                    \
	if (!var##_sym)                                      \
		var##_sym = (__typeof__(&fn))opapi_sym(#fn); \
	if (!var##_sym)                                      \
		return ACLNN_ERR_INNER;

typedef aclnnStatus (*aclnn_run_fn)(void *, uint64_t, aclOpExecutor *, aclrtStream);

/* ---- EXEC_NPU_CMD ------------------------------------------------------------------------- */

struct opapi_call {
	aclnn_run_fn run;
	void *workspace;
	uint64_t workspace_size;
	aclOpExecutor *executor;
	aclrtStream stream;
};

static int opapi_call_run(void *ctx)
{
	struct opapi_call *c = ctx;

	return c->run(c->workspace, c->workspace_size, c->executor, c->stream);
}

/* Phase 2 through the queue; frees the workspace block (stream-ordered reuse is safe). */
static int exec_phase2(const char *aclnn_name, uint64_t ws, aclOpExecutor *ex)
{
	struct opapi_call c = { 0 };
	struct cxx_function fn;
	struct cxx_string name;
	static struct {
		const char *name;
		void *fn;
	} cache[64];
	void *run = NULL;
	int err, i;

	/* aclnn_name is a string literal of run_op: its address keys the cache. */
	for (i = 0; i < 64 && cache[i].name; i++) {
		if (cache[i].name == aclnn_name) {
			run = cache[i].fn;
			break;
		}
	}
	if (!run) {
		run = opapi_sym(aclnn_name);
		if (run && i < 64) {
			cache[i].fn = run;
			__atomic_store_n(&cache[i].name, aclnn_name, __ATOMIC_RELEASE);
		}
	}

	if (!run) {
		aclDestroyAclOpExecutor(ex);
		return ACLNN_ERR_INNER;
	}
	c.run = (aclnn_run_fn)run;
	c.workspace_size = ws;
	c.executor = ex;
	c.stream = npu_queue_current_stream();
	if (ws) {
		c.workspace = npu_alloc_malloc(ws, npu_device, c.stream);
		if (!c.workspace) {
			aclDestroyAclOpExecutor(ex);
			return npu_alloc_last_error();
		}
	}
	if (npu_cxx_function_init(&fn, opapi_call_run, &c, sizeof(c))) {
		npu_alloc_free(c.workspace);
		aclDestroyAclOpExecutor(ex);
		return ACLNN_ERR_INNER;
	}
	npu_cxx_string_init(&name, aclnn_name);
	npu_aten_last_error(); /* clear */
	NPU_RUN_OP_API_V2(&name, &fn, false);
	err = npu_aten_last_error();
	npu_cxx_string_destroy(&name);
	npu_cxx_function_destroy(&fn);
	npu_alloc_free(c.workspace);
	return err;
}

static aclTensor *to_acl(const struct at_tensor *t)
{
	const struct npu_tensor_impl *i = t ? t->impl : NULL;

	if (!i)
		return NULL;
	return aclCreateTensor(i->sizes, (uint64_t)i->ndim, i->dtype, NULL, 0, i->format, i->sizes,
			       (uint64_t)i->ndim, i->data);
}

#define MAX_ACL 16
struct acl_args {
	aclTensor *t[MAX_ACL];
	int n;
	aclScalar *s[4];
	int ns;
	aclIntArray *a[4];
	int na;
	aclBoolArray *b;
	aclTensorList *l[2];
	int nl;
};

static aclTensor *A(struct acl_args *g, const struct at_tensor *t)
{
	aclTensor *a = to_acl(t);

	if (a && g->n < MAX_ACL)
		g->t[g->n++] = a;
	return a;
}

static aclScalar *S(struct acl_args *g, double v)
{
	aclScalar *s = aclCreateScalar(&v, ACL_DOUBLE);

	if (s && g->ns < 4)
		g->s[g->ns++] = s;
	return s;
}

static aclIntArray *IA(struct acl_args *g, const int64_t *v, uint64_t n)
{
	aclIntArray *a = aclCreateIntArray(v, n);

	if (a && g->na < 4)
		g->a[g->na++] = a;
	return a;
}

static void acl_args_release(struct acl_args *g)
{
	for (int i = 0; i < g->n; i++)
		aclDestroyTensor(g->t[i]);
	for (int i = 0; i < g->ns; i++)
		aclDestroyScalar(g->s[i]);
	for (int i = 0; i < g->na; i++)
		aclDestroyIntArray(g->a[i]);
	for (int i = 0; i < g->nl; i++)
		free((void *)g->l[i]); /* lists hold tensors released above */
	aclDestroyBoolArray(g->b);
}

/* A tensor list whose tensors are owned by g (freed by acl_args_release). */
static aclTensorList *TL(struct acl_args *g, const struct at_tensor *const *ts, int n)
{
	const aclTensor *v[MAX_ACL];
	aclTensorList *l;

	if (n > MAX_ACL - g->n || g->nl == 2)
		return NULL;
	for (int i = 0; i < n; i++)
		v[i] = A(g, ts[i]);
	l = aclCreateTensorList(v, (uint64_t)n);
	if (l)
		g->l[g->nl++] = l;
	return l;
}

/* ---- the backend op dispatch ---------------------------------------------------------------- */

#define GWS(fnvar, ...) fnvar##_sym(__VA_ARGS__, &ws, &ex)

static int run_op(const char *op, struct at_tensor *o, int nout, const struct at_tensor *const *in,
		  int nin, const double *x, int nx)
{
	struct acl_args g;
	aclOpExecutor *ex = NULL;
	uint64_t ws = 0;
	const char *run = NULL;
	aclnnStatus r = ACLNN_ERR_PARAM_INVALID;

	(void)nout;
	(void)nx;
	memset(&g, 0, sizeof(g));
	if (!strcmp(op, "add")) {
		OPAPI(f, aclnnAddGetWorkspaceSize);
		r = GWS(f, A(&g, in[0]), A(&g, in[1]), S(&g, x[0]), A(&g, &o[0]));
		run = "aclnnAdd";
	} else if (!strcmp(op, "mul")) {
		OPAPI(f, aclnnMulGetWorkspaceSize);
		r = GWS(f, A(&g, in[0]), A(&g, in[1]), A(&g, &o[0]));
		run = "aclnnMul";
	} else if (!strcmp(op, "addmm")) {
		OPAPI(f, aclnnAddmmGetWorkspaceSize);
		r = GWS(f, A(&g, in[0]), A(&g, in[1]), A(&g, in[2]), S(&g, x[0]), S(&g, x[1]),
			A(&g, &o[0]), (int8_t)1);
		run = "aclnnAddmm";
	} else if (!strcmp(op, "mm")) {
		OPAPI(f, aclnnMatmulGetWorkspaceSize);
		r = GWS(f, A(&g, in[0]), A(&g, in[1]), A(&g, &o[0]), (int8_t)1);
		run = "aclnnMatmul";
	} else if (!strcmp(op, "relu")) {
		OPAPI(f, aclnnReluGetWorkspaceSize);
		r = GWS(f, A(&g, in[0]), A(&g, &o[0]));
		run = "aclnnRelu";
	} else if (!strcmp(op, "threshold_backward")) {
		OPAPI(f, aclnnThresholdBackwardGetWorkspaceSize);
		r = GWS(f, A(&g, in[0]), A(&g, in[1]), S(&g, x[0]), A(&g, &o[0]));
		run = "aclnnThresholdBackward";
	} else if (!strcmp(op, "gelu")) {
		OPAPI(f, aclnnGeluGetWorkspaceSize);
		r = GWS(f, A(&g, in[0]), A(&g, &o[0]));
		run = "aclnnGelu";
	} else if (!strcmp(op, "gelu_backward")) {
		OPAPI(f, aclnnGeluBackwardGetWorkspaceSize);
		r = GWS(f, A(&g, in[0]), A(&g, in[1]), A(&g, &o[0]));
		run = "aclnnGeluBackward";
	} else if (!strcmp(op, "softmax")) {
		OPAPI(f, aclnnSoftmaxGetWorkspaceSize);
		r = GWS(f, A(&g, in[0]), (int64_t)x[0], A(&g, &o[0]));
		run = "aclnnSoftmax";
	} else if (!strcmp(op, "softmax_backward")) {
		OPAPI(f, aclnnSoftmaxBackwardGetWorkspaceSize);
		r = GWS(f, A(&g, in[0]), A(&g, in[1]), (int64_t)x[0], A(&g, &o[0]));
		run = "aclnnSoftmaxBackward";
	} else if (!strcmp(op, "layer_norm")) {
		const struct npu_tensor_impl *t = in[0]->impl;
		OPAPI(f, aclnnLayerNormGetWorkspaceSize);
		r = GWS(f, A(&g, in[0]), IA(&g, &t->sizes[t->ndim - 1], 1),
			nin > 1 ? A(&g, in[1]) : NULL, nin > 2 ? A(&g, in[2]) : NULL, x[0],
			A(&g, &o[0]), A(&g, &o[1]), A(&g, &o[2]));
		run = "aclnnLayerNorm";
	} else if (!strcmp(op, "layer_norm_backward")) {
		const struct npu_tensor_impl *t = in[1]->impl;
		const _Bool mask[3] = { 1, 1, 1 };
		OPAPI(f, aclnnLayerNormBackwardGetWorkspaceSize);
		g.b = aclCreateBoolArray(mask, 3);
		r = GWS(f, A(&g, in[0]), A(&g, in[1]), IA(&g, &t->sizes[t->ndim - 1], 1),
			A(&g, in[2]), A(&g, in[3]), nin > 4 ? A(&g, in[4]) : NULL, NULL, g.b,
			A(&g, &o[0]), A(&g, &o[1]), A(&g, &o[2]));
		run = "aclnnLayerNormBackward";
	} else if (!strcmp(op, "convolution")) {
		const int64_t st[2] = { (int64_t)x[0], (int64_t)x[0] };
		const int64_t pd[2] = { (int64_t)x[1], (int64_t)x[1] };
		const int64_t dl[2] = { 1, 1 }, op0[2] = { 0, 0 };
		OPAPI(f, aclnnConvolutionGetWorkspaceSize);
		r = GWS(f, A(&g, in[0]), A(&g, in[1]), nin > 2 ? A(&g, in[2]) : NULL, IA(&g, st, 2),
			IA(&g, pd, 2), IA(&g, dl, 2), false, IA(&g, op0, 2), (int64_t)1,
			A(&g, &o[0]), (int8_t)1);
		run = "aclnnConvolution";
	} else if (!strcmp(op, "convolution_backward")) {
		const int64_t st[2] = { (int64_t)x[0], (int64_t)x[0] };
		const int64_t pd[2] = { (int64_t)x[1], (int64_t)x[1] };
		const int64_t dl[2] = { 1, 1 };
		const _Bool mask[3] = { 1, 1, 1 };
		const struct npu_tensor_impl *w = in[2]->impl;
		OPAPI(f, aclnnConvolutionBackwardGetWorkspaceSize);
		g.b = aclCreateBoolArray(mask, 3);
		r = GWS(f, A(&g, in[0]), A(&g, in[1]), A(&g, in[2]), IA(&g, w->sizes, 1),
			IA(&g, st, 2), IA(&g, pd, 2), IA(&g, dl, 2), false, IA(&g, dl, 0), 1, g.b,
			(int8_t)1, A(&g, &o[0]), A(&g, &o[1]), nout > 2 ? A(&g, &o[2]) : NULL);
		run = "aclnnConvolutionBackward";
	} else if (!strcmp(op, "cast")) {
		OPAPI(f, aclnnCastGetWorkspaceSize);
		r = GWS(f, A(&g, in[0]), (aclDataType)x[0], A(&g, &o[0]));
		run = "aclnnCast";
	} else if (!strcmp(op, "sum")) {
		const int64_t d0 = 0;
		OPAPI(f, aclnnReduceSumGetWorkspaceSize);
		r = GWS(f, A(&g, in[0]), IA(&g, &d0, 1), false, o[0].impl->dtype, A(&g, &o[0]));
		run = "aclnnReduceSum";
	} else if (!strcmp(op, "sqrt")) {
		OPAPI(f, aclnnSqrtGetWorkspaceSize);
		r = GWS(f, A(&g, in[0]), A(&g, &o[0]));
		run = "aclnnSqrt";
	} else if (!strcmp(op, "mul_scalar_")) {
		OPAPI(f, aclnnInplaceMulsGetWorkspaceSize);
		r = GWS(f, A(&g, in[0]), S(&g, x[0]));
		run = "aclnnInplaceMuls";
	} else if (!strcmp(op, "add_scalar_")) {
		OPAPI(f, aclnnInplaceAddsGetWorkspaceSize);
		r = GWS(f, A(&g, in[0]), S(&g, x[0]), S(&g, x[1]));
		run = "aclnnInplaceAdds";
	} else if (!strcmp(op, "addcmul_")) {
		OPAPI(f, aclnnInplaceAddcmulGetWorkspaceSize);
		r = GWS(f, A(&g, in[0]), A(&g, in[1]), A(&g, in[2]), S(&g, x[0]));
		run = "aclnnInplaceAddcmul";
	} else if (!strcmp(op, "addcdiv_")) {
		OPAPI(f, aclnnInplaceAddcdivGetWorkspaceSize);
		r = GWS(f, A(&g, in[0]), A(&g, in[1]), A(&g, in[2]), S(&g, x[0]));
		run = "aclnnInplaceAddcdiv";
	} else if (!strcmp(op, "nonzero")) {
		OPAPI(f, aclnnNonzeroGetWorkspaceSize);
		r = GWS(f, A(&g, in[0]), A(&g, &o[0]));
		run = "aclnnNonzero";
	} else if (!strcmp(op, "foreach_mul_scalar_")) {
		/* in[0..nin-2]: the tensors, in[nin-1]: the scalar tensor */
		aclTensorList *l;
		OPAPI(f, aclnnForeachMulScalarGetWorkspaceSize);
		l = TL(&g, in, nin - 1);
		r = l ? GWS(f, l, A(&g, in[nin - 1]), l) : ACLNN_ERR_PARAM_INVALID;
		run = "aclnnForeachMulScalar";
	} else if (!strcmp(op, "apply_adamw")) {
		/* in: param, exp_avg, exp_avg_sq, grad, step; x: lr, beta1, beta2, wd, eps */
		OPAPI(f, aclnnApplyAdamWV2GetWorkspaceSize);
		r = f_sym(A(&g, in[0]), A(&g, in[1]), A(&g, in[2]), NULL, A(&g, in[3]),
			  A(&g, in[4]), (float)x[0], (float)x[1], (float)x[2], (float)x[3],
			  (float)x[4], false, false, &ws, &ex);
		run = "aclnnApplyAdamWV2";
	}
	acl_args_release(&g);
	if (!run)
		return ACLNN_ERR_PARAM_INVALID; /* an op the plugin does not know */
	if (r)
		return r;
	return exec_phase2(run, ws, ex);
}

/* ---- backend table ------------------------------------------------------------------------ */

static void *backend_alloc(size_t nbytes, int device, void **stream)
{
	*stream = npu_queue_current_stream();
	return npu_alloc_malloc(nbytes, device, *stream);
}

static const struct npu_aten_backend npu_backend = {
	.alloc = backend_alloc,
	.free = npu_alloc_free,
	.op = run_op,
};

/* The autograd engine's device thread: bind it to this process's NPU (the device guard). */
static int engine_device_init(void)
{
	int device = npu_device < 0 ? 0 : npu_device;
	int r = aclrtSetDevice(device);

	return r ? -EIO : device;
}

__attribute__((constructor)) static void opplugin_register(void)
{
	npu_aten_register_backend(&npu_backend);
	npu_autograd_register_device_init(engine_device_init);
}

/* ---- the TransData call site ----------------------------------------------------------------- */

static aclTensorDesc *desc_of(const struct npu_tensor_impl *t, aclFormat fmt)
{
	return aclCreateTensorDesc(t->dtype, t->ndim, t->sizes, fmt);
}

/*
 * at_npu::native::custom_ops::npu_format_cast(const at::Tensor &self, int64_t acl_format):
 * a new tensor in the NPU storage format `acl_format`, produced by one TransData
 * kernel (aclop path).  Same format: returns a new reference to self, no kernel.
 */
NPU_NOINLINE struct at_tensor *_ZN6at_npu6native10custom_ops15npu_format_castERKN2at6TensorEl(
	struct at_tensor *ret, const struct at_tensor *self, int64_t acl_format)
{
	struct ExecuteParas e;
	const struct npu_tensor_impl *s = self ? self->impl : NULL;
	int err = 0;
	NPU_API_ENTER();
	/* dispatched like an aten op (RecordFunction seqNr); no backward class of its own */
	const int64_t seq = npu_autograd_op_enter();

	ret->impl = NULL;
	if (!s) {
		err = ACL_ERROR_INVALID_PARAM;
		goto out;
	}
	if (s->format == (aclFormat)acl_format) {
		*ret = npu_tensor_ref(self);
		goto out;
	}
	*ret = npu_tensor_empty(s->sizes, s->ndim, s->dtype, s->device);
	if (!ret->impl) {
		err = npu_aten_last_error();
		goto out;
	}
	ret->impl->format = (aclFormat)acl_format;
	memset(&e, 0, sizeof(e));
	snprintf(e.opType, sizeof(e.opType), "TransData");
	e.nin = e.nout = 1;
	e.in_desc[0] = desc_of(s, s->format);
	e.in_buf[0] = aclCreateDataBuffer(s->data, s->nbytes);
	e.out_desc[0] = desc_of(ret->impl, (aclFormat)acl_format);
	e.out_buf[0] = aclCreateDataBuffer(ret->impl->data, ret->impl->nbytes);
	e.attr = aclopCreateAttr();
	aclopSetAttrInt(e.attr, "dst_format", acl_format);
	err = npu_queue_submit_aclop(&e);
out:
	if (err)
		npu_aten_set_error(err);
	else
		npu_tensor_share_grad_fn(ret, self); /* the gradient passes through */
	npu_autograd_op_exit();
	NPU_API_EXIT("framework", err, "\top=TransData\tseq=%lld\tfwd=0", (long long)seq);
	return ret;
}

/* ---- torch.npu helpers ----------------------------------------------------------------------- */

/* The device npu_torch_init bound (0 before), for the Python backend's threads (hidden). */
int npu_plugin_device(void)
{
	return npu_device < 0 ? 0 : npu_device;
}

int npu_torch_init(int device)
{
	int r = aclInit(NULL);

	if (r && r != ACL_ERROR_REPEAT_INITIALIZE)
		return r;
	r = aclrtSetDevice(device);
	if (r)
		return r;
	npu_device = device;
	r = npu_queue_start(device);
	return r ? ACL_ERROR_FAILURE : 0;
}

int npu_torch_synchronize(void)
{
	int qerr = npu_queue_drain();
	int r = aclrtSynchronizeDevice();

	return qerr ? qerr : r;
}

void *npu_torch_current_stream(void)
{
	return npu_queue_current_stream();
}

int npu_torch_set_stream(void *stream)
{
	npu_queue_set_stream(stream);
	return 0;
}

int npu_torch_copy_h2d(struct at_tensor *dst, const void *src, size_t nbytes, void *stream)
{
	struct CopyParas c;
	void *saved = npu_queue_current_stream();
	int r;

	if (!dst || !dst->impl || !src || nbytes > dst->impl->nbytes)
		return ACL_ERROR_INVALID_PARAM;
	c.dst = dst->impl->data;
	c.dstLen = dst->impl->nbytes;
	c.src = src;
	c.srcLen = nbytes;
	c.kind = ACL_MEMCPY_HOST_TO_DEVICE;
	npu_queue_set_stream(stream);
	r = npu_queue_submit_copy(&c);
	npu_queue_set_stream(saved);
	return r;
}

static int submit_event(int type, aclrtEvent ev, void *stream)
{
	void *saved = npu_queue_current_stream();
	int r;

	if (!ev)
		return ACL_ERROR_INVALID_PARAM;
	npu_queue_set_stream(stream);
	r = npu_queue_submit_event(type, ev);
	npu_queue_set_stream(saved);
	return r;
}

int npu_torch_record_event(aclrtEvent ev, void *stream)
{
	return submit_event(RECORD_EVENT, ev, stream);
}

int npu_torch_wait_event(aclrtEvent ev, void *stream)
{
	return submit_event(WAIT_EVENT, ev, stream);
}

void npu_torch_alloc_stats(struct npu_alloc_stats *st)
{
	npu_alloc_get_stats(st);
}

void npu_torch_empty_cache(void)
{
	npu_alloc_empty_cache();
}

void *npu_torch_alloc(size_t nbytes)
{
	return npu_alloc_malloc(nbytes, npu_device < 0 ? 0 : npu_device,
				npu_queue_current_stream());
}

void npu_torch_free(void *ptr)
{
	npu_alloc_free(ptr);
}

int npu_torch_alloc_last_error(void)
{
	return npu_alloc_last_error();
}
