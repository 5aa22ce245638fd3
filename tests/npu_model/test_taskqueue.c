// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_taskqueue.c - torch_npu's two-stage task queue in libtorch_npu
 * (npu_model/torch_npu/queue.c): QueueParas layout, FIFO order and
 * correlation ids through OpCommand::RunOpApiV2, execution on a thread
 * named acl_thread, a full 4096-slot ring blocking the producer until the
 * consumer catches up, the memcpy/event payload types, the first task error
 * reaching the synchronize, and TASK_QUEUE_ENABLE=0 running inline.
 * The CANN calls the consumer makes are fakes defined here.
 */
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "npu_acl.h"
#include "torch_npu/torch_npu_priv.h"

#define RUN_OPAPI_V2 \
	_ZN6at_npu6native9OpCommand10RunOpApiV2ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKSt8functionIFivEEb

/* ---- fakes of what the consumer calls ---------------------------------------------------- */

static int copies, records, waits;
static void *last_copy_stream, *last_event_stream;

aclError aclrtSetDevice(int32_t deviceId)
{
	(void)deviceId;
	return ACL_SUCCESS;
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
			  aclrtMemcpyKind kind, aclrtStream stream)
{
	(void)dst;
	(void)destMax;
	(void)src;
	(void)count;
	(void)kind;
	copies++;
	last_copy_stream = stream;
	return ACL_SUCCESS;
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
	(void)event;
	records++;
	last_event_stream = stream;
	return ACL_SUCCESS;
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)
{
	(void)event;
	(void)stream;
	waits++;
	return ACL_SUCCESS;
}

aclError aclopCompileAndExecute(const char *opType, int numInputs,
				const aclTensorDesc *const inputDesc[],
				const aclDataBuffer *const inputs[], int numOutputs,
				const aclTensorDesc *const outputDesc[],
				aclDataBuffer *const outputs[], const aclopAttr *attr,
				aclopEngineType engineType, aclopCompileType compileFlag,
				const char *opPath, aclrtStream stream)
{
	(void)opType, (void)numInputs, (void)inputDesc, (void)inputs, (void)numOutputs;
	(void)outputDesc, (void)outputs, (void)attr, (void)engineType, (void)compileFlag;
	(void)opPath, (void)stream;
	return ACL_SUCCESS;
}

void aclDestroyTensorDesc(const aclTensorDesc *desc)
{
	(void)desc;
}

aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer)
{
	(void)dataBuffer;
	return ACL_SUCCESS;
}

void aclopDestroyAttr(const aclopAttr *attr)
{
	(void)attr;
}

static int aten_error;
void npu_aten_set_error(int err)
{
	aten_error = err;
}

/* ---- the tasks ------------------------------------------------------------------------------- */

#define N_TASKS 10000

static int ran[N_TASKS + 8];
static int nr_ran;
static int wrong_thread;
static pid_t producer_tid;
static sem_t gate;
static int gate_armed;

struct task_ctx {
	int seq;
	int ret;
};

static int task_run(void *p)
{
	struct task_ctx *c = p;
	char name[17] = "";

	if (gate_armed && c->seq == 0)
		sem_wait(&gate); /* hold the consumer on the first task */
	prctl(PR_GET_NAME, name, 0, 0, 0);
	if (strcmp(name, "acl_thread") || gettid() == producer_tid)
		wrong_thread++;
	ran[nr_ran++] = c->seq;
	return c->ret;
}

static void submit(int seq, int ret)
{
	struct task_ctx c = { seq, ret };
	struct cxx_function fn;
	struct cxx_string name;

	assert_int_equal(npu_cxx_function_init(&fn, task_run, &c, sizeof(c)), 0);
	npu_cxx_string_init(&name, "aclnnAdd");
	RUN_OPAPI_V2(&name, &fn, 0);
	npu_cxx_string_destroy(&name);
	npu_cxx_function_destroy(&fn); /* the queue holds its own clone */
}

static void test_layout(void **state)
{
	assert_int_equal(offsetof(struct QueueParas, paramStream), 0);
	assert_int_equal(offsetof(struct QueueParas, paramType), 8);
	assert_int_equal(offsetof(struct QueueParas, paramLen), 16);
	assert_int_equal(offsetof(struct QueueParas, paramVal), 24);
	assert_int_equal(offsetof(struct QueueParas, correlation_id), 32);
	assert_int_equal(sizeof(struct cxx_string), 32);
	assert_int_equal(offsetof(struct cxx_function, manager), 16);
	assert_int_equal(offsetof(struct cxx_function, invoker), 24);
}

/* A long SSO-busting op name survives the copy into the slot. */
static void test_string(void **state)
{
	struct cxx_string s;

	npu_cxx_string_init(&s, "short");
	assert_ptr_equal(s.data, s.u.local);
	assert_int_equal(s.len, 5);
	npu_cxx_string_destroy(&s);
	npu_cxx_string_init(&s, "aclnnConvolutionBackwardWithALongName");
	assert_ptr_not_equal(s.data, s.u.local);
	assert_string_equal(s.data, "aclnnConvolutionBackwardWithALongName");
	npu_cxx_string_destroy(&s);
}

/* Runs after test_inline_mode, whose child must not inherit a started queue. */
static void test_fifo_on_acl_thread(void **state)
{
	assert_int_equal(npu_queue_start(0), 0);
	assert_non_null(npu_queue_get());
	nr_ran = 0;
	wrong_thread = 0;
	producer_tid = gettid();
	for (int i = 0; i < N_TASKS; i++)
		submit(i, 0);
	assert_int_equal(npu_queue_drain(), 0);
	assert_int_equal(nr_ran, N_TASKS);
	for (int i = 0; i < N_TASKS; i++)
		assert_int_equal(ran[i], i);
	assert_int_equal(wrong_thread, 0);
}

struct producer_arg {
	int n;
	volatile int done;
};

static void *producer(void *p)
{
	struct producer_arg *a = p;

	for (int i = 0; i < a->n; i++) {
		submit(i, 0);
		__atomic_store_n(&a->done, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* A full ring (4096 slots) blocks the producer until the consumer frees slots. */
static void test_full_ring_blocks(void **state)
{
	struct producer_arg a = { 5000, 0 };
	pthread_t th;
	struct Repository *r = npu_queue_get();

	nr_ran = 0;
	sem_init(&gate, 0, 0);
	gate_armed = 1;
	producer_tid = 0;
	assert_int_equal(pthread_create(&th, NULL, producer, &a), 0);
	/* the consumer sits on task 0; the producer fills the ring and must stop */
	for (int i = 0; i < 200 && __atomic_load_n(&a.done, __ATOMIC_ACQUIRE) < 4096; i++)
		usleep(10000);
	usleep(50000);
	assert_true(a.done >= NPU_QUEUE_CAPACITY - 1);
	assert_true(a.done <= NPU_QUEUE_CAPACITY + 1); /* blocked, not overwriting */
	assert_true(r->write_idx - r->read_idx <= NPU_QUEUE_CAPACITY);
	sem_post(&gate);
	pthread_join(th, NULL);
	gate_armed = 0;
	assert_int_equal(npu_queue_drain(), 0);
	assert_int_equal(nr_ran, 5000);
	for (int i = 0; i < 5000; i++)
		assert_int_equal(ran[i], i);
}

/* The first failing task's code reaches the next drain, once. */
static void test_error_reported(void **state)
{
	nr_ran = 0;
	submit(0, 0);
	submit(1, 561000);
	submit(2, 161002);
	assert_int_equal(npu_queue_drain(), 561000);
	assert_int_equal(npu_queue_drain(), 0);
	assert_int_equal(nr_ran, 3);
}

static void test_copy_and_events(void **state)
{
	struct CopyParas c = { (void *)0x1000, 64, (void *)0x2000, 64, ACL_MEMCPY_HOST_TO_DEVICE };
	int stream_tag;

	copies = records = waits = 0;
	npu_queue_set_stream(&stream_tag);
	assert_int_equal(npu_queue_submit_copy(&c), 0);
	assert_int_equal(npu_queue_submit_event(RECORD_EVENT, (aclrtEvent)0x10), 0);
	assert_int_equal(npu_queue_submit_event(WAIT_EVENT, (aclrtEvent)0x10), 0);
	npu_queue_set_stream(NULL);
	assert_int_equal(npu_queue_drain(), 0);
	assert_int_equal(copies, 1);
	assert_int_equal(records, 1);
	assert_int_equal(waits, 1);
	assert_ptr_equal(last_copy_stream, &stream_tag);
	assert_ptr_equal(last_event_stream, &stream_tag);
}

/* TASK_QUEUE_ENABLE=0 (a fresh process): the task runs inline on the caller. */
static void test_inline_mode(void **state)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("TASK_QUEUE_ENABLE", "0", 1);
		/* so task_run's name check passes */
		prctl(PR_SET_NAME, "acl_thread", 0, 0, 0);
		producer_tid = 0;
		nr_ran = 0;
		if (npu_queue_enabled() != 0 || npu_queue_start(0) != 0 || npu_queue_get())
			_exit(10);
		submit(7, 0);
		/* inline: already done when RunOpApiV2 returned, no drain needed */
		_exit(nr_ran == 1 && ran[0] == 7 ? 0 : 11);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),		 cmocka_unit_test(test_string),
		cmocka_unit_test(test_inline_mode),	 cmocka_unit_test(test_fifo_on_acl_thread),
		cmocka_unit_test(test_full_ring_blocks), cmocka_unit_test(test_error_reported),
		cmocka_unit_test(test_copy_and_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
