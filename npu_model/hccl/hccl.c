// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * hccl.c - libhccl.so: HCCL's API (include/ascend/hccl.h) for npu_model.
 *
 * Communicator.  HcclGetRootInfo makes an identifier; every rank's
 * HcclCommInitRootInfo with it meets the others in a shared-memory table
 * named after it (the model's stand-in for HCCL's TCP rendezvous at the
 * root): each rank publishes its device, its CCL buffer's device address
 * and one notify per peer, then waits for all (HCCL_CONNECT_TIMEOUT s).
 *
 * Collectives run on the card: every task is a runtime call on the caller's
 * stream (rtNotifyRecord / rtNotifyWait on the peers' notifies, rtMemcpyAsync
 * / rtReduceAsync between the cards' buffers), so a rank that arrives early
 * waits in a Notify Wait until its peers' records arrive, and copies take the
 * link model's time (npu-modeld, link.c).  Before each task HCCL reports it
 * to msprof (MsprofReportAdditionalInfo with an MsprofHcclInfo), as CANN's
 * HCCL does.  Algorithm (mesh, one plane per peer): sync = Notify_Record to
 * every peer, then Notify_Wait for every peer; AllReduce = sync,
 * Reduce_Inline of 1/n from each peer, sync, Memcpy of 1/n from each peer,
 * sync; the other ops in npu_model/README.md "HCCL".
 *
 * Faults (README): NPU_MODEL_HCCL_HANG=RANK:SEQ / NPU_MODEL_HCCL_DIE=RANK:SEQ
 * make that rank hang (sleep forever) / die (SIGKILL) at the entry of its
 * op SEQ of its first communicator.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ascend/hccl.h"
#include "npu_api_journal.h"
#include "npu_ioctl.h"
#include "npu_rt.h"
#include "npu_sqe.h"

#define HCCL_MAX_RANKS	 64
#define HCCL_COMM_MAGIC	 0x4843434cU /* "HCCL" */
#define HCCL_BUF_BYTES	 (2u << 20)
#define HCCL_REPORT_TYPE 10u /* the level-5500 info type of a task report */

struct hccl_slot {
	_Atomic uint32_t ready;
	int32_t dev;
	int32_t pid;
	uint32_t reserved;
	uint64_t buf;			 /* CCL buffer (device address) */
	uint32_t notify[HCCL_MAX_RANKS]; /* id of the notify this rank waits on for peer p */
};

struct hccl_shm {
	_Atomic uint32_t attached;
	uint32_t nranks;
	struct hccl_slot slot[HCCL_MAX_RANKS];
};

struct hccl_comm {
	uint32_t magic;
	uint32_t rank, nranks;
	int32_t dev;
	int cluster;
	uint32_t seq;	/* ops issued so far */
	uint32_t index; /* communicator number in this process */
	uint32_t cards_per_node;
	uint32_t card_base; /* the daemon's --card-base: this node's first card in the job */
	int32_t gdev;	    /* dev + card_base: the card's number in the job */
	char group[HCCL_ROOT_IDENTIFIER_LEN];
	int32_t devs[HCCL_MAX_RANKS];
	uint64_t bufs[HCCL_MAX_RANKS];
	rtNotify_t mine[HCCL_MAX_RANKS];   /* peer p records, I wait */
	rtNotify_t theirs[HCCL_MAX_RANKS]; /* I record, peer p waits */
	void *buf;
};

/* One op being issued: what every task report of it carries. */
struct hccl_run {
	struct hccl_comm *c;
	rtStream_t stream;
	uint64_t group_hash;
	uint64_t name_hash[4];
	uint32_t dtype, redop;
	uint32_t tasks, first_task, last_task, stream_id;
	HcclResult err;
};

enum { T_RECORD, T_WAIT, T_MEMCPY, T_REDUCE };
static const char *const task_names[] = { "Notify_Record", "Notify_Wait", "Memcpy",
					  "Reduce_Inline" };

static _Atomic uint32_t hccl_nr_comms, hccl_nr_roots;

static uint64_t hash_of(const char *s)
{
	return MsprofGetHashId(s, strlen(s));
}

static uint32_t env_rank_seq(const char *name, uint32_t rank, uint32_t *seq)
{
	const char *v = getenv(name);
	unsigned int r, n;

	if (!v || sscanf(v, "%u:%u", &r, &n) != 2 || r != rank)
		return 0;
	*seq = n;
	return 1;
}

/*
 * cards_per_node and card_base of the daemon (npu_model_info): the link type
 * of a pair, and this node's cards' numbers in a job of several daemons.
 */
static void read_node_info(uint32_t *per, uint32_t *base)
{
	const char *dir = getenv(NPU_MODEL_DEV_DIR_ENV);
	char path[512], line[128];
	unsigned int v;
	FILE *f;

	*per = *base = 0;
	snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : NPU_MODEL_DEV_DIR_DEFAULT,
		 NPU_MODEL_INFO_NAME);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "cards_per_node=%u", &v) == 1)
			*per = v;
		else if (sscanf(line, "card_base=%u", &v) == 1)
			*base = v;
	}
	fclose(f);
}

static int link_of(const struct hccl_comm *c, uint32_t peer)
{
	uint32_t per = c->cards_per_node ? c->cards_per_node : 1u << 30;

	if (c->devs[peer] == c->gdev)
		return 0;							 /* OnChip */
	return (uint32_t)c->devs[peer] / per == (uint32_t)c->gdev / per ? 1 : 3; /* HCCS : RoCE */
}

static struct hccl_comm *comm_of(HcclComm comm)
{
	struct hccl_comm *c = comm;

	return c && c->magic == HCCL_COMM_MAGIC ? c : NULL;
}

/* The `api` journal line of an exported Hccl* call (layer hccl), and its result. */
static HcclResult api_ret(const char *name, unsigned long long t0, HcclResult r)
{
	NPU_API_EXIT_AS(name, t0, "hccl", r, "");
	return r;
}

/* ---- communicator ---------------------------------------------------------------------- */

NPU_NOINLINE HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo)
{
	NPU_API_ENTER();
	HcclRootHandle *h = (HcclRootHandle *)rootInfo;
	struct timespec ts;
	int32_t dev = 0;

	if (!rootInfo)
		return api_ret(__func__, npu_api_t0, HCCL_E_PTR);
	if (rtGetDevice(&dev))
		dev = 0; /* a launcher that uses no card (the identifier only names it) */
	clock_gettime(CLOCK_REALTIME, &ts);
	memset(rootInfo, 0, sizeof(*rootInfo));
	snprintf(h->ip, sizeof(h->ip), "127.0.0.1");
	/* a port per root info: identifiers made in the same microsecond still differ */
	h->port = 60000 + ((uint32_t)getpid() * 16 + atomic_fetch_add(&hccl_nr_roots, 1)) % 5000;
	h->nicDeploy = 1;
	snprintf(h->identifier, sizeof(h->identifier), "%s_%u_%d_%llu", h->ip, h->port, dev,
		 (unsigned long long)ts.tv_sec * 1000000ull +
			 (unsigned long long)ts.tv_nsec / 1000);
	return api_ret(__func__, npu_api_t0, HCCL_SUCCESS);
}

static struct hccl_shm *shm_attach(const char *group, int *created_name, char *name, size_t len)
{
	struct hccl_shm *m;
	size_t i, o;
	int fd;

	o = (size_t)snprintf(name, len, "/npu_hccl.%u.", (unsigned int)getuid());
	for (i = 0; group[i] && o + 1 < len; i++)
		name[o++] = (group[i] >= '0' && group[i] <= '9') ||
					    (group[i] >= 'a' && group[i] <= 'z') ||
					    (group[i] >= 'A' && group[i] <= 'Z') ?
				    group[i] :
				    '_';
	name[o] = '\0';
	fd = shm_open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, sizeof(*m))) {
		close(fd);
		return NULL;
	}
	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	*created_name = 1;
	return m == MAP_FAILED ? NULL : m;
}

static uint64_t connect_timeout_ns(void)
{
	const char *v = getenv("HCCL_CONNECT_TIMEOUT");
	long s = v ? strtol(v, NULL, 10) : 0;

	return (uint64_t)(s > 0 ? s : 120) * 1000000000ull;
}

/* Publishes this rank in the table and waits for every rank; HCCL_SUCCESS or an error. */
static HcclResult rendezvous(struct hccl_comm *c)
{
	char name[192];
	int named = 0;
	struct hccl_shm *m = shm_attach(c->group, &named, name, sizeof(name));
	struct hccl_slot *me;
	uint64_t t0 = npu_now_ns();
	uint32_t p;
	HcclResult ret = HCCL_SUCCESS;

	if (!m)
		return HCCL_E_SYSCALL;
	me = &m->slot[c->rank];
	c->gdev = c->dev + (int32_t)c->card_base;
	/* the peers see the job's numbers: the card and its buffer's VA on it */
	me->dev = c->gdev;
	me->pid = (int32_t)getpid();
	me->buf = (uint64_t)(uintptr_t)c->buf + (uint64_t)c->card_base * NPU_VA_PER_CARD;
	for (p = 0; p < c->nranks; p++) {
		uint32_t id = 0;

		if (p != c->rank &&
		    (rtNotifyCreate(c->dev, &c->mine[p]) || rtGetNotifyID(c->mine[p], &id))) {
			ret = HCCL_E_RUNTIME;
			goto out;
		}
		me->notify[p] = id;
	}
	atomic_store(&me->ready, 1);
	for (p = 0; p < c->nranks; p++) {
		while (!atomic_load(&m->slot[p].ready)) {
			if (npu_now_ns() - t0 > connect_timeout_ns()) {
				fprintf(stderr,
					"hccl: rank %u of %s: rank %u did not join within "
					"HCCL_CONNECT_TIMEOUT\n",
					c->rank, c->group, p);
				ret = HCCL_E_TIMEOUT;
				goto out;
			}
			usleep(1000);
		}
	}
	for (p = 0; p < c->nranks; p++) {
		char nn[64];

		c->devs[p] = m->slot[p].dev;
		c->bufs[p] = m->slot[p].buf;
		if (p == c->rank)
			continue;
		snprintf(nn, sizeof(nn), "npu_notify_%d_%u", m->slot[p].dev,
			 m->slot[p].notify[c->rank]);
		if (rtIpcOpenNotify(&c->theirs[p], nn)) {
			ret = HCCL_E_RUNTIME;
			goto out;
		}
	}
out:
	/* the last rank to read the table removes its name */
	if (atomic_fetch_add(&m->attached, 1) + 1 == c->nranks || ret)
		shm_unlink(name);
	munmap(m, sizeof(*m));
	return ret;
}

static void comm_free(struct hccl_comm *c)
{
	uint32_t p;

	for (p = 0; p < HCCL_MAX_RANKS; p++) {
		if (c->mine[p])
			rtNotifyDestroy(c->mine[p]);
		if (c->theirs[p])
			rtNotifyDestroy(c->theirs[p]);
	}
	if (c->buf)
		rtFree(c->buf);
	c->magic = 0;
	free(c);
}

static void journal_comm(const struct hccl_comm *c, uint64_t t0, HcclResult ret)
{
	char ranks[HCCL_MAX_RANKS * 4 + 1] = "";
	size_t o = 0;
	uint32_t p;

	if (!npu_journal_on)
		return;
	for (p = 0; !ret && p < c->nranks && o + 5 < sizeof(ranks); p++)
		o += (size_t)snprintf(ranks + o, sizeof(ranks) - o, "%s%d", p ? "," : "",
				      c->devs[p]);
	npu_journal_write("hccl_comm",
			  "tid=%d\tt0=%llu\tt1=%llu\tret=%d\tgroup=%s\tcomm=%p\t"
			  "rank=%u\tnranks=%u\tdev=%d\tkind=%s\tranks=%s",
			  npu_tid(), (unsigned long long)t0, (unsigned long long)npu_now_ns(),
			  (int)ret, c->group, ret ? NULL : (const void *)c, c->rank, c->nranks,
			  c->dev, c->cluster ? "cluster" : "rootinfo", o ? ranks : "-");
}

static HcclResult comm_init(const char *group, uint32_t nranks, uint32_t rank, int cluster,
			    HcclComm *comm)
{
	uint64_t t0 = npu_now_ns();
	struct hccl_comm *c;
	HcclResult ret;

	if (!comm || !group)
		return HCCL_E_PTR;
	if (nranks < 1 || nranks > HCCL_MAX_RANKS || rank >= nranks)
		return HCCL_E_PARA;
	c = calloc(1, sizeof(*c));
	if (!c)
		return HCCL_E_MEMORY;
	c->magic = HCCL_COMM_MAGIC;
	c->rank = rank;
	c->nranks = nranks;
	c->cluster = cluster;
	snprintf(c->group, sizeof(c->group), "%s", group);
	read_node_info(&c->cards_per_node, &c->card_base);
	if (rtGetDevice(&c->dev) || rtMalloc(&c->buf, HCCL_BUF_BYTES, RT_MEMORY_HBM, 0))
		ret = HCCL_E_RUNTIME;
	else
		ret = rendezvous(c);
	journal_comm(c, t0, ret);
	if (ret) {
		comm_free(c);
		return ret;
	}
	c->index = atomic_fetch_add(&hccl_nr_comms, 1);
	*comm = c;
	return HCCL_SUCCESS;
}

NPU_NOINLINE HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo,
					     uint32_t rank, HcclComm *comm)
{
	NPU_API_ENTER();
	const HcclRootHandle *h = (const HcclRootHandle *)rootInfo;
	char group[HCCL_ROOT_IDENTIFIER_LEN];

	if (!rootInfo)
		return api_ret(__func__, npu_api_t0, HCCL_E_PTR);
	memcpy(group, h->identifier, sizeof(group));
	group[sizeof(group) - 1] = '\0';
	if (!group[0])
		return api_ret(__func__, npu_api_t0, HCCL_E_PARA);
	return api_ret(__func__, npu_api_t0, comm_init(group, nRanks, rank, 0, comm));
}

/*
 * The rank table's ranks: the number of "rank_id" keys.  The rendezvous is
 * named after the table's path, so ranks of different tables do not meet.
 */
NPU_NOINLINE HcclResult HcclCommInitClusterInfo(const char *clusterInfo, uint32_t rank,
						HcclComm *comm)
{
	NPU_API_ENTER();
	char buf[65536], *p, key[HCCL_ROOT_IDENTIFIER_LEN], real[4096];
	uint32_t n = 0;
	size_t len;
	FILE *f;

	if (!clusterInfo || !comm)
		return api_ret(__func__, npu_api_t0, HCCL_E_PTR);
	f = fopen(clusterInfo, "re");
	if (!f)
		return api_ret(__func__, npu_api_t0, HCCL_E_OPEN_FILE_FAILURE);
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	for (p = buf; (p = strstr(p, "\"rank_id\"")); p++)
		n++;
	if (!realpath(clusterInfo, real))
		return api_ret(__func__, npu_api_t0, HCCL_E_OPEN_FILE_FAILURE);
	snprintf(key, sizeof(key), "%s_%016llx", HCCL_WORLD_GROUP,
		 (unsigned long long)hash_of(real));
	{
		HcclResult r = comm_init(key, n, rank, 1, comm);
		struct hccl_comm *c = r ? NULL : comm_of(*comm);

		if (c)
			snprintf(c->group, sizeof(c->group), "%s", HCCL_WORLD_GROUP);
		return api_ret(__func__, npu_api_t0, r);
	}
}

NPU_NOINLINE HcclResult HcclCommDestroy(HcclComm comm)
{
	NPU_API_ENTER();
	struct hccl_comm *c = comm_of(comm);

	if (!c)
		return api_ret(__func__, npu_api_t0, HCCL_E_PARA);
	comm_free(c);
	return api_ret(__func__, npu_api_t0, HCCL_SUCCESS);
}

NPU_NOINLINE HcclResult HcclGetRankSize(HcclComm comm, uint32_t *rankSize)
{
	NPU_API_ENTER();
	struct hccl_comm *c = comm_of(comm);

	if (!c || !rankSize)
		return api_ret(__func__, npu_api_t0, !c ? HCCL_E_PARA : HCCL_E_PTR);
	*rankSize = c->nranks;
	return api_ret(__func__, npu_api_t0, HCCL_SUCCESS);
}

NPU_NOINLINE HcclResult HcclGetRankId(HcclComm comm, uint32_t *rank)
{
	NPU_API_ENTER();
	struct hccl_comm *c = comm_of(comm);

	if (!c || !rank)
		return api_ret(__func__, npu_api_t0, !c ? HCCL_E_PARA : HCCL_E_PTR);
	*rank = c->rank;
	return api_ret(__func__, npu_api_t0, HCCL_SUCCESS);
}

NPU_NOINLINE HcclResult HcclGetCommName(HcclComm comm, char *commName)
{
	NPU_API_ENTER();
	struct hccl_comm *c = comm_of(comm);

	if (!c || !commName)
		return api_ret(__func__, npu_api_t0, !c ? HCCL_E_PARA : HCCL_E_PTR);
	memcpy(commName, c->group, HCCL_ROOT_IDENTIFIER_LEN);
	return api_ret(__func__, npu_api_t0, HCCL_SUCCESS);
}

/* ---- tasks ------------------------------------------------------------------------------ */

static void report(struct hccl_run *r, int kind, uint32_t peer, uint64_t src, uint64_t dst,
		   uint64_t bytes, uint32_t plane)
{
	struct MsprofAdditionalInfo ai;
	struct MsprofHcclInfo *h = (struct MsprofHcclInfo *)ai.data;
	int link = link_of(r->c, peer);

	memset(&ai, 0, sizeof(ai));
	ai.magicNumber = MSPROF_REPORT_DATA_MAGIC_NUM;
	ai.level = MSPROF_REPORT_HCCL_NODE_LEVEL;
	ai.type = HCCL_REPORT_TYPE;
	ai.threadId = (uint32_t)npu_tid();
	ai.dataLen = sizeof(*h);
	ai.timeStamp = npu_now_ns();
	h->itemId = r->name_hash[kind];
	h->groupName = r->group_hash;
	h->localRank = r->c->rank;
	h->remoteRank = peer;
	h->rankSize = r->c->nranks;
	h->planeID = plane;
	h->notifyID = kind <= T_WAIT ? (uint64_t)(peer) : UINT64_MAX;
	h->role = kind == T_RECORD ? 1 : 0;
	h->srcAddr = src;
	h->dstAddr = dst;
	h->dataSize = bytes;
	h->opType = r->redop;
	h->dataType = r->dtype;
	h->linkType = (uint32_t)link;
	h->transportType = link == 3 ? 1 : link == 0 ? 2 : 0;
	MsprofReportAdditionalInfo(0, &ai, sizeof(ai));
}

static void task_done(struct hccl_run *r, rtError_t e)
{
	uint32_t task = 0, stream = 0;

	if (e) {
		if (!r->err)
			r->err = HCCL_E_RUNTIME;
		return;
	}
	rtGetTaskIdAndStreamID(&task, &stream);
	if (!r->tasks++)
		r->first_task = task & 0xffff;
	r->last_task = task & 0xffff;
	r->stream_id = stream;
}

static uint32_t plane_of(const struct hccl_comm *c, uint32_t peer)
{
	return peer < c->rank ? peer : peer - 1;
}

static void t_record(struct hccl_run *r, uint32_t peer)
{
	report(r, T_RECORD, peer, 0, 0, 0, plane_of(r->c, peer));
	task_done(r, rtNotifyRecord(r->c->theirs[peer], r->stream));
}

static void t_wait(struct hccl_run *r, uint32_t peer)
{
	report(r, T_WAIT, peer, 0, 0, 0, plane_of(r->c, peer));
	task_done(r, rtNotifyWait(r->c->mine[peer], r->stream));
}

/* Pulls `bytes` from the peer's buffer into ours (push: the other way). */
static void t_copy(struct hccl_run *r, uint32_t peer, uint64_t bytes, int reduce, int push)
{
	struct hccl_comm *c = r->c;
	uint64_t mine = c->bufs[c->rank], theirs = c->bufs[peer]; /* job VAs: link.c */
	uint64_t src = push ? mine : theirs, dst = push ? theirs : mine;

	report(r, reduce ? T_REDUCE : T_MEMCPY, peer, src, dst, bytes, plane_of(c, peer));
	if (reduce)
		task_done(r, rtReduceAsync((void *)(uintptr_t)dst, bytes, (void *)(uintptr_t)src,
					   bytes, (int32_t)r->redop, (int32_t)r->dtype, r->stream));
	else
		task_done(r, rtMemcpyAsync((void *)(uintptr_t)dst, bytes, (void *)(uintptr_t)src,
					   bytes, RT_MEMCPY_DEVICE_TO_DEVICE, r->stream));
}

static void sync_all(struct hccl_run *r)
{
	uint32_t p;

	for (p = 0; p < r->c->nranks; p++)
		if (p != r->c->rank)
			t_record(r, p);
	for (p = 0; p < r->c->nranks; p++)
		if (p != r->c->rank)
			t_wait(r, p);
}

static void copy_all(struct hccl_run *r, uint64_t bytes, int reduce)
{
	uint32_t p;

	for (p = 0; p < r->c->nranks; p++)
		if (p != r->c->rank)
			t_copy(r, p, bytes, reduce, 0);
}

/* ---- ops -------------------------------------------------------------------------------- */

enum hop {
	OP_ALLREDUCE,
	OP_BROADCAST,
	OP_ALLGATHER,
	OP_REDUCESCATTER,
	OP_REDUCE,
	OP_ALLTOALL,
	OP_ALLTOALLV,
	OP_SEND,
	OP_RECV,
	OP_BARRIER
};
static const char *const op_api[] = { "HcclAllReduce",	   "HcclBroadcast", "HcclAllGather",
				      "HcclReduceScatter", "HcclReduce",    "HcclAlltoAll",
				      "HcclAlltoAllV",	   "HcclSend",	    "HcclRecv",
				      "HcclBarrier" };
static const char *const op_msprof[] = { "allReduce", "broadcast", "allGather", "reduceScatter",
					 "reduce",    "alltoall",  "alltoallv", "send",
					 "receive",   "barrier" };

struct op_args {
	enum hop op;
	uint64_t count; /* the prototype's count */
	uint32_t dtype;
	int32_t redop, root, peer;
	const uint64_t *counts; /* AlltoAllV recvCounts */
};

static void journal_fault(const struct hccl_comm *c, uint32_t seq, const char *fault)
{
	if (!npu_journal_on)
		return;
	npu_journal_write("hccl_fault", "tid=%d\tt=%llu\trank=%u\tseq=%u\tfault=%s", npu_tid(),
			  (unsigned long long)npu_now_ns(), c->rank, seq, fault);
	npu_journal_flush(); /* the process may never write again */
}

static void fault_point(const struct hccl_comm *c, uint32_t seq)
{
	uint32_t at;

	if (c->index)
		return;
	if (env_rank_seq("NPU_MODEL_HCCL_HANG", c->rank, &at) && at == seq) {
		journal_fault(c, seq, "hang");
		for (;;)
			pause();
	}
	if (env_rank_seq("NPU_MODEL_HCCL_DIE", c->rank, &at) && at == seq) {
		journal_fault(c, seq, "die");
		raise(SIGKILL);
	}
}

/* The bytes this rank sends in the op (JOURNAL.md "HCCL"). */
static uint64_t op_bytes(const struct hccl_comm *c, const struct op_args *a, uint32_t sz)
{
	uint64_t b = 0;
	uint32_t p;

	if (a->op != OP_ALLTOALLV)
		return a->op == OP_BARRIER ? 0 : a->count * sz;
	for (p = 0; a->counts && p < c->nranks; p++)
		b += a->counts[p] * sz;
	return b;
}

static void issue(struct hccl_run *r, const struct op_args *a, uint32_t sz)
{
	struct hccl_comm *c = r->c;
	uint64_t chunk = (a->count * sz + c->nranks - 1) / c->nranks;
	uint32_t p;

	switch (a->op) {
	case OP_ALLREDUCE:
		sync_all(r);
		copy_all(r, chunk, 1);
		sync_all(r);
		copy_all(r, chunk, 0);
		break;
	case OP_ALLGATHER:
	case OP_ALLTOALL:
		sync_all(r);
		copy_all(r, a->count * sz, 0);
		break;
	case OP_REDUCESCATTER:
		sync_all(r);
		copy_all(r, a->count * sz, 1);
		break;
	case OP_ALLTOALLV:
		sync_all(r);
		for (p = 0; p < c->nranks; p++)
			if (p != c->rank)
				t_copy(r, p, a->counts ? a->counts[p] * sz : 0, 0, 0);
		break;
	case OP_BROADCAST:
		sync_all(r);
		if (c->rank != (uint32_t)a->root)
			t_copy(r, (uint32_t)a->root, a->count * sz, 0, 0);
		break;
	case OP_REDUCE:
		sync_all(r);
		if (c->rank == (uint32_t)a->root)
			copy_all(r, a->count * sz, 1);
		break;
	case OP_SEND:
		t_record(r, (uint32_t)a->peer);
		t_wait(r, (uint32_t)a->peer);
		t_copy(r, (uint32_t)a->peer, a->count * sz, 0, 1);
		t_record(r, (uint32_t)a->peer);
		return;
	case OP_RECV:
		t_record(r, (uint32_t)a->peer);
		t_wait(r, (uint32_t)a->peer);
		t_wait(r, (uint32_t)a->peer);
		return;
	case OP_BARRIER:
		break;
	}
	sync_all(r);
}

static HcclResult run_op(HcclComm comm, rtStream_t stream, const struct op_args *a)
{
	struct hccl_comm *c = comm_of(comm);
	uint64_t t0 = npu_now_ns();
	struct hccl_run r;
	uint32_t sz = a->op == OP_BARRIER ? 1 : hccl_dtype_size(a->dtype), seq, i;
	char name[96];

	if (!c || !stream)
		return HCCL_E_PARA;
	if (!sz || (a->op == OP_ALLTOALLV && !a->counts))
		return HCCL_E_PARA;
	if (((a->op == OP_BROADCAST || a->op == OP_REDUCE) && (uint32_t)a->root >= c->nranks) ||
	    ((a->op == OP_SEND || a->op == OP_RECV) &&
	     ((uint32_t)a->peer >= c->nranks || (uint32_t)a->peer == c->rank)))
		return HCCL_E_PARA;
	seq = c->seq++;
	fault_point(c, seq);
	memset(&r, 0, sizeof(r));
	r.c = c;
	r.stream = stream;
	r.dtype = a->dtype;
	r.redop = a->redop < 0 ? UINT32_MAX : (uint32_t)a->redop;
	/* asked every op, so a profiler that attaches late still learns the names */
	r.group_hash = hash_of(c->group);
	for (i = 0; i < 4; i++)
		r.name_hash[i] = hash_of(task_names[i]);
	if (c->nranks > 1)
		issue(&r, a, sz);
	snprintf(name, sizeof(name), "hcom_%s__%llu_%u_1", op_msprof[a->op],
		 (unsigned long long)(r.group_hash % 1000), seq);
	if (npu_journal_on)
		npu_journal_write("hccl",
				  "tid=%d\tt0=%llu\tt1=%llu\tret=%d\trank=%u\tnranks=%u\t"
				  "group=%s\tcomm=%p\tseq=%u\top=%s\tname=%s\tcount=%llu\t"
				  "dtype=%u\tbytes=%llu\tstream=%p\tstream_id=%u\tdev=%d\t"
				  "tasks=%u\tfirst_task=%u\tlast_task=%u\troot=%d\tpeer=%d\t"
				  "redop=%d",
				  npu_tid(), (unsigned long long)t0,
				  (unsigned long long)npu_now_ns(), (int)r.err, c->rank, c->nranks,
				  c->group, (void *)c, seq, op_api[a->op], name,
				  (unsigned long long)a->count, a->dtype,
				  (unsigned long long)op_bytes(c, a, sz), stream, r.stream_id,
				  c->dev, r.tasks, r.first_task, r.last_task, a->root, a->peer,
				  a->redop);
	return r.err;
}

NPU_NOINLINE HcclResult HcclAllReduce(void *sendBuf, void *recvBuf, uint64_t count,
				      HcclDataType dataType, HcclReduceOp op, HcclComm comm,
				      aclrtStream stream)
{
	NPU_API_ENTER();
	struct op_args a = { OP_ALLREDUCE, count, dataType, op, -1, -1, NULL };

	if (!sendBuf || !recvBuf)
		return api_ret(__func__, npu_api_t0, HCCL_E_PTR);
	return api_ret(__func__, npu_api_t0, run_op(comm, stream, &a));
}

NPU_NOINLINE HcclResult HcclBroadcast(void *buf, uint64_t count, HcclDataType dataType,
				      uint32_t root, HcclComm comm, aclrtStream stream)
{
	NPU_API_ENTER();
	struct op_args a = { OP_BROADCAST, count, dataType, -1, (int32_t)root, -1, NULL };

	if (!buf)
		return api_ret(__func__, npu_api_t0, HCCL_E_PTR);
	return api_ret(__func__, npu_api_t0, run_op(comm, stream, &a));
}

NPU_NOINLINE HcclResult HcclReduceScatter(void *sendBuf, void *recvBuf, uint64_t recvCount,
					  HcclDataType dataType, HcclReduceOp op, HcclComm comm,
					  aclrtStream stream)
{
	NPU_API_ENTER();
	struct op_args a = { OP_REDUCESCATTER, recvCount, dataType, op, -1, -1, NULL };

	if (!sendBuf || !recvBuf)
		return api_ret(__func__, npu_api_t0, HCCL_E_PTR);
	return api_ret(__func__, npu_api_t0, run_op(comm, stream, &a));
}

NPU_NOINLINE HcclResult HcclAllGather(void *sendBuf, void *recvBuf, uint64_t sendCount,
				      HcclDataType dataType, HcclComm comm, aclrtStream stream)
{
	NPU_API_ENTER();
	struct op_args a = { OP_ALLGATHER, sendCount, dataType, -1, -1, -1, NULL };

	if (!sendBuf || !recvBuf)
		return api_ret(__func__, npu_api_t0, HCCL_E_PTR);
	return api_ret(__func__, npu_api_t0, run_op(comm, stream, &a));
}

NPU_NOINLINE HcclResult HcclReduce(void *sendBuf, void *recvBuf, uint64_t count,
				   HcclDataType dataType, HcclReduceOp op, uint32_t root,
				   HcclComm comm, aclrtStream stream)
{
	NPU_API_ENTER();
	struct op_args a = { OP_REDUCE, count, dataType, op, (int32_t)root, -1, NULL };

	if (!sendBuf || !recvBuf)
		return api_ret(__func__, npu_api_t0, HCCL_E_PTR);
	return api_ret(__func__, npu_api_t0, run_op(comm, stream, &a));
}

NPU_NOINLINE HcclResult HcclAlltoAll(const void *sendBuf, uint64_t sendCount, HcclDataType sendType,
				     const void *recvBuf, uint64_t recvCount, HcclDataType recvType,
				     HcclComm comm, aclrtStream stream)
{
	NPU_API_ENTER();
	struct op_args a = { OP_ALLTOALL, sendCount, sendType, -1, -1, -1, NULL };

	(void)recvCount;
	(void)recvType;
	if (!sendBuf || !recvBuf)
		return api_ret(__func__, npu_api_t0, HCCL_E_PTR);
	return api_ret(__func__, npu_api_t0, run_op(comm, stream, &a));
}

NPU_NOINLINE HcclResult HcclAlltoAllV(const void *sendBuf, const void *sendCounts,
				      const void *sdispls, HcclDataType sendType,
				      const void *recvBuf, const void *recvCounts,
				      const void *rdispls, HcclDataType recvType, HcclComm comm,
				      aclrtStream stream)
{
	NPU_API_ENTER();
	struct op_args a = { OP_ALLTOALLV, 0, sendType, -1, -1, -1, recvCounts };

	(void)sendCounts;
	(void)sdispls;
	(void)rdispls;
	(void)recvType;
	if (!sendBuf || !recvBuf || !sendCounts || !recvCounts)
		return api_ret(__func__, npu_api_t0, HCCL_E_PTR);
	return api_ret(__func__, npu_api_t0, run_op(comm, stream, &a));
}

NPU_NOINLINE HcclResult HcclSend(void *sendBuf, uint64_t count, HcclDataType dataType,
				 uint32_t destRank, HcclComm comm, aclrtStream stream)
{
	NPU_API_ENTER();
	struct op_args a = { OP_SEND, count, dataType, -1, -1, (int32_t)destRank, NULL };

	if (!sendBuf)
		return api_ret(__func__, npu_api_t0, HCCL_E_PTR);
	return api_ret(__func__, npu_api_t0, run_op(comm, stream, &a));
}

NPU_NOINLINE HcclResult HcclRecv(void *recvBuf, uint64_t count, HcclDataType dataType,
				 uint32_t srcRank, HcclComm comm, aclrtStream stream)
{
	NPU_API_ENTER();
	struct op_args a = { OP_RECV, count, dataType, -1, -1, (int32_t)srcRank, NULL };

	if (!recvBuf)
		return api_ret(__func__, npu_api_t0, HCCL_E_PTR);
	return api_ret(__func__, npu_api_t0, run_op(comm, stream, &a));
}

NPU_NOINLINE HcclResult HcclBarrier(HcclComm comm, aclrtStream stream)
{
	NPU_API_ENTER();
	struct op_args a = { OP_BARRIER, 0, HCCL_DATA_TYPE_INT8, -1, -1, -1, NULL };

	return api_ret(__func__, npu_api_t0, run_op(comm, stream, &a));
}
