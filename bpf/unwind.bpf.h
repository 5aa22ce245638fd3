/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * unwind.bpf.h - the unwind guard; part of ascbpf.bpf.c, included after its
 * holds (hold_current, stop_tgid, tgids).
 *
 * A return probe replaces the return address of the probed call with the
 * kernel's uretprobe trampoline (the [uprobes] page), which has no unwind
 * information.  A C++ exception, or a thread cancellation, that unwinds
 * through such a frame finds no caller there and the C++ runtime calls
 * std::terminate: the traced process aborts (bpftrace does the same to it).
 * PyTorch throws through at::_ops::*::call whenever an op rejects its
 * arguments and Python catches the RuntimeError: the common case.
 *
 * The kernel keeps each pending return of a thread in
 * current->utask->return_instances: the stack slot the return address was
 * taken from (stack) and the address (orig_ret_vaddr).  Two entry probes:
 *
 *  - asc_unwind_raise, at the unwinder's entry points (_Unwind_RaiseException,
 *    _Unwind_Resume_or_Rethrow, _Unwind_ForcedUnwind): every slot holding
 *    the trampoline must get its return address back, so that the unwinder
 *    walks the real stack;
 *  - asc_unwind_catch, at __cxa_begin_catch: the frames the exception did
 *    not unwind (slot above the stack pointer) must get the trampoline
 *    again, so their return probes fire as if nothing happened.  The kernel
 *    drops the unwound frames' instances at the thread's next return probe,
 *    as after a longjmp; their EXIT records are lost (the converter closes
 *    such calls as any call whose exit was not seen).
 *
 * BPF may not write user memory on a kernel in lockdown (most Secure Boot
 * hosts, and ours): the program lists the writes in unwind_fixes[tid] and
 * holds the process (hold_current: SIGSTOP, a record with a wake-up); the
 * loader makes them through /proc/PID/mem and releases it (user/trace/sink.c
 * unwind_fixup).  The thread stops before its first instruction past the
 * probe, so the unwinder reads the stack only after the writes.  One hold
 * per throw and per catch that has such frames; none otherwise.
 *
 * x86-64 only: there the return address is the word at the entry stack
 * pointer; arm64's kernel replaces the link register, which the callee
 * saves at an offset the kernel does not record (docs/known-issues.md).
 */
#ifndef __ASCBPF_UNWIND_BPF_H
#define __ASCBPF_UNWIND_BPF_H

/* set by the loader: a release watchdog runs, so any traced process may be held */
__u32 unwind_hold_any = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32); /* tid */
	__type(value, struct asc_unwind_fix);
} unwind_fixes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct asc_unwind_fix);
} unwind_scratch SEC(".maps");

/* [0] holds asked, [1] unwinds with frames but not held (not holdable, map full) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} unwind_stats SEC(".maps");

static __always_inline void unwind_count(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&unwind_stats, &k);

	if (v)
		*v += 1;
}

#if defined(__TARGET_ARCH_x86)
static __always_inline int unwind_guard(struct pt_regs *ctx, __u32 rearm)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), sp = PT_REGS_SP(ctx), tramp;
	struct task_struct *task = (void *)bpf_get_current_task();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid, zero = 0;
	struct return_instance *ri;
	struct asc_unwind_fix *f;
	struct xol_area *area;
	int i;

	/* both live in kernel/events/uprobes.c: in the kernel's BTF, not in any header */
	if (!bpf_core_type_exists(struct return_instance) || !bpf_core_type_exists(struct xol_area))
		return 0;
	ri = BPF_CORE_READ(task, utask, return_instances);
	if (!ri)
		return 0; /* the common case: no pending return probe on this thread */
	area = BPF_CORE_READ(task, mm, uprobes_state.xol_area);
	tramp = area ? BPF_CORE_READ(area, vaddr) : 0;
	f = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!tramp || !f)
		return 0;
	/*
	 * slot i and its address always, the mask in the map value: a mask in a
	 * register would hold a different known value on each path, and the
	 * test after the loop would make the verifier tell them all apart
	 */
	f->mask = 0;
	for (i = 0; i < ASC_UNWIND_MAX_FRAMES && ri; i++) {
		__u64 slot = BPF_CORE_READ(ri, stack), orig = BPF_CORE_READ(ri, orig_ret_vaddr);
		__u64 cur = 0;

		ri = BPF_CORE_READ(ri, next);
		bpf_probe_read_user(&cur, sizeof(cur), (void *)slot);
		f->slot[i] = slot;
		f->val[i] = orig;
		if (orig != tramp && (rearm ? slot > sp && cur == orig : cur == tramp))
			f->mask |= 1ull << i;
	}
	if (!f->mask)
		return 0;
	f->nr = i;
	f->rearm = rearm;
	f->tramp = tramp;
	if ((tgid != stop_tgid &&
	     !(*(volatile __u32 *)&unwind_hold_any && bpf_map_lookup_elem(&tgids, &tgid))) ||
	    bpf_map_update_elem(&unwind_fixes, &tid, f, BPF_ANY)) {
		unwind_count(1);
		return 0;
	}
	unwind_count(0);
	hold_current(pid_tgid, ASC_HOLD_UNWIND, tid);
	return 0;
}
#else
static __always_inline int unwind_guard(struct pt_regs *ctx, __u32 rearm)
{
	return 0;
}
#endif

SEC("uprobe")
int BPF_KPROBE(asc_unwind_raise)
{
	return unwind_guard(ctx, 0);
}

SEC("uprobe")
int BPF_KPROBE(asc_unwind_catch)
{
	return unwind_guard(ctx, 1);
}

#endif /* __ASCBPF_UNWIND_BPF_H */
