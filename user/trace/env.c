// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * env.c - what `ascbpf trace` needs of this machine (privileges, kernel
 * features) and what it reads of a target's environment (rank, device).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "discovery/elfsym.h"
#include "lib/log.h"
#include "trace/features.h"
#include "trace/trace_priv.h"

/* CAP_PERFMON (38) and CAP_BPF (39), Linux 5.8+, by number: libcap is not a dependency. */
#define ASC_CAP_PERFMON 38
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

/*
 * BTF, uprobes, the ring buffer, attach cookies...: user/trace/features.h.
 * Without uprobe_multi every probe is a perf-event file descriptor of ours:
 * the soft RLIMIT_NOFILE (often 1024) is raised to the hard one, or a large
 * probe table fails to attach with EMFILE.
 */
int check_kernel(void)
{
	struct rlimit r;

	if (!getrlimit(RLIMIT_NOFILE, &r) && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &r))
			asc_dbg("trace: RLIMIT_NOFILE stays: %s\n", strerror(errno));
	}
	return asc_features_check("trace");
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
	char *buf, *p;
	size_t i, len;
	int err;

	for (i = 0; i < n; i++)
		vals[i][0] = 0;
	err = asc_proc_environ(pid, &buf, &len);
	if (err)
		return err;
	for (p = buf; p < buf + len; p += strlen(p) + 1)
		for (i = 0; i < n; i++) {
			const char *v = asc_environ_value(p, names[i]);

			if (v)
				snprintf(vals[i], sizeof(vals[i]), "%s", v);
		}
	free(buf);
	return 0;
}

/* s as a number in [0, INT32_MAX), else -1. */
static int env_number(const char *s)
{
	char *end;
	long x = strtol(s, &end, 10);

	return end != s && !*end && x >= 0 && x < INT32_MAX ? (int)x : -1;
}

/*
 * The card a running process uses: the N of a /dev/davinciN it holds open
 * (the HAL keeps the card's node open while the card is in use), the lowest
 * one if several.  -1 if none (not opened yet, or unreadable).  What the
 * process does, not its environment: ASCEND_DEVICE_ID may be unset or name
 * another card than the one it sets with aclrtSetDevice.
 */
int fd_card(pid_t pid)
{
	char path[320], link[512];
	struct dirent *de;
	int card = -1;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		const char *base, *p;
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd/%s", pid, de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		base = strrchr(link, '/');
		base = base ? base + 1 : link;
		if (strncmp(base, "davinci", 7) || !base[7])
			continue;
		for (p = base + 7; *p >= '0' && *p <= '9'; p++)
			;
		if (*p || p - base > 7 + 4)
			continue;
		if (card < 0 || atoi(base + 7) < card)
			card = atoi(base + 7);
	}
	closedir(d);
	return card;
}

/* Value of NAME in /proc/PID/environ, as an int; -1 if absent. */
int env_int(pid_t pid, const char *name)
{
	char *buf, *p;
	size_t len;
	int v = -1;

	if (asc_proc_environ(pid, &buf, &len))
		return -1;
	for (p = buf; p < buf + len; p += strlen(p) + 1) {
		const char *s = asc_environ_value(p, name);

		if (s) {
			v = env_number(s);
			break;
		}
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
	static const char *const libc_names[] = { "libc.so", "libc-", NULL };
	const char *libc = NULL, *val;
	uint64_t start = 0, lb, envp, p, addr;
	ssize_t i;
	int fd, v = -1, k;

	if (asc_maps_read(pid, &maps))
		return -1;
	for (i = asc_maps_next_image(&maps, 0, libc_names); i >= 0 && !libc;
	     i = asc_maps_next_image(&maps, i + 1, libc_names)) {
		libc = maps.entries[i].path;
		start = maps.entries[i].start;
		if (asc_maps_host_path(pid, libc, maps.entries[i].inode, host, sizeof(host)))
			libc = NULL;
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
		val = asc_environ_value(buf, name);
		if (val) {
			v = env_number(val);
			break;
		}
	}
out:
	close(fd);
	return v;
}
