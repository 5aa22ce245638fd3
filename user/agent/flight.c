// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * flight.c - the flight recorder: what led up to a finding, from the
 * always-on counters alone.  Every scan appends one sample per followed
 * process to a ring of AGENT_FLIGHT_SCANS (the counters then); when a finding
 * begins, the ring and the BPF ring of the last AGENT_RECENT step durations
 * are written to DIR/captures/PID-flight-KIND-SEQ.json (safeio: a new file,
 * never through a link), at most once a minute per process and kind.
 *
 *   {"pid":P,"job":"..","rank":"..","kind":"hang","t":MONO_S,"steps":N,
 *    "recent_steps":[{"step":I,"duration_s":D},...],
 *    "scans":[{"t":S,"steps":N,"tasks":N,"syncs":N,"sync_s":S,
 *              "segments":N,"alloc_failures":N,"hbm_reserved_bytes":N},...]}
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "agent/agent.h"
#include "lib/json_writer.h"
#include "lib/log.h"
#include "lib/safeio.h"

#define FLIGHT_EVERY_S 60.0

void agent_flight_record(struct agent *a, double now)
{
	for (size_t i = 0; i < a->nr_t; i++) {
		struct agent_target *t = a->t[i];
		struct agent_flight_sample *f;
		uint64_t tasks = 0;

		if (t->exited)
			continue;
		for (size_t j = 0; j < t->nr_streams; j++)
			tasks += t->streams[j].s.tasks;
		f = &t->flight[t->nr_flight++ % AGENT_FLIGHT_SCANS];
		f->t = now;
		f->steps = t->p.steps;
		f->tasks = tasks;
		f->syncs = t->p.syncs;
		f->sync_ns = t->p.sync_ns;
		f->segments = t->p.seg_allocs;
		f->failures = t->p.alloc_failures;
		f->reserved = t->p.seg_live_bytes;
	}
}

static void write_json(struct asc_out *o, const struct agent_target *t, const char *kind,
		       double now)
{
	uint64_t durations = t->p.steps ? t->p.steps - 1 : 0;
	uint64_t lo = durations > AGENT_RECENT ? durations - AGENT_RECENT : 0;
	uint64_t first = t->nr_flight > AGENT_FLIGHT_SCANS ? t->nr_flight - AGENT_FLIGHT_SCANS : 0;

	asc_out_printf(o, "{\"pid\":%d,\"job\":", t->pid);
	asc_json_cstr(o, t->job);
	asc_out_puts(o, ",\"rank\":");
	asc_json_cstr(o, t->rank);
	asc_out_puts(o, ",\"kind\":");
	asc_json_cstr(o, kind);
	asc_out_printf(o, ",\"t\":%.3f,\"steps\":%llu,\"recent_steps\":[", now,
		       (unsigned long long)t->p.steps);
	for (uint64_t k = lo; k < durations; k++)
		asc_out_printf(o, "%s{\"step\":%llu,\"duration_s\":%.9f}", k > lo ? "," : "",
			       (unsigned long long)k, t->p.recent_ns[k % AGENT_RECENT] / 1e9);
	asc_out_puts(o, "],\"scans\":[");
	for (uint64_t k = first; k < t->nr_flight; k++) {
		const struct agent_flight_sample *f = &t->flight[k % AGENT_FLIGHT_SCANS];

		asc_out_printf(o,
			       "%s{\"t\":%.3f,\"steps\":%llu,\"tasks\":%llu,\"syncs\":%llu,"
			       "\"sync_s\":%.9f,\"segments\":%llu,\"alloc_failures\":%llu,"
			       "\"hbm_reserved_bytes\":%llu}",
			       k > first ? "," : "", f->t, (unsigned long long)f->steps,
			       (unsigned long long)f->tasks, (unsigned long long)f->syncs,
			       f->sync_ns / 1e9, (unsigned long long)f->segments,
			       (unsigned long long)f->failures, (unsigned long long)f->reserved);
	}
	asc_out_puts(o, "]}\n");
}

void agent_flight_dump(struct agent *a, struct agent_target *t, int kind, double now)
{
	static unsigned int seq;
	struct asc_out o;
	char name[96];
	int dfd, cfd, fd, err;

	if (t->flight_dumped[kind] && now - t->flight_dumped[kind] < FLIGHT_EVERY_S)
		return;
	t->flight_dumped[kind] = now;
	dfd = asc_dir_open(a->o.dir, 0, NULL);
	cfd = dfd < 0 ? dfd : asc_subdir_open(dfd, "captures", NULL);
	if (dfd >= 0)
		close(dfd);
	snprintf(name, sizeof(name), "%d-flight-%s-%u.json", t->pid, agent_finding_name(kind),
		 ++seq);
	fd = cfd < 0 ? cfd : asc_file_create(cfd, name, 1);
	if (cfd >= 0)
		close(cfd);
	err = fd < 0 ? fd : asc_out_fdopen(&o, fd);
	if (!err) {
		write_json(&o, t, agent_finding_name(kind), now);
		err = asc_out_close(&o);
	}
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	if (err)
		asc_warn("agent: flight record of pid %d: %s\n", t->pid, strerror(-err));
	else
		asc_warn("agent: flight record of pid %d (%s): %s/captures/%s\n", t->pid,
			 agent_finding_name(kind), a->o.dir, name);
}
