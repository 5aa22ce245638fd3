// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_consumer.c - the ring-buffer record handler on synthetic samples:
 * well-formed BPF records reach the sink and are counted by type and layer;
 * wrong sizes, userspace types, out-of-bounds counts never do.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "consumer.h"

struct sink_log {
	int calls;
	size_t last_size;
	uint16_t last_type;
	int fail;
	int loader_calls;
	uint32_t loader_tgid;
};

static int sink(void *ctx, const void *rec, size_t size)
{
	struct sink_log *l = ctx;

	l->calls++;
	l->last_size = size;
	l->last_type = ((const struct asc_hdr *)rec)->type;
	return l->fail;
}

static void loader(void *ctx, uint32_t tgid)
{
	struct sink_log *l = ctx;

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
	struct asc_consumer c;
	struct sink_log l;
	struct asc_enter e = {};
	struct asc_exit x = {};

	(void)state;
	setup_consumer(&c, &l);
	hdr(&e.hdr, ASC_REC_ENTER, sizeof(e), 1);
	hdr(&x.hdr, ASC_REC_EXIT, sizeof(x), 2);
	assert_int_equal(asc_consumer_handle(&c, &e, sizeof(e)), 0);
	assert_int_equal(asc_consumer_handle(&c, &x, sizeof(x)), 0);
	assert_int_equal(l.calls, 2);
	assert_int_equal(l.last_type, ASC_REC_EXIT);
	assert_int_equal(c.records, 2);
	assert_int_equal(c.bytes, sizeof(e) + sizeof(x));
	assert_int_equal(c.by_type[ASC_REC_ENTER], 1);
	assert_int_equal(c.by_type[ASC_REC_EXIT], 1);
	assert_int_equal(c.by_layer[ASC_LAYER_CANN], 1);
	assert_int_equal(c.by_layer[ASC_LAYER_FRAMEWORK], 1);
	assert_int_equal(c.bad, 0);
}

static void test_probe_id_outside_table_is_layer_zero(void **state)
{
	struct asc_consumer c;
	struct sink_log l;
	struct asc_enter e = {};

	(void)state;
	setup_consumer(&c, &l);
	hdr(&e.hdr, ASC_REC_ENTER, sizeof(e), 50);
	assert_int_equal(asc_consumer_handle(&c, &e, sizeof(e)), 0);
	assert_int_equal(c.by_layer[0], 1);
}

static void test_type_decides_layer(void **state)
{
	struct asc_consumer c;
	struct sink_log l;
	struct asc_ioctl io = {};
	struct asc_mem m = {};
	struct asc_step s = {};

	(void)state;
	setup_consumer(&c, &l);
	hdr(&io.hdr, ASC_REC_IOCTL, sizeof(io), 0);
	hdr(&m.hdr, ASC_REC_MEM, sizeof(m), 1);	/* probe 1 is CANN, type wins */
	hdr(&s.hdr, ASC_REC_STEP, sizeof(s), 0);
	assert_int_equal(asc_consumer_handle(&c, &io, sizeof(io)), 0);
	assert_int_equal(asc_consumer_handle(&c, &m, sizeof(m)), 0);
	assert_int_equal(asc_consumer_handle(&c, &s, sizeof(s)), 0);
	assert_int_equal(c.by_layer[ASC_LAYER_DRIVER], 1);
	assert_int_equal(c.by_layer[ASC_LAYER_MEMORY], 1);
	assert_int_equal(c.by_layer[ASC_LAYER_PYTHON], 1);
	assert_int_equal(c.by_layer[ASC_LAYER_CANN], 0);
}

static void test_short_sample_rejected(void **state)
{
	struct asc_consumer c;
	struct sink_log l;
	struct asc_enter e = {};

	(void)state;
	setup_consumer(&c, &l);
	hdr(&e.hdr, ASC_REC_ENTER, sizeof(e), 1);
	assert_int_equal(asc_consumer_handle(&c, &e, 8), -EBADMSG);
	assert_int_equal(asc_consumer_handle(&c, NULL, 0), -EBADMSG);
	assert_int_equal(l.calls, 0);
	assert_int_equal(c.bad, 2);
	assert_int_equal(c.records, 0);
}

static void test_size_mismatch_rejected(void **state)
{
	struct asc_consumer c;
	struct sink_log l;
	unsigned char buf[sizeof(struct asc_enter) + 8] = {};
	struct asc_hdr *h = (struct asc_hdr *)buf;

	(void)state;
	setup_consumer(&c, &l);
	/* header says 72 but the sample is 80 */
	hdr(h, ASC_REC_ENTER, sizeof(struct asc_enter), 1);
	assert_int_equal(asc_consumer_handle(&c, buf, sizeof(buf)), -EBADMSG);
	/* header and sample agree, but ENTER is fixed at 72 */
	hdr(h, ASC_REC_ENTER, sizeof(buf), 1);
	assert_int_equal(asc_consumer_handle(&c, buf, sizeof(buf)), -EBADMSG);
	/* an EXIT-sized ENTER */
	hdr(h, ASC_REC_ENTER, sizeof(struct asc_exit), 1);
	assert_int_equal(asc_consumer_handle(&c, buf, sizeof(struct asc_exit)), -EBADMSG);
	assert_int_equal(l.calls, 0);
	assert_int_equal(c.bad, 3);
}

static void test_userspace_and_invalid_types_rejected(void **state)
{
	struct asc_consumer c;
	struct sink_log l;
	struct asc_devtask d = {};
	struct asc_exit x = {};

	(void)state;
	setup_consumer(&c, &l);
	hdr(&d.hdr, ASC_REC_DEVTASK, sizeof(d), 0);
	assert_int_equal(asc_consumer_handle(&c, &d, sizeof(d)), -EBADMSG);
	hdr(&x.hdr, ASC_REC_INVALID, sizeof(x), 0);
	assert_int_equal(asc_consumer_handle(&c, &x, sizeof(x)), -EBADMSG);
	/* a type BPF does not write in this build */
	hdr(&x.hdr, 40, sizeof(x), 0);
	assert_int_equal(asc_consumer_handle(&c, &x, sizeof(x)), -EBADMSG);
	assert_int_equal(l.calls, 0);
	assert_int_equal(c.bad, 3);
}

static void test_counts_out_of_bounds_rejected(void **state)
{
	struct asc_consumer c;
	struct sink_log l;
	struct asc_sqe s = {};
	struct asc_opname o = {};
	struct asc_stack st = {};

	(void)state;
	setup_consumer(&c, &l);
	hdr(&s.hdr, ASC_REC_SQE, sizeof(s), 3);
	s.nr_kept = ASC_MAX_SQES + 1;
	assert_int_equal(asc_consumer_handle(&c, &s, sizeof(s)), -EBADMSG);
	s.nr_kept = ASC_MAX_SQES;
	s.sqe_num = 100;			/* more submitted than kept is fine */
	assert_int_equal(asc_consumer_handle(&c, &s, sizeof(s)), 0);
	hdr(&o.hdr, ASC_REC_OPNAME, sizeof(o), 2);
	o.len = ASC_NAME_LEN + 1;
	assert_int_equal(asc_consumer_handle(&c, &o, sizeof(o)), -EBADMSG);
	hdr(&st.hdr, ASC_REC_STACK, sizeof(st), 2);
	st.nr = ASC_STACK_DEPTH + 1;
	assert_int_equal(asc_consumer_handle(&c, &st, sizeof(st)), -EBADMSG);
	assert_int_equal(l.calls, 1);
	assert_int_equal(c.bad, 3);
	assert_int_equal(c.by_type[ASC_REC_SQE], 1);
}

static void test_loader_record_not_in_capture(void **state)
{
	struct asc_consumer c;
	struct sink_log l;
	struct asc_enter e = {};

	(void)state;
	setup_consumer(&c, &l);
	hdr(&e.hdr, ASC_REC_ENTER, sizeof(e), 99);
	e.hdr.tgid = 4242;
	assert_int_equal(asc_consumer_handle(&c, &e, sizeof(e)), 0);
	assert_int_equal(l.calls, 0);
	assert_int_equal(l.loader_calls, 1);
	assert_int_equal(l.loader_tgid, 4242);
	assert_int_equal(c.loader_events, 1);
	assert_int_equal(c.records, 0);
	/* without a loader id the same record is an ordinary ENTER */
	c.loader_probe_id = 0;
	assert_int_equal(asc_consumer_handle(&c, &e, sizeof(e)), 0);
	assert_int_equal(l.calls, 1);
}

static void test_sink_error_counted(void **state)
{
	struct asc_consumer c;
	struct sink_log l;
	struct asc_exit x = {};

	(void)state;
	setup_consumer(&c, &l);
	l.fail = -ENOSPC;
	hdr(&x.hdr, ASC_REC_EXIT, sizeof(x), 1);
	assert_int_equal(asc_consumer_handle(&c, &x, sizeof(x)), -ENOSPC);
	assert_int_equal(c.sink_errors, 1);
	asc_consumer_reset(&c);
	assert_int_equal(c.records, 0);
	assert_int_equal(c.sink_errors, 0);
	assert_ptr_equal(c.sink, sink);
}

static void test_layer_summary(void **state)
{
	struct asc_consumer c;
	struct sink_log l;
	struct asc_enter e = {};
	char buf[160];

	(void)state;
	setup_consumer(&c, &l);
	hdr(&e.hdr, ASC_REC_ENTER, sizeof(e), 1);
	asc_consumer_handle(&c, &e, sizeof(e));
	asc_consumer_handle(&c, &e, sizeof(e));
	asc_consumer_layer_summary(&c, buf, sizeof(buf));
	assert_string_equal(buf, "framework=0 cann=2 driver=0 memory=0 python=0 other=0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enter_exit_counted_by_layer),
		cmocka_unit_test(test_probe_id_outside_table_is_layer_zero),
		cmocka_unit_test(test_type_decides_layer),
		cmocka_unit_test(test_short_sample_rejected),
		cmocka_unit_test(test_size_mismatch_rejected),
		cmocka_unit_test(test_userspace_and_invalid_types_rejected),
		cmocka_unit_test(test_counts_out_of_bounds_rejected),
		cmocka_unit_test(test_loader_record_not_in_capture),
		cmocka_unit_test(test_sink_error_counted),
		cmocka_unit_test(test_layer_summary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
