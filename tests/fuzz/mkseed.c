// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mkseed - turns what our own build and tests make into seed inputs for the
 * harnesses (tests/fuzz/seeds.sh runs it; nothing is downloaded):
 *
 *   mkseed records CAPTURE OUT     the records of a capture, concatenated as a
 *                                  frame holds them (fuzz_convert, fuzz_report)
 *   mkseed funcs ELF DIR MAX       the first 64 bytes of up to MAX function
 *                                  symbols of ELF, one file each (fuzz_insn)
 *   mkseed ioctl DIR               one input per command the decoder knows:
 *                                  cmd, module, a patterned argument (fuzz_ioctl)
 *   mkseed wrap RECORDS CAPTURE    the reverse of records: a record stream (a
 *                                  fuzz_convert input) as the capture that
 *                                  harness reads (tools/bench_fuzzmem.sh)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ascbpf_events.h"
#include "capture/ioctl_decode.h"
#include "capture/capture.h"
#include "discovery/elfsym.h"
#include "fuzz_common.h"

static int put_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "mkseed: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

static int seed_records(const char *capture, const char *out)
{
	struct asc_capture_reader *r = asc_capture_open(capture);
	const void *rec;
	size_t size;
	FILE *f;
	int ret;

	if (!r) {
		fprintf(stderr, "mkseed: cannot read %s\n", capture);
		return 1;
	}
	f = fopen(out, "wb");
	if (!f) {
		fprintf(stderr, "mkseed: cannot write %s: %s\n", out, strerror(errno));
		asc_capture_free(r);
		return 1;
	}
	while ((ret = asc_capture_next(r, &rec, &size)) == 1)
		fwrite(rec, 1, size, f);
	asc_capture_free(r);
	if (fclose(f) || ret < 0) {
		fprintf(stderr, "mkseed: %s: read or write failed\n", capture);
		return 1;
	}
	return 0;
}

static int seed_funcs(const char *path, const char *dir, size_t max)
{
	struct asc_elf *e;
	size_t i, n, step, written = 0;
	uint8_t code[64];
	char out[4096];
	int got;

	if (asc_elf_open(path, &e)) {
		fprintf(stderr, "mkseed: cannot read ELF %s\n", path);
		return 1;
	}
	n = asc_elf_nr_syms(e);
	step = n > max ? n / max : 1;
	for (i = 0; i < n && written < max; i += step) {
		const struct asc_elf_symbol *s = asc_elf_sym(e, i);

		got = asc_elf_read(e, s->vaddr, code,
				   s->size && s->size < sizeof(code) ? s->size : sizeof(code));
		if (got <= 0)
			continue;
		snprintf(out, sizeof(out), "%s/%s", dir, s->name);
		if (strlen(s->name) > 200 || strchr(s->name, '/'))
			snprintf(out, sizeof(out), "%s/func-%zu", dir, i);
		if (put_file(out, code, got)) {
			asc_elf_close(e);
			return 1;
		}
		written++;
	}
	asc_elf_close(e);
	return 0;
}

static int seed_ioctl(const char *dir)
{
	static const char types[] = { 'Z', 'X', 'M', 'P' };
	static const unsigned int sizes[] = { 0, 24, 32, 40, 44, 52, 64, 72, 96, 344 };
	uint8_t buf[5 + 400];
	char out[4096];
	size_t t, s, i;
	uint32_t cmd, dir_bits, nr;

	for (i = 5; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7);
	for (t = 0; t < sizeof(types); t++)
		for (nr = 0; nr < 128; nr++)
			for (dir_bits = 0; dir_bits < 4; dir_bits++)
				for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
					const struct asc_ioctl_desc *d;

					cmd = dir_bits << 30 | sizes[s] << 16 |
					      (uint32_t)types[t] << 8 | nr;
					d = asc_ioctl_lookup(cmd, asc_ioctl_guess_module(cmd));
					if (!d)
						continue;
					memcpy(buf, &cmd, 4);
					buf[4] = d->module;
					snprintf(out, sizeof(out), "%s/%s", dir, d->name);
					if (put_file(out, buf, 5 + (size_t)d->arg_size))
						return 1;
				}
	return 0;
}

static int seed_wrap(const char *in, const char *out)
{
	static uint8_t buf[1 << 22];
	FILE *f = fopen(in, "rb");
	size_t n;

	if (!f) {
		fprintf(stderr, "mkseed: cannot read %s: %s\n", in, strerror(errno));
		return 1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	return fz_write_capture_at(out, buf, n) ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "records"))
		return seed_records(argv[2], argv[3]);
	if (argc == 5 && !strcmp(argv[1], "funcs"))
		return seed_funcs(argv[2], argv[3], strtoul(argv[4], NULL, 0));
	if (argc == 4 && !strcmp(argv[1], "wrap"))
		return seed_wrap(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "ioctl"))
		return seed_ioctl(argv[2]);
	fprintf(stderr, "usage: mkseed records CAPTURE OUT | funcs ELF DIR MAX | ioctl DIR | "
			"wrap RECORDS CAPTURE\n");
	return 2;
}
