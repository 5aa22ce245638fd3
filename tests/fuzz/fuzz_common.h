/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * fuzz_common.h - what the libFuzzer harnesses of tests/fuzz/ share: a
 * private scratch directory on tmpfs, fuzz input written to a file there,
 * a record stream wrapped into a valid capture (so mutations reach the
 * record parsers instead of dying at the zstd checksum), and a silent log
 * sink that still formats every message (a bad format argument is a bug).
 */
#ifndef __ASCBPF_FUZZ_COMMON_H
#define __ASCBPF_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* Called from LLVMFuzzerInitialize: scratch dir, silent log, stdout to /dev/null. */
void fz_init(void);

/* The scratch directory ($TMPDIR-free: /dev/shm when there, else /tmp), made once. */
const char *fz_dir(void);

/* Writes data to fz_dir()/NAME (replacing it) and returns its path (static buffer). */
const char *fz_write_file(const char *name, const void *data, size_t size);

/*
 * Writes data as the records of a capture to fz_dir()/NAME: the file header
 * and one frame (checksums and zstd as the tracer writes them).  Record
 * sizes are repaired first (at least a header, a multiple of 8, inside the
 * input) so that every input is a stream the reader accepts.  Returns the
 * path, or NULL when the input holds no whole record header.
 */
const char *fz_write_capture(const char *name, const uint8_t *data, size_t size);
/* The same at PATH (mkseed wrap: the corpus as captures for the ordinary build). */
const char *fz_write_capture_at(const char *path, const uint8_t *data, size_t size);

/* Removes everything below fz_dir()/NAME (and NAME itself). */
void fz_rm_tree(const char *name);

#endif /* __ASCBPF_FUZZ_COMMON_H */
