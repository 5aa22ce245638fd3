// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * json_writer.c - buffered output, JSON string escaping and the structured
 * writer (contract in the header).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/json_writer.h"
#include "lib/log.h"
#include "lib/safeio.h"

static int out_init(struct asc_out *o, int fd, int own)
{
	memset(o, 0, sizeof(*o));
	o->dirfd = -1;
	o->buf = malloc(ASC_OUT_BUF);
	if (!o->buf) {
		o->fd = -1;
		return o->err = -ENOMEM;
	}
	o->fd = fd;
	o->own_fd = own;
	return 0;
}

/*
 * New files are created O_EXCL|O_NOFOLLOW in their directory; with force the
 * stream writes a temporary name beside path that asc_out_close() renames over
 * it (lib/safeio.h): an existing file or link at path is replaced, never
 * written through.
 */
int asc_out_open(struct asc_out *o, const char *path, int force)
{
	char name[NAME_MAX + 1], tmp[NAME_MAX + 1];
	int dirfd, fd;

	memset(o, 0, sizeof(*o));
	o->fd = o->dirfd = -1;
	dirfd = asc_parent_open(path, name, sizeof(name));
	fd = dirfd;
	if (dirfd >= 0)
		fd = force ? asc_tmp_create(dirfd, name, tmp, sizeof(tmp)) :
			     asc_file_create(dirfd, name, 0);
	if (fd < 0) {
		asc_err("cannot create %s: %s%s\n", path, strerror(-fd), asc_safeio_hint(fd));
		if (dirfd >= 0)
			close(dirfd);
		return o->err = fd;
	}
	if (out_init(o, fd, 1))
		goto fail;
	if (force) {
		o->dirfd = dirfd;
		o->tmp = strdup(tmp);
		o->name = strdup(name);
		if (!o->tmp || !o->name)
			goto fail;
	} else {
		close(dirfd);
	}
	return 0;
fail:
	if (force)
		unlinkat(dirfd, tmp, 0);
	free(o->buf);
	free(o->tmp);
	free(o->name);
	close(fd);
	close(dirfd);
	memset(o, 0, sizeof(*o));
	o->fd = o->dirfd = -1;
	return o->err = -ENOMEM;
}

int asc_out_fdopen(struct asc_out *o, int fd)
{
	return out_init(o, fd, 0);
}

int asc_out_flush(struct asc_out *o)
{
	size_t off = 0;
	ssize_t n;

	while (off < o->len && !o->err) {
		n = write(o->fd, o->buf + off, o->len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			o->err = -errno;
			break;
		}
		off += n;
	}
	o->bytes += o->len;
	o->len = 0;
	return o->err;
}

int asc_out_close(struct asc_out *o)
{
	int err;

	if (o->buf)
		asc_out_flush(o);
	err = o->err;
	if (o->own_fd && o->fd >= 0 && close(o->fd) && !err)
		err = -errno;
	if (o->tmp) { /* force: the temporary file replaces the name, complete or not at all */
		if (!err)
			err = asc_tmp_commit(o->dirfd, o->tmp, o->name);
		else
			unlinkat(o->dirfd, o->tmp, 0);
		close(o->dirfd);
	}
	free(o->tmp);
	free(o->name);
	free(o->buf);
	o->buf = NULL;
	o->tmp = o->name = NULL;
	o->fd = o->dirfd = -1;
	return err;
}

void asc_out_write(struct asc_out *o, const void *p, size_t n)
{
	const char *s = p;
	size_t k;

	while (n) {
		if (o->len == ASC_OUT_BUF)
			asc_out_flush(o);
		k = ASC_OUT_BUF - o->len;
		if (k > n)
			k = n;
		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
	}
}

void asc_out_puts(struct asc_out *o, const char *s)
{
	asc_out_write(o, s, strlen(s));
}

int asc_vformat(char *buf, size_t len, char **big, const char *fmt, va_list ap)
{
	va_list again;
	int n;

	if (big)
		*big = NULL;
	va_copy(again, ap);
	n = vsnprintf(buf, len, fmt, ap);
	if (n < 0) {
		n = -EINVAL;
	} else if ((size_t)n >= len && !big) {
		n = (int)len - 1;
	} else if ((size_t)n >= len) {
		*big = malloc((size_t)n + 1);
		if (*big)
			vsnprintf(*big, (size_t)n + 1, fmt, again);
		else
			n = -ENOMEM;
	}
	va_end(again);
	return n;
}

void asc_out_printf(struct asc_out *o, const char *fmt, ...)
{
	char tmp[512], *big;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = asc_vformat(tmp, sizeof(tmp), &big, fmt, ap);
	va_end(ap);
	if (n == -ENOMEM && !o->err)
		o->err = -ENOMEM;
	if (n > 0)
		asc_out_write(o, big ? big : tmp, n);
	free(big);
}

int asc_fmt_u64(char *buf, uint64_t v)
{
	char tmp[24];
	int i = sizeof(tmp);

	do {
		tmp[--i] = '0' + v % 10;
		v /= 10;
	} while (v);
	memcpy(buf, tmp + i, sizeof(tmp) - i);
	return sizeof(tmp) - i;
}

void asc_out_u64(struct asc_out *o, uint64_t v)
{
	char tmp[24];

	asc_out_write(o, tmp, asc_fmt_u64(tmp, v));
}

void asc_out_s64(struct asc_out *o, int64_t v)
{
	if (v < 0) {
		asc_out_putc(o, '-');
		asc_out_u64(o, -(uint64_t)v);
	} else {
		asc_out_u64(o, v);
	}
}

/* Length of the valid UTF-8 sequence at s (n bytes available), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len, i;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates and values above U+10FFFF are invalid */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

size_t asc_utf8_valid_prefix(const char *s, size_t n)
{
	size_t i = 0, k;

	while (i < n) {
		k = utf8_seq((const unsigned char *)s + i, n - i);
		if (!k)
			break;
		i += k;
	}
	return i;
}

void asc_json_str(struct asc_out *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0, k;

	asc_out_putc(o, '"');
	while (i < n) {
		unsigned char c = p[i];

		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			i++;
			run++;
			continue;
		}
		if (c >= 0x80) {
			k = utf8_seq(p + i, n - i);
			if (k) {
				i += k;
				run += k;
				continue;
			}
		}
		if (run)
			asc_out_write(o, p + i - run, run);
		run = 0;
		/* the escape table: one character a line */
		// clang-format off
		switch (c) {
		case '"': asc_out_write(o, "\\\"", 2); break;
		case '\\': asc_out_write(o, "\\\\", 2); break;
		case '\b': asc_out_write(o, "\\b", 2); break;
		case '\f': asc_out_write(o, "\\f", 2); break;
		case '\n': asc_out_write(o, "\\n", 2); break;
		case '\r': asc_out_write(o, "\\r", 2); break;
		case '\t': asc_out_write(o, "\\t", 2); break;
		default:
			if (c < 0x20) {
				char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

				asc_out_write(o, u, 6);
			} else {
				asc_out_write(o, "\xef\xbf\xbd", 3);	/* U+FFFD */
			}
		}
		// clang-format on
		i++;
	}
	if (run)
		asc_out_write(o, p + i - run, run);
	asc_out_putc(o, '"');
}

void asc_json_cstr(struct asc_out *o, const char *s)
{
	asc_json_str(o, s, strlen(s));
}

int asc_fmt_us(char *buf, int64_t ns)
{
	uint64_t v = ns < 0 ? -(uint64_t)ns : (uint64_t)ns, ip = v / 1000;
	unsigned int frac = v % 1000;
	int len = 0;

	if (ns < 0)
		buf[len++] = '-';
	len += asc_fmt_u64(buf + len, ip);
	buf[len++] = '.';
	buf[len++] = '0' + frac / 100;
	buf[len++] = '0' + frac / 10 % 10;
	buf[len++] = '0' + frac % 10;
	buf[len] = '\0';
	return len;
}

/* ---- structured writer ---- */

void asc_jw_init(struct asc_jw *w, struct asc_out *o)
{
	memset(w, 0, sizeof(*w));
	w->o = o;
	w->first[0] = 1;
}

void asc_jw_key(struct asc_jw *w, const char *key)
{
	if (!w->first[w->depth])
		asc_out_putc(w->o, ',');
	w->first[w->depth] = 0;
	if (key) {
		asc_json_cstr(w->o, key);
		asc_out_putc(w->o, ':');
	}
}

void asc_jw_open(struct asc_jw *w, const char *key, char c)
{
	asc_jw_key(w, key);
	asc_out_putc(w->o, c);
	if (w->depth < ASC_JW_DEPTH - 1)
		w->first[++w->depth] = 1;
}

void asc_jw_close(struct asc_jw *w, char c)
{
	asc_out_putc(w->o, c);
	if (w->depth)
		w->depth--;
}

void asc_jw_num(struct asc_jw *w, const char *key, double v)
{
	asc_jw_key(w, key);
	if (isfinite(v))
		asc_out_printf(w->o, "%.17g", v);
	else
		asc_out_puts(w->o, "null");
}

void asc_jw_int(struct asc_jw *w, const char *key, int64_t v)
{
	asc_jw_key(w, key);
	asc_out_s64(w->o, v);
}

void asc_jw_str(struct asc_jw *w, const char *key, const char *s)
{
	asc_jw_key(w, key);
	if (s)
		asc_json_cstr(w->o, s);
	else
		asc_out_puts(w->o, "null");
}

void asc_jw_bool(struct asc_jw *w, const char *key, int b)
{
	asc_jw_key(w, key);
	asc_out_puts(w->o, b ? "true" : "false");
}

void asc_jw_null(struct asc_jw *w, const char *key)
{
	asc_jw_key(w, key);
	asc_out_puts(w->o, "null");
}
