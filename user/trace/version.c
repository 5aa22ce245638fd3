// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * version.c - `ascbpf version [--json] [-p PID]`: versions and the kernel features
 * ascbpf trace needs or uses, each probed on this machine (not assumed):
 *   btf                 /sys/kernel/btf/vmlinux (CO-RE; required)
 *   uprobes             the uprobe PMU (required)
 *   uprobe_multi        BPF_LINK_TYPE_UPROBE_MULTI (optional: faster attach)
 *   ringbuf             BPF_MAP_TYPE_RINGBUF (required)
 *   attach_cookie       bpf_get_attach_cookie in kprobe/uprobe programs (required)
 * and whether the device channel (device timing, user/trace/devtime.h) is
 * usable: through this host's libascend_hal.so (library search path), or
 * with -p PID through the one mapped in that process, tried for real
 * (counter frequency and counter read, channel 50 started and stopped).  An
 * unusable channel is reported, not an error.
 * Exit status 0 when every required feature is present, else -ENOSYS (2).
 */
#include <errno.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "ascbpf_events.h"
#include "trace/attach.h"
#include "trace/devtime.h"
#include "commands.h"
#include "lib/json_writer.h"
#include "lib/log.h"

struct feature {
	const char *name;
	int required;
	int present;
};

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* s as a JSON string on stdout (lib/json_writer's escaping). */
static void print_json_str(const char *s)
{
	struct asc_out o;

	fflush(stdout);
	if (asc_out_fdopen(&o, STDOUT_FILENO)) {
		printf("\"\"");
		return;
	}
	asc_json_cstr(&o, s);
	asc_out_close(&o);
}

int cmd_version(int argc, char **argv)
{
	struct feature f[] = {
		{ "btf", 1, 0 }, { "uprobes", 1, 0 }, { "uprobe_multi", 0, 0 },
		{ "ringbuf", 1, 0 }, { "attach_cookie", 1, 0 },
	};
	libbpf_print_fn_t old;
	struct asc_devtime_status dev;
	struct utsname u;
	int json = 0, i, missing = 0;
	long pid = 0;

	for (i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "-p") && i + 1 < argc) {
			pid = strtol(argv[++i], &end, 10);
			if (*end || pid <= 0 || kill((pid_t)pid, 0)) {
				asc_err("version: -p '%s': no such process\n", argv[i]);
				return -EINVAL;
			}
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("Usage: ascbpf version [--json] [-p PID]\n");
			return 0;
		} else {
			asc_err("version: unknown argument '%s'\n", argv[i]);
			return -EINVAL;
		}
	}
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	old = libbpf_set_print(silent_print);
	f[0].present = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	f[1].present = access("/sys/bus/event_source/devices/uprobe/type", R_OK) == 0;
	f[2].present = asc_uprobe_multi_supported() == 1;
	f[3].present = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
	f[4].present = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie,
					       NULL) == 1;
	libbpf_set_print(old);
	asc_devtime_check((pid_t)pid, 0, &dev);
	for (i = 0; i < (int)(sizeof(f) / sizeof(f[0])); i++)
		if (f[i].required && !f[i].present)
			missing++;
	if (json) {
		printf("{\"ascbpf\": \"%s\", \"capture_format\": %d, \"libbpf\": \"%u.%u\", "
		       "\"kernel\": \"%s\", \"features\": {", ASCBPF_VERSION, ASC_CAPTURE_VERSION,
		       libbpf_major_version(), libbpf_minor_version(), u.release);
		for (i = 0; i < (int)(sizeof(f) / sizeof(f[0])); i++)
			printf("%s\"%s\": %s", i ? ", " : "", f[i].name,
			       f[i].present ? "true" : "false");
		printf("}, \"device_channel\": {\"usable\": %s, \"freq_hz\": %llu, "
		       "\"clock_bound_ns\": %llu, \"detail\": ", dev.usable ? "true" : "false",
		       (unsigned long long)dev.freq_hz, (unsigned long long)dev.clock_bound_ns);
		print_json_str(dev.detail);
		printf("}}\n");
	} else {
		printf("ascbpf %s\ncapture format %d\nlibbpf %u.%u\nkernel %s\nfeatures:\n",
		       ASCBPF_VERSION, ASC_CAPTURE_VERSION, libbpf_major_version(),
		       libbpf_minor_version(), u.release);
		for (i = 0; i < (int)(sizeof(f) / sizeof(f[0])); i++)
			printf("  %-14s %s%s\n", f[i].name, f[i].present ? "yes" : "no",
			       !f[i].present && f[i].required ? " (required by ascbpf trace)" : "");
		printf("device channel: %s (%s)\n", dev.usable ? "usable" : "not usable",
		       dev.detail);
	}
	if (missing) {
		asc_err("version: %d required kernel feature%s missing\n", missing,
			missing == 1 ? "" : "s");
		return -ENOSYS;
	}
	return 0;
}
