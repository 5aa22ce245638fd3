// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mkcapture - writes a synthetic capture of a small training loop, as
 * `ascbpf trace` would record it from torch_npu + CANN, plus the ground
 * truth of what "happened" as JSON, for the converter's golden tests and
 * benchmark.  No BPF, no npu_model: every record is made here.
 *
 *   mkcapture -o CAPTURE [--truth FILE.json] [--steps N] [--ops N]
 *             [--schedule SKIP,WAIT,WARMUP,ACTIVE,REPEAT] [--no-queue]
 *             [--task-start N] [--weird-names] [--stacks] [--pystacks] [--shapes]
 *             [--events N]
 *             [--no-steps] [--truncate-last] [--funcnames] [--level0]
 *             [--batch N] [--no-end] [--launch-marks N] [--node-launch]
 *
 * Per op, on the Python thread (tid = pid): aten op range, a PTA malloc
 * inside it, RunOpApiV2 with its OPNAME, Enqueue with its QUEUE record; on
 * acl_thread (tid = pid + 1): Dequeue with the same correlation id, the
 * aclnn (or aclopCompileAndExecute) call, rtKernelLaunch, halSqTaskSend with
 * the SQE (stream 2, 16-bit task id counting from --task-start, wrapping).
 * After each step: the PTA frees and the device task records (start/end in
 * device counter ticks, 50 MHz).  Steps follow the schedule; the BPF gate is
 * modelled: nothing but the step record is written in NONE steps.
 *
 * --funcnames: FUNCNAME records (function handle -> real kernel name, as
 * aclrtBinaryGetFunction / rtFunctionRegister report them) for the Add and
 * TransData kernels, and rtKernelLaunch carries the handle in arg0; the Mm
 * kernel's handle is never named (registered before the tracer attached),
 * so it keeps the API name.  --level0: what --level 0 traces: no CANN call
 * records and no RunOpApiV2; the op name is an OPNAME of the Enqueue probe
 * right after its QUEUE record (same tid, probe and ts).
 *
 * --batch N: the runtime holds the SQEs (NPU_MODEL_SQE_BATCH): one
 * halSqTaskSend carries N of them, sent inside the launch of the Nth (as
 * several SQE records of ASC_MAX_SQES headers), the rest of a step is sent at
 * its end by the Python thread (a synchronize) outside any launch.  The
 * truth keeps each kernel's own op and API.  --no-end: no STATS record and
 * no end clock, as a tracer killed between two frames leaves the file.
 *
 * --launch-marks N (with --level0): what Level0 traces once a batched send
 * was seen: from the Nth op of the capture on (0-based, over all recorded
 * steps), an ASC_REC_LAUNCH entry of a launch-mark probe (rtKernelLaunch,
 * stream 0x5500) at each launch.  The truth gives each kernel its "batch"
 * (index of its halSqTaskSend) and "marked" (its launch has a mark).
 * --node-launch (not with --level0): rtKernelLaunch as Level1 traces it
 * for aclop kernels: LAUNCH entry/return records of a node-launch probe
 * instead of ENTER/EXIT (no Runtime@ call, only the Node@launch).
 *
 * The truth file lists per recorded kernel: step, device start/end (wall ns),
 * stream, task id, wrap, kernel name, op type, aten op, launching API,
 * correlation id, task type name; per op: name, tid, start/end; per memory
 * event; the steps with their states; the expected number of cycles.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ascbpf_events.h"
#include "capture/capture.h"
#include "discovery/probes.h"
#include "capture/records.h"
#include "schedule.h"

#define PID	     4242
#define ACL_TID	     (PID + 1)
#define MONO_BASE    1000000000000ull	    /* 1000 s */
#define WALL_BASE    1764671100000000000ull /* 2025-12-02 10:25:00 UTC */
#define DEV_FREQ     50000000ull	    /* 20 ns per tick */
#define DEV_CNT_BASE 777000000ull

enum {
	P_ATEN_ADD = 1,
	P_ATEN_MM,
	P_ATEN_CONV,
	P_RUNOPAPI,
	P_ENQ,
	P_DEQ,
	P_ACLNN_ADD,
	P_ACLNN_MM,
	P_ACLOP,
	P_RT_LAUNCH,
	P_HAL_SEND,
	P_MEM,
	P_STEP,
	P_ACLNN_ADD_WS,
	P_MARK,
	P_COUNT
};

static const struct {
	const char *lib, *sym;
	uint16_t layer, kind;
} probes[P_COUNT] = {
	[P_ATEN_ADD] = { "libtorch_cpu.so",
			 "_ZN2at4_ops10add_Tensor4callERKNS_6TensorES4_RKN3c106ScalarE",
			 ASC_LAYER_FRAMEWORK, ASC_PK_ATEN_OP },
	[P_ATEN_MM] = { "libtorch_cpu.so", "_ZN2at4_ops2mm4callERKNS_6TensorES4_",
			ASC_LAYER_FRAMEWORK, ASC_PK_ATEN_OP },
	[P_ATEN_CONV] = { "libtorch_cpu.so", "at::_ops::npu_format_cast::call", ASC_LAYER_FRAMEWORK,
			  ASC_PK_ATEN_OP },
	[P_RUNOPAPI] = { "libtorch_npu.so",
			 "_ZN6at_npu6native9OpCommand10RunOpApiV2ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKSt8functionIFivEEb",
			 ASC_LAYER_FRAMEWORK, ASC_PK_OPNAME_STDSTR },
	[P_ENQ] = { "libtorch_npu.so", "_ZN7c10_npu10Repository7EnqueueEPv", ASC_LAYER_FRAMEWORK,
		    ASC_PK_ENQUEUE },
	[P_DEQ] = { "libtorch_npu.so", "_ZN6at_npu6native12AsncExecFuncEPv", ASC_LAYER_FRAMEWORK,
		    ASC_PK_DEQUEUE },
	[P_ACLNN_ADD] = { "libopapi.so", "aclnnAdd", ASC_LAYER_CANN, ASC_PK_CALL },
	[P_ACLNN_MM] = { "libopapi.so", "aclnnMm", ASC_LAYER_CANN, ASC_PK_CALL },
	[P_ACLOP] = { "libascendcl.so", "aclopCompileAndExecute", ASC_LAYER_CANN,
		      ASC_PK_OPNAME_CSTR },
	[P_RT_LAUNCH] = { "libruntime.so", "rtKernelLaunch", ASC_LAYER_CANN, ASC_PK_CALL },
	[P_HAL_SEND] = { "libascend_hal.so", "halSqTaskSend", ASC_LAYER_DRIVER, ASC_PK_SQE_SEND },
	[P_MEM] = { "libtorch_npu.so",
		    "_ZN9torch_npu8profiler30reportMemoryDataToNpuProfilerERKNS0_11MemoryUsageE",
		    ASC_LAYER_MEMORY, ASC_PK_MEM_REPORT },
	[P_STEP] = { "libtorch_npu.so", "step", ASC_LAYER_PYTHON, ASC_PK_STEP },
	[P_ACLNN_ADD_WS] = { "libopapi.so", "aclnnAddGetWorkspaceSize", ASC_LAYER_CANN,
			     ASC_PK_CALL },
	/* --launch-marks: the Level0 launch mark (its PROBE record is written only then) */
	[P_MARK] = { "libruntime.so", "rtKernelLaunch", ASC_LAYER_CANN, ASC_PK_LAUNCH_MARK },
};

/* The op kinds the loop cycles through. */
struct opkind {
	int aten;	       /* probe */
	const char *aten_name; /* expected converter name */
	const char *funcname;  /* --funcnames: real kernel name, NULL = handle never named */
	int api;	       /* probe of the launching CANN call */
	const char *opname;    /* RunOpApiV2 / aclop OPNAME */
	const char *kernel;    /* expected kernel name */
	const char *type;      /* expected op type */
	uint8_t sqe_type;      /* STARS SQE type: 0 AI_CORE, 2 AI_VECTOR_CORE */
	const char *task_type;
	/* tensor arguments (--shapes): arg index, kind, c10::ScalarType, dims (0-terminated) */
	struct {
		int arg, kind, dtype;
		int64_t dims[5];
	} tensors[3];
	int ntensors;
};

/* one op kind per entry, its tensors on its last line */
// clang-format off
static struct opkind kinds[] = {
	{ P_ATEN_ADD, "aten::add", "Add_4a1c9e0b_mix_aiv", P_ACLNN_ADD, "aclnnAdd", "aclnnAdd",
	  "Add", 2, "AI_VECTOR_CORE",
	  { { 0, 0, 6, { 8, 16 } }, { 1, 0, 6, { 8, 16 } } }, 2 },
	{ P_ATEN_MM, "aten::mm", NULL, P_ACLNN_MM, "aclnnMm", "aclnnMm", "Mm", 0, "AI_CORE",
	  { { 0, 0, 15, { 8, 16 } }, { 1, 0, 15, { 16, 4 } } }, 2 },
	/* argument 1 is an int (no record), argument 2 an undefined optional tensor */
	{ P_ATEN_CONV, "aten::npu_format_cast", "trans_TransData_0", P_ACLOP, "TransData",
	  "TransData", "TransData", 2, "AI_VECTOR_CORE",
	  { { 0, 0, 5, { 2, 3, 4, 5 } }, { 2, 1, 0xff, { 0 } } }, 2 },
};
// clang-format on
#define NR_KINDS       (sizeof(kinds) / sizeof(kinds[0]))
#define FUNC_HANDLE(i) (0x7f3a00001000ull + (i)*0x40)

static const char weird[] = "Trans\"Data,\xe5\x8f\x98\xe6\x8d\xa2\n\x01\ttab";

struct rec {
	uint64_t ts;
	uint32_t seq;
	uint32_t size;
	union {
		struct asc_hdr hdr;
		struct asc_enter enter;
		struct asc_exit exit;
		struct asc_opname opname;
		struct asc_queue queue;
		struct asc_sqe sqe;
		struct asc_mem mem;
		struct asc_stack stack;
		struct asc_pystack pystack;
		struct asc_tensor tensor;
		struct asc_devtask devtask;
		struct asc_step step;
		struct asc_launch launch;
	} u;
};

static struct rec *batch;
static size_t nbatch, batch_cap;
static uint32_t seqno;
static struct asc_capture_writer *w;
static FILE *truth, *truth_mem;
static char *truth_mem_buf;
static size_t truth_mem_len;
static uint64_t records_written;

static struct rec *newrec(uint16_t type, uint32_t size, uint32_t tid, uint32_t probe, uint64_t ts)
{
	struct rec *r;

	if (nbatch == batch_cap) {
		batch_cap = batch_cap ? batch_cap * 2 : 256;
		batch = realloc(batch, batch_cap * sizeof(*batch));
		if (!batch) {
			perror("realloc");
			exit(1);
		}
	}
	r = &batch[nbatch++];
	memset(r, 0, sizeof(*r));
	r->ts = ts;
	r->seq = seqno++;
	r->size = size;
	r->u.hdr.type = type;
	r->u.hdr.size = size;
	r->u.hdr.tgid = PID;
	r->u.hdr.tid = tid;
	r->u.hdr.probe_id = probe;
	r->u.hdr.ts_ns = type == ASC_REC_DEVTASK ? 0 : ts;
	return r;
}

static int level0;	/* --level0: CANN calls are not traced */
static int node_launch; /* --node-launch: rtKernelLaunch as LAUNCH records */

static struct rec *launch_rec(uint32_t tid, int probe, uint64_t ts, uint32_t side)
{
	struct rec *r = newrec(ASC_REC_LAUNCH, sizeof(struct asc_launch), tid, probe, ts);

	r->u.launch.side = side;
	return r;
}

static struct rec *enter(uint32_t tid, int probe, uint64_t ts)
{
	if (level0 && probes[probe].layer == ASC_LAYER_CANN)
		return NULL;
	if (node_launch && probe == P_RT_LAUNCH)
		return NULL; /* launch_rec() */
	return newrec(ASC_REC_ENTER, sizeof(struct asc_enter), tid, probe, ts);
}

static void leave(uint32_t tid, int probe, uint64_t ts)
{
	if (level0 && probes[probe].layer == ASC_LAYER_CANN)
		return;
	if (node_launch && probe == P_RT_LAUNCH) {
		launch_rec(tid, probe, ts, ASC_LAUNCH_RETURN);
		return;
	}
	newrec(ASC_REC_EXIT, sizeof(struct asc_exit), tid, probe, ts);
}

static void opname(uint32_t tid, int probe, uint64_t ts, const char *name)
{
	struct rec *r;

	if (level0 && probes[probe].layer == ASC_LAYER_CANN)
		return;
	r = newrec(ASC_REC_OPNAME, sizeof(struct asc_opname), tid, probe, ts);
	size_t n = strlen(name);

	if (n > ASC_NAME_LEN)
		n = ASC_NAME_LEN;
	r->u.opname.len = n;
	memcpy(r->u.opname.name, name, n);
}

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : 1;
}

static void append_raw(const void *rec, size_t size)
{
	int err = asc_capture_append(w, rec, size);

	if (err) {
		fprintf(stderr, "mkcapture: append: %s\n", strerror(-err));
		exit(1);
	}
	records_written++;
}

/* Writes the batch in time order (the ring buffer's order), device records last. */
static void flush_batch(void)
{
	size_t i;

	qsort(batch, nbatch, sizeof(*batch), cmp_rec);
	for (i = 0; i < nbatch; i++)
		if (batch[i].u.hdr.type != ASC_REC_DEVTASK)
			append_raw(&batch[i].u, batch[i].size);
	for (i = 0; i < nbatch; i++)
		if (batch[i].u.hdr.type == ASC_REC_DEVTASK)
			append_raw(&batch[i].u, batch[i].size);
	nbatch = 0;
}

static void put_probe(uint32_t id, const char *lib, const char *sym, uint16_t layer, uint16_t kind)
{
	size_t ll = strlen(lib), sl = strlen(sym), size = asc_probe_rec_size(ll, sl);
	struct asc_probe *p = calloc(1, size);

	p->hdr.type = ASC_REC_PROBE;
	p->hdr.size = size;
	p->hdr.tgid = PID;
	p->hdr.probe_id = id;
	p->layer = layer;
	p->kind = kind;
	p->lib_len = ll;
	p->sym_len = sl;
	memcpy(p->strings, lib, ll);
	memcpy(p->strings + ll + 1, sym, sl);
	append_raw(p, size);
	free(p);
}

static void put_text(uint16_t type, uint64_t value, const char *text)
{
	size_t n = strlen(text), size = asc_text_rec_size(n);
	struct asc_text *t = calloc(1, size);

	t->hdr.type = type;
	t->hdr.size = size;
	t->hdr.tgid = PID;
	t->value = value;
	memcpy(t->text, text, n);
	append_raw(t, size);
	free(t);
}

static void put_thread(uint32_t tid, const char *comm)
{
	struct asc_thread t = { 0 };

	t.hdr.type = ASC_REC_THREAD;
	t.hdr.size = sizeof(t);
	t.hdr.tgid = PID;
	t.hdr.tid = tid;
	strncpy(t.comm, comm, sizeof(t.comm) - 1);
	append_raw(&t, sizeof(t));
}

static void put_clock(uint32_t which, uint64_t mono)
{
	struct asc_clock c = { 0 };

	c.hdr.type = ASC_REC_CLOCK;
	c.hdr.size = sizeof(c);
	c.hdr.tgid = PID;
	c.hdr.ts_ns = mono;
	c.realtime_ns = mono - MONO_BASE + WALL_BASE;
	c.monotonic_raw_ns = mono;
	c.which = which;
	c.utc_offset_s = 3600;
	append_raw(&c, sizeof(c));
}

static uint64_t wall(uint64_t mono)
{
	return mono - MONO_BASE + WALL_BASE;
}

static uint64_t dev_cnt(uint64_t mono)
{
	return DEV_CNT_BASE + (mono - MONO_BASE) / (1000000000ull / DEV_FREQ);
}

/* SQE headers the runtime holds (--batch) */
static struct asc_sqe_hdr held[8 * ASC_MAX_SQES];
static unsigned long nheld, nsends;

/* halSqTaskSend of the held SQEs on tid at ts: one SQE record per ASC_MAX_SQES headers */
static void send_held(uint32_t tid, uint64_t ts)
{
	unsigned long i, j;

	enter(tid, P_HAL_SEND, ts);
	for (i = 0; i < nheld; i += ASC_MAX_SQES) {
		struct rec *r = newrec(ASC_REC_SQE, sizeof(struct asc_sqe), tid, P_HAL_SEND, ts);

		r->u.sqe.dev_id = 0;
		r->u.sqe.sq_id = 1;
		r->u.sqe.sqe_num = nheld - i;
		for (j = 0; j < ASC_MAX_SQES && i + j < nheld; j++)
			r->u.sqe.sqe[j] = held[i + j];
		r->u.sqe.nr_kept = j;
	}
	leave(tid, P_HAL_SEND, ts + 500);
	nheld = 0;
	nsends++;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: mkcapture -o CAPTURE [--truth FILE] [--steps N] [--ops N] "
		"[--schedule SKIP,WAIT,WARMUP,ACTIVE,REPEAT] [--no-queue] [--task-start N] "
		"[--weird-names] [--stacks] [--pystacks] [--shapes] [--events N] [--no-steps] "
		"[--truncate-last] [--funcnames] [--level0] [--batch N] [--no-end]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "truth", required_argument, NULL, 't' },
		{ "steps", required_argument, NULL, 's' },
		{ "ops", required_argument, NULL, 'n' },
		{ "schedule", required_argument, NULL, 'S' },
		{ "no-queue", no_argument, NULL, 'Q' },
		{ "task-start", required_argument, NULL, 'T' },
		{ "weird-names", no_argument, NULL, 'W' },
		{ "stacks", no_argument, NULL, 'K' },
		{ "pystacks", no_argument, NULL, 'Y' },
		{ "shapes", no_argument, NULL, 'H' },
		{ "events", required_argument, NULL, 'e' },
		{ "no-steps", no_argument, NULL, 'N' },
		{ "truncate-last", no_argument, NULL, 'X' },
		{ "funcnames", no_argument, NULL, 'F' },
		{ "level0", no_argument, NULL, 'L' },
		{ "batch", required_argument, NULL, 'B' },
		{ "no-end", no_argument, NULL, 'E' },
		{ "launch-marks", required_argument, NULL, 'M' },
		{ "node-launch", no_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	struct asc_sched sched = { 0 };
	const char *out = NULL, *truth_path = NULL;
	unsigned long steps = 4, ops = 6, events = 0, task = 100;
	int no_queue = 0, weird_names = 0, stacks = 0, no_steps = 0, truncate_last = 0;
	int pystacks = 0, shapes = 0, funcnames = 0, no_end = 0;
	unsigned long batch_n = 1, marks_from = 0, op_index = 0;
	int marks = 0;
	uint64_t t, corr = 1, ptr = 0x120000000ull, kcount = 0, cycles = 0;
	uint32_t wrap = 0, i;
	int c, first_k = 1, first_o = 1, first_m = 1, first_s = 1, in_cycle = 0;
	unsigned long st, k;

	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		/* the option table: one short option a line */
		// clang-format off
		switch (c) {
		case 'o': out = optarg; break;
		case 't': truth_path = optarg; break;
		case 's': steps = strtoul(optarg, NULL, 0); break;
		case 'n': ops = strtoul(optarg, NULL, 0); break;
		case 'S':
			if (sscanf(optarg, "%u,%u,%u,%u,%u", &sched.skip_first, &sched.wait,
				   &sched.warmup, &sched.active, &sched.repeat) != 5)
				usage();
			sched.enabled = 1;
			asc_sched_sanitise(&sched);
			break;
		case 'Q': no_queue = 1; break;
		case 'T': task = strtoul(optarg, NULL, 0); break;
		case 'W': weird_names = 1; break;
		case 'K': stacks = 1; break;
		case 'Y': pystacks = 1; break;
		case 'H': shapes = 1; break;
		case 'e': events = strtoul(optarg, NULL, 0); break;
		case 'N': no_steps = 1; break;
		case 'X': truncate_last = 1; break;
		case 'F': funcnames = 1; break;
		case 'L': level0 = 1; break;
		case 'B': batch_n = strtoul(optarg, NULL, 0); break;
		case 'E': no_end = 1; break;
		case 'M': marks = 1; marks_from = strtoul(optarg, NULL, 0); break;
		case 'D': node_launch = 1; break;
		default: usage();
		}
		// clang-format on
	}
	if (!out || optind != argc || !ops || (level0 && no_queue) || !batch_n ||
	    batch_n > 8 * ASC_MAX_SQES || (marks && !level0) || (node_launch && level0))
		usage();

	if (events) /* about 21 records per op */
		steps = events / (ops * 21) + 1;
	if (weird_names)
		kinds[2].opname = kinds[2].kernel = kinds[2].type = weird;
	w = asc_capture_create(out, 1);
	if (!w)
		return 1;
	if (truth_path) {
		truth = fopen(truth_path, "w");
		if (!truth) {
			perror(truth_path);
			return 1;
		}
		truth_mem = open_memstream(&truth_mem_buf, &truth_mem_len);
		fprintf(truth,
			"{\"pid\": %d, \"acl_tid\": %d, \"wall_base\": %llu, "
			"\"mono_base\": %llu, \"kernels\": [",
			PID, ACL_TID, (unsigned long long)WALL_BASE, (unsigned long long)MONO_BASE);
	}

	t = MONO_BASE;
	put_clock(ASC_CLOCK_START, t);
	{
		struct asc_devclock d = { 0 };

		d.hdr.type = ASC_REC_DEVCLOCK;
		d.hdr.size = sizeof(d);
		d.hdr.tgid = PID;
		d.hdr.ts_ns = t;
		d.counter = dev_cnt(t);
		d.freq_hz = DEV_FREQ;
		append_raw(&d, sizeof(d));
	}
	{
		const char cmd[] = "python3\0train.py\0";
		size_t size = asc_process_rec_size(sizeof(cmd));
		struct asc_process *p = calloc(1, size);

		p->hdr.type = ASC_REC_PROCESS;
		p->hdr.size = size;
		p->hdr.tgid = PID;
		p->hdr.tid = PID;
		p->rank = 0;
		p->device = 0;
		p->cmdline_len = sizeof(cmd);
		memcpy(p->comm, "pyth", 4);
		memcpy(p->strings, cmd, sizeof(cmd));
		append_raw(p, size);
		free(p);
	}
	put_thread(PID, "python3");
	put_thread(ACL_TID, "acl_thread");
	put_text(ASC_REC_CONFIG, 0, level0 ? "level=0" : "level=1");
	put_text(ASC_REC_CONFIG, 0, "profile_memory=1");
	put_text(ASC_REC_CONFIG, 0, stacks ? "with_stack=1" : "with_stack=0");
	put_text(ASC_REC_CONFIG, 0, "activities=cpu,npu");
	if (sched.enabled) { /* the format `ascbpf trace` writes */
		char kv[160];

		snprintf(kv, sizeof(kv),
			 "schedule=skip_first=%u,wait=%u,warmup=%u,active=%u,"
			 "repeat=%u,skip_first_wait=%u",
			 sched.skip_first, sched.wait, sched.warmup, sched.active, sched.repeat,
			 sched.skip_first_wait);
		put_text(ASC_REC_CONFIG, 0, kv);
	}
	{
		static const char *const env[] = {
			"ASCEND_GLOBAL_LOG_LEVEL=",
			"HCCL_RDMA_TC=",
			"HCCL_RDMA_SL=",
			"ACLNN_CACHE_LIMIT=",
			"HOST_CACHE_CAPACITY=",
			"ASCEND_ENHANCE_ENABLE=",
			"PYTORCH_NPU_ALLOC_CONF=",
			"ASCEND_LAUNCH_BLOCKING=0",
			NULL,
		};
		char kv[96];

		for (i = 0; env[i]; i++) {
			snprintf(kv, sizeof(kv), "env.%s", env[i]);
			put_text(ASC_REC_CONFIG, 0, kv);
		}
	}
	for (i = 1; i < P_COUNT; i++)
		if (i != P_MARK || marks)
			put_probe(i, probes[i].lib, probes[i].sym, probes[i].layer,
				  i == P_RT_LAUNCH && node_launch ? ASC_PK_NODE_LAUNCH :
								    probes[i].kind);
	if (stacks) {
		/* as `ascbpf trace` writes them: "lib!symbol+0xoff", or "lib+0xoff" unresolved */
		put_text(ASC_REC_SYMBOL, 0x401000,
			 "libtorch_cpu.so!"
			 "_ZN2at4_ops10add_Tensor4callERKNS_6TensorES4_RKN3c106ScalarE+0x24");
		put_text(ASC_REC_SYMBOL, 0x402000, "libpython3.11.so.1.0+0x1a2b");
		/* a frame already in torch's form (a resolver with line numbers) is kept */
		put_text(ASC_REC_SYMBOL, 0x403000, "/work/train.py(40): <module>");
	}
	if (pystacks) { /* frame 0x7100 is never resolved: it is left out */
		static const struct {
			uint64_t code;
			int32_t lasti, line;
			const char *text;
		} fr[] = {
			{ 0x7000, 10, 12, "/work/model.py(12): forward" },
			{ 0x7200, 4, 40, "/work/train.py(40): <module>" },
		};

		for (i = 0; i < 2; i++) {
			size_t n = strlen(fr[i].text),
			       size = (sizeof(struct asc_pyframe) + n + 8) & ~7ul;
			struct asc_pyframe *pf = calloc(1, size);

			pf->hdr.type = ASC_REC_PYFRAME;
			pf->hdr.size = size;
			pf->hdr.tgid = PID;
			pf->code = fr[i].code;
			pf->lasti = fr[i].lasti;
			pf->line = fr[i].line;
			memcpy(pf->text, fr[i].text, n);
			append_raw(pf, size);
			free(pf);
		}
	}
	t += 1000;
	for (i = 0; funcnames && i < NR_KINDS; i++) {
		struct asc_funcname f = { 0 };
		size_t n;

		if (!kinds[i].funcname)
			continue;
		n = strlen(kinds[i].funcname);
		f.hdr.type = ASC_REC_FUNCNAME;
		f.hdr.size = sizeof(f);
		f.hdr.tgid = PID;
		f.hdr.tid = PID;
		f.hdr.ts_ns = t + i;
		f.handle = FUNC_HANDLE(i);
		f.len = n;
		memcpy(f.name, kinds[i].funcname, n);
		append_raw(&f, sizeof(f));
		kinds[i].kernel = kinds[i].funcname; /* the name the converter must write */
	}
	if (truth)
		fprintf(truth, "\n");

	t += 1000000; /* 1 ms */
	for (st = 0; st < steps; st++) {
		uint32_t state = no_steps ? ASC_SCHED_RECORD : asc_sched_action(&sched, st);
		uint64_t step_start = t;
		uint64_t ptrs[64];
		unsigned long nptr = 0;

		if (!no_steps) {
			struct rec *r = newrec(ASC_REC_STEP, sizeof(struct asc_step), PID, P_STEP,
					       t);

			r->u.step.step = st;
			r->u.step.state = state;
			t += 2000;
		}
		if (state != ASC_SCHED_NONE && !in_cycle)
			in_cycle = 1;
		if (!asc_sched_recording(state)) {
			/* gate closed: the loop runs, nothing is recorded (task ids still advance) */
			t += ops * 30000;
			task += ops;
			while (task > 0xffff) {
				task -= 0x10000;
				wrap++;
			}
			flush_batch();
			continue;
		}
		for (k = 0; k < ops; k++) {
			const struct opkind *ok = &kinds[k % NR_KINDS];
			uint64_t t0 = t, sub, ds, de;
			uint32_t qtid = no_queue ? PID : ACL_TID;
			struct rec *r;

			enter(PID, ok->aten, t0);
			if (stacks) {
				r = newrec(ASC_REC_STACK, sizeof(struct asc_stack), PID, ok->aten,
					   t0);
				r->u.stack.nr = 3;
				r->u.stack.ips[0] = 0x401000;
				r->u.stack.ips[1] = 0x402000;
				r->u.stack.ips[2] = 0x403000;
			}
			if (pystacks) {
				r = newrec(ASC_REC_PYSTACK, sizeof(struct asc_pystack), PID,
					   ok->aten, t0);
				r->u.pystack.nr = 3;
				r->u.pystack.code[0] = 0x7000;
				r->u.pystack.lasti[0] = 10;
				r->u.pystack.code[1] = 0x7100;
				r->u.pystack.lasti[1] = 2;
				r->u.pystack.code[2] = 0x7200;
				r->u.pystack.lasti[2] = 4;
			}
			for (i = 0; shapes && i < (uint32_t)ok->ntensors; i++) {
				int d;

				r = newrec(ASC_REC_TENSOR, sizeof(struct asc_tensor), PID, ok->aten,
					   t0);
				r->u.tensor.arg_index = ok->tensors[i].arg;
				r->u.tensor.kind = ok->tensors[i].kind;
				r->u.tensor.dtype = ok->tensors[i].dtype;
				for (d = 0; d < 5 && ok->tensors[i].dims[d]; d++)
					r->u.tensor.dims[d] = ok->tensors[i].dims[d];
				r->u.tensor.ndim = d;
			}
			r = newrec(ASC_REC_MEM, sizeof(struct asc_mem), PID, P_MEM, t0 + 1000);
			r->u.mem.ptr = ptr + k * 0x10000;
			r->u.mem.size = 4096 * (k + 1);
			r->u.mem.total_allocated = 1048576 + 4096 * (k + 1);
			r->u.mem.total_reserved = 2097152;
			r->u.mem.total_active = 1048576 + 4096 * (k + 1);
			r->u.mem.stream = 2;
			r->u.mem.component = ASC_MEM_PTA;
			r->u.mem.data_type = ASC_MEM_MALLOC;
			if (nptr < 64)
				ptrs[nptr++] = r->u.mem.ptr;
			if (truth)
				fprintf(truth_mem,
					"%s{\"mem\": 1, \"op\": \"%s\", \"ts\": %llu, \"ptr\": %llu, "
					"\"size\": %lld, \"step\": %lu}",
					first_m ? "" : ",\n", ok->aten_name,
					(unsigned long long)wall(t0 + 1000),
					(unsigned long long)r->u.mem.ptr, (long long)r->u.mem.size,
					st);
			first_m = 0;
			if (ok->api != P_ACLOP && !level0) {
				enter(PID, P_RUNOPAPI, t0 + 2000);
				opname(PID, P_RUNOPAPI, t0 + 2000, ok->opname);
				if (no_queue == 0)
					enter(PID, P_ACLNN_ADD_WS, t0 + 2500),
						leave(PID, P_ACLNN_ADD_WS, t0 + 2800);
			}
			if (!no_queue) {
				enter(PID, P_ENQ, t0 + 3000);
				r = newrec(ASC_REC_QUEUE, sizeof(struct asc_queue), PID, P_ENQ,
					   t0 + 3000);
				r->u.queue.correlation_id = corr;
				r->u.queue.stream = 0x5500;
				r->u.queue.param_type = 8;
				r->u.queue.side = ASC_QUEUE_ENQUEUE;
				if (level0)
					opname(PID, P_ENQ, t0 + 3000, ok->opname);
				leave(PID, P_ENQ, t0 + 4000);
			}
			if (ok->api != P_ACLOP && !level0)
				leave(PID, P_RUNOPAPI, t0 + 4500);
			/* consumer side (or the same thread without a queue) */
			ds = no_queue ? t0 + 5000 : t0 + 6000;
			if (!no_queue) {
				enter(qtid, P_DEQ, ds);
				r = newrec(ASC_REC_QUEUE, sizeof(struct asc_queue), qtid, P_DEQ,
					   ds);
				r->u.queue.correlation_id = corr;
				r->u.queue.stream = 0x5500;
				r->u.queue.param_type = 8;
				r->u.queue.side = ASC_QUEUE_DEQUEUE;
			}
			enter(qtid, ok->api, ds + 1000);
			if (ok->api == P_ACLOP)
				opname(qtid, P_ACLOP, ds + 1000, ok->opname);
			if (node_launch) {
				r = launch_rec(qtid, P_RT_LAUNCH, ds + 2000, ASC_LAUNCH_ENTRY);
				r->u.launch.stream = 0x5500;
				if (funcnames)
					r->u.launch.handle = FUNC_HANDLE(k % NR_KINDS);
			}
			if (marks && op_index >= marks_from) {
				r = launch_rec(qtid, P_MARK, ds + 2000, ASC_LAUNCH_ENTRY);
				r->u.launch.stream = 0x5500;
			}
			r = enter(qtid, P_RT_LAUNCH, ds + 2000);
			if (r && funcnames)
				r->u.enter.args[0] = FUNC_HANDLE(k % NR_KINDS);
			if (r) {
				r->u.enter.args[1] = 8;	     /* numBlocks */
				r->u.enter.args[5] = 0x5500; /* stream */
			}
			sub = ds + 3000;
			held[nheld].sqe_type = ok->sqe_type;
			held[nheld].block_dim = 8;
			held[nheld].stream_id = 2;
			held[nheld].task_id = task;
			if (++nheld == batch_n)
				send_held(qtid, sub);
			leave(qtid, P_RT_LAUNCH, sub + 1000);
			leave(qtid, ok->api, sub + 1500);
			if (!no_queue)
				leave(qtid, P_DEQ, sub + 2000);
			de = t0 + 14000; /* aten op ends after the consumer finished */
			leave(PID, ok->aten, de);
			/* the device runs it 20 us after submission, 4..12 us long */
			{
				uint64_t s0 = sub + 20000, e0 = s0 + 4000 + (k % 5) * 2000;

				r = newrec(ASC_REC_DEVTASK, sizeof(struct asc_devtask), 0, 0, s0);
				r->u.devtask.start_cnt = dev_cnt(s0);
				r->u.devtask.end_cnt = dev_cnt(e0);
				r->u.devtask.dev_id = 0;
				r->u.devtask.stream_id = 2;
				r->u.devtask.task_id = task;
				r->u.devtask.task_type = ok->sqe_type;
				if (truth) {
					fprintf(truth,
						"%s{\"step\": %ld, \"start\": %llu, \"end\": %llu, "
						"\"stream\": 2, \"task_id\": %lu, \"wrap\": %u, "
						"\"name_index\": %u, \"op\": \"%s\", \"api\": \"%s\", "
						"\"corr\": %llu, \"task_type\": \"%s\", "
						"\"submit\": %llu, \"batch\": %lu, \"marked\": %d}",
						first_k ? "" : ",\n", no_steps ? -1L : (long)st,
						(unsigned long long)wall(s0),
						(unsigned long long)wall(e0), task, wrap,
						(unsigned)(k % NR_KINDS), ok->aten_name,
						probes[ok->api].sym,
						no_queue ? 0ull : (unsigned long long)corr,
						ok->task_type, (unsigned long long)wall(sub),
						nheld ? nsends : nsends - 1,
						marks && op_index >= marks_from);
					first_k = 0;
				}
			}
			kcount++;
			op_index++;
			corr++;
			task++;
			if (task > 0xffff) {
				task = 0;
				wrap++;
			}
			t = t0 + 30000;
		}
		/* the synchronize at the end of the step sends what the runtime still holds */
		if (nheld)
			send_held(PID, t + 50);
		/* frees at the end of the step, outside any op */
		for (k = 0; k < nptr; k++) {
			struct rec *r = newrec(ASC_REC_MEM, sizeof(struct asc_mem), PID, P_MEM,
					       t + 100 * k);

			r->u.mem.ptr = ptrs[k];
			r->u.mem.size = -(int64_t)(4096 * (k + 1));
			r->u.mem.total_allocated = 1048576;
			r->u.mem.total_reserved = 2097152;
			r->u.mem.total_active = 1048576;
			r->u.mem.stream = 2;
			r->u.mem.component = ASC_MEM_PTA;
			r->u.mem.data_type = ASC_MEM_FREE;
			r = newrec(ASC_REC_MEM, sizeof(struct asc_mem), PID, P_MEM,
				   t + 100 * k + 50);
			r->u.mem.ptr = ptrs[k];
			r->u.mem.size = -(int64_t)(4096 * (k + 1));
			r->u.mem.total_allocated = 1048576;
			r->u.mem.total_reserved = 2097152;
			r->u.mem.total_active = 1048576;
			r->u.mem.stream = 2;
			r->u.mem.component = ASC_MEM_PTA;
			r->u.mem.data_type = ASC_MEM_BLOCK_FREE;
		}
		t += 10000;
		if (state == ASC_SCHED_RECORD_AND_SAVE) {
			cycles++;
			in_cycle = 0;
		}
		(void)step_start;
		flush_batch();
		asc_capture_flush(w); /* one frame per step, like the tracer's periodic flush */
	}
	if (in_cycle && !no_steps)
		cycles++; /* stopped while recording: torch_npu still saves */
	if (no_steps)
		cycles = 1;
	if (!no_end) {
		struct asc_stats s = { 0 };

		s.hdr.type = ASC_REC_STATS;
		s.hdr.size = sizeof(s);
		s.hdr.tgid = PID;
		s.events = records_written;
		append_raw(&s, sizeof(s));
		put_clock(ASC_CLOCK_END, t + 100000);
	}
	if (asc_capture_close(w))
		return 1;
	if (truth) {
		fclose(truth_mem);
		fprintf(truth, "], \"mems\": [%s", truth_mem_buf);
		free(truth_mem_buf);
		fprintf(truth, "], \"names\": [");
		for (i = 0; i < NR_KINDS; i++) {
			fprintf(truth, "%s[", i ? ", " : "");
			/* JSON-escape the three names with \u escapes for non-printables */
			const char *vals[3] = { kinds[i].kernel, kinds[i].type,
						kinds[i].aten_name };
			int v;

			for (v = 0; v < 3; v++) {
				const unsigned char *p;

				fprintf(truth, "%s\"", v ? ", " : "");
				for (p = (const unsigned char *)vals[v]; *p; p++) {
					if (*p == '"' || *p == '\\')
						fprintf(truth, "\\%c", *p);
					else if (*p < 0x20)
						fprintf(truth, "\\u%04x", *p);
					else
						fputc(*p, truth);
				}
				fputc('"', truth);
			}
			fputc(']', truth);
		}
		fprintf(truth, "], \"tensors\": [");
		for (i = 0; i < NR_KINDS; i++) {
			int j, d;

			fprintf(truth, "%s[", i ? ", " : "");
			for (j = 0; j < kinds[i].ntensors; j++) {
				fprintf(truth,
					"%s{\"arg\": %d, \"kind\": %d, \"dtype\": %d, \"dims\": [",
					j ? ", " : "", kinds[i].tensors[j].arg,
					kinds[i].tensors[j].kind, kinds[i].tensors[j].dtype);
				for (d = 0; d < 5 && kinds[i].tensors[j].dims[d]; d++)
					fprintf(truth, "%s%lld", d ? ", " : "",
						(long long)kinds[i].tensors[j].dims[d]);
				fprintf(truth, "]}");
			}
			fputc(']', truth);
		}
		fprintf(truth,
			"], \"kernel_count\": %llu, \"cycles\": %llu, \"records\": %llu, "
			"\"steps\": [",
			(unsigned long long)kcount, (unsigned long long)cycles,
			(unsigned long long)records_written);
		for (st = 0; st < steps && !no_steps; st++) {
			fprintf(truth, "%s%u", first_s ? "" : ", ", asc_sched_action(&sched, st));
			first_s = 0;
		}
		fprintf(truth, "]}\n");
		fclose(truth);
	}
	(void)first_o;
	if (truncate_last) {
		/* cut the file in the middle of its last frame, as a SIGKILL mid-write would */
		FILE *f = fopen(out, "r+");

		if (f && !fseek(f, 0, SEEK_END)) {
			long n = ftell(f);

			if (ftruncate(fileno(f), n - 40))
				perror("ftruncate");
		}
		if (f)
			fclose(f);
	}
	return 0;
}
