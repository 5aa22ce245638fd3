/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * modeld.h - npu-modeld internals: the cards, their resources, the task
 * scheduler and the profiling sessions.  Not an interface of the model; the
 * interface is npu_ioctl.h.
 *
 * Locking: every field of a card is protected by card->lock; the scheduler
 * thread and the FUSE worker threads take it for each operation.  A card's
 * resources (ids, memory, SQs, profiling sessions) remember the md_file that
 * created them so they are reclaimed when that file is released (the client
 * closed it or died).
 */
#ifndef __NPU_MODELD_H
#define __NPU_MODELD_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "ascend_hal.h"
#include "npu_cost.h"
#include "npu_ioctl.h"
#include "npu_sqe.h"

/* ---- id allocation (ids.c) ---------------------------------------------------------- */

/*
 * Ids 0..max-1, handed out round-robin from the last one given (so a freed id
 * is not reused at once, which keeps stale records from aliasing new ones).
 */
struct md_ids {
	uint32_t max;
	uint32_t used;
	uint32_t next;
	uint64_t *bits;
	const void **owner;
};

int md_ids_init(struct md_ids *ids, uint32_t max);
void md_ids_fini(struct md_ids *ids);
/* Returns the id (>= 0) or -ENOSPC. */
int md_ids_alloc(struct md_ids *ids, const void *owner);
/* 0, -EINVAL (out of range), -ENOENT (not allocated) or -EPERM (another owner's). */
int md_ids_free(struct md_ids *ids, uint32_t id, const void *owner);
int md_ids_busy(const struct md_ids *ids, uint32_t id);
const void *md_ids_owner(const struct md_ids *ids, uint32_t id);
/* Frees every id of owner; returns how many. */
uint32_t md_ids_free_owner(struct md_ids *ids, const void *owner);

/*
 * Task-id wrap tracking: the runtime's 16-bit task id wraps at 65536; the
 * number of wraps before a task (its flip) is counted from the sequence of
 * ids seen on one stream.  The SQE carries the runtime's own flip; the card
 * keeps its own count so the journal can show both agree.
 */
struct md_wrap {
	uint32_t seen; /* nonzero after the first task */
	uint16_t last;
	uint32_t flip;
};
/* Returns the flip of task id `task` given the ids seen before it. */
uint32_t md_wrap_next(struct md_wrap *w, uint16_t task);

/* ---- HBM accounting (hbm.c) --------------------------------------------------------- */

/*
 * One card's device memory: a capacity in bytes and the populated ranges,
 * each owned by the file that populated it.  Virtual addresses are chosen by
 * the HAL (as the real SVM heap does in user space); the card refuses an
 * overlapping range of the same owner and anything beyond capacity.
 */
struct md_hbm_range {
	uint64_t va;
	uint64_t size;	  /* bytes asked for */
	uint64_t charged; /* bytes counted against capacity (page rounded) */
	const void *owner;
};

struct md_hbm {
	uint64_t capacity;
	uint64_t used;
	uint64_t peak;
	uint64_t oom_count;
	uint32_t n, cap;
	struct md_hbm_range *r; /* sorted by (owner, va) is not needed: linear */
};

void md_hbm_init(struct md_hbm *h, uint64_t capacity);
void md_hbm_fini(struct md_hbm *h);
/* 0, -ENOMEM (capacity), -EEXIST (overlaps a range of owner), -EINVAL (size 0, wrap). */
int md_hbm_alloc(struct md_hbm *h, uint64_t va, uint64_t size, const void *owner);
/* 0 or -ENOENT (no range of owner starts at va). */
int md_hbm_free(struct md_hbm *h, uint64_t va, const void *owner);
/* Nonzero when [va, va+size) lies inside one range of owner. */
int md_hbm_contains(const struct md_hbm *h, uint64_t va, uint64_t size, const void *owner);
uint64_t md_hbm_used_by(const struct md_hbm *h, const void *owner);
uint32_t md_hbm_free_owner(struct md_hbm *h, const void *owner);

/* ---- scheduler (sched.c) ------------------------------------------------------------ */

enum md_engine { MD_ENGINE_NONE = -1, MD_ENGINE_COMPUTE = 0, MD_ENGINE_COPY = 1, MD_ENGINES };

struct md_task {
	struct npu_sqe sqe;
	uint64_t submit_ns;	   /* when the card took it from the SQ */
	uint64_t dur_ns;	   /* cost-model time */
	uint64_t ev_target;	   /* RECORD: this record's number; WAIT: the record waited for */
	uint64_t start_ns, end_ns; /* valid once scheduled */
	uint32_t wrap;		   /* card's own flip count */
	uint32_t error;		   /* nonzero: the task fails (CQE): MD_ERR_* */
	uint8_t scheduled;
};

#define MD_ERR_INVALID_SQE	   0x91 /* CQE error_code: the card cannot run this SQE */
#define MD_ERR_TIMEOUT		   0x92 /* CQE error_code: the task ran past the task timeout */
#define MD_TASK_TIMEOUT_DEFAULT_NS (60ull * 1000000000ull)

#define MD_CQ_DEPTH 64

struct md_cq {
	uint32_t head, tail; /* free-running */
	uint64_t lost;
	struct trs_logic_cqe cqe[MD_CQ_DEPTH];
};

struct md_sq {
	uint32_t id;
	uint32_t cq_id;
	uint32_t stream_id; /* info[0] at alloc (the runtime's stream id) */
	const void *owner;
	pid_t pid;	   /* the submitting process */
	uint32_t ingested; /* free-running: SQEs taken from the ring */
	uint32_t head;	   /* free-running: SQEs completed */
	uint64_t last_end_ns;
	uint64_t done; /* tasks completed */
	int broken;    /* the ring was corrupted; SQ accepts nothing more */
	struct md_wrap wrap;
	struct md_task *q; /* NPU_UIO_SQ_DEPTH slots, index = position % depth */
};

#define MD_MAX_EVENTS 4096

struct md_event {
	uint64_t submitted; /* records taken from SQs */
	uint64_t completed; /* highest record number finished */
	uint64_t completed_ns;
};

/* ---- profiling sessions (prof.c) ---------------------------------------------------- */

#define MD_MAX_PROF_SESSIONS 16

struct md_prof_session {
	const void *owner;
	uint32_t channel;
	uint64_t rd, wr; /* free-running record counters */
	uint64_t dropped;
	uint8_t *ring; /* NPU_PROF_RING_RECORDS * 64 bytes */
	int acsq_task; /* its STARS configuration enabled ACSQ logs */
};

/* ---- notifies and links between cards (link.c) ------------------------------------- */

#define MD_NOTIFY_RING 64
struct md_notify {
	uint64_t records;		 /* records completed */
	uint64_t waits;			 /* waits submitted */
	uint64_t rec_ns[MD_NOTIFY_RING]; /* end of record k at [k % RING] */
};

enum { MD_LINK_NONE = 0, MD_LINK_LOCAL, MD_LINK_HCCS, MD_LINK_RDMA };

int md_link_init(uint32_t cards);
/* A card's number in the job (--card-base + its index). */
struct md_card;
uint32_t md_gcard(const struct md_card *c);
int md_fabric_on(void);
void md_link_defaults(void);
int md_link_parse(const char *spec);	  /* --link key=value,... */
int md_slow_link_parse(const char *spec); /* --slow-link A-B:K */
/* The card whose device VA range holds va, or -1. */
int md_card_of_va(uint64_t va);
int md_link_type(uint32_t a, uint32_t b);
const char *md_link_name(int type);
/* Time of `bytes` over the link a-b (latency + bytes / bandwidth, x slow factor). */
uint64_t md_link_ns(uint32_t a, uint32_t b, uint64_t bytes);
/* Notify key = card << 16 | id. */
int md_notify_valid(uint32_t key);
void md_notify_reset(uint32_t card, uint32_t id);
/* The number of the wait being submitted (1, 2, ...). */
uint64_t md_notify_add_wait(uint32_t key);
/* 1 when record k has completed (*when = its end), else 0. */
int md_notify_done(uint32_t key, uint64_t k, uint64_t *when);
void md_notify_record(uint32_t key, uint64_t end_ns);

/* ---- cards -------------------------------------------------------------------------- */

struct md_card {
	pthread_mutex_t lock;
	pthread_cond_t cq_cond;	  /* CQE arrived (TRS_SQCQ_RECV waiters) */
	pthread_cond_t prof_cond; /* profiling records arrived (POLL waiters) */
	pthread_t thread;
	int thread_started;
	int stop;
	uint32_t index;
	struct npu_card_config cfg;
	uint64_t task_timeout_ns;

	/* counter: c(t) = cnt_offset + (t - cnt_base_ns) * cnt_freq_hz / 1e9 */
	uint64_t cnt_freq_hz;
	uint64_t cnt_offset;
	uint64_t cnt_base_ns;

	struct md_ids ids[DRV_INVALID_ID]; /* by drvIdType_t; SQ/CQ ids come from TRS_SQCQ_ALLOC */
	struct md_hbm hbm;
	struct md_sq *sq[NPU_UIO_MAX_SQ];
	struct md_cq *cq[NPU_UIO_MAX_SQ];
	struct md_event *events; /* MD_MAX_EVENTS */
	uint64_t engine_free[MD_ENGINES];
	struct md_prof_session prof[MD_MAX_PROF_SESSIONS];
	uint32_t prof_active;

	/* shared memory (uio rings) */
	int uio_fd;
	char uio_path[128];
	void *uio; /* NPU_UIO_FILE_BYTES mapping */

	/* statistics (npu_model_info) */
	uint64_t tasks_done;
	uint64_t tasks_failed;
	uint64_t tasks_dropped; /* queued tasks discarded when their SQ was freed */
	uint32_t opens;		/* davinciN opens now */
};

struct md_config {
	uint32_t cards;
	uint64_t task_timeout_ns; /* a task longer than this fails at this length */
	struct npu_card_config card;
	uint64_t cnt_freq_hz;
	uint64_t cnt_offset;
	const char *mount;
	const char *journal;
	int journal_on;
	/*
	 * --no-private: answer only what a real driver answers: the clock-pair
	 * and drop-counter queries (MODEL, npu_ioctl.h) are refused, READ
	 * reports no drop count, npu_model_info says private=0 (the HAL then
	 * refuses the private info types itself).
	 */
	int no_private;
	/* link model (link.c): nodes of cards_per_node cards (0: one node) */
	uint32_t cards_per_node;
	uint64_t hccs_bytes_per_s, hccs_lat_ns;
	uint64_t rdma_bytes_per_s, rdma_lat_ns;
	uint32_t nr_slow_links;
	struct md_slow_link {
		uint32_t a, b;	 /* cards */
		uint32_t factor; /* the pair's link time x factor */
	} slow_links[8];
	/*
	 * One daemon per node (link.c): --card-base B numbers this daemon's
	 * cards B.. in the job (notify keys, link types, HCCL's devices);
	 * --fabric FILE is the notify table shared by the job's daemons;
	 * --clock-offset-ns N is the node's wall-clock error (npu_model_info,
	 * read by libnpu_nodeclock.so).  0 / NULL / 0: one daemon, as before.
	 */
	uint32_t card_base;
	const char *fabric;
	int64_t clock_offset_ns;
};
#define MD_MAX_SLOW_LINKS 8

extern struct md_config md_cfg;
extern struct md_card *md_cards;

int md_card_init(struct md_card *c, uint32_t index, const struct md_config *cfg, int with_uio);
void md_card_fini(struct md_card *c);
int md_card_start(struct md_card *c);
void md_card_stop(struct md_card *c);

uint64_t md_now_ns(void);
uint64_t md_counter_at(const struct md_card *c, uint64_t t_ns);

/* Scheduler core; caller holds c->lock.  Pure in time: `now` is passed in. */
int md_sched_submit(struct md_card *c, struct md_sq *sq, const struct npu_sqe *sqes, uint32_t n,
		    uint64_t now);
void md_sched_ingest_uio(struct md_card *c, uint64_t now);
/* Runs everything due by now; returns tasks completed; *deadline = next end or UINT64_MAX. */
uint32_t md_sched_run(struct md_card *c, uint64_t now, uint64_t *deadline);
/* Drops an SQ's queued tasks and frees it. */
void md_sq_destroy(struct md_card *c, struct md_sq *sq);
struct md_sq *md_sq_create(struct md_card *c, uint32_t id, uint32_t cq_id, uint32_t stream_id,
			   const void *owner, pid_t pid);
/* Rings the card's own doorbell (after an ioctl-mode submission). */
void md_card_kick(struct md_card *c);

/* Profiling; caller holds c->lock. */
/*
 * Starts a session; cfg / cfg_size: the STARS log configuration the caller
 * passed as prof_start_para.user_data (NULL, 0: none: the session then gets
 * no ACSQ task records, as on the card).  -EINVAL for a size no published
 * StarsSocLogConfigT has.
 */
int md_prof_start(struct md_card *c, uint32_t channel, const void *owner, const void *cfg,
		  uint32_t cfg_size);
int md_prof_stop(struct md_card *c, uint32_t channel, const void *owner);
struct md_prof_session *md_prof_find(struct md_card *c, uint32_t channel, const void *owner);
/*
 * Returns how many channel-50 sessions received the task's records (journal key
 * prof); *dropped says how many lost them to a full ring (key prof_drop).
 */
int md_prof_emit_task_counted(struct md_card *c, const struct md_task *t, int *dropped);
int md_prof_emit_task(struct md_card *c, const struct md_task *t); /* without *dropped */
uint32_t md_prof_free_owner(struct md_card *c, const void *owner);
/* Copies up to max records out of s into dst; returns records copied. */
uint32_t md_prof_take(struct md_prof_session *s, uint8_t *dst, uint32_t max);

/* Builds the two 64-byte StarsAcsqLog records of one executed task. */
void md_stars_log(struct StarsAcsqLog out[2], const struct md_task *t, uint64_t c0, uint64_t c1);

/* ---- open files and the ioctl dispatcher (ioctl.c) ----------------------------------- */

enum md_node { MD_NODE_ROOT = 1, MD_NODE_MANAGER = 2, MD_NODE_INFO = 3, MD_NODE_DAVINCI0 = 16 };
enum md_module { MD_MOD_NONE = 0, MD_MOD_TSDRV, MD_MOD_SVM, MD_MOD_PROF };

/* One open file description of a node: the owner of everything made through it. */
struct md_file {
	uint64_t ino;
	uint32_t dev;	       /* davinciN: N */
	enum md_module module; /* davinci_manager: what the fd is bound to */
	uint32_t module_dev;   /* TSDRV: the device of the bind */
	pid_t pid;	       /* opener's process (FUSE reports the thread) */
	char *info;	       /* npu_model_info: the text made at open */
	size_t info_len;
	/*
	 * References: the open file, plus one per ioctl in progress.  A client
	 * killed inside a blocking ioctl can have its file released before that
	 * ioctl returns; the struct lives until both are done.
	 */
	int refs;
	int released; /* set by md_file_release: allocate nothing more */
};

struct md_ioctl_req {
	pid_t pid; /* calling thread: its memory is read/written */
	uint32_t cmd;
	uint64_t arg;	/* the raw argument (a pointer in the caller) */
	const void *in; /* _IOW/_IOWR: the _IOC_SIZE bytes the kernel copied */
	size_t in_size;
	void *out; /* _IOR/_IOWR: room for _IOC_SIZE bytes back */
	size_t out_size;
	size_t out_len; /* set by the handler */
	/* Long waits poll this (FUSE interrupt when the caller got a signal). */
	int (*interrupted)(void *ctx);
	void *ctx;
};

/* The process (thread group) of thread tid, from /proc; tid itself if unreadable. */
pid_t md_tgid_of(pid_t tid);

/* Returns the ioctl's result (>= 0) or -errno.  Never trusts anything in req. */
int md_ioctl(struct md_file *f, struct md_ioctl_req *req);
/* Frees everything f owns on every card. */
void md_file_release(struct md_file *f);
/* Builds the npu_model_info text (malloc'ed) into f->info. */
int md_info_build(struct md_file *f);
const char *md_module_name(enum md_module m);

#endif /* __NPU_MODELD_H */
