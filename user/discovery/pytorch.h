/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pytorch.h - real PyTorch (libtorch_cpu.so / libc10.so) as a traced target:
 * aten op names, operator schemas, the c10::TensorImpl layout of the build
 * in the target, and the BPF object (bpf/pytorch.bpf.c) that reads tensor
 * dims/dtypes and Python frames at ASC_PK_ATEN_OP sites.
 *
 * For the tracer (user/trace/programs.c): the ATEN_OP hook API is the block "Trace hooks" at the
 * end of this header.  Sequence, when the plan has ASC_PK_ATEN_OP sites and
 * --record-shapes, --with-stack or --step-py is given:
 *
 *	pt = asc_pytorch_open(pid, &opts);	// discovery, before the main object's load
 *	asc_pytorch_load(pt, events_fd, tgids_fd, stats_fd, &sched);	// after it
 *	asc_pytorch_add_sites(pt, plan);		// argument map per probe id
 *	select_fn: kind == ASC_PK_ATEN_OP -> *entry = asc_pytorch_aten_prog(pt),
 *		   *ret = asc_pytorch_aten_ret_prog(pt) (EXIT + sequence number)
 *	... drain: records ASC_REC_TENSOR / ASC_REC_PYSTACK arrive in the main ring
 *	    buffer right after the ENTER record they belong to (same tid);
 *	    for each PYSTACK call asc_pystack_resolve_rec() (user/discovery/pystack.h)
 *	    while the target is alive and append its ASC_REC_SYMBOL records.
 *	asc_pytorch_close(pt);
 *
 * Gate: this object reads the shared `tgids` map (never the main object's
 * .bss fast gate), and --step-py boundaries update only that map.  With
 * --step-py and --schedule the main object's .bss fast_open copy is not
 * updated by them, so its programs (asc_call_exit on aten returns) must not
 * use the fast path then (fast_tgid = 0), or EXIT records go missing.
 *
 * Naming: torch.profiler (and torch_npu, see the reference samples) names an
 * aten op by its schema name without the overload ("aten::add"); the full
 * operator name with overload ("aten::add.Tensor") is kept for tools that
 * want it.  Both come from asc_aten_name().
 *
 * Functions return 0 / -errno; pointer functions NULL + errno.
 */
#ifndef __ASCBPF_PYTORCH_H
#define __ASCBPF_PYTORCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ascbpf_events.h"

struct bpf_program;

/* ---- c10::TensorImpl layout ---- */

/*
 * Where this PyTorch build keeps a tensor's dims and dtype.  at::Tensor is an
 * intrusive_ptr<TensorImpl>: one pointer.  sizes_and_strides_ holds size_ (the
 * dim count) then either the sizes inline (size_ <= inline_max) or a pointer
 * to them; data_type_ is a caffe2::TypeMeta whose 16-bit index equals the
 * c10::ScalarType for the built-in scalar types.
 */
struct asc_tensor_layout {
	uint32_t dim_off;    /* sizes_and_strides_.size_ (int64 count) */
	uint32_t sizes_off;  /* inline sizes, or the out-of-line pointer */
	uint32_t inline_max; /* sizes inline while dim <= inline_max */
	uint32_t dtype_off;  /* data_type_ (uint16 TypeMeta index) */
	uint32_t valid;	     /* ASC_TL_* fields that were found */
};
#define ASC_TL_DIMS  0x1 /* dim_off, sizes_off, inline_max */
#define ASC_TL_DTYPE 0x2 /* dtype_off */

/*
 * Finds the layout by decoding c10::TensorImpl::dim_custom, ::sizes_custom and
 * the TensorImpl(Storage&&, DispatchKeySet, TypeMeta, optional<Device>)
 * constructor in libc10.so at path.  Fields not found stay unset (valid
 * without their bit); returns -ENOENT if nothing was found.
 */
int asc_tensor_layout_discover(const char *libc10_path, struct asc_tensor_layout *tl);

/* ---- aten op names and schemas ---- */

#define ASC_ATEN_MAX_ARGS 32

/* How an argument reaches the callee (x86-64 SysV), as far as we need it. */
enum asc_aten_argk {
	ASC_ARGK_OTHER = 0,   /* a non-tensor value in an integer register */
	ASC_ARGK_TENSOR,      /* const at::Tensor & / at::Tensor & (pointer to the impl pointer) */
	ASC_ARGK_OPT_TENSOR,  /* const c10::optional<at::Tensor> & */
	ASC_ARGK_TENSOR_LIST, /* at::TensorList: data pointer here, length in the next register */
};

struct asc_aten_arg {
	char type[32]; /* schema type as written: "Tensor", "Tensor(a!)", "Scalar", "int[]" */
	char name[32];
	int8_t reg;    /* integer argument register 0..5, or -1 (stack / SSE / not known) */
	uint8_t kind;  /* enum asc_aten_argk (valid where reg >= 0) */
	uint8_t nregs; /* integer registers it takes (0, 1, 2) */
};

struct asc_aten_op {
	char name[96];	   /* "aten::add" (as torch.profiler names it) */
	char overload[64]; /* "Tensor", or "" */
	int nargs;	   /* schema arguments (positional and keyword, no '*') */
	int sret;	   /* 1: the return value goes through a hidden pointer (rdi, x8) */
	int exact;	   /* 1: name/overload found in the library's schemas; 0: guessed */
	struct asc_aten_arg args[ASC_ATEN_MAX_ARGS];
};

/* The schema strings registered in libtorch_cpu.so, indexed by operator name. */
struct asc_aten_schemas;

/* Loads every "name[.overload](args) -> rets" string from the library's read-only data. */
struct asc_aten_schemas *asc_aten_schemas_load(const char *libtorch_cpu_path);
size_t asc_aten_schemas_count(const struct asc_aten_schemas *s);
void asc_aten_schemas_free(struct asc_aten_schemas *s);

/*
 * The at::_ops struct name of an aten op symbol
 * ("_ZN2at4_ops10add_Tensor4callERK..." -> "add_Tensor"), into buf.
 * -EINVAL if sym is not an at::_ops::<op>::call symbol.
 */
int asc_aten_struct_name(const char *sym, char *buf, size_t len);

/*
 * Names an aten op symbol the way torch.profiler does and, with schemas,
 * maps its arguments to registers.  Without schemas (or when the op is not
 * among them) name/overload are split at the last '_' before an overload-
 * looking suffix, op->exact = 0, and no argument is mapped (nargs = 0).
 */
int asc_aten_name(const struct asc_aten_schemas *s, const char *sym, struct asc_aten_op *op);

/*
 * Parses one schema string ("add.Tensor(Tensor self, ...) -> Tensor") into op
 * (name gets the "aten::" prefix if it has no namespace) and assigns
 * registers.  -EINVAL if it is not a schema.
 */
int asc_aten_parse_schema(const char *schema, struct asc_aten_op *op);

/* ---- Trace hooks (called by user/trace/trace.c; see the top of this file) ---- */

struct asc_pytorch;

struct asc_pytorch_opts {
	int record_shapes;	 /* --record-shapes: TENSOR records */
	int with_stack;		 /* --with-stack: PYSTACK records */
	const char *step_py;	 /* --step-py FUNC, or NULL */
	int step_py_default;	 /* step_py is the default (optimizer.step): no warnings */
	int profile_memory;	 /* --profile-memory: c10::reportMemoryUsageToProfiler */
	const char *libc10_path; /* host path of the target's libc10.so, NULL to find in maps */
	const char *libtorch_cpu_path; /* host path of libtorch_cpu.so, NULL to find in maps */
	const char *python_path; /* host path of the interpreter binary, NULL: /proc/PID/exe */
	int no_seqnr;		 /* no sequence numbers (benchmarks: their cost) */
	/*
	 * Called on each uprobe program of the object before its load, e.g.
	 * asc_attach_prepare_multi (trace/attach.h: uprobe_multi where the kernel
	 * has it); NULL: the programs stay single uprobes.
	 */
	int (*prepare_prog)(struct bpf_program *prog);
};

/*
 * Discovers layouts for PID (tensor layout, schemas, CPython offsets as the
 * options need) and opens the BPF object.  Whatever cannot be discovered is
 * switched off with a warning, never guessed: shapes without a tensor layout
 * or stacks without Python offsets are simply not recorded.
 */
struct asc_pytorch *asc_pytorch_open(pid_t pid, const struct asc_pytorch_opts *opts);

/*
 * Shares the caller's maps (ring buffer `events`, gate `tgids`, per-CPU
 * `stats`; an fd < 0 keeps this object's own map) and loads the object;
 * sched is the profiler schedule the step program applies (the same as the
 * main object's sched_cfg; NULL: no schedule).  Prepares the aten programs
 * for uprobe_multi when the kernel has it.
 */
struct asc_sched;
int asc_pytorch_load(struct asc_pytorch *pt, int events_fd, int tgids_fd, int stats_fd,
		     const struct asc_sched *sched);

/* The entry program for ASC_PK_ATEN_OP sites (uprobe, cookie = probe id). */
struct bpf_program *asc_pytorch_aten_prog(struct asc_pytorch *pt);
/* Its return program (EXIT records as asc_call_exit), for loaders without the main object. */
struct bpf_program *asc_pytorch_aten_ret_prog(struct asc_pytorch *pt);
/*
 * Autograd (user/discovery/seqnr.h).  Whenever this object is loaded, aten sites must
 * use asc_pytorch_aten_ret_prog() as their return program: it reads the
 * sequence counter again and writes the SEQNR record of an op that created
 * a node.  ASC_PK_AUTOGRAD_EVAL sites (Engine::evaluate_function) take
 * asc_pytorch_autograd_prog() / _ret_prog(): ENTER + SEQNR (NODE), EXIT.
 * asc_pytorch_seqnr() says whether the counter was found (else a
 * warning was given and aten ops keep -1).
 */
struct bpf_program *asc_pytorch_autograd_prog(struct asc_pytorch *pt);
struct bpf_program *asc_pytorch_autograd_ret_prog(struct asc_pytorch *pt);
int asc_pytorch_seqnr(const struct asc_pytorch *pt);

/* The object's ring buffer / gate map fds (the shared ones after asc_pytorch_load). */
int asc_pytorch_events_fd(struct asc_pytorch *pt);
int asc_pytorch_tgids_fd(struct asc_pytorch *pt);

/*
 * Fills the per-probe argument map for every ASC_PK_ATEN_OP site of plan
 * (from its symbol and the schemas).  Returns the number of sites with at
 * least one tensor argument mapped.
 */
struct asc_probe_plan;
int asc_pytorch_add_sites(struct asc_pytorch *pt, const struct asc_probe_plan *plan);
/* The same for one site (tests, or sites added after a dlopen). */
int asc_pytorch_add_site(struct asc_pytorch *pt, uint32_t probe_id, const char *sym);

/*
 * --step-py FUNC needs nothing to attach: the aten program itself looks for
 * a frame of a Python function named FUNC at each aten op entry (before the
 * gate) and a new call of it is a step boundary: an ASC_REC_STEP with probe_id
 * ASC_PYTORCH_STEP_PY_ID, the tgid's gate advanced as the native step probe
 * does, stamped at the first aten op of the step.  (CPython 3.11's
 * python:function__entry USDT probe does not fire for Python-to-Python calls,
 * so it cannot see a training loop calling its step function.)  A step
 * function that loops back over its own aten calls (gradient accumulation
 * inside FUNC) would look like a new call at each backward jump.
 */
#define ASC_PYTORCH_STEP_PY_ID 0xfffffff0u
/* 0 if --step-py detection is on (nothing further to attach), -ENOENT if it could not be. */
int asc_pytorch_attach_step_py(struct asc_pytorch *pt);

/*
 * --profile-memory: attaches c10::reportMemoryUsageToProfiler in the
 * target's libc10.so.  Each call is an ASC_REC_MEM (probe_id
 * ASC_PYTORCH_MEM_ID, component ASC_MEM_PTA, size negative for frees,
 * total_allocated / total_reserved as PyTorch reports them, device = the
 * device index, `reserved` = the c10::DeviceType).  torch_npu's caching
 * allocator calls it for every block; CPU-only PyTorch only while its own
 * profiler records memory.  -ENOENT if libc10.so or the symbol is absent.
 */
#define ASC_PYTORCH_MEM_ID 0xfffffff2u
int asc_pytorch_attach_memory(struct asc_pytorch *pt);

/*
 * The libtorch_cpu.so the process maps (a path readable here, through
 * /proc/PID/root for a process in a container) and its load bias, or NULL
 * when it was not found.  Its vtables name the backward nodes.
 */
const char *asc_pytorch_torch_lib(const struct asc_pytorch *pt, uint64_t *bias);

/* What was discovered, for ASC_REC_CONFIG records and -v output ("key=value" lines). */
int asc_pytorch_describe(const struct asc_pytorch *pt, char *buf, size_t len);

void asc_pytorch_close(struct asc_pytorch *pt);

#endif /* __ASCBPF_PYTORCH_H */
