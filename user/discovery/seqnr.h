/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * seqnr.h - PyTorch autograd sequence numbers and forward->backward links:
 * torch's "Sequence number" / "Fwd thread id" cpu_op args, the backward
 * node ranges (the trace_view `fwdbwd` flows: analysis/fwdbwd.h).
 *
 * What torch records (1.13, and torch_npu on top of it):
 *  - A forward op dispatched at an Autograd key with grad mode on records
 *    seqNr = at::sequence_number::peek() at its entry; its autograd kernel
 *    creates the backward node, whose sequence_nr_ = get_and_increment(),
 *    before it calls the implementation, whose nested ops run below autograd
 *    (-1).  Everything else records -1, "Fwd thread id" 0.
 *  - The autograd engine records "autograd::engine::evaluate_function: NAME"
 *    (-1, 0) around Engine::evaluate_function, and inside it Node::operator()
 *    records NAME with the node's sequence_nr_ and its thread_id_ (the
 *    forward thread's RecordFunction::currentThreadId(), 1, 2, ...) as "Fwd
 *    thread id".  NAME is Node::name(): the class name, without
 *    "torch::autograd::generated::" for the generated nodes
 *    ("MulBackward0"), else the demangled class ("torch::autograd::
 *    AccumulateGrad", sequence_nr_ UINT64_MAX = -1).
 *
 * What ascbpf records (bpf/pytorch.bpf.c, ASC_REC_SEQNR): the thread's
 * counter at each aten op's entry (v0) and return (v1), read from its TLS
 * block; an op whose range created a node (v1 > v0) gets seq v0, others -1.
 * That equals torch for every op that created a node and the ops around it
 * (conv2d and convolution: S; _convolution, called after the node exists:
 * -1).  It differs for Autograd-key ops in grad mode that create no node
 * (detach_, set_, to on tensors without grad): torch shows the peek value,
 * ascbpf -1.  Such an op is never a fwdbwd endpoint (the latest forward op
 * with a given number is the node's creator or one nested in it).
 * evaluate_function is probed; Node::operator() is inline, so the node's own
 * range is the span of its class's apply() (probe kind ASC_PK_AUTOGRAD_APPLY,
 * the first apply() entered directly inside the evaluate_function range:
 * operator() records around it), or evaluate_function's span where no apply()
 * was probed (npu_model's nodes have no apply symbols; Python nodes).
 *
 * Functions return 0 / -errno; pointer functions NULL + errno.
 */
#ifndef __ASCBPF_SEQNR_H
#define __ASCBPF_SEQNR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* at::sequence_number accessors and the engine entry (libtorch_cpu.so, also npu_model's). */
#define ASC_SYM_SEQ_PEEK "_ZN2at15sequence_number4peekEv"
#define ASC_SYM_EVALUATE_FUNCTION                                                                 \
	"_ZN5torch8autograd6Engine17evaluate_functionERSt10shared_ptrINS0_9GraphTaskEEPNS0_4Node" \
	"ERNS0_11InputBufferERKS2_INS0_10ReadyQueueEE"

/*
 * torch::autograd::Node (PyTorch 1.13 function.h; npu_model/include/npu_autograd.h
 * asserts the same): vptr @0, weak_this_ @8, sequence_nr_ @24,
 * topological_nr_ @32, has_parent_ @40, thread_id_ @48.
 */
#define ASC_NODE_SEQ_OFF   24
#define ASC_NODE_TID_OFF   48
#define ASC_VPTR_IN_VTABLE 16 /* Itanium ABI: vptr = &vtable + 16 */

/* Where a thread finds the counter: tls_index of the module, plus the accessor's displacement. */
struct asc_seqnr_tls {
	uint64_t tlsidx_vaddr; /* the GOT pair {module id, offset} the accessor passes */
	int64_t disp;	       /* counter = __tls_get_addr(&tlsidx) + disp */
	uint64_t modid;	       /* filled at run time by the dynamic loader (0: not yet) */
	uint64_t offset;       /* ti_offset + disp (0 while modid is) */
};

/*
 * Decodes the accessor peek() (code at vaddr, len bytes): the general-dynamic
 * sequence `66 48 8d 3d <rel32>` (data16 lea TLSIDX(%rip),%rdi), `66 66 48 e8
 * <rel32>` (call __tls_get_addr), then the load `mov D(%rax),%rax`.  Sets
 * tlsidx_vaddr and disp.  -ENOEXEC if the code is not that sequence.
 */
int asc_seqnr_tls_decode(const uint8_t *code, size_t len, uint64_t vaddr,
			 struct asc_seqnr_tls *tls);

/*
 * The whole discovery for a process: peek() in lib (host path of the mapped
 * libtorch_cpu.so, load bias `bias`), decoded, and the tls_index read from
 * the target's memory (a library the loader maps but has not relocated yet,
 * as when a dlopen is seen, has modid 0 there: the BPF side reads the pair
 * itself until it is set).  -ENOENT (no symbol), -ENOEXEC (other code), -EIO
 * (memory not readable), -ESRCH.
 */
int asc_seqnr_discover(pid_t pid, const char *lib, uint64_t bias, struct asc_seqnr_tls *tls);

/*
 * The counter's address for a thread, walking what bpf/pytorch.bpf.c walks
 * (tp + dtv_off of arch/arch.h -> dtv: fs base + 8 on x86-64, TPIDR_EL0 on
 * aarch64; dtv[-1] = entries, dtv[modid] 16 bytes each): rd reads one u64 of
 * the target.  0 and *addr set; 1 if the thread has no
 * block for the module yet (its counter is 0); -EFAULT if a read failed.
 */
int asc_seqnr_counter_addr(uint64_t tp, const struct asc_seqnr_tls *tls,
			   int (*rd)(uint64_t addr, uint64_t *val, void *ctx), void *ctx,
			   uint64_t *addr);

/*
 * Node::name() from the class's vtable symbol ("_ZTVN5torch8autograd9generated
 * 12MulBackward0E" -> "MulBackward0", "_ZTVN5torch8autograd14AccumulateGradE"
 * -> "torch::autograd::AccumulateGrad").  -EINVAL for a symbol that is not a
 * plain (non-template) class vtable.
 */
int asc_seqnr_class_name(const char *vtable_sym, char *out, size_t len);

/* vptr -> backward node name, from the _ZTV objects of the library the nodes live in. */
struct asc_seqnr_names;

/* lib: a readable path of that library; bias: its load bias in the traced process. */
struct asc_seqnr_names *asc_seqnr_names_open(const char *lib, uint64_t bias);
/* The node name for vptr, NULL if no vtable symbol holds it. */
const char *asc_seqnr_names_get(struct asc_seqnr_names *n, uint64_t vptr);
void asc_seqnr_names_free(struct asc_seqnr_names *n);
/* Classes in the table; class i: its name, *vaddr (load address) and *size. */
size_t asc_seqnr_names_count(const struct asc_seqnr_names *n);
const char *asc_seqnr_names_at(const struct asc_seqnr_names *n, size_t i, uint64_t *vaddr,
			       uint64_t *size);

#endif /* __ASCBPF_SEQNR_H */
