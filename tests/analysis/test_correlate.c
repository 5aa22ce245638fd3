// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_correlate - the join on a hand-made capture: aten op -> Enqueue ->
 * Dequeue (correlation id) -> aclnn call -> SQE -> device task, the same
 * without a task queue, 16-bit task id wraps, device and wall clocks, a lost
 * exit, op names from at::_ops symbols, steps, ProfilerStep ops, cycles of
 * the schedule, memory attribution, unmatched device tasks, bad records;
 * native call-stack frames as torch prints frames (demangled names);
 * batched submissions (one halSqTaskSend carrying several launches' SQEs):
 * each kernel joins the launch that made it, a failed launch makes none, a
 * synchronize on another thread sends the rest, a batch whose header types
 * disagree with its launches is left unjoined and counted; the end record;
 * Level0 launch marks (ASC_REC_LAUNCH, entry only): a batch straddling the
 * switch-on and one whose types disagree stay unjoined (counted), the others
 * join the slot of their launch, from the launching thread and from a
 * synchronize on another; a node launch (LAUNCH entry/return) is a call of
 * level ASC_CORR_LEVEL_NODE that only serves as the kernel's node_call;
 * the steps of tasks sent while the schedule did not record.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "ascbpf_events.h"
#include "capbuild.h"
#include "capture/capture.h"
#include "convert/convert.h"
#include "analysis/correlate.h"
#include "discovery/probes.h"
#include "capture/records.h"
#include "schedule.h"

#define PY  CAP_TGID
#define ACL 101

enum { P_ADD = 1, P_ENQ, P_DEQ, P_ACLNN, P_RT, P_HAL, P_MM, P_INPLACE, P_MEM, P_STEP, P_NPU };

static char dir[] = "/tmp/test_correlate.XXXXXX";
static char path[256];
static void funcname(uint64_t handle, const char *name, uint64_t ts)
{
	struct asc_funcname f = { 0 };

	hdr(&f.hdr, ASC_REC_FUNCNAME, sizeof(f), ACL, 0, ts);
	f.handle = handle;
	f.len = strlen(name);
	memcpy(f.name, name, f.len);
	put(&f);
}

static void sqe(uint32_t tid, uint64_t ts, uint16_t stream, uint16_t task)
{
	struct asc_sqe s = { 0 };

	hdr(&s.hdr, ASC_REC_SQE, sizeof(s), tid, P_HAL, ts);
	s.sqe_num = 1;
	s.nr_kept = 1;
	s.sqe[0].stream_id = stream;
	s.sqe[0].task_id = task;
	s.sqe[0].block_dim = 24;
	s.sqe[0].sqe_type = 0;
	put(&s);
}

static void step(uint64_t n, uint32_t state, uint64_t ts)
{
	struct asc_step s = { 0 };

	hdr(&s.hdr, ASC_REC_STEP, sizeof(s), PY, P_STEP, ts);
	s.step = n;
	s.state = state;
	put(&s);
}

static void devtask(uint16_t stream, uint16_t task, uint64_t start_mono, uint64_t end_mono)
{
	struct asc_devtask d = { 0 };

	hdr(&d.hdr, ASC_REC_DEVTASK, sizeof(d), 0, 0, 0);
	/* devclock below: counter 100 at mono 2000, 1 GHz */
	d.start_cnt = start_mono - 2000 + 100;
	d.end_cnt = end_mono - 2000 + 100;
	d.stream_id = stream;
	d.task_id = task;
	d.task_type = 0;
	put(&d);
}

static struct asc_corr *c;

/* The probes of the queued path (aten::add -> Enqueue ... Dequeue) every capture here has. */
static void queue_probes(void)
{
	probe(P_ADD, "_ZN2at4_ops10add_Tensor4callERKNS_6TensorES4_RKN3c106ScalarE",
	      ASC_LAYER_FRAMEWORK, ASC_PK_ATEN_OP);
	probe(P_ENQ, "_ZN7c10_npu10Repository7EnqueueEPv", ASC_LAYER_FRAMEWORK, ASC_PK_ENQUEUE);
	probe(P_DEQ, "_ZN6at_npu6native12AsncExecFuncEPv", ASC_LAYER_FRAMEWORK, ASC_PK_DEQUEUE);
}

static int setup(void **state)
{
	struct asc_mem m = { 0 };
	struct asc_enter bad = { 0 };

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/c.ascb", dir);
	capture_begin(path);
	clock_rec(ASC_CLOCK_START, 1000, 5000); /* wall = mono + 4000 */
	devclock(2000, 100, 1000000000);
	process_rec(3, 0);
	queue_probes();
	probe(P_ACLNN, "aclnnAdd", ASC_LAYER_CANN, ASC_PK_CALL);
	probe(P_RT, "rtKernelLaunch", ASC_LAYER_CANN, ASC_PK_CALL);
	probe(P_HAL, "halSqTaskSend", ASC_LAYER_DRIVER, ASC_PK_SQE_SEND);
	probe(P_MM, "at::_ops::mm_out::call", ASC_LAYER_FRAMEWORK, ASC_PK_ATEN_OP);
	probe(P_INPLACE, "_ZN2at4_ops11add__Tensor4callE", ASC_LAYER_FRAMEWORK, ASC_PK_ATEN_OP);
	probe(P_MEM, "report", ASC_LAYER_MEMORY, ASC_PK_MEM_REPORT);
	probe(P_STEP, "step", ASC_LAYER_PYTHON, ASC_PK_STEP);
	probe(P_NPU, "_ZN6at_npu6native10custom_ops15npu_format_castERKN2at6TensorEl",
	      ASC_LAYER_FRAMEWORK, ASC_PK_ATEN_OP);

	step(0, ASC_SCHED_RECORD, 10000);
	/* step 0: aten::add -> Enqueue(7) ... acl_thread: Dequeue(7) -> aclnnAdd -> rt -> SQE */
	enter(PY, P_ADD, 11000);
	hdr(&m.hdr, ASC_REC_MEM, sizeof(m), PY, P_MEM, 11100);
	m.ptr = 0xabc000;
	m.size = 512;
	m.total_allocated = 512;
	put(&m);
	enter(PY, P_ENQ, 11200);
	queue(PY, P_ENQ, 11200, 7, ASC_QUEUE_ENQUEUE);
	leave(PY, P_ENQ, 11300);
	enter(ACL, P_DEQ, 11400);
	queue(ACL, P_DEQ, 11400, 7, ASC_QUEUE_DEQUEUE);
	enter(ACL, P_ACLNN, 11500);
	funcname(0x5000, "Add_unused", 11550); /* another handle: the kernel keeps aclnnAdd */
	enter_arg0(ACL, P_RT, 11600, 0x6000);
	enter(ACL, P_HAL, 11700);
	sqe(ACL, 11700, 3, 65535);
	leave(ACL, P_HAL, 11710);
	leave(ACL, P_RT, 11720);
	leave(ACL, P_ACLNN, 11730);
	leave(ACL, P_DEQ, 11850);
	leave(PY, P_ADD, 11900);
	enter(PY, P_NPU, 11910); /* torch_npu custom op: npu::npu_format_cast */
	leave(PY, P_NPU, 11920);
	/* a malformed record (an ENTER with an EXIT's size) is counted and skipped */
	hdr(&bad.hdr, ASC_REC_ENTER, 32, PY, P_ADD, 11950);
	put(&bad);

	step(1, ASC_SCHED_RECORD_AND_SAVE, 20000);
	/* step 1: no task queue; the rt exit is lost; the task id wrapped to 0 */
	enter(PY, P_MM, 21000);
	enter(PY, P_ACLNN, 21100);
	enter_arg0(PY, P_RT, 21150, 0x5000); /* named: the kernel is "Add_unused" */
	enter(PY, P_HAL, 21200);
	sqe(PY, 21200, 3, 0);
	leave(PY, P_HAL, 21210);
	leave(PY, P_ACLNN, 21300); /* closes the rt frame too */
	enter(PY, P_INPLACE, 21400);
	leave(PY, P_INPLACE, 21450);
	leave(PY, P_MM, 21500);
	step(2, ASC_SCHED_NONE, 30000);
	step(3, ASC_SCHED_WARMUP, 40000);
	step(4, ASC_SCHED_RECORD_AND_SAVE, 50000);
	enter(PY, P_MM, 51000);
	leave(PY, P_MM, 52000);

	devtask(3, 65535, 13000, 14000);
	devtask(3, 0, 23000, 23500);
	devtask(9, 5, 24000, 24100); /* never submitted as far as the capture knows */
	clock_rec(ASC_CLOCK_END, 60000, 64000);
	c = capture_corr(path);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	asc_corr_free(c);
	unlink(path);
	rmdir(dir);
	return 0;
}

static int32_t find_op(const char *name, int nth)
{
	size_t i;

	for (i = 0; i < c->nr_ops; i++)
		if (!strcmp(asc_corr_str(c, c->ops[i].name), name) && !nth--)
			return (int32_t)i;
	return -1;
}

static void test_info(void **state)
{
	(void)state;
	assert_int_equal(c->info.ended, 0);		    /* no STATS record */
	assert_int_equal(c->info.last_ts_ns, 52000 + 4000); /* the last BPF record */
	assert_int_equal(c->info.batch_unattributed, 0);
	assert_int_equal(c->info.pid, PY);
	assert_int_equal(c->info.rank, 3);
	assert_int_equal(c->info.have_clock, 1);
	assert_int_equal(c->info.bad_records, 1);
	assert_int_equal(c->info.unmatched_kernels, 1);
	assert_int_equal(c->info.damaged, 0);
	assert_int_equal(c->info.end_wall_ns, 64000);
}

static void test_op_names_and_nesting(void **state)
{
	int32_t add = find_op("aten::add", 0), mm = find_op("aten::mm", 0);
	int32_t inplace = find_op("aten::add_", 0), s0 = find_op("ProfilerStep#0", 0);

	(void)state;
	assert_true(add >= 0 && mm >= 0 && inplace >= 0 && s0 >= 0);
	assert_int_equal(find_op("ProfilerStep#3", 0), -1); /* warmup: not recorded */
	assert_true(find_op("npu::npu_format_cast", 0) >= 0);
	assert_int_equal(c->ops[find_op("npu::npu_format_cast", 0)].parent, s0);
	assert_true(find_op("ProfilerStep#4", 0) >= 0);
	assert_int_equal(c->ops[add].start_ns, 15000);
	assert_int_equal(c->ops[add].end_ns, 15900);
	assert_int_equal(c->ops[add].parent, s0);
	assert_int_equal(c->ops[add].depth, 1);
	assert_int_equal(c->ops[inplace].parent, mm);
	assert_int_equal(c->ops[add].step, 0);
	assert_int_equal(c->ops[mm].step, 1);
	/* ops are sorted by start time */
	for (size_t i = 1; i < c->nr_ops; i++)
		assert_true(c->ops[i - 1].start_ns <= c->ops[i].start_ns);
}

static void test_kernel_through_queue(void **state)
{
	const struct asc_corr_kernel *k = &c->kernels[0];

	(void)state;
	assert_int_equal(c->nr_kernels, 3);
	/* device counter -> monotonic -> wall */
	assert_int_equal(k->start_ns, 17000);
	assert_int_equal(k->end_ns, 18000);
	assert_int_equal(k->task_id, 65535);
	assert_int_equal(k->wrap, 0);
	assert_int_equal(k->stream, 3);
	assert_int_equal(k->block_dim, 24);
	assert_true(k->flags & ASC_CORR_K_MATCHED);
	assert_int_equal(k->correlation_id, 7);
	assert_true(k->op >= 0);
	assert_string_equal(asc_corr_str(c, c->ops[k->op].name), "aten::add");
	assert_true(k->api >= 0);
	assert_string_equal(asc_corr_str(c, c->calls[k->api].name), "aclnnAdd");
	assert_string_equal(asc_corr_str(c, c->calls[k->launch_call].name), "rtKernelLaunch");
	assert_string_equal(asc_corr_str(c, k->name), "aclnnAdd");
	assert_string_equal(asc_corr_str(c, k->type), "Add");
	assert_int_equal(k->submit_ns, 15700);
	assert_int_equal(k->submit_tid, ACL);
	assert_int_equal(k->step, 0);
	assert_true(k->queue >= 0);
	assert_int_equal(c->queues[k->queue].enq_tid, PY);
	assert_int_equal(c->queues[k->queue].deq_tid, ACL);
	assert_int_equal(c->queues[k->queue].enq_start_ns, 15200);
	assert_int_equal(c->queues[k->queue].deq_end_ns, 15850);
	/* the op got the device time */
	assert_int_equal(c->ops[k->op].device_self_ns, 1000);
	assert_int_equal(c->ops[c->ops[k->op].parent].device_total_ns, 1000);
}

static void test_kernel_without_queue_after_wrap(void **state)
{
	const struct asc_corr_kernel *k = &c->kernels[1];

	(void)state;
	assert_int_equal(k->task_id, 0);
	assert_int_equal(k->wrap, 1);
	assert_true(k->flags & ASC_CORR_K_MATCHED);
	assert_int_equal(k->correlation_id, 0);
	assert_true(k->op >= 0);
	assert_string_equal(asc_corr_str(c, c->ops[k->op].name), "aten::mm");
	assert_int_equal(k->step, 1);
	/* the handle rtKernelLaunch passed was named by FUNCNAME: real name, type of the API */
	assert_true(k->flags & ASC_CORR_K_KERNEL_NAME);
	assert_string_equal(asc_corr_str(c, k->name), "Add_unused");
	assert_string_equal(asc_corr_str(c, k->kernel_name), "Add_unused");
	assert_string_equal(asc_corr_str(c, k->type), "Add");
	assert_false(c->kernels[0].flags & ASC_CORR_K_KERNEL_NAME);
	assert_int_equal(c->kernels[0].kernel_name, 0);
	assert_false(c->kernels[2].flags & ASC_CORR_K_MATCHED);
	assert_int_equal(c->kernels[2].op, -1);
}

static void test_calls_and_lost_exit(void **state)
{
	size_t i, rt = 0;

	(void)state;
	for (i = 0; i < c->nr_calls; i++) {
		const struct asc_corr_call *k = &c->calls[i];

		if (strcmp(asc_corr_str(c, k->name), "rtKernelLaunch"))
			continue;
		rt++;
		assert_int_equal(k->level, ASC_CORR_LEVEL_RUNTIME);
		assert_true(k->parent >= 0);
		assert_string_equal(asc_corr_str(c, c->calls[k->parent].name), "aclnnAdd");
		if (k->step == 1) /* exit lost: it keeps end == start */
			assert_int_equal(k->end_ns, k->start_ns);
		else
			assert_int_equal(k->end_ns, 15720);
	}
	assert_int_equal(rt, 2);
}

static void test_steps_cycles_mem(void **state)
{
	(void)state;
	assert_int_equal(c->nr_steps, 5);
	assert_int_equal(c->steps[0].start_ns, 14000);
	assert_int_equal(c->steps[0].end_ns, 24000);
	assert_int_equal(c->nr_cycles, 2);
	assert_int_equal(c->cycles[0].first_step, 0);
	assert_int_equal(c->cycles[0].last_step, 1);
	assert_int_equal(c->cycles[1].first_step, 3);
	assert_int_equal(c->cycles[1].last_step, 4);
	assert_int_equal(c->steps[2].cycle, -1);
	assert_int_equal(c->nr_mems, 1);
	assert_true(c->mems[0].op >= 0);
	assert_string_equal(asc_corr_str(c, c->ops[c->mems[0].op].name), "aten::add");
	assert_int_equal(c->mems[0].ts_ns, 15100);
}

/*
 * Records of every type with random contents (sizes valid, so they pass the
 * reader): the join and every output writer must survive them.
 */
/* "lib!sym+0xoff" -> "file(0): demangled"; expected names are g++'s own demangling. */
static void test_native_frames(void **state)
{
	char out[512];

	(void)state;
	assert_int_equal(asc_corr_demangle("_ZN2at4_ops2mm4callERKNS_6TensorES4_", out,
					   sizeof(out)),
			 strlen("at::_ops::mm::call(at::Tensor const&, at::Tensor const&)"));
	assert_string_equal(out, "at::_ops::mm::call(at::Tensor const&, at::Tensor const&)");
	asc_corr_demangle("aclnnAdd", out, sizeof(out)); /* C names stay */
	assert_string_equal(out, "aclnnAdd");
	asc_corr_demangle("_Znot_mangled", out, sizeof(out)); /* invalid: kept as is */
	assert_string_equal(out, "_Znot_mangled");
	asc_corr_native_frame("libtorch_npu.so!_ZN7c10_npu10Repository7EnqueueEPv+0x1c",
			      "/usr/lib/libtorch_npu.so", out, sizeof(out));
	assert_string_equal(out,
			    "/usr/lib/libtorch_npu.so(0): c10_npu::Repository::Enqueue(void*)");
	asc_corr_native_frame("libascendcl.so!aclrtLaunchKernel+0x4", NULL, out, sizeof(out));
	assert_string_equal(out, "libascendcl.so(0): aclrtLaunchKernel");
	asc_corr_native_frame("libpython3.11.so.1.0+0x1a2b", NULL, out, sizeof(out));
	assert_string_equal(out, "libpython3.11.so.1.0(0): 0x1a2b");
	asc_corr_native_frame("[unknown]+0x7f00", NULL, out, sizeof(out));
	assert_string_equal(out, "[unknown](0): 0x7f00");
	asc_corr_native_frame("/work/train.py(40): <module>", NULL, out, sizeof(out));
	assert_string_equal(out, "/work/train.py(40): <module>"); /* already a frame */
	asc_corr_native_frame("libx.so!f(int)+0x1", NULL, out, sizeof(out));
	assert_string_equal(out, "libx.so(0): f(int)");
	asc_corr_native_frame("libx.so!f+0x1", NULL, out, 8); /* truncated, terminated */
	assert_int_equal(strlen(out), 7);
}

static void test_random_records_survive(void **state)
{
	static const uint16_t types[] = {
		ASC_REC_ENTER,	 ASC_REC_EXIT,	 ASC_REC_OPNAME,   ASC_REC_QUEUE,   ASC_REC_SQE,
		ASC_REC_MEM,	 ASC_REC_STACK,	 ASC_REC_STEP,	   ASC_REC_DEVTASK, ASC_REC_TENSOR,
		ASC_REC_PYSTACK, ASC_REC_THREAD, ASC_REC_DEVCLOCK, ASC_REC_CLOCK,
	};
	char gpath[300], out[300], cmd[700];
	struct asc_capture_writer *gw;
	struct asc_capture_reader *r;
	struct asc_convert_opts o = { 0 };
	struct asc_corr *g;
	_Alignas(8) unsigned char buf[512];
	unsigned int seed = 12345, i, k;
	struct asc_process pr = { 0 };

	(void)state;
	snprintf(gpath, sizeof(gpath), "%s/garbage.ascb", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	gw = asc_capture_create(gpath, 1);
	assert_non_null(gw);
	hdr(&pr.hdr, ASC_REC_PROCESS, sizeof(pr), PY, 0, 0);
	assert_int_equal(asc_capture_append(gw, &pr, sizeof(pr)), 0);
	for (i = 1; i < 40; i++) { /* probes of every kind */
		_Alignas(8) char pb[128] = { 0 };
		struct asc_probe *p = (void *)pb;

		hdr(&p->hdr, ASC_REC_PROBE, asc_probe_rec_size(1, 9), 0, i, 0);
		p->layer = 1 + i % 6;
		p->kind = 1 + i % 9;
		p->lib_len = 1;
		p->sym_len = 9;
		memcpy(p->strings, "l\0aclnnAdd_", 11);
		assert_int_equal(asc_capture_append(gw, p, p->hdr.size), 0);
	}
	for (i = 0; i < 50000; i++) {
		uint16_t type = types[rand_r(&seed) % (sizeof(types) / sizeof(types[0]))];
		size_t size = asc_rec_base_size(type);
		struct asc_hdr *h = (void *)buf;

		for (k = 0; k < size; k++)
			buf[k] = rand_r(&seed);
		h->type = type;
		h->size = size;
		h->probe_id = rand_r(&seed) % 45;
		h->tid = 100 + rand_r(&seed) % 4;
		h->ts_ns = 1000000 + (uint64_t)i * 1000 + rand_r(&seed) % 5000;
		if (type == ASC_REC_STEP)
			((struct asc_step *)h)->state = rand_r(&seed) % 5;
		if (asc_rec_check(buf, size, NULL, 0))
			continue; /* e.g. counts out of range: the reader skips those anyway */
		assert_int_equal(asc_capture_append(gw, buf, size), 0);
	}
	assert_int_equal(asc_capture_close(gw), 0);
	r = asc_capture_open(gpath);
	assert_non_null(r);
	g = asc_corr_build(r);
	asc_capture_free(r);
	assert_non_null(g);
	for (o.level = 0; o.level <= 2; o.level++) {
		o.out_dir = out;
		o.force = 1;
		asc_convert(g, gpath, &o); /* any result but a crash */
	}
	asc_corr_free(g);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", out, gpath);
	assert_int_equal(system(cmd), 0);
}

/* halSqTaskSend of n headers (tasks first.., types[]) in records of ASC_MAX_SQES */
static void send_n(uint32_t tid, uint64_t ts, uint16_t first, const uint8_t *types, uint32_t n)
{
	uint32_t i, j;

	enter(tid, P_HAL, ts);
	for (i = 0; i < n; i += ASC_MAX_SQES) {
		struct asc_sqe s = { 0 };

		hdr(&s.hdr, ASC_REC_SQE, sizeof(s), tid, P_HAL, ts);
		s.sqe_num = n - i;
		for (j = 0; j < ASC_MAX_SQES && i + j < n; j++) {
			s.sqe[j].stream_id = 3;
			s.sqe[j].task_id = first + i + j;
			s.sqe[j].sqe_type = types[i + j];
		}
		s.nr_kept = j;
		put(&s);
	}
	leave(tid, P_HAL, ts + 5);
}

#define P_EVREC 20
#define STREAM	0x5500

/* An aten::add on PY at t queued as corr, and the start of its Dequeue on ACL (t + 100). */
static void queued_add(uint64_t t, uint64_t corr)
{
	enter(PY, P_ADD, t);
	enter(PY, P_ENQ, t + 10);
	queue(PY, P_ENQ, t + 10, corr, ASC_QUEUE_ENQUEUE);
	leave(PY, P_ENQ, t + 20);
	leave(PY, P_ADD, t + 30);
	enter(ACL, P_DEQ, t + 100);
	queue(ACL, P_DEQ, t + 100, corr, ASC_QUEUE_DEQUEUE);
}

/* One queued aten::add on PY whose slot runs fn on ACL at t (launch: 0 none, 1 ok, 2 fails). */
static void slot(uint64_t t, uint64_t corr, int launch, uint32_t probe_id)
{
	queued_add(t, corr);
	enter(ACL, P_ACLNN, t + 110);
	if (probe_id == P_EVREC)
		enter_argn(ACL, P_EVREC, t + 120, 1, STREAM);
	else
		enter_argn(ACL, P_RT, t + 120, 5, STREAM);
	(void)launch;
}

static void slot_end(uint64_t t, int fail, uint32_t probe_id)
{
	leave_ret(ACL, probe_id, t + 150, fail ? 507000 : 0);
	leave(ACL, P_ACLNN, t + 160);
	leave(ACL, P_DEQ, t + 170);
}

static const struct asc_corr_kernel *kernel_of(const struct asc_corr *b, uint32_t task)
{
	size_t i;

	for (i = 0; i < b->nr_kernels; i++)
		if (b->kernels[i].task_id == task)
			return &b->kernels[i];
	return NULL;
}

/* Begins capture NAME in dir: process PY with the queue probes.  Returns its path. */
static const char *begin_batch_capture(const char *name)
{
	static char bpath[300];

	snprintf(bpath, sizeof(bpath), "%s/%s", dir, name);
	capture_begin(bpath);
	process_rec(0, 0);
	queue_probes();
	return bpath;
}

static void test_batched_launches(void **state)
{
	static const uint8_t kk[2] = { 0, 0 };
	struct asc_stats st = { 0 };
	const char *bpath = begin_batch_capture("batch.ascb");
	struct asc_corr *b;
	uint32_t task;

	(void)state;
	probe(P_ACLNN, "aclnnAdd", ASC_LAYER_CANN, ASC_PK_CALL);
	probe(P_RT, "rtKernelLaunch", ASC_LAYER_CANN, ASC_PK_CALL);
	probe(P_HAL, "halSqTaskSend", ASC_LAYER_DRIVER, ASC_PK_SQE_SEND);
	probe(P_EVREC, "aclrtRecordEvent", ASC_LAYER_CANN, ASC_PK_CALL);
	/* ops 0..2: launch 0 held, launch 1 fails, launch 2 sends both held tasks */
	slot(1000, 101, 1, P_RT);
	slot_end(1000, 0, P_RT);
	slot(2000, 102, 2, P_RT);
	slot_end(2000, 1, P_RT);
	slot(3000, 103, 1, P_RT);
	send_n(ACL, 3130, 10, kk, 2);
	slot_end(3000, 0, P_RT);
	/* ops 3, 4 held; the Python thread's synchronize sends them */
	slot(4000, 104, 1, P_RT);
	slot_end(4000, 0, P_RT);
	slot(5000, 105, 1, P_RT);
	slot_end(5000, 0, P_RT);
	send_n(PY, 5500, 12, kk, 2);
	/* ops 5, 6: an event record and a launch, but both headers say kernel: unjoined */
	slot(6000, 106, 1, P_EVREC);
	slot_end(6000, 0, P_EVREC);
	slot(7000, 107, 1, P_RT);
	send_n(ACL, 7130, 14, kk, 2);
	slot_end(7000, 0, P_RT);
	for (task = 10; task < 16; task++)
		devtask(3, task, 10000 + task * 100, 10050 + task * 100);
	hdr(&st.hdr, ASC_REC_STATS, sizeof(st), 0, 0, 0);
	put(&st);
	b = capture_corr(bpath);
	assert_int_equal(b->info.ended, 1);
	assert_int_equal(b->nr_kernels, 6);
	{
		/* the op of each kernel: ops sorted by start, 1000 apart */
		static const int64_t want_op_start[6] = { 1000, 3000, 4000, 5000, -1, -1 };

		for (task = 10; task < 16; task++) {
			const struct asc_corr_kernel *k = kernel_of(b, task);
			int64_t want = want_op_start[task - 10];

			assert_non_null(k);
			assert_true(k->flags & ASC_CORR_K_MATCHED);
			if (want < 0) {
				assert_int_equal(k->op, -1);
				assert_int_equal(k->api, -1);
				assert_int_equal(k->node_call, -1);
				continue;
			}
			assert_true(k->op >= 0);
			assert_int_equal(b->ops[k->op].start_ns, want);
			assert_true(k->queue >= 0);
			assert_int_equal(b->queues[k->queue].correlation_id,
					 101 + (want - 1000) / 1000);
			assert_true(k->api >= 0 && k->node_call >= 0);
			assert_string_equal(asc_corr_str(b, b->calls[k->api].name), "aclnnAdd");
			/* Node@launch: the launch call inside that op's slot */
			assert_string_equal(asc_corr_str(b, b->calls[k->node_call].name),
					    "rtKernelLaunch");
			assert_int_equal(b->calls[k->node_call].start_ns, want + 120);
		}
	}
	assert_int_equal(b->info.batch_unattributed, 2);
	asc_corr_free(b);
	unlink(bpath);
}

#define P_MARK_K 30
#define P_MARK_E 31
#define P_NODE	 32

static void launch_rec(uint32_t tid, uint32_t probe_id, uint64_t ts, uint32_t side, uint64_t handle)
{
	struct asc_launch l = { 0 };

	hdr(&l.hdr, ASC_REC_LAUNCH, sizeof(l), tid, probe_id, ts);
	l.side = side;
	l.stream = side == ASC_LAUNCH_ENTRY ? STREAM : 0;
	l.handle = handle;
	put(&l);
}

/* A Level0 slot: aten::add on PY, its Dequeue on ACL with a mark (0: none) inside. */
static void slot0(uint64_t t, uint64_t corr, uint32_t mark)
{
	queued_add(t, corr);
	if (mark)
		launch_rec(ACL, mark, t + 120, ASC_LAUNCH_ENTRY, 0x7000);
}

static void test_level0_marks(void **state)
{
	static const uint8_t kk[2] = { 0, 0 };
	const char *bpath = begin_batch_capture("marks.ascb");
	struct asc_corr *b;
	uint32_t task;
	size_t i;

	(void)state;
	probe(P_HAL, "halSqTaskSend", ASC_LAYER_DRIVER, ASC_PK_SQE_SEND);
	probe(P_MARK_K, "rtsLaunchKernelWithHostArgs", ASC_LAYER_CANN, ASC_PK_LAUNCH_MARK);
	probe(P_MARK_E, "rtEventRecord", ASC_LAYER_CANN, ASC_PK_LAUNCH_MARK);
	probe(P_NODE, "rtKernelLaunch", ASC_LAYER_CANN, ASC_PK_NODE_LAUNCH);
	/* tasks 20, 21: the first launch before the marks: the batch straddles, unjoined */
	slot0(1000, 201, 0);
	leave(ACL, P_DEQ, 1170);
	slot0(2000, 202, P_MARK_K);
	send_n(ACL, 2130, 20, kk, 2);
	leave(ACL, P_DEQ, 2170);
	/* 22, 23: exactly two pending: joined, the stream's id learned */
	slot0(3000, 203, P_MARK_K);
	leave(ACL, P_DEQ, 3170);
	slot0(4000, 204, P_MARK_K);
	send_n(ACL, 4130, 22, kk, 2);
	leave(ACL, P_DEQ, 4170);
	/* 24, 25: sent by a synchronize on the Python thread: exactly the two pending */
	slot0(5000, 205, P_MARK_K);
	leave(ACL, P_DEQ, 5170);
	slot0(6000, 206, P_MARK_K);
	leave(ACL, P_DEQ, 6170);
	send_n(PY, 6500, 24, kk, 2);
	/* 26, 27: an event record and a launch, both headers say kernel: unjoined */
	slot0(7000, 207, P_MARK_E);
	leave(ACL, P_DEQ, 7170);
	slot0(8000, 208, P_MARK_K);
	send_n(ACL, 8130, 26, kk, 2);
	leave(ACL, P_DEQ, 8170);
	/* 28: one SQE: the latest pending launch; the two above are dropped as sent */
	slot0(9000, 209, P_MARK_K);
	send_n(ACL, 9130, 28, kk, 1);
	leave(ACL, P_DEQ, 9170);
	/* 29: a node launch (Level1 rtKernelLaunch) around its own send */
	slot0(10000, 210, 0);
	launch_rec(ACL, P_NODE, 10120, ASC_LAUNCH_ENTRY, 0x7000);
	send_n(ACL, 10130, 29, kk, 1);
	launch_rec(ACL, P_NODE, 10140, ASC_LAUNCH_RETURN, 0);
	leave(ACL, P_DEQ, 10170);
	/*
	 * 30, 31: a step outside the schedule closes the gate: the send of 211's
	 * task is not seen; the next batch holds a launch made while the gate was
	 * closed (no mark) and 213's: unjoined, 211 is not taken for the first
	 */
	slot0(11000, 211, P_MARK_K);
	leave(ACL, P_DEQ, 11170);
	step(5, ASC_SCHED_NONE, 11200);
	step(6, ASC_SCHED_RECORD, 11500);
	slot0(11600, 213, P_MARK_K);
	send_n(ACL, 11730, 30, kk, 2);
	leave(ACL, P_DEQ, 11770);
	for (task = 20; task < 32; task++)
		devtask(3, task, 20000 + task * 100, 20050 + task * 100);
	b = capture_corr(bpath);
	assert_non_null(b);
	assert_int_equal(b->nr_kernels, 12);
	{
		/* the slot (correlation id) of each kernel, 0: none */
		static const uint64_t want[12] = { 0, 0, 203, 204, 205, 206, 0, 0, 209, 210, 0, 0 };

		for (task = 20; task < 32; task++) {
			const struct asc_corr_kernel *k = kernel_of(b, task);

			assert_non_null(k);
			assert_true(k->flags & ASC_CORR_K_MATCHED);
			if (!want[task - 20]) {
				assert_int_equal(k->op, -1);
				assert_int_equal(k->queue, -1);
				continue;
			}
			assert_true(k->queue >= 0 && k->op >= 0);
			assert_int_equal(b->queues[k->queue].correlation_id, want[task - 20]);
			assert_int_equal(b->ops[k->op].start_ns, (want[task - 20] - 200) * 1000);
			/* a mark makes no call: no API, no Node@launch */
			if (task < 29) {
				assert_int_equal(k->api, -1);
				assert_int_equal(k->node_call, -1);
			}
		}
	}
	assert_int_equal(b->info.batch_unattributed, 6);
	/* the only call is the node launch, of its own level, with its span */
	assert_int_equal(b->nr_calls, 1);
	assert_int_equal(b->calls[0].level, ASC_CORR_LEVEL_NODE);
	assert_string_equal(asc_corr_str(b, b->calls[0].name), "rtKernelLaunch");
	assert_int_equal(b->calls[0].start_ns, 10120);
	assert_int_equal(b->calls[0].end_ns, 10140);
	for (i = 0; i < b->nr_kernels; i++)
		if (b->kernels[i].task_id == 29)
			assert_int_equal(b->kernels[i].node_call, 0);
	asc_corr_free(b);
	unlink(bpath);
}

/*
 * Tasks sent while the schedule did not record (no SQE record, only the
 * device channel's task) that the lagging card ran inside the next recorded
 * step: each is filed under the unrecorded step its stream's captured sends
 * bracket, not under the step its start time falls in; an unsent task
 * between two sends of one recorded step keeps that step even when it ran
 * after the next began; a stream without any captured send keeps the
 * start-time rule.
 */
static void test_unsent_steps(void **state)
{
	const char *bpath = begin_batch_capture("unsent.ascb");
	static const struct {
		uint16_t stream, task;
		uint64_t start;
		int32_t step;
	} want[] = {
		{ 3, 1, 1500, 0 },		      /* sent in step 0, ran in it */
		{ 3, 2, 3200, 1 },		      /* sent in warmup step 1, ran in step 2 */
		{ 3, 3, 3300, 1 }, { 3, 4, 3400, 2 }, /* sent in step 2 */
		{ 3, 5, 4500, 2 }, /* unsent, between two sends of step 2, ran in step 3 */
		{ 3, 6, 4600, 2 }, { 9, 7, 3500, 2 }, /* no send on stream 9: its start time */
	};
	struct asc_corr *b;
	size_t i;

	(void)state;
	devclock(2000, 100, 1000000000);
	probe(P_HAL, "halSqTaskSend", ASC_LAYER_DRIVER, ASC_PK_SQE_SEND);
	probe(P_STEP, "step", ASC_LAYER_PYTHON, ASC_PK_STEP);
	step(0, ASC_SCHED_RECORD, 1000);
	sqe(ACL, 1100, 3, 1);
	step(1, ASC_SCHED_WARMUP, 2000);
	step(2, ASC_SCHED_RECORD, 3000);
	sqe(ACL, 3100, 3, 4);
	sqe(ACL, 3150, 3, 6);
	step(3, ASC_SCHED_RECORD_AND_SAVE, 4000);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		devtask(want[i].stream, want[i].task, want[i].start, want[i].start + 50);
	b = capture_corr(bpath);
	assert_non_null(b);
	assert_int_equal(b->nr_kernels, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct asc_corr_kernel *k = kernel_of(b, want[i].task);

		assert_non_null(k);
		assert_int_equal(k->start_ns, want[i].start);
		if (k->step != want[i].step)
			fail_msg("task %u: step %d, want %d", want[i].task, k->step, want[i].step);
	}
	asc_corr_free(b);
	unlink(bpath);
}

/* "aclnn" + n + 400 - 5 letters: distinct names long enough to make the string table grow. */
static void long_aclnn_name(char *buf, size_t len, int n)
{
	int k = snprintf(buf, len, "aclnn%03d", n);

	memset(buf + k, 'T', 400 - k);
	buf[400] = '\0';
}

/*
 * Kernel types from long aclnn names, interned while the string table grows:
 * type_from_name() passed a pointer into the table's own buffer to
 * strtab_add(), which read it after the realloc had freed it (issue 19; the
 * sanitizer build reports it, the normal one read freed memory).
 */
static void test_types_while_strings_grow(void **state)
{
	char bpath[300], sym[420];
	struct asc_corr *b;
	size_t i;
	int n;

	(void)state;
	snprintf(bpath, sizeof(bpath), "%s/types.ascb", dir);
	capture_begin(bpath);
	clock_rec(ASC_CLOCK_START, 1000, 5000);
	devclock(2000, 100, 1000000000);
	probe(P_RT, "rtKernelLaunch", ASC_LAYER_CANN, ASC_PK_CALL);
	probe(P_HAL, "halSqTaskSend", ASC_LAYER_DRIVER, ASC_PK_SQE_SEND);
	for (n = 0; n < 64; n++) {
		long_aclnn_name(sym, sizeof(sym), n);
		probe(100 + n, sym, ASC_LAYER_CANN, ASC_PK_CALL);
	}
	for (n = 0; n < 64; n++) {
		uint64_t ts = 10000 + n * 1000;

		enter(PY, 100 + n, ts);
		enter(PY, P_RT, ts + 100);
		enter(PY, P_HAL, ts + 200);
		sqe(PY, ts + 200, 3, n);
		leave(PY, P_HAL, ts + 210);
		leave(PY, P_RT, ts + 220);
		leave(PY, 100 + n, ts + 300);
		devtask(3, n, ts + 400, ts + 500);
	}
	b = capture_corr(bpath);
	assert_int_equal(b->nr_kernels, 64);
	for (i = 0; i < b->nr_kernels; i++) {
		long_aclnn_name(sym, sizeof(sym), (int)b->kernels[i].task_id);
		assert_string_equal(asc_corr_str(b, b->kernels[i].type), sym + 5);
	}
	asc_corr_free(b);
	unlink(bpath);
}

/*
 * A PROBE record's id far above the probes the capture holds is a bad record,
 * not an array index: a 2 KB capture made convert allocate 2.7 GB (issue 19).
 */
static void test_probe_id_bounded(void **state)
{
	char bpath[300];
	struct asc_corr *b;

	(void)state;
	snprintf(bpath, sizeof(bpath), "%s/probeid.ascb", dir);
	capture_begin(bpath);
	probe(P_ACLNN, "aclnnAdd", ASC_LAYER_CANN, ASC_PK_CALL);
	probe(0xfffffff0u, "aclnnHuge", ASC_LAYER_CANN, ASC_PK_CALL);
	probe(0x7fffffffu, "aclnnHuge", ASC_LAYER_CANN, ASC_PK_CALL);
	enter(PY, P_ACLNN, 1000);
	leave(PY, P_ACLNN, 2000);
	b = capture_corr(bpath); /* before the fix: ENOMEM, no result */
	assert_int_equal(b->info.bad_records, 2);
	assert_int_equal(b->nr_calls, 1);
	assert_string_equal(asc_corr_str(b, b->calls[0].name), "aclnnAdd");
	asc_corr_free(b);
	unlink(bpath);
}

/*
 * Times at the ends of the 64-bit range (a crafted or corrupt capture): ops,
 * calls and kernels whose end precedes their start by more than 2^63, a wall
 * clock offset near INT64_MAX.  Converted at every level and as a chrome
 * trace without signed overflow (issue 19: end_ns - start_ns and the sums
 * of durations were undefined; the sanitizer build aborts on them).
 */
static void test_extreme_times(void **state)
{
	struct asc_convert_opts o = { 0 };
	char bpath[300], out[300], cmd[700];
	struct asc_corr *b;

	(void)state;
	snprintf(bpath, sizeof(bpath), "%s/extreme.ascb", dir);
	snprintf(out, sizeof(out), "%s/extreme.out", dir);
	capture_begin(bpath);
	clock_rec(ASC_CLOCK_START, 1, (uint64_t)INT64_MAX - 1); /* wall = mono + ~INT64_MAX */
	devclock(2, UINT64_MAX - 5, 1000000000);
	process_rec(0, 0);
	queue_probes();
	probe(P_ACLNN, "aclnnAdd", ASC_LAYER_CANN, ASC_PK_CALL);
	probe(P_RT, "rtKernelLaunch", ASC_LAYER_CANN, ASC_PK_CALL);
	probe(P_HAL, "halSqTaskSend", ASC_LAYER_DRIVER, ASC_PK_SQE_SEND);
	step(0, ASC_SCHED_RECORD_AND_SAVE, 3);
	enter(PY, P_ADD, 10);
	enter(PY, P_ACLNN, (uint64_t)INT64_MAX - 3);
	enter(PY, P_RT, (uint64_t)INT64_MAX - 2);
	enter(PY, P_HAL, (uint64_t)INT64_MAX - 1);
	sqe(PY, (uint64_t)INT64_MAX - 1, 3, 1);
	leave(PY, P_HAL, (uint64_t)INT64_MAX);
	leave(PY, P_RT, (uint64_t)INT64_MAX + 2);
	leave(PY, P_ACLNN, (uint64_t)INT64_MAX + 3); /* negative as an int64_t */
	leave(PY, P_ADD, UINT64_MAX - 1);
	devtask(3, 1, 0, UINT64_MAX / 2);
	enter(PY, P_ENQ, UINT64_MAX - 10);
	queue(PY, P_ENQ, UINT64_MAX - 10, 9, ASC_QUEUE_ENQUEUE);
	leave(PY, P_ENQ, 20);
	b = capture_corr(bpath);
	for (o.level = 0; o.level <= 2; o.level++) {
		o.out_dir = out;
		o.force = 1;
		asc_convert(b, bpath, &o); /* any result, without undefined behaviour */
	}
	o.chrome = 1;
	snprintf(out, sizeof(out), "%s/extreme.json", dir);
	asc_convert(b, bpath, &o);
	asc_corr_free(b);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s/extreme.out' '%s'", out, dir, bpath);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_info),
		cmocka_unit_test(test_op_names_and_nesting),
		cmocka_unit_test(test_kernel_through_queue),
		cmocka_unit_test(test_kernel_without_queue_after_wrap),
		cmocka_unit_test(test_calls_and_lost_exit),
		cmocka_unit_test(test_steps_cycles_mem),
		cmocka_unit_test(test_random_records_survive),
		cmocka_unit_test(test_native_frames),
		cmocka_unit_test(test_batched_launches),
		cmocka_unit_test(test_level0_marks),
		cmocka_unit_test(test_unsent_steps),
		cmocka_unit_test(test_types_while_strings_grow),
		cmocka_unit_test(test_probe_id_bounded),
		cmocka_unit_test(test_extreme_times),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
