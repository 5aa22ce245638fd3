/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * db_int.h - what db_export.c lends the files that write more tables
 * (db_comm.c): its writer behind opaque handles.  Not an interface of the
 * stage (that is db_export.h).
 */
#ifndef __ASCBPF_DB_INT_H
#define __ASCBPF_DB_INT_H

#include <stdint.h>
#include "convert/db_schema.h"

struct asc_corr;
struct asc_comm;
struct dbx;
struct dbw;

/* db_export.c: the export being written */
const struct asc_corr *dbx_corr(const struct dbx *x);
const struct asc_comm *dbx_comm(const struct dbx *x);
int dbx_cycle(const struct dbx *x);
int dbx_in_cycle(const struct dbx *x, int32_t step);
struct dbw *dbx_writer(struct dbx *x);
/* STRING_IDS id of s in msprof's range */
uint32_t dbx_str(struct dbx *x, const char *s);

/* a table created with its first row; the values of a row in column order */
void dbw_table(struct dbw *w, const char *name, enum asc_db_table_id id);
void dbw_int(struct dbw *w, int64_t v);
void dbw_real(struct dbw *w, double v);
void dbw_text(struct dbw *w, const char *s);
void dbw_null(struct dbw *w);
void dbw_row(struct dbw *w);
int dbw_table_end(struct dbw *w);

/* db_comm.c */
void db_comm_tables(struct dbx *x);
void db_comm_analysis(struct dbx *x, struct dbw *w);
void db_step_trace(struct dbx *x, struct dbw *w); /* StepTraceTime, as step_trace_time.csv */

#endif /* __ASCBPF_DB_INT_H */
