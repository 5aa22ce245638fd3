// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dump.c - `ascbpf dump [--json] CAPTURE`: one line per record.
 *
 * --json prints one JSON object per line with every field of the record's
 * struct by its name in bpf/ascbpf_events.h, plus "type" (the type name from
 * records.c, or "unknown") and, for nested arrays, arrays of objects/numbers.
 * The header fields are at top level: type, size, tgid, tid, probe_id, ts_ns.
 * Strings are JSON-escaped (json_writer.h); char arrays are cut at their NUL
 * or length.  Integration tests parse this output: adding fields is fine,
 * renaming them is not.
 *
 * A malformed record (asc_rec_check() fails) is printed as
 * {"type":"invalid",...,"error":"..."} and makes the exit status non-zero;
 * a damaged capture prints everything up to the damage, then the damage on
 * stderr, and fails with -EBADMSG.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "ascbpf_events.h"
#include "capture.h"
#include "commands.h"
#include "json_writer.h"
#include "log.h"
#include "pytorch.h"
#include "records.h"

struct dumper {
	struct asc_out *o;
	int json;
	int nfields;
};

static void sep(struct dumper *d, const char *key)
{
	if (d->json) {
		asc_out_puts(d->o, d->nfields ? ", \"" : "\"");
		asc_out_puts(d->o, key);
		asc_out_puts(d->o, "\": ");
	} else {
		asc_out_putc(d->o, ' ');
		asc_out_puts(d->o, key);
		asc_out_putc(d->o, '=');
	}
	d->nfields++;
}

static void fu(struct dumper *d, const char *key, uint64_t v)
{
	sep(d, key);
	asc_out_u64(d->o, v);
}

static void fs(struct dumper *d, const char *key, int64_t v)
{
	sep(d, key);
	asc_out_s64(d->o, v);
}

static void fx(struct dumper *d, const char *key, uint64_t v)
{
	sep(d, key);
	if (d->json)
		asc_out_u64(d->o, v);
	else
		asc_out_printf(d->o, "0x%" PRIx64, v);
}

/* A string field: text mode escapes too, so one record stays one line. */
static void fstr(struct dumper *d, const char *key, const char *s, size_t n)
{
	sep(d, key);
	asc_json_str(d->o, s, n);
}

static void fcstr(struct dumper *d, const char *key, const char *arr, size_t cap)
{
	const char *z = memchr(arr, 0, cap);

	fstr(d, key, arr, z ? (size_t)(z - arr) : cap);
}

static void arr_open(struct dumper *d, const char *key)
{
	sep(d, key);
	asc_out_putc(d->o, '[');
}

static void dump_fields(struct dumper *d, const void *rec, size_t size)
{
	const struct asc_hdr *h = rec;
	unsigned int i;

	switch (h->type) {
	case ASC_REC_ENTER: {
		const struct asc_enter *e = rec;

		arr_open(d, "args");
		for (i = 0; i < ASC_MAX_ARGS; i++) {
			if (i)
				asc_out_puts(d->o, d->json ? ", " : ",");
			if (d->json)
				asc_out_u64(d->o, e->args[i]);
			else
				asc_out_printf(d->o, "0x%llx", (unsigned long long)e->args[i]);
		}
		asc_out_putc(d->o, ']');
		break;
	}
	case ASC_REC_EXIT:
		fx(d, "ret", ((const struct asc_exit *)rec)->ret);
		break;
	case ASC_REC_OPNAME: {
		const struct asc_opname *o = rec;

		fu(d, "len", o->len);
		fu(d, "flags", o->flags);
		fstr(d, "name", o->name, strnlen(o->name, o->len));
		break;
	}
	case ASC_REC_FUNCNAME: {
		const struct asc_funcname *fn = rec;

		fx(d, "handle", fn->handle);
		fu(d, "len", fn->len);
		fu(d, "flags", fn->flags);
		fstr(d, "name", fn->name, strnlen(fn->name, fn->len < sizeof(fn->name) ?
						  fn->len : sizeof(fn->name)));
		break;
	}
	case ASC_REC_QUEUE: {
		const struct asc_queue *q = rec;

		fu(d, "correlation_id", q->correlation_id);
		fx(d, "stream", q->stream);
		fu(d, "param_type", q->param_type);
		fu(d, "side", q->side);
		break;
	}
	case ASC_REC_SQE: {
		const struct asc_sqe *s = rec;

		fu(d, "dev_id", s->dev_id);
		fu(d, "sq_id", s->sq_id);
		fu(d, "sqe_num", s->sqe_num);
		fu(d, "nr_kept", s->nr_kept);
		arr_open(d, "sqe");
		for (i = 0; i < s->nr_kept; i++) {
			const struct asc_sqe_hdr *q = &s->sqe[i];

			if (d->json)
				asc_out_printf(d->o, "%s{\"sqe_type\": %u, \"flags\": %u, "
					       "\"block_dim\": %u, \"stream_id\": %u, "
					       "\"task_id\": %u}", i ? ", " : "", q->sqe_type,
					       q->flags, q->block_dim, q->stream_id, q->task_id);
			else
				asc_out_printf(d->o, "%s{type=%u flags=%u block_dim=%u stream=%u "
					       "task=%u}", i ? "," : "", q->sqe_type, q->flags,
					       q->block_dim, q->stream_id, q->task_id);
		}
		asc_out_putc(d->o, ']');
		break;
	}
	case ASC_REC_MEM: {
		const struct asc_mem *m = rec;

		fx(d, "ptr", m->ptr);
		fs(d, "size", m->size);
		fu(d, "total_allocated", m->total_allocated);
		fu(d, "total_reserved", m->total_reserved);
		fu(d, "total_active", m->total_active);
		fx(d, "stream", m->stream);
		fu(d, "device", m->device);
		fu(d, "component", m->component);
		fu(d, "data_type", m->data_type);
		break;
	}
	case ASC_REC_IOCTL: {
		const struct asc_ioctl *io = rec;

		fu(d, "exit_ns", io->exit_ns);
		fs(d, "ret", io->ret);
		fu(d, "fd", io->fd);
		fx(d, "cmd", io->cmd);
		fu(d, "module", io->module);
		fu(d, "arg_len", io->arg_len);
		sep(d, "arg");
		asc_out_putc(d->o, '"');
		for (i = 0; i < io->arg_len; i++)
			asc_out_printf(d->o, "%02x", io->arg[i]);
		asc_out_putc(d->o, '"');
		break;
	}
	case ASC_REC_STACK: {
		const struct asc_stack *s = rec;

		fu(d, "nr", s->nr);
		fu(d, "flags", s->flags);
		arr_open(d, "ips");
		for (i = 0; i < s->nr; i++) {
			if (i)
				asc_out_puts(d->o, d->json ? ", " : ",");
			if (d->json)
				asc_out_u64(d->o, s->ips[i]);
			else
				asc_out_printf(d->o, "0x%llx", (unsigned long long)s->ips[i]);
		}
		asc_out_putc(d->o, ']');
		break;
	}
	case ASC_REC_STEP: {
		const struct asc_step *s = rec;

		fu(d, "step", s->step);
		fu(d, "state", s->state);
		sep(d, "state_name");
		asc_json_cstr(d->o, asc_sched_state_name(s->state));
		break;
	}
	case ASC_REC_FDBIND: {
		const struct asc_fdbind *b = rec;

		fu(d, "fd", b->fd);
		fs(d, "device_id", b->device_id);
		fcstr(d, "module_name", b->module_name, sizeof(b->module_name));
		break;
	}
	case ASC_REC_SEQNR: {
		const struct asc_seqnr *q = rec;

		fs(d, "seq", q->seq);
		fu(d, "fwd_tid", q->fwd_tid);
		fx(d, "vptr", q->vptr);
		fu(d, "kind", q->kind);
		fu(d, "flags", q->flags);
		break;
	}
	case ASC_REC_TENSOR: {
		const struct asc_tensor *t = rec;
		unsigned int n = t->ndim < ASC_TENSOR_DIMS ? t->ndim : ASC_TENSOR_DIMS;

		fu(d, "arg_index", t->arg_index);
		fu(d, "list_index", t->list_index);
		fu(d, "kind", t->kind);
		fu(d, "dtype", t->dtype);
		fu(d, "ndim", t->ndim);
		fu(d, "flags", t->flags);
		sep(d, "kind_name");
		asc_json_cstr(d->o, t->kind == ASC_TENSOR_DEFINED ? "defined" :
				    t->kind == ASC_TENSOR_UNDEFINED ? "undefined" :
				    t->kind == ASC_TENSOR_UNREADABLE ? "unreadable" : "?");
		sep(d, "dtype_name");
		{
			const char *tn = asc_scalar_type_name(t->dtype);

			asc_json_cstr(d->o, tn ? tn : "");
		}
		arr_open(d, "dims");
		for (i = 0; i < n; i++) {
			if (i)
				asc_out_puts(d->o, d->json ? ", " : ",");
			asc_out_s64(d->o, t->dims[i]);
		}
		asc_out_putc(d->o, ']');
		break;
	}
	case ASC_REC_PYSTACK: {
		const struct asc_pystack *ps = rec;

		fu(d, "nr", ps->nr);
		fu(d, "flags", ps->flags);
		arr_open(d, "code");
		for (i = 0; i < ps->nr; i++) {
			if (i)
				asc_out_puts(d->o, d->json ? ", " : ",");
			if (d->json)
				asc_out_u64(d->o, ps->code[i]);
			else
				asc_out_printf(d->o, "0x%llx", (unsigned long long)ps->code[i]);
		}
		asc_out_putc(d->o, ']');
		arr_open(d, "lasti");
		for (i = 0; i < ps->nr; i++) {
			if (i)
				asc_out_puts(d->o, d->json ? ", " : ",");
			asc_out_s64(d->o, ps->lasti[i]);
		}
		asc_out_putc(d->o, ']');
		break;
	}
	case ASC_REC_PYFRAME: {
		const struct asc_pyframe *pf = rec;

		fx(d, "code", pf->code);
		fs(d, "lasti", pf->lasti);
		fs(d, "line", pf->line);
		fcstr(d, "text", pf->text, size - sizeof(*pf));
		break;
	}
	case ASC_REC_DEVTASK: {
		const struct asc_devtask *t = rec;

		fu(d, "start_cnt", t->start_cnt);
		fu(d, "end_cnt", t->end_cnt);
		fu(d, "dev_id", t->dev_id);
		fu(d, "stream_id", t->stream_id);
		fu(d, "task_id", t->task_id);
		fu(d, "task_type", t->task_type);
		fu(d, "flags", t->flags);
		break;
	}
	case ASC_REC_PROBE: {
		const struct asc_probe *p = rec;

		fu(d, "layer", p->layer);
		fu(d, "kind", p->kind);
		fu(d, "flags", p->flags);
		fx(d, "offset", p->offset);
		fu(d, "lib_len", p->lib_len);
		fu(d, "sym_len", p->sym_len);
		fstr(d, "library", asc_probe_lib(p), p->lib_len);
		fstr(d, "symbol", asc_probe_sym(p), p->sym_len);
		sep(d, "layer_name");
		asc_json_cstr(d->o, asc_layer_name(p->layer));
		sep(d, "kind_name");
		asc_json_cstr(d->o, asc_probe_kind_name(p->kind));
		break;
	}
	case ASC_REC_CLOCK: {
		const struct asc_clock *c = rec;

		fu(d, "realtime_ns", c->realtime_ns);
		fu(d, "monotonic_raw_ns", c->monotonic_raw_ns);
		fu(d, "which", c->which);
		fs(d, "utc_offset_s", c->utc_offset_s);
		break;
	}
	case ASC_REC_DEVCLOCK: {
		const struct asc_devclock *c = rec;

		fu(d, "counter", c->counter);
		fu(d, "freq_hz", c->freq_hz);
		fu(d, "dev_id", c->dev_id);
		break;
	}
	case ASC_REC_PROCESS: {
		const struct asc_process *p = rec;
		size_t off = 0;

		fs(d, "rank", p->rank);
		fs(d, "device", p->device);
		fu(d, "cmdline_len", p->cmdline_len);
		fcstr(d, "comm", p->comm, sizeof(p->comm));
		arr_open(d, "cmdline");
		for (i = 0; off < p->cmdline_len; i++) {
			size_t n = strnlen(p->strings + off, p->cmdline_len - off);

			if (i)
				asc_out_puts(d->o, d->json ? ", " : ",");
			asc_json_str(d->o, p->strings + off, n);
			off += n + 1;
		}
		asc_out_putc(d->o, ']');
		break;
	}
	case ASC_REC_THREAD: {
		const struct asc_thread *t = rec;

		fcstr(d, "comm", t->comm, sizeof(t->comm));
		break;
	}
	case ASC_REC_STATS: {
		const struct asc_stats *s = rec;

		fu(d, "events", s->events);
		fu(d, "drops", s->drops);
		fu(d, "devtask_records", s->devtask_records);
		fu(d, "devtask_drops", s->devtask_drops);
		fu(d, "bytes", s->bytes);
		break;
	}
	case ASC_REC_CONFIG:
	case ASC_REC_SYMBOL:
	case ASC_REC_LOST: {
		const struct asc_text *t = rec;

		if (h->type == ASC_REC_SYMBOL)
			fx(d, "value", t->value);
		else
			fu(d, "value", t->value);
		fcstr(d, "text", t->text, size - sizeof(*t));
		break;
	}
	default:
		break;
	}
}

static int dump_record(struct dumper *d, const void *rec, size_t size)
{
	const struct asc_hdr *h = rec;
	char msg[160];
	const char *name;
	int ret;

	ret = asc_rec_check(rec, size, msg, sizeof(msg));
	name = ret < 0 ? "invalid" : ret == 1 ? "unknown" : asc_rec_type_name(h->type);
	d->nfields = 0;
	if (d->json) {
		asc_out_putc(d->o, '{');
		sep(d, "type");
		asc_json_cstr(d->o, name);
	} else {
		asc_out_puts(d->o, name);
	}
	fu(d, "type_id", h->type);
	fu(d, "size", h->size);
	fu(d, "tgid", h->tgid);
	fu(d, "tid", h->tid);
	fu(d, "probe_id", h->probe_id);
	fu(d, "ts_ns", h->ts_ns);
	if (ret < 0) {
		sep(d, "error");
		asc_json_cstr(d->o, msg);
	} else if (ret == 0) {
		dump_fields(d, rec, size);
	}
	if (d->json)
		asc_out_putc(d->o, '}');
	asc_out_putc(d->o, '\n');
	return ret < 0 ? ret : 0;
}

static void dump_usage(FILE *f)
{
	fprintf(f, "Usage: ascbpf dump [--json] CAPTURE\n"
		   "  Prints one line per record of a capture file.\n"
		   "  --json   one JSON object per line, every field by name\n");
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct asc_capture_reader *r;
	struct asc_capture_info info;
	struct dumper d = { 0 };
	struct asc_out out;
	const void *rec;
	size_t size;
	int c, ret, bad = 0, err = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			d.json = 1;
			break;
		case 'h':
			dump_usage(stdout);
			return 0;
		default:
			dump_usage(stderr);
			return -EINVAL;
		}
	}
	if (optind != argc - 1) {
		asc_err("dump: expected exactly one capture file\n");
		dump_usage(stderr);
		return -EINVAL;
	}
	r = asc_capture_open(argv[optind]);
	if (!r)
		return -errno;
	if (asc_out_fdopen(&out, STDOUT_FILENO)) {
		asc_capture_free(r);
		return -ENOMEM;
	}
	d.o = &out;
	while ((ret = asc_capture_next(r, &rec, &size)) == 1)
		if (dump_record(&d, rec, size))
			bad++;
	if (ret < 0) {
		asc_err("dump: reading %s: %s\n", argv[optind], strerror(-ret));
		err = ret;
	}
	if (asc_out_close(&out) && !err)
		err = -EIO;
	asc_capture_info(r, &info);
	if (info.damaged) {
		asc_err("dump: %s is damaged: %s; %llu records in %llu frames read, "
			"%llu bytes after them not read\n", argv[optind], info.damage,
			(unsigned long long)info.records_read, (unsigned long long)info.frames_read,
			(unsigned long long)info.bytes_unread);
		if (!err)
			err = -EBADMSG;
	}
	if (bad) {
		asc_err("dump: %d malformed records\n", bad);
		if (!err)
			err = -EBADMSG;
	}
	asc_capture_free(r);
	return err;
}
