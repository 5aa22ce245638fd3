// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pt_trace - standalone loader of bpf/pytorch.bpf.c for tests and the
 * benchmark: the user/discovery/pytorch.h hook sequence `ascbpf trace` follows, with
 * this object's own ring buffer and gate instead of the main object's.
 *
 *   pt_trace -p PID [--record-shapes] [--with-stack] [--step-py FUNC]
 *            [--profile-memory] [--ready FILE] [--json OUT] [--no-multi]
 *
 * Attaches asc_aten_enter / asc_aten_exit to every at::_ops::<op>::call of
 * the libtorch_cpu.so mapped in PID (the probe table's aten glob, through
 * user/discovery/probes.c and user/trace/attach.c), creates FILE when attached (the target
 * may wait for it), drains until PID exits or SIGINT/SIGTERM, and writes one
 * JSON object per record to OUT (default stdout): probe, enter, exit, tensor, mem,
 * pystack (frames resolved while the target lives), step; with OUT
 * /dev/null records are only counted (benchmarks).  stderr gets
 * "attach: N sites in T ms (multi|single)" and the drop count.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ascbpf_events.h"
#include "ascbpf_maps.h"
#include "trace/attach.h"
#include "capture/records.h"
#include "lib/log.h"
#include "discovery/probes.h"
#include "discovery/pystack.h"
#include "discovery/pytorch.h"

static volatile sig_atomic_t stop;
static FILE *out;
static struct asc_pystack_resolver *resolver;
static unsigned long long nrec;

static void on_sig(int s)
{
	(void)s;
	stop = 1;
}

/* Running (not exited, not a zombie waiting for its parent). */
static int alive(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void json_str(const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(out, "\\u%04x", *s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

static int on_rec(void *ctx, void *data, size_t size)
{
	const struct asc_hdr *h = data;
	uint32_t i;

	(void)ctx;
	(void)size;
	nrec++;
	if (!out)
		return 0; /* --json /dev/null: count only (benchmarks) */
	switch (h->type) {
	case ASC_REC_ENTER:
	case ASC_REC_EXIT:
		fprintf(out, "{\"type\": \"%s\", \"tid\": %u, \"probe_id\": %u, \"ts_ns\": %llu}\n",
			h->type == ASC_REC_ENTER ? "enter" : "exit", h->tid, h->probe_id,
			(unsigned long long)h->ts_ns);
		break;
	case ASC_REC_TENSOR: {
		const struct asc_tensor *t = data;

		fprintf(out,
			"{\"type\": \"tensor\", \"tid\": %u, \"probe_id\": %u, \"ts_ns\": %llu, "
			"\"arg_index\": %u, \"list_index\": %u, \"kind\": %u, \"dtype\": %u, "
			"\"dtype_name\": ",
			h->tid, h->probe_id, (unsigned long long)h->ts_ns, t->arg_index,
			t->list_index, t->kind, t->dtype);
		json_str(asc_scalar_type_name(t->dtype) ? asc_scalar_type_name(t->dtype) : "");
		fprintf(out, ", \"ndim\": %u, \"flags\": %u, \"dims\": [", t->ndim, t->flags);
		for (i = 0; i < t->ndim && i < ASC_TENSOR_DIMS; i++)
			fprintf(out, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
		fprintf(out, "]}\n");
		break;
	}
	case ASC_REC_PYSTACK: {
		const struct asc_pystack *s = data;
		char buf[1024];

		fprintf(out,
			"{\"type\": \"pystack\", \"tid\": %u, \"probe_id\": %u, \"ts_ns\": %llu, "
			"\"flags\": %u, \"nr\": %u, \"frames\": [",
			h->tid, h->probe_id, (unsigned long long)h->ts_ns, s->flags, s->nr);
		for (i = 0; i < s->nr && i < ASC_PY_DEPTH; i++) {
			if (!resolver || asc_pystack_frame(resolver, s->code[i], s->lasti[i], buf,
							   sizeof(buf), NULL))
				snprintf(buf, sizeof(buf), "?%#llx/%d",
					 (unsigned long long)s->code[i], s->lasti[i]);
			fputs(i ? ", " : "", out);
			json_str(buf);
		}
		fprintf(out, "]}\n");
		break;
	}
	case ASC_REC_MEM: {
		const struct asc_mem *m = data;

		fprintf(out,
			"{\"type\": \"mem\", \"tid\": %u, \"probe_id\": %u, \"ts_ns\": %llu, "
			"\"ptr\": %llu, \"size\": %lld, \"total_allocated\": %llu, "
			"\"total_reserved\": %llu, \"device\": %u, \"device_type\": %u}\n",
			h->tid, h->probe_id, (unsigned long long)h->ts_ns,
			(unsigned long long)m->ptr, (long long)m->size,
			(unsigned long long)m->total_allocated,
			(unsigned long long)m->total_reserved, m->device, m->reserved);
		break;
	}
	case ASC_REC_STEP: {
		const struct asc_step *s = data;

		fprintf(out,
			"{\"type\": \"step\", \"tid\": %u, \"ts_ns\": %llu, \"step\": %llu, "
			"\"state\": %u}\n",
			h->tid, (unsigned long long)h->ts_ns, (unsigned long long)s->step,
			s->state);
		break;
	}
	default:
		break;
	}
	return 0;
}

struct sel {
	struct asc_pytorch *pt;
};

static int select_aten(const struct asc_probe_site *site, void *ctx, struct bpf_program **entry,
		       struct bpf_program **ret)
{
	struct sel *s = ctx;

	if (!site->spec || site->spec->kind != ASC_PK_ATEN_OP)
		return 1;
	*entry = asc_pytorch_aten_prog(s->pt);
	*ret = asc_pytorch_aten_ret_prog(s->pt);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "record-shapes", no_argument, NULL, 's' },
		{ "with-stack", no_argument, NULL, 'k' },
		{ "step-py", required_argument, NULL, 'y' },
		{ "ready", required_argument, NULL, 'r' },
		{ "json", required_argument, NULL, 'j' },
		{ "no-multi", no_argument, NULL, 'm' },
		{ "profile-memory", no_argument, NULL, 'M' },
		{ "no-seqnr", no_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	struct asc_pytorch_opts po = { .prepare_prog = asc_attach_prepare_multi };
	struct asc_probe_plan plan = { 0 };
	struct asc_attach_set *set = NULL;
	struct asc_attach_stats ast;
	/* open and armed from the start: pt_trace has no device channel to wait for */
	struct asc_tgid_state st = { .open = 1, .flags = ASC_TGID_ARMED };
	struct ring_buffer *rb = NULL;
	struct asc_pytorch *pt = NULL;
	const char *ready = NULL, *json = NULL;
	struct sel sel;
	pid_t pid = 0;
	uint64_t t0, t1;
	size_t i;
	int c, err, n;
	__u32 key;

	while ((c = getopt_long(argc, argv, "p:", lo, NULL)) != -1) {
		/* the option table: one option a line */
		// clang-format off
		switch (c) {
		case 'p': pid = atoi(optarg); break;
		case 's': po.record_shapes = 1; break;
		case 'k': po.with_stack = 1; break;
		case 'y': po.step_py = optarg; break;
		case 'r': ready = optarg; break;
		case 'j': json = optarg; break;
		case 'm': setenv("ASCBPF_NO_UPROBE_MULTI", "1", 1); break;
		case 'S': po.no_seqnr = 1; break;
		case 'M': po.profile_memory = 1; break;
		default:
			fprintf(stderr, "usage: pt_trace -p PID [--record-shapes] [--with-stack] "
				"[--step-py FUNC] [--ready FILE] [--json OUT] [--no-multi]\n");
			return 2;
		}
		// clang-format on
	}
	if (pid <= 0 || kill(pid, 0)) {
		fprintf(stderr, "pt_trace: -p PID of a running process is required\n");
		return 2;
	}
	if (json && !strcmp(json, "/dev/null")) {
		out = NULL;
	} else {
		out = json ? fopen(json, "w") : stdout;
		if (!out) {
			perror(json);
			return 2;
		}
	}
	if (getenv("PT_TRACE_DEBUG"))
		asc_log_set_level(ASC_LOG_DEBUG);
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);

	t0 = now_ns();
	err = asc_probe_plan_build(pid, ASC_FAM_FRAMEWORK, 1, &plan);
	if (err) {
		fprintf(stderr, "pt_trace: no probe plan for pid %d: %s\n", pid, strerror(-err));
		return 1;
	}
	pt = asc_pytorch_open(pid, &po);
	if (!pt || asc_pytorch_load(pt, -1, -1, -1, NULL)) {
		fprintf(stderr, "pt_trace: cannot load the PyTorch BPF object\n");
		return 1;
	}
	key = pid;
	if (bpf_map_update_elem(asc_pytorch_tgids_fd(pt), &key, &st, BPF_ANY)) {
		perror("tgids");
		return 1;
	}
	n = asc_pytorch_add_sites(pt, &plan);
	if (n < 0) {
		fprintf(stderr, "pt_trace: argument map: %s\n", strerror(-n));
		return 1;
	}
	set = asc_attach_set_new();
	sel.pt = pt;
	t1 = now_ns();
	err = asc_attach_plan(set, &plan, 0, select_aten, &sel, pid, NULL);
	if (err < 0) {
		fprintf(stderr, "pt_trace: attach: %s\n", strerror(-err));
		return 1;
	}
	asc_attach_set_stats(set, &ast);
	fprintf(stderr,
		"attach: %d sites in %.1f ms (%s; %zu multi links, %zu single), "
		"setup %.1f ms, %d sites with tensor arguments\n",
		err, (now_ns() - t1) / 1e6,
		asc_attach_prog_is_multi(asc_pytorch_aten_prog(pt)) ? "multi" : "single",
		ast.multi_links, ast.single_links, (t1 - t0) / 1e6, n);
	if (po.profile_memory && asc_pytorch_attach_memory(pt))
		return 1;
	if (po.with_stack) {
		struct asc_py_offsets off;
		char path[4096];
		uint64_t bias;

		if (!asc_py_find_image(pid, path, sizeof(path), &bias) &&
		    !asc_py_offsets_discover(path, &off))
			resolver = asc_pystack_resolver_new(pid, &off);
		if (!resolver)
			fprintf(stderr, "pt_trace: Python frames of pid %d cannot be resolved\n",
				pid);
	}
	for (i = 0; out && i < plan.nr_sites; i++) {
		if (!plan.sites[i].spec || plan.sites[i].spec->kind != ASC_PK_ATEN_OP)
			continue;
		fprintf(out,
			"{\"type\": \"probe\", \"kind_name\": \"aten_op\", \"probe_id\": %u, "
			"\"symbol\": ",
			plan.sites[i].id);
		json_str(plan.sites[i].sym);
		fprintf(out, "}\n");
	}
	rb = ring_buffer__new(asc_pytorch_events_fd(pt), on_rec, NULL, NULL);
	if (!rb)
		return 1;
	if (ready) {
		FILE *f = fopen(ready, "w");

		if (f)
			fclose(f);
	}
	/* records are submitted without wake-ups: consume on a timer */
	while (!stop && alive(pid)) {
		ring_buffer__consume(rb);
		usleep(10000);
	}
	ring_buffer__consume(rb);
	fprintf(stderr, "pt_trace: %llu records\n", nrec);
	ring_buffer__free(rb);
	asc_attach_set_free(set);
	asc_pystack_resolver_free(resolver);
	asc_pytorch_close(pt);
	asc_probe_plan_free(&plan);
	if (out && out != stdout)
		fclose(out);
	return 0;
}
