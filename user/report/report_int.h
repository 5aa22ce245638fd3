/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * report_int.h - what report.c (findings, the command) and report_sections.c
 * (the text and JSON renderings) share; not an interface of the stage.
 */
#ifndef __ASCBPF_REPORT_INT_H
#define __ASCBPF_REPORT_INT_H

#include <stddef.h>
#include <stdint.h>
#include "lib/json_writer.h"
#include "report/report_detect.h"

#define MB	     (1024.0 * 1024.0)
#define MAX_FINDINGS 64
#define MAX_EVIDENCE 12

static inline double us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

struct evidence {
	const char *key;
	double value;
};

struct finding {
	const char *id;	    /* stable name for scripts */
	char summary[1024]; /* one line with the numbers */
	struct evidence ev[MAX_EVIDENCE];
	int nev;
	const char *thresholds[4]; /* names compared against */
	int nthr;
	const char *op, *api, *stack; /* call site, when the finding has one */
	const char *suggestion;
};

struct report {
	const struct asc_rpt_source *src;
	const struct asc_rpt_thresholds *t;
	const struct asc_rpt_result *res;
	struct finding f[MAX_FINDINGS];
	int nf;
	struct asc_out *o;
};

/* Writes the report to r->o: as text, or as one JSON object (json). */
void rpt_render(struct report *r, int json);

#endif /* __ASCBPF_REPORT_INT_H */
