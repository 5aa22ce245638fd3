// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * correlate.c - builds the joined view of correlate.h from a capture.
 *
 * One pass over the records in file order.  Each thread has a stack of open
 * calls (ENTER pushed, EXIT pops down to the frame of the same probe id, so
 * a lost exit closes only the frames above it); a record that needs "what is
 * open on this thread now" (OPNAME, QUEUE, SQE, MEM, STACK) reads that stack.
 * Submissions are keyed by (device, stream, task id, wrap) with wraps counted
 * per (device, stream) in record order; device tasks are counted the same way
 * and joined to them when the pass ends.  Then every array is sorted by start
 * time and cross references are remapped, framework op nesting is computed
 * per thread, steps are cut into RECORD_AND_SAVE cycles, and device
 * durations are summed onto the ops.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ascbpf_events.h"
#include "capture/capture.h"
#include "analysis/correlate.h"
#include "lib/log.h"
#include "discovery/probes.h"
#include "discovery/pytorch.h"
#include "capture/records.h"
#include "schedule.h"
#include "discovery/seqnr.h"

#define MAX_OPEN	256	/* open frames kept per thread; deeper ENTERs are ignored */

/* ---- growable arrays ---- */

static int grow_array(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 64;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

#define PUSH(arr, nr, cap, out) \
	(grow_array((void **)&(arr), &(cap), (nr) + 1, sizeof(*(arr))) ? -ENOMEM : \
	 ((out) = &(arr)[(nr)++], memset((out), 0, sizeof(*(out))), 0))

/* ---- u64 -> u64 hash map (open addressing, key 0 reserved: stored as key+1) ---- */

struct hmap {
	uint64_t *keys;
	uint64_t *vals;
	size_t cap, nr;
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static int hmap_put(struct hmap *h, uint64_t key, uint64_t val);

static int hmap_grow(struct hmap *h)
{
	struct hmap n = { 0 };
	size_t i;

	n.cap = h->cap ? h->cap * 2 : 1024;
	n.keys = calloc(n.cap, sizeof(*n.keys));
	n.vals = malloc(n.cap * sizeof(*n.vals));
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return -ENOMEM;
	}
	for (i = 0; i < h->cap; i++)
		if (h->keys[i])
			hmap_put(&n, h->keys[i] - 1, h->vals[i]);
	free(h->keys);
	free(h->vals);
	*h = n;
	return 0;
}

/* Inserts or replaces. */
static int hmap_put(struct hmap *h, uint64_t key, uint64_t val)
{
	size_t i;

	if ((h->nr + 1) * 2 > h->cap && hmap_grow(h))
		return -ENOMEM;
	for (i = mix64(key) & (h->cap - 1);; i = (i + 1) & (h->cap - 1)) {
		if (!h->keys[i]) {
			h->keys[i] = key + 1;
			h->vals[i] = val;
			h->nr++;
			return 0;
		}
		if (h->keys[i] == key + 1) {
			h->vals[i] = val;
			return 0;
		}
	}
}

static int hmap_get(const struct hmap *h, uint64_t key, uint64_t *val)
{
	size_t i;

	if (!h->cap)
		return 0;
	for (i = mix64(key) & (h->cap - 1); h->keys[i]; i = (i + 1) & (h->cap - 1))
		if (h->keys[i] == key + 1) {
			*val = h->vals[i];
			return 1;
		}
	return 0;
}

static void hmap_free(struct hmap *h)
{
	free(h->keys);
	free(h->vals);
	memset(h, 0, sizeof(*h));
}

/* ---- string table ---- */

struct strtab {
	char *arena;
	size_t len, cap;
	uint64_t *offs;		/* id -> offset */
	size_t nr, ocap;
	struct hmap index;	/* hash of bytes -> id (chained by probing on collision) */
};

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static int strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	if (grow_array((void **)&t->arena, &t->cap, 1, 1) ||
	    grow_array((void **)&t->offs, &t->ocap, 1, sizeof(*t->offs)))
		return -ENOMEM;
	t->arena[0] = '\0';	/* id 0 = "" */
	t->len = 1;
	t->offs[0] = 0;
	t->nr = 1;
	return 0;
}

/* Returns the id of s[0..n) (interned), 0 for an empty string or on ENOMEM. */
static uint32_t strtab_add(struct strtab *t, const char *s, size_t n)
{
	uint64_t h, id;
	int probe;

	if (!n)
		return 0;
	h = hash_bytes(s, n);
	/* collisions: probe h, h+1, ... in the index until the bytes match or a slot is free */
	for (probe = 0; probe < 64; probe++) {
		if (!hmap_get(&t->index, h + probe, &id))
			break;
		if (strlen(t->arena + t->offs[id]) == n && !memcmp(t->arena + t->offs[id], s, n))
			return (uint32_t)id;
	}
	if (probe == 64 || memchr(s, 0, n))
		return 0;
	if (grow_array((void **)&t->arena, &t->cap, t->len + n + 1, 1) ||
	    grow_array((void **)&t->offs, &t->ocap, t->nr + 1, sizeof(*t->offs)))
		return 0;
	memcpy(t->arena + t->len, s, n);
	t->arena[t->len + n] = '\0';
	t->offs[t->nr] = t->len;
	t->len += n + 1;
	if (hmap_put(&t->index, h + probe, t->nr))
		return 0;
	return (uint32_t)t->nr++;
}

static uint32_t strtab_cstr(struct strtab *t, const char *s)
{
	return strtab_add(t, s, strlen(s));
}

/* ---- build state ---- */

enum frame_kind {
	FR_OP = 1,	/* aten op: item = ops index */
	FR_CALL,	/* CANN call: item = calls index */
	FR_ENQ,		/* Enqueue: item = queues index or -1 */
	FR_DEQ,		/* Dequeue side: item = queues index or -1 */
	FR_OTHER,	/* anything else with an exit (RunOpApi, halSqTaskSend, ...) */
};

struct frame {
	uint32_t probe_id;
	uint8_t kind;
	int32_t item;
	uint32_t name;		/* OPNAME captured inside this frame */
	int64_t start;		/* mono ns */
	uint64_t arg0;		/* first argument (kernel launches: the function handle) */
	int32_t twin;		/* 1 + ops index of a range with this frame's span (a backward
				 * node inside its evaluate_function range), 0 none */
	uint8_t refined;	/* the twin's span came from its apply() frame instead */
};

struct pend_tensor {	/* a TENSOR record waiting for the rest of its op's arguments */
	uint16_t arg, list;
	uint8_t kind, dtype, ndim, flags;
	int64_t dims[ASC_TENSOR_DIMS];
};

#define MAX_PEND	32

struct tstate {
	uint32_t tid;
	uint32_t depth;
	struct frame *frames;	/* MAX_OPEN */
	int32_t last_op;	/* op created by the latest ENTER on this thread (for STACK) */
	int32_t enter_op;	/* the same, kept for TENSOR / PYSTACK records */
	uint32_t enter_probe;
	int32_t last_queue;	/* queues index of this thread's latest Enqueue QUEUE, or -1 */
	uint32_t last_queue_probe;
	uint64_t last_queue_ts;
	uint32_t npend;
	struct pend_tensor *pend;	/* MAX_PEND, allocated on first use */
	int32_t exit_op;	/* op closed by the latest EXIT on this thread (SEQNR follows it) */
	uint32_t exit_probe;
	struct pend_launch *launches;	/* MAX_PEND_LAUNCH, oldest first, allocated when used */
	uint32_t nlaunches;
	/*
	 * Level0 (no launch probed): the Dequeue slots seen since this thread's
	 * last halSqTaskSend (the slot open at that send counts as the first),
	 * their count and the op name they all share (WIN_MIXED if not).
	 */
	uint32_t win_cnt, win_name;
	int32_t win_last;
	/* the halSqTaskSend whose SQE records are being read (records 1..7 follow record 0) */
	uint64_t send_ts;
	uint32_t send_dev, send_n;
	int32_t send_alt;	/* alts[] index of header 0's context, -1 = none */
	uint8_t send_use_alt;	/* 1: headers take alts[], not the calls around the send */
	uint8_t send_per_header;	/* alts[send_alt + j] is header j's (else one for all) */
};

struct probe_info {
	uint16_t layer, kind;
	uint32_t name;		/* derived name string id (aten ops: on first use) */
	uint32_t sym, lib;	/* string ids of the symbol and library path */
	uint8_t named;		/* name is final */
	uint8_t is_launch_api;	/* aclnn* (not GetWorkspaceSize) / aclop*: names kernels */
	uint8_t level;		/* ASC_CORR_LEVEL_* for CANN probes */
	uint8_t known;
	uint8_t is_kernel_launch;	/* aclrtLaunchKernel*, rtKernelLaunch*: arg0 = handle */
	uint8_t producer;		/* PROD_*: the call queues exactly one task (SQE) */
	int8_t stream_arg;		/* argument holding the stream, -1 if unknown */
};

/*
 * Calls that queue one task on a stream: the runtime may hold the SQE and
 * send it later in one halSqTaskSend with others (NPU_MODEL_SQE_BATCH, the
 * real HAL's sqe_num > 1), so the call around the halSqTaskSend is not
 * always the call that made the task.  The class is what the SQE header
 * type must be.
 */
enum {
	PROD_NONE = 0,
	PROD_KERNEL,		/* header types 0, 1, 2 (AIC, AICPU, AIV) */
	PROD_EVENT_RECORD,	/* 4 */
	PROD_EVENT_WAIT,	/* 5 */
	PROD_COPY,		/* 11 (SDMA: async memcpy / memset) */
};

static uint8_t sqe_class(uint8_t sqe_type)
{
	switch (sqe_type) {
	case 0: case 1: case 2: return PROD_KERNEL;
	case 4: return PROD_EVENT_RECORD;
	case 5: return PROD_EVENT_WAIT;
	case 11: return PROD_COPY;
	default: return PROD_NONE;
	}
}

static const struct {
	const char *sym;
	uint8_t producer;
	int8_t stream_arg;
} producers[] = {
	{ "aclrtLaunchKernelWithHostArgs", PROD_KERNEL, 2 },
	{ "aclrtLaunchKernelWithConfig", PROD_KERNEL, 4 },
	{ "aclrtLaunchKernel", PROD_KERNEL, 4 },
	{ "rtsLaunchKernelWithHostArgs", PROD_KERNEL, 2 },
	{ "rtKernelLaunch", PROD_KERNEL, 5 },
	{ "aclrtRecordEvent", PROD_EVENT_RECORD, 1 },
	{ "rtEventRecord", PROD_EVENT_RECORD, 1 },
	{ "aclrtStreamWaitEvent", PROD_EVENT_WAIT, 0 },
	{ "rtStreamWaitEvent", PROD_EVENT_WAIT, 0 },
	{ "aclrtMemcpyAsync", PROD_COPY, 5 },
	{ "rtMemcpyAsync", PROD_COPY, 5 },
	{ "aclrtMemsetAsync", PROD_COPY, 4 },
	{ "rtMemsetAsync", PROD_COPY, 4 },
};

/* What a submitted task inherits from the call that made it. */
struct lctx {
	int32_t api, launch_call, op, queue, node_call;
	uint64_t handle;	/* function handle of the kernel launch, 0 if none */
	uint32_t kname;		/* kernel name of that handle when the launch was seen, 0 */
	uint32_t qname;		/* Level0 batch: the name all slots of the batch share, 0 */
	uint8_t cls;		/* PROD_* of the call that made the task */
};

/* A task-making call whose SQE has not been seen in a halSqTaskSend yet. */
struct pend_launch {
	struct lctx ctx;
	uint64_t stream;	/* the call's stream argument (0 if unknown) */
	int32_t call;		/* calls[] index of the (outermost) producer call */
	uint8_t cls;		/* PROD_* */
};

#define MAX_PEND_LAUNCH	256	/* per thread; the runtime holds at most 64 per stream */
#define MAX_SEND_SQES	(8 * ASC_MAX_SQES)	/* headers kept per halSqTaskSend */
#define WIN_MIXED	UINT32_MAX

struct sub {		/* one submitted task (SQE header) */
	int64_t ts;
	uint32_t tid;
	int32_t api, launch_call, op, queue;
	uint64_t handle;	/* function handle of the enclosing kernel launch, 0 if none */
	uint32_t kname;		/* kernel name of that handle when the SQE was seen, 0 */
	uint16_t block_dim;
	uint8_t sqe_type;
	uint8_t use_alt;	/* batched capture: take alt (the launch that made it) */
	int32_t alt;		/* alts[] index, -1: its launch is not known exactly */
	int32_t node_call;	/* outermost kernel launch call around the send, -1 */
};

struct devt {
	uint64_t start_cnt, end_cnt;
	uint32_t dev, wrap;
	uint16_t stream, task, type;
};

struct stackrec {
	int32_t op;
	uint32_t nr;
	uint64_t ips[ASC_STACK_DEPTH];
};

struct pystackrec {
	int32_t op;
	uint32_t nr;
	uint64_t code[ASC_PY_DEPTH];
	int32_t lasti[ASC_PY_DEPTH];
};

struct wrapstate {
	uint32_t last;
	uint32_t wrap;
	int seen;
};

struct priv {
	struct strtab strs;
	struct probe_info *probes;
	size_t nr_probes, probes_cap;
	struct tstate *threads;
	size_t nr_threads, threads_cap;
	struct hmap tid_index;		/* tid -> threads index */
	struct hmap queue_index;	/* correlation id -> queues index */
	struct hmap sub_index;		/* task key -> subs index */
	struct hmap sub_wraps;		/* (dev, stream) -> wrapstates index */
	struct hmap dev_wraps;
	struct wrapstate *wraps;
	size_t nr_wraps, wraps_cap;
	struct sub *subs;
	size_t nr_subs, subs_cap;
	struct lctx *alts;		/* launch contexts of batched submissions */
	size_t nr_alts, alts_cap;
	int saw_batch;			/* some halSqTaskSend carried more than one SQE */
	int have_producers;		/* a task-making call was seen (Level1+, or Level0 marks) */
	int have_marks;			/* Level0 launch marks (ASC_PK_LAUNCH_MARK) were seen */
	struct hmap mark_streams;	/* marks: stream argument -> SQE stream id, learned */
	struct devt *devts;
	size_t nr_devts, devts_cap;
	struct stackrec *stacks;
	size_t nr_stacks, stacks_cap;
	struct hmap symbols;		/* address -> string id */
	struct hmap funcnames;		/* kernel function handle -> kernel name string id */
	struct pystackrec *pystacks;
	size_t nr_pystacks, pystacks_cap;
	struct hmap pyframes;		/* pyframe_key(code, lasti) -> string id */
	struct hmap schemas;		/* library string id -> index into schema_libs */
	struct asc_aten_schemas **schema_libs;	/* NULL where the library cannot be read */
	size_t nr_schema_libs, schema_libs_cap;
	struct asc_aten_op *aten_op;	/* scratch for asc_aten_name() */
	char *scratch;			/* 8 KiB for building strings */
	int32_t *call_queue;		/* per call: queue index of the Dequeue it ran in */
	size_t call_queue_cap;
	size_t ops_cap, calls_cap, queues_cap, mems_cap, steps_cap, thr_cap, cfg_cap, cycles_cap;
	struct asc_seqnr_names *node_names;	/* backward node vtables (user/discovery/seqnr.h) */
	int node_names_tried;
	int64_t wall_off;		/* realtime - monotonic */
	int64_t max_mono;
	int64_t min_mono;
};

static int64_t dev_to_mono(const struct asc_corr *c, uint64_t cnt)
{
	const struct asc_corr_info *in = &c->info;
	__int128 d;

	if (!in->have_devclock || !in->devclock_freq_hz)
		return (int64_t)cnt;
	d = (__int128)((int64_t)(cnt - in->devclock_counter)) * 1000000000 /
	    (__int128)in->devclock_freq_hz;
	return in->devclock_mono_ns + (int64_t)d;
}

int64_t asc_corr_wall_ns(const struct asc_corr *c, uint64_t mono_ns)
{
	const struct priv *p = c->priv;

	return (int64_t)mono_ns + p->wall_off;
}

const char *asc_corr_str(const struct asc_corr *c, uint32_t id)
{
	const struct priv *p = c->priv;

	if (!p || id >= p->strs.nr)
		return "";
	return p->strs.arena + p->strs.offs[id];
}

const char *asc_corr_task_type_name(uint32_t t)
{
	switch (t) {
	case 0: return "AI_CORE";
	case 1: return "AI_CPU";
	case 2: return "AI_VECTOR_CORE";
	case 3: return "PLACE_HOLDER_SQE";
	case 4: return "EVENT_RECORD_SQE";
	case 5: return "EVENT_WAIT_SQE";
	case 8: return "WRITE_VALUE_SQE";
	case 11: return "SDMA_SQE";
	default: return "UNKNOWN";
	}
}

/* Name of a task that no API names, as msprof names such tasks. */
static const char *task_default_name(uint32_t t)
{
	switch (t) {
	case 3: return "PLACE_HOLDER";
	case 4: return "EVENT_RECORD";
	case 5: return "EVENT_WAIT";
	case 8: return "WRITE_VALUE";
	case 11: return "MEMCPY_ASYNC";
	default: return asc_corr_task_type_name(t);
	}
}

const char *asc_corr_thread_name(const struct asc_corr *c, uint32_t tid)
{
	size_t i;

	for (i = 0; i < c->nr_threads; i++)
		if (c->threads[i].tid == tid)
			return c->threads[i].comm;
	return "";
}

const char *asc_corr_config(const struct asc_corr *c, const char *key)
{
	size_t i, n = strlen(key);

	for (i = 0; i < c->nr_config; i++)
		if (!strncmp(c->config[i], key, n) && c->config[i][n] == '=')
			return c->config[i] + n + 1;
	return NULL;
}

/* ---- names ---- */

/*
 * "aten::<op>" from at::_ops::<op>_<overload>::call, mangled
 * (_ZN2at4_ops<len><name>4call...) or plain; NULL if sym is not one.
 */
static size_t aten_name(const char *sym, char *out, size_t outlen)
{
	const char *p, *name = NULL;
	size_t n = 0, cut;
	char *end;

	if (!strncmp(sym, "_ZN2at4_ops", 11)) {
		n = strtoul(sym + 11, &end, 10);
		if (!n || strlen(end) < n)
			return 0;
		name = end;
	} else if (!strncmp(sym, "at::_ops::", 10)) {
		name = sym + 10;
		p = strstr(name, "::");
		n = p ? (size_t)(p - name) : strlen(name);
	} else {
		return 0;
	}
	/* drop the overload: the last "_X..." with X upper case, or "_out" */
	for (cut = n; cut > 1; cut--) {
		if (name[cut - 1] != '_' || cut == n)
			continue;
		if ((name[cut] >= 'A' && name[cut] <= 'Z') ||
		    (n - cut == 3 && !memcmp(name + cut, "out", 3))) {
			n = cut - 1;
			break;
		}
	}
	if (n + 7 > outlen)
		n = outlen - 7;
	memcpy(out, "aten::", 6);
	memcpy(out + 6, name, n);
	out[6 + n] = '\0';
	return n + 6;
}

/*
 * A framework op that is not an at::_ops entry (torch_npu's custom ops such
 * as at_npu::native::custom_ops::npu_format_cast): torch_npu registers those
 * as "npu::<name>".  Other nested names become "ns::...::name".
 */
static size_t framework_op_name(const char *sym, char *out, size_t outlen)
{
	const char *p = sym + 3, *last = NULL;
	size_t len = 0, n, lastn = 0;
	int npu = !strncmp(sym, "_ZN6at_npu", 10);
	char *end;

	if (strncmp(sym, "_ZN", 3))
		return 0;
	out[0] = '\0';
	while (*p >= '1' && *p <= '9') {
		n = strtoul(p, &end, 10);
		if (strlen(end) < n)
			return 0;
		last = end;
		lastn = n;
		if (!npu && len + n + 3 < outlen) {
			len += snprintf(out + len, outlen - len, "%s%.*s", len ? "::" : "",
					(int)n, end);
		}
		p = end + n;
	}
	if (!last)
		return 0;
	if (npu)
		len = snprintf(out, outlen, "npu::%.*s", (int)lastn, last);
	return len < outlen ? len : outlen - 1;
}

static int add_probe(struct asc_corr *c, struct priv *p, const struct asc_probe *pr)
{
	uint32_t id = pr->hdr.probe_id;
	struct probe_info *pi;
	const char *sym = asc_probe_sym(pr);
	char buf[256];

	if (grow_array((void **)&p->probes, &p->probes_cap, (size_t)id + 1, sizeof(*p->probes)))
		return -ENOMEM;
	if (id >= p->nr_probes) {
		memset(p->probes + p->nr_probes, 0, (id + 1 - p->nr_probes) * sizeof(*p->probes));
		p->nr_probes = id + 1;
	}
	(void)c;
	pi = &p->probes[id];
	pi->known = 1;
	pi->layer = pr->layer;
	pi->kind = pr->kind;
	pi->sym = strtab_cstr(&p->strs, sym);
	pi->lib = strtab_cstr(&p->strs, asc_probe_lib(pr));
	pi->named = pr->kind != ASC_PK_ATEN_OP;
	if (pr->kind == ASC_PK_AUTOGRAD_EVAL)	/* each range is renamed by its SEQNR record */
		pi->name = strtab_cstr(&p->strs, "autograd::engine::evaluate_function");
	else if (pr->kind == ASC_PK_ATEN_OP && aten_name(sym, buf, sizeof(buf)))
		pi->name = strtab_cstr(&p->strs, buf);	/* refined on first use */
	else if (pr->kind == ASC_PK_ATEN_OP && framework_op_name(sym, buf, sizeof(buf)))
		pi->name = strtab_cstr(&p->strs, buf);
	else
		pi->name = pi->sym;
	if (pr->layer == ASC_LAYER_CANN) {
		pi->level = !strncmp(sym, "rt", 2) ? ASC_CORR_LEVEL_RUNTIME : ASC_CORR_LEVEL_ACL;
		pi->is_launch_api = (!strncmp(sym, "aclnn", 5) &&
				     !strstr(sym, "GetWorkspaceSize")) ||
				    !strncmp(sym, "aclopCompileAndExecute", 22) ||
				    !strncmp(sym, "aclopExecute", 12);
		pi->is_kernel_launch = !strncmp(sym, "aclrtLaunchKernel", 17) ||
				       !strncmp(sym, "rtKernelLaunch", 14) ||
				       !strncmp(sym, "rtsLaunchKernel", 15);
		pi->stream_arg = -1;
		for (size_t i = 0; i < sizeof(producers) / sizeof(producers[0]); i++) {
			if (strncmp(sym, producers[i].sym, strlen(producers[i].sym)))
				continue;
			pi->producer = producers[i].producer;
			/* a variant not in the table (aclrtLaunchKernelV2) keeps no stream */
			if (!strcmp(sym, producers[i].sym))
				pi->stream_arg = producers[i].stream_arg;
			break;
		}
		if (pi->is_kernel_launch && !pi->producer)
			pi->producer = PROD_KERNEL;
		/* LAUNCH records only: the span of a Node@launch, never an API event */
		if (pr->kind == ASC_PK_NODE_LAUNCH)
			pi->level = ASC_CORR_LEVEL_NODE;
	}
	return 0;
}

/*
 * torch's name of an aten op probe ("aten::transpose" for
 * at::_ops::transpose_int): from the schemas of the traced libtorch_cpu when
 * that file can still be read (the capture records its path), else from the
 * symbol alone (aten_name()).  Done on the first
 * ENTER of the probe: a capture lists every aten symbol, it uses few.
 */
static void name_aten_probe(struct asc_corr *c, struct priv *p, struct probe_info *pi)
{
	struct asc_aten_schemas *sch = NULL;
	const char *lib = asc_corr_str(c, pi->lib);
	uint64_t idx;

	pi->named = 1;
	if (!p->aten_op) {
		p->aten_op = malloc(sizeof(*p->aten_op));
		if (!p->aten_op)
			return;
	}
	if (hmap_get(&p->schemas, pi->lib, &idx)) {
		sch = p->schema_libs[idx];
	} else if (!grow_array((void **)&p->schema_libs, &p->schema_libs_cap,
			       p->nr_schema_libs + 1, sizeof(*p->schema_libs))) {
		if (*lib == '/' && !access(lib, R_OK))
			sch = asc_aten_schemas_load(lib);
		p->schema_libs[p->nr_schema_libs] = sch;
		hmap_put(&p->schemas, pi->lib, p->nr_schema_libs++);
	}
	/* only an exact (schema) answer replaces the symbol heuristic of add_probe() */
	if (sch && !asc_aten_name(sch, asc_corr_str(c, pi->sym), p->aten_op) &&
	    p->aten_op->exact && p->aten_op->name[0])
		pi->name = strtab_cstr(&p->strs, p->aten_op->name);
}

static const struct probe_info *probe_of(const struct priv *p, uint32_t id)
{
	return id < p->nr_probes && p->probes[id].known ? &p->probes[id] : NULL;
}

static struct tstate *thread_of(struct priv *p, uint32_t tid)
{
	struct tstate *t;
	uint64_t idx;

	if (hmap_get(&p->tid_index, tid, &idx))
		return &p->threads[idx];
	if (grow_array((void **)&p->threads, &p->threads_cap, p->nr_threads + 1,
		       sizeof(*p->threads)))
		return NULL;
	t = &p->threads[p->nr_threads];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->last_op = -1;
	t->enter_op = -1;
	t->last_queue = -1;
	t->exit_op = -1;
	t->win_last = -1;
	t->send_alt = -1;
	t->frames = malloc(MAX_OPEN * sizeof(*t->frames));
	if (!t->frames || hmap_put(&p->tid_index, tid, p->nr_threads)) {
		free(t->frames);
		return NULL;
	}
	p->nr_threads++;
	return t;
}

/* Innermost open frame of a kind, or NULL. */
static struct frame *open_frame(struct tstate *t, int kind)
{
	uint32_t i;

	for (i = t->depth; i-- > 0;)
		if (t->frames[i].kind == kind)
			return &t->frames[i];
	return NULL;
}

static int32_t open_item(struct tstate *t, int kind)
{
	struct frame *f = open_frame(t, kind);

	return f ? f->item : -1;
}

static uint64_t pyframe_key(uint64_t code, int32_t lasti)
{
	return code * 1000003ull + (uint32_t)lasti;
}

static int cmp_pend(const void *x, const void *y)
{
	const struct pend_tensor *a = x, *b = y;

	if (a->arg != b->arg)
		return a->arg < b->arg ? -1 : 1;
	return a->list < b->list ? -1 : a->list > b->list;
}

/* Appends the dims of one tensor ("32,3,224,224") to buf at *len. */
static void put_dims(char *buf, size_t cap, size_t *len, const struct pend_tensor *t)
{
	unsigned int i, n = t->ndim < ASC_TENSOR_DIMS ? t->ndim : ASC_TENSOR_DIMS;
	int k;

	if (t->kind != ASC_TENSOR_DEFINED)
		return;
	for (i = 0; i < n && *len < cap; i++) {
		k = snprintf(buf + *len, cap - *len, "%s%lld", i ? "," : "", (long long)t->dims[i]);
		if (k > 0)
			*len += (size_t)k < cap - *len ? (size_t)k : cap - *len - 1;
	}
}

static void put_str(char *buf, size_t cap, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (*len + n >= cap)
		n = cap - *len - 1;
	memcpy(buf + *len, s, n);
	*len += n;
	buf[*len] = '\0';
}

/*
 * Turns the TENSOR records of the thread's latest op into its "Input Dims"
 * and "Input type": arguments 0..last tensor argument joined by ";\r\n",
 * a Tensor[] argument as "[d,d],[d]".
 */
static void flush_tensors(struct asc_corr *c, struct priv *p, struct tstate *t)
{
	const size_t cap = 8192;
	char *dims = p->scratch, *types = p->scratch + cap;
	size_t dl = 0, tl = 0, i, j;
	unsigned int arg;

	if (!t->npend)
		return;
	if (t->enter_op < 0 || (size_t)t->enter_op >= c->nr_ops) {
		t->npend = 0;
		return;
	}
	qsort(t->pend, t->npend, sizeof(*t->pend), cmp_pend);
	dims[0] = types[0] = '\0';
	for (arg = 0, i = 0; i < t->npend; arg++) {
		if (arg) {
			put_str(dims, cap, &dl, ";\r\n");
			put_str(types, cap, &tl, ";\r\n");
		}
		for (j = i; j < t->npend && t->pend[j].arg == arg; j++)
			;
		if (j - i > 1 || (j > i && t->pend[i].list)) {
			size_t k;

			for (k = i; k < j; k++) {
				put_str(dims, cap, &dl, k > i ? ",[" : "[");
				put_dims(dims, cap, &dl, &t->pend[k]);
				put_str(dims, cap, &dl, "]");
			}
			put_str(types, cap, &tl, "TensorList");
		} else if (j > i) {
			const char *tn = t->pend[i].kind == ASC_TENSOR_DEFINED ?
					 asc_scalar_type_name(t->pend[i].dtype) : NULL;

			/* an empty optional is torch's None; an unreadable dtype stays empty */
			if (t->pend[i].kind == ASC_TENSOR_UNDEFINED)
				tn = "None";
			put_dims(dims, cap, &dl, &t->pend[i]);
			put_str(types, cap, &tl, tn ? tn : "");
		}
		i = j;
		if (arg > 1000)
			break;
	}
	c->ops[t->enter_op].input_dims = strtab_add(&p->strs, dims, dl);
	c->ops[t->enter_op].input_types = strtab_add(&p->strs, types, tl);
	t->npend = 0;
}

static int on_tensor(struct asc_corr *c, struct priv *p, const struct asc_tensor *r)
{
	struct tstate *t = thread_of(p, r->hdr.tid);
	struct pend_tensor *pt;

	(void)c;
	if (!t)
		return -ENOMEM;
	if (t->enter_op < 0 || t->enter_probe != r->hdr.probe_id || t->npend >= MAX_PEND)
		return 0;
	if (!t->pend) {
		t->pend = malloc(MAX_PEND * sizeof(*t->pend));
		if (!t->pend)
			return -ENOMEM;
	}
	pt = &t->pend[t->npend++];
	pt->arg = r->arg_index;
	pt->list = r->list_index;
	pt->kind = r->kind;
	pt->dtype = r->dtype;
	pt->ndim = r->ndim;
	pt->flags = r->flags;
	memcpy(pt->dims, r->dims, sizeof(pt->dims));
	return 0;
}

static int on_pystack(struct priv *p, const struct asc_pystack *r)
{
	struct tstate *t = thread_of(p, r->hdr.tid);
	struct pystackrec *ps;

	if (!t)
		return -ENOMEM;
	if (t->enter_op < 0 || t->enter_probe != r->hdr.probe_id || !r->nr)
		return 0;
	if (PUSH(p->pystacks, p->nr_pystacks, p->pystacks_cap, ps))
		return -ENOMEM;
	ps->op = t->enter_op;
	ps->nr = r->nr;
	memcpy(ps->code, r->code, r->nr * sizeof(r->code[0]));
	memcpy(ps->lasti, r->lasti, r->nr * sizeof(r->lasti[0]));
	return 0;
}

static int32_t queue_for(struct asc_corr *c, struct priv *p, uint64_t corr)
{
	struct asc_corr_queue *q;
	uint64_t idx;

	if (hmap_get(&p->queue_index, corr, &idx))
		return (int32_t)idx;
	if (PUSH(c->queues, c->nr_queues, p->queues_cap, q))
		return -1;
	q->correlation_id = corr;
	q->op = -1;
	q->step = -1;
	if (hmap_put(&p->queue_index, corr, c->nr_queues - 1))
		return -1;
	return (int32_t)(c->nr_queues - 1);
}

static uint32_t count_wrap(struct priv *p, struct hmap *m, uint32_t dev, uint32_t stream,
			   uint32_t task)
{
	uint64_t key = (uint64_t)dev << 32 | stream, idx;
	struct wrapstate *w;

	if (!hmap_get(m, key, &idx)) {
		if (grow_array((void **)&p->wraps, &p->wraps_cap, p->nr_wraps + 1,
			       sizeof(*p->wraps)) || hmap_put(m, key, p->nr_wraps))
			return 0;
		idx = p->nr_wraps++;
		memset(&p->wraps[idx], 0, sizeof(p->wraps[idx]));
	}
	w = &p->wraps[idx];
	if (w->seen && task < w->last && w->last - task > 0x8000)
		w->wrap++;
	w->seen = 1;
	w->last = task;
	return w->wrap;
}

static uint64_t task_key(uint32_t dev, uint32_t stream, uint32_t task, uint32_t wrap)
{
	return (uint64_t)(dev & 0xff) << 56 | (uint64_t)(wrap & 0xffffff) << 32 |
	       (uint64_t)(stream & 0xffff) << 16 | (task & 0xffff);
}

/*
 * What a task made now on thread t inherits from the calls open there: the
 * launching API (outermost aclnn / aclop, else outermost acl*, else the
 * innermost CANN call), the innermost CANN call, the aten op, the Dequeue
 * slot, the function handle of the innermost kernel launch and the
 * outermost kernel launch (Node@launch).
 */
static void ctx_from_stack(const struct priv *p, const struct tstate *t, struct lctx *x)
{
	uint32_t i;
	uint64_t v;

	memset(x, 0, sizeof(*x));
	x->api = x->launch_call = x->op = x->queue = x->node_call = -1;
	for (i = t->depth; i-- > 0;) {
		const struct frame *f = &t->frames[i];

		if (f->kind == FR_CALL && x->launch_call < 0)
			x->launch_call = f->item;
		if (f->kind == FR_OP && x->op < 0)
			x->op = f->item;
		if (f->kind == FR_DEQ && x->queue < 0)
			x->queue = f->item;
		if (f->kind == FR_CALL && p->probes[f->probe_id].is_kernel_launch) {
			if (!x->handle)
				x->handle = f->arg0;
			x->node_call = f->item;		/* ends as the outermost */
		}
	}
	if (x->handle && hmap_get(&p->funcnames, x->handle, &v))
		x->kname = (uint32_t)v;
	for (i = 0; i < t->depth; i++) {
		const struct frame *f = &t->frames[i];

		if (f->kind == FR_CALL && p->probes[f->probe_id].is_launch_api) {
			x->api = f->item;
			break;
		}
	}
	for (i = 0; x->api < 0 && i < t->depth; i++) {
		const struct frame *f = &t->frames[i];

		if (f->kind == FR_CALL && p->probes[f->probe_id].level == ASC_CORR_LEVEL_ACL)
			x->api = f->item;
	}
	if (x->api < 0)
		x->api = x->launch_call;
}

/* The outermost open task-making call on t, or NULL. */
static const struct frame *open_producer(const struct priv *p, const struct tstate *t)
{
	uint32_t i;

	for (i = 0; i < t->depth; i++)
		if (t->frames[i].kind == FR_CALL && p->probes[t->frames[i].probe_id].producer)
			return &t->frames[i];
	return NULL;
}

static struct pend_launch *pending_of_call(struct tstate *t, int32_t call)
{
	uint32_t i;

	for (i = t->nlaunches; i-- > 0;)
		if (t->launches[i].call == call)
			return &t->launches[i];
	return NULL;
}

static void drop_pending(struct tstate *t, uint32_t i)
{
	memmove(&t->launches[i], &t->launches[i + 1],
		(t->nlaunches - i - 1) * sizeof(*t->launches));
	t->nlaunches--;
}

/*
 * ENTER of a task-making call (the frame is already pushed): its task is
 * pending until a halSqTaskSend carries it.  A producer inside another
 * (aclrtLaunchKernel -> rtsLaunchKernelWithHostArgs at Level2) makes the same
 * task: only the innermost CANN call is updated.
 */
static int on_producer_enter(struct priv *p, struct tstate *t, const struct asc_hdr *h,
			     const struct probe_info *pi, int32_t call)
{
	const struct frame *outer = open_producer(p, t);
	struct pend_launch *pl;

	p->have_producers = 1;

	if (outer && outer->item != call) {
		pl = pending_of_call(t, outer->item);
		if (pl)
			pl->ctx.launch_call = call;
		return 0;
	}
	if (!t->launches) {
		t->launches = malloc(MAX_PEND_LAUNCH * sizeof(*t->launches));
		if (!t->launches)
			return -ENOMEM;
	}
	if (t->nlaunches == MAX_PEND_LAUNCH)
		drop_pending(t, 0);	/* never sent (or sent unseen): the oldest goes */
	pl = &t->launches[t->nlaunches++];
	ctx_from_stack(p, t, &pl->ctx);
	pl->call = call;
	pl->cls = pi->producer;
	pl->ctx.cls = pi->producer;
	pl->stream = 0;
	if (pi->stream_arg >= 0 && h->size >= sizeof(struct asc_enter))
		pl->stream = ((const struct asc_enter *)h)->args[pi->stream_arg];
	return 0;
}

/*
 * Takes the pending launches of thread t on stream for a halSqTaskSend of n
 * SQEs (s: its first record): the n latest, in order, when there are at
 * least n (exact: exactly n) and the kept headers' types agree with them.
 * out == NULL only tests.  Taking drops the older ones of that stream too:
 * the runtime sends a stream's SQEs in order, so they were sent already.
 */
static int take_pending(struct tstate *t, uint64_t stream, uint32_t n, const struct asc_sqe *s,
			int exact, struct lctx *out)
{
	uint32_t idx[MAX_PEND_LAUNCH], cnt = 0, i, k;

	for (i = 0; i < t->nlaunches; i++)
		if (t->launches[i].stream == stream)
			idx[cnt++] = i;
	if (!n || cnt < n || (exact && cnt != n))
		return 0;
	for (i = 0; i < s->nr_kept && i < n; i++)
		if (t->launches[idx[cnt - n + i]].cls != sqe_class(s->sqe[i].sqe_type))
			return 0;
	if (!out)
		return 1;
	for (i = 0; i < n; i++)
		out[i] = t->launches[idx[cnt - n + i]].ctx;
	for (i = 0, k = 0; i < t->nlaunches; i++)
		if (t->launches[i].stream != stream)
			t->launches[k++] = t->launches[i];
	t->nlaunches = k;
	return 1;
}

/*
 * The launches of a halSqTaskSend of n SQEs on thread t that carries more
 * than its own call's task: first the pending tasks of the stream of the
 * producer open around it (a launch that fills the batch sends its own
 * stream), else the one (thread, stream) whose pending tasks are exactly n
 * (a synchronize, an event wait flushing another stream).  Fills out[0..n);
 * 0 if no such set exists or more than one does.
 */
static int batch_launches(struct priv *p, struct tstate *t, uint32_t n, const struct asc_sqe *s,
			  struct lctx *out)
{
	const struct frame *pf = open_producer(p, t);
	struct tstate *found = NULL;
	uint64_t fstream = 0;
	size_t ti;
	uint32_t i, j;
	int matches = 0;

	if (pf) {
		struct pend_launch *pl = pending_of_call(t, pf->item);

		if (pl && take_pending(t, pl->stream, n, s, 0, out))
			return 1;
	}
	for (ti = 0; ti < p->nr_threads && matches < 2; ti++) {
		struct tstate *o = &p->threads[ti];

		for (i = 0; i < o->nlaunches && matches < 2; i++) {
			for (j = 0; j < i && o->launches[j].stream != o->launches[i].stream; j++)
				;
			if (j < i)
				continue;	/* stream already tried */
			if (take_pending(o, o->launches[i].stream, n, s, 1, NULL)) {
				matches++;
				found = o;
				fstream = o->launches[i].stream;
			}
		}
	}
	if (matches != 1)
		return 0;
	return take_pending(found, fstream, n, s, 1, out);
}

static uint32_t stream_pending(const struct tstate *t, uint64_t stream)
{
	uint32_t i, n = 0;

	for (i = 0; i < t->nlaunches; i++)
		n += t->launches[i].stream == stream;
	return n;
}

/*
 * Whether the pending launches of t on stream, fewer than the n SQEs of s,
 * can be the last ones of the send: their classes agree with the headers
 * they would be (those kept in s; beyond them nothing is known).
 */
static int tail_agrees(const struct tstate *t, uint64_t stream, uint32_t n,
		       const struct asc_sqe *s)
{
	uint32_t i, j = 0, cnt = stream_pending(t, stream);

	if (!cnt || cnt >= n)
		return 0;
	for (i = 0; i < t->nlaunches; i++) {
		uint32_t h;

		if (t->launches[i].stream != stream)
			continue;
		h = n - cnt + j++;
		if (h < s->nr_kept && t->launches[i].cls != sqe_class(s->sqe[h].sqe_type))
			return 0;
	}
	return 1;
}

static void drop_stream(struct tstate *t, uint64_t stream)
{
	uint32_t i, k;

	for (i = 0, k = 0; i < t->nlaunches; i++)
		if (t->launches[i].stream != stream)
			t->launches[k++] = t->launches[i];
	t->nlaunches = k;
}

/*
 * Level0 launch marks (entry only, so no launch is "open" around a send):
 * the launches of a halSqTaskSend of n SQEs of hardware stream sid.
 * A stream argument whose sid was learned from an earlier exact match: on
 * the thread that sends, its n latest pending launches (a launch that fills
 * the batch sends inside itself; older ones were sent already), fewer than
 * n: launches made before the marks were attached are in the batch, so
 * none is taken and those pending are dropped; from another thread (a
 * synchronize flushing it) exactly n.  An unlearned stream: the one
 * (thread, stream) with exactly n pending (then sid is learned), else, on
 * the sending thread, its only unlearned stream with fewer than n pending
 * that can end the batch (tail_agrees) is dropped (the batch that straddles
 * the switch-on).  0: not known.
 */
static int mark_launches(struct priv *p, struct tstate *t, uint32_t n, const struct asc_sqe *s,
			 struct lctx *out)
{
	struct tstate *known = NULL, *match = NULL, *only = NULL;
	uint64_t kstream = 0, mstream = 0, ostream = 0, v;
	uint32_t sid, i, j, nknown = 0, nonly = 0;
	size_t ti;
	int matches = 0;

	if (!s->nr_kept)
		return 0;
	sid = s->sqe[0].stream_id;
	for (ti = 0; ti < p->nr_threads; ti++) {
		struct tstate *o = &p->threads[ti];

		for (i = 0; i < o->nlaunches; i++) {
			uint64_t st = o->launches[i].stream;

			for (j = 0; j < i && o->launches[j].stream != st; j++)
				;
			if (j < i)
				continue;	/* stream already seen */
			if (hmap_get(&p->mark_streams, st, &v)) {
				if (v == sid) {
					nknown++;
					known = o;
					kstream = st;
				}
				continue;
			}
			if (o == t && tail_agrees(o, st, n, s)) {
				nonly++;
				only = o;
				ostream = st;
			}
			if (matches < 2 && take_pending(o, st, n, s, 1, NULL)) {
				matches++;
				match = o;
				mstream = st;
			}
		}
	}
	if (nknown == 1) {
		if (known != t)
			return take_pending(known, kstream, n, s, 1, out);
		if (stream_pending(known, kstream) < n) {
			drop_stream(known, kstream);
			return 0;
		}
		return take_pending(known, kstream, n, s, 0, out);
	}
	if (nknown > 1)
		return 0;
	if (matches == 1) {
		if (hmap_put(&p->mark_streams, mstream, sid))
			return 0;
		return take_pending(match, mstream, n, s, 1, out);
	}
	if (!matches && nonly == 1)
		drop_stream(only, ostream);
	return 0;
}

static int on_enter(struct asc_corr *c, struct priv *p, const struct asc_hdr *h);
static void on_exit_rec(struct asc_corr *c, struct priv *p, const struct asc_exit *e);

/*
 * ASC_REC_LAUNCH.  A mark (ASC_PK_LAUNCH_MARK) is a pending launch of its
 * thread and stream with what is open there (op, Dequeue slot), no call.
 * A node launch (ASC_PK_NODE_LAUNCH) is traced as a call of its own level
 * (ASC_CORR_LEVEL_NODE: its Node@launch and the kernel's HostToDevice start,
 * no API event), through the ENTER / EXIT handlers.
 */
static int on_launch(struct asc_corr *c, struct priv *p, const struct asc_launch *l)
{
	const struct probe_info *pi = probe_of(p, l->hdr.probe_id);
	struct pend_launch *pl;
	struct tstate *t;

	if (!pi)
		return 0;
	if (pi->kind == ASC_PK_NODE_LAUNCH) {
		if (l->side == ASC_LAUNCH_ENTRY) {
			struct asc_enter e;

			memset(&e, 0, sizeof(e));
			e.hdr = l->hdr;
			e.hdr.type = ASC_REC_ENTER;
			e.hdr.size = sizeof(e);
			e.args[0] = l->handle;
			if (pi->stream_arg >= 0 && pi->stream_arg < ASC_MAX_ARGS)
				e.args[pi->stream_arg] = l->stream;
			return on_enter(c, p, &e.hdr);
		} else {
			struct asc_exit x;

			memset(&x, 0, sizeof(x));
			x.hdr = l->hdr;
			x.hdr.type = ASC_REC_EXIT;
			x.hdr.size = sizeof(x);
			x.ret = l->ret;
			on_exit_rec(c, p, &x);
			return 0;
		}
	}
	if (pi->kind != ASC_PK_LAUNCH_MARK || l->side != ASC_LAUNCH_ENTRY || !pi->producer)
		return 0;
	t = thread_of(p, l->hdr.tid);
	if (!t)
		return -ENOMEM;
	if (!t->launches) {
		t->launches = malloc(MAX_PEND_LAUNCH * sizeof(*t->launches));
		if (!t->launches)
			return -ENOMEM;
	}
	p->have_producers = 1;
	p->have_marks = 1;
	if (t->nlaunches == MAX_PEND_LAUNCH)
		drop_pending(t, 0);
	pl = &t->launches[t->nlaunches++];
	ctx_from_stack(p, t, &pl->ctx);
	pl->call = -1;
	pl->cls = pi->producer;
	pl->ctx.cls = pi->producer;
	pl->stream = l->stream;
	return 0;
}

/* Level0: a Dequeue slot joins the thread's batch window. */
static void window_add(const struct asc_corr *c, struct tstate *t, int32_t q)
{
	uint32_t name = c->queues[q].name;

	if (q == t->win_last)
		return;
	t->win_last = q;
	if (!t->win_cnt++)
		t->win_name = name ? name : WIN_MIXED;
	else if (t->win_name != name)
		t->win_name = WIN_MIXED;
}

/* ---- record handlers ---- */

/*
 * The first apply() entered directly inside an evaluate_function range is
 * its node's (Node::operator() records the node's range around it): the
 * node's range (the frame's twin) gets apply's span.
 */
static void node_apply(struct asc_corr *c, struct priv *p, struct tstate *t, struct frame *apply)
{
	struct frame *ev = open_frame(t, FR_OP);
	const struct probe_info *pi = ev ? probe_of(p, ev->probe_id) : NULL;

	if (!pi || pi->kind != ASC_PK_AUTOGRAD_EVAL || !ev->twin || ev->refined)
		return;
	ev->refined = 1;
	apply->twin = ev->twin;
	c->ops[ev->twin - 1].start_ns = apply->start;
}

static int on_enter(struct asc_corr *c, struct priv *p, const struct asc_hdr *h)
{
	const struct probe_info *pi = probe_of(p, h->probe_id);
	struct tstate *t;
	struct frame *f;
	int kind;

	if (!pi)
		return 0;
	if (!pi->named)
		name_aten_probe(c, p, &p->probes[h->probe_id]);
	switch (pi->kind) {
	case ASC_PK_ATEN_OP:
	case ASC_PK_AUTOGRAD_EVAL:
		kind = FR_OP;
		break;
	case ASC_PK_ENQUEUE:
		kind = FR_ENQ;
		break;
	case ASC_PK_DEQUEUE:
		kind = FR_DEQ;
		break;
	case ASC_PK_STEP:
	case ASC_PK_MEM_REPORT:
		return 0;
	default:
		kind = pi->layer == ASC_LAYER_CANN ? FR_CALL : FR_OTHER;
		break;
	}
	t = thread_of(p, h->tid);
	if (!t)
		return -ENOMEM;
	flush_tensors(c, p, t);
	t->enter_op = -1;
	if (t->depth >= MAX_OPEN)
		return 0;
	f = &t->frames[t->depth];
	memset(f, 0, sizeof(*f));
	f->probe_id = h->probe_id;
	f->kind = kind;
	f->item = -1;
	f->start = h->ts_ns;
	if (h->size >= sizeof(struct asc_enter))
		f->arg0 = ((const struct asc_enter *)h)->args[0];
	if (kind == FR_OP) {
		struct asc_corr_op *o;

		if (PUSH(c->ops, c->nr_ops, p->ops_cap, o))
			return -ENOMEM;
		o->start_ns = o->end_ns = h->ts_ns;
		o->tid = h->tid;
		o->name = pi->name;
		o->seq = -1;
		o->parent = -1;
		o->step = -1;
		o->flags = ASC_CORR_O_NO_EXIT;
		f->item = c->nr_ops - 1;
		t->last_op = f->item;
		t->enter_op = f->item;
		t->enter_probe = h->probe_id;
	} else if (kind == FR_CALL) {
		struct asc_corr_call *k;

		if (PUSH(c->calls, c->nr_calls, p->calls_cap, k))
			return -ENOMEM;
		if (grow_array((void **)&p->call_queue, &p->call_queue_cap, c->nr_calls,
			       sizeof(*p->call_queue)))
			return -ENOMEM;
		k->start_ns = k->end_ns = h->ts_ns;
		k->tid = h->tid;
		k->name = pi->name;
		k->probe_id = h->probe_id;
		k->level = pi->level;
		k->parent = open_item(t, FR_CALL);
		k->op = open_item(t, FR_OP);
		k->step = -1;
		p->call_queue[c->nr_calls - 1] = open_item(t, FR_DEQ);
		f->item = c->nr_calls - 1;
		t->last_op = -1;
	} else {
		t->last_op = -1;
		if (pi->kind == ASC_PK_AUTOGRAD_APPLY)
			node_apply(c, p, t, f);
	}
	t->depth++;
	if (kind == FR_CALL && pi->producer)
		return on_producer_enter(p, t, h, pi, f->item);
	return 0;
}

static void on_exit_rec(struct asc_corr *c, struct priv *p, const struct asc_exit *e)
{
	const struct asc_hdr *h = &e->hdr;
	struct tstate *t = thread_of(p, h->tid);
	uint32_t i;

	if (!t)
		return;
	flush_tensors(c, p, t);
	for (i = t->depth; i-- > 0;)
		if (t->frames[i].probe_id == h->probe_id)
			break;
	if (i == (uint32_t)-1)
		return;		/* exit without a captured entry */
	/* frames above i lost their exits: they keep end = start and NO_EXIT */
	{
		struct frame *f = &t->frames[i];

		switch (f->kind) {
		case FR_OP:
			c->ops[f->item].end_ns = h->ts_ns;
			c->ops[f->item].flags &= ~ASC_CORR_O_NO_EXIT;
			if (f->twin && !f->refined) {
				c->ops[f->twin - 1].end_ns = h->ts_ns;
				c->ops[f->twin - 1].flags &= ~ASC_CORR_O_NO_EXIT;
			}
			t->exit_op = f->item;
			t->exit_probe = h->probe_id;
			break;
		case FR_CALL:
			c->calls[f->item].end_ns = h->ts_ns;
			c->calls[f->item].ret = (int64_t)e->ret;
			/* a failed launch queued nothing (aclError / rtError_t: 32 bits) */
			if ((uint32_t)e->ret && p->probes[f->probe_id].producer) {
				struct pend_launch *pl = pending_of_call(t, f->item);

				if (pl)
					drop_pending(t, (uint32_t)(pl - t->launches));
			}
			break;
		case FR_ENQ:
			if (f->item >= 0) {
				c->queues[f->item].enq_start_ns = f->start;
				c->queues[f->item].enq_end_ns = h->ts_ns;
			}
			break;
		case FR_DEQ:
			if (f->item >= 0) {
				c->queues[f->item].deq_start_ns = f->start;
				c->queues[f->item].deq_end_ns = h->ts_ns;
			}
			break;
		case FR_OTHER:	/* a backward node's apply(): the node's own range */
			if (f->twin) {
				c->ops[f->twin - 1].end_ns = h->ts_ns;
				c->ops[f->twin - 1].flags &= ~ASC_CORR_O_NO_EXIT;
			}
			break;
		}
	}
	t->depth = i;
}

static void on_opname(struct asc_corr *c, struct priv *p, const struct asc_opname *o)
{
	struct tstate *t = thread_of(p, o->hdr.tid);
	size_t n = strnlen(o->name, o->len);
	uint32_t i, id;

	if (!t)
		return;
	id = strtab_add(&p->strs, o->name, n);
	for (i = t->depth; i-- > 0;) {
		struct frame *f = &t->frames[i];

		if (f->probe_id != o->hdr.probe_id)
			continue;
		f->name = id;
		if (f->kind == FR_CALL)
			c->calls[f->item].opname = id;
		else if (f->kind == FR_OP && id)
			c->ops[f->item].name = id;
		else if (f->kind == FR_ENQ && f->item >= 0 && id)
			c->queues[f->item].name = id;	/* slot's op name, after its QUEUE */
		return;
	}
	/* an Enqueue probe without ENTER/EXIT: the OPNAME follows its QUEUE (same probe, ts) */
	if (t->last_queue >= 0 && t->last_queue_probe == o->hdr.probe_id &&
	    t->last_queue_ts == o->hdr.ts_ns && id)
		c->queues[t->last_queue].name = id;
}

/*
 * ASC_REC_SEQNR (user/discovery/seqnr.h): FORWARD numbers the op its EXIT just closed;
 * NODE names the open range of its evaluate_function probe and adds the
 * node's range inside it (same span, closed with it: the frame's twin).
 */
static int on_seqnr(struct asc_corr *c, struct priv *p, const struct asc_seqnr *r)
{
	struct tstate *t = thread_of(p, r->hdr.tid);
	const char *node = NULL;
	struct asc_corr_op *o;
	struct frame *f;
	char buf[320];
	uint32_t i;

	if (!t)
		return -ENOMEM;
	if (r->kind == ASC_SEQNR_FORWARD) {
		if (t->exit_op >= 0 && t->exit_probe == r->hdr.probe_id)
			c->ops[t->exit_op].seq = r->seq;
		return 0;
	}
	for (i = t->depth; i-- > 0;)
		if (t->frames[i].probe_id == r->hdr.probe_id && t->frames[i].kind == FR_OP)
			break;
	if (i == (uint32_t)-1 || r->kind != ASC_SEQNR_NODE || t->frames[i].twin)
		return 0;
	if (!p->node_names_tried) {
		p->node_names_tried = 1;
		p->node_names = asc_seqnr_names_from_config(
			asc_corr_config(c, "pytorch_autograd_lib"),
			asc_corr_config(c, "pytorch_autograd_bias"));
	}
	if (p->node_names && r->vptr)
		node = asc_seqnr_names_get(p->node_names, r->vptr);
	if (!node)
		node = ASC_NODE_UNKNOWN;
	f = &t->frames[i];
	snprintf(buf, sizeof(buf), "%s%s", ASC_EVAL_PREFIX, node);
	c->ops[f->item].name = strtab_cstr(&p->strs, buf);
	if (PUSH(c->ops, c->nr_ops, p->ops_cap, o))
		return -ENOMEM;
	*o = c->ops[f->item];		/* start, tid, step, NO_EXIT until the EXIT */
	o->name = strtab_cstr(&p->strs, node);
	o->seq = r->seq;
	o->fwd_tid = r->fwd_tid;
	f->twin = c->nr_ops;		/* after it in ops[]: sorted inside it */
	return 0;
}

/* The name of the innermost open frame that captured an OPNAME (RunOpApiV2's op). */
static uint32_t open_name(struct tstate *t)
{
	uint32_t i;

	for (i = t->depth; i-- > 0;)
		if (t->frames[i].name)
			return t->frames[i].name;
	return 0;
}

static int on_queue(struct asc_corr *c, struct priv *p, const struct asc_queue *q)
{
	struct tstate *t = thread_of(p, q->hdr.tid);
	struct asc_corr_queue *qq;
	struct frame *f;
	int32_t idx;

	if (!t)
		return -ENOMEM;
	idx = queue_for(c, p, q->correlation_id);
	if (idx < 0)
		return -ENOMEM;
	qq = &c->queues[idx];
	qq->param_type = q->param_type;
	t->last_queue = q->side == ASC_QUEUE_ENQUEUE ? idx : -1;
	t->last_queue_probe = q->hdr.probe_id;
	t->last_queue_ts = q->hdr.ts_ns;
	if (q->side == ASC_QUEUE_ENQUEUE) {
		f = open_frame(t, FR_ENQ);
		qq->enq_tid = q->hdr.tid;
		qq->enq_start_ns = f ? f->start : (int64_t)q->hdr.ts_ns;
		qq->enq_end_ns = qq->enq_start_ns;
		qq->op = open_item(t, FR_OP);
		if (!qq->name)
			qq->name = open_name(t);
	} else {
		f = open_frame(t, FR_DEQ);
		qq->deq_tid = q->hdr.tid;
		qq->deq_start_ns = f ? f->start : (int64_t)q->hdr.ts_ns;
		qq->deq_end_ns = qq->deq_start_ns;
		window_add(c, t, idx);
	}
	if (f)
		f->item = idx;
	return 0;
}

static int32_t push_alts(struct priv *p, const struct lctx *x, uint32_t n)
{
	if (grow_array((void **)&p->alts, &p->alts_cap, p->nr_alts + n, sizeof(*p->alts)))
		return -1;
	memcpy(p->alts + p->nr_alts, x, n * sizeof(*x));
	p->nr_alts += n;
	return (int32_t)(p->nr_alts - n);
}

/*
 * Record 0 of a halSqTaskSend of n SQEs: decides where its tasks come from.
 * The enclosure (the calls open around the send) is exact when the runtime
 * sends every task inside the call that made it; whether it does is only
 * known at the end (priv.saw_batch), so the batch answer is kept beside it
 * (send_use_alt).  Level1+: the pending launches (batch_launches()).
 * Level0, where no launch is probed: the send is the open slot's alone when
 * that slot is the only one since the thread's last send; else the tasks
 * cannot be split among the slots, and only a name that all of them share
 * is kept.  Level0 with launch marks: mark_launches(), else as without.
 */
static int send_begin(struct asc_corr *c, struct priv *p, struct tstate *t, const struct asc_sqe *s)
{
	uint32_t n = s->sqe_num < MAX_SEND_SQES ? s->sqe_num : MAX_SEND_SQES;
	const struct frame *pf = open_producer(p, t);
	struct lctx ctx[MAX_SEND_SQES];
	int32_t deq = open_item(t, FR_DEQ);

	(void)c;
	t->send_ts = s->hdr.ts_ns;
	t->send_dev = s->dev_id;
	t->send_n = s->sqe_num;
	t->send_alt = -1;
	t->send_use_alt = 0;
	t->send_per_header = 0;
	if (s->sqe_num > 1)
		p->saw_batch = 1;
	if (p->have_marks && !pf) {
		/* Level0 launch marks; without an exact answer, the answer without them */
		if (n && mark_launches(p, t, n, s, ctx)) {
			t->send_use_alt = 1;
			t->send_alt = push_alts(p, ctx, n);
			t->send_per_header = 1;
			if (t->send_alt < 0)
				return -ENOMEM;
			goto next_window;
		}
	} else if (p->have_producers) {
		struct pend_launch *own = pf ? pending_of_call(t, pf->item) : NULL;

		/* the producer's own task sent inside it: the enclosure, as unbatched */
		if (n == 1 && own && own->cls == sqe_class(s->sqe[0].sqe_type) &&
		    own == &t->launches[t->nlaunches - 1]) {
			take_pending(t, own->stream, 1, s, 0, ctx);
			return 0;
		}
		t->send_use_alt = 1;
		if (n && batch_launches(p, t, n, s, ctx)) {
			t->send_alt = push_alts(p, ctx, n);
			t->send_per_header = 1;
			if (t->send_alt < 0)
				return -ENOMEM;
		}
		return 0;
	}
	if (deq >= 0 && t->win_cnt == 1 && t->win_last == deq) {
		/* the enclosure */
	} else {
		struct tstate *o = t;
		uint32_t name = 0;

		t->send_use_alt = 1;
		if (deq < 0 && !t->win_cnt) {
			/* sent from outside any slot (a synchronize): the one thread with slots */
			size_t i;

			o = NULL;
			for (i = 0; i < p->nr_threads; i++) {
				if (!p->threads[i].win_cnt)
					continue;
				o = o ? NULL : &p->threads[i];
				if (!o)
					break;
			}
		}
		if (o && o->win_cnt && o->win_name != WIN_MIXED)
			name = o->win_name;
		if (o && o != t) {
			o->win_cnt = 0;
			o->win_last = -1;
		}
		if (name) {
			memset(ctx, 0, sizeof(ctx[0]));
			ctx[0].api = ctx[0].launch_call = ctx[0].op = ctx[0].queue = -1;
			ctx[0].node_call = -1;
			ctx[0].qname = name;
			t->send_alt = push_alts(p, ctx, 1);
			if (t->send_alt < 0)
				return -ENOMEM;
		}
	}
next_window:
	/* the slot open now may still make tasks: it starts the next window */
	t->win_cnt = 0;
	t->win_last = -1;
	if (deq >= 0)
		window_add(c, t, deq);
	return 0;
}

static int on_sqe(struct asc_corr *c, struct priv *p, const struct asc_sqe *s)
{
	struct tstate *t = thread_of(p, s->hdr.tid);
	struct lctx enc;
	uint32_t i, first;
	int ret;

	if (!t)
		return -ENOMEM;
	/* records 1.. of a call: same thread and ts, sqe_num counts from their first header */
	if (t->send_ts == s->hdr.ts_ns && t->send_dev == s->dev_id && s->sqe_num < t->send_n) {
		first = t->send_n - s->sqe_num;
	} else {
		ret = send_begin(c, p, t, s);
		if (ret)
			return ret;
		first = 0;
	}
	ctx_from_stack(p, t, &enc);
	for (i = 0; i < s->nr_kept; i++) {
		const struct asc_sqe_hdr *q = &s->sqe[i];
		uint32_t wrap = count_wrap(p, &p->sub_wraps, s->dev_id, q->stream_id, q->task_id);
		uint32_t j = first + i;
		struct sub *sb;

		if (PUSH(p->subs, p->nr_subs, p->subs_cap, sb))
			return -ENOMEM;
		sb->ts = s->hdr.ts_ns;
		sb->tid = s->hdr.tid;
		sb->api = enc.api;
		sb->launch_call = enc.launch_call;
		sb->op = enc.op;
		sb->queue = enc.queue;
		sb->handle = enc.handle;
		sb->kname = enc.kname;
		sb->node_call = enc.node_call;
		sb->block_dim = q->block_dim;
		sb->sqe_type = q->sqe_type;
		sb->use_alt = t->send_use_alt;
		sb->alt = -1;
		if (t->send_alt >= 0 && !t->send_per_header)
			sb->alt = t->send_alt;
		else if (t->send_alt >= 0 && j < MAX_SEND_SQES && j < t->send_n &&
			 p->alts[t->send_alt + j].cls == sqe_class(q->sqe_type))
			sb->alt = t->send_alt + (int32_t)j;
		if (hmap_put(&p->sub_index, task_key(s->dev_id, q->stream_id, q->task_id, wrap),
			     p->nr_subs - 1))
			return -ENOMEM;
	}
	return 0;
}

static int on_mem(struct asc_corr *c, struct priv *p, const struct asc_mem *m)
{
	struct tstate *t = thread_of(p, m->hdr.tid);
	struct asc_corr_mem *o;

	if (!t || PUSH(c->mems, c->nr_mems, p->mems_cap, o))
		return -ENOMEM;
	o->ts_ns = m->hdr.ts_ns;
	o->ptr = m->ptr;
	o->size = m->size;
	o->total_allocated = m->total_allocated;
	o->total_reserved = m->total_reserved;
	o->total_active = m->total_active;
	o->stream = m->stream;
	o->tid = m->hdr.tid;
	o->device = m->device;
	o->component = m->component;
	o->data_type = m->data_type;
	o->op = open_item(t, FR_OP);
	o->step = -1;
	return 0;
}

static int on_stack(struct priv *p, const struct asc_stack *s)
{
	struct tstate *t = thread_of(p, s->hdr.tid);
	struct stackrec *sr;

	if (!t)
		return -ENOMEM;
	if (t->last_op < 0)
		return 0;
	if (PUSH(p->stacks, p->nr_stacks, p->stacks_cap, sr))
		return -ENOMEM;
	sr->op = t->last_op;
	sr->nr = s->nr;
	memcpy(sr->ips, s->ips, s->nr * sizeof(s->ips[0]));
	t->last_op = -1;
	return 0;
}

/* The checks asc_rec_check() makes for fixed-size records with a name: -EBADMSG or 0. */
static int funcname_check(const void *rec, size_t size)
{
	const struct asc_funcname *f = rec;

	if (size != sizeof(*f) || f->hdr.size != sizeof(*f) || f->len > ASC_NAME_LEN)
		return -EBADMSG;
	return 0;
}

/* A kernel function handle -> name; a later record for the same handle wins. */
static int on_funcname(struct priv *p, const struct asc_funcname *f)
{
	size_t n = strnlen(f->name, f->len);

	if (!f->handle || !n)
		return 0;
	return hmap_put(&p->funcnames, f->handle, strtab_add(&p->strs, f->name, n));
}

static int on_record(struct asc_corr *c, struct priv *p, const void *rec, size_t size)
{
	const struct asc_hdr *h = rec;
	int ret;

	ret = asc_rec_check(rec, size, NULL, 0);
	if (ret == 1 && h->type == ASC_REC_FUNCNAME)
		ret = funcname_check(rec, size);	/* until records.c knows the type */
	c->info.records++;
	if (ret < 0) {
		c->info.bad_records++;
		return 0;
	}
	if (ret == 1) {
		c->info.unknown_records++;
		return 0;
	}
	if (h->type < ASC_REC_USER_BASE && h->ts_ns) {
		if ((int64_t)h->ts_ns > p->max_mono)
			p->max_mono = h->ts_ns;
		if (!p->min_mono || (int64_t)h->ts_ns < p->min_mono)
			p->min_mono = h->ts_ns;
	}
	switch (h->type) {
	case ASC_REC_ENTER:
		return on_enter(c, p, h);
	case ASC_REC_EXIT:
		on_exit_rec(c, p, rec);
		return 0;
	case ASC_REC_OPNAME:
		on_opname(c, p, rec);
		return 0;
	case ASC_REC_SEQNR:
		return on_seqnr(c, p, rec);
	case ASC_REC_QUEUE:
		return on_queue(c, p, rec);
	case ASC_REC_SQE:
		return on_sqe(c, p, rec);
	case ASC_REC_LAUNCH:
		return on_launch(c, p, rec);
	case ASC_REC_MEM:
		return on_mem(c, p, rec);
	case ASC_REC_STACK:
		return on_stack(p, rec);
	case ASC_REC_TENSOR:
		return on_tensor(c, p, rec);
	case ASC_REC_PYSTACK:
		return on_pystack(p, rec);
	case ASC_REC_PYFRAME: {
		const struct asc_pyframe *pf = rec;

		return hmap_put(&p->pyframes, pyframe_key(pf->code, pf->lasti),
				strtab_cstr(&p->strs, pf->text));
	}
	case ASC_REC_STEP: {
		const struct asc_step *s = rec;
		struct asc_corr_step *st;

		if (PUSH(c->steps, c->nr_steps, p->steps_cap, st))
			return -ENOMEM;
		st->step = s->step;
		st->state = s->state;
		st->cycle = -1;
		st->start_ns = s->hdr.ts_ns;
		st->tid = s->hdr.tid;
		/*
		 * Launch marks: the gate closes for this step, so the sends of the
		 * launches pending now go unseen; kept, they would stand for the
		 * first tasks of the next recorded batch (launched unmarked).
		 */
		if (p->have_marks && !asc_sched_recording(s->state))
			for (size_t i = 0; i < p->nr_threads; i++)
				p->threads[i].nlaunches = 0;
		return 0;
	}
	case ASC_REC_DEVTASK: {
		const struct asc_devtask *d = rec;
		struct devt *dt;

		if (PUSH(p->devts, p->nr_devts, p->devts_cap, dt))
			return -ENOMEM;
		dt->start_cnt = d->start_cnt;
		dt->end_cnt = d->end_cnt;
		dt->dev = d->dev_id;
		dt->stream = d->stream_id;
		dt->task = d->task_id;
		dt->type = d->task_type;
		dt->wrap = count_wrap(p, &p->dev_wraps, d->dev_id, d->stream_id, d->task_id);
		return 0;
	}
	case ASC_REC_PROBE:
		return add_probe(c, p, rec);
	case ASC_REC_CLOCK: {
		const struct asc_clock *k = rec;

		if (k->which == ASC_CLOCK_START || !c->info.have_clock) {
			c->info.start_wall_ns = k->realtime_ns;
			c->info.start_mono_ns = k->hdr.ts_ns;
			c->info.utc_offset_s = k->utc_offset_s;
			p->wall_off = (int64_t)(k->realtime_ns - k->hdr.ts_ns);
		}
		if (k->which == ASC_CLOCK_END) {
			c->info.end_wall_ns = k->realtime_ns;
			c->info.end_mono_ns = k->hdr.ts_ns;
		}
		c->info.have_clock = 1;
		return 0;
	}
	case ASC_REC_DEVCLOCK: {
		const struct asc_devclock *d = rec;

		if (!c->info.have_devclock) {
			c->info.have_devclock = 1;
			c->info.devclock_counter = d->counter;
			c->info.devclock_freq_hz = d->freq_hz;
			c->info.devclock_mono_ns = d->hdr.ts_ns;
		}
		return 0;
	}
	case ASC_REC_PROCESS: {
		const struct asc_process *pr = rec;

		c->info.pid = pr->hdr.tgid;
		c->info.rank = pr->rank;
		c->info.device = pr->device;
		return 0;
	}
	case ASC_REC_THREAD: {
		const struct asc_thread *th = rec;
		struct asc_corr_thread *o;
		size_t i;

		for (i = 0; i < c->nr_threads; i++)
			if (c->threads[i].tid == th->hdr.tid)
				break;
		if (i == c->nr_threads && PUSH(c->threads, c->nr_threads, p->thr_cap, o))
			return -ENOMEM;
		c->threads[i].tid = th->hdr.tid;
		memcpy(c->threads[i].comm, th->comm, sizeof(th->comm));
		c->threads[i].comm[15] = '\0';
		return 0;
	}
	case ASC_REC_STATS: {
		const struct asc_stats *s = rec;

		c->info.bpf_events = s->events;
		c->info.bpf_drops = s->drops;
		c->info.devtask_drops = s->devtask_drops;
		c->info.ended = 1;
		return 0;
	}
	case ASC_REC_CONFIG: {
		const struct asc_text *tx = rec;
		char **slot;

		if (PUSH(c->config, c->nr_config, p->cfg_cap, slot))
			return -ENOMEM;
		*slot = strdup(tx->text);
		return *slot ? 0 : -ENOMEM;
	}
	case ASC_REC_SYMBOL: {
		const struct asc_text *tx = rec;

		return hmap_put(&p->symbols, tx->value, strtab_cstr(&p->strs, tx->text));
	}
	case ASC_REC_LOST: {
		const struct asc_text *tx = rec;

		/* tasks that ran with the device channel closed: not lost records */
		if (tx->hdr.probe_id == ASC_LOST_BEFORE_DEVCHANNEL)
			c->info.before_devchannel += tx->value;
		else
			c->info.lost += tx->value;
		return 0;
	}
	case ASC_REC_FUNCNAME:
		return on_funcname(p, rec);
	default:
		return 0;
	}
}

/* ---- finishing ---- */

struct sortkey {
	int64_t a, b;
	size_t idx;
};

static int cmp_sortkey(const void *x, const void *y)
{
	const struct sortkey *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return p->idx < q->idx ? -1 : p->idx > q->idx;
}

/*
 * Sorts arr (n elements of size elem) by (a, b) taken from each element and
 * returns old index -> new index, or NULL on ENOMEM.
 */
static int32_t *sort_remap(void *arr, size_t n, size_t elem,
			   void (*key)(const void *e, int64_t *a, int64_t *b))
{
	struct sortkey *k = malloc((n ? n : 1) * sizeof(*k));
	int32_t *map = malloc((n ? n : 1) * sizeof(*map));
	char *tmp = malloc((n ? n : 1) * elem);
	size_t i;

	if (!k || !map || !tmp) {
		free(k);
		free(map);
		free(tmp);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		key((char *)arr + i * elem, &k[i].a, &k[i].b);
		k[i].idx = i;
	}
	qsort(k, n, sizeof(*k), cmp_sortkey);
	for (i = 0; i < n; i++) {
		memcpy(tmp + i * elem, (char *)arr + k[i].idx * elem, elem);
		map[k[i].idx] = (int32_t)i;
	}
	memcpy(arr, tmp, n * elem);
	free(tmp);
	free(k);
	return map;
}

static int32_t remap(const int32_t *map, int32_t i)
{
	return i < 0 ? -1 : map[i];
}

static void key_op(const void *e, int64_t *a, int64_t *b)
{
	const struct asc_corr_op *o = e;

	*a = o->start_ns;
	*b = -o->end_ns;	/* enclosing ops first */
}

static void key_call(const void *e, int64_t *a, int64_t *b)
{
	const struct asc_corr_call *o = e;

	*a = o->start_ns;
	*b = -o->end_ns;
}

static void key_kernel(const void *e, int64_t *a, int64_t *b)
{
	const struct asc_corr_kernel *o = e;

	*a = o->start_ns;
	*b = o->stream;
}

static void key_queue(const void *e, int64_t *a, int64_t *b)
{
	const struct asc_corr_queue *o = e;

	*a = o->enq_start_ns ? o->enq_start_ns : o->deq_start_ns;
	*b = (int64_t)o->correlation_id;
}

static void key_mem(const void *e, int64_t *a, int64_t *b)
{
	const struct asc_corr_mem *o = e;

	*a = o->ts_ns;
	*b = 0;
}

/* Step index (into steps[]) containing mono time t, -1 if none (before the first). */
static int32_t step_at(const struct asc_corr *c, int64_t t)
{
	size_t lo = 0, hi = c->nr_steps;

	if (!c->nr_steps || t < c->steps[0].start_ns)
		return -1;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (c->steps[mid].start_ns <= t)
			lo = mid;
		else
			hi = mid;
	}
	return (int32_t)lo;
}

static int32_t step_id_at(const struct asc_corr *c, int64_t t)
{
	int32_t i = step_at(c, t);

	return i < 0 ? -1 : (int32_t)c->steps[i].step;
}

static int cmp_step(const void *x, const void *y)
{
	const struct asc_corr_step *p = x, *q = y;

	return p->start_ns < q->start_ns ? -1 : p->start_ns > q->start_ns;
}

/*
 * name is usually a string of p->strs itself, whose arena strtab_add() may
 * move: intern a copy (issue 19 item 1).
 */
static uint32_t type_from_name(struct priv *p, const char *name)
{
	char *copy = strdup(!strncmp(name, "aclnn", 5) && name[5] ? name + 5 : name);
	uint32_t id;

	if (!copy)
		return 0;
	id = strtab_cstr(&p->strs, copy);
	free(copy);
	return id;
}

/*
 * libstdc++'s demangler.  Weak: only the ascbpf binary links libstdc++ (see
 * README, Dependencies); a program without it (a unit test) leaves the
 * names mangled.
 */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status)
	__attribute__((weak));

size_t asc_corr_demangle(const char *sym, char *out, size_t outlen)
{
	char *d = NULL;
	int st = -1;

	if (!outlen)
		return 0;
	if (__cxa_demangle && !strncmp(sym, "_Z", 2))
		d = __cxa_demangle(sym, NULL, NULL, &st);
	snprintf(out, outlen, "%s", d && !st ? d : sym);
	free(d);
	return strlen(out);
}

/*
 * A native frame as torch prints a frame, "file(line): function": ascbpf
 * knows no line numbers, so file is the library (its full path when a probe
 * of the capture names the same file), line 0 (what torch's own dladdr
 * symboliser reports for a frame without debug information) and function
 * the demangled symbol, or the file offset ("0x1a2b") when the address had
 * no symbol.  sym is a SYMBOL text, "lib!symbol+0xoff" or "lib+0xoff"; a
 * text already in that form ("path(12): func", from a resolver that knows
 * lines) is kept as it is.
 */
void asc_corr_native_frame(const char *sym, const char *libpath, char *out, size_t outlen)
{
	const char *bang = strchr(sym, '!'), *plus, *par = strstr(sym, "): ");
	char lib[256], fn[512], name[400];
	size_t n;

	if (!outlen)
		return;
	if (par && par > sym && (!bang || bang > par)) {
		const char *q = par;

		while (q > sym && q[-1] >= '0' && q[-1] <= '9')
			q--;
		if (q < par && q > sym && q[-1] == '(') {
			snprintf(out, outlen, "%s", sym);
			return;
		}
	}
	if (bang) {
		n = (size_t)(bang - sym);
		plus = strrchr(bang + 1, '+');
		snprintf(name, sizeof(name), "%.*s", (int)(plus ? (size_t)(plus - bang - 1) :
							     strlen(bang + 1)), bang + 1);
		asc_corr_demangle(name, fn, sizeof(fn));
	} else {
		plus = strrchr(sym, '+');
		n = plus ? (size_t)(plus - sym) : strlen(sym);
		snprintf(fn, sizeof(fn), "%s", plus ? plus + 1 : "??");
	}
	snprintf(lib, sizeof(lib), "%.*s", (int)(n < sizeof(lib) ? n : sizeof(lib) - 1), sym);
	snprintf(out, outlen, "%s(0): %s", libpath && *libpath ? libpath : lib, fn);
}

/* The probed library whose file name is base, or NULL. */
static const char *probe_lib_path(const struct asc_corr *c, const struct priv *p,
				  const char *base, size_t blen)
{
	size_t i;

	for (i = 0; i < p->nr_probes; i++) {
		const char *lib, *b;

		if (!p->probes[i].known || !p->probes[i].lib)
			continue;
		lib = asc_corr_str(c, p->probes[i].lib);
		b = strrchr(lib, '/');
		b = b ? b + 1 : lib;
		if (strlen(b) == blen && !strncmp(b, base, blen))
			return lib;
	}
	return NULL;
}

/* The formatted frame of a SYMBOL string id, made once per symbol (cache: sid -> frame id). */
static uint32_t native_frame(const struct asc_corr *c, struct priv *p, struct hmap *cache,
			     uint32_t sid)
{
	const char *sym = asc_corr_str(c, sid), *bang = strchr(sym, '!');
	char out[1024];
	uint64_t v;
	size_t blen;
	uint32_t id;

	if (hmap_get(cache, sid, &v))
		return (uint32_t)v;
	blen = bang ? (size_t)(bang - sym) : strcspn(sym, "+");
	asc_corr_native_frame(sym, probe_lib_path(c, p, sym, blen), out, sizeof(out));
	id = strtab_cstr(&p->strs, out);
	if (hmap_put(cache, sid, id))
		return sid;
	return id;
}

/* Builds the call stack string of each op with a stack record. */
static void resolve_stacks(struct asc_corr *c, struct priv *p, const int32_t *opmap)
{
	char *buf = malloc(ASC_STACK_DEPTH * 512);
	struct hmap cache = { 0 };
	size_t i, len;
	uint32_t k;

	if (!buf)
		return;
	for (i = 0; i < p->nr_stacks; i++) {
		struct stackrec *sr = &p->stacks[i];

		len = 0;
		for (k = 0; k < sr->nr; k++) {
			uint64_t sid;
			const char *s;
			int n;

			s = hmap_get(&p->symbols, sr->ips[k], &sid) ?
			    asc_corr_str(c, native_frame(c, p, &cache, (uint32_t)sid)) : NULL;
			/* demangled C++ names are long: up to 500 bytes a native frame */
			n = s ? snprintf(buf + len, 512, "%s%.500s", k ? ";\r\n" : "", s)
			      : snprintf(buf + len, 512, "%s0x%llx", k ? ";\r\n" : "",
					 (unsigned long long)sr->ips[k]);
			if (n > 0)
				len += n < 512 ? n : 511;
		}
		if (sr->op >= 0 && (size_t)sr->op < c->nr_ops)
			c->ops[remap(opmap, sr->op)].stack = strtab_add(&p->strs, buf, len);
	}
	/* Python frames win over native ones: torch's "Call stack" is Python's */
	for (i = 0; i < p->nr_pystacks; i++) {
		struct pystackrec *ps = &p->pystacks[i];
		int any = 0;

		len = 0;
		for (k = 0; k < ps->nr; k++) {
			uint64_t sid;
			int n;

			if (!hmap_get(&p->pyframes, pyframe_key(ps->code[k], ps->lasti[k]), &sid))
				continue;	/* unresolved frames are left out */
			n = snprintf(buf + len, 160, "%s%.150s", any++ ? ";\r\n" : "",
				     asc_corr_str(c, sid));
			if (n > 0)
				len += n < 160 ? n : 159;
		}
		if (any && ps->op >= 0 && (size_t)ps->op < c->nr_ops)
			c->ops[remap(opmap, ps->op)].stack = strtab_add(&p->strs, buf, len);
	}
	hmap_free(&cache);
	free(buf);
}

static int finish(struct asc_corr *c, struct priv *p)
{
	int32_t *opmap = NULL, *callmap = NULL, *qmap = NULL;
	size_t i;
	int err = -ENOMEM;

	for (i = 0; i < p->nr_threads; i++)
		flush_tensors(c, p, &p->threads[i]);

	/* steps: sorted by start, end = next start; ProfilerStep#N ops */
	qsort(c->steps, c->nr_steps, sizeof(*c->steps), cmp_step);
	for (i = 0; i < c->nr_steps; i++) {
		struct asc_corr_op *o;
		char name[40];
		int64_t end = i + 1 < c->nr_steps ? c->steps[i + 1].start_ns :
			      (c->info.end_mono_ns > p->max_mono ? c->info.end_mono_ns :
							       p->max_mono);

		c->steps[i].end_ns = end > c->steps[i].start_ns ? end : c->steps[i].start_ns;
		if (!asc_sched_recording(c->steps[i].state))
			continue;
		if (PUSH(c->ops, c->nr_ops, p->ops_cap, o))
			goto out;
		snprintf(name, sizeof(name), "ProfilerStep#%llu",
			 (unsigned long long)c->steps[i].step);
		o->start_ns = c->steps[i].start_ns;
		o->end_ns = c->steps[i].end_ns;
		o->tid = c->steps[i].tid;
		o->name = strtab_cstr(&p->strs, name);
		o->seq = -1;
		o->parent = -1;
		o->flags = ASC_CORR_O_STEP;
	}
	/* cycles: warmup/record steps up to a RECORD_AND_SAVE (or the last recorded step) */
	{
		int32_t first = -1, last_rec = -1;

		for (i = 0; i <= c->nr_steps; i++) {
			uint32_t st = i < c->nr_steps ? c->steps[i].state : ASC_SCHED_NONE;
			int end_cycle = 0;

			if (st != ASC_SCHED_NONE && first < 0)
				first = i;
			if (asc_sched_recording(st))
				last_rec = i;
			if (st == ASC_SCHED_RECORD_AND_SAVE)
				end_cycle = 1;
			else if (first >= 0 && (i == c->nr_steps || st == ASC_SCHED_NONE ||
						(st == ASC_SCHED_WARMUP && last_rec >= first)))
				end_cycle = 2;	/* cycle interrupted: keep it if it recorded */
			if (!end_cycle)
				continue;
			if (last_rec >= first && first >= 0) {
				struct asc_corr_cycle *cy;
				int32_t lastidx = end_cycle == 1 ? (int32_t)i : last_rec;
				int32_t j;

				if (PUSH(c->cycles, c->nr_cycles, p->cycles_cap, cy))
					goto out;
				cy->first_step = first;
				cy->last_step = lastidx;
				cy->start_ns = c->steps[first].start_ns;
				cy->end_ns = c->steps[lastidx].end_ns;
				for (j = first; j <= lastidx; j++)
					c->steps[j].cycle = (int32_t)c->nr_cycles - 1;
			}
			first = st == ASC_SCHED_WARMUP && end_cycle == 2 ? (int32_t)i : -1;
			last_rec = -1;
		}
	}

	/* ops: nesting per thread (sort by tid, start, -end; stack walk) */
	opmap = sort_remap(c->ops, c->nr_ops, sizeof(*c->ops), key_op);
	if (!opmap)
		goto out;
	for (i = 0; i < c->nr_ops; i++)
		c->ops[i].parent = -1;
	/* ops are sorted by start: walk per thread with a stack of open ops */
	{
		struct hmap last = { 0 };	/* tid -> innermost open op index */

		for (i = 0; i < c->nr_ops; i++) {
			struct asc_corr_op *o = &c->ops[i];
			uint64_t v;
			int32_t par = -1;

			if (hmap_get(&last, o->tid, &v))
				par = (int32_t)v;
			/* sorted by start: an earlier op encloses o iff it ends no earlier */
			while (par >= 0 && c->ops[par].end_ns < o->end_ns)
				par = c->ops[par].parent;
			o->parent = par;
			o->depth = par >= 0 ? c->ops[par].depth + 1 : 0;
			if (hmap_put(&last, o->tid, i)) {
				hmap_free(&last);
				goto out;
			}
		}
		hmap_free(&last);
	}

	/* calls */
	callmap = sort_remap(c->calls, c->nr_calls, sizeof(*c->calls), key_call);
	if (!callmap)
		goto out;
	{
		int32_t *cq = malloc((c->nr_calls ? c->nr_calls : 1) * sizeof(*cq));

		if (!cq)
			goto out;
		for (i = 0; i < c->nr_calls; i++)
			cq[callmap[i]] = p->call_queue ? p->call_queue[i] : -1;
		free(p->call_queue);
		p->call_queue = cq;
		p->call_queue_cap = c->nr_calls;
	}
	for (i = 0; i < c->nr_calls; i++) {
		c->calls[i].parent = remap(callmap, c->calls[i].parent);
		c->calls[i].op = remap(opmap, c->calls[i].op);
	}

	/* queues */
	for (i = 0; i < c->nr_queues; i++)
		c->queues[i].op = remap(opmap, c->queues[i].op);
	qmap = sort_remap(c->queues, c->nr_queues, sizeof(*c->queues), key_queue);
	if (!qmap)
		goto out;
	for (i = 0; i < c->nr_calls; i++) {
		int32_t q = remap(qmap, p->call_queue[i]);

		if (q >= 0 && c->calls[i].op < 0)
			c->calls[i].op = c->queues[q].op;
	}

	/* kernels: one per device task, joined to its submission */
	c->kernels = calloc(p->nr_devts ? p->nr_devts : 1, sizeof(*c->kernels));
	if (!c->kernels)
		goto out;
	c->nr_kernels = p->nr_devts;
	for (i = 0; i < p->nr_devts; i++) {
		const struct devt *d = &p->devts[i];
		struct asc_corr_kernel *k = &c->kernels[i];
		uint64_t si;
		const char *nm = NULL;

		k->start_ns = dev_to_mono(c, d->start_cnt);
		k->end_ns = dev_to_mono(c, d->end_cnt);
		k->device = d->dev;
		k->stream = d->stream;
		k->task_id = d->task;
		k->wrap = d->wrap;
		k->task_type = d->type;
		k->api = k->launch_call = k->op = k->queue = -1;
		k->step = -1;
		if (d->type == 0 || d->type == 1 || d->type == 2)
			k->flags |= ASC_CORR_K_COMPUTE;
		k->node_call = -1;
		if (hmap_get(&p->sub_index, task_key(d->dev, d->stream, d->task, d->wrap), &si)) {
			const struct sub *sb = &p->subs[si];
			struct lctx x = {
				.api = sb->api, .launch_call = sb->launch_call, .op = sb->op,
				.queue = sb->queue, .node_call = sb->node_call,
				.handle = sb->handle, .kname = sb->kname,
			};

			/* batched capture: the launch that made the task, if it is known */
			if (p->saw_batch && sb->use_alt) {
				if (sb->alt >= 0) {
					x = p->alts[sb->alt];
				} else {
					memset(&x, 0, sizeof(x));
					x.api = x.launch_call = x.op = x.queue = x.node_call = -1;
				}
				if (x.op < 0 && x.queue < 0)
					c->info.batch_unattributed++;
			}
			k->flags |= ASC_CORR_K_MATCHED;
			k->submit_ns = sb->ts;
			k->submit_tid = sb->tid;
			k->block_dim = sb->block_dim;
			k->api = remap(callmap, x.api);
			k->launch_call = remap(callmap, x.launch_call);
			if (d->type == 0 || d->type == 1 || d->type == 2)
				k->node_call = remap(callmap, x.node_call);
			k->queue = remap(qmap, x.queue);
			k->op = k->queue >= 0 && c->queues[k->queue].op >= 0 ?
				c->queues[k->queue].op : remap(opmap, x.op);
			if (k->queue >= 0)
				k->correlation_id = c->queues[k->queue].correlation_id;
			k->kernel_name = x.kname;
			/* a handle named only after the launch */
			if (!k->kernel_name && x.handle &&
			    hmap_get(&p->funcnames, x.handle, &si))
				k->kernel_name = (uint32_t)si;
			if (x.qname && (k->flags & ASC_CORR_K_COMPUTE))
				k->name = x.qname;
		} else {
			c->info.unmatched_kernels++;
		}
		if (k->api >= 0 && c->calls[k->api].opname)
			k->name = c->calls[k->api].opname;
		else if (k->api >= 0 &&
			 !strncmp(asc_corr_str(c, c->calls[k->api].name), "aclnn", 5))
			k->name = c->calls[k->api].name;
		else if (k->queue >= 0 && c->queues[k->queue].name)
			k->name = c->queues[k->queue].name;
		else if (k->api >= 0)
			k->name = c->calls[k->api].name;
		if (!(k->flags & ASC_CORR_K_COMPUTE))
			k->name = 0;	/* event / copy tasks are named by kind, not by their API */
		if (k->name)
			nm = asc_corr_str(c, k->name);
		else
			k->name = strtab_cstr(&p->strs, task_default_name(d->type));
		k->type = nm ? type_from_name(p, nm) : k->name;
		/* the real kernel name, where the launch's function handle was named */
		if (k->kernel_name && (k->flags & ASC_CORR_K_COMPUTE)) {
			k->name = k->kernel_name;
			k->flags |= ASC_CORR_K_KERNEL_NAME;
		}
	}
	c->info.unmatched_sqes = p->nr_subs > c->nr_kernels - c->info.unmatched_kernels ?
				 p->nr_subs - (c->nr_kernels - c->info.unmatched_kernels) : 0;

	/* steps of everything (mono times still) */
	for (i = 0; i < c->nr_ops; i++)
		c->ops[i].step = step_id_at(c, c->ops[i].start_ns);
	for (i = 0; i < c->nr_calls; i++)
		c->calls[i].step = step_id_at(c, c->calls[i].start_ns);
	for (i = 0; i < c->nr_queues; i++)
		c->queues[i].step = step_id_at(c, c->queues[i].enq_start_ns ?
					       c->queues[i].enq_start_ns :
					       c->queues[i].deq_start_ns);
	for (i = 0; i < c->nr_mems; i++) {
		c->mems[i].op = remap(opmap, c->mems[i].op);
		c->mems[i].step = step_id_at(c, c->mems[i].ts_ns);
	}
	for (i = 0; i < c->nr_kernels; i++) {
		struct asc_corr_kernel *k = &c->kernels[i];

		k->step = step_id_at(c, k->submit_ns ? k->submit_ns : k->start_ns);
	}

	/* device durations onto ops */
	for (i = 0; i < c->nr_kernels; i++) {
		const struct asc_corr_kernel *k = &c->kernels[i];
		int64_t dur = k->end_ns - k->start_ns;
		int aic = k->task_type == 0;
		int32_t o = k->op;

		if (o < 0 || !(k->flags & ASC_CORR_K_COMPUTE))
			continue;
		c->ops[o].device_self_ns += dur;
		if (aic)
			c->ops[o].device_self_aicore_ns += dur;
		for (; o >= 0; o = c->ops[o].parent) {
			c->ops[o].device_total_ns += dur;
			if (aic)
				c->ops[o].device_total_aicore_ns += dur;
		}
	}
	resolve_stacks(c, p, opmap);

	/* everything to wall clock */
#define WALL(x) ((x) = (x) ? (x) + p->wall_off : 0)
	for (i = 0; i < c->nr_ops; i++) {
		WALL(c->ops[i].start_ns);
		WALL(c->ops[i].end_ns);
	}
	for (i = 0; i < c->nr_calls; i++) {
		WALL(c->calls[i].start_ns);
		WALL(c->calls[i].end_ns);
	}
	for (i = 0; i < c->nr_queues; i++) {
		WALL(c->queues[i].enq_start_ns);
		WALL(c->queues[i].enq_end_ns);
		WALL(c->queues[i].deq_start_ns);
		WALL(c->queues[i].deq_end_ns);
	}
	for (i = 0; i < c->nr_mems; i++)
		WALL(c->mems[i].ts_ns);
	for (i = 0; i < c->nr_kernels; i++) {
		WALL(c->kernels[i].start_ns);
		WALL(c->kernels[i].end_ns);
		WALL(c->kernels[i].submit_ns);
	}
	for (i = 0; i < c->nr_steps; i++) {
		WALL(c->steps[i].start_ns);
		WALL(c->steps[i].end_ns);
	}
	for (i = 0; i < c->nr_cycles; i++) {
		WALL(c->cycles[i].start_ns);
		WALL(c->cycles[i].end_ns);
	}
#undef WALL

	/* kernels sorted by start; remap nothing refers to kernels */
	free(sort_remap(c->kernels, c->nr_kernels, sizeof(*c->kernels), key_kernel));
	/* memory events sorted by time (stable for equal times) */
	free(sort_remap(c->mems, c->nr_mems, sizeof(*c->mems), key_mem));
	err = 0;
out:
	free(opmap);
	free(callmap);
	free(qmap);
	return err;
}

static void free_schemas(struct priv *p)
{
	size_t i;

	for (i = 0; i < p->nr_schema_libs; i++)
		if (p->schema_libs[i])
			asc_aten_schemas_free(p->schema_libs[i]);
	free(p->schema_libs);
	p->schema_libs = NULL;
	p->nr_schema_libs = 0;
	hmap_free(&p->schemas);
	free(p->aten_op);
	p->aten_op = NULL;
}

static void priv_free(struct priv *p)
{
	size_t i;

	if (!p)
		return;
	free(p->strs.arena);
	free(p->strs.offs);
	hmap_free(&p->strs.index);
	free(p->probes);
	asc_seqnr_names_free(p->node_names);
	for (i = 0; i < p->nr_threads; i++) {
		free(p->threads[i].frames);
		free(p->threads[i].pend);
		free(p->threads[i].launches);
	}
	free(p->threads);
	hmap_free(&p->tid_index);
	hmap_free(&p->queue_index);
	hmap_free(&p->sub_index);
	hmap_free(&p->sub_wraps);
	hmap_free(&p->dev_wraps);
	hmap_free(&p->symbols);
	hmap_free(&p->funcnames);
	hmap_free(&p->mark_streams);
	hmap_free(&p->pyframes);
	free(p->pystacks);
	free(p->scratch);
	free_schemas(p);
	free(p->wraps);
	free(p->subs);
	free(p->alts);
	free(p->devts);
	free(p->stacks);
	free(p->call_queue);
	free(p);
}

/* Drops the build-only state and keeps the string table. */
static void priv_shrink(struct priv *p)
{
	size_t i;

	for (i = 0; i < p->nr_threads; i++) {
		free(p->threads[i].frames);
		free(p->threads[i].pend);
		free(p->threads[i].launches);
	}
	free(p->threads);
	p->threads = NULL;
	p->nr_threads = 0;
	hmap_free(&p->tid_index);
	hmap_free(&p->queue_index);
	hmap_free(&p->sub_index);
	hmap_free(&p->sub_wraps);
	hmap_free(&p->dev_wraps);
	hmap_free(&p->symbols);
	hmap_free(&p->funcnames);
	hmap_free(&p->mark_streams);
	hmap_free(&p->pyframes);
	free_schemas(p);
	hmap_free(&p->strs.index);
	free(p->pystacks);
	p->pystacks = NULL;
	free(p->scratch);
	p->scratch = NULL;
	free(p->wraps);
	p->wraps = NULL;
	free(p->subs);
	p->subs = NULL;
	free(p->alts);
	p->alts = NULL;
	free(p->devts);
	p->devts = NULL;
	free(p->stacks);
	p->stacks = NULL;
	free(p->call_queue);
	p->call_queue = NULL;
}

struct asc_corr *asc_corr_build(struct asc_capture_reader *r)
{
	struct asc_capture_info ci;
	struct asc_corr *c;
	struct priv *p;
	const void *rec;
	size_t size;
	int ret;

	c = calloc(1, sizeof(*c));
	p = calloc(1, sizeof(*p));
	if (p)
		p->scratch = malloc(2 * 8192);
	if (!c || !p || !p->scratch || strtab_init(&p->strs)) {
		free(c);
		priv_free(p);
		errno = ENOMEM;
		return NULL;
	}
	c->priv = p;
	c->info.rank = c->info.device = -1;
	asc_capture_rewind(r);
	while ((ret = asc_capture_next(r, &rec, &size)) == 1) {
		ret = on_record(c, p, rec, size);
		if (ret < 0)
			break;
	}
	if (ret < 0) {
		asc_err("correlate: %s\n", strerror(-ret));
		asc_corr_free(c);
		errno = -ret;
		return NULL;
	}
	asc_capture_info(r, &ci);
	c->info.damaged = ci.damaged;
	c->info.bytes_unread = ci.bytes_unread;
	memcpy(c->info.damage, ci.damage, sizeof(c->info.damage));
	if (!c->info.have_clock)
		p->wall_off = 0;
	ret = finish(c, p);
	if (ret) {
		asc_corr_free(c);
		errno = -ret;
		return NULL;
	}
	c->info.last_ts_ns = p->max_mono ? p->max_mono + p->wall_off : 0;
	if (!c->info.end_wall_ns)
		c->info.end_wall_ns = p->max_mono + p->wall_off;
	if (!c->info.start_wall_ns)
		c->info.start_wall_ns = p->min_mono + p->wall_off;
	priv_shrink(p);
	return c;
}

void asc_corr_free(struct asc_corr *c)
{
	size_t i;

	if (!c)
		return;
	free(c->kernels);
	free(c->ops);
	free(c->calls);
	free(c->queues);
	free(c->mems);
	free(c->steps);
	free(c->cycles);
	free(c->threads);
	for (i = 0; i < c->nr_config; i++)
		free(c->config[i]);
	free(c->config);
	priv_free(c->priv);
	free(c);
}
