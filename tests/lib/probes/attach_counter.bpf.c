// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attach_counter.bpf.c - counts hits per site id (the attach cookie's lower
 * half), entries and returns separately, for tests/trace/test_attach.c.  Only
 * the target process counts.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

const volatile __u32 targ_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u64);
} entry_hits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u64);
} return_hits SEC(".maps");

static __always_inline void count(void *map, void *ctx)
{
	__u64 c = bpf_get_attach_cookie(ctx), cookie = (__u32)c, one = 1, *v;
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, owner = c >> 32;

	if (targ_tgid && tgid != targ_tgid)
		return;
	/* the upper half names the owner of a pid-filtered return probe (attach.h) */
	if (owner && owner != tgid)
		return;
	v = bpf_map_lookup_elem(map, &cookie);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(map, &cookie, &one, BPF_NOEXIST);
}

SEC("uprobe")
int BPF_KPROBE(count_entry)
{
	count(&entry_hits, ctx);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(count_return)
{
	count(&return_hits, ctx);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
