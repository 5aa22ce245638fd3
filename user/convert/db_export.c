// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * db_export.c - torch_npu's db export (docs/db_schema.md) from the joined view.
 *
 * Writing: one prepared INSERT per table, rows bound and stepped one at a
 * time, committed every DB_BATCH rows (one transaction per batch, never per
 * row).  Rows are made from the view's arrays as the text converter makes
 * its CSV lines, so memory beyond the view is the string pools (distinct
 * strings only) and a few per-op / per-step integers.  The database is
 * written under a temporary name and renamed when complete, so a failed
 * export leaves no half database for Insight to pick up.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sqlite3.h>
#include "ascbpf_events.h"
#include "schedule.h"
#include "analysis/correlate.h"
#include "convert/conv.h"
#include "convert/db_export.h"
#include "convert/db_int.h"
#include "convert/db_schema.h"
#include "lib/hashmap.h"
#include "lib/log.h"

#define DB_BATCH 65536

int asc_export_type_parse(const char *s)
{
	if (!strcmp(s, "text"))
		return ASC_EXPORT_TEXT;
	if (!strcmp(s, "db"))
		return ASC_EXPORT_DB;
	if (!strcmp(s, "text,db") || !strcmp(s, "db,text"))
		return ASC_EXPORT_TEXT | ASC_EXPORT_DB;
	return -EINVAL;
}

/* ---- string pools: STRING_IDS, one id range per writer (msprof, framework, memory) ---- */

struct strent {
	uint32_t off, len, id;
};

struct strpool {
	uint32_t base, next;
	struct strent *ents; /* interned strings in id order (ids base + index) */
	size_t n, ecap;
	struct asc_idxmap index; /* string bytes -> ents[] */
	char *arena;
	size_t alen, acap;
	uint32_t empty_id; /* id of "" once interned, else 0 */
	int has_empty;
	uint32_t *cache_key, *cache_id; /* direct-mapped: view string id -> db id */
};

#define CACHE_SLOTS 8192

static int pool_init(struct strpool *p, uint32_t base)
{
	memset(p, 0, sizeof(*p));
	p->base = p->next = base;
	p->cache_key = malloc(CACHE_SLOTS * sizeof(uint32_t));
	p->cache_id = malloc(CACHE_SLOTS * sizeof(uint32_t));
	if (!p->cache_key || !p->cache_id)
		return -ENOMEM;
	memset(p->cache_key, 0xff, CACHE_SLOTS * sizeof(uint32_t));
	return 0;
}

static void pool_free(struct strpool *p)
{
	free(p->ents);
	asc_idxmap_free(&p->index);
	free(p->arena);
	free(p->cache_key);
	free(p->cache_id);
}

struct pool_key {
	const char *s;
	size_t n;
};

static int pool_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct strpool *p = ctx;
	const struct pool_key *k = key;

	return p->ents[idx].len == k->n && !memcmp(p->arena + p->ents[idx].off, k->s, k->n);
}

/* Appends the n bytes of s to the arena; their offset, or -1 when out of memory. */
static long pool_store(struct strpool *p, const char *s, size_t n)
{
	long off = (long)p->alen;

	if (p->alen + n > p->acap) {
		size_t nc = p->acap ? p->acap * 2 : 65536;
		char *na;

		while (nc < p->alen + n)
			nc *= 2;
		na = realloc(p->arena, nc);
		if (!na)
			return -1;
		p->arena = na;
		p->acap = nc;
	}
	memcpy(p->arena + p->alen, s, n);
	p->alen += n;
	return off;
}

/* The id of s in p, interned on first use; UINT32_MAX when out of memory. */
static uint32_t pool_id(struct strpool *p, const char *s)
{
	struct pool_key k = { s, strlen(s) };
	uint64_t h = asc_hash_bytes(s, k.n);
	uint32_t at;
	long off;

	if (!k.n) {
		if (!p->has_empty) {
			p->has_empty = 1;
			p->empty_id = p->next++;
		}
		return p->empty_id;
	}
	if (asc_idxmap_find(&p->index, h, pool_eq, p, &k, &at))
		return p->ents[at].id;
	if (p->n == p->ecap) {
		size_t nc = p->ecap ? p->ecap * 2 : 1024;
		struct strent *ne = realloc(p->ents, nc * sizeof(*ne));

		if (!ne)
			return UINT32_MAX;
		p->ents = ne;
		p->ecap = nc;
	}
	off = pool_store(p, s, k.n);
	if (off < 0 || asc_idxmap_add(&p->index, h, (uint32_t)p->n))
		return UINT32_MAX;
	p->ents[p->n++] = (struct strent){ (uint32_t)off, (uint32_t)k.n, p->next };
	return p->next++;
}

/* The id of a view string (asc_corr_str id), through the cache. */
static uint32_t pool_sid(struct strpool *p, const struct asc_corr *c, uint32_t sid)
{
	uint32_t slot = (sid * 2654435761u) % CACHE_SLOTS, id;

	if (p->cache_key[slot] == sid)
		return p->cache_id[slot];
	id = pool_id(p, asc_corr_str(c, sid));
	p->cache_key[slot] = sid;
	p->cache_id[slot] = id;
	return id;
}

/* ---- the writer ---- */

struct dbw {
	sqlite3 *db;
	sqlite3_stmt *st;
	const char *table;
	enum asc_db_table_id id;
	int nopk; /* torch_npu's own CREATE TABLE: no primary keys */
	size_t in_batch;
	int col;
	int err;
};

static int db_exec(struct dbw *w, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(w->db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	asc_err("convert: db: %s: %s\n", sql, msg ? msg : sqlite3_errmsg(w->db));
	sqlite3_free(msg);
	if (!w->err)
		w->err = -EIO;
	return w->err;
}

/* CREATE TABLE (the columns of table id) and its INSERT; opens the first batch. */
static int tab_create(struct dbw *w)
{
	const struct asc_db_table *t = &asc_db_tables[w->id];
	char sql[2048];
	size_t n;
	int i;

	n = (size_t)snprintf(sql, sizeof(sql), "CREATE TABLE %s (", w->table);
	for (i = 0; i < t->nr_cols && n < sizeof(sql); i++)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n, "%s%s %s%s", i ? ", " : "",
				      t->cols[i].name, t->cols[i].type,
				      t->cols[i].pk && !w->nopk ? " PRIMARY KEY" : "");
	if (n + 2 >= sizeof(sql))
		return w->err = -E2BIG;
	strcpy(sql + n, ")");
	if (db_exec(w, sql))
		return w->err;
	n = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO %s VALUES (", w->table);
	for (i = 0; i < t->nr_cols; i++)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n, i ? ",?" : "?");
	strcpy(sql + n, ")");
	if (sqlite3_prepare_v2(w->db, sql, -1, &w->st, NULL) != SQLITE_OK) {
		asc_err("convert: db: %s: %s\n", sql, sqlite3_errmsg(w->db));
		return w->err = -EIO;
	}
	return db_exec(w, "BEGIN");
}

/*
 * Starts a table.  Created with its first row, as msprof and torch_npu
 * create theirs (a table without rows does not exist), unless `always`
 * (the tables torch_npu creates before inserting, e.g. StepTraceTime).
 */
static int tab_begin(struct dbw *w, const char *name, enum asc_db_table_id id, int always)
{
	if (w->err)
		return w->err;
	w->table = name;
	w->id = id;
	w->in_batch = 0;
	w->col = 0;
	w->st = NULL;
	return always ? tab_create(w) : 0;
}

/* Before the first bind of a row: the table exists. */
static int row_ready(struct dbw *w)
{
	if (!w->st && !w->err)
		tab_create(w);
	return !w->err;
}

static void b_int(struct dbw *w, int64_t v)
{
	if (!w->col && !row_ready(w))
		return;
	sqlite3_bind_int64(w->st, ++w->col, v);
}

static void b_null(struct dbw *w)
{
	if (!w->col && !row_ready(w))
		return;
	sqlite3_bind_null(w->st, ++w->col);
}

static void b_text(struct dbw *w, const char *s)
{
	if (!w->col && !row_ready(w))
		return;
	sqlite3_bind_text(w->st, ++w->col, s, -1, SQLITE_TRANSIENT);
}

static void b_real(struct dbw *w, double v)
{
	if (!w->col && !row_ready(w))
		return;
	sqlite3_bind_double(w->st, ++w->col, v);
}

/* Inserts the bound row; commits every DB_BATCH rows. */
static void row_end(struct dbw *w)
{
	w->col = 0;
	if (w->err || !w->st)
		return;
	if (sqlite3_step(w->st) != SQLITE_DONE) {
		asc_err("convert: db: inserting into %s: %s\n", w->table, sqlite3_errmsg(w->db));
		w->err = -EIO;
		return;
	}
	sqlite3_reset(w->st);
	if (++w->in_batch == DB_BATCH) {
		w->in_batch = 0;
		if (!db_exec(w, "COMMIT"))
			db_exec(w, "BEGIN");
	}
}

static int tab_end(struct dbw *w)
{
	if (!w->st)
		return w->err;
	sqlite3_finalize(w->st);
	w->st = NULL;
	if (!w->err)
		db_exec(w, "COMMIT");
	return w->err;
}

static int db_open(struct dbw *w, const char *path)
{
	struct stat st;

	memset(w, 0, sizeof(*w));
	if (!lstat(path, &st)) {
		asc_err("convert: %s exists\n", path);
		return -EEXIST;
	}
	/* NOFOLLOW: never through a link (the directory was made by this convert) */
	if (sqlite3_open_v2(path, &w->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW,
			    NULL) != SQLITE_OK) {
		asc_err("convert: cannot create %s: %s\n", path,
			w->db ? sqlite3_errmsg(w->db) : "out of memory");
		sqlite3_close(w->db);
		w->db = NULL;
		return -EIO;
	}
	/* written once, renamed when complete: no journal needed */
	db_exec(w, "PRAGMA journal_mode=OFF");
	db_exec(w, "PRAGMA synchronous=OFF");
	return w->err;
}

static int db_close(struct dbw *w)
{
	if (w->st)
		sqlite3_finalize(w->st);
	if (w->db && sqlite3_close(w->db) != SQLITE_OK && !w->err)
		w->err = -EIO;
	w->db = NULL;
	return w->err;
}

/* ---- the export ---- */

struct dbx {
	const struct asc_corr *c;
	const struct asc_db_opts *o;
	struct dbw w;
	struct strpool cann, fwk, mem;
	uint64_t gpid;	     /* pid << 32, globalTid / globalPid base */
	uint32_t na;	     /* msprof "N/A" */
	int32_t *op_conn;    /* per op: its CONNECTION_IDS id, -1 none */
	int32_t *node_first; /* per call: the first task it launched (its Node@launch) */
	int fwk_only;	     /* framework only (no npu activity): no msprof tables */
};

/* The same cycle filter as the text files: recorded steps of this cycle. */
static int in_cycle(const struct dbx *x, int32_t step)
{
	return conv_step_in_cycle(x->c, x->o->cycle, step);
}

/*
 * A table of one row per kept element: row(x, i) for i in [0, n) either binds
 * every column of row i and returns 1, or binds nothing and returns 0 (not a
 * row).  The table is created at its first row (tab_begin), so none is left
 * where no element is kept.  The shape of most tables: a new table whose rows
 * come from one array needs only its row function.
 */
static void tab_rows(struct dbx *x, const char *name, enum asc_db_table_id id, size_t n,
		     int (*row)(struct dbx *x, size_t i))
{
	struct dbw *w = &x->w;
	size_t i;

	tab_begin(w, name, id, 0);
	for (i = 0; i < n && !w->err; i++)
		if (row(x, i))
			row_end(w);
	tab_end(w);
}

/* TASK.connectionId of a kernel: the text's connection_id (index + 1). */
static int64_t kconn(const struct asc_corr *c, const struct asc_corr_kernel *k)
{
	return (int64_t)(k - c->kernels) + 1;
}

/*
 * The task whose connection id a task's launch carries: the text output writes
 * one Node@launch per launch call, for the first task it made (with a
 * launching API, Level1+); every task of that launch links to it.
 */
static int node_init(struct dbx *x)
{
	const struct asc_corr *c = x->c;
	size_t i;

	if (!x->o->level || !c->nr_calls)
		return 0;
	x->node_first = malloc(c->nr_calls * sizeof(*x->node_first));
	if (!x->node_first)
		return -ENOMEM;
	for (i = 0; i < c->nr_calls; i++)
		x->node_first[i] = -1;
	for (i = 0; i < c->nr_kernels; i++) {
		const struct asc_corr_kernel *k = &c->kernels[i];

		if (k->node_call >= 0 && k->api >= 0 && in_cycle(x, k->step) &&
		    x->node_first[k->node_call] < 0)
			x->node_first[k->node_call] = (int32_t)i;
	}
	return 0;
}

/* TASK.connectionId: that of its launch's first task, else its own. */
static int64_t tconn(const struct dbx *x, const struct asc_corr_kernel *k)
{
	if (x->node_first && k->node_call >= 0 && x->node_first[k->node_call] >= 0)
		return (int64_t)x->node_first[k->node_call] + 1;
	return kconn(x->c, k);
}

/* CANN_API.connectionId of an acl/rt call: after every kernel's (primary key). */
static int64_t cconn(const struct asc_corr *c, size_t call)
{
	return (int64_t)c->nr_kernels + 1 + (int64_t)call;
}

static void tasks(struct dbx *x)
{
	const struct asc_corr *c = x->c;
	struct dbw *w = &x->w;
	size_t i;
	int64_t gtid = 0;

	tab_begin(w, "TASK", ASC_DBT_TASK, 0);
	for (i = 0; i < c->nr_kernels && !w->err; i++) {
		const struct asc_corr_kernel *k = &c->kernels[i];

		if (!in_cycle(x, k->step))
			continue;
		b_int(w, k->start_ns);
		b_int(w, k->end_ns);
		b_int(w, k->device);
		b_int(w, tconn(x, k));
		b_int(w, gtid++); /* globalTaskId: dense, as msprof's IdPool */
		b_int(w, c->info.pid);
		b_int(w, pool_id(&x->cann, asc_corr_task_type_name(k->task_type)));
		b_int(w, ASC_DB_INVALID); /* contextId: no FFTS sub-task */
		b_int(w, k->stream);
		b_int(w, k->task_id);
		b_int(w, ASC_DB_INVALID); /* modelId: not a graph */
		row_end(w);
	}
	tab_end(w);
	gtid = 0;
	tab_begin(w, "COMPUTE_TASK_INFO", ASC_DBT_COMPUTE_TASK_INFO, 0);
	for (i = 0; i < c->nr_kernels && !w->err; i++) {
		const struct asc_corr_kernel *k = &c->kernels[i];
		int j;

		if (!in_cycle(x, k->step))
			continue;
		gtid++;
		if (!(k->flags & ASC_CORR_K_COMPUTE))
			continue;
		b_int(w, pool_sid(&x->cann, c, k->name));
		b_int(w, gtid - 1);
		b_int(w, k->block_dim);
		b_int(w, ASC_DB_INVALID); /* mixBlockNum: unknown */
		b_int(w, pool_id(&x->cann, asc_corr_task_type_name(k->task_type)));
		b_int(w, pool_sid(&x->cann, c, k->type));
		/* formats, types, shapes, attrInfo, opState, hf32Eligible, gridDim, blockDim:
		 * not observable, "N/A" as the text's kernel_details */
		for (j = 0; j < 11; j++)
			b_int(w, x->na);
		row_end(w);
	}
	tab_end(w);
}

static void cann_api(struct dbx *x)
{
	const struct asc_corr *c = x->c;
	struct dbw *w = &x->w;
	uint32_t launch = 0;
	size_t i;

	if (x->fwk_only)
		return;
	launch = pool_id(&x->cann, "launch");
	tab_begin(w, "CANN_API", ASC_DBT_CANN_API, 0);
	for (i = 0; i < c->nr_calls && !w->err; i++) {
		const struct asc_corr_call *k = &c->calls[i];

		/* CANN_API rows: the calls the text shows as AscendCL@ / Runtime@ events */
		if (!conv_call_level_shown(x->o->level, k) || !in_cycle(x, k->step))
			continue;
		b_int(w, k->start_ns);
		b_int(w, k->end_ns);
		b_int(w, k->level == ASC_CORR_LEVEL_ACL	 ? ASC_DB_API_ACL :
			 k->level == ASC_CORR_LEVEL_HCCL ? 5500 /* communication */ :
							   ASC_DB_API_RUNTIME);
		b_int(w, (int64_t)(x->gpid | k->tid));
		b_int(w, cconn(c, i));
		b_int(w, pool_sid(&x->cann, c, k->name));
		row_end(w);
	}
	/* node level: one "launch" per traced launch call (the text's Node@launch) */
	for (i = 0; i < c->nr_kernels && !w->err; i++) {
		const struct asc_corr_kernel *k = &c->kernels[i];
		const struct asc_corr_call *a;

		if (!x->node_first || k->node_call < 0 || x->node_first[k->node_call] != (int32_t)i)
			continue;
		a = &c->calls[k->node_call];
		b_int(w, a->start_ns);
		b_int(w, a->end_ns);
		b_int(w, ASC_DB_API_NODE);
		b_int(w, (int64_t)(x->gpid | a->tid));
		b_int(w, kconn(c, k));
		b_int(w, launch);
		row_end(w);
	}
	tab_end(w);
}

/*
 * PYTORCH_API with CONNECTION_IDS: torch_npu's ids are dense, dequeues first,
 * then enqueues, then the ops that launched something; a queue side's list
 * is its correlation id + 5 << 28, an op's the connection ids of its tasks.
 */
static void queue_rows(struct dbx *x, int side, int64_t *next_id)
{
	const struct asc_corr *c = x->c;
	struct dbw *w = &x->w;
	size_t i;

	for (i = 0; i < c->nr_queues && !w->err; i++) {
		const struct asc_corr_queue *q = &c->queues[i];

		if (!(side ? q->deq_start_ns : q->enq_start_ns) || !in_cycle(x, q->step))
			continue;
		b_int(w, (*next_id)++);
		b_int(w, (int64_t)(ASC_DB_CONN_FWK + q->correlation_id));
		row_end(w);
	}
}

static void pytorch_queue_api(struct dbx *x, int side, int64_t *next_id)
{
	const struct asc_corr *c = x->c;
	struct dbw *w = &x->w;
	size_t i;
	char name[192];

	for (i = 0; i < c->nr_queues && !w->err; i++) {
		const struct asc_corr_queue *q = &c->queues[i];
		int64_t s = side ? q->deq_start_ns : q->enq_start_ns;
		int64_t e = side ? q->deq_end_ns : q->enq_end_ns;
		const char *nm = q->name    ? asc_corr_str(c, q->name) :
				 q->op >= 0 ? asc_corr_str(c, c->ops[q->op].name) :
					      "";
		int matched = q->enq_start_ns && q->deq_start_ns;

		if (!s || !in_cycle(x, q->step))
			continue;
		snprintf(name, sizeof(name), "%s%s%s", side ? "Dequeue" : "Enqueue",
			 matched && *nm ? "@" : "", matched ? nm : "");
		b_int(w, s);
		b_int(w, e);
		b_int(w, (int64_t)(x->gpid | (side ? q->deq_tid : q->enq_tid)));
		b_int(w, (*next_id)++);
		b_int(w, pool_id(&x->fwk, name));
		b_null(w);
		b_null(w);
		b_null(w);
		b_null(w);
		b_null(w);
		b_int(w, ASC_DB_API_TASK_QUEUE);
		row_end(w);
	}
}

/* PYTORCH_CALLCHAINS rows of one stack string; returns its callchain id. */
static int64_t callchain(struct dbx *x, struct dbw *cw, const char *stack, int64_t id)
{
	const char *p = stack;
	int64_t depth = 0;
	char frame[1024];

	for (;;) {
		const char *e = strstr(p, ";\r\n");
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n >= sizeof(frame))
			n = sizeof(frame) - 1;
		memcpy(frame, p, n);
		frame[n] = '\0';
		b_int(cw, id);
		b_int(cw, pool_id(&x->fwk, frame));
		b_int(cw, depth++);
		row_end(cw);
		if (!e)
			break;
		p = e + 3;
	}
	return id;
}

static void pytorch_api(struct dbx *x)
{
	const struct asc_corr *c = x->c;
	struct dbw *w = &x->w;
	int64_t next = 0, chains = 0;
	size_t i;

	x->op_conn = malloc((c->nr_ops + 1) * sizeof(*x->op_conn));
	if (!x->op_conn) {
		w->err = -ENOMEM;
		return;
	}
	for (i = 0; i < c->nr_ops; i++)
		x->op_conn[i] = -1;
	for (i = 0; i < c->nr_kernels; i++)
		if (c->kernels[i].op >= 0 && in_cycle(x, c->kernels[i].step))
			x->op_conn[c->kernels[i].op] = 0;
	/* CONNECTION_IDS */
	tab_begin(w, "CONNECTION_IDS", ASC_DBT_CONNECTION_IDS, 0);
	queue_rows(x, 1, &next);
	queue_rows(x, 0, &next);
	for (i = 0; i < c->nr_ops; i++)
		if (!x->op_conn[i] && in_cycle(x, c->ops[i].step))
			x->op_conn[i] = (int32_t)next++;
		else
			x->op_conn[i] = -1;
	for (i = 0; i < c->nr_kernels && !w->err; i++) {
		const struct asc_corr_kernel *k = &c->kernels[i];

		/* a task sharing its launch's connection id is found through the first's */
		if (k->op < 0 || x->op_conn[k->op] < 0 || !in_cycle(x, k->step) ||
		    tconn(x, k) != kconn(c, k))
			continue;
		b_int(w, x->op_conn[k->op]);
		b_int(w, kconn(c, k));
		row_end(w);
	}
	tab_end(w);
	/* PYTORCH_API: enqueues, dequeues (ids as above), then the ops */
	tab_begin(w, "PYTORCH_API", ASC_DBT_PYTORCH_API, 0);
	{
		int64_t nd = 0, ne;

		/* count the dequeue ids so enqueue rows get theirs */
		for (i = 0; i < c->nr_queues; i++)
			if (c->queues[i].deq_start_ns && in_cycle(x, c->queues[i].step))
				nd++;
		ne = nd;
		pytorch_queue_api(x, 0, &ne);
		nd = 0;
		pytorch_queue_api(x, 1, &nd);
	}
	for (i = 0; i < c->nr_ops && !w->err; i++) {
		const struct asc_corr_op *op = &c->ops[i];

		if (!in_cycle(x, op->step))
			continue;
		b_int(w, op->start_ns);
		b_int(w, op->end_ns);
		b_int(w, (int64_t)(x->gpid | op->tid));
		if (x->op_conn[i] >= 0)
			b_int(w, x->op_conn[i]);
		else
			b_null(w);
		b_int(w, pool_sid(&x->fwk, c, op->name));
		b_int(w, op->seq);
		b_int(w, op->fwd_tid);
		if (op->input_types)
			b_int(w, pool_sid(&x->fwk, c, op->input_types));
		else
			b_null(w);
		if (op->input_dims)
			b_int(w, pool_sid(&x->fwk, c, op->input_dims));
		else
			b_null(w);
		if (op->stack)
			b_int(w, chains++);
		else
			b_null(w);
		b_int(w, ASC_DB_API_TORCH_OP);
		row_end(w);
	}
	tab_end(w);
	if (!chains || w->err)
		return;
	chains = 0;
	tab_begin(w, "PYTORCH_CALLCHAINS", ASC_DBT_PYTORCH_CALLCHAINS, 0);
	for (i = 0; i < c->nr_ops && !w->err; i++)
		if (in_cycle(x, c->ops[i].step) && c->ops[i].stack)
			callchain(x, w, asc_corr_str(c, c->ops[i].stack), chains++);
	tab_end(w);
}

/* MEMORY_RECORD: PTA / GE / WORKSPACE by time, PTA and GE rows followed by PTA+GE. */
static void memory_record(struct dbx *x)
{
	const struct asc_corr *c = x->c;
	struct dbw *w = &x->w;
	const struct asc_corr_mem *last_pta = NULL, *last_ge = NULL;
	uint32_t pta = pool_id(&x->mem, "PTA"), ge = pool_id(&x->mem, "GE");
	uint32_t ws = pool_id(&x->mem, "WORKSPACE"), both = pool_id(&x->mem, "PTA+GE");
	size_t i, rows = 0;

	for (i = 0; i < c->nr_mems; i++)
		if (c->mems[i].component != ASC_MEM_APP && in_cycle(x, c->mems[i].step))
			rows++;
	if (!rows)
		return; /* torch_npu creates it with its first row */
	tab_begin(w, "MEMORY_RECORD", ASC_DBT_MEMORY_RECORD, 0);
	for (i = 0; i < c->nr_mems && !w->err; i++) {
		const struct asc_corr_mem *m = &c->mems[i], *other;
		int is_ge = m->component == ASC_MEM_GE;

		if (m->component == ASC_MEM_APP || !in_cycle(x, m->step))
			continue;
		b_int(w, is_ge ? ge : m->component == ASC_MEM_PTA ? pta : ws);
		b_int(w, m->ts_ns);
		b_int(w, (int64_t)m->total_allocated);
		b_int(w, (int64_t)m->total_reserved);
		b_int(w, is_ge ? 0 : (int64_t)m->total_active);
		if (is_ge)
			b_null(w);
		else
			b_int(w, (int64_t)m->stream);
		b_int(w, m->device);
		row_end(w);
		if (m->component == ASC_MEM_WORKSPACE)
			continue;
		other = is_ge ? last_pta : last_ge;
		if (is_ge)
			last_ge = m;
		else
			last_pta = m;
		/*
		 * PTA+GE: this record plus the latest of the other component (GE rows
		 * have no active total and no stream); the stream is this record's,
		 * else the other's
		 */
		b_int(w, both);
		b_int(w, m->ts_ns);
		b_int(w, (int64_t)(m->total_allocated + (other ? other->total_allocated : 0)));
		b_int(w, (int64_t)(m->total_reserved + (other ? other->total_reserved : 0)));
		b_int(w, (int64_t)((is_ge ? 0 : m->total_active) + (other && !is_ge ? 0 :
								    other ? other->total_active :
									    0)));
		if (!is_ge && (!other || m->stream))
			b_int(w, (int64_t)m->stream);
		else if (is_ge && other)
			b_int(w, (int64_t)other->stream);
		else
			b_null(w);
		b_int(w, m->device);
		row_end(w);
	}
	tab_end(w);
}

/*
 * OP_MEMORY: the allocations of operator_memory.csv (conv_op_allocations()),
 * in ns and bytes.
 */
static void op_memory(struct dbx *x)
{
	const struct asc_corr *c = x->c;
	struct dbw *w = &x->w;
	struct conv_alloc *al = NULL;
	size_t nal = 0, i;

	if (conv_op_allocations(c, x->o->cycle, &al, &nal)) {
		w->err = -ENOMEM;
		return;
	}
	if (!nal)
		return;
	tab_begin(w, "OP_MEMORY", ASC_DBT_OP_MEMORY, 0);
	for (i = 0; i < nal && !w->err; i++) {
		const struct asc_corr_mem *m = &c->mems[al[i].mem];
		const struct asc_corr_mem *f = al[i].free_i >= 0 ? &c->mems[al[i].free_i] : NULL;
		const struct asc_corr_mem *b = al[i].bfree_i >= 0 ? &c->mems[al[i].bfree_i] : NULL;

		b_int(w, pool_sid(&x->mem, c, c->ops[m->op].name));
		b_int(w, m->size > 0 ? m->size : 0);
		b_int(w, m->ts_ns);
		f ? b_int(w, f->ts_ns) : b_null(w);
		b ? b_int(w, b->ts_ns) : b_null(w);
		f ? b_int(w, asc_ns_sub(f->ts_ns, m->ts_ns)) : b_null(w);
		b ? b_int(w, asc_ns_sub(b->ts_ns, m->ts_ns)) : b_null(w);
		b_int(w, (int64_t)m->total_allocated);
		b_int(w, (int64_t)m->total_reserved);
		b_int(w, (int64_t)m->total_active);
		f ? b_int(w, (int64_t)f->total_allocated) : b_null(w);
		f ? b_int(w, (int64_t)f->total_reserved) : b_null(w);
		f ? b_int(w, (int64_t)f->total_active) : b_null(w);
		b_int(w, (int64_t)m->stream);
		b_int(w, m->device);
		row_end(w);
	}
	tab_end(w);
	free(al);
}

/* NPU_MEM: the APP records (the text's NPU MEM "APP/HBM" counter), bytes. */
static int npu_mem_row(struct dbx *x, size_t i)
{
	const struct asc_corr_mem *m = &x->c->mems[i];
	struct dbw *w = &x->w;

	if (m->component != ASC_MEM_APP || !in_cycle(x, m->step))
		return 0;
	b_int(w, pool_id(&x->cann, "app")); /* a string id from the first row on */
	b_int(w, 0);			    /* ddr: the card's memory is HBM */
	b_int(w, (int64_t)m->total_reserved);
	b_int(w, m->ts_ns);
	b_int(w, m->device);
	return 1;
}

/* STEP_TIME: the recorded ProfilerStep#N ranges. */
static int step_time_row(struct dbx *x, size_t i)
{
	const struct asc_corr_op *op = &x->c->ops[i];
	struct dbw *w = &x->w;

	if (!(op->flags & ASC_CORR_O_STEP) || !in_cycle(x, op->step))
		return 0;
	b_int(w, op->step);
	b_int(w, op->start_ns);
	b_int(w, op->end_ns);
	return 1;
}

/* The small tables: META_DATA, SESSION_TIME_INFO, RANK_DEVICE_MAP, the enums. */
static void small_tables(struct dbx *x)
{
	const struct asc_corr *c = x->c;
	struct dbw *w = &x->w;
	uint32_t devs = 0, d;
	char key[64], env[2048];
	size_t i, n;
	int k, any = 0, trunc = 0;

	/* torch_npu creates META_DATA before its rows; msprof's have the schema version */
	tab_begin(w, "META_DATA", ASC_DBT_META_DATA, 1);
	for (k = 0; !x->fwk_only && k < 4; k++) {
		static const char *const ver[4][2] = {
			{ "SCHEMA_VERSION", "1.2.0" },
			{ "SCHEMA_VERSION_MAJOR", "1" },
			{ "SCHEMA_VERSION_MINOR", "2" },
			{ "SCHEMA_VERSION_MICRO", "0" },
		};

		b_text(w, ver[k][0]);
		b_text(w, ver[k][1]);
		row_end(w);
	}
	/* ENV_VARIABLES (json.dumps of the dict) only when traced: unknown is not "" */
	n = (size_t)snprintf(env, sizeof(env), "{");
	for (k = 0; conv_env_names[k] && n + 16 < sizeof(env); k++) {
		const char *val;

		snprintf(key, sizeof(key), "env.%s", conv_env_names[k]);
		val = asc_corr_config(c, key);
		any |= val != NULL;
		n += (size_t)snprintf(env + n, sizeof(env) - n, "%s\"%s\": \"", k ? ", " : "",
				      conv_env_names[k]);
		for (; val && *val && n + 16 < sizeof(env); val++) {
			unsigned char ch = (unsigned char)*val;

			if (ch == '"' || ch == '\\')
				n += (size_t)snprintf(env + n, sizeof(env) - n, "\\%c", ch);
			else if (ch < 0x20)
				n += (size_t)snprintf(env + n, sizeof(env) - n, "\\u%04x", ch);
			else
				env[n++] = (char)ch;
		}
		trunc |= val && *val;
		env[n++] = '"';
	}
	if (any && !trunc && n + 2 < sizeof(env) && !conv_env_names[k]) {
		strcpy(env + n, "}");
		b_text(w, "ENV_VARIABLES");
		b_text(w, env);
		row_end(w);
	}
	tab_end(w);
	if (!x->fwk_only) {
		tab_begin(w, "SESSION_TIME_INFO", ASC_DBT_SESSION_TIME_INFO, 0);
		b_int(w, c->info.start_wall_ns);
		b_int(w, c->info.end_wall_ns ? c->info.end_wall_ns : c->info.last_ts_ns);
		row_end(w);
		tab_end(w);
	}
	for (i = 0; i < c->nr_kernels; i++)
		if (in_cycle(x, c->kernels[i].step))
			devs |= 1u << (c->kernels[i].device & 31);
	if (!devs && c->info.device >= 0 && !x->fwk_only)
		devs = 1u << (c->info.device & 31);
	tab_begin(w, "RANK_DEVICE_MAP", ASC_DBT_RANK_DEVICE_MAP, 0);
	for (d = 0; d < 32; d++) {
		if (!(devs & (1u << d)))
			continue;
		b_int(w, c->info.rank);
		b_int(w, d);
		row_end(w);
	}
	if (!devs) {
		b_int(w, c->info.rank);
		b_int(w, -1);
		row_end(w);
	}
	tab_end(w);
	for (k = 0; k < asc_db_nr_enums && !w->err; k++) {
		const struct asc_db_enum_table *e = &asc_db_enums[k];
		int r;

		/* framework only: torch_npu's own ENUM_API_TYPE, its four types */
		if (x->fwk_only && strcmp(e->table, "ENUM_API_TYPE"))
			continue;
		tab_begin(w, e->table, ASC_DBT_ENUM, 0);
		for (r = 0; r < e->nr_rows; r++) {
			if (x->fwk_only && e->rows[r].id < ASC_DB_API_TORCH_OP)
				continue;
			b_int(w, e->rows[r].id);
			b_text(w, e->rows[r].name);
			row_end(w);
		}
		tab_end(w);
	}
}

static void string_rows(struct dbw *w, const struct strpool *p)
{
	size_t i;

	if (p->has_empty) {
		b_int(w, p->empty_id);
		b_text(w, "");
		row_end(w);
	}
	for (i = 0; i < p->n && !w->err; i++) {
		const struct strent *e = &p->ents[i];

		b_int(w, e->id);
		sqlite3_bind_text(w->st, ++w->col, p->arena + e->off, (int)e->len, SQLITE_STATIC);
		row_end(w);
	}
}

/* path + ".tmp" -> path once complete; removes the temporary on failure. */
static int finish(const char *tmp, const char *path, int err)
{
	if (!err && rename(tmp, path)) {
		err = -errno;
		asc_err("convert: cannot rename %s: %s\n", tmp, strerror(-err));
	}
	if (err)
		unlink(tmp);
	return err;
}

static int torch_db(struct dbx *x, const char *path)
{
	struct dbw *w = &x->w;
	char tmp[PATH_MAX];
	int err;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	if (!access(path, F_OK) || (errno != ENOENT)) {
		asc_err("convert: %s exists\n", path);
		return -EEXIST;
	}
	err = db_open(w, tmp);
	if (err)
		return err;
	w->nopk = x->fwk_only;
	if (!x->fwk_only)
		x->na = pool_id(&x->cann, "N/A");
	if (node_init(x)) {
		db_close(w);
		return finish(tmp, path, -ENOMEM);
	}
	small_tables(x);
	tasks(x);
	cann_api(x);
	pytorch_api(x);
	memory_record(x);
	op_memory(x);
	tab_rows(x, "NPU_MEM", ASC_DBT_NPU_MEM, x->c->nr_mems, npu_mem_row);
	tab_rows(x, "STEP_TIME", ASC_DBT_STEP_TIME, x->c->nr_ops, step_time_row);
	/* COMMUNICATION_OP / COMMUNICATION_TASK_INFO: msprof creates a table with its
	 * first row; a job without HCCL has neither (db_comm.c) */
	db_comm_tables(x);
	tab_begin(w, "STRING_IDS", ASC_DBT_STRING_IDS, 1);
	string_rows(w, &x->cann);
	string_rows(w, &x->fwk);
	string_rows(w, &x->mem);
	tab_end(w);
	if (x->cann.next == UINT32_MAX || x->fwk.next == UINT32_MAX || x->mem.next == UINT32_MAX)
		w->err = -ENOMEM;
	err = db_close(w);
	return finish(tmp, path, err);
}

static int analysis_db(struct dbx *x, const char *path)
{
	struct dbw w;
	char tmp[PATH_MAX];
	int err;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	if (!access(path, F_OK) || (errno != ENOENT)) {
		asc_err("convert: %s exists\n", path);
		return -EEXIST;
	}
	err = db_open(&w, tmp);
	if (err)
		return err;
	/* CommAnalyzerTime/Bandwidth/Matrix come from CANN's communication analysis:
	 * without communication torch_npu writes none of them (db_comm.c) */
	db_step_trace(x, &w);
	db_comm_analysis(x, &w);
	err = db_close(&w);
	return finish(tmp, path, err);
}

int asc_db_export(const struct asc_corr *c, const struct asc_db_opts *o)
{
	struct dbx x = { .c = c, .o = o };
	const char *acts;
	char path[PATH_MAX];
	int err;

	x.gpid = (uint64_t)c->info.pid << 32;
	acts = asc_corr_config(c, "activities");
	x.fwk_only = acts && !strstr(acts, "npu");
	if (pool_init(&x.cann, 0) || pool_init(&x.fwk, ASC_DB_STR_FWK) ||
	    pool_init(&x.mem, ASC_DB_STR_MEM)) {
		err = -ENOMEM;
		goto out;
	}
	if (c->info.rank >= 0)
		snprintf(path, sizeof(path), "%s/ascend_pytorch_profiler_%d.db", o->out,
			 c->info.rank);
	else
		snprintf(path, sizeof(path), "%s/ascend_pytorch_profiler.db", o->out);
	err = torch_db(&x, path);
	/* framework only: torch_npu runs no analysis.db parser and creates no file */
	if (!err && !x.fwk_only) {
		snprintf(path, sizeof(path), "%s/analysis.db", o->out);
		err = analysis_db(&x, path);
	}
out:
	if (err == -ENOMEM)
		asc_err("convert: out of memory writing the database\n");
	free(x.op_conn);
	free(x.node_first);
	pool_free(&x.cann);
	pool_free(&x.fwk);
	pool_free(&x.mem);
	return err;
}

/* ---- lent to db_comm.c (db_int.h) ---- */

const struct asc_corr *dbx_corr(const struct dbx *x)
{
	return x->c;
}

const struct asc_comm *dbx_comm(const struct dbx *x)
{
	return x->o->comm;
}

int dbx_cycle(const struct dbx *x)
{
	return x->o->cycle;
}

int dbx_in_cycle(const struct dbx *x, int32_t step)
{
	return in_cycle(x, step);
}

struct dbw *dbx_writer(struct dbx *x)
{
	return &x->w;
}

uint32_t dbx_str(struct dbx *x, const char *s)
{
	return pool_id(&x->cann, s);
}

void dbw_table(struct dbw *w, const char *name, enum asc_db_table_id id)
{
	tab_begin(w, name, id, 0);
}

void dbw_int(struct dbw *w, int64_t v)
{
	b_int(w, v);
}

void dbw_real(struct dbw *w, double v)
{
	b_real(w, v);
}

void dbw_text(struct dbw *w, const char *s)
{
	b_text(w, s);
}

void dbw_null(struct dbw *w)
{
	b_null(w);
}

void dbw_row(struct dbw *w)
{
	row_end(w);
}

int dbw_table_end(struct dbw *w)
{
	return tab_end(w);
}
