// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ctl.c - deep captures on demand: `ascbpf ctl capture --pid P --iterations K`
 * asks the agent over its control socket, DIR/ctl.sock (DIR is --dir, made
 * root-only 0700 by the agent; the socket is 0600), and the agent runs the
 * existing trace machinery for it: `ascbpf trace -p P --level N --schedule
 * wait=1,warmup=0,active=K,repeat=1 -o DIR/captures/P-SEQ` as a child
 * (exec of itself, so none of the agent's descriptors and probes are
 * inherited).  The child's attach is known from its "tracing" log line; the
 * agent's own step counter then tells when K steps (and the boundary that
 * ends the last) have passed, and the child gets SIGINT: it writes and
 * converts its capture, a *_ascend_pt directory as `ascbpf trace` writes.
 * The child has PR_SET_PDEATHSIG(SIGINT): if the agent dies mid-capture the
 * capture still ends cleanly, readable up to its last frame.
 *
 * Protocol: one request line per connection, "capture iterations=K level=N
 * [start=S] [activities=A] pid=P\n" or "... job=J\n"; replies per capture
 * "started output=DIR\n" (with start=S: once the process's step count, as the
 * agent counts it, has reached S; the child is spawned then), then
 * "done status=S output=DIR\n" when its child has exited (or "error
 * MESSAGE\n"); closed when every capture of the request has ended.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "agent.skel.h"
#include "agent/agent.h"
#include "commands.h"
#include "lib/log.h"
#include "lib/safeio.h"
#include "trace/trace.h"

#define CTL_SOCK	 "ctl.sock"
#define CTL_MAX_CAPTURES 8
#define CTL_MAX_ITER	 10000

/* What a request asks for, beside its process. */
struct ctl_opts {
	unsigned int iterations, level;
	unsigned long long start_step; /* 0: now */
	char activities[32];	       /* trace --activities LIST, "" for its default */
};

struct capture {
	pid_t child, target;
	unsigned int iterations;
	struct ctl_opts o;
	int pending; /* waiting for the target's step o.start_step: no child yet */
	uint64_t s0; /* the target's steps when the child had attached; 0: not yet */
	int attached, signalled, client;
	double due; /* monotonic s at which the child gets SIGINT, 0: not yet known */
	char out[PATH_MAX + 64], log[PATH_MAX + 128];
};

static struct capture caps[CTL_MAX_CAPTURES];
static unsigned int seq;

/* Whether an entry of DIR/captures belongs to a running capture ("P-N", "P-N.cap", ...). */
static int busy(const char *name)
{
	for (int i = 0; i < CTL_MAX_CAPTURES; i++) {
		const char *base;
		size_t l;

		if (!caps[i].child)
			continue;
		base = strrchr(caps[i].out, '/');
		base = base ? base + 1 : caps[i].out;
		l = strlen(base);
		if (!strncmp(name, base, l) && (!name[l] || name[l] == '.'))
			return 1;
	}
	return 0;
}

static void say(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int fd, const char *fmt, ...)
{
	char line[PATH_MAX + 256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0 && fd >= 0)
		(void)!send(fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1,
			    MSG_NOSIGNAL);
}

static int sock_path(const char *dir, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if ((size_t)snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/%s", dir, CTL_SOCK) >=
	    sizeof(sa->sun_path)) {
		asc_err("agent: --dir %s is too long for a socket path\n", dir);
		return -ENAMETOOLONG;
	}
	return 0;
}

int agent_ctl_open(struct agent *a)
{
	struct sockaddr_un sa;
	struct stat st;
	mode_t old;
	int dfd, fd, err;

	err = sock_path(a->o.dir, &sa);
	if (err)
		return err;
	dfd = asc_dir_open(a->o.dir, 0, NULL);
	if (dfd < 0)
		return dfd;
	/* a stale socket of an agent that died; anything else there is not ours to remove */
	if (!fstatat(dfd, CTL_SOCK, &st, AT_SYMLINK_NOFOLLOW) && S_ISSOCK(st.st_mode))
		unlinkat(dfd, CTL_SOCK, 0);
	close(dfd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	old = umask(0177);
	err = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 8) ? -errno : 0;
	umask(old);
	if (err) {
		asc_err("agent: control socket %s: %s\n", sa.sun_path, strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

static struct agent_target *live(struct agent *a, pid_t pid)
{
	for (size_t i = 0; i < a->nr_t; i++)
		if (a->t[i]->pid == pid && !a->t[i]->exited)
			return a->t[i];
	return NULL;
}

/* The child: `ascbpf trace` on the target, its output in out, its log in logfd. */
static pid_t spawn(const struct capture *c, unsigned int level, int logfd)
{
	const char *act = c->o.activities[0] ? "--activities" : NULL;
	char pid_s[16], level_s[16], sched[96], cap[PATH_MAX + 96];
	pid_t parent = getpid(), child;

	snprintf(pid_s, sizeof(pid_s), "%d", c->target);
	snprintf(level_s, sizeof(level_s), "%u", level);
	snprintf(sched, sizeof(sched), "wait=1,warmup=0,active=%u,repeat=1", c->iterations);
	snprintf(cap, sizeof(cap), "%s.cap", c->out);
	child = fork();
	if (child)
		return child;
	prctl(PR_SET_PDEATHSIG, SIGINT);
	if (getppid() != parent)
		_exit(127); /* the agent died before the prctl */
	dup2(logfd, STDOUT_FILENO);
	dup2(logfd, STDERR_FILENO);
	execl("/proc/self/exe", "ascbpf", "trace", "-p", pid_s, "--level", level_s, "--schedule",
	      sched, "-o", c->out, "--capture", cap, "--duration", "3600", act, c->o.activities,
	      (char *)NULL);
	_exit(127);
}

/* Its child spawned (the log made, the client told); -1 when that failed (client told). */
static int launch(struct agent *a, struct capture *c)
{
	char name[64];
	int dfd, cfd, logfd;

	agent_quota_enforce(a, busy);
	dfd = asc_dir_open(a->o.dir, 0, NULL);
	cfd = dfd < 0 ? dfd : asc_subdir_open(dfd, "captures", NULL);
	if (dfd >= 0)
		close(dfd);
	if (cfd < 0)
		return say(c->client, "error %s/captures: %s\n", a->o.dir, strerror(-cfd)), -1;
	snprintf(name, sizeof(name), "%d-%u.log", c->target, ++seq);
	logfd = asc_file_create(cfd, name, 1);
	close(cfd);
	if (logfd < 0)
		return say(c->client, "error %s: %s\n", name, strerror(-logfd)), -1;
	snprintf(c->out, sizeof(c->out), "%s/captures/%d-%u", a->o.dir, c->target, seq);
	snprintf(c->log, sizeof(c->log), "%s/captures/%s", a->o.dir, name);
	c->child = spawn(c, c->o.level, logfd);
	close(logfd);
	if (c->child < 0) {
		c->child = 0;
		return say(c->client, "error fork: %s\n", strerror(errno)), -1;
	}
	say(c->client, "started output=%s\n", c->out);
	asc_warn("agent: capture of pid %d, %u iterations, into %s\n", c->target, c->iterations,
		 c->out);
	return 0;
}

static int start_capture_opts(struct agent *a, int client, pid_t pid, const struct ctl_opts *o)
{
	struct agent_target *t = live(a, pid);
	struct capture *c = NULL;

	if (!t || !t->probes)
		return say(client, "error pid %d is not a process the agent follows\n", pid), -1;
	for (int i = 0; i < CTL_MAX_CAPTURES; i++) {
		if ((caps[i].child || caps[i].pending) && caps[i].target == pid)
			return say(client, "error a capture of pid %d is running\n", pid), -1;
		if (!caps[i].child && !caps[i].pending && !c)
			c = &caps[i];
	}
	if (!c)
		return say(client, "error %d captures are running\n", CTL_MAX_CAPTURES), -1;
	memset(c, 0, sizeof(*c));
	c->target = pid;
	c->iterations = o->iterations;
	c->o = *o;
	c->client = client;
	if (o->start_step && t->p.steps < o->start_step) {
		c->pending = 1; /* agent_ctl_tick() launches it at that step */
		asc_info("agent: capture of pid %d waits for its step %llu (now %llu)\n", pid,
			 o->start_step, (unsigned long long)t->p.steps);
		return 0;
	}
	if (launch(a, c)) {
		c->client = -1;
		return -1;
	}
	return 0;
}

static int start_capture(struct agent *a, int client, pid_t pid, unsigned int iter,
			 unsigned int level)
{
	struct ctl_opts o = { .iterations = iter, .level = level };

	return start_capture_opts(a, client, pid, &o);
}

/* --job J: a capture of every followed process of that job, each on a copy of the client fd */
static int start_job(struct agent *a, int fd, const char *job, const struct ctl_opts *o)
{
	int started = 0;

	for (size_t i = 0; i < a->nr_t; i++) {
		int dfd;

		if (a->t[i]->exited || strcmp(a->t[i]->job, job))
			continue;
		dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (dfd < 0)
			break;
		if (start_capture_opts(a, dfd, a->t[i]->pid, o))
			close(dfd);
		else
			started++;
	}
	if (!started)
		say(fd, "error no capture started for job '%s'\n", job);
	return started ? 0 : -1;
}

/*
 * The optional "start=S " and "activities=LIST " after the level (LIST of cpu, npu, comma
 * separated: trace --activities checks it again); *rest gets what follows them.
 */
static void parse_extra(char *p, struct ctl_opts *o, char **rest)
{
	int off;

	for (;;) {
		off = -1;
		if (sscanf(p, "start=%llu %n", &o->start_step, &off) == 1 && off > 0) {
			p += off;
			continue;
		}
		off = -1;
		if (sscanf(p, "activities=%31[a-z,] %n", o->activities, &off) == 1 && off > 0) {
			p += off;
			continue;
		}
		break;
	}
	*rest = p;
}

/*
 * One request on a new control connection: "capture iterations=K level=N pid=P" or
 * "... job=J" (J to the end of the line).  The connection stays open while the capture
 * runs; with a job, until every process's capture has ended (each holds a copy).
 */
void agent_ctl_accept(struct agent *a, int lfd)
{
	struct timeval tv = { .tv_sec = 1 };
	char req[512], *what;
	struct ctl_opts o;
	int fd, pid = 0, off = -1;
	ssize_t n;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		n = recv(fd, req, sizeof(req) - 1, 0);
		req[n > 0 ? n : 0] = 0;
		req[strcspn(req, "\n")] = 0;
		off = -1;
		memset(&o, 0, sizeof(o));
		if (sscanf(req, "capture iterations=%u level=%u %n", &o.iterations, &o.level,
			   &off) != 2 ||
		    off < 0 || !o.iterations || o.iterations > CTL_MAX_ITER || o.level > 2) {
			say(fd,
			    "error bad request (want: capture iterations=1..%d level=0..2 "
			    "[start=S] [activities=cpu,npu] pid=P|job=J)\n",
			    CTL_MAX_ITER);
			close(fd);
			continue;
		}
		parse_extra(req + off, &o, &what);
		if (!strncmp(what, "job=", 4) && what[4]) {
			start_job(a, fd, what + 4, &o);
			close(fd); /* the captures hold their copies */
		} else if (sscanf(what, "pid=%d", &pid) == 1 && pid > 0) {
			if (start_capture_opts(a, fd, pid, &o))
				close(fd);
		} else {
			say(fd, "error bad request: pid=P or job=J\n");
			close(fd);
		}
	}
}

static int log_has(const char *path, const char *what)
{
	char buf[8192];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return strstr(buf, what) != NULL;
}

/* Once per scan, after the snapshot: attach seen, K steps done (SIGINT), children reaped. */
void agent_ctl_tick(struct agent *a)
{
	for (int i = 0; i < CTL_MAX_CAPTURES; i++) {
		struct capture *c = &caps[i];
		struct agent_target *t;
		int status;

		if (c->pending) {
			t = live(a, c->target);
			if (t && t->p.steps < c->o.start_step)
				continue;
			c->pending = 0;
			if (!t)
				say(c->client, "error pid %d exited before its step %llu\n",
				    c->target, c->o.start_step);
			if (!t || launch(a, c)) {
				if (c->client >= 0)
					close(c->client);
				c->client = -1;
				continue;
			}
		}
		if (!c->child)
			continue;
		t = live(a, c->target);
		/*
		 * The child's gates are open once it logged "tracing": the step count read
		 * now, from the map (not the scan's snapshot, which may predate the line),
		 * is at or after its gate.  Its schedule waits out the partial step the
		 * gate opened in (wait=1), then records K whole ones: K + 1 boundaries
		 * after the gate, one more for a boundary between the gate and this read.
		 */
		if (!c->attached && t && log_has(c->log, "trace: tracing ")) {
			uint32_t key = t->pid;

			c->attached = 1;
			c->s0 = t->p.steps;
			bpf_map_lookup_elem(bpf_map__fd(a->skel->maps.procs), &key, &t->p);
			c->s0 = t->p.steps;
		}
		/* then one scan more: the card's records of the last step reach the trace */
		if (c->attached && !c->due && t && t->p.steps >= c->s0 + c->iterations + 2)
			c->due = agent_now() + 1;
		if (c->due && !c->signalled && agent_now() >= c->due) {
			kill(c->child, SIGINT);
			c->signalled = 1;
		}
		if (waitpid(c->child, &status, WNOHANG) != c->child)
			continue;
		status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		say(c->client, "done status=%d output=%s\n", status, c->out);
		asc_warn("agent: capture of pid %d done (status %d): %s\n", c->target, status,
			 c->out);
		if (c->client >= 0)
			close(c->client);
		c->child = 0;
	}
}

/*
 * Triggered captures (--capture-on KINDS): a finding of one of those kinds that began since the
 * last scan starts a --capture-steps capture of that process (as `ctl capture` does), at most
 * one per process every --capture-every seconds.  The capture covers the steps after the
 * finding; what led to it is in the flight record, dumped for every finding (flight.c).
 */
void agent_ctl_triggers(struct agent *a, double now)
{
	for (size_t i = 0; i < a->nr_t; i++) {
		struct agent_target *t = a->t[i];

		for (int k = 0; k < AGENT_NR_FINDINGS; k++) {
			struct agent_finding *f = &t->find[k];

			if (f->episodes <= f->captured)
				continue;
			f->captured = f->episodes;
			agent_flight_dump(a, t, k, now);
			if (t->exited || !(a->o.capture_on & (1u << k)))
				continue;
			if (t->last_capture && now - t->last_capture < a->o.capture_every) {
				asc_info("agent: %s of pid %d: no capture (the last %.0f s ago)\n",
					 agent_finding_name(k), t->pid, now - t->last_capture);
				continue;
			}
			if (start_capture(a, -1, t->pid, a->o.capture_steps, 0))
				continue;
			t->last_capture = now;
			asc_warn("agent: capture of pid %d triggered by %s\n", t->pid,
				 agent_finding_name(k));
		}
	}
}

/* DIR/captures/BASE.sampling.json next to a sampled capture: how to weight it. */
static void write_sampling(struct agent *a, const struct capture *c, const struct agent_target *t,
			   long long slot)
{
	const char *base = strrchr(c->out, '/') ? strrchr(c->out, '/') + 1 : c->out;
	uint64_t durations = t->p.steps ? t->p.steps - 1 : 0, sum = 0, n = 0;
	char name[PATH_MAX + 128], text[512];
	int dfd, cfd, fd, len;
	double mean;

	for (uint64_t k = durations > AGENT_RECENT ? durations - AGENT_RECENT : 0; k < durations;
	     k++, n++)
		sum += t->p.recent_ns[k % AGENT_RECENT];
	mean = n ? sum / 1e9 / n : 0;
	/* one capture of K steps every period: it stands for period / (K x mean step) steps */
	len = snprintf(text, sizeof(text),
		       "{\"pid\":%d,\"period_s\":%.3f,\"steps\":%u,\"slot\":%lld,"
		       "\"mean_step_s\":%.6f,\"weight\":%.3f}\n",
		       t->pid, a->o.sample_every, c->iterations, slot, mean,
		       mean > 0 ? a->o.sample_every / (c->iterations * mean) : 0.0);
	snprintf(name, sizeof(name), "%s.sampling.json", base);
	dfd = asc_dir_open(a->o.dir, 0, NULL);
	cfd = dfd < 0 ? dfd : asc_subdir_open(dfd, "captures", NULL);
	if (dfd >= 0)
		close(dfd);
	fd = cfd < 0 ? cfd : asc_file_create(cfd, name, 1);
	if (cfd >= 0)
		close(cfd);
	if (fd >= 0) {
		if (write(fd, text, len) != len)
			asc_warn("agent: %s: short write\n", name);
		close(fd);
	}
}

/*
 * Sampled captures (--sample-every S --sample-steps K): time is cut into slots of S seconds,
 * shifted by a hash of the job label, so every process of one job (on every node, clocks in
 * sync) starts its K-step capture at the same moment: ranks of a job capture the same steps.
 * A process is first sampled at the slot after the one it was found in.
 */
void agent_ctl_sample(struct agent *a)
{
	struct timespec ts;
	double now;

	if (!a->o.sample_every)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	now = ts.tv_sec + ts.tv_nsec / 1e9;
	for (size_t i = 0; i < a->nr_t; i++) {
		struct agent_target *t = a->t[i];
		double off = (asc_hash_str(t->job) % 1000000) / 1e6 * a->o.sample_every;
		long long slot = (long long)((now - off) / a->o.sample_every);

		if (t->exited || !t->probes ||
		    (a->o.sample_job[0] && strcmp(a->o.sample_job, t->job)))
			continue;
		if (!t->sample_slot) {
			t->sample_slot = slot;
			continue;
		}
		if (slot <= t->sample_slot)
			continue;
		t->sample_slot = slot;
		if (start_capture(a, -1, t->pid, a->o.sample_steps, 0))
			continue;
		for (int k = 0; k < CTL_MAX_CAPTURES; k++)
			if (caps[k].child && caps[k].target == t->pid)
				write_sampling(a, &caps[k], t, slot);
		asc_warn("agent: capture of pid %d sampled (slot %lld)\n", t->pid, slot);
	}
}

/* At the agent's exit: every capture still running is ended as a Ctrl-C ends a trace. */
void agent_ctl_close(void)
{
	for (int i = 0; i < CTL_MAX_CAPTURES; i++) {
		if (!caps[i].child)
			continue;
		kill(caps[i].child, SIGINT);
		waitpid(caps[i].child, NULL, 0);
		say(caps[i].client, "done status=-1 output=%s (the agent stopped)\n", caps[i].out);
		if (caps[i].client >= 0)
			close(caps[i].client);
		caps[i].child = 0;
	}
}

static void ctl_usage(FILE *f)
{
	fprintf(f,
		"Usage: ascbpf ctl capture --pid PID | --job J [--iterations K] [--level N]\n"
		"                          [--start-step N] [--activities LIST] [--dir DIR]\n"
		"\n"
		"Asks the running `ascbpf agent` (its control socket DIR/ctl.sock, root only)\n"
		"for a deep capture of PID (or of every process of job J): `ascbpf trace` for K\n"
		"steps from the next one, written and converted into DIR/captures/PID-N (a\n"
		"*_ascend_pt directory inside).  Waits until it is done; prints the agent's\n"
		"replies.  Exit 0 when it succeeded.\n"
		"\n"
		"  -p, --pid PID         a process the agent follows\n"
		"      --job J           every process whose job label is J\n"
		"  -n, --iterations K    steps to capture (default 1, at most 10000)\n"
		"      --level N         trace level 0..2 (default 0)\n"
		"      --start-step N    begin once the process's step count (ascbpf_steps_total)\n"
		"                        reaches N: its next whole step is the first captured\n"
		"      --activities LIST cpu,npu (default both), as `ascbpf trace --activities`\n"
		"      --dir DIR         the agent's --dir (default /var/lib/ascbpf)\n"
		"  -h, --help            this text\n");
}

static int parse_uint(const char *what, const char *s, unsigned int lo, unsigned int hi,
		      unsigned int *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (end == s || *end || *s == '-' || v < lo || v > hi) {
		asc_err("ctl: --%s wants %u..%u, not '%s'\n", what, lo, hi, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int ctl_request(const char *dir, const char *req)
{
	struct sockaddr_un sa;
	char buf[1024], *all = NULL;
	int fd, err, ok = 0, started = 0;
	size_t len = 0;
	ssize_t n;

	err = sock_path(dir, &sa);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		asc_err("ctl: %s: %s (is `ascbpf agent --dir %s` running? it needs root)\n",
			sa.sun_path, strerror(-err), dir);
		close(fd);
		return err == -ECONNREFUSED ? -ENOENT : err;
	}
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	/* lines may arrive split: count them in what was received, at the end */
	while ((n = recv(fd, buf, sizeof(buf) - 1, 0)) > 0) {
		char *nb = realloc(all, len + n + 1);

		if (!nb)
			break;
		all = nb;
		memcpy(all + len, buf, n);
		len += n;
		all[len] = 0;
		fwrite(buf, 1, n, stdout);
		fflush(stdout);
	}
	close(fd);
	for (char *p = all; p && (p = strstr(p, "started ")); p++)
		started++;
	for (char *p = all; p && (p = strstr(p, "done status=0 ")); p++)
		ok++;
	free(all);
	return started && ok == started ? 0 : -EIO;
}

int cmd_ctl(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "level", required_argument, NULL, 'l' },
		{ "dir", required_argument, NULL, 'd' },
		{ "job", required_argument, NULL, 'j' },
		{ "start-step", required_argument, NULL, 's' },
		{ "activities", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int pid = 0, iter = 1, level = 0, start = 0;
	const char *dir = "/var/lib/ascbpf", *job = NULL, *act = NULL;
	char req[512], extra[96] = "";
	uint32_t act_mask;
	int c, err = 0;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		ctl_usage(stdout);
		return 0;
	}
	if (argc < 2 || strcmp(argv[1], "capture")) {
		asc_err("ctl: the only request is 'capture'\n");
		ctl_usage(stderr);
		return -EINVAL;
	}
	optind = 2;
	while (!err && (c = getopt_long(argc, argv, "p:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			err = parse_uint("pid", optarg, 1, 1u << 30, &pid);
			break;
		case 'n':
			err = parse_uint("iterations", optarg, 1, CTL_MAX_ITER, &iter);
			break;
		case 'l':
			err = parse_uint("level", optarg, 0, 2, &level);
			break;
		case 'd':
			dir = optarg;
			break;
		case 's':
			err = parse_uint("start-step", optarg, 1, 1u << 31, &start);
			break;
		case 'a':
			act = optarg;
			err = strlen(act) > 31 ||
					      strspn(act, "abcdefghijklmnopqrstuvwxyz,") !=
						      strlen(act) ||
					      asc_trace_parse_activities(act, &act_mask) ?
				      -EINVAL :
				      0;
			if (err)
				asc_err("ctl: --activities: cpu, npu or cpu,npu, not '%s'\n", act);
			break;
		case 'j':
			job = optarg;
			err = !*job || strchr(job, '\n') ? -EINVAL : 0;
			if (err)
				asc_err("ctl: --job: a job id, not '%s'\n", job);
			break;
		case 'h':
			ctl_usage(stdout);
			return 0;
		default:
			err = -EINVAL;
		}
	}
	if (!err && (!pid == !job || optind < argc)) {
		asc_err("ctl: capture wants --pid PID or --job J (and no other argument)\n");
		err = -EINVAL;
	}
	if (err) {
		ctl_usage(stderr);
		return err;
	}
	if (job && strlen(job) > 400) {
		asc_err("ctl: --job: too long\n");
		return -EINVAL;
	}
	if (start)
		snprintf(extra, sizeof(extra), "start=%u ", start);
	if (act)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), "activities=%s ",
			 act);
	if (job)
		snprintf(req, sizeof(req), "capture iterations=%u level=%u %sjob=%s\n", iter, level,
			 extra, job);
	else
		snprintf(req, sizeof(req), "capture iterations=%u level=%u %spid=%u\n", iter, level,
			 extra, pid);
	return ctl_request(dir, req);
}
