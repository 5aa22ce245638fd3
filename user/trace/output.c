// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * output.c - the output directory, one capture file per process, and the
 * conversion of each finished capture.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "capture/capture.h"
#include "convert/convert.h"
#include "lib/log.h"
#include "lib/safeio.h"
#include "trace/trace_priv.h"

static int dir_is_empty(const char *path)
{
	struct dirent *de;
	DIR *d = opendir(path);
	int empty = 1;

	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			empty = 0;
			break;
		}
	closedir(d);
	return empty;
}

int prepare_outdir(struct trace *t)
{
	int err, fd;

	snprintf(t->outdir, sizeof(t->outdir), "%s", t->o.outdir);
	/* opened as lib/safeio.h walks a path: a link another user planted is refused */
	fd = asc_dir_open(t->outdir, 0, NULL);
	if (fd == -ENOTDIR) {
		asc_err("trace: output %s is not a directory\n", t->outdir);
		return -ENOTDIR;
	}
	if (fd == -ELOOP) {
		asc_err("trace: output %s is a symbolic link another user owns: not followed\n",
			t->outdir);
		return -EPERM;
	}
	if (fd >= 0) {
		close(fd);
		if (access(t->outdir, W_OK | X_OK)) {
			asc_err("trace: output directory %s is not writable\n", t->outdir);
			return -EACCES;
		}
		err = dir_is_empty(t->outdir);
		if (err < 0) {
			asc_err("trace: cannot read output directory %s: %s\n", t->outdir,
				strerror(-err));
			return err;
		}
		if (!err && !t->o.force) {
			asc_err("trace: output directory %s is not empty (use --force to write "
				"into it)\n",
				t->outdir);
			return -EEXIST;
		}
		return 0;
	}
	fd = asc_dir_open(t->outdir, 1, &t->created_outdir);
	if (fd < 0) {
		err = fd;
		asc_err("trace: cannot create output directory %s: %s%s\n", t->outdir,
			strerror(-err), asc_safeio_hint(err));
		return err == -EROFS ? -EACCES : err == -ELOOP ? -EPERM : err;
	}
	close(fd);
	return 0;
}

int open_capture(struct trace *t, struct target *tg)
{
	int n;

	if (t->o.capture)
		n = snprintf(tg->capture_path, sizeof(tg->capture_path), "%s", t->o.capture);
	else
		n = snprintf(tg->capture_path, sizeof(tg->capture_path), "%.4000s/ascbpf-%d.cap",
			     t->outdir, tg->pid);
	if (n >= (int)sizeof(tg->capture_path)) {
		asc_err("trace: capture path too long\n");
		return -ENAMETOOLONG;
	}
	tg->w = asc_capture_create(tg->capture_path, t->o.force);
	if (!tg->w) {
		int err = -errno;

		asc_err("trace: cannot create capture %s: %s\n", tg->capture_path, strerror(-err));
		return err == -EROFS ? -EACCES : err;
	}
	tg->pre.on = !!(t->o.activities & ASC_ACT_NPU);
	append_clock(tg, ASC_CLOCK_START);
	append_config(t, tg);
	if (!tg->is_child)
		write_process(t, tg); /* a child is still ascbpf until it execs */
	return 0;
}

/* Converts one finished capture into OUTDIR/{run}_ascend_pt (user/convert/convert.h). */
int convert_target(struct trace *t, struct target *tg)
{
	struct asc_convert_opts co = {
		.out_dir = t->outdir,
		.worker_name = t->o.worker_name,
		.export_type = t->o.export_type,
		.level = (int)t->o.level,
		.force = t->o.force,
	};
	const char **peers;
	int err, i;

	/*
	 * As torch_npu: a process that ran no traced call and used no card (a
	 * launcher that forks its ranks and waits) gets no *_ascend_pt; the
	 * summary says so, the capture stays.
	 */
	if (!tg->records && !tg->dev_records) {
		tg->no_output = 1;
		return 0;
	}
	/*
	 * The job's other captures are its peers (as ascbpf convert --peer):
	 * parallel_group_info's global ranks come from every rank's communicator
	 * records.  Only complete captures of processes that recorded something.
	 */
	peers = calloc(t->nr_targets ? t->nr_targets : 1, sizeof(*peers));
	for (i = 0; peers && i < t->nr_targets; i++) {
		const struct target *o = &t->targets[i];

		if (o != tg && o->capture_path[0] && !o->capture_failed &&
		    (o->records || o->dev_records))
			peers[co.nr_peers++] = o->capture_path;
	}
	co.peers = peers;
	err = asc_convert_file(tg->capture_path, &co, "trace");
	free(peers);
	if (err == -ENODATA) {
		asc_warn("trace: pid %d: no step was recorded: nothing to convert (the capture "
			 "is kept: %s)\n",
			 tg->pid, tg->capture_path);
		return 0;
	}
	if (err)
		asc_err("trace: pid %d: conversion failed: %s (the capture is kept: %s)\n", tg->pid,
			strerror(-err), tg->capture_path);
	return err;
}
