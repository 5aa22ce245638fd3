// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pytorch.bpf.c - aten op entry with tensor shapes (--record-shapes) and
 * Python stacks (--with-stack), and the --step-py step boundary, for real
 * PyTorch targets.
 *
 * This object shares the main object's ring buffer, gate and drop counters
 * (events, tgids, stats: bpf_map__reuse_fd before load, see
 * user/discovery/pytorch.c), so its records interleave with the main object's in one
 * stream and the same gate decides.  The records follow the ENTER record of
 * the op with the same tid, probe id and timestamp.  Return probes of aten
 * sites stay the main object's asc_call_exit.
 *
 * Everything read from user memory may fault or be torn (the target runs on):
 * a failed read marks the record (UNREADABLE, FAULT) and never stops the op.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "ascbpf_arch.bpf.h"
#include <bpf/bpf_core_read.h>
#include "ascbpf_ring.bpf.h"
#include "pytorch_bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define ASC_PT_STEP_PY_ID \
	0xfffffff0u /* probe id of --step-py STEP records (user/discovery/pytorch.h) */

const volatile struct asc_pt_cfg cfg = {}; /* and sched_cfg, wakeup_bytes (ascbpf_ring.bpf.h) */

/* events, tgids, stats: the main object's (reused fds), defined in ascbpf_ring.bpf.h. */

/* Ours: probe id -> which argument registers hold tensors. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ASC_PT_MAX_SITES);
	__type(key, __u32);
	__type(value, struct asc_pt_argspec);
} aten_args SEC(".maps");

/* Ours: per thread, the at::sequence_number counter at the entry of each open aten op. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct asc_pt_seq_thread);
} seq_threads SEC(".maps");

static __always_inline struct asc_tgid_state *gate(__u64 pid_tgid)
{
	__u32 tgid = pid_tgid >> 32;
	struct asc_tgid_state *st = bpf_map_lookup_elem(&tgids, &tgid);

	if (!st || !st->open)
		return NULL;
	return st;
}

static __always_inline __u64 read_u64(__u64 addr, int *fault)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (const void *)addr) < 0)
		*fault = 1;
	return v;
}

/* ---- tensors ---- */

/*
 * One TENSOR record.  A global (separately verified) function: inlined at
 * each of its call sites the verifier's state count explodes.  BPF functions
 * take at most five arguments, so `where` packs arg_index | list_index << 8 |
 * kind << 16 | flags << 24.
 */
__noinline int emit_tensor(__u64 pid_tgid, __u64 ts, __u64 impl, __u32 id, __u32 where_kind)
{
	__u32 arg_index = where_kind & 0xff, list_index = (where_kind >> 8) & 0xff;
	__u8 kind = where_kind >> 16;
	struct asc_tensor *t = reserve(sizeof(*t));
	__s64 ndim = 0;
	__u64 where;
	__u16 dtype = ASC_DTYPE_UNKNOWN;
	__u32 n;
	int fault = 0;

	if (!t)
		return 0;
	fill_hdr(&t->hdr, ASC_REC_TENSOR, sizeof(*t), pid_tgid, id, ts);
	t->arg_index = arg_index;
	t->list_index = list_index;
	t->flags = (where_kind >> 24) & ASC_TENSOR_LIST_ELEM;
	t->kind = kind;
	t->dtype = ASC_DTYPE_UNKNOWN;
	t->ndim = 0;
	__builtin_memset(t->dims, 0, sizeof(t->dims));
	if (kind != ASC_TENSOR_DEFINED)
		goto out;
	if (!impl || impl == cfg.undefined_impl) {
		t->kind = ASC_TENSOR_UNDEFINED;
		goto out;
	}
	ndim = read_u64(impl + cfg.tl_dim_off, &fault);
	if (fault || ndim < 0 || ndim > 64) {
		t->kind = ASC_TENSOR_UNREADABLE;
		goto out;
	}
	where = impl + cfg.tl_sizes_off;
	if (ndim > cfg.tl_inline_max)
		where = read_u64(where, &fault);
	n = ndim < ASC_TENSOR_DIMS ? ndim : ASC_TENSOR_DIMS;
	n *= sizeof(t->dims[0]);
	if (n > sizeof(t->dims))
		n = sizeof(t->dims);
	if (n && !fault && bpf_probe_read_user(t->dims, n, (const void *)where) < 0)
		fault = 1;
	if (cfg.tl_dtype_off &&
	    bpf_probe_read_user(&dtype, sizeof(dtype), (const void *)(impl + cfg.tl_dtype_off)) < 0)
		fault = 1;
	if (fault) {
		t->kind = ASC_TENSOR_UNREADABLE;
		__builtin_memset(t->dims, 0, sizeof(t->dims));
		goto out;
	}
	t->ndim = ndim;
	t->dtype = dtype < ASC_DTYPE_UNKNOWN ? dtype : ASC_DTYPE_UNKNOWN;
	if (ndim > ASC_TENSOR_DIMS)
		t->flags |= ASC_TENSOR_TRUNCATED;
out:
	submit(t);
	return 0;
}

#define TENSOR_AT(ai, li, kind) ((ai) | (li) << 8 | (kind) << 16)
#define TENSOR_IN_LIST		(ASC_TENSOR_LIST_ELEM << 24)

static __always_inline void emit_tensors(struct pt_regs *ctx, __u64 pid_tgid, __u32 id, __u64 ts)
{
	struct asc_pt_argspec *spec = bpf_map_lookup_elem(&aten_args, &id);
	__u64 regs[6];
	int i, j;

	if (!spec)
		return;
	read_args(ctx, regs);
	for (i = 0; i < 6; i++) {
		__u8 kind = spec->kind[i];
		__u32 ai = spec->arg_index[i];
		int fault = 0;
		__u64 impl;

		if (kind == ASC_PT_ARG_TENSOR) {
			impl = read_u64(regs[i], &fault);
			emit_tensor(pid_tgid, ts, impl, id,
				    TENSOR_AT(ai, 0,
					      fault ? ASC_TENSOR_UNREADABLE : ASC_TENSOR_DEFINED));
		} else if (kind == ASC_PT_ARG_OPT_TENSOR) {
			__u8 init = 0;

			if (bpf_probe_read_user(&init, 1, (const void *)regs[i]) < 0)
				fault = 1;
			impl = init ? read_u64(regs[i] + cfg.opt_value_off, &fault) : 0;
			emit_tensor(pid_tgid, ts, impl, id,
				    TENSOR_AT(ai, 0,
					      fault ? ASC_TENSOR_UNREADABLE :
					      init  ? ASC_TENSOR_DEFINED :
						      ASC_TENSOR_UNDEFINED));
		} else if (kind == ASC_PT_ARG_TENSOR_LIST && i < 5) {
			__u64 data = regs[i], len = regs[i + 1];

			for (j = 0; j < ASC_PT_LIST_MAX; j++) {
				if (j >= len)
					break;
				fault = 0;
				impl = read_u64(data + j * 8, &fault);
				emit_tensor(pid_tgid, ts, impl, id,
					    TENSOR_IN_LIST |
						    TENSOR_AT(ai, j,
							      fault ? ASC_TENSOR_UNREADABLE :
								      ASC_TENSOR_DEFINED));
			}
		}
	}
}

/* ---- Python frames ---- */

/*
 * The current thread's PyThreadState: the interpreter's thread list searched
 * for the entry whose thread_id (pthread_self(): the thread pointer less
 * cfg.tp_self_off, 0 on x86-64) is ours.  0 if not found within
 * ASC_PT_MAX_THREADS; *fault set on a failed read.
 */
static __always_inline __u64 current_tstate(int *fault)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 self = ASC_ARCH_TP(task) - cfg.tp_self_off;
	__u64 interp, tstate;
	int i;

	interp = read_u64(cfg.runtime_addr + cfg.rt_interp_head, fault);
	tstate = interp ? read_u64(interp + cfg.is_threads_head, fault) : 0;
	for (i = 0; i < ASC_PT_MAX_THREADS; i++) {
		if (!tstate || *fault)
			return 0;
		if (read_u64(tstate + cfg.ts_thread_id, fault) == self)
			return tstate;
		tstate = read_u64(tstate + cfg.ts_next, fault);
	}
	return 0;
}

/* Global for the same reason as emit_tensor. */
__noinline int emit_pystack(__u64 pid_tgid, __u64 ts, __u32 id)
{
	struct asc_pystack *s;
	__u64 tstate, cframe, frame;
	int fault = 0, i;

	s = reserve(sizeof(*s));
	if (!s)
		return 0;
	fill_hdr(&s->hdr, ASC_REC_PYSTACK, sizeof(*s), pid_tgid, id, ts);
	s->nr = 0;
	s->flags = 0;
	__builtin_memset(s->code, 0, sizeof(s->code));
	__builtin_memset(s->lasti, 0, sizeof(s->lasti));
	tstate = current_tstate(&fault);
	if (!tstate) {
		s->flags = fault ? ASC_PYSTACK_FAULT : ASC_PYSTACK_NO_THREAD;
		goto out;
	}
	cframe = read_u64(tstate + cfg.ts_cframe, &fault);
	frame = cframe ? read_u64(cframe + cfg.cf_current_frame, &fault) : 0;
	for (i = 0; i < ASC_PY_DEPTH; i++) {
		__u64 code, prev;

		if (!frame || fault)
			break;
		code = read_u64(frame + cfg.fr_code, &fault);
		prev = read_u64(frame + cfg.fr_prev_instr, &fault);
		if (fault)
			break;
		s->code[i] = code;
		s->lasti[i] = (__s64)(prev - (code + cfg.co_code_adaptive)) >> 1; /* code units */
		s->nr = i + 1;
		frame = read_u64(frame + cfg.fr_previous, &fault);
	}
	if (fault)
		s->flags |= ASC_PYSTACK_FAULT;
	else if (frame)
		s->flags |= ASC_PYSTACK_TRUNCATED;
out:
	submit(s);
	return 0;
}

/* ---- --step-py: step boundaries from the Python frames at aten op entries ---- */

/* code object -> 1 if its co_name is the step function's name, 0 if not (learned once). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, __u8);
} step_codes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct asc_pt_step_state);
} step_state SEC(".maps");

static __always_inline __u8 is_step_code(__u64 code)
{
	char name[ASC_PT_STEP_NAME_LEN];
	__u8 *v = bpf_map_lookup_elem(&step_codes, &code), yes = 0, state = 0;
	__u64 str;
	int fault = 0, i;

	if (v)
		return *v;
	str = read_u64(code + cfg.co_name, &fault);
	/* compact ASCII (state bits 0x20 | 0x40), as PyUnicode_AsUTF8AndSize tests */
	if (!fault && bpf_probe_read_user(&state, 1, (const void *)(str + cfg.str_state)) == 0 &&
	    (state & 0x60) == 0x60 &&
	    bpf_probe_read_user_str(name, sizeof(name), (const void *)(str + cfg.str_ascii_data)) >
		    0) {
		yes = 1;
		for (i = 0; i < ASC_PT_STEP_NAME_LEN; i++) {
			if (name[i] != cfg.step_name[i]) {
				yes = 0;
				break;
			}
			if (!name[i])
				break;
		}
	}
	bpf_map_update_elem(&step_codes, &code, &yes, BPF_ANY);
	return yes;
}

/*
 * A call of the step function ended since the last aten op of this thread
 * (the end of a step, as the native boundary at the optimizer step's return)
 * when its frame was there then and: is not now, or (not step_absent_only)
 * is another frame or back at an earlier instruction (3.11 reuses the frame
 * memory of a returned call for the next one; a new call restarts at its
 * first instruction).  The boundary is stamped at the first aten op after
 * the call: nothing of the step runs between.
 */
__noinline int step_py_check(__u64 pid_tgid, __u64 ts)
{
	struct asc_pt_step_state now = {}, *prev;
	__u64 tstate, cframe, frame;
	__u32 tid = (__u32)pid_tgid, tgid = pid_tgid >> 32;
	struct asc_tgid_state *st;
	int fault = 0, i, fresh;

	tstate = current_tstate(&fault);
	if (!tstate)
		return 0;
	cframe = read_u64(tstate + cfg.ts_cframe, &fault);
	frame = cframe ? read_u64(cframe + cfg.cf_current_frame, &fault) : 0;
	for (i = 0; i < ASC_PY_DEPTH; i++) {
		__u64 code;

		if (!frame || fault)
			break;
		code = read_u64(frame + cfg.fr_code, &fault);
		if (!fault && is_step_code(code)) {
			__u64 prev_instr = read_u64(frame + cfg.fr_prev_instr, &fault);

			now.frame = frame;
			now.lasti = (__s64)(prev_instr - (code + cfg.co_code_adaptive)) >> 1;
			break;
		}
		frame = read_u64(frame + cfg.fr_previous, &fault);
	}
	prev = bpf_map_lookup_elem(&step_state, &tid);
	fresh = prev && prev->frame &&
		(!now.frame ||
		 (!cfg.step_absent_only && (prev->frame != now.frame || now.lasti < prev->lasti)));
	bpf_map_update_elem(&step_state, &tid, &now, BPF_ANY);
	if (!fresh)
		return 0;
	st = bpf_map_lookup_elem(&tgids, &tgid);
	if (!st || !(st->flags & ASC_TGID_ARMED))
		return 0;				 /* the loader is still attaching */
	start_step(st, pid_tgid, ASC_PT_STEP_PY_ID, ts); /* as the native step probe */
	return 0;
}

/* ---- autograd sequence numbers (user/discovery/seqnr.h) ---- */

/*
 * The thread's at::sequence_number counter, read where __tls_get_addr would
 * find it: tls_index {module, offset}, dtv = *(tp + ASC_ARCH_DTV_OFF), block =
 * dtv[module].val (16-byte entries; dtv[-1] counts them).  A block not
 * allocated yet (-1 / 0, or an entry past a dtv not grown for the module)
 * means the thread never used the counter: it is 0 then.  A block never
 * moves once allocated, so the counter's address is kept per thread.
 */
static __always_inline int seq_read(struct asc_pt_seq_thread *st, __s64 *val)
{
	__u64 addr = st->counter;

	if (!addr) {
		struct task_struct *task = bpf_get_current_task_btf();
		__u64 tp = ASC_ARCH_TP(task);
		__u64 idx[2] = {}, dtv = 0, len = 0, b = 0;

		if (bpf_probe_read_user(idx, sizeof(idx), (const void *)cfg.seq_tlsidx) < 0 ||
		    !idx[0])
			return -1; /* not relocated yet */
		if (bpf_probe_read_user(&dtv, sizeof(dtv), (const void *)(tp + ASC_ARCH_DTV_OFF)) <
			    0 ||
		    bpf_probe_read_user(&len, sizeof(len), (const void *)(dtv - 16)) < 0)
			return -1;
		if (idx[0] > len)
			goto unallocated;
		if (bpf_probe_read_user(&b, sizeof(b), (const void *)(dtv + 16 * idx[0])) < 0)
			return -1;
		if (!b || b == (__u64)-1)
			goto unallocated;
		st->counter = addr = b + idx[1] + cfg.seq_disp;
	}
	return bpf_probe_read_user(val, sizeof(*val), (const void *)addr) < 0 ? -1 : 0;
unallocated:
	*val = 0;
	return 0;
}

static __always_inline void seq_enter(struct pt_regs *ctx)
{
	struct asc_pt_seq_thread *st;
	__u64 sp = PT_REGS_SP(ctx);
	__s64 v = -1;
	__u32 d;
	int i;

	st = bpf_task_storage_get(&seq_threads, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st)
		return;
	if (seq_read(st, &v))
		v = -1;
	/* kept frames at or below this sp are dead: their returns were not seen (gate, unwind) */
	for (i = 0; i < ASC_PT_SEQ_DEPTH; i++) {
		d = st->depth;
		if (!d || d > ASC_PT_SEQ_DEPTH || st->f[(d - 1) & (ASC_PT_SEQ_DEPTH - 1)].sp > sp)
			break;
		st->depth = d - 1;
	}
	d = st->depth;
	if (d < ASC_PT_SEQ_DEPTH) {
		st->f[d].sp = sp;
		st->f[d].v0 = v;
	}
	st->depth = d + 1;
}

/*
 * At an aten op's return: its entry counter v0 (the frame whose probe sp is
 * the return's sp - ASC_ARCH_RET_SP_ADJ, or 8 below that when the probe sits
 * after an x86-64 push),
 * frames deeper than it lost their returns and are dropped.  An op whose
 * range moved the counter (v1 > v0) created an autograd node: torch gives it
 * seqNr v0 (user/discovery/seqnr.h).  Returns v0 then, else -1.
 */
static __always_inline __s64 seq_exit(struct pt_regs *ctx)
{
	struct asc_pt_seq_thread *st;
	__u64 sp = PT_REGS_SP(ctx) - ASC_ARCH_RET_SP_ADJ;
	__s64 v0 = -1, v1 = -1;
	int i;

	st = bpf_task_storage_get(&seq_threads, bpf_get_current_task_btf(), 0, 0);
	if (!st)
		return -1;
	for (i = 0; i < ASC_PT_SEQ_DEPTH + 1; i++) {
		__u32 d = st->depth;
		__u64 fsp;

		if (!d)
			return -1;
		d--;
		if (d >= ASC_PT_SEQ_DEPTH) { /* not kept: cannot be checked */
			st->depth = d;
			return -1;
		}
		fsp = st->f[d].sp;
		if (fsp > sp)
			return -1; /* entered before we watched: not ours */
		st->depth = d;
		if (sp - fsp <= 8) {
			v0 = st->f[d].v0;
			break;
		}
	}
	if (v0 < 0 || seq_read(st, &v1) || v1 <= v0)
		return -1;
	return v0;
}

static __always_inline void emit_seqnr(__u64 pid_tgid, __u32 id, __u64 ts, __s64 seq, __u64 fwd_tid,
				       __u64 vptr, __u32 kind, __u32 flags)
{
	struct asc_seqnr *r = reserve(sizeof(*r));

	if (!r)
		return;
	fill_hdr(&r->hdr, ASC_REC_SEQNR, sizeof(*r), pid_tgid, id, ts);
	r->seq = seq;
	r->fwd_tid = fwd_tid;
	r->vptr = vptr;
	r->kind = kind;
	r->flags = flags;
	submit(r);
}

/* ---- aten op entry: [STEP], ENTER, then TENSOR records, then PYSTACK ---- */

SEC("uprobe")
int BPF_KPROBE(asc_aten_enter)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 ts = 0;
	__u32 id;

	if (cfg.step_py) {
		__u32 tgid = pid_tgid >> 32;

		if (!bpf_map_lookup_elem(&tgids, &tgid))
			return 0;
		ts = bpf_ktime_get_ns();
		step_py_check(pid_tgid, ts); /* before the gate: a boundary may open it */
	}
	if (!gate(pid_tgid))
		return 0; /* closed: no cookie, no clock read */
	id = bpf_get_attach_cookie(ctx);
	if (!ts)
		ts = bpf_ktime_get_ns();
	if (!emit_args_enter(ctx, pid_tgid, id, ts))
		return 0;
	if (cfg.shapes)
		emit_tensors(ctx, pid_tgid, id, ts);
	if (cfg.pystack)
		emit_pystack(pid_tgid, ts, id);
	if (cfg.seqnr)
		seq_enter(ctx);
	return 0;
}

/*
 * Return of an aten op: the same EXIT record as the main object's
 * asc_call_exit, then (cfg.seqnr) a SEQNR record when the op created an
 * autograd node.  ascbpf trace uses it for aten sites whenever this object
 * is loaded (the entry counter lives here).
 */
SEC("uretprobe")
int BPF_KRETPROBE(asc_aten_exit)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 id;
	__u64 ts;
	__s64 seq;
	long site;

	if (!gate(pid_tgid) || (site = ret_site(ctx, pid_tgid)) < 0)
		return 0;
	id = (__u32)site;
	ts = bpf_ktime_get_ns();
	if (!emit_exit(pid_tgid, id, ts, PT_REGS_RC(ctx)) || !cfg.seqnr)
		return 0;
	seq = seq_exit(ctx);
	if (seq >= 0)
		emit_seqnr(pid_tgid, id, ts, seq, 0, 0, ASC_SEQNR_FORWARD, 0);
	return 0;
}

/*
 * torch::autograd::Engine::evaluate_function(this, graph_task&, Node *func,
 * InputBuffer&, ready_queue&): torch records it as the range
 * "autograd::engine::evaluate_function: NAME" (seq -1) and, inside it,
 * Node::operator() (inline, not probeable) records the node's range NAME
 * with its sequence_nr_ and thread_id_.  One ENTER / EXIT pair for the
 * call, the SEQNR (NODE) of the node right after the ENTER; the converter
 * makes both ranges from them (user/discovery/seqnr.h).
 */
SEC("uprobe")
int BPF_KPROBE(asc_autograd_eval_enter)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 node = PT_REGS_PARM3(ctx), vptr = 0, tid = 0, ts;
	__s64 seq = -1;
	__u32 flags = 0, id;

	if (!gate(pid_tgid))
		return 0;
	id = bpf_get_attach_cookie(ctx);
	ts = bpf_ktime_get_ns();
	if (!emit_args_enter(ctx, pid_tgid, id, ts))
		return 0;
	if (!cfg.node)
		return 0;
	if (bpf_probe_read_user(&vptr, sizeof(vptr), (const void *)node) < 0 ||
	    bpf_probe_read_user(&seq, sizeof(seq), (const void *)(node + cfg.node_seq_off)) < 0 ||
	    bpf_probe_read_user(&tid, sizeof(tid), (const void *)(node + cfg.node_tid_off)) < 0) {
		flags = ASC_SEQNR_F_FAULT;
		seq = -1;
		vptr = 0;
		tid = 0;
	}
	emit_seqnr(pid_tgid, id, ts, seq < 0 ? -1 : seq, tid, vptr, ASC_SEQNR_NODE, flags);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(asc_autograd_eval_exit)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	long id;

	if (!gate(pid_tgid) || (id = ret_site(ctx, pid_tgid)) < 0)
		return 0;
	emit_exit(pid_tgid, (__u32)id, bpf_ktime_get_ns(), 0);
	return 0;
}

/*
 * c10::reportMemoryUsageToProfiler(void *ptr, int64_t alloc_size,
 * int64_t total_allocated, int64_t total_reserved, c10::Device device):
 * PyTorch's allocators report every block here (torch_npu's caching
 * allocator always; CPU PyTorch only while a profiler records memory).  The
 * entry has the arguments; what the function then does is irrelevant.
 * Device is {int8 type, int8 index} in the low bytes of r8.
 */
SEC("uprobe")
int BPF_KPROBE(asc_c10_mem_enter, void *ptr, __s64 alloc_size, __s64 total_allocated,
	       __s64 total_reserved, __u64 device)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct asc_mem *m;

	if (!gate(pid_tgid))
		return 0;
	m = reserve(sizeof(*m));
	if (!m)
		return 0;
	fill_hdr(&m->hdr, ASC_REC_MEM, sizeof(*m), pid_tgid, bpf_get_attach_cookie(ctx),
		 bpf_ktime_get_ns());
	m->ptr = (__u64)ptr;
	m->size = alloc_size;
	m->total_allocated = total_allocated;
	m->total_reserved = total_reserved;
	m->total_active = 0;
	m->stream = 0;
	m->device = (device >> 8) & 0xff;
	m->component = ASC_MEM_PTA;
	m->data_type = alloc_size < 0 ? ASC_MEM_FREE : ASC_MEM_MALLOC;
	m->reserved = (device & 0xff); /* c10::DeviceType (0 CPU, ...; PrivateUse1 for NPU) */
	submit(m);
	return 0;
}
