// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_names - the names a capture carries for conversion (user/trace/names.h):
 * ATEN_NAME records written from the operator schemas of the real
 * libtorch_cpu (Debian's python3-torch) name aten ops as torch.profiler does
 * ("aten::transpose" for at::_ops::transpose_int), only for the sites a
 * rescan adds; the converter uses them and, without them (a capture of an
 * older ascbpf), names ops from the symbol alone.  Conversion opens no file
 * of the traced host: the same capture gives the same names anywhere.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "ascbpf_events.h"
#include "capbuild.h"
#include "capture/capture.h"
#include "analysis/correlate.h"
#include "discovery/probes.h"
#include "trace/names.h"

#define LIBTORCH_CPU "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so"

static const char *const syms[] = {
	"_ZN2at4_ops13transpose_int4callERKNS_6TensorEll",
	"_ZN2at4_ops15sum_dim_IntList4callERKNS_6TensorEN3c1016OptionalArrayRefIlEEbNS5_8optionalI"
	"NS5_10ScalarTypeEEE",
	"_ZN2at4_ops10no_such_op4callEv", /* in no schema */
};
/* torch.profiler's names of the three, and ascbpf's from the symbols alone */
static const char *const torch_names[] = { "aten::transpose", "aten::sum", "aten::no_such_op" };
static const char *const symbol_names[] = { "aten::transpose_int", "aten::sum_dim",
					    "aten::no_such_op" };

static const struct asc_probe_spec aten_spec = {
	.lib = "libtorch_cpu.so",
	.sym = "_ZN2at4_ops*",
	.kind = ASC_PK_ATEN_OP,
	.layer = ASC_LAYER_FRAMEWORK,
};
static const struct asc_probe_spec call_spec = {
	.lib = "libtorch_cpu.so",
	.sym = "x",
	.kind = ASC_PK_CALL,
	.layer = ASC_LAYER_FRAMEWORK,
};

/* A capture of the three aten ops (probe ids 1..3) on thread 10; with_names: ATEN_NAMEs. */
static struct asc_corr *ops_capture(const char *dir, int with_names)
{
	struct asc_probe_site sites[4] = { 0 };
	struct asc_probe_plan plan = { .sites = sites, .nr_sites = 4 };
	char path[300];
	uint32_t i;

	snprintf(path, sizeof(path), "%s/c%d.ascb", dir, with_names);
	for (i = 0; i < 4; i++) {
		sites[i].id = i + 1;
		sites[i].spec = i < 3 ? &aten_spec : &call_spec;
		sites[i].path = (char *)LIBTORCH_CPU;
		sites[i].sym = (char *)syms[i % 3]; /* site 4: a plain call, not named */
		sites[i].attach_offset = 0x1000 * (i + 1);
	}
	capture_begin(path);
	if (with_names)
		assert_int_equal(asc_trace_write_aten_names(capture_writer(), CAP_TGID, &plan, 0),
				 0);
	for (i = 0; i < 3; i++)
		probe(i + 1, syms[i], ASC_LAYER_FRAMEWORK, ASC_PK_ATEN_OP);
	for (i = 0; i < 3; i++) {
		enter(10, i + 1, 1000 + 100 * i);
		leave(10, i + 1, 1050 + 100 * i);
	}
	return capture_corr(path);
}

static const char *name_at(const struct asc_corr *c, int64_t start)
{
	size_t i;

	for (i = 0; i < c->nr_ops; i++)
		if (c->ops[i].start_ns == start)
			return asc_corr_str(c, c->ops[i].name);
	return NULL;
}

static void test_ops_named_from_the_capture(void **state)
{
	char dir[] = "/tmp/test_names.XXXXXX", path[300];
	struct asc_corr *c;
	int i;

	(void)state;
	assert_non_null(mkdtemp(dir));
	c = ops_capture(dir, 1);
	assert_int_equal(c->nr_ops, 3);
	for (i = 0; i < 3; i++)
		assert_string_equal(name_at(c, 1000 + 100 * i), torch_names[i]);
	asc_corr_free(c);
	/* a capture without the records: the symbols' names, nothing read from the library */
	c = ops_capture(dir, 0);
	for (i = 0; i < 3; i++)
		assert_string_equal(name_at(c, 1000 + 100 * i), symbol_names[i]);
	asc_corr_free(c);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/c%d.ascb", dir, i);
		unlink(path);
	}
	rmdir(dir);
}

/* A rescan plan lists every site again under new ids: only the new sites get names. */
static void test_rescan_names_new_sites_only(void **state)
{
	struct asc_probe_site a[2] = { 0 }, b[3] = { 0 };
	struct asc_probe_plan plans[2] = { { .sites = a, .nr_sites = 2 },
					   { .sites = b, .nr_sites = 3 } };
	char dir[] = "/tmp/test_names.XXXXXX", path[300];
	struct asc_capture_reader *r;
	const void *rec;
	size_t size, i;
	int n = 0, ids = 0;

	(void)state;
	for (i = 0; i < 3; i++) {
		struct asc_probe_site *s = i < 2 ? &a[i] : &b[2];

		s->spec = &aten_spec;
		s->path = (char *)LIBTORCH_CPU;
		s->sym = (char *)syms[i];
		s->attach_offset = 0x1000 * (i + 1);
		s->id = i + 1;
	}
	b[0] = a[0];
	b[1] = a[1];
	b[0].id = 11;
	b[1].id = 12;
	b[2].id = 13;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/r.ascb", dir);
	capture_begin(path);
	assert_int_equal(asc_trace_write_aten_names(capture_writer(), CAP_TGID, plans, 1), 0);
	asc_corr_free(capture_corr(path));
	r = asc_capture_open(path);
	assert_non_null(r);
	while (asc_capture_next(r, &rec, &size) == 1) {
		const struct asc_text *t = rec;

		if (t->hdr.type != ASC_REC_ATEN_NAME)
			continue;
		n++;
		ids += t->hdr.probe_id;
		assert_string_equal(t->text, ""); /* no_such_op: in no schema */
	}
	asc_capture_free(r);
	assert_int_equal(n, 1);
	assert_int_equal(ids, 13);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ops_named_from_the_capture),
		cmocka_unit_test(test_rescan_names_new_sites_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
