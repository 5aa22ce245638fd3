// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * env.c - what `ascbpf trace` needs of this machine (privileges, kernel
 * features) and what it reads of a target's environment (rank, device).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "discovery/elfsym.h"
#include "lib/log.h"
#include "trace/trace_priv.h"

/* CAP_PERFMON (38) and CAP_BPF (39), Linux 5.8+, by number: libcap is not a dependency. */
#define ASC_CAP_PERFMON	38
#define ASC_CAP_BPF	39

static int cap_effective(const struct __user_cap_data_struct *d, int cap)
{
	return !!(d[cap / 32].effective & (1u << (cap % 32)));
}

int check_privileges(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};

	if (geteuid() == 0)
		return 0;
	if (syscall(SYS_capget, &h, d) == 0 &&
	    ((cap_effective(d, ASC_CAP_BPF) && cap_effective(d, ASC_CAP_PERFMON)) ||
	     cap_effective(d, CAP_SYS_ADMIN)))
		return 0;
	asc_err("trace: needs root, or CAP_BPF and CAP_PERFMON (run with sudo)\n");
	return -EPERM;
}

int check_kernel(void)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		asc_err("trace: this kernel has no BTF (/sys/kernel/btf/vmlinux): "
			"CONFIG_DEBUG_INFO_BTF=y is required\n");
		return -ENOSYS;
	}
	if (access("/sys/bus/event_source/devices/uprobe/type", R_OK)) {
		asc_err("trace: this kernel has no uprobes "
			"(/sys/bus/event_source/devices/uprobe): CONFIG_UPROBE_EVENTS=y is "
			"required\n");
		return -ENOSYS;
	}
	return 0;
}

int read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return n;
}

/*
 * Copies the value of each of names[0..n) found in /proc/PID/environ into
 * vals[i] (len bytes each, truncated), "" for the absent ones.  Returns 0 or
 * -errno (the process is gone, or its environment is unreadable).
 */
int env_strs(pid_t pid, const char *const *names, size_t n, char (*vals)[256])
{
	char path[64], *buf, *p;
	size_t i;
	int len;

	for (i = 0; i < n; i++)
		vals[i][0] = 0;
	buf = malloc(1 << 16);
	if (!buf)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	len = read_file(path, buf, 1 << 16);
	if (len < 0) {
		free(buf);
		return len;
	}
	for (p = buf; p < buf + len; p += strlen(p) + 1)
		for (i = 0; i < n; i++) {
			size_t nl = strlen(names[i]);

			if (!strncmp(p, names[i], nl) && p[nl] == '=')
				snprintf(vals[i], sizeof(vals[i]), "%s", p + nl + 1);
		}
	free(buf);
	return 0;
}

/* Value of NAME in /proc/PID/environ, as an int; -1 if absent. */
int env_int(pid_t pid, const char *name)
{
	char path[64], *buf, *p;
	size_t nl = strlen(name);
	int n, v = -1;

	buf = malloc(1 << 16);
	if (!buf)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	n = read_file(path, buf, 1 << 16);
	for (p = buf; n > 0 && p < buf + n; p += strlen(p) + 1)
		if (!strncmp(p, name, nl) && p[nl] == '=') {
			char *end;
			long x = strtol(p + nl + 1, &end, 10);

			if (end != p + nl + 1 && !*end && x >= 0 && x < INT32_MAX)
				v = x;
			break;
		}
	free(buf);
	return v;
}

/*
 * NAME from the live environment: a variable set with setenv() after a fork
 * (launchers that fork their ranks) is not in /proc/PID/environ, which shows
 * what the process was exec'ed with.  Reads libc's __environ array from the
 * target's memory (/proc/PID/mem).  -1 if absent or unreadable.
 */
int live_env_int(pid_t pid, const char *name)
{
	char host[PATH_MAX], path[64], buf[256];
	struct asc_elf_sym sym;
	struct asc_maps maps;
	const char *libc = NULL;
	uint64_t start = 0, lb, envp, p, addr;
	size_t i, nl = strlen(name);
	int fd, v = -1, k;

	if (asc_maps_read(pid, &maps))
		return -1;
	for (i = 0; i < maps.nr && !libc; i++) {
		const char *q = maps.entries[i].path, *b;

		if (!q || q[0] != '/' || maps.entries[i].offset)
			continue;
		b = strrchr(q, '/') + 1;
		if (!strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5)) {
			libc = q;
			start = maps.entries[i].start;
			if (asc_maps_host_path(pid, q, maps.entries[i].inode, host, sizeof(host)))
				libc = NULL;
		}
	}
	asc_maps_free(&maps);
	if (!libc || asc_elf_lookup(host, "__environ", &sym) || asc_elf_load_base(host, &lb))
		return -1;
	addr = start - lb + sym.vaddr;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (pread(fd, &envp, sizeof(envp), addr) != sizeof(envp))
		goto out;
	for (k = 0; k < 4096 && envp; k++, envp += sizeof(p)) {
		ssize_t n;

		if (pread(fd, &p, sizeof(p), envp) != sizeof(p) || !p)
			break;
		n = pread(fd, buf, sizeof(buf) - 1, p);
		if (n <= 0)
			continue;
		buf[n] = 0;
		if (!strncmp(buf, name, nl) && buf[nl] == '=') {
			char *end;
			long x = strtol(buf + nl + 1, &end, 10);

			if (end != buf + nl + 1 && !*end && x >= 0 && x < INT32_MAX)
				v = x;
			break;
		}
	}
out:
	close(fd);
	return v;
}
