// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * npu_halclient - a small client of libascend_hal.so for npu-modeld's tests
 * and for trying the driver by hand.  Each mode prints one JSON object on
 * stdout (tests parse it with Python's json).
 *
 *   npu_halclient run [--dev N] [--streams S] [--tasks T] [--batch B]
 *                     [--flops F] [--bytes B] [--alloc BYTES] [--prof]
 *                     [--events] [--hold-ms MS] [--no-sync] [--no-stars-config]
 *       allocate, create S streams (id + SQ/CQ), submit T kernels per stream
 *       in batches of B SQEs, synchronize, read channel 50 if --prof, free.
 *       --events: stream 0 records an event after its kernels, every other
 *       stream waits for it before its own kernels.
 *       --hold-ms: sleep after submitting (tests kill the client there).
 *   npu_halclient prof [--dev N] [--ms MS] [--expect N] [--delay-ms D] [--wait-stdin]
 *       read channel 50 for MS ms (or until N records) and print the records;
 *       prints "prof: started" on stderr once the session is open; --delay-ms
 *       waits D ms before the first read (a reader that falls behind),
 *       --wait-stdin until a line arrives on stdin.  Channel 50 is started as
 *       msprof starts it (STARS configuration with acsq_task enabled);
 *       --no-stars-config (run, prof) starts it without one: no task records.
 *   npu_halclient oom [--dev N] --size BYTES
 *       allocate BYTES once; print the return code.
 *   npu_halclient clock [--dev N]
 *       print the counter frequency and a (counter, monotonic) pair.
 *   npu_halclient meminfo [--dev N]
 *       print HBM total and used as halGetDeviceInfo reports them.
 *   npu_halclient block [--dev N]
 *       allocate 1 MiB, start channel 50, create a stream, print one JSON
 *       line, then wait in halCqReportRecv with no timeout (tests kill it there).
 *   npu_halclient fork [--dev N]
 *       allocate 1 MiB, fork; the child allocates 2 MiB and runs 5 kernels
 *       on its own stream and exits; the parent then reports HBM in use
 *       (only its own 1 MiB if the child's binds were the child's).
 * Exit status: 0 when the mode did what it says, 1 on a HAL error, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ascend_hal.h"
#include "npu_ioctl.h"
#include "npu_sqe.h"

struct opts {
	uint32_t dev, streams, tasks, batch;
	uint64_t flops, bytes, alloc, size;
	int prof, events, no_sync;
	uint32_t hold_ms, ms, expect, delay_ms;
	int wait_stdin;
	int no_stars_config; /* start channel 50 without a StarsSocLogConfigT */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int fail(const char *what, int ret)
{
	printf("{\"ok\": false, \"error\": \"%s\", \"ret\": %d}\n", what, ret);
	return 1;
}

/*
 * Channel 50 as msprof starts it: a zeroed StarsSocLogConfigT with acsq_task
 * (and ffts_thread_task) enabled; --no-stars-config passes none.
 */
static int start_channel50(const struct opts *o)
{
	StarsSocLogConfigT cfg;
	struct prof_start_para para = { .channel_type = PROF_CHANNEL_TYPE_TS, .real_time = 1 };

	memset(&cfg, 0, sizeof(cfg));
	cfg.acsq_task = TS_PROFILE_COMMAND_TYPE_PROFILING_ENABLE;
	cfg.ffts_thread_task = TS_PROFILE_COMMAND_TYPE_PROFILING_ENABLE;
	if (!o->no_stars_config) {
		para.user_data = &cfg;
		para.user_data_size = sizeof(cfg);
	}
	return prof_drv_start(o->dev, PROF_CHANNEL_STARS_SOC_LOG, &para);
}

struct stream {
	uint32_t id, sq, cq, tail;
	uint16_t next_task;
	uint16_t flip;
};

static void fill_kernel(struct npu_sqe *s, struct stream *st, const struct opts *o)
{
	memset(s, 0, sizeof(*s));
	s->header.type = RT_STARS_SQE_TYPE_FFTS;
	s->header.blockDim = 8;
	s->header.rtStreamId = (uint16_t)st->id;
	s->header.taskId = st->next_task;
	s->kind = NPU_SQE_KIND_KERNEL;
	s->task_type = NPU_TASK_AI_CORE;
	s->flip = st->flip;
	s->flops = o->flops;
	s->bytes = o->bytes;
	snprintf(s->u.kernel_name, sizeof(s->u.kernel_name), "ClientKernel_s%u", st->id);
	if (++st->next_task == 0)
		st->flip++;
}

static void fill_event(struct npu_sqe *s, struct stream *st, int kind, uint32_t event)
{
	memset(s, 0, sizeof(*s));
	s->header.type = kind == NPU_SQE_KIND_EVENT_RECORD ? RT_STARS_SQE_TYPE_EVENT_RECORD :
							     RT_STARS_SQE_TYPE_EVENT_WAIT;
	s->header.rtStreamId = (uint16_t)st->id;
	s->header.taskId = st->next_task;
	s->kind = (uint8_t)kind;
	s->task_type = kind == NPU_SQE_KIND_EVENT_RECORD ? NPU_TASK_EVENT_RECORD :
							   NPU_TASK_EVENT_WAIT;
	s->flip = st->flip;
	s->event_id = event;
	if (++st->next_task == 0)
		st->flip++;
}

static int send(uint32_t dev, struct stream *st, struct npu_sqe *sqes, uint32_t n)
{
	struct halTaskSendInfo info;
	int ret;

	memset(&info, 0, sizeof(info));
	info.type = DRV_NORMAL_TYPE;
	info.sqId = st->sq;
	info.timeout = 10000;
	info.sqe_addr = (uint8_t *)sqes;
	info.sqe_num = n;
	ret = halSqTaskSend(dev, &info);
	if (!ret)
		st->tail = (info.pos + n) % NPU_UIO_SQ_DEPTH;
	return ret;
}

static int sync_stream(uint32_t dev, struct stream *st)
{
	struct halSqCqQueryInfo q;
	int ret;

	for (;;) {
		memset(&q, 0, sizeof(q));
		q.type = DRV_NORMAL_TYPE;
		q.sqId = st->sq;
		q.cqId = st->cq;
		q.prop = DRV_SQCQ_PROP_SQ_HEAD;
		ret = halSqCqQuery(dev, &q);
		if (ret)
			return ret;
		if (q.value[0] == st->tail)
			return 0;
		q.prop = NPU_SQCQ_PROP_SQ_HEAD_WAIT;
		q.value[1] = q.value[0];
		q.value[2] = 100000;
		ret = halSqCqQuery(dev, &q);
		if (ret)
			return ret;
	}
}

/* Reads channel 50 until `want` records or `ms` passed; returns records read. */
static uint32_t read_prof(uint32_t dev, struct StarsAcsqLog *recs, uint32_t cap, uint32_t want,
			  uint32_t ms)
{
	uint64_t deadline = now_ns() + (uint64_t)ms * 1000000ull;
	uint32_t n = 0;

	while (n < want && n < cap && now_ns() < deadline) {
		int got = prof_channel_read(dev, PROF_CHANNEL_STARS_SOC_LOG, (char *)&recs[n],
					    (cap - n) * (unsigned)sizeof(recs[0]));

		if (got < 0)
			break;
		n += (uint32_t)got / (uint32_t)sizeof(recs[0]);
		if (got == 0) {
			struct prof_poll_info pi[4];

			if (prof_channel_poll(pi, 4, 0) <= 0)
				usleep(2000);
		}
	}
	return n;
}

static void print_records(const struct StarsAcsqLog *recs, uint32_t n)
{
	uint32_t i;

	printf("\"records\": [");
	for (i = 0; i < n; i++) {
		const struct StarsAcsqLog *r = &recs[i];

		printf("%s[%u, %u, %u, %u, %llu]", i ? ", " : "", r->head.logType, r->head.sqeType,
		       r->streamId, r->taskId,
		       (unsigned long long)r->sysCountLow | (unsigned long long)r->sysCountHigh
								    << 32);
	}
	printf("]");
}

static int mode_run(const struct opts *o)
{
	struct halResourceIdInputInfo rin;
	struct halResourceIdOutputInfo rout;
	struct halSqCqInputInfo sin;
	struct halSqCqOutputInfo sout;
	struct stream *st;
	struct npu_sqe *sqes;
	struct StarsAcsqLog *recs = NULL;
	uint32_t s, i, nrec = 0, event = 0, per_stream, total;
	uint64_t t_submit0, t_submit1, t_sync1;
	void *mem = NULL;
	int ret, ver;
	int64_t freq = 0, drops = 0;

	ret = halGetAPIVersion(&ver);
	if (ret)
		return fail("halGetAPIVersion", ret);
	ret = halGetDeviceInfo(o->dev, MODULE_TYPE_SYSTEM, INFO_TYPE_DEV_OSC_FREQUE, &freq);
	if (ret)
		return fail("halGetDeviceInfo", ret);
	if (o->alloc) {
		ret = halMemAlloc(&mem, o->alloc, MEM_DEV | MEM_TYPE_HBM | o->dev);
		if (ret)
			return fail("halMemAlloc", ret);
	}
	if (o->prof) {
		ret = start_channel50(o);
		if (ret)
			return fail("prof_drv_start", ret);
	}
	st = calloc(o->streams, sizeof(*st));
	sqes = calloc(o->batch + 2, sizeof(*sqes));
	if (!st || !sqes)
		return fail("calloc", -ENOMEM);
	for (s = 0; s < o->streams; s++) {
		memset(&rin, 0, sizeof(rin));
		rin.type = DRV_STREAM_ID;
		ret = halResourceIdAlloc(o->dev, &rin, &rout);
		if (ret)
			return fail("halResourceIdAlloc", ret);
		st[s].id = rout.resourceId;
		memset(&sin, 0, sizeof(sin));
		sin.type = DRV_NORMAL_TYPE;
		sin.sqeSize = 64;
		sin.cqeSize = 12;
		sin.sqeDepth = NPU_UIO_SQ_DEPTH;
		sin.cqeDepth = NPU_UIO_SQ_DEPTH;
		sin.info[0] = st[s].id;
		ret = halSqCqAllocate(o->dev, &sin, &sout);
		if (ret)
			return fail("halSqCqAllocate", ret);
		st[s].sq = sout.sqId;
		st[s].cq = sout.cqId;
	}
	if (o->events) {
		memset(&rin, 0, sizeof(rin));
		rin.type = DRV_EVENT_ID;
		ret = halResourceIdAlloc(o->dev, &rin, &rout);
		if (ret)
			return fail("halResourceIdAlloc(event)", ret);
		event = rout.resourceId;
	}
	per_stream = o->tasks + (o->events ? 1 : 0);
	total = per_stream * o->streams;
	t_submit0 = now_ns();
	for (s = 0; s < o->streams; s++) {
		uint32_t left = o->tasks;

		if (o->events && s > 0) {
			fill_event(&sqes[0], &st[s], NPU_SQE_KIND_EVENT_WAIT, event);
			ret = send(o->dev, &st[s], sqes, 1);
			if (ret)
				return fail("halSqTaskSend(wait)", ret);
		}
		while (left) {
			uint32_t n = left < o->batch ? left : o->batch;

			for (i = 0; i < n; i++)
				fill_kernel(&sqes[i], &st[s], o);
			left -= n;
			if (o->events && s == 0 && !left)
				fill_event(&sqes[n++], &st[s], NPU_SQE_KIND_EVENT_RECORD, event);
			ret = send(o->dev, &st[s], sqes, n);
			if (ret)
				return fail("halSqTaskSend", ret);
		}
	}
	t_submit1 = now_ns();
	if (o->hold_ms)
		usleep(o->hold_ms * 1000u);
	for (s = 0; s < o->streams && !o->no_sync; s++) {
		ret = sync_stream(o->dev, &st[s]);
		if (ret)
			return fail("halSqCqQuery", ret);
	}
	t_sync1 = now_ns();
	if (o->prof) {
		recs = calloc((size_t)total * 2 + 16, sizeof(*recs));
		if (!recs)
			return fail("calloc", -ENOMEM);
		nrec = read_prof(o->dev, recs, total * 2 + 16, total * 2, 5000);
		halGetDeviceInfo(o->dev, MODULE_TYPE_SYSTEM, NPU_INFO_TYPE_PROF_DROPS, &drops);
		prof_stop(o->dev, PROF_CHANNEL_STARS_SOC_LOG);
	}
	printf("{\"ok\": true, \"pid\": %d, \"api_version\": %d, \"freq_khz\": %lld, "
	       "\"mem\": \"0x%llx\", \"streams\": [",
	       (int)getpid(), ver, (long long)freq, (unsigned long long)(uintptr_t)mem);
	for (s = 0; s < o->streams; s++)
		printf("%s{\"id\": %u, \"sq\": %u, \"cq\": %u, \"tasks\": %u}", s ? ", " : "",
		       st[s].id, st[s].sq, st[s].cq, per_stream);
	printf("], \"event\": %u, \"submitted\": %u, \"submit_ns\": %llu, \"sync_ns\": %llu, "
	       "\"t_submit0\": %llu, \"t_sync1\": %llu, \"dropped\": %lld, ",
	       event, total, (unsigned long long)(t_submit1 - t_submit0),
	       (unsigned long long)(t_sync1 - t_submit1), (unsigned long long)t_submit0,
	       (unsigned long long)t_sync1, (long long)drops);
	print_records(recs, nrec);
	printf("}\n");
	fflush(stdout);
	for (s = 0; s < o->streams; s++) {
		struct halSqCqFreeInfo fi = { .type = DRV_NORMAL_TYPE,
					      .sqId = st[s].sq,
					      .cqId = st[s].cq };

		halSqCqFree(o->dev, &fi);
		memset(&rin, 0, sizeof(rin));
		rin.type = DRV_STREAM_ID;
		rin.resourceId = st[s].id;
		halResourceIdFree(o->dev, &rin);
	}
	if (mem)
		halMemFree(mem);
	free(recs);
	free(st);
	free(sqes);
	return 0;
}

static int mode_prof(const struct opts *o)
{
	uint32_t cap = o->expect ? o->expect : 1u << 20, n;
	struct StarsAcsqLog *recs = calloc(cap, sizeof(*recs));
	int64_t drops = 0;
	unsigned int flush_len = 0;
	int ret;

	if (!recs)
		return fail("calloc", -ENOMEM);
	ret = start_channel50(o);
	if (ret)
		return fail("prof_drv_start", ret);
	/* Tell a test we are reading before it starts the work. */
	fprintf(stderr, "prof: started\n");
	if (o->delay_ms)
		usleep(o->delay_ms * 1000u); /* a reader that falls behind */
	if (o->wait_stdin) {
		char line[16];

		/* ... or one that reads only when told to (a line on stdin). */
		if (!fgets(line, sizeof(line), stdin))
			return fail("stdin", -EIO);
	}
	ret = halProfDataFlush(o->dev, PROF_CHANNEL_STARS_SOC_LOG, &flush_len);
	if (ret)
		return fail("halProfDataFlush", ret);
	n = read_prof(o->dev, recs, cap, cap, o->ms);
	halGetDeviceInfo(o->dev, MODULE_TYPE_SYSTEM, NPU_INFO_TYPE_PROF_DROPS, &drops);
	prof_stop(o->dev, PROF_CHANNEL_STARS_SOC_LOG);
	printf("{\"ok\": true, \"dropped\": %lld, \"flush_len\": %u, ", (long long)drops,
	       flush_len);
	print_records(recs, n);
	printf("}\n");
	free(recs);
	return 0;
}

static int mode_oom(const struct opts *o)
{
	void *p = NULL;
	int ret = halMemAlloc(&p, o->size, MEM_DEV | MEM_TYPE_HBM | o->dev);

	printf("{\"ok\": true, \"ret\": %d, \"ptr\": \"0x%llx\"}\n", ret,
	       (unsigned long long)(uintptr_t)p);
	if (!ret)
		halMemFree(p);
	return 0;
}

static int mode_clock(const struct opts *o)
{
	int64_t freq, cnt, mono;
	uint64_t before = now_ns(), after;
	int ret;

	ret = halGetDeviceInfo(o->dev, MODULE_TYPE_SYSTEM, INFO_TYPE_DEV_OSC_FREQUE, &freq);
	if (!ret)
		ret = halGetDeviceInfo(o->dev, MODULE_TYPE_SYSTEM, NPU_INFO_TYPE_SYS_COUNT, &cnt);
	if (!ret)
		ret = halGetDeviceInfo(o->dev, MODULE_TYPE_SYSTEM, NPU_INFO_TYPE_SYS_COUNT_MONO,
				       &mono);
	after = now_ns();
	if (ret)
		return fail("halGetDeviceInfo", ret);
	printf("{\"ok\": true, \"freq_khz\": %lld, \"counter\": %lld, \"mono_ns\": %lld, "
	       "\"before_ns\": %llu, \"after_ns\": %llu}\n",
	       (long long)freq, (long long)cnt, (long long)mono, (unsigned long long)before,
	       (unsigned long long)after);
	return 0;
}

static int mode_meminfo(const struct opts *o)
{
	int64_t total, used;
	int ret;

	ret = halGetDeviceInfo(o->dev, MODULE_TYPE_SYSTEM, NPU_INFO_TYPE_HBM_TOTAL, &total);
	if (!ret)
		ret = halGetDeviceInfo(o->dev, MODULE_TYPE_SYSTEM, NPU_INFO_TYPE_HBM_USED, &used);
	if (ret)
		return fail("halGetDeviceInfo", ret);
	printf("{\"ok\": true, \"total\": %lld, \"used\": %lld}\n", (long long)total,
	       (long long)used);
	return 0;
}

static int mode_block(const struct opts *o)
{
	struct halResourceIdInputInfo rin = { .type = DRV_STREAM_ID };
	struct halResourceIdOutputInfo rout;
	struct halSqCqInputInfo sin = {
		.type = DRV_NORMAL_TYPE, .sqeSize = 64, .cqeSize = 12, .sqeDepth = NPU_UIO_SQ_DEPTH
	};
	struct halSqCqOutputInfo sout;
	struct trs_logic_cqe cqe[4];
	struct halReportRecvInfo rv;
	void *mem = NULL;
	int ret;

	ret = halMemAlloc(&mem, 1 << 20, MEM_DEV | MEM_TYPE_HBM | o->dev);
	if (!ret)
		ret = start_channel50(o);
	if (!ret)
		ret = halResourceIdAlloc(o->dev, &rin, &rout);
	if (!ret)
		ret = halSqCqAllocate(o->dev, &sin, &sout);
	if (ret)
		return fail("setup", ret);
	printf("{\"ok\": true, \"pid\": %d, \"cq\": %u}\n", (int)getpid(), sout.cqId);
	fflush(stdout);
	memset(&rv, 0, sizeof(rv));
	rv.type = DRV_NORMAL_TYPE;
	rv.cqId = sout.cqId;
	rv.timeout = -1;
	rv.cqe_addr = (uint8_t *)cqe;
	rv.cqe_num = 4;
	ret = halCqReportRecv(o->dev, &rv);
	return fail("halCqReportRecv returned", ret);
}

static int mode_fork(struct opts *o)
{
	int64_t used_before = 0, used_after = 0;
	void *mem = NULL;
	int ret, status = 0;
	pid_t child;

	ret = halMemAlloc(&mem, 1 << 20, MEM_DEV | MEM_TYPE_HBM | o->dev);
	if (ret)
		return fail("halMemAlloc", ret);
	halGetDeviceInfo(o->dev, MODULE_TYPE_SYSTEM, NPU_INFO_TYPE_HBM_USED, &used_before);
	fflush(stdout);
	child = fork();
	if (child < 0)
		return fail("fork", -errno);
	if (child == 0) {
		o->tasks = 5;
		o->alloc = 2 << 20;
		o->streams = 1;
		_exit(mode_run(o));
	}
	waitpid(child, &status, 0);
	/* The child's fds are closed by now; the daemon reclaims on release. */
	for (int i = 0; i < 100; i++) {
		halGetDeviceInfo(o->dev, MODULE_TYPE_SYSTEM, NPU_INFO_TYPE_HBM_USED, &used_after);
		if (used_after == used_before)
			break;
		usleep(10000);
	}
	printf("{\"ok\": true, \"fork\": true, \"pid\": %d, \"child\": %d, \"child_status\": %d, "
	       "\"used_before\": %lld, \"used_after\": %lld}\n",
	       (int)getpid(), (int)child, status, (long long)used_before, (long long)used_after);
	ret = halMemFree(mem);
	return ret ? fail("halMemFree", ret) : 0;
}

static int parse_u(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end || *s == '-' ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "streams", required_argument, NULL, 's' },
		{ "tasks", required_argument, NULL, 't' },
		{ "batch", required_argument, NULL, 'b' },
		{ "flops", required_argument, NULL, 'F' },
		{ "bytes", required_argument, NULL, 'B' },
		{ "alloc", required_argument, NULL, 'a' },
		{ "size", required_argument, NULL, 'z' },
		{ "prof", no_argument, NULL, 'p' },
		{ "events", no_argument, NULL, 'e' },
		{ "no-sync", no_argument, NULL, 'n' },
		{ "hold-ms", required_argument, NULL, 'h' },
		{ "ms", required_argument, NULL, 'm' },
		{ "expect", required_argument, NULL, 'x' },
		{ "delay-ms", required_argument, NULL, 'D' },
		{ "wait-stdin", no_argument, NULL, 'W' },
		{ "no-stars-config", no_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = {
		.streams = 1, .tasks = 10, .batch = 1, .flops = 1000000, .bytes = 4096, .ms = 2000
	};
	const char *mode;
	uint64_t v;
	int c;

	if (argc < 2) {
		fprintf(stderr, "usage: npu_halclient run|prof|oom|clock|meminfo|fork|block "
				"[options]\n");
		return 2;
	}
	mode = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		if (c == 'W' || c == 'S') {
			*(c == 'W' ? &o.wait_stdin : &o.no_stars_config) = 1;
			continue;
		}
		if (c == 'p' || c == 'e' || c == 'n') {
			*(c == 'p' ? &o.prof : c == 'e' ? &o.events : &o.no_sync) = 1;
			continue;
		}
		if (c == '?' || parse_u(optarg, &v)) {
			fprintf(stderr, "npu_halclient: bad option or number\n");
			return 2;
		}
		/* the option table: one option a line */
		// clang-format off
		switch (c) {
		case 'd': o.dev = (uint32_t)v; break;
		case 's': o.streams = (uint32_t)v; break;
		case 't': o.tasks = (uint32_t)v; break;
		case 'b': o.batch = (uint32_t)v; break;
		case 'F': o.flops = v; break;
		case 'B': o.bytes = v; break;
		case 'a': o.alloc = v; break;
		case 'z': o.size = v; break;
		case 'h': o.hold_ms = (uint32_t)v; break;
		case 'm': o.ms = (uint32_t)v; break;
		case 'x': o.expect = (uint32_t)v; break;
		case 'D': o.delay_ms = (uint32_t)v; break;
		}
		// clang-format on
	}
	if (o.streams == 0 || o.batch == 0 || o.batch > 512) {
		fprintf(stderr, "npu_halclient: --streams >= 1, --batch 1..512\n");
		return 2;
	}
	if (!strcmp(mode, "run"))
		return mode_run(&o);
	if (!strcmp(mode, "prof"))
		return mode_prof(&o);
	if (!strcmp(mode, "oom"))
		return mode_oom(&o);
	if (!strcmp(mode, "clock"))
		return mode_clock(&o);
	if (!strcmp(mode, "meminfo"))
		return mode_meminfo(&o);
	if (!strcmp(mode, "fork"))
		return mode_fork(&o);
	if (!strcmp(mode, "block"))
		return mode_block(&o);
	fprintf(stderr, "npu_halclient: unknown mode '%s'\n", mode);
	return 2;
}
