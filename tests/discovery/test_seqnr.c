// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_seqnr: the at::sequence_number TLS location, backward node names and
 * the fwdbwd pairing (user/discovery/seqnr.h).  The live checks load the installed
 * PyTorch (libtorch1.13) into this process and compare what the TLS walk
 * finds with what peek() itself returns, on a thread that used the counter
 * and on one that never did; node names with the vtables the loader placed.
 * The pairing cases reproduce ops and flows of the torch_npu reference
 * sample (the Level1 output of docs/torch_npu_format.md).
 * The converter's side: a hand-made capture with SEQNR records through
 * asc_corr_build() (numbers, node names from the NODE_CLASS records the
 * tracer writes, user/trace/names.h, the node's range inside its
 * evaluate_function range, from its apply() when that was probed).
 */
#if defined(__x86_64__)
#include <asm/prctl.h>
#endif
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "ascbpf_events.h"
#include "capbuild.h"
#include "capture/capture.h"
#include "analysis/correlate.h"
#include "analysis/fwdbwd.h"
#include "discovery/probes.h"
#include "discovery/seqnr.h"
#include "trace/names.h"

#define LIBTORCH_CPU  "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so"
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* PyTorch 1.13.1 (Debian) at::sequence_number::peek() at 0xd90460, as objdump -d shows it. */
static const uint8_t peek_113[] = {
	0x48, 0x83, 0xec, 0x08,				/* sub $0x8,%rsp */
	0x66, 0x48, 0x8d, 0x3d, 0x5c, 0x26, 0x4b, 0x06, /* data16 lea 0x64b265c(%rip),%rdi */
	0x66, 0x66, 0x48, 0xe8, 0x7c, 0xee, 0xa9, 0xff, /* call __tls_get_addr@plt */
	0x48, 0x8b, 0x00,				/* mov (%rax),%rax */
	0x48, 0x83, 0xc4, 0x08, 0xc3,			/* add $8,%rsp; ret */
};

static void test_decode(void **state)
{
	struct asc_seqnr_tls tls;
	uint8_t code[40];

	(void)state;
	assert_int_equal(asc_seqnr_tls_decode(peek_113, sizeof(peek_113), 0xd90460, &tls), 0);
	assert_int_equal(tls.tlsidx_vaddr, 0x7242ac8); /* objdump's "# 7242ac8" */
	assert_int_equal(tls.disp, 0);

	/* the same after an endbr64 instead of the stack adjustment, counter at +16 */
	memcpy(code, "\xf3\x0f\x1e\xfa", 4);
	memcpy(code + 4, peek_113 + 4, 16);
	memcpy(code + 20, "\x48\x8b\x40\x10\xc3", 5);
	assert_int_equal(asc_seqnr_tls_decode(code, 25, 0x1000, &tls), 0);
	assert_int_equal(tls.tlsidx_vaddr, 0x1000 + 12 + 0x064b265c);
	assert_int_equal(tls.disp, 16);

	/* not the general-dynamic sequence: a plain function, or a cut-off one */
	memcpy(code, "\x48\x8b\x07\xc3", 4);
	assert_int_equal(asc_seqnr_tls_decode(code, 4, 0, &tls), -ENOEXEC);
	assert_int_equal(asc_seqnr_tls_decode(peek_113, 18, 0xd90460, &tls), -ENOEXEC);
	/* the lea, the call, then something else than a load from %rax */
	memcpy(code, peek_113, sizeof(peek_113));
	code[22] = 0x10; /* mov (%rax),%rdx: get_and_increment's shape */
	assert_int_equal(asc_seqnr_tls_decode(code, sizeof(peek_113), 0, &tls), -ENOEXEC);
}

static void test_class_names(void **state)
{
	char buf[128];

	(void)state;
	assert_int_equal(asc_seqnr_class_name("_ZTVN5torch8autograd9generated12MulBackward0E", buf,
					      sizeof(buf)),
			 0);
	assert_string_equal(buf, "MulBackward0");
	assert_int_equal(asc_seqnr_class_name("_ZTVN5torch8autograd14AccumulateGradE", buf,
					      sizeof(buf)),
			 0);
	assert_string_equal(buf, "torch::autograd::AccumulateGrad"); /* as the sample */
	assert_int_equal(asc_seqnr_class_name("_ZTVN5torch8autograd10CopySlicesE", buf,
					      sizeof(buf)),
			 0);
	assert_string_equal(buf, "torch::autograd::CopySlices");
	assert_int_equal(asc_seqnr_class_name("_ZTV7MyNode0", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "MyNode0");
	/* templates, truncated names, other symbols, a short buffer */
	assert_int_equal(asc_seqnr_class_name("_ZTVN5torch8autograd7CppNodeI3FooEE", buf,
					      sizeof(buf)),
			 -EINVAL);
	assert_int_equal(asc_seqnr_class_name("_ZTVN5torch8autograd9generated12MulBack", buf,
					      sizeof(buf)),
			 -EINVAL);
	assert_int_equal(asc_seqnr_class_name("_ZTIN5torch8autograd14AccumulateGradE", buf,
					      sizeof(buf)),
			 -EINVAL);
	assert_int_equal(asc_seqnr_class_name("_ZTVN5torch8autograd14AccumulateGradE", buf, 8),
			 -ENOSPC);
}

/* ---- live: libtorch_cpu.so loaded into this process ---- */

typedef uint64_t (*seq_fn)(void);

static void *torch_lib;
static seq_fn peek_fn, incr_fn;
static struct asc_seqnr_tls live_tls;

static int rd_self(uint64_t addr, uint64_t *val, void *ctx)
{
	(void)ctx;
	memcpy(val, (const void *)addr, sizeof(*val));
	return 0;
}

/* The thread pointer, asked of the kernel on x86-64, read from TPIDR_EL0 on aarch64. */
static uint64_t fsbase(void)
{
#if defined(__x86_64__)
	unsigned long fs = 0;

	assert_int_equal(syscall(SYS_arch_prctl, ARCH_GET_FS, &fs), 0);
	return fs;
#else
	uint64_t tp;

	__asm__ volatile("mrs %0, tpidr_el0" : "=r"(tp));
	return tp;
#endif
}

static int live_setup(void **state)
{
	struct link_map *lm = NULL;

	(void)state;
	torch_lib = dlopen(LIBTORCH_CPU, RTLD_NOW | RTLD_LOCAL);
	if (!torch_lib) {
		fprintf(stderr, "cannot load %s: %s\n", LIBTORCH_CPU, dlerror());
		return -1;
	}
	peek_fn = (seq_fn)dlsym(torch_lib, ASC_SYM_SEQ_PEEK);
	incr_fn = (seq_fn)dlsym(torch_lib, "_ZN2at15sequence_number17get_and_incrementEv");
	if (!peek_fn || !incr_fn || dlinfo(torch_lib, RTLD_DI_LINKMAP, &lm) || !lm)
		return -1;
	/* the path as /proc/self/maps names it: the link_map's l_name */
	if (asc_seqnr_discover(getpid(), lm->l_name, lm->l_addr, &live_tls)) {
		fprintf(stderr, "asc_seqnr_discover failed on %s\n", lm->l_name);
		return -1;
	}
	return 0;
}

static void test_live_main_thread(void **state)
{
	uint64_t addr = 0;
	int i;

	(void)state;
	assert_true(live_tls.modid > 0);
	for (i = 0; i < 3; i++)
		incr_fn();
	assert_int_equal(asc_seqnr_counter_addr(fsbase(), &live_tls, rd_self, NULL, &addr), 0);
	assert_int_equal(*(uint64_t *)addr, peek_fn());
	incr_fn();
	assert_int_equal(*(uint64_t *)addr, peek_fn());
	assert_true(peek_fn() >= 4);
}

struct thread_res {
	int before, after;
	uint64_t peek_before, value_after, peek_after;
};

static void *fresh_thread(void *arg)
{
	struct thread_res *r = arg;
	uint64_t addr = 0;

	/* a thread that never touched the counter has no block: "0" */
	r->before = asc_seqnr_counter_addr(fsbase(), &live_tls, rd_self, NULL, &addr);
	r->peek_before = peek_fn();
	incr_fn();
	r->after = asc_seqnr_counter_addr(fsbase(), &live_tls, rd_self, NULL, &addr);
	r->value_after = r->after == 0 ? *(uint64_t *)addr : (uint64_t)-1;
	r->peek_after = peek_fn();
	return NULL;
}

static void test_live_fresh_thread(void **state)
{
	struct thread_res r = { 0 };
	pthread_t th;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, fresh_thread, &r), 0);
	pthread_join(th, NULL);
	assert_int_equal(r.before, 1);
	assert_int_equal(r.peek_before, 0);
	assert_int_equal(r.after, 0);
	assert_int_equal(r.value_after, 1);
	assert_int_equal(r.peek_after, 1);
}

static void test_live_node_names(void **state)
{
	static const struct {
		const char *sym, *name;
	} cases[] = {
		{ "_ZTVN5torch8autograd9generated12MulBackward0E", "MulBackward0" },
		{ "_ZTVN5torch8autograd9generated13ReluBackward0E", "ReluBackward0" },
		{ "_ZTVN5torch8autograd9generated20ConvolutionBackward0E", "ConvolutionBackward0" },
		{ "_ZTVN5torch8autograd14AccumulateGradE", "torch::autograd::AccumulateGrad" },
	};
	struct link_map *lm = NULL;
	struct asc_seqnr_names *nm;
	size_t i;

	(void)state;
	assert_int_equal(dlinfo(torch_lib, RTLD_DI_LINKMAP, &lm), 0);
	nm = asc_seqnr_names_open(lm->l_name, lm->l_addr);
	assert_non_null(nm);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *vt = dlsym(torch_lib, cases[i].sym);
		const char *got;

		assert_non_null(vt);
		got = asc_seqnr_names_get(nm, (uint64_t)(uintptr_t)(vt + ASC_VPTR_IN_VTABLE));
		assert_non_null(got);
		assert_string_equal(got, cases[i].name);
	}
	/* a function is in no vtable */
	assert_null(asc_seqnr_names_get(nm, (uint64_t)(uintptr_t)peek_fn));
	asc_seqnr_names_free(nm);
	assert_null(asc_seqnr_names_open("/nonexistent/libtorch_cpu.so", 0));
}

/* ---- pairing ---- */

static const struct asc_fwdbwd_op *ops_of(size_t i, void *ctx)
{
	const struct asc_fwdbwd_op *ops = ctx;

	return ops[i].tid ? &ops[i] : NULL; /* tid 0: "another cycle" */
}

#define MAIN  3096504u
#define BWD   3105075u
#define US(x) ((int64_t)((x)*1000.0 + 0.5))

static void test_pairs_sample(void **state)
{
	/* seq 1350 and 1351 of the sample: its ops in its file order, with their ts */
	static const struct asc_fwdbwd_op ops[] = {
		{ US(1736408883688571.840), 1350, MAIN, 0 }, /* aten::detach_ */
		{ US(1736408883688806.460), 1350, MAIN, 0 }, /* aten::set_ */
		{ US(1736408883694390.890), 1350, MAIN, 0 }, /* aten::_to_copy */
		{ US(1736408883694290.010), 1350, MAIN, 0 }, /* aten::to */
		{ US(1736408883702199.870), 1350, MAIN, 0 }, /* aten::convolution */
		{ US(1736408883702011.970), 1350, MAIN, 0 }, /* aten::conv2d */
		{ US(1736408883703037.730), 1351, MAIN, 0 }, /* aten::relu_ */
		{ US(1736408883736817.250), 1350, BWD, 1 },  /* ConvolutionBackward0 */
		{ US(1736408883736725.930), 1351, BWD, 1 },  /* ReluBackward0 */
		{ US(1736408883736800.000), -1, BWD, 0 },    /* evaluate_function range */
		{ US(1736408883736900.000), -1, BWD, 1 },    /* AccumulateGrad */
	};
	struct asc_fwdbwd *p;

	(void)state;
	assert_int_equal(asc_fwdbwd_pairs(ARRAY_SIZE(ops), ops_of, (void *)ops, &p), 2);
	/* the sample's flows: 1350 s at aten::convolution, f at ConvolutionBackward0 */
	assert_int_equal(p[0].seq, 1350);
	assert_int_equal(p[0].fwd, 4);
	assert_int_equal(p[0].bwd, 7);
	assert_int_equal(p[1].seq, 1351);
	assert_int_equal(p[1].fwd, 6);
	assert_int_equal(p[1].bwd, 8);
	free(p);
}

static void test_pairs_rules(void **state)
{
	static const struct asc_fwdbwd_op ops[] = {
		{ 100, 7, 10, 0 },  /* 0: forward of 7 */
		{ 300, 7, 20, 2 },  /* 1: backward of 7 */
		{ 500, 7, 20, 2 },  /* 2: a later backward of 7 wins */
		{ 500, 7, 20, 2 },  /* 3: same start: the first stays */
		{ 200, 8, 10, 0 },  /* 4: 8: backward on the same thread: no flow */
		{ 250, 8, 10, 1 },  /* 5 */
		{ 260, 9, 10, 0 },  /* 6: 9: no backward */
		{ 270, 11, 20, 1 }, /* 7: 11: no forward */
		{ 900, 5, 0, 0 },   /* 8: left out ("another cycle") */
		{ 950, 5, 20, 1 },  /* 9 */
		{ 990, 4, 10, 0 },  /* 10: 4 appears last */
		{ 995, 4, 30, 3 },  /* 11 */
		{ 50, 4, 10, 0 },   /* 12: an earlier forward does not replace the latest */
	};
	struct asc_fwdbwd *p;

	(void)state;
	assert_int_equal(asc_fwdbwd_pairs(ARRAY_SIZE(ops), ops_of, (void *)ops, &p), 2);
	assert_int_equal(p[0].seq, 7);
	assert_int_equal(p[0].fwd, 0);
	assert_int_equal(p[0].bwd, 2);
	assert_int_equal(p[1].seq, 4);
	assert_int_equal(p[1].fwd, 10);
	assert_int_equal(p[1].bwd, 11);
	free(p);
	assert_int_equal(asc_fwdbwd_pairs(0, ops_of, (void *)ops, &p), 0);
	assert_null(p);
}

static void test_pairs_many(void **state)
{
	/* enough numbers to grow the table several times: 5000 pairs, in order */
	size_t n = 10000, i;
	struct asc_fwdbwd_op *ops = calloc(n, sizeof(*ops));
	struct asc_fwdbwd *p;

	(void)state;
	assert_non_null(ops);
	for (i = 0; i < n / 2; i++) {
		ops[i] = (struct asc_fwdbwd_op){ (int64_t)i, (int64_t)i * 3, 1, 0 };
		ops[n / 2 + i] = (struct asc_fwdbwd_op){ (int64_t)(n + i), (int64_t)i * 3, 2, 1 };
	}
	assert_int_equal(asc_fwdbwd_pairs(n, ops_of, ops, &p), n / 2);
	for (i = 0; i < n / 2; i++) {
		assert_int_equal(p[i].seq, (int64_t)i * 3);
		assert_int_equal(p[i].fwd, i);
		assert_int_equal(p[i].bwd, n / 2 + i);
	}
	free(p);
	free(ops);
}

/* ---- the converter's view: SEQNR records in a capture ---- */

static void put_seqnr(uint32_t tid, uint32_t probe, uint64_t ts, uint32_t kind, int64_t seq,
		      uint64_t fwd, uint64_t vptr)
{
	struct asc_seqnr r = { 0 };

	hdr(&r.hdr, ASC_REC_SEQNR, sizeof(r), tid, probe, ts);
	r.kind = kind;
	r.seq = seq;
	r.fwd_tid = fwd;
	r.vptr = vptr;
	put(&r);
}

static const struct asc_corr_op *op_named(const struct asc_corr *c, const char *name, uint32_t tid,
					  int nth)
{
	size_t i;

	for (i = 0; i < c->nr_ops; i++)
		if (c->ops[i].tid == tid && !strcmp(asc_corr_str(c, c->ops[i].name), name) &&
		    nth-- == 0)
			return &c->ops[i];
	return NULL;
}

enum { P_LINEAR = 1, P_ADDMM, P_EVAL, P_APPLY, P_APPLY2 };

static void test_correlate_seqnr(void **state)
{
	char dir[] = "/tmp/test_seqnr.XXXXXX", path[300];
	const char *vt = dlsym(torch_lib, "_ZTVN5torch8autograd9generated14AddmmBackward0E");
	const struct asc_corr_op *o, *ev, *node;
	struct link_map *lm = NULL;
	struct asc_corr *c;

	(void)state;
	assert_non_null(vt);
	assert_int_equal(dlinfo(torch_lib, RTLD_DI_LINKMAP, &lm), 0);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/c.ascb", dir);
	capture_begin(path);
	clock_rec(ASC_CLOCK_START, 1000, 5000); /* wall = mono + 4000 */
	probe(P_LINEAR, "_ZN2at4_ops6linear4callERKNS_6TensorES4_RKN3c108optionalIS2_EE",
	      ASC_LAYER_FRAMEWORK, ASC_PK_ATEN_OP);
	probe(P_ADDMM, "_ZN2at4_ops5addmm4callERKNS_6TensorES4_S4_RKN3c106ScalarES8_",
	      ASC_LAYER_FRAMEWORK, ASC_PK_ATEN_OP);
	probe(P_EVAL, ASC_SYM_EVALUATE_FUNCTION, ASC_LAYER_FRAMEWORK, ASC_PK_AUTOGRAD_EVAL);
	probe(P_APPLY,
	      "_ZN5torch8autograd9generated14AddmmBackward05applyEOSt6vectorIN2at6TensorE"
	      "SaIS5_EE",
	      ASC_LAYER_FRAMEWORK, ASC_PK_AUTOGRAD_APPLY);
	probe(P_APPLY2, "_ZN5torch8autograd10CopySlices5applyEOSt6vectorIN2at6TensorESaIS4_EE",
	      ASC_LAYER_FRAMEWORK, ASC_PK_AUTOGRAD_APPLY);
	/* the classes as the tracer writes them at attach (NODE_CLASS records) */
	assert_int_equal(asc_trace_write_node_classes(capture_writer(), CAP_TGID, lm->l_name,
						      lm->l_addr),
			 0);

	/* forward on 10: linear { addmm (creates node 5) } */
	enter(10, P_LINEAR, 10000);
	enter(10, P_ADDMM, 10100);
	leave(10, P_ADDMM, 10200);
	put_seqnr(10, P_ADDMM, 10200, ASC_SEQNR_FORWARD, 5, 0, 0);
	leave(10, P_LINEAR, 10300);
	put_seqnr(10, P_LINEAR, 10300, ASC_SEQNR_FORWARD, 5, 0, 0);
	put_seqnr(10, P_ADDMM, 10300, ASC_SEQNR_FORWARD, 9, 0, 0); /* not after its EXIT */
	enter(10, P_ADDMM, 10400);				   /* creates nothing */
	leave(10, P_ADDMM, 10500);
	/* backward on 20: the node of 5, its apply() with an aten op and a nested apply() */
	enter(20, P_EVAL, 20000);
	put_seqnr(20, P_EVAL, 20000, ASC_SEQNR_NODE, 5, 1, (uint64_t)(uintptr_t)(vt + 16));
	enter(20, P_APPLY, 20050);
	enter(20, P_ADDMM, 20100);
	leave(20, P_ADDMM, 20200);
	enter(20, P_APPLY2, 20250);
	leave(20, P_APPLY2, 20300);
	leave(20, P_APPLY, 20400);
	leave(20, P_EVAL, 20500);
	/* a node that could not be read, and an evaluate_function without its SEQNR */
	enter(20, P_EVAL, 21000);
	put_seqnr(20, P_EVAL, 21000, ASC_SEQNR_NODE, -1, 0, 0);
	leave(20, P_EVAL, 21100);
	enter(20, P_EVAL, 22000);
	leave(20, P_EVAL, 22100);
	clock_rec(ASC_CLOCK_END, 30000, 34000);
	c = capture_corr(path);
	unlink(path);
	rmdir(dir);

	assert_int_equal(c->nr_ops, 9);
	o = op_named(c, "aten::linear", 10, 0);
	assert_non_null(o);
	assert_int_equal(o->seq, 5);
	assert_int_equal(o->fwd_tid, 0);
	o = op_named(c, "aten::addmm", 10, 0);
	assert_non_null(o);
	assert_int_equal(o->seq, 5);
	o = op_named(c, "aten::addmm", 10, 1);
	assert_non_null(o);
	assert_int_equal(o->seq, -1);
	ev = op_named(c, ASC_EVAL_PREFIX "AddmmBackward0", 20, 0);
	node = op_named(c, "AddmmBackward0", 20, 0);
	assert_non_null(ev);
	assert_non_null(node);
	assert_int_equal(ev->seq, -1);
	assert_int_equal(ev->fwd_tid, 0);
	assert_int_equal(node->seq, 5);
	assert_int_equal(node->fwd_tid, 1);
	assert_int_equal(ev->start_ns, 24000);
	assert_int_equal(ev->end_ns, 24500);
	assert_int_equal(node->start_ns, 24050); /* its apply()'s span */
	assert_int_equal(node->end_ns, 24400);
	assert_false(node->flags & ASC_CORR_O_NO_EXIT);
	assert_int_equal(node->parent, ev - c->ops);
	o = op_named(c, "aten::addmm", 20, 0);
	assert_non_null(o);
	assert_int_equal(o->parent, node - c->ops);
	assert_int_equal(o->seq, -1);
	ev = op_named(c, ASC_EVAL_PREFIX ASC_NODE_UNKNOWN, 20, 0);
	node = op_named(c, ASC_NODE_UNKNOWN, 20, 0);
	assert_non_null(ev);
	assert_non_null(node);
	assert_int_equal(node->seq, -1);
	assert_int_equal(node->start_ns, 25000); /* no apply(): evaluate_function's span */
	assert_int_equal(node->end_ns, 25100);
	o = op_named(c, "autograd::engine::evaluate_function", 20, 0);
	assert_non_null(o);
	assert_int_equal(o->end_ns, 26100);
	asc_corr_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),	     cmocka_unit_test(test_class_names),
		cmocka_unit_test(test_pairs_sample), cmocka_unit_test(test_pairs_rules),
		cmocka_unit_test(test_pairs_many),
	};
	const struct CMUnitTest live[] = {
		cmocka_unit_test(test_live_main_thread),
		cmocka_unit_test(test_live_fresh_thread),
		cmocka_unit_test(test_live_node_names),
		cmocka_unit_test(test_correlate_seqnr),
	};
	int failed = cmocka_run_group_tests_name("seqnr", tests, NULL, NULL);

	return failed + cmocka_run_group_tests_name("seqnr_live", live, live_setup, NULL);
}
