// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_sched.c - npu-modeld's task scheduler (npu_model/modeld/sched.c) in
 * device time: FIFO per SQ, one compute and one copy engine per card, event
 * record/wait across SQs in submission order, completion only once the clock
 * has passed a task's end, failed tasks, full SQs, and the shared-memory
 * rings (seq order, corrupted tails).  Time is passed in, so every expected
 * start and end is exact.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "modeld/modeld.h"

static int owner;
#define OWNER (&owner)
#define T0    1000000ull

static struct md_card *card_new(int with_uio)
{
	struct md_config cfg;
	struct md_card *c = calloc(1, sizeof(*c));

	memset(&cfg, 0, sizeof(cfg));
	npu_card_config_default(&cfg.card);
	cfg.card.launch_latency_ns = 2000;
	cfg.cards = 1;
	cfg.cnt_freq_hz = 100000000;
	cfg.cnt_offset = 5000;
	assert_int_equal(md_card_init(c, 0, &cfg, with_uio), 0);
	return c;
}

static void card_free(struct md_card *c)
{
	md_card_fini(c);
	free(c);
}

static struct md_sq *sq_new(struct md_card *c, uint32_t id)
{
	struct md_sq *sq = md_sq_create(c, id, id, id, OWNER, 42);

	assert_non_null(sq);
	c->cq[id] = calloc(1, sizeof(struct md_cq));
	return sq;
}

static struct npu_sqe kernel(uint16_t stream, uint16_t task, uint64_t flops, uint64_t bytes)
{
	struct npu_sqe s;

	memset(&s, 0, sizeof(s));
	s.header.rtStreamId = stream;
	s.header.taskId = task;
	s.kind = NPU_SQE_KIND_KERNEL;
	s.task_type = NPU_TASK_AI_CORE;
	s.flops = flops;
	s.bytes = bytes;
	strcpy(s.u.kernel_name, "MatMul");
	return s;
}

static struct npu_sqe other(uint16_t stream, uint16_t task, int kind, uint32_t event,
			    uint64_t bytes)
{
	struct npu_sqe s;

	memset(&s, 0, sizeof(s));
	s.header.rtStreamId = stream;
	s.header.taskId = task;
	s.kind = (uint8_t)kind;
	s.event_id = event;
	s.bytes = bytes;
	s.copy_kind = NPU_COPY_H2D;
	return s;
}

static uint64_t kdur(struct md_card *c, uint64_t flops, uint64_t bytes)
{
	return npu_cost_duration_ns(&c->cfg, flops, bytes, NPU_TASK_AI_CORE);
}

static void test_fifo_in_device_time(void **state)
{
	struct md_card *c = card_new(0);
	struct md_sq *sq = sq_new(c, 0);
	struct npu_sqe s[3] = { kernel(0, 0, 1ull << 30, 0), kernel(0, 1, 1ull << 32, 0),
				kernel(0, 2, 0, 1 << 20) };
	uint64_t d0 = kdur(c, 1ull << 30, 0), d1 = kdur(c, 1ull << 32, 0), d2 = kdur(c, 0, 1 << 20);
	uint64_t deadline;

	assert_true(d1 > d0);
	assert_int_equal(md_sched_submit(c, sq, s, 3, T0), 0);
	/* Nothing has finished before the first end. */
	assert_int_equal(md_sched_run(c, T0 + d0 - 1, &deadline), 0);
	assert_int_equal(deadline, T0 + d0);
	assert_int_equal(sq->head, 0);
	assert_int_equal(md_sched_run(c, T0 + d0, &deadline), 1);
	assert_int_equal(deadline, T0 + d0 + d1);
	/* A late look completes everything due, with the times it was due. */
	assert_int_equal(md_sched_run(c, T0 + 10 * (d0 + d1 + d2), &deadline), 2);
	assert_int_equal(deadline, UINT64_MAX);
	assert_int_equal(sq->head, 3);
	assert_int_equal(sq->q[1].start_ns, T0 + d0);
	assert_int_equal(sq->q[2].start_ns, T0 + d0 + d1);
	assert_int_equal(sq->q[2].end_ns, T0 + d0 + d1 + d2);
	assert_int_equal(c->tasks_done, 3);
	/* The counter runs at 100 MHz from the offset. */
	assert_int_equal(md_counter_at(c, c->cnt_base_ns + 1000), 5000 + 100);
	card_free(c);
}

static void test_compute_serialises_copy_overlaps(void **state)
{
	struct md_card *c = card_new(0);
	struct md_sq *a = sq_new(c, 0), *b = sq_new(c, 1), *m = sq_new(c, 2);
	struct npu_sqe ka = kernel(0, 0, 1ull << 32, 0), kb = kernel(1, 0, 1ull << 32, 0);
	struct npu_sqe cp = other(2, 0, NPU_SQE_KIND_MEMCPY, 0, 1 << 20);
	uint64_t d = kdur(c, 1ull << 32, 0), dc = npu_cost_copy_ns(&c->cfg, 1 << 20, NPU_COPY_H2D);
	uint64_t deadline;

	assert_int_equal(md_sched_submit(c, a, &ka, 1, T0), 0);
	assert_int_equal(md_sched_submit(c, b, &kb, 1, T0), 0);
	assert_int_equal(md_sched_submit(c, m, &cp, 1, T0), 0);
	md_sched_run(c, T0, &deadline);
	assert_int_equal(a->q[0].start_ns, T0);
	assert_int_equal(b->q[0].start_ns, T0 + d); /* waits for the compute engine */
	assert_int_equal(m->q[0].start_ns, T0);	    /* the copy engine is free */
	assert_int_equal(m->q[0].end_ns, T0 + dc);
	md_sched_run(c, T0 + 3 * d + dc, &deadline);
	assert_int_equal(c->tasks_done, 3);
	card_free(c);
}

static void test_event_wait_across_sqs(void **state)
{
	struct md_card *c = card_new(0);
	struct md_sq *a = sq_new(c, 0), *b = sq_new(c, 1);
	struct npu_sqe sa[2] = { kernel(0, 0, 1ull << 34, 0),
				 other(0, 1, NPU_SQE_KIND_EVENT_RECORD, 9, 0) };
	struct npu_sqe sb[2] = { other(1, 0, NPU_SQE_KIND_EVENT_WAIT, 9, 0),
				 other(1, 1, NPU_SQE_KIND_MEMCPY, 0, 4096) };
	uint64_t d = kdur(c, 1ull << 34, 0), lat = c->cfg.launch_latency_ns, deadline;
	uint64_t rec_end = T0 + d + npu_cost_duration_ns(&c->cfg, 0, 0, NPU_TASK_EVENT_RECORD);

	assert_int_equal(md_sched_submit(c, a, sa, 2, T0), 0);
	assert_int_equal(md_sched_submit(c, b, sb, 2, T0), 0);
	/* While the record has not run, the wait blocks its SQ. */
	assert_int_equal(md_sched_run(c, T0 + d - 1, &deadline), 0);
	assert_false(b->q[0].scheduled);
	md_sched_run(c, rec_end + 100 * lat + 10000000, &deadline);
	assert_int_equal(c->tasks_done, 4);
	assert_true(b->q[0].start_ns >= rec_end);
	assert_true(b->q[1].start_ns >= b->q[0].end_ns);
	assert_int_equal(c->events[9].completed, 1);
	/* A wait with no record before it passes at once. */
	{
		struct npu_sqe w = other(1, 2, NPU_SQE_KIND_EVENT_WAIT, 10, 0);
		uint64_t now = rec_end + 100000000;

		assert_int_equal(md_sched_submit(c, b, &w, 1, now), 0);
		assert_int_equal(md_sched_run(c, now + lat, &deadline), 1);
	}
	card_free(c);
}

static void test_failed_task_posts_cqe(void **state)
{
	struct md_card *c = card_new(0);
	struct md_sq *sq = sq_new(c, 3);
	struct npu_sqe s[3] = { kernel(3, 0, 0, 0), other(3, 1, 77, 0, 0),
				other(3, 2, NPU_SQE_KIND_EVENT_RECORD, MD_MAX_EVENTS, 0) };
	uint64_t deadline;

	assert_int_equal(md_sched_submit(c, sq, s, 3, T0), 0);
	assert_int_equal(md_sched_run(c, T0 + 1000000000, &deadline), 3);
	assert_int_equal(c->tasks_failed, 2);
	assert_int_equal(c->cq[3]->tail, 2);
	assert_int_equal(c->cq[3]->cqe[0].task_id, 1);
	assert_int_equal(c->cq[3]->cqe[1].task_id, 2);
	assert_int_equal(c->cq[3]->cqe[0].sq_id, 3);
	assert_int_equal(c->cq[3]->cqe[0].error_code, MD_ERR_INVALID_SQE);
	assert_true(c->cq[3]->cqe[0].error_bit);
	card_free(c);
}

static void test_full_sq_is_busy(void **state)
{
	struct md_card *c = card_new(0);
	struct md_sq *sq = sq_new(c, 0);
	struct npu_sqe *s = calloc(NPU_UIO_SQ_DEPTH, sizeof(*s));
	uint64_t deadline;
	uint32_t i;

	for (i = 0; i < NPU_UIO_SQ_DEPTH; i++)
		s[i] = kernel(0, (uint16_t)i, 0, 0);
	assert_int_equal(md_sched_submit(c, sq, s, NPU_UIO_SQ_DEPTH, T0), -EBUSY);
	assert_int_equal(md_sched_submit(c, sq, s, NPU_UIO_SQ_DEPTH - 1, T0), 0);
	assert_int_equal(md_sched_submit(c, sq, s, 1, T0), -EBUSY);
	assert_int_equal(md_sched_run(c, T0 + c->cfg.launch_latency_ns, &deadline), 1);
	assert_int_equal(md_sched_submit(c, sq, s, 1, T0), 0);
	/* Freeing the SQ drops what was queued. */
	md_sq_destroy(c, sq);
	assert_int_equal(c->tasks_dropped, NPU_UIO_SQ_DEPTH - 1);
	free(s);
	card_free(c);
}

static void test_task_timeout(void **state)
{
	struct md_card *c = card_new(0);
	struct md_sq *sq = sq_new(c, 0);
	struct npu_sqe s[2] = { kernel(0, 0, 1ull << 62, 0), kernel(0, 1, 0, 0) };
	uint64_t deadline;

	c->task_timeout_ns = 1000000;
	assert_int_equal(md_sched_submit(c, sq, s, 2, T0), 0);
	md_sched_run(c, T0, &deadline);
	/* The runaway kernel is cut at the timeout and reported; the next one runs. */
	assert_int_equal(deadline, T0 + 1000000);
	assert_int_equal(md_sched_run(c, T0 + 1000000 + c->cfg.launch_latency_ns, &deadline), 2);
	assert_int_equal(c->tasks_failed, 1);
	assert_int_equal(c->cq[0]->cqe[0].error_code, MD_ERR_TIMEOUT);
	assert_int_equal(sq->q[1].start_ns, T0 + 1000000);
	card_free(c);
}

static void test_freed_sq_gives_engine_back(void **state)
{
	struct md_card *c = card_new(0);
	struct md_sq *a = sq_new(c, 0), *b;
	struct npu_sqe ka = kernel(0, 0, 1ull << 50, 0), kb = kernel(1, 0, 0, 0);
	uint64_t now = md_now_ns(), deadline, d = kdur(c, 1ull << 50, 0);

	assert_true(d > 1000000000ull);
	assert_int_equal(md_sched_submit(c, a, &ka, 1, now), 0);
	md_sched_run(c, now, &deadline);
	assert_int_equal(c->engine_free[MD_ENGINE_COMPUTE], now + d);
	/* Its process dies: the long kernel is aborted, the engine is free again. */
	md_sq_destroy(c, a);
	assert_true(c->engine_free[MD_ENGINE_COMPUTE] < now + d);
	b = sq_new(c, 1);
	assert_int_equal(md_sched_submit(c, b, &kb, 1, md_now_ns()), 0);
	md_sched_run(c, md_now_ns(), &deadline);
	assert_true(b->q[0].start_ns < now + d);
	card_free(c);
}

static void uio_put(struct md_card *c, uint32_t sq_id, const struct npu_sqe *s, uint64_t seq)
{
	struct npu_uio_card *hdr = c->uio;
	struct npu_uio_sq *u = npu_uio_sq_at(c->uio, sq_id);
	uint32_t tail = u->tail;

	memcpy(u->sqe[tail % NPU_UIO_SQ_DEPTH], s, sizeof(*s));
	u->seq[tail % NPU_UIO_SQ_DEPTH] = seq;
	atomic_store((_Atomic uint32_t *)&u->tail, tail + 1);
	atomic_fetch_or((_Atomic uint64_t *)&hdr->pending[sq_id / 64], 1ull << (sq_id % 64));
}

static void test_uio_ingest_in_seq_order(void **state)
{
	struct md_card *c = card_new(1);
	struct md_sq *a = sq_new(c, 0), *b = sq_new(c, 70);
	struct npu_sqe rec = other(70, 0, NPU_SQE_KIND_EVENT_RECORD, 5, 0);
	struct npu_sqe wait = other(0, 0, NPU_SQE_KIND_EVENT_WAIT, 5, 0);
	uint64_t deadline;

	/* SQ 70 got the record first (seq 0), SQ 0 the wait (seq 1). */
	uio_put(c, 70, &rec, 0);
	uio_put(c, 0, &wait, 1);
	md_sched_ingest_uio(c, T0);
	assert_int_equal(a->ingested, 1);
	assert_int_equal(b->ingested, 1);
	assert_int_equal(a->q[0].ev_target, 1); /* it waits for that record */
	md_sched_run(c, T0 + 1000000, &deadline);
	assert_int_equal(npu_uio_sq_at(c->uio, 0)->head, 1);
	assert_int_equal(npu_uio_sq_at(c->uio, 70)->head, 1);
	card_free(c);
}

static void test_uio_corrupt_tail(void **state)
{
	struct md_card *c = card_new(1);
	struct md_sq *a = sq_new(c, 1);
	struct npu_uio_card *hdr = c->uio;
	struct npu_uio_sq *u = npu_uio_sq_at(c->uio, 1);

	/* A client claims more SQEs than the ring holds. */
	atomic_store((_Atomic uint32_t *)&u->tail, NPU_UIO_SQ_DEPTH + 5);
	hdr->pending[0] = 2;
	md_sched_ingest_uio(c, T0);
	assert_true(a->broken);
	assert_int_equal(a->ingested, 0);
	assert_int_equal(md_sched_submit(c, a, (struct npu_sqe[1]){ kernel(1, 0, 0, 0) }, 1, T0),
			 -EIO);
	/* A pending bit for an SQ nobody owns is ignored. */
	hdr->pending[3] = 1ull << 5;
	md_sched_ingest_uio(c, T0);
	card_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_in_device_time),
		cmocka_unit_test(test_compute_serialises_copy_overlaps),
		cmocka_unit_test(test_event_wait_across_sqs),
		cmocka_unit_test(test_failed_task_posts_cqe),
		cmocka_unit_test(test_full_sq_is_busy),
		cmocka_unit_test(test_task_timeout),
		cmocka_unit_test(test_freed_sq_gives_engine_back),
		cmocka_unit_test(test_uio_ingest_in_seq_order),
		cmocka_unit_test(test_uio_corrupt_tail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
