// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench_attach - attach-layer benchmark (run by tools/bench_attach.sh, not a test).
 *
 *   bench_attach PID [FAMILIES [SINGLE_MAX]]
 *                                 plan PID's probes, then time attaching every site
 *                                 (entry + return) through uprobe_multi, and the first
 *                                 SINGLE_MAX sites (default 200) through single uprobes
 *                                 (their detach costs ~110 ms a probe on our kernel:
 *                                 all 2,952 aten ops take over 10 minutes), and detaching
 *   bench_attach --prologue       cost per hit of an entry uprobe on each first
 *                                 instruction of tests/lib/probes/libasctest.so, at the
 *                                 function and where the plan puts the probe
 *
 * Output: "key value unit" lines, easy to paste into BENCHMARKS.md.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "asctest.h"
#include "trace/attach.h"
#include "lib/log.h"
#include "discovery/probes.h"
#include "arch/prologue.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct progs {
	struct bpf_object *obj;
	struct bpf_program *entry, *ret;
};

static int open_counter(struct progs *p, int multi)
{
	p->obj = bpf_object__open_file(ASC_TEST_FIXTURES "/attach_counter.bpf.o", NULL);
	if (!p->obj)
		return -errno;
	p->entry = bpf_object__find_program_by_name(p->obj, "count_entry");
	p->ret = bpf_object__find_program_by_name(p->obj, "count_return");
	if (multi && (asc_attach_prepare_multi(p->entry) || asc_attach_prepare_multi(p->ret)))
		return -EOPNOTSUPP;
	return bpf_object__load(p->obj);
}

static int sel(const struct asc_probe_site *s, void *ctx, struct bpf_program **e,
	       struct bpf_program **r)
{
	struct progs *p = ctx;

	*e = p->entry;
	*r = p->ret;
	return 0;
}

static int bench_plan(pid_t pid, uint32_t fams, size_t single_max)
{
	struct asc_probe_plan plan;
	double t0, t1;
	int mode, err;

	t0 = now_s();
	err = asc_probe_plan_build(pid, fams, 1, &plan);
	t1 = now_s();
	if (err) {
		fprintf(stderr, "plan for %d failed: %s\n", pid, strerror(-err));
		return 1;
	}
	printf("plan_sites %zu sites\nplan_build %.3f s\n", plan.nr_sites, t1 - t0);
	for (mode = 1; mode >= 0; mode--) {
		struct asc_attach_set *set = asc_attach_set_new();
		struct asc_attach_stats st;
		struct progs p;
		int n;

		if (open_counter(&p, mode)) {
			printf("%s_attach unsupported\n", mode ? "multi" : "single");
			continue;
		}
		size_t all = plan.nr_sites;

		/* single: only the first single_max sites (the plan is cut and restored) */
		if (!mode && plan.nr_sites > single_max)
			plan.nr_sites = single_max;
		t0 = now_s();
		n = asc_attach_plan(set, &plan, 0, sel, &p, pid, NULL);
		t1 = now_s();
		plan.nr_sites = all;
		asc_attach_set_stats(set, &st);
		printf("%s_attach %.3f s (%d sites, %zu probes, %zu links)\n",
		       mode ? "multi" : "single", t1 - t0, n, st.sites,
		       st.multi_links + st.single_links);
		t0 = now_s();
		asc_attach_set_free(set);
		t1 = now_s();
		printf("%s_detach %.3f s (%.2f ms per probe)\n", mode ? "multi" : "single", t1 - t0,
		       st.sites ? (t1 - t0) * 1e3 / st.sites : 0.0);
		bpf_object__close(p.obj);
	}
	asc_probe_plan_free(&plan);
	return 0;
}

static double ns_per_call(void (*fn)(void), int n)
{
	double t0 = now_s();
	int i;

	for (i = 0; i < n; i++)
		fn();
	return (now_s() - t0) * 1e9 / n;
}

static int bench_prologue(void)
{
	static const char *const names[] = {
		"asc_test_nop", "asc_test_push",       "asc_test_nopl",
		"asc_test_lea", "asc_test_endbr_push", "asc_test_endbr_lea",
	};
	static const struct asc_probe_spec spec_tmpl = {
		"libasctest.so", NULL, 2, ASC_PK_CALL, ASC_FAM_CANN, ASC_SPEC_NO_RETPROBE
	};
	struct asc_probe_spec table[7];
	struct asc_probe_plan plan;
	struct progs p;
	void *h = dlopen(ASC_TEST_FIXTURES "/libasctest.so", RTLD_NOW);
	size_t i, j;
	const int n = 200000;

	if (!h || open_counter(&p, 0))
		return 1;
	for (i = 0; i < 6; i++) {
		table[i] = spec_tmpl;
		table[i].sym = names[i];
	}
	memset(&table[6], 0, sizeof(table[6]));
	if (asc_probe_plan_build_table(getpid(), table, ASC_FAM_ALL, 1, &plan))
		return 1;
	printf("%-22s %-30s %10s %10s %10s\n", "function", "plan choice", "bare_ns", "entry_ns",
	       "planned_ns");
	for (i = 0; i < plan.nr_sites; i++) {
		const struct asc_probe_site *s = &plan.sites[i];
		void (*fn)(void) = (void (*)(void))dlsym(h, s->sym);
		double bare = ns_per_call(fn, n), at_entry, planned;
		struct asc_attach_site site = { s->path, s->func_offset, s->id };
		struct asc_attach_set *set = asc_attach_set_new();

		asc_attach_uprobes(set, p.entry, false, getpid(), &site, 1, NULL);
		at_entry = ns_per_call(fn, n);
		asc_attach_set_free(set);
		set = asc_attach_set_new();
		site.offset = s->attach_offset;
		asc_attach_uprobes(set, p.entry, false, getpid(), &site, 1, NULL);
		planned = ns_per_call(fn, n);
		asc_attach_set_free(set);
		for (j = 0; j < 6; j++)
			if (!strcmp(names[j], s->sym))
				break;
		printf("%-22s %-30s %10.0f %10.0f %10.0f\n", s->sym, asc_prologue_choice(s->flags),
		       bare, at_entry, planned);
	}
	asc_probe_plan_free(&plan);
	bpf_object__close(p.obj);
	return 0;
}

int main(int argc, char **argv)
{
	uint32_t fams = ASC_FAM_ALL;
	size_t single_max = 200;

	if (argc >= 2 && !strcmp(argv[1], "--prologue"))
		return bench_prologue();
	if (argc < 2) {
		fprintf(stderr,
			"usage: bench_attach PID [FAMILIES [SINGLE_MAX]] | bench_attach --prologue\n");
		return 2;
	}
	if (argc > 2 && asc_probe_families_parse(argv[2], &fams))
		return 2;
	if (argc > 3)
		single_max = strtoul(argv[3], NULL, 10);
	return bench_plan(atoi(argv[1]), fams, single_max);
}
