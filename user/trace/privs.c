// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * privs.c - the capability drop of `ascbpf trace` (contract in the header).
 * capget/capset and prctl by number: libcap would add a dependency for four
 * system calls (README, Dependencies).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include "lib/log.h"
#include "trace/privs.h"

/* by number: older headers lack them */
#define PRIV_CAP_PERFMON 38
#define PRIV_CAP_BPF	 39

static int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int n = -1;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n >= 0 && n < 64 ? n : CAP_LAST_CAP;
}

static uint64_t keep_mask(int last)
{
	/*
	 * CAP_SYS_ADMIN stays on every kernel: a perf-event uprobe (the probes
	 * attached one by one after the drop: c10's memory hook, steps, launch
	 * marks, every site without uprobe_multi) is refused with EACCES without
	 * it on 6.18 even with CAP_PERFMON, where an uprobe_multi link is not
	 * (test_pytorch_memory failed so).  Before 5.8 it is also what bpf() and
	 * perf need.
	 */
	uint64_t keep = 1ull << CAP_SYS_PTRACE | 1ull << CAP_DAC_OVERRIDE | 1ull << CAP_SYS_ADMIN;

	if (last >= PRIV_CAP_BPF)
		keep |= 1ull << PRIV_CAP_BPF | 1ull << PRIV_CAP_PERFMON;
	return keep;
}

int asc_privs_drop(void)
{
	return asc_privs_keep_only(keep_mask(last_cap()));
}

int asc_privs_keep_only(uint64_t keep)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};
	int last = last_cap(), cap;
	uint64_t eff, perm;

	if (syscall(SYS_capget, &h, d))
		return -errno;
	eff = ((uint64_t)d[1].effective << 32 | d[0].effective) & keep;
	perm = ((uint64_t)d[1].permitted << 32 | d[0].permitted) & keep;
	/* the bounding set first: dropping from it needs CAP_SETPCAP, about to go */
	for (cap = 0; cap <= last; cap++)
		if (!(keep & 1ull << cap) && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1 &&
		    prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EPERM)
			return -errno;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	d[0].effective = (uint32_t)eff;
	d[1].effective = (uint32_t)(eff >> 32);
	d[0].permitted = (uint32_t)perm;
	d[1].permitted = (uint32_t)(perm >> 32);
	d[0].inheritable = d[1].inheritable = 0;
	if (syscall(SYS_capset, &h, d))
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	asc_dbg("trace: capabilities reduced to 0x%llx\n", (unsigned long long)eff);
	return 0;
}
