// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mkcomm - writes the captures of a synthetic data-parallel job, one per
 * rank, with the HCCL records `ascbpf trace` takes (bpf/ascbpf_events.h
 * "HCCL"), and the ground truth as JSON: what the communication outputs and
 * `ascbpf report JOBDIR` are tested against before (and beside) npu_model's
 * real HCCL.  No BPF, no simulator: every record and every time is made here.
 *
 *   mkcomm -o DIR [--ranks N] [--steps S] [--bytes B] [--slow-rank R --slow-factor K]
 *          [--slow-link A-B --link-factor K] [--hang-rank R --hang-seq Q] [--nodes M]
 *          [--overlap-us U] [--subgroup K] [--pipeline]
 *
 * DIR/rank{r}.ascb per rank, DIR/truth.json.  Each step of each rank: one
 * AI_CORE kernel (stream 2) of 100 us (x K on the slow rank), then one
 * HcclAllReduce of B bytes on the world communicator (stream 5), as
 * npu_model's mesh algorithm runs it (CONTRACT-hccl.md): sync (a
 * Notify_Record to every peer, then a Notify_Wait on every peer), a
 * Reduce_Inline of B/N bytes from every peer, sync, a Memcpy of B/N bytes
 * from every peer, sync.  A Notify_Wait on peer p lasts until p's record to
 * this rank in the same sync ended (at least 1 us): the waits are the rank's wait for the
 * others.  A copy over a link takes size / bandwidth: 20 GB/s HCCS within a
 * node, 10 GB/s RoCE (RDMA) between nodes (ranks are split into --nodes
 * nodes in order), divided by --link-factor on the slow link (both ways).
 * --hang-rank R --hang-seq Q: rank R never enters collective Q; the others
 * enter it, and their first Notify_Wait on R never ends: no device record for
 * it or anything after it on that stream, and their captures have no end
 * (the job was killed).
 *
 * --overlap-us U: a second AI_CORE kernel of U us runs on stream 2 from 10 us
 * after each op's device start (compute overlapping the communication).
 *
 * --subgroup K: each rank also joins a strided communicator of K ranks (the
 * ranks r with the same r mod (N / K), rank r / (N / K) in it, named
 * "sub<r mod (N / K)>"), which runs no op.
 *
 * --pipeline (2 ranks): a two-stage pipeline instead of the all-reduce: per step
 * rank 0 computes 100 us and sends B bytes to rank 1 (HcclSend: Notify_Record,
 * Notify_Wait, Memcpy pushed over HCCS, Notify_Record), rank 1 computes 10 us
 * and receives (HcclRecv: Notify_Record, Notify_Wait for the sender's first
 * record, Notify_Wait for its last): rank 1's receive is its pipeline bubble.
 *
 * truth.json: ranks, nodes, group, per rank per op: seq, name, arrival
 * (host entry), device start/end, wait / sync / transit ns (sums of the
 * generator's task durations), and per link (src, dst) bytes and ns; per step
 * the compute span.  Times are wall-clock ns.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ascbpf_events.h"
#include "ascend/hccl.h"
#include "capture/capture.h"
#include "capture/records.h"
#include "schedule.h"

#define MONO_BASE    1000000000000ull	    /* 1000 s */
#define WALL_BASE    1764671100000000000ull /* 2025-12-02 10:25:00 UTC */
#define DEV_FREQ     50000000ull	    /* 20 ns per tick */
#define DEV_CNT_BASE 777000000ull
#define MAXR	     16
#define GROUP	     "10.0.0.1%31415_1_1764671100123456"
#define GROUP_HASH   7719404217438512345ull
#define COMM_H	     0x7f00c0de0000ull
#define HCCL_STREAM  5

enum { P_ALLREDUCE = 1, P_INIT, P_REPORT, P_HASH, P_HAL_SEND, P_STEP, P_SEND, P_RECV, P_COUNT };
static const struct {
	const char *lib, *sym;
	uint16_t layer, kind;
} probes[P_COUNT] = {
	[P_ALLREDUCE] = { "libhccl.so", "HcclAllReduce", ASC_LAYER_HCCL, ASC_PK_HCCL_OP },
	[P_INIT] = { "libhccl.so", "HcclCommInitRootInfo", ASC_LAYER_HCCL, ASC_PK_HCCL_COMM_INIT },
	[P_REPORT] = { "libprofapi.so", "MsprofReportAdditionalInfo", ASC_LAYER_HCCL,
		       ASC_PK_HCCL_REPORT },
	[P_HASH] = { "libprofapi.so", "MsprofGetHashId", ASC_LAYER_HCCL, ASC_PK_HCCL_HASH },
	[P_HAL_SEND] = { "libascend_hal.so", "halSqTaskSend", ASC_LAYER_DRIVER, ASC_PK_SQE_SEND },
	[P_STEP] = { "libtorch_npu.so", "step", ASC_LAYER_PYTHON, ASC_PK_STEP },
	[P_SEND] = { "libhccl.so", "HcclSend", ASC_LAYER_HCCL, ASC_PK_HCCL_OP },
	[P_RECV] = { "libhccl.so", "HcclRecv", ASC_LAYER_HCCL, ASC_PK_HCCL_OP },
};

enum { K_RECORD = 1, K_WAIT, K_MEMCPY, K_REDUCE };
static const char *const kname[] = {
	"", "Notify_Record", "Notify_Wait", "Memcpy", "Reduce_Inline",
};
static const uint64_t khash[] = { 0, 1001, 1002, 1003, 1004 };

struct rec {
	uint64_t ts;
	uint32_t seq;
	size_t size;
	unsigned char b[256];
};

/* one rank's records of the step being made */
struct rank {
	struct asc_capture_writer *w;
	struct rec *recs;
	size_t n, cap;
	uint32_t seq, pid;
	uint16_t task;
	int dead; /* hung: records stop */
	int ended;
};

static struct rank R[MAXR];
static int nranks = 4, nodes = 1;

static uint64_t wall(uint64_t mono)
{
	return mono - MONO_BASE + WALL_BASE;
}
static uint64_t dev_cnt(uint64_t mono)
{
	return DEV_CNT_BASE + (mono - MONO_BASE) / 20;
}

static void *newrec(int r, uint16_t type, size_t size, uint32_t tid, uint32_t probe, uint64_t ts)
{
	struct rank *k = &R[r];
	struct rec *x;
	struct asc_hdr *h;

	if (k->n == k->cap) {
		k->cap = k->cap ? k->cap * 2 : 1024;
		k->recs = realloc(k->recs, k->cap * sizeof(*k->recs));
		if (!k->recs)
			exit(1);
	}
	x = &k->recs[k->n++];
	memset(x, 0, sizeof(*x));
	x->ts = ts;
	x->seq = k->seq++;
	x->size = size;
	h = (struct asc_hdr *)x->b;
	h->type = type;
	h->size = (uint16_t)size;
	h->tgid = k->pid;
	h->tid = tid;
	h->probe_id = probe;
	h->ts_ns = type == ASC_REC_DEVTASK ? 0 : ts;
	return x->b;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	int dx = ((const struct asc_hdr *)x->b)->type == ASC_REC_DEVTASK;
	int dy = ((const struct asc_hdr *)y->b)->type == ASC_REC_DEVTASK;

	if (dx != dy)
		return dx - dy; /* device records after the host's, as the tracer writes them */
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : 1;
}

static void append(int r, const void *p, size_t size)
{
	if (asc_capture_append(R[r].w, p, size)) {
		fprintf(stderr, "mkcomm: append failed\n");
		exit(1);
	}
}

static void flush(int r)
{
	size_t i;

	qsort(R[r].recs, R[r].n, sizeof(*R[r].recs), cmp_rec);
	for (i = 0; i < R[r].n; i++)
		append(r, R[r].recs[i].b, R[r].recs[i].size);
	R[r].n = 0;
	asc_capture_flush(R[r].w);
}

static void put_text(int r, uint16_t type, const char *text)
{
	size_t n = strlen(text), size = asc_text_rec_size(n);
	struct asc_text *t = calloc(1, size);

	t->hdr.type = type;
	t->hdr.size = size;
	t->hdr.tgid = R[r].pid;
	memcpy(t->text, text, n);
	append(r, t, size);
	free(t);
}

static void put_clock(int r, uint32_t which, uint64_t mono)
{
	struct asc_clock c = { 0 };

	c.hdr.type = ASC_REC_CLOCK;
	c.hdr.size = sizeof(c);
	c.hdr.tgid = R[r].pid;
	c.hdr.ts_ns = mono;
	c.realtime_ns = wall(mono);
	c.monotonic_raw_ns = mono;
	c.which = which;
	append(r, &c, sizeof(c));
}

static void header(int r)
{
	const char cmd[] = "python3\0train.py\0";
	size_t size = asc_process_rec_size(sizeof(cmd)), i;
	struct asc_process *p = calloc(1, size);
	struct asc_devclock d = { 0 };

	put_clock(r, ASC_CLOCK_START, MONO_BASE);
	d.hdr.type = ASC_REC_DEVCLOCK;
	d.hdr.size = sizeof(d);
	d.hdr.tgid = R[r].pid;
	d.hdr.ts_ns = MONO_BASE;
	d.counter = dev_cnt(MONO_BASE);
	d.freq_hz = DEV_FREQ;
	append(r, &d, sizeof(d));
	p->hdr.type = ASC_REC_PROCESS;
	p->hdr.size = size;
	p->hdr.tgid = R[r].pid;
	p->hdr.tid = R[r].pid;
	p->rank = r;
	p->device = r;
	p->cmdline_len = sizeof(cmd);
	memcpy(p->comm, "python3", 7);
	memcpy(p->strings, cmd, sizeof(cmd));
	append(r, p, size);
	free(p);
	put_text(r, ASC_REC_CONFIG, "level=0");
	put_text(r, ASC_REC_CONFIG, "activities=cpu,npu");
	for (i = 1; i < P_COUNT; i++) {
		size_t ll = strlen(probes[i].lib), sl = strlen(probes[i].sym);
		size_t ps = asc_probe_rec_size(ll, sl);
		struct asc_probe *pr = calloc(1, ps);

		pr->hdr.type = ASC_REC_PROBE;
		pr->hdr.size = ps;
		pr->hdr.tgid = R[r].pid;
		pr->hdr.probe_id = i;
		pr->layer = probes[i].layer;
		pr->kind = probes[i].kind;
		pr->lib_len = ll;
		pr->sym_len = sl;
		memcpy(pr->strings, probes[i].lib, ll);
		memcpy(pr->strings + ll + 1, probes[i].sym, sl);
		append(r, pr, ps);
		free(pr);
	}
}

static void hash_rec(int r, uint64_t ts, uint64_t h, const char *s)
{
	struct asc_hccl_hash *x = newrec(r, ASC_REC_HCCL_HASH, sizeof(*x), R[r].pid, P_HASH, ts);

	x->hash = h;
	x->len = strlen(s);
	snprintf(x->name, sizeof(x->name), "%s", s);
}

/* ---- the job ---- */

static int node_of(int r)
{
	return r * nodes / nranks;
}

static int slow_a = -1, slow_b = -1;
static double link_factor = 1;

/* ns to move `bytes` from a to b */
static uint64_t xfer_ns(int a, int b, uint64_t bytes)
{
	double gbps = node_of(a) == node_of(b) ? 20.0 : 10.0;

	if ((a == slow_a && b == slow_b) || (a == slow_b && b == slow_a))
		gbps /= link_factor;
	/* bytes / (GB/s) = ns, + 2 us latency; whole device ticks (20 ns) */
	return ((uint64_t)((double)bytes / gbps) + 2000) / 20 * 20;
}

/* One device task of rank r being laid out. */
struct task {
	int kind, peer;
	uint64_t s, e; /* mono; e == 0: never ends */
	uint64_t bytes;
};

struct opsim {
	struct task t[4 * 5 * MAXR];
	int n;
	uint64_t wait, sync, transit; /* ns */
	uint64_t wait_on[MAXR];	      /* ns of the first sync's Notify_Wait on each peer */
	uint64_t link_bytes[MAXR], link_ns[MAXR];
};

static FILE *truth;

/* One device task record with its HCCL_TASK report and SQE, at mono ts on rank r. */
static void comm_task(int r, uint64_t sub, const struct task *tk, int peer_kind_link)
{
	struct asc_hccl_task *ht = newrec(r, ASC_REC_HCCL_TASK, sizeof(*ht), R[r].pid, P_REPORT,
					  sub - 1);
	struct asc_sqe *q = newrec(r, ASC_REC_SQE, sizeof(*q), R[r].pid, P_HAL_SEND, sub);
	struct asc_devtask *d = newrec(r, ASC_REC_DEVTASK, sizeof(*d), 0, 0, tk->s);

	ht->item_id = khash[tk->kind];
	ht->group_hash = GROUP_HASH;
	ht->local_rank = r;
	ht->remote_rank = tk->peer;
	ht->rank_size = 2;
	ht->data_size = tk->bytes;
	ht->data_type = HCCL_DATA_TYPE_FP32;
	ht->link_type = (uint8_t)peer_kind_link;
	q->dev_id = r;
	q->sq_id = 3;
	q->sqe_num = 1;
	q->nr_kept = 1;
	q->sqe[0].sqe_type = tk->kind == K_RECORD ? 6 : tk->kind == K_WAIT ? 7 : 11;
	q->sqe[0].stream_id = HCCL_STREAM;
	q->sqe[0].task_id = R[r].task;
	d->start_cnt = dev_cnt(tk->s);
	d->end_cnt = dev_cnt(tk->e);
	d->dev_id = r;
	d->stream_id = HCCL_STREAM;
	d->task_id = R[r].task++;
	d->task_type = q->sqe[0].sqe_type;
}

static uint64_t later(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* --pipeline: one step of rank 0 sending to rank 1 (see the head comment). */
static void pipeline_step(int st, uint64_t step0, uint64_t bytes)
{
	struct task snd[4], rcv[3];
	uint64_t c0 = step0 + 10000, e0 = c0 + 100000, e1 = c0 + 10000, s0 = e0 + 5000;
	uint64_t s1 = e1 + 5000, xfer = xfer_ns(0, 1, bytes);
	int r, i;

	snd[0] = (struct task){ K_RECORD, 1, s0, s0 + 1000, 0 };
	rcv[0] = (struct task){ K_RECORD, 0, s1, s1 + 1000, 0 };
	snd[1] = (struct task){ K_WAIT, 1, snd[0].e, later(snd[0].e + 1000, rcv[0].e), 0 };
	snd[2] = (struct task){ K_MEMCPY, 1, snd[1].e, snd[1].e + xfer, bytes };
	snd[3] = (struct task){ K_RECORD, 1, snd[2].e, snd[2].e + 1000, 0 };
	rcv[1] = (struct task){ K_WAIT, 0, rcv[0].e, later(rcv[0].e + 1000, snd[0].e), 0 };
	rcv[2] = (struct task){ K_WAIT, 0, rcv[1].e, later(rcv[1].e + 1000, snd[3].e), 0 };
	for (r = 0; r < 2; r++) {
		struct task *t = r ? rcv : snd;
		int n = r ? 3 : 4;
		uint64_t h0 = (r ? e1 : e0) + 1000, sub = h0 + 2000;
		struct asc_step *sp = newrec(r, ASC_REC_STEP, sizeof(*sp), R[r].pid, P_STEP, step0);
		struct asc_sqe *q = newrec(r, ASC_REC_SQE, sizeof(*q), R[r].pid, P_HAL_SEND,
					   step0 + 5000);
		struct asc_devtask *d = newrec(r, ASC_REC_DEVTASK, sizeof(*d), 0, 0, c0);
		struct asc_hccl_op *e;

		sp->step = st;
		sp->state = ASC_SCHED_RECORD;
		q->dev_id = r;
		q->sq_id = 1;
		q->sqe_num = 1;
		q->nr_kept = 1;
		q->sqe[0].block_dim = 8;
		q->sqe[0].stream_id = 2;
		q->sqe[0].task_id = R[r].task;
		d->start_cnt = dev_cnt(c0);
		d->end_cnt = dev_cnt(r ? e1 : e0);
		d->dev_id = r;
		d->stream_id = 2;
		d->task_id = R[r].task++;
		e = newrec(r, ASC_REC_HCCL_OP, sizeof(*e), R[r].pid, r ? P_RECV : P_SEND, h0);
		e->side = ASC_HCCL_ENTRY;
		e->args[0] = 0x1000;
		e->args[1] = bytes / 4;
		e->args[2] = HCCL_DATA_TYPE_FP32;
		e->args[3] = 1 - r;
		e->args[4] = COMM_H + r;
		e->args[5] = 0x5505;
		for (i = 0; i < n; i++)
			comm_task(r, sub + i, &t[i], ASC_HCCL_LINK_HCCS);
		e = newrec(r, ASC_REC_HCCL_OP, sizeof(*e), R[r].pid, r ? P_RECV : P_SEND,
			   sub + n + 1000);
		e->side = ASC_HCCL_RETURN;
		fprintf(truth,
			"%s{\"rank\": %d, \"step\": %d, \"seq\": %d, \"name\": "
			"\"hcom_%s__%llu_%d_1\", \"dev_start\": %llu, \"dev_end\": %llu, "
			"\"comp_start\": %llu, \"comp_end\": %llu, \"step_start\": %llu}",
			st || r ? ",\n" : "", r, st, st, r ? "receive" : "send",
			(unsigned long long)(GROUP_HASH % 1000), st,
			(unsigned long long)wall(t[0].s), (unsigned long long)wall(t[n - 1].e),
			(unsigned long long)wall(c0), (unsigned long long)wall(r ? e1 : e0),
			(unsigned long long)wall(step0));
		flush(r);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ranks", required_argument, NULL, 'n' },
		{ "steps", required_argument, NULL, 's' },
		{ "bytes", required_argument, NULL, 'b' },
		{ "slow-rank", required_argument, NULL, 'r' },
		{ "slow-factor", required_argument, NULL, 'k' },
		{ "slow-link", required_argument, NULL, 'l' },
		{ "link-factor", required_argument, NULL, 'f' },
		{ "hang-rank", required_argument, NULL, 'H' },
		{ "hang-seq", required_argument, NULL, 'Q' },
		{ "nodes", required_argument, NULL, 'N' },
		{ "overlap-us", required_argument, NULL, 'O' },
		{ "subgroup", required_argument, NULL, 'G' },
		{ "pipeline", no_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL;
	int steps = 3, slow_rank = -1, hang_rank = -1, hang_seq = -1, c, r, p, st;
	double slow_factor = 1;
	uint64_t overlap_ns = 0;
	int subgroup = 0, pipeline = 0;
	uint64_t bytes = 8 << 20, t = MONO_BASE + 1000000;
	char path[4096];
	static struct opsim sim[MAXR];

	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			dir = optarg;
			break;
		case 'n':
			nranks = atoi(optarg);
			break;
		case 's':
			steps = atoi(optarg);
			break;
		case 'b':
			bytes = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			slow_rank = atoi(optarg);
			break;
		case 'k':
			slow_factor = atof(optarg);
			break;
		case 'l':
			if (sscanf(optarg, "%d-%d", &slow_a, &slow_b) != 2)
				return 2;
			break;
		case 'f':
			link_factor = atof(optarg);
			break;
		case 'H':
			hang_rank = atoi(optarg);
			break;
		case 'Q':
			hang_seq = atoi(optarg);
			break;
		case 'N':
			nodes = atoi(optarg);
			break;
		case 'O':
			overlap_ns = strtoull(optarg, NULL, 0) * 1000;
			break;
		case 'G':
			subgroup = atoi(optarg);
			break;
		case 'P':
			pipeline = 1;
			break;
		default:
			return 2;
		}
	}
	if (!dir || nranks < 2 || nranks > MAXR || nodes < 1 || nodes > nranks || steps < 1 ||
	    (pipeline && nranks != 2)) {
		fprintf(stderr, "usage: mkcomm -o DIR [--ranks N] [--steps S] ...\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/truth.json", dir);
	truth = fopen(path, "w");
	if (!truth)
		return 1;
	fprintf(truth,
		"{\"ranks\": %d, \"nodes\": %d, \"group\": \"%s\", \"wall_base\": %llu, "
		"\"slow_rank\": %d, \"slow_link\": [%d, %d], \"hang_rank\": %d, \"hang_seq\": %d, "
		"\"bytes\": %llu, \"steps\": %d, \"ops\": [",
		nranks, nodes, GROUP, (unsigned long long)WALL_BASE, slow_rank, slow_a, slow_b,
		hang_rank, hang_seq, (unsigned long long)bytes, steps);
	for (r = 0; r < nranks; r++) {
		struct asc_hccl_comm *cm;
		int k;

		R[r].pid = 5000 + r * 10;
		R[r].task = 100;
		snprintf(path, sizeof(path), "%s/rank%d.ascb", dir, r);
		R[r].w = asc_capture_create(path, 1);
		if (!R[r].w)
			return 1;
		header(r);
		for (k = 1; k <= K_REDUCE; k++)
			hash_rec(r, t - 500000 + k, khash[k], kname[k]);
		hash_rec(r, t - 400000, GROUP_HASH, GROUP);
		cm = newrec(r, ASC_REC_HCCL_COMM, sizeof(*cm), R[r].pid, P_INIT, t - 300000);
		cm->comm = COMM_H + r;
		cm->enter_ns = t - 350000;
		cm->nranks = nranks;
		cm->rank = r;
		cm->kind = ASC_HCCL_COMM_ROOTINFO;
		snprintf(cm->group, sizeof(cm->group), "%s", GROUP);
		if (subgroup > 0 && nranks % subgroup == 0) {
			int stride = nranks / subgroup;

			cm = newrec(r, ASC_REC_HCCL_COMM, sizeof(*cm), R[r].pid, P_INIT,
				    t - 200000);
			cm->comm = COMM_H + 0x100 + r;
			cm->enter_ns = t - 250000;
			cm->nranks = subgroup;
			cm->rank = r / stride;
			cm->kind = ASC_HCCL_COMM_ROOTINFO;
			snprintf(cm->group, sizeof(cm->group), "sub%d", r % stride);
		}
		flush(r);
	}
	for (st = 0; pipeline && st < steps; st++)
		pipeline_step(st, t + (uint64_t)st * 10000000, bytes);
	if (pipeline)
		t += (uint64_t)steps * 10000000;
	for (st = 0; !pipeline && st < steps; st++) {
		uint64_t arrive[MAXR], cur[MAXR], phase_end[MAXR], step0 = t, comp_end[MAXR];
		uint64_t stuck = 0;
		int ph, first_op = 1;

		(void)first_op;
		memset(sim, 0, sizeof(sim));
		for (r = 0; r < nranks; r++) {
			struct asc_step *s;
			struct asc_sqe *q;
			struct asc_devtask *d;
			uint64_t ks = step0 + 10000, ke;

			if (R[r].dead)
				continue;
			s = newrec(r, ASC_REC_STEP, sizeof(*s), R[r].pid, P_STEP, step0);
			s->step = st;
			s->state = ASC_SCHED_RECORD;
			q = newrec(r, ASC_REC_SQE, sizeof(*q), R[r].pid, P_HAL_SEND, step0 + 5000);
			q->dev_id = r;
			q->sq_id = 1;
			q->sqe_num = 1;
			q->nr_kept = 1;
			q->sqe[0].sqe_type = 0;
			q->sqe[0].block_dim = 8;
			q->sqe[0].stream_id = 2;
			q->sqe[0].task_id = R[r].task;
			ke = ks + (uint64_t)(100000 * (r == slow_rank ? slow_factor : 1));
			d = newrec(r, ASC_REC_DEVTASK, sizeof(*d), 0, 0, ks);
			d->start_cnt = dev_cnt(ks);
			d->end_cnt = dev_cnt(ke);
			d->dev_id = r;
			d->stream_id = 2;
			d->task_id = R[r].task++;
			d->task_type = 0;
			comp_end[r] = ke;
			/* the host enters the collective once its compute is done (a sync) */
			arrive[r] = ke + 1000;
			cur[r] = arrive[r] + 5000; /* device start of the op */
		}
		/* the five phases, all ranks together: each depends on the peers' previous one */
		for (ph = 0; ph < 5; ph++) {
			uint64_t rec_end[MAXR][MAXR]; /* [p][r]: p's record to r ended */

			for (r = 0; r < nranks; r++) {
				struct opsim *o = &sim[r];

				if (R[r].dead || (hang_rank == r && st == hang_seq))
					continue;
				if (ph % 2 == 0) { /* sync: records */
					for (p = 0; p < nranks; p++) {
						if (p == r)
							continue;
						o->t[o->n++] = (struct task){ K_RECORD, p, cur[r],
									      cur[r] + 1000, 0 };
						cur[r] += 1000;
						rec_end[r][p] = cur[r];
					}
				} else { /* transfers */
					for (p = 0; p < nranks; p++) {
						uint64_t b = bytes / nranks, d = xfer_ns(p, r, b);

						if (p == r)
							continue;
						int kd = ph == 1 ? K_REDUCE : K_MEMCPY;

						o->t[o->n++] = (struct task){ kd, p, cur[r],
									      cur[r] + d, b };
						cur[r] += d;
						o->transit += d;
						o->link_bytes[p] += b;
						o->link_ns[p] += d;
					}
				}
			}
			if (ph % 2)
				continue;
			for (r = 0; r < nranks; r++) { /* sync: waits */
				struct opsim *o = &sim[r];

				if (R[r].dead || (hang_rank == r && st == hang_seq))
					continue;
				for (p = 0; p < nranks; p++) {
					uint64_t e;
					int gone = hang_rank == p && st == hang_seq;

					if (p == r)
						continue;
					if (gone || cur[r] == 0) {
						o->t[o->n++] = (struct task){ K_WAIT, p, cur[r], 0,
									      0 };
						cur[r] = 0; /* stuck */
						continue;
					}
					e = rec_end[p][r] > cur[r] + 1000 ? rec_end[p][r] :
									    cur[r] + 1000;
					o->t[o->n++] = (struct task){ K_WAIT, p, cur[r], e, 0 };
					o->wait += e - cur[r];
					if (ph == 0) {
						o->sync += e - cur[r];
						o->wait_on[p] += e - cur[r];
					}
					cur[r] = e;
				}
				phase_end[r] = cur[r];
			}
			if (hang_seq == st)
				stuck = 1;
		}
		/* the records of each rank's op */
		for (r = 0; r < nranks; r++) {
			struct opsim *o = &sim[r];
			struct asc_hccl_op *e;
			uint64_t h0 = arrive[r], sub = h0 + 2000, dev0 = o->n ? o->t[0].s : 0;
			uint64_t dev1 = 0;
			int i, j;

			if (R[r].dead)
				continue;
			if (hang_rank == r && st == hang_seq) {
				R[r].dead = 1; /* never enters: its capture ends here */
				flush(r);
				continue;
			}
			e = newrec(r, ASC_REC_HCCL_OP, sizeof(*e), R[r].pid, P_ALLREDUCE, h0);
			e->side = ASC_HCCL_ENTRY;
			e->args[0] = 0x1000;
			e->args[1] = 0x2000;
			e->args[2] = bytes / 4;
			e->args[3] = HCCL_DATA_TYPE_FP32;
			e->args[4] = HCCL_REDUCE_SUM;
			e->args[5] = COMM_H + r;
			e->args[6] = 0x5505;
			for (i = 0; i < o->n; i++) { /* one halSqTaskSend per task */
				struct asc_sqe *q = newrec(r, ASC_REC_SQE, sizeof(*q), R[r].pid,
							   P_HAL_SEND, sub + i);

				q->dev_id = r;
				q->sq_id = 3;
				q->sqe_num = 1;
				for (j = 0; j < 1 && i + j < o->n; j++) {
					struct asc_hccl_task *ht = newrec(r, ASC_REC_HCCL_TASK,
									  sizeof(*ht), R[r].pid,
									  P_REPORT, sub + i - 1);
					struct task *tk = &o->t[i + j];

					ht->item_id = khash[tk->kind];
					ht->group_hash = GROUP_HASH;
					ht->local_rank = r;
					ht->remote_rank = tk->peer;
					ht->rank_size = nranks;
					ht->plane_id = tk->peer < r ? tk->peer : tk->peer - 1;
					ht->data_size = tk->bytes;
					ht->data_type = tk->bytes ? HCCL_DATA_TYPE_FP32 : 0;
					ht->link_type = node_of(r) == node_of(tk->peer) ?
								ASC_HCCL_LINK_HCCS :
								ASC_HCCL_LINK_ROCE;
					ht->transport_type = node_of(r) == node_of(tk->peer) ?
								     ASC_HCCL_TRANSPORT_SDMA :
								     ASC_HCCL_TRANSPORT_RDMA;
					q->sqe[j].sqe_type = tk->kind == K_RECORD ? 6 :
							     tk->kind == K_WAIT	  ? 7 :
										    11;
					q->sqe[j].stream_id = HCCL_STREAM;
					q->sqe[j].task_id = R[r].task;
					/* a task that never ends has no device record */
					if (tk->e) {
						struct asc_devtask *d = newrec(r, ASC_REC_DEVTASK,
									       sizeof(*d), 0, 0,
									       tk->s);

						d->start_cnt = dev_cnt(tk->s);
						d->end_cnt = dev_cnt(tk->e);
						d->dev_id = r;
						d->stream_id = HCCL_STREAM;
						d->task_id = R[r].task;
						d->task_type = q->sqe[j].sqe_type;
						dev1 = tk->e;
					} else {
						dev1 = 0;
						/* nothing after a stuck wait runs */
						for (int z = i + j + 1; z < o->n; z++)
							o->t[z].e = 0;
					}
					R[r].task++;
				}
				q->nr_kept = j;
			}
			e = newrec(r, ASC_REC_HCCL_OP, sizeof(*e), R[r].pid, P_ALLREDUCE,
				   sub + o->n + 1000);
			e->side = ASC_HCCL_RETURN;
			if (overlap_ns && dev0) {
				struct asc_sqe *q = newrec(r, ASC_REC_SQE, sizeof(*q), R[r].pid,
							   P_HAL_SEND, sub + o->n + 2000);
				struct asc_devtask *d = newrec(r, ASC_REC_DEVTASK, sizeof(*d), 0, 0,
							       dev0 + 10000);

				q->dev_id = r;
				q->sq_id = 1;
				q->sqe_num = 1;
				q->nr_kept = 1;
				q->sqe[0].block_dim = 8;
				q->sqe[0].stream_id = 2;
				q->sqe[0].task_id = R[r].task;
				d->start_cnt = dev_cnt(dev0 + 10000);
				d->end_cnt = dev_cnt(dev0 + 10000 + overlap_ns);
				d->dev_id = r;
				d->stream_id = 2;
				d->task_id = R[r].task++;
			}
			fprintf(truth,
				"%s{\"rank\": %d, \"step\": %d, \"seq\": %d, \"name\": "
				"\"hcom_allReduce__%llu_%d_1\", \"arrival\": %llu, "
				"\"dev_start\": %llu, "
				"\"dev_end\": %llu, \"wait_ns\": %llu, \"sync_ns\": %llu, "
				"\"transit_ns\": %llu, \"comp_start\": %llu, \"comp_end\": %llu, "
				"\"step_start\": %llu, \"overlap\": [%llu, %llu], \"wait_on\": [",
				st || r ? ",\n" : "", r, st, st,
				(unsigned long long)(GROUP_HASH % 1000), st,
				(unsigned long long)wall(h0), (unsigned long long)wall(dev0),
				dev1 ? (unsigned long long)wall(dev1) : 0ull,
				(unsigned long long)o->wait, (unsigned long long)o->sync,
				(unsigned long long)o->transit,
				(unsigned long long)wall(step0 + 10000),
				(unsigned long long)wall(comp_end[r]),
				(unsigned long long)wall(step0),
				overlap_ns && dev0 ? (unsigned long long)wall(dev0 + 10000) : 0ull,
				overlap_ns && dev0 ?
					(unsigned long long)wall(dev0 + 10000 + overlap_ns) :
					0ull);
			for (p = 0; p < nranks; p++)
				fprintf(truth, "%s%llu", p ? ", " : "",
					(unsigned long long)o->wait_on[p]);
			fprintf(truth, "], \"links\": [");
			for (p = 0, j = 0; p < nranks; p++)
				if (p != r)
					fprintf(truth,
						"%s{\"src\": %d, \"dst\": %d, "
						"\"bytes\": %llu, \"ns\": %llu, "
						"\"transport\": \"%s\"}",
						j++ ? ", " : "", r, p,
						(unsigned long long)o->link_bytes[p],
						(unsigned long long)o->link_ns[p],
						node_of(r) == node_of(p) ? "HCCS" : "RDMA");
			fprintf(truth, "]}");
			if (dev1 == 0)
				R[r].dead = 2; /* stuck on the device: nothing more */
			flush(r);
			(void)phase_end;
		}
		t = step0 + 10000000; /* 10 ms steps */
		if (stuck)
			break;
	}
	fprintf(truth, "]}\n");
	fclose(truth);
	for (r = 0; r < nranks; r++) {
		if (!R[r].dead) { /* a clean end; hung jobs were killed: no end */
			struct asc_stats s = { 0 };

			s.hdr.type = ASC_REC_STATS;
			s.hdr.size = sizeof(s);
			s.hdr.tgid = R[r].pid;
			append(r, &s, sizeof(s));
			put_clock(r, ASC_CLOCK_END, t);
		}
		if (asc_capture_close(R[r].w))
			return 1;
		free(R[r].recs);
	}
	return 0;
}
