// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * convert.c - `ascbpf convert CAPTURE [-o DIR]`: the torch_npu.profiler
 * output (docs/torch_npu_format.md) from a capture.
 *
 * One *_ascend_pt directory per RECORD_AND_SAVE cycle of the schedule (one
 * for the whole capture when it has no step records).  Everything is
 * streamed from the joined view (correlate.h) straight into files; nothing
 * builds a JSON or CSV document in memory.
 *
 * The dialect is the one of the reference sample (torch_npu 2.1 / CANN 8.0:
 * "Block Dim", no Device_id column, "NPU" process labels, msprof sort
 * indices 7/13/19/23), so the output compares with the sample header for
 * header.  Values ascbpf cannot know are written as torch_npu writes an
 * unknown: "N/A" in CANN-derived kernel columns (OP State, HF32 Eligible,
 * shapes, formats, Context ID, PMU columns), empty where torch_npu leaves
 * None.
 *
 * This file holds the command and the run directories; conv.h lists the
 * files that write the outputs.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "ascbpf_events.h"
#include "capture/capture.h"
#include "commands.h"
#include "convert/convert.h"
#include "convert/conv.h"
#include "convert/db_export.h"
#include "analysis/comm_align.h"
#include "analysis/correlate.h"
#include "lib/csv_writer.h"
#include "lib/json_writer.h"
#include "lib/log.h"
#include "lib/safeio.h"
#include "schedule.h"

/* ---- small helpers ---- */

uint32_t conv_fmt_pid(uint32_t pid, uint32_t sort, uint32_t dev)
{
	return (uint32_t)((pid << 10) | (sort << 5) | (dev & 31));
}

/* Step index (in c->steps) of a step id, or -1. */
static int32_t step_index(const struct asc_corr *c, int64_t id)
{
	size_t lo = 0, hi = c->nr_steps;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if ((int64_t)c->steps[mid].step < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->nr_steps && (int64_t)c->steps[lo].step == id ? (int32_t)lo : -1;
}

/*
 * Is an item of step id `step` part of cycle `cycle` (-1: the whole capture)?
 * The one cycle filter of the text files and the databases: recorded steps
 * of that cycle.
 */
int conv_step_in_cycle(const struct asc_corr *c, int cycle, int32_t step)
{
	int32_t i;

	if (cycle < 0)
		return 1;
	if (step < 0)
		return 0;
	i = step_index(c, step);
	return i >= 0 && c->steps[i].cycle == cycle && asc_sched_recording(c->steps[i].state);
}

/* Is an item of step id `step` part of the cycle being written? */
int conv_in_cycle(const struct conv *v, int32_t step)
{
	return conv_step_in_cycle(v->c, v->cycle, step);
}

/* "%.3f" without trailing zeros ("53.741", "0", "4.5"), as CANN's summaries read. */
static void fmt_3(char *buf, size_t len, double v)
{
	char *p;

	snprintf(buf, len, "%.3f", v);
	p = buf + strlen(buf) - 1;
	while (*p == '0')
		*p-- = '\0';
	if (*p == '.')
		*p = '\0';
	if (!strcmp(buf, "-0"))
		strcpy(buf, "0");
}

void conv_csv_3(struct asc_csv *c, double v)
{
	char buf[48];

	fmt_3(buf, sizeof(buf), v);
	asc_csv_cstr(c, buf);
}

/* The same for an integer ns shown in us, without floating point. */
void conv_csv_3ns(struct asc_csv *c, int64_t ns)
{
	char buf[48];
	int n = asc_fmt_us_float(buf, ns);

	if (n > 2 && !strcmp(buf + n - 2, ".0"))
		n -= 2;
	asc_csv_cell(c, buf, n);
}

static void join(char *dst, size_t len, const char *a, const char *b)
{
	if (snprintf(dst, len, "%s/%s", a, b) >= (int)len)
		dst[0] = '\0';
}

int conv_open_out(struct conv *v, struct asc_out *o, const char *dir, const char *name)
{
	char path[PATH_MAX + 64];

	(void)v;
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	return asc_out_open(o, path, 1);
}

int conv_close_out(struct conv *v, struct asc_out *o, const char *name)
{
	int err = asc_out_close(o);

	if (err) {
		asc_err("convert: writing %s: %s\n", name, strerror(-err));
		if (!v->err)
			v->err = err;
	}
	return err;
}

/* ---- directories ---- */

static int copy_file(const char *src, const char *dst)
{
	char buf[1 << 16];
	int in, out, err = 0;
	ssize_t n;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = asc_file_create_path(dst, 1); /* never through a link (lib/safeio.h) */
	if (out < 0) {
		close(in);
		return out;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n) {
			err = -EIO;
			break;
		}
	if (n < 0)
		err = -errno;
	close(in);
	if (close(out) && !err)
		err = -errno;
	return err;
}

/* "{worker}_{pid}_{YYYYmmddHHMMSSmmm}_ascend_pt" for a wall-clock ns (local time). */
static void run_name(struct conv *v, int64_t wall_ns, char *buf, size_t len)
{
	char host[256] = "localhost";
	time_t secs;
	struct tm tm;
	char stamp[32];
	int64_t ms = wall_ns / 1000000;

	/* two cycles less than 1 ms apart would get one name: keep them apart */
	if (ms <= v->last_stamp_ms)
		ms = v->last_stamp_ms + 1;
	v->last_stamp_ms = ms;
	wall_ns = ms * 1000000;
	const char *worker = v->opts->worker_name ?
				     v->opts->worker_name :
				     asc_corr_config(v->c, "worker_name"); /* as traced */

	if (!worker || !*worker || strchr(worker, '/') || strlen(worker) >= 226) {
		gethostname(host, sizeof(host) - 1);
		worker = host;
	}
	secs = (time_t)(wall_ns / 1000000000) + v->c->info.utc_offset_s;
	gmtime_r(&secs, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d%H%M%S", &tm);
	snprintf(buf, len, "%s_%u_%s%03d_ascend_pt", worker, v->pid, stamp,
		 (int)((wall_ns / 1000000) % 1000));
}

/*
 * DIR/NAME and its ASCEND_PROFILER_OUTPUT, made without following a link
 * (lib/safeio.h): NAME is predictable, and another user may have planted a
 * link there.  An existing NAME is kept (exit 2) unless --force: then a link
 * or file there is removed (never its target), and in a directory the two
 * subdirectories ascbpf writes are removed and made anew.
 */
static int make_run_dir(struct conv *v, const char *name)
{
	const char *out = v->opts->out_dir;
	int outfd, runfd, fd, err = 0;
	struct stat st;

	outfd = asc_dir_open(out, 1, NULL);
	if (outfd < 0) {
		asc_err("convert: cannot create %s: %s%s\n", out, strerror(-outfd),
			asc_safeio_hint(outfd));
		return outfd;
	}
	if (!fstatat(outfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (!v->opts->force) {
			asc_err("convert: %s exists; use --force to overwrite it\n", v->dir);
			close(outfd);
			return -EEXIST;
		}
		if (!S_ISDIR(st.st_mode))
			err = asc_rm_tree_at(outfd, name);
	}
	runfd = err ? err : asc_subdir_open(outfd, name, NULL);
	close(outfd);
	if (runfd < 0) {
		asc_err("convert: cannot create %s: %s%s\n", v->dir, strerror(-runfd),
			asc_safeio_hint(runfd));
		return runfd;
	}
	err = asc_rm_tree_at(runfd, "ASCEND_PROFILER_OUTPUT");
	if (!err)
		err = asc_rm_tree_at(runfd, "ascbpf");
	fd = err ? err : asc_subdir_open(runfd, "ASCEND_PROFILER_OUTPUT", NULL);
	close(runfd);
	if (fd < 0) {
		asc_err("convert: cannot create %s: %s%s\n", v->out, strerror(-fd),
			asc_safeio_hint(fd));
		return fd;
	}
	close(fd);
	return 0;
}

static int convert_cycle(struct conv *v, const char *capture)
{
	const struct asc_corr *c = v->c;
	int64_t start = v->cycle >= 0 ? c->cycles[v->cycle].start_ns : c->info.start_wall_ns;
	char name[400], sub[PATH_MAX + 32];
	int err;

	run_name(v, start, name, sizeof(name));
	snprintf(v->dir, sizeof(v->dir), "%s/%s", v->opts->out_dir, name);
	join(v->out, sizeof(v->out), v->dir, "ASCEND_PROFILER_OUTPUT");
	err = make_run_dir(v, name);
	if (err)
		return err;
	conv_profiler_info(v);
	if (v->export_type & ASC_EXPORT_TEXT) {
		conv_profiler_metadata(v);
		join(sub, sizeof(sub), v->out, "trace_view.json");
		if (conv_write_trace(v, sub) && !v->err)
			v->err = -EIO;
		conv_kernel_details(v);
		conv_operator_details(v);
		conv_step_trace_time(v);
		conv_communication(v);
		conv_memory_record(v);
		conv_operator_memory(v);
		if (v->level >= 1) {
			conv_op_statistic(v);
			conv_api_statistic(v);
		}
	}
	if (v->export_type & ASC_EXPORT_DB) {
		struct asc_db_opts dbo = {
			.out = v->out, .cycle = v->cycle, .level = v->level, .comm = v->comm
		};

		err = asc_db_export(v->c, &dbo);
		if (err && !v->err)
			v->err = err;
	}
	/* the capture itself, for `ascbpf report DIR` (a hard link when on one file system) */
	join(sub, sizeof(sub), v->dir, "ascbpf");
	err = asc_dir_open(sub, 1, NULL);
	if (err < 0) {
		asc_err("convert: cannot create %s: %s%s\n", sub, strerror(-err),
			asc_safeio_hint(err));
		return err;
	}
	close(err);
	join(sub, sizeof(sub), v->dir, "ascbpf/capture.ascb");
	if (link(capture, sub)) {
		err = copy_file(capture, sub);
		if (err) {
			asc_err("convert: cannot copy the capture to %s: %s\n", sub,
				strerror(-err));
			return err;
		}
	}
	if (!v->err)
		asc_info("wrote %s\n", v->dir);
	return v->err;
}

/*
 * gzip-compresses the file tmp into path (created as asc_out_open would: O_EXCL
 * unless force), streaming, so memory stays bounded whatever the trace's size.
 */
static int gzip_file(const char *tmp, const char *path, int force)
{
	char buf[1 << 16], name[NAME_MAX + 1], tname[NAME_MAX + 1];
	ssize_t n;
	gzFile gz;
	int in, out, dirfd, err = 0;

	in = open(tmp, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	/* never through a link: a new name O_EXCL, a replacement through a temporary name */
	dirfd = asc_parent_open(path, name, sizeof(name));
	out = dirfd < 0 ? dirfd :
	      force	? asc_tmp_create(dirfd, name, tname, sizeof(tname)) :
			  asc_file_create(dirfd, name, 0);
	if (out < 0) {
		asc_err("cannot create %s: %s%s\n", path, strerror(-out), asc_safeio_hint(out));
		if (dirfd >= 0)
			close(dirfd);
		close(in);
		return out;
	}
	gz = gzdopen(out, "wb");
	if (!gz) {
		close(out);
		err = -ENOMEM;
		goto out;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (gzwrite(gz, buf, (unsigned int)n) != (int)n) {
			err = -EIO;
			break;
		}
	if (n < 0 && !err)
		err = -errno;
	if (gzclose(gz) != Z_OK && !err)
		err = -EIO;
out:
	if (force && !err)
		err = asc_tmp_commit(dirfd, tname, name);
	else if (force)
		unlinkat(dirfd, tname, 0);
	close(dirfd);
	close(in);
	if (err)
		asc_err("convert: writing %s: %s\n", path, strerror(-err));
	return err;
}

/*
 * The trace array into path; a path ending in ".gz" is written gzip-compressed,
 * as torch.profiler's export_chrome_trace does (it writes a temporary JSON file
 * and gzips it): chrome://tracing and Perfetto open .json.gz directly.
 */
static int write_chrome_file(struct conv *v, const char *path)
{
	size_t len = strlen(path);
	char tmp[PATH_MAX];
	int fd, err;

	if (len < 3 || strcmp(path + len - 3, ".gz"))
		return conv_write_trace(v, path);
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		asc_err("convert: cannot create a temporary file beside %s: %s\n", path,
			strerror(-err));
		return err;
	}
	close(fd);
	err = conv_write_trace(v, tmp);
	if (!err)
		err = gzip_file(tmp, path, v->opts->force);
	unlink(tmp);
	return err;
}

/* --export chrome: the trace_view array alone, in one file per cycle. */
static int export_chrome(struct conv *v)
{
	const char *out = v->opts->out_dir;
	char path[PATH_MAX];
	int err;

	if (v->cycle > 0 || (v->c->nr_cycles > 1)) {
		size_t ol = strlen(out);
		/* trace.json.gz -> trace_0.json.gz: the cycle before both extensions */
		const char *dot = ol > 8 && !strcmp(out + ol - 8, ".json.gz") ? out + ol - 8 :
										strrchr(out, '.');
		int base = dot && !strchr(dot, '/') ? (int)(dot - out) : (int)strlen(out);

		snprintf(path, sizeof(path), "%.*s_%d%s", base, out, v->cycle < 0 ? 0 : v->cycle,
			 dot && !strchr(dot, '/') ? dot : ".json");
	} else {
		snprintf(path, sizeof(path), "%s", out);
	}
	if (!v->opts->force && !access(path, F_OK)) {
		asc_err("convert: %s exists; use --force to overwrite it\n", path);
		return -EEXIST;
	}
	err = write_chrome_file(v, path);
	if (!err)
		asc_info("wrote %s\n", path);
	return err ? err : v->err;
}

/*
 * The communication view of the capture (analysis/comm.h): a second read of
 * its records.  A capture that cannot be read again (or has no HCCL
 * records) has an empty one; only memory exhaustion fails.
 */
static int conv_load_comm(struct conv *v, const char *capture, struct asc_comm *m)
{
	/* a second pass only for a capture with HCCL records */
	struct asc_capture_reader *r = capture && v->c->info.hccl_records ?
					       asc_capture_open(capture) :
					       NULL;
	int err = r ? asc_comm_build(r, v->c, m) : 0;

	if (r)
		asc_capture_free(r);
	v->comm = m;
	if (err == -ENOMEM)
		return err;
	if (err)
		asc_warn("convert: the HCCL records of %s could not be read (%s): no "
			 "communication output\n",
			 capture, strerror(-err));
	return 0;
}

int asc_convert(const struct asc_corr *c, const char *capture, const struct asc_convert_opts *opts)
{
	struct asc_comm comm = { 0 };
	struct conv v = { 0 };
	const char *lv;
	size_t i;
	int err = 0, ret;

	v.c = c;
	v.opts = opts;
	v.capture = capture;
	v.export_type = opts->export_type ? opts->export_type : ASC_EXPORT_TEXT;
	v.pid = c->info.pid;
	v.has_steps = c->nr_steps > 0;
	v.last_stamp_ms = INT64_MIN;
	lv = asc_corr_config(c, "level");
	v.level = opts->level >= 0 ? opts->level : lv ? atoi(lv) : 0;
	if (v.level < 0 || v.level > 2)
		v.level = 0;
	if (v.has_steps && !c->nr_cycles) {
		asc_err("convert: the capture has %zu steps but none was recorded (schedule)\n",
			c->nr_steps);
		return -ENODATA;
	}
	if (conv_load_comm(&v, capture, &comm))
		return -ENOMEM;
	for (i = 0; i < (v.has_steps ? c->nr_cycles : 1); i++) {
		v.cycle = v.has_steps ? (int)i : -1;
		v.err = 0;
		ret = opts->chrome ? export_chrome(&v) : convert_cycle(&v, capture);
		if (ret && !err)
			err = ret;
		if (ret == -EEXIST)
			break;
	}
	asc_comm_free(&comm);
	/* here, not in cmd_convert: `ascbpf trace` converts through this function too */
	if (c->info.batch_unattributed)
		asc_warn("convert: %llu kernels of batched submissions (several launches in "
			 "one halSqTaskSend) could not be joined to the launch that made them: "
			 "they have no op or API\n",
			 (unsigned long long)c->info.batch_unattributed);
	return err;
}

/*
 * With the job's other ranks (--peer), the shift that puts this capture's
 * host clock on the lowest rank's (analysis/comm_align.h); 0 without.
 */
static int64_t job_shift(const char *capture, const struct asc_convert_opts *opts)
{
	int64_t shift = 0;

	if (opts->nr_peers && asc_comm_capture_shift(capture, opts->peers, opts->nr_peers, &shift))
		shift = 0;
	return shift;
}

int asc_convert_file(const char *capture, const struct asc_convert_opts *opts, const char *who)
{
	struct asc_capture_reader *r;
	struct asc_corr *c;
	int err;

	r = asc_capture_open(capture);
	if (!r) {
		err = -errno;
		asc_err("%s: cannot read back %s: %s\n", who, capture, strerror(-err));
		return err;
	}
	c = asc_corr_build_shifted(r, job_shift(capture, opts));
	if (!c) {
		err = -errno;
		asc_err("%s: cannot correlate %s: %s\n", who, capture, strerror(-err));
		asc_capture_free(r);
		return err;
	}
	err = asc_convert(c, capture, opts);
	asc_corr_free(c);
	asc_capture_free(r);
	return err;
}

static void convert_usage(FILE *f)
{
	fprintf(f,
		"Usage: ascbpf convert CAPTURE [-o DIR] [--level 0|1|2] [--worker-name NAME]\n"
		"                      [--export text|chrome] [--export-type text|db|text,db]\n"
		"                      [--force]\n"
		"  Writes DIR/{worker}_{pid}_{YYYYmmddHHMMSSmmm}_ascend_pt/ (default DIR ./result)\n"
		"  as torch_npu.profiler does, one per RECORD_AND_SAVE cycle.\n"
		"  -o DIR            output directory (with --export chrome: the output file)\n"
		"  --level N         profiler level of the output (default: as traced, else 0)\n"
		"  --worker-name S   worker name instead of the host name\n"
		"  --export chrome   one Chrome trace JSON file (as export_chrome_trace;\n"
		"                    gzip-compressed when the -o name ends in .gz)\n"
		"  --export-type T   text (default), db (ascend_pytorch_profiler[_RANK].db and\n"
		"                    analysis.db, as torch_npu's export_type db) or text,db\n"
		"  --force           overwrite an existing output directory\n"
		"  --peer CAPTURE    a capture of another rank of the job (repeatable): the\n"
		"                    global ranks of its communicators (parallel_group_info)\n"
		"  --gzip            refused: the TensorBoard plugin does not read trace_view.json.gz\n");
}

int cmd_convert(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "level", required_argument, NULL, 'l' },
		{ "worker-name", required_argument, NULL, 'w' },
		{ "export", required_argument, NULL, 'e' },
		{ "export-type", required_argument, NULL, 't' },
		{ "force", no_argument, NULL, 'f' },
		{ "gzip", no_argument, NULL, 'z' },
		{ "peer", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct asc_convert_opts o = { .out_dir = NULL, .level = -1 };
	static const char *peers[256];
	struct asc_capture_reader *r;
	struct asc_corr *c;
	char *end;
	int ch, err;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "o:fh", opts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			o.out_dir = optarg;
			break;
		case 'l':
			o.level = strtol(optarg, &end, 10);
			if (*end || o.level < 0 || o.level > 2) {
				asc_err("convert: --level must be 0, 1 or 2 (got '%s')\n", optarg);
				return -EINVAL;
			}
			break;
		case 'w':
			if (!*optarg || strlen(optarg) >= 226 || strchr(optarg, '/')) {
				asc_err("convert: --worker-name must be 1..225 characters without '/'\n");
				return -EINVAL;
			}
			o.worker_name = optarg;
			break;
		case 'e':
			if (!strcmp(optarg, "chrome")) {
				o.chrome = 1;
			} else if (strcmp(optarg, "text")) {
				asc_err("convert: --export must be 'text' or 'chrome' (got '%s')\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 't':
			o.export_type = asc_export_type_parse(optarg);
			if (o.export_type < 0) {
				asc_err("convert: --export-type must be text, db or text,db "
					"(got '%s')\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'f':
			o.force = 1;
			break;
		case 'p':
			if (o.nr_peers == sizeof(peers) / sizeof(peers[0])) {
				asc_err("convert: at most %zu --peer captures\n", o.nr_peers);
				return -EINVAL;
			}
			peers[o.nr_peers++] = optarg;
			o.peers = peers;
			break;
		case 'z':
			asc_err("convert: --gzip is not supported: torch-tb-profiler-ascend only "
				"loads a plain ASCEND_PROFILER_OUTPUT/trace_view.json\n");
			return -EINVAL;
		case 'h':
			convert_usage(stdout);
			return 0;
		default:
			convert_usage(stderr);
			return -EINVAL;
		}
	}
	if (optind != argc - 1) {
		asc_err("convert: expected exactly one capture file\n");
		convert_usage(stderr);
		return -EINVAL;
	}
	if (o.chrome && (o.export_type & ASC_EXPORT_DB)) {
		asc_err("convert: --export chrome writes one trace file: no --export-type db\n");
		return -EINVAL;
	}
	if (!o.out_dir)
		o.out_dir = o.chrome ? "trace.json" : "./result";
	r = asc_capture_open(argv[optind]);
	if (!r)
		return -errno;
	c = asc_corr_build_shifted(r, job_shift(argv[optind], &o));
	asc_capture_free(r);
	if (!c)
		return -errno;
	if (!c->info.pid && c->info.damaged) {
		/* the damage hid the process record: say what happened, as dump and report do */
		asc_err("convert: %s is damaged (%s; %llu bytes not read): nothing to convert "
			"before the damage\n",
			argv[optind], c->info.damage, (unsigned long long)c->info.bytes_unread);
		asc_corr_free(c);
		return -EIO;
	}
	if (!c->info.pid) {
		asc_err("convert: %s has no process record (not written by ascbpf trace?)\n",
			argv[optind]);
		asc_corr_free(c);
		return -EINVAL;
	}
	err = asc_convert(c, argv[optind], &o);
	if (c->info.bad_records)
		asc_warn("convert: %llu malformed records were skipped\n",
			 (unsigned long long)c->info.bad_records);
	if (c->info.bpf_drops || c->info.devtask_drops || c->info.lost)
		asc_warn("convert: the tracer lost records (%llu ring-buffer drops, %llu device "
			 "records, %llu other): the output is incomplete\n",
			 (unsigned long long)c->info.bpf_drops,
			 (unsigned long long)c->info.devtask_drops,
			 (unsigned long long)c->info.lost);
	if (c->info.before_devchannel)
		asc_info("convert: %llu submissions were made before the device channel started "
			 "(the tasks completed before it opened): no kernel row, nothing lost\n",
			 (unsigned long long)c->info.before_devchannel);
	if (c->info.damaged) {
		asc_err("convert: %s is damaged (%s): converted up to the last good frame, "
			"%llu bytes after it were lost\n",
			argv[optind], c->info.damage, (unsigned long long)c->info.bytes_unread);
		if (!err)
			err = -EBADMSG;
	} else if (!c->info.ended) {
		/* whole frames but no end record: the tracer died between two frames */
		char ts[40];

		ts[asc_fmt_us(ts, c->info.last_ts_ns)] = '\0';
		asc_err("convert: %s: the trace did not end (ascbpf killed?): it has no end "
			"record, records after %s us (the last one) may be missing\n",
			argv[optind], ts);
		if (!err)
			err = -EBADMSG;
	}
	asc_corr_free(c);
	return err;
}
