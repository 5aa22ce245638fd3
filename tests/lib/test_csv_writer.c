// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_csv_writer - RFC 4180 / Python csv excel-dialect quoting, CRLF rows,
 * the one-line mode of kernel_details.csv, control and invalid bytes,
 * timestamp cells with their TAB, Python float repr.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "lib/csv_writer.h"

static char text[4096];

static const char *row(unsigned int flags, const char *const *cells, int n)
{
	struct asc_out o;
	struct asc_csv c;
	FILE *f = tmpfile();
	size_t len;
	int i;

	assert_non_null(f);
	assert_int_equal(asc_out_fdopen(&o, fileno(f)), 0);
	asc_csv_init(&c, &o, flags);
	for (i = 0; i < n; i++)
		asc_csv_cstr(&c, cells[i]);
	asc_csv_end(&c);
	assert_int_equal(asc_out_close(&o), 0);
	rewind(f);
	len = fread(text, 1, sizeof(text) - 1, f);
	text[len] = '\0';
	fclose(f);
	return text;
}

static void test_quote_minimal(void **state)
{
	const char *const plain[] = { "aten::add", "1.5", "" };
	const char *const special[] = { "a,b", "say \"hi\"", "two\r\nlines", "x;\r\ny",
					"tab\there" };

	(void)state;
	assert_string_equal(row(0, plain, 3), "aten::add,1.5,\r\n");
	assert_string_equal(
		row(0, special, 5),
		"\"a,b\",\"say \"\"hi\"\"\",\"two\r\nlines\",\"x;\r\ny\",tab\there\r\n");
}

static void test_one_line(void **state)
{
	const char *const cells[] = { "two\r\nlines", "x\ny", "q\"," };

	(void)state;
	/* kernel_details: no cell may span lines; quoting still applies */
	assert_string_equal(row(ASC_CSV_ONE_LINE, cells, 3), "two  lines,x y,\"q\"\",\"\r\n");
}

static void test_bytes(void **state)
{
	/* "a\x01" "b" is one cell (the split ends the hex escape): kept on one line */
	// clang-format off
	const char *const cells[] = { "\xe5\x8f\x98\xe6\x8d\xa2", "a\x01" "b", "c\xff" "d", "\x7f" };

	(void)state;
	assert_string_equal(row(0, cells, 4),
			    "\xe5\x8f\x98\xe6\x8d\xa2,a\xef\xbf\xbd" "b,c\xef\xbf\xbd" "d,\xef\xbf\xbd\r\n");
	// clang-format on
}

static void test_ts_and_numbers(void **state)
{
	struct asc_out o;
	struct asc_csv c;
	FILE *f = tmpfile();
	size_t len;

	(void)state;
	assert_non_null(f);
	assert_int_equal(asc_out_fdopen(&o, fileno(f)), 0);
	asc_csv_init(&c, &o, 0);
	asc_csv_ts(&c, 1736408883704643212ll);
	asc_csv_empty(&c);
	asc_csv_pyfloat(&c, 935.9951171875);
	asc_csv_printf(&c, "%d", 42);
	asc_csv_end(&c);
	asc_csv_header(&c, "A,B");
	assert_int_equal(asc_out_close(&o), 0);
	rewind(f);
	len = fread(text, 1, sizeof(text) - 1, f);
	text[len] = '\0';
	fclose(f);
	assert_string_equal(text, "1736408883704643.212\t,,935.9951171875,42\r\nA,B\r\n");
}

static void test_pyfloat(void **state)
{
	/* Python 3: repr(x) for each */
	static const struct {
		double v;
		const char *repr;
	} cases[] = {
		{ 0.0, "0.0" },
		{ 1.0, "1.0" },
		{ -2.5, "-2.5" },
		{ 0.1, "0.1" },
		{ 145.57, "145.57" },
		{ 2109.6015625, "2109.6015625" },
		{ 8873.756000000001, "8873.756000000001" },
		{ 0.1 + 0.2, "0.30000000000000004" },
		{ 1e-05, "1e-05" },
		{ 0.0001, "0.0001" },
		{ 1e16, "1e+16" },
		{ 1234567890123456.0, "1234567890123456.0" },
		{ 1.5e16, "1.5e+16" },
		{ 123456789.0, "123456789.0" },
		{ 4028.6750000000175, "4028.6750000000175" },
		{ 5e-324, "5e-324" },
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
	};
	char buf[40];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		asc_fmt_pyfloat(buf, cases[i].v);
		assert_string_equal(buf, cases[i].repr);
	}
}

static void test_us_float(void **state)
{
	/* repr(ns / 1000) in Python 3 */
	static const struct {
		int64_t ns;
		const char *repr;
	} cases[] = {
		{ 0, "0.0" },
		{ 1, "0.001" },
		{ 50, "0.05" },
		{ 100, "0.1" },
		{ 1000, "1.0" },
		{ 145570, "145.57" },
		{ 53741, "53.741" },
		{ -2500, "-2.5" },
		{ 1736408883704643212ll, "1736408883704643.2" }, /* beyond exact: repr */
	};
	char a[40], b[40];
	size_t i;
	int64_t ns;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		asc_fmt_us_float(a, cases[i].ns);
		assert_string_equal(a, cases[i].repr);
	}
	/* the integer path agrees with the float path over a spread of values */
	for (ns = 1; ns < (1ll << 49); ns = ns * 3 + 7) {
		asc_fmt_us_float(a, ns);
		asc_fmt_pyfloat(b, (double)ns / 1000.0);
		assert_string_equal(a, b);
	}
}

static void test_pow2_frac(void **state)
{
	/* repr(b / 1048576) and repr(b / 1024) in Python 3 */
	static const struct {
		uint64_t v;
		unsigned int shift;
		const char *repr;
	} cases[] = {
		{ 0, 20, "0.0" },
		{ 1048576, 20, "1.0" },
		{ 981467136, 20, "936.0" },
		{ 981463040, 20, "935.99609375" },
		{ 981462528, 20, "935.99560546875" },
		{ 1052672, 20, "1.00390625" },
		{ 1, 20, "9.5367431640625e-07" },
		{ 512, 10, "0.5" },
		{ 19267584, 10, "18816.0" },
		{ 2212081369, 20, "2109.6051874160767" },
	};
	char a[48], b[48];
	size_t i;
	uint64_t v;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		asc_fmt_pow2_frac(a, cases[i].v, cases[i].shift);
		assert_string_equal(a, cases[i].repr);
	}
	for (v = 1; v < (1ull << 52); v = v * 5 + 3) {
		asc_fmt_pow2_frac(a, v, 20);
		asc_fmt_pyfloat(b, (double)v / 1048576.0);
		assert_string_equal(a, b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quote_minimal), cmocka_unit_test(test_one_line),
		cmocka_unit_test(test_bytes),	      cmocka_unit_test(test_ts_and_numbers),
		cmocka_unit_test(test_pyfloat),	      cmocka_unit_test(test_us_float),
		cmocka_unit_test(test_pow2_frac),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
