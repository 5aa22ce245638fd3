// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ioctl.c - the driver: what each ioctl on a davinci node does.
 *
 * davinci_manager answers the 'Z' bind protocol; once bound, the fd answers
 * the commands of its module (TSDRV 'X', SVM 'M', PROF 'P').  davinciN
 * answers no ioctl (open/close only, as the real UDA node).  Everything in
 * a request comes from a client and is checked: a command whose number (and
 * so size) is unknown gets -ENOTTY, a bad id -EINVAL, another process's
 * resource -EPERM, a bad user pointer -EFAULT.  User memory is read and
 * written with process_vm_readv/writev on the calling thread (our stand-in
 * for copy_from_user/copy_to_user); the daemon runs as root so it may.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "modeld.h"
#include "npu_journal.h"

/* The daemon's configuration and cards (set up by main, or by a unit test). */
struct md_config md_cfg;
struct md_card *md_cards;

const char *md_module_name(enum md_module m)
{
	switch (m) {
	case MD_MOD_TSDRV:
		return DAVINCI_MODULE_TSDRV;
	case MD_MOD_SVM:
		return DAVINCI_MODULE_SVM;
	case MD_MOD_PROF:
		return DAVINCI_MODULE_PROF;
	default:
		return "-";
	}
}

pid_t md_tgid_of(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = tid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return tid;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Tgid:", 5)) {
			tgid = (pid_t)atoi(line + 5);
			break;
		}
	}
	fclose(f);
	return tgid > 0 ? tgid : tid;
}

static int user_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (!addr)
		return -EFAULT;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	return n == (ssize_t)len ? 0 : -EFAULT;
}

static int user_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (!addr)
		return -EFAULT;
	n = process_vm_writev(pid, &local, 1, &remote, 1, 0);
	return n == (ssize_t)len ? 0 : -EFAULT;
}

/*
 * Nonzero once the file was released (its client died inside this ioctl).
 * Checked under the card lock by everything that allocates, so nothing is
 * created for a file whose resources were already reclaimed.
 */
static int file_gone(const struct md_file *f)
{
	return __atomic_load_n(&f->released, __ATOMIC_ACQUIRE);
}

static int in_arg(const struct md_ioctl_req *r, void *dst, size_t len)
{
	if (!r->in || r->in_size != len)
		return -EINVAL;
	memcpy(dst, r->in, len);
	return 0;
}

/* The (type, tsId) head every SQ/CQ request structure starts with. */
struct sqcq_head {
	drvSqCqType_t type;
	uint32_t tsId;
};

#define SQCQ_HEAD_OF(s)                                                                      \
	_Static_assert(offsetof(struct s, type) == offsetof(struct sqcq_head, type) &&       \
			       offsetof(struct s, tsId) == offsetof(struct sqcq_head, tsId), \
		       #s " starts with (type, tsId)")
SQCQ_HEAD_OF(halSqCqFreeInfo);
SQCQ_HEAD_OF(halSqCqQueryInfo);
SQCQ_HEAD_OF(halSqCqConfigInfo);
SQCQ_HEAD_OF(halTaskSendInfo);
SQCQ_HEAD_OF(halReportRecvInfo);

/* in_arg() of an SQ/CQ request: -EINVAL unless it names a normal SQ/CQ on TS 0. */
static int sqcq_in_arg(const struct md_ioctl_req *r, void *dst, size_t len)
{
	struct sqcq_head h;
	int err = in_arg(r, dst, len);

	if (err)
		return err;
	memcpy(&h, dst, sizeof(h));
	return h.type != DRV_NORMAL_TYPE || h.tsId != 0 ? -EINVAL : 0;
}

static int out_arg(struct md_ioctl_req *r, const void *src, size_t len)
{
	if (!r->out || r->out_size < len)
		return -EINVAL;
	memcpy(r->out, src, len);
	r->out_len = len;
	return 0;
}

static int all_zero(const uint32_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i])
			return 0;
	return 1;
}

/* ---- 'Z' ---------------------------------------------------------------------------- */

static int do_bind(struct md_file *f, struct md_ioctl_req *r)
{
	struct davinci_intf_open_arg a;
	enum md_module m;
	int err;

	err = user_read(r->pid, r->arg, &a, sizeof(a));
	if (err)
		return err;
	if (!memchr(a.module_name, '\0', sizeof(a.module_name)))
		return -EINVAL;
	if (!strcmp(a.module_name, DAVINCI_MODULE_TSDRV))
		m = MD_MOD_TSDRV;
	else if (!strcmp(a.module_name, DAVINCI_MODULE_SVM))
		m = MD_MOD_SVM;
	else if (!strcmp(a.module_name, DAVINCI_MODULE_PROF))
		m = MD_MOD_PROF;
	else
		return -ENODEV;
	if (a.device_id < 0 || (uint32_t)a.device_id >= md_cfg.cards)
		return -ENODEV;
	if (f->module != MD_MOD_NONE)
		return -EBUSY;
	f->module = m;
	f->module_dev = (uint32_t)a.device_id;
	return 0;
}

/* ---- 'X' TSDRV ---------------------------------------------------------------------- */

/* in_arg() of TRS_RES_ID_ALLOC / _FREE: -EINVAL unless an id type below DRV_SQ_ID on TS 0. */
static int res_id_in_arg(const struct md_ioctl_req *r, struct trs_res_id_para *p)
{
	int err = in_arg(r, p, sizeof(*p));

	if (err)
		return err;
	return p->tsid != 0 || p->res_type < 0 || p->res_type >= DRV_SQ_ID ? -EINVAL : 0;
}

static int res_id_alloc(struct md_card *c, struct md_file *f, struct md_ioctl_req *r)
{
	struct trs_res_id_para p;
	int id, err;

	err = res_id_in_arg(r, &p);
	if (err)
		return err;
	pthread_mutex_lock(&c->lock);
	id = file_gone(f) ? -EBADF : md_ids_alloc(&c->ids[p.res_type], f);
	pthread_mutex_unlock(&c->lock);
	if (id < 0)
		return id;
	if (p.res_type == DRV_NOTIFY_ID)
		md_notify_reset(md_gcard(c), (uint32_t)id); /* a new notify counts from 0 */
	p.id = (unsigned int)id;
	return out_arg(r, &p, sizeof(p));
}

static int res_id_free(struct md_card *c, struct md_file *f, struct md_ioctl_req *r)
{
	struct trs_res_id_para p;
	int err;

	err = res_id_in_arg(r, &p);
	if (err)
		return err;
	pthread_mutex_lock(&c->lock);
	err = md_ids_free(&c->ids[p.res_type], p.id, f);
	pthread_mutex_unlock(&c->lock);
	return err == -ENOENT ? -EINVAL : err;
}

static int sqcq_alloc(struct md_card *c, struct md_file *f, struct md_ioctl_req *r)
{
	struct halSqCqInputInfo in;
	int sq_id, cq_id, err;

	err = in_arg(r, &in, sizeof(in));
	if (err)
		return err;
	if (in.type != DRV_NORMAL_TYPE)
		return -EOPNOTSUPP;
	if (in.tsId != 0 || in.sqeSize != NPU_UIO_SQE_SIZE ||
	    (in.sqeDepth != 0 && in.sqeDepth != NPU_UIO_SQ_DEPTH))
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	if (file_gone(f)) {
		pthread_mutex_unlock(&c->lock);
		return -EBADF;
	}
	sq_id = md_ids_alloc(&c->ids[DRV_SQ_ID], f);
	cq_id = sq_id < 0 ? sq_id : md_ids_alloc(&c->ids[DRV_CQ_ID], f);
	if (sq_id < 0 || cq_id < 0) {
		if (sq_id >= 0)
			md_ids_free(&c->ids[DRV_SQ_ID], (uint32_t)sq_id, f);
		pthread_mutex_unlock(&c->lock);
		return -ENOSPC;
	}
	c->cq[cq_id] = calloc(1, sizeof(struct md_cq));
	if (!c->cq[cq_id] ||
	    !md_sq_create(c, (uint32_t)sq_id, (uint32_t)cq_id, in.info[0], f, md_tgid_of(r->pid))) {
		free(c->cq[cq_id]);
		c->cq[cq_id] = NULL;
		md_ids_free(&c->ids[DRV_SQ_ID], (uint32_t)sq_id, f);
		md_ids_free(&c->ids[DRV_CQ_ID], (uint32_t)cq_id, f);
		pthread_mutex_unlock(&c->lock);
		return -ENOMEM;
	}
	pthread_mutex_unlock(&c->lock);
	in.sqId = (uint32_t)sq_id;
	in.cqId = (uint32_t)cq_id;
	in.sqeDepth = NPU_UIO_SQ_DEPTH;
	return out_arg(r, &in, sizeof(in));
}

/* Caller holds c->lock.  Frees SQ sq_id and its CQ when f owns them. */
static int sq_free_locked(struct md_card *c, struct md_file *f, uint32_t sq_id)
{
	struct md_sq *sq;
	uint32_t cq_id;

	if (sq_id >= NPU_UIO_MAX_SQ)
		return -EINVAL;
	sq = c->sq[sq_id];
	if (!sq)
		return -EINVAL;
	if (sq->owner != f)
		return -EPERM;
	cq_id = sq->cq_id;
	md_sq_destroy(c, sq);
	md_ids_free(&c->ids[DRV_SQ_ID], sq_id, f);
	if (cq_id < NPU_UIO_MAX_SQ && md_ids_owner(&c->ids[DRV_CQ_ID], cq_id) == f) {
		free(c->cq[cq_id]);
		c->cq[cq_id] = NULL;
		md_ids_free(&c->ids[DRV_CQ_ID], cq_id, f);
	}
	return 0;
}

static int sqcq_free(struct md_card *c, struct md_file *f, struct md_ioctl_req *r)
{
	struct halSqCqFreeInfo in;
	int err;

	err = sqcq_in_arg(r, &in, sizeof(in));
	if (err)
		return err;
	pthread_mutex_lock(&c->lock);
	err = sq_free_locked(c, f, in.sqId);
	pthread_mutex_unlock(&c->lock);
	return err;
}

/* Caller holds c->lock. */
static struct md_sq *own_sq(struct md_card *c, struct md_file *f, uint32_t sq_id, int *err)
{
	struct md_sq *sq = sq_id < NPU_UIO_MAX_SQ ? c->sq[sq_id] : NULL;

	*err = !sq ? -EINVAL : sq->owner != f ? -EPERM : 0;
	return *err ? NULL : sq;
}

static int sqcq_query(struct md_card *c, struct md_file *f, struct md_ioctl_req *r)
{
	struct halSqCqQueryInfo q;
	struct md_sq *sq;
	int err;

	err = sqcq_in_arg(r, &q, sizeof(q));
	if (err)
		return err;
	pthread_mutex_lock(&c->lock);
	sq = own_sq(c, f, q.sqId, &err);
	if (sq) {
		switch (q.prop) {
		case DRV_SQCQ_PROP_SQ_STATUS:
			q.value[0] = sq->broken ? 1 : 0;
			break;
		case DRV_SQCQ_PROP_SQ_HEAD:
			q.value[0] = sq->head % NPU_UIO_SQ_DEPTH;
			break;
		case DRV_SQCQ_PROP_SQ_TAIL:
			q.value[0] = sq->ingested % NPU_UIO_SQ_DEPTH;
			break;
		case DRV_SQCQ_PROP_SQ_DEPTH:
			q.value[0] = NPU_UIO_SQ_DEPTH;
			break;
		default:
			err = -EOPNOTSUPP;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return err ? err : out_arg(r, &q, sizeof(q));
}

static int sqcq_config(struct md_card *c, struct md_file *f, struct md_ioctl_req *r)
{
	struct halSqCqConfigInfo q;
	int err;

	err = sqcq_in_arg(r, &q, sizeof(q));
	if (err)
		return err;
	pthread_mutex_lock(&c->lock);
	if (own_sq(c, f, q.sqId, &err) && q.prop != DRV_SQCQ_PROP_SQ_DISABLE_TO_ENABLE)
		err = -EOPNOTSUPP;
	pthread_mutex_unlock(&c->lock);
	return err;
}

static int sqcq_send(struct md_card *c, struct md_file *f, struct md_ioctl_req *r)
{
	struct halTaskSendInfo in;
	struct npu_sqe *sqes;
	struct md_sq *sq;
	int err;

	err = sqcq_in_arg(r, &in, sizeof(in));
	if (err)
		return err;
	if (in.sqe_num == 0 || in.sqe_num >= NPU_UIO_SQ_DEPTH ||
	    !all_zero(in.res, SQCQ_RESV_LENGTH))
		return -EINVAL;
	sqes = malloc((size_t)in.sqe_num * sizeof(*sqes));
	if (!sqes)
		return -ENOMEM;
	err = user_read(r->pid, (uint64_t)(uintptr_t)in.sqe_addr, sqes,
			(size_t)in.sqe_num * sizeof(*sqes));
	if (!err) {
		pthread_mutex_lock(&c->lock);
		sq = own_sq(c, f, in.sqId, &err);
		if (sq)
			err = md_sched_submit(c, sq, sqes, in.sqe_num, md_now_ns());
		pthread_mutex_unlock(&c->lock);
		if (!err)
			md_card_kick(c);
	}
	free(sqes);
	return err;
}

static int cq_recv(struct md_card *c, struct md_file *f, struct md_ioctl_req *r)
{
	struct trs_logic_cqe cqes[MD_CQ_DEPTH];
	struct halReportRecvInfo in;
	struct md_cq *cq;
	uint64_t deadline;
	uint32_t n = 0;
	int err;

	err = sqcq_in_arg(r, &in, sizeof(in));
	if (err)
		return err;
	if (in.cqe_num == 0 || in.cqId >= NPU_UIO_MAX_SQ || !in.cqe_addr)
		return -EINVAL;
	/* Negative timeouts wait "forever": in slices, so a killed caller is noticed. */
	deadline = in.timeout < 0 ? UINT64_MAX : md_now_ns() + (uint64_t)in.timeout * 1000000ull;
	pthread_mutex_lock(&c->lock);
	for (;;) {
		struct timespec ts;
		uint64_t slice;

		cq = c->cq[in.cqId];
		if (!cq || md_ids_owner(&c->ids[DRV_CQ_ID], in.cqId) != f) {
			err = cq ? -EPERM : -EINVAL;
			break;
		}
		if (cq->tail != cq->head) {
			while (n < in.cqe_num && n < MD_CQ_DEPTH && cq->head != cq->tail)
				cqes[n++] = cq->cqe[cq->head++ % MD_CQ_DEPTH];
			break;
		}
		if (md_now_ns() >= deadline || (r->interrupted && r->interrupted(r->ctx))) {
			err = -ETIMEDOUT;
			break;
		}
		slice = md_now_ns() + 50000000ull;
		if (slice > deadline)
			slice = deadline;
		ts.tv_sec = (time_t)(slice / 1000000000ull);
		ts.tv_nsec = (long)(slice % 1000000000ull);
		pthread_cond_timedwait(&c->cq_cond, &c->lock, &ts);
	}
	pthread_mutex_unlock(&c->lock);
	if (err)
		return err;
	err = user_write(r->pid, (uint64_t)(uintptr_t)in.cqe_addr, cqes, n * sizeof(cqes[0]));
	if (err)
		return err;
	in.report_cqe_num = n;
	return out_arg(r, &in, sizeof(in));
}

static int tsdrv_ioctl(struct md_file *f, struct md_ioctl_req *r)
{
	struct md_card *c = &md_cards[f->module_dev];

	switch (r->cmd) {
	case TRS_RES_ID_ALLOC:
		return res_id_alloc(c, f, r);
	case TRS_RES_ID_FREE:
		return res_id_free(c, f, r);
	case TRS_SQCQ_ALLOC:
		return sqcq_alloc(c, f, r);
	case TRS_SQCQ_FREE:
		return sqcq_free(c, f, r);
	case TRS_SQCQ_CONFIG:
		return sqcq_config(c, f, r);
	case TRS_SQCQ_QUERY:
		return sqcq_query(c, f, r);
	case TRS_SQCQ_SEND:
		return sqcq_send(c, f, r);
	case TRS_SQCQ_RECV:
		return cq_recv(c, f, r);
	default:
		return -ENOTTY;
	}
}

/* ---- 'M' SVM ------------------------------------------------------------------------ */

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int svm_ioctl(struct md_file *f, struct md_ioctl_req *r)
{
	struct devmm_ioctl_arg a;
	struct md_card *c;
	int err;

	err = in_arg(r, &a, sizeof(a));
	if (err)
		return err;
	if (a.head.devid >= md_cfg.cards)
		return -ENODEV;
	c = &md_cards[a.head.devid];
	switch (r->cmd) {
	case DEVMM_SVM_ALLOC: {
		uint64_t va = a.data.alloc_svm_para.p, size = a.data.alloc_svm_para.size;

		if (!va)
			return -EINVAL;
		pthread_mutex_lock(&c->lock);
		err = file_gone(f) ? -EBADF : md_hbm_alloc(&c->hbm, va, size, f);
		pthread_mutex_unlock(&c->lock);
		if (err == -ENOMEM && npu_journal_on)
			npu_journal_write("oom",
					  "tid=%d\tt=%llu\tsize=%llu\tret=%d\tdev=%u\terrno=%d"
					  "\tlayer=driver",
					  (int)r->pid, (unsigned long long)md_now_ns(),
					  (unsigned long long)size, DRV_ERROR_OUT_OF_MEMORY,
					  c->index, -err);
		return err;
	}
	case DEVMM_SVM_ADVISE: {
		int ok;

		pthread_mutex_lock(&c->lock);
		ok = md_hbm_contains(&c->hbm, a.data.advise_para.ptr, a.data.advise_para.count, f);
		pthread_mutex_unlock(&c->lock);
		return ok ? 0 : -EINVAL;
	}
	case DEVMM_SVM_FREE_PAGES:
		pthread_mutex_lock(&c->lock);
		err = md_hbm_free(&c->hbm, a.data.free_pages_para.va, f);
		pthread_mutex_unlock(&c->lock);
		return err == -ENOENT ? -EINVAL : err;
	case DEVMM_SVM_MEMCPY: {
		struct devmm_copy_para *p = &a.data.copy_para;
		int dev_src = p->direction == DEVMM_COPY_DEVICE_TO_HOST ||
			      p->direction == DEVMM_COPY_DEVICE_TO_DEVICE;
		int dev_dst = p->direction == DEVMM_COPY_HOST_TO_DEVICE ||
			      p->direction == DEVMM_COPY_DEVICE_TO_DEVICE;
		uint64_t ns;
		int ok = 1;
		char probe;

		if ((unsigned)p->direction > DEVMM_COPY_DEVICE_TO_DEVICE || p->ByteCount == 0)
			return -EINVAL;
		pthread_mutex_lock(&c->lock);
		if (dev_src)
			ok = md_hbm_contains(&c->hbm, p->src, p->ByteCount, f);
		if (ok && dev_dst)
			ok = md_hbm_contains(&c->hbm, p->dst, p->ByteCount, f);
		ns = npu_cost_copy_ns(&c->cfg, p->ByteCount, (int)p->direction);
		pthread_mutex_unlock(&c->lock);
		if (!ok)
			return -EINVAL;
		/* Host side must at least be readable (no data moves: the card has no memory). */
		if (!dev_src && user_read(r->pid, p->src, &probe, 1))
			return -EFAULT;
		if (!dev_dst && user_read(r->pid, p->dst, &probe, 1))
			return -EFAULT;
		/* A synchronous copy takes its PCIe/HBM time before the call returns. */
		sleep_ns(ns < 10000000000ull ? ns : 10000000000ull);
		return out_arg(r, &a, sizeof(a));
	}
	case DEVMM_SVM_QUERY_MEM_USEDINFO: {
		struct devmm_query_mem_usedinfo_para *q = NPU_DEVMM_QUERY(&a);

		pthread_mutex_lock(&c->lock);
		q->total = c->hbm.capacity;
		q->used = c->hbm.used;
		q->used_by_caller = md_hbm_used_by(&c->hbm, f);
		q->peak = c->hbm.peak;
		q->oom_count = c->hbm.oom_count;
		pthread_mutex_unlock(&c->lock);
		return out_arg(r, &a, sizeof(a));
	}
	default:
		return -ENOTTY;
	}
}

/* ---- 'P' PROF (model) --------------------------------------------------------------- */

#define PROF_READ_MAX_RECORDS 4096

static int prof_read(struct md_file *f, struct md_ioctl_req *r)
{
	struct npu_prof_read_arg a;
	struct md_prof_session *s;
	struct md_card *c;
	uint8_t *buf = NULL;
	uint32_t max, n = 0;
	uint64_t rd0;
	int err;

	err = in_arg(r, &a, sizeof(a));
	if (err)
		return err;
	if (a.device_id >= md_cfg.cards)
		return -ENODEV;
	/* a READ without a buffer is the model's drop-counter query */
	if (!a.buf_size && md_cfg.no_private)
		return -EPERM;
	c = &md_cards[a.device_id];
	max = a.buf_size / 64;
	if (max > PROF_READ_MAX_RECORDS)
		max = PROF_READ_MAX_RECORDS;
	if (max) {
		buf = malloc((size_t)max * 64);
		if (!buf)
			return -ENOMEM;
	}
	pthread_mutex_lock(&c->lock);
	s = md_prof_find(c, a.channel_id, f);
	if (!s) {
		err = -ENOENT;
	} else {
		rd0 = s->rd;
		n = max ? md_prof_take(s, buf, max) : 0;
		/* Writing to the caller may fault: the records go back to the ring then. */
		if (n && user_write(r->pid, a.buf, buf, (size_t)n * 64)) {
			s->rd = rd0;
			err = -EFAULT;
		}
		a.dropped = md_cfg.no_private ? 0 : s->dropped;
		a.pending = s->wr - s->rd;
	}
	pthread_mutex_unlock(&c->lock);
	free(buf);
	if (err)
		return err;
	a.bytes = n * 64;
	return out_arg(r, &a, sizeof(a));
}

static int prof_poll(struct md_file *f, struct md_ioctl_req *r)
{
	struct npu_prof_poll_arg a;
	struct prof_poll_info *out;
	uint64_t deadline;
	uint32_t n, i, d;
	int err = 0;

	err = in_arg(r, &a, sizeof(a));
	if (err)
		return err;
	if (a.num == 0 || a.num > NPU_MODEL_MAX_CARDS * MD_MAX_PROF_SESSIONS || a.timeout_ms < 0)
		return -EINVAL;
	out = calloc(a.num, sizeof(*out));
	if (!out)
		return -ENOMEM;
	deadline = md_now_ns() + (uint64_t)a.timeout_ms * 1000000ull;
	for (;;) {
		n = 0;
		for (d = 0; d < md_cfg.cards && n < a.num; d++) {
			struct md_card *c = &md_cards[d];

			pthread_mutex_lock(&c->lock);
			for (i = 0; i < MD_MAX_PROF_SESSIONS && n < a.num; i++) {
				struct md_prof_session *s = &c->prof[i];

				if (s->ring && s->owner == f && s->wr != s->rd)
					out[n++] = (struct prof_poll_info){ d, s->channel };
			}
			pthread_mutex_unlock(&c->lock);
		}
		if (n || md_now_ns() >= deadline || (r->interrupted && r->interrupted(r->ctx)))
			break;
		sleep_ns(1000000);
	}
	if (n)
		err = user_write(r->pid, a.out, out, n * sizeof(*out));
	free(out);
	if (err)
		return err;
	a.ready = n;
	return out_arg(r, &a, sizeof(a));
}

static int prof_ioctl(struct md_file *f, struct md_ioctl_req *r)
{
	StarsSocLogConfigT cfg;
	struct npu_prof_ctl a;
	struct md_card *c;
	int err;

	if (r->cmd == NPU_PROF_IOCTL_READ)
		return prof_read(f, r);
	if (r->cmd == NPU_PROF_IOCTL_POLL)
		return prof_poll(f, r);
	if (r->cmd != NPU_PROF_IOCTL_START && r->cmd != NPU_PROF_IOCTL_STOP)
		return -ENOTTY;
	err = in_arg(r, &a, sizeof(a));
	if (err)
		return err;
	if (a.device_id >= md_cfg.cards)
		return -ENODEV;
	c = &md_cards[a.device_id];
	if (r->cmd == NPU_PROF_IOCTL_START && a.user_data_size) {
		/* the configuration is read from the caller, as the driver copies it in */
		if (a.user_data_size > sizeof(cfg))
			return -EINVAL;
		err = user_read(r->pid, a.user_data, &cfg, a.user_data_size);
		if (err)
			return err;
	}
	pthread_mutex_lock(&c->lock);
	if (r->cmd == NPU_PROF_IOCTL_START)
		err = file_gone(f) ?
			      -EBADF :
			      md_prof_start(c, a.channel_id, f, a.user_data_size ? &cfg : NULL,
					    a.user_data_size);
	else
		err = md_prof_stop(c, a.channel_id, f);
	pthread_mutex_unlock(&c->lock);
	return err;
}

/* ---- dispatch ----------------------------------------------------------------------- */

int md_ioctl(struct md_file *f, struct md_ioctl_req *r)
{
	r->out_len = 0;
	if (f->ino != MD_NODE_MANAGER)
		return -ENOTTY; /* davinciN: open/close only; info: a file */
	if (_IOC_TYPE(r->cmd) == DAVINCI_INTF_IOC_MAGIC) {
		switch (r->cmd) {
		case DAVINCI_INTF_IOCTL_OPEN:
			return do_bind(f, r);
		case DAVINCI_INTF_IOCTL_GET_MODULE_STATUS:
			return f->module == MD_MOD_NONE ? 0 : 1;
		default:
			return -ENOTTY;
		}
	}
	switch (f->module) {
	case MD_MOD_TSDRV:
		return tsdrv_ioctl(f, r);
	case MD_MOD_SVM:
		return svm_ioctl(f, r);
	case MD_MOD_PROF:
		return prof_ioctl(f, r);
	default:
		return -ENXIO; /* not bound: the real driver has no module to forward to */
	}
}

void md_file_release(struct md_file *f)
{
	uint32_t d, i;

	__atomic_store_n(&f->released, 1, __ATOMIC_RELEASE);
	if (f->ino >= MD_NODE_DAVINCI0 && f->dev < md_cfg.cards) {
		struct md_card *c = &md_cards[f->dev];

		pthread_mutex_lock(&c->lock);
		c->opens--;
		pthread_mutex_unlock(&c->lock);
	}
	for (d = 0; d < md_cfg.cards && f->module != MD_MOD_NONE; d++) {
		struct md_card *c = &md_cards[d];
		uint32_t sqs = 0, ids = 0, mem = 0, prof = 0;

		pthread_mutex_lock(&c->lock);
		for (i = 0; i < NPU_UIO_MAX_SQ; i++) {
			if (c->sq[i] && c->sq[i]->owner == f) {
				sq_free_locked(c, f, i);
				sqs++;
			}
		}
		for (i = 0; i < DRV_INVALID_ID; i++) {
			if (i == DRV_CQ_ID) {
				uint32_t q;

				for (q = 0; q < NPU_UIO_MAX_SQ; q++) {
					if (c->cq[q] && md_ids_owner(&c->ids[DRV_CQ_ID], q) == f) {
						free(c->cq[q]);
						c->cq[q] = NULL;
					}
				}
			}
			ids += md_ids_free_owner(&c->ids[i], f);
		}
		mem = md_hbm_free_owner(&c->hbm, f);
		prof = md_prof_free_owner(c, f);
		pthread_mutex_unlock(&c->lock);
		if ((sqs || ids || mem || prof) && npu_journal_on)
			npu_journal_write("reclaim",
					  "pid=%d\tdev=%u\tmodule=%s\tsqs=%u\tids=%u\t"
					  "mem_ranges=%u\tprof_sessions=%u\tt=%llu",
					  (int)f->pid, d, md_module_name(f->module), sqs, ids, mem,
					  prof, (unsigned long long)md_now_ns());
	}
	free(f->info);
	f->info = NULL;
}

/* ---- npu_model_info ----------------------------------------------------------------- */

int md_info_build(struct md_file *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	uint32_t d;

	if (!m)
		return -ENOMEM;
	fprintf(m, "cards_per_node=%u\ncard_base=%u\nclock_offset_ns=%lld\n",
		md_cfg.cards_per_node ? md_cfg.cards_per_node : md_cfg.cards, md_cfg.card_base,
		(long long)md_cfg.clock_offset_ns);
	fprintf(m, "format=1\npid=%d\ncards=%u\nsq_depth=%u\nmax_sq=%u\nprivate=%d\n",
		(int)getpid(), md_cfg.cards, NPU_UIO_SQ_DEPTH, NPU_UIO_MAX_SQ, !md_cfg.no_private);
	for (d = 0; d < md_cfg.cards; d++) {
		struct md_card *c = &md_cards[d];
		uint32_t i, sqs = 0;

		pthread_mutex_lock(&c->lock);
		for (i = 0; i < NPU_UIO_MAX_SQ; i++)
			sqs += c->sq[i] != NULL;
		fprintf(m, "dev%u.shm=%s\n", d, c->uio_path);
		fprintf(m,
			"dev%u.syscnt_freq_hz=%llu\ndev%u.syscnt_offset=%llu\n"
			"dev%u.syscnt_base_ns=%llu\n",
			d, (unsigned long long)c->cnt_freq_hz, d, (unsigned long long)c->cnt_offset,
			d, (unsigned long long)c->cnt_base_ns);
		fprintf(m,
			"dev%u.hbm_total=%llu\ndev%u.hbm_used=%llu\ndev%u.hbm_peak=%llu\n"
			"dev%u.hbm_ranges=%u\ndev%u.oom_count=%llu\n",
			d, (unsigned long long)c->hbm.capacity, d, (unsigned long long)c->hbm.used,
			d, (unsigned long long)c->hbm.peak, d, c->hbm.n, d,
			(unsigned long long)c->hbm.oom_count);
		fprintf(m, "dev%u.streams=%u\ndev%u.events=%u\ndev%u.sqs=%u\n", d,
			c->ids[DRV_STREAM_ID].used, d, c->ids[DRV_EVENT_ID].used, d, sqs);
		fprintf(m,
			"dev%u.tasks_done=%llu\ndev%u.tasks_failed=%llu\ndev%u.tasks_dropped=%llu\n"
			"dev%u.prof_sessions=%u\ndev%u.opens=%u\n",
			d, (unsigned long long)c->tasks_done, d,
			(unsigned long long)c->tasks_failed, d,
			(unsigned long long)c->tasks_dropped, d, c->prof_active, d, c->opens);
		fprintf(m, "dev%u.tflops=%g\ndev%u.hbm_gbps=%g\ndev%u.launch_ns=%llu\n", d,
			c->cfg.cube_tflops, d, c->cfg.hbm_gbps, d,
			(unsigned long long)c->cfg.launch_latency_ns);
		pthread_mutex_unlock(&c->lock);
	}
	if (fclose(m)) {
		free(buf);
		return -ENOMEM;
	}
	f->info = buf;
	f->info_len = len;
	return 0;
}
