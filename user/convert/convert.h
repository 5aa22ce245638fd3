/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * convert.h - writing the torch_npu.profiler output from a joined capture
 * view.  `ascbpf convert` is a thin CLI over asc_convert(); `ascbpf trace`
 * converts its captures with asc_convert_file() when it ends (so the trace
 * room never reaches into analysis itself).
 */
#ifndef __ASCBPF_CONVERT_H
#define __ASCBPF_CONVERT_H

struct asc_corr;

struct asc_convert_opts {
	const char *out_dir;	 /* DIR of DIR/{run}_ascend_pt; with chrome: the file */
	const char *worker_name; /* NULL: the host name */
	int level;		 /* 0..2, or -1: the capture's "level" config, else 0 */
	int chrome;		 /* --export chrome */
	int force;		 /* overwrite existing output */
	int export_type;	 /* ASC_EXPORT_* (convert/db_export.h), 0 = text */
	/*
	 * The captures of the job's other ranks (NULL: none known): they give
	 * parallel_group_info the global ranks of each communicator.
	 */
	const char *const *peers;
	size_t nr_peers;
};

/*
 * Writes one *_ascend_pt directory per RECORD_AND_SAVE cycle of c (one for a
 * capture without steps) and links/copies `capture` into each as
 * ascbpf/capture.ascb.  Returns 0, -EEXIST (output exists, no force),
 * -ENODATA (no step was recorded) or another -errno.
 */
int asc_convert(const struct asc_corr *c, const char *capture, const struct asc_convert_opts *opts);

/*
 * Reads the capture file, joins it (analysis/correlate.h) and converts it as
 * asc_convert() does; the same returns.  Messages start with `who` ("trace").
 */
int asc_convert_file(const char *capture, const struct asc_convert_opts *opts, const char *who);

#endif /* __ASCBPF_CONVERT_H */
