// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_comm.c - msprof's per-op communication numbers (user/analysis/comm.c) on
 * hand-made comm views: the master-plane time info (Transit, Wait, the
 * Synchronization waits before the first transfer, Idle, the ratios), RDMA
 * payload runs closed by their notify tasks (3 for send/receive ops, 5
 * otherwise), ON_CHIP copies left out of Transit but in the matrix as
 * LOCAL, bandwidth per link type with SDMA adding HCCS / PCIE / SIO, int 0
 * for a transport without data, Python's round(x, 4), and torch_npu's op
 * types and p2p names.  Expected values are worked out by hand from the
 * task times below.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "analysis/comm.h"

#define MS(x) ((x) / 1000000.0)

static struct asc_comm_task T(int64_t s, int64_t e, uint8_t kind, uint8_t tp, uint8_t lk,
			      uint32_t plane, uint64_t size, uint32_t dst) {
	struct asc_comm_task t;

	memset(&t, 0, sizeof(t));
	t.start_ns = s;
	t.end_ns = e;
	t.kind = kind;
	t.transport = tp;
	t.link = lk;
	t.plane = plane;
	t.size = size;
	t.src_rank = 0;
	t.dst_rank = dst;
	t.master = plane == 0;
	t.kernel = -1;
	return t;
}

/* One op over the given tasks. */
static void
view(struct asc_comm *m, struct asc_comm_op *op, struct asc_comm_task *t, size_t n,
     const char *name)
{
	memset(m, 0, sizeof(*m));
	memset(op, 0, sizeof(*op));
	snprintf(op->name, sizeof(op->name), "%s", name);
	op->group = -1;
	op->ntasks = n;
	m->ops = op;
	m->nr_ops = 1;
	m->tasks = t;
	m->nr_tasks = n;
}

static void test_time_info(void **state)
{
	struct asc_comm_task t[] = {
		T(0, 1000, ASC_CT_NOTIFY_RECORD, ASC_TP_SDMA, ASC_LK_INVALID, 0, 0, 1),
		T(1000, 5000, ASC_CT_NOTIFY_WAIT, ASC_TP_SDMA, ASC_LK_INVALID, 0, 0, 1),
		/* a local copy: not a transfer, so the next wait is still synchronization */
		T(5000, 6000, ASC_CT_MEMCPY, ASC_TP_SDMA, ASC_LK_ON_CHIP, 0, 1000000, 0xffffffff),
		T(6000, 8000, ASC_CT_NOTIFY_WAIT, ASC_TP_SDMA, ASC_LK_INVALID, 0, 0, 1),
		T(8000, 18000, ASC_CT_REDUCE_INLINE, ASC_TP_SDMA, ASC_LK_HCCS, 0, 2000000, 1),
		T(20000, 23000, ASC_CT_NOTIFY_WAIT, ASC_TP_SDMA, ASC_LK_INVALID, 0, 0, 1),
		/* another plane: no part of the time info, but of the bandwidth */
		T(0, 40000, ASC_CT_MEMCPY, ASC_TP_SDMA, ASC_LK_PCIE, 1, 3000000, 2),
	};
	struct asc_comm m;
	struct asc_comm_op op;
	struct asc_comm_time ti;
	struct asc_comm_bw bw[ASC_BW__NR];

	(void)state;
	view(&m, &op, t, 7, "hcom_allReduce__1_0_1");
	assert_int_equal(asc_comm_op_time(&m, 0, &ti), 0);
	assert_true(ti.elapse.isf && ti.elapse.v == MS(23000.0));
	assert_true(ti.transit.v == MS(10000.0)); /* the HCCS Reduce_Inline only */
	assert_true(ti.wait.v == MS(4000.0) + MS(2000.0) + MS(3000.0));
	assert_true(ti.sync.v == MS(4000.0) + MS(2000.0)); /* before the first transfer */
	assert_true(ti.idle.v == ti.elapse.v - ti.transit.v - ti.wait.v);
	assert_true(ti.wait_ratio.v == 0.4737); /* round(9 / 19, 4) */
	assert_true(ti.sync_ratio.v == 0.375);	/* 6 / 16 */
	assert_int_equal(ti.start_ns, 0);

	assert_int_equal(asc_comm_op_bw(&m, 0, bw), 0);
	assert_true(bw[ASC_BW_HCCS].size_mb.v == 2.0 && bw[ASC_BW_HCCS].time_ms.v == 0.01);
	assert_true(bw[ASC_BW_HCCS].bw.v == 200.0); /* 2 MB in 10 us */
	assert_true(bw[ASC_BW_PCIE].size_mb.v == 3.0 && bw[ASC_BW_PCIE].bw.v == 75.0);
	assert_true(bw[ASC_BW_SDMA].size_mb.v == 5.0 && bw[ASC_BW_SDMA].time_ms.v == 0.05);
	assert_false(bw[ASC_BW_RDMA].size_mb.isf || bw[ASC_BW_SIO].bw.isf); /* int 0 */
	assert_int_equal(bw[ASC_BW_HCCS].nbins, 1);
	assert_int_equal(bw[ASC_BW_SDMA].nbins, 0); /* SDMA's own transfers only */
	assert_true(bw[ASC_BW_HCCS].large_ratio.isf && bw[ASC_BW_HCCS].large_ratio.v == 0);
	assert_false(bw[ASC_BW_SDMA].large_ratio.isf);
	asc_comm_bw_free(bw);
}

static void test_matrix_links(void **state)
{
	struct asc_comm_task t[] = {
		T(0, 1000, ASC_CT_MEMCPY, ASC_TP_SDMA, ASC_LK_ON_CHIP, 0, 500000, 0xffffffff),
		T(1000, 3000, ASC_CT_MEMCPY, ASC_TP_SDMA, ASC_LK_HCCS, 0, 1000000, 1),
		T(3000, 5000, ASC_CT_REDUCE_INLINE, ASC_TP_SDMA, ASC_LK_HCCS, 0, 1000000, 1),
		T(0, 9000, ASC_CT_NOTIFY_WAIT, ASC_TP_SDMA, ASC_LK_INVALID, 1, 0, 2),
	};
	struct asc_comm m;
	struct asc_comm_op op;
	struct asc_comm_link_info *l;
	size_t n;

	(void)state;
	view(&m, &op, t, 4, "hcom_allGather__1_0_1");
	assert_int_equal(asc_comm_op_links(&m, 0, &l, &n), 0);
	assert_int_equal(n, 2);
	assert_true(l[0].src == 0 && l[0].dst == 0); /* a local copy: src-src, LOCAL */
	assert_string_equal(asc_comm_matrix_transport(l[0].transport), "LOCAL");
	assert_true(l[1].dst == 1 && l[1].size_mb == 2.0 && l[1].time_ms == 0.004);
	assert_string_equal(asc_comm_matrix_transport(l[1].transport), "HCCS");
	free(l);
}

/*
 * RDMA: a run of payload tasks, then the closing tasks; the transfer ends with
 * with task run + rdma_n - 2 counted from its first (send/receive: rdma_n 3).
 */
static void test_rdma_payload(void **state)
{
	struct asc_comm_task t[] = {
		T(0, 1000, ASC_CT_RDMA_SEND, ASC_TP_RDMA, ASC_LK_ROCE, 0, 4000000, 1),
		T(1000, 2000, ASC_CT_RDMA_SEND, ASC_TP_RDMA, ASC_LK_ROCE, 0, 4000000, 1),
		T(2000, 9000, ASC_CT_NOTIFY_WAIT, ASC_TP_RDMA, ASC_LK_ROCE, 0, 0, 1),
		T(9000, 10000, ASC_CT_NOTIFY_RECORD, ASC_TP_RDMA, ASC_LK_ROCE, 0, 0, 1),
	};
	struct asc_comm m;
	struct asc_comm_op op;
	struct asc_comm_time ti;
	struct asc_comm_bw bw[ASC_BW__NR];

	(void)state;
	t[0].flags = t[1].flags = ASC_COMM_T_RDMA_PAYLOAD;
	view(&m, &op, t, 4, "hcom_send__1_0_1");
	assert_int_equal(asc_comm_op_time(&m, 0, &ti), 0);
	/* 0 .. the end of task run + 3 - 2 after the run's start (the record): 10 us; the
	 * closing tasks are part of the transfer, so the wait is no Wait time */
	assert_true(ti.transit.v == MS(10000.0));
	assert_true(ti.wait.isf == 0 && ti.sync.isf == 0);
	assert_int_equal(asc_comm_op_bw(&m, 0, bw), 0);
	assert_true(bw[ASC_BW_RDMA].size_mb.v == 8.0 && bw[ASC_BW_RDMA].time_ms.v == 0.01);
	assert_true(bw[ASC_BW_RDMA].large_ratio.v == 1.0); /* 8 MB > 0.5 MB */
	asc_comm_bw_free(bw);
	/* an all-reduce closes a run with 5 tasks: 4 tasks are not enough, no transfer */
	view(&m, &op, t, 4, "hcom_allReduce__1_0_1");
	assert_int_equal(asc_comm_op_time(&m, 0, &ti), 0);
	assert_false(ti.transit.isf);
}

static void test_names_and_rounding(void **state)
{
	char b[32];

	(void)state;
	/* re.search: the leftmost match, the alternatives in their order at each position */
	assert_string_equal(asc_comm_op_type("hcom_allReduce__586_0_1", b, sizeof(b)), "allreduce");
	assert_string_equal(asc_comm_op_type("hcom_reduceScatter__1_0_1", b, sizeof(b)), "reduce");
	assert_string_equal(asc_comm_op_type("hcom_allGather__1_0_1", b, sizeof(b)), "allgather");
	assert_string_equal(asc_comm_op_type("hcom_send__1_0_1", b, sizeof(b)), "send");
	assert_string_equal(asc_comm_op_type("hcom_receive__1_0_1", b, sizeof(b)), "receive");
	assert_string_equal(asc_comm_op_type("hcom_alltoallv__1_0_1", b, sizeof(b)), "alltoall");
	assert_string_equal(asc_comm_op_type("myop__1", b, sizeof(b)), "myop");
	assert_true(asc_comm_is_p2p("HCOM_SEND__1") && asc_comm_is_p2p("hcom_receive_x") &&
		    asc_comm_is_p2p("hcom_batchSendRecv__2") && !asc_comm_is_p2p("hcom_allReduce"));
	assert_true(asc_py_round4(0.12345) == 0.1235 || asc_py_round4(0.12345) == 0.1234);
	assert_true(asc_py_round4(2.5e-5) == 0.0); /* half to even on the binary value */
	assert_true(asc_py_round4(0.95945) == 0.9594 || asc_py_round4(0.95945) == 0.9595);
	assert_true(asc_py_round4(1.0 / 3.0) == 0.3333);
	assert_string_equal(asc_comm_link_name(ASC_LK_ROCE), "ROCE");
	assert_string_equal(asc_comm_matrix_transport(ASC_LK_ROCE), "RDMA");
	assert_string_equal(asc_comm_matrix_transport(ASC_LK_HCCS_SW), "HCCS");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_info),
		cmocka_unit_test(test_matrix_links),
		cmocka_unit_test(test_rdma_payload),
		cmocka_unit_test(test_names_and_rounding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
