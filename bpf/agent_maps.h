/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * agent_maps.h - the maps of the always-on tier (bpf/agent.bpf.c), shared with
 * `ascbpf agent` (user/agent/).  Nothing is streamed: every program adds to
 * counters in these maps, which the agent reads when it is scraped.
 *
 * procs (hash, tgid -> struct agent_proc): the followed processes.  User
 * space inserts a zeroed entry before it attaches a process's probes and
 * deletes it when the process is gone; a program whose tgid has no entry
 * does nothing (uretprobes of other processes on old kernels, a process
 * between exit and clean-up).
 * streams (hash, struct agent_stream_key -> struct agent_stream): tasks
 * submitted per (process, device, stream).
 * mem (hash, struct agent_mem_key -> struct agent_mem): the caching
 * allocator's totals per (process, device) after its last report (with
 * --memory-blocks only: the report is one call per block event).
 * stats (array, AGENT_STAT_*): counts of what could not be recorded.
 *
 * Counters are updated with atomic adds (threads of one process share an
 * entry); a scrape reads each value once, so a scrape may see one counter of
 * an event before another (Prometheus tolerates it: each is monotonic).
 */
#ifndef __ASCBPF_AGENT_MAPS_H
#define __ASCBPF_AGENT_MAPS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * Step-duration histogram: upper bounds in ns of buckets 0..AGENT_NR_BOUNDS-1
 * (seconds: 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10 30 60 300), bucket
 * AGENT_NR_BOUNDS is +Inf.  Buckets count per bucket (not cumulative).
 */
#define AGENT_NR_BOUNDS	 13
#define AGENT_NR_BUCKETS (AGENT_NR_BOUNDS + 1)
#define AGENT_BOUNDS_NS                                                                          \
	{                                                                                        \
		10000000ull, 25000000ull, 50000000ull, 100000000ull, 250000000ull, 500000000ull, \
			1000000000ull, 2500000000ull, 5000000000ull, 10000000000ull,             \
			30000000000ull, 60000000000ull, 300000000000ull                          \
	}

/* the last AGENT_RECENT step durations, duration k (0-based) at recent_ns[k % AGENT_RECENT] */
#define AGENT_RECENT	   32
#define AGENT_MAX_PROCS	   1024
#define AGENT_MAX_STREAMS  8192
#define AGENT_MAX_MEM	   4096
#define AGENT_MAX_SEGS	   16384 /* live device segments of all processes */
#define AGENT_MAX_INFLIGHT 16384 /* threads inside a synchronisation or an allocation */

struct agent_proc {
	__u64 steps;	    /* step boundaries seen */
	__u64 last_step_ns; /* CLOCK_MONOTONIC of the last one, 0 before the first */
	__u64 step_sum_ns;  /* sum of the step durations (boundary to boundary) */
	__u64 step_bucket[AGENT_NR_BUCKETS];
	__u64 syncs;	      /* aclrtSynchronize* calls returned */
	__u64 sync_ns;	      /* time spent in them */
	__u64 seg_allocs;     /* segment allocations that succeeded (aclrtMalloc*) */
	__u64 seg_bytes;      /* bytes they asked for */
	__u64 alloc_failures; /* segment allocations that returned an error */
	__u64 seg_live_bytes; /* bytes of the segments allocated (seen) and not freed yet */
	__u64 submits;	      /* halSqTaskSend calls */
	__u64 enqueues;	      /* torch_npu task queue: Repository::Enqueue calls */
	__u64 dequeues;	      /* ... and AsncExecFunc calls (the consumer ran an entry) */
	__u64 recent_ns[AGENT_RECENT];
};

struct agent_stream_key {
	__u32 tgid;
	__u32 dev;
	__u32 sq; /* submission queue (stream) id */
	__u32 pad;
};

struct agent_stream {
	__u64 calls; /* halSqTaskSend calls */
	__u64 tasks; /* SQEs they carried (one task each) */
};

struct agent_mem_key {
	__u32 tgid;
	__u32 dev;
};

struct agent_mem {
	__u64 allocated; /* bytes in blocks handed out, after the last report */
	__u64 reserved;	 /* bytes in segments the allocator holds */
	__u64 peak_allocated;
	__u64 reports;
};

/*
 * Collectives (libhccl's Hccl* ops): hccl (hash, struct agent_hccl_key ->
 * struct agent_hccl) per (process, probe site = one op's symbol).  User space
 * makes the entry (zeroed, count_arg set) when it attaches the site, so the
 * program needs no name: the site id is the attach cookie.  hccl_inflight
 * (LRU hash, pid_tgid -> struct agent_hccl_call): the thread is inside that op
 * since enter_ns; the hang finding reads it.  Durations are the host's time in
 * the call (HCCL enqueues the op's tasks; where the op blocks, as on a peer that
 * never arrives, the call does not return).  Histogram bounds in seconds:
 * 0.0001 0.001 0.01 0.1 1 10 60 300, bucket AGENT_HCCL_NR_BOUNDS is +Inf.
 */
#define AGENT_MAX_HCCL	     4096
#define AGENT_HCCL_NR_BOUNDS 8
#define AGENT_HCCL_BOUNDS_NS                                                                     \
	{                                                                                        \
		100000ull, 1000000ull, 10000000ull, 100000000ull, 1000000000ull, 10000000000ull, \
			60000000000ull, 300000000000ull                                          \
	}

struct agent_hccl_key {
	__u32 tgid;
	__u32 site; /* the probe site's id (its attach cookie) */
};

struct agent_hccl {
	__u32 count_arg; /* 0-based argument index of the element count, 0: none (user space) */
	__u32 pad;
	__u64 entered;	/* calls entered */
	__u64 returned; /* ... and returned */
	__u64 failures; /* returned non-zero */
	__u64 bytes;	/* count x element size (of the data type argument after the count) */
	__u64 ns;	/* time in the calls returned */
	__u64 bucket[AGENT_HCCL_NR_BOUNDS + 1];
};

struct agent_hccl_call {
	__u64 enter_ns;
	__u32 site;
	__u32 pad;
	__u64 seq; /* 0-based index of this call among the site's calls */
};

enum {
	AGENT_STAT_NO_ROOM = 0, /* a stream/mem/in-flight entry could not be made: map full */
	AGENT_STAT_NO_ENTRY,	/* a return without its entry (attached mid-call, map full) */
	AGENT_STAT_READ,	/* a user-memory read failed */
	AGENT_NR_STATS,
};

#endif /* __ASCBPF_AGENT_MAPS_H */
