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
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "ascbpf_events.h"
#include "schedule.h" /* before the skeleton: its .rodata holds a struct asc_sched */
#include "ascbpf.skel.h"
#include "ascbpf_maps.h"
#include "capture/capture.h"
#include "commands.h"
#include "trace/devtime.h"
#include "trace/features.h"
#include "arch/arch.h"
#include "discovery/pystack.h"
#include "discovery/pytorch.h"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "trace/privs.h"
#include "trace/trace_priv.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int open_and_load(struct trace *t)
{
	struct ascbpf_bpf *sk;
	struct bpf_program *prog;
	const char *why;
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
	/* --comm too: the ranks a matching launcher forks have its comm and no exec */
	sk->rodata->follow_forks = t->have_child || t->o.comm;
	sk->rodata->hold_chan = !!(t->o.activities & ASC_ACT_NPU);
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
	if (!t->have_child && !t->o.comm)
		bpf_program__set_autoload(sk->progs.asc_fork, false);
	if (!t->have_child && !t->o.comm) {
		bpf_program__set_autoload(sk->progs.asc_clone_exit, false);
		bpf_program__set_autoload(sk->progs.asc_clone3_exit, false);
		bpf_program__set_autoload(sk->progs.asc_sysfork_exit, false);
		bpf_program__set_autoload(sk->progs.asc_vfork_exit, false);
	}
	if (!(t->o.activities & ASC_ACT_NPU) || t->o.level < 2) {
		bpf_program__set_autoload(sk->progs.asc_ioctl_enter, false);
		bpf_program__set_autoload(sk->progs.asc_ioctl_exit, false);
		bpf_program__set_autoload(sk->progs.asc_close_enter, false);
	}
	/* without cookies: site ids from maps, single uprobes (user/trace/features.h) */
	sk->rodata->no_attach_cookie = !asc_feature_use(ASC_FEAT_ATTACH_COOKIE);
	bpf_program__set_autoload(sk->progs.asc_ret_push, !!sk->rodata->no_attach_cookie);
	if (sk->rodata->no_attach_cookie &&
	    (bpf_map__set_max_entries(sk->maps.site_ids, ASC_MAX_SITE_ADDRS) ||
	     bpf_map__set_max_entries(sk->maps.ret_sites, ASC_MAX_RET_SITES))) {
		err = -EINVAL;
		goto fail;
	}
	/* the unwind guard (bpf/unwind.bpf.h) holds processes: not with --no-hold */
	why = t->o.no_hold ? "--no-hold" : asc_arch_target()->no_unwind_guard;
	t->unwind_guard = !why;
	if (why) {
		bpf_program__set_autoload(sk->progs.asc_unwind_raise, false);
		bpf_program__set_autoload(sk->progs.asc_unwind_catch, false);
		asc_warn("trace: no unwind guard (%s): a C++ exception thrown through a function "
			 "with a return probe aborts the traced process\n",
			 why);
	}
	bpf_object__for_each_program(prog, sk->obj)
	{
		const char *sec = bpf_program__section_name(prog);

		if (sk->rodata->no_attach_cookie)
			break;
		if (!strcmp(sec, "uprobe") || !strcmp(sec, "uretprobe"))
			asc_attach_prepare_multi(prog); /* -EOPNOTSUPP: stays single */
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
	struct bpf_program *progs[ASC_NR_TP_LINKS] = {
		sk->progs.asc_ioctl_enter, sk->progs.asc_ioctl_exit,   sk->progs.asc_close_enter,
		sk->progs.asc_exec,	   sk->progs.asc_fork,	       sk->progs.asc_clone_exit,
		sk->progs.asc_clone3_exit, sk->progs.asc_sysfork_exit, sk->progs.asc_vfork_exit
	};
	int i;

	for (i = 0; i < ASC_NR_TP_LINKS; i++) {
		if (!bpf_program__autoload(progs[i]))
			continue;
		t->tp_links[i] = bpf_program__attach(progs[i]);
		if (!t->tp_links[i] && i >= 5) {
			/* no such system call here (fork, vfork on arm64): adopted while it runs */
			asc_dbg("trace: %s not attached: %s\n", bpf_program__name(progs[i]),
				strerror(errno));
			continue;
		}
		if (!t->tp_links[i]) {
			int err = -errno;

			asc_err("trace: cannot attach %s: %s\n", bpf_program__name(progs[i]),
				strerror(-err));
			return err;
		}
	}
	return 0;
}

static void trace_cleanup(struct trace *t, int failed)
{
	size_t j;
	int i;

	for (i = 0; i < t->nr_readers; i++) {
		asc_devtime_free(t->readers[i]->dt);
		free(t->readers[i]->hist);
		free(t->readers[i]->hist_ns);
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
		lazy_free(tg);
		asc_pystack_resolver_free(tg->pyres);
		asc_pytorch_close(tg->pt);
		asc_u64map_free(&tg->ips);
		if (tg->have_maps)
			asc_maps_free(&tg->maps);
	}
	if (failed && t->created_outdir)
		rmdir(t->outdir);
	asc_holdwatch_stop(&t->holds); /* what is left in the map goes on */
	if (t->rb_open)
		asc_ring_close(&t->rb);
	asc_attach_set_free(t->set);
	for (i = 0; i < ASC_NR_TP_LINKS; i++)
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

/*
 * Targets, and for -p / --comm their plans; for -- CMD the child, stopped
 * before its exec.  Errors here leave nothing behind.
 */
static int find_targets(struct trace *t)
{
	int err = 0, i;

	for (i = 0; i < t->o.nr_pids && !err; i++)
		err = add_target(t, t->o.pids[i], 0);
	if (!err && t->o.comm)
		err = find_comm(t);
	for (i = 0; i < t->nr_targets && !err; i++) {
		err = plan_target(t, &t->targets[i], !!t->o.comm);
		if (err == -ENOENT && t->o.comm)
			err = 0; /* --comm: its libraries may come later (loader hook) */
	}
	if (err)
		return err;
	if (t->o.cmd) {
		err = asc_launch_prepare(t->o.cmd, &t->child);
		if (err) {
			asc_err("trace: cannot start %s: %s\n", t->o.cmd[0], strerror(-err));
			return err;
		}
		t->have_child = 1;
		err = add_target(t, t->child.pid, 1);
	}
	return err;
}

/* The capture of each target, its loader hook and first plan's sites, its device reader. */
static int attach_targets(struct trace *t)
{
	int err, i, card;

	for (i = 0; i < t->nr_targets; i++) {
		struct target *tg = &t->targets[i];

		err = open_capture(t, tg);
		if (err)
			return err;
		/* the child has not exec'ed yet: its loader is ours */
		attach_loader_hook(t, tg->pid, tg->is_child ? getpid() : tg->pid);
		if (t->o.with_stack && !tg->is_child)
			snapshot_maps(tg);
		if (tg->nr_plans) {
			err = attach_plan(t, tg, 0);
			if (err < 0)
				return err;
			if (err == 0 && tg->plans[0].nr_sites) {
				asc_err("trace: pid %d: no probe could be attached\n", tg->pid);
				return -ENOENT;
			}
			if (t->o.step && strcmp(t->o.step, "none"))
				attach_custom_step(t, tg);
			/*
			 * A running process (-p) joins the card it holds open; our
			 * child has none yet: it is held at its first submission to a
			 * card (ASC_HOLD_CHAN), which names the card; else that first
			 * submission (sink_record's bind_dev) does.
			 */
			card = tg->is_child ? -1 : fd_card(tg->pid);
			if (card >= 0)
				join_devreader(t, tg, (uint32_t)card);
		}
	}
	return 0;
}

/*
 * Everything before the gates open: output directory, BPF load with every
 * gate closed, tracepoints, captures and sites, the ring buffer.
 */
static int start_tracing(struct trace *t)
{
	int err, i;

	err = prepare_outdir(t);
	if (err)
		return err;
	err = open_and_load(t);
	if (err)
		return err;
	/*
	 * Forks and --comm execs are stopped until adopted only if a watchdog lets
	 * them go on should we die (holds.h); forked now, before any thread.
	 */
	if ((t->have_child || t->o.comm || t->unwind_guard) && !t->o.no_hold) {
		err = asc_holdwatch_start(&t->holds, bpf_map__fd(t->skel->maps.tgids),
					  t->unwind_guard);
		if (err) {
			asc_warn("trace: no release watchdog (%s): forked and --comm processes "
				 "are adopted while they run, and only our child is held while it "
				 "unwinds\n",
				 strerror(-err));
		} else {
			t->skel->bss->hold_others = t->have_child || t->o.comm;
			t->skel->bss->unwind_hold_any = t->unwind_guard;
		}
		err = 0;
	}
	for (i = 0; i < t->nr_targets && !err; i++) {
		err = set_tgid(t, t->targets[i].pid, 0);
		prefill_fds(t, t->targets[i].pid);
	}
	if (!err)
		err = attach_tracepoints(t);
	if (err)
		return err;
	t->set = asc_attach_set_new();
	if (!t->set)
		return -ENOMEM;
	if (t->skel->rodata->no_attach_cookie)
		asc_attach_set_no_cookie(t->set, bpf_map__fd(t->skel->maps.site_ids),
					 t->skel->progs.asc_ret_push);
	err = attach_targets(t);
	if (err)
		return err;
	err = asc_ring_open(&t->rb, bpf_map__fd(t->skel->maps.events), ring_cb, t);
	if (err) {
		asc_err("trace: cannot open the ring buffer: %s\n", strerror(-err));
		return err;
	}
	t->rb_open = 1;
	return 0;
}

/* Signals, the start time, every gate opened, the child let go. */
static int open_gates(struct trace *t)
{
	struct sigaction sa = {};
	int err = 0, i;

	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	t->t_start_ns = now_ns(CLOCK_MONOTONIC);
	for (i = 0; i < t->nr_targets && !err; i++)
		err = set_tgid(t, t->targets[i].pid, 1);
	if (err) {
		asc_err("trace: cannot open the gate: %s\n", strerror(-err));
		return err;
	}
	if (t->have_child) {
		err = asc_launch_go(&t->child);
		if (err)
			return err;
	}
	asc_info("trace: tracing %d process%s, Ctrl-C to stop\n", t->nr_targets,
		 t->nr_targets == 1 ? "" : "es");
	return 0;
}

/* One tick's work besides the drain: joins, adoptions, rescans, thread names. */
static void tick(struct trace *t, uint64_t *next_threads_ns)
{
	int i;

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
	lazy_tick(t);
	attach_launch_marks(t);
	join_bound(t); /* binds in records an adoption flushed: not a tick later */
	idle_gone_captures(t);
	/* thread names (acl_thread ...) while the threads exist: once a second */
	if (now_ns(CLOCK_MONOTONIC) >= *next_threads_ns) {
		*next_threads_ns = now_ns(CLOCK_MONOTONIC) + 1000000000ull;
		pthread_mutex_lock(&capture_lock);
		for (i = 0; i < t->nr_targets; i++)
			if (t->targets[i].w && !t->targets[i].gone && t->targets[i].process_written)
				append_threads(&t->targets[i]);
		pthread_mutex_unlock(&capture_lock);
	}
}

/*
 * Until a signal, --duration, every capture failed, or every target gone
 * (--comm waits for processes that start later).  0, or the ring buffer's
 * poll error.
 */
static int poll_loop(struct trace *t)
{
	uint64_t deadline = 0, next_threads_ns = 0;
	int err = 0, cap_err;

	if (t->o.duration_s > 0)
		deadline = t->t_start_ns + (uint64_t)(t->o.duration_s * 1e9);
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
		tick(t, &next_threads_ns);
		if (deadline && now_ns(CLOCK_MONOTONIC) >= deadline)
			break;
		cap_err = captures_failed(t);
		if (cap_err) {
			asc_err("trace: every capture failed (%s): stopping; the traced "
				"process%s go%s on untouched\n",
				strerror(-cap_err), t->nr_targets == 1 ? "" : "es",
				t->nr_targets == 1 ? "es" : "");
			break;
		}
		if (!targets_alive(t) && !t->o.comm) {
			if (t->have_child)
				adopt_new_tgids(t); /* children forked just before */
			if (!targets_alive(t))
				break; /* --comm waits for processes that start later */
		}
	}
	return err;
}

struct detach_drain {
	struct trace *t;
	pthread_t thread;
	int on, done;
};

/* The ring consumer while the main thread detaches (which takes seconds with thousands). */
static void *drain_while_detaching(void *arg)
{
	struct detach_drain *d = arg;

	while (!__atomic_load_n(&d->done, __ATOMIC_ACQUIRE))
		asc_ring_poll(&d->t->rb, 20);
	return NULL;
}

/*
 * Closes every gate (no half-detached records), detaches, drains what is
 * left, stops the device readers and ends each capture; *drops: ring
 * reserve failures.
 */
static void stop_tracing(struct trace *t, uint64_t *drops)
{
	uint64_t ioctl_lost = 0, sqe_lost = 0, name_lost = 0, t0;
	struct asc_attach_stats st = {};
	struct detach_drain drain;
	int i;

	lazy_report(t);
	close_tgids(t);
	if (t->set)
		asc_attach_set_stats(t->set, &st);
	t0 = now_ns(CLOCK_MONOTONIC);
	/* a thread unwinding meanwhile is held (bpf/unwind.bpf.h): its hold is served now */
	drain.t = t;
	drain.done = 0;
	drain.on = !pthread_create(&drain.thread, NULL, drain_while_detaching, &drain);
	asc_attach_set_free(t->set);
	t->set = NULL;
	if (drain.on) {
		__atomic_store_n(&drain.done, 1, __ATOMIC_RELEASE);
		pthread_join(drain.thread, NULL);
	}
	asc_info("trace: detached %zu probes (%zu uprobe_multi links, %zu perf-event uprobes) in "
		 "%.3f s\n",
		 st.sites, st.multi_links, st.single_links, (now_ns(CLOCK_MONOTONIC) - t0) / 1e9);
	for (i = 0; i < ASC_NR_TP_LINKS; i++) {
		bpf_link__destroy(t->tp_links[i]);
		t->tp_links[i] = NULL;
	}
	asc_ring_consume(&t->rb);
	release_all(t); /* nothing we stopped stays stopped */
	clear_tgids(t);
	read_bpf_stats(t, drops, &ioctl_lost, &sqe_lost, &name_lost);
	for (i = 0; i < t->nr_readers; i++)
		asc_devtime_stop(t->readers[i]->dt); /* joins: their last records are in */
	for (i = 0; i < t->nr_targets; i++) {
		finish_target(t, &t->targets[i], *drops, ioctl_lost, sqe_lost, name_lost);
		/* one capture's buffers at a time, not every one's again */
		if (t->targets[i].w)
			asc_capture_idle(t->targets[i].w);
	}
}

/* Closes the captures (*bytes: their size) and converts the complete ones; err carried on. */
static int close_and_convert(struct trace *t, int err, uint64_t *bytes)
{
	int i;

	for (i = 0; i < t->nr_targets; i++) {
		struct target *tg = &t->targets[i];
		struct stat st;
		int cerr;

		if (!tg->w)
			continue;
		cerr = asc_capture_close(tg->w);
		tg->w = NULL;
		if (!stat(tg->capture_path, &st))
			*bytes += st.st_size;
		if (cerr) {
			asc_err("trace: writing %s: %s (the capture ends at its last complete "
				"frame)\n",
				tg->capture_path, strerror(-cerr));
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
	return err;
}

/* The summary line, one line per capture, and what was not written. */
static void print_summary(struct trace *t, uint64_t drops, uint64_t bytes)
{
	char layers[192];
	int i;

	asc_consumer_layer_summary(&t->cons, layers, sizeof(layers));
	printf("ascbpf: %llu events (%s), %llu dropped, %llu malformed, %llu bytes in %d "
	       "capture%s, %.3f s\n",
	       (unsigned long long)t->cons.records, layers, (unsigned long long)drops,
	       (unsigned long long)t->cons.bad, (unsigned long long)bytes, t->nr_targets,
	       t->nr_targets == 1 ? "" : "s", (now_ns(CLOCK_MONOTONIC) - t->t_start_ns) / 1e9);
	for (i = 0; i < t->nr_targets; i++)
		printf("ascbpf: pid %d rank %d: %s%s\n", t->targets[i].pid, t->targets[i].rank,
		       t->targets[i].capture_path,
		       t->targets[i].no_output ? " (no traced call, no card used: no *_ascend_pt)" :
						 "");
	if (t->unrouted + t->nr_early)
		asc_warn("trace: %llu records of processes that ended before they could be "
			 "adopted were not written\n",
			 (unsigned long long)(t->unrouted + t->nr_early));
	if (t->holds_failed)
		asc_warn("trace: %llu time%s a process could not be stopped until adopted or "
			 "until its card's channel read (bpf_send_signal busy): what it did "
			 "meanwhile may be missing (counted where it is a device record)\n",
			 (unsigned long long)t->holds_failed, t->holds_failed == 1 ? "" : "s");
	unwind_summary(t);
	fflush(stdout);
	if (t->have_child && t->child.exited) {
		/* the command's own failure is not ours, but say so */
		if (WIFEXITED(t->child.status) && WEXITSTATUS(t->child.status))
			asc_warn("trace: %s exited with status %d\n", t->o.cmd[0],
				 WEXITSTATUS(t->child.status));
		else if (WIFSIGNALED(t->child.status))
			asc_warn("trace: %s was killed by signal %d (%s)\n", t->o.cmd[0],
				 WTERMSIG(t->child.status), strsignal(WTERMSIG(t->child.status)));
	}
}

int cmd_trace(int argc, char **argv)
{
	struct trace *t;
	uint64_t drops = 0, bytes = 0;
	int err;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->holds.fd = -1;
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

	err = find_targets(t);
	if (!err)
		err = start_tracing(t);
	/* loaded, attached, output open: keep only what the run needs (trace/privs.h) */
	if (!err) {
		err = asc_privs_drop();
		if (err)
			asc_err("trace: cannot drop capabilities: %s\n", strerror(-err));
	}
	if (!err)
		err = open_gates(t);
	if (err)
		goto out;
	err = poll_loop(t);
	stop_tracing(t, &drops);
	err = close_and_convert(t, err, &bytes);
	print_summary(t, drops, bytes);
	trace_cleanup(t, 0);
	free(t);
	return err;
out:
	trace_cleanup(t, 1);
out_free:
	free(t);
	return err;
}
