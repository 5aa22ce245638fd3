/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * records.h - names and validation of the records of bpf/ascbpf_events.h.
 *
 * asc_rec_check() is the one gate between raw bytes and typed access: after
 * it returns 0 a record of a known type may be cast to its struct, and the
 * trailing strings of userspace records (probe, process, text, node class)
 * are known to be inside the record and NUL-terminated.  Records of unknown type pass
 * (readers skip them by hdr.size, so new types need no version bump).
 */
#ifndef __ASCBPF_RECORDS_H
#define __ASCBPF_RECORDS_H

#include <stddef.h>
#include <stdint.h>
#include "ascbpf_events.h"

/* "enter", "sqe", "devtask", ... or NULL for an unknown type. */
const char *asc_rec_type_name(unsigned int type);

/*
 * Fixed size of a type's struct (the whole record for BPF types, the part
 * before the trailing strings for variable userspace types), 0 if unknown.
 */
size_t asc_rec_base_size(unsigned int type);

/* 1 if records of this type carry trailing strings (variable size). */
int asc_rec_is_variable(unsigned int type);

/*
 * Checks that rec (size bytes as read) is a well-formed record: hdr.size ==
 * size, a multiple of 8, exactly the struct size for fixed types, at least it
 * for variable ones with their strings in bounds and terminated, and counts
 * within their arrays (opname.len, sqe.nr_kept, stack.nr, ioctl.arg_len).
 * Returns 0, -EBADMSG for a malformed record of a known type (why in msg when
 * msg is not NULL), or 1 for an unknown type (well-sized, skip it).
 */
int asc_rec_check(const void *rec, size_t size, char *msg, size_t msglen);

/* Trailing strings, valid only after asc_rec_check() returned 0. */
static inline const char *asc_probe_lib(const struct asc_probe *p)
{
	return p->strings;
}

static inline const char *asc_probe_sym(const struct asc_probe *p)
{
	return p->strings + p->lib_len + 1;
}

/* Size of a probe record for the given strings (padded to 8). */
size_t asc_probe_rec_size(size_t lib_len, size_t sym_len);
/* Size of a text record (config/symbol/lost) for a string of len bytes. */
size_t asc_text_rec_size(size_t len);
/* Size of a node class record for a name of len bytes. */
size_t asc_node_class_rec_size(size_t len);
/* Size of a process record for a cmdline of len bytes (incl. its final NUL). */
size_t asc_process_rec_size(size_t cmdline_len);

/* Names of enum values, "?" when unknown (a layer's: asc_layer_label, ascbpf_events.h). */
const char *asc_sched_state_name(unsigned int state);
const char *asc_mem_component_name(unsigned int component);
const char *asc_mem_data_type_name(unsigned int data_type);
const char *asc_module_name(unsigned int module);
/* The dtype name torch.profiler prints for a c10::ScalarType (asc_tensor.dtype), or NULL. */
const char *asc_scalar_type_name(unsigned int scalar_type);

#endif /* __ASCBPF_RECORDS_H */
