// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * trace.c - `ascbpf trace`: attach to running processes (-p PID, --comm NAME)
 * or to a command (-- CMD ARGS), drain the ring buffer into one capture file
 * per process, and convert.
 *
 * Lifecycle, one cleanup path (trace_cleanup):
 *   parse -> check environment -> resolve targets and plans -> output dir ->
 *   open skeleton -> configure (.rodata, ring size) -> load -> fill maps ->
 *   attach (tracepoints, loader hook, plan sites) -> write capture headers ->
 *   poll (timer; wake-ups only when the ring fills) -> stop (signal,
 *   --duration, every target gone) -> detach -> drain -> stats, clocks ->
 *   close captures -> convert -> one summary line.
 *
 * Errors before tracing starts remove everything this run created (nothing
 * half-written) and return -errno; main maps the environment ones to exit 2.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "ascbpf_events.h"
#include "schedule.h"	/* before the skeleton: its .rodata holds a struct asc_sched */
#include "ascbpf.skel.h"
#include "ascbpf_maps.h"
#include "trace/attach.h"
#include "trace/features.h"
#include "capture/capture.h"
#include "commands.h"
#include "trace/consumer.h"
#include "convert/convert.h"
#include "analysis/correlate.h"
#include "trace/devtime.h"
#include "discovery/elfsym.h"
#include "trace/launch.h"
#include "lib/log.h"
#include "discovery/probes.h"
#include "lib/procmaps.h"
#include "discovery/pystack.h"
#include "discovery/pytorch.h"
#include "capture/records.h"
#include "schedule.h"
#include "trace/trace.h"

#define MAX_TARGETS		64
#define ASC_MAX_DEVREADERS	64	/* cards read at once */

/*
 * One profiling-channel reader per card, shared by every traced process
 * that uses the card: a card's session delivers the tasks of all its
 * processes (records carry no pid; the converter joins them to a process
 * through its SQE records), and this process may hold one session per card.
 */
struct target;
#define DEVREADER_HISTORY	65536	/* device records kept for processes joining later */
struct devreader {
	uint32_t dev;
	struct asc_devtime *dt;
	struct target *members[MAX_TARGETS];
	int nr_members;
	/*
	 * The start DEVCLOCK and the last DEVREADER_HISTORY device records
	 * (under capture_lock): a process joining a reader that already runs
	 * (a forked rank on its parent's card) gets them, so its tasks that
	 * completed between its first submission and its join keep their times.
	 */
	struct asc_devclock start_clock;
	int have_clock;
	struct asc_devtask *hist;
	size_t hist_head, hist_nr;
};
#define POLL_MS			100	/* consumer timer: the ring is drained this often */

/* What a probe id stands for (index = id). */
struct probe_info {
	uint16_t layer;
	uint16_t kind;
	uint32_t flags;
	uint64_t offset;
	char *lib;
	char *sym;
	pid_t pid;
	int used;
};

/*
 * Submissions of one process made before its device channel started, and
 * whether their device records reached its capture (ASC_LOST_BEFORE_DEVCHANNEL).
 * The channel of a process that starts later (-- CMD, --comm, forks) opens
 * when the main loop sees its TSDRV bind, after its gate opened: a task
 * completing in between has a submission and no device record.
 *
 * Keys are (device, stream id, task id).  Every SQE header is kept while the
 * process has no channel, then those stamped before open_ns.  Device records
 * are marked SEEN on keys already kept, and inserted while the set is young
 * (young_drains > 0: until two ring drains after the channel opened), since
 * a submission stamped before open_ns may still wait in the ring while its
 * device record comes from the reader thread.  At the end, the kept
 * submissions never SEEN are the count.
 *
 * Task ids repeat after 65536 tasks of a stream, so a long trace brings every
 * kept key back: its later device record must not mark the early submission
 * SEEN.  The card runs a stream's tasks in order and the reader delivers
 * their records in order, and task ids grow by one per task of a stream, so
 * once a record comes for a task at or after the stream's first submission
 * stamped after open_ns (within half the id space), every earlier task of
 * that stream has had its record: the stream is then settled and later
 * records of it are ignored.  Guarded by capture_lock (the reader threads
 * deliver device records).
 */
#define PRECHAN_SEEN	0x80000000u
#define PRECHAN_MAX	(1u << 20)	/* entries kept at most (then counted as overflow) */
#define PRECHAN_STREAMS	256		/* (device, stream) pairs followed for settling */
struct prechan {
	int on;			/* collecting (NPU activities, channel not failed) */
	int ended_first;	/* the process was gone before a channel could start for it */
	uint64_t open_ns;	/* CLOCK_MONOTONIC when the channel was open; 0: not yet */
	int young_drains;	/* device records are inserted while > 0 */
	uint64_t *keys;		/* key + 1 (0: empty slot) */
	uint32_t *vals;		/* submissions kept | PRECHAN_SEEN */
	size_t cap, nr;
	uint64_t overflow;	/* submissions not kept (set full) */
	struct prechan_stream {
		uint32_t dev;
		uint16_t stream;
		uint16_t first_after;	/* task id of its first submission after open_ns */
		uint8_t has_first;
		uint8_t settled;	/* its records no longer concern kept submissions */
	} streams[PRECHAN_STREAMS];
	unsigned int nr_streams;	/* beyond PRECHAN_STREAMS a stream never settles */
};

static uint64_t prechan_key(uint32_t dev, uint16_t stream, uint16_t task)
{
	return ((uint64_t)dev << 32 | (uint32_t)stream << 16 | task) + 1;
}

static size_t prechan_home(uint64_t key, size_t cap)
{
	return (key * 0x9e3779b97f4a7c15ull) >> 20 & (cap - 1);
}

/* Doubles the table (load kept under 1/2); -ENOMEM, or -ENOSPC at PRECHAN_MAX. */
static int prechan_grow(struct prechan *p)
{
	size_t ncap = p->cap ? p->cap * 2 : 1024, i, j;
	uint64_t *nk;
	uint32_t *nv;

	if (p->nr >= PRECHAN_MAX)
		return -ENOSPC;
	nk = calloc(ncap, sizeof(*nk));
	nv = calloc(ncap, sizeof(*nv));
	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	for (j = 0; j < p->cap; j++) {
		if (!p->keys[j])
			continue;
		for (i = prechan_home(p->keys[j], ncap); nk[i]; i = (i + 1) & (ncap - 1))
			;
		nk[i] = p->keys[j];
		nv[i] = p->vals[j];
	}
	free(p->keys);
	free(p->vals);
	p->keys = nk;
	p->vals = nv;
	p->cap = ncap;
	return 0;
}

/* The value of key; with insert, a new zero one if absent (NULL if the set is full). */
static uint32_t *prechan_slot(struct prechan *p, uint64_t key, int insert)
{
	size_t i;

	if (p->cap)
		for (i = prechan_home(key, p->cap); p->keys[i]; i = (i + 1) & (p->cap - 1))
			if (p->keys[i] == key)
				return &p->vals[i];
	if (!insert || ((p->nr + 1) * 2 > p->cap && prechan_grow(p)))
		return NULL;
	for (i = prechan_home(key, p->cap); p->keys[i]; i = (i + 1) & (p->cap - 1))
		;
	p->keys[i] = key;
	p->vals[i] = 0;
	p->nr++;
	return &p->vals[i];
}

static struct prechan_stream *prechan_stream(struct prechan *p, uint32_t dev, uint16_t stream)
{
	unsigned int i;

	for (i = 0; i < p->nr_streams; i++)
		if (p->streams[i].dev == dev && p->streams[i].stream == stream)
			return &p->streams[i];
	if (p->nr_streams == PRECHAN_STREAMS)
		return NULL;
	p->streams[i] = (struct prechan_stream){ .dev = dev, .stream = stream };
	p->nr_streams++;
	return &p->streams[i];
}

/*
 * An SQE record of the process: keeps its headers stamped before the channel
 * opened; of the later ones notes each stream's first.
 */
static void prechan_on_sqe(struct prechan *p, const struct asc_sqe *q)
{
	uint32_t k, n = q->nr_kept < ASC_MAX_SQES ? q->nr_kept : ASC_MAX_SQES;

	if (!p->on)
		return;
	if (p->open_ns && q->hdr.ts_ns >= p->open_ns) {
		for (k = 0; k < n; k++) {
			struct prechan_stream *st = prechan_stream(p, q->dev_id,
								   q->sqe[k].stream_id);

			if (st && !st->has_first) {
				st->first_after = q->sqe[k].task_id;
				st->has_first = 1;
			}
		}
		return;
	}
	for (k = 0; k < n; k++) {
		uint32_t *v = prechan_slot(p, prechan_key(q->dev_id, q->sqe[k].stream_id,
							  q->sqe[k].task_id), 1);

		if (v)
			(*v)++;
		else
			p->overflow++;
	}
}

/* A device record delivered to the process's capture. */
static void prechan_on_devtask(struct prechan *p, const struct asc_devtask *d)
{
	struct prechan_stream *st;
	uint32_t *v;

	if (!p->on)
		return;
	st = prechan_stream(p, d->dev_id, d->stream_id);
	if (st && st->settled)
		return;
	if (st && st->has_first && (uint16_t)(d->task_id - st->first_after) < 0x8000) {
		st->settled = 1;
		return;
	}
	v = prechan_slot(p, prechan_key(d->dev_id, d->stream_id, d->task_id), p->young_drains > 0);
	if (v)
		*v |= PRECHAN_SEEN;
}

/* Kept submissions without a device record. */
static uint64_t prechan_count(const struct prechan *p)
{
	uint64_t n = p->overflow;
	size_t i;

	for (i = 0; i < p->cap; i++)
		if (p->keys[i] && !(p->vals[i] & PRECHAN_SEEN))
			n += p->vals[i];
	return n;
}

static void prechan_free(struct prechan *p)
{
	free(p->keys);
	free(p->vals);
	p->keys = NULL;
	p->vals = NULL;
	p->cap = p->nr = 0;
	p->on = 0;
}

/* target.launch_marks: Level0 launch marks (attach_launch_marks) */
#define LAUNCH_MARKS_OFF	0	/* no batched send seen */
#define LAUNCH_MARKS_WANTED	1	/* seen: attach from the main loop */
#define LAUNCH_MARKS_ON		2	/* attached (or tried once) */

struct target {
	pid_t pid;
	int rank;
	int device;
	int is_child;
	int gone;
	int rescan;			/* loader hook fired: rescan the maps */
	int launch_marks;		/* Level0: LAUNCH_MARKS_* (attach_launch_marks) */
	char comm[16];
	char capture_path[PATH_MAX];
	struct asc_capture_writer *w;
	struct asc_probe_plan *plans;	/* the first plan and one per rescan */
	size_t nr_plans;
	size_t nr_attached;		/* sites attached over all plans */
	size_t nr_missing_warned;
	uint64_t records;
	int dev_started;		/* joined the device reader of its device */
	struct prechan pre;		/* submissions before its device channel started */
	int bind_dev;			/* 1 + device of a TSDRV bind seen, to join; 0: none */
	int adopted;			/* from --comm / a fork: gate opened after its attach */
	int from_adopt;			/* started after the trace: card from its bind */
	uint32_t *threads_seen;
	size_t nr_threads_seen;
	int step_attached;		/* --step LIB:SYMBOL site attached */
	int process_written;		/* PROCESS record (a child's only after its exec) */
	int capture_failed;		/* closing the capture reported a write error */
	int process_pending;		/* adopted, rank not set yet: PROCESS at bind or end */
	char *cmdline;			/* read when pending: the process may be gone */
	int cmdline_len;
	struct asc_maps maps;		/* last snapshot, for symbolising stacks after exit */
	int have_maps;
	struct asc_pytorch *pt;		/* real PyTorch hooks (shapes, stacks), or NULL */
	int pt_failed;			/* tried once and could not: do not retry */
	struct asc_pystack_resolver *pyres;	/* PYSTACK -> PYFRAME while the target lives */
	uint64_t *ips;			/* --with-stack: distinct addresses (hash set) */
	size_t ips_cap, nr_ips;
};

struct trace {
	struct asc_trace_opts o;
	struct ascbpf_bpf *skel;
	struct asc_attach_set *set;
	struct bpf_link *tp_links[5];
	struct asc_ring rb;		/* the events ring (user/trace/trace.consumer.h) */
	int rb_open;
	struct asc_consumer cons;
	struct target targets[MAX_TARGETS];
	int nr_targets;
	struct asc_child child;
	int have_child;
	struct probe_info *probes;
	size_t nr_probes;		/* ids 0 .. nr_probes-1 */
	uint16_t *layers;		/* consumer's layer table, mirrors probes */
	uint32_t next_id;
	uint32_t families;
	int created_outdir;
	uint64_t unrouted;
	uint64_t t_start_ns;
	struct asc_pytorch *select_pt;	/* PyTorch object of the plan being attached */
	int adopt_pending;		/* the BPF side announced a new process */
	void **early;			/* records of processes not adopted yet (bounded) */
	size_t nr_early;
	struct devreader *readers[ASC_MAX_DEVREADERS];
	int nr_readers;
	char outdir[PATH_MAX];
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* ---------------------------------------------------------------- options */

static void trace_usage(FILE *f)
{
	fprintf(f,
"Usage: ascbpf trace [OPTIONS] -p PID [-p PID ...]\n"
"       ascbpf trace [OPTIONS] --comm NAME\n"
"       ascbpf trace [OPTIONS] -- CMD [ARGS...]\n"
"\n"
"  -p, --pid PID            trace this running process (repeatable: one output each)\n"
"      --comm NAME          trace every process named NAME, also ones that start later\n"
"      --activities LIST    cpu,npu (default both): framework layer / CANN, driver, device\n"
"      --level N            as torch_npu's ProfilerLevel: 0 (default): aten ops, task queue,\n"
"                           kernels on the device; 1: + aclnn/aclop/aclrt API calls;\n"
"                           2: + rt*/hal* calls and driver ioctls\n"
"      --record-shapes      tensor shapes of aten ops (needs real PyTorch)\n"
"      --profile-memory     allocator events (PTA, GE, APP)\n"
"      --with-stack         user stack of every traced call, symbolised\n"
"      --schedule SPEC      skip_first=N,wait=N,warmup=N,active=N,repeat=N[,skip_first_wait=0|1]\n"
"      --step LIB:SYMBOL    step-boundary function (default: the probe table's step hook,\n"
"                           libtorch_npu.so:torch_npu::profiler::stepMarker(), which npu_model's\n"
"                           npu_train calls; 'none' disables steps)\n"
"      --step-py FUNC       a Python function whose every call is a step boundary\n"
"                           (real PyTorch: e.g. --step-py train_step)\n"
"      --duration S         stop after S seconds (default: until Ctrl-C or the targets exit)\n"
"      --ringbuf-size MB    ring buffer size, a power of two (default 16)\n"
"  -o, --output DIR         output directory (default ./result)\n"
"      --capture FILE       capture file (one target only; default DIR/ascbpf-PID.cap)\n"
"      --no-convert         keep only the capture file\n"
"      --force              write into a non-empty output directory\n"
"      --worker-name NAME   worker name of the *_ascend_pt directory\n"
"      --rank-env NAME      environment variable of the target holding its rank (RANK)\n"
"  -v, --verbose            debug messages\n");
}

static int parse_u32(const char *s, uint32_t *v, const char *what)
{
	char *end;
	unsigned long long x;

	errno = 0;
	if (!s || !*s || *s == '-' || *s == '+')
		goto bad;
	x = strtoull(s, &end, 10);
	if (errno || *end || x > UINT32_MAX)
		goto bad;
	*v = x;
	return 0;
bad:
	asc_err("trace: %s: '%s' is not a non-negative integer\n", what, s ? s : "");
	return -EINVAL;
}

int asc_trace_parse_schedule(const char *spec, struct asc_sched *s)
{
	char *copy, *tok, *save = NULL;
	int err = 0;

	memset(s, 0, sizeof(*s));
	copy = strdup(spec);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		uint32_t v;

		if (!eq) {
			asc_err("trace: --schedule: '%s' is not key=value\n", tok);
			err = -EINVAL;
			break;
		}
		*eq = 0;
		err = parse_u32(eq + 1, &v, tok);
		if (err)
			break;
		if (!strcmp(tok, "skip_first"))
			s->skip_first = v;
		else if (!strcmp(tok, "wait"))
			s->wait = v;
		else if (!strcmp(tok, "warmup"))
			s->warmup = v;
		else if (!strcmp(tok, "active"))
			s->active = v;
		else if (!strcmp(tok, "repeat"))
			s->repeat = v;
		else if (!strcmp(tok, "skip_first_wait")) {
			if (v > 1) {
				asc_err("trace: --schedule: skip_first_wait must be 0 or 1\n");
				err = -EINVAL;
				break;
			}
			s->skip_first_wait = v;
		} else {
			asc_err("trace: --schedule: unknown key '%s' (skip_first, wait, warmup, "
				"active, repeat, skip_first_wait)\n", tok);
			err = -EINVAL;
			break;
		}
	}
	free(copy);
	if (err)
		return err;
	if (s->active == 0)
		asc_warn("trace: --schedule: active=0 becomes 1, as torch_npu does\n");
	if (s->warmup == 0)
		asc_dbg("trace: --schedule without warmup\n");
	s->enabled = 1;
	asc_sched_sanitise(s);
	return 0;
}

int asc_trace_parse_activities(const char *list, uint32_t *act)
{
	char *copy, *tok, *save = NULL;
	int err = 0;

	*act = 0;
	copy = strdup(list);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcasecmp(tok, "cpu")) {
			*act |= ASC_ACT_CPU;
		} else if (!strcasecmp(tok, "npu")) {
			*act |= ASC_ACT_NPU;
		} else {
			asc_err("trace: --activities: unknown activity '%s' (cpu, npu)\n", tok);
			err = -EINVAL;
			break;
		}
	}
	free(copy);
	if (!err && !*act) {
		asc_err("trace: --activities: empty list\n");
		err = -EINVAL;
	}
	return err;
}

enum {
	OPT_COMM = 256, OPT_ACT, OPT_LEVEL, OPT_SHAPES, OPT_MEM, OPT_STACK, OPT_SCHED, OPT_STEP,
	OPT_DURATION, OPT_RINGBUF, OPT_CAPTURE, OPT_NOCONV, OPT_FORCE, OPT_WORKER, OPT_RANKENV,
	OPT_STEPPY, OPT_HELP,
};

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "activities", required_argument, NULL, OPT_ACT },
	{ "level", required_argument, NULL, OPT_LEVEL },
	{ "record-shapes", no_argument, NULL, OPT_SHAPES },
	{ "profile-memory", no_argument, NULL, OPT_MEM },
	{ "with-stack", no_argument, NULL, OPT_STACK },
	{ "schedule", required_argument, NULL, OPT_SCHED },
	{ "step", required_argument, NULL, OPT_STEP },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "ringbuf-size", required_argument, NULL, OPT_RINGBUF },
	{ "output", required_argument, NULL, 'o' },
	{ "capture", required_argument, NULL, OPT_CAPTURE },
	{ "no-convert", no_argument, NULL, OPT_NOCONV },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "worker-name", required_argument, NULL, OPT_WORKER },
	{ "rank-env", required_argument, NULL, OPT_RANKENV },
	{ "step-py", required_argument, NULL, OPT_STEPPY },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

int asc_trace_parse_args(int argc, char **argv, struct asc_trace_opts *o)
{
	uint32_t v;
	int c, err;

	memset(o, 0, sizeof(*o));
	o->activities = ASC_ACT_CPU | ASC_ACT_NPU;
	o->level = 0;
	o->ringbuf_mb = 16;
	o->outdir = "./result";
	o->rank_env = "RANK";
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+p:o:vh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (o->nr_pids >= ASC_TRACE_MAX_PIDS) {
				asc_err("trace: at most %d -p options\n", ASC_TRACE_MAX_PIDS);
				return -EINVAL;
			}
			err = parse_u32(optarg, &v, "-p");
			if (err)
				return err;
			if (v == 0 || v > INT32_MAX) {
				asc_err("trace: -p %s is not a process id\n", optarg);
				return -EINVAL;
			}
			o->pids[o->nr_pids++] = v;
			break;
		case OPT_COMM:
			if (!*optarg || strlen(optarg) > 15) {
				asc_err("trace: --comm: a process name has 1 to 15 characters\n");
				return -EINVAL;
			}
			o->comm = optarg;
			break;
		case OPT_ACT:
			err = asc_trace_parse_activities(optarg, &o->activities);
			if (err)
				return err;
			break;
		case OPT_LEVEL:
			err = parse_u32(optarg, &v, "--level");
			if (err)
				return err;
			if (v > 2) {
				asc_err("trace: --level must be 0, 1 or 2\n");
				return -EINVAL;
			}
			o->level = v;
			break;
		case OPT_SHAPES:
			o->record_shapes = 1;
			break;
		case OPT_MEM:
			o->profile_memory = 1;
			break;
		case OPT_STACK:
			o->with_stack = 1;
			break;
		case OPT_SCHED:
			err = asc_trace_parse_schedule(optarg, &o->sched);
			if (err)
				return err;
			o->schedule_spec = optarg;
			break;
		case OPT_STEP:
			if (strcmp(optarg, "none") && (!strchr(optarg, ':') || optarg[0] == ':' ||
						       optarg[strlen(optarg) - 1] == ':')) {
				asc_err("trace: --step: expected LIB:SYMBOL or 'none', got '%s'\n",
					optarg);
				return -EINVAL;
			}
			o->step = optarg;
			break;
		case OPT_DURATION: {
			char *end;

			errno = 0;
			o->duration_s = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(o->duration_s > 0) ||
			    o->duration_s > 1e7) {
				asc_err("trace: --duration: '%s' is not a positive number of "
					"seconds\n", optarg);
				return -EINVAL;
			}
			break;
		}
		case OPT_RINGBUF:
			err = parse_u32(optarg, &v, "--ringbuf-size");
			if (err)
				return err;
			if (v == 0 || v > 1024 || (v & (v - 1))) {
				asc_err("trace: --ringbuf-size: %s MB is not a power of two in "
					"1..1024\n", optarg);
				return -EINVAL;
			}
			o->ringbuf_mb = v;
			break;
		case 'o':
			if (!*optarg) {
				asc_err("trace: -o: empty directory name\n");
				return -EINVAL;
			}
			o->outdir = optarg;
			break;
		case OPT_CAPTURE:
			o->capture = optarg;
			break;
		case OPT_NOCONV:
			o->no_convert = 1;
			break;
		case OPT_FORCE:
			o->force = 1;
			break;
		case OPT_WORKER:
			o->worker_name = optarg;
			break;
		case OPT_RANKENV:
			o->rank_env = optarg;
			break;
		case OPT_STEPPY:
			if (!*optarg) {
				asc_err("trace: --step-py: empty function name\n");
				return -EINVAL;
			}
			o->step_py = optarg;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'h':
		case OPT_HELP:
			o->help = 1;
			return 0;
		case ':':
			asc_err("trace: option %s needs an argument\n", argv[optind - 1]);
			return -EINVAL;
		default:
			asc_err("trace: unknown option '%s' (ascbpf trace --help)\n",
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		o->cmd = argv + optind;
		o->nr_cmd = argc - optind;
	}
	if (!!o->nr_pids + !!o->comm + !!o->cmd != 1) {
		asc_err("trace: give exactly one of -p PID, --comm NAME or -- CMD\n");
		return -EINVAL;
	}
	if (o->capture && (o->nr_pids > 1 || o->comm)) {
		asc_err("trace: --capture names one file: not with several -p or --comm\n");
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------ environment */

/* CAP_PERFMON (38) and CAP_BPF (39), Linux 5.8+, by number: libcap is not a dependency. */
#define ASC_CAP_PERFMON	38
#define ASC_CAP_BPF	39

static int cap_effective(const struct __user_cap_data_struct *d, int cap)
{
	return !!(d[cap / 32].effective & (1u << (cap % 32)));
}

static int check_privileges(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};

	if (geteuid() == 0)
		return 0;
	if (syscall(SYS_capget, &h, d) == 0 &&
	    ((cap_effective(d, ASC_CAP_BPF) && cap_effective(d, ASC_CAP_PERFMON)) ||
	     cap_effective(d, CAP_SYS_ADMIN)))
		return 0;
	asc_err("trace: needs root, or CAP_BPF and CAP_PERFMON (run with sudo)\n");
	return -EPERM;
}

/* BTF, uprobes, the ring buffer, attach cookies...: user/trace/features.h */
static int check_kernel(void)
{
	return asc_features_check("trace");
}

static int read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return n;
}

/*
 * The torch_npu environment variables of profiler_metadata.json
 * (ascend_output_format.md section 6.2), recorded at attach as CONFIG
 * "env.NAME=value", "" when unset (as torch_npu writes them).
 */
static const char *const metadata_env_names[] = {
	"ASCEND_GLOBAL_LOG_LEVEL", "HCCL_RDMA_TC", "HCCL_RDMA_SL", "ACLNN_CACHE_LIMIT",
	"HOST_CACHE_CAPACITY", "ASCEND_ENHANCE_ENABLE", "PYTORCH_NPU_ALLOC_CONF",
	"ASCEND_LAUNCH_BLOCKING", "HCCL_ALGO",
};

/*
 * Copies the value of each of names[0..n) found in /proc/PID/environ into
 * vals[i] (len bytes each, truncated), "" for the absent ones.  Returns 0 or
 * -errno (the process is gone, or its environment is unreadable).
 */
static int env_strs(pid_t pid, const char *const *names, size_t n, char (*vals)[256])
{
	char path[64], *buf, *p;
	size_t i;
	int len;

	for (i = 0; i < n; i++)
		vals[i][0] = 0;
	buf = malloc(1 << 16);
	if (!buf)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	len = read_file(path, buf, 1 << 16);
	if (len < 0) {
		free(buf);
		return len;
	}
	for (p = buf; p < buf + len; p += strlen(p) + 1)
		for (i = 0; i < n; i++) {
			size_t nl = strlen(names[i]);

			if (!strncmp(p, names[i], nl) && p[nl] == '=')
				snprintf(vals[i], sizeof(vals[i]), "%s", p + nl + 1);
		}
	free(buf);
	return 0;
}

/* Value of NAME in /proc/PID/environ, as an int; -1 if absent. */
static int env_int(pid_t pid, const char *name)
{
	char path[64], *buf, *p;
	size_t nl = strlen(name);
	int n, v = -1;

	buf = malloc(1 << 16);
	if (!buf)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	n = read_file(path, buf, 1 << 16);
	for (p = buf; n > 0 && p < buf + n; p += strlen(p) + 1)
		if (!strncmp(p, name, nl) && p[nl] == '=') {
			char *end;
			long x = strtol(p + nl + 1, &end, 10);

			if (end != p + nl + 1 && !*end && x >= 0 && x < INT32_MAX)
				v = x;
			break;
		}
	free(buf);
	return v;
}

/*
 * NAME from the live environment: a variable set with setenv() after a fork
 * (launchers that fork their ranks) is not in /proc/PID/environ, which shows
 * what the process was exec'ed with.  Reads libc's __environ array from the
 * target's memory (/proc/PID/mem).  -1 if absent or unreadable.
 */
static int live_env_int(pid_t pid, const char *name)
{
	char host[PATH_MAX], path[64], buf[256];
	struct asc_elf_sym sym;
	struct asc_maps maps;
	const char *libc = NULL;
	uint64_t start = 0, lb, envp, p, addr;
	size_t i, nl = strlen(name);
	int fd, v = -1, k;

	if (asc_maps_read(pid, &maps))
		return -1;
	for (i = 0; i < maps.nr && !libc; i++) {
		const char *q = maps.entries[i].path, *b;

		if (!q || q[0] != '/' || maps.entries[i].offset)
			continue;
		b = strrchr(q, '/') + 1;
		if (!strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5)) {
			libc = q;
			start = maps.entries[i].start;
			if (asc_maps_host_path(pid, q, maps.entries[i].inode, host, sizeof(host)))
				libc = NULL;
		}
	}
	asc_maps_free(&maps);
	if (!libc || asc_elf_lookup(host, "__environ", &sym) || asc_elf_load_base(host, &lb))
		return -1;
	addr = start - lb + sym.vaddr;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (pread(fd, &envp, sizeof(envp), addr) != sizeof(envp))
		goto out;
	for (k = 0; k < 4096 && envp; k++, envp += sizeof(p)) {
		ssize_t n;

		if (pread(fd, &p, sizeof(p), envp) != sizeof(p) || !p)
			break;
		n = pread(fd, buf, sizeof(buf) - 1, p);
		if (n <= 0)
			continue;
		buf[n] = 0;
		if (!strncmp(buf, name, nl) && buf[nl] == '=') {
			char *end;
			long x = strtol(buf + nl + 1, &end, 10);

			if (end != buf + nl + 1 && !*end && x >= 0 && x < INT32_MAX)
				v = x;
			break;
		}
	}
out:
	close(fd);
	return v;
}

/* ---------------------------------------------------------------- probes */

static int probe_add(struct trace *t, uint32_t id, const struct asc_probe_site *s,
		     const char *lib, const char *sym, uint16_t layer, uint16_t kind, pid_t pid)
{
	struct probe_info *pi;

	if (id >= t->nr_probes) {
		size_t n = id + 64;
		struct probe_info *np = realloc(t->probes, n * sizeof(*np));
		uint16_t *nl;

		if (!np)
			return -ENOMEM;
		t->probes = np;
		nl = realloc(t->layers, n * sizeof(*nl));
		if (!nl)
			return -ENOMEM;
		t->layers = nl;
		memset(t->probes + t->nr_probes, 0, (n - t->nr_probes) * sizeof(*np));
		memset(t->layers + t->nr_probes, 0, (n - t->nr_probes) * sizeof(*nl));
		t->nr_probes = n;
	}
	pi = &t->probes[id];
	pi->layer = layer;
	pi->kind = kind;
	pi->flags = s ? s->flags : 0;
	pi->offset = s ? s->attach_offset : 0;
	pi->lib = strdup(lib ? lib : "");
	pi->sym = strdup(sym ? sym : "");
	pi->pid = pid;
	pi->used = 1;
	t->layers[id] = layer;
	t->cons.probe_layer = t->layers;
	t->cons.nr_probe_layer = t->nr_probes;
	return pi->lib && pi->sym ? 0 : -ENOMEM;
}

static int write_probe_rec(struct target *tg, uint32_t id, const struct probe_info *pi)
{
	size_t ll = strlen(pi->lib), sl = strlen(pi->sym);
	size_t size = asc_probe_rec_size(ll, sl);
	struct asc_probe *p = calloc(1, size);
	int err;

	if (!p)
		return -ENOMEM;
	p->hdr.type = ASC_REC_PROBE;
	p->hdr.size = size;
	p->hdr.tgid = tg->pid;
	p->hdr.probe_id = id;
	p->hdr.ts_ns = now_ns(CLOCK_MONOTONIC);
	p->layer = pi->layer;
	p->kind = pi->kind;
	p->flags = pi->flags;
	p->offset = pi->offset;
	p->lib_len = ll;
	p->sym_len = sl;
	memcpy(p->strings, pi->lib, ll + 1);
	memcpy(p->strings + ll + 1, pi->sym, sl + 1);
	err = asc_capture_append(tg->w, p, size);
	free(p);
	return err;
}

/* Which programs serve a site, by its kind. */
static int select_progs(const struct asc_probe_site *site, void *ctx, struct bpf_program **entry,
			struct bpf_program **ret)
{
	struct trace *t = ctx;
	struct ascbpf_bpf *sk = t->skel;
	uint32_t spec_flags = site->spec ? site->spec->flags : 0;
	unsigned int kind = site->spec ? site->spec->kind : ASC_PK_CALL;

	*ret = (spec_flags & ASC_SPEC_NO_RETPROBE) ? NULL : sk->progs.asc_call_exit;
	/* --profile-memory: segment (GE) and driver (APP) allocations as MEM records too */
	if (t->o.profile_memory && kind == ASC_PK_CALL && site->sym) {
		if (!strcmp(site->sym, "rtMalloc")) {
			*entry = sk->progs.asc_ge_alloc_enter;
			*ret = sk->progs.asc_ge_alloc_exit;
			return 0;
		}
		if (!strcmp(site->sym, "halMemAlloc")) {
			*entry = sk->progs.asc_app_alloc_enter;
			*ret = sk->progs.asc_app_alloc_exit;
			return 0;
		}
		if (!strcmp(site->sym, "rtFree")) {
			*entry = sk->progs.asc_ge_free_enter;
			return 0;
		}
		if (!strcmp(site->sym, "halMemFree")) {
			*entry = sk->progs.asc_app_free_enter;
			return 0;
		}
	}
	switch (kind) {
	case ASC_PK_FUNCNAME_GET:
		*entry = sk->progs.asc_funcname_get_enter;
		*ret = sk->progs.asc_funcname_get_exit;
		break;
	case ASC_PK_FUNCNAME_REG:
		/* a Runtime@ call only at Level2; below, the FUNCNAME at entry is all */
		*entry = sk->progs.asc_funcname_reg_enter;
		if (t->o.level < 2)
			*ret = NULL;
		break;
	case ASC_PK_OPNAME_STDSTR:
		*entry = sk->progs.asc_opname_stdstr_enter;
		break;
	case ASC_PK_OPNAME_CSTR:
		*entry = sk->progs.asc_opname_cstr_enter;
		break;
	case ASC_PK_ENQUEUE:
		/* Level0: QUEUE (+ OPNAME) at entry only; the Dequeue span is what joins */
		*entry = sk->progs.asc_enqueue_enter;
		if (t->o.level < 1)
			*ret = NULL;
		break;
	case ASC_PK_DEQUEUE:
		*entry = sk->progs.asc_dequeue_enter;
		break;
	case ASC_PK_SQE_SEND:
		/* hal* calls are Level2; below, the SQE record at entry is all */
		*entry = sk->progs.asc_sqe_send_enter;
		if (t->o.level < 2)
			*ret = NULL;
		break;
	case ASC_PK_MEM_REPORT:
		*entry = sk->progs.asc_mem_report_enter;
		*ret = NULL;
		break;
	case ASC_PK_STEP:
		*entry = sk->progs.asc_step_enter;
		*ret = NULL;
		break;
	case ASC_PK_ATEN_OP:
		*entry = t->select_pt ? asc_pytorch_aten_prog(t->select_pt) : NULL;
		if (!*entry)
			*entry = sk->progs.asc_call_enter;
		else	/* its return reads the sequence counter (user/discovery/seqnr.h) */
			*ret = asc_pytorch_aten_ret_prog(t->select_pt);
		break;
	case ASC_PK_AUTOGRAD_EVAL:
		*entry = t->select_pt ? asc_pytorch_autograd_prog(t->select_pt) :
					sk->progs.asc_call_enter;
		if (t->select_pt)
			*ret = asc_pytorch_autograd_ret_prog(t->select_pt);
		break;
	case ASC_PK_NODE_LAUNCH:
		/* a Runtime@ call at Level2; below, the launch span for Node@launch alone */
		if (t->o.level >= 2) {
			*entry = sk->progs.asc_call_enter;
			break;
		}
		*ret = sk->progs.asc_launch_exit;
		/* fall through */
	case ASC_PK_LAUNCH_MARK:
		if (kind == ASC_PK_LAUNCH_MARK)
			*ret = NULL;
		switch (asc_probe_launch_stream_arg(site->sym)) {
		case 0: *entry = sk->progs.asc_launch_s0; break;
		case 1: *entry = sk->progs.asc_launch_s1; break;
		case 2: *entry = sk->progs.asc_launch_s2; break;
		case 4: *entry = sk->progs.asc_launch_s4; break;
		case 5: *entry = sk->progs.asc_launch_s5; break;
		default: return 1;	/* a call the table does not know: not attached */
		}
		break;
	case ASC_PK_CALL:
	default:
		*entry = sk->progs.asc_call_enter;
		break;
	}
	return 0;
}

/* A site of a rescan that an earlier plan of the same target already attached. */
struct rescan_ctx {
	struct trace *t;
	struct target *tg;
	size_t upto_plan;	/* plans [0, upto_plan) are attached */
};

static int already_attached(const struct target *tg, size_t nr_plans, const char *path,
			    uint64_t off)
{
	size_t i, j;

	for (i = 0; i < nr_plans; i++)
		for (j = 0; j < tg->plans[i].nr_sites; j++) {
			const struct asc_probe_site *s = &tg->plans[i].sites[j];

			if (s->attach_offset == off && !strcmp(s->path, path))
				return 1;
		}
	return 0;
}

static int select_new(const struct asc_probe_site *site, void *ctx, struct bpf_program **entry,
		      struct bpf_program **ret)
{
	struct rescan_ctx *rc = ctx;

	if (already_attached(rc->tg, rc->upto_plan, site->path, site->attach_offset))
		return 1;
	return select_progs(site, rc->t, entry, ret);
}

static uint32_t families_of(const struct asc_trace_opts *o)
{
	uint32_t f = 0;

	if (o->activities & ASC_ACT_CPU)
		f |= ASC_FAM_FRAMEWORK;
	if (o->activities & ASC_ACT_NPU)
		f |= ASC_FAM_CANN | ASC_FAM_DRIVER;
	if (o->profile_memory)
		f |= ASC_FAM_MEMORY;
	if (!o->step)
		f |= ASC_FAM_STEP;
	return f;
}

static void warn_missing(const struct target *tg, const struct asc_probe_plan *plan)
{
	size_t i;

	for (i = 0; i < plan->nr_missing; i++) {
		const struct asc_probe_missing *m = &plan->missing[i];

		if (m->spec && (m->spec->flags & ASC_SPEC_OPTIONAL))
			continue;
		if (m->spec && !strcmp(m->reason, "library not mapped"))
			continue;	/* the library may be dlopened later */
		asc_warn("trace: pid %d: %s:%s not attached: %s\n", tg->pid,
			 m->spec ? m->spec->lib : "?", m->spec ? m->spec->sym : "?", m->reason);
	}
}

static int append_text(struct target *tg, uint16_t type, uint64_t value, const char *text);

/* Also for sequence numbers (user/discovery/seqnr.h): whenever aten ops are traced. */
static int wants_pytorch(const struct asc_trace_opts *o)
{
	return (o->activities & ASC_ACT_CPU) || o->record_shapes || o->with_stack || o->step_py ||
	       o->profile_memory;
}

/*
 * Real PyTorch (user/discovery/pytorch.h, F): when the plan has aten op sites and
 * shapes, Python stacks, PyTorch memory (--profile-memory) or --step-py are
 * asked for, the PyTorch BPF object is opened for this process and shares
 * our ring buffer, gates and stats.  Anything it cannot discover is switched
 * off there with a warning.  1 if it was opened by this call (the caller
 * writes its description once the aten sites are added), else 0.
 */
static int setup_pytorch(struct trace *t, struct target *tg, const struct asc_probe_plan *plan)
{
	struct asc_pytorch_opts po = {
		.record_shapes = t->o.record_shapes,
		.with_stack = t->o.with_stack,
		.step_py = t->o.step_py,
		.profile_memory = t->o.profile_memory,
	};
	struct asc_sched none = {};
	struct asc_py_offsets off;
	char path[PATH_MAX];
	uint64_t bias;
	size_t i;
	int err;

	if (tg->pt || tg->pt_failed || !wants_pytorch(&t->o))
		return 0;
	for (i = 0; i < plan->nr_sites; i++)
		if (plan->sites[i].spec && plan->sites[i].spec->kind == ASC_PK_ATEN_OP)
			break;
	if (i == plan->nr_sites && !t->o.step_py)
		return 0;
	tg->pt_failed = 1;
	tg->pt = asc_pytorch_open(tg->pid, &po);
	if (!tg->pt) {
		asc_warn("trace: pid %d: PyTorch hooks unavailable (%s): no shapes or Python "
			 "stacks\n", tg->pid, strerror(errno));
		return 0;
	}
	err = asc_pytorch_load(tg->pt, bpf_map__fd(t->skel->maps.events),
			       bpf_map__fd(t->skel->maps.tgids), bpf_map__fd(t->skel->maps.stats),
			       t->o.sched.enabled ? &t->o.sched : &none);
	if (err) {
		asc_warn("trace: pid %d: cannot load the PyTorch BPF object: %s\n", tg->pid,
			 strerror(-err));
		asc_pytorch_close(tg->pt);
		tg->pt = NULL;
		return 0;
	}
	tg->pt_failed = 0;
	if (t->o.step_py && asc_pytorch_attach_step_py(tg->pt))
		asc_warn("trace: pid %d: --step-py %s: cannot attach the Python entry probe\n",
			 tg->pid, t->o.step_py);
	/* c10::reportMemoryUsageToProfiler; the warning of a failure is its own */
	if (t->o.profile_memory)
		asc_pytorch_attach_memory(tg->pt);
	if (t->o.with_stack && !asc_py_find_image(tg->pid, path, sizeof(path), &bias) &&
	    !asc_py_offsets_discover(path, &off) && (off.valid & ASC_PYOFF_CODE))
		tg->pyres = asc_pystack_resolver_new(tg->pid, &off);
	return 1;
}

/* The CONFIG lines of the PyTorch discovery, after its aten sites are added. */
static void describe_pytorch(struct target *tg)
{
	if (tg->w) {
		char *desc = calloc(1, 4096);

		if (desc && asc_pytorch_describe(tg->pt, desc, 4096) >= 0) {
			char *line, *save = NULL;

			for (line = strtok_r(desc, "\n", &save); line;
			     line = strtok_r(NULL, "\n", &save))
				append_text(tg, ASC_REC_CONFIG, 0, line);
		}
		free(desc);
	}
}

/* Attaches the sites of tg->plans[idx] that no earlier plan had; writes their PROBE records. */
static int attach_plan(struct trace *t, struct target *tg, size_t idx)
{
	struct asc_probe_plan *plan = &tg->plans[idx];
	struct rescan_ctx rc = { t, tg, idx };
	int *errs = NULL, opened;
	uint16_t kind;
	size_t i;
	int n;

	if (plan->nr_sites) {
		errs = calloc(plan->nr_sites, sizeof(*errs));
		if (!errs)
			return -ENOMEM;
		for (i = 0; i < plan->nr_sites; i++)
			errs[i] = 1;	/* stays 1 where select_new skipped the site */
	}
	opened = setup_pytorch(t, tg, plan);
	if (tg->pt)
		asc_pytorch_add_sites(tg->pt, plan);
	if (opened)
		describe_pytorch(tg);
	t->select_pt = tg->pt;
	n = asc_attach_plan(t->set, plan, 0, select_new, &rc, tg->pid, errs);
	t->select_pt = NULL;
	if (n < 0) {
		free(errs);
		return n;
	}
	for (i = 0; i < plan->nr_sites; i++) {
		const struct asc_probe_site *s = &plan->sites[i];
		const struct asc_probe_spec *sp = s->spec;

		if (errs[i] == 1)
			continue;
		/*
		 * select_new skipped it (an earlier plan attached the same place):
		 * asc_attach_plan reports 0 for skipped sites, but this id has no
		 * link, so no probe_info and no PROBE record of its own.
		 */
		if (idx && already_attached(tg, idx, s->path, s->attach_offset))
			continue;
		if (errs[i] < 0) {
			asc_warn("trace: pid %d: %s at %s+0x%llx not attached: %s\n", tg->pid,
				 s->sym, s->path, (unsigned long long)s->attach_offset,
				 strerror(-errs[i]));
			continue;
		}
		kind = sp ? sp->kind : ASC_PK_CALL;
		if (kind == ASC_PK_NODE_LAUNCH && t->o.level >= 2)
			kind = ASC_PK_CALL;	/* traced as a plain call there (select_progs) */
		if (probe_add(t, s->id, s, s->path, s->sym, sp ? sp->layer : 0, kind, tg->pid))
			return -ENOMEM;
		t->probes[s->id].flags = s->flags;
		if (tg->w)
			write_probe_rec(tg, s->id, &t->probes[s->id]);
		tg->nr_attached++;
	}
	free(errs);
	if (idx == 0)
		warn_missing(tg, plan);
	asc_dbg("trace: pid %d: plan %zu attached %d of %zu sites\n", tg->pid, idx, n,
		plan->nr_sites);
	return n;
}

static int plan_target(struct trace *t, struct target *tg, int quiet_enoent)
{
	struct asc_probe_plan *np;
	int err;

	np = realloc(tg->plans, (tg->nr_plans + 1) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	tg->plans = np;
	memset(&tg->plans[tg->nr_plans], 0, sizeof(*np));
	err = asc_probe_plan_build_level(tg->pid, asc_probe_table, t->families, t->o.level,
					 t->next_id, &tg->plans[tg->nr_plans]);
	if (err == -ENOENT && !quiet_enoent) {
		const struct asc_probe_plan *p = &tg->plans[tg->nr_plans];
		char libs[512] = "";
		size_t i, pos = 0;

		for (i = 0; i < p->nr_missing && pos < sizeof(libs) - 1; i++) {
			const char *lib = p->missing[i].spec ? p->missing[i].spec->lib : NULL;

			if (!lib || strstr(libs, lib))
				continue;
			pos += snprintf(libs + pos, sizeof(libs) - pos, "%s%s", pos ? ", " : "",
					lib);
		}
		asc_err("trace: pid %d (%s) has no Ascend libraries mapped; looked for: %s\n",
			tg->pid, tg->comm, libs[0] ? libs : "(the probe table is empty)");
	} else if (err == -ESRCH) {
		asc_err("trace: pid %d: no such process\n", tg->pid);
	} else if (err && err != -ENOENT) {
		asc_err("trace: pid %d: cannot resolve probes: %s\n", tg->pid, strerror(-err));
	}
	if (err) {
		asc_probe_plan_free(&tg->plans[tg->nr_plans]);
		return err;
	}
	t->next_id += tg->plans[tg->nr_plans].nr_sites;
	tg->nr_plans++;
	return 0;
}

/*
 * --step LIB:SYMBOL: one STEP site resolved here (the probe table is not
 * involved).  The library is matched by basename in the target's maps.
 */
static int attach_custom_step(struct trace *t, struct target *tg)
{
	char lib[256], host[PATH_MAX];
	const char *colon = strchr(t->o.step, ':');
	const struct asc_elf_symbol *sym;
	struct asc_attach_site site;
	struct asc_maps maps;
	struct asc_elf *elf = NULL;
	const char *path = NULL;
	uint64_t off, inode = 0;
	size_t i;
	int err, n;

	snprintf(lib, sizeof(lib), "%.*s", (int)(colon - t->o.step), t->o.step);
	err = asc_maps_read(tg->pid, &maps);
	if (err)
		return err;
	for (i = 0; i < maps.nr; i++)
		if (maps.entries[i].path && asc_lib_name_matches(maps.entries[i].path, lib)) {
			path = maps.entries[i].path;
			inode = maps.entries[i].inode;
			break;
		}
	if (!path && lib[0] == '/' && !access(lib, R_OK))
		path = lib;
	if (!path) {
		if (!tg->is_child)
			asc_warn("trace: --step: %s is not mapped in pid %d; no step boundaries\n",
				 lib, tg->pid);
		asc_maps_free(&maps);
		return 0;
	}
	err = asc_maps_host_path(tg->pid, path, path == lib ? 0 : inode, host, sizeof(host));
	asc_maps_free(&maps);
	if (err)
		return err;
	err = asc_elf_open(host, &elf);
	if (err) {
		asc_err("trace: --step: cannot read %s: %s\n", host, strerror(-err));
		return err;
	}
	sym = asc_elf_find(elf, colon + 1);
	if (!sym || asc_elf_vaddr_to_off(elf, sym->vaddr, &off)) {
		asc_warn("trace: --step: symbol %s not found in %s; no step boundaries\n",
			 colon + 1, host);
		asc_elf_close(elf);
		return 0;
	}
	asc_elf_close(elf);
	site.path = host;
	site.offset = off;
	site.cookie = t->next_id;
	n = asc_attach_uprobes(t->set, t->skel->progs.asc_step_enter, false, tg->pid, &site, 1,
			       NULL);
	if (n != 1) {
		asc_warn("trace: --step: cannot attach %s\n", t->o.step);
		return 0;
	}
	tg->step_attached = 1;
	probe_add(t, t->next_id, NULL, host, colon + 1, ASC_LAYER_PYTHON, ASC_PK_STEP, tg->pid);
	t->probes[t->next_id].offset = off;
	if (tg->w)
		write_probe_rec(tg, t->next_id, &t->probes[t->next_id]);
	t->next_id++;
	return 0;
}

/*
 * The dynamic loader (ld.so) of pid: its r_brk hook _dl_debug_state, found
 * by asc_probe_find_loader() in maps_pid (ascbpf itself for a child that has
 * not exec'd yet) and placed as any probe.
 * Every link-map change after this returns reaches on_loader(); the caller
 * plans after it, so a library mapped before the hook was live is seen then.
 */
static int attach_loader_hook(struct trace *t, pid_t pid, pid_t maps_pid)
{
	char host[PATH_MAX];
	struct asc_attach_site site;
	uint64_t off;
	uint32_t flags;
	int err, n;

	err = asc_probe_find_loader(maps_pid, host, sizeof(host), &off, &flags);
	if (err == -ESRCH)
		return err;
	if (err) {
		asc_warn("trace: pid %d: cannot hook its dynamic loader (%s); libraries loaded "
			 "later are not traced\n", pid, strerror(-err));
		return 0;
	}
	site.path = host;
	site.offset = off;
	site.cookie = ASC_LOADER_PROBE_ID;
	n = asc_attach_uprobes(t->set, t->skel->progs.asc_loader_enter, false, pid, &site, 1,
			       NULL);
	if (n != 1)
		asc_warn("trace: pid %d: cannot hook the dynamic loader (%s); libraries loaded "
			 "later are not traced\n", pid, host);
	else
		asc_dbg("trace: pid %d: loader hook on %s+0x%llx\n", pid, host,
			(unsigned long long)off);
	return 0;
}

/* Davinci fds open before we attached: module learned from their first ioctl. */
static void prefill_fds(struct trace *t, pid_t pid)
{
	char dir[64], link[PATH_MAX], target[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int fd = bpf_map__fd(t->skel->maps.fdmod);

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		struct asc_fd_key key;
		__u32 mod = ASC_MOD_UNKNOWN;
		const char *base;
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		base = strrchr(target, '/');
		base = base ? base + 1 : target;
		if (strncmp(base, "davinci", 7))
			continue;
		key.tgid = pid;
		key.fd = atoi(de->d_name);
		bpf_map_update_elem(fd, &key, &mod, BPF_NOEXIST);
		asc_dbg("trace: pid %d: fd %u is %s (bound earlier)\n", pid, key.fd, target);
	}
	closedir(d);
}

/* ------------------------------------------------------------- capture */

/* A text record (user/capture/capture.capture.h: CONFIG, SYMBOL, LOST, ...); probe_id as the type defines it. */
static int append_text_id(struct target *tg, uint16_t type, uint32_t probe_id, uint64_t value,
			  const char *text)
{
	size_t len = strlen(text), size = asc_text_rec_size(len);
	struct asc_text *r = calloc(1, size);
	int err;

	if (!r)
		return -ENOMEM;
	r->hdr.type = type;
	r->hdr.size = size;
	r->hdr.tgid = tg->pid;
	r->hdr.probe_id = probe_id;
	r->hdr.ts_ns = now_ns(CLOCK_MONOTONIC);
	r->value = value;
	memcpy(r->text, text, len + 1);
	err = asc_capture_append(tg->w, r, size);
	free(r);
	return err;
}

static int append_text(struct target *tg, uint16_t type, uint64_t value, const char *text)
{
	return append_text_id(tg, type, 0, value, text);
}

/* An ASC_REC_LOST record with its reason (ASC_LOST_*) in hdr.probe_id. */
static int append_lost(struct target *tg, uint32_t reason, uint64_t value, const char *text)
{
	return append_text_id(tg, ASC_REC_LOST, reason, value, text);
}

static int append_clock(struct target *tg, uint32_t which)
{
	struct asc_clock c = {};
	struct tm tm;
	time_t now;

	c.hdr.type = ASC_REC_CLOCK;
	c.hdr.size = sizeof(c);
	c.hdr.tgid = tg->pid;
	c.hdr.ts_ns = now_ns(CLOCK_MONOTONIC);
	c.realtime_ns = now_ns(CLOCK_REALTIME);
	c.monotonic_raw_ns = now_ns(CLOCK_MONOTONIC_RAW);
	c.which = which;
	now = time(NULL);
	localtime_r(&now, &tm);
	c.utc_offset_s = tm.tm_gmtoff;
	return asc_capture_append(tg->w, &c, sizeof(c));
}

static int append_process(struct target *tg)
{
	char path[64], *cmdline;
	size_t size;
	struct asc_process *p;
	int n, err;

	cmdline = calloc(1, 4096);
	if (!cmdline)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", tg->pid);
	if (tg->cmdline) {
		n = tg->cmdline_len;
		memcpy(cmdline, tg->cmdline, n);
	} else {
		n = read_file(path, cmdline, 4096);
	}
	if (n <= 0) {
		n = snprintf(cmdline, 4096, "%s", tg->comm) + 1;
	} else if (cmdline[n - 1]) {
		cmdline[n++] = 0;	/* cut at the buffer: terminate it */
	}
	size = asc_process_rec_size(n);
	p = calloc(1, size);
	if (!p) {
		free(cmdline);
		return -ENOMEM;
	}
	p->hdr.type = ASC_REC_PROCESS;
	p->hdr.size = size;
	p->hdr.tgid = tg->pid;
	p->hdr.tid = tg->pid;
	p->hdr.ts_ns = now_ns(CLOCK_MONOTONIC);
	p->rank = tg->rank;
	p->device = tg->device;
	p->cmdline_len = n;
	memcpy(p->comm, tg->comm, sizeof(p->comm));
	memcpy(p->strings, cmdline, n);
	err = asc_capture_append(tg->w, p, size);
	free(p);
	free(cmdline);
	return err;
}

/* THREAD records for threads not written yet (called at start and at the end). */
static void append_threads(struct target *tg)
{
	char dir[64], path[128], comm[32];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", tg->pid);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		struct asc_thread th = {};
		uint32_t tid;
		size_t i;
		char *nl;
		uint32_t *ns;

		if (de->d_name[0] == '.')
			continue;
		tid = atoi(de->d_name);
		for (i = 0; i < tg->nr_threads_seen; i++)
			if (tg->threads_seen[i] == tid)
				break;
		if (i < tg->nr_threads_seen)
			continue;
		snprintf(path, sizeof(path), "%s/%u/comm", dir, tid);
		if (read_file(path, comm, sizeof(comm)) <= 0)
			continue;
		nl = strchr(comm, '\n');
		if (nl)
			*nl = 0;
		th.hdr.type = ASC_REC_THREAD;
		th.hdr.size = sizeof(th);
		th.hdr.tgid = tg->pid;
		th.hdr.tid = tid;
		th.hdr.ts_ns = now_ns(CLOCK_MONOTONIC);
		memcpy(th.comm, comm, strnlen(comm, sizeof(th.comm) - 1));
		if (asc_capture_append(tg->w, &th, sizeof(th)))
			continue;
		ns = realloc(tg->threads_seen, (tg->nr_threads_seen + 1) * sizeof(*ns));
		if (!ns)
			continue;
		tg->threads_seen = ns;
		tg->threads_seen[tg->nr_threads_seen++] = tid;
	}
	closedir(d);
}

static void append_config(struct trace *t, struct target *tg)
{
	const struct asc_trace_opts *o = &t->o;
	char buf[512];
	int i;

	snprintf(buf, sizeof(buf), "ascbpf_version=%s", ASCBPF_VERSION);
	append_text(tg, ASC_REC_CONFIG, 0, buf);
	snprintf(buf, sizeof(buf), "activities=%s%s%s", o->activities & ASC_ACT_CPU ? "cpu" : "",
		 o->activities == (ASC_ACT_CPU | ASC_ACT_NPU) ? "," : "",
		 o->activities & ASC_ACT_NPU ? "npu" : "");
	append_text(tg, ASC_REC_CONFIG, 0, buf);
	snprintf(buf, sizeof(buf), "level=%u", o->level);
	append_text(tg, ASC_REC_CONFIG, 0, buf);
	snprintf(buf, sizeof(buf), "record_shapes=%d", o->record_shapes);
	append_text(tg, ASC_REC_CONFIG, 0, buf);
	snprintf(buf, sizeof(buf), "profile_memory=%d", o->profile_memory);
	append_text(tg, ASC_REC_CONFIG, 0, buf);
	snprintf(buf, sizeof(buf), "with_stack=%d", o->with_stack);
	append_text(tg, ASC_REC_CONFIG, 0, buf);
	if (o->sched.enabled) {
		snprintf(buf, sizeof(buf), "schedule=skip_first=%u,wait=%u,warmup=%u,active=%u,"
			 "repeat=%u,skip_first_wait=%u", o->sched.skip_first, o->sched.wait,
			 o->sched.warmup, o->sched.active, o->sched.repeat,
			 o->sched.skip_first_wait);
		append_text(tg, ASC_REC_CONFIG, 0, buf);
	}
	snprintf(buf, sizeof(buf), "step=%s", o->step ? o->step : "default");
	append_text(tg, ASC_REC_CONFIG, 0, buf);
	if (o->worker_name) {
		snprintf(buf, sizeof(buf), "worker_name=%s", o->worker_name);
		append_text(tg, ASC_REC_CONFIG, 0, buf);
	}
	snprintf(buf, sizeof(buf), "ringbuf_mb=%u", o->ringbuf_mb);
	append_text(tg, ASC_REC_CONFIG, 0, buf);
	snprintf(buf, sizeof(buf), "attach=%s", tg->is_child ? "launch" : "pid");
	append_text(tg, ASC_REC_CONFIG, 0, buf);
	{
		enum { NR_ENV = sizeof(metadata_env_names) / sizeof(metadata_env_names[0]) };
		static char vals[NR_ENV][256];
		size_t k;

		if (env_strs(tg->pid, metadata_env_names, NR_ENV, vals))
			asc_warn("trace: pid %d: environment not readable: profiler_metadata.json "
				 "gets empty values\n", tg->pid);
		for (k = 0; k < NR_ENV; k++) {
			snprintf(buf, sizeof(buf), "env.%s=%.255s", metadata_env_names[k],
				 vals[k]);
			append_text(tg, ASC_REC_CONFIG, 0, buf);
		}
	}
	if (o->cmd) {
		size_t pos = snprintf(buf, sizeof(buf), "cmd=");

		for (i = 0; i < o->nr_cmd && pos < sizeof(buf); i++)
			pos += snprintf(buf + pos, sizeof(buf) - pos, "%s%s", i ? " " : "",
					o->cmd[i]);
		append_text(tg, ASC_REC_CONFIG, 0, buf);
	}
}

/* ---- --with-stack: distinct addresses, symbolised at the end ---- */

static void ip_insert(struct target *tg, uint64_t ip);

static void ip_grow(struct target *tg)
{
	uint64_t *old = tg->ips;
	size_t i, oldcap = tg->ips_cap;

	tg->ips_cap = oldcap ? oldcap * 2 : 1024;
	tg->ips = calloc(tg->ips_cap, sizeof(*tg->ips));
	tg->nr_ips = 0;
	if (!tg->ips) {
		tg->ips = old;		/* keep what we have; new addresses are not added */
		tg->ips_cap = oldcap;
		return;
	}
	for (i = 0; i < oldcap; i++)
		if (old[i])
			ip_insert(tg, old[i]);
	free(old);
}

static void ip_insert(struct target *tg, uint64_t ip)
{
	size_t i, mask;

	if (!ip)
		return;
	if ((tg->nr_ips + 1) * 2 > tg->ips_cap)
		ip_grow(tg);
	if ((tg->nr_ips + 1) * 2 > tg->ips_cap)
		return;
	mask = tg->ips_cap - 1;
	for (i = (ip * 0x9e3779b97f4a7c15ull) >> 20 & mask;; i = (i + 1) & mask) {
		if (tg->ips[i] == ip)
			return;
		if (!tg->ips[i]) {
			tg->ips[i] = ip;
			tg->nr_ips++;
			return;
		}
	}
}

static void snapshot_maps(struct target *tg)
{
	struct asc_maps m;

	if (asc_maps_read(tg->pid, &m))
		return;
	if (tg->have_maps)
		asc_maps_free(&tg->maps);
	tg->maps = m;
	tg->have_maps = 1;
}

/* One SYMBOL record per distinct stack address: "lib!symbol+0xoff" or "lib+0xoff". */
static void write_symbols(struct target *tg)
{
	char host[PATH_MAX], text[512];
	size_t i;

	if (!tg->nr_ips || !tg->have_maps)
		return;
	for (i = 0; i < tg->ips_cap; i++) {
		const struct asc_map_entry *e;
		const struct asc_elf_symbol *sym = NULL;
		struct asc_elf *elf = NULL;
		uint64_t ip = tg->ips[i], off, vaddr, delta = 0;
		const char *base;

		if (!ip)
			continue;
		e = asc_maps_find(&tg->maps, ip);
		if (!e || !e->path || e->path[0] != '/') {
			snprintf(text, sizeof(text), "[unknown]+0x%llx", (unsigned long long)ip);
			append_text(tg, ASC_REC_SYMBOL, ip, text);
			continue;
		}
		base = strrchr(e->path, '/') + 1;
		off = e->offset + (ip - e->start);
		if (asc_maps_host_path(tg->pid, e->path, e->inode, host, sizeof(host)))
			/* the process is gone: its own view of the path */
			snprintf(host, sizeof(host), "%s", e->path);
		if (!asc_elf_open(host, &elf) && !asc_elf_off_to_vaddr(elf, off, &vaddr))
			sym = asc_elf_symbolize(elf, vaddr, &delta);
		if (sym)
			snprintf(text, sizeof(text), "%s!%s+0x%llx", base, sym->name,
				 (unsigned long long)delta);
		else
			snprintf(text, sizeof(text), "%s+0x%llx", base, (unsigned long long)off);
		asc_elf_close(elf);
		append_text(tg, ASC_REC_SYMBOL, ip, text);
	}
}

/*
 * Reads the rank while it is unknown: /proc/PID/environ, then the live
 * environment.  The first non-negative value found is kept (a process that
 * is gone reads -1 and must not undo it).
 */
static void read_rank(struct trace *t, struct target *tg)
{
	int rank;

	if (tg->rank >= 0)
		return;
	rank = env_int(tg->pid, t->o.rank_env);
	if (rank < 0)
		rank = live_env_int(tg->pid, t->o.rank_env);
	if (rank >= 0)
		tg->rank = rank;
}

/*
 * PROCESS and THREAD records, with comm, rank and device read now.  A forked
 * (adopted) process may not have set its rank yet (launchers setenv("RANK")
 * after the fork): its PROCESS record then waits for finish_process(), at its
 * TSDRV bind or at the end, with the cmdline read now.
 */
static void write_process(struct trace *t, struct target *tg)
{
	char path[64];
	int n;

	snprintf(path, sizeof(path), "/proc/%d/comm", tg->pid);
	if (read_file(path, tg->comm, sizeof(tg->comm)) > 0)
		tg->comm[strcspn(tg->comm, "\n")] = 0;
	read_rank(t, tg);
	n = env_int(tg->pid, "ASCEND_DEVICE_ID");
	if (n >= 0 || !tg->process_written)
		tg->device = n;
	if (tg->rank < 0 && tg->from_adopt && !tg->cmdline) {
		tg->cmdline = calloc(1, 4096);
		snprintf(path, sizeof(path), "/proc/%d/cmdline", tg->pid);
		if (tg->cmdline)
			tg->cmdline_len = read_file(path, tg->cmdline, 4096);
		tg->process_pending = 1;
	} else {
		append_process(tg);
	}
	append_threads(tg);
	tg->process_written = 1;
}

/* Writes a pending PROCESS record: at the TSDRV bind (if the rank is set by then) or at the end. */
static void finish_process(struct trace *t, struct target *tg, int final)
{
	if (!tg->process_pending || !tg->w)
		return;
	read_rank(t, tg);
	if (tg->rank < 0 && !final)
		return;
	if (tg->device < 0)
		tg->device = env_int(tg->pid, "ASCEND_DEVICE_ID");
	append_process(tg);
	tg->process_pending = 0;
}

static struct target *target_of(struct trace *t, uint32_t tgid)
{
	int i;

	for (i = 0; i < t->nr_targets; i++)
		if ((uint32_t)t->targets[i].pid == tgid)
			return &t->targets[i];
	return NULL;
}

static int emit_pyframe(const struct asc_pyframe *rec, size_t size, void *ctx)
{
	struct target *tg = ctx;

	return asc_capture_append(tg->w, rec, size);
}

#define ASC_MAX_EARLY	65536	/* records kept for processes being adopted */

/* Serialises capture appends: the ring-buffer consumer and the devtime threads. */
static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;

static int sink_record(void *ctx, const void *rec, size_t size);
static int process_gone(pid_t pid);

/* Keeps a record of a process the BPF side traces but we have not adopted yet. */
static int keep_early(struct trace *t, const void *rec, size_t size)
{
	void **ne, *copy;

	if (!(t->o.comm || t->have_child) || t->nr_early >= ASC_MAX_EARLY) {
		t->unrouted++;
		return 0;
	}
	if (!(t->nr_early & (t->nr_early - 1)) || !t->early) {
		size_t cap = t->nr_early ? t->nr_early * 2 : 64;

		ne = realloc(t->early, cap * sizeof(*ne));
		if (!ne) {
			t->unrouted++;
			return 0;
		}
		t->early = ne;
	}
	copy = malloc(size);
	if (!copy) {
		t->unrouted++;
		return 0;
	}
	memcpy(copy, rec, size);
	t->early[t->nr_early++] = copy;
	return 0;
}

/* Hands the kept records of a just-adopted process to its capture, in order. */
static void flush_early(struct trace *t, uint32_t tgid)
{
	size_t i, j = 0;

	pthread_mutex_lock(&capture_lock);
	for (i = 0; i < t->nr_early; i++) {
		const struct asc_hdr *h = t->early[i];

		if (h->tgid == tgid) {
			sink_record(t, h, h->size);
			free(t->early[i]);
		} else {
			t->early[j++] = t->early[i];
		}
	}
	t->nr_early = j;
	pthread_mutex_unlock(&capture_lock);
}

static int sink_record(void *ctx, const void *rec, size_t size)
{
	struct trace *t = ctx;
	const struct asc_hdr *h = rec;
	struct target *tg = target_of(t, h->tgid);

	if (!tg || !tg->w)
		return keep_early(t, rec, size);
	tg->records++;
	if (h->type == ASC_REC_SQE) {
		const struct asc_sqe *q = rec;

		if (tg->pre.on)
			prechan_on_sqe(&tg->pre, q);
		/*
		 * A process that started later joins its card's reader at its TSDRV
		 * bind; below Level2 the bind is not seen (no ioctl tracepoints), so
		 * its first submission names the card (joined from the main loop).
		 */
		if (!tg->dev_started && !tg->bind_dev)
			tg->bind_dev = q->dev_id + 1;
		if (q->sqe_num > 1 && tg->launch_marks == LAUNCH_MARKS_OFF && t->o.level == 0)
			tg->launch_marks = LAUNCH_MARKS_WANTED;
	}
	if (h->type == ASC_REC_FDBIND) {
		const struct asc_fdbind *b = rec;

		/* a TSDRV bind names the card the process uses (joined from the main loop) */
		if (!strncmp(b->module_name, "TSDRV", sizeof(b->module_name)) && b->device_id >= 0)
			tg->bind_dev = b->device_id + 1;
	}
	if (h->type == ASC_REC_PYSTACK && tg->pyres) {
		int err = asc_capture_append(tg->w, rec, size);

		asc_pystack_resolve_rec(tg->pyres, rec, emit_pyframe, tg);
		return err;
	}
	if (h->type == ASC_REC_STACK) {
		const struct asc_stack *st = rec;
		uint32_t i;

		for (i = 0; i < st->nr && i < ASC_STACK_DEPTH; i++)
			ip_insert(tg, st->ips[i]);
	}
	return asc_capture_append(tg->w, rec, size);
}

/* devtime hands its records (DEVTASK, DEVCLOCK, LOST) here, from its thread. */

static int sink_devtime(void *ctx, const void *rec, size_t size)
{
	struct devreader *r = ctx;
	const struct asc_hdr *rh = rec;
	int i, err = 0;

	pthread_mutex_lock(&capture_lock);
	if (rh->type == ASC_REC_DEVCLOCK && !r->have_clock && size == sizeof(r->start_clock)) {
		memcpy(&r->start_clock, rec, size);
		r->have_clock = 1;
	} else if (rh->type == ASC_REC_DEVTASK && size == sizeof(*r->hist)) {
		if (!r->hist)
			r->hist = malloc(DEVREADER_HISTORY * sizeof(*r->hist));
		if (r->hist) {
			size_t at = (r->hist_head + r->hist_nr) % DEVREADER_HISTORY;

			memcpy(&r->hist[at], rec, size);
			if (r->hist_nr < DEVREADER_HISTORY)
				r->hist_nr++;
			else
				r->hist_head = (r->hist_head + 1) % DEVREADER_HISTORY;
		}
	}
	for (i = 0; i < r->nr_members; i++) {
		struct target *tg = r->members[i];
		struct asc_hdr *h = (struct asc_hdr *)rec;

		if (!tg->w)
			continue;
		if (h->type == ASC_REC_DEVTASK && tg->pre.on)
			prechan_on_devtask(&tg->pre, rec);
		h->tgid = tg->pid;	/* the copy in each capture names its process */
		if (asc_capture_append(tg->w, rec, size) && !err)
			err = -EIO;
	}
	pthread_mutex_unlock(&capture_lock);
	return err;
}

/*
 * Makes tg a member of dev's reader, starting the reader if needed (through
 * tg's HAL).  Called from the main loop only: a reader's first records go
 * through sink_devtime, which takes capture_lock.
 */
static void join_devreader(struct trace *t, struct target *tg, uint32_t dev)
{
	struct devreader *r = NULL;
	int i;

	if (!(t->o.activities & ASC_ACT_NPU) || !tg->w)
		return;
	for (i = 0; i < t->nr_readers; i++)
		if (t->readers[i]->dev == dev)
			r = t->readers[i];
	if (!r) {
		if (t->nr_readers >= ASC_MAX_DEVREADERS)
			return;
		r = calloc(1, sizeof(*r));
		if (!r)
			return;
		r->dev = dev;
		t->readers[t->nr_readers++] = r;
	}
	for (i = 0; i < r->nr_members; i++)
		if (r->members[i] == tg)
			return;
	if (r->nr_members < MAX_TARGETS) {
		size_t k;

		pthread_mutex_lock(&capture_lock);
		r->members[r->nr_members++] = tg;
		tg->pre.young_drains = 2;	/* its records flow from now on */
		/* a reader that already runs: what it delivered before, as if a member */
		if (r->have_clock) {
			r->start_clock.hdr.tgid = tg->pid;
			asc_capture_append(tg->w, &r->start_clock, sizeof(r->start_clock));
		}
		for (k = 0; k < r->hist_nr; k++) {
			struct asc_devtask *d = &r->hist[(r->hist_head + k) % DEVREADER_HISTORY];

			d->hdr.tgid = tg->pid;
			if (tg->pre.on)
				prechan_on_devtask(&tg->pre, d);
			asc_capture_append(tg->w, d, sizeof(*d));
		}
		pthread_mutex_unlock(&capture_lock);
	}
	tg->dev_started = 1;
	/*
	 * The reader loads the HAL the process mapped; a short-lived process (a
	 * rank done in 0.1 s) may be gone by then: then through a live traced
	 * process that reads a card (the same HAL).
	 */
	if (!r->dt && !process_gone(tg->pid))
		r->dt = asc_devtime_start(tg->pid, dev, sink_devtime, r);
	for (i = 0; !r->dt && process_gone(tg->pid) && i < t->nr_targets; i++)
		if (&t->targets[i] != tg && t->targets[i].dev_started &&
		    !process_gone(t->targets[i].pid))
			r->dt = asc_devtime_start(t->targets[i].pid, dev, sink_devtime, r);
	/*
	 * From here on every task it submits completes with the channel open.
	 * Without a channel no submission has a device record: nothing to tell.
	 */
	pthread_mutex_lock(&capture_lock);
	if (r->dt && tg->pre.on && !tg->pre.open_ns)
		tg->pre.open_ns = now_ns(CLOCK_MONOTONIC);
	else if (!r->dt && tg->pre.on && process_gone(tg->pid))
		tg->pre.ended_first = 1;	/* every submission it made came before a channel */
	else if (!r->dt)
		prechan_free(&tg->pre);
	pthread_mutex_unlock(&capture_lock);
}

static int ring_cb(void *ctx, void *data, size_t size)
{
	struct trace *t = ctx;

	pthread_mutex_lock(&capture_lock);
	asc_consumer_handle(&t->cons, data, size);
	pthread_mutex_unlock(&capture_lock);
	return 0;	/* a bad record never stops the drain */
}

static void on_loader(void *ctx, uint32_t tgid)
{
	struct trace *t = ctx;
	struct target *tg = target_of(t, tgid);

	if (tg)
		tg->rescan = 1;
	else
		t->adopt_pending = 1;	/* a new process from the exec / fork programs */
}

/* --------------------------------------------------------------- output */

static int dir_is_empty(const char *path)
{
	struct dirent *de;
	DIR *d = opendir(path);
	int empty = 1;

	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			empty = 0;
			break;
		}
	closedir(d);
	return empty;
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX], *p;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			if (mkdir(buf, 0755) && errno != EEXIST)
				return -errno;
			*p = '/';
		}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static int prepare_outdir(struct trace *t)
{
	struct stat st;
	int err;

	snprintf(t->outdir, sizeof(t->outdir), "%s", t->o.outdir);
	if (stat(t->outdir, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			asc_err("trace: output %s is not a directory\n", t->outdir);
			return -ENOTDIR;
		}
		if (access(t->outdir, W_OK | X_OK)) {
			asc_err("trace: output directory %s is not writable\n", t->outdir);
			return -EACCES;
		}
		err = dir_is_empty(t->outdir);
		if (err < 0) {
			asc_err("trace: cannot read output directory %s: %s\n", t->outdir,
				strerror(-err));
			return err;
		}
		if (!err && !t->o.force) {
			asc_err("trace: output directory %s is not empty (use --force to write "
				"into it)\n", t->outdir);
			return -EEXIST;
		}
		return 0;
	}
	err = mkdir_p(t->outdir);
	if (err) {
		asc_err("trace: cannot create output directory %s: %s\n", t->outdir,
			strerror(-err));
		return err == -EROFS ? -EACCES : err;
	}
	t->created_outdir = 1;
	return 0;
}

static int open_capture(struct trace *t, struct target *tg)
{
	int n;

	if (t->o.capture)
		n = snprintf(tg->capture_path, sizeof(tg->capture_path), "%s", t->o.capture);
	else
		n = snprintf(tg->capture_path, sizeof(tg->capture_path), "%.4000s/ascbpf-%d.cap",
			     t->outdir, tg->pid);
	if (n >= (int)sizeof(tg->capture_path)) {
		asc_err("trace: capture path too long\n");
		return -ENAMETOOLONG;
	}
	tg->w = asc_capture_create(tg->capture_path, t->o.force);
	if (!tg->w) {
		int err = -errno;

		asc_err("trace: cannot create capture %s: %s\n", tg->capture_path,
			strerror(-err));
		return err == -EROFS ? -EACCES : err;
	}
	tg->pre.on = !!(t->o.activities & ASC_ACT_NPU);
	append_clock(tg, ASC_CLOCK_START);
	append_config(t, tg);
	if (!tg->is_child)
		write_process(t, tg);	/* a child is still ascbpf until it execs */
	return 0;
}

/* ---------------------------------------------------------------- stats */

static void read_bpf_stats(struct trace *t, uint64_t *drops, uint64_t *ioctl_lost,
			   uint64_t *sqe_lost, uint64_t *name_lost)
{
	int ncpu = libbpf_num_possible_cpus();
	struct asc_cpu_stats *v;
	__u32 zero = 0;
	int i;

	*drops = *ioctl_lost = *sqe_lost = *name_lost = 0;
	if (ncpu <= 0 || !t->skel)
		return;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return;
	if (!bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.stats), &zero, v))
		for (i = 0; i < ncpu; i++) {
			*drops += v[i].drops;
			*ioctl_lost += v[i].ioctl_lost;
			*sqe_lost += v[i].sqe_lost;
			*name_lost += v[i].name_lost;
		}
	free(v);
}

/* ---------------------------------------------------------------- main */

static int add_target_q(struct trace *t, pid_t pid, int is_child, int quiet);

static int add_target(struct trace *t, pid_t pid, int is_child)
{
	return add_target_q(t, pid, is_child, 0);
}

static int add_target_q(struct trace *t, pid_t pid, int is_child, int quiet)
{
	struct target *tg;
	char path[64], stat[512], *state;
	int i;

	for (i = 0; i < t->nr_targets; i++)
		if (t->targets[i].pid == pid)
			return 0;
	if (t->nr_targets >= MAX_TARGETS) {
		asc_err("trace: at most %d processes\n", MAX_TARGETS);
		return -E2BIG;
	}
	tg = &t->targets[t->nr_targets];
	memset(tg, 0, sizeof(*tg));
	tg->pid = pid;
	tg->is_child = is_child;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	if (read_file(path, tg->comm, sizeof(tg->comm)) < 0) {
		if (!quiet)
			asc_err("trace: pid %d: no such process\n", pid);
		return -ESRCH;
	}
	tg->comm[strcspn(tg->comm, "\n")] = 0;
	/* an exited process its parent has not reaped still has /proc/PID: gone all the same */
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_file(path, stat, sizeof(stat)) > 0 && (state = strrchr(stat, ')')) &&
	    (state[1] == ' ' && (state[2] == 'Z' || state[2] == 'X'))) {
		if (!quiet)
			asc_err("trace: pid %d (%s) has exited (a zombie its parent has not "
				"reaped yet)\n", pid, tg->comm);
		return -ESRCH;
	}
	tg->rank = env_int(pid, t->o.rank_env);
	tg->device = env_int(pid, "ASCEND_DEVICE_ID");
	t->nr_targets++;
	return 0;
}

static int find_comm(struct trace *t)
{
	struct dirent *de;
	DIR *d = opendir("/proc");
	int err = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)) && !err) {
		char path[64], comm[32];
		pid_t pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		if (pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		if (read_file(path, comm, sizeof(comm)) <= 0)
			continue;
		comm[strcspn(comm, "\n")] = 0;
		if (!strcmp(comm, t->o.comm))
			err = add_target(t, pid, 0);
	}
	closedir(d);
	return err;
}

/*
 * The gate of one process.  It is closed while the probes are being attached
 * (entry and return probes are separate links, attached one after the other,
 * so an open gate would record returns without entries), opened once
 * everything is attached, unless a schedule keeps it closed until the first
 * step boundary.
 */
static int set_tgid(struct trace *t, pid_t pid, int open)
{
	struct asc_tgid_state st = {};
	__u32 key = pid;

	st.open = open && !t->o.sched.enabled;
	/*
	 * Armed only with the gate: a step probe that fires while the loader is
	 * still attaching (the step site attaches with the others, before the
	 * device channel starts) must not open the gate early or count steps
	 * that the reset below would number again.
	 */
	st.flags = open ? ASC_TGID_ARMED : 0;
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.tgids), &key, &st, BPF_ANY))
		return -errno;
	/*
	 * The first process is the BPF gate's fast path (.bss, no lookup).  Not
	 * with --step-py: its boundaries are set by the PyTorch object, which
	 * can only write the tgids map, so every gate must read the map.
	 */
	if (t->o.step_py)
		return 0;
	if (!t->skel->bss->fast_tgid || t->skel->bss->fast_tgid == (__u32)pid) {
		t->skel->bss->fast_open = st.open;
		__atomic_store_n(&t->skel->bss->fast_tgid, pid, __ATOMIC_RELEASE);
	}
	return 0;
}

/*
 * Opens the gate of an adopted process once its probes are attached (the
 * exec / fork programs add it closed) and arms its step boundaries
 * (ASC_TGID_ARMED); a schedule keeps control of the gate.
 */
static int set_gate(struct trace *t, pid_t pid, int open)
{
	int fd = bpf_map__fd(t->skel->maps.tgids);
	struct asc_tgid_state st;
	__u32 key = pid;
	int was;

	if (bpf_map_lookup_elem(fd, &key, &st))
		return -1;
	was = st.open;
	if (open)
		st.flags |= ASC_TGID_ARMED;	/* its step boundaries count from now on */
	if (!t->o.sched.enabled)
		st.open = open;
	bpf_map_update_elem(fd, &key, &st, BPF_EXIST);
	if (t->o.sched.enabled)
		return -1;	/* the schedule opens it, at its next recorded step */
	if (t->skel->bss->fast_tgid == key)
		__atomic_store_n(&t->skel->bss->fast_open, open, __ATOMIC_RELEASE);
	return was;
}

static void open_gate(struct trace *t, pid_t pid)
{
	set_gate(t, pid, 1);
}

/* Forgets every process: each program returns at its first lookup from now on. */
static void clear_tgids(struct trace *t)
{
	int fd = bpf_map__fd(t->skel->maps.tgids);
	__u32 key, next;

	__atomic_store_n(&t->skel->bss->fast_open, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&t->skel->bss->fast_tgid, 0, __ATOMIC_RELEASE);
	while (!bpf_map_get_next_key(fd, NULL, &next)) {
		key = next;
		if (bpf_map_delete_elem(fd, &key))
			break;
	}
}

static int open_and_load(struct trace *t)
{
	struct ascbpf_bpf *sk;
	struct bpf_program *prog;
	int err;

	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	sk = ascbpf_bpf__open();
	if (!sk) {
		err = -errno;
		asc_err("trace: cannot open the BPF object: %s\n", strerror(-err));
		return err;
	}
	t->skel = sk;
	sk->rodata->sched_cfg = t->o.sched;
	sk->rodata->with_stack = t->o.with_stack;
	sk->rodata->stop_tgid = t->have_child ? t->child.pid : 0;
	sk->rodata->follow_forks = t->have_child;
	sk->rodata->trace_level = t->o.level;
	sk->rodata->loader_probe_id = ASC_LOADER_PROBE_ID;
	/* wake the consumer only once half the ring is full (it polls every POLL_MS) */
	sk->rodata->wakeup_bytes = ((uint64_t)t->o.ringbuf_mb << 20) / 2;
	if (t->o.comm) {
		sk->rodata->comm_filter_on = 1;
		memcpy((char *)sk->rodata->comm_filter, t->o.comm, strlen(t->o.comm));
	}
	err = bpf_map__set_max_entries(sk->maps.events, t->o.ringbuf_mb << 20);
	if (err)
		goto fail;
	if (!t->o.comm)
		bpf_program__set_autoload(sk->progs.asc_exec, false);
	if (!t->have_child)
		bpf_program__set_autoload(sk->progs.asc_fork, false);
	if (!(t->o.activities & ASC_ACT_NPU) || t->o.level < 2) {
		bpf_program__set_autoload(sk->progs.asc_ioctl_enter, false);
		bpf_program__set_autoload(sk->progs.asc_ioctl_exit, false);
		bpf_program__set_autoload(sk->progs.asc_close_enter, false);
	}
	bpf_object__for_each_program(prog, sk->obj) {
		const char *sec = bpf_program__section_name(prog);

		if (!strcmp(sec, "uprobe") || !strcmp(sec, "uretprobe"))
			asc_attach_prepare_multi(prog);	/* -EOPNOTSUPP: stays single */
	}
	err = ascbpf_bpf__load(sk);
	if (err)
		goto fail;
	return 0;
fail:
	asc_err("trace: cannot load the BPF programs: %s (run with -v for the verifier log)\n",
		strerror(-err));
	return err == -EPERM ? -EPERM : err;
}

static int attach_tracepoints(struct trace *t)
{
	struct ascbpf_bpf *sk = t->skel;
	struct bpf_program *progs[5] = { sk->progs.asc_ioctl_enter, sk->progs.asc_ioctl_exit,
					 sk->progs.asc_close_enter, sk->progs.asc_exec,
					 sk->progs.asc_fork };
	int i;

	for (i = 0; i < 5; i++) {
		if (!bpf_program__autoload(progs[i]))
			continue;
		t->tp_links[i] = bpf_program__attach(progs[i]);
		if (!t->tp_links[i]) {
			int err = -errno;

			asc_err("trace: cannot attach %s: %s\n", bpf_program__name(progs[i]),
				strerror(-err));
			return err;
		}
	}
	return 0;
}

/*
 * --comm, and children of a -- CMD: processes the exec / fork programs put
 * in the tgids map since the last look become targets (capture, loader
 * hook, plan).  Their probes attach asynchronously: calls made before that
 * are not seen (documented).
 */
static void adopt_new_tgids(struct trace *t)
{
	int fd = bpf_map__fd(t->skel->maps.tgids);
	__u32 key, next, *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		struct target *tg;

		key = next;
		prev = &key;
		if (target_of(t, key))
			continue;
		if (add_target_q(t, key, 0, 1)) {
			/* gone before we saw it: forget it (and do not retry every tick) */
			asc_dbg("trace: pid %u exited before it could be adopted\n", key);
			bpf_map_delete_elem(fd, &key);
			prev = NULL;	/* restart: the key we stood on is gone */
			continue;
		}
		tg = &t->targets[t->nr_targets - 1];
		asc_info("trace: adopting pid %d (%s)\n", tg->pid, tg->comm);
		tg->from_adopt = 1;	/* before open_capture: PROCESS may wait */
		if (open_capture(t, tg)) {
			t->nr_targets--;
			continue;
		}
		flush_early(t, tg->pid);
		attach_loader_hook(t, tg->pid, tg->pid);
		tg->adopted = 1;
		tg->from_adopt = 1;
		tg->rescan = 1;		/* plan and attach now, and after each library load */
	}
}

/*
 * Level0 and batched submissions: at Level0 no launch is probed, so the
 * tasks of one halSqTaskSend carrying several SQEs cannot be split among the
 * queue slots that made them (docs/convert.md).  When a process's first
 * batched send is seen (sink_record; the SQE program wakes us for the first
 * one of the trace), its task-making runtime calls get an entry-only LAUNCH
 * probe (asc_probe_launch_marks[]), which feeds the converter's
 * pending-launch FIFO.  Processes that never batch attach nothing more.
 * CONFIG "level0.launch_marks_ns=T" is the time the attach began: tasks
 * launched before it stay unattributed (counted), never attributed wrongly.
 */
static void attach_launch_marks(struct trace *t)
{
	int i;

	for (i = 0; i < t->nr_targets; i++) {
		struct target *tg = &t->targets[i];
		struct asc_probe_plan *np;
		char buf[64];
		int err;

		if (tg->launch_marks != LAUNCH_MARKS_WANTED || tg->gone)
			continue;
		tg->launch_marks = LAUNCH_MARKS_ON;
		if (!(t->o.activities & ASC_ACT_CPU) || !(t->families & ASC_FAM_CANN))
			continue;	/* no ops or slots to join the tasks to */
		np = realloc(tg->plans, (tg->nr_plans + 1) * sizeof(*np));
		if (!np)
			continue;
		tg->plans = np;
		memset(&tg->plans[tg->nr_plans], 0, sizeof(*np));
		err = asc_probe_plan_build_level(tg->pid, asc_probe_launch_marks, ASC_FAM_CANN, 0,
						 t->next_id, &tg->plans[tg->nr_plans]);
		if (err || !tg->plans[tg->nr_plans].nr_sites) {
			asc_warn("trace: pid %d: batched submissions at Level0, but no launch call "
				 "to mark (%s): their kernels keep no op\n", tg->pid,
				 err ? strerror(-err) : "libruntime.so lacks them");
			asc_probe_plan_free(&tg->plans[tg->nr_plans]);
			continue;
		}
		t->next_id += tg->plans[tg->nr_plans].nr_sites;
		tg->nr_plans++;
		snprintf(buf, sizeof(buf), "level0.launch_marks_ns=%llu",
			 (unsigned long long)now_ns(CLOCK_MONOTONIC));
		pthread_mutex_lock(&capture_lock);
		if (tg->w)
			append_text(tg, ASC_REC_CONFIG, 0, buf);
		pthread_mutex_unlock(&capture_lock);
		err = attach_plan(t, tg, tg->nr_plans - 1);
		asc_dbg("trace: pid %d: batched submissions: %d launch marks attached\n", tg->pid,
			err);
	}
}

/* Rescans the maps of targets whose loader hook fired; attaches what is new. */
static void do_rescans(struct trace *t)
{
	int i;

	for (i = 0; i < t->nr_targets; i++) {
		struct target *tg = &t->targets[i];

		if (!tg->rescan || tg->gone)
			continue;
		tg->rescan = 0;
		if (tg->w && !tg->process_written)
			write_process(t, tg);
		/*
		 * The gate stays open while new sites attach: calls of the libraries
		 * already attached go on being recorded; a call of a new site in that
		 * moment may show only its entry or only its return.
		 */
		if (plan_target(t, tg, 1) == 0)
			attach_plan(t, tg, tg->nr_plans - 1);
		if (tg->adopted && tg->nr_attached) {
			tg->adopted = 0;
			open_gate(t, tg->pid);
		}
		if (t->o.with_stack)
			snapshot_maps(tg);
		if (t->o.step && strcmp(t->o.step, "none") && !tg->step_attached)
			attach_custom_step(t, tg);
		/* adopted processes are new: their TSDRV bind names their card */
		if (!tg->dev_started && tg->nr_attached && !tg->from_adopt)
			join_devreader(t, tg, tg->device < 0 ? 0 : tg->device);
		if (tg->is_child)
			kill(tg->pid, SIGCONT);	/* stopped by the loader hook */
	}
}

/*
 * 0 while some traced process's capture can still be written; else the error
 * of the first failed capture (e.g. -ENOSPC), when the capture of every
 * process still traced has failed: nothing more can be kept, so the trace
 * stops as on SIGTERM instead of running on with its probes attached.
 */
static int captures_failed(struct trace *t)
{
	int i, first = 0;

	for (i = 0; i < t->nr_targets; i++) {
		struct target *tg = &t->targets[i];
		int err;

		if (!tg->w || tg->gone)
			continue;
		err = asc_capture_error(tg->w);
		if (!err)
			return 0;
		if (!first)
			first = err;
	}
	return first;
}

/* Processes whose TSDRV bind (or first submission) named a card join its reader. */
static void join_bound(struct trace *t)
{
	int i;

	for (i = 0; i < t->nr_targets; i++)
		if (t->targets[i].bind_dev) {
			join_devreader(t, &t->targets[i], t->targets[i].bind_dev - 1);
			t->targets[i].bind_dev = 0;
			/* the rank is set by the card's setup: re-read it */
			pthread_mutex_lock(&capture_lock);
			finish_process(t, &t->targets[i], 0);
			pthread_mutex_unlock(&capture_lock);
		}
}

/* A process is gone once it no longer exists or is a zombie nobody reaped yet. */
static int process_gone(pid_t pid)
{
	char path[64], buf[512], *p;

	if (kill(pid, 0) && errno == ESRCH)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return 1;
	p = strrchr(buf, ')');		/* comm may hold spaces and parentheses */
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

static int targets_alive(struct trace *t)
{
	int i, alive = 0;

	for (i = 0; i < t->nr_targets; i++) {
		struct target *tg = &t->targets[i];

		if (tg->gone)
			continue;
		if (tg->is_child) {
			if (asc_launch_poll(&t->child) == 1)
				tg->gone = 1;
		} else if (process_gone(tg->pid)) {
			tg->gone = 1;
		}
		if (tg->gone)
			asc_info("trace: pid %d exited\n", tg->pid);
		else
			alive++;
	}
	return alive;
}

static void trace_cleanup(struct trace *t, int failed)
{
	size_t j;
	int i;

	for (i = 0; i < t->nr_readers; i++) {
		asc_devtime_free(t->readers[i]->dt);
		free(t->readers[i]->hist);
		free(t->readers[i]);
	}
	t->nr_readers = 0;

	for (i = 0; i < t->nr_targets; i++) {
		struct target *tg = &t->targets[i];

		if (tg->w) {
			asc_capture_close(tg->w);
			tg->w = NULL;
			if (failed)
				unlink(tg->capture_path);
		}
		for (j = 0; j < tg->nr_plans; j++)
			asc_probe_plan_free(&tg->plans[j]);
		free(tg->plans);
		free(tg->threads_seen);
		free(tg->cmdline);
		prechan_free(&tg->pre);
		asc_pystack_resolver_free(tg->pyres);
		asc_pytorch_close(tg->pt);
		free(tg->ips);
		if (tg->have_maps)
			asc_maps_free(&tg->maps);
	}
	if (failed && t->created_outdir)
		rmdir(t->outdir);
	if (t->rb_open)
		asc_ring_close(&t->rb);
	asc_attach_set_free(t->set);
	for (i = 0; i < 5; i++)
		bpf_link__destroy(t->tp_links[i]);
	ascbpf_bpf__destroy(t->skel);
	if (t->have_child)
		asc_launch_abort(&t->child);
	for (j = 0; j < t->nr_early; j++)
		free(t->early[j]);
	free(t->early);
	for (j = 0; j < t->nr_probes; j++) {
		free(t->probes[j].lib);
		free(t->probes[j].sym);
	}
	free(t->probes);
	free(t->layers);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[1024];

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	asc_log(level == LIBBPF_WARN ? ASC_LOG_DEBUG : ASC_LOG_DEBUG, "libbpf: %s", buf);
	return 0;
}

static void finish_target(struct trace *t, struct target *tg, uint64_t drops, uint64_t lost,
			  uint64_t sqe_lost, uint64_t name_lost)
{
	struct asc_stats st = {};
	struct asc_devtime_stats ds = {};
	int i;

	if (!tg->w)
		return;
	if (!tg->process_written)
		write_process(t, tg);
	finish_process(t, tg, 1);
	if (!tg->nr_attached) {
		char libs[512] = "";
		size_t pos = 0, k;

		for (k = 0; asc_probe_table[k].lib && pos < sizeof(libs) - 1; k++)
			if ((asc_probe_table[k].family & t->families) &&
			    !strstr(libs, asc_probe_table[k].lib))
				pos += snprintf(libs + pos, sizeof(libs) - pos, "%s%s", pos ? ", " : "",
						asc_probe_table[k].lib);
		asc_warn("trace: pid %d (%s): no Ascend library was loaded, nothing traced; "
			 "looked for: %s\n", tg->pid, tg->comm, libs);
	}
	for (i = 0; i < t->nr_readers; i++) {
		struct devreader *r = t->readers[i];
		struct asc_devtime_stats one;
		int k;

		for (k = 0; k < r->nr_members; k++)
			if (r->members[k] == tg)
				break;
		if (k == r->nr_members)
			continue;
		asc_devtime_get_stats(r->dt, &one);
		ds.records += one.records;
		ds.tasks += one.tasks;
		ds.lost += one.lost;
	}
	append_threads(tg);
	if (t->o.with_stack) {
		if (!tg->gone)
			snapshot_maps(tg);
		write_symbols(tg);
	}
	st.hdr.type = ASC_REC_STATS;
	st.hdr.size = sizeof(st);
	st.hdr.tgid = tg->pid;
	st.hdr.ts_ns = now_ns(CLOCK_MONOTONIC);
	st.events = tg->records;
	st.drops = drops;
	st.devtask_records = ds.records;
	st.devtask_drops = ds.lost;
	st.bytes = t->cons.bytes;
	asc_capture_append(tg->w, &st, sizeof(st));
	if (drops)
		append_text(tg, ASC_REC_LOST, drops, "ring buffer reserve failures (all CPUs)");
	if (lost)
		append_text(tg, ASC_REC_LOST, lost, "ioctls not recorded (in-flight table full)");
	if (sqe_lost)
		append_text(tg, ASC_REC_LOST, sqe_lost,
			    "SQE headers not recorded (halSqTaskSend calls over 64 SQEs)");
	if (name_lost)
		append_text(tg, ASC_REC_LOST, name_lost,
			    "op names not read (user memory faulted; OPNAME empty or missing)");
	pthread_mutex_lock(&capture_lock);
	if (tg->pre.on && (tg->pre.open_ns || tg->pre.ended_first)) {
		uint64_t n = prechan_count(&tg->pre);

		if (tg->pre.overflow)
			asc_dbg("trace: pid %d: %llu early submissions not kept (set full)\n",
				tg->pid, (unsigned long long)tg->pre.overflow);
		if (n) {
			asc_info("trace: pid %d: %llu submission%s before its device channel "
				 "started (no device time)%s\n", tg->pid, (unsigned long long)n,
				 n == 1 ? "" : "s", tg->pre.ended_first ?
				 ": it ended before a channel could start" : "");
			append_lost(tg, ASC_LOST_BEFORE_DEVCHANNEL, n,
				    ASC_LOST_BEFORE_DEVCHANNEL_TEXT);
		}
	}
	prechan_free(&tg->pre);
	pthread_mutex_unlock(&capture_lock);
	append_clock(tg, ASC_CLOCK_END);
}

/* Converts one finished capture into OUTDIR/{run}_ascend_pt (user/convert/convert.convert.h). */
static int convert_target(struct trace *t, struct target *tg)
{
	struct asc_convert_opts co = {
		.out_dir = t->outdir,
		.worker_name = t->o.worker_name,
		.level = (int)t->o.level,
		.force = t->o.force,
	};
	struct asc_capture_reader *r;
	struct asc_corr *c;
	int err;

	r = asc_capture_open(tg->capture_path);
	if (!r) {
		err = -errno;
		asc_err("trace: cannot read back %s: %s\n", tg->capture_path, strerror(-err));
		return err;
	}
	c = asc_corr_build(r);
	if (!c) {
		err = -errno;
		asc_err("trace: cannot correlate %s: %s\n", tg->capture_path, strerror(-err));
		asc_capture_free(r);
		return err;
	}
	err = asc_convert(c, tg->capture_path, &co);
	asc_corr_free(c);
	asc_capture_free(r);
	if (err == -ENODATA) {
		asc_warn("trace: pid %d: no step was recorded: nothing to convert (the capture "
			 "is kept: %s)\n", tg->pid, tg->capture_path);
		return 0;
	}
	if (err)
		asc_err("trace: pid %d: conversion failed: %s (the capture is kept: %s)\n",
			tg->pid, strerror(-err), tg->capture_path);
	return err;
}

int cmd_trace(int argc, char **argv)
{
	struct trace *t;
	struct sigaction sa = {};
	uint64_t drops = 0, ioctl_lost = 0, sqe_lost = 0, name_lost = 0;
	uint64_t deadline = 0, bytes = 0, next_threads_ns = 0;
	char layers[192];
	int err, i, cap_err;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	err = asc_trace_parse_args(argc, argv, &t->o);
	if (err || t->o.help) {
		if (t->o.help)
			trace_usage(stdout);
		free(t);
		return err;
	}
	if (t->o.verbose)
		asc_log_set_level(ASC_LOG_DEBUG);
	libbpf_set_print(libbpf_print);
	err = check_privileges();
	if (!err)
		err = check_kernel();
	if (err)
		goto out_free;
	t->families = families_of(&t->o);
	t->next_id = 1;
	t->cons.sink = sink_record;
	t->cons.sink_ctx = t;
	t->cons.on_loader = on_loader;
	t->cons.loader_ctx = t;
	t->cons.loader_probe_id = ASC_LOADER_PROBE_ID;

	/* targets, and for -p / --comm the plans: errors here leave nothing behind */
	for (i = 0; i < t->o.nr_pids && !err; i++)
		err = add_target(t, t->o.pids[i], 0);
	if (!err && t->o.comm)
		err = find_comm(t);
	for (i = 0; i < t->nr_targets && !err; i++) {
		err = plan_target(t, &t->targets[i], !!t->o.comm);
		if (err == -ENOENT && t->o.comm)
			err = 0;	/* --comm: its libraries may come later (loader hook) */
	}
	if (err)
		goto out;
	if (t->o.cmd) {
		err = asc_launch_prepare(t->o.cmd, &t->child);
		if (err) {
			asc_err("trace: cannot start %s: %s\n", t->o.cmd[0], strerror(-err));
			goto out;
		}
		t->have_child = 1;
		err = add_target(t, t->child.pid, 1);
		if (err)
			goto out;
	}
	err = prepare_outdir(t);
	if (err)
		goto out;
	err = open_and_load(t);
	if (err)
		goto out;
	for (i = 0; i < t->nr_targets && !err; i++) {
		err = set_tgid(t, t->targets[i].pid, 0);
		prefill_fds(t, t->targets[i].pid);
	}
	if (!err)
		err = attach_tracepoints(t);
	if (err)
		goto out;
	t->set = asc_attach_set_new();
	if (!t->set) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < t->nr_targets; i++) {
		struct target *tg = &t->targets[i];

		err = open_capture(t, tg);
		if (err)
			goto out;
		/* the child has not exec'ed yet: its loader is ours */
		attach_loader_hook(t, tg->pid, tg->is_child ? getpid() : tg->pid);
		if (t->o.with_stack && !tg->is_child)
			snapshot_maps(tg);
		if (tg->nr_plans) {
			err = attach_plan(t, tg, 0);
			if (err < 0)
				goto out;
			if (err == 0 && tg->plans[0].nr_sites) {
				asc_err("trace: pid %d: no probe could be attached\n", tg->pid);
				err = -ENOENT;
				goto out;
			}
			err = 0;
			if (t->o.step && strcmp(t->o.step, "none"))
				attach_custom_step(t, tg);
			join_devreader(t, tg, tg->device < 0 ? 0 : tg->device);
		}
	}
	err = asc_ring_open(&t->rb, bpf_map__fd(t->skel->maps.events), ring_cb, t);
	if (err) {
		asc_err("trace: cannot open the ring buffer: %s\n", strerror(-err));
		goto out;
	}
	t->rb_open = 1;

	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	t->t_start_ns = now_ns(CLOCK_MONOTONIC);
	if (t->o.duration_s > 0)
		deadline = t->t_start_ns + (uint64_t)(t->o.duration_s * 1e9);
	for (i = 0; i < t->nr_targets && !err; i++)
		err = set_tgid(t, t->targets[i].pid, 1);
	if (err) {
		asc_err("trace: cannot open the gate: %s\n", strerror(-err));
		goto out;
	}
	if (t->have_child) {
		err = asc_launch_go(&t->child);
		if (err)
			goto out;
	}
	asc_info("trace: tracing %d process%s, Ctrl-C to stop\n", t->nr_targets,
		 t->nr_targets == 1 ? "" : "es");

	while (!stop_requested) {
		/*
		 * Records are submitted without wake-ups, so a poll that times out
		 * has consumed nothing: drain explicitly on every tick.
		 */
		err = asc_ring_poll(&t->rb, POLL_MS);
		if (err >= 0 || err == -EINTR)
			err = asc_ring_consume(&t->rb);
		if (err < 0 && err != -EINTR) {
			asc_err("trace: ring buffer poll: %s\n", strerror(-err));
			break;
		}
		err = 0;
		/* each drain has consumed every record committed before it began */
		pthread_mutex_lock(&capture_lock);
		for (i = 0; i < t->nr_targets; i++)
			if (t->targets[i].pre.young_drains > 0)
				t->targets[i].pre.young_drains--;
		pthread_mutex_unlock(&capture_lock);
		join_bound(t);
		if (t->o.comm || t->have_child) {
			t->adopt_pending = 0;
			adopt_new_tgids(t);
		}
		do_rescans(t);
		attach_launch_marks(t);
		join_bound(t);	/* binds in records an adoption flushed: not a tick later */
		/* thread names (acl_thread ...) while the threads exist: once a second */
		if (now_ns(CLOCK_MONOTONIC) >= next_threads_ns) {
			next_threads_ns = now_ns(CLOCK_MONOTONIC) + 1000000000ull;
			pthread_mutex_lock(&capture_lock);
			for (i = 0; i < t->nr_targets; i++)
				if (t->targets[i].w && !t->targets[i].gone &&
				    t->targets[i].process_written)
					append_threads(&t->targets[i]);
			pthread_mutex_unlock(&capture_lock);
		}
		if (deadline && now_ns(CLOCK_MONOTONIC) >= deadline)
			break;
		cap_err = captures_failed(t);
		if (cap_err) {
			asc_err("trace: every capture failed (%s): stopping; the traced "
				"process%s go%s on untouched\n", strerror(-cap_err),
				t->nr_targets == 1 ? "" : "es", t->nr_targets == 1 ? "es" : "");
			break;
		}
		if (!targets_alive(t) && !t->o.comm) {
			if (t->have_child)
				adopt_new_tgids(t);	/* children forked just before */
			if (!targets_alive(t))
				break;	/* --comm waits for processes that start later */
		}
	}

	/* close every gate (no half-detached records), detach, then drain what is left */
	clear_tgids(t);
	asc_attach_set_free(t->set);
	t->set = NULL;
	for (i = 0; i < 5; i++) {
		bpf_link__destroy(t->tp_links[i]);
		t->tp_links[i] = NULL;
	}
	if (t->have_child)
		for (i = 0; i < t->nr_targets; i++)
			if (t->targets[i].is_child && !t->targets[i].gone)
				kill(t->targets[i].pid, SIGCONT);
	asc_ring_consume(&t->rb);
	read_bpf_stats(t, &drops, &ioctl_lost, &sqe_lost, &name_lost);
	for (i = 0; i < t->nr_readers; i++)
		asc_devtime_stop(t->readers[i]->dt);	/* joins: their last records are in */
	for (i = 0; i < t->nr_targets; i++)
		finish_target(t, &t->targets[i], drops, ioctl_lost, sqe_lost, name_lost);
	for (i = 0; i < t->nr_targets; i++) {
		struct target *tg = &t->targets[i];
		struct stat st;
		int cerr;

		if (!tg->w)
			continue;
		cerr = asc_capture_close(tg->w);
		tg->w = NULL;
		if (!stat(tg->capture_path, &st))
			bytes += st.st_size;
		if (cerr) {
			asc_err("trace: writing %s: %s (the capture ends at its last complete "
				"frame)\n", tg->capture_path, strerror(-cerr));
			tg->capture_failed = 1;
			if (!err)
				err = cerr;
		}
	}
	if (!t->o.no_convert)
		for (i = 0; i < t->nr_targets; i++) {
			if (t->targets[i].capture_failed) {
				asc_warn("trace: pid %d: the capture is incomplete, not converted "
					 "(ascbpf convert %s reads what it holds)\n",
					 t->targets[i].pid, t->targets[i].capture_path);
				continue;
			}
			if (convert_target(t, &t->targets[i]) && !err)
				err = -EIO;
		}
	asc_consumer_layer_summary(&t->cons, layers, sizeof(layers));
	printf("ascbpf: %llu events (%s), %llu dropped, %llu malformed, %llu bytes in %d "
	       "capture%s, %.3f s\n",
	       (unsigned long long)t->cons.records, layers, (unsigned long long)drops,
	       (unsigned long long)t->cons.bad, (unsigned long long)bytes, t->nr_targets,
	       t->nr_targets == 1 ? "" : "s",
	       (now_ns(CLOCK_MONOTONIC) - t->t_start_ns) / 1e9);
	for (i = 0; i < t->nr_targets; i++)
		printf("ascbpf: pid %d rank %d: %s\n", t->targets[i].pid, t->targets[i].rank,
		       t->targets[i].capture_path);
	if (t->unrouted + t->nr_early)
		asc_warn("trace: %llu records of processes that ended before they could be "
			 "adopted were not written\n",
			 (unsigned long long)(t->unrouted + t->nr_early));
	fflush(stdout);
	if (t->have_child && t->child.exited) {
		/* the command's own failure is not ours, but say so */
		if (WIFEXITED(t->child.status) && WEXITSTATUS(t->child.status))
			asc_warn("trace: %s exited with status %d\n", t->o.cmd[0],
				 WEXITSTATUS(t->child.status));
	}
	trace_cleanup(t, 0);
	free(t);
	return err;
out:
	trace_cleanup(t, 1);
out_free:
	free(t);
	return err;
}
