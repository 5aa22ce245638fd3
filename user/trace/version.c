// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * version.c - `ascbpf version [--json] [-p PID]`: versions, the architecture,
 * the kernel features ascbpf trace needs or uses, each probed on this machine
 * (user/trace/features.h lists them, with the path ascbpf takes when one is
 * present or absent), and whether the device channel (device timing,
 * user/trace/devtime.h) is usable: through this host's libascend_hal.so
 * (library search path), or with -p PID through the one mapped in that
 * process, tried for real (counter frequency and counter read, channel 50
 * started and stopped).  An unusable channel is reported, not an error.
 * --json: "features" maps each name to whether the kernel has it, "paths" to
 * the path taken, "used" to whether ascbpf uses it (an ASCBPF_NO_* variable
 * can switch one off), "device_channel" the channel's state.
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
#include "arch/arch.h"
#include "trace/devtime.h"
#include "trace/features.h"
#include "commands.h"
#include "lib/json_writer.h"
#include "lib/log.h"

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

static void print_json(const struct asc_feature_info *f, const struct utsname *u,
		       const struct asc_devtime_status *dev)
{
	int i;

	printf("{\"ascbpf\": \"%s\", \"capture_format\": %d, \"libbpf\": \"%u.%u\", "
	       "\"arch\": \"%s\", \"kernel\": \"%s\", \"features\": {",
	       ASCBPF_VERSION, ASC_CAPTURE_VERSION, libbpf_major_version(), libbpf_minor_version(),
	       asc_arch_target()->name, u->release);
	for (i = 0; i < ASC_FEAT_COUNT; i++)
		printf("%s\"%s\": %s", i ? ", " : "", f[i].name, f[i].present ? "true" : "false");
	printf("}, \"paths\": {");
	/* the path texts are constants of features.c without quotes or backslashes */
	for (i = 0; i < ASC_FEAT_COUNT; i++)
		printf("%s\"%s\": \"%s\"", i ? ", " : "", f[i].name, f[i].path);
	printf("}, \"used\": {");
	for (i = 0; i < ASC_FEAT_COUNT; i++)
		printf("%s\"%s\": %s", i ? ", " : "", f[i].name, f[i].use ? "true" : "false");
	printf("}, \"device_channel\": {\"usable\": %s, \"freq_hz\": %llu, "
	       "\"clock_bound_ns\": %llu, \"detail\": ",
	       dev->usable ? "true" : "false", (unsigned long long)dev->freq_hz,
	       (unsigned long long)dev->clock_bound_ns);
	print_json_str(dev->detail);
	printf("}}\n");
}

int cmd_version(int argc, char **argv)
{
	const struct asc_feature_info *f;
	struct asc_devtime_status dev;
	struct utsname u;
	int json = 0, i;
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
	f = asc_features();
	asc_devtime_check((pid_t)pid, 0, &dev);
	if (json) {
		print_json(f, &u, &dev);
	} else {
		printf("ascbpf %s\ncapture format %d\nlibbpf %u.%u\narch %s\nkernel %s\n"
		       "features:\n",
		       ASCBPF_VERSION, ASC_CAPTURE_VERSION, libbpf_major_version(),
		       libbpf_minor_version(), asc_arch_target()->name, u.release);
		for (i = 0; i < ASC_FEAT_COUNT; i++)
			printf("  %-14s %-4s %s\n", f[i].name, f[i].present ? "yes" : "no",
			       f[i].path);
		printf("device channel: %s (%s)\n", dev.usable ? "usable" : "not usable",
		       dev.detail);
	}
	return asc_features_check("version");
}
