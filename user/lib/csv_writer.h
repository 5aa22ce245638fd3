/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * csv_writer.h - CSV cells and number formats as torch_npu writes them
 * (Python's csv module, excel dialect, str() of the values).
 *
 * Cells are quoted only when they contain ',', '"', '\r' or '\n'
 * (QUOTE_MINIMAL), '"' doubled; rows end with "\r\n".  Bytes that are not
 * valid UTF-8 and control bytes other than TAB, CR and LF become U+FFFD, so a
 * file is always valid UTF-8.  ASC_CSV_ONE_LINE additionally turns CR and LF
 * into spaces: kernel_details.csv is read line by line (MindStudio Insight),
 * so no cell there may span lines.
 */
#ifndef __ASCBPF_CSV_WRITER_H
#define __ASCBPF_CSV_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include "lib/json_writer.h"

#define ASC_CSV_ONE_LINE 0x1

struct asc_csv {
	struct asc_out *o;
	int ncells; /* cells written in the current row */
	unsigned int flags;
};

void asc_csv_init(struct asc_csv *c, struct asc_out *o, unsigned int flags);
/* One cell of n bytes (separator added before it unless it is the row's first). */
void asc_csv_cell(struct asc_csv *c, const char *s, size_t n);
void asc_csv_cstr(struct asc_csv *c, const char *s);
/* A cell with printf formatting (numbers: never needs quoting). */
void asc_csv_printf(struct asc_csv *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An empty cell (Python None). */
void asc_csv_empty(struct asc_csv *c);
/* A timestamp cell: "<ns as us with 3 decimals>\t" (convert_ns2us_str(ns, "\t")). */
void asc_csv_ts(struct asc_csv *c, int64_t ns);
/* A Python float cell (repr: shortest round-trip, "0.0", "1e-05", ...). */
void asc_csv_pyfloat(struct asc_csv *c, double v);
/* A Python float cell of ns / 1000 (a duration in us). */
void asc_csv_us_float(struct asc_csv *c, int64_t ns);
/* Ends the row with "\r\n". */
void asc_csv_end(struct asc_csv *c);
/* Writes a header row from a comma-separated list (no cell may need quoting). */
void asc_csv_header(struct asc_csv *c, const char *comma_list);

/*
 * Formats v as Python's repr(float) does: the shortest string that reads
 * back as v, in fixed notation when 1e-4 <= |v| < 1e16 (always with a '.'),
 * else in exponent notation ("1e-05", "1.5e+16"); "inf", "nan".  buf must
 * hold 32 bytes.  Returns the length.
 */
int asc_fmt_pyfloat(char *buf, double v);

/*
 * repr(ns / 1000) for an integer ns, without floating-point formatting (the
 * converter's durations); the same string asc_fmt_pyfloat() gives.
 */
int asc_fmt_us_float(char *buf, int64_t ns);

/*
 * repr(v / 2**shift) (shift <= 20): bytes in KB (10) or MB (20), exactly as
 * asc_fmt_pyfloat() would print it, mostly without floating point.  buf
 * must hold 48 bytes.
 */
int asc_fmt_pow2_frac(char *buf, uint64_t v, unsigned int shift);
void asc_csv_pow2_frac(struct asc_csv *c, uint64_t v, unsigned int shift);

#endif /* __ASCBPF_CSV_WRITER_H */
