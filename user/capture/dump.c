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
 * Each record type's fields are a table (layouts[]: name, offset, width,
 * format, in output order), so a new field is one line there; what no format
 * covers (SQE headers, a probe's strings, the cmdline) is a print function.
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
#include "capture/capture.h"
#include "capture/ioctl_decode.h"
#include "commands.h"
#include "lib/json_writer.h"
#include "lib/log.h"
#include "capture/records.h"

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

/* ---- record layouts: the fields of each record type, in output order ---- */

enum field_fmt {
	F_U,	 /* unsigned decimal */
	F_S,	 /* signed decimal (sign of the member's width) */
	F_X,	 /* 0x hex in text, decimal in JSON */
	F_CHARS, /* char array, cut at its first NUL */
	F_NSTR,	 /* char array of count bytes (at most the array), cut at a NUL */
	F_TAIL,	 /* the rest of the record (a flexible char array), cut at a NUL */
	F_XARR,	 /* [count] integers, 0x hex in text */
	F_SARR,	 /* [count] signed integers */
	F_HEX,	 /* "hex digits" of count bytes */
	F_NAME,	 /* name(value) as a string */
	F_FN,	 /* print(): what fits none of the above */
};

struct field {
	const char *key;
	uint16_t off, width; /* the member; arrays: the whole array */
	uint8_t fmt;
	uint8_t elem;	    /* arrays: bytes per element */
	uint16_t count_off; /* F_NSTR/F_*ARR/F_HEX: the count member (0: the whole array) */
	uint8_t count_width;
	const char *(*name)(unsigned int v);
	void (*print)(struct dumper *d, const void *rec);
};

/* macros that expand to initializers: clang-format takes their braces for blocks */
// clang-format off
#define MSIZE(T, m)		sizeof(((const struct T *)0)->m)
#define AT(T, m)		.key = #m, .off = offsetof(struct T, m)
#define FIELD(T, m, f)		{ AT(T, m), .width = MSIZE(T, m), .fmt = f }
#define U(T, m)			FIELD(T, m, F_U)
#define S(T, m)			FIELD(T, m, F_S)
#define X(T, m)			FIELD(T, m, F_X)
#define CHARS(T, m)		FIELD(T, m, F_CHARS)
#define TAIL(T, m)		{ AT(T, m), .fmt = F_TAIL }
/* an array of which member cnt says how many elements are valid */
#define COUNTED(T, m, f, cnt)	{ AT(T, m), .width = MSIZE(T, m), .fmt = f, .elem = MSIZE(T, m[0]), \
				  .count_off = offsetof(struct T, cnt),				\
				  .count_width = MSIZE(T, cnt) }
#define ALL(T, m, f)		{ AT(T, m), .width = MSIZE(T, m), .fmt = f, .elem = MSIZE(T, m[0]) }
#define NAME(k, T, m, fn)	{ .key = k, .off = offsetof(struct T, m), .width = MSIZE(T, m),	\
				  .fmt = F_NAME, .name = fn }
#define FN(k, fn)		{ .key = k, .fmt = F_FN, .print = fn }
// clang-format on

/* An integer member of width 1, 2, 4 or 8 bytes (records are in host byte order). */
static uint64_t get_u(const void *p, unsigned int width)
{
	uint64_t v = 0;

	_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the low bytes of v come first");
	memcpy(&v, p, width);
	return v;
}

static int64_t get_s(const void *p, unsigned int width)
{
	uint64_t v = get_u(p, width);

	return width >= 8 ? (int64_t)v : (int64_t)(v << (64 - 8 * width)) >> (64 - 8 * width);
}

static const char *tensor_kind_name(unsigned int kind)
{
	return kind == ASC_TENSOR_DEFINED    ? "defined" :
	       kind == ASC_TENSOR_UNDEFINED  ? "undefined" :
	       kind == ASC_TENSOR_UNREADABLE ? "unreadable" :
					       "?";
}

static const char *dtype_name(unsigned int dtype)
{
	const char *n = asc_scalar_type_name(dtype);

	return n ? n : "";
}

static void print_sqes(struct dumper *d, const void *rec)
{
	const struct asc_sqe *s = rec;
	unsigned int i;

	asc_out_putc(d->o, '[');
	for (i = 0; i < s->nr_kept; i++) {
		const struct asc_sqe_hdr *q = &s->sqe[i];

		if (d->json)
			asc_out_printf(d->o,
				       "%s{\"sqe_type\": %u, \"flags\": %u, "
				       "\"block_dim\": %u, \"stream_id\": %u, \"task_id\": %u}",
				       i ? ", " : "", q->sqe_type, q->flags, q->block_dim,
				       q->stream_id, q->task_id);
		else
			asc_out_printf(d->o, "%s{type=%u flags=%u block_dim=%u stream=%u task=%u}",
				       i ? "," : "", q->sqe_type, q->flags, q->block_dim,
				       q->stream_id, q->task_id);
	}
	asc_out_putc(d->o, ']');
}

static void print_library(struct dumper *d, const void *rec)
{
	asc_json_str(d->o, asc_probe_lib(rec), ((const struct asc_probe *)rec)->lib_len);
}

static void print_symbol(struct dumper *d, const void *rec)
{
	asc_json_str(d->o, asc_probe_sym(rec), ((const struct asc_probe *)rec)->sym_len);
}

/* cmdline_len bytes of NUL-separated arguments */
static void print_cmdline(struct dumper *d, const void *rec)
{
	const struct asc_process *p = rec;
	size_t off = 0, i;

	asc_out_putc(d->o, '[');
	for (i = 0; off < p->cmdline_len; i++) {
		size_t n = strnlen(p->strings + off, p->cmdline_len - off);

		if (i)
			asc_out_puts(d->o, d->json ? ", " : ",");
		asc_json_str(d->o, p->strings + off, n);
		off += n + 1;
	}
	asc_out_putc(d->o, ']');
}

/* The command's driver name, or its _IOC text ("_IOWR('X',17,96)"). */
static void print_ioctl_name(struct dumper *d, const void *rec)
{
	const struct asc_ioctl *io = rec;
	char buf[64];

	asc_ioctl_name(io->cmd, io->module, buf, sizeof(buf));
	asc_json_cstr(d->o, buf);
}

/* The argument fields that matter ("sq_id=3 sqe_num=1"), "" for commands not decoded. */
static void print_ioctl_args(struct dumper *d, const void *rec)
{
	const struct asc_ioctl *io = rec;
	char buf[512];
	size_t n = io->arg_len < sizeof(io->arg) ? io->arg_len : sizeof(io->arg);

	asc_ioctl_format_args(io->cmd, io->module, io->arg, n, buf, sizeof(buf));
	asc_json_cstr(d->o, buf);
}

/* the record layouts, packed: clang-format puts one field a line */
// clang-format off
static const struct field enter_fields[] = { ALL(asc_enter, args, F_XARR) };
static const struct field exit_fields[] = { X(asc_exit, ret) };
static const struct field opname_fields[] = {
	U(asc_opname, len), U(asc_opname, flags), COUNTED(asc_opname, name, F_NSTR, len),
};
static const struct field funcname_fields[] = {
	X(asc_funcname, handle), U(asc_funcname, len), U(asc_funcname, flags),
	COUNTED(asc_funcname, name, F_NSTR, len),
};
static const struct field queue_fields[] = {
	U(asc_queue, correlation_id), X(asc_queue, stream), U(asc_queue, param_type),
	U(asc_queue, side),
};
static const struct field sqe_fields[] = {
	U(asc_sqe, dev_id), U(asc_sqe, sq_id), U(asc_sqe, sqe_num), U(asc_sqe, nr_kept),
	FN("sqe", print_sqes),
};
static const struct field mem_fields[] = {
	X(asc_mem, ptr), S(asc_mem, size), U(asc_mem, total_allocated), U(asc_mem, total_reserved),
	U(asc_mem, total_active), X(asc_mem, stream), U(asc_mem, device), U(asc_mem, component),
	U(asc_mem, data_type),
};
static const struct field ioctl_fields[] = {
	U(asc_ioctl, exit_ns), S(asc_ioctl, ret), U(asc_ioctl, fd), X(asc_ioctl, cmd),
	U(asc_ioctl, module), U(asc_ioctl, arg_len), COUNTED(asc_ioctl, arg, F_HEX, arg_len),
	FN("cmd_name", print_ioctl_name), FN("decoded", print_ioctl_args),
};
static const struct field stack_fields[] = {
	U(asc_stack, nr), U(asc_stack, flags), COUNTED(asc_stack, ips, F_XARR, nr),
};
static const struct field step_fields[] = {
	U(asc_step, step), U(asc_step, state),
	NAME("state_name", asc_step, state, asc_sched_state_name),
};
static const struct field fdbind_fields[] = {
	U(asc_fdbind, fd), S(asc_fdbind, device_id), CHARS(asc_fdbind, module_name),
};
static const struct field seqnr_fields[] = {
	S(asc_seqnr, seq), U(asc_seqnr, fwd_tid), X(asc_seqnr, vptr), U(asc_seqnr, kind),
	U(asc_seqnr, flags),
};
static const struct field launch_fields[] = {
	X(asc_launch, stream), X(asc_launch, handle), U(asc_launch, side), U(asc_launch, ret),
};
static const struct field tensor_fields[] = {
	U(asc_tensor, arg_index), U(asc_tensor, list_index), U(asc_tensor, kind),
	U(asc_tensor, dtype), U(asc_tensor, ndim), U(asc_tensor, flags),
	NAME("kind_name", asc_tensor, kind, tensor_kind_name),
	NAME("dtype_name", asc_tensor, dtype, dtype_name),
	COUNTED(asc_tensor, dims, F_SARR, ndim),	/* ndim may exceed the array */
};
static const struct field pystack_fields[] = {
	U(asc_pystack, nr), U(asc_pystack, flags), COUNTED(asc_pystack, code, F_XARR, nr),
	COUNTED(asc_pystack, lasti, F_SARR, nr),
};
static const struct field node_class_fields[] = {
	X(asc_node_class, vaddr), U(asc_node_class, size), TAIL(asc_node_class, name),
};
static const struct field pyframe_fields[] = {
	X(asc_pyframe, code), S(asc_pyframe, lasti), S(asc_pyframe, line), TAIL(asc_pyframe, text),
};
static const struct field devtask_fields[] = {
	U(asc_devtask, start_cnt), U(asc_devtask, end_cnt), U(asc_devtask, dev_id),
	U(asc_devtask, stream_id), U(asc_devtask, task_id), U(asc_devtask, task_type),
	U(asc_devtask, flags),
};
static const struct field probe_fields[] = {
	U(asc_probe, layer), U(asc_probe, kind), U(asc_probe, flags), X(asc_probe, offset),
	U(asc_probe, lib_len), U(asc_probe, sym_len), FN("library", print_library),
	FN("symbol", print_symbol), NAME("layer_name", asc_probe, layer, asc_layer_label),
	NAME("kind_name", asc_probe, kind, asc_probe_kind_name),
};
static const struct field clock_fields[] = {
	U(asc_clock, realtime_ns), U(asc_clock, monotonic_raw_ns), U(asc_clock, which),
	S(asc_clock, utc_offset_s),
};
static const struct field devclock_fields[] = {
	U(asc_devclock, counter), U(asc_devclock, freq_hz), U(asc_devclock, dev_id),
	U(asc_devclock, bound_ns),
};
static const struct field process_fields[] = {
	S(asc_process, rank), S(asc_process, device), U(asc_process, cmdline_len),
	CHARS(asc_process, comm), FN("cmdline", print_cmdline),
};
static const struct field thread_fields[] = { CHARS(asc_thread, comm) };
static const struct field stats_fields[] = {
	U(asc_stats, events), U(asc_stats, drops), U(asc_stats, devtask_records),
	U(asc_stats, devtask_drops), U(asc_stats, bytes),
};
static const struct field hccl_op_fields[] = {
	ALL(asc_hccl_op, args, F_XARR), U(asc_hccl_op, side), U(asc_hccl_op, ret),
};
static const struct field hccl_comm_fields[] = {
	X(asc_hccl_comm, comm), U(asc_hccl_comm, enter_ns), U(asc_hccl_comm, nranks),
	U(asc_hccl_comm, rank), U(asc_hccl_comm, ret), U(asc_hccl_comm, kind),
	CHARS(asc_hccl_comm, group),
};
static const struct field hccl_task_fields[] = {
	U(asc_hccl_task, report_ts), X(asc_hccl_task, item_id), X(asc_hccl_task, group_hash),
	U(asc_hccl_task, notify_id), X(asc_hccl_task, src_addr), X(asc_hccl_task, dst_addr),
	U(asc_hccl_task, data_size), U(asc_hccl_task, local_rank), U(asc_hccl_task, remote_rank),
	U(asc_hccl_task, rank_size), U(asc_hccl_task, plane_id), U(asc_hccl_task, data_type),
	U(asc_hccl_task, op_type), U(asc_hccl_task, link_type), U(asc_hccl_task, transport_type),
	U(asc_hccl_task, role), U(asc_hccl_task, rdma_type), U(asc_hccl_task, stage),
};
static const struct field hccl_hash_fields[] = {
	X(asc_hccl_hash, hash), U(asc_hccl_hash, len), U(asc_hccl_hash, flags),
	CHARS(asc_hccl_hash, name),
};
static const struct field text_fields[] = { U(asc_text, value), TAIL(asc_text, text) };
static const struct field symbol_fields[] = { X(asc_text, value), TAIL(asc_text, text) };
// clang-format on

/* F_TAIL strings run from the member to the end of the record */
_Static_assert(offsetof(struct asc_pyframe, text) == sizeof(struct asc_pyframe), "pyframe text");
_Static_assert(offsetof(struct asc_node_class, name) == sizeof(struct asc_node_class),
	       "node_class name");
_Static_assert(offsetof(struct asc_text, text) == sizeof(struct asc_text), "text record text");

#define LAYOUT(type, f) [type] = { f, sizeof(f) / sizeof(f[0]) }
static const struct {
	const struct field *f;
	size_t n;
} layouts[] = {
	LAYOUT(ASC_REC_ENTER, enter_fields),
	LAYOUT(ASC_REC_EXIT, exit_fields),
	LAYOUT(ASC_REC_OPNAME, opname_fields),
	LAYOUT(ASC_REC_QUEUE, queue_fields),
	LAYOUT(ASC_REC_SQE, sqe_fields),
	LAYOUT(ASC_REC_MEM, mem_fields),
	LAYOUT(ASC_REC_IOCTL, ioctl_fields),
	LAYOUT(ASC_REC_STACK, stack_fields),
	LAYOUT(ASC_REC_STEP, step_fields),
	LAYOUT(ASC_REC_FDBIND, fdbind_fields),
	LAYOUT(ASC_REC_PYSTACK, pystack_fields),
	LAYOUT(ASC_REC_TENSOR, tensor_fields),
	LAYOUT(ASC_REC_FUNCNAME, funcname_fields),
	LAYOUT(ASC_REC_SEQNR, seqnr_fields),
	LAYOUT(ASC_REC_DEVTASK, devtask_fields),
	LAYOUT(ASC_REC_PROBE, probe_fields),
	LAYOUT(ASC_REC_CLOCK, clock_fields),
	LAYOUT(ASC_REC_DEVCLOCK, devclock_fields),
	LAYOUT(ASC_REC_PROCESS, process_fields),
	LAYOUT(ASC_REC_THREAD, thread_fields),
	LAYOUT(ASC_REC_STATS, stats_fields),
	LAYOUT(ASC_REC_CONFIG, text_fields),
	LAYOUT(ASC_REC_SYMBOL, symbol_fields),
	LAYOUT(ASC_REC_LOST, text_fields),
	LAYOUT(ASC_REC_PYFRAME, pyframe_fields),
	LAYOUT(ASC_REC_LAUNCH, launch_fields),
	LAYOUT(ASC_REC_ATEN_NAME, text_fields),
	LAYOUT(ASC_REC_NODE_CLASS, node_class_fields),
	LAYOUT(ASC_REC_HCCL_OP, hccl_op_fields),
	LAYOUT(ASC_REC_HCCL_COMM, hccl_comm_fields),
	LAYOUT(ASC_REC_HCCL_TASK, hccl_task_fields),
	LAYOUT(ASC_REC_HCCL_HASH, hccl_hash_fields),
};

static void dump_array(struct dumper *d, const struct field *f, const uint8_t *p, size_t n)
{
	size_t i;

	asc_out_putc(d->o, '[');
	for (i = 0; i < n; i++, p += f->elem) {
		if (i)
			asc_out_puts(d->o, d->json ? ", " : ",");
		if (f->fmt == F_SARR)
			asc_out_s64(d->o, get_s(p, f->elem));
		else if (d->json)
			asc_out_u64(d->o, get_u(p, f->elem));
		else
			asc_out_printf(d->o, "0x%llx", (unsigned long long)get_u(p, f->elem));
	}
	asc_out_putc(d->o, ']');
}

/* Prints the fields of a record asc_rec_check() accepted; counts are capped by their arrays. */
static void dump_fields(struct dumper *d, const void *rec, size_t size)
{
	const struct asc_hdr *h = rec;
	size_t i, n, cap;

	if (h->type >= sizeof(layouts) / sizeof(layouts[0]))
		return;
	for (i = 0; i < layouts[h->type].n; i++) {
		const struct field *f = &layouts[h->type].f[i];
		const uint8_t *p = (const uint8_t *)rec + f->off;
		const char *z;

		sep(d, f->key);
		cap = f->elem ? f->width / f->elem : f->width;
		n = f->count_off ? get_u((const uint8_t *)rec + f->count_off, f->count_width) : cap;
		if (n > cap)
			n = cap;
		switch (f->fmt) {
		case F_U:
			asc_out_u64(d->o, get_u(p, f->width));
			break;
		case F_S:
			asc_out_s64(d->o, get_s(p, f->width));
			break;
		case F_X:
			if (d->json)
				asc_out_u64(d->o, get_u(p, f->width));
			else
				asc_out_printf(d->o, "0x%" PRIx64, get_u(p, f->width));
			break;
		case F_TAIL:
			n = size - f->off;
			/* fallthrough */
		case F_CHARS:
		case F_NSTR:
			z = memchr(p, 0, n);
			asc_json_str(d->o, (const char *)p, z ? (size_t)(z - (const char *)p) : n);
			break;
		case F_XARR:
		case F_SARR:
			dump_array(d, f, p, n);
			break;
		case F_HEX:
			asc_out_putc(d->o, '"');
			for (; n; n--)
				asc_out_printf(d->o, "%02x", *p++);
			asc_out_putc(d->o, '"');
			break;
		case F_NAME:
			asc_json_cstr(d->o, f->name(get_u(p, f->width)));
			break;
		case F_FN:
			f->print(d, rec);
			break;
		}
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
	int c, ret = 0, bad = 0, err = 0;

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
	/* a failed write (a full disk, /dev/full, a closed pipe) ends the dump */
	while (!out.err && (ret = asc_capture_next(r, &rec, &size)) == 1)
		if (dump_record(&d, rec, size))
			bad++;
	if (ret < 0) {
		asc_err("dump: reading %s: %s\n", argv[optind], strerror(-ret));
		err = ret;
	}
	ret = asc_out_close(&out);
	if (ret) {
		asc_err("dump: writing standard output: %s\n", strerror(-ret));
		asc_capture_free(r);
		return err ? err : -EIO;
	}
	asc_capture_info(r, &info);
	if (info.damaged) {
		asc_err("dump: %s is damaged: %s; %llu records in %llu frames read, "
			"%llu bytes after them not read\n",
			argv[optind], info.damage, (unsigned long long)info.records_read,
			(unsigned long long)info.frames_read,
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
