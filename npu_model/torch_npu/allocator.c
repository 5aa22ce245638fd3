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
#define MIN_LARGE_ALLOC	(10ull << 20)
#define LARGE_BUFFER	(20ull << 20)
#define ROUND_LARGE	(2ull << 20)

struct segment;

struct block {
	uintptr_t ptr;
	size_t size;
	int allocated;
	void *stream;
	struct segment *seg;
	struct block *prev, *next;	/* address order within the segment */
	struct block *hnext;		/* allocated-block hash chain */
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

static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct segment *segments;
static struct block *live[BLOCK_BUCKETS];
static uint64_t total_allocated, total_reserved, total_active;
static uint64_t nr_segments, nr_oom_retries, nr_failures;
static __thread int last_error;

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

/* Caller holds alloc_lock. */
static void report(const struct block *b, int64_t size, int type, int device)
{
	struct npu_memory_usage u;

	memset(&u, 0, sizeof(u));
	u.ptr = b->ptr;
	u.size = size;
	u.total_allocated = total_allocated;
	u.total_reserved = total_reserved;
	u.total_active = total_active;
	u.stream = (uint64_t)(uintptr_t)b->stream;
	u.device = (uint16_t)device;
	u.component = 0;
	u.data_type = (uint8_t)type;
	u.time_ns = npu_now_ns();
	_ZN9torch_npu8profiler29reportMemoryDataToNpuProfilerERKNS0_11MemoryUsageE(&u);
}

/* Best fit among free blocks of the right pool and stream. */
static struct block *find_free(size_t size, int small, void *stream)
{
	struct block *best = NULL;

	for (struct segment *s = segments; s; s = s->next) {
		if (s->small != small || s->stream != stream)
			continue;
		for (struct block *b = s->first; b; b = b->next)
			if (!b->allocated && b->size >= size && (!best || b->size < best->size))
				best = b;
	}
	return best;
}

/* Returns every segment that is one free block (release_cached_blocks). */
static void release_cached_locked(void)
{
	struct segment **pp = &segments;

	while (*pp) {
		struct segment *s = *pp;

		if (s->first && !s->first->allocated && !s->first->next) {
			*pp = s->next;
			aclrtFree((void *)s->base);
			total_reserved -= s->size;
			nr_segments--;
			free(s->first);
			free(s);
			continue;
		}
		pp = &s->next;
	}
}

static struct block *new_segment(size_t seg_size, int small, int device, void *stream, int *err)
{
	struct segment *s;
	struct block *b;
	void *p = NULL;
	int r;

	r = aclrtMallocAlign32(&p, seg_size, ACL_MEM_MALLOC_HUGE_FIRST);
	if (r == ACL_ERROR_RT_MEMORY_ALLOCATION) {
		if (npu_journal_on)
			npu_journal_write("oom", "tid=%d\tt=%llu\tsize=%zu\tret=%d\tlayer=PTA"
					  "\taction=release_cached_blocks", npu_tid(),
					  (unsigned long long)npu_now_ns(), seg_size, r);
		/* As torch_npu: free the cache, then try once more. */
		release_cached_locked();
		nr_oom_retries++;
		r = aclrtMallocAlign32(&p, seg_size, ACL_MEM_MALLOC_HUGE_FIRST);
		if (r && npu_journal_on)
			npu_journal_write("oom", "tid=%d\tt=%llu\tsize=%zu\tret=%d\tlayer=PTA"
					  "\taction=fail", npu_tid(),
					  (unsigned long long)npu_now_ns(), seg_size, r);
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
	s->device = device;
	s->first = b;
	s->next = segments;
	segments = s;
	b->ptr = s->base;
	b->size = seg_size;
	b->stream = stream;
	b->seg = s;
	total_reserved += seg_size;
	nr_segments++;
	return b;
}

void *npu_alloc_malloc(size_t req, int device, void *stream)
{
	size_t size = npu_alloc_round_size(req);
	int small = size <= SMALL_SIZE, err = 0;
	struct block *b, *rest;
	size_t remaining;

	if (!req) {
		last_error = ACL_ERROR_INVALID_PARAM;
		return NULL;
	}
	pthread_mutex_lock(&alloc_lock);
	b = find_free(size, small, stream);
	if (!b)
		b = new_segment(npu_alloc_segment_size(size), small, device, stream, &err);
	if (!b) {
		nr_failures++;
		pthread_mutex_unlock(&alloc_lock);
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
	b->hnext = live[hash_of(b->ptr)];
	live[hash_of(b->ptr)] = b;
	total_allocated += b->size;
	total_active += b->size;
	report(b, (int64_t)b->size, NPU_MEM_MALLOC, b->seg->device);
	pthread_mutex_unlock(&alloc_lock);
	return (void *)b->ptr;
}

static void merge(struct block *a, struct block *b)	/* b follows a; both free */
{
	a->size += b->size;
	a->next = b->next;
	if (b->next)
		b->next->prev = a;
	free(b);
}

void npu_alloc_free(void *ptr)
{
	struct block **pp, *b = NULL;
	size_t size;
	int dev;

	if (!ptr)
		return;
	pthread_mutex_lock(&alloc_lock);
	for (pp = &live[hash_of((uintptr_t)ptr)]; *pp; pp = &(*pp)->hnext) {
		if ((*pp)->ptr == (uintptr_t)ptr) {
			b = *pp;
			*pp = b->hnext;
			break;
		}
	}
	if (!b) {
		pthread_mutex_unlock(&alloc_lock);
		return;	/* not ours: ignored, as a double free must not corrupt the pool */
	}
	size = b->size;
	dev = b->seg->device;
	total_allocated -= size;
	report(b, -(int64_t)size, NPU_MEM_FREE, dev);
	b->allocated = 0;
	total_active -= size;
	report(b, -(int64_t)size, NPU_MEM_BLOCK_FREE, dev);
	if (b->next && !b->next->allocated)
		merge(b, b->next);
	if (b->prev && !b->prev->allocated)
		merge(b->prev, b);
	pthread_mutex_unlock(&alloc_lock);
}

int npu_alloc_last_error(void)
{
	return last_error;
}

void npu_alloc_empty_cache(void)
{
	pthread_mutex_lock(&alloc_lock);
	release_cached_locked();
	pthread_mutex_unlock(&alloc_lock);
}

void npu_alloc_get_stats(struct npu_alloc_stats *st)
{
	pthread_mutex_lock(&alloc_lock);
	st->allocated = total_allocated;
	st->reserved = total_reserved;
	st->active = total_active;
	st->nr_segments = nr_segments;
	st->nr_oom_retries = nr_oom_retries;
	st->nr_alloc_failures = nr_failures;
	pthread_mutex_unlock(&alloc_lock);
}
