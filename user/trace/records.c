// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * records.c - the records ascbpf writes into a capture itself: CONFIG,
 * CLOCK, PROCESS, THREAD, LOST text and, for --with-stack, one SYMBOL per
 * distinct stack address.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "capture/capture.h"
#include "capture/records.h"
#include "discovery/elfsym.h"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "trace/trace_priv.h"

/*
 * A text record (user/capture/capture.h: CONFIG, SYMBOL, LOST, ...); probe_id as
 * the type defines it.
 */
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

int append_text(struct target *tg, uint16_t type, uint64_t value, const char *text)
{
	return append_text_id(tg, type, 0, value, text);
}

/* An ASC_REC_LOST record with its reason (ASC_LOST_*) in hdr.probe_id. */
int append_lost(struct target *tg, uint32_t reason, uint64_t value, const char *text)
{
	return append_text_id(tg, ASC_REC_LOST, reason, value, text);
}

int append_clock(struct target *tg, uint32_t which)
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
		cmdline[n++] = 0; /* cut at the buffer: terminate it */
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
void append_threads(struct target *tg)
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

/*
 * The torch_npu environment variables of profiler_metadata.json
 * (docs/torch_npu_format.md §7), recorded at attach as CONFIG
 * "env.NAME=value", "" when unset (as torch_npu writes them).
 */
static const char *const metadata_env_names[] = {
	"ASCEND_GLOBAL_LOG_LEVEL", "HCCL_RDMA_TC",	     "HCCL_RDMA_SL",
	"ACLNN_CACHE_LIMIT",	   "HOST_CACHE_CAPACITY",    "ASCEND_ENHANCE_ENABLE",
	"PYTORCH_NPU_ALLOC_CONF",  "ASCEND_LAUNCH_BLOCKING", "HCCL_ALGO",
};

void append_config(struct trace *t, struct target *tg)
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
		snprintf(buf, sizeof(buf),
			 "schedule=skip_first=%u,wait=%u,warmup=%u,active=%u,"
			 "repeat=%u,skip_first_wait=%u",
			 o->sched.skip_first, o->sched.wait, o->sched.warmup, o->sched.active,
			 o->sched.repeat, o->sched.skip_first_wait);
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
				 "gets empty values\n",
				 tg->pid);
		for (k = 0; k < NR_ENV; k++) {
			snprintf(buf, sizeof(buf), "env.%s=%.255s", metadata_env_names[k], vals[k]);
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

/* Adds ip (not 0) to the set; without memory to grow, new addresses are not added. */
void ip_insert(struct target *tg, uint64_t ip)
{
	if (ip)
		asc_u64map_put(&tg->ips, ip, 0);
}

void snapshot_maps(struct target *tg)
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
void write_symbols(struct target *tg)
{
	char host[PATH_MAX], text[512];
	uint64_t ip, unused;
	size_t pos = 0;

	if (!tg->ips.nr || !tg->have_maps)
		return;
	while (asc_u64map_next(&tg->ips, &pos, &ip, &unused)) {
		const struct asc_map_entry *e;
		const struct asc_elf_symbol *sym = NULL;
		struct asc_elf *elf = NULL;
		uint64_t off, vaddr, delta = 0;
		const char *base;

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
void write_process(struct trace *t, struct target *tg)
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
void finish_process(struct trace *t, struct target *tg, int final)
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

struct target *target_of(struct trace *t, uint32_t tgid)
{
	int i;

	for (i = 0; i < t->nr_targets; i++)
		if ((uint32_t)t->targets[i].pid == tgid)
			return &t->targets[i];
	return NULL;
}
