// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * consumer.c - validate, count and forward ring-buffer records (consumer.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include "trace/consumer.h"
#include "lib/log.h"
#include "capture/records.h"

void asc_consumer_reset(struct asc_consumer *c)
{
	c->records = c->bytes = c->bad = c->sink_errors = c->loader_events = c->groups = 0;
	memset(c->by_type, 0, sizeof(c->by_type));
	memset(c->by_layer, 0, sizeof(c->by_layer));
}

unsigned int asc_consumer_layer_of(const struct asc_consumer *c, const struct asc_hdr *h)
{
	switch (h->type) {
	case ASC_REC_IOCTL:
	case ASC_REC_FDBIND:
	case ASC_REC_SQE:
		return ASC_LAYER_DRIVER;
	case ASC_REC_MEM:
		return ASC_LAYER_MEMORY;
	case ASC_REC_STEP:
		return ASC_LAYER_PYTHON;
	case ASC_REC_HCCL_OP:
	case ASC_REC_HCCL_COMM:
	case ASC_REC_HCCL_TASK:
	case ASC_REC_HCCL_HASH:
		return ASC_LAYER_HCCL; /* whatever the layer of the probe that sent them */
	default:
		break;
	}
	if (h->probe_id < c->nr_probe_layer && c->probe_layer &&
	    c->probe_layer[h->probe_id] < ASC_CONSUMER_LAYERS)
		return c->probe_layer[h->probe_id];
	return 0;
}

/* One record of an accepted sample: checked, counted, handed on.  0, -EBADMSG or the sink's error. */
static int handle_record(struct asc_consumer *c, const struct asc_hdr *h)
{
	char why[96];
	int err;

	if (h->type == ASC_REC_INVALID || h->type >= ASC_REC_USER_BASE) {
		c->bad++;
		asc_dbg("ring buffer: record type %u cannot come from BPF\n", h->type);
		return -EBADMSG;
	}
	why[0] = 0;
	err = asc_rec_check(h, h->size, why, sizeof(why));
	if (err != 0) {
		/* 1 = a type this build does not know: BPF and loader disagree */
		c->bad++;
		asc_dbg("ring buffer: bad %s record (%u bytes): %s\n",
			asc_rec_type_name(h->type) ?: "unknown", (unsigned int)h->size,
			err == 1 ? "unknown type" : why);
		return -EBADMSG;
	}
	if (c->loader_probe_id && h->type == ASC_REC_ENTER && h->probe_id == c->loader_probe_id) {
		c->loader_events++;
		if (c->on_loader)
			c->on_loader(c->loader_ctx, h->tgid, ((const struct asc_enter *)h)->args[0],
				     ((const struct asc_enter *)h)->args[1]);
		return 0;
	}
	c->records++;
	c->bytes += h->size;
	c->by_type[h->type]++;
	c->by_layer[asc_consumer_layer_of(c, h)]++;
	if (c->sink) {
		err = c->sink(c->sink_ctx, h, h->size);
		if (err) {
			c->sink_errors++;
			return err;
		}
	}
	return 0;
}

/*
 * Whether the records' sizes tile the sample exactly: each at least a
 * header, a multiple of 8 (so the next header stays aligned) and inside
 * the sample.  Returns the number of records, or 0 when they do not.
 */
static size_t sample_records(const unsigned char *p, size_t size)
{
	size_t off = 0, n = 0;

	while (off < size) {
		const struct asc_hdr *h = (const struct asc_hdr *)(p + off);

		if (size - off < sizeof(*h) || h->size < sizeof(*h) || h->size % 8 ||
		    h->size > size - off)
			return 0;
		off += h->size;
		n++;
	}
	return n;
}

int asc_consumer_handle(struct asc_consumer *c, const void *data, size_t size)
{
	const unsigned char *p = data;
	size_t off, nrec;
	int ret = 0, err;

	if (!data || size < sizeof(struct asc_hdr)) {
		c->bad++;
		asc_dbg("ring buffer: sample of %zu bytes is shorter than a header\n", size);
		return -EBADMSG;
	}
	nrec = sample_records(p, size);
	if (!nrec) {
		/* no record boundary in it can be trusted: none of it reaches the sink */
		c->bad++;
		asc_dbg("ring buffer: sample of %zu bytes: record sizes (first %u) do not add up "
			"to it\n",
			size, (unsigned int)((const struct asc_hdr *)p)->size);
		return -EBADMSG;
	}
	if (nrec > 1)
		c->groups++;
	for (off = 0; off < size; off += ((const struct asc_hdr *)(p + off))->size) {
		/* a bad record or a sink failure does not hide the next records of the sample */
		err = handle_record(c, (const struct asc_hdr *)(p + off));
		if (err && !ret)
			ret = err;
	}
	return ret;
}

int asc_consumer_layer_summary(const struct asc_consumer *c, char *buf, size_t len)
{
	return snprintf(buf, len,
			"framework=%llu cann=%llu driver=%llu memory=%llu python=%llu hccl=%llu "
			"other=%llu",
			(unsigned long long)c->by_layer[ASC_LAYER_FRAMEWORK],
			(unsigned long long)c->by_layer[ASC_LAYER_CANN],
			(unsigned long long)c->by_layer[ASC_LAYER_DRIVER],
			(unsigned long long)c->by_layer[ASC_LAYER_MEMORY],
			(unsigned long long)c->by_layer[ASC_LAYER_PYTHON],
			(unsigned long long)c->by_layer[ASC_LAYER_HCCL],
			(unsigned long long)(c->by_layer[0] + c->by_layer[ASC_LAYER_DEVICE]));
}

/* ---- the ring buffer's reading side ---- */

int asc_ring_open(struct asc_ring *r, int map_fd, asc_ring_sample_fn fn, void *ctx)
{
	struct bpf_map_info info;
	struct epoll_event ev = { .events = EPOLLIN };
	__u32 len = sizeof(info);
	void *p;
	int err;

	memset(r, 0, sizeof(*r));
	r->map_fd = map_fd;
	r->epoll_fd = -1;
	r->fn = fn;
	r->ctx = ctx;
	memset(&info, 0, sizeof(info));
	if (!fn || bpf_obj_get_info_by_fd(map_fd, &info, &len) < 0)
		return fn ? -errno : -EINVAL;
	if (info.type != BPF_MAP_TYPE_RINGBUF || !info.max_entries ||
	    (info.max_entries & (info.max_entries - 1))) {
		asc_err("ring buffer: map %d is not a ring buffer\n", map_fd);
		return -EINVAL;
	}
	r->page_size = (size_t)sysconf(_SC_PAGESIZE);
	r->mask = info.max_entries - 1;
	r->publish = info.max_entries / 16 < ASC_RING_PUBLISH_BYTES ? info.max_entries / 16 :
								      ASC_RING_PUBLISH_BYTES;
	p = mmap(NULL, r->page_size, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	r->consumer_pos = p;
	/* the data pages are mapped twice in a row: a sample never wraps for the reader */
	r->map_len = r->page_size + 2 * (size_t)info.max_entries;
	p = mmap(NULL, r->map_len, PROT_READ, MAP_SHARED, map_fd, (off_t)r->page_size);
	if (p == MAP_FAILED)
		goto fail;
	r->producer_pos = p;
	r->data = (const unsigned char *)p + r->page_size;
	r->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epoll_fd < 0 || epoll_ctl(r->epoll_fd, EPOLL_CTL_ADD, map_fd, &ev) < 0)
		goto fail;
	return 0;
fail:
	err = -errno;
	asc_err("ring buffer: cannot map or watch it: %s\n", strerror(-err));
	asc_ring_close(r);
	return err;
}

int asc_ring_consume(struct asc_ring *r)
{
	uint64_t cons = __atomic_load_n(r->consumer_pos, __ATOMIC_RELAXED); /* ours alone */
	uint64_t published = cons, prod;
	int n = 0, err, more;

	do {
		more = 0;
		prod = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);
		while (cons < prod) {
			const uint32_t *hdr = (const uint32_t *)(r->data + (cons & r->mask));
			uint32_t raw = __atomic_load_n(hdr, __ATOMIC_ACQUIRE), len;

			if (raw & BPF_RINGBUF_BUSY_BIT)
				goto out; /* reserved, not yet committed: next drain */
			more = 1;
			len = raw & ~(uint32_t)BPF_RINGBUF_DISCARD_BIT;
			/* hdr.len is the sample's size; each slot is 8-aligned, header included */
			cons += (BPF_RINGBUF_HDR_SZ + len + 7) & ~7ull;
			if (!(raw & BPF_RINGBUF_DISCARD_BIT)) {
				err = r->fn(r->ctx, (void *)(hdr + 2), len);
				if (err < 0) {
					__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
					return err;
				}
				n++;
			}
			if (cons - published >= r->publish) {
				__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
				published = cons;
			}
		}
	} while (more);
out:
	if (cons != published)
		__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
	return n;
}

int asc_ring_poll(struct asc_ring *r, int timeout_ms)
{
	struct epoll_event ev;

	if (epoll_wait(r->epoll_fd, &ev, 1, timeout_ms) < 0)
		return -errno;
	return asc_ring_consume(r);
}

void asc_ring_close(struct asc_ring *r)
{
	if (r->epoll_fd >= 0)
		close(r->epoll_fd);
	if (r->producer_pos)
		munmap((void *)r->producer_pos, r->map_len);
	if (r->consumer_pos)
		munmap(r->consumer_pos, r->page_size);
	r->epoll_fd = -1;
	r->producer_pos = NULL;
	r->consumer_pos = NULL;
}
