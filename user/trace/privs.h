/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * privs.h - the capabilities `ascbpf trace` keeps once it is running
 * (issue 19, least privilege; README "Privileges", docs/trace.md).
 *
 * Starting needs root, or CAP_BPF + CAP_PERFMON (CAP_SYS_ADMIN on kernels
 * before 5.8), plus CAP_SYS_PTRACE to read another user's /proc/PID/mem and
 * /proc/PID/root, CAP_DAC_OVERRIDE to write into a directory root does not
 * own, and CAP_SYS_RESOURCE where libbpf must raise RLIMIT_MEMLOCK (kernels
 * before 5.11).  Once the programs are loaded, the first probes attached and
 * the output opened, trace keeps only what the rest of the run needs: probes
 * for libraries loaded later and for adopted children (CAP_BPF,
 * CAP_PERFMON; CAP_SYS_ADMIN instead where the kernel has no CAP_BPF), their
 * memory and maps (CAP_SYS_PTRACE) and the captures and run directories it
 * still writes (CAP_DAC_OVERRIDE).  Everything else leaves the effective,
 * permitted, inheritable and ambient sets and the bounding set, and
 * no_new_privs is set: nothing trace could still exec regains a capability.
 * Capabilities are per thread: each thread trace starts after the drop
 * inherits the reduced sets; a thread started before it calls
 * asc_privs_drop() itself.
 */
#ifndef __ASCBPF_PRIVS_H
#define __ASCBPF_PRIVS_H

#include <stdint.h>

/* Reduces the calling thread to the set above; 0 or -errno (nothing is dropped on error). */
int asc_privs_drop(void);
/* The same drop to the capabilities in keep (1 << CAP_*): the hold watchdog keeps CAP_KILL. */
int asc_privs_keep_only(uint64_t keep);

#endif /* __ASCBPF_PRIVS_H */
