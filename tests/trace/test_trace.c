// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_trace.c - `ascbpf trace` option parsing (user/trace/trace.h): defaults,
 * every option, the three kinds of target, -- CMD with its own options, and
 * every bad input rejected with -EINVAL.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "lib/log.h"
#include "trace/trace.h"

static void quiet(enum asc_log_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
}

/* argv_ is static: the options keep pointers into it (o.cmd) past the statement */
#define PARSE(o, ...)                                                                   \
	({                                                                              \
		static char *argv_[] = { "trace", __VA_ARGS__, NULL };                  \
		asc_trace_parse_args(sizeof(argv_) / sizeof(argv_[0]) - 1, argv_, (o)); \
	})

static void test_defaults(void **state)
{
	struct asc_trace_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "-p", "42"), 0);
	assert_int_equal(o.nr_pids, 1);
	assert_int_equal(o.pids[0], 42);
	assert_int_equal(o.activities, ASC_ACT_CPU | ASC_ACT_NPU);
	assert_int_equal(o.level, 0); /* torch_npu's default ProfilerLevel.Level0 */
	assert_int_equal(o.ringbuf_mb, 16);
	assert_string_equal(o.outdir, "./result");
	assert_string_equal(o.rank_env, "RANK");
	assert_int_equal(o.sched.enabled, 0);
	assert_null(o.step);
	assert_null(o.cmd);
	assert_null(o.capture);
	assert_int_equal(o.no_convert + o.force + o.record_shapes + o.profile_memory +
				 o.with_stack + o.verbose,
			 0);
}

static void test_every_option(void **state)
{
	struct asc_trace_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "-p", "1", "--pid", "2", "--activities", "npu", "--level", "2",
			       "--record-shapes", "--profile-memory", "--with-stack", "--schedule",
			       "wait=1,warmup=1,active=3,repeat=2,skip_first=4", "--step",
			       "libfoo.so:bar", "--duration", "2.5", "--ringbuf-size", "64", "-o",
			       "/tmp/x", "--no-convert", "--force", "--worker-name", "w",
			       "--rank-env", "MY_RANK", "-v", "--step-py", "train_step"),
			 0);
	assert_int_equal(o.nr_pids, 2);
	assert_int_equal(o.pids[1], 2);
	assert_int_equal(o.activities, ASC_ACT_NPU);
	assert_int_equal(o.level, 2);
	assert_true(o.record_shapes && o.profile_memory && o.with_stack && o.no_convert &&
		    o.force && o.verbose);
	assert_int_equal(o.sched.enabled, 1);
	assert_int_equal(o.sched.wait, 1);
	assert_int_equal(o.sched.warmup, 1);
	assert_int_equal(o.sched.active, 3);
	assert_int_equal(o.sched.repeat, 2);
	assert_int_equal(o.sched.skip_first, 4);
	assert_string_equal(o.step, "libfoo.so:bar");
	assert_true(o.duration_s > 2.49 && o.duration_s < 2.51);
	assert_int_equal(o.ringbuf_mb, 64);
	assert_string_equal(o.outdir, "/tmp/x");
	assert_string_equal(o.worker_name, "w");
	assert_string_equal(o.rank_env, "MY_RANK");
	assert_string_equal(o.step_py, "train_step");
}

static void test_command_keeps_its_options(void **state)
{
	struct asc_trace_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "--duration", "1", "--", "python3", "-p", "x.py", "--force"), 0);
	assert_int_equal(o.nr_pids, 0);
	assert_int_equal(o.force, 0);
	assert_int_equal(o.nr_cmd, 4);
	assert_string_equal(o.cmd[0], "python3");
	assert_string_equal(o.cmd[1], "-p");
	assert_string_equal(o.cmd[3], "--force");
}

static void test_comm(void **state)
{
	struct asc_trace_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "--comm", "npu_train"), 0);
	assert_string_equal(o.comm, "npu_train");
	assert_int_equal(PARSE(&o, "--comm", "a_name_longer_than_15"), -EINVAL);
	assert_int_equal(PARSE(&o, "--comm", ""), -EINVAL);
}

static void test_schedule_semantics(void **state)
{
	struct asc_sched s;

	(void)state;
	assert_int_equal(asc_trace_parse_schedule("active=0", &s), 0);
	assert_int_equal(s.active, 1); /* torch_npu: active <= 0 becomes 1 */
	assert_int_equal(s.enabled, 1);
	assert_int_equal(asc_trace_parse_schedule("skip_first_wait=1,wait=2", &s), 0);
	assert_int_equal(s.skip_first_wait, 1);
	assert_int_equal(s.wait, 2);
	assert_int_equal(asc_trace_parse_schedule("skip_first_wait=2", &s), -EINVAL);
	assert_int_equal(asc_trace_parse_schedule("wait", &s), -EINVAL);
	assert_int_equal(asc_trace_parse_schedule("wait=", &s), -EINVAL);
	assert_int_equal(asc_trace_parse_schedule("wait=1x", &s), -EINVAL);
	assert_int_equal(asc_trace_parse_schedule("wait=-1", &s), -EINVAL);
	assert_int_equal(asc_trace_parse_schedule("wait=99999999999", &s), -EINVAL);
	assert_int_equal(asc_trace_parse_schedule("idle=3", &s), -EINVAL);
}

static void test_activities(void **state)
{
	uint32_t a;

	(void)state;
	assert_int_equal(asc_trace_parse_activities("CPU", &a), 0);
	assert_int_equal(a, ASC_ACT_CPU);
	assert_int_equal(asc_trace_parse_activities("npu,cpu", &a), 0);
	assert_int_equal(a, ASC_ACT_CPU | ASC_ACT_NPU);
	assert_int_equal(asc_trace_parse_activities("gpu", &a), -EINVAL);
	assert_int_equal(asc_trace_parse_activities(",", &a), -EINVAL);
}

static void test_bad_inputs(void **state)
{
	struct asc_trace_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "-o", "x"), -EINVAL); /* no target */
	assert_int_equal(PARSE(&o, "-p", "1", "--comm", "x"), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "1", "--", "ls"), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "0"), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "-5"), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "12a"), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "4294967296"), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "1", "--level", "3"), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "1", "--ringbuf-size", "0"), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "1", "--ringbuf-size", "24"), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "1", "--ringbuf-size", "2048"), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "1", "--duration", "0"), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "1", "--duration", "-1"), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "1", "--duration", "nan"), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "1", "--duration", "1s"), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "1", "--step", "nocolon"), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "1", "--step", ":sym"), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "1", "--step", "lib:"), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "1", "--step-py", ""), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "1", "-o", ""), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "1", "-p", "2", "--capture", "f"), -EINVAL);
	assert_int_equal(PARSE(&o, "-p", "1", "--bogus"), -EINVAL);
	assert_int_equal(PARSE(&o, "-p"), -EINVAL); /* missing argument */
	assert_int_equal(PARSE(&o, "-p", "1", "--step", "none"), 0);
	assert_string_equal(o.step, "none");
}

static void test_help(void **state)
{
	struct asc_trace_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "--help"), 0);
	assert_int_equal(o.help, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_every_option),
		cmocka_unit_test(test_command_keeps_its_options),
		cmocka_unit_test(test_comm),
		cmocka_unit_test(test_schedule_semantics),
		cmocka_unit_test(test_activities),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_help),
	};

	asc_log_set_sink(quiet);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
