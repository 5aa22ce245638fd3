/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ascbpf_maps.h - keys and values of the maps that userspace (user/trace/trace.c)
 * fills and reads in bpf/ascbpf.bpf.c.  Records themselves are in
 * ascbpf_events.h; this header is only the loader <-> BPF map contract.
 */
#ifndef __ASCBPF_MAPS_H
#define __ASCBPF_MAPS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define ASC_MAX_TGIDS	 1024 /* processes traced at once (-p ..., --comm) */
#define ASC_MAX_FDS	 4096 /* davinci fds tracked over all traced processes */
#define ASC_MAX_INFLIGHT 4096 /* threads inside a traced ioctl at one time */

/*
 * tgids map: key tgid (__u32).  A process is traced iff it has an entry.
 * The entry is also the schedule gate: every program returns after this one
 * lookup when open == 0.
 */
struct asc_tgid_state {
	__u64 next_step; /* index the next step boundary gets (0-based) */
	__u32 open;	 /* 1 while the current step is recorded */
	__u32 flags;	 /* ASC_TGID_* */
};
#define ASC_TGID_FROM_EXEC 0x1 /* added by the sched_process_exec program (--comm) */
#define ASC_TGID_FROM_FORK 0x2 /* a child of a traced process (-- CMD) */
/*
 * Set by the loader when it starts recording the process (its probes are attached, its
 * device channel started): until then a step boundary neither counts a step nor opens
 * the gate, which only the loader may open first.
 */
#define ASC_TGID_ARMED	   0x4

/*
 * Holds: the BPF side stops (SIGSTOP) a process it may stop -- our -- CMD
 * child, or with a release watchdog (user/trace/holds.h) a fork or --comm
 * exec it follows -- where attaching late would lose calls or device
 * records, and tells the loader in a loader-hook ENTER record: args[0] the
 * kind, args[1] its argument.  The stop is queued before the record is
 * visible, so the loader's SIGCONT, sent once it has done what the hold
 * waits for, always comes after it.
 */
#define ASC_HOLD_NONE	0  /* a link-map change, nobody stopped */
#define ASC_HOLD_LOADER 1  /* stopped at the loader hook: until the rescan */
#define ASC_HOLD_FORK	2  /* a new child at its return from clone: until adopted */
#define ASC_HOLD_EXEC	3  /* a --comm exec: until adopted */
#define ASC_HOLD_CHAN	4  /* first task sent to card args[1], no channel yet */
#define ASC_HOLD_UNWIND 5  /* thread args[1] unwinds: until unwind_fixes[args[1]] is done */
#define ASC_HOLD_DEVS	64 /* cards chan_on[] covers (.bss, set by the loader) */
/* or'ed to the kind: bpf_send_signal could not queue the stop (nobody is stopped) */
#define ASC_HOLD_FAILED 0x100

/*
 * The unwind guard's work for one thread (bpf/unwind.bpf.h), in the
 * unwind_fixes map by tid: the loader writes each slot[i] of mask of the
 * process's stack through /proc/PID/mem -- val[i], the return address, over the
 * trampoline when !rearm; the trampoline over val[i] when rearm -- only
 * where the slot still holds what it replaces, then deletes the entry and
 * releases the process.
 */
#define ASC_UNWIND_MAX_FRAMES 64 /* the kernel's MAX_URETPROBE_DEPTH */
struct asc_unwind_fix {
	__u64 mask; /* bit i: write slot[i] */
	__u32 nr;   /* slot[], val[] filled */
	__u32 rearm;
	__u64 tramp;
	__u64 slot[ASC_UNWIND_MAX_FRAMES];
	__u64 val[ASC_UNWIND_MAX_FRAMES];
};

/* fdmod map: (tgid, fd) -> module (ASC_MOD_*), learned from the 'Z' bind or /proc/PID/fd. */
struct asc_fd_key {
	__u32 tgid;
	__u32 fd;
};

/*
 * Segment (GE: rtMalloc/rtFree) and driver (APP: halMemAlloc/halMemFree of
 * device memory) allocations: the live blocks and per-device totals that
 * their MEM records carry, per process.
 */
struct asc_alloc_key {
	__u32 tgid;
	__u32 component; /* a GE segment and the APP block inside it share the pointer */
	__u64 ptr;
};

struct asc_alloc_val {
	__u64 size;
	__u32 component; /* ASC_MEM_GE / ASC_MEM_APP */
	__u32 device;
};

struct asc_memtot_key {
	__u32 tgid;
	__u16 component;
	__u16 device;
};

#define ASC_MAX_ALLOCS 65536 /* live GE + APP blocks over all traced processes */

/*
 * Site ids without bpf_get_attach_cookie (kernels before 5.15; user/trace/features.h
 * "attach_cookie"): the loader fills site_ids with one entry per attached
 * uprobe, keyed by the probed instruction's address in that process as the
 * program sees it (PT_REGS_IP: the breakpoint address itself, see
 * user/trace/attach.c), and the value the cookie would have held.  A return
 * probe sees the return address instead, so an extra entry program at each
 * uretprobe site (asc_ret_push) files the site under (tid, stack pointer at
 * entry) in ret_sites and the return program takes it from there (the
 * stack pointer at the return is that one + the popped return address).
 */
#define ASC_MAX_SITE_ADDRS 65536       /* attached uprobes over all traced processes */
#define ASC_MAX_RET_SITES  16384       /* calls in flight at a uretprobe site, all threads */
#define ASC_NO_SITE	   0xffffffffu /* no site_ids entry: the hit is not ours */

struct asc_site_key {
	__u32 tgid;
	__u32 pad;
	__u64 ip;
};

struct asc_ret_key {
	__u32 tid;
	__u32 pad;
	__u64 sp; /* at the entry: where the return address is */
};

/* stats map (per-CPU array, one slot): counters the hot path bumps only on failure. */
struct asc_cpu_stats {
	__u64 drops;	  /* bpf_ringbuf_reserve failures */
	__u64 ioctl_lost; /* traced ioctls not stashed at entry (inflight map full) */
	__u64 sqe_lost;	  /* SQEs of halSqTaskSend calls beyond ASC_MAX_SQE_RECS records */
	__u64 name_lost;  /* op names not read (OPNAME empty or missing): user memory faulted */
};

/* SQE records written at most per halSqTaskSend call (bpf/ascbpf.bpf.c asc_sqe_send_enter). */
#define ASC_MAX_SQE_RECS 8

/* The 'Z' (davinci interface) ioctls. */
#define ASC_DAVINCI_MAGIC    'Z'
#define ASC_DAVINCI_OPEN     0x5a00u /* _IO('Z', 0), arg: davinci_intf_open_arg * */
#define ASC_DAVINCI_CLOSE    0x5a01u
#define ASC_DAVINCI_NAME_MAX 256 /* module_name[256] then int device_id */

#endif /* __ASCBPF_MAPS_H */
