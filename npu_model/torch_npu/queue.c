// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * queue.c - torch_npu's two-stage task queue (NPUQueue.cpp, OpCommand.cpp,
 * OpParamMaker.cpp) in C with the real mangled entry points:
 *
 *   producer (the thread running the model):
 *     OpCommand::RunOpApiV2(op_name, func) -> enCurrentNPUStream(&params)
 *     (sets stream and correlation id) -> Repository::Enqueue(&params) ->
 *     copy into one of 4096 ring slots -> eventfd wake-up of the consumer
 *     if it sleeps; a full ring blocks the producer on a second eventfd;
 *   consumer (thread "acl_thread", one per device):
 *     Repository::Dequeue() -> AsncExecFunc(QueueParas *) -> by paramType:
 *     ExecFuncOpApi (the stored std::function -> aclnnXxx), ExecFunc
 *     (aclopCompileAndExecute), MemcopyAsyncFunc, RecordEventFunc,
 *     WaitEventFunc.
 *
 * TASK_QUEUE_ENABLE=0 runs every task inline on the producer, as torch_npu.
 * The ring indices are single-producer per device in torch_npu; here a
 * mutex serialises producers so several model threads may submit.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "npu_acl.h"
#include "npu_api_journal.h"
#include "npu_torch.h"
#include "torch_npu/torch_npu_priv.h"

static struct Repository *repo;
static pthread_mutex_t repo_lock = PTHREAD_MUTEX_INITIALIZER; /* start and producers */
static _Atomic uint64_t g_correlation_id = 1;		      /* QueueParas::g_correlation_id */
static int queue_mode = -1;				      /* TASK_QUEUE_ENABLE */
static __thread void *cur_stream; /* getCurrentNPUStream(), NULL = default */

/* ---- libstdc++ objects ---------------------------------------------------------------------- */

#ifdef NPU_CXX_OLD_ABI
/* _S_empty_rep: a _Rep of length 0 and the "" after it, what an allocation failure leaves. */
static struct {
	struct cxx_string_rep rep;
	char nul;
} empty_rep;
_Static_assert(sizeof(struct cxx_string_rep) == 24, "libstdc++ _Rep: data - 24 is the length");

/* Copy-on-write std::string: one heap block, _Rep then the characters (never shared here). */
void npu_cxx_string_init(struct cxx_string *s, const char *text)
{
	size_t n = strlen(text);
	struct cxx_string_rep *rep = malloc(sizeof(*rep) + n + 1);

	if (!rep) {
		s->data = &empty_rep.nul;
		return;
	}
	rep->length = rep->capacity = n;
	rep->refcount = 0;
	s->data = (char *)(rep + 1);
	memcpy(s->data, text, n + 1);
}

static struct cxx_string_rep *cxx_string_rep(const struct cxx_string *s)
{
	return (struct cxx_string_rep *)s->data - 1;
}

void npu_cxx_string_destroy(struct cxx_string *s)
{
	if (s->data && s->data != &empty_rep.nul)
		free(cxx_string_rep(s));
	s->data = NULL;
}

const char *npu_cxx_string_data(const struct cxx_string *s)
{
	return s->data ? s->data : "";
}

size_t npu_cxx_string_len(const struct cxx_string *s)
{
	return s->data ? cxx_string_rep(s)->length : 0;
}
#else
void npu_cxx_string_init(struct cxx_string *s, const char *text)
{
	size_t n = strlen(text);

	s->len = n;
	if (n < sizeof(s->u.local)) {
		s->data = s->u.local;
	} else {
		s->data = malloc(n + 1);
		if (!s->data) {
			s->data = s->u.local;
			n = s->len = sizeof(s->u.local) - 1;
		} else {
			s->u.capacity = n;
		}
	}
	memcpy(s->data, text, n);
	s->data[n] = '\0';
}

void npu_cxx_string_destroy(struct cxx_string *s)
{
	if (s->data && s->data != s->u.local)
		free(s->data);
	s->data = s->u.local;
	s->len = 0;
	s->u.local[0] = '\0';
}

const char *npu_cxx_string_data(const struct cxx_string *s)
{
	return s->data;
}

size_t npu_cxx_string_len(const struct cxx_string *s)
{
	return s->len;
}

#endif

/* The functor storage holds a pointer to a heap block: { run, ctx bytes... }. */
struct fn_box {
	int (*run)(void *ctx);
	size_t size;
	unsigned char ctx[];
};

static int fn_box_invoke(const void *functor)
{
	const struct fn_box *b = *(struct fn_box *const *)functor;

	return b->run((void *)b->ctx);
}

static int fn_box_manage(void *dest, const void *src, int op)
{
	struct fn_box *b, *copy;

	switch (op) {
	case CXX_FN_GET_TYPE_INFO:
		*(void **)dest = NULL;
		return 0;
	case CXX_FN_GET_FUNCTOR_PTR:
		*(void **)dest = *(void *const *)src;
		return 0;
	case CXX_FN_CLONE:
		b = *(struct fn_box *const *)src;
		copy = malloc(sizeof(*b) + b->size);
		if (copy)
			memcpy(copy, b, sizeof(*b) + b->size);
		*(struct fn_box **)dest = copy;
		return 0;
	case CXX_FN_DESTROY:
		free(*(struct fn_box **)dest);
		*(struct fn_box **)dest = NULL;
		return 0;
	}
	return 0;
}

int npu_cxx_function_init(struct cxx_function *f, int (*run)(void *ctx), const void *ctx,
			  size_t size)
{
	struct fn_box *b = malloc(sizeof(*b) + size);

	memset(f, 0, sizeof(*f));
	if (!b)
		return -ENOMEM;
	b->run = run;
	b->size = size;
	memcpy(b->ctx, ctx, size);
	f->functor.ptr[0] = b;
	f->manager = fn_box_manage;
	f->invoker = fn_box_invoke;
	return 0;
}

void npu_cxx_function_destroy(struct cxx_function *f)
{
	if (f->manager)
		f->manager(&f->functor, &f->functor, CXX_FN_DESTROY);
	memset(f, 0, sizeof(*f));
}

int npu_cxx_function_call(const struct cxx_function *f)
{
	return f->invoker ? f->invoker(&f->functor) : ACL_ERROR_INVALID_PARAM;
}

/* Clones src (any std::function<int()>, ours or g++'s) into dst with its manager. */
static int cxx_function_clone(struct cxx_function *dst, const struct cxx_function *src)
{
	memset(dst, 0, sizeof(*dst));
	if (!src->manager)
		return -EINVAL;
	src->manager(&dst->functor, &src->functor, CXX_FN_CLONE);
	dst->manager = src->manager;
	dst->invoker = src->invoker;
	return 0;
}

/* ---- journal ----------------------------------------------------------------------------- */

static void queue_journal(const char *side, const struct QueueParas *p)
{
	if (npu_journal_on)
		npu_journal_write("queue", "tid=%d\tside=%s\tcorr=%llu\tt=%llu\tstream=%p\ttype=%d",
				  npu_tid(), side, (unsigned long long)p->correlation_id,
				  (unsigned long long)npu_now_ns(), p->paramStream, p->paramType);
}

/* ---- consumer-side executors (funcMap of AsyncTaskQueueInterface.cpp) ---------------------- */

/* A ring slot (EXECUTE_OPAPI, the name in place) or, queue disabled, the caller's V2 entry. */
TNPU_HIDDEN int
_ZN6at_npu6native13ExecFuncOpApiEPN7c10_npu5queue10QueueParasEPv(struct QueueParas *in,
								 void *stream)
{
	const struct cxx_function *fn;
	const char *op;
	int r;
	NPU_API_ENTER();

	(void)stream;
	if (in->paramType == EXECUTE_OPAPI) {
		struct ExecuteParasOpApi *e = in->paramVal;

		fn = (const struct cxx_function *)&e->customHandler;
		op = e->opType;
	} else {
		struct ExecuteParasOpApiV2 *v2 = in->paramVal;

		fn = v2->customHandler;
		op = npu_cxx_string_data(v2->opName);
	}
	r = npu_cxx_function_call(fn);
	NPU_API_EXIT("framework", r, "\top=%s", op);
	return r;
}

TNPU_HIDDEN int _ZN6at_npu6native8ExecFuncEPN7c10_npu5queue10QueueParasEPv(struct QueueParas *in,
									   void *stream)
{
	struct ExecuteParas *e = in->paramVal;
	int r;
	NPU_API_ENTER();

	r = aclopCompileAndExecute(e->opType, e->nin, (const aclTensorDesc *const *)e->in_desc,
				   (const aclDataBuffer *const *)e->in_buf, e->nout,
				   (const aclTensorDesc *const *)e->out_desc, e->out_buf, e->attr,
				   ACL_ENGINE_SYS, ACL_COMPILE_SYS, NULL, stream);
	NPU_API_EXIT("framework", r, "\top=%s", e->opType);
	return r;
}

TNPU_HIDDEN int
_ZN6at_npu6native16MemcopyAsyncFuncEPN7c10_npu5queue10QueueParasEPv(struct QueueParas *in,
								    void *stream)
{
	struct CopyParas *c = in->paramVal;
	int r;
	NPU_API_ENTER();

	r = aclrtMemcpyAsync(c->dst, c->dstLen, c->src, c->srcLen, c->kind, stream);
	NPU_API_EXIT("framework", r, "\tsize=%zu\tkind=%d", c->srcLen, (int)c->kind);
	return r;
}

TNPU_HIDDEN int
_ZN6at_npu6native15RecordEventFuncEPN7c10_npu5queue10QueueParasEPv(struct QueueParas *in,
								   void *stream)
{
	struct EventParas *e = in->paramVal;
	int r;
	NPU_API_ENTER();

	r = aclrtRecordEvent(e->event, stream);
	NPU_API_EXIT("framework", r, "\tevent=%p", e->event);
	return r;
}

TNPU_HIDDEN int
_ZN6at_npu6native13WaitEventFuncEPN7c10_npu5queue10QueueParasEPv(struct QueueParas *in,
								 void *stream)
{
	struct EventParas *e = in->paramVal;
	int r;
	NPU_API_ENTER();

	r = aclrtStreamWaitEvent(stream, e->event);
	NPU_API_EXIT("framework", r, "\tevent=%p", e->event);
	return r;
}

TNPU_HIDDEN void _ZN6at_npu6native12AsncExecFuncEPv(void *data)
{
	struct QueueParas *p = data;
	int r;
	NPU_API_ENTER();

	switch (p->paramType) {
	case EXECUTE_OPAPI:
	case EXECUTE_OPAPI_V2:
		r = _ZN6at_npu6native13ExecFuncOpApiEPN7c10_npu5queue10QueueParasEPv(
			p, p->paramStream);
		break;
	case COMPILE_AND_EXECUTE:
		r = _ZN6at_npu6native8ExecFuncEPN7c10_npu5queue10QueueParasEPv(p, p->paramStream);
		break;
	case ASYNC_MEMCPY:
		r = _ZN6at_npu6native16MemcopyAsyncFuncEPN7c10_npu5queue10QueueParasEPv(
			p, p->paramStream);
		break;
	case RECORD_EVENT:
		r = _ZN6at_npu6native15RecordEventFuncEPN7c10_npu5queue10QueueParasEPv(
			p, p->paramStream);
		break;
	case WAIT_EVENT:
		r = _ZN6at_npu6native13WaitEventFuncEPN7c10_npu5queue10QueueParasEPv(
			p, p->paramStream);
		break;
	default:
		r = ACL_ERROR_INVALID_PARAM;
		break;
	}
	if (r && repo && !repo->first_error)
		repo->first_error = r;
	NPU_API_EXIT("framework", 0, "\tcorr=%llu\ttype=%d\tstatus=%d",
		     (unsigned long long)p->correlation_id, p->paramType, r);
}

/* Releases what a slot (or an inline parameter block) owns after it ran. */
static void paras_release(struct QueueParas *p)
{
	if (p->paramType == EXECUTE_OPAPI) {
		struct ExecuteParasOpApi *e = p->paramVal;

		npu_cxx_function_destroy((struct cxx_function *)&e->customHandler);
	} else if (p->paramType == COMPILE_AND_EXECUTE) {
		struct ExecuteParas *e = p->paramVal;

		for (int i = 0; i < e->nin; i++) {
			aclDestroyTensorDesc(e->in_desc[i]);
			aclDestroyDataBuffer(e->in_buf[i]);
		}
		for (int i = 0; i < e->nout; i++) {
			aclDestroyTensorDesc(e->out_desc[i]);
			aclDestroyDataBuffer(e->out_buf[i]);
		}
		aclopDestroyAttr(e->attr);
	}
}

/* ---- the ring ------------------------------------------------------------------------------ */

static uint32_t ring_used(const struct Repository *r)
{
	return r->write_idx - r->read_idx;
}

/*
 * WriteQueue + CopyFunc: copies the caller's parameters into the next slot,
 * the payload right behind the QueueParas.  An EXECUTE_OPAPI_V2 entry becomes
 * EXECUTE_OPAPI with the op name copied into opType (truncated to 99 bytes,
 * as ExecuteParasOpApi::Copy) and the callable taken over.
 */
static void write_slot(struct npu_queue_slot *s, const struct QueueParas *p)
{
	s->paras = *p;
	switch (p->paramType) {
	case EXECUTE_OPAPI_V2: {
		const struct ExecuteParasOpApiV2 *v2 = p->paramVal;
		size_t n = npu_cxx_string_len(v2->opName);

		if (n > sizeof(s->u.opapi.opType) - 1)
			n = sizeof(s->u.opapi.opType) - 1;
		memset(s->u.opapi.opType, 0, sizeof(s->u.opapi.opType));
		memcpy(s->u.opapi.opType, npu_cxx_string_data(v2->opName), n);
		cxx_function_clone((struct cxx_function *)&s->u.opapi.customHandler,
				   v2->customHandler);
		s->paras.paramType = EXECUTE_OPAPI;
		s->paras.paramVal = &s->u.opapi;
		break;
	}
	case COMPILE_AND_EXECUTE:
		/* ownership of descs, buffers and attr moves to the slot */
		memcpy(&s->u.aclop, p->paramVal, sizeof(s->u.aclop));
		s->paras.paramVal = &s->u.aclop;
		break;
	case ASYNC_MEMCPY:
		memcpy(&s->u.copy, p->paramVal, sizeof(s->u.copy));
		s->paras.paramVal = &s->u.copy;
		break;
	default:
		memcpy(&s->u.event, p->paramVal, sizeof(s->u.event));
		s->paras.paramVal = &s->u.event;
		break;
	}
}

TNPU_HIDDEN void _ZN7c10_npu10Repository7EnqueueEPv(struct Repository *self, void *cur_paras)
{
	struct QueueParas *p = cur_paras;
	uint64_t one = 1;
	NPU_API_ENTER();

	pthread_mutex_lock(&repo_lock);
	while (ring_used(self) >= NPU_QUEUE_CAPACITY) {
		/* Full: sleep until the consumer frees a slot (eventfd_read(efd_write)). */
		atomic_store(&self->producer_sleeping, 1);
		if (ring_used(self) >= NPU_QUEUE_CAPACITY) {
			uint64_t v;

			if (read(self->efd_write, &v, sizeof(v)) < 0 && errno != EINTR)
				break;
		}
		atomic_store(&self->producer_sleeping, 0);
	}
	queue_journal("enqueue", p);
	write_slot(&self->slots[self->write_idx % NPU_QUEUE_CAPACITY], p);
	atomic_thread_fence(memory_order_release);
	self->write_idx++;
	atomic_thread_fence(memory_order_seq_cst);
	if (self->consumer_sleeping) {
		ssize_t n = write(self->efd_read, &one, sizeof(one));

		(void)n;
	}
	pthread_mutex_unlock(&repo_lock);
	NPU_API_EXIT("framework", 0, "\tcorr=%llu\ttype=%d", (unsigned long long)p->correlation_id,
		     p->paramType);
}

/* ReadQueue + execute one slot; blocks while the ring is empty. */
TNPU_HIDDEN void _ZN7c10_npu10Repository7DequeueEv(struct Repository *self)
{
	struct npu_queue_slot *s;
	uint64_t v, one = 1;

	while (self->read_idx == self->write_idx && !self->stop) {
		atomic_store(&self->consumer_sleeping, 1);
		atomic_thread_fence(memory_order_seq_cst);
		if (self->read_idx == self->write_idx && !self->stop) {
			if (read(self->efd_read, &v, sizeof(v)) < 0 && errno != EINTR)
				break;
		}
		atomic_store(&self->consumer_sleeping, 0);
	}
	if (self->read_idx == self->write_idx)
		return;
	atomic_thread_fence(memory_order_acquire);
	s = &self->slots[self->read_idx % NPU_QUEUE_CAPACITY];
	self->running = 1;
	queue_journal("dequeue", &s->paras);
	_ZN6at_npu6native12AsncExecFuncEPv(&s->paras);
	paras_release(&s->paras);
	atomic_thread_fence(memory_order_release);
	self->read_idx++;
	self->running = 0;
	atomic_thread_fence(memory_order_seq_cst);
	if (self->producer_sleeping) {
		ssize_t n = write(self->efd_write, &one, sizeof(one));

		(void)n;
	}
	if (self->drain_waiters && self->read_idx == self->write_idx) {
		pthread_mutex_lock(&self->drain_lock);
		pthread_cond_broadcast(&self->drain_cond);
		pthread_mutex_unlock(&self->drain_lock);
	}
}

static void *consumer_main(void *arg)
{
	struct Repository *r = arg;

	/* SetThreadType(ACL_THREAD): the name tools (and ascbpf) look for. */
	prctl(PR_SET_NAME, "acl_thread", 0, 0, 0);
	aclrtSetDevice(r->device);
	while (!r->stop)
		_ZN7c10_npu10Repository7DequeueEv(r);
	return NULL;
}

int npu_queue_enabled(void)
{
	if (queue_mode < 0) {
		const char *e = getenv("TASK_QUEUE_ENABLE");

		queue_mode = (e && *e == '0') ? 0 : 1;
	}
	return queue_mode;
}

int npu_queue_start(int device)
{
	struct Repository *r;
	int err = 0;

	pthread_mutex_lock(&repo_lock);
	if (repo || !npu_queue_enabled())
		goto out;
	r = calloc(1, sizeof(*r));
	if (!r) {
		err = -ENOMEM;
		goto out;
	}
	r->slots = calloc(NPU_QUEUE_CAPACITY, sizeof(*r->slots));
	r->efd_read = eventfd(0, EFD_CLOEXEC);
	r->efd_write = eventfd(0, EFD_CLOEXEC);
	r->device = device;
	pthread_mutex_init(&r->drain_lock, NULL);
	pthread_cond_init(&r->drain_cond, NULL);
	if (!r->slots || r->efd_read < 0 || r->efd_write < 0) {
		err = -errno ? -errno : -ENOMEM;
		goto fail;
	}
	err = -pthread_create(&r->thread, NULL, consumer_main, r);
	if (err)
		goto fail;
	repo = r;
	goto out;
fail:
	if (r->efd_read >= 0)
		close(r->efd_read);
	if (r->efd_write >= 0)
		close(r->efd_write);
	free(r->slots);
	free(r);
out:
	pthread_mutex_unlock(&repo_lock);
	return err;
}

struct Repository *npu_queue_get(void)
{
	return repo;
}

int npu_queue_drain(void)
{
	struct Repository *r = repo;
	int err;

	if (!r)
		return 0;
	pthread_mutex_lock(&r->drain_lock);
	r->drain_waiters++;
	while (r->read_idx != r->write_idx) {
		struct timespec ts;

		/* Timed: a wake-up racing the consumer's last slot is caught on the next turn. */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 2000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&r->drain_cond, &r->drain_lock, &ts);
	}
	r->drain_waiters--;
	err = r->first_error;
	r->first_error = 0;
	pthread_mutex_unlock(&r->drain_lock);
	return err;
}

void npu_queue_set_stream(void *stream)
{
	cur_stream = stream;
}

void *npu_queue_current_stream(void)
{
	return cur_stream;
}

/* ---- producer entry points ----------------------------------------------------------------- */

/* Sets the stream and correlation id of a task, then enqueues it on its device's queue. */
TNPU_HIDDEN void _ZN7c10_npu18enCurrentNPUStreamEPvaPNS_9NPUStreamE(void *cur_paras,
								    signed char device_index,
								    void *stream)
{
	struct QueueParas *p = cur_paras;
	NPU_API_ENTER();

	(void)device_index;
	p->paramStream = stream ? stream : cur_stream;
	p->correlation_id = atomic_fetch_add(&g_correlation_id, 1);
	_ZN7c10_npu10Repository7EnqueueEPv(repo, p);
	NPU_API_EXIT("framework", 0, "\tcorr=%llu", (unsigned long long)p->correlation_id);
}

/*
 * Runs `p` through the queue, or inline when TASK_QUEUE_ENABLE=0 (then the
 * caller keeps ownership of the payload and releases it itself).
 */
static int submit(struct QueueParas *p, int release_inline)
{
	int r = 0;

	if (repo) {
		_ZN7c10_npu18enCurrentNPUStreamEPvaPNS_9NPUStreamE(p, -1, NULL);
		return 0;
	}
	p->paramStream = cur_stream;
	p->correlation_id = atomic_fetch_add(&g_correlation_id, 1);
	switch (p->paramType) {
	case EXECUTE_OPAPI_V2:
		r = _ZN6at_npu6native13ExecFuncOpApiEPN7c10_npu5queue10QueueParasEPv(p, cur_stream);
		break;
	case COMPILE_AND_EXECUTE:
		r = _ZN6at_npu6native8ExecFuncEPN7c10_npu5queue10QueueParasEPv(p, cur_stream);
		break;
	case ASYNC_MEMCPY:
		r = _ZN6at_npu6native16MemcopyAsyncFuncEPN7c10_npu5queue10QueueParasEPv(p,
											cur_stream);
		break;
	case RECORD_EVENT:
		r = _ZN6at_npu6native15RecordEventFuncEPN7c10_npu5queue10QueueParasEPv(p,
										       cur_stream);
		break;
	case WAIT_EVENT:
		r = _ZN6at_npu6native13WaitEventFuncEPN7c10_npu5queue10QueueParasEPv(p, cur_stream);
		break;
	}
	if (release_inline)
		paras_release(p);
	return r;
}

NPU_NOINLINE void NPU_RUN_OP_API_V2(const struct cxx_string *op_name,
				    const struct cxx_function *func, _Bool sync)
{
	struct ExecuteParasOpApiV2 v2 = { (struct cxx_string *)op_name,
					  (struct cxx_function *)func };
	struct QueueParas p = { .paramType = EXECUTE_OPAPI_V2,
				.paramLen = sizeof(v2),
				.paramVal = &v2 };
	int r;
	NPU_API_ENTER();

	/* Inline: the caller still owns name and function, so nothing is released here. */
	r = submit(&p, 0);
	if (r)
		npu_aten_set_error(r);
	if (sync)
		npu_queue_drain();
	NPU_API_EXIT("framework", 0, "\top=%s\tstatus=%d", npu_cxx_string_data(op_name), r);
}

/* Model helpers for the other payload types (torch_npu's copy_, record/wait event). */
int npu_queue_submit_copy(const struct CopyParas *c)
{
	struct CopyParas copy = *c;
	struct QueueParas p = { .paramType = ASYNC_MEMCPY,
				.paramLen = sizeof(copy),
				.paramVal = &copy };

	return submit(&p, 1);
}

int npu_queue_submit_event(int type, aclrtEvent ev)
{
	struct EventParas e = { ev };
	struct QueueParas p = { .paramType = type, .paramLen = sizeof(e), .paramVal = &e };

	return submit(&p, 1);
}

int npu_queue_submit_aclop(struct ExecuteParas *e)
{
	struct QueueParas p = { .paramType = COMPILE_AND_EXECUTE,
				.paramLen = sizeof(*e),
				.paramVal = e };

	return submit(&p, 1);
}
