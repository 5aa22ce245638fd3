/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * db_schema.h - the tables of torch_npu's db export (export_type "db"):
 * ascend_pytorch_profiler[_{rank}].db (msprof's msprof_*.db, moved there by
 * torch_npu, plus torch_npu's own tables) and analysis.db.  The facts and
 * where each comes from: docs/db_schema.md.  Column order, names and
 * declared types are the originals'; `pk` marks msprof's PRIMARY KEY columns.
 */
#ifndef __ASCBPF_DB_SCHEMA_H
#define __ASCBPF_DB_SCHEMA_H

#include <stdint.h>

struct asc_db_col {
	const char *name;
	const char *type; /* "INTEGER", "TEXT", "NUMERIC" */
	int pk;
};

struct asc_db_table {
	const char *name;
	const struct asc_db_col *cols;
	int nr_cols;
};

/* One row of an ENUM_* table that msprof always writes. */
struct asc_db_enum {
	uint32_t id;
	const char *name;
};

struct asc_db_enum_table {
	const char *table;
	const struct asc_db_enum *rows;
	int nr_rows;
};

enum asc_db_table_id {
	ASC_DBT_STRING_IDS,
	ASC_DBT_SESSION_TIME_INFO,
	ASC_DBT_RANK_DEVICE_MAP,
	ASC_DBT_META_DATA,
	ASC_DBT_TASK,
	ASC_DBT_COMPUTE_TASK_INFO,
	ASC_DBT_COMMUNICATION_TASK_INFO,
	ASC_DBT_COMMUNICATION_OP,
	ASC_DBT_CANN_API,
	ASC_DBT_NPU_MEM,
	ASC_DBT_ENUM, /* the column set shared by every ENUM_* table */
	ASC_DBT_PYTORCH_API,
	ASC_DBT_CONNECTION_IDS,
	ASC_DBT_PYTORCH_CALLCHAINS,
	ASC_DBT_MEMORY_RECORD,
	ASC_DBT_OP_MEMORY,
	ASC_DBT_STEP_TIME,
	/* analysis.db */
	ASC_DBT_STEP_TRACE_TIME,
	ASC_DBT_COMM_ANALYZER_TIME,
	ASC_DBT_COMM_ANALYZER_BANDWIDTH,
	ASC_DBT_COMM_ANALYZER_MATRIX,
	ASC_DBT_NR
};

extern const struct asc_db_table asc_db_tables[ASC_DBT_NR];
extern const struct asc_db_enum_table asc_db_enums[];
extern const int asc_db_nr_enums;

/* Unknown integer (torch_npu DbConstant.DB_INVALID_VALUE, msprof UINT32_MAX). */
#define ASC_DB_INVALID	      4294967295ull
/* String id bases: msprof's ids from 0, torch_npu's framework and memory strings. */
#define ASC_DB_STR_FWK	      (1u << 28)
#define ASC_DB_STR_MEM	      (2u << 28)
/* Connection ids of the task queue in PYTORCH_API (torch_npu START_CONNECTION_ID_FWK_API). */
#define ASC_DB_CONN_FWK	      (5ull << 28)
/* ENUM_API_TYPE ids: msprof's levels and torch_npu's ApiType. */
#define ASC_DB_API_NODE	      10000
#define ASC_DB_API_ACL	      20000
#define ASC_DB_API_RUNTIME    5000
#define ASC_DB_API_TORCH_OP   50001
#define ASC_DB_API_TASK_QUEUE 50002

#endif /* __ASCBPF_DB_SCHEMA_H */
