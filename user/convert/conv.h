/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * conv.h - what the files of the convert stage share (not an interface of
 * the stage: that is convert.h).
 *
 *   convert.c        the command, run directories, one conversion per cycle
 *   trace_view.c     trace_view.json
 *   csv_files.c      the CSV files
 *   profiler_info.c  profiler_info.json, profiler_metadata.json
 *   db_export.c      the databases (it shares the cycle filter, the op-memory
 *                    pairing and the env list; it has no struct conv)
 */
#ifndef __ASCBPF_CONV_H
#define __ASCBPF_CONV_H

#include <limits.h>
#include <stdint.h>
#include "analysis/comm.h"
#include "analysis/correlate.h"
#include "convert/convert.h"
#include "lib/csv_writer.h"
#include "lib/json_writer.h"

/* msprof process sort indices as in the sample (older CANN). */
#define SORT_CANN	 7
#define SORT_HARDWARE	 13
#define SORT_NPU_MEM	 19
#define SORT_HCCL	 15
#define SORT_OVERLAP	 23
#define MODEL_ID_INVALID "4294967295"

struct conv {
	const struct asc_corr *c;
	const struct asc_convert_opts *opts;
	int level;
	int export_type; /* ASC_EXPORT_* */
	int cycle;	 /* index into c->cycles, -1 = whole capture */
	int has_steps;
	uint32_t pid;
	char dir[PATH_MAX]; /* the *_ascend_pt directory */
	char out[PATH_MAX]; /* its ASCEND_PROFILER_OUTPUT */
	int err;
	int64_t last_stamp_ms;	     /* run directory stamps stay unique within one convert */
	const struct asc_comm *comm; /* communication view (analysis/comm.h), NULL none */
	const char *capture;	     /* the capture's path, NULL unknown */
};

/* convert.c */
int conv_close_out(struct conv *v, struct asc_out *o, const char *name);
int conv_in_cycle(const struct conv *v, int32_t step);
int conv_open_out(struct conv *v, struct asc_out *o, const char *dir, const char *name);
int conv_step_in_cycle(const struct asc_corr *c, int cycle, int32_t step);
uint32_t conv_fmt_pid(uint32_t pid, uint32_t sort, uint32_t dev);
void conv_csv_3(struct asc_csv *c, double v);
void conv_csv_3ns(struct asc_csv *c, int64_t ns);

/* comm_files.c */
void conv_communication(struct conv *v);
int conv_comm_step(const struct asc_corr *c, int cycle, int64_t start_ns);
size_t conv_comm_conn(const struct conv *v, size_t oi);
/* Each op's step slot in cycle (conv_comm_step(); -2 also: the op never ran); NULL: -ENOMEM */
int *conv_comm_slots(const struct asc_corr *c, const struct asc_comm *m, int cycle);
/*
 * One entry of torch_npu's communication matrix, as communication_matrix.json
 * and analysis.db's CommAnalyzerMatrix both hold it: the top1 / middle /
 * bottom1..3 op of a (type, group, link) series by bandwidth, or its total.
 */
struct conv_mx_entry {
	char name[48];	       /* "<type>-top1", ...: the key before "@" (hccl_op_name) */
	const char *group;     /* the group's name, "" without one */
	int new_key;	       /* the first entry of its "<name>@<group>" key */
	uint32_t src, dst;     /* ranks */
	const char *transport; /* "HCCS", "RDMA", ... */
	double size_mb, time_ms, bw;
	const char *op; /* the op's name; NULL for -total (the series' sums) */
};
typedef int (*conv_mx_fn)(void *ctx, const struct conv_mx_entry *e);
/*
 * The matrix entries of the ops with slot[i] == want, point-to-point or
 * collective, in torch_npu's order, each passed to fn.  0, -ENOMEM, or the
 * first non-zero of fn.
 */
int conv_comm_matrix(const struct asc_comm *m, const int *slot, int want, int p2p, conv_mx_fn fn,
		     void *ctx);
void conv_parallel_group_info(struct conv *v, struct asc_out *o);
/* The Overlap Analysis rows of one device (spans sorted, in this cycle). */
struct conv_overlap {
	struct span *comp, *comm, *nov, *freet;
	size_t ncomp, ncomm, nnov, nfree;
};
int conv_overlap(const struct conv *v, uint32_t dev, struct conv_overlap *ov);
void conv_overlap_free(struct conv_overlap *ov);
int64_t conv_receive_ns(const struct conv *v, uint32_t dev, int64_t s0, int64_t s1);

/* csv_files.c */
/* One PTA allocation inside an op and its frees (indices into c->mems). */
struct conv_alloc {
	uint64_t ptr;
	size_t mem;		 /* the MALLOC */
	int64_t free_i, bfree_i; /* its FREE and BLOCK_FREE, -1 none */
};
int conv_op_allocations(const struct asc_corr *c, int cycle, struct conv_alloc **al, size_t *nal);
void conv_api_statistic(struct conv *v);
void conv_kernel_details(struct conv *v);
void conv_memory_record(struct conv *v);
void conv_op_statistic(struct conv *v);
void conv_operator_details(struct conv *v);
void conv_operator_memory(struct conv *v);
void conv_step_trace_time(struct conv *v);
/* The numbers of one step_trace_time row, ns. */
struct conv_step_row {
	int64_t comp, nov, comm, freet, stage, bubble, nov_excl, preparing;
};
int conv_step_values(struct conv *v, const struct conv_overlap *o, uint32_t d, size_t i,
		     struct conv_step_row *row);

/* profiler_info.c */
extern const char *const conv_env_names[];
void conv_profiler_info(struct conv *v);
void conv_profiler_metadata(struct conv *v);

/* trace_view.c */
/* Computing intervals: union of the compute kernels of a device, in time order. */
struct span {
	int64_t s, e;
};
/* Is call k an AscendCL@ / Runtime@ event (a CANN_API row) at profiler level `level`? */
int conv_call_level_shown(int level, const struct asc_corr_call *k);
int conv_kernel_in(const struct conv *v, const struct asc_corr_kernel *k);
int conv_write_trace(struct conv *v, const char *path);
struct span *conv_computing_spans(const struct conv *v, uint32_t dev, size_t *nr);
uint32_t conv_devices_of(const struct conv *v);

#endif /* __ASCBPF_CONV_H */
