// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * agent.c - `ascbpf agent`: options (command line over --config FILE), the
 * BPF object of the always-on tier, and one loop that scans /proc every
 * --interval and answers HTTP/1.0 requests for /metrics in between.
 *
 * The HTTP side is deliberately tiny: one request per connection, read for
 * at most 2 s and 8 KiB, answered and closed (Prometheus scrapes that way);
 * the address is loopback unless --listen names another.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "agent.skel.h"
#include "agent/agent.h"
#include "commands.h"
#include "lib/log.h"
#include "lib/safeio.h"
#include "trace/attach.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

double agent_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: ascbpf agent [--listen HOST:PORT] [--dir DIR] [--config FILE]\n"
		"\n"
		"Runs until SIGINT/SIGTERM: follows every process that maps an Ascend or PyTorch\n"
		"library (or holds a davinci device open), including ones started later, with\n"
		"the always-on probes only (steps, submissions, synchronisations, allocator),\n"
		"counted in BPF maps, and serves them as Prometheus metrics on\n"
		"http://HOST:PORT/metrics.  Needs root.\n"
		"\n"
		"Options:\n"
		"  --listen HOST:PORT  address of the metrics server (default 127.0.0.1:9464)\n"
		"  --dir DIR           the agent's directory, made root-only\n"
		"                      (default /var/lib/ascbpf)\n"
		"  --config FILE       'option value' lines (any option below with a value;\n"
		"                      # comments); the command line overrides them\n"
		"  --interval SECONDS  between two scans of /proc for new processes (default 1)\n"
		"  --linger SECONDS    an exited process's series stay this long, and until\n"
		"                      scraped once (default 10)\n"
		"  --hang-min SECONDS  finding 'hang': no step for max(3 x p99 step, this) (30)\n"
		"  --slow-factor K     finding 'slow_step': a step over K x the rolling\n"
		"                      median (3) of the last 32 steps ...\n"
		"  --slow-min SECONDS  ... and over that median by at least this (0.5)\n"
		"  --slow-warmup N     ... judged from the process's step N on (16)\n"
		"  --straggler-factor K  finding 'straggler': a process whose median step is over\n"
		"                      K x the median of its job's other processes here (1.5)\n"
		"  --capture-on KINDS  a finding of these kinds (slow_step, alloc_failure,\n"
		"                      straggler; comma-separated) starts a capture of the\n"
		"                      process into DIR/captures\n"
		"  --capture-steps K   steps a triggered capture covers (5)\n"
		"  --capture-every S   at most one triggered capture per process in S s (600)\n"
		"  --sample-every S    a --sample-steps capture of every process every S s,\n"
		"                      at the same moment for the processes of one job\n"
		"  --sample-steps K    steps a sampled capture covers (5)\n"
		"  --sample-job J      sample only the processes of job J (default: all)\n"
		"  --quota MB          before a capture starts, the oldest entries of\n"
		"                      DIR/captures are removed down to MB (default 1024)\n"
		"  --memory-blocks     also probe the caching allocator's per-block report\n"
		"                      (ascbpf_hbm_allocated_bytes): one probe hit per block\n"
		"                      malloc/free, not an always-on cost\n"
		"  --no-task-queue     do not probe torch_npu's task queue (Enqueue,\n"
		"                      AsncExecFunc: two probe hits per op, the tier's most;\n"
		"                      no ascbpf_task_queue_* then)\n"
		"  --textfile DIR      also write the metrics to DIR/ascbpf.prom every scan\n"
		"                      (node_exporter's textfile collector)\n"
		"  -v, --verbose       log each process followed and gone\n"
		"  -h, --help          this text\n");
}

enum {
	OPT_LISTEN = 1,
	OPT_DIR,
	OPT_CONFIG,
	OPT_INTERVAL,
	OPT_LINGER,
	OPT_HANG_MIN,
	OPT_SLOW,
	OPT_MEMORY_BLOCKS,
	OPT_NO_TASK_QUEUE,
	OPT_TEXTFILE,
	OPT_STRAGGLER,
	OPT_CAPTURE_ON,
	OPT_CAPTURE_STEPS,
	OPT_CAPTURE_EVERY,
	OPT_QUOTA,
	OPT_SAMPLE_EVERY,
	OPT_SAMPLE_STEPS,
	OPT_SAMPLE_JOB,
	OPT_SLOW_MIN,
	OPT_SLOW_WARMUP,
};

static const struct option long_opts[] = {
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "dir", required_argument, NULL, OPT_DIR },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "linger", required_argument, NULL, OPT_LINGER },
	{ "hang-min", required_argument, NULL, OPT_HANG_MIN },
	{ "slow-factor", required_argument, NULL, OPT_SLOW },
	{ "memory-blocks", no_argument, NULL, OPT_MEMORY_BLOCKS },
	{ "no-task-queue", no_argument, NULL, OPT_NO_TASK_QUEUE },
	{ "textfile", required_argument, NULL, OPT_TEXTFILE },
	{ "straggler-factor", required_argument, NULL, OPT_STRAGGLER },
	{ "capture-on", required_argument, NULL, OPT_CAPTURE_ON },
	{ "capture-steps", required_argument, NULL, OPT_CAPTURE_STEPS },
	{ "capture-every", required_argument, NULL, OPT_CAPTURE_EVERY },
	{ "quota", required_argument, NULL, OPT_QUOTA },
	{ "sample-every", required_argument, NULL, OPT_SAMPLE_EVERY },
	{ "sample-steps", required_argument, NULL, OPT_SAMPLE_STEPS },
	{ "sample-job", required_argument, NULL, OPT_SAMPLE_JOB },
	{ "slow-min", required_argument, NULL, OPT_SLOW_MIN },
	{ "slow-warmup", required_argument, NULL, OPT_SLOW_WARMUP },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int set_seconds(const char *name, const char *v, double *dst, double min)
{
	char *end;
	double d = strtod(v, &end);

	if (end == v || *end || !(d >= min) || d > 86400) {
		asc_err("agent: --%s wants a number %g..86400, not '%s'\n", name, min, v);
		return -EINVAL;
	}
	*dst = d;
	return 0;
}

/* A step count 1..10000. */
static int set_count(const char *name, const char *v, unsigned int *dst)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);

	if (end == v || *end || *v == '-' || n < 1 || n > 10000) {
		asc_err("agent: --%s wants 1..10000 steps, not '%s'\n", name, v);
		return -EINVAL;
	}
	*dst = n;
	return 0;
}

/* --capture-on: slow_step,alloc_failure,straggler (a hung process has no steps to capture) */
static int parse_kinds(const char *v, unsigned int *mask)
{
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", v);
	*mask = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k;

		for (k = 0; k < AGENT_NR_FINDINGS && strcmp(tok, agent_finding_name(k)); k++)
			;
		if (k == AGENT_NR_FINDINGS || k == AGENT_FIND_HANG || k == AGENT_FIND_COLL_HANG) {
			asc_err("agent: --capture-on: '%s' is not slow_step, alloc_failure or "
				"straggler\n",
				tok);
			return -EINVAL;
		}
		*mask |= 1u << k;
	}
	return 0;
}

static int set_opt(struct agent_opts *o, int id, const char *v)
{
	switch (id) {
	case OPT_LISTEN:
		if (strlen(v) >= sizeof(o->listen) || !strrchr(v, ':')) {
			asc_err("agent: --listen wants HOST:PORT, not '%s'\n", v);
			return -EINVAL;
		}
		snprintf(o->listen, sizeof(o->listen), "%s", v);
		return 0;
	case OPT_DIR:
		if (!*v || strlen(v) >= sizeof(o->dir)) {
			asc_err("agent: --dir: bad path '%s'\n", v);
			return -EINVAL;
		}
		snprintf(o->dir, sizeof(o->dir), "%s", v);
		return 0;
	case OPT_INTERVAL:
		return set_seconds("interval", v, &o->interval, 0.05);
	case OPT_LINGER:
		return set_seconds("linger", v, &o->linger, 0);
	case OPT_TEXTFILE:
		if (!*v || strlen(v) >= sizeof(o->textfile)) {
			asc_err("agent: --textfile: bad directory '%s'\n", v);
			return -EINVAL;
		}
		snprintf(o->textfile, sizeof(o->textfile), "%s", v);
		return 0;
	case OPT_CAPTURE_ON:
		return parse_kinds(v, &o->capture_on);
	case OPT_CAPTURE_STEPS:
		return set_count("capture-steps", v, &o->capture_steps);
	case OPT_SAMPLE_EVERY:
		return set_seconds("sample-every", v, &o->sample_every, 1);
	case OPT_SAMPLE_JOB:
		if (!*v || strlen(v) >= sizeof(o->sample_job)) {
			asc_err("agent: --sample-job: bad job '%s'\n", v);
			return -EINVAL;
		}
		snprintf(o->sample_job, sizeof(o->sample_job), "%s", v);
		return 0;
	case OPT_SAMPLE_STEPS:
		return set_count("sample-steps", v, &o->sample_steps);
	case OPT_QUOTA:
		return set_seconds("quota", v, &o->quota_mb, 0.001);
	case OPT_CAPTURE_EVERY:
		return set_seconds("capture-every", v, &o->capture_every, 0);
	case OPT_STRAGGLER:
		return set_seconds("straggler-factor", v, &o->straggler_factor, 1.1);
	case OPT_HANG_MIN:
		return set_seconds("hang-min", v, &o->hang_min, 1);
	case OPT_SLOW:
		return set_seconds("slow-factor", v, &o->slow_factor, 1.1);
	case OPT_SLOW_MIN:
		return set_seconds("slow-min", v, &o->slow_min, 0);
	case OPT_SLOW_WARMUP:
		return set_count("slow-warmup", v, &o->slow_warmup);
	default:
		return -EINVAL;
	}
}

/* --config FILE: "option value" per line, "#" starts a comment. */
static int load_config(struct agent_opts *o, const char *path)
{
	char line[1024];
	int err = 0, n = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		err = -errno;
		asc_err("agent: --config %s: %s\n", path, strerror(-err));
		return err;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		char *k, *v, *save;
		const struct option *lo;

		n++;
		line[strcspn(line, "#\n")] = 0;
		k = strtok_r(line, " \t=", &save);
		if (!k)
			continue;
		v = strtok_r(NULL, " \t=", &save);
		for (lo = long_opts; lo->name && strcmp(lo->name, k); lo++)
			;
		if (!lo->name || lo->has_arg != required_argument || lo->val == OPT_CONFIG || !v ||
		    strtok_r(NULL, " \t", &save)) {
			asc_err("agent: %s:%d: want 'OPTION VALUE' (an option of --help)\n", path,
				n);
			err = -EINVAL;
			break;
		}
		err = set_opt(o, lo->val, v);
	}
	fclose(f);
	return err;
}

static int parse_args(int argc, char **argv, struct agent_opts *o, int *help)
{
	int c, err;

	snprintf(o->listen, sizeof(o->listen), "127.0.0.1:9464");
	snprintf(o->dir, sizeof(o->dir), "/var/lib/ascbpf");
	o->interval = 1;
	o->linger = 10;
	o->hang_min = 30;
	o->slow_factor = 3;
	o->slow_min = 0.5;
	o->slow_warmup = 16;
	o->straggler_factor = 1.5;
	o->capture_steps = 5;
	o->capture_every = 600;
	o->quota_mb = 1024;
	o->sample_steps = 5;
	/* the config first, so that the command line overrides it */
	for (int i = 1; i < argc; i++) {
		const char *f = !strncmp(argv[i], "--config=", 9)	     ? argv[i] + 9 :
				!strcmp(argv[i], "--config") && i + 1 < argc ? argv[i + 1] :
									       NULL;

		if (!strcmp(argv[i], "--"))
			break;
		if (f && (err = load_config(o, f)))
			return err;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "+vh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			*help = 1;
			return 0;
		case 'v':
			asc_log_set_level(ASC_LOG_DEBUG);
			break;
		case OPT_CONFIG:
			break; /* loaded above */
		case OPT_MEMORY_BLOCKS:
			o->memory_blocks = 1;
			break;
		case OPT_NO_TASK_QUEUE:
			o->no_task_queue = 1;
			break;
		case '?':
			return -EINVAL;
		default:
			if ((err = set_opt(o, c, optarg)))
				return err;
		}
	}
	if (optind < argc) {
		asc_err("agent: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static int listen_on(const char *addr)
{
	char host[128], *port;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV },
			*res;
	int fd, one = 1, err;

	snprintf(host, sizeof(host), "%s", addr);
	port = strrchr(host, ':');
	*port++ = 0;
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = 0;
	}
	err = getaddrinfo(*host ? host : NULL, port, &hints, &res);
	if (err) {
		asc_err("agent: --listen %s: %s\n", addr, gai_strerror(err));
		return -EINVAL;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 16)) {
		err = -errno;
		asc_err("agent: cannot listen on %s: %s\n", addr, strerror(-err));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(res);
		return err == -EADDRINUSE ? -EEXIST : err;
	}
	freeaddrinfo(res);
	return fd;
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w <= 0)
			return;
		p += w;
		n -= w;
	}
}

static void reply(int fd, const char *status, const char *type, const char *body, size_t len)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n",
			 status, type, len);

	send_all(fd, head, n);
	send_all(fd, body, len);
}

/* One request on a new connection: GET /metrics, anything else 404/405. */
static void serve(struct agent *a, int fd)
{
	struct timeval tv = { .tv_sec = 2 };
	char req[8192], *sp;
	size_t len = 0;
	ssize_t n;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (len < sizeof(req) - 1) {
		n = recv(fd, req + len, sizeof(req) - 1 - len, 0);
		if (n <= 0)
			break;
		len += n;
		req[len] = 0;
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[len] = 0;
	if (strncmp(req, "GET ", 4)) {
		reply(fd, "405 Method Not Allowed", "text/plain", "GET only\n", 9);
		return;
	}
	sp = strpbrk(req + 4, " ?\r\n");
	if (sp && sp - (req + 4) == 8 && !strncmp(req + 4, "/metrics", 8)) {
		char *body;
		size_t blen;

		if (agent_metrics_render(a, agent_now(), &body, &blen)) {
			reply(fd, "500 Internal Server Error", "text/plain", "out of memory\n", 14);
			return;
		}
		reply(fd, "200 OK", "text/plain; version=0.0.4; charset=utf-8", body, blen);
		free(body);
		return;
	}
	reply(fd, "404 Not Found", "text/plain", "try /metrics\n", 13);
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN) {
		char line[512];

		vsnprintf(line, sizeof(line), fmt, ap);
		asc_dbg("libbpf: %s", line);
	}
	return 0;
}

/* --dir: made when missing (links walked as safeio allows), then root-only. */
static int prepare_dir(const char *dir)
{
	int fd = asc_dir_open(dir, 1, NULL);

	if (fd < 0) {
		asc_err("agent: --dir %s: %s\n", dir, strerror(-fd));
		return fd;
	}
	if (fchown(fd, 0, 0) || fchmod(fd, 0700)) {
		int err = -errno;

		asc_err("agent: --dir %s: cannot make it root-only: %s\n", dir, strerror(-err));
		close(fd);
		return err;
	}
	close(fd);
	return 0;
}

/*
 * The always-on object, its uprobe programs made uprobe_multi where the kernel has it: one
 * link per library and process, and a detach at a process's exit that does not wait for a
 * grace period per probe (~0.1 s each for perf-event uprobes here, BENCHMARKS.md), which
 * would hold this one loop.
 */
static int load_bpf(struct agent *a)
{
	struct bpf_program *prog;
	int err;

	a->skel = agent_bpf__open();
	if (!a->skel) {
		err = -errno;
		goto fail;
	}
	bpf_object__for_each_program(prog, a->skel->obj)
		asc_attach_prepare_multi(prog); /* -EOPNOTSUPP: stays single */
	err = agent_bpf__load(a->skel);
	if (!err)
		return 0;
	agent_bpf__destroy(a->skel);
	a->skel = NULL;
fail:
	asc_err("agent: cannot load the BPF object: %s\n", strerror(-err));
	return err;
}

/*
 * --textfile: the same text into DIR/ascbpf.prom, through a temporary name and a rename
 * (node_exporter never reads half a file), never through a link (lib/safeio.h).
 */
static void write_textfile(struct agent *a, double now)
{
	char tmp[256], *body;
	size_t len, off = 0;
	int dfd, fd, err = 0;

	if (!a->o.textfile[0] || agent_metrics_render(a, now, &body, &len))
		return;
	dfd = asc_dir_open(a->o.textfile, 0, NULL);
	fd = dfd < 0 ? dfd : asc_tmp_create(dfd, "ascbpf.prom", tmp, sizeof(tmp));
	while (fd >= 0 && off < len) {
		ssize_t n = write(fd, body + off, len - off);

		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		off += n;
	}
	if (fd >= 0) {
		if (close(fd) && !err)
			err = -errno;
		if (err)
			unlinkat(dfd, tmp, 0);
		else
			err = asc_tmp_commit(dfd, tmp, "ascbpf.prom");
	} else {
		err = fd;
	}
	if (err && !a->textfile_warned) {
		asc_warn("agent: --textfile %s: %s\n", a->o.textfile, strerror(-err));
		a->textfile_warned = 1;
	}
	if (dfd >= 0)
		close(dfd);
	free(body);
}

static int run(struct agent *a)
{
	double next_scan = 0;
	struct pollfd pfd[2] = { { .fd = a->listen_fd, .events = POLLIN },
				 { .fd = a->ctl_fd, .events = POLLIN } };

	while (!stop_flag) {
		double now = agent_now();
		int ms, cfd;

		if (now >= next_scan) {
			agent_procs_scan(a, now);
			agent_procs_snapshot(a);
			agent_flight_record(a, now);
			agent_findings_check(a, now);
			agent_ctl_triggers(a, now);
			agent_ctl_sample(a);
			agent_ctl_tick(a);
			write_textfile(a, now);
			agent_procs_reap(a, now);
			next_scan = now + a->o.interval;
		}
		ms = (int)((next_scan - now) * 1000) + 1;
		if (poll(pfd, 2, ms) <= 0)
			continue;
		while ((cfd = accept4(a->listen_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
			serve(a, cfd);
			close(cfd);
		}
		if (pfd[1].revents & POLLIN)
			agent_ctl_accept(a, a->ctl_fd);
	}
	return 0;
}

int cmd_agent(int argc, char **argv)
{
	struct agent a = { .listen_fd = -1, .ctl_fd = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	int help = 0, err;

	err = parse_args(argc, argv, &a.o, &help);
	if (err || help) {
		usage(err ? stderr : stdout);
		return err;
	}
	if (geteuid() != 0) {
		asc_err("agent: needs root (run with sudo)\n");
		return -EPERM;
	}
	err = prepare_dir(a.o.dir);
	if (err)
		return err;
	libbpf_set_print(libbpf_quiet);
	err = load_bpf(&a);
	if (err)
		return err;
	a.listen_fd = listen_on(a.o.listen);
	if (a.listen_fd < 0) {
		err = a.listen_fd;
		goto out;
	}
	a.ctl_fd = agent_ctl_open(&a);
	if (a.ctl_fd < 0) {
		err = a.ctl_fd;
		goto out;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	asc_log(ASC_LOG_WARN, "agent: serving http://%s/metrics\n", a.o.listen);
	err = run(&a);
out:
	agent_ctl_close();
	if (a.ctl_fd >= 0)
		close(a.ctl_fd);
	if (a.listen_fd >= 0)
		close(a.listen_fd);
	agent_procs_free(&a);
	agent_bpf__destroy(a.skel);
	return err;
}
