/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * json_writer.h - a buffered output stream and the JSON serialisation the
 * converter and `ascbpf dump --json` share.
 *
 * Strings follow Python's json.dumps(ensure_ascii=False): '"' and '\\'
 * escaped, \b \f \n \r \t by name, other bytes below 0x20 as \u00XX, valid
 * UTF-8 copied as is.  Bytes that are not valid UTF-8 (names from a target
 * may be truncated mid-character or be garbage) become U+FFFD, so the output
 * is always valid UTF-8 JSON.
 *
 * The stream records the first write error; asc_out_close() returns it.
 * struct asc_jw writes a document through a stream with the commas placed
 * for the caller (`ascbpf report --json`).
 */
#ifndef __ASCBPF_JSON_WRITER_H
#define __ASCBPF_JSON_WRITER_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define ASC_OUT_BUF (256 * 1024)

struct asc_out {
	int fd;
	int err;    /* first error (-errno) */
	int own_fd; /* close fd in asc_out_close() */
	size_t len;
	uint64_t bytes; /* bytes written through this stream */
	char *buf;
	int dirfd; /* force: the directory of name, tmp renamed over name at close */
	char *tmp, *name;
};

/*
 * Creates PATH and attaches a stream; 0 or -errno.  Never writes through a
 * link (lib/safeio.h): a new file is created O_EXCL|O_NOFOLLOW; with force,
 * a temporary file beside PATH replaces PATH at asc_out_close() if every
 * write succeeded (an existing file stays whole until then).
 */
int asc_out_open(struct asc_out *o, const char *path, int force);
/* Attaches a stream to an open fd (not closed by asc_out_close()). */
int asc_out_fdopen(struct asc_out *o, int fd);
int asc_out_flush(struct asc_out *o);
/* Flushes, closes the fd if owned, frees the buffer; returns the first error. */
int asc_out_close(struct asc_out *o);

void asc_out_write(struct asc_out *o, const void *p, size_t n);
void asc_out_puts(struct asc_out *o, const char *s);
void asc_out_printf(struct asc_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * The varargs part of the printf wrappers (asc_out_printf, asc_csv_printf):
 * formats into buf (len bytes).  Longer text goes to *big (malloc'd, the
 * caller frees it; NULL while the text fits) or, where big is NULL, is cut to
 * len - 1 bytes.  Returns the length of the text in *big or buf, -EINVAL for
 * a format vsnprintf rejects, -ENOMEM.
 */
int asc_vformat(char *buf, size_t len, char **big, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
void asc_out_u64(struct asc_out *o, uint64_t v);
void asc_out_s64(struct asc_out *o, int64_t v);

static inline void asc_out_putc(struct asc_out *o, char c)
{
	if (o->len == ASC_OUT_BUF)
		asc_out_flush(o);
	o->buf[o->len++] = c;
}

/* Writes s (n bytes) as a quoted JSON string. */
void asc_json_str(struct asc_out *o, const char *s, size_t n);
/* The same for a NUL-terminated string. */
void asc_json_cstr(struct asc_out *o, const char *s);

/*
 * Length of the longest prefix of s[0..n) that is valid UTF-8 up to a
 * character boundary (used to cut names without splitting a character).
 */
size_t asc_utf8_valid_prefix(const char *s, size_t n);

/*
 * Formats ns as microseconds with exactly 3 decimals ("1764671100123456.789"),
 * the way torch_npu writes "ts" and "dur"; negative values get a '-'.
 * buf must hold 32 bytes.  Returns the length.
 */
int asc_fmt_us(char *buf, int64_t ns);
/* The decimal digits of v into buf, no NUL (21 bytes suffice); returns how many. */
int asc_fmt_u64(char *buf, uint64_t v);

/*
 * A structured writer: compact JSON (no spaces) through a stream, the
 * commas placed by nesting level.  Keys are NULL for array elements and for
 * the outermost value.  Doubles are written as %.17g (they read back to the
 * same value), non-finite ones as null; a NULL string is null.  Nesting
 * deeper than ASC_JW_DEPTH - 1 is written but its commas are not tracked.
 */
#define ASC_JW_DEPTH 32

struct asc_jw {
	struct asc_out *o;
	int first[ASC_JW_DEPTH]; /* nothing written yet at this level */
	int depth;
};

void asc_jw_init(struct asc_jw *w, struct asc_out *o);
/* The comma before a value, and "key": when key is not NULL. */
void asc_jw_key(struct asc_jw *w, const char *key);
/* Opens an object ('{') or an array ('['); asc_jw_close() with '}' / ']'. */
void asc_jw_open(struct asc_jw *w, const char *key, char c);
void asc_jw_close(struct asc_jw *w, char c);
void asc_jw_num(struct asc_jw *w, const char *key, double v);
void asc_jw_int(struct asc_jw *w, const char *key, int64_t v);
void asc_jw_str(struct asc_jw *w, const char *key, const char *s);
void asc_jw_bool(struct asc_jw *w, const char *key, int b);
void asc_jw_null(struct asc_jw *w, const char *key);

#endif /* __ASCBPF_JSON_WRITER_H */
