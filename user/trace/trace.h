/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * trace.h - the options of `ascbpf trace` (user/trace/trace.c), parsed by functions
 * that unit tests and other commands can call.
 */
#ifndef __ASCBPF_TRACE_H
#define __ASCBPF_TRACE_H

#include <stdint.h>
#include <sys/types.h>
#include "schedule.h"

#define ASC_TRACE_MAX_PIDS 64

#define ASC_ACT_CPU 0x1 /* framework layer (aten, OpCommand, task queue) */
#define ASC_ACT_NPU 0x2 /* CANN, driver, ioctls, device timing */

/* Probe id the dynamic-loader hook's records carry (never a table site id). */
#define ASC_LOADER_PROBE_ID 0xfffffff1u

struct asc_trace_opts {
	pid_t pids[ASC_TRACE_MAX_PIDS];
	int nr_pids;
	const char *comm; /* --comm NAME */
	char **cmd;	  /* -- CMD ARGS (NULL-terminated, from argv) */
	int nr_cmd;
	uint32_t activities; /* ASC_ACT_* */
	uint32_t level;	     /* 0, 1 (default), 2 */
	int record_shapes;
	int profile_memory;
	int with_stack;
	struct asc_sched sched; /* enabled = 0 without --schedule */
	const char *schedule_spec;
	const char *step;    /* "LIB:SYMBOL", "none", or NULL (the table's step hook) */
	const char *step_py; /* --step-py FUNC: its entry is a step boundary */
	double duration_s;   /* 0: until stopped */
	uint32_t ringbuf_mb; /* power of two, default 16 */
	const char *outdir;  /* default ./result */
	const char *capture; /* default OUTDIR/ascbpf-PID.cap */
	int no_convert;
	int no_hold; /* --no-hold: only the -- CMD child is ever stopped */
	int force;
	const char *worker_name;
	const char *rank_env; /* default RANK */
	int verbose;
	int help;
	int export_type; /* ASC_EXPORT_* (convert/db_export.h), 0 = text */
};

/* Parses argv (argv[0] = "trace").  0 or -EINVAL with a message through asc_log. */
int asc_trace_parse_args(int argc, char **argv, struct asc_trace_opts *o);

/* "skip_first=N,wait=N,warmup=N,active=N,repeat=N[,skip_first_wait=0|1]" -> enabled schedule. */
int asc_trace_parse_schedule(const char *spec, struct asc_sched *s);

/* "cpu,npu" -> ASC_ACT_* bits. */
int asc_trace_parse_activities(const char *list, uint32_t *act);

#endif /* __ASCBPF_TRACE_H */
