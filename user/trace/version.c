// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * version.c - `ascbpf version [--json]`: versions and the kernel features
 * ascbpf trace needs or uses, each probed on this machine (not assumed):
 *   btf                 /sys/kernel/btf/vmlinux (CO-RE; required)
 *   uprobes             the uprobe PMU (required)
 *   uprobe_multi        BPF_LINK_TYPE_UPROBE_MULTI (optional: faster attach)
 *   ringbuf             BPF_MAP_TYPE_RINGBUF (required)
 *   attach_cookie       bpf_get_attach_cookie in kprobe/uprobe programs (required)
 * Exit status 0 when every required feature is present, else -ENOSYS (2).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "ascbpf_events.h"
#include "trace/attach.h"
#include "commands.h"
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

int cmd_version(int argc, char **argv)
{
	struct feature f[] = {
		{ "btf", 1, 0 }, { "uprobes", 1, 0 }, { "uprobe_multi", 0, 0 },
		{ "ringbuf", 1, 0 }, { "attach_cookie", 1, 0 },
	};
	libbpf_print_fn_t old;
	struct utsname u;
	int json = 0, i, missing = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("Usage: ascbpf version [--json]\n");
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
		printf("}}\n");
	} else {
		printf("ascbpf %s\ncapture format %d\nlibbpf %u.%u\nkernel %s\nfeatures:\n",
		       ASCBPF_VERSION, ASC_CAPTURE_VERSION, libbpf_major_version(),
		       libbpf_minor_version(), u.release);
		for (i = 0; i < (int)(sizeof(f) / sizeof(f[0])); i++)
			printf("  %-14s %s%s\n", f[i].name, f[i].present ? "yes" : "no",
			       !f[i].present && f[i].required ? " (required by ascbpf trace)" : "");
	}
	if (missing) {
		asc_err("version: %d required kernel feature%s missing\n", missing,
			missing == 1 ? "" : "s");
		return -ENOSYS;
	}
	return 0;
}
