// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * features.c - run-time kernel feature probes (see features.h): libbpf's
 * own probes where it has one, a tiny program load where not.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "trace/attach.h"
#include "trace/features.h"
#include "lib/log.h"

static struct asc_feature_info table[ASC_FEAT_COUNT] = {
	[ASC_FEAT_BTF] = { "btf", 1, 0, 0, NULL },
	[ASC_FEAT_UPROBES] = { "uprobes", 1, 0, 0, NULL },
	[ASC_FEAT_RINGBUF] = { "ringbuf", 1, 0, 0, NULL },
	[ASC_FEAT_ATTACH_COOKIE] = { "attach_cookie", 0, 0, 0, NULL },
	[ASC_FEAT_UPROBE_MULTI] = { "uprobe_multi", 0, 0, 0, NULL },
	[ASC_FEAT_TASK_BTF] = { "task_btf", 0, 0, 0, NULL },
	[ASC_FEAT_TASK_STORAGE] = { "task_storage", 0, 0, 0, NULL },
	[ASC_FEAT_BOUNDED_LOOPS] = { "bounded_loops", 1, 0, 0, NULL },
	[ASC_FEAT_BPF_LOOP] = { "bpf_loop", 0, 0, 0, NULL },
};

/* why / what instead, per feature: [0] when absent, [1] when present */
static const char *const paths[ASC_FEAT_COUNT][2] = {
	[ASC_FEAT_BTF] = { "required: CONFIG_DEBUG_INFO_BTF=y",
			   "CO-RE against /sys/kernel/btf/vmlinux" },
	[ASC_FEAT_UPROBES] = { "required: CONFIG_UPROBE_EVENTS=y", "uprobe PMU" },
	[ASC_FEAT_RINGBUF] = { "required: BPF ring buffer (kernel 5.8)", "BPF ring buffer" },
	[ASC_FEAT_ATTACH_COOKIE] = { "site id from a (process, address) map; returns: per call",
				     "site id from bpf_get_attach_cookie" },
	[ASC_FEAT_UPROBE_MULTI] = { "attach: one perf-event uprobe per site",
				    "attach: one uprobe_multi link per program and library" },
	[ASC_FEAT_TASK_BTF] = { "PyTorch object (aten ops) cannot load (kernel 5.11)",
				"PyTorch object: thread pointer from the task's BTF" },
	[ASC_FEAT_TASK_STORAGE] = { "PyTorch object (aten ops) cannot load",
				    "PyTorch object: per-thread state in task storage" },
	[ASC_FEAT_BOUNDED_LOOPS] = { "required: bounded loops (kernel 5.3)",
				     "bounded loops in every program" },
	[ASC_FEAT_BPF_LOOP] = { "not used (every loop is bounded)",
				"not used (every loop is bounded)" },
};

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* A kprobe-type program with a back-edge: r0 = 0; do r0 += 1; while (r0 < 4); exit. */
static int probe_bounded_loops(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_JLT | BPF_K, .dst_reg = BPF_REG_0, .off = -2, .imm = 4 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "asc_loop_probe", "GPL", insns, 4, NULL);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* An ASCBPF_NO_* variable set to anything but "" or "0". */
static int forced_off(const char *var)
{
	const char *env = getenv(var);

	return env && *env && strcmp(env, "0");
}

int asc_feature_use(enum asc_feature f)
{
	return asc_features()[f].use;
}

const struct asc_feature_info *asc_features(void)
{
	static int done;
	libbpf_print_fn_t old;
	int i;

	if (done)
		return table;
	old = libbpf_set_print(silent_print);
	table[ASC_FEAT_BTF].present = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	table[ASC_FEAT_UPROBES].present = access("/sys/bus/event_source/devices/uprobe/type",
						 R_OK) == 0;
	table[ASC_FEAT_RINGBUF].present = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) ==
					  1;
	table[ASC_FEAT_ATTACH_COOKIE].present = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE,
									BPF_FUNC_get_attach_cookie,
									NULL) == 1;
	table[ASC_FEAT_UPROBE_MULTI].present = asc_uprobe_multi_supported() == 1;
	table[ASC_FEAT_TASK_BTF].present = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE,
								   BPF_FUNC_get_current_task_btf,
								   NULL) == 1;
	table[ASC_FEAT_TASK_STORAGE].present =
		libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) == 1 &&
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_task_storage_get, NULL) == 1;
	table[ASC_FEAT_BOUNDED_LOOPS].present = probe_bounded_loops();
	table[ASC_FEAT_BPF_LOOP].present = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE,
								   BPF_FUNC_loop, NULL) == 1;
	libbpf_set_print(old);
	for (i = 0; i < ASC_FEAT_COUNT; i++) {
		table[i].use = table[i].present && i != ASC_FEAT_BPF_LOOP;
		table[i].path = paths[i][table[i].present];
	}
	if (forced_off("ASCBPF_NO_ATTACH_COOKIE") && table[ASC_FEAT_ATTACH_COOKIE].present) {
		table[ASC_FEAT_ATTACH_COOKIE].use = 0;
		table[ASC_FEAT_ATTACH_COOKIE].path =
			"site id from a (process, address) map; returns: per call "
			"(ASCBPF_NO_ATTACH_COOKIE set)";
	}
	/* uprobe_multi sites are told apart by their cookies only */
	if (table[ASC_FEAT_UPROBE_MULTI].present && !table[ASC_FEAT_ATTACH_COOKIE].use) {
		table[ASC_FEAT_UPROBE_MULTI].use = 0;
		table[ASC_FEAT_UPROBE_MULTI].path =
			"attach: one perf-event uprobe per site (no attach cookies)";
	} else if (forced_off("ASCBPF_NO_UPROBE_MULTI")) {
		table[ASC_FEAT_UPROBE_MULTI].path =
			"attach: one perf-event uprobe per site (ASCBPF_NO_UPROBE_MULTI set)";
	}
	done = 1;
	return table;
}

int asc_features_check(const char *who)
{
	const struct asc_feature_info *f = asc_features();
	int i, missing = 0;

	for (i = 0; i < ASC_FEAT_COUNT; i++) {
		if (!f[i].required || f[i].present)
			continue;
		asc_err("%s: this kernel lacks %s: %s\n", who, f[i].name, f[i].path);
		missing++;
	}
	return missing ? -ENOSYS : 0;
}
