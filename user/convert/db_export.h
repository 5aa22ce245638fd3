/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * db_export.h - `--export-type db`: torch_npu's database output
 * (ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler[_{rank}].db and analysis.db)
 * from the joined capture view (analysis/correlate.h).  Tables and sources:
 * docs/db_schema.md.
 */
#ifndef __ASCBPF_DB_EXPORT_H
#define __ASCBPF_DB_EXPORT_H

struct asc_corr;
struct asc_comm;

/* asc_convert_opts.export_type bits; 0 means text (torch_npu's default) */
#define ASC_EXPORT_TEXT 0x1
#define ASC_EXPORT_DB	0x2

struct asc_db_opts {
	const char *out;	     /* the ASCEND_PROFILER_OUTPUT directory (exists) */
	int cycle;		     /* RECORD_AND_SAVE cycle written, -1 = whole capture */
	int level;		     /* 0..2: which CANN_API rows exist (as the text's events) */
	const struct asc_comm *comm; /* communication view (analysis/comm.h), NULL none */
};

/*
 * Parses "text", "db", "text,db" or "db,text" into ASC_EXPORT_* bits;
 * -EINVAL for anything else.
 */
int asc_export_type_parse(const char *s);

/*
 * Writes both databases of one cycle.  Refuses (-EEXIST) a database file
 * that exists already (the caller has just created an empty directory).
 * Returns 0 or -errno, with the reason printed.
 */
int asc_db_export(const struct asc_corr *c, const struct asc_db_opts *o);

#endif /* __ASCBPF_DB_EXPORT_H */
