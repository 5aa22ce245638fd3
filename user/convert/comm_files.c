// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * comm_files.c - communication.json and communication_matrix.json, as
 * torch_npu writes them (prof_view/_communication_parser.py) from msprof's
 * per-op analysis (analysis/comm.h):
 *
 *   {"step<N>" | "step": {"p2p": {OPS}, "collective": {OPS}}}
 *
 * communication.json OPS: "<op>@<group>" -> {"Communication Time Info",
 * "Communication Bandwidth Info"} and, when any, "Total Op Info" with the
 * sums.  communication_matrix.json OPS: per (op type, group, link) the ops'
 * links sorted by bandwidth, as "<type>-top1@<group>", -middle, -bottom1,
 * -total, -bottom2 (>= 2 ops), -bottom3 (>= 3 ops), each a {"src-dst":
 * entry} object.  An op goes to the first recorded step whose
 * [start, end] holds its start (every op to the only step when there is
 * one).  Both files: json.dumps with the default separators, one line
 * (tests/data/torch_npu_format/communication.json has the facts).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/comm.h"
#include "capture/capture.h"
#include "convert/conv.h"
#include "lib/csv_writer.h"
#include "lib/json_writer.h"
#include "lib/log.h"
#include "schedule.h"

/* ---- json.dumps pieces (", " and ": " separators) ---- */

static void key(struct asc_out *o, int *first, const char *k)
{
	if (!*first)
		asc_out_puts(o, ", ");
	*first = 0;
	asc_json_cstr(o, k);
	asc_out_puts(o, ": ");
}

static void pyfloat(struct asc_out *o, double v)
{
	char b[40];

	asc_out_write(o, b, (size_t)asc_fmt_pyfloat(b, v));
}

static void pyval(struct asc_out *o, const struct asc_pyval *p)
{
	if (p->isf)
		pyfloat(o, p->v);
	else
		asc_out_putc(o, '0');
}

static void kv(struct asc_out *o, int *first, const char *k, const struct asc_pyval *p)
{
	key(o, first, k);
	pyval(o, p);
}

/* ---- which ops go where ---- */

/*
 * The step slot of a comm op starting at start_ns in cycle `cycle`: index into
 * c->steps, -1 for "step" (a capture without steps), -2 dropped (no recorded
 * step of the cycle holds it).  Shared with the databases (db_comm.c).
 */
int conv_comm_step(const struct asc_corr *c, int cycle, int64_t start_ns)
{
	size_t i, n = 0, only = 0;

	if (!c->nr_steps)
		return -1;
	for (i = 0; i < c->nr_steps; i++)
		if (c->steps[i].cycle == cycle && asc_sched_recording(c->steps[i].state))
			n++, only = i;
	if (n == 1)
		return (int)only;
	for (i = 0; i < c->nr_steps; i++)
		if (c->steps[i].cycle == cycle && asc_sched_recording(c->steps[i].state) &&
		    c->steps[i].start_ns <= start_ns && start_ns <= c->steps[i].end_ns)
			return (int)i;
	return -2;
}

static void op_key(const struct asc_comm *m, const struct asc_comm_op *o, char *buf, size_t len)
{
	snprintf(buf, len, "%s@%s", o->name, o->group >= 0 ? m->groups[o->group].name : "");
}

/* connection_id of comm op oi: its API call's (index + 1), else one after every call's. */
size_t conv_comm_conn(const struct conv *v, size_t oi)
{
	int32_t call = v->comm->ops[oi].call;

	return call >= 0 ? (size_t)call + 1 : v->c->nr_calls + oi + 1;
}

/* ---- communication.json ---- */

static void bw_obj(struct asc_out *o, const struct asc_comm_bw *b, int total)
{
	int first = 1, f2 = 1;
	size_t i;

	asc_out_putc(o, '{');
	if (total) {
		kv(o, &first, "Transit Time(ms)", &b->time_ms);
		kv(o, &first, "Transit Size(MB)", &b->size_mb);
	} else {
		kv(o, &first, "Transit Size(MB)", &b->size_mb);
		kv(o, &first, "Transit Time(ms)", &b->time_ms);
		kv(o, &first, "Bandwidth(GB/s)", &b->bw);
		kv(o, &first, "Large Packet Ratio", &b->large_ratio);
	}
	key(o, &first, "Size Distribution");
	asc_out_putc(o, '{');
	for (i = 0; i < b->nbins; i++) {
		char s[40];

		/* the key is str() of the size in MB */
		s[asc_fmt_pyfloat(s, b->bins[i].size_mb)] = '\0';
		key(o, &f2, s);
		asc_out_printf(o, "[%llu, ", (unsigned long long)b->bins[i].count);
		pyfloat(o, b->bins[i].time_ms);
		asc_out_putc(o, ']');
	}
	asc_out_puts(o, "}}");
}

static void time_obj(struct asc_out *o, const struct asc_comm_time *t, int total)
{
	int first = 1;

	asc_out_putc(o, '{');
	if (!total) {
		key(o, &first, "Start Timestamp(us)");
		pyfloat(o, t->start_us);
	}
	kv(o, &first, "Elapse Time(ms)", &t->elapse);
	kv(o, &first, "Transit Time(ms)", &t->transit);
	kv(o, &first, "Wait Time(ms)", &t->wait);
	kv(o, &first, "Synchronization Time(ms)", &t->sync);
	kv(o, &first, "Idle Time(ms)", &t->idle);
	kv(o, &first, "Wait Time Ratio", &t->wait_ratio);
	kv(o, &first, "Synchronization Time Ratio", &t->sync_ratio);
	asc_out_putc(o, '}');
}

/* Sums for "Total Op Info" (torch_npu compute_total_info): time keys start as 0.0. */
struct comm_total {
	struct asc_comm_time t;
	struct asc_comm_bw bw[ASC_BW__NR];
	int n;
};

static void pv_sum(struct asc_pyval *d, const struct asc_pyval *s, int isf)
{
	d->v += s->v;
	d->isf = d->isf || s->isf || isf;
}

static int total_add(struct comm_total *tot, const struct asc_comm_time *t,
		     const struct asc_comm_bw *bw)
{
	int k;
	size_t i, j;

	pv_sum(&tot->t.elapse, &t->elapse, 1);
	pv_sum(&tot->t.transit, &t->transit, 1);
	pv_sum(&tot->t.wait, &t->wait, 1);
	pv_sum(&tot->t.sync, &t->sync, 1);
	pv_sum(&tot->t.idle, &t->idle, 1);
	for (k = 0; k < ASC_BW__NR; k++) {
		struct asc_comm_bw *d = &tot->bw[k];

		pv_sum(&d->time_ms, &bw[k].time_ms, 0);
		pv_sum(&d->size_mb, &bw[k].size_mb, 0);
		for (i = 0; i < bw[k].nbins; i++) {
			double sz = bw[k].bins[i].size_mb;

			for (j = 0; j < d->nbins && d->bins[j].size_mb != sz; j++)
				;
			if (j == d->nbins) {
				struct asc_comm_sizebin *nb;

				nb = realloc(d->bins, (j + 1) * sizeof(*nb));

				if (!nb)
					return -ENOMEM;
				d->bins = nb;
				nb[j] = (struct asc_comm_sizebin){ bw[k].bins[i].size_mb, 0, 0 };
				d->nbins++;
			}
			d->bins[j].count += bw[k].bins[i].count;
			d->bins[j].time_ms += bw[k].bins[i].time_ms;
		}
	}
	tot->n++;
	return 0;
}

static void total_ratios(struct asc_comm_time *t)
{
	double d = t->wait.v + t->transit.v;

	/* compute_ratio: 0 (an int) below 1e-15, else round(x, 4) */
	int tiny = d < 1e-15 && d > -1e-15;

	t->wait_ratio = (struct asc_pyval){ tiny ? 0 : asc_py_round4(t->wait.v / d), !tiny };
	d = t->transit.v + t->sync.v;
	tiny = d < 1e-15 && d > -1e-15;
	t->sync_ratio = (struct asc_pyval){ tiny ? 0 : asc_py_round4(t->sync.v / d), !tiny };
}

/* The ops of one step slot and kind (p2p or not) into one object. */
static int comm_ops_obj(const struct conv *v, struct asc_out *o, const int *slot, int want, int p2p)
{
	const struct asc_comm *m = v->comm;
	struct comm_total tot;
	int first = 1, err = 0, k;
	size_t i;

	memset(&tot, 0, sizeof(tot));
	asc_out_putc(o, '{');
	for (i = 0; i < m->nr_ops && !err; i++) {
		struct asc_comm_time t;
		struct asc_comm_bw bw[ASC_BW__NR];
		char kbuf[256];
		int f2 = 1, f3 = 1;

		if (slot[i] != want || asc_comm_is_p2p(m->ops[i].name) != p2p)
			continue;
		if (asc_comm_op_time(m, i, &t) || asc_comm_op_bw(m, i, bw)) {
			err = -ENOMEM;
			break;
		}
		op_key(m, &m->ops[i], kbuf, sizeof(kbuf));
		key(o, &first, kbuf);
		asc_out_putc(o, '{');
		key(o, &f2, "Communication Time Info");
		time_obj(o, &t, 0);
		key(o, &f2, "Communication Bandwidth Info");
		asc_out_putc(o, '{');
		for (k = 0; k < ASC_BW__NR; k++) {
			key(o, &f3, asc_comm_bwtype_name(k));
			bw_obj(o, &bw[k], 0);
		}
		asc_out_puts(o, "}}");
		err = total_add(&tot, &t, bw);
		asc_comm_bw_free(bw);
	}
	if (tot.n && !err) {
		int f2 = 1, f3 = 1;

		total_ratios(&tot.t);
		key(o, &first, "Total Op Info");
		asc_out_putc(o, '{');
		key(o, &f2, "Communication Time Info");
		time_obj(o, &tot.t, 1);
		key(o, &f2, "Communication Bandwidth Info");
		asc_out_putc(o, '{');
		for (k = 0; k < ASC_BW__NR; k++) {
			key(o, &f3, asc_comm_bwtype_name(k));
			bw_obj(o, &tot.bw[k], 1);
		}
		asc_out_puts(o, "}}");
	}
	asc_comm_bw_free(tot.bw);
	asc_out_putc(o, '}');
	return err;
}

/* ---- communication_matrix.json ---- */

/* One (op, link) sample of a (type, group, link) series. */
struct mx_item {
	size_t op;
	struct asc_comm_link_info l;
	double bw;
};

struct mx_series {
	char type[32];
	int32_t group;
	uint32_t src, dst;
	struct mx_item *it;
	size_t n;
};

static double divide4(double a, double b)
{
	return b == 0 ? 0 : asc_py_round4(a / b);
}

static int series_add(struct mx_series **s, size_t *ns, const char *type, int32_t group,
		      const struct asc_comm_link_info *l, size_t op)
{
	size_t i;
	struct mx_item *ni;

	for (i = 0; i < *ns; i++)
		if ((*s)[i].group == group && (*s)[i].src == l->src && (*s)[i].dst == l->dst &&
		    !strcmp((*s)[i].type, type))
			break;
	if (i == *ns) {
		struct mx_series *nsr = realloc(*s, (*ns + 1) * sizeof(*nsr));

		if (!nsr)
			return -ENOMEM;
		*s = nsr;
		memset(&nsr[i], 0, sizeof(nsr[i]));
		snprintf(nsr[i].type, sizeof(nsr[i].type), "%s", type);
		nsr[i].group = group;
		nsr[i].src = l->src;
		nsr[i].dst = l->dst;
		(*ns)++;
	}
	ni = realloc((*s)[i].it, ((*s)[i].n + 1) * sizeof(*ni));
	if (!ni)
		return -ENOMEM;
	(*s)[i].it = ni;
	ni[(*s)[i].n].op = op;
	ni[(*s)[i].n].l = *l;
	ni[(*s)[i].n].bw = divide4(l->size_mb, l->time_ms);
	(*s)[i].n++;
	return 0;
}

/* Python's list.sort(key=bandwidth, reverse=True): stable, equal keys keep their order. */
static void sort_desc(struct mx_item *it, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		struct mx_item x = it[i];

		for (j = i; j > 0 && it[j - 1].bw < x.bw; j--)
			it[j] = it[j - 1];
		it[j] = x;
	}
}

enum { MX_TOP1, MX_MIDDLE, MX_BOTTOM1, MX_TOTAL, MX_BOTTOM2, MX_BOTTOM3, MX__NR };
static const char *const mx_suffix[MX__NR] = {
	"top1", "middle", "bottom1", "total", "bottom2", "bottom3",
};

/* The entry `which` of series s (its sums for MX_TOTAL) into e. */
static void mx_fill(const struct asc_comm *m, const struct mx_series *s, int which,
		    struct conv_mx_entry *e)
{
	const struct mx_item *x = NULL;
	size_t i;

	e->src = s->src;
	e->dst = s->dst;
	e->transport = asc_comm_matrix_transport(s->it[0].l.transport);
	switch (which) {
	case MX_TOP1:
		x = &s->it[0];
		break;
	case MX_MIDDLE:
		x = &s->it[s->n / 2];
		break;
	case MX_BOTTOM1:
		x = &s->it[s->n - 1];
		break;
	case MX_BOTTOM2:
		x = &s->it[s->n - 2];
		break;
	case MX_BOTTOM3:
		x = &s->it[s->n - 3];
		break;
	default:
		break;
	}
	if (x) {
		e->size_mb = x->l.size_mb;
		e->time_ms = x->l.time_ms;
		e->bw = x->bw;
		e->op = m->ops[x->op].name;
		return;
	}
	e->size_mb = e->time_ms = 0;
	for (i = 0; i < s->n; i++) {
		e->size_mb += s->it[i].l.size_mb;
		e->time_ms += s->it[i].l.time_ms;
	}
	e->bw = e->time_ms < 1e-15 && e->time_ms > -1e-15 ? 0 :
							    asc_py_round4(e->size_mb / e->time_ms);
	e->op = NULL;
}

/*
 * The entries in Python's insertion order: for each series in order, its
 * keys top1, middle, bottom1, total, then bottom2 / bottom3 when it has the
 * samples; a key already present keeps its place.  Each key's entries are
 * its series' in order.
 */
static int matrix_emit(const struct asc_comm *m, struct mx_series *s, size_t ns, conv_mx_fn fn,
		       void *ctx)
{
	struct okey {
		size_t series;
		int which;
	} * keys;
	size_t nk = 0, i, j;
	int err = 0;

	keys = malloc((ns * MX__NR + 1) * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (i = 0; i < ns; i++) {
		sort_desc(s[i].it, s[i].n);
		for (int w = 0; w < MX__NR; w++) {
			if ((w == MX_BOTTOM2 && s[i].n < 2) || (w == MX_BOTTOM3 && s[i].n < 3))
				continue;
			for (j = 0; j < nk; j++)
				if (keys[j].which == w && s[keys[j].series].group == s[i].group &&
				    !strcmp(s[keys[j].series].type, s[i].type))
					break;
			if (j == nk)
				keys[nk++] = (struct okey){ i, w };
		}
	}
	for (j = 0; j < nk && !err; j++) {
		const struct mx_series *k0 = &s[keys[j].series];
		int w = keys[j].which;
		struct conv_mx_entry e = {
			.group = k0->group >= 0 ? m->groups[k0->group].name : "",
			.new_key = 1,
		};

		snprintf(e.name, sizeof(e.name), "%s-%s", k0->type, mx_suffix[w]);
		for (i = 0; i < ns && !err; i++) {
			if (s[i].group != k0->group || strcmp(s[i].type, k0->type))
				continue;
			if ((w == MX_BOTTOM2 && s[i].n < 2) || (w == MX_BOTTOM3 && s[i].n < 3))
				continue;
			mx_fill(m, &s[i], w, &e);
			err = fn(ctx, &e);
			e.new_key = 0;
		}
	}
	free(keys);
	return err;
}

int conv_comm_matrix(const struct asc_comm *m, const int *slot, int want, int p2p, conv_mx_fn fn,
		     void *ctx)
{
	struct mx_series *s = NULL;
	size_t ns = 0, i, j, nl;
	int err = 0;

	for (i = 0; i < m->nr_ops && !err; i++) {
		struct asc_comm_link_info *l;
		char type[32];

		if (slot[i] != want || asc_comm_is_p2p(m->ops[i].name) != p2p)
			continue;
		if (asc_comm_op_links(m, i, &l, &nl)) {
			err = -ENOMEM;
			break;
		}
		asc_comm_op_type(m->ops[i].name, type, sizeof(type));
		for (j = 0; j < nl && !err; j++)
			err = series_add(&s, &ns, type, m->ops[i].group, &l[j], i);
		free(l);
	}
	if (!err)
		err = matrix_emit(m, s, ns, fn, ctx);
	for (i = 0; i < ns; i++)
		free(s[i].it);
	free(s);
	return err;
}

/* communication_matrix.json: one entry, opening its "<name>@<group>" object first. */
struct mx_json {
	struct asc_out *o;
	int first, any;
};

static int mx_json_entry(void *ctx, const struct conv_mx_entry *e)
{
	struct mx_json *j = ctx;
	struct asc_out *o = j->o;
	char k[256];
	int first = 1;

	if (e->new_key) {
		if (j->any)
			asc_out_putc(o, '}');
		snprintf(k, sizeof(k), "%s@%s", e->name, e->group);
		key(o, &j->first, k);
		asc_out_putc(o, '{');
	} else {
		asc_out_puts(o, ", ");
	}
	j->any = 1;
	snprintf(k, sizeof(k), "%u-%u", e->src, e->dst);
	asc_json_cstr(o, k);
	asc_out_puts(o, ": {");
	key(o, &first, "Transport Type");
	asc_json_cstr(o, e->transport);
	key(o, &first, "Transit Size(MB)");
	pyfloat(o, e->size_mb);
	key(o, &first, "Transit Time(ms)");
	pyfloat(o, e->time_ms);
	key(o, &first, "Bandwidth(GB/s)");
	pyfloat(o, e->bw);
	if (e->op) {
		key(o, &first, "Op Name");
		asc_json_cstr(o, e->op);
	}
	asc_out_putc(o, '}');
	return 0;
}

static int matrix_ops_obj(const struct conv *v, struct asc_out *o, const int *slot, int want,
			  int p2p)
{
	struct mx_json j = { .o = o, .first = 1 };
	int err;

	asc_out_putc(o, '{');
	err = conv_comm_matrix(v->comm, slot, want, p2p, mx_json_entry, &j);
	if (j.any)
		asc_out_putc(o, '}');
	asc_out_putc(o, '}');
	return err;
}

/* ---- the two files ---- */

typedef int (*ops_fn)(const struct conv *, struct asc_out *, const int *, int, int);

static void write_file(struct conv *v, const char *name, const int *slot, ops_fn fn)
{
	const struct asc_corr *c = v->c;
	const struct asc_comm *m = v->comm;
	struct asc_out o;
	int first = 1, err = 0;
	size_t i, j;

	if (conv_open_out(v, &o, v->out, name)) {
		v->err = -EIO;
		return;
	}
	asc_out_putc(&o, '{');
	/* steps in order; "step" alone without steps */
	for (i = 0; i < (v->has_steps ? c->nr_steps : 1) && !err; i++) {
		char sk[40];
		int want = v->has_steps ? (int)i : -1, any = 0, f2 = 1;

		for (j = 0; j < m->nr_ops; j++)
			any |= slot[j] == want;
		if (!any)
			continue;
		if (v->has_steps)
			snprintf(sk, sizeof(sk), "step%llu", (unsigned long long)c->steps[i].step);
		else
			snprintf(sk, sizeof(sk), "step");
		key(&o, &first, sk);
		asc_out_putc(&o, '{');
		key(&o, &f2, "p2p");
		err = fn(v, &o, slot, want, 1);
		key(&o, &f2, "collective");
		if (!err)
			err = fn(v, &o, slot, want, 0);
		asc_out_putc(&o, '}');
	}
	asc_out_putc(&o, '}');
	if (err && !v->err)
		v->err = err;
	conv_close_out(v, &o, name);
}

int *conv_comm_slots(const struct asc_corr *c, const struct asc_comm *m, int cycle)
{
	int *slot = malloc((m->nr_ops + 1) * sizeof(*slot));
	size_t i;

	if (!slot)
		return NULL;
	for (i = 0; i < m->nr_ops; i++) {
		struct asc_comm_time t;

		/* an op with no master task (never ran) has no time info: msprof drops it */
		slot[i] = asc_comm_op_time(m, i, &t) ? -2 : conv_comm_step(c, cycle, t.start_ns);
	}
	return slot;
}

void conv_communication(struct conv *v)
{
	const struct asc_comm *m = v->comm;
	int *slot, any = 0;
	size_t i;

	if (!m || !m->nr_ops)
		return;
	slot = conv_comm_slots(v->c, m, v->cycle);
	if (!slot) {
		v->err = -ENOMEM;
		return;
	}
	for (i = 0; i < m->nr_ops; i++)
		any |= slot[i] != -2;
	if (any) {
		write_file(v, "communication.json", slot, comm_ops_obj);
		write_file(v, "communication_matrix.json", slot, matrix_ops_obj);
	}
	free(slot);
}

/* ---- Overlap Analysis (trace_view.json) and step_trace_time.csv ---- */

static int span_push(struct span **a, size_t *n, int64_t s, int64_t e)
{
	struct span *na;

	if (e <= s)
		return 0;
	if (!(*n & (*n + 1)) || !*a) {
		na = realloc(*a, (*n * 2 + 2) * sizeof(*na));
		if (!na)
			return -ENOMEM;
		*a = na;
	}
	(*a)[(*n)++] = (struct span){ s, e };
	return 0;
}

/*
 * msprof's overlap rows of device dev in this cycle: Computing = union of
 * the compute kernels; Communication = union of the comm ops' device spans;
 * Communication(Not Overlapped) = Communication less Computing; Free = the
 * gaps between the spans of Computing or Communication.  -ENOMEM.
 */
int conv_overlap(const struct conv *v, uint32_t dev, struct conv_overlap *ov)
{
	const struct asc_comm *m = v->comm;
	struct span *all = NULL;
	size_t i, j, nall = 0;
	int err = 0;

	memset(ov, 0, sizeof(*ov));
	ov->comp = conv_computing_spans(v, dev, &ov->ncomp);
	for (i = 0; m && i < m->nr_ops && !err; i++) {
		const struct asc_comm_op *o = &m->ops[i];

		if (o->device != dev || !o->ntasks || !conv_in_cycle(v, o->step))
			continue;
		if (ov->ncomm && o->start_ns <= ov->comm[ov->ncomm - 1].e) {
			if (o->end_ns > ov->comm[ov->ncomm - 1].e)
				ov->comm[ov->ncomm - 1].e = o->end_ns;
			continue;
		}
		err = span_push(&ov->comm, &ov->ncomm, o->start_ns, o->end_ns);
	}
	/* not overlapped: each comm span less the compute spans (both sorted) */
	for (i = 0, j = 0; i < ov->ncomm && !err; i++) {
		int64_t s = ov->comm[i].s, e = ov->comm[i].e;

		while (j < ov->ncomp && ov->comp[j].e <= s)
			j++;
		for (size_t k = j; k < ov->ncomp && ov->comp[k].s < e && !err; k++) {
			err = span_push(&ov->nov, &ov->nnov, s, ov->comp[k].s);
			if (ov->comp[k].e > s)
				s = ov->comp[k].e;
		}
		if (!err)
			err = span_push(&ov->nov, &ov->nnov, s, e);
	}
	/* free: the gaps of computing or communication */
	for (i = 0, j = 0; (i < ov->ncomp || j < ov->ncomm) && !err;) {
		int take_comp = j >= ov->ncomm || (i < ov->ncomp && ov->comp[i].s <= ov->comm[j].s);
		const struct span *x = take_comp ? &ov->comp[i++] : &ov->comm[j++];

		if (nall && x->s <= all[nall - 1].e) {
			if (x->e > all[nall - 1].e)
				all[nall - 1].e = x->e;
		} else {
			err = span_push(&all, &nall, x->s, x->e);
		}
	}
	for (i = 0; i + 1 < nall && !err; i++)
		err = span_push(&ov->freet, &ov->nfree, all[i].e, all[i + 1].s);
	free(all);
	if (!ov->comp && ov->ncomp)
		err = -ENOMEM;
	if (err)
		conv_overlap_free(ov);
	return err;
}

void conv_overlap_free(struct conv_overlap *ov)
{
	free(ov->comp);
	free(ov->comm);
	free(ov->nov);
	free(ov->freet);
	memset(ov, 0, sizeof(*ov));
}

/* Duration of the hcom_receive ops (step_trace_time's Bubble) starting in [s0, s1) on dev. */
int64_t conv_receive_ns(const struct conv *v, uint32_t dev, int64_t s0, int64_t s1)
{
	const struct asc_comm *m = v->comm;
	int64_t sum = 0;
	size_t i;

	for (i = 0; m && i < m->nr_ops; i++) {
		const struct asc_comm_op *o = &m->ops[i];

		if (o->device == dev && o->ntasks && conv_in_cycle(v, o->step) &&
		    o->start_ns >= s0 && o->start_ns < s1 && !strncmp(o->name, "hcom_receive", 12))
			sum = asc_ns_add(sum, asc_ns_sub(o->end_ns, o->start_ns));
	}
	return sum;
}

/* ---- profiler_metadata.json's parallel_group_info ---- */

/* The members of every communicator, this capture's and the peers' (opts->peers). */
static void gather_members(struct conv *v, const char *self, struct asc_comm_member **all,
			   size_t *nall)
{
	size_t i;

	*all = NULL;
	*nall = 0;
	for (i = 0; i <= v->opts->nr_peers; i++) {
		const char *path = i ? v->opts->peers[i - 1] : self;
		struct asc_capture_reader *r = path ? asc_capture_open(path) : NULL;
		struct asc_comm_member *m;
		size_t n;

		if (!r) {
			if (path)
				asc_warn("convert: cannot read %s for the job's groups\n", path);
			continue;
		}
		if (!asc_comm_members(r, &m, &n) && n) {
			struct asc_comm_member *na = realloc(*all, (*nall + n) * sizeof(*na));

			if (na) {
				memcpy(na + *nall, m, n * sizeof(*m));
				*all = na;
				*nall += n;
			}
		}
		free(m);
		asc_capture_free(r);
	}
}

/*
 * parallel_group_info, as torch_npu's get_pytorch_parallel_group_info
 * writes it: {communicator name: {"group_name", "group_rank",
 * "global_ranks"}}.  The global ranks are those of the job's captures
 * (this one and opts->peers) that joined the communicator, in group-rank
 * order; a communicator whose members are not all among them is left out
 * rather than written with ranks made up.  The group spanning every rank of
 * the job (as many ranks as the captures have) is torch's default group,
 * "default_group"; another's name is "" (torch_npu's value without an
 * hccl_config group_name).
 */
void conv_parallel_group_info(struct conv *v, struct asc_out *o)
{
	const struct asc_comm *m = v->comm;
	struct asc_comm_member *all;
	int32_t seen[4096];
	size_t nall, g, i, j, nworld = 0;
	int first = 1;

	if (!m || !m->nr_groups)
		return;
	gather_members(v, v->capture, &all, &nall);
	for (i = 0; i < nall; i++) { /* distinct global ranks of the job */
		for (j = 0; j < nworld && seen[j] != all[i].global_rank; j++)
			;
		if (j == nworld && all[i].global_rank >= 0 && nworld < 4096)
			seen[nworld++] = all[i].global_rank;
	}
	asc_out_puts(o, ", \"parallel_group_info\": {");
	for (g = 0; g < m->nr_groups; g++) {
		const struct asc_comm_group *gr = &m->groups[g];
		int32_t ranks[4096];
		uint32_t n = gr->rank_size, k, found = 0;

		if (!n || n > 4096)
			continue;
		for (k = 0; k < n; k++)
			ranks[k] = -1;
		for (i = 0; i < nall; i++)
			if (!strcmp(all[i].group, gr->name) && all[i].group_rank >= 0 &&
			    (uint32_t)all[i].group_rank < n && all[i].global_rank >= 0)
				ranks[all[i].group_rank] = all[i].global_rank;
		for (k = 0; k < n; k++)
			found += ranks[k] >= 0;
		if (found < n) {
			asc_info("convert: group %s: %u of its %u ranks' captures known (--peer): "
				 "not in parallel_group_info\n",
				 gr->name, found, n);
			continue;
		}
		if (!first)
			asc_out_puts(o, ", ");
		first = 0;
		asc_json_cstr(o, gr->name);
		asc_out_puts(o, ": {\"group_name\": ");
		asc_json_cstr(o, n == nworld ? "default_group" : "");
		asc_out_printf(o, ", \"group_rank\": %d, \"global_ranks\": [", gr->rank);
		for (k = 0; k < n; k++)
			asc_out_printf(o, "%s%d", k ? ", " : "", ranks[k]);
		asc_out_puts(o, "]}");
	}
	asc_out_putc(o, '}');
	free(all);
}
