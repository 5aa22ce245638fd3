// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * link.c - what lets the cards of one daemon talk to each other: notifies
 * (rtNotifyRecord on any card, rtNotifyWait on the notify's own card) and
 * the link model that times copies and notify records between cards.
 *
 * Notifies.  A notify is (card, id) with the id from
 * halResourceIdAlloc(DRV_NOTIFY_ID); its global key is card << 16 | id.  A
 * notify counts: the k-th wait submitted on it is satisfied by the k-th
 * record completed on it (from any card), at that record's end.  HCCL gives
 * every rank one notify per peer, so the records and waits of a pair pair up
 * in order.  The table is shared by all cards under md_notify_lock, which is
 * taken inside a card's lock and never the other way round; a record that
 * completes kicks the notify's card so a blocked wait is looked at again.
 *
 * Links.  Cards [k * cards_per_node, (k + 1) * cards_per_node) are node k:
 * within a node HCCS, between nodes RDMA (RoCE), each with a bandwidth and a
 * latency; --slow-link A-B:K multiplies the time of the pair by K.
 *
 * Nodes as daemons.  With --card-base B --fabric FILE a daemon is one node
 * of a job: its card i is card B + i of the job in every key and link type,
 * and the notify table lives in FILE (MAP_SHARED, made by whichever daemon
 * comes first; a zeroed table is a valid one), locked by a spin lock in the
 * file, so a record on one daemon satisfies a wait on another.  A remote
 * record cannot kick a local card: a card blocked on a notify looks again
 * every MD_FABRIC_POLL_NS (sched.c).  Times are CLOCK_MONOTONIC, the one
 * clock all daemons on this machine share: the job's true time.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "modeld.h"

#define MD_NOTIFY_IDS 1024 /* id_max[DRV_NOTIFY_ID] in sched.c */

#define MD_FABRIC_CARDS NPU_MODEL_MAX_CARDS /* cards of all the job's daemons */

struct md_fabric_hdr {
	_Atomic uint32_t lock;
	uint32_t reserved[15];
};

static pthread_mutex_t md_notify_lock = PTHREAD_MUTEX_INITIALIZER;
static struct md_fabric_hdr *md_fabric; /* NULL: the table is this daemon's own */
static struct md_notify *md_notify_tab; /* cards * MD_NOTIFY_IDS, by job card */
static uint32_t md_notify_cards;

static void tab_lock(void)
{
	if (!md_fabric) {
		pthread_mutex_lock(&md_notify_lock);
		return;
	}
	while (atomic_exchange_explicit(&md_fabric->lock, 1, memory_order_acquire))
		sched_yield();
}

static void tab_unlock(void)
{
	if (!md_fabric)
		pthread_mutex_unlock(&md_notify_lock);
	else
		atomic_store_explicit(&md_fabric->lock, 0, memory_order_release);
}

uint32_t md_gcard(const struct md_card *c)
{
	return md_cfg.card_base + c->index;
}

int md_fabric_on(void)
{
	return md_fabric != NULL;
}

static int fabric_map(const char *path)
{
	size_t size = sizeof(*md_fabric) +
		      (size_t)MD_FABRIC_CARDS * MD_NOTIFY_IDS * sizeof(*md_notify_tab);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	struct stat st;
	void *p;

	if (fd < 0)
		return -errno;
	/* the first daemon sizes it; a later one finds it sized (never shrunk) */
	if (fstat(fd, &st) || (st.st_size < (off_t)size && ftruncate(fd, (off_t)size))) {
		int err = -errno;

		close(fd);
		return err;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	md_fabric = p;
	md_notify_tab = (struct md_notify *)(md_fabric + 1);
	md_notify_cards = MD_FABRIC_CARDS;
	return 0;
}

int md_link_init(uint32_t cards)
{
	if (md_cfg.fabric)
		return fabric_map(md_cfg.fabric);
	md_notify_tab = calloc((size_t)cards * MD_NOTIFY_IDS, sizeof(*md_notify_tab));
	if (!md_notify_tab)
		return -ENOMEM;
	md_notify_cards = cards;
	return 0;
}

static struct md_notify *notify_at(uint32_t key)
{
	uint32_t card = key >> 16, id = key & 0xffff;

	if (!md_notify_tab || card >= md_notify_cards || id >= MD_NOTIFY_IDS)
		return NULL;
	return &md_notify_tab[(size_t)card * MD_NOTIFY_IDS + id];
}

int md_notify_valid(uint32_t key)
{
	return notify_at(key) != NULL;
}

void md_notify_reset(uint32_t card, uint32_t id)
{
	struct md_notify *n = notify_at(card << 16 | id);

	if (!n)
		return;
	tab_lock();
	memset(n, 0, sizeof(*n));
	tab_unlock();
}

uint64_t md_notify_add_wait(uint32_t key)
{
	struct md_notify *n = notify_at(key);
	uint64_t k;

	if (!n)
		return 0;
	tab_lock();
	k = ++n->waits;
	tab_unlock();
	return k;
}

int md_notify_done(uint32_t key, uint64_t k, uint64_t *when)
{
	struct md_notify *n = notify_at(key);
	int done = 0;

	if (!n)
		return 1;
	tab_lock();
	if (n->records >= k) {
		done = 1;
		*when = n->rec_ns[k % MD_NOTIFY_RING];
		/* so far behind that the ring lost it: it was long ago */
		if (n->records - k >= MD_NOTIFY_RING)
			*when = 0;
	}
	tab_unlock();
	return done;
}

void md_notify_record(uint32_t key, uint64_t end_ns)
{
	struct md_notify *n = notify_at(key);

	if (!n)
		return;
	tab_lock();
	n->records++;
	n->rec_ns[n->records % MD_NOTIFY_RING] = end_ns;
	tab_unlock();
	/* a local card is kicked; a remote daemon's card polls (sched.c) */
	if (md_cards && (key >> 16) >= md_cfg.card_base &&
	    (key >> 16) - md_cfg.card_base < md_cfg.cards)
		md_card_kick(&md_cards[(key >> 16) - md_cfg.card_base]);
}

/* ---- link model --------------------------------------------------------------------- */

int md_card_of_va(uint64_t va)
{
	if (va < NPU_VA_BASE)
		return -1;
	va = (va - NPU_VA_BASE) >> 40;
	return va < (md_fabric ? MD_FABRIC_CARDS : md_cfg.cards) ? (int)va : -1;
}

int md_link_type(uint32_t a, uint32_t b)
{
	uint32_t per = md_cfg.cards_per_node ? md_cfg.cards_per_node : md_cfg.cards;

	if (a == b)
		return MD_LINK_LOCAL;
	return a / per == b / per ? MD_LINK_HCCS : MD_LINK_RDMA;
}

const char *md_link_name(int type)
{
	return type == MD_LINK_HCCS  ? "HCCS" :
	       type == MD_LINK_RDMA  ? "ROCE" :
	       type == MD_LINK_LOCAL ? "LOCAL" :
				       "-";
}

static uint64_t slow_factor(uint32_t a, uint32_t b)
{
	uint32_t i;

	for (i = 0; i < md_cfg.nr_slow_links; i++) {
		const struct md_slow_link *s = &md_cfg.slow_links[i];

		if ((s->a == a && s->b == b) || (s->a == b && s->b == a))
			return s->factor;
	}
	return 1;
}

uint64_t md_link_ns(uint32_t a, uint32_t b, uint64_t bytes)
{
	int type = md_link_type(a, b);
	uint64_t bw, lat, ns;

	if (type == MD_LINK_LOCAL)
		return md_cfg.card.launch_latency_ns +
		       npu_cost_copy_ns(&md_cfg.card, bytes, NPU_COPY_D2D);
	bw = type == MD_LINK_HCCS ? md_cfg.hccs_bytes_per_s : md_cfg.rdma_bytes_per_s;
	lat = type == MD_LINK_HCCS ? md_cfg.hccs_lat_ns : md_cfg.rdma_lat_ns;
	ns = lat + (uint64_t)((unsigned __int128)bytes * 1000000000u / (bw ? bw : 1));
	return ns * slow_factor(a, b);
}

int md_link_parse(const char *spec)
{
	char *copy = strdup(spec), *tok, *save = NULL, *end;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		double v;

		if (!eq) {
			err = -EINVAL;
			break;
		}
		*eq = '\0';
		v = strtod(eq + 1, &end);
		if (*end || !(v > 0)) {
			err = -EINVAL;
			break;
		}
		if (!strcmp(tok, "hccs_gbps"))
			md_cfg.hccs_bytes_per_s = (uint64_t)(v * 1e9);
		else if (!strcmp(tok, "rdma_gbps"))
			md_cfg.rdma_bytes_per_s = (uint64_t)(v * 1e9);
		else if (!strcmp(tok, "hccs_us"))
			md_cfg.hccs_lat_ns = (uint64_t)(v * 1e3);
		else if (!strcmp(tok, "rdma_us"))
			md_cfg.rdma_lat_ns = (uint64_t)(v * 1e3);
		else
			err = -EINVAL;
	}
	free(copy);
	return err;
}

int md_slow_link_parse(const char *spec)
{
	unsigned int a, b, k;
	char tail;
	struct md_slow_link *s;

	if (sscanf(spec, "%u-%u:%u%c", &a, &b, &k, &tail) != 3 || k < 1 || a == b)
		return -EINVAL;
	if (md_cfg.nr_slow_links >= MD_MAX_SLOW_LINKS)
		return -ENOSPC;
	s = &md_cfg.slow_links[md_cfg.nr_slow_links++];
	s->a = a;
	s->b = b;
	s->factor = k;
	return 0;
}

void md_link_defaults(void)
{
	/* 910B-like: HCCS ~ 56 GB/s a link, RoCE 200 Gb/s (25 GB/s) */
	md_cfg.hccs_bytes_per_s = 56000000000ull;
	md_cfg.hccs_lat_ns = 2000;
	md_cfg.rdma_bytes_per_s = 25000000000ull;
	md_cfg.rdma_lat_ns = 10000;
}
