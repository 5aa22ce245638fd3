// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * version.c - `ascbpf version [--json]`: versions, the architecture, and the
 * kernel features ascbpf trace needs or uses, each probed on this machine
 * (user/trace/features.h lists them, with the path ascbpf takes when one is
 * present or absent).  --json: "features" maps each name to whether the
 * kernel has it, "paths" to the path taken.
 * Exit status 0 when every required feature is present, else -ENOSYS (2).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <bpf/libbpf.h>
#include "ascbpf_events.h"
#include "trace/features.h"
#include "commands.h"
#include "lib/log.h"

int cmd_version(int argc, char **argv)
{
	const struct asc_feature_info *f;
	struct utsname u;
	int json = 0, i;

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
	f = asc_features();
	if (json) {
		printf("{\"ascbpf\": \"%s\", \"capture_format\": %d, \"libbpf\": \"%u.%u\", "
		       "\"arch\": \"%s\", \"kernel\": \"%s\", \"features\": {", ASCBPF_VERSION,
		       ASC_CAPTURE_VERSION, libbpf_major_version(), libbpf_minor_version(),
		       u.machine, u.release);
		for (i = 0; i < ASC_FEAT_COUNT; i++)
			printf("%s\"%s\": %s", i ? ", " : "", f[i].name,
			       f[i].present ? "true" : "false");
		printf("}, \"paths\": {");
		/* the path texts are constants of features.c without quotes or backslashes */
		for (i = 0; i < ASC_FEAT_COUNT; i++)
			printf("%s\"%s\": \"%s\"", i ? ", " : "", f[i].name, f[i].path);
		printf("}}\n");
	} else {
		printf("ascbpf %s\ncapture format %d\nlibbpf %u.%u\narch %s\nkernel %s\n"
		       "features:\n", ASCBPF_VERSION, ASC_CAPTURE_VERSION, libbpf_major_version(),
		       libbpf_minor_version(), u.machine, u.release);
		for (i = 0; i < ASC_FEAT_COUNT; i++)
			printf("  %-14s %-4s %s\n", f[i].name, f[i].present ? "yes" : "no",
			       f[i].path);
	}
	return asc_features_check("version");
}
