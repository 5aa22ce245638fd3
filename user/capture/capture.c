// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * capture.c - the capture file writer and reader (format in capture.h).
 *
 * Writer: records are copied into a buffer; when the next record would push
 * it past ASC_FRAME_TARGET the buffer is compressed into one zstd frame
 * (content checksum on) and written, frame header and payload together, with
 * one write() so that a SIGKILL leaves only whole frames or a torn last one.
 * A failed write (ENOSPC) is cut off again with ftruncate(), so a full disk
 * leaves only whole frames; the error is sticky from then on.
 * append/flush/close take a mutex, so a ring-buffer consumer and a device
 * channel reader may share one writer.
 *
 * Reader: frames are read and decompressed one at a time into a single
 * buffer, and every record size in the frame is checked before the first of
 * its records is handed out, so a damaged frame yields no records at all and
 * the reader stops cleanly before it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>
#include "ascbpf_events.h"
#include "capture/capture.h"
#include "lib/safeio.h"
#include "lib/log.h"

#define FILE_HDR_LEN  32
#define FRAME_HDR_LEN 24
/* A frame larger than this is taken as corruption (the writer cuts at 1 MiB). */
#define FRAME_RAW_MAX (64u << 20)
#define ZSTD_LEVEL    1 /* fast: the tracer compresses while the target runs */

/* ---- CRC-32C, slicing-by-1 table (headers only: speed is not critical) ---- */

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
		crc_table[i] = c;
	}
}

uint32_t asc_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	pthread_once(&crc_once, crc_init);
	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* ---- writer ---- */

struct asc_capture_writer {
	int fd;
	int err; /* first error seen; sticky */
	uint32_t seq;
	uint32_t nr_records;
	size_t len;   /* bytes buffered */
	uint8_t *buf; /* ASC_FRAME_TARGET bytes */
	uint8_t *out; /* FRAME_HDR_LEN + ZSTD_compressBound(ASC_FRAME_TARGET) */
	size_t out_cap;
	uint64_t bytes_written;
	ZSTD_CCtx *cctx;
	pthread_mutex_t lock;
};

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

/* The frame buffers and the compression context (again after asc_capture_idle); 0 or -ENOMEM. */
static int alloc_buffers(struct asc_capture_writer *w)
{
	if (w->buf)
		return 0;
	w->out_cap = FRAME_HDR_LEN + ZSTD_compressBound(ASC_FRAME_TARGET);
	w->buf = malloc(ASC_FRAME_TARGET);
	w->out = malloc(w->out_cap);
	w->cctx = ZSTD_createCCtx();
	if (!w->buf || !w->out || !w->cctx) {
		ZSTD_freeCCtx(w->cctx);
		free(w->buf);
		free(w->out);
		w->buf = w->out = NULL;
		w->cctx = NULL;
		return -ENOMEM;
	}
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, ZSTD_LEVEL);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1);
	return 0;
}

struct asc_capture_writer *asc_capture_create(const char *path, int force)
{
	struct asc_capture_writer *w;
	uint8_t hdr[FILE_HDR_LEN] = { 0 };
	struct timespec ts;
	int err;

	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	err = alloc_buffers(w);
	if (err)
		goto fail;
	pthread_mutex_init(&w->lock, NULL);

	/*
	 * Never through a link (lib/safeio.h).  --force unlinks an existing
	 * name and creates it anew rather than writing a temporary name: the
	 * capture grows while the job runs and has its final name from the first
	 * frame, so a trace that is killed leaves it where it is announced.
	 */
	w->fd = asc_file_create_path(path, force);
	if (w->fd < 0) {
		err = w->fd;
		asc_err("capture: cannot create %s: %s%s%s\n", path, strerror(-err),
			err == -EEXIST ? " (use --force to overwrite)" : "", asc_safeio_hint(err));
		goto fail_nofd;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	memcpy(hdr, ASC_FILE_MAGIC, 8);
	put32(hdr + 8, ASC_CAPTURE_VERSION);
	put32(hdr + 12, 0);
	put64(hdr + 16, (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec);
	put32(hdr + 24, asc_crc32c(0, hdr, 24));
	err = write_all(w->fd, hdr, sizeof(hdr));
	if (err) {
		asc_err("capture: write %s: %s\n", path, strerror(-err));
		close(w->fd);
		goto fail_nofd;
	}
	w->bytes_written = sizeof(hdr);
	return w;

fail:
	asc_err("capture: out of memory\n");
fail_nofd:
	ZSTD_freeCCtx(w->cctx);
	free(w->buf);
	free(w->out);
	free(w);
	errno = -err;
	return NULL;
}

static int flush_locked(struct asc_capture_writer *w)
{
	size_t clen;
	int err;

	if (w->err)
		return w->err;
	if (!w->len)
		return 0;
	clen = ZSTD_compress2(w->cctx, w->out + FRAME_HDR_LEN, w->out_cap - FRAME_HDR_LEN, w->buf,
			      w->len);
	if (ZSTD_isError(clen)) {
		asc_err("capture: zstd: %s\n", ZSTD_getErrorName(clen));
		return w->err = -EIO;
	}
	put32(w->out, ASC_FRAME_MAGIC);
	put32(w->out + 4, (uint32_t)w->len);
	put32(w->out + 8, (uint32_t)clen);
	put32(w->out + 12, w->nr_records);
	put32(w->out + 16, w->seq);
	put32(w->out + 20, asc_crc32c(0, w->out, 20));
	err = write_all(w->fd, w->out, FRAME_HDR_LEN + clen);
	if (err) {
		asc_err("capture: write: %s\n", strerror(-err));
		/*
		 * A short write (full disk) left the head of this frame: cut the
		 * file back to the last complete frame so it reads clean.  The error
		 * stays sticky, so nothing is appended after the cut.
		 */
		if (ftruncate(w->fd, (off_t)w->bytes_written) ||
		    lseek(w->fd, (off_t)w->bytes_written, SEEK_SET) < 0)
			asc_warn("capture: cannot cut the torn last frame off: %s\n",
				 strerror(errno));
		return w->err = err;
	}
	w->bytes_written += FRAME_HDR_LEN + clen;
	w->seq++;
	w->len = 0;
	w->nr_records = 0;
	return 0;
}

int asc_capture_append(struct asc_capture_writer *w, const void *rec, size_t size)
{
	const struct asc_hdr *h = rec;
	int err = 0;

	if (size < sizeof(*h) || size % 8 || size > ASC_FRAME_TARGET || h->size != size)
		return -EINVAL;
	pthread_mutex_lock(&w->lock);
	if (w->len + size > ASC_FRAME_TARGET)
		err = flush_locked(w);
	if (!err && !w->err && !w->buf && alloc_buffers(w))
		err = -ENOMEM; /* not sticky: the next record may find memory */
	if (!err && !w->err) {
		memcpy(w->buf + w->len, rec, size);
		w->len += size;
		w->nr_records++;
	}
	err = err ? err : w->err;
	pthread_mutex_unlock(&w->lock);
	return err;
}

int asc_capture_flush(struct asc_capture_writer *w)
{
	int err;

	pthread_mutex_lock(&w->lock);
	err = flush_locked(w);
	pthread_mutex_unlock(&w->lock);
	return err;
}

int asc_capture_idle(struct asc_capture_writer *w)
{
	int err;

	pthread_mutex_lock(&w->lock);
	err = flush_locked(w);
	if (!err) {
		ZSTD_freeCCtx(w->cctx);
		free(w->buf);
		free(w->out);
		w->buf = w->out = NULL;
		w->cctx = NULL;
	}
	pthread_mutex_unlock(&w->lock);
	return err;
}

size_t asc_capture_held_bytes(struct asc_capture_writer *w)
{
	size_t n = 0;

	pthread_mutex_lock(&w->lock);
	if (w->buf)
		n = ASC_FRAME_TARGET + w->out_cap + ZSTD_sizeof_CCtx(w->cctx);
	pthread_mutex_unlock(&w->lock);
	return n;
}

int asc_capture_close(struct asc_capture_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = asc_capture_flush(w);
	if (fsync(w->fd) && !err && errno != EINVAL)
		err = -errno;
	if (close(w->fd) && !err)
		err = -errno;
	pthread_mutex_destroy(&w->lock);
	ZSTD_freeCCtx(w->cctx);
	free(w->buf);
	free(w->out);
	free(w);
	return err;
}

uint64_t asc_capture_bytes_written(const struct asc_capture_writer *w)
{
	return w->bytes_written;
}

int asc_capture_error(struct asc_capture_writer *w)
{
	int err;

	if (!w)
		return 0;
	pthread_mutex_lock(&w->lock);
	err = w->err;
	pthread_mutex_unlock(&w->lock);
	return err;
}

/* ---- reader ---- */

struct asc_capture_reader {
	int fd;
	char *path;
	uint64_t pos; /* file offset of the next frame header */
	uint32_t seq; /* expected next frame sequence number */
	uint8_t *raw; /* decompressed frame */
	size_t raw_cap, raw_len, raw_pos;
	uint8_t *comp;
	size_t comp_cap;
	int done;
	ZSTD_DCtx *dctx;
	struct asc_capture_info info;
};

static ssize_t pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = pread(fd, p + got, len - got, off + got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += n;
	}
	return got;
}

struct asc_capture_reader *asc_capture_open(const char *path)
{
	struct asc_capture_reader *r;
	uint8_t hdr[FILE_HDR_LEN];
	struct stat st;
	ssize_t n;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		err = -errno;
		asc_err("capture: cannot open %s: %s\n", path, strerror(errno));
		free(r);
		errno = -err;
		return NULL;
	}
	if (fstat(r->fd, &st)) {
		err = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		asc_err("capture: %s is not a regular file\n", path);
		err = -EINVAL;
		goto fail;
	}
	r->info.file_bytes = st.st_size;
	n = pread_all(r->fd, hdr, sizeof(hdr), 0);
	if (n < 0) {
		err = n;
		asc_err("capture: read %s: %s\n", path, strerror(-err));
		goto fail;
	}
	if (n < (ssize_t)sizeof(hdr) || memcmp(hdr, ASC_FILE_MAGIC, 8)) {
		asc_err("capture: %s is not an ascbpf capture file (bad magic or too short)\n",
			path);
		err = -EINVAL;
		goto fail;
	}
	if (get32(hdr + 24) != asc_crc32c(0, hdr, 24)) {
		asc_err("capture: %s: file header checksum mismatch\n", path);
		err = -EINVAL;
		goto fail;
	}
	r->info.version = get32(hdr + 8);
	if (r->info.version != ASC_CAPTURE_VERSION) {
		asc_err("capture: %s has format version %u; this ascbpf reads version %u only\n",
			path, r->info.version, ASC_CAPTURE_VERSION);
		err = -EPROTONOSUPPORT;
		goto fail;
	}
	r->info.created_realtime_ns = get64(hdr + 16);
	r->dctx = ZSTD_createDCtx();
	r->path = strdup(path);
	if (!r->dctx || !r->path) {
		err = -ENOMEM;
		goto fail;
	}
	r->pos = FILE_HDR_LEN;
	return r;

fail:
	close(r->fd);
	ZSTD_freeDCtx(r->dctx);
	free(r->path);
	free(r);
	errno = -err;
	return NULL;
}

static void mark_damaged(struct asc_capture_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void mark_damaged(struct asc_capture_reader *r, const char *fmt, ...)
{
	va_list ap;

	r->done = 1;
	r->info.damaged = 1;
	r->info.bytes_unread = r->info.file_bytes > r->pos ? r->info.file_bytes - r->pos : 0;
	va_start(ap, fmt);
	vsnprintf(r->info.damage, sizeof(r->info.damage), fmt, ap);
	va_end(ap);
}

static int grow(uint8_t **buf, size_t *cap, size_t need)
{
	uint8_t *p;

	if (*cap >= need)
		return 0;
	p = realloc(*buf, need);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = need;
	return 0;
}

/* Loads the next frame into r->raw.  1: loaded, 0: end (clean or damaged), <0: error. */
static int load_frame(struct asc_capture_reader *r)
{
	uint8_t fh[FRAME_HDR_LEN];
	uint32_t raw_len, comp_len, nr, seq, count;
	unsigned long long fcs;
	size_t off, dlen;
	struct stat st;
	ssize_t n;

	n = pread_all(r->fd, fh, sizeof(fh), r->pos);
	if (n < 0)
		return n;
	if (n == 0) {
		r->done = 1;
		return 0;
	}
	if (n < (ssize_t)sizeof(fh)) {
		mark_damaged(r, "frame %u: truncated frame header", r->seq);
		return 0;
	}
	if (get32(fh) != ASC_FRAME_MAGIC || get32(fh + 20) != asc_crc32c(0, fh, 20)) {
		mark_damaged(r, "frame %u: bad frame header (magic or checksum)", r->seq);
		return 0;
	}
	raw_len = get32(fh + 4);
	comp_len = get32(fh + 8);
	nr = get32(fh + 12);
	seq = get32(fh + 16);
	if (seq != r->seq) {
		mark_damaged(r, "frame %u: sequence number %u out of order", r->seq, seq);
		return 0;
	}
	if (raw_len > FRAME_RAW_MAX || comp_len > ZSTD_compressBound(FRAME_RAW_MAX) ||
	    raw_len % 8) {
		mark_damaged(r, "frame %u: implausible sizes (raw %u, compressed %u)", r->seq,
			     raw_len, comp_len);
		return 0;
	}
	/* buffers sized by what the file holds, never by the header alone */
	if (!fstat(r->fd, &st) && (uint64_t)st.st_size < r->pos + FRAME_HDR_LEN + comp_len) {
		uint64_t start = r->pos + FRAME_HDR_LEN;

		mark_damaged(r, "frame %u: truncated (%llu of %u compressed bytes present)", r->seq,
			     (unsigned long long)((uint64_t)st.st_size > start ?
							  (uint64_t)st.st_size - start :
							  0),
			     comp_len);
		return 0;
	}
	if (grow(&r->comp, &r->comp_cap, comp_len))
		return -ENOMEM;
	n = pread_all(r->fd, r->comp, comp_len, r->pos + FRAME_HDR_LEN);
	if (n < 0)
		return n;
	if (n < comp_len) {
		mark_damaged(r, "frame %u: truncated (%zd of %u compressed bytes present)", r->seq,
			     n, comp_len);
		return 0;
	}
	fcs = ZSTD_getFrameContentSize(r->comp, comp_len);
	if (fcs != raw_len) {
		mark_damaged(r, "frame %u: zstd frame does not hold the %u bytes announced", r->seq,
			     raw_len);
		return 0;
	}
	if (grow(&r->raw, &r->raw_cap, raw_len)) /* after zstd confirmed the size */
		return -ENOMEM;
	dlen = ZSTD_decompressDCtx(r->dctx, r->raw, raw_len, r->comp, comp_len);
	if (ZSTD_isError(dlen) || dlen != raw_len) {
		mark_damaged(r, "frame %u: decompression failed (%s)", r->seq,
			     ZSTD_isError(dlen) ? ZSTD_getErrorName(dlen) : "short");
		return 0;
	}
	/* Walk the record sizes before handing any record out. */
	for (off = 0, count = 0; off < raw_len; count++) {
		const struct asc_hdr *h = (const void *)(r->raw + off);

		if (raw_len - off < sizeof(*h) || h->size < sizeof(*h) || h->size % 8 ||
		    h->size > raw_len - off) {
			mark_damaged(r, "frame %u: record %u has an invalid size", r->seq, count);
			return 0;
		}
		off += h->size;
	}
	if (count != nr) {
		mark_damaged(r, "frame %u: %u records found, header says %u", r->seq, count, nr);
		return 0;
	}
	r->raw_len = raw_len;
	r->raw_pos = 0;
	r->pos += FRAME_HDR_LEN + comp_len;
	r->seq++;
	r->info.frames_read++;
	return 1;
}

int asc_capture_next(struct asc_capture_reader *r, const void **rec, size_t *size)
{
	const struct asc_hdr *h;
	int ret;

	while (r->raw_pos >= r->raw_len) {
		if (r->done)
			return 0;
		ret = load_frame(r);
		if (ret <= 0)
			return ret;
	}
	h = (const void *)(r->raw + r->raw_pos);
	*rec = h;
	*size = h->size;
	r->raw_pos += h->size;
	r->info.records_read++;
	return 1;
}

int asc_capture_rewind(struct asc_capture_reader *r)
{
	r->pos = FILE_HDR_LEN;
	r->seq = 0;
	r->raw_len = r->raw_pos = 0;
	r->done = 0;
	r->info.frames_read = 0;
	r->info.records_read = 0;
	r->info.bytes_unread = 0;
	r->info.damaged = 0;
	r->info.damage[0] = '\0';
	return 0;
}

void asc_capture_info(const struct asc_capture_reader *r, struct asc_capture_info *info)
{
	*info = r->info;
}

void asc_capture_free(struct asc_capture_reader *r)
{
	if (!r)
		return;
	close(r->fd);
	ZSTD_freeDCtx(r->dctx);
	free(r->raw);
	free(r->comp);
	free(r->path);
	free(r);
}
