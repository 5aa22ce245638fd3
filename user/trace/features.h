/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * features.h - what this kernel offers ascbpf, probed at run time (never
 * assumed from the release string: distribution kernels backport), and the
 * path ascbpf takes for each.
 *
 *   feature        kernel  used by / path when present        when absent
 *   btf            5.4     CO-RE relocations (required)       exit 2
 *   uprobes        3.5     every probe (required)             exit 2
 *   ringbuf        5.8     the record ring (required)         exit 2
 *   attach_cookie  5.15    site id of every record (required) exit 2
 *   uprobe_multi   6.6     one link per (program, library)    one perf-event uprobe per site
 *   task_btf       5.11    PyTorch object: thread's fsbase    PyTorch object not loadable
 *   task_storage   5.11+   PyTorch object: seqnr per thread   PyTorch object not loadable
 *   bounded_loops  5.3     every loop of the BPF programs     (below the floor)
 *   bpf_loop       5.17    not used: every loop is bounded    -
 *
 * The floor is therefore the first kernel with bpf_get_attach_cookie for
 * uprobes, 5.15 (Ubuntu 22.04); 5.10 (openEuler 22.03, Debian 11) lacks it
 * and is refused with exit 2 (tools/vm: `make check-kernels` checks both).
 */
#ifndef __ASCBPF_FEATURES_H
#define __ASCBPF_FEATURES_H

enum asc_feature {
	ASC_FEAT_BTF,
	ASC_FEAT_UPROBES,
	ASC_FEAT_RINGBUF,
	ASC_FEAT_ATTACH_COOKIE,
	ASC_FEAT_UPROBE_MULTI,
	ASC_FEAT_TASK_BTF,
	ASC_FEAT_TASK_STORAGE,
	ASC_FEAT_BOUNDED_LOOPS,
	ASC_FEAT_BPF_LOOP,
	ASC_FEAT_COUNT,
};

struct asc_feature_info {
	const char *name;	/* as `ascbpf version` prints it */
	int required;		/* 1: ascbpf trace refuses to run without it */
	int present;		/* probed on this kernel */
	const char *path;	/* what ascbpf does, given present */
};

/* Probes every feature once (libbpf's probes are silenced) and returns the table. */
const struct asc_feature_info *asc_features(void);

/*
 * 0 if every required feature is present, else -ENOSYS after one asc_err
 * line per missing feature, prefixed with who ("trace", "version").
 */
int asc_features_check(const char *who);

#endif /* __ASCBPF_FEATURES_H */
