/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ascbpf_ring.bpf.h - what every BPF object of ascbpf shares: the maps that
 * the loader hands from the main object to the others (events, tgids, stats:
 * bpf_map__reuse_fd, user/discovery/pytorch.c), the read-only configuration both set
 * (wakeup_bytes, sched_cfg), and the one way to reserve, fill, submit and
 * count records and steps.  Included by bpf/ascbpf.bpf.c and
 * bpf/pytorch.bpf.c only (BPF side; userspace reads bpf/ascbpf_maps.h).
 *
 * One definition here means the reused maps cannot drift apart between the
 * objects (a reuse_fd of a map with another key/value size fails at load).
 */
#ifndef __ASCBPF_RING_BPF_H
#define __ASCBPF_RING_BPF_H

#include "ascbpf_events.h"
#include "ascbpf_maps.h"
#include "schedule.h"

/* libbpf 1.1 has no PT_REGS_PARM6: the sixth integer argument register. */
#ifndef PT_REGS_PARM6
#if defined(__TARGET_ARCH_x86)
#define PT_REGS_PARM6(x) (((struct pt_regs *)(x))->r9)
#elif defined(__TARGET_ARCH_arm64)
#define PT_REGS_PARM6(x) (((struct user_pt_regs *)(x))->regs[5])
#else
#error "PT_REGS_PARM6 is not defined for this architecture"
#endif
#endif

/* ---- configuration, set by the loader before load (each object its own copy) ---- */
const volatile struct asc_sched sched_cfg = {};
const volatile __u64 wakeup_bytes = 1 << 20; /* wake the consumer above this fill */
/*
 * 1: the kernel has no bpf_get_attach_cookie (or ASCBPF_NO_ATTACH_COOKIE):
 * site ids come from site_ids / ret_sites (bpf/ascbpf_maps.h).  A constant
 * of the frozen .rodata, so the verifier drops the branch not taken: the
 * cookie path costs nothing more, and a 5.10 kernel never sees the helper.
 */
const volatile __u32 no_attach_cookie = 0;

/* ---- maps shared by every object (the main object owns them) ---- */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* resized by --ringbuf-size */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ASC_MAX_TGIDS);
	__type(key, __u32);
	__type(value, struct asc_tgid_state);
} tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct asc_cpu_stats);
} stats SEC(".maps");

/*
 * Only the main object fills and reads these two (pytorch.bpf.c keeps
 * cookies).  One entry each unless the loader sizes them for the fallback
 * (ASC_MAX_SITE_ADDRS, ASC_MAX_RET_SITES): preallocated, as 5.10 wants of
 * tracing programs' hash maps.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct asc_site_key);
	__type(value, __u64);
} site_ids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct asc_ret_key);
	__type(value, __u64);
} ret_sites SEC(".maps");

/*
 * Adds n to one counter of this CPU's stats slot.  Atomic although the slot
 * is per CPU: uprobe and syscall-tracepoint programs run with migration
 * disabled but preemptible (CONFIG_PREEMPTION, and PREEMPT_DYNAMIC can be
 * booted preempt=full), so a program preempted between the load and the
 * store of a plain ++ lets another task's program on the same CPU bump the
 * same slot, and one of the two counts is lost.  Only failure paths count,
 * so the locked add costs nothing on the hot path.
 */
#define asc_stat_add(field, n)                                                    \
	do {                                                                      \
		__u32 __zero = 0;                                                 \
		struct asc_cpu_stats *__s = bpf_map_lookup_elem(&stats, &__zero); \
                                                                                  \
		if (__s)                                                          \
			__sync_fetch_and_add(&__s->field, (n));                   \
	} while (0)

/*
 * A return probe's site id, or -1 when the hit belongs to another process.
 * Older kernels (Debian 12's 6.1, in tools/vm; not 6.18) run every
 * perf-event uretprobe consumer of a uprobe on each return, whatever the pid
 * filter of its perf event: with two -p targets sharing a library each
 * capture got the other's EXIT records too (tools/vm found it).  For
 * pid-filtered perf-event uretprobes user/trace/attach.c puts the owner's
 * tgid in the cookie's upper half; 0 there (uprobe_multi, system-wide
 * probes) means any process.
 */
/*
 * The cookie of an entry probe: bpf_get_attach_cookie, or without it the
 * site_ids entry of (tgid, address hit); ASC_NO_SITE when there is none.
 */
static __always_inline __u64 site_cookie(void *ctx)
{
	struct asc_site_key k = {};
	__u64 *v;

	if (!no_attach_cookie)
		return bpf_get_attach_cookie(ctx);
	k.tgid = bpf_get_current_pid_tgid() >> 32;
	k.ip = PT_REGS_IP((struct pt_regs *)ctx);
	v = bpf_map_lookup_elem(&site_ids, &k);
	return v ? *v : ASC_NO_SITE;
}

/*
 * Without cookies the return probe's site is the one asc_ret_push filed at
 * the entry under (tid, sp - 8): taken out, so a second consumer of the same
 * return (the older kernels above) finds nothing and emits nothing.
 */
static __always_inline __u64 ret_cookie(void *ctx, __u64 pid_tgid)
{
	struct asc_ret_key k = {};
	__u64 *v, c;

	if (!no_attach_cookie)
		return bpf_get_attach_cookie(ctx);
	k.tid = (__u32)pid_tgid;
	k.sp = PT_REGS_SP((struct pt_regs *)ctx) - sizeof(__u64);
	v = bpf_map_lookup_elem(&ret_sites, &k);
	if (!v)
		return ASC_NO_SITE;
	c = *v;
	bpf_map_delete_elem(&ret_sites, &k);
	return c;
}

static __always_inline long ret_site(void *ctx, __u64 pid_tgid)
{
	__u64 c = ret_cookie(ctx, pid_tgid);
	__u32 owner = c >> 32;

	if ((__u32)c == ASC_NO_SITE)
		return -1;
	return owner && owner != (__u32)(pid_tgid >> 32) ? -1 : (long)(__u32)c;
}

/*
 * One sample for nr records that belong together, back to back (a packed
 * struct of record structs: bpf/ascbpf_events.h "Samples"), or NULL with
 * all nr counted as drops: stats.drops counts records, not samples.
 */
static __always_inline void *reserve_group(__u32 size, __u32 nr)
{
	void *rec = bpf_ringbuf_reserve(&events, size, 0);

	if (!rec)
		asc_stat_add(drops, nr);
	return rec;
}

/* A record slot in the ring, or NULL with the drop counted: never silent. */
static __always_inline void *reserve(__u32 size)
{
	return reserve_group(size, 1);
}

/*
 * Submits without a wake-up (the consumer polls) unless the ring is filling
 * up.  Above the mark every record asks (an irq_work, a self-IPI each):
 * asking once per eighth of the mark instead was not measurably cheaper per
 * call and let launch-storm overrun a 1 MiB ring 30x more often, the
 * per-record ask slowing the producers while the consumer catches up
 * (docs/trace.md "Cost").
 */
static __always_inline void submit(void *rec)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(rec, flags);
}

/* Submits and wakes the consumer now: rare records the loader must act on at once. */
static __always_inline void submit_now(void *rec)
{
	bpf_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP);
}

static __always_inline void fill_hdr(struct asc_hdr *h, __u16 type, __u16 size, __u64 pid_tgid,
				     __u32 probe_id, __u64 ts)
{
	h->type = type;
	h->size = size;
	h->tgid = pid_tgid >> 32;
	h->tid = (__u32)pid_tgid;
	h->probe_id = probe_id;
	h->ts_ns = ts;
}

/* The six integer argument registers of an entry, in ENTER's order. */
static __always_inline void read_args(struct pt_regs *ctx, __u64 *args)
{
	args[0] = PT_REGS_PARM1(ctx);
	args[1] = PT_REGS_PARM2(ctx);
	args[2] = PT_REGS_PARM3(ctx);
	args[3] = PT_REGS_PARM4(ctx);
	args[4] = PT_REGS_PARM5(ctx);
	args[5] = PT_REGS_PARM6(ctx);
}

static __always_inline void fill_enter(struct asc_enter *e, struct pt_regs *ctx, __u64 pid_tgid,
				       __u32 id, __u64 ts)
{
	fill_hdr(&e->hdr, ASC_REC_ENTER, sizeof(*e), pid_tgid, id, ts);
	read_args(ctx, e->args);
}

/* ENTER with the six argument registers, alone; returns 0 if nothing was emitted. */
static __always_inline int emit_args_enter(struct pt_regs *ctx, __u64 pid_tgid, __u32 id, __u64 ts)
{
	struct asc_enter *e = reserve(sizeof(*e));

	if (!e)
		return 0;
	fill_enter(e, ctx, pid_tgid, id, ts);
	submit(e);
	return 1;
}

/* EXIT of probe id with return value ret; returns 0 if nothing was emitted. */
static __always_inline int emit_exit(__u64 pid_tgid, __u32 id, __u64 ts, __u64 ret)
{
	struct asc_exit *x = reserve(sizeof(*x));

	if (!x)
		return 0;
	fill_hdr(&x->hdr, ASC_REC_EXIT, sizeof(*x), pid_tgid, id, ts);
	x->ret = ret;
	submit(x);
	return 1;
}

/*
 * Starts the next step of a traced process (native step probe and --step-py
 * alike): takes its index, asks the schedule whether it is recorded, sets
 * the gate and emits the STEP record (every step, recorded or not, so the
 * converter sees every boundary).  Returns the gate's new state.
 */
static __always_inline __u32 start_step(struct asc_tgid_state *st, __u64 pid_tgid, __u32 id,
					__u64 ts)
{
	struct asc_sched s;
	struct asc_step *r;
	__u64 step;
	__u32 action;

	/*
	 * An add without fetch (a fetching atomic is 5.12: 5.10 rejects the
	 * object), then the read: two threads of one process at a boundary at
	 * the same moment could read the same index; step hooks run on one.
	 */
	__sync_fetch_and_add(&st->next_step, 1);
	step = st->next_step - 1;
	/* field by field: a memcpy through a non-volatile pointer is folded to .rodata's zeros */
	s.skip_first = sched_cfg.skip_first;
	s.skip_first_wait = sched_cfg.skip_first_wait;
	s.wait = sched_cfg.wait;
	s.warmup = sched_cfg.warmup;
	s.active = sched_cfg.active;
	s.repeat = sched_cfg.repeat;
	s.enabled = sched_cfg.enabled;
	s.reserved = 0;
	action = asc_sched_action(&s, step);
	st->open = asc_sched_recording(action);
	r = reserve(sizeof(*r));
	if (r) {
		fill_hdr(&r->hdr, ASC_REC_STEP, sizeof(*r), pid_tgid, id, ts);
		r->step = step;
		r->state = action;
		r->reserved = 0;
		submit(r);
	}
	return st->open;
}

#endif /* __ASCBPF_RING_BPF_H */
