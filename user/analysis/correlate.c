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
 *
 * This file holds the pass and the accessors; corr_build.h lists the files
 * of the stage and the state they share.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "ascbpf_events.h"
#include "ascend/stars.h"
#include "capture/capture.h"
#include "analysis/correlate.h"
#include "analysis/corr_build.h"
#include "lib/log.h"
#include "capture/records.h"
#include "schedule.h"

int64_t corr_dev_to_mono(const struct asc_corr *c, uint64_t cnt)
{
	const struct asc_corr_info *in = &c->info;
	__int128 d;

	if (!in->have_devclock || !in->devclock_freq_hz)
		return (int64_t)cnt;
	d = (__int128)((int64_t)(cnt - in->devclock_counter)) * 1000000000 /
	    (__int128)in->devclock_freq_hz;
	/* counters come from the file: saturate rather than overflow (fuzz_report finding) */
	if (d > INT64_MAX)
		d = INT64_MAX;
	else if (d < INT64_MIN)
		d = INT64_MIN;
	return asc_ns_add(in->devclock_mono_ns, (int64_t)d);
}

int64_t asc_corr_wall_ns(const struct asc_corr *c, uint64_t mono_ns)
{
	const struct priv *p = c->priv;

	return asc_ns_add((int64_t)mono_ns, p->wall_off);
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
	/* a lookup table: one task type a line */
	// clang-format off
	switch (t) {
	case RT_STARS_SQE_TYPE_FFTS: return "AI_CORE";
	case RT_STARS_SQE_TYPE_AICPU: return "AI_CPU";
	case RT_STARS_SQE_TYPE_KS_AIV: return "AI_VECTOR_CORE";
	case RT_STARS_SQE_TYPE_PLACE_HOLDER: return "PLACE_HOLDER_SQE";
	case RT_STARS_SQE_TYPE_EVENT_RECORD: return "EVENT_RECORD_SQE";
	case RT_STARS_SQE_TYPE_EVENT_WAIT: return "EVENT_WAIT_SQE";
	case RT_STARS_SQE_TYPE_WRITE_VALUE: return "WRITE_VALUE_SQE";
	case RT_STARS_SQE_TYPE_SDMA: return "SDMA_SQE";
	default: return "UNKNOWN";
	}
	// clang-format on
}

/* Name of a task that no API names, as msprof names such tasks. */
const char *corr_task_default_name(uint32_t t)
{
	/* a lookup table: one task type a line */
	// clang-format off
	switch (t) {
	case RT_STARS_SQE_TYPE_PLACE_HOLDER: return "PLACE_HOLDER";
	case RT_STARS_SQE_TYPE_EVENT_RECORD: return "EVENT_RECORD";
	case RT_STARS_SQE_TYPE_EVENT_WAIT: return "EVENT_WAIT";
	case RT_STARS_SQE_TYPE_WRITE_VALUE: return "WRITE_VALUE";
	case RT_STARS_SQE_TYPE_SDMA: return "MEMCPY_ASYNC";
	default: return asc_corr_task_type_name(t);
	}
	// clang-format on
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

/* A kernel function handle -> name; a later record for the same handle wins. */
static int on_funcname(struct priv *p, const struct asc_funcname *f)
{
	size_t n = strnlen(f->name, f->len);

	if (!f->handle || !n)
		return 0;
	return asc_u64map_put(&p->funcnames, f->handle, strtab_add(&p->strs, f->name, n));
}

static int on_pyframe(struct priv *p, const struct asc_pyframe *pf)
{
	return asc_u64map_put(&p->pyframes, pyframe_key(pf->code, pf->lasti),
			      strtab_cstr(&p->strs, pf->text));
}

static int on_step(struct asc_corr *c, struct priv *p, const struct asc_step *s)
{
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

static int on_devtask(struct priv *p, const struct asc_devtask *d)
{
	struct devt *dt;

	if (PUSH(p->devts, p->nr_devts, p->devts_cap, dt))
		return -ENOMEM;
	dt->start_cnt = d->start_cnt;
	dt->end_cnt = d->end_cnt;
	dt->dev = d->dev_id;
	dt->stream = d->stream_id;
	dt->task = d->task_id;
	dt->type = d->task_type;
	dt->wrap = corr_count_wrap(p, &p->dev_wraps, d->dev_id, d->stream_id, d->task_id);
	return 0;
}

static int on_clock(struct asc_corr *c, struct priv *p, const struct asc_clock *k)
{
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

static int on_devclock(struct asc_corr *c, const struct asc_devclock *d)
{
	if (!c->info.have_devclock) {
		c->info.have_devclock = 1;
		c->info.devclock_counter = d->counter;
		c->info.devclock_freq_hz = d->freq_hz;
		c->info.devclock_mono_ns = d->hdr.ts_ns;
	}
	return 0;
}

static int on_process(struct asc_corr *c, const struct asc_process *pr)
{
	c->info.pid = pr->hdr.tgid;
	c->info.rank = pr->rank;
	c->info.device = pr->device;
	return 0;
}

static int on_thread(struct asc_corr *c, struct priv *p, const struct asc_thread *th)
{
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

static int on_stats(struct asc_corr *c, const struct asc_stats *s)
{
	c->info.bpf_events = s->events;
	c->info.bpf_drops = s->drops;
	c->info.devtask_drops = s->devtask_drops;
	c->info.ended = 1;
	return 0;
}

static int on_config(struct asc_corr *c, struct priv *p, const struct asc_text *tx)
{
	char **slot;

	if (PUSH(c->config, c->nr_config, p->cfg_cap, slot))
		return -ENOMEM;
	*slot = strdup(tx->text);
	return *slot ? 0 : -ENOMEM;
}

static int on_symbol(struct priv *p, const struct asc_text *tx)
{
	return asc_u64map_put(&p->symbols, tx->value, strtab_cstr(&p->strs, tx->text));
}

static int on_aten_name(struct priv *p, const struct asc_text *tx)
{
	p->have_aten_names = 1;
	if (!tx->text[0])
		return 0; /* no schema named it: the symbol heuristic stands */
	return asc_u64map_put(&p->aten_names, tx->hdr.probe_id, strtab_cstr(&p->strs, tx->text));
}

static int on_node_class(struct priv *p, const struct asc_node_class *nc)
{
	struct node_class *k;

	if (!nc->size || !nc->name[0])
		return 0;
	if (PUSH(p->classes, p->nr_classes, p->classes_cap, k))
		return -ENOMEM;
	k->vaddr = nc->vaddr;
	k->size = nc->size;
	k->name = strtab_cstr(&p->strs, nc->name);
	p->classes_sorted = 0;
	return 0;
}

static int on_lost(struct asc_corr *c, const struct asc_text *tx)
{
	/* tasks that ran with the device channel closed: not lost records */
	if (tx->hdr.probe_id == ASC_LOST_BEFORE_DEVCHANNEL)
		c->info.before_devchannel += tx->value;
	else
		c->info.lost += tx->value;
	return 0;
}

/* One record, checked by asc_rec_check(), to its handler; 0 or -ENOMEM. */
static int on_record(struct asc_corr *c, struct priv *p, const void *rec, size_t size)
{
	const struct asc_hdr *h = rec;
	int ret;

	ret = asc_rec_check(rec, size, NULL, 0);
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
	/* the dispatch table: one record type a line */
	// clang-format off
	switch (h->type) {
	case ASC_REC_ENTER:	return corr_on_enter(c, p, h);
	case ASC_REC_EXIT:	corr_on_exit_rec(c, p, rec); return 0;
	case ASC_REC_OPNAME:	corr_on_opname(c, p, rec); return 0;
	case ASC_REC_SEQNR:	return corr_on_seqnr(c, p, rec);
	case ASC_REC_QUEUE:	return corr_on_queue(c, p, rec);
	case ASC_REC_SQE:	return corr_on_sqe(c, p, rec);
	case ASC_REC_LAUNCH:	return corr_on_launch(c, p, rec);
	case ASC_REC_MEM:	return corr_on_mem(c, p, rec);
	case ASC_REC_STACK:	return corr_on_stack(p, rec);
	case ASC_REC_TENSOR:	return corr_on_tensor(c, p, rec);
	case ASC_REC_PYSTACK:	return corr_on_pystack(p, rec);
	case ASC_REC_PYFRAME:	return on_pyframe(p, rec);
	case ASC_REC_STEP:	return on_step(c, p, rec);
	case ASC_REC_DEVTASK:	return on_devtask(p, rec);
	case ASC_REC_PROBE:	return corr_add_probe(c, p, rec);
	case ASC_REC_CLOCK:	return on_clock(c, p, rec);
	case ASC_REC_DEVCLOCK:	return on_devclock(c, rec);
	case ASC_REC_PROCESS:	return on_process(c, rec);
	case ASC_REC_THREAD:	return on_thread(c, p, rec);
	case ASC_REC_STATS:	return on_stats(c, rec);
	case ASC_REC_CONFIG:	return on_config(c, p, rec);
	case ASC_REC_SYMBOL:	return on_symbol(p, rec);
	case ASC_REC_LOST:	return on_lost(c, rec);
	case ASC_REC_FUNCNAME:	return on_funcname(p, rec);
	case ASC_REC_ATEN_NAME:	return on_aten_name(p, rec);
	case ASC_REC_NODE_CLASS:	return on_node_class(p, rec);
	case ASC_REC_HCCL_OP:
	case ASC_REC_HCCL_COMM:	c->info.hccl_records++; return 0;	/* comm_build.c's */
	default:		return 0;
	}
	// clang-format on
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
	asc_u64map_free(&p->tid_index);
	asc_u64map_free(&p->queue_index);
	asc_u64map_free(&p->sub_index);
	asc_u64map_free(&p->sub_wraps);
	asc_u64map_free(&p->dev_wraps);
	asc_u64map_free(&p->symbols);
	asc_u64map_free(&p->funcnames);
	asc_u64map_free(&p->mark_streams);
	asc_u64map_free(&p->pyframes);
	asc_u64map_free(&p->aten_names);
	free(p->classes);
	p->classes = NULL;
	p->nr_classes = 0;
	asc_idxmap_free(&p->strs.index);
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

/* Frees all of p: the build-only state (priv_shrink()), the string table, the probes. */
static void priv_free(struct priv *p)
{
	if (!p)
		return;
	priv_shrink(p);
	free(p->strs.arena);
	free(p->strs.offs);
	free(p->probes);
	free(p);
}

struct asc_corr *asc_corr_build(struct asc_capture_reader *r)
{
	return asc_corr_build_shifted(r, 0);
}

struct asc_corr *asc_corr_build_shifted(struct asc_capture_reader *r, int64_t shift_ns)
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
	/*
	 * A capture of an ascbpf that named ops at convert time from the traced
	 * host's libtorch_cpu (its PyTorch discovery ran, no ATEN_NAME record):
	 * converted with the names its records hold.
	 */
	if (p->have_aten_probes && !p->have_aten_names &&
	    asc_corr_config(c, "pytorch_autograd_lib"))
		asc_warn("correlate: the capture holds no op names (an older ascbpf wrote it): "
			 "aten ops are named from their symbols, backward nodes %s\n",
			 ASC_NODE_UNKNOWN);
	asc_capture_info(r, &ci);
	c->info.damaged = ci.damaged;
	c->info.bytes_unread = ci.bytes_unread;
	memcpy(c->info.damage, ci.damage, sizeof(c->info.damage));
	if (!c->info.have_clock)
		p->wall_off = 0;
	/* another host's clock (comm_align.h): every wall time moves, the clock pairs too */
	p->wall_off += shift_ns;
	if (c->info.start_wall_ns)
		c->info.start_wall_ns = asc_ns_add(c->info.start_wall_ns, shift_ns);
	if (c->info.end_wall_ns)
		c->info.end_wall_ns = asc_ns_add(c->info.end_wall_ns, shift_ns);
	ret = corr_finish(c, p);
	if (ret) {
		asc_corr_free(c);
		errno = -ret;
		return NULL;
	}
	c->info.last_ts_ns = p->max_mono ? asc_ns_add(p->max_mono, p->wall_off) : 0;
	if (!c->info.end_wall_ns)
		c->info.end_wall_ns = asc_ns_add(p->max_mono, p->wall_off);
	if (!c->info.start_wall_ns)
		c->info.start_wall_ns = asc_ns_add(p->min_mono, p->wall_off);
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
