/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * trace_priv.h - what the files of `ascbpf trace` (user/trace/) share: the
 * run's state (struct trace, one struct target per traced process) and the
 * functions each file offers the others.  Private to user/trace/; the
 * command's public face is trace.h and cmd_trace (commands.h).
 *
 *   trace.c     cmd_trace: setup, the poll loop, stop, summary, cleanup
 *   options.c   argument parsing, --help
 *   env.c       privileges, kernel features, the target's environment
 *   programs.c  probe plans, program selection, attaching sites
 *   targets.c   traced processes: adding, adopting, rescans, gates, liveness
 *   records.c   records ascbpf writes itself (CONFIG, PROCESS, THREAD, ...)
 *   sink.c      BPF and device records routed to the captures
 *   prechan.c   submissions made before a process's device channel started
 *   output.c    output directory, capture files, conversion
 *   stats.c     BPF counters, the end of each capture
 */
#ifndef __ASCBPF_TRACE_PRIV_H
#define __ASCBPF_TRACE_PRIV_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>
#include "ascbpf_events.h"
#include "schedule.h"
#include "discovery/probes.h"
#include "lib/hashmap.h"
#include "lib/procmaps.h"
#include "trace/attach.h"
#include "trace/consumer.h"
#include "trace/holds.h"
#include "trace/launch.h"
#include "trace/trace.h"

struct ascbpf_bpf;
struct asc_capture_writer;
struct asc_devtime;
struct asc_pytorch;
struct asc_pystack_resolver;
struct bpf_link;

#define MAX_TARGETS	   64
#define ASC_MAX_DEVREADERS 64 /* cards read at once */

/*
 * One profiling-channel reader per card, shared by every traced process
 * that uses the card: a card's session delivers the tasks of all its
 * processes (records carry no pid; the converter joins them to a process
 * through its SQE records), and this process may hold one session per card.
 */
struct target;
#define DEVREADER_HISTORY 65536 /* device records kept for processes joining later */
struct devreader {
	uint32_t dev;
	struct asc_devtime *dt;
	struct target *members[MAX_TARGETS];
	int nr_members;
	/*
	 * The start DEVCLOCK and the last DEVREADER_HISTORY device records
	 * (under capture_lock): a process joining a reader that already runs
	 * (a forked rank on its parent's card) gets them, so its tasks that
	 * completed between its first submission and its join keep their times:
	 * only those that arrived after its first submission (hist_ns: when each
	 * arrived, CLOCK_MONOTONIC), never an earlier job's on the same card.
	 */
	struct asc_devclock start_clock;
	int have_clock;
	struct asc_devtask *hist;
	uint64_t *hist_ns;
	size_t hist_head, hist_nr;
};

/* ioctl enter / exit, close, exec, fork, then the child's return from clone, clone3, fork
 * and vfork (trace.c attach_tracepoints) */
#define ASC_NR_TP_LINKS 9

/* The consumer timer: the ring is drained this often (ms). */
#define POLL_MS 100

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
#define PRECHAN_MAX	(1u << 20) /* entries kept at most (then counted as overflow) */
#define PRECHAN_STREAMS 256	   /* (device, stream) pairs followed for settling */
struct prechan {
	int on;			/* collecting (NPU activities, channel not failed) */
	int ended_first;	/* the process was gone before a channel could start for it */
	uint64_t open_ns;	/* CLOCK_MONOTONIC when the channel was open; 0: not yet */
	int young_drains;	/* device records are inserted while > 0 */
	struct asc_u64map kept; /* key -> submissions kept | PRECHAN_SEEN */
	uint64_t overflow;	/* submissions not kept (set full) */
	struct prechan_stream {
		uint32_t dev;
		uint16_t stream;
		uint16_t first_after; /* task id of its first submission after open_ns */
		uint8_t has_first;
		uint8_t settled; /* its records no longer concern kept submissions */
	} streams[PRECHAN_STREAMS];
	unsigned int nr_streams; /* beyond PRECHAN_STREAMS a stream never settles */
};
/* target.launch_marks: Level0 launch marks (attach_launch_marks) */
#define LAUNCH_MARKS_OFF    0 /* no batched send seen */
#define LAUNCH_MARKS_WANTED 1 /* seen: attach from the main loop */
#define LAUNCH_MARKS_ON	    2 /* attached (or tried once) */

struct target {
	pid_t pid;
	int rank;
	int device;
	int is_child;
	int gone;
	int rescan;	  /* loader hook fired: rescan the maps */
	int launch_marks; /* Level0: LAUNCH_MARKS_* (attach_launch_marks) */
	char comm[16];
	char capture_path[PATH_MAX];
	struct asc_capture_writer *w;
	struct asc_probe_plan *plans; /* the first plan and one per rescan */
	size_t nr_plans;
	size_t nr_attached; /* sites attached over all plans */
	size_t nr_missing_warned;
	uint64_t records;
	int dev_started;    /* joined the device reader of its device */
	struct prechan pre; /* submissions before its device channel started */
	int bind_dev;	    /* 1 + device of a TSDRV bind seen, to join; 0: none */
	int adopted;	    /* from --comm / a fork: gate opened after its attach */
	int from_adopt;	    /* started after the trace: card from its bind */
	uint32_t *threads_seen;
	size_t nr_threads_seen;
	int step_attached;   /* --step LIB:SYMBOL site attached */
	int process_written; /* PROCESS record (a child's only after its exec) */
	int capture_failed;  /* closing the capture reported a write error */
	int process_pending; /* adopted, rank not set yet: PROCESS at bind or end */
	char *cmdline;	     /* read when pending: the process may be gone */
	int cmdline_len;
	struct asc_maps maps; /* last snapshot, for symbolising stacks after exit */
	int have_maps;
	struct asc_pytorch *pt;		    /* real PyTorch hooks (shapes, stacks), or NULL */
	int pt_failed;			    /* tried once and could not: do not retry */
	struct asc_pystack_resolver *pyres; /* PYSTACK -> PYFRAME while the target lives */
	struct asc_u64map ips;		    /* --with-stack: distinct addresses (a set) */
	int held;			    /* stopped by the BPF side: SIGCONT after its rescan */
	int held_chan;			    /* 1 + card: stopped at its first submission there */
	uint64_t dev_records;		    /* device records written to its capture */
	uint64_t first_sqe_ns;		    /* its first submission's time; 0: none yet */
	/*
	 * The streams it sent tasks on and the last task id of each (from its
	 * SQE records).  Once it is gone and its records drained (gone_drained),
	 * a card's reader gives it only the device records of its own tasks:
	 * on its streams, up to its last task (a stream's tasks complete in
	 * order), then none -- a later job on the card reuses the stream ids.
	 */
	struct used_stream {
		uint32_t dev;
		uint16_t stream;
		uint16_t last_task;
		int done; /* its last task's record came (or a later one) */
	} used[PRECHAN_STREAMS];
	unsigned int nr_used; /* beyond PRECHAN_STREAMS: not followed */
	int gone_drained;     /* gone, and a drain since: its SQEs are all in */
	int no_output;	      /* nothing captured: not converted (convert_target) */
	uint64_t idle_mark;   /* records + dev_records at the last tick (gone) */
	int idle;	      /* gone and quiet: its capture holds no buffer */
	struct lazyops *lazy; /* aten ops not attached yet (lazyops.c), or NULL */
};

/* A hold announced for a process not adopted yet (applied by adopt_new_tgids). */
struct early_hold {
	pid_t pid;
	int kind;
};

struct trace {
	struct asc_trace_opts o;
	int step_py_active; /* the default Python step boundary is on in a target */
	struct ascbpf_bpf *skel;
	int unwind_guard; /* its programs are loaded (asc_unwind_guard_usable()) */
	struct asc_attach_set *set;
	struct bpf_link *tp_links[ASC_NR_TP_LINKS];
	struct asc_ring rb; /* the events ring (user/trace/consumer.h) */
	int rb_open;
	struct asc_consumer cons;
	struct target targets[MAX_TARGETS];
	int nr_targets;
	struct asc_child child;
	int have_child;
	struct probe_info *probes;
	size_t nr_probes; /* ids 0 .. nr_probes-1 */
	uint16_t *layers; /* consumer's layer table, mirrors probes */
	uint32_t next_id;
	uint32_t families;
	int created_outdir;
	uint64_t unrouted;
	uint64_t t_start_ns;
	struct asc_pytorch *select_pt; /* PyTorch object of the plan being attached */
	int adopt_pending;	       /* the BPF side announced a new process */
	void **early;		       /* records of processes not adopted yet (bounded) */
	size_t nr_early;
	struct asc_holdwatch holds; /* the release watchdog (holds.h) */
	uint64_t holds_failed;	    /* stops bpf_send_signal could not queue */
	/* the unwind guard (sink.c unwind_fixup): holds, slots written, slots not */
	uint64_t unwind_holds, unwind_fixed, unwind_failed;
	struct early_hold early_holds[MAX_TARGETS];
	int nr_early_holds;
	struct devreader *readers[ASC_MAX_DEVREADERS];
	int nr_readers;
	char outdir[PATH_MAX];
};

/* Serialises capture appends: the ring-buffer consumer and the devtime threads (sink.c). */
extern pthread_mutex_t capture_lock;

static inline uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* options.c */
void trace_usage(FILE *f);

/* env.c */
int check_privileges(void);
int check_kernel(void);
int read_file(const char *path, char *buf, size_t len);
int env_strs(pid_t pid, const char *const *names, size_t n, char (*vals)[256]);
int env_int(pid_t pid, const char *name);
int live_env_int(pid_t pid, const char *name);
int fd_card(pid_t pid);

/* programs.c */
uint32_t families_of(const struct asc_trace_opts *o);
int attach_plan(struct trace *t, struct target *tg, size_t idx);
int attach_sites(struct trace *t, struct target *tg, size_t idx, const uint8_t *mask);
/* Whether plans [0, nr_plans) of tg have a site at (path, off). */
int site_in_earlier_plan(const struct target *tg, size_t nr_plans, const char *path, uint64_t off);
int plan_target(struct trace *t, struct target *tg, int quiet_enoent);
void lib_list_add(char *buf, size_t len, size_t *pos, const char *lib);
int attach_custom_step(struct trace *t, struct target *tg);
int attach_loader_hook(struct trace *t, pid_t pid, pid_t maps_pid);
void prefill_fds(struct trace *t, pid_t pid);
void attach_launch_marks(struct trace *t);

/* lazyops.c: without uprobe_multi, only the aten ops used so far (docs/trace.md) */
struct lazyops;
uint8_t *lazy_plan_mask(struct trace *t, struct target *tg, size_t idx);
void lazy_tick(struct trace *t);
void lazy_report(struct trace *t);
void lazy_free(struct target *tg);

/* prechan.c */
void prechan_on_sqe(struct prechan *p, const struct asc_sqe *q);
void prechan_on_devtask(struct prechan *p, const struct asc_devtask *d);
uint64_t prechan_count(const struct prechan *p);
void prechan_free(struct prechan *p);

/* records.c */
int append_text(struct target *tg, uint16_t type, uint64_t value, const char *text);
int append_lost(struct target *tg, uint32_t reason, uint64_t value, const char *text);
int append_clock(struct target *tg, uint32_t which);
void append_threads(struct target *tg);
void append_config(struct trace *t, struct target *tg);
void ip_insert(struct target *tg, uint64_t ip);
void snapshot_maps(struct target *tg);
void write_symbols(struct target *tg);
void write_process(struct trace *t, struct target *tg);
void finish_process(struct trace *t, struct target *tg, int final);
struct target *target_of(struct trace *t, uint32_t tgid);

/* sink.c */
void flush_early(struct trace *t, uint32_t tgid);
int sink_record(void *ctx, const void *rec, size_t size);
void join_devreader(struct trace *t, struct target *tg, uint32_t dev);
int ring_cb(void *ctx, void *data, size_t size);
void on_loader(void *ctx, uint32_t tgid, uint64_t hold, uint64_t arg);

/* output.c */
int prepare_outdir(struct trace *t);
int open_capture(struct trace *t, struct target *tg);
int convert_target(struct trace *t, struct target *tg);

/* stats.c */
void read_bpf_stats(struct trace *t, uint64_t *drops, uint64_t *ioctl_lost, uint64_t *sqe_lost,
		    uint64_t *name_lost);
void finish_target(struct trace *t, struct target *tg, uint64_t drops, uint64_t lost,
		   uint64_t sqe_lost, uint64_t name_lost);

/* targets.c */
int add_target(struct trace *t, pid_t pid, int is_child);
int find_comm(struct trace *t);
int set_tgid(struct trace *t, pid_t pid, int open);
/* The unwind guard's line of the summary, and its warning if a throw could not be held. */
void unwind_summary(struct trace *t);
/*
 * Closes every process's gate (no record from here on) but keeps the
 * entries: the unwind guard still holds them while their probes are
 * detached, and the release watchdog still knows them.
 */
void close_tgids(struct trace *t);
void clear_tgids(struct trace *t);
void adopt_new_tgids(struct trace *t);
void do_rescans(struct trace *t);
int captures_failed(struct trace *t);
void join_bound(struct trace *t);
int process_gone(pid_t pid);
int targets_alive(struct trace *t);
void release_target(struct trace *t, struct target *tg);
void release_all(struct trace *t);
void idle_gone_captures(struct trace *t);

#endif /* __ASCBPF_TRACE_PRIV_H */
