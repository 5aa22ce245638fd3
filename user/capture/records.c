// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * records.c - record type table, ABI size checks and the validating decoder.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ascbpf_events.h"
#include "capture/records.h"
#include "schedule.h"

/* The ABI: one assertion per struct of ascbpf_events.h (sizes are the contract). */
_Static_assert(sizeof(struct asc_hdr) == 24, "asc_hdr");
_Static_assert(sizeof(struct asc_enter) == 72, "asc_enter");
_Static_assert(sizeof(struct asc_exit) == 32, "asc_exit");
_Static_assert(sizeof(struct asc_opname) == 96, "asc_opname");
_Static_assert(sizeof(struct asc_queue) == 48, "asc_queue");
_Static_assert(sizeof(struct asc_sqe_hdr) == 8, "asc_sqe_hdr");
_Static_assert(sizeof(struct asc_sqe) == 104, "asc_sqe");
_Static_assert(sizeof(struct asc_mem) == 80, "asc_mem");
_Static_assert(sizeof(struct asc_ioctl) == 104, "asc_ioctl");
_Static_assert(sizeof(struct asc_fdbind) == 48, "asc_fdbind");
_Static_assert(sizeof(struct asc_stack) == 288, "asc_stack");
_Static_assert(sizeof(struct asc_step) == 40, "asc_step");
_Static_assert(sizeof(struct asc_devtask) == 56, "asc_devtask");
_Static_assert(sizeof(struct asc_probe) == 48, "asc_probe");
_Static_assert(sizeof(struct asc_clock) == 48, "asc_clock");
_Static_assert(sizeof(struct asc_devclock) == 48, "asc_devclock");
_Static_assert(sizeof(struct asc_process) == 40, "asc_process");
_Static_assert(sizeof(struct asc_thread) == 40, "asc_thread");
_Static_assert(sizeof(struct asc_stats) == 64, "asc_stats");
_Static_assert(sizeof(struct asc_text) == 32, "asc_text");
_Static_assert(sizeof(struct asc_tensor) == 96, "asc_tensor");
_Static_assert(sizeof(struct asc_pystack) == 416, "asc_pystack");
_Static_assert(sizeof(struct asc_pyframe) == 40, "asc_pyframe");
_Static_assert(sizeof(struct asc_funcname) == 104, "asc_funcname");
_Static_assert(sizeof(struct asc_seqnr) == 56, "asc_seqnr");
_Static_assert(sizeof(struct asc_launch) == 48, "asc_launch");
_Static_assert(sizeof(struct asc_node_class) == 40, "asc_node_class");
_Static_assert(sizeof(struct asc_hccl_op) == 112, "asc_hccl_op");
_Static_assert(sizeof(struct asc_hccl_comm) == 184, "asc_hccl_comm");
_Static_assert(sizeof(struct asc_hccl_task) == 112, "asc_hccl_task");
_Static_assert(sizeof(struct asc_hccl_hash) == 104, "asc_hccl_hash");

struct rec_type {
	const char *name;
	unsigned short size;
	unsigned char variable;
};

/* the record table, aligned on '=' as the enum of bpf/ascbpf_events.h */
// clang-format off
static const struct rec_type rec_types[] = {
	[ASC_REC_ENTER]		= { "enter", sizeof(struct asc_enter), 0 },
	[ASC_REC_EXIT]		= { "exit", sizeof(struct asc_exit), 0 },
	[ASC_REC_OPNAME]	= { "opname", sizeof(struct asc_opname), 0 },
	[ASC_REC_QUEUE]		= { "queue", sizeof(struct asc_queue), 0 },
	[ASC_REC_SQE]		= { "sqe", sizeof(struct asc_sqe), 0 },
	[ASC_REC_MEM]		= { "mem", sizeof(struct asc_mem), 0 },
	[ASC_REC_IOCTL]		= { "ioctl", sizeof(struct asc_ioctl), 0 },
	[ASC_REC_STACK]		= { "stack", sizeof(struct asc_stack), 0 },
	[ASC_REC_STEP]		= { "step", sizeof(struct asc_step), 0 },
	[ASC_REC_FDBIND]	= { "fdbind", sizeof(struct asc_fdbind), 0 },
	[ASC_REC_PYSTACK]	= { "pystack", sizeof(struct asc_pystack), 0 },
	[ASC_REC_TENSOR]	= { "tensor", sizeof(struct asc_tensor), 0 },
	[ASC_REC_FUNCNAME]	= { "funcname", sizeof(struct asc_funcname), 0 },
	[ASC_REC_SEQNR]		= { "seqnr", sizeof(struct asc_seqnr), 0 },
	[ASC_REC_LAUNCH]	= { "launch", sizeof(struct asc_launch), 0 },
	[ASC_REC_HCCL_OP]	= { "hccl_op", sizeof(struct asc_hccl_op), 0 },
	[ASC_REC_HCCL_COMM]	= { "hccl_comm", sizeof(struct asc_hccl_comm), 0 },
	[ASC_REC_HCCL_TASK]	= { "hccl_task", sizeof(struct asc_hccl_task), 0 },
	[ASC_REC_HCCL_HASH]	= { "hccl_hash", sizeof(struct asc_hccl_hash), 0 },
	[ASC_REC_DEVTASK]	= { "devtask", sizeof(struct asc_devtask), 0 },
	[ASC_REC_PROBE]		= { "probe", sizeof(struct asc_probe), 1 },
	[ASC_REC_CLOCK]		= { "clock", sizeof(struct asc_clock), 0 },
	[ASC_REC_DEVCLOCK]	= { "devclock", sizeof(struct asc_devclock), 0 },
	[ASC_REC_PROCESS]	= { "process", sizeof(struct asc_process), 1 },
	[ASC_REC_THREAD]	= { "thread", sizeof(struct asc_thread), 0 },
	[ASC_REC_STATS]		= { "stats", sizeof(struct asc_stats), 0 },
	[ASC_REC_CONFIG]	= { "config", sizeof(struct asc_text), 1 },
	[ASC_REC_SYMBOL]	= { "symbol", sizeof(struct asc_text), 1 },
	[ASC_REC_LOST]		= { "lost", sizeof(struct asc_text), 1 },
	[ASC_REC_PYFRAME]	= { "pyframe", sizeof(struct asc_pyframe), 1 },
	[ASC_REC_ATEN_NAME]	= { "aten_name", sizeof(struct asc_text), 1 },
	[ASC_REC_NODE_CLASS]	= { "node_class", sizeof(struct asc_node_class), 1 },
};
// clang-format on

#define NR_TYPES (sizeof(rec_types) / sizeof(rec_types[0]))

const char *asc_rec_type_name(unsigned int type)
{
	return type < NR_TYPES ? rec_types[type].name : NULL;
}

size_t asc_rec_base_size(unsigned int type)
{
	return type < NR_TYPES && rec_types[type].name ? rec_types[type].size : 0;
}

int asc_rec_is_variable(unsigned int type)
{
	return type < NR_TYPES && rec_types[type].variable;
}

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

size_t asc_probe_rec_size(size_t lib_len, size_t sym_len)
{
	return pad8(sizeof(struct asc_probe) + lib_len + 1 + sym_len + 1);
}

size_t asc_text_rec_size(size_t len)
{
	return pad8(sizeof(struct asc_text) + len + 1);
}

size_t asc_node_class_rec_size(size_t len)
{
	return pad8(sizeof(struct asc_node_class) + len + 1);
}

size_t asc_process_rec_size(size_t cmdline_len)
{
	return pad8(sizeof(struct asc_process) + cmdline_len);
}

#define BAD(...)                                            \
	do {                                                \
		if (msg)                                    \
			snprintf(msg, msglen, __VA_ARGS__); \
		return -EBADMSG;                            \
	} while (0)

int asc_rec_check(const void *rec, size_t size, char *msg, size_t msglen)
{
	const struct asc_hdr *h = rec;
	size_t base, tail;

	if (size < sizeof(*h))
		BAD("record of %zu bytes is shorter than its header", size);
	if (h->size != size || size % 8)
		BAD("record size %u does not match %zu bytes or is not a multiple of 8", h->size,
		    size);
	base = asc_rec_base_size(h->type);
	if (!base) {
		if (h->type == ASC_REC_INVALID)
			BAD("record type 0 is invalid");
		return 1;
	}
	if (!asc_rec_is_variable(h->type)) {
		if (size != base)
			BAD("%s record has size %zu, expected %zu", asc_rec_type_name(h->type),
			    size, base);
	} else if (size < base) {
		BAD("%s record has size %zu, at least %zu expected", asc_rec_type_name(h->type),
		    size, base);
	}
	tail = size - base;
	switch (h->type) {
	case ASC_REC_OPNAME: {
		const struct asc_opname *o = rec;

		if (o->len > ASC_NAME_LEN)
			BAD("opname length %u exceeds %d", o->len, ASC_NAME_LEN);
		break;
	}
	case ASC_REC_HCCL_HASH: {
		const struct asc_hccl_hash *o = rec;

		if (strnlen(o->name, ASC_NAME_LEN) == ASC_NAME_LEN)
			BAD("hccl_hash name is not NUL-terminated");
		break;
	}
	case ASC_REC_HCCL_COMM: {
		const struct asc_hccl_comm *c = rec;

		if (strnlen(c->group, ASC_HCCL_GROUP_LEN) == ASC_HCCL_GROUP_LEN)
			BAD("hccl_comm group is not NUL-terminated");
		break;
	}
	case ASC_REC_SQE: {
		const struct asc_sqe *s = rec;

		if (s->nr_kept > ASC_MAX_SQES || s->nr_kept > s->sqe_num)
			BAD("sqe record keeps %u headers of %u (max %d)", s->nr_kept, s->sqe_num,
			    ASC_MAX_SQES);
		break;
	}
	case ASC_REC_STACK: {
		const struct asc_stack *s = rec;

		if (s->nr > ASC_STACK_DEPTH)
			BAD("stack record has %u frames (max %d)", s->nr, ASC_STACK_DEPTH);
		break;
	}
	case ASC_REC_PYSTACK: {
		const struct asc_pystack *ps = rec;

		if (ps->nr > ASC_PY_DEPTH)
			BAD("pystack record has %u frames (max %d)", ps->nr, ASC_PY_DEPTH);
		break;
	}
	case ASC_REC_PYFRAME: {
		const struct asc_pyframe *pf = rec;

		if (!tail || !memchr(pf->text, 0, tail))
			BAD("pyframe record text is not NUL-terminated");
		break;
	}
	case ASC_REC_IOCTL: {
		const struct asc_ioctl *io = rec;

		if (io->arg_len > ASC_IOCTL_ARG_LEN)
			BAD("ioctl record copies %u argument bytes (max %d)", io->arg_len,
			    ASC_IOCTL_ARG_LEN);
		break;
	}
	case ASC_REC_PROBE: {
		const struct asc_probe *p = rec;

		if ((size_t)p->lib_len + 1 + p->sym_len + 1 > tail)
			BAD("probe record strings (%u + %u bytes) exceed the record", p->lib_len,
			    p->sym_len);
		if (p->strings[p->lib_len] || p->strings[p->lib_len + 1 + p->sym_len] ||
		    memchr(p->strings, 0, p->lib_len) ||
		    memchr(p->strings + p->lib_len + 1, 0, p->sym_len))
			BAD("probe record strings are not NUL-terminated at their lengths");
		break;
	}
	case ASC_REC_PROCESS: {
		const struct asc_process *p = rec;

		if (p->cmdline_len > tail)
			BAD("process record cmdline (%u bytes) exceeds the record", p->cmdline_len);
		if (p->cmdline_len && p->strings[p->cmdline_len - 1])
			BAD("process record cmdline is not NUL-terminated");
		break;
	}
	case ASC_REC_NODE_CLASS: {
		const struct asc_node_class *nc = rec;

		if (!tail || !memchr(nc->name, 0, tail))
			BAD("node_class record name is not NUL-terminated");
		break;
	}
	case ASC_REC_CONFIG:
	case ASC_REC_SYMBOL:
	case ASC_REC_ATEN_NAME:
	case ASC_REC_LOST: {
		const struct asc_text *t = rec;

		if (!tail || !memchr(t->text, 0, tail))
			BAD("%s record text is not NUL-terminated", asc_rec_type_name(h->type));
		break;
	}
	default:
		break;
	}
	return 0;
}

const char *asc_sched_state_name(unsigned int state)
{
	static const char *const names[] = {
		[ASC_SCHED_NONE] = "none",
		[ASC_SCHED_WARMUP] = "warmup",
		[ASC_SCHED_RECORD] = "record",
		[ASC_SCHED_RECORD_AND_SAVE] = "record_and_save",
	};

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "?";
}

const char *asc_mem_component_name(unsigned int component)
{
	static const char *const names[] = {
		[ASC_MEM_PTA] = "PTA",
		[ASC_MEM_GE] = "GE",
		[ASC_MEM_APP] = "APP",
		[ASC_MEM_WORKSPACE] = "WORKSPACE",
	};

	return component < sizeof(names) / sizeof(names[0]) ? names[component] : "?";
}

const char *asc_mem_data_type_name(unsigned int data_type)
{
	static const char *const names[] = {
		[ASC_MEM_MALLOC] = "malloc",
		[ASC_MEM_FREE] = "free",
		[ASC_MEM_BLOCK_FREE] = "block_free",
	};

	return data_type < sizeof(names) / sizeof(names[0]) ? names[data_type] : "?";
}

const char *asc_module_name(unsigned int module)
{
	static const char *const names[] = {
		[ASC_MOD_UNKNOWN] = "unknown", [ASC_MOD_TSDRV] = "TSDRV", [ASC_MOD_SVM] = "SVM",
		[ASC_MOD_DEVMNG] = "DEVMNG",   [ASC_MOD_OTHER] = "other",
	};

	return module < sizeof(names) / sizeof(names[0]) ? names[module] : "?";
}

/* caffe2::TypeMeta names of the c10::ScalarType values (what torch.profiler prints). */
const char *asc_scalar_type_name(unsigned int st)
{
	static const char *const names[] = {
		[0] = "unsigned char",
		[1] = "signed char",
		[2] = "short int",
		[3] = "int",
		[4] = "long int",
		[5] = "c10::Half",
		[6] = "float",
		[7] = "double",
		[8] = "c10::complex<c10::Half>",
		[9] = "c10::complex<float>",
		[10] = "c10::complex<double>",
		[11] = "bool",
		[12] = "c10::qint8",
		[13] = "c10::quint8",
		[14] = "c10::qint32",
		[15] = "c10::BFloat16",
		[16] = "c10::quint4x2",
		[17] = "c10::quint2x4",
	};

	return st < sizeof(names) / sizeof(names[0]) ? names[st] : NULL;
}
