/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * agent.h - `ascbpf agent`, the always-on node daemon (issue 18): finds the
 * processes that use an Ascend card or PyTorch (procs.c), attaches the cheap
 * probes of bpf/agent.bpf.c to each, and serves what they counted as
 * Prometheus metrics on /metrics (metrics.c, http in agent.c).
 *
 * Safety: the probes only add to BPF maps (no ring buffer, no signal, no
 * stop), so the job never waits for the agent; every link is a file
 * descriptor of the agent (nothing pinned), so a crash or SIGKILL of the
 * agent detaches everything.  Memory is bounded: at most AGENT_MAX_PROCS
 * followed processes, fixed-size BPF maps, a capped maps read per scan.
 *
 * Functions return 0 / -errno.
 */
#ifndef __ASCBPF_AGENT_H
#define __ASCBPF_AGENT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "agent_maps.h"
#include "discovery/probes.h"
#include "lib/hashmap.h"

struct agent_bpf;
struct asc_attach_set;

struct agent_opts {
	char listen[128];	 /* HOST:PORT, default 127.0.0.1:9464 */
	char dir[PATH_MAX];	 /* --dir, default /var/lib/ascbpf */
	double interval;	 /* seconds between /proc scans (--interval, 1) */
	double linger;		 /* seconds an exited process's series stay (--linger, 10) */
	double hang_min;	 /* --hang-min: a hang is no step for max(3 x p99, this) s (30) */
	char textfile[PATH_MAX]; /* --textfile DIR, "" for none */
	unsigned int capture_on; /* --capture-on: 1 << AGENT_FIND_* of the triggering kinds */
	unsigned int capture_steps; /* --capture-steps (5) */
	double capture_every;	    /* --capture-every seconds per process (600) */
	double sample_every;	    /* --sample-every seconds, 0: no sampled captures */
	unsigned int sample_steps;  /* --sample-steps (5) */
	char sample_job[128];	    /* --sample-job: only that job's processes, "" for all */
	double quota_mb;	    /* --quota: MB that DIR/captures may hold (1024) */
	int memory_blocks;	    /* --memory-blocks: probe the allocator's per-block report */
	int no_task_queue;	    /* --no-task-queue: leave Enqueue/AsncExecFunc unprobed */
	double straggler_factor;    /* --straggler-factor (1.5) */
	double slow_factor;	  /* --slow-factor: a step slower than k x the rolling median (3) */
	double slow_min;	  /* --slow-min: ... and slower than median + this, s (0.5) */
	unsigned int slow_warmup; /* --slow-warmup: steps before that are not judged (16) */
};

/* What the triggers find (findings.c), one state per kind and process. */
enum agent_finding_kind {
	AGENT_FIND_HANG = 0,   /* no step for max(3 x p99 step, --hang-min) */
	AGENT_FIND_SLOW_STEP,  /* a step > --slow-factor x the median of the ones before */
	AGENT_FIND_ALLOC_FAIL, /* a device allocation failed (active for 60 s) */
	AGENT_FIND_STRAGGLER,  /* median step > --straggler-factor x its job's other ranks' */
	AGENT_FIND_COLL_HANG,  /* inside one Hccl op for > --hang-min s (peers named) */
	AGENT_NR_FINDINGS,
};

struct agent_finding {
	int active;
	uint64_t episodes; /* times it became active */
	uint64_t captured; /* episodes the capture trigger has looked at */
	double until;	   /* ALLOC_FAIL: active until then */
};

/* What a scrape shows of one process (from the maps, or kept after its exit). */
struct agent_dev_row {
	uint32_t dev, sq;
	struct agent_stream s;
};

/* One collective op (probe site) of a process: its symbol and counters. */
struct agent_hccl_row {
	uint32_t site;
	char op[32]; /* "HcclAllReduce" */
	struct agent_hccl h;
};

struct agent_mem_row {
	uint32_t dev;
	struct agent_mem m;
};

/* One scan's counters of a process, for the flight recorder (flight.c). */
#define AGENT_FLIGHT_SCANS 60
struct agent_flight_sample {
	double t;
	uint64_t steps, tasks, syncs, sync_ns, segments, failures, reserved;
};

struct agent_target {
	pid_t pid;
	unsigned long long start; /* /proc/PID/stat starttime: a reused pid is another process */
	int job_from_env;	  /* job is a launcher's job id (not the command) */
	char job[128];		  /* launcher's job id, else the command */
	char rank[32];		  /* RANK / RANK_ID / ..., "" when none */
	char comm[32];
	struct asc_probe_plan plan;
	int have_plan;
	struct asc_attach_set *set; /* NULL until a site attached */
	size_t probes;		    /* sites attached (entry + return count 2) */
	uint64_t libs_hash;	    /* of the shared-object lines of its maps */
	struct agent_flight_sample flight[AGENT_FLIGHT_SCANS]; /* ring, nr_flight written */
	uint64_t nr_flight;
	double flight_dumped[AGENT_NR_FINDINGS]; /* monotonic s of the last dump per kind */
	long long sample_slot; /* the sampling slot it was last sampled (or found) in */
	double last_capture;   /* monotonic s of its last triggered capture, 0: none */
	double seen;	       /* monotonic s it was found */
	double exited;	       /* monotonic s it was seen gone, 0 while alive */
	int scraped;	       /* served in a scrape after it exited */
	struct agent_finding find[AGENT_NR_FINDINGS];
	uint64_t durations_seen; /* step durations the slow-step trigger has looked at */
	int final_checked;	 /* the triggers saw its counts after the exit */
	uint64_t prev_bucket[AGENT_NR_BUCKETS]; /* step_bucket at the last scan */
	uint64_t failures_seen;			/* alloc_failures the trigger has looked at */
	/* the last snapshot (refreshed per scrape while alive, final after exit) */
	struct agent_proc p;
	struct agent_dev_row *streams;
	size_t nr_streams;
	struct agent_mem_row *mem;
	size_t nr_mem;
	struct agent_hccl_row *hccl;
	size_t nr_hccl;
	/* the oldest collective call a thread of it is inside (have_stuck), from hccl_inflight */
	struct agent_hccl_call stuck;
	int have_stuck;
};

struct agent {
	struct agent_opts o;
	struct agent_bpf *skel;
	struct agent_target **t; /* followed (and lingering) processes */
	size_t nr_t;
	struct asc_u64map ignored; /* pid -> starttime of processes checked and not ours */
	uint64_t discovered;	   /* processes followed since start */
	uint64_t scrapes;
	uint64_t attach_failures;
	int listen_fd;
	int ctl_fd; /* the control socket, DIR/ctl.sock (ctl.c) */
	int textfile_warned;
	pid_t cur_pid; /* the process whose sites select_prog() is choosing programs for */
};

/* procs.c */
int agent_procs_scan(struct agent *a, double now);
/* Reads the BPF maps into every live target's snapshot. */
void agent_procs_snapshot(struct agent *a);
/* Forgets exited targets whose linger time is over (and that were scraped once since). */
void agent_procs_reap(struct agent *a, double now);
void agent_procs_free(struct agent *a);
size_t agent_probes_attached(const struct agent *a);

/* findings.c: the triggers, evaluated on every scan for the live targets (after a snapshot) */
void agent_findings_check(struct agent *a, double now);
const char *agent_finding_name(int kind);

/* metrics.c: the Prometheus text exposition of everything, malloc'ed into *out */
int agent_metrics_render(struct agent *a, double now, char **out, size_t *len);

/* flight.c: one sample per live target per scan; the dump when a finding begins */
void agent_flight_record(struct agent *a, double now);
void agent_flight_dump(struct agent *a, struct agent_target *t, int kind, double now);

/* quota.c: oldest entries of DIR/captures removed past --quota; busy(name) keeps one */
void agent_quota_enforce(struct agent *a, int (*busy)(const char *name));

/* ctl.c: the control socket (-errno or its fd), requests, the captures' progress */
int agent_ctl_open(struct agent *a);
void agent_ctl_accept(struct agent *a, int lfd);
void agent_ctl_tick(struct agent *a);
void agent_ctl_triggers(struct agent *a, double now);
void agent_ctl_sample(struct agent *a);
void agent_ctl_close(void);

/* agent.c */
double agent_now(void);

#endif /* __ASCBPF_AGENT_H */
