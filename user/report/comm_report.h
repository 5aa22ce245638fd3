/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * comm_report.h - `ascbpf report JOBDIR`: the cross-rank findings of a
 * distributed job (slow rank, slow link, communication share per step,
 * the culprit of a hang) from the ranks' captures (comm_report.c).
 */
#ifndef __ASCBPF_COMM_REPORT_H
#define __ASCBPF_COMM_REPORT_H

#include <stddef.h>

/*
 * *nranks: how many distinct ranks the captures under dir (3 levels: *.ascb,
 * ascbpf-*.cap) belong to.  0.
 */
int asc_rpt_job_captures(const char *dir, size_t *nranks);
/* Prints the job report of the captures under dir, as text or JSON.  0 or -errno. */
int asc_rpt_job(const char *dir, int json);

#endif /* __ASCBPF_COMM_REPORT_H */
