// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * agent.bpf.c - the always-on tier of `ascbpf agent` (user/agent/): the
 * cheap probes only (step boundary, task queue, task submission,
 * synchronisation, collectives, the caching allocator's report and its
 * segment allocations: the ASC_SPEC_AGENT rows of the one probe table,
 * user/discovery/probes.c), each adding to
 * counters in maps (bpf/agent_maps.h).  No ring buffer, no record, no
 * wake-up: the agent reads the maps when Prometheus scrapes it.  A probe
 * costs one hash lookup and a few atomic adds; what cannot be counted (a
 * full map) is counted in stats.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "agent_maps.h"
#include "ascend/torch_npu.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, AGENT_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct agent_proc);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, AGENT_MAX_STREAMS);
	__type(key, struct agent_stream_key);
	__type(value, struct agent_stream);
} streams SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, AGENT_MAX_MEM);
	__type(key, struct agent_mem_key);
	__type(value, struct agent_mem);
} mem SEC(".maps");

/* pid_tgid -> entry time of a synchronisation / size of a segment allocation */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, AGENT_MAX_INFLIGHT);
	__type(key, __u64);
	__type(value, __u64);
} sync_inflight SEC(".maps");

struct alloc_stash {
	__u64 out; /* the caller's void ** */
	__u64 size;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, AGENT_MAX_INFLIGHT);
	__type(key, __u64);
	__type(value, struct alloc_stash);
} alloc_inflight SEC(".maps");

/* the live segments: (tgid, pointer) -> size, so that aclrtFree gives back the right bytes */
struct seg_key {
	__u64 tgid;
	__u64 ptr;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, AGENT_MAX_SEGS);
	__type(key, struct seg_key);
	__type(value, __u64);
} segs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, AGENT_NR_STATS);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, AGENT_MAX_HCCL);
	__type(key, struct agent_hccl_key);
	__type(value, struct agent_hccl);
} hccl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, AGENT_MAX_INFLIGHT);
	__type(key, __u64);
	__type(value, struct agent_hccl_call);
} hccl_inflight SEC(".maps");

static const __u64 bounds_ns[AGENT_NR_BOUNDS] = AGENT_BOUNDS_NS;
static const __u64 hccl_bounds_ns[AGENT_HCCL_NR_BOUNDS] = AGENT_HCCL_BOUNDS_NS;

/* bytes of one element of an HcclDataType (include/ascend/hccl.h), 0 unknown */
static __always_inline __u64 hccl_dtype_bytes(__u64 t)
{
	switch (t) {
	case 0: /* int8 */
	case 7: /* uint8 */
		return 1;
	case 1:	 /* int16 */
	case 3:	 /* fp16 */
	case 8:	 /* uint16 */
	case 11: /* bf16 */
		return 2;
	case 2: /* int32 */
	case 4: /* fp32 */
	case 9: /* uint32 */
		return 4;
	case 5:	 /* int64 */
	case 6:	 /* uint64 */
	case 10: /* fp64 */
		return 8;
	case 12: /* int128 */
		return 16;
	default:
		return 0;
	}
}

static __always_inline void stat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);

	if (v)
		__sync_fetch_and_add(v, 1);
}

static __always_inline struct agent_proc *proc_of(__u64 pid_tgid)
{
	__u32 tgid = pid_tgid >> 32;

	return bpf_map_lookup_elem(&procs, &tgid);
}

/* The entry of key in map, made (zeroed) when missing; NULL (counted) when the map is full. */
static __always_inline void *entry_of(void *map, const void *key, const void *zero)
{
	void *v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	/* EEXIST when another thread made it first: the lookup below finds it */
	bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	v = bpf_map_lookup_elem(map, key);
	if (!v)
		stat_inc(AGENT_STAT_NO_ROOM);
	return v;
}

/*
 * The return of the job's optimizer step (torch::optim::*::step): a step
 * ends, the next one starts.
 */
SEC("uretprobe")
int BPF_KRETPROBE(agent_step)
{
	struct agent_proc *p = proc_of(bpf_get_current_pid_tgid());
	__u64 now = bpf_ktime_get_ns(), last, d, n;
	__u32 i;

	if (!p)
		return 0;
	last = p->last_step_ns;
	p->last_step_ns = now;
	n = __sync_fetch_and_add(&p->steps, 1);
	if (!last || now < last || !n)
		return 0;
	d = now - last;
	p->recent_ns[(n - 1) % AGENT_RECENT] = d; /* duration n-1 */
	for (i = 0; i < AGENT_NR_BOUNDS; i++)
		if (d <= bounds_ns[i])
			break;
	__sync_fetch_and_add(&p->step_bucket[i], 1);
	__sync_fetch_and_add(&p->step_sum_ns, d);
	return 0;
}

/* halSqTaskSend(devId, struct halTaskSendInfo *): type, tsId, sqId, timeout, sqe_addr, sqe_num */
SEC("uprobe")
int BPF_KPROBE(agent_submit, __u32 dev_id, void *info)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct agent_proc *p = proc_of(pid_tgid);
	struct {
		__u32 type, ts_id, sq_id;
		__s32 timeout;
		__u64 sqe_addr;
		__u32 sqe_num, pos;
	} ti;
	struct agent_stream_key k = {};
	struct agent_stream zero = {}, *s;

	if (!p)
		return 0;
	__sync_fetch_and_add(&p->submits, 1);
	if (bpf_probe_read_user(&ti, sizeof(ti), info) < 0) {
		stat_inc(AGENT_STAT_READ);
		return 0;
	}
	k.tgid = pid_tgid >> 32;
	k.dev = dev_id;
	k.sq = ti.sq_id;
	s = entry_of(&streams, &k, &zero);
	if (!s)
		return 0;
	__sync_fetch_and_add(&s->calls, 1);
	__sync_fetch_and_add(&s->tasks, ti.sqe_num);
	return 0;
}

/*
 * torch_npu::profiler::reportMemoryDataToNpuProfiler(const MemoryUsage &): the
 * allocator's totals after each block event, in torch_npu's MemoryUsage layout
 * (include/ascend/torch_npu.h; the device is its 1-byte device_index).
 */
SEC("uprobe")
int BPF_KPROBE(agent_mem_report, void *rep)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct MemoryUsage mu;
	struct {
		__u64 alloc, reserved;
		__u16 dev;
	} u;
	struct agent_mem_key k = {};
	struct agent_mem zero = {}, *m;

	if (!proc_of(pid_tgid))
		return 0;
	if (bpf_probe_read_user(&mu, sizeof(mu), rep) < 0) {
		stat_inc(AGENT_STAT_READ);
		return 0;
	}
	u.alloc = (__u64)mu.total_allocated;
	u.reserved = (__u64)mu.total_reserved;
	u.dev = (__u8)mu.device_index;
	k.tgid = pid_tgid >> 32;
	k.dev = u.dev;
	m = entry_of(&mem, &k, &zero);
	if (!m)
		return 0;
	m->allocated = u.alloc;
	m->reserved = u.reserved;
	if (u.alloc > m->peak_allocated)
		m->peak_allocated = u.alloc;
	__sync_fetch_and_add(&m->reports, 1);
	return 0;
}

/*
 * aclrtMalloc*(void **devPtr, size_t size, ...) and aclrtFree(void *devPtr): the caching
 * allocator's segments; their live bytes are what it has reserved.
 */
SEC("uprobe")
int BPF_KPROBE(agent_alloc_enter, void **out, __u64 size)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct alloc_stash st = { .out = (__u64)out, .size = size };

	if (!proc_of(pid_tgid))
		return 0;
	if (bpf_map_update_elem(&alloc_inflight, &pid_tgid, &st, BPF_ANY))
		stat_inc(AGENT_STAT_NO_ROOM);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(agent_alloc_exit, int ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct agent_proc *p = proc_of(pid_tgid);
	struct seg_key k = { .tgid = pid_tgid >> 32 };
	struct alloc_stash *st;
	__u64 size;

	if (!p)
		return 0;
	st = bpf_map_lookup_elem(&alloc_inflight, &pid_tgid);
	if (!st) {
		stat_inc(AGENT_STAT_NO_ENTRY);
		return 0;
	}
	size = st->size;
	if (ret) {
		__sync_fetch_and_add(&p->alloc_failures, 1);
	} else {
		__sync_fetch_and_add(&p->seg_allocs, 1);
		__sync_fetch_and_add(&p->seg_bytes, size);
		if (bpf_probe_read_user(&k.ptr, sizeof(k.ptr), (void *)st->out) < 0) {
			stat_inc(AGENT_STAT_READ);
		} else if (bpf_map_update_elem(&segs, &k, &size, BPF_ANY)) {
			stat_inc(AGENT_STAT_NO_ROOM);
		} else {
			__sync_fetch_and_add(&p->seg_live_bytes, size);
		}
	}
	bpf_map_delete_elem(&alloc_inflight, &pid_tgid);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(agent_free_enter, void *ptr)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct agent_proc *p = proc_of(pid_tgid);
	struct seg_key k = { .tgid = pid_tgid >> 32, .ptr = (__u64)ptr };
	__u64 *size;

	if (!p)
		return 0;
	size = bpf_map_lookup_elem(&segs, &k);
	if (!size)
		return 0; /* allocated before the agent attached: not counted in, not out */
	__sync_fetch_and_sub(&p->seg_live_bytes, *size);
	bpf_map_delete_elem(&segs, &k);
	return 0;
}

/* aclrtSynchronize{Device,Stream,Event,StreamWithTimeout}: the host waits for the card */
SEC("uprobe")
int BPF_KPROBE(agent_sync_enter)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now;

	if (!proc_of(pid_tgid))
		return 0;
	now = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&sync_inflight, &pid_tgid, &now, BPF_ANY))
		stat_inc(AGENT_STAT_NO_ROOM);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(agent_sync_exit)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns(), *t0;
	struct agent_proc *p = proc_of(pid_tgid);

	if (!p)
		return 0;
	t0 = bpf_map_lookup_elem(&sync_inflight, &pid_tgid);
	if (!t0) {
		stat_inc(AGENT_STAT_NO_ENTRY);
		return 0;
	}
	__sync_fetch_and_add(&p->syncs, 1);
	if (now > *t0)
		__sync_fetch_and_add(&p->sync_ns, now - *t0);
	bpf_map_delete_elem(&sync_inflight, &pid_tgid);
	return 0;
}

/* torch_npu's task queue: an entry queued (Repository::Enqueue) / run (AsncExecFunc) */
SEC("uprobe")
int BPF_KPROBE(agent_enqueue)
{
	struct agent_proc *p = proc_of(bpf_get_current_pid_tgid());

	if (p)
		__sync_fetch_and_add(&p->enqueues, 1);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(agent_dequeue)
{
	struct agent_proc *p = proc_of(bpf_get_current_pid_tgid());

	if (p)
		__sync_fetch_and_add(&p->dequeues, 1);
	return 0;
}

/*
 * Hccl<Op>(...): the op's entry in hccl (made by user space; none: not counted),
 * the bytes from its count and data type arguments (registers: index 1..4).
 */
SEC("uprobe")
int BPF_KPROBE(agent_hccl_enter)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct agent_hccl_key k = { .tgid = pid_tgid >> 32, .site = bpf_get_attach_cookie(ctx) };
	struct agent_hccl_call c = {};
	struct agent_hccl *h;
	__u64 count = 0, dtype = 0, a1, a2, a3;

	if (!proc_of(pid_tgid))
		return 0;
	h = bpf_map_lookup_elem(&hccl, &k);
	if (!h) {
		stat_inc(AGENT_STAT_NO_ENTRY);
		return 0;
	}
	c.enter_ns = bpf_ktime_get_ns();
	c.site = k.site;
	c.seq = __sync_fetch_and_add(&h->entered, 1);
	if (bpf_map_update_elem(&hccl_inflight, &pid_tgid, &c, BPF_ANY))
		stat_inc(AGENT_STAT_NO_ROOM);
	/* all three read first: a ctx offset chosen by a branch is refused by the verifier */
	a1 = PT_REGS_PARM2(ctx);
	a2 = PT_REGS_PARM3(ctx);
	a3 = PT_REGS_PARM4(ctx);
	barrier_var(a1);
	barrier_var(a2);
	barrier_var(a3);
	if (h->count_arg == 1) {
		count = a1;
		dtype = a2;
	} else if (h->count_arg == 2) {
		count = a2;
		dtype = a3;
	}
	if (count)
		__sync_fetch_and_add(&h->bytes, count * hccl_dtype_bytes((__u32)dtype));
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(agent_hccl_exit, int ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns(), d;
	struct agent_hccl_key k = { .tgid = pid_tgid >> 32 };
	struct agent_hccl_call *c;
	struct agent_hccl *h;
	__u32 i;

	if (!proc_of(pid_tgid))
		return 0;
	c = bpf_map_lookup_elem(&hccl_inflight, &pid_tgid);
	if (!c) {
		stat_inc(AGENT_STAT_NO_ENTRY);
		return 0;
	}
	k.site = c->site;
	d = now > c->enter_ns ? now - c->enter_ns : 0;
	bpf_map_delete_elem(&hccl_inflight, &pid_tgid);
	h = bpf_map_lookup_elem(&hccl, &k);
	if (!h)
		return 0;
	for (i = 0; i < AGENT_HCCL_NR_BOUNDS; i++)
		if (d <= hccl_bounds_ns[i])
			break;
	__sync_fetch_and_add(&h->bucket[i], 1);
	__sync_fetch_and_add(&h->ns, d);
	if (ret)
		__sync_fetch_and_add(&h->failures, 1);
	__sync_fetch_and_add(&h->returned, 1);
	return 0;
}
