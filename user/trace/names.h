/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * names.h - what the converter needs to name ops and backward nodes,
 * written into a capture while the traced files can be read
 * (bpf/ascbpf_events.h ASC_REC_ATEN_NAME, ASC_REC_NODE_CLASS): conversion
 * then reads nothing of the traced host, and the same capture names ops the
 * same way on any machine.
 *
 * Functions return 0 or -errno (the first write error of the capture).
 */
#ifndef __ASCBPF_TRACE_NAMES_H
#define __ASCBPF_TRACE_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct asc_capture_writer;
struct asc_probe_plan;
struct asc_pytorch;

/*
 * The names of plans[idx] (idx: the plan being attached, plans[0..idx) the
 * earlier ones): an ATEN_NAME for each of its aten op sites that no earlier
 * plan has (same file and offset), from the operator schemas of the site's
 * library; and, when pt was opened with this plan (first), one NODE_CLASS
 * per backward node class of pt's libtorch_cpu.  pt may be NULL (no node
 * classes).  Written before the sites are attached.
 */
int asc_trace_write_names(struct asc_capture_writer *w, pid_t pid, const struct asc_pytorch *pt,
			  const struct asc_probe_plan *plans, size_t idx, int first);

/* The ATEN_NAME part of the above. */
int asc_trace_write_aten_names(struct asc_capture_writer *w, pid_t pid,
			       const struct asc_probe_plan *plans, size_t idx);

/* The NODE_CLASS records of lib (a readable path) loaded at bias in pid. */
int asc_trace_write_node_classes(struct asc_capture_writer *w, pid_t pid, const char *lib,
				 uint64_t bias);

#endif /* __ASCBPF_TRACE_NAMES_H */
