// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ascbpf.bpf.c - every BPF program of `ascbpf trace`.
 *
 * The traced thread is the hot path, so each program does the minimum:
 *  1. one hash lookup of the current tgid in `tgids`; no entry or a closed
 *     gate (schedule outside an active window) returns at once;
 *  2. reserve a fixed-size record in the one ring buffer, fill it, submit it
 *     without a wake-up (the consumer polls on a timer) unless the ring holds
 *     more than wakeup_bytes;
 *  3. a failed reserve is counted in the per-CPU `stats` map: never silent.
 *
 * Generic programs (asc_call_enter / asc_call_exit) serve every ASC_PK_CALL
 * and ASC_PK_ATEN_OP site; the attach layer passes the site's probe id as the
 * BPF cookie.  The other probe kinds have dedicated entry programs that emit
 * the ENTER record and their extra record; every kind uses asc_call_exit on
 * return.  Entry programs exist in two sections' worth of variants only in
 * the loader (expected_attach_type), never here.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "ascbpf_arch.bpf.h"
#include <bpf/bpf_core_read.h>
#include "ascbpf_ring.bpf.h"
#include "ascend/torch_npu.h"
#include "ascend/hccl.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* ---- configuration, set by the loader before load (and sched_cfg, wakeup_bytes) ---- */
const volatile __u32 with_stack = 0;	 /* --with-stack: STACK after ENTER */
const volatile __u32 stop_tgid = 0;	 /* our child: SIGSTOP it at the loader hook */
const volatile __u32 comm_filter_on = 0; /* --comm: adopt execs of comm_filter */
const volatile char comm_filter[16] = {};
const volatile __u32 loader_probe_id = 0; /* probe id of the r_brk hook */
const volatile __u32 follow_forks = 0;	  /* children of traced processes are traced */
const volatile __u32 hold_chan = 0;	  /* stop at a first submission to a card without channel */
/*
 * --level (user/discovery/probes.h, ASC_SPEC_LEVEL1): below 1 the Enqueue and
 * aclrtBinaryGetFunction sites emit no ENTER/EXIT, below 2 halSqTaskSend and
 * rtFunctionRegister emit none (the loader attaches no uretprobe there then).
 */
const volatile __u32 trace_level = 2;

/* ---- maps (and events, tgids, stats of ascbpf_ring.bpf.h) ---- */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ASC_MAX_FDS);
	__type(key, struct asc_fd_key);
	__type(value, __u32);
} fdmod SEC(".maps");

/* An ioctl between sys_enter and sys_exit, per tid. */
struct ioctl_inflight {
	__u64 ts_ns;
	__u64 arg;
	__u32 fd;
	__u32 cmd;
	__u32 module;
	__u32 traced; /* 1: emit an IOCTL record at exit (gate was open) */
	char module_name[ASC_MODULE_NAME_LEN];
	__s32 device_id;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ASC_MAX_INFLIGHT);
	__type(key, __u32);
	__type(value, struct ioctl_inflight);
} inflight SEC(".maps");

/* ---- helpers ---- */

/*
 * The gate fast path: the first traced process (the common case of one -p or
 * one -- CMD) is answered from two .bss words, without a map lookup.  The
 * loader sets fast_tgid and keeps fast_open equal to that process's
 * tgids entry; the step program updates both together.  fast_tgid 0: none.
 */
__u32 fast_tgid = 0;
__u32 fast_open = 0;

/* The gate: traced tgid and open window.  Returns 1 if the caller may record. */
static __always_inline int gate(__u64 pid_tgid)
{
	__u32 tgid = pid_tgid >> 32;
	struct asc_tgid_state *st;

	if (tgid == *(volatile __u32 *)&fast_tgid)
		return *(volatile __u32 *)&fast_open;
	st = bpf_map_lookup_elem(&tgids, &tgid);
	return st && st->open;
}

/*
 * The user stack of an ENTER.  The kernel walks the frame-pointer chain from
 * rbp, which at a function's entry still belongs to the caller, so the
 * caller itself would be missing: its return address is at [sp] (the probe
 * sits before any push; the prologue skip only passes an endbr64), and goes
 * in as the second frame.
 */
static __always_inline void emit_stack(struct pt_regs *ctx, __u64 pid_tgid, __u32 id, __u64 ts)
{
	struct asc_stack *s = reserve(sizeof(*s));
	__u64 ret_addr = 0;
	long n;

	if (!s)
		return;
	fill_hdr(&s->hdr, ASC_REC_STACK, sizeof(*s), pid_tgid, id, ts);
	n = bpf_get_stack(ctx, &s->ips[1], sizeof(s->ips) - sizeof(s->ips[0]), BPF_F_USER_STACK);
	if (n <= 0) {
		s->ips[1] = PT_REGS_IP(ctx);
		n = sizeof(__u64);
	}
	n /= sizeof(__u64);
	s->ips[0] = s->ips[1]; /* the probed instruction */
	if (ASC_ARCH_RET_ADDR(ctx, &ret_addr) < 0)
		ret_addr = 0;
	s->ips[1] = ret_addr; /* the caller */
	s->nr = n + 1;
	if (s->nr > ASC_STACK_DEPTH)
		s->nr = ASC_STACK_DEPTH;
	s->flags = n + 1 >= ASC_STACK_DEPTH ? ASC_STACK_TRUNCATED : 0;
	submit(s);
}

/* ENTER with the six argument registers (and its STACK); returns 0 if nothing was emitted. */
static __always_inline int emit_enter(struct pt_regs *ctx, __u64 pid_tgid, __u32 id, __u64 ts)
{
	if (!emit_args_enter(ctx, pid_tgid, id, ts))
		return 0;
	if (with_stack)
		emit_stack(ctx, pid_tgid, id, ts);
	return 1;
}

/* ---- generic call sites (ASC_PK_CALL, ASC_PK_ATEN_OP) ---- */

SEC("uprobe")
int BPF_KPROBE(asc_call_enter)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	if (!gate(pid_tgid))
		return 0;
	emit_enter(ctx, pid_tgid, site_cookie(ctx), bpf_ktime_get_ns());
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(asc_call_exit)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	long id;

	if ((id = ret_site(ctx, pid_tgid)) < 0 || !gate(pid_tgid))
		return 0;
	emit_exit(pid_tgid, (__u32)id, bpf_ktime_get_ns(), PT_REGS_RC(ctx));
	return 0;
}

/*
 * Without attach cookies only (bpf/ascbpf_maps.h "Site ids"): attached by
 * user/trace/attach.c as one more entry probe at every uretprobe site, it
 * files the site for the return probe.  A full ret_sites is a drop.
 */
SEC("uprobe")
int BPF_KPROBE(asc_ret_push)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct asc_ret_key k = { .tid = (__u32)pid_tgid };
	__u64 c = site_cookie(ctx);

	if ((__u32)c == ASC_NO_SITE)
		return 0;
	k.sp = PT_REGS_SP(ctx);
	if (bpf_map_update_elem(&ret_sites, &k, &c, BPF_ANY))
		asc_stat_add(drops, 1);
	return 0;
}

/* ---- op names ---- */

/* Where an OPNAME's bytes are: nowhere (no OPNAME), a std::string's data + length, a C string. */
#define NAME_NONE 0
#define NAME_SPAN 1
#define NAME_CSTR 2

static __always_inline void fill_opname(struct asc_opname *o, __u64 pid_tgid, __u32 id, __u64 ts,
					const void *src, __u64 len, int kind)
{
	long n;

	fill_hdr(&o->hdr, ASC_REC_OPNAME, sizeof(*o), pid_tgid, id, ts);
	o->flags = 0;
	if (kind == NAME_CSTR) {
		n = bpf_probe_read_user_str(o->name, sizeof(o->name), src);
		if (n < 0) {
			asc_stat_add(name_lost, 1);
			o->name[0] = 0;
			n = 1;
		}
		o->len = n - 1;
		if (n == sizeof(o->name))
			o->flags = ASC_OPNAME_TRUNCATED; /* may also be exactly 63 bytes */
	} else {
		if (len > sizeof(o->name) - 1) {
			len = sizeof(o->name) - 1;
			o->flags = ASC_OPNAME_TRUNCATED;
		}
		if (bpf_probe_read_user(o->name, len & (ASC_NAME_LEN - 1), src) < 0) {
			asc_stat_add(name_lost, 1);
			len = 0;
		}
		len &= ASC_NAME_LEN - 1;
		o->name[len] = 0;
		o->len = len;
	}
}

/*
 * One sample for the records of one call (bpf/ascbpf_events.h "Samples"):
 * one reservation, one submit and one wake-up check instead of one each.
 */
struct grp_enter_opname {
	struct asc_enter e;
	struct asc_opname o;
};

/*
 * ENTER + OPNAME of an op-name site.  With --with-stack the STACK belongs
 * right after the ENTER: then the three are written as separate samples.
 */
static __always_inline void emit_enter_opname(struct pt_regs *ctx, __u64 pid_tgid, __u32 id,
					      __u64 ts, const void *src, __u64 len, int kind)
{
	struct grp_enter_opname *g;
	struct asc_opname *o;

	if (with_stack) {
		emit_enter(ctx, pid_tgid, id, ts);
		o = reserve(sizeof(*o));
		if (!o)
			return;
		fill_opname(o, pid_tgid, id, ts, src, len, kind);
		submit(o);
		return;
	}
	g = reserve_group(sizeof(*g), 2);
	if (!g)
		return;
	fill_enter(&g->e, ctx, pid_tgid, id, ts);
	fill_opname(&g->o, pid_tgid, id, ts, src, len, kind);
	submit(g);
}

/* arg0: const std::string & (libstdc++: data pointer at 0, length at 8). */
SEC("uprobe")
int BPF_KPROBE(asc_opname_stdstr_enter, void *str)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct {
		const void *data;
		__u64 len;
	} s = {};
	__u32 id;
	__u64 ts;

	if (!gate(pid_tgid))
		return 0;
	id = site_cookie(ctx);
	ts = bpf_ktime_get_ns();
	if (bpf_probe_read_user(&s, sizeof(s), str) < 0) {
		asc_stat_add(name_lost, 1); /* an empty name below, counted */
		s.len = 0;
	}
	emit_enter_opname(ctx, pid_tgid, id, ts, s.data, s.len, NAME_SPAN);
	return 0;
}

/*
 * An old-ABI (copy-on-write) std::string at str: one pointer to the
 * characters, whose _Rep {length, capacity, refcount} ends right before them
 * (length at -24).  0, or -1 when unreadable.
 */
static __always_inline int read_cow_string(const void *str, const void **data, __u64 *len)
{
	__u64 p = 0;

	if (bpf_probe_read_user(&p, sizeof(p), str) < 0 || !p ||
	    bpf_probe_read_user(len, sizeof(*len), (const void *)(p - 24)) < 0)
		return -1;
	*data = (const void *)p;
	return 0;
}

/* arg0: const std::string & of an old-C++-ABI library (ASC_PROBE_CXX_OLD_ABI). */
SEC("uprobe")
int BPF_KPROBE(asc_opname_cowstr_enter, void *str)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	const void *data = NULL;
	__u64 len = 0;
	__u32 id;
	__u64 ts;

	if (!gate(pid_tgid))
		return 0;
	id = site_cookie(ctx);
	ts = bpf_ktime_get_ns();
	if (read_cow_string(str, &data, &len) < 0) {
		asc_stat_add(name_lost, 1); /* an empty name below, counted */
		len = 0;
	}
	emit_enter_opname(ctx, pid_tgid, id, ts, data, len, NAME_SPAN);
	return 0;
}

/* arg0: const char *. */
SEC("uprobe")
int BPF_KPROBE(asc_opname_cstr_enter, const char *name)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 id;
	__u64 ts;

	if (!gate(pid_tgid))
		return 0;
	id = site_cookie(ctx);
	ts = bpf_ktime_get_ns();
	emit_enter_opname(ctx, pid_tgid, id, ts, name, 0, NAME_CSTR);
	return 0;
}

/*
 * ---- task queue: QueueParas * (stream at 0, type at 8, paramVal at 24,
 * correlation id at 32) ----
 * with_enter: an ENTER record first (the site has a uretprobe: a span).
 */
#define QP_COMPILE_AND_EXECUTE 1 /* paramVal -> ExecuteParas { char opType[100]; ... } */
#define QP_EXECUTE_OPAPI       7 /* slot after CopyFunc: { char opType[100]; ... } */
#define QP_EXECUTE_OPAPI_V2    8 /* paramVal -> ExecuteParasOpApiV2 { std::string *opName; ... } */

static __always_inline void fill_queue(struct asc_queue *q, __u64 pid_tgid, __u32 id, __u64 ts,
				       const __u64 *v, __u32 side)
{
	fill_hdr(&q->hdr, ASC_REC_QUEUE, sizeof(*q), pid_tgid, id, ts);
	q->stream = v[0];
	q->param_type = (__u32)v[1];
	q->correlation_id = v[4];
	q->side = side;
}

/* The samples a queue site writes (one reservation each, bpf/ascbpf_events.h "Samples"). */
struct grp_queue_opname {
	struct asc_queue q;
	struct asc_opname o;
};

struct grp_enter_queue {
	struct asc_enter e;
	struct asc_queue q;
};

struct grp_enter_queue_opname {
	struct asc_enter e;
	struct asc_queue q;
	struct asc_opname o;
};

/*
 * Records of a queue site, in this order, one sample: ENTER (with_enter: the
 * site has a uretprobe, a span), QUEUE, and at Enqueue the OPNAME read from
 * the slot itself (so OpCommand::RunOpApiV2 needs no probe; same probe id
 * and ts).  The name's source is read before the reservation, whose size it
 * decides.  With --with-stack the ENTER and its STACK come first as samples
 * of their own.
 */
static __always_inline int queue_enter(struct pt_regs *ctx, const void *qp, __u32 side,
				       int with_enter, int cow)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct {
		const void *data;
		__u64 len;
	} str = {};
	const void *src = NULL;
	int name = NAME_NONE;
	__u64 v[5] = {};
	__u32 id;
	__u64 ts;

	if (!gate(pid_tgid))
		return 0;
	id = site_cookie(ctx);
	ts = bpf_ktime_get_ns();
	bpf_probe_read_user(v, sizeof(v), qp); /* zeros on fault */
	if (side == ASC_QUEUE_ENQUEUE && v[3]) {
		if ((__u32)v[1] == QP_EXECUTE_OPAPI_V2) {
			__u64 strp = 0;

			if (bpf_probe_read_user(&strp, sizeof(strp), (void *)v[3]) < 0 || !strp ||
			    (cow ? read_cow_string((void *)strp, &str.data, &str.len) :
				   bpf_probe_read_user(&str, sizeof(str), (void *)strp)) < 0)
				asc_stat_add(name_lost, 1); /* QUEUE without an OPNAME */
			else
				name = NAME_SPAN;
			src = str.data;
		} else if ((__u32)v[1] == QP_EXECUTE_OPAPI ||
			   (__u32)v[1] == QP_COMPILE_AND_EXECUTE) {
			name = NAME_CSTR;
			src = (const void *)v[3];
		}
	}
	if (with_enter && with_stack) {
		emit_enter(ctx, pid_tgid, id, ts);
		with_enter = 0;
	}
	if (with_enter && name != NAME_NONE) {
		struct grp_enter_queue_opname *g = reserve_group(sizeof(*g), 3);

		if (!g)
			return 0;
		fill_enter(&g->e, ctx, pid_tgid, id, ts);
		fill_queue(&g->q, pid_tgid, id, ts, v, side);
		fill_opname(&g->o, pid_tgid, id, ts, src, str.len, name);
		submit(g);
	} else if (with_enter) {
		struct grp_enter_queue *g = reserve_group(sizeof(*g), 2);

		if (!g)
			return 0;
		fill_enter(&g->e, ctx, pid_tgid, id, ts);
		fill_queue(&g->q, pid_tgid, id, ts, v, side);
		submit(g);
	} else if (name != NAME_NONE) {
		struct grp_queue_opname *g = reserve_group(sizeof(*g), 2);

		if (!g)
			return 0;
		fill_queue(&g->q, pid_tgid, id, ts, v, side);
		fill_opname(&g->o, pid_tgid, id, ts, src, str.len, name);
		submit(g);
	} else {
		struct asc_queue *q = reserve(sizeof(*q));

		if (!q)
			return 0;
		fill_queue(q, pid_tgid, id, ts, v, side);
		submit(q);
	}
	return 0;
}

/*
 * c10_npu::Repository::Enqueue(void *cur_paras) is a member function: arg0 is
 * `this`, the QueueParas pointer is arg1.
 */
SEC("uprobe")
int BPF_KPROBE(asc_enqueue_enter, void *self, void *qp)
{
	return queue_enter(ctx, qp, ASC_QUEUE_ENQUEUE, trace_level >= 1, 0);
}

/* The same in an old-C++-ABI library: the slot's opName is a COW std::string. */
SEC("uprobe")
int BPF_KPROBE(asc_enqueue_cow_enter, void *self, void *qp)
{
	return queue_enter(ctx, qp, ASC_QUEUE_ENQUEUE, trace_level >= 1, 1);
}

/* at_npu::native::AsncExecFunc(void *data): a free function, QueueParas at arg0. */

SEC("uprobe")
int BPF_KPROBE(asc_dequeue_enter, void *qp)
{
	return queue_enter(ctx, qp, ASC_QUEUE_DEQUEUE, 1, 0);
}

/*
 * ---- halSqTaskSend(uint32_t devId, struct halTaskSendInfo *info) ----
 * One call may submit more SQEs than one record keeps (npu_model batches 32):
 * the call is written as consecutive SQE records of the same thread and
 * timestamp, part k keeping headers [k * ASC_MAX_SQES, k * ASC_MAX_SQES +
 * nr_kept), its sqe_num being the SQEs of the call from its first header on
 * (part 0: the whole call).  At most ASC_MAX_SQE_RECS parts; the SQEs beyond
 * them are counted in stats.sqe_lost, never dropped silently.
 */

/*
 * ---- holds (ascbpf_maps.h ASC_HOLD_*) ----
 * chan_on[dev]: set by the loader once it started (or tried) card dev's
 * channel; until then a holdable process's submission there stops it, so
 * that none of its tasks completes before the channel reads it.
 */
__u8 chan_on[ASC_HOLD_DEVS] = {};
/* set by the loader once the release watchdog runs (holds.h): forks / execs may be stopped */
__u32 hold_others = 0;

/* Our -- CMD child (PDEATHSIG(SIGCONT)), or with a watchdog a fork / exec we follow. */
static __always_inline int holdable(__u32 tgid, const struct asc_tgid_state *st)
{
	if (stop_tgid && tgid == stop_tgid)
		return 1;
	return *(volatile __u32 *)&hold_others && st &&
	       (st->flags & (ASC_TGID_FROM_FORK | ASC_TGID_FROM_EXEC));
}

/*
 * Stops the calling process and tells the loader why (a loader-hook record
 * with a wake-up).  The stop is queued while the record is still reserved:
 * the loader's SIGCONT can only follow it (a SIGCONT sent first would leave
 * the process stopped).  No record, no stop.
 */
static __always_inline void hold_current(__u64 pid_tgid, __u64 kind, __u64 arg)
{
	struct asc_enter *e = reserve(sizeof(*e));

	if (!e)
		return;
	fill_hdr(&e->hdr, ASC_REC_ENTER, sizeof(*e), pid_tgid, loader_probe_id, bpf_ktime_get_ns());
	__builtin_memset(e->args, 0, sizeof(e->args));
	e->args[0] = bpf_send_signal(19 /* SIGSTOP */) ? ASC_HOLD_FAILED | kind : kind;
	e->args[1] = arg;
	submit_now(e);
}

/* A submission to a card whose channel the loader has not started: hold the process. */
static __always_inline void hold_for_chan(__u64 pid_tgid, __u32 dev_id)
{
	__u32 tgid = pid_tgid >> 32;
	struct asc_tgid_state *st = NULL;

	if (dev_id >= ASC_HOLD_DEVS || *(volatile __u8 *)&chan_on[dev_id])
		return;
	if (tgid != stop_tgid)
		st = bpf_map_lookup_elem(&tgids, &tgid);
	if (holdable(tgid, st))
		hold_current(pid_tgid, ASC_HOLD_CHAN, dev_id);
}

/* the unwind guard holds through hold_current() */
#include "unwind.bpf.h"

/* a batched send was seen at Level0 and the consumer woken for it (once per trace) */
__u32 level0_batch_woken = 0;

SEC("uprobe")
int BPF_KPROBE(asc_sqe_send_enter, __u32 dev_id, void *info)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	/* halTaskSendInfo: type, tsId, sqId, timeout, sqe_addr @16, sqe_num @24 */
	struct {
		__u32 type, ts_id, sq_id;
		__s32 timeout;
		__u64 sqe_addr;
		__u32 sqe_num, pos;
	} ti;
	struct asc_sqe *r;
	__u32 i, k, n, first, id;
	__u64 ts;

	if (!gate(pid_tgid))
		return 0;
	id = site_cookie(ctx);
	ts = bpf_ktime_get_ns();
	/* below Level2 the site is entry only (no hal* calls): the SQE record alone */
	if (trace_level >= 2)
		emit_enter(ctx, pid_tgid, id, ts);
	/* stopped before the call runs: the task is sent once the channel reads the card */
	if (hold_chan)
		hold_for_chan(pid_tgid, dev_id);
	if (bpf_probe_read_user(&ti, sizeof(ti), info) < 0)
		__builtin_memset(&ti, 0, sizeof(ti));
	for (k = 0; k < ASC_MAX_SQE_RECS; k++) {
		first = k * ASC_MAX_SQES;
		if (k && first >= ti.sqe_num)
			break; /* part 0 is written even for an empty submission */
		r = reserve(sizeof(*r));
		if (!r)
			return 0; /* counted as a drop */
		fill_hdr(&r->hdr, ASC_REC_SQE, sizeof(*r), pid_tgid, id, ts);
		r->dev_id = dev_id;
		r->sq_id = ti.sq_id;
		r->sqe_num = ti.sqe_num - first;
		n = r->sqe_num < ASC_MAX_SQES ? r->sqe_num : ASC_MAX_SQES;
		r->nr_kept = 0;
		__builtin_memset(r->sqe, 0, sizeof(r->sqe));
		for (i = 0; i < ASC_MAX_SQES; i++) {
			/* 64-byte SQEs, 8-byte STARS header first */
			__u64 at = ti.sqe_addr + (__u64)(first + i) * 64;

			if (i >= n)
				break;
			if (bpf_probe_read_user(&r->sqe[i], sizeof(r->sqe[i]), (void *)at) < 0)
				break;
			r->nr_kept = i + 1;
		}
		/* Level0: the loader attaches the launch marks at the first batch (user/trace/trace.c) */
		if (trace_level == 0 && ti.sqe_num > 1 && !k && !level0_batch_woken) {
			level0_batch_woken = 1;
			submit_now(r);
		} else {
			submit(r);
		}
	}
	if (ti.sqe_num > ASC_MAX_SQE_RECS * ASC_MAX_SQES)
		asc_stat_add(sqe_lost, ti.sqe_num - ASC_MAX_SQE_RECS * ASC_MAX_SQES);
	return 0;
}

/*
 * ---- kernel names (rare: kernel registration) ----
 * aclrtBinaryGetFunction(binHandle, const char *kernelName, aclrtFuncHandle *funcHandle):
 * the entry stashes kernelName and the out pointer per thread; the return,
 * when it succeeded, reads *funcHandle and emits FUNCNAME.
 * rtFunctionRegister(binHandle, const void *stubFunc, const char *stubName, ...):
 * FUNCNAME at entry, handle = stubFunc.
 * ENTER/EXIT as well only at the level that shows the call (1 for aclrt*, 2 for rt*).
 */
struct funcname_stash {
	__u64 name;
	__u64 out;
	__u32 probe_id;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ASC_MAX_INFLIGHT);
	__type(key, __u32);
	__type(value, struct funcname_stash);
} funcname_inflight SEC(".maps");

static __always_inline void emit_funcname(__u64 pid_tgid, __u32 id, __u64 ts, __u64 handle,
					  const char *name)
{
	struct asc_funcname *f = reserve(sizeof(*f));
	long n;

	if (!f)
		return;
	fill_hdr(&f->hdr, ASC_REC_FUNCNAME, sizeof(*f), pid_tgid, id, ts);
	f->handle = handle;
	f->flags = 0;
	n = bpf_probe_read_user_str(f->name, sizeof(f->name), name);
	if (n < 1) {
		n = 1;
		f->name[0] = 0;
	}
	f->len = n - 1;
	if (n == sizeof(f->name))
		f->flags = ASC_OPNAME_TRUNCATED; /* may also be exactly 63 bytes */
	submit(f);
}

SEC("uprobe")
int BPF_KPROBE(asc_funcname_get_enter, void *bin, const char *name, void *out)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct funcname_stash st = {};
	__u32 tid = (__u32)pid_tgid;

	if (!gate(pid_tgid))
		return 0;
	st.probe_id = site_cookie(ctx);
	if (trace_level >= 1)
		emit_enter(ctx, pid_tgid, st.probe_id, bpf_ktime_get_ns());
	st.name = (__u64)name;
	st.out = (__u64)out;
	bpf_map_update_elem(&funcname_inflight, &tid, &st, BPF_ANY);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(asc_funcname_get_exit)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, id;
	struct funcname_stash *st;
	__u64 ts, ret, handle = 0;
	long site;

	if ((site = ret_site(ctx, pid_tgid)) < 0 || !gate(pid_tgid))
		return 0;
	id = (__u32)site;
	ts = bpf_ktime_get_ns();
	ret = PT_REGS_RC(ctx);
	st = bpf_map_lookup_elem(&funcname_inflight, &tid);
	if (st && st->probe_id == id && (__u32)ret == 0 &&
	    bpf_probe_read_user(&handle, sizeof(handle), (void *)st->out) == 0 && handle)
		emit_funcname(pid_tgid, id, ts, handle, (const char *)st->name);
	if (st)
		bpf_map_delete_elem(&funcname_inflight, &tid);
	if (trace_level >= 1)
		emit_exit(pid_tgid, id, ts, ret);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(asc_funcname_reg_enter, void *bin, const void *stub, const char *name)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 id;
	__u64 ts;

	if (!gate(pid_tgid))
		return 0;
	id = site_cookie(ctx);
	ts = bpf_ktime_get_ns();
	if (trace_level >= 2)
		emit_enter(ctx, pid_tgid, id, ts);
	if (stub && name)
		emit_funcname(pid_tgid, id, ts, (__u64)stub, name);
	return 0;
}

/*
 * An AI CPU launch call at Level2 (rtCpuKernelLaunchWithFlag,
 * rtAicpuKernelLaunchExWithArgs): the CALL's ENTER, and a FUNCNAME of arg1,
 * the kernel's name string, whose address the converter takes as the
 * handle (include/ascend/rt_launch.h RT_NAME_ARG_*).
 */
SEC("uprobe")
int BPF_KPROBE(asc_call_aicpu_enter, const void *a0, const char *name)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 id;
	__u64 ts;

	if (!gate(pid_tgid))
		return 0;
	id = site_cookie(ctx);
	ts = bpf_ktime_get_ns();
	emit_enter(ctx, pid_tgid, id, ts);
	if (name)
		emit_funcname(pid_tgid, id, ts, (__u64)name, name);
	return 0;
}

/*
 * ---- kernel names by binary and entry (CANN 8.x/9.x opbase) ----
 * aclrtBinaryLoadFromFile(binPath, options, &bin) (ASC_PK_BINARY_LOAD): on
 * return, the binary's name (the file's base name up to its first '.') is
 * kept per bin handle in bin_names and written as a FUNCNAME of the bin
 * handle (rtKernelLaunchWithHandleV2 launches carry it).
 * aclrtBinaryGetFunctionByEntry(bin, funcEntry, &funcHandle)
 * (ASC_PK_FUNCNAME_ENTRY): on return, a FUNCNAME of *funcHandle with the
 * name of bin (a binary loaded before the attach has none: no FUNCNAME).
 * Both emit ENTER/EXIT at --level >= 1 (they are aclrt* calls).
 */
#define BIN_PATH_LEN 128

struct bin_name {
	char name[ASC_NAME_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct bin_name);
} bin_names SEC(".maps");

struct bin_scratch {
	char path[BIN_PATH_LEN];
	struct bin_name n;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bin_scratch);
} bin_scratch SEC(".maps");

static __always_inline void emit_funcname_k(__u64 pid_tgid, __u32 id, __u64 ts, __u64 handle,
					    const struct bin_name *bn)
{
	struct asc_funcname *f = reserve(sizeof(*f));
	__u32 i;

	if (!f)
		return;
	fill_hdr(&f->hdr, ASC_REC_FUNCNAME, sizeof(*f), pid_tgid, id, ts);
	f->handle = handle;
	f->flags = 0;
	__builtin_memcpy(f->name, bn->name, sizeof(f->name));
	f->name[sizeof(f->name) - 1] = 0;
	for (i = 0; i < sizeof(f->name) - 1 && f->name[i]; i++)
		;
	f->len = i;
	submit(f);
}

static __always_inline int stash_call(struct pt_regs *ctx, __u64 pid_tgid, __u64 a, __u64 out)
{
	struct funcname_stash st = {};
	__u32 tid = (__u32)pid_tgid;

	st.probe_id = site_cookie(ctx);
	if (trace_level >= 1)
		emit_enter(ctx, pid_tgid, st.probe_id, bpf_ktime_get_ns());
	st.name = a;
	st.out = out;
	bpf_map_update_elem(&funcname_inflight, &tid, &st, BPF_ANY);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(asc_binary_load_enter, const char *path, void *options, void *out)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	if (!gate(pid_tgid))
		return 0;
	return stash_call(ctx, pid_tgid, (__u64)path, (__u64)out);
}

/*
 * The base name of sc->path (len bytes with its NUL, as read) up to its
 * first '.' into sc->n.name.  Each loop stops at its first hit, so the
 * verifier walks it once.
 */
static __always_inline void bin_basename(struct bin_scratch *sc, long len)
{
	__u32 k, start = 0;
	long i;

	for (k = 0; k < BIN_PATH_LEN; k++) {
		i = len - 2 - (long)k;
		if (i < 0)
			break;
		if (sc->path[i & (BIN_PATH_LEN - 1)] == '/') {
			start = i + 1;
			break;
		}
	}
	if (bpf_probe_read_kernel_str(sc->n.name, sizeof(sc->n.name),
				      sc->path + (start & (BIN_PATH_LEN - 1))) < 0)
		sc->n.name[0] = 0;
	for (k = 0; k < ASC_NAME_LEN; k++) {
		if (!sc->n.name[k])
			break;
		if (sc->n.name[k] == '.') {
			sc->n.name[k] = 0;
			break;
		}
	}
}

SEC("uretprobe")
int BPF_KRETPROBE(asc_binary_load_exit)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, id, zero = 0;
	struct funcname_stash *st;
	struct bin_scratch *sc;
	__u64 ts, ret, bin = 0;
	long site, len;

	if ((site = ret_site(ctx, pid_tgid)) < 0 || !gate(pid_tgid))
		return 0;
	id = (__u32)site;
	ts = bpf_ktime_get_ns();
	ret = PT_REGS_RC(ctx);
	st = bpf_map_lookup_elem(&funcname_inflight, &tid);
	sc = bpf_map_lookup_elem(&bin_scratch, &zero);
	if (st && sc && st->probe_id == id && (__u32)ret == 0 &&
	    bpf_probe_read_user(&bin, sizeof(bin), (void *)st->out) == 0 && bin &&
	    (len = bpf_probe_read_user_str(sc->path, sizeof(sc->path), (const char *)st->name)) >
		    1) {
		bin_basename(sc, len);
		bpf_map_update_elem(&bin_names, &bin, &sc->n, BPF_ANY);
		emit_funcname_k(pid_tgid, id, ts, bin, &sc->n);
	}
	if (st)
		bpf_map_delete_elem(&funcname_inflight, &tid);
	if (trace_level >= 1)
		emit_exit(pid_tgid, id, ts, ret);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(asc_funcname_entry_enter, void *bin, __u64 entry, void *out)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	if (!gate(pid_tgid))
		return 0;
	return stash_call(ctx, pid_tgid, (__u64)bin, (__u64)out);
}

SEC("uretprobe")
int BPF_KRETPROBE(asc_funcname_entry_exit)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, id;
	struct funcname_stash *st;
	struct bin_name *bn;
	__u64 ts, ret, handle = 0, bin;
	long site;

	if ((site = ret_site(ctx, pid_tgid)) < 0 || !gate(pid_tgid))
		return 0;
	id = (__u32)site;
	ts = bpf_ktime_get_ns();
	ret = PT_REGS_RC(ctx);
	st = bpf_map_lookup_elem(&funcname_inflight, &tid);
	if (st && st->probe_id == id && (__u32)ret == 0 &&
	    bpf_probe_read_user(&handle, sizeof(handle), (void *)st->out) == 0 && handle) {
		bin = st->name;
		bn = bpf_map_lookup_elem(&bin_names, &bin);
		if (bn)
			emit_funcname_k(pid_tgid, id, ts, handle, bn);
	}
	if (st)
		bpf_map_delete_elem(&funcname_inflight, &tid);
	if (trace_level >= 1)
		emit_exit(pid_tgid, id, ts, ret);
	return 0;
}

/*
 * ---- allocator report hook ----
 * torch_npu::profiler::reportMemoryDataToNpuProfiler(const MemoryUsage &):
 * arg0 points at torch_npu's struct MemoryUsage (include/ascend/torch_npu.h:
 * five 1-byte fields, then ptr, alloc_size, total_allocated, total_reserved,
 * total_active, stream), read whole and mapped field by field onto asc_mem;
 * the workspace component becomes ASC_MEM_WORKSPACE.  A failed read still
 * writes the record, zeroed, so the event is not lost from the count.
 */
SEC("uprobe")
int BPF_KPROBE(asc_mem_report_enter, void *rep)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct MemoryUsage u;
	struct asc_mem *m;

	if (!gate(pid_tgid))
		return 0;
	if (bpf_probe_read_user(&u, sizeof(u), rep) < 0)
		__builtin_memset(&u, 0, sizeof(u));
	m = reserve(sizeof(*m));
	if (!m)
		return 0;
	fill_hdr(&m->hdr, ASC_REC_MEM, sizeof(*m), pid_tgid, site_cookie(ctx), bpf_ktime_get_ns());
	m->ptr = (__u64)u.ptr;
	m->size = u.alloc_size;
	m->total_allocated = (__u64)u.total_allocated;
	m->total_reserved = (__u64)u.total_reserved;
	m->total_active = (__u64)u.total_active;
	m->stream = (__u64)u.stream_ptr;
	m->device = (__u8)u.device_index;
	m->component = u.component_type == 1 ? ASC_MEM_WORKSPACE : ASC_MEM_PTA;
	m->data_type = u.data_type;
	m->reserved = 0;
	submit(m);
	return 0;
}

/*
 * ---- segment (GE) and driver (APP) allocations ----
 * rtMalloc(void **devPtr, uint64_t size, rtMemType_t, uint16_t moduleId) and
 * halMemAlloc(void **pp, unsigned long long size, unsigned long long flag):
 * the entry stashes the out-pointer and size per (thread, component); the
 * return, when it succeeded, reads the pointer and emits one MEM record
 * (size, totals of this process on that device after the event, as npu_model
 * journals them).  rtFree / halMemFree emit the MEM free at entry with the
 * size the block was allocated with.  A GE allocation's device is the one
 * of the halMemAlloc it makes (rtMalloc has no device argument); host
 * memory (MEM_HOST) is not device memory and is not recorded.
 */
struct alloc_stash {
	__u64 out; /* void ** of the caller */
	__u64 size;
	__u32 probe_id;
	__u32 device;
};

struct stash_key {
	__u32 tid;
	__u32 component;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ASC_MAX_INFLIGHT);
	__type(key, struct stash_key);
	__type(value, struct alloc_stash);
} alloc_inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ASC_MAX_ALLOCS);
	__type(key, struct asc_alloc_key);
	__type(value, struct asc_alloc_val);
} allocs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct asc_memtot_key);
	__type(value, __u64);
} memtot SEC(".maps");

#define MEM_TYPE_MASK (0xfull << 10)
#define MEM_TYPE_HOST (2ull << 10)

static __always_inline __u64 memtot_add(__u32 tgid, __u32 component, __u32 device, __s64 delta)
{
	struct asc_memtot_key k = { .tgid = tgid, .component = component, .device = device };
	__u64 zero = 0, *t;

	t = bpf_map_lookup_elem(&memtot, &k);
	if (!t) {
		bpf_map_update_elem(&memtot, &k, &zero, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&memtot, &k);
		if (!t)
			return 0;
	}
	/*
	 * Add without fetch (fetching atomics are 5.12; 5.10 rejects them even
	 * in dead code), then read: another thread's concurrent event of the same
	 * component may already be in the total read; the sum stays exact.
	 */
	__sync_fetch_and_add(t, delta);
	return *t;
}

static __always_inline void emit_mem(__u64 pid_tgid, __u32 id, __u64 ts, __u64 ptr, __s64 size,
				     __u64 total, __u32 component, __u32 device, __u32 data_type)
{
	struct asc_mem *m = reserve(sizeof(*m));

	if (!m)
		return;
	fill_hdr(&m->hdr, ASC_REC_MEM, sizeof(*m), pid_tgid, id, ts);
	m->ptr = ptr;
	m->size = size;
	m->total_allocated = total;
	m->total_reserved = total;
	m->total_active = total;
	m->stream = 0;
	m->device = device;
	m->component = component;
	m->data_type = data_type;
	m->reserved = 0;
	submit(m);
}

static __always_inline int alloc_enter(struct pt_regs *ctx, __u32 component)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 id = site_cookie(ctx);
	struct stash_key k = { .tid = (__u32)pid_tgid, .component = component };
	struct alloc_stash st = {};

	if (!gate(pid_tgid))
		return 0;
	emit_enter(ctx, pid_tgid, id, bpf_ktime_get_ns());
	if (component == ASC_MEM_APP) {
		__u64 flag = PT_REGS_PARM3(ctx);
		struct stash_key ge = { .tid = (__u32)pid_tgid, .component = ASC_MEM_GE };
		struct alloc_stash *outer;

		if ((flag & MEM_TYPE_MASK) == MEM_TYPE_HOST)
			return 0;
		st.device = flag & 0x3ff;
		/* inside rtMalloc: that segment lives on this device */
		outer = bpf_map_lookup_elem(&alloc_inflight, &ge);
		if (outer)
			outer->device = st.device;
	}
	st.out = PT_REGS_PARM1(ctx);
	st.size = PT_REGS_PARM2(ctx);
	st.probe_id = id;
	bpf_map_update_elem(&alloc_inflight, &k, &st, BPF_ANY);
	return 0;
}

static __always_inline int alloc_exit(struct pt_regs *ctx, __u32 component)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	long id = ret_site(ctx, pid_tgid);
	__u32 tgid = pid_tgid >> 32;
	struct stash_key k = { .tid = (__u32)pid_tgid, .component = component };
	struct asc_alloc_key ak = { .tgid = tgid, .component = component };
	struct asc_alloc_val av = {};
	struct alloc_stash *st;
	__u64 ts, ret, total;

	if (!gate(pid_tgid) || id < 0)
		return 0;
	ts = bpf_ktime_get_ns();
	ret = PT_REGS_RC(ctx);
	emit_exit(pid_tgid, id, ts, ret);
	st = bpf_map_lookup_elem(&alloc_inflight, &k);
	if (!st || st->probe_id != id)
		return 0;
	av.size = st->size;
	av.component = component;
	av.device = st->device;
	if ((__u32)ret == 0 && bpf_probe_read_user(&ak.ptr, sizeof(ak.ptr), (void *)st->out) == 0) {
		bpf_map_update_elem(&allocs, &ak, &av, BPF_ANY);
		total = memtot_add(tgid, component, av.device, av.size);
		emit_mem(pid_tgid, id, ts, ak.ptr, av.size, total, component, av.device,
			 ASC_MEM_MALLOC);
	}
	bpf_map_delete_elem(&alloc_inflight, &k);
	return 0;
}

static __always_inline int free_enter(struct pt_regs *ctx, __u32 component)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 id = site_cookie(ctx), tgid = pid_tgid >> 32;
	struct asc_alloc_key ak = { .tgid = tgid,
				    .component = component,
				    .ptr = PT_REGS_PARM1(ctx) };
	struct asc_alloc_val *av;
	__u64 ts = bpf_ktime_get_ns(), total;
	__s64 size;
	__u32 device;

	if (!gate(pid_tgid))
		return 0;
	emit_enter(ctx, pid_tgid, id, ts);
	av = bpf_map_lookup_elem(&allocs, &ak);
	if (!av)
		return 0; /* not seen allocated (before the trace), or host memory */
	size = av->size;
	device = av->device;
	bpf_map_delete_elem(&allocs, &ak);
	total = memtot_add(tgid, component, device, -size);
	emit_mem(pid_tgid, id, ts, ak.ptr, -size, total, component, device, ASC_MEM_FREE);
	return 0;
}

/* The three programs of one allocator component: alloc entry and return, free entry. */
#define ALLOC_PROGS(prefix, component)              \
	SEC("uprobe")                               \
	int BPF_KPROBE(prefix##_alloc_enter)        \
	{                                           \
		return alloc_enter(ctx, component); \
	}                                           \
	SEC("uretprobe")                            \
	int BPF_KRETPROBE(prefix##_alloc_exit)      \
	{                                           \
		return alloc_exit(ctx, component);  \
	}                                           \
	SEC("uprobe")                               \
	int BPF_KPROBE(prefix##_free_enter)         \
	{                                           \
		return free_enter(ctx, component);  \
	}

ALLOC_PROGS(asc_ge, ASC_MEM_GE)
ALLOC_PROGS(asc_app, ASC_MEM_APP)

/*
 * ---- step boundary ----
 * At the return of the boundary function (the optimizer step: the end of
 * step N, as torch_npu's prof.step() after it): each hit starts step
 * next_step (1 on; step 0 started where the loader armed the process,
 * user/trace/targets.c); the schedule decides whether that step is
 * recorded, and the gate of this tgid follows.  The STEP record is emitted
 * for every step, recorded or not, so the converter sees every boundary.
 */
SEC("uretprobe")
int BPF_KRETPROBE(asc_step_exit)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, open;
	struct asc_tgid_state *st = bpf_map_lookup_elem(&tgids, &tgid);

	/* not armed: the loader is still attaching (ASC_TGID_ARMED) */
	if (!st || !(st->flags & ASC_TGID_ARMED))
		return 0;
	open = start_step(st, pid_tgid, site_cookie(ctx), bpf_ktime_get_ns());
	if (tgid == fast_tgid)
		fast_open = open;
	return 0;
}

/*
 * ---- dynamic loader hook (r_brk / _dl_debug_state) ----
 * Tells the loader that the link map changed (dlopen, or the initial load),
 * with an ENTER record carrying loader_probe_id and always a wake-up.  A
 * process we may stop (holdable: our own child, which has
 * PR_SET_PDEATHSIG(SIGCONT), or with the release watchdog a fork or exec we
 * follow) is stopped until the new libraries are attached (hold_current:
 * seen once when the stop came after the record, a torch_train child stopped
 * with every record consumed).
 */
SEC("uprobe")
int BPF_KPROBE(asc_loader_enter)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	struct asc_enter *e;

	struct asc_tgid_state *st = bpf_map_lookup_elem(&tgids, &tgid);

	if (!st)
		return 0;
	/* a process we may stop: the record says so (args[0], ASC_HOLD_LOADER) */
	if (holdable(tgid, st)) {
		hold_current(pid_tgid, ASC_HOLD_LOADER, 0);
		return 0;
	}
	e = reserve(sizeof(*e));
	if (!e)
		return 0; /* counted */
	fill_hdr(&e->hdr, ASC_REC_ENTER, sizeof(*e), pid_tgid, loader_probe_id, bpf_ktime_get_ns());
	__builtin_memset(e->args, 0, sizeof(e->args));
	submit_now(e);
	return 0;
}

/* Wakes the loader at once to adopt tgid (a loader-hook record on its behalf). */
static __always_inline void notify_new_tgid(__u32 tgid)
{
	struct asc_enter *e = reserve(sizeof(*e));

	if (!e)
		return;
	fill_hdr(&e->hdr, ASC_REC_ENTER, sizeof(*e), (__u64)tgid << 32 | tgid, loader_probe_id,
		 bpf_ktime_get_ns());
	__builtin_memset(e->args, 0, sizeof(e->args));
	submit_now(e);
}

/* ---- --comm: adopt processes that exec later ---- */

SEC("tp/sched/sched_process_exec")
int asc_exec(void *ctx)
{
	/* closed: the loader opens it once the process's probes are attached */
	struct asc_tgid_state st = { .open = 0, .flags = ASC_TGID_FROM_EXEC };
	char comm[16];
	__u32 tgid;
	int i;

	if (!comm_filter_on)
		return 0;
	bpf_get_current_comm(comm, sizeof(comm));
	for (i = 0; i < 16; i++) {
		if (comm[i] != comm_filter[i])
			return 0;
		if (!comm[i])
			break;
	}
	tgid = bpf_get_current_pid_tgid() >> 32;
	if (bpf_map_update_elem(&tgids, &tgid, &st, BPF_NOEXIST))
		return 0;
	/* stopped (the loader adopts it before its loader runs), or adopted asynchronously */
	if (*(volatile __u32 *)&hold_others)
		hold_current((__u64)tgid << 32 | tgid, ASC_HOLD_EXEC, 0);
	else
		notify_new_tgid(tgid);
	return 0;
}

/*
 * ---- children of traced processes (-- CMD: launchers fork their ranks) ----
 * A new process (not a thread) whose parent is traced gets its own entry,
 * with the step count from 0 and the gate as at the start of a trace; the
 * loader adopts it (capture, probes) from the tgids map.
 */
SEC("raw_tp/sched_process_fork")
int BPF_PROG(asc_fork, struct task_struct *parent, struct task_struct *child)
{
	/* closed: the loader opens it once the child's probes are attached */
	struct asc_tgid_state st = { .open = 0, .flags = ASC_TGID_FROM_FORK };
	__u32 ptgid, ctgid, cpid;

	if (!follow_forks)
		return 0;
	ctgid = BPF_CORE_READ(child, tgid);
	cpid = BPF_CORE_READ(child, pid);
	if (ctgid != cpid)
		return 0; /* a new thread of a process */
	ptgid = BPF_CORE_READ(parent, tgid);
	if (!bpf_map_lookup_elem(&tgids, &ptgid))
		return 0;
	if (!bpf_map_update_elem(&tgids, &ctgid, &st, BPF_NOEXIST))
		notify_new_tgid(ctgid);
	return 0;
}

/*
 * ---- a new child's first return to user space (-- CMD, --comm) ----
 * The child returns from clone / clone3 / fork / vfork with 0 (these run in its
 * context, before its first instruction; x86-64 reports the child's return,
 * arm64 does not, and there the child is adopted asynchronously).  A child
 * asc_fork added and the loader has not armed yet is held until adopted.
 */
static __always_inline int clone_exit(long ret)
{
	__u64 pid_tgid;
	__u32 tgid;
	struct asc_tgid_state *st;

	if (ret != 0)
		return 0; /* the parent's return, or an error */
	pid_tgid = bpf_get_current_pid_tgid();
	tgid = pid_tgid >> 32;
	if (tgid != (__u32)pid_tgid)
		return 0; /* a new thread */
	st = bpf_map_lookup_elem(&tgids, &tgid);
	if (st && (st->flags & ASC_TGID_FROM_FORK) && !(st->flags & ASC_TGID_ARMED) &&
	    holdable(tgid, st))
		hold_current(pid_tgid, ASC_HOLD_FORK, 0);
	return 0;
}

SEC("tp/syscalls/sys_exit_clone")
int asc_clone_exit(struct trace_event_raw_sys_exit *ctx)
{
	return clone_exit(ctx->ret);
}

SEC("tp/syscalls/sys_exit_clone3")
int asc_clone3_exit(struct trace_event_raw_sys_exit *ctx)
{
	return clone_exit(ctx->ret);
}

/* fork and vfork (x86-64 only; dash runs its commands with vfork) */
SEC("tp/syscalls/sys_exit_fork")
int asc_sysfork_exit(struct trace_event_raw_sys_exit *ctx)
{
	return clone_exit(ctx->ret);
}

SEC("tp/syscalls/sys_exit_vfork")
int asc_vfork_exit(struct trace_event_raw_sys_exit *ctx)
{
	return clone_exit(ctx->ret);
}

/* ---- ioctls on davinci nodes ---- */

static __always_inline __u32 module_from_name(const char *n)
{
	if (n[0] == 'T' && n[1] == 'S' && n[2] == 'D' && n[3] == 'R' && n[4] == 'V' && !n[5])
		return ASC_MOD_TSDRV;
	if (n[0] == 'S' && n[1] == 'V' && n[2] == 'M' && !n[3])
		return ASC_MOD_SVM;
	if (n[0] == 'D' && n[1] == 'E' && n[2] == 'V' && n[3] == 'M' && n[4] == 'N' &&
	    n[5] == 'G' && !n[6])
		return ASC_MOD_DEVMNG;
	return ASC_MOD_OTHER;
}

/*
 * A davinci fd found in /proc/PID/fd before we attached has module
 * ASC_MOD_UNKNOWN; its first non-'Z' ioctl names the module by magic and
 * size (TSDRV 'X'; SVM 'M' with the 344-byte devmm_ioctl_arg; DEVMNG 'M' _IO).
 */
static __always_inline __u32 module_from_cmd(__u32 cmd)
{
	__u32 magic = (cmd >> 8) & 0xff, size = (cmd >> 16) & 0x3fff;

	if (magic == 'X')
		return ASC_MOD_TSDRV;
	if (magic == 'M')
		return size == 344 ? ASC_MOD_SVM : ASC_MOD_DEVMNG;
	return ASC_MOD_UNKNOWN;
}

SEC("tp/syscalls/sys_enter_ioctl")
int asc_ioctl_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct asc_tgid_state *st = bpf_map_lookup_elem(&tgids, &tgid);
	struct ioctl_inflight in = {};
	struct asc_fd_key key;
	__u32 *mod;

	if (!st)
		return 0;
	in.fd = ctx->args[0];
	in.cmd = ctx->args[1];
	in.arg = ctx->args[2];
	if (in.cmd == ASC_DAVINCI_OPEN) {
		/* the bind is learned whatever the gate says */
		if (bpf_probe_read_user(in.module_name, sizeof(in.module_name) - 1,
					(void *)in.arg) < 0)
			return 0;
		bpf_probe_read_user(&in.device_id, sizeof(in.device_id),
				    (void *)(in.arg + ASC_DAVINCI_NAME_MAX));
		in.module = ASC_MOD_UNKNOWN;
	} else {
		key.tgid = tgid;
		key.fd = in.fd;
		mod = bpf_map_lookup_elem(&fdmod, &key);
		if (!mod)
			return 0; /* not a davinci fd */
		if (*mod == ASC_MOD_UNKNOWN) {
			*mod = module_from_cmd(in.cmd);
		}
		in.module = *mod;
	}
	in.traced = st->open;
	if (!in.traced && in.cmd != ASC_DAVINCI_OPEN)
		return 0;
	in.ts_ns = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&inflight, &tid, &in, BPF_ANY))
		asc_stat_add(ioctl_lost, 1); /* more threads inside ioctls than the map holds */
	return 0;
}

SEC("tp/syscalls/sys_exit_ioctl")
int asc_ioctl_exit(struct trace_event_raw_sys_exit *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct ioctl_inflight *in = bpf_map_lookup_elem(&inflight, &tid);
	__u64 now = bpf_ktime_get_ns();
	struct asc_ioctl *r;
	__u32 len;
	long ret;

	if (!in)
		return 0;
	ret = ctx->ret;
	if (in->cmd == ASC_DAVINCI_OPEN && ret == 0) {
		struct asc_fd_key key = { .tgid = tgid, .fd = in->fd };
		__u32 mod = module_from_name(in->module_name);
		struct asc_fdbind *b;

		bpf_map_update_elem(&fdmod, &key, &mod, BPF_ANY);
		b = reserve(sizeof(*b));
		if (b) {
			fill_hdr(&b->hdr, ASC_REC_FDBIND, sizeof(*b), pid_tgid, 0, now);
			b->fd = in->fd;
			b->device_id = in->device_id;
			__builtin_memcpy(b->module_name, in->module_name, sizeof(b->module_name));
			/* rare, and the loader starts the card's reader on it: wake it now */
			submit_now(b);
		}
	}
	if (!in->traced)
		goto out;
	r = reserve(sizeof(*r));
	if (!r)
		goto out;
	fill_hdr(&r->hdr, ASC_REC_IOCTL, sizeof(*r), pid_tgid, 0, in->ts_ns);
	r->exit_ns = now;
	r->ret = ret;
	r->fd = in->fd;
	r->cmd = in->cmd;
	r->module = in->module;
	r->reserved = 0;
	r->reserved2 = 0;
	len = (in->cmd >> 16) & 0x3fff;
	if (len == 0 || len > ASC_IOCTL_ARG_LEN)
		len = ASC_IOCTL_ARG_LEN; /* _IO commands still pass a struct pointer */
	__builtin_memset(r->arg, 0, sizeof(r->arg));
	if (bpf_probe_read_user(r->arg, len, (void *)in->arg) < 0)
		len = 0;
	r->arg_len = len;
	submit(r);
out:
	bpf_map_delete_elem(&inflight, &tid);
	return 0;
}

/* close(fd) forgets the fd's module so a reused number is learned again. */
SEC("tp/syscalls/sys_enter_close")
int asc_close_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct asc_fd_key key = { .tgid = pid_tgid >> 32, .fd = ctx->args[0] };

	bpf_map_delete_elem(&fdmod, &key);
	return 0;
}

/*
 * ---- task-making runtime calls without an API event (ASC_REC_LAUNCH) ----
 * ASC_PK_LAUNCH_MARK (Level0, after the process's first batched send) and
 * ASC_PK_NODE_LAUNCH (Level1 rtKernelLaunch): the entry's stream argument
 * and arg0 (the function handle / stub of a kernel launch); one program per
 * stream-argument register, because a site has only its probe id as cookie.
 * The node launch's return is asc_launch_exit.  No STACK (no ENTER to
 * follow).
 */
static __always_inline int emit_launch(__u32 id, __u32 side, __u64 stream, __u64 handle, __u32 ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct asc_launch *l;

	if (!gate(pid_tgid))
		return 0;
	l = reserve(sizeof(*l));
	if (!l)
		return 0;
	fill_hdr(&l->hdr, ASC_REC_LAUNCH, sizeof(*l), pid_tgid, id, bpf_ktime_get_ns());
	l->stream = stream;
	l->handle = handle;
	l->side = side;
	l->ret = ret;
	submit(l);
	return 0;
}

#define LAUNCH_ENTRY(stream) \
	emit_launch(site_cookie(ctx), ASC_LAUNCH_ENTRY, (stream), PT_REGS_PARM1(ctx), 0)

SEC("uprobe")
int BPF_KPROBE(asc_launch_s0)
{
	return LAUNCH_ENTRY(PT_REGS_PARM1(ctx));
}

SEC("uprobe")
int BPF_KPROBE(asc_launch_s1)
{
	return LAUNCH_ENTRY(PT_REGS_PARM2(ctx));
}

SEC("uprobe")
int BPF_KPROBE(asc_launch_s2)
{
	return LAUNCH_ENTRY(PT_REGS_PARM3(ctx));
}

SEC("uprobe")
int BPF_KPROBE(asc_launch_s3)
{
	return LAUNCH_ENTRY(PT_REGS_PARM4(ctx));
}

SEC("uprobe")
int BPF_KPROBE(asc_launch_s4)
{
	return LAUNCH_ENTRY(PT_REGS_PARM5(ctx));
}

SEC("uprobe")
int BPF_KPROBE(asc_launch_s5)
{
	return LAUNCH_ENTRY(PT_REGS_PARM6(ctx));
}

/*
 * The AI CPU launch calls (rtCpuKernelLaunchWithFlag's kernelName,
 * rtAicpuKernelLaunchExWithArgs's opName: arg1, a C string; stream arg5):
 * the LAUNCH's handle is that string's address, and a FUNCNAME of the same
 * address carries the name, so the converter's handle join names the task.
 */
SEC("uprobe")
int BPF_KPROBE(asc_launch_aicpu)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 name = PT_REGS_PARM2(ctx);

	if (!gate(pid_tgid))
		return 0;
	if (name)
		emit_funcname(pid_tgid, site_cookie(ctx), bpf_ktime_get_ns(), name,
			      (const char *)name);
	return emit_launch(site_cookie(ctx), ASC_LAUNCH_ENTRY, PT_REGS_PARM6(ctx), name, 0);
}

SEC("uretprobe")
int BPF_KRETPROBE(asc_launch_exit)
{
	long id = ret_site(ctx, bpf_get_current_pid_tgid());

	if (id < 0)
		return 0;
	return emit_launch((__u32)id, ASC_LAUNCH_RETURN, 0, 0, (__u32)PT_REGS_RC(ctx));
}

/*
 * ---- HCCL (bpf/ascbpf_events.h "HCCL") ----
 * Ops: HCCL_OP at entry (10 arguments: 6 registers, then the caller's
 * stack) and at return, at every level; at Level1+ in one sample with the
 * call's ENTER / EXIT.  Communicator creation: the arguments are kept per
 * thread from entry to return, where *comm is read.  Task reports and hash
 * ids: HCCL_TASK at MsprofReportAdditionalInfo's entry (level-5500 infos
 * only), HCCL_HASH at MsprofGetHashId's return.
 */
struct hccl_comm_stash {
	__u64 enter_ns;
	__u64 comm_pp;
	__u32 nranks;
	__u32 rank;
	__u32 kind;
	__u32 pad;
	char group[ASC_HCCL_GROUP_LEN];
};

struct hccl_hash_stash {
	__u64 str;
	__u64 len;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct hccl_comm_stash);
} hccl_comm_stash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct hccl_hash_stash);
} hccl_hash_stash SEC(".maps");

/* Scratch too big for the BPF stack: a comm stash being built, a report's info. */
union hccl_scratch {
	struct hccl_comm_stash comm;
	struct MsprofHcclInfo info;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, union hccl_scratch);
} hccl_scratch SEC(".maps");

static __always_inline void fill_hccl_op(struct asc_hccl_op *o, struct pt_regs *ctx, __u64 pid_tgid,
					 __u32 id, __u64 ts)
{
	fill_hdr(&o->hdr, ASC_REC_HCCL_OP, sizeof(*o), pid_tgid, id, ts);
	read_args(ctx, o->args);
#if defined(__TARGET_ARCH_x86)
	/* arguments 7..10 at the entry sp + 8 (sp holds the return address) */
	if (bpf_probe_read_user(&o->args[6], 4 * sizeof(__u64), (void *)(PT_REGS_SP(ctx) + 8)) < 0)
		__builtin_memset(&o->args[6], 0, 4 * sizeof(__u64));
#elif defined(__TARGET_ARCH_arm64)
	/* x6, x7, then arguments 9..10 at the entry sp */
	o->args[6] = ((struct user_pt_regs *)ctx)->regs[6];
	o->args[7] = ((struct user_pt_regs *)ctx)->regs[7];
	if (bpf_probe_read_user(&o->args[8], 2 * sizeof(__u64), (void *)PT_REGS_SP(ctx)) < 0)
		__builtin_memset(&o->args[8], 0, 2 * sizeof(__u64));
#endif
	o->side = ASC_HCCL_ENTRY;
	o->ret = 0;
}

struct grp_enter_hccl {
	struct asc_enter e;
	struct asc_hccl_op o;
};

struct grp_exit_hccl {
	struct asc_exit x;
	struct asc_hccl_op o;
};

SEC("uprobe")
int BPF_KPROBE(asc_hccl_op_enter)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), ts;
	__u32 id = site_cookie(ctx);
	struct grp_enter_hccl *g;
	struct asc_hccl_op *o;

	if (!gate(pid_tgid))
		return 0;
	ts = bpf_ktime_get_ns();
	if (trace_level >= 1 && !with_stack) {
		g = reserve_group(sizeof(*g), 2);
		if (!g)
			return 0;
		fill_enter(&g->e, ctx, pid_tgid, id, ts);
		fill_hccl_op(&g->o, ctx, pid_tgid, id, ts);
		submit(g);
		return 0;
	}
	if (trace_level >= 1)
		emit_enter(ctx, pid_tgid, id, ts);
	o = reserve(sizeof(*o));
	if (!o)
		return 0;
	fill_hccl_op(o, ctx, pid_tgid, id, ts);
	submit(o);
	return 0;
}

static __always_inline void fill_hccl_ret(struct asc_hccl_op *o, __u64 pid_tgid, __u32 id, __u64 ts,
					  __u64 ret)
{
	fill_hdr(&o->hdr, ASC_REC_HCCL_OP, sizeof(*o), pid_tgid, id, ts);
	__builtin_memset(o->args, 0, sizeof(o->args));
	o->side = ASC_HCCL_RETURN;
	o->ret = (__u32)ret;
}

SEC("uretprobe")
int BPF_KRETPROBE(asc_hccl_op_exit)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), ts, ret = PT_REGS_RC(ctx);
	struct grp_exit_hccl *g;
	struct asc_hccl_op *o;
	long id;

	if ((id = ret_site(ctx, pid_tgid)) < 0 || !gate(pid_tgid))
		return 0;
	ts = bpf_ktime_get_ns();
	if (trace_level >= 1) {
		g = reserve_group(sizeof(*g), 2);
		if (!g)
			return 0;
		fill_hdr(&g->x.hdr, ASC_REC_EXIT, sizeof(g->x), pid_tgid, (__u32)id, ts);
		g->x.ret = ret;
		fill_hccl_ret(&g->o, pid_tgid, (__u32)id, ts, ret);
		submit(g);
		return 0;
	}
	o = reserve(sizeof(*o));
	if (!o)
		return 0;
	fill_hccl_ret(o, pid_tgid, (__u32)id, ts, ret);
	submit(o);
	return 0;
}

static __always_inline int hccl_comm_stash_put(struct pt_regs *ctx, __u32 kind, __u32 nranks,
					       __u32 rank, const void *root, __u64 comm_pp)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, zero = 0;
	union hccl_scratch *s;

	if (!gate(pid_tgid))
		return 0;
	s = bpf_map_lookup_elem(&hccl_scratch, &zero);
	if (!s)
		return 0;
	s->comm.enter_ns = bpf_ktime_get_ns();
	s->comm.comm_pp = comm_pp;
	s->comm.nranks = nranks;
	s->comm.rank = rank;
	s->comm.kind = kind;
	s->comm.pad = 0;
	__builtin_memset(s->comm.group, 0, sizeof(s->comm.group));
	if (root) {
		if (bpf_probe_read_user_str(s->comm.group, sizeof(s->comm.group),
					    root + HCCL_ROOT_HANDLE_IDENTIFIER_OFF) < 0)
			s->comm.group[0] = 0;
	} else {
		__builtin_memcpy(s->comm.group, HCCL_WORLD_GROUP, sizeof(HCCL_WORLD_GROUP));
	}
	bpf_map_update_elem(&hccl_comm_stash, &tid, &s->comm, BPF_ANY);
	if (trace_level >= 1)
		emit_enter(ctx, pid_tgid, site_cookie(ctx), s->comm.enter_ns);
	return 0;
}

/* HcclCommInitRootInfo(nRanks, rootInfo, rank, comm) */
SEC("uprobe")
int BPF_KPROBE(asc_hccl_comm_root_enter, __u32 nranks, const void *root, __u32 rank, void *comm)
{
	return hccl_comm_stash_put(ctx, ASC_HCCL_COMM_ROOTINFO, nranks, rank, root, (__u64)comm);
}

/* HcclCommInitClusterInfo(clusterInfo, rank, comm) */
SEC("uprobe")
int BPF_KPROBE(asc_hccl_comm_cluster_enter, const char *info, __u32 rank, void *comm)
{
	return hccl_comm_stash_put(ctx, ASC_HCCL_COMM_CLUSTER, 0, rank, NULL, (__u64)comm);
}

SEC("uretprobe")
int BPF_KRETPROBE(asc_hccl_comm_exit)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), ts, ret = PT_REGS_RC(ctx), comm = 0;
	__u32 tid = (__u32)pid_tgid;
	struct hccl_comm_stash *st;
	struct asc_hccl_comm *r;
	long id;

	st = bpf_map_lookup_elem(&hccl_comm_stash, &tid);
	if (!st)
		return 0;
	if ((id = ret_site(ctx, pid_tgid)) < 0 || !gate(pid_tgid))
		goto out;
	ts = bpf_ktime_get_ns();
	if (trace_level >= 1)
		emit_exit(pid_tgid, (__u32)id, ts, ret);
	r = reserve(sizeof(*r));
	if (!r)
		goto out;
	fill_hdr(&r->hdr, ASC_REC_HCCL_COMM, sizeof(*r), pid_tgid, (__u32)id, ts);
	if ((__u32)ret == 0 && bpf_probe_read_user(&comm, sizeof(comm), (void *)st->comm_pp) < 0)
		comm = 0;
	r->comm = (__u32)ret == 0 ? comm : 0;
	r->enter_ns = st->enter_ns;
	r->nranks = st->nranks;
	r->rank = st->rank;
	r->ret = (__u32)ret;
	r->kind = st->kind;
	__builtin_memcpy(r->group, st->group, sizeof(r->group));
	r->group[sizeof(r->group) - 1] = 0;
	submit(r);
out:
	bpf_map_delete_elem(&hccl_comm_stash, &tid);
	return 0;
}

/* MsprofReportAdditionalInfo(flag, data, length): HCCL's task reports only. */
SEC("uprobe")
int BPF_KPROBE(asc_hccl_report_enter, __u32 flag, const void *data, __u32 length)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct MsprofAdditionalInfo *h = NULL;
	__u8 head[24];
	__u32 zero = 0;
	union hccl_scratch *s;
	struct asc_hccl_task *r;
	const struct MsprofHcclInfo *i;

	if (!gate(pid_tgid) || length < sizeof(*h))
		return 0;
	if (bpf_probe_read_user(head, sizeof(head), data) < 0)
		return 0;
	h = (struct MsprofAdditionalInfo *)head;
	if (h->magicNumber != MSPROF_REPORT_DATA_MAGIC_NUM ||
	    h->level != MSPROF_REPORT_HCCL_NODE_LEVEL)
		return 0;
	s = bpf_map_lookup_elem(&hccl_scratch, &zero);
	if (!s || bpf_probe_read_user(&s->info, sizeof(s->info), data + 24) < 0)
		return 0;
	i = &s->info;
	r = reserve(sizeof(*r));
	if (!r)
		return 0;
	fill_hdr(&r->hdr, ASC_REC_HCCL_TASK, sizeof(*r), pid_tgid, site_cookie(ctx),
		 bpf_ktime_get_ns());
	r->report_ts = h->timeStamp;
	r->item_id = i->itemId;
	r->group_hash = i->groupName;
	r->notify_id = i->notifyID;
	r->src_addr = i->srcAddr;
	r->dst_addr = i->dstAddr;
	r->data_size = i->dataSize;
	r->local_rank = i->localRank;
	r->remote_rank = i->remoteRank;
	r->rank_size = i->rankSize;
	r->plane_id = i->planeID;
	r->data_type = i->dataType;
	r->op_type = i->opType;
	r->link_type = (__u8)i->linkType;
	r->transport_type = (__u8)i->transportType;
	r->role = (__u8)i->role;
	r->rdma_type = (__u8)i->rdmaType;
	r->stage = i->stage;
	submit(r);
	return 0;
}

/* MsprofGetHashId(str, len) -> hash */
SEC("uprobe")
int BPF_KPROBE(asc_hccl_hash_enter, const char *str, __u64 len)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct hccl_hash_stash st = { .str = (__u64)str, .len = len };

	if (!gate(pid_tgid))
		return 0;
	bpf_map_update_elem(&hccl_hash_stash, &tid, &st, BPF_ANY);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(asc_hccl_hash_exit)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct hccl_hash_stash *st = bpf_map_lookup_elem(&hccl_hash_stash, &tid);
	struct asc_hccl_hash *r;
	__u64 len;
	long id;

	if (!st)
		return 0;
	if ((id = ret_site(ctx, pid_tgid)) < 0 || !gate(pid_tgid))
		goto out;
	r = reserve(sizeof(*r));
	if (!r)
		goto out;
	fill_hdr(&r->hdr, ASC_REC_HCCL_HASH, sizeof(*r), pid_tgid, (__u32)id, bpf_ktime_get_ns());
	r->hash = PT_REGS_RC(ctx);
	len = st->len;
	r->len = (__u32)len;
	r->flags = 0;
	if (len > sizeof(r->name) - 1) {
		len = sizeof(r->name) - 1;
		r->flags = ASC_OPNAME_TRUNCATED;
	}
	__builtin_memset(r->name, 0, sizeof(r->name));
	if (bpf_probe_read_user(r->name, len & (ASC_NAME_LEN - 1), (void *)st->str) < 0)
		len = 0;
	r->name[len & (ASC_NAME_LEN - 1)] = 0;
	submit(r);
out:
	bpf_map_delete_elem(&hccl_hash_stash, &tid);
	return 0;
}
