// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * allocator.c - the caching allocator of torch_npu (c10_npu::
 * NPUCachingAllocator::DeviceCachingAllocator, simplified): device memory
 * is reserved in segments with aclrtMallocAlign32 (ACL_MEM_MALLOC_HUGE_FIRST)
 * and handed out as blocks; freed blocks go back to the pool of their
 * stream and are reused or split; neighbours merge.  When aclrtMallocAlign32
 * fails for lack of memory (ACL_ERROR_RT_MEMORY_ALLOCATION), every fully
 * free segment is returned with aclrtFree and the allocation is retried
 * once, as torch_npu does (release_cached_blocks).
 *
 * Sizes follow torch_npu: requests round up to 512 bytes; blocks of at most
 * 1 MiB come from 2 MiB small segments; up to 10 MiB from 20 MiB segments;
 * larger ones get their size rounded up to 2 MiB.
 *
 * Every block malloc, free and block_free is reported with the totals after
 * it through torch_npu::profiler::reportMemoryDataToNpuProfiler() (profiler.c),
 * which the tracer probes.  There is no cross-stream use tracking, so free
 * and block_free of a block happen together.
 *
 * Objects as in torch_npu (NPUCachingAllocator.cpp): one DeviceCachingAllocator
 * per device (its pools, blocks, statistics and lock), made on the device's
 * first allocation and kept in the process's NpuCachingAllocator object
 * (caching_allocator, hidden), whose address the exported
 * c10_npu::NPUCachingAllocator::allocator holds (in real torch_npu a
 * std::atomic<NPUAllocator *>, stored by a static initializer; C10_NPU_API).
 * The Python backend's c10::Allocator (backend.cpp) forwards to it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npu_acl.h"
#include "npu_api_journal.h"
#include "torch_npu/torch_npu_priv.h"

#define ROUND_SMALL	512ull
#define SMALL_SIZE	(1ull << 20)
#define SMALL_BUFFER	(2ull << 20)
#define MIN_LARGE_ALLOC (10ull << 20)
#define LARGE_BUFFER	(20ull << 20)
#define ROUND_LARGE	(2ull << 20)

struct segment;

struct block {
	uintptr_t ptr;
	size_t size;
	int allocated;
	void *stream;
	struct segment *seg;
	struct block *prev, *next; /* address order within the segment */
	struct block *hnext;	   /* allocated-block hash chain */
};

struct segment {
	uintptr_t base;
	size_t size;
	int small;
	void *stream;
	int device;
	struct block *first;
	struct segment *next;
};

#define BLOCK_BUCKETS 4096
#define MAX_DEVICES   64 /* ids of davinciN a process can open */

/* c10_npu::NPUCachingAllocator::DeviceCachingAllocator: one device's cache. */
struct device_caching_allocator {
	pthread_mutex_t lock;
	int device;
	struct segment *segments;
	struct block *live[BLOCK_BUCKETS]; /* allocated blocks by address */
	uint64_t total_allocated, total_reserved, total_active;
	uint64_t nr_segments, nr_oom_retries, nr_failures;
};

/* c10_npu::NPUCachingAllocator::NpuCachingAllocator: the per-device allocators. */
struct npu_caching_allocator {
	pthread_mutex_t init_lock;
	struct device_caching_allocator *_Atomic device_allocator[MAX_DEVICES];
};

static struct npu_caching_allocator caching_allocator = {
	.init_lock = PTHREAD_MUTEX_INITIALIZER,
};

/* c10_npu::NPUCachingAllocator::allocator (exported, as C10_NPU_API): the process's allocator. */
__attribute__((visibility("default"))) struct npu_caching_allocator
	*_Atomic _ZN7c10_npu19NPUCachingAllocator9allocatorE = &caching_allocator;

static __thread int last_error;

/* The device's allocator, made on first use (init); NULL for a bad device id. */
static struct device_caching_allocator *device_allocator(int device, int create)
{
	struct npu_caching_allocator *a = &caching_allocator;
	struct device_caching_allocator *d;

	if (device < 0 || device >= MAX_DEVICES)
		return NULL;
	d = a->device_allocator[device];
	if (d || !create)
		return d;
	pthread_mutex_lock(&a->init_lock);
	d = a->device_allocator[device];
	if (!d) {
		d = calloc(1, sizeof(*d));
		if (d) {
			pthread_mutex_init(&d->lock, NULL);
			d->device = device;
			a->device_allocator[device] = d;
		}
	}
	pthread_mutex_unlock(&a->init_lock);
	return d;
}

size_t npu_alloc_round_size(size_t size)
{
	if (size < ROUND_SMALL)
		return ROUND_SMALL;
	return (size + ROUND_SMALL - 1) & ~(ROUND_SMALL - 1);
}

size_t npu_alloc_segment_size(size_t size)
{
	if (size <= SMALL_SIZE)
		return SMALL_BUFFER;
	if (size < MIN_LARGE_ALLOC)
		return LARGE_BUFFER;
	return (size + ROUND_LARGE - 1) & ~(ROUND_LARGE - 1);
}

static size_t hash_of(uintptr_t p)
{
	return (size_t)((p >> 9) * 0x9e3779b97f4a7c15ull >> 52) % BLOCK_BUCKETS;
}

/* Caller holds d->lock. */
static void report(const struct device_caching_allocator *d, const struct block *b, int64_t size,
		   int type)
{
	struct MemoryUsage u;

	memset(&u, 0, sizeof(u));
	u.device_type = NPU_MEM_DEVICE_PRIVATEUSE1;
	u.device_index = (int8_t)d->device;
	u.component_type = NPU_MEM_COMPONENT_CACHING;
	u.data_type = (uint8_t)type;
	u.allocator_type = NPU_MEM_ALLOCATOR_INNER;
	u.ptr = (int64_t)b->ptr;
	u.alloc_size = size;
	u.total_allocated = (int64_t)d->total_allocated;
	u.total_reserved = (int64_t)d->total_reserved;
	u.total_active = (int64_t)d->total_active;
	u.stream_ptr = (int64_t)(uintptr_t)b->stream;
	_ZN9torch_npu8profiler29reportMemoryDataToNpuProfilerERKNS0_11MemoryUsageE(&u);
}

/* Best fit among free blocks of the right pool and stream. */
static struct block *find_free(struct device_caching_allocator *d, size_t size, int small,
			       void *stream)
{
	struct block *best = NULL;

	for (struct segment *s = d->segments; s; s = s->next) {
		if (s->small != small || s->stream != stream)
			continue;
		for (struct block *b = s->first; b; b = b->next)
			if (!b->allocated && b->size >= size && (!best || b->size < best->size))
				best = b;
	}
	return best;
}

/* Returns every segment that is one free block (release_cached_blocks). */
static void release_cached_locked(struct device_caching_allocator *d)
{
	struct segment **pp = &d->segments;

	while (*pp) {
		struct segment *s = *pp;

		if (s->first && !s->first->allocated && !s->first->next) {
			*pp = s->next;
			aclrtFree((void *)s->base);
			d->total_reserved -= s->size;
			d->nr_segments--;
			free(s->first);
			free(s);
			continue;
		}
		pp = &s->next;
	}
}

static struct block *new_segment(struct device_caching_allocator *d, size_t seg_size, int small,
				 void *stream, int *err)
{
	struct segment *s;
	struct block *b;
	void *p = NULL;
	int r;

	r = aclrtMallocAlign32(&p, seg_size, ACL_MEM_MALLOC_HUGE_FIRST);
	if (r == ACL_ERROR_RT_MEMORY_ALLOCATION) {
		if (npu_journal_on)
			npu_journal_write("oom",
					  "tid=%d\tt=%llu\tsize=%zu\tret=%d\tlayer=PTA"
					  "\taction=release_cached_blocks",
					  npu_tid(), (unsigned long long)npu_now_ns(), seg_size, r);
		/* As torch_npu: free the cache, then try once more. */
		release_cached_locked(d);
		d->nr_oom_retries++;
		r = aclrtMallocAlign32(&p, seg_size, ACL_MEM_MALLOC_HUGE_FIRST);
		if (r && npu_journal_on)
			npu_journal_write("oom",
					  "tid=%d\tt=%llu\tsize=%zu\tret=%d\tlayer=PTA"
					  "\taction=fail",
					  npu_tid(), (unsigned long long)npu_now_ns(), seg_size, r);
	}
	if (r) {
		*err = r;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	b = calloc(1, sizeof(*b));
	if (!s || !b) {
		free(s);
		free(b);
		aclrtFree(p);
		*err = ACL_ERROR_BAD_ALLOC;
		return NULL;
	}
	s->base = (uintptr_t)p;
	s->size = seg_size;
	s->small = small;
	s->stream = stream;
	s->device = d->device;
	s->first = b;
	s->next = d->segments;
	d->segments = s;
	b->ptr = s->base;
	b->size = seg_size;
	b->stream = stream;
	b->seg = s;
	d->total_reserved += seg_size;
	d->nr_segments++;
	return b;
}

void *npu_alloc_malloc(size_t req, int device, void *stream)
{
	size_t size = npu_alloc_round_size(req);
	int small = size <= SMALL_SIZE, err = 0;
	struct device_caching_allocator *d = device_allocator(device, 1);
	struct block *b, *rest;
	size_t remaining;

	if (!req || !d) {
		last_error = d ? ACL_ERROR_INVALID_PARAM : ACL_ERROR_BAD_ALLOC;
		return NULL;
	}
	pthread_mutex_lock(&d->lock);
	b = find_free(d, size, small, stream);
	if (!b)
		b = new_segment(d, npu_alloc_segment_size(size), small, stream, &err);
	if (!b) {
		d->nr_failures++;
		pthread_mutex_unlock(&d->lock);
		last_error = err;
		return NULL;
	}
	/* Split off the tail when it is big enough to serve another request. */
	remaining = b->size - size;
	if ((small && remaining >= ROUND_SMALL) || (!small && remaining > SMALL_SIZE)) {
		rest = calloc(1, sizeof(*rest));
		if (rest) {
			rest->ptr = b->ptr + size;
			rest->size = remaining;
			rest->stream = stream;
			rest->seg = b->seg;
			rest->prev = b;
			rest->next = b->next;
			if (b->next)
				b->next->prev = rest;
			b->next = rest;
			b->size = size;
		}
	}
	b->allocated = 1;
	b->hnext = d->live[hash_of(b->ptr)];
	d->live[hash_of(b->ptr)] = b;
	d->total_allocated += b->size;
	d->total_active += b->size;
	report(d, b, (int64_t)b->size, NPU_MEM_MALLOC);
	pthread_mutex_unlock(&d->lock);
	return (void *)b->ptr;
}

static void merge(struct block *a, struct block *b) /* b follows a; both free */
{
	a->size += b->size;
	a->next = b->next;
	if (b->next)
		b->next->prev = a;
	free(b);
}

/* Takes ptr's block out of d's allocated set; NULL if d did not hand it out. Holds d->lock. */
static struct block *take_live(struct device_caching_allocator *d, void *ptr)
{
	for (struct block **pp = &d->live[hash_of((uintptr_t)ptr)]; *pp; pp = &(*pp)->hnext) {
		if ((*pp)->ptr == (uintptr_t)ptr) {
			struct block *b = *pp;

			*pp = b->hnext;
			return b;
		}
	}
	return NULL;
}

void npu_alloc_free(void *ptr)
{
	struct device_caching_allocator *d = NULL;
	struct block *b = NULL;
	size_t size;

	if (!ptr)
		return;
	for (int i = 0; i < MAX_DEVICES && !b; i++) {
		d = device_allocator(i, 0);
		if (!d)
			continue;
		pthread_mutex_lock(&d->lock);
		b = take_live(d, ptr);
		if (!b)
			pthread_mutex_unlock(&d->lock);
	}
	if (!b)
		return; /* not ours: ignored, as a double free must not corrupt the pool */
	size = b->size;
	d->total_allocated -= size;
	report(d, b, -(int64_t)size, NPU_MEM_FREE);
	b->allocated = 0;
	d->total_active -= size;
	report(d, b, -(int64_t)size, NPU_MEM_BLOCK_FREE);
	if (b->next && !b->next->allocated)
		merge(b, b->next);
	if (b->prev && !b->prev->allocated)
		merge(b->prev, b);
	pthread_mutex_unlock(&d->lock);
}

int npu_alloc_last_error(void)
{
	return last_error;
}

void npu_alloc_empty_cache(void)
{
	for (int i = 0; i < MAX_DEVICES; i++) {
		struct device_caching_allocator *d = device_allocator(i, 0);

		if (!d)
			continue;
		pthread_mutex_lock(&d->lock);
		release_cached_locked(d);
		pthread_mutex_unlock(&d->lock);
	}
}

/* The process's totals: the sum over its devices (one device per process in practice). */
void npu_alloc_get_stats(struct npu_alloc_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (int i = 0; i < MAX_DEVICES; i++) {
		struct device_caching_allocator *d = device_allocator(i, 0);

		if (!d)
			continue;
		pthread_mutex_lock(&d->lock);
		st->allocated += d->total_allocated;
		st->reserved += d->total_reserved;
		st->active += d->total_active;
		st->nr_segments += d->nr_segments;
		st->nr_oom_retries += d->nr_oom_retries;
		st->nr_alloc_failures += d->nr_failures;
		pthread_mutex_unlock(&d->lock);
	}
}
