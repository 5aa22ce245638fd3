// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_json_writer - JSON string escaping with ensure_ascii=False semantics
 * (quotes, backslash, named and \u00XX control escapes, UTF-8 kept, invalid
 * bytes -> U+FFFD), the microsecond timestamp format, buffered output, the
 * structured writer (asc_jw).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "lib/json_writer.h"

/* Runs fn into a temporary file and returns what it wrote (static buffer). */
static const char *capture_out(void (*fn)(struct asc_out *o, const void *arg), const void *arg,
			       size_t *len)
{
	static char text[2 << 20];
	struct asc_out o;
	FILE *f = tmpfile();
	size_t n;

	assert_non_null(f);
	assert_int_equal(asc_out_fdopen(&o, fileno(f)), 0);
	fn(&o, arg);
	assert_int_equal(asc_out_close(&o), 0);
	rewind(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	if (len)
		*len = n;
	return text;
}

static void put_cstr(struct asc_out *o, const void *arg)
{
	asc_json_cstr(o, arg);
}

struct bytes {
	const char *s;
	size_t n;
};

static void put_bytes(struct asc_out *o, const void *arg)
{
	const struct bytes *b = arg;

	asc_json_str(o, b->s, b->n);
}

static void test_plain_and_specials(void **state)
{
	(void)state;
	assert_string_equal(capture_out(put_cstr, "aten::add", NULL), "\"aten::add\"");
	assert_string_equal(capture_out(put_cstr, "a\"b\\c", NULL), "\"a\\\"b\\\\c\"");
	assert_string_equal(capture_out(put_cstr, "x\r\ny\tz\b\f", NULL), "\"x\\r\\ny\\tz\\b\\f\"");
	assert_string_equal(capture_out(put_cstr, "\x01\x1f", NULL), "\"\\u0001\\u001f\"");
	/* DEL and '/' are not escaped by Python's json */
	assert_string_equal(capture_out(put_cstr, "a/b\x7f", NULL), "\"a/b\x7f\"");
	assert_string_equal(capture_out(put_cstr, "", NULL), "\"\"");
}

static void test_nul_byte(void **state)
{
	struct bytes b = { "a\0b", 3 };

	(void)state;
	assert_string_equal(capture_out(put_bytes, &b, NULL), "\"a\\u0000b\"");
}

static void test_utf8(void **state)
{
	struct bytes cut = { "\xe5\x8f\x98\xe6\x8d", 5 }; /* second character cut */
	struct bytes bad = { "a\xff"
			     "b\xc0\xaf",
			     5 }; /* invalid byte, overlong */
	struct bytes surrogate = { "\xed\xa0\x80", 3 };

	(void)state;
	/* valid UTF-8 stays raw (ensure_ascii=False) */
	assert_string_equal(capture_out(put_cstr, "\xe5\x8f\x98\xe6\x8d\xa2 \xf0\x9f\x98\x80",
					NULL),
			    "\"\xe5\x8f\x98\xe6\x8d\xa2 \xf0\x9f\x98\x80\"");
	assert_string_equal(capture_out(put_bytes, &cut, NULL),
			    "\"\xe5\x8f\x98\xef\xbf\xbd\xef\xbf\xbd\"");
	assert_string_equal(capture_out(put_bytes, &bad, NULL), "\"a\xef\xbf\xbd"
								"b\xef\xbf\xbd\xef\xbf\xbd\"");
	assert_string_equal(capture_out(put_bytes, &surrogate, NULL),
			    "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
	assert_int_equal(asc_utf8_valid_prefix("ab\xe5\x8f", 4), 2);
	assert_int_equal(asc_utf8_valid_prefix("\xe5\x8f\x98", 3), 3);
}

static void test_fmt_us(void **state)
{
	char buf[32];

	(void)state;
	/* convert_ns2us_str: at most 3 digits -> "0.xxx" */
	asc_fmt_us(buf, 0);
	assert_string_equal(buf, "0.000");
	asc_fmt_us(buf, 7);
	assert_string_equal(buf, "0.007");
	asc_fmt_us(buf, 999);
	assert_string_equal(buf, "0.999");
	asc_fmt_us(buf, 1000);
	assert_string_equal(buf, "1.000");
	asc_fmt_us(buf, 1736408883704643212ll);
	assert_string_equal(buf, "1736408883704643.212");
	asc_fmt_us(buf, -1500);
	assert_string_equal(buf, "-1.500");
}

static void put_numbers(struct asc_out *o, const void *arg)
{
	(void)arg;
	asc_out_u64(o, 0);
	asc_out_putc(o, ' ');
	asc_out_u64(o, UINT64_MAX);
	asc_out_putc(o, ' ');
	asc_out_s64(o, INT64_MIN);
	asc_out_putc(o, ' ');
	asc_out_printf(o, "%s-%d", "x", 42);
}

static void test_numbers(void **state)
{
	(void)state;
	assert_string_equal(capture_out(put_numbers, NULL, NULL),
			    "0 18446744073709551615 -9223372036854775808 x-42");
}

static int vformat(char *buf, size_t len, char **big, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int vformat(char *buf, size_t len, char **big, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = asc_vformat(buf, len, big, fmt, ap);
	va_end(ap);
	return n;
}

/* asc_vformat: text that fits stays in buf; longer text is cut (no big) or grows into *big. */
static void test_vformat(void **state)
{
	char buf[8], *big = (char *)1;

	(void)state;
	assert_int_equal(vformat(buf, sizeof(buf), &big, "%d-%s", 42, "ab"), 5);
	assert_null(big);
	assert_string_equal(buf, "42-ab");
	assert_int_equal(vformat(buf, sizeof(buf), NULL, "%s", "abcdefghij"), 7);
	assert_string_equal(buf, "abcdefg");
	assert_int_equal(vformat(buf, sizeof(buf), &big, "%s%d", "abcdefghij", 12345), 15);
	assert_non_null(big);
	assert_string_equal(big, "abcdefghij12345");
	free(big);
	/* exactly len - 1 bytes still fit */
	assert_int_equal(vformat(buf, sizeof(buf), &big, "%s", "1234567"), 7);
	assert_null(big);
}

static void put_big(struct asc_out *o, const void *arg)
{
	int i;

	(void)arg;
	/* more than one buffer's worth, through every write path */
	for (i = 0; i < 100000; i++) {
		asc_json_cstr(o, "abcdefgh\n");
		asc_out_putc(o, ',');
	}
}

static void test_buffer_boundaries(void **state)
{
	size_t len;
	const char *s = capture_out(put_big, NULL, &len);

	(void)state;
	assert_int_equal(len, 100000 * 13);
	assert_memory_equal(s + 13 * 54321, "\"abcdefgh\\n\",", 13);
}

static void test_open_excl(void **state)
{
	char dir[] = "/tmp/test_json_writer.XXXXXX", path[64];
	struct asc_out o;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	assert_int_equal(asc_out_open(&o, path, 0), 0);
	asc_out_puts(&o, "x");
	assert_int_equal(asc_out_close(&o), 0);
	assert_int_equal(asc_out_open(&o, path, 0), -EEXIST);
	assert_int_equal(asc_out_open(&o, path, 1), 0);
	assert_int_equal(asc_out_close(&o), 0);
	unlink(path);
	rmdir(dir);
}

/* A document with every value kind, nested objects and arrays, and empty ones. */
static void put_doc(struct asc_out *o, const void *arg)
{
	struct asc_jw w;

	(void)arg;
	asc_jw_init(&w, o);
	asc_jw_open(&w, NULL, '{');
	asc_jw_str(&w, "s", "a\"b");
	asc_jw_str(&w, "none", NULL);
	asc_jw_int(&w, "i", -42);
	asc_jw_num(&w, "x", 0.1);
	asc_jw_num(&w, "inf", 1.0 / 0.0);
	asc_jw_bool(&w, "t", 1);
	asc_jw_null(&w, "n");
	asc_jw_open(&w, "a", '[');
	asc_jw_int(&w, NULL, 1);
	asc_jw_open(&w, NULL, '{');
	asc_jw_bool(&w, "f", 0);
	asc_jw_close(&w, '}');
	asc_jw_open(&w, NULL, '[');
	asc_jw_close(&w, ']');
	asc_jw_close(&w, ']');
	asc_jw_open(&w, "e", '{');
	asc_jw_close(&w, '}');
	asc_jw_close(&w, '}');
}

static void test_structured(void **state)
{
	(void)state;
	assert_string_equal(capture_out(put_doc, NULL, NULL),
			    "{\"s\":\"a\\\"b\",\"none\":null,\"i\":-42,"
			    "\"x\":0.10000000000000001,\"inf\":null,\"t\":true,\"n\":null,"
			    "\"a\":[1,{\"f\":false},[]],\"e\":{}}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_and_specials),
		cmocka_unit_test(test_nul_byte),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_fmt_us),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_buffer_boundaries),
		cmocka_unit_test(test_vformat),
		cmocka_unit_test(test_open_excl),
		cmocka_unit_test(test_structured),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
