/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * fwdbwd.h - torch_npu's forward -> backward flows (trace_view `fwdbwd`):
 * which forward op and which backward node share an autograd sequence
 * number (user/discovery/seqnr.h says how the numbers are recorded).
 */
#ifndef __ASCBPF_FWDBWD_H
#define __ASCBPF_FWDBWD_H

#include <stddef.h>
#include <stdint.h>

/* The fields of an op the pairing reads (user/analysis/correlate.h asc_corr_op has them). */
struct asc_fwdbwd_op {
	int64_t start_ns;
	int64_t seq;
	uint32_t tid;
	uint32_t fwd_tid;
};

struct asc_fwdbwd {
	int64_t seq; /* the flow id */
	size_t fwd;  /* index of the forward op ("s" end) */
	size_t bwd;  /* index of the backward op ("f" end) */
};

/*
 * torch_npu's pairing: for each sequence number >= 0, the latest-starting op
 * with Fwd thread id 0 (forward) and the latest-starting one with a non-zero
 * Fwd thread id (backward; the first of equal starts wins); a pair is kept
 * when both exist and their tids differ.  Pairs come in the order their
 * number first appears in ops[].  op(i, ctx) gives op i or NULL to leave it
 * out (another cycle).  Returns the number of pairs (*out malloc'd, NULL when
 * 0) or -ENOMEM.
 */
long asc_fwdbwd_pairs(size_t nr_ops, const struct asc_fwdbwd_op *(*op)(size_t i, void *ctx),
		      void *ctx, struct asc_fwdbwd **out);

#endif /* __ASCBPF_FWDBWD_H */
