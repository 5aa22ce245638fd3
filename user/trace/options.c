// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * options.c - the options of `ascbpf trace`: --help, parsing (trace.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "convert/db_export.h"
#include "discovery/elfsym.h"
#include "lib/log.h"
#include "trace/trace_priv.h"

void trace_usage(FILE *f)
{
	/* the usage text at column 0, as it is printed */
	// clang-format off
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
"      --step LIB:SYMBOL    step-boundary function: each return ends a step, step 0 runs\n"
"                           from the start ('none' disables steps; default: the optimizer\n"
"                           step, torch::optim::*::step() of libtorch_cpu.so for a C++ job,\n"
"                           optimizer.step() / prof.step() for a Python one)\n"
"      --step-py FUNC       a Python function whose every call ends a step where it returns\n"
"                           (real PyTorch: e.g. --step-py train_step)\n"
"      --duration S         stop after S seconds (default: until Ctrl-C or the targets exit)\n"
"      --ringbuf-size MB    ring buffer size, a power of two (default 16)\n"
"  -o, --output DIR         output directory (default ./result)\n"
"      --capture FILE       capture file (one target only; default DIR/ascbpf-PID.cap)\n"
"      --no-convert         keep only the capture file\n"
"      --force              write into a non-empty output directory\n"
"      --worker-name NAME   worker name of the *_ascend_pt directory\n"
"      --export-type T      text (default), db or text,db: torch_npu's export_type\n"
"      --rank-env NAME      environment variable of the target holding its rank (RANK)\n"
"      --debug-dir DIR      also look for libraries' separate debug files in DIR (as gdb:\n"
"                           DIR/.build-id/xx/rest.debug, DIR/<library dir>/NAME), before\n"
"                           /usr/lib/debug; stripped libraries without one: .dynsym only\n"
"      --no-hold            never stop a forked or --comm process until it is adopted,\n"
"                           and no unwind guard (a C++ exception through a probed\n"
"                           function then aborts the process)\n"
"  -v, --verbose            debug messages\n");
	// clang-format on
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
				"active, repeat, skip_first_wait)\n",
				tok);
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
	OPT_COMM = 256,
	OPT_ACT,
	OPT_LEVEL,
	OPT_SHAPES,
	OPT_MEM,
	OPT_STACK,
	OPT_SCHED,
	OPT_STEP,
	OPT_DURATION,
	OPT_RINGBUF,
	OPT_CAPTURE,
	OPT_NOCONV,
	OPT_FORCE,
	OPT_WORKER,
	OPT_RANKENV,
	OPT_STEPPY,
	OPT_HELP,
	OPT_EXPORT_TYPE,
	OPT_DEBUGDIR,
	OPT_NOHOLD,
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
	{ "export-type", required_argument, NULL, OPT_EXPORT_TYPE },
	{ "rank-env", required_argument, NULL, OPT_RANKENV },
	{ "step-py", required_argument, NULL, OPT_STEPPY },
	{ "debug-dir", required_argument, NULL, OPT_DEBUGDIR },
	{ "no-hold", no_argument, NULL, OPT_NOHOLD },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* The options with a number: -p, --level, --duration, --ringbuf-size.  0 or -EINVAL. */
static int parse_number_opt(int c, const char *arg, struct asc_trace_opts *o)
{
	uint32_t v;
	int err;

	switch (c) {
	case 'p':
		if (o->nr_pids >= ASC_TRACE_MAX_PIDS) {
			asc_err("trace: at most %d -p options\n", ASC_TRACE_MAX_PIDS);
			return -EINVAL;
		}
		err = parse_u32(arg, &v, "-p");
		if (err)
			return err;
		if (v == 0 || v > INT32_MAX) {
			asc_err("trace: -p %s is not a process id\n", arg);
			return -EINVAL;
		}
		o->pids[o->nr_pids++] = v;
		return 0;
	case OPT_LEVEL:
		err = parse_u32(arg, &v, "--level");
		if (err)
			return err;
		if (v > 2) {
			asc_err("trace: --level must be 0, 1 or 2\n");
			return -EINVAL;
		}
		o->level = v;
		return 0;
	case OPT_DURATION: {
		char *end;

		errno = 0;
		o->duration_s = strtod(arg, &end);
		if (errno || *end || end == arg || !(o->duration_s > 0) || o->duration_s > 1e7) {
			asc_err("trace: --duration: '%s' is not a positive number of seconds\n",
				arg);
			return -EINVAL;
		}
		return 0;
	}
	default: /* OPT_RINGBUF */
		err = parse_u32(arg, &v, "--ringbuf-size");
		if (err)
			return err;
		if (v == 0 || v > 1024 || (v & (v - 1))) {
			asc_err("trace: --ringbuf-size: %s MB is not a power of two in 1..1024\n",
				arg);
			return -EINVAL;
		}
		o->ringbuf_mb = v;
		return 0;
	}
}

/* One option (getopt_long's c, optarg).  0, 1 for --help (parsing stops), or -EINVAL. */
static int parse_opt(int c, char **argv, struct asc_trace_opts *o)
{
	int err;

	switch (c) {
	case 'p':
	case OPT_LEVEL:
	case OPT_DURATION:
	case OPT_RINGBUF:
		return parse_number_opt(c, optarg, o);
	case OPT_COMM:
		if (!*optarg || strlen(optarg) > 15) {
			asc_err("trace: --comm: a process name has 1 to 15 characters\n");
			return -EINVAL;
		}
		o->comm = optarg;
		break;
	case OPT_ACT:
		return asc_trace_parse_activities(optarg, &o->activities);
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
			asc_err("trace: --step: expected LIB:SYMBOL or 'none', got '%s'\n", optarg);
			return -EINVAL;
		}
		o->step = optarg;
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
	case OPT_NOHOLD:
		o->no_hold = 1;
		break;
	case OPT_FORCE:
		o->force = 1;
		break;
	case OPT_WORKER:
		/* the rule convert applies: the name becomes part of a directory name */
		if (!*optarg || strlen(optarg) >= 226 || strchr(optarg, '/')) {
			asc_err("trace: --worker-name must be 1..225 characters without '/'\n");
			return -EINVAL;
		}
		o->worker_name = optarg;
		break;
	case OPT_EXPORT_TYPE:
		o->export_type = asc_export_type_parse(optarg);
		if (o->export_type < 0) {
			asc_err("trace: --export-type must be text, db or text,db (got '%s')\n",
				optarg);
			return -EINVAL;
		}
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
	case OPT_DEBUGDIR:
		err = asc_elf_add_debug_dir(optarg);
		if (err) {
			asc_err("trace: --debug-dir %s: %s\n", optarg, strerror(-err));
			return -EINVAL;
		}
		break;
	case 'v':
		o->verbose = 1;
		break;
	case 'h':
	case OPT_HELP:
		o->help = 1;
		return 1;
	case ':':
		asc_err("trace: option %s needs an argument\n", argv[optind - 1]);
		return -EINVAL;
	default:
		asc_err("trace: unknown option '%s' (ascbpf trace --help)\n", argv[optind - 1]);
		return -EINVAL;
	}
	return 0;
}

int asc_trace_parse_args(int argc, char **argv, struct asc_trace_opts *o)
{
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
		err = parse_opt(c, argv, o);
		if (err)
			return err < 0 ? err : 0;
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
