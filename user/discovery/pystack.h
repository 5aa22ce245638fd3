/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pystack.h - CPython 3.11 frames: the structure offsets of the interpreter
 * in the target (found in its machine code, see pytorch.h), and turning the
 * (code object, instruction) pairs of ASC_REC_PYSTACK records into
 * "file(line): function" strings as torch.profiler prints frames.
 *
 * The BPF side (bpf/pytorch.bpf.c) walks
 *   _PyRuntime.interpreters.head -> threads.head -> ... (tstate->next)
 * to the PyThreadState whose thread_id (pthread_self()) is the current
 * thread's fs base, then tstate->cframe->current_frame -> previous ..., and
 * stores f_code and prev_instr - _PyCode_CODE(f_code) per frame.  Userspace
 * reads co_filename, co_name, co_firstlineno and co_linetable of each code
 * object from /proc/PID/mem while the target is alive and decodes the 3.11
 * location table.
 *
 * Functions return 0 / -errno; pointer functions NULL + errno.
 */
#ifndef __ASCBPF_PYSTACK_H
#define __ASCBPF_PYSTACK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ascbpf_events.h"

/* Offsets of one CPython 3.11 build; every field comes from its machine code or type tables. */
struct asc_py_offsets {
	uint64_t runtime_vaddr;	     /* &_PyRuntime (link-time address in the binary) */
	uint32_t rt_interp_head;     /* _PyRuntimeState.interpreters.head */
	uint32_t is_threads_head;    /* PyInterpreterState.threads.head */
	uint32_t ts_next;	     /* PyThreadState.next */
	uint32_t ts_thread_id;	     /* PyThreadState.thread_id (pthread_t) */
	uint32_t ts_cframe;	     /* PyThreadState.cframe */
	uint32_t cf_current_frame;   /* _PyCFrame.current_frame */
	uint32_t fr_code;	     /* _PyInterpreterFrame.f_code */
	uint32_t fr_previous;	     /* _PyInterpreterFrame.previous */
	uint32_t fr_prev_instr;	     /* _PyInterpreterFrame.prev_instr */
	uint32_t fr_owner;	     /* _PyInterpreterFrame.owner (char) */
	uint32_t owned_by_generator; /* the owner value of generator frames */
	uint32_t co_code_adaptive;   /* PyCodeObject: first code unit (tp_basicsize) */
	uint32_t co_filename;	     /* from PyCode_Type.tp_members */
	uint32_t co_name;
	uint32_t co_qualname;
	uint32_t co_firstlineno;
	uint32_t co_linetable;
	uint32_t str_length;	 /* PyASCIIObject.length */
	uint32_t str_state;	 /* PyASCIIObject.state (byte with compact/ascii bits) */
	uint32_t str_ascii_data; /* data of a compact ASCII string */
	uint32_t bytes_size;	 /* PyBytesObject.ob_size */
	uint32_t bytes_data;	 /* PyBytesObject.ob_sval */
	uint32_t valid;		 /* ASC_PYOFF_* groups found */
};
#define ASC_PYOFF_THREADS 0x1 /* runtime .. ts_cframe, cf_current_frame: find the thread */
#define ASC_PYOFF_FRAMES  0x2 /* fr_*, co_code_adaptive: walk frames */
#define ASC_PYOFF_CODE	  0x4 /* co_* members, str_*, bytes_*: resolve frames */
#define ASC_PYOFF_ALL	  0x7

/*
 * Finds the offsets in the interpreter binary at path (the executable, or
 * libpython3.11.so when the interpreter links it).  -ENOENT if it is not a
 * CPython 3.11 (no _PyRuntime / accessors), otherwise 0 with off->valid
 * saying which groups were found.
 */
int asc_py_offsets_discover(const char *path, struct asc_py_offsets *off);

/*
 * The interpreter image of PID: host path of the file that defines
 * _PyRuntime (the executable or libpython3.11.so) and the load bias
 * (runtime address - link-time address).  -ENOENT if PID runs no CPython.
 */
int asc_py_find_image(pid_t pid, char *path, size_t len, uint64_t *bias);

/*
 * Decodes a 3.11 location table: the line of code unit `lasti` of a code
 * object whose first line is firstlineno.  -ENOENT if the instruction has no
 * line (or is outside the table), -EINVAL for a malformed table.
 */
int asc_py_linetable_line(const uint8_t *table, size_t len, int firstlineno, int lasti, int *line);

/* Resolves (code, lasti) pairs of one process, with a cache per code object. */
struct asc_pystack_resolver;

struct asc_pystack_resolver *asc_pystack_resolver_new(pid_t pid, const struct asc_py_offsets *off);
void asc_pystack_resolver_free(struct asc_pystack_resolver *r);

/*
 * "file(line): function" of one frame into buf.  line is -1 when the
 * location table has no line for the instruction (what PyCode_Addr2Line
 * answers then, and what torch.profiler prints).  -EFAULT if the code object
 * cannot be read (process gone, code freed).
 */
int asc_pystack_frame(struct asc_pystack_resolver *r, uint64_t code, int32_t lasti, char *buf,
		      size_t len, int *line);

/*
 * For each frame of rec not resolved before, calls emit with one
 * ASC_REC_PYFRAME record (size padded to 8).  Frames that cannot be read are
 * skipped (the converter prints what it has).  Returns the number emitted or
 * the first error emit returned.
 */
typedef int (*asc_pyframe_emit_fn)(const struct asc_pyframe *rec, size_t size, void *ctx);
int asc_pystack_resolve_rec(struct asc_pystack_resolver *r, const struct asc_pystack *rec,
			    asc_pyframe_emit_fn emit, void *ctx);

/*
 * Joins the frames of a PYSTACK record, innermost first, as torch.profiler's
 * "Call stack" before its ';' -> ";\r\n" step: "f1;f2;...".  Frames are
 * looked up with lookup(code, lasti, ctx) (the converter's PYFRAME table);
 * frames it does not know are left out.  Returns the length written.
 */
typedef const char *(*asc_pyframe_lookup_fn)(uint64_t code, int32_t lasti, void *ctx);
int asc_pystack_join(const struct asc_pystack *rec, asc_pyframe_lookup_fn lookup, void *ctx,
		     char *buf, size_t len);

#endif /* __ASCBPF_PYSTACK_H */
