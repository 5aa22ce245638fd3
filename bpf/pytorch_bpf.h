/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pytorch_bpf.h - the loader <-> BPF contract of bpf/pytorch.bpf.c (aten ops
 * with tensor shapes and Python stacks, and the --step-py probe).  User
 * space fills it from user/discovery/pytorch.c's discovery; nothing here is a guess
 * made by the BPF side: a zero `valid` bit switches the reader off.
 */
#ifndef __ASCBPF_PYTORCH_BPF_H
#define __ASCBPF_PYTORCH_BPF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define ASC_PT_MAX_SITES     8192 /* aten op probe ids with an argument map */
#define ASC_PT_LIST_MAX	     4	  /* tensors read from one Tensor[] argument */
#define ASC_PT_MAX_THREADS   32	  /* PyThreadStates walked to find the current one */
#define ASC_PT_STEP_NAME_LEN 64

/* Argument kinds per integer register (enum asc_aten_argk in user/discovery/pytorch.h). */
#define ASC_PT_ARG_NONE	       0
#define ASC_PT_ARG_TENSOR      1
#define ASC_PT_ARG_OPT_TENSOR  2
#define ASC_PT_ARG_TENSOR_LIST 3

/* aten_args map value, key: probe id (__u32). */
struct asc_pt_argspec {
	__u8 kind[6];	   /* ASC_PT_ARG_* of argument registers rdi..r9 */
	__u8 arg_index[6]; /* schema argument index of that register */
	__u32 reserved;
};

struct asc_pt_cfg {
	/* --record-shapes: c10::TensorImpl */
	__u32 shapes; /* 1: emit TENSOR records */
	__u32 tl_dim_off;
	__u32 tl_sizes_off;
	__u32 tl_inline_max;
	__u32 tl_dtype_off;   /* 0: dtype not known */
	__u32 opt_value_off;  /* c10::optional<Tensor>: value offset (init_ flag at 0) */
	__u64 undefined_impl; /* &c10::UndefinedTensorImpl::_singleton in the target, or 0 */

	/* --with-stack: CPython 3.11 */
	__u32 pystack; /* 1: emit PYSTACK records */
	__u32 rt_interp_head;
	__u64 runtime_addr; /* &_PyRuntime in the target */
	__u32 is_threads_head;
	__u32 ts_next;
	__u32 ts_thread_id;
	__u32 ts_cframe;
	__u32 cf_current_frame;
	__u32 fr_code;
	__u32 fr_previous;
	__u32 fr_prev_instr;
	__u32 co_code_adaptive;
	__u32 tp_self_off; /* thread pointer - pthread_self() (user/arch/arch.h) */

	/*
	 * --step-py: at each aten op entry the Python frames are searched for
	 * a code object named step_name (also needs the frame fields above).
	 */
	__u32 step_py;	      /* 1: detect step boundaries */
	__u32 co_name;	      /* PyCodeObject.co_name */
	__u32 str_state;      /* PyASCIIObject.state byte */
	__u32 str_ascii_data; /* compact ASCII data */
	__u32 step_name_len;  /* strlen(step_name) */
	/*
	 * 1: a call ended only where the function is not on the stack now and
	 * was at the thread's previous aten op (optimizer.step: its loops send
	 * lasti back inside one call); 0: also a new frame or an earlier lasti.
	 */
	__u32 step_absent_only;
	char step_name[ASC_PT_STEP_NAME_LEN];

	/*
	 * Autograd sequence numbers (user/discovery/seqnr.h): at::sequence_number's
	 * thread_local counter, reached as __tls_get_addr would: the
	 * tls_index {module, offset} at seq_tlsidx (the loader fills it when it
	 * relocates the library, possibly after we attached), the thread's dtv
	 * (*(tp + ASC_ARCH_DTV_OFF): fs base + 8 on x86-64), entry module (16
	 * bytes each, dtv[-1] holds the entry count), counter at block + offset +
	 * seq_disp.  Node fields of
	 * torch::autograd::Node for Engine::evaluate_function probes.
	 */
	__u32 seqnr;	    /* 1: SEQNR records at aten op returns */
	__u32 node;	    /* 1: evaluate_function probes read the Node */
	__u64 seq_tlsidx;   /* address of the accessor's tls_index in the target */
	__s64 seq_disp;	    /* the accessor's displacement from __tls_get_addr() */
	__u32 node_seq_off; /* Node::sequence_nr_ */
	__u32 node_tid_off; /* Node::thread_id_ */
};

#define ASC_PT_SEQ_DEPTH 32 /* nested aten ops whose entry counter is kept */

/* seq_threads task-storage value: the entry counters of the thread's open aten ops. */
struct asc_pt_seq_frame {
	__u64 sp; /* stack pointer at the probe (matches the return's sp - 8) */
	__s64 v0; /* counter at entry, -1 if it could not be read */
};

struct asc_pt_seq_thread {
	__u64 counter; /* the counter's address in this thread, 0: no block yet */
	__u32 depth;   /* open ops (may exceed ASC_PT_SEQ_DEPTH; those are not kept) */
	__u32 reserved;
	struct asc_pt_seq_frame f[ASC_PT_SEQ_DEPTH];
};

/* step_state map value, key: tid (__u32): the step function's frame at the last aten op. */
struct asc_pt_step_state {
	__u64 frame; /* _PyInterpreterFrame of the step function, 0 if it was not running */
	__s64 lasti; /* its instruction index then */
};

#endif /* __ASCBPF_PYTORCH_BPF_H */
