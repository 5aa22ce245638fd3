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
 *   attach_cookie  5.15    site id of every record            site_ids map: (tgid, address)
 *                                                             and a per-call (tid, sp) map
 *   uprobe_multi   6.6     one link per (program, library)    one perf-event uprobe per site
 *   task_btf       5.11    PyTorch object: thread's fsbase    PyTorch object not loadable
 *   task_storage   5.11+   PyTorch object: seqnr per thread   PyTorch object not loadable
 *   bounded_loops  5.3     every loop of the BPF programs     (below the floor)
 *   bpf_loop       5.17    not used: every loop is bounded    -
 *
 * The floor is therefore the BPF ring buffer, 5.8: 5.10 (openEuler 22.03,
 * Debian 11) traces with the attach cookie's fallback (bpf/ascbpf_maps.h
 * "Site ids"; tools/vm: `make check-kernels` boots Debian 11's 5.10).
 * ASCBPF_NO_ATTACH_COOKIE=1 (and ASCBPF_NO_UPROBE_MULTI=1) force the
 * fallback paths on a newer kernel, for the tests; without attach cookies
 * uprobe_multi is not used (its sites are told apart by cookie only).
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
	const char *name; /* as `ascbpf version` prints it */
	int required;	  /* 1: ascbpf trace refuses to run without it */
	int present;	  /* probed on this kernel */
	int use;	  /* present and not switched off by its ASCBPF_NO_* variable */
	const char *path; /* what ascbpf does, given present */
};

/* Probes every feature once (libbpf's probes are silenced) and returns the table. */
const struct asc_feature_info *asc_features(void);

/*
 * 0 if every required feature is present, else -ENOSYS after one asc_err
 * line per missing feature, prefixed with who ("trace", "version").
 */
int asc_features_check(const char *who);

/* Whether ascbpf uses feature f (present and not forced off). */
int asc_feature_use(enum asc_feature f);

#endif /* __ASCBPF_FEATURES_H */
