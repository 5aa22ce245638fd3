// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_records - the validating decoder: every known type at its ABI size,
 * wrong sizes and out-of-bounds strings/counts rejected, unknown types passed
 * for skipping, names of types and enum values.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "ascbpf_events.h"
#include "capture/records.h"

static _Alignas(8) unsigned char buf[1024];

static struct asc_hdr *rec(uint16_t type, uint16_t size)
{
	struct asc_hdr *h = (void *)buf;

	memset(buf, 0, sizeof(buf));
	h->type = type;
	h->size = size;
	return h;
}

static void test_abi_sizes(void **state)
{
	/* the sizes documented in bpf/ascbpf_events.h */
	static const struct {
		unsigned int type;
		size_t size;
	} want[] = {
		{ ASC_REC_ENTER, 72 },	    { ASC_REC_EXIT, 32 },     { ASC_REC_OPNAME, 96 },
		{ ASC_REC_QUEUE, 48 },	    { ASC_REC_SQE, 104 },     { ASC_REC_MEM, 80 },
		{ ASC_REC_IOCTL, 104 },	    { ASC_REC_STACK, 288 },   { ASC_REC_STEP, 40 },
		{ ASC_REC_FDBIND, 48 },	    { ASC_REC_DEVTASK, 56 },  { ASC_REC_PROBE, 48 },
		{ ASC_REC_CLOCK, 48 },	    { ASC_REC_DEVCLOCK, 48 }, { ASC_REC_PROCESS, 40 },
		{ ASC_REC_THREAD, 40 },	    { ASC_REC_STATS, 64 },    { ASC_REC_CONFIG, 32 },
		{ ASC_REC_SYMBOL, 32 },	    { ASC_REC_LOST, 32 },     { ASC_REC_TENSOR, 96 },
		{ ASC_REC_PYSTACK, 416 },   { ASC_REC_PYFRAME, 40 },  { ASC_REC_ATEN_NAME, 32 },
		{ ASC_REC_NODE_CLASS, 40 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(asc_rec_base_size(want[i].type), want[i].size);
		assert_non_null(asc_rec_type_name(want[i].type));
	}
	assert_int_equal(asc_rec_base_size(77), 0); /* not a type (yet): unknown */
	assert_null(asc_rec_type_name(200));
	assert_string_equal(asc_rec_type_name(ASC_REC_SQE), "sqe");
	assert_string_equal(asc_rec_type_name(ASC_REC_DEVTASK), "devtask");
}

static void test_fixed_sizes(void **state)
{
	char msg[160];

	(void)state;
	assert_int_equal(asc_rec_check(rec(ASC_REC_ENTER, 72), 72, msg, sizeof(msg)), 0);
	/* an ENTER of an EXIT's size: wrong for its type, an error, not a crash */
	assert_int_equal(asc_rec_check(rec(ASC_REC_ENTER, 32), 32, msg, sizeof(msg)), -EBADMSG);
	assert_non_null(strstr(msg, "enter"));
	assert_int_equal(asc_rec_check(rec(ASC_REC_SQE, 112), 112, msg, sizeof(msg)), -EBADMSG);
	/* hdr.size disagreeing with the bytes, or not a multiple of 8 */
	assert_int_equal(asc_rec_check(rec(ASC_REC_EXIT, 32), 40, NULL, 0), -EBADMSG);
	assert_int_equal(asc_rec_check(rec(ASC_REC_EXIT, 36), 36, NULL, 0), -EBADMSG);
	assert_int_equal(asc_rec_check(rec(ASC_REC_EXIT, 16), 16, NULL, 0), -EBADMSG);
	assert_int_equal(asc_rec_check(rec(ASC_REC_INVALID, 24), 24, NULL, 0), -EBADMSG);
}

static void test_unknown_type_skipped(void **state)
{
	(void)state;
	assert_int_equal(asc_rec_check(rec(63, 200), 200, NULL, 0), 1);
	assert_int_equal(asc_rec_check(rec(90, 48), 48, NULL, 0), 1);
}

static void test_counts_in_bounds(void **state)
{
	struct asc_opname *o;
	struct asc_sqe *s;
	struct asc_stack *st;
	struct asc_ioctl *io;

	(void)state;
	o = (void *)rec(ASC_REC_OPNAME, 96);
	o->len = 64;
	assert_int_equal(asc_rec_check(o, 96, NULL, 0), 0);
	o->len = 65;
	assert_int_equal(asc_rec_check(o, 96, NULL, 0), -EBADMSG);
	s = (void *)rec(ASC_REC_SQE, 104);
	s->sqe_num = 20;
	s->nr_kept = 8;
	assert_int_equal(asc_rec_check(s, 104, NULL, 0), 0);
	s->nr_kept = 9;
	assert_int_equal(asc_rec_check(s, 104, NULL, 0), -EBADMSG);
	s->sqe_num = 2;
	s->nr_kept = 3;
	assert_int_equal(asc_rec_check(s, 104, NULL, 0), -EBADMSG);
	st = (void *)rec(ASC_REC_STACK, 288);
	st->nr = 33;
	assert_int_equal(asc_rec_check(st, 288, NULL, 0), -EBADMSG);
	{
		struct asc_pystack *ps = (void *)rec(ASC_REC_PYSTACK, 416);

		ps->nr = 32;
		assert_int_equal(asc_rec_check(ps, 416, NULL, 0), 0);
		ps->nr = 33;
		assert_int_equal(asc_rec_check(ps, 416, NULL, 0), -EBADMSG);
	}
	{
		struct asc_pyframe *pf = (void *)rec(ASC_REC_PYFRAME, 48);

		memcpy(pf->text, "a.py(1):", 8); /* 8 bytes, no room for the NUL */
		assert_int_equal(asc_rec_check(pf, 48, NULL, 0), -EBADMSG);
		pf->text[7] = 0;
		assert_int_equal(asc_rec_check(pf, 48, NULL, 0), 0);
	}
	io = (void *)rec(ASC_REC_IOCTL, 104);
	io->arg_len = 49;
	assert_int_equal(asc_rec_check(io, 104, NULL, 0), -EBADMSG);
}

static struct asc_probe *probe(const char *lib, const char *sym)
{
	size_t ll = strlen(lib), sl = strlen(sym), size = asc_probe_rec_size(ll, sl);
	struct asc_probe *p = (void *)rec(ASC_REC_PROBE, size);

	p->lib_len = ll;
	p->sym_len = sl;
	memcpy(p->strings, lib, ll);
	memcpy(p->strings + ll + 1, sym, sl);
	return p;
}

static void test_probe_strings(void **state)
{
	struct asc_probe *p;

	(void)state;
	assert_int_equal(asc_probe_rec_size(14, 8), 72); /* 48 + 15 + 9 = 72 */
	p = probe("libascendcl.so", "aclnnAdd");
	assert_int_equal(p->hdr.size % 8, 0);
	assert_int_equal(asc_rec_check(p, p->hdr.size, NULL, 0), 0);
	assert_string_equal(asc_probe_lib(p), "libascendcl.so");
	assert_string_equal(asc_probe_sym(p), "aclnnAdd");
	/* lengths pointing past the record */
	p->sym_len = 200;
	assert_int_equal(asc_rec_check(p, p->hdr.size, NULL, 0), -EBADMSG);
	/* a length that does not end at a NUL */
	p = probe("libascendcl.so", "aclnnAdd");
	p->lib_len = 3;
	assert_int_equal(asc_rec_check(p, p->hdr.size, NULL, 0), -EBADMSG);
	/* shorter than the fixed part */
	assert_int_equal(asc_rec_check(rec(ASC_REC_PROBE, 40), 40, NULL, 0), -EBADMSG);
}

static void test_text_and_process(void **state)
{
	struct asc_text *t;
	struct asc_process *p;

	(void)state;
	t = (void *)rec(ASC_REC_CONFIG, asc_text_rec_size(7));
	memcpy(t->text, "level=1", 7);
	assert_int_equal(asc_rec_check(t, t->hdr.size, NULL, 0), 0);
	memset(t->text, 'x', t->hdr.size - sizeof(*t)); /* no NUL anywhere */
	assert_int_equal(asc_rec_check(t, t->hdr.size, NULL, 0), -EBADMSG);
	assert_int_equal(asc_rec_check(rec(ASC_REC_SYMBOL, 32), 32, NULL, 0), -EBADMSG);
	p = (void *)rec(ASC_REC_PROCESS, asc_process_rec_size(9));
	p->cmdline_len = 9;
	memcpy(p->strings, "python3\0", 8);
	p->strings[8] = 0;
	assert_int_equal(asc_rec_check(p, p->hdr.size, NULL, 0), 0);
	p->cmdline_len = 100;
	assert_int_equal(asc_rec_check(p, p->hdr.size, NULL, 0), -EBADMSG);
	t = (void *)rec(ASC_REC_ATEN_NAME, asc_text_rec_size(0)); /* "": no schema name */
	assert_int_equal(asc_rec_check(t, t->hdr.size, NULL, 0), 0);
	memset(t->text, 'x', t->hdr.size - sizeof(*t));
	assert_int_equal(asc_rec_check(t, t->hdr.size, NULL, 0), -EBADMSG);
}

static void test_node_class(void **state)
{
	struct asc_node_class *nc;

	(void)state;
	nc = (void *)rec(ASC_REC_NODE_CLASS, asc_node_class_rec_size(14));
	assert_int_equal(nc->hdr.size, 56);
	memcpy(nc->name, "MulBackward0", 13);
	assert_int_equal(asc_rec_check(nc, nc->hdr.size, NULL, 0), 0);
	memset(nc->name, 'x', nc->hdr.size - sizeof(*nc)); /* no NUL anywhere */
	assert_int_equal(asc_rec_check(nc, nc->hdr.size, NULL, 0), -EBADMSG);
	assert_int_equal(asc_rec_check(rec(ASC_REC_NODE_CLASS, 40), 40, NULL, 0), -EBADMSG);
	assert_string_equal(asc_rec_type_name(ASC_REC_NODE_CLASS), "node_class");
}

static void test_enum_names(void **state)
{
	(void)state;
	assert_string_equal(asc_layer_label(ASC_LAYER_CANN), "cann");
	assert_string_equal(asc_layer_label(ASC_LAYER_UNWIND), "unwind");
	assert_string_equal(asc_layer_label(99), "?");
	assert_string_equal(asc_probe_kind_name(ASC_PK_SQE_SEND), "sqe_send");
	assert_string_equal(asc_probe_kind_name(0), "?");
	assert_string_equal(asc_sched_state_name(3), "record_and_save");
	assert_string_equal(asc_mem_component_name(ASC_MEM_GE), "GE");
	assert_string_equal(asc_mem_data_type_name(ASC_MEM_BLOCK_FREE), "block_free");
	assert_string_equal(asc_module_name(ASC_MOD_SVM), "SVM");
}

static void test_scalar_type_names(void **state)
{
	(void)state;
	assert_string_equal(asc_scalar_type_name(6), "float");
	assert_string_equal(asc_scalar_type_name(4), "long int");
	assert_null(asc_scalar_type_name(200));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_abi_sizes),
		cmocka_unit_test(test_fixed_sizes),
		cmocka_unit_test(test_unknown_type_skipped),
		cmocka_unit_test(test_counts_in_bounds),
		cmocka_unit_test(test_probe_strings),
		cmocka_unit_test(test_text_and_process),
		cmocka_unit_test(test_node_class),
		cmocka_unit_test(test_enum_names),
		cmocka_unit_test(test_scalar_type_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
