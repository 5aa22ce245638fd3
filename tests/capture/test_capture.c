// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_capture - the capture file: round trip over several frames, append
 * validation, O_EXCL, truncation and corruption (read up to the last good
 * frame, report the loss), a write that fails part-way (full disk, here
 * RLIMIT_FSIZE) cut back to the last whole frame, unknown version and bad
 * magic refused, CRC-32C; frame sizes bounded by the file's size; an idle
 * writer holds no buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "ascbpf_events.h"
#include "capture/capture.h"
#include "lib/log.h"

static char dir[] = "/tmp/test_capture.XXXXXX";
static char path[256];

static void quiet(enum asc_log_level l, const char *fmt, va_list ap)
{
	(void)l;
	(void)fmt;
	(void)ap;
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/c.ascb", dir);
	asc_log_set_sink(quiet);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	rmdir(dir);
	return 0;
}

/* Record i: an ENTER (72 bytes) with args derived from i, or an EXIT (32). */
static size_t make_rec(uint64_t i, struct asc_enter *e)
{
	memset(e, 0, sizeof(*e));
	e->hdr.type = i % 3 ? ASC_REC_ENTER : ASC_REC_EXIT;
	e->hdr.size = i % 3 ? sizeof(struct asc_enter) : sizeof(struct asc_exit);
	e->hdr.tid = (uint32_t)i;
	e->hdr.ts_ns = i * 7;
	e->args[0] = i * 0x9e3779b97f4a7c15ull;
	return e->hdr.size;
}

static uint64_t write_n(uint64_t n)
{
	struct asc_capture_writer *w = asc_capture_create(path, 1);
	struct asc_enter e;
	uint64_t i;

	assert_non_null(w);
	for (i = 0; i < n; i++) {
		size_t sz = make_rec(i, &e);

		assert_int_equal(asc_capture_append(w, &e, sz), 0);
	}
	assert_true(asc_capture_bytes_written(w) >= 32);
	assert_int_equal(asc_capture_close(w), 0);
	return n;
}

static uint64_t read_all(struct asc_capture_info *info)
{
	struct asc_capture_reader *r = asc_capture_open(path);
	struct asc_enter e;
	const void *rec;
	size_t size;
	uint64_t n = 0;
	int ret;

	assert_non_null(r);
	while ((ret = asc_capture_next(r, &rec, &size)) == 1) {
		size_t want = make_rec(n, &e);

		assert_int_equal(size, want);
		assert_memory_equal(rec, &e, want);
		n++;
	}
	assert_int_equal(ret, 0);
	asc_capture_info(r, info);
	assert_int_equal(info->records_read, n);
	asc_capture_free(r);
	return n;
}

static void test_roundtrip_many_frames(void **state)
{
	struct asc_capture_info info;
	uint64_t n = write_n(60000); /* ~3.3 MB raw: 4 frames */

	(void)state;
	assert_int_equal(read_all(&info), n);
	assert_true(info.frames_read >= 3);
	assert_int_equal(info.damaged, 0);
	assert_int_equal(info.bytes_unread, 0);
	assert_int_equal(info.version, ASC_CAPTURE_VERSION);
}

/*
 * A capture given idle holds no buffer (the retained memory of a finished
 * process's capture is the writer itself), takes them again for the next
 * record, and reads back whole: every record once, in order.
 */
static void test_idle_gives_buffers_back(void **state)
{
	struct asc_capture_writer *w = asc_capture_create(path, 1);
	struct asc_capture_info info;
	struct asc_enter e;
	uint64_t i;

	(void)state;
	assert_non_null(w);
	assert_true(asc_capture_held_bytes(w) >= 2 * ASC_FRAME_TARGET);
	for (i = 0; i < 30000; i++) {
		size_t sz = make_rec(i, &e);

		assert_int_equal(asc_capture_append(w, &e, sz), 0);
		if (i % 10000 == 9999) {
			assert_int_equal(asc_capture_idle(w), 0);
			assert_int_equal(asc_capture_held_bytes(w), 0);
			assert_int_equal(asc_capture_idle(w), 0); /* idempotent */
		}
	}
	assert_int_equal(asc_capture_held_bytes(w), 0); /* idle after record 29999 */
	assert_int_equal(asc_capture_append(w, &e, make_rec(i, &e)), 0);
	assert_true(asc_capture_held_bytes(w) > 0);
	assert_int_equal(asc_capture_idle(w), 0);
	assert_int_equal(asc_capture_held_bytes(w), 0);
	assert_int_equal(asc_capture_close(w), 0);
	assert_int_equal(read_all(&info), 30001);
	assert_int_equal(info.damaged, 0);
	assert_int_equal(info.bytes_unread, 0);
}

static void test_rewind(void **state)
{
	struct asc_capture_reader *r;
	const void *rec;
	size_t size;
	int a = 0, b = 0;

	(void)state;
	write_n(30000);
	r = asc_capture_open(path);
	assert_non_null(r);
	while (asc_capture_next(r, &rec, &size) == 1)
		a++;
	assert_int_equal(asc_capture_rewind(r), 0);
	while (asc_capture_next(r, &rec, &size) == 1)
		b++;
	assert_int_equal(a, 30000);
	assert_int_equal(a, b);
	asc_capture_free(r);
}

static void test_append_rejects_bad_sizes(void **state)
{
	struct asc_capture_writer *w = asc_capture_create(path, 1);
	struct asc_enter e;

	(void)state;
	assert_non_null(w);
	make_rec(1, &e);
	assert_int_equal(asc_capture_append(w, &e, 70), -EINVAL); /* not a multiple of 8 */
	assert_int_equal(asc_capture_append(w, &e, 64), -EINVAL); /* != hdr.size */
	assert_int_equal(asc_capture_append(w, &e, 16), -EINVAL); /* shorter than a header */
	assert_int_equal(asc_capture_append(w, &e, 72), 0);
	assert_int_equal(asc_capture_close(w), 0);
}

static void test_create_excl(void **state)
{
	(void)state;
	write_n(1);
	errno = 0;
	assert_null(asc_capture_create(path, 0));
	assert_int_equal(errno, EEXIST);
}

/* Offset of frame k's header (k = 0 is the first frame). */
static long frame_offset(int k)
{
	int fd = open(path, O_RDONLY);
	uint8_t fh[24];
	long off = 32;

	assert_true(fd >= 0);
	while (k--) {
		assert_int_equal(pread(fd, fh, 24, off), 24);
		off += 24 + (fh[8] | fh[9] << 8 | fh[10] << 16 | (long)fh[11] << 24);
	}
	close(fd);
	return off;
}

static void test_truncated_last_frame(void **state)
{
	struct asc_capture_info info;
	struct stat st;
	long f2;
	uint64_t got;

	(void)state;
	write_n(60000);
	f2 = frame_offset(2);
	assert_int_equal(stat(path, &st), 0);
	/* cut in the middle of frame 2 (a SIGKILL during its write) */
	assert_int_equal(truncate(path, f2 + 100), 0);
	got = read_all(&info);
	assert_true(got > 0 && got < 60000);
	assert_int_equal(info.frames_read, 2);
	assert_int_equal(info.damaged, 1);
	assert_int_equal(info.bytes_unread, 100);
	assert_non_null(strstr(info.damage, "truncated"));
}

static void test_truncated_frame_header(void **state)
{
	struct asc_capture_info info;
	long f1;

	(void)state;
	write_n(60000);
	f1 = frame_offset(1);
	assert_int_equal(truncate(path, f1 + 10), 0);
	read_all(&info);
	assert_int_equal(info.frames_read, 1);
	assert_int_equal(info.damaged, 1);
	assert_int_equal(info.bytes_unread, 10);
}

/*
 * A frame write that fails part-way (the disk fills: RLIMIT_FSIZE gives the
 * same short write, then EFBIG) leaves the file ending at its last complete
 * frame, with no damage for the reader; the error is sticky and reported.
 */
static void test_short_write_cut_back(void **state)
{
	struct asc_capture_writer *w = asc_capture_create(path, 1);
	struct asc_capture_info info;
	struct rlimit old, lim;
	struct asc_enter e;
	struct stat st;
	uint64_t i, whole;
	int err = 0;

	(void)state;
	assert_non_null(w);
	for (i = 0; i < 20000; i++) {
		size_t sz = make_rec(i, &e);

		assert_int_equal(asc_capture_append(w, &e, sz), 0);
	}
	assert_int_equal(asc_capture_flush(w), 0);
	whole = asc_capture_bytes_written(w);
	assert_int_equal(asc_capture_error(w), 0);
	/* room for 100 more bytes: the next frame's write is short, then fails */
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = whole + 100;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	for (; i < 60000 && !err; i++) {
		size_t sz = make_rec(i, &e);

		err = asc_capture_append(w, &e, sz);
	}
	if (!err)
		err = asc_capture_flush(w);
	assert_int_equal(err, -EFBIG);
	assert_int_equal(asc_capture_error(w), -EFBIG);
	assert_int_equal(asc_capture_append(w, &e, make_rec(0, &e)), -EFBIG);
	assert_int_equal(asc_capture_close(w), -EFBIG);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal((uint64_t)st.st_size, whole);
	assert_int_equal(read_all(&info), 20000);
	assert_int_equal(info.damaged, 0);
	assert_int_equal(info.bytes_unread, 0);
}

static void flip_byte(long off)
{
	int fd = open(path, O_RDWR);
	uint8_t b;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, off), 1);
	b ^= 0x5a;
	assert_int_equal(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

static void test_corrupt_payload(void **state)
{
	struct asc_capture_info info;
	struct stat st;
	long f1 = 0;

	(void)state;
	write_n(60000);
	f1 = frame_offset(1);
	flip_byte(f1 + 24 + 500); /* inside frame 1's zstd data */
	assert_int_equal(stat(path, &st), 0);
	read_all(&info);
	assert_int_equal(info.frames_read, 1);
	assert_int_equal(info.damaged, 1);
	assert_int_equal(info.bytes_unread, st.st_size - f1);
}

static void test_corrupt_frame_header(void **state)
{
	struct asc_capture_info info;

	(void)state;
	write_n(60000);
	flip_byte(frame_offset(0) + 13); /* nr_records of frame 0: CRC mismatch */
	assert_int_equal(read_all(&info), 0);
	assert_int_equal(info.damaged, 1);
	assert_non_null(strstr(info.damage, "frame 0"));
}

static void test_unknown_version(void **state)
{
	uint8_t hdr[32];
	int fd;
	uint32_t crc;

	(void)state;
	write_n(10);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, hdr, 32, 0), 32);
	hdr[8] = ASC_CAPTURE_VERSION + 1;
	crc = asc_crc32c(0, hdr, 24);
	memcpy(hdr + 24, &crc, 4); /* a valid header of a newer version */
	assert_int_equal(pwrite(fd, hdr, 32, 0), 32);
	close(fd);
	errno = 0;
	assert_null(asc_capture_open(path));
	assert_int_equal(errno, EPROTONOSUPPORT);
}

static void test_bad_magic(void **state)
{
	FILE *f;

	(void)state;
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("not a capture file at all, just some text......", f);
	fclose(f);
	errno = 0;
	assert_null(asc_capture_open(path));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(truncate(path, 5), 0);
	assert_null(asc_capture_open(path));
}

/*
 * A frame header announcing the largest sizes the format allows (64 MB raw,
 * 60 MB compressed) in a file of a few hundred bytes: reported truncated, with
 * no buffer sized by the header (issue 19: every size from a file bounded by
 * what the file holds).  The mmapped bytes malloc holds tell (not under ASAN,
 * whose allocator mallinfo2 does not see).
 */
static void test_frame_sizes_bounded_by_file(void **state)
{
	struct asc_capture_reader *r;
	struct asc_capture_info info;
	uint8_t fh[24];
	uint32_t v;
	const void *rec;
	size_t size;
	int fd, i;

	(void)state;
	write_n(10);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, fh, 24, 32), 24);
	for (i = 0, v = 64u << 20; i < 4; i++)
		fh[4 + i] = (uint8_t)(v >> (8 * i));
	for (i = 0, v = 60u << 20; i < 4; i++)
		fh[8 + i] = (uint8_t)(v >> (8 * i));
	for (i = 0, v = asc_crc32c(0, fh, 20); i < 4; i++)
		fh[20 + i] = (uint8_t)(v >> (8 * i));
	assert_int_equal(pwrite(fd, fh, 24, 32), 24);
	close(fd);
	r = asc_capture_open(path);
	assert_non_null(r);
	assert_int_equal(asc_capture_next(r, &rec, &size), 0);
	asc_capture_info(r, &info);
	assert_int_equal(info.damaged, 1);
	assert_non_null(strstr(info.damage, "truncated"));
	assert_true(mallinfo2().hblkhd < (8u << 20));
	asc_capture_free(r);
}

static void test_crc32c_vector(void **state)
{
	(void)state;
	/* the standard CRC-32C check value */
	assert_int_equal(asc_crc32c(0, "123456789", 9), 0xE3069283u);
	/* incremental == one shot */
	assert_int_equal(asc_crc32c(asc_crc32c(0, "1234", 4), "56789", 5), 0xE3069283u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_many_frames),
		cmocka_unit_test(test_rewind),
		cmocka_unit_test(test_append_rejects_bad_sizes),
		cmocka_unit_test(test_create_excl),
		cmocka_unit_test(test_truncated_last_frame),
		cmocka_unit_test(test_truncated_frame_header),
		cmocka_unit_test(test_short_write_cut_back),
		cmocka_unit_test(test_corrupt_payload),
		cmocka_unit_test(test_corrupt_frame_header),
		cmocka_unit_test(test_unknown_version),
		cmocka_unit_test(test_bad_magic),
		cmocka_unit_test(test_crc32c_vector),
		cmocka_unit_test(test_frame_sizes_bounded_by_file),
		cmocka_unit_test(test_idle_gives_buffers_back),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
