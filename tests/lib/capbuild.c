// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tests/lib/capbuild.c - see capbuild.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "capbuild.h"
#include "capture/capture.h"
#include "capture/records.h"

static struct asc_capture_writer *writer;

void capture_begin(const char *path)
{
	writer = asc_capture_create(path, 1);
	assert_non_null(writer);
}

struct asc_capture_writer *capture_writer(void)
{
	return writer;
}

struct asc_corr *capture_corr(const char *path)
{
	struct asc_capture_reader *r;
	struct asc_corr *c;

	assert_int_equal(asc_capture_close(writer), 0);
	writer = NULL;
	r = asc_capture_open(path);
	assert_non_null(r);
	c = asc_corr_build(r);
	asc_capture_free(r);
	assert_non_null(c);
	return c;
}

void put(const void *rec)
{
	const struct asc_hdr *h = rec;

	assert_int_equal(asc_capture_append(writer, rec, h->size), 0);
}

void hdr(struct asc_hdr *h, uint16_t type, uint16_t size, uint32_t tid, uint32_t probe, uint64_t ts)
{
	h->type = type;
	h->size = size;
	h->tgid = CAP_TGID;
	h->tid = tid;
	h->probe_id = probe;
	h->ts_ns = ts;
}

void probe(uint32_t id, const char *sym, uint16_t layer, uint16_t kind)
{
	_Alignas(8) char buf[512] = { 0 };
	struct asc_probe *p = (void *)buf;
	size_t sl = strlen(sym);

	assert_true(asc_probe_rec_size(3, sl) <= sizeof(buf));
	hdr(&p->hdr, ASC_REC_PROBE, asc_probe_rec_size(3, sl), 0, id, 0);
	p->layer = layer;
	p->kind = kind;
	p->lib_len = 3;
	p->sym_len = sl;
	memcpy(p->strings, "lib", 3);
	memcpy(p->strings + 4, sym, sl);
	put(p);
}

void clock_rec(uint32_t which, uint64_t mono, uint64_t realtime)
{
	struct asc_clock k = { 0 };

	hdr(&k.hdr, ASC_REC_CLOCK, sizeof(k), 0, 0, mono);
	k.realtime_ns = realtime;
	k.which = which;
	put(&k);
}

void devclock(uint64_t mono, uint64_t counter, uint64_t freq_hz)
{
	struct asc_devclock dc = { 0 };

	hdr(&dc.hdr, ASC_REC_DEVCLOCK, sizeof(dc), 0, 0, mono);
	dc.counter = counter;
	dc.freq_hz = freq_hz;
	put(&dc);
}

void process_rec(int32_t rank, int32_t device)
{
	struct asc_process pr = { 0 };

	hdr(&pr.hdr, ASC_REC_PROCESS, sizeof(pr), CAP_TGID, 0, 0);
	pr.rank = rank;
	pr.device = device;
	put(&pr);
}

void config(const char *text)
{
	_Alignas(8) char buf[4400] = { 0 };
	struct asc_text *t = (void *)buf;
	size_t n = strlen(text);

	assert_true(asc_text_rec_size(n) <= sizeof(buf));
	hdr(&t->hdr, ASC_REC_CONFIG, asc_text_rec_size(n), 0, 0, 0);
	memcpy(t->text, text, n);
	put(t);
}

void enter_argn(uint32_t tid, uint32_t probe_id, uint64_t ts, int i, uint64_t v)
{
	struct asc_enter e = { 0 };

	hdr(&e.hdr, ASC_REC_ENTER, sizeof(e), tid, probe_id, ts);
	e.args[i] = v;
	put(&e);
}

void enter(uint32_t tid, uint32_t probe_id, uint64_t ts)
{
	enter_argn(tid, probe_id, ts, 0, 0);
}

void enter_arg0(uint32_t tid, uint32_t probe_id, uint64_t ts, uint64_t arg0)
{
	enter_argn(tid, probe_id, ts, 0, arg0);
}

void leave_ret(uint32_t tid, uint32_t probe_id, uint64_t ts, uint64_t ret)
{
	struct asc_exit e = { 0 };

	hdr(&e.hdr, ASC_REC_EXIT, sizeof(e), tid, probe_id, ts);
	e.ret = ret;
	put(&e);
}

void leave(uint32_t tid, uint32_t probe_id, uint64_t ts)
{
	leave_ret(tid, probe_id, ts, 0);
}

void queue(uint32_t tid, uint32_t probe_id, uint64_t ts, uint64_t corr, uint32_t side)
{
	struct asc_queue q = { 0 };

	hdr(&q.hdr, ASC_REC_QUEUE, sizeof(q), tid, probe_id, ts);
	q.correlation_id = corr;
	q.side = side;
	q.param_type = 8;
	put(&q);
}
