// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sched.c - one card: its resources, and the task scheduler that runs the
 * SQEs of every SQ in device time.
 *
 * Time model.  Device time is host CLOCK_MONOTONIC.  When a task reaches the
 * head of its SQ it is given start = max(when the card took it, end of the
 * previous task of the SQ, when its engine is free, [for an event wait] when
 * the awaited record finished) and end = start + cost-model duration.  The
 * task completes (SQ head advances, profiling records and the journal line
 * are written) once the host clock has passed its end, so a synchronize
 * really waits for the device.  Because start/end are computed from those
 * rules and not from when the scheduler thread happens to wake up, the
 * recorded device timeline does not depend on host scheduling noise.
 * Engines: one compute engine (AI core, vector, AI CPU kernels and memsets
 * run one at a time) and one copy engine (SDMA), so copies overlap compute;
 * event record/wait take the launch latency and use no engine.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "modeld.h"
#include "npu_journal.h"

#define MD_FABRIC_POLL_NS 20000ull /* 20 us: well under a RoCE hop's latency */

uint64_t md_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t md_counter_at(const struct md_card *c, uint64_t t_ns)
{
	unsigned __int128 d;

	if (t_ns < c->cnt_base_ns)
		return c->cnt_offset;
	d = (unsigned __int128)(t_ns - c->cnt_base_ns) * c->cnt_freq_hz / 1000000000u;
	return c->cnt_offset + (uint64_t)d;
}

static uint32_t id_max[DRV_INVALID_ID] = {
	[DRV_STREAM_ID] = 1024,
	[DRV_EVENT_ID] = MD_MAX_EVENTS,
	[DRV_MODEL_ID] = 1024,
	[DRV_NOTIFY_ID] = 1024,
	[DRV_CMO_ID] = 64,
	[DRV_CNT_NOTIFY_ID] = 1024,
	[DRV_SQ_ID] = NPU_UIO_MAX_SQ,
	[DRV_CQ_ID] = NPU_UIO_MAX_SQ,
};

int md_card_init(struct md_card *c, uint32_t index, const struct md_config *cfg, int with_uio)
{
	int i, err;

	memset(c, 0, sizeof(*c));
	c->uio_fd = -1;
	pthread_mutex_init(&c->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cq_cond, &ca);
	pthread_cond_init(&c->prof_cond, &ca);
	pthread_condattr_destroy(&ca);
	c->index = index;
	c->cfg = cfg->card;
	c->task_timeout_ns = cfg->task_timeout_ns;
	if (!c->task_timeout_ns)
		c->task_timeout_ns = MD_TASK_TIMEOUT_DEFAULT_NS;
	c->cnt_freq_hz = cfg->cnt_freq_hz;
	/* A different offset per card, so a converter that mixes cards up is caught. */
	c->cnt_offset = cfg->cnt_offset + (uint64_t)index * 0x10000000ull;
	c->cnt_base_ns = md_now_ns();
	for (i = 0; i < DRV_INVALID_ID; i++) {
		err = md_ids_init(&c->ids[i], id_max[i]);
		if (err)
			return err;
	}
	md_hbm_init(&c->hbm, c->cfg.hbm_bytes);
	c->events = calloc(MD_MAX_EVENTS, sizeof(*c->events));
	if (!c->events)
		return -ENOMEM;
	if (with_uio) {
		struct npu_uio_card *hdr;

		snprintf(c->uio_path, sizeof(c->uio_path), "/dev/shm/npu_model.%d.dev%u",
			 (int)getpid(), index);
		c->uio_fd = open(c->uio_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (c->uio_fd < 0)
			return -errno;
		fchmod(c->uio_fd, 0666);
		if (ftruncate(c->uio_fd, (off_t)NPU_UIO_FILE_BYTES))
			return -errno;
		c->uio = mmap(NULL, NPU_UIO_FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
			      c->uio_fd, 0);
		if (c->uio == MAP_FAILED) {
			c->uio = NULL;
			return -errno;
		}
		hdr = c->uio;
		hdr->max_sq = NPU_UIO_MAX_SQ;
		hdr->sq_depth = NPU_UIO_SQ_DEPTH;
		hdr->version = NPU_UIO_VERSION;
		atomic_store((_Atomic uint32_t *)&hdr->magic, NPU_UIO_MAGIC);
	}
	return 0;
}

void md_card_fini(struct md_card *c)
{
	int i;

	for (i = 0; i < NPU_UIO_MAX_SQ; i++) {
		if (c->sq[i])
			md_sq_destroy(c, c->sq[i]);
		free(c->cq[i]);
		c->cq[i] = NULL;
	}
	for (i = 0; i < MD_MAX_PROF_SESSIONS; i++)
		free(c->prof[i].ring);
	for (i = 0; i < DRV_INVALID_ID; i++)
		md_ids_fini(&c->ids[i]);
	md_hbm_fini(&c->hbm);
	free(c->events);
	c->events = NULL;
	if (c->uio)
		munmap(c->uio, NPU_UIO_FILE_BYTES);
	c->uio = NULL;
	if (c->uio_fd >= 0) {
		close(c->uio_fd);
		unlink(c->uio_path);
	}
	c->uio_fd = -1;
}

/* ---- SQs ---------------------------------------------------------------------------- */

static enum md_engine engine_of(const struct npu_sqe *s);

struct md_sq *md_sq_create(struct md_card *c, uint32_t id, uint32_t cq_id, uint32_t stream_id,
			   const void *owner, pid_t pid)
{
	struct md_sq *sq;

	if (id >= NPU_UIO_MAX_SQ || c->sq[id])
		return NULL;
	sq = calloc(1, sizeof(*sq));
	if (!sq)
		return NULL;
	sq->q = calloc(NPU_UIO_SQ_DEPTH, sizeof(*sq->q));
	if (!sq->q) {
		free(sq);
		return NULL;
	}
	sq->id = id;
	sq->cq_id = cq_id;
	sq->stream_id = stream_id;
	sq->owner = owner;
	sq->pid = pid;
	if (c->uio) {
		struct npu_uio_sq *u = npu_uio_sq_at(c->uio, id);

		/* The ring restarts at 0 for the new owner; the generation tells it apart. */
		atomic_store((_Atomic uint32_t *)&u->head, 0);
		atomic_store((_Atomic uint32_t *)&u->tail, 0);
		atomic_fetch_add((_Atomic uint32_t *)&u->generation, 1);
	}
	c->sq[id] = sq;
	return sq;
}

void md_sq_destroy(struct md_card *c, struct md_sq *sq)
{
	if (sq->head != sq->ingested) {
		struct md_task *t = &sq->q[sq->head % NPU_UIO_SQ_DEPTH];
		enum md_engine e = engine_of(&t->sqe);
		uint64_t now = md_now_ns();

		/*
		 * The running task is aborted now: give its engine back if nothing was
		 * scheduled behind it (tasks already placed after it keep their times).
		 */
		if (t->scheduled && e != MD_ENGINE_NONE && c->engine_free[e] == t->end_ns &&
		    t->end_ns > now)
			c->engine_free[e] = t->start_ns > now ? t->start_ns : now;
	}
	c->tasks_dropped += sq->ingested - sq->head;
	c->sq[sq->id] = NULL;
	free(sq->q);
	free(sq);
}

static enum md_engine engine_of(const struct npu_sqe *s)
{
	switch (s->kind) {
	case NPU_SQE_KIND_KERNEL:
	case NPU_SQE_KIND_MEMSET:
		return MD_ENGINE_COMPUTE;
	case NPU_SQE_KIND_MEMCPY:
	case NPU_SQE_KIND_LINK_COPY:
		return MD_ENGINE_COPY;
	default:
		return MD_ENGINE_NONE;
	}
}

/*
 * HCCL tasks (link.c): a record takes the link's latency to the notify's
 * card; a wait takes the launch latency once its record is done (it is
 * placed in md_sched_run); a copy between cards takes the link's time.
 */
static void ingest_hccl(struct md_card *c, struct md_task *t)
{
	const struct npu_sqe *s = &t->sqe;
	int peer;

	switch (s->kind) {
	case NPU_SQE_KIND_NOTIFY_RECORD:
		if (!md_notify_valid(s->event_id)) {
			t->error = MD_ERR_INVALID_SQE;
			return;
		}
		t->dur_ns = md_link_ns(md_gcard(c), s->event_id >> 16, 0);
		return;
	case NPU_SQE_KIND_NOTIFY_WAIT:
		/* a wait names its own card as the runtime numbers it: the job's number */
		if ((s->event_id >> 16) != c->index) {
			t->error = MD_ERR_INVALID_SQE;
			return;
		}
		t->sqe.event_id = md_gcard(c) << 16 | (s->event_id & 0xffff);
		if (!md_notify_valid(s->event_id)) {
			t->error = MD_ERR_INVALID_SQE;
			return;
		}
		t->ev_target = md_notify_add_wait(s->event_id);
		t->dur_ns = c->cfg.launch_latency_ns;
		return;
	default: /* LINK_COPY */
		peer = md_card_of_va(s->u.copy.src);
		if (peer < 0 || (uint32_t)peer == md_gcard(c))
			peer = md_card_of_va(s->u.copy.dst);
		if (peer < 0) {
			t->error = MD_ERR_INVALID_SQE;
			return;
		}
		t->dur_ns = md_link_ns(md_gcard(c), (uint32_t)peer, s->bytes);
		return;
	}
}

/* Takes one SQE into the SQ's queue; caller checked there is room. */
static void ingest_one(struct md_card *c, struct md_sq *sq, const struct npu_sqe *s, uint64_t now)
{
	struct md_task *t = &sq->q[sq->ingested % NPU_UIO_SQ_DEPTH];
	struct md_event *ev = NULL;

	memset(t, 0, sizeof(*t));
	t->sqe = *s;
	t->submit_ns = now;
	t->wrap = md_wrap_next(&sq->wrap, s->header.taskId);
	switch (s->kind) {
	case NPU_SQE_KIND_KERNEL:
		if (s->task_type > NPU_TASK_AI_CPU)
			t->error = MD_ERR_INVALID_SQE;
		t->dur_ns = npu_cost_duration_ns(&c->cfg, s->flops, s->bytes, s->task_type);
		if (s->slow > 1)
			t->dur_ns *= s->slow;
		break;
	case NPU_SQE_KIND_MEMCPY:
		if (s->copy_kind > NPU_COPY_D2D)
			t->error = MD_ERR_INVALID_SQE;
		t->dur_ns = npu_cost_copy_ns(&c->cfg, s->bytes, s->copy_kind);
		break;
	case NPU_SQE_KIND_MEMSET:
		t->dur_ns = npu_cost_duration_ns(&c->cfg, 0, s->bytes, NPU_TASK_MEMSET);
		break;
	case NPU_SQE_KIND_EVENT_RECORD:
	case NPU_SQE_KIND_EVENT_WAIT:
		if (s->event_id >= MD_MAX_EVENTS) {
			t->error = MD_ERR_INVALID_SQE;
			break;
		}
		ev = &c->events[s->event_id];
		if (s->kind == NPU_SQE_KIND_EVENT_RECORD)
			t->ev_target = ++ev->submitted;
		else
			t->ev_target = ev->submitted;
		t->dur_ns = npu_cost_duration_ns(&c->cfg, 0, 0,
						 s->kind == NPU_SQE_KIND_EVENT_RECORD ?
							 NPU_TASK_EVENT_RECORD :
							 NPU_TASK_EVENT_WAIT);
		break;
	case NPU_SQE_KIND_NOTIFY_RECORD:
	case NPU_SQE_KIND_NOTIFY_WAIT:
	case NPU_SQE_KIND_LINK_COPY:
		ingest_hccl(c, t);
		break;
	default:
		t->error = MD_ERR_INVALID_SQE;
		break;
	}
	if (t->error)
		t->dur_ns = c->cfg.launch_latency_ns;
	/* As a real card's task timeout: a runaway task cannot hold the engine forever. */
	if (t->dur_ns > c->task_timeout_ns) {
		t->dur_ns = c->task_timeout_ns;
		t->error = MD_ERR_TIMEOUT;
	}
	sq->ingested++;
}

int md_sched_submit(struct md_card *c, struct md_sq *sq, const struct npu_sqe *sqes, uint32_t n,
		    uint64_t now)
{
	uint32_t i;

	if (sq->broken)
		return -EIO;
	if (n == 0 || n > NPU_UIO_SQ_DEPTH - 1 - (sq->ingested - sq->head))
		return -EBUSY;
	for (i = 0; i < n; i++)
		ingest_one(c, sq, &sqes[i], now);
	if (c->uio) {
		/* Keep the shared ring's tail in step so the HAL's head/tail view agrees. */
		struct npu_uio_sq *u = npu_uio_sq_at(c->uio, sq->id);

		atomic_store_explicit((_Atomic uint32_t *)&u->tail, sq->ingested,
				      memory_order_release);
	}
	return 0;
}

/*
 * Takes newly published SQEs from the shared rings, in the card-wide
 * submission order (seq stamps), so an event wait submitted after a record
 * on another SQ sees that record.  A ring whose tail is impossible (more
 * than the depth ahead of head) is marked broken and ignored from then on.
 */
void md_sched_ingest_uio(struct md_card *c, uint64_t now)
{
	struct npu_uio_card *hdr = c->uio;
	struct {
		struct md_sq *sq;
		struct npu_uio_sq *u;
		uint32_t tail;
	} cand[NPU_UIO_MAX_SQ];
	uint32_t ncand = 0, w, i;

	if (!hdr)
		return;
	for (w = 0; w < NPU_UIO_MAX_SQ / 64; w++) {
		uint64_t bits = atomic_exchange((_Atomic uint64_t *)&hdr->pending[w], 0);

		while (bits) {
			uint32_t id = w * 64 + (uint32_t)__builtin_ctzll(bits);
			struct md_sq *sq = c->sq[id];
			struct npu_uio_sq *u;
			uint32_t tail;

			bits &= bits - 1;
			if (!sq || sq->broken)
				continue;
			u = npu_uio_sq_at(c->uio, id);
			tail = atomic_load_explicit((_Atomic uint32_t *)&u->tail,
						    memory_order_acquire);
			if (tail - sq->head > NPU_UIO_SQ_DEPTH - 1 ||
			    tail - sq->ingested > NPU_UIO_SQ_DEPTH - 1) {
				sq->broken = 1;
				continue;
			}
			if (tail != sq->ingested)
				cand[ncand++] = (typeof(cand[0])){ sq, u, tail };
		}
	}
	/* Merge by seq: few SQs are busy at once, so a linear pick is cheap. */
	for (;;) {
		uint64_t best_seq = UINT64_MAX;
		int best = -1;

		for (i = 0; i < ncand; i++) {
			struct md_sq *sq = cand[i].sq;
			uint64_t seq;

			if (sq->ingested == cand[i].tail)
				continue;
			seq = cand[i].u->seq[sq->ingested % NPU_UIO_SQ_DEPTH];
			if (best < 0 || seq < best_seq) {
				best = (int)i;
				best_seq = seq;
			}
		}
		if (best < 0)
			break;
		{
			struct md_sq *sq = cand[best].sq;
			struct npu_sqe s;

			memcpy(&s, cand[best].u->sqe[sq->ingested % NPU_UIO_SQ_DEPTH], sizeof(s));
			ingest_one(c, sq, &s, now);
		}
	}
}

static void post_cqe(struct md_card *c, struct md_sq *sq, const struct md_task *t)
{
	struct md_cq *cq = sq->cq_id < NPU_UIO_MAX_SQ ? c->cq[sq->cq_id] : NULL;
	struct trs_logic_cqe *e;

	if (!cq)
		return;
	if (cq->tail - cq->head >= MD_CQ_DEPTH) {
		cq->lost++;
		return;
	}
	e = &cq->cqe[cq->tail % MD_CQ_DEPTH];
	memset(e, 0, sizeof(*e));
	e->stream_id = t->sqe.header.rtStreamId;
	e->task_id = t->sqe.header.taskId;
	e->error_code = t->error; /* MD_ERR_* */
	e->error_type = 1;
	e->error_bit = 1;
	e->sqe_type = t->sqe.header.type;
	e->sq_id = (uint16_t)sq->id;
	e->sq_head = (uint16_t)((sq->head + 1) % NPU_UIO_SQ_DEPTH);
	e->timestamp = md_counter_at(c, t->end_ns);
	e->enque_timestamp = md_counter_at(c, t->submit_ns);
	cq->tail++;
	pthread_cond_broadcast(&c->cq_cond);
}

static const char *kernel_name_of(const struct md_task *t, char *buf, size_t len)
{
	const struct npu_sqe *s = &t->sqe;
	size_t i;

	switch (s->kind) {
	case NPU_SQE_KIND_KERNEL:
		break;
	case NPU_SQE_KIND_MEMCPY:
		return npu_task_type_name(NPU_TASK_MEMCPY);
	case NPU_SQE_KIND_MEMSET:
		return npu_task_type_name(NPU_TASK_MEMSET);
	case NPU_SQE_KIND_EVENT_RECORD:
		return npu_task_type_name(NPU_TASK_EVENT_RECORD);
	case NPU_SQE_KIND_EVENT_WAIT:
		return npu_task_type_name(NPU_TASK_EVENT_WAIT);
	case NPU_SQE_KIND_NOTIFY_RECORD:
		return "Notify_Record";
	case NPU_SQE_KIND_NOTIFY_WAIT:
		return "Notify_Wait";
	case NPU_SQE_KIND_LINK_COPY:
		return s->flags & NPU_SQE_F_REDUCE ? "Reduce_Inline" : "Memcpy";
	default:
		return "INVALID";
	}
	/* The name comes from a client: keep it printable and TAB-free. */
	for (i = 0; i + 1 < len && i < NPU_SQE_KERNEL_NAME_LEN && s->u.kernel_name[i]; i++) {
		char ch = s->u.kernel_name[i];

		buf[i] = (ch > ' ' && ch < 127) ? ch : '_';
	}
	buf[i] = '\0';
	return i ? buf : "-";
}

/* The HCCL task's own line: which link, to which card (JOURNAL.md "HCCL"). */
static void journal_hccl(const struct md_card *c, const struct md_task *t, char *name)
{
	const struct npu_sqe *s = &t->sqe;
	int peer = -1;

	if (s->kind == NPU_SQE_KIND_LINK_COPY) {
		peer = md_card_of_va(s->u.copy.src);
		if (peer < 0 || (uint32_t)peer == md_gcard(c))
			peer = md_card_of_va(s->u.copy.dst);
	} else if (s->kind == NPU_SQE_KIND_NOTIFY_RECORD && md_notify_valid(s->event_id)) {
		peer = (int)(s->event_id >> 16); /* a wait's notify is its own card's */
	}
	npu_journal_write("hccl_task",
			  "dev=%u\tstream=%u\ttask=%u\tt0=%llu\tt1=%llu\t"
			  "ctask=%s\tlink=%s\tpeer_dev=%d\tnotify=%u\tbytes=%llu\tstatus=%s",
			  c->index, s->header.rtStreamId, s->header.taskId,
			  (unsigned long long)t->start_ns, (unsigned long long)t->end_ns,
			  kernel_name_of(t, name, NPU_SQE_KERNEL_NAME_LEN + 1),
			  peer < 0 ? "-" : md_link_name(md_link_type(md_gcard(c), (uint32_t)peer)),
			  peer, s->kind == NPU_SQE_KIND_LINK_COPY ? 0 : s->event_id,
			  (unsigned long long)(s->kind == NPU_SQE_KIND_LINK_COPY ? s->bytes : 0),
			  t->error ? "failed" : "ok");
}

static void complete_task(struct md_card *c, struct md_sq *sq, struct md_task *t)
{
	uint64_t c0 = md_counter_at(c, t->start_ns), c1 = md_counter_at(c, t->end_ns);
	int prof = 0, prof_drop = 0;

	sq->last_end_ns = t->end_ns;
	if (t->error != MD_ERR_INVALID_SQE && t->sqe.kind == NPU_SQE_KIND_EVENT_RECORD) {
		struct md_event *ev = &c->events[t->sqe.event_id];

		if (t->ev_target > ev->completed) {
			ev->completed = t->ev_target;
			ev->completed_ns = t->end_ns;
		}
	}
	if (!t->error && t->sqe.kind == NPU_SQE_KIND_NOTIFY_RECORD)
		md_notify_record(t->sqe.event_id, t->end_ns);
	if (t->error) {
		c->tasks_failed++;
		post_cqe(c, sq, t);
	}
	if (c->prof_active)
		prof = md_prof_emit_task_counted(c, t, &prof_drop);
	if (npu_journal_on) {
		char name[NPU_SQE_KERNEL_NAME_LEN + 1];

		npu_journal_write("exec",
				  "pid=%d\tdev=%u\tstream=%u\ttask=%u\twrap=%u\tt0=%llu\t"
				  "t1=%llu\tc0=%llu\tc1=%llu\tkernel=%s\tsq=%u\tflip=%u\t"
				  "sqe_type=%u\tblock_dim=%u\tstatus=%s\tprof=%d\tprof_drop=%d",
				  (int)sq->pid, c->index, t->sqe.header.rtStreamId,
				  t->sqe.header.taskId, t->wrap, (unsigned long long)t->start_ns,
				  (unsigned long long)t->end_ns, (unsigned long long)c0,
				  (unsigned long long)c1, kernel_name_of(t, name, sizeof(name)),
				  sq->id, t->sqe.flip, t->sqe.header.type, t->sqe.header.blockDim,
				  !t->error		     ? "ok" :
				  t->error == MD_ERR_TIMEOUT ? "timeout" :
							       "invalid",
				  prof, prof_drop);
		if (t->sqe.kind >= NPU_SQE_KIND_NOTIFY_RECORD)
			journal_hccl(c, t, name);
	}
	sq->head++;
	sq->done++;
	c->tasks_done++;
	if (c->uio) {
		struct npu_uio_sq *u = npu_uio_sq_at(c->uio, sq->id);

		atomic_store_explicit((_Atomic uint32_t *)&u->head, sq->head, memory_order_release);
	}
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/*
 * A Notify Wait that the stream reached at `ready`: blocked (1) until its
 * record is done; then it lasts until that record's end (the rank waits
 * for its peer).  Blocked past the task timeout it fails there, as the
 * card's notify-wait timeout (a peer that died or hangs).
 */
static int notify_wait_blocked(struct md_card *c, struct md_task *t, uint64_t ready, uint64_t now,
			       uint64_t *deadline)
{
	uint64_t when = 0;

	if (!md_notify_done(t->sqe.event_id, t->ev_target, &when)) {
		if (now < ready + c->task_timeout_ns) {
			if (ready + c->task_timeout_ns < *deadline)
				*deadline = ready + c->task_timeout_ns;
			/* another daemon's record cannot kick this card: look again soon */
			if (md_fabric_on() && now + MD_FABRIC_POLL_NS < *deadline)
				*deadline = now + MD_FABRIC_POLL_NS;
			return 1;
		}
		t->error = MD_ERR_TIMEOUT;
		t->dur_ns = c->task_timeout_ns;
		return 0;
	}
	if (when > ready + t->dur_ns)
		t->dur_ns = when - ready;
	return 0;
}

uint32_t md_sched_run(struct md_card *c, uint64_t now, uint64_t *deadline)
{
	uint32_t done = 0, i;
	int progress = 1;

	*deadline = UINT64_MAX;
	while (progress) {
		progress = 0;
		*deadline = UINT64_MAX;
		for (i = 0; i < NPU_UIO_MAX_SQ; i++) {
			struct md_sq *sq = c->sq[i];

			while (sq && sq->head != sq->ingested) {
				struct md_task *t = &sq->q[sq->head % NPU_UIO_SQ_DEPTH];

				if (!t->scheduled) {
					enum md_engine e = engine_of(&t->sqe);
					uint64_t start = max_u64(t->submit_ns, sq->last_end_ns);

					if (t->error != MD_ERR_INVALID_SQE &&
					    t->sqe.kind == NPU_SQE_KIND_EVENT_WAIT) {
						struct md_event *ev = &c->events[t->sqe.event_id];

						if (ev->completed < t->ev_target)
							break; /* blocked until the record runs */
						if (t->ev_target)
							start = max_u64(start, ev->completed_ns);
					}
					if (!t->error && t->sqe.kind == NPU_SQE_KIND_NOTIFY_WAIT &&
					    notify_wait_blocked(c, t, start, now, deadline))
						break;
					if (t->error != MD_ERR_INVALID_SQE && e != MD_ENGINE_NONE) {
						start = max_u64(start, c->engine_free[e]);
						c->engine_free[e] = start + t->dur_ns;
					}
					t->start_ns = start;
					t->end_ns = start + t->dur_ns;
					t->scheduled = 1;
				}
				if (t->end_ns > now) {
					if (t->end_ns < *deadline)
						*deadline = t->end_ns;
					break;
				}
				complete_task(c, sq, t);
				done++;
				progress = 1;
			}
		}
	}
	return done;
}

/* ---- the card's thread -------------------------------------------------------------- */

static long futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *ts, uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, val3);
}

void md_card_kick(struct md_card *c)
{
	struct npu_uio_card *hdr = c->uio;

	if (!hdr)
		return;
	atomic_fetch_add((_Atomic uint32_t *)&hdr->doorbell, 1);
	if (atomic_load((_Atomic uint32_t *)&hdr->card_sleeping))
		futex(&hdr->doorbell, FUTEX_WAKE, 1, NULL, 0);
}

static int any_pending(struct npu_uio_card *hdr)
{
	uint32_t w;

	for (w = 0; w < NPU_UIO_MAX_SQ / 64; w++)
		if (atomic_load((_Atomic uint64_t *)&hdr->pending[w]))
			return 1;
	return 0;
}

#define MD_MIN_SLEEP_NS 20000ull

static void *card_thread(void *arg)
{
	struct md_card *c = arg;
	struct npu_uio_card *hdr = c->uio;
	char name[16];

	snprintf(name, sizeof(name), "card%u", c->index);
	prctl(PR_SET_NAME, name);
	/* Deadlines are microseconds apart: do not let the kernel batch our wake-ups. */
	prctl(PR_SET_TIMERSLACK, 1ul);
	for (;;) {
		uint64_t deadline, now;
		uint32_t done, db;

		db = atomic_load((_Atomic uint32_t *)&hdr->doorbell);
		pthread_mutex_lock(&c->lock);
		if (c->stop) {
			pthread_mutex_unlock(&c->lock);
			break;
		}
		now = md_now_ns();
		md_sched_ingest_uio(c, now);
		done = md_sched_run(c, now, &deadline);
		pthread_mutex_unlock(&c->lock);
		if (done) {
			atomic_fetch_add((_Atomic uint32_t *)&hdr->completions, 1);
			if (atomic_load((_Atomic uint32_t *)&hdr->completion_waiters))
				futex(&hdr->completions, FUTEX_WAKE, INT32_MAX, NULL, 0);
		}
		atomic_store((_Atomic uint32_t *)&hdr->card_sleeping, 1);
		if (!any_pending(hdr)) {
			struct timespec ts, *tp = NULL;

			if (deadline != UINT64_MAX) {
				/*
				 * Wake-ups closer than MD_MIN_SLEEP_NS are merged: tasks keep
				 * their exact device times, only the host sees several finish
				 * at once, and a storm of 2 us kernels costs far fewer wake-ups.
				 */
				if (deadline < now + MD_MIN_SLEEP_NS)
					deadline = now + MD_MIN_SLEEP_NS;
				ts.tv_sec = (time_t)(deadline / 1000000000ull);
				ts.tv_nsec = (long)(deadline % 1000000000ull);
				tp = &ts;
			}
			futex(&hdr->doorbell, FUTEX_WAIT_BITSET, db, tp, FUTEX_BITSET_MATCH_ANY);
		}
		atomic_store((_Atomic uint32_t *)&hdr->card_sleeping, 0);
	}
	return NULL;
}

int md_card_start(struct md_card *c)
{
	int err;

	if (!c->uio)
		return -EINVAL;
	err = pthread_create(&c->thread, NULL, card_thread, c);
	if (err)
		return -err;
	c->thread_started = 1;
	return 0;
}

void md_card_stop(struct md_card *c)
{
	if (!c->thread_started)
		return;
	pthread_mutex_lock(&c->lock);
	c->stop = 1;
	pthread_mutex_unlock(&c->lock);
	md_card_kick(c);
	pthread_join(c->thread, NULL);
	c->thread_started = 0;
}
