/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * capture.h - the ascbpf capture file: what `ascbpf trace` writes as it goes
 * and what `ascbpf convert` / `ascbpf report` read.
 *
 * File layout (all integers little-endian):
 *
 *   file header, 32 bytes:
 *     char     magic[8]   = "ASCBPF\0\1"
 *     u32      version    = ASC_CAPTURE_VERSION (bpf/ascbpf_events.h)
 *     u32      flags      = 0
 *     u64      created_realtime_ns
 *     u32      header_crc (CRC-32C of the preceding 24 bytes)
 *     u32      reserved
 *   then frames, each:
 *     frame header, 24 bytes:
 *       u32    magic      = ASC_FRAME_MAGIC
 *       u32    raw_len    bytes of records after decompression
 *       u32    comp_len   bytes of zstd data that follow
 *       u32    nr_records
 *       u32    seq        frame sequence number, from 0
 *       u32    header_crc CRC-32C of the preceding 20 bytes
 *     comp_len bytes: one zstd frame (content checksum on) holding raw_len
 *     bytes of concatenated records (struct asc_hdr first, hdr.size each).
 *
 * A frame is appended with a single write() once complete, so a tracer killed
 * with SIGKILL leaves a file that is readable up to its last complete frame;
 * a write that fails part-way (full disk) is cut off again (ftruncate), so the
 * file then ends cleanly after its last complete frame.
 * The reader stops at the first frame whose header, checksum or
 * decompression fails, and reports how many bytes after it were not read.
 *
 * Functions return 0 or -errno; pointer functions return NULL with errno set.
 */
#ifndef __ASCBPF_CAPTURE_H
#define __ASCBPF_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#define ASC_FILE_MAGIC	 "ASCBPF\0\1"
#define ASC_FRAME_MAGIC	 0x31524641u /* "AFR1" */
#define ASC_FRAME_TARGET (1u << 20)  /* records buffered before a frame is cut */

struct asc_capture_writer;
struct asc_capture_reader;

/* Creates PATH (O_EXCL unless force) and writes the file header. */
struct asc_capture_writer *asc_capture_create(const char *path, int force);

/*
 * Appends one record (hdr->size bytes, hdr->size a multiple of 8).  Records
 * are buffered and cut into a frame at ASC_FRAME_TARGET bytes.
 */
int asc_capture_append(struct asc_capture_writer *w, const void *rec, size_t size);

/* Compresses and writes the buffered records as one frame now. */
int asc_capture_flush(struct asc_capture_writer *w);

/*
 * Flushes and gives back the frame buffers and the compression context
 * (about 3 MiB): for a capture that will get few records more (its process
 * has exited).  The next append takes them again.  0, or the flush's error
 * (then nothing is given back).
 */
int asc_capture_idle(struct asc_capture_writer *w);
/* Bytes of buffers and compression context w holds now (0 while idle). */
size_t asc_capture_held_bytes(struct asc_capture_writer *w);

/* Flushes, fsyncs and closes; frees w.  Returns the first error seen. */
int asc_capture_close(struct asc_capture_writer *w);

/* Bytes written to the file so far (headers and compressed frames). */
uint64_t asc_capture_bytes_written(const struct asc_capture_writer *w);

/*
 * The writer's sticky error: 0 while every frame was written, else the
 * -errno of the first failed write (e.g. -ENOSPC).  After a failed write the
 * file is cut back to its last complete frame and nothing more is appended.
 */
int asc_capture_error(struct asc_capture_writer *w);

struct asc_capture_info {
	uint32_t version;
	uint64_t created_realtime_ns;
	uint64_t frames_read;
	uint64_t records_read;
	uint64_t file_bytes;
	uint64_t bytes_unread; /* bytes after the last good frame (truncation/corruption) */
	int damaged;	       /* 1 if reading stopped before the end of the file */
	char damage[128];      /* what was wrong, for the error message */
};

/*
 * Opens PATH and checks the file header.  An unknown version fails with
 * -EPROTONOSUPPORT (errno) and a message through the log sink.
 */
struct asc_capture_reader *asc_capture_open(const char *path);

/*
 * Returns the next record in *rec (valid until the next call) and its size,
 * 1 when a record was returned, 0 at the end (clean or damaged: see
 * asc_capture_info()), -errno on I/O error.
 */
int asc_capture_next(struct asc_capture_reader *r, const void **rec, size_t *size);

/* Rewinds to the first frame (the converter makes more than one pass). */
int asc_capture_rewind(struct asc_capture_reader *r);

void asc_capture_info(const struct asc_capture_reader *r, struct asc_capture_info *info);

void asc_capture_free(struct asc_capture_reader *r);

/* CRC-32C (Castagnoli), as used in the headers above. */
uint32_t asc_crc32c(uint32_t crc, const void *buf, size_t len);

#endif /* __ASCBPF_CAPTURE_H */
