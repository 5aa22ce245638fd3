// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_findings - the agent's triggers (user/agent/findings.c) on counters
 * set by hand, as the BPF maps would hold them: the hang threshold
 * max(3 x p99, --hang-min), slow_step from the ring and from the histogram's
 * buckets, at least 8 durations, straggler only among processes of a job a
 * launcher named, alloc_failure active for 60 s; one episode per start.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "agent/agent.h"
#include "lib/log.h"

#define NS 1000000000ull

static void quiet(enum asc_log_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
}

static struct agent *new_agent(size_t n)
{
	struct agent *a = calloc(1, sizeof(*a));

	a->o.hang_min = 30;
	a->o.slow_factor = 3;
	a->o.straggler_factor = 1.5;
	a->t = calloc(n, sizeof(*a->t));
	for (size_t i = 0; i < n; i++) {
		a->t[i] = calloc(1, sizeof(**a->t));
		a->t[i]->pid = 100 + i;
	}
	a->nr_t = n;
	asc_log_set_sink(quiet);
	return a;
}

static void free_agent(struct agent *a)
{
	for (size_t i = 0; i < a->nr_t; i++)
		free(a->t[i]);
	free(a->t);
	free(a);
	asc_log_set_sink(NULL);
}

/* n steps so far, every duration d_ns (the ring as agent_step fills it), histogram too */
static void steps(struct agent_target *t, uint64_t n, uint64_t d_ns, uint64_t last_ns)
{
	static const uint64_t b[AGENT_NR_BOUNDS] = AGENT_BOUNDS_NS;
	int k;

	for (uint64_t i = t->p.steps ? t->p.steps - 1 : 0; i + 1 < n; i++) {
		t->p.recent_ns[i % AGENT_RECENT] = d_ns;
		for (k = 0; k < AGENT_NR_BOUNDS && d_ns > b[k]; k++)
			;
		t->p.step_bucket[k]++;
	}
	t->p.steps = n;
	t->p.last_step_ns = last_ns;
}

static void test_hang_threshold(void **state)
{
	struct agent *a = new_agent(2);
	struct agent_target *fast = a->t[0], *slow = a->t[1];
	double now = 1000;

	(void)state;
	steps(fast, 20, NS / 10, (uint64_t)(now - 29) * NS); /* 0.1 s steps: 30 s floor */
	steps(slow, 20, 20 * NS, (uint64_t)(now - 31) * NS); /* 20 s steps: 60 s */
	agent_findings_check(a, now);
	assert_int_equal(fast->find[AGENT_FIND_HANG].active, 0);
	assert_int_equal(slow->find[AGENT_FIND_HANG].active, 0);
	agent_findings_check(a, now + 2); /* fast: 31 s > 30 s */
	assert_int_equal(fast->find[AGENT_FIND_HANG].active, 1);
	assert_int_equal(slow->find[AGENT_FIND_HANG].active, 0);
	agent_findings_check(a, now + 30); /* slow: 61 s > 3 x 20 s */
	assert_int_equal(slow->find[AGENT_FIND_HANG].active, 1);
	assert_int_equal(fast->find[AGENT_FIND_HANG].episodes, 1); /* still the same one */
	steps(fast, 21, 31 * NS, (uint64_t)(now + 30) * NS);
	agent_findings_check(a, now + 30);
	assert_int_equal(fast->find[AGENT_FIND_HANG].active, 0);
	assert_int_equal(fast->find[AGENT_FIND_HANG].episodes, 1);
	free_agent(a);
}

static void test_slow_step(void **state)
{
	struct agent *a = new_agent(1);
	struct agent_target *t = a->t[0];

	(void)state;
	steps(t, 6, NS / 100, 0); /* 5 durations: too few for a median */
	steps(t, 7, NS, 0);
	agent_findings_check(a, 0);
	assert_int_equal(t->find[AGENT_FIND_SLOW_STEP].episodes, 0);
	steps(t, 40, NS / 100, 0); /* 10 ms steps */
	agent_findings_check(a, 0);
	assert_int_equal(t->find[AGENT_FIND_SLOW_STEP].episodes, 0);
	steps(t, 41, NS / 10, 0); /* one of 100 ms, in the ring: > 3 x 10 ms */
	agent_findings_check(a, 0);
	assert_int_equal(t->find[AGENT_FIND_SLOW_STEP].active, 1);
	assert_int_equal(t->find[AGENT_FIND_SLOW_STEP].episodes, 1);
	steps(t, 45, NS / 100, 0); /* normal again */
	agent_findings_check(a, 0);
	assert_int_equal(t->find[AGENT_FIND_SLOW_STEP].active, 0);
	/* a 3 s step, then 100 fast ones: out of the ring, seen in bucket (2.5, 5] */
	steps(t, 46, 3 * NS, 0);
	steps(t, 146, NS / 100, 0);
	agent_findings_check(a, 0);
	assert_int_equal(t->find[AGENT_FIND_SLOW_STEP].episodes, 2);
	free_agent(a);
}

/*
 * --slow-min and --slow-warmup (what keeps a healthy job on a loaded machine quiet): a slow
 * step before step 16 is not judged, neither in the ring nor through the histogram; one of
 * 5 x the median but only 40 ms over it is none; one 1 s over it is.
 */
static void test_slow_step_min_warmup(void **state)
{
	struct agent *a = new_agent(2);
	struct agent_target *t = a->t[0], *late = a->t[1];

	(void)state;
	a->o.slow_min = 0.5;
	a->o.slow_warmup = 16;
	steps(t, 13, NS / 100, 0); /* 12 durations of 10 ms */
	agent_findings_check(a, 0);
	steps(t, 14, 3 * NS, 0); /* step 12: 3 s, in the warm-up */
	agent_findings_check(a, 0);
	assert_int_equal(t->find[AGENT_FIND_SLOW_STEP].episodes, 0);
	steps(t, 40, NS / 100, 0);
	agent_findings_check(a, 0);
	steps(t, 41, NS / 20, 0); /* 50 ms: 5 x the median, 40 ms over it */
	agent_findings_check(a, 0);
	assert_int_equal(t->find[AGENT_FIND_SLOW_STEP].episodes, 0);
	steps(t, 42, NS / 100, 0);
	agent_findings_check(a, 0);
	steps(t, 43, NS + NS / 2, 0); /* 1.5 s */
	agent_findings_check(a, 0);
	assert_int_equal(t->find[AGENT_FIND_SLOW_STEP].episodes, 1);
	/* first seen after 60 steps, its 3 s step 4 only in the histogram: the warm-up's */
	steps(late, 5, NS / 100, 0);
	steps(late, 6, 3 * NS, 0);
	steps(late, 60, NS / 100, 0);
	agent_findings_check(a, 0);
	assert_int_equal(late->find[AGENT_FIND_SLOW_STEP].episodes, 0);
	/* past the warm-up, a 3 s step out of the ring is still seen through its bucket */
	steps(late, 61, 3 * NS, 0);
	steps(late, 161, NS / 100, 0);
	agent_findings_check(a, 0);
	assert_int_equal(late->find[AGENT_FIND_SLOW_STEP].episodes, 1);
	free_agent(a);
}

static void test_straggler(void **state)
{
	struct agent *a = new_agent(5);

	(void)state;
	for (int i = 0; i < 5; i++) {
		strcpy(a->t[i]->job, i < 3 ? "job7" : "npu_train");
		a->t[i]->job_from_env = i < 3;
		steps(a->t[i], 20, i == 2 || i == 4 ? NS / 5 : NS / 10, 0);
	}
	agent_findings_check(a, 0);
	assert_int_equal(a->t[0]->find[AGENT_FIND_STRAGGLER].active, 0);
	assert_int_equal(a->t[1]->find[AGENT_FIND_STRAGGLER].active, 0);
	assert_int_equal(a->t[2]->find[AGENT_FIND_STRAGGLER].active, 1); /* 2 x its job */
	/* two processes named by their command are no job: 2 x apart, no straggler */
	assert_int_equal(a->t[3]->find[AGENT_FIND_STRAGGLER].active, 0);
	assert_int_equal(a->t[4]->find[AGENT_FIND_STRAGGLER].active, 0);
	free_agent(a);
}

static void test_alloc_failure(void **state)
{
	struct agent *a = new_agent(1);
	struct agent_target *t = a->t[0];

	(void)state;
	agent_findings_check(a, 10);
	assert_int_equal(t->find[AGENT_FIND_ALLOC_FAIL].active, 0);
	t->p.alloc_failures = 2;
	agent_findings_check(a, 10);
	assert_int_equal(t->find[AGENT_FIND_ALLOC_FAIL].active, 1);
	t->p.alloc_failures = 3; /* within the 60 s: the same episode */
	agent_findings_check(a, 40);
	assert_int_equal(t->find[AGENT_FIND_ALLOC_FAIL].episodes, 1);
	agent_findings_check(a, 101);
	assert_int_equal(t->find[AGENT_FIND_ALLOC_FAIL].active, 0);
	/* an exited process's last counts are looked at once */
	t->p.alloc_failures = 4;
	t->exited = 102;
	agent_findings_check(a, 102);
	assert_int_equal(t->find[AGENT_FIND_ALLOC_FAIL].episodes, 2);
	free_agent(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hang_threshold),	     cmocka_unit_test(test_slow_step),
		cmocka_unit_test(test_slow_step_min_warmup), cmocka_unit_test(test_straggler),
		cmocka_unit_test(test_alloc_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
