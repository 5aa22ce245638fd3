// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_consumer.c - the ring-buffer record handler on synthetic samples:
 * well-formed BPF records reach the sink and are counted by type and layer;
 * wrong sizes, userspace types, out-of-bounds counts never do; samples of
 * several records (one BPF reservation for records that belong together)
 * reach the sink record by record, byte for byte, and a sample whose inner
 * sizes do not tile it reaches it not at all.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <cmocka.h>
#include <linux/bpf.h>
#include "trace/consumer.h"

#define LOG_RECS 8

struct sink_log {
	int calls;
	size_t last_size;
	uint16_t last_type;
	int fail;
	int fail_call; /* with fail: only this call (1-based) fails; 0: every call */
	int loader_calls;
	uint32_t loader_tgid;
	unsigned char rec[LOG_RECS][256]; /* copies of the first LOG_RECS records */
	size_t size[LOG_RECS];
};

static int sink(void *ctx, const void *rec, size_t size)
{
	struct sink_log *l = ctx;

	if (l->calls < LOG_RECS && size <= sizeof(l->rec[0])) {
		memcpy(l->rec[l->calls], rec, size);
		l->size[l->calls] = size;
	}
	l->calls++;
	l->last_size = size;
	l->last_type = ((const struct asc_hdr *)rec)->type;
	if (l->fail_call && l->calls != l->fail_call)
		return 0;
	return l->fail;
}

static void loader(void *ctx, uint32_t tgid, uint64_t hold, uint64_t arg)
{
	struct sink_log *l = ctx;

	(void)hold;
	(void)arg;
	l->loader_calls++;
	l->loader_tgid = tgid;
}

static const uint16_t layers[] = { 0, ASC_LAYER_CANN, ASC_LAYER_FRAMEWORK, ASC_LAYER_DRIVER };

static void setup_consumer(struct asc_consumer *c, struct sink_log *l)
{
	memset(c, 0, sizeof(*c));
	memset(l, 0, sizeof(*l));
	c->sink = sink;
	c->sink_ctx = l;
	c->on_loader = loader;
	c->loader_ctx = l;
	c->loader_probe_id = 99;
	c->probe_layer = layers;
	c->nr_probe_layer = 4;
}

/* The fixture of the handler tests: a consumer whose sink logs into l, fresh for each test. */
struct consumer_test {
	struct asc_consumer c;
	struct sink_log l;
};

static int consumer_setup(void **state)
{
	static struct consumer_test t;

	setup_consumer(&t.c, &t.l);
	*state = &t;
	return 0;
}

static void hdr(struct asc_hdr *h, uint16_t type, uint16_t size, uint32_t probe_id)
{
	h->type = type;
	h->size = size;
	h->tgid = 100;
	h->tid = 101;
	h->probe_id = probe_id;
	h->ts_ns = 12345;
}

static void test_enter_exit_counted_by_layer(void **state)
{
	struct consumer_test *t = *state;
	struct asc_enter e = {};
	struct asc_exit x = {};

	hdr(&e.hdr, ASC_REC_ENTER, sizeof(e), 1);
	hdr(&x.hdr, ASC_REC_EXIT, sizeof(x), 2);
	assert_int_equal(asc_consumer_handle(&t->c, &e, sizeof(e)), 0);
	assert_int_equal(asc_consumer_handle(&t->c, &x, sizeof(x)), 0);
	assert_int_equal(t->l.calls, 2);
	assert_int_equal(t->l.last_type, ASC_REC_EXIT);
	assert_int_equal(t->c.records, 2);
	assert_int_equal(t->c.bytes, sizeof(e) + sizeof(x));
	assert_int_equal(t->c.by_type[ASC_REC_ENTER], 1);
	assert_int_equal(t->c.by_type[ASC_REC_EXIT], 1);
	assert_int_equal(t->c.by_layer[ASC_LAYER_CANN], 1);
	assert_int_equal(t->c.by_layer[ASC_LAYER_FRAMEWORK], 1);
	assert_int_equal(t->c.bad, 0);
}

static void test_probe_id_outside_table_is_layer_zero(void **state)
{
	struct consumer_test *t = *state;
	struct asc_enter e = {};

	hdr(&e.hdr, ASC_REC_ENTER, sizeof(e), 50);
	assert_int_equal(asc_consumer_handle(&t->c, &e, sizeof(e)), 0);
	assert_int_equal(t->c.by_layer[0], 1);
}

static void test_type_decides_layer(void **state)
{
	struct consumer_test *t = *state;
	struct asc_ioctl io = {};
	struct asc_mem m = {};
	struct asc_step s = {};

	hdr(&io.hdr, ASC_REC_IOCTL, sizeof(io), 0);
	hdr(&m.hdr, ASC_REC_MEM, sizeof(m), 1); /* probe 1 is CANN, type wins */
	hdr(&s.hdr, ASC_REC_STEP, sizeof(s), 0);
	assert_int_equal(asc_consumer_handle(&t->c, &io, sizeof(io)), 0);
	assert_int_equal(asc_consumer_handle(&t->c, &m, sizeof(m)), 0);
	assert_int_equal(asc_consumer_handle(&t->c, &s, sizeof(s)), 0);
	assert_int_equal(t->c.by_layer[ASC_LAYER_DRIVER], 1);
	assert_int_equal(t->c.by_layer[ASC_LAYER_MEMORY], 1);
	assert_int_equal(t->c.by_layer[ASC_LAYER_PYTHON], 1);
	assert_int_equal(t->c.by_layer[ASC_LAYER_CANN], 0);
}

static void test_short_sample_rejected(void **state)
{
	struct consumer_test *t = *state;
	struct asc_enter e = {};

	hdr(&e.hdr, ASC_REC_ENTER, sizeof(e), 1);
	assert_int_equal(asc_consumer_handle(&t->c, &e, 8), -EBADMSG);
	assert_int_equal(asc_consumer_handle(&t->c, NULL, 0), -EBADMSG);
	assert_int_equal(t->l.calls, 0);
	assert_int_equal(t->c.bad, 2);
	assert_int_equal(t->c.records, 0);
}

static void test_size_mismatch_rejected(void **state)
{
	struct consumer_test *t = *state;
	unsigned char buf[sizeof(struct asc_enter) + 8] = {};
	struct asc_hdr *h = (struct asc_hdr *)buf;

	/* header says 72 but the sample is 80 */
	hdr(h, ASC_REC_ENTER, sizeof(struct asc_enter), 1);
	assert_int_equal(asc_consumer_handle(&t->c, buf, sizeof(buf)), -EBADMSG);
	/* header and sample agree, but ENTER is fixed at 72 */
	hdr(h, ASC_REC_ENTER, sizeof(buf), 1);
	assert_int_equal(asc_consumer_handle(&t->c, buf, sizeof(buf)), -EBADMSG);
	/* an EXIT-sized ENTER */
	hdr(h, ASC_REC_ENTER, sizeof(struct asc_exit), 1);
	assert_int_equal(asc_consumer_handle(&t->c, buf, sizeof(struct asc_exit)), -EBADMSG);
	assert_int_equal(t->l.calls, 0);
	assert_int_equal(t->c.bad, 3);
}

static void test_userspace_and_invalid_types_rejected(void **state)
{
	struct consumer_test *t = *state;
	struct asc_devtask d = {};
	struct asc_exit x = {};

	hdr(&d.hdr, ASC_REC_DEVTASK, sizeof(d), 0);
	assert_int_equal(asc_consumer_handle(&t->c, &d, sizeof(d)), -EBADMSG);
	hdr(&x.hdr, ASC_REC_INVALID, sizeof(x), 0);
	assert_int_equal(asc_consumer_handle(&t->c, &x, sizeof(x)), -EBADMSG);
	/* a type BPF does not write in this build */
	hdr(&x.hdr, 40, sizeof(x), 0);
	assert_int_equal(asc_consumer_handle(&t->c, &x, sizeof(x)), -EBADMSG);
	assert_int_equal(t->l.calls, 0);
	assert_int_equal(t->c.bad, 3);
}

static void test_counts_out_of_bounds_rejected(void **state)
{
	struct consumer_test *t = *state;
	struct asc_sqe s = {};
	struct asc_opname o = {};
	struct asc_stack st = {};

	hdr(&s.hdr, ASC_REC_SQE, sizeof(s), 3);
	s.nr_kept = ASC_MAX_SQES + 1;
	assert_int_equal(asc_consumer_handle(&t->c, &s, sizeof(s)), -EBADMSG);
	s.nr_kept = ASC_MAX_SQES;
	s.sqe_num = 100; /* more submitted than kept is fine */
	assert_int_equal(asc_consumer_handle(&t->c, &s, sizeof(s)), 0);
	hdr(&o.hdr, ASC_REC_OPNAME, sizeof(o), 2);
	o.len = ASC_NAME_LEN + 1;
	assert_int_equal(asc_consumer_handle(&t->c, &o, sizeof(o)), -EBADMSG);
	hdr(&st.hdr, ASC_REC_STACK, sizeof(st), 2);
	st.nr = ASC_STACK_DEPTH + 1;
	assert_int_equal(asc_consumer_handle(&t->c, &st, sizeof(st)), -EBADMSG);
	assert_int_equal(t->l.calls, 1);
	assert_int_equal(t->c.bad, 3);
	assert_int_equal(t->c.by_type[ASC_REC_SQE], 1);
}

static void test_loader_record_not_in_capture(void **state)
{
	struct consumer_test *t = *state;
	struct asc_enter e = {};

	hdr(&e.hdr, ASC_REC_ENTER, sizeof(e), 99);
	e.hdr.tgid = 4242;
	assert_int_equal(asc_consumer_handle(&t->c, &e, sizeof(e)), 0);
	assert_int_equal(t->l.calls, 0);
	assert_int_equal(t->l.loader_calls, 1);
	assert_int_equal(t->l.loader_tgid, 4242);
	assert_int_equal(t->c.loader_events, 1);
	assert_int_equal(t->c.records, 0);
	/* without a loader id the same record is an ordinary ENTER */
	t->c.loader_probe_id = 0;
	assert_int_equal(asc_consumer_handle(&t->c, &e, sizeof(e)), 0);
	assert_int_equal(t->l.calls, 1);
}

static void test_sink_error_counted(void **state)
{
	struct consumer_test *t = *state;
	struct asc_exit x = {};

	t->l.fail = -ENOSPC;
	hdr(&x.hdr, ASC_REC_EXIT, sizeof(x), 1);
	assert_int_equal(asc_consumer_handle(&t->c, &x, sizeof(x)), -ENOSPC);
	assert_int_equal(t->c.sink_errors, 1);
	asc_consumer_reset(&t->c);
	assert_int_equal(t->c.records, 0);
	assert_int_equal(t->c.sink_errors, 0);
	assert_ptr_equal(t->c.sink, sink);
}

static void test_layer_summary(void **state)
{
	struct consumer_test *t = *state;
	struct asc_enter e = {};
	char buf[160];

	hdr(&e.hdr, ASC_REC_ENTER, sizeof(e), 1);
	asc_consumer_handle(&t->c, &e, sizeof(e));
	asc_consumer_handle(&t->c, &e, sizeof(e));
	asc_consumer_layer_summary(&t->c, buf, sizeof(buf));
	assert_string_equal(buf, "framework=0 cann=2 driver=0 memory=0 python=0 hccl=0 other=0");
}

/* HCCL records count as hccl, whatever the layer of the probe that sent them (cann here). */
static void test_layer_summary_hccl(void **state)
{
	struct consumer_test *t = *state;
	struct asc_hccl_op o = {};
	struct asc_hccl_task k = {};
	char buf[160];

	hdr(&o.hdr, ASC_REC_HCCL_OP, sizeof(o), 1);
	hdr(&k.hdr, ASC_REC_HCCL_TASK, sizeof(k), 1);
	asc_consumer_handle(&t->c, &o, sizeof(o));
	asc_consumer_handle(&t->c, &k, sizeof(k));
	asc_consumer_layer_summary(&t->c, buf, sizeof(buf));
	assert_string_equal(buf, "framework=0 cann=0 driver=0 memory=0 python=0 hccl=2 other=0");
}

/* The records of a Level1 Enqueue, as one sample: ENTER, QUEUE, OPNAME. */
struct group_eqo {
	struct asc_enter e;
	struct asc_queue q;
	struct asc_opname o;
};

static void make_group(struct group_eqo *g)
{
	memset(g, 0, sizeof(*g));
	hdr(&g->e.hdr, ASC_REC_ENTER, sizeof(g->e), 2);
	g->e.args[1] = 0x1234;
	hdr(&g->q.hdr, ASC_REC_QUEUE, sizeof(g->q), 2);
	g->q.correlation_id = 77;
	g->q.param_type = 8;
	hdr(&g->o.hdr, ASC_REC_OPNAME, sizeof(g->o), 2);
	g->o.len = 3;
	memcpy(g->o.name, "Add", 4);
}

/* The fixture of the group tests: a fresh consumer and g as make_group() makes it. */
struct group_test {
	struct asc_consumer c;
	struct sink_log l;
	struct group_eqo g;
};

static int group_setup(void **state)
{
	static struct group_test t;

	setup_consumer(&t.c, &t.l);
	make_group(&t.g);
	*state = &t;
	return 0;
}

static void test_sample_of_several_records(void **state)
{
	struct group_test *t = *state;
	struct group_eqo *g = &t->g;

	_Static_assert(sizeof(*g) == sizeof(g->e) + sizeof(g->q) + sizeof(g->o), "packed group");
	assert_int_equal(asc_consumer_handle(&t->c, g, sizeof(*g)), 0);
	assert_int_equal(t->l.calls, 3);
	/* in order, each exactly its own bytes: as three samples of one record would be */
	assert_int_equal(t->l.size[0], sizeof(g->e));
	assert_memory_equal(t->l.rec[0], &g->e, sizeof(g->e));
	assert_int_equal(t->l.size[1], sizeof(g->q));
	assert_memory_equal(t->l.rec[1], &g->q, sizeof(g->q));
	assert_int_equal(t->l.size[2], sizeof(g->o));
	assert_memory_equal(t->l.rec[2], &g->o, sizeof(g->o));
	assert_int_equal(t->c.records, 3);
	assert_int_equal(t->c.bytes, sizeof(*g));
	assert_int_equal(t->c.groups, 1);
	assert_int_equal(t->c.by_type[ASC_REC_ENTER], 1);
	assert_int_equal(t->c.by_type[ASC_REC_QUEUE], 1);
	assert_int_equal(t->c.by_type[ASC_REC_OPNAME], 1);
	assert_int_equal(t->c.by_layer[ASC_LAYER_FRAMEWORK], 3);
	assert_int_equal(t->c.bad, 0);
	/* a sample of one record is not a group */
	assert_int_equal(asc_consumer_handle(&t->c, &g->q, sizeof(g->q)), 0);
	assert_int_equal(t->c.groups, 1);
	assert_int_equal(t->c.records, 4);
}

static void test_group_with_garbled_size_rejected(void **state)
{
	struct group_test *t = *state;
	struct group_eqo *g = &t->g;

	/* truncated: the last record cut short */
	assert_int_equal(asc_consumer_handle(&t->c, g, sizeof(*g) - 8), -EBADMSG);
	/* truncated inside the last header */
	assert_int_equal(asc_consumer_handle(&t->c, g, sizeof(g->e) + sizeof(g->q) + 16), -EBADMSG);
	/* an inner size beyond the sample */
	g->q.hdr.size = sizeof(g->q) + sizeof(g->o) + 8;
	assert_int_equal(asc_consumer_handle(&t->c, g, sizeof(*g)), -EBADMSG);
	/* an inner size of 0 (would never advance) and one shorter than a header */
	g->q.hdr.size = 0;
	assert_int_equal(asc_consumer_handle(&t->c, g, sizeof(*g)), -EBADMSG);
	g->q.hdr.size = 16;
	assert_int_equal(asc_consumer_handle(&t->c, g, sizeof(*g)), -EBADMSG);
	/* not a multiple of 8: the next header would be misaligned */
	g->q.hdr.size = sizeof(g->q) + 4;
	assert_int_equal(asc_consumer_handle(&t->c, g, sizeof(*g)), -EBADMSG);
	/* the first record's size leaves a tail shorter than a header */
	make_group(g);
	g->e.hdr.size = sizeof(*g) - 8;
	assert_int_equal(asc_consumer_handle(&t->c, g, sizeof(*g)), -EBADMSG);
	/* nothing of any of them reached the sink; each sample counted once */
	assert_int_equal(t->l.calls, 0);
	assert_int_equal(t->c.records, 0);
	assert_int_equal(t->c.groups, 0);
	assert_int_equal(t->c.bad, 7);
}

static void test_bad_record_in_group_skipped(void **state)
{
	struct group_test *t = *state;
	struct group_eqo *g = &t->g;

	g->q.hdr.type = ASC_REC_DEVTASK; /* a userspace type, at a plausible size */
	g->o.len = ASC_NAME_LEN + 1;	 /* out of bounds */
	assert_int_equal(asc_consumer_handle(&t->c, g, sizeof(*g)), -EBADMSG);
	assert_int_equal(t->l.calls, 1);
	assert_memory_equal(t->l.rec[0], &g->e, sizeof(g->e));
	assert_int_equal(t->c.bad, 2);
	assert_int_equal(t->c.records, 1);
	/* an ENTER of a wrong size that still tiles the sample: that record alone is bad */
	make_group(g);
	g->e.hdr.size = sizeof(g->e) + sizeof(g->q);
	assert_int_equal(asc_consumer_handle(&t->c, g, sizeof(*g)), -EBADMSG);
	assert_int_equal(t->l.calls, 2);
	assert_memory_equal(t->l.rec[1], &g->o, sizeof(g->o));
	assert_int_equal(t->c.bad, 3);
}

static void test_group_loader_record_and_sink_error(void **state)
{
	struct group_test *t = *state;
	struct group_eqo *g = &t->g;

	g->e.hdr.probe_id = 99; /* the loader hook: not for the capture */
	assert_int_equal(asc_consumer_handle(&t->c, g, sizeof(*g)), 0);
	assert_int_equal(t->l.loader_calls, 1);
	assert_int_equal(t->l.calls, 2);
	assert_int_equal(t->l.rec[0][0], ASC_REC_QUEUE);
	assert_int_equal(t->c.records, 2);
	/* the sink fails on the QUEUE: the error is returned, the OPNAME still offered */
	make_group(g);
	t->l.fail = -ENOSPC;
	t->l.fail_call = 4;
	assert_int_equal(asc_consumer_handle(&t->c, g, sizeof(*g)), -ENOSPC);
	assert_int_equal(t->l.calls, 5);
	assert_int_equal(t->c.sink_errors, 1);
	assert_int_equal(t->c.bad, 0);
}

/*
 * asc_ring_consume on a ring laid out as the kernel lays it out (8-byte
 * sample headers with BUSY/DISCARD bits, 8-aligned slots, positions that
 * only grow), built in memory: the walk, the order, and when the consumer
 * position is published.
 */
#define FAKE_RING (1u << 20)

struct fake_ring {
	uint64_t consumer_pos;
	uint64_t producer_pos;
	unsigned char *data; /* FAKE_RING bytes, then FAKE_RING more (the kernel's double map) */
	struct asc_ring r;
	int calls;
	uint32_t sizes[256];
	unsigned char first[256]; /* first payload byte of each sample */
	uint64_t cons_seen[256];  /* consumer position the BPF side saw at each call */
	int stop_at;		  /* return -EIO at this call (1-based); 0: never */
};

static int fake_cb(void *ctx, void *data, size_t size)
{
	struct fake_ring *f = ctx;

	if (f->calls < 256) {
		f->sizes[f->calls] = size;
		f->first[f->calls] = *(unsigned char *)data;
		f->cons_seen[f->calls] = __atomic_load_n(&f->consumer_pos, __ATOMIC_RELAXED);
	}
	f->calls++;
	return f->calls == f->stop_at ? -EIO : 0;
}

static void fake_init(struct fake_ring *f)
{
	memset(f, 0, sizeof(*f));
	f->data = calloc(2, FAKE_RING);
	assert_non_null(f->data);
	f->r.mask = FAKE_RING - 1;
	f->r.publish = ASC_RING_PUBLISH_BYTES;
	f->r.consumer_pos = &f->consumer_pos;
	f->r.producer_pos = &f->producer_pos;
	f->r.data = f->data;
	f->r.fn = fake_cb;
	f->r.ctx = f;
}

/* Appends a sample of size bytes (payload byte 0 = tag) with header bits. */
static void fake_put(struct fake_ring *f, uint32_t size, unsigned char tag, uint32_t bits)
{
	uint64_t at = f->producer_pos & (FAKE_RING - 1);
	uint32_t hdr[2] = { size | bits, 0 };

	memcpy(f->data + at, hdr, sizeof(hdr));
	memset(f->data + at + 8, tag, size);
	/* the second mapping of the same pages */
	memcpy(f->data + (at + FAKE_RING) % (2 * FAKE_RING), hdr, sizeof(hdr));
	f->producer_pos += (8 + size + 7) & ~7u;
}

/* The fixture of the ring tests: an empty fake ring, its data freed after the test. */
static int ring_setup(void **state)
{
	static struct fake_ring f;

	fake_init(&f);
	*state = &f;
	return 0;
}

static int ring_teardown(void **state)
{
	struct fake_ring *f = *state;

	free(f->data);
	return 0;
}

static void test_ring_walks_samples_in_order(void **state)
{
	struct fake_ring *f = *state;

	fake_put(f, 72, 1, 0);
	fake_put(f, 20, 2, 0);			     /* slot rounded up to 8 */
	fake_put(f, 32, 3, BPF_RINGBUF_DISCARD_BIT); /* discarded: skipped */
	fake_put(f, 120, 4, 0);
	assert_int_equal(asc_ring_consume(&f->r), 3);
	assert_int_equal(f->calls, 3);
	assert_int_equal(f->sizes[0], 72);
	assert_int_equal(f->first[0], 1);
	assert_int_equal(f->sizes[1], 20);
	assert_int_equal(f->first[1], 2);
	assert_int_equal(f->sizes[2], 120);
	assert_int_equal(f->first[2], 4);
	assert_int_equal(f->consumer_pos, f->producer_pos);
	/* a sample still being written stops the drain there, the next one resumes */
	fake_put(f, 40, 5, BPF_RINGBUF_BUSY_BIT);
	fake_put(f, 40, 6, 0);
	assert_int_equal(asc_ring_consume(&f->r), 0);
	assert_int_equal(f->consumer_pos, f->producer_pos - 2 * 48);
	((uint32_t *)(f->data + (f->consumer_pos & (FAKE_RING - 1))))[0] &= ~BPF_RINGBUF_BUSY_BIT;
	assert_int_equal(asc_ring_consume(&f->r), 2);
	assert_int_equal(f->first[3], 5);
	assert_int_equal(f->first[4], 6);
	assert_int_equal(f->consumer_pos, f->producer_pos);
}

static void test_ring_publishes_in_batches(void **state)
{
	struct fake_ring *f = *state;
	int i, published = 0;

	/* 120 samples of 4 KiB: 480 KiB, so one publication inside the drain */
	for (i = 0; i < 120; i++)
		fake_put(f, 4096 - 8, (unsigned char)i, 0);
	assert_int_equal(asc_ring_consume(&f->r), 120);
	for (i = 1; i < 120; i++) {
		if (f->cons_seen[i] != f->cons_seen[i - 1]) {
			published++;
			assert_true(f->cons_seen[i] - f->cons_seen[i - 1] >=
				    ASC_RING_PUBLISH_BYTES);
		}
		assert_int_equal(f->first[i], (unsigned char)i);
	}
	assert_int_equal(published, 1);
	assert_int_equal(f->consumer_pos, f->producer_pos); /* and at the end */
	/* wrap-around: positions keep growing, slots are found modulo the size */
	f->consumer_pos = f->producer_pos = 3 * (uint64_t)FAKE_RING - 64;
	f->calls = 0;
	fake_put(f, 200, 7, 0);
	assert_int_equal(asc_ring_consume(&f->r), 1);
	assert_int_equal(f->sizes[0], 200);
	assert_int_equal(f->first[0], 7);
}

static void test_ring_stops_on_callback_error(void **state)
{
	struct fake_ring *f = *state;

	fake_put(f, 72, 1, 0);
	fake_put(f, 72, 2, 0);
	fake_put(f, 72, 3, 0);
	f->stop_at = 2;
	assert_int_equal(asc_ring_consume(&f->r), -EIO);
	/* the failed sample counts as consumed (as libbpf does), the third is next */
	assert_int_equal(f->consumer_pos, 2 * 80);
	f->stop_at = 0;
	assert_int_equal(asc_ring_consume(&f->r), 1);
	assert_int_equal(f->first[2], 3);
}

#define RING_TEST(fn) cmocka_unit_test_setup_teardown(fn, ring_setup, ring_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_enter_exit_counted_by_layer, consumer_setup),
		cmocka_unit_test_setup(test_probe_id_outside_table_is_layer_zero, consumer_setup),
		cmocka_unit_test_setup(test_type_decides_layer, consumer_setup),
		cmocka_unit_test_setup(test_short_sample_rejected, consumer_setup),
		cmocka_unit_test_setup(test_size_mismatch_rejected, consumer_setup),
		cmocka_unit_test_setup(test_userspace_and_invalid_types_rejected, consumer_setup),
		cmocka_unit_test_setup(test_counts_out_of_bounds_rejected, consumer_setup),
		cmocka_unit_test_setup(test_loader_record_not_in_capture, consumer_setup),
		cmocka_unit_test_setup(test_sink_error_counted, consumer_setup),
		cmocka_unit_test_setup(test_layer_summary, consumer_setup),
		cmocka_unit_test_setup(test_layer_summary_hccl, consumer_setup),
		cmocka_unit_test_setup(test_sample_of_several_records, group_setup),
		cmocka_unit_test_setup(test_group_with_garbled_size_rejected, group_setup),
		cmocka_unit_test_setup(test_bad_record_in_group_skipped, group_setup),
		cmocka_unit_test_setup(test_group_loader_record_and_sink_error, group_setup),
		RING_TEST(test_ring_walks_samples_in_order),
		RING_TEST(test_ring_publishes_in_batches),
		RING_TEST(test_ring_stops_on_callback_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
