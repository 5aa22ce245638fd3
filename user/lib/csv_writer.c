// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * csv_writer.c - CSV serialisation in torch_npu's conventions (see header).
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/csv_writer.h"

void asc_csv_init(struct asc_csv *c, struct asc_out *o, unsigned int flags)
{
	c->o = o;
	c->ncells = 0;
	c->flags = flags;
}

static void sep(struct asc_csv *c)
{
	if (c->ncells++)
		asc_out_putc(c->o, ',');
}

void asc_csv_cell(struct asc_csv *c, const char *s, size_t n)
{
	size_t i, valid;
	int quote = 0;

	sep(c);
	for (i = 0; i < n; i++) {
		unsigned char ch = s[i];

		if (ch == ',' || ch == '"' ||
		    (!(c->flags & ASC_CSV_ONE_LINE) && (ch == '\r' || ch == '\n'))) {
			quote = 1;
			break;
		}
	}
	if (quote)
		asc_out_putc(c->o, '"');
	for (i = 0; i < n;) {
		unsigned char ch = s[i];

		if (ch >= 0x80) {
			valid = asc_utf8_valid_prefix(s + i, n - i > 4 ? 4 : n - i);
			/* one whole character, or a replacement for the bad byte */
			if (valid) {
				size_t len = (ch >= 0xf0) ? 4 : (ch >= 0xe0) ? 3 : 2;

				asc_out_write(c->o, s + i, len);
				i += len;
			} else {
				asc_out_write(c->o, "\xef\xbf\xbd", 3);
				i++;
			}
			continue;
		}
		if (ch == '"') {
			asc_out_write(c->o, "\"\"", 2);
		} else if (ch == '\r' || ch == '\n') {
			asc_out_putc(c->o, (c->flags & ASC_CSV_ONE_LINE) ? ' ' : (char)ch);
		} else if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
			asc_out_write(c->o, "\xef\xbf\xbd", 3);
		} else {
			asc_out_putc(c->o, (char)ch);
		}
		i++;
	}
	if (quote)
		asc_out_putc(c->o, '"');
}

void asc_csv_cstr(struct asc_csv *c, const char *s)
{
	asc_csv_cell(c, s, strlen(s));
}

void asc_csv_printf(struct asc_csv *c, const char *fmt, ...)
{
	char buf[128]; /* a cell is cut at 127 bytes */
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = asc_vformat(buf, sizeof(buf), NULL, fmt, ap);
	va_end(ap);
	asc_csv_cell(c, buf, n < 0 ? 0 : (size_t)n);
}

void asc_csv_empty(struct asc_csv *c)
{
	sep(c);
}

void asc_csv_ts(struct asc_csv *c, int64_t ns)
{
	char buf[40];
	int n = asc_fmt_us(buf, ns);

	buf[n++] = '\t';
	sep(c);
	asc_out_write(c->o, buf, n);
}

void asc_csv_pyfloat(struct asc_csv *c, double v)
{
	char buf[40];
	int n = asc_fmt_pyfloat(buf, v);

	sep(c);
	asc_out_write(c->o, buf, n);
}

void asc_csv_us_float(struct asc_csv *c, int64_t ns)
{
	char buf[40];
	int n = asc_fmt_us_float(buf, ns);

	sep(c);
	asc_out_write(c->o, buf, n);
}

void asc_csv_pow2_frac(struct asc_csv *c, uint64_t v, unsigned int shift)
{
	char buf[48];
	int n = asc_fmt_pow2_frac(buf, v, shift);

	sep(c);
	asc_out_write(c->o, buf, n);
}

void asc_csv_end(struct asc_csv *c)
{
	asc_out_write(c->o, "\r\n", 2);
	c->ncells = 0;
}

void asc_csv_header(struct asc_csv *c, const char *list)
{
	asc_out_puts(c->o, list);
	asc_csv_end(c);
}

int asc_fmt_us_float(char *buf, int64_t ns)
{
	uint64_t a = ns < 0 ? -(uint64_t)ns : (uint64_t)ns, ip = a / 1000;
	unsigned int frac = a % 1000;
	int len = 0;

	/*
	 * Below 2^50 ns the doubles are far closer than 0.001 us apart, so the
	 * exact 3-decimal value (trailing zeros dropped) is repr(ns / 1000).
	 */
	if (a >= (1ull << 50))
		return asc_fmt_pyfloat(buf, (double)ns / 1000.0);
	if (ns < 0)
		buf[len++] = '-';
	len += asc_fmt_u64(buf + len, ip);
	buf[len++] = '.';
	if (!frac) {
		buf[len++] = '0';
	} else {
		buf[len++] = '0' + frac / 100;
		if (frac % 100) {
			buf[len++] = '0' + frac / 10 % 10;
			if (frac % 10)
				buf[len++] = '0' + frac % 10;
		}
	}
	buf[len] = '\0';
	return len;
}

int asc_fmt_pow2_frac(char *buf, uint64_t v, unsigned int shift)
{
	uint64_t ip = v >> shift, frac = v & ((1ull << shift) - 1);
	unsigned __int128 dec;
	char ipd[24], fd[24];
	int nip, len = 0, nfd = 0, sig, k;

	/*
	 * v / 2^shift is exact in binary and has at most `shift` decimals:
	 * frac * 5^shift are those decimals.  With at most 15 significant
	 * digits that exact decimal is also the shortest repr; otherwise (or
	 * below 1e-4, where repr switches to exponent form) ask the float path.
	 */
	if (shift > 20 || v >= (1ull << 53) || (double)v / (double)(1ull << shift) < 1e-4)
		return asc_fmt_pyfloat(buf, (double)v / (double)(1ull << shift));
	dec = frac;
	for (k = 0; k < (int)shift; k++)
		dec *= 5;
	for (k = shift - 1; k >= 0; k--) {
		fd[k] = '0' + (int)(dec % 10);
		dec /= 10;
	}
	nfd = shift;
	while (nfd > 0 && fd[nfd - 1] == '0')
		nfd--;
	nip = asc_fmt_u64(ipd, ip);
	sig = (v >> shift) ? nip + nfd : nfd;
	if (!(v >> shift))
		for (k = 0; k < nfd && fd[k] == '0'; k++)
			sig--;
	if (sig > 15)
		return asc_fmt_pyfloat(buf, (double)v / (double)(1ull << shift));
	memcpy(buf, ipd, nip);
	len = nip;
	buf[len++] = '.';
	if (!nfd) {
		buf[len++] = '0';
	} else {
		memcpy(buf + len, fd, nfd);
		len += nfd;
	}
	buf[len] = '\0';
	return len;
}

int asc_fmt_pyfloat(char *buf, double v)
{
	char tmp[40], digits[24];
	int prec, exp10, n, ndig, i, len = 0;
	char *e;

	if (isnan(v))
		return snprintf(buf, 32, "nan");
	if (isinf(v))
		return snprintf(buf, 32, v < 0 ? "-inf" : "inf");
	if (v == 0)
		return snprintf(buf, 32, signbit(v) ? "-0.0" : "0.0");
	/*
	 * Shortest %.{prec}e that round-trips gives the digits and the exponent.
	 * If 15 significant digits round-trip, the shortest string is those
	 * digits without trailing zeros (decimals of 15 digits are farther apart
	 * than normal doubles), so only 15, 16 and 17 need trying.
	 */
	for (prec = fabs(v) < DBL_MIN ? 0 : 14; prec < 16; prec++) { /* subnormals: all */
		snprintf(tmp, sizeof(tmp), "%.*e", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	snprintf(tmp, sizeof(tmp), "%.*e", prec, v);
	e = strchr(tmp, 'e');
	exp10 = atoi(e + 1);
	ndig = 0;
	for (i = (tmp[0] == '-'); tmp + i < e; i++)
		if (tmp[i] >= '0' && tmp[i] <= '9')
			digits[ndig++] = tmp[i];
	/* trailing zeros of the mantissa are not significant */
	while (ndig > 1 && digits[ndig - 1] == '0')
		ndig--;
	digits[ndig] = '\0';
	if (v < 0)
		buf[len++] = '-';
	if (exp10 < -4 || exp10 >= 16) {
		buf[len++] = digits[0];
		if (ndig > 1) {
			buf[len++] = '.';
			memcpy(buf + len, digits + 1, ndig - 1);
			len += ndig - 1;
		}
		n = snprintf(buf + len, 12, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
		return len + n;
	}
	if (exp10 < 0) {
		buf[len++] = '0';
		buf[len++] = '.';
		for (i = 0; i < -exp10 - 1; i++)
			buf[len++] = '0';
		memcpy(buf + len, digits, ndig);
		len += ndig;
	} else if (ndig <= exp10 + 1) {
		memcpy(buf + len, digits, ndig);
		len += ndig;
		for (i = ndig; i < exp10 + 1; i++)
			buf[len++] = '0';
		buf[len++] = '.';
		buf[len++] = '0';
	} else {
		memcpy(buf + len, digits, exp10 + 1);
		len += exp10 + 1;
		buf[len++] = '.';
		memcpy(buf + len, digits + exp10 + 1, ndig - exp10 - 1);
		len += ndig - exp10 - 1;
	}
	buf[len] = '\0';
	return len;
}
