// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * costmodel.c - the card's speed model (npu_cost.h): roofline time of a
 * kernel from its FLOPs and bytes, copy time from bandwidth.  Pure functions:
 * npu-modeld calls them per executed task, unit tests call them directly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_cost.h"

void npu_card_config_default(struct npu_card_config *cfg)
{
	cfg->cube_tflops = 280.0;
	cfg->vector_tflops = 20.0;
	cfg->aicpu_gflops = 50.0;
	cfg->hbm_gbps = 1600.0;
	cfg->pcie_gbps = 25.0;
	cfg->launch_latency_ns = 2000;
	cfg->hbm_bytes = 64ull << 30;
}

static int parse_positive(const char *s, size_t len, double *out)
{
	char buf[64], *end;
	double v;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	v = strtod(buf, &end);
	if (*end || !(v >= 0.0) || v > 1e12)
		return -EINVAL;
	*out = v;
	return 0;
}

int npu_card_config_parse(struct npu_card_config *cfg, const char *spec)
{
	struct npu_card_config c = *cfg;
	const char *p = spec;

	if (!spec)
		return -EINVAL;
	while (*p) {
		const char *comma = strchr(p, ',');
		const char *eq = strchr(p, '=');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		size_t klen;
		double v;

		if (!eq || eq >= p + len)
			return -EINVAL;
		klen = (size_t)(eq - p);
		if (parse_positive(eq + 1, len - klen - 1, &v))
			return -EINVAL;
#define KEY(k) (klen == strlen(k) && !strncmp(p, k, klen))
		if (KEY("tflops"))
			c.cube_tflops = v;
		else if (KEY("vector_tflops"))
			c.vector_tflops = v;
		else if (KEY("aicpu_gflops"))
			c.aicpu_gflops = v;
		else if (KEY("hbm_gbps"))
			c.hbm_gbps = v;
		else if (KEY("pcie_gbps"))
			c.pcie_gbps = v;
		else if (KEY("launch_us"))
			c.launch_latency_ns = (uint64_t)(v * 1000.0 + 0.5);
		else if (KEY("hbm_gib"))
			c.hbm_bytes = (uint64_t)(v * (double)(1ull << 30));
		else
			return -EINVAL;
#undef KEY
		/* A zero peak or bandwidth would make every task infinitely long. */
		if (c.cube_tflops <= 0 || c.vector_tflops <= 0 || c.aicpu_gflops <= 0 ||
		    c.hbm_gbps <= 0 || c.pcie_gbps <= 0)
			return -EINVAL;
		p += len;
		if (*p == ',')
			p++;
	}
	*cfg = c;
	return 0;
}

/* amount / (rate per second) in ns, rounded up so nonzero work takes >= 1 ns. */
static uint64_t ns_for(double amount, double per_second)
{
	double ns;

	if (amount <= 0.0 || per_second <= 0.0)
		return 0;
	ns = amount / per_second * 1e9;
	if (ns > 1.8e19)
		return UINT64_MAX / 2;
	return (uint64_t)ns + 1;
}

uint64_t npu_cost_copy_ns(const struct npu_card_config *cfg, uint64_t bytes, int copy_kind)
{
	double bw = copy_kind == NPU_COPY_D2D ? cfg->hbm_gbps : cfg->pcie_gbps;

	/* A D2D copy reads and writes every byte. */
	if (copy_kind == NPU_COPY_D2D)
		return ns_for(2.0 * (double)bytes, bw * 1e9);
	return ns_for((double)bytes, bw * 1e9);
}

uint64_t npu_cost_duration_ns(const struct npu_card_config *cfg, uint64_t flops, uint64_t bytes,
			      int task_type)
{
	double peak;
	uint64_t compute, memory;

	switch (task_type) {
	case NPU_TASK_AI_CORE:
		peak = cfg->cube_tflops * 1e12;
		break;
	case NPU_TASK_AI_VECTOR_CORE:
		peak = cfg->vector_tflops * 1e12;
		break;
	case NPU_TASK_AI_CPU:
		peak = cfg->aicpu_gflops * 1e9;
		break;
	case NPU_TASK_MEMCPY:
		return ns_for((double)bytes, cfg->pcie_gbps * 1e9);
	case NPU_TASK_MEMSET:
		return cfg->launch_latency_ns + ns_for((double)bytes, cfg->hbm_gbps * 1e9);
	default: /* event record / wait: a scheduler action only */
		return cfg->launch_latency_ns;
	}
	compute = ns_for((double)flops, peak);
	memory = ns_for((double)bytes, cfg->hbm_gbps * 1e9);
	return cfg->launch_latency_ns + (compute > memory ? compute : memory);
}

const char *npu_task_type_name(int task_type)
{
	static const char *const names[NPU_TASK_TYPE_MAX] = {
		[NPU_TASK_AI_CORE] = "AI_CORE",
		[NPU_TASK_AI_VECTOR_CORE] = "AI_VECTOR_CORE",
		[NPU_TASK_AI_CPU] = "AI_CPU",
		[NPU_TASK_MEMCPY] = "MEMCPY",
		[NPU_TASK_EVENT_RECORD] = "EVENT_RECORD",
		[NPU_TASK_EVENT_WAIT] = "EVENT_WAIT",
		[NPU_TASK_MEMSET] = "MEMSET",
	};

	if (task_type < 0 || task_type >= NPU_TASK_TYPE_MAX)
		return "UNKNOWN";
	return names[task_type];
}

/* ---- operator FLOPs and bytes ---------------------------------------------------------- */

uint64_t npu_shape_numel(const struct npu_shape *s)
{
	uint64_t n = 1;

	for (int i = 0; i < s->ndim && i < NPU_OP_MAX_DIMS; i++) {
		if (s->dims[i] < 0)
			return 0;
		n *= (uint64_t)s->dims[i];
	}
	return n;
}

static uint64_t shape_bytes(const struct npu_shape *s)
{
	return npu_shape_numel(s) * (s->elem_size ? s->elem_size : 4);
}

enum op_class {
	OPC_ELEMWISE,  /* flops = per_elem * numel(out) */
	OPC_REDUCE,    /* flops = per_elem * numel(in0) */
	OPC_MATMUL,    /* in0 [..., M, K] x in1 [K, N] (or batched) */
	OPC_CONV,      /* in0 NCHW x in1 [O, C/g, kh, kw] -> out [N, O, Ho, Wo] */
	OPC_CONV_BWD,  /* same operand shapes as the forward, same flops */
	OPC_COPY,      /* data movement only */
	OPC_OPTIMIZER, /* per_elem * numel(in0), several tensors read and written */
};

struct op_def {
	const char *name;
	enum op_class cls;
	int task_type;
	uint32_t per_elem;
};

static const struct op_def op_defs[] = {
	{ "Add", OPC_ELEMWISE, NPU_TASK_AI_VECTOR_CORE, 1 },
	{ "Mul", OPC_ELEMWISE, NPU_TASK_AI_VECTOR_CORE, 1 },
	{ "Muls", OPC_ELEMWISE, NPU_TASK_AI_VECTOR_CORE, 1 },
	{ "Adds", OPC_ELEMWISE, NPU_TASK_AI_VECTOR_CORE, 1 },
	{ "Axpy", OPC_ELEMWISE, NPU_TASK_AI_VECTOR_CORE, 2 },
	{ "Sqrt", OPC_ELEMWISE, NPU_TASK_AI_VECTOR_CORE, 4 },
	{ "Lerp", OPC_ELEMWISE, NPU_TASK_AI_VECTOR_CORE, 3 },
	{ "Addcmul", OPC_ELEMWISE, NPU_TASK_AI_VECTOR_CORE, 3 },
	{ "Addcdiv", OPC_ELEMWISE, NPU_TASK_AI_VECTOR_CORE, 3 },
	{ "Relu", OPC_ELEMWISE, NPU_TASK_AI_VECTOR_CORE, 1 },
	{ "ReluGrad", OPC_ELEMWISE, NPU_TASK_AI_VECTOR_CORE, 1 },
	{ "Gelu", OPC_ELEMWISE, NPU_TASK_AI_VECTOR_CORE, 12 },
	{ "GeluGrad", OPC_ELEMWISE, NPU_TASK_AI_VECTOR_CORE, 16 },
	{ "SoftmaxV2", OPC_ELEMWISE, NPU_TASK_AI_VECTOR_CORE, 5 },
	{ "SoftmaxGrad", OPC_ELEMWISE, NPU_TASK_AI_VECTOR_CORE, 4 },
	{ "LayerNormV3", OPC_REDUCE, NPU_TASK_AI_VECTOR_CORE, 8 },
	{ "LayerNormGradV3", OPC_REDUCE, NPU_TASK_AI_VECTOR_CORE, 12 },
	{ "ReduceSum", OPC_REDUCE, NPU_TASK_AI_VECTOR_CORE, 1 },
	{ "Cast", OPC_ELEMWISE, NPU_TASK_AI_VECTOR_CORE, 1 },
	{ "TransData", OPC_COPY, NPU_TASK_AI_VECTOR_CORE, 0 },
	{ "MatMulV2", OPC_MATMUL, NPU_TASK_AI_CORE, 2 },
	{ "BatchMatMulV2", OPC_MATMUL, NPU_TASK_AI_CORE, 2 },
	{ "Conv2D", OPC_CONV, NPU_TASK_AI_CORE, 2 },
	{ "Conv2DBackpropInput", OPC_CONV_BWD, NPU_TASK_AI_CORE, 2 },
	{ "Conv2DBackpropFilter", OPC_CONV_BWD, NPU_TASK_AI_CORE, 2 },
	{ "ApplyAdamW", OPC_OPTIMIZER, NPU_TASK_AI_VECTOR_CORE, 14 },
	{ "ForeachMulScalar", OPC_ELEMWISE, NPU_TASK_AI_VECTOR_CORE, 1 },
	{ "NonZero", OPC_REDUCE, NPU_TASK_AI_CPU, 2 },
};

const char *const *npu_op_cost_kernels(void)
{
	static const char *names[sizeof(op_defs) / sizeof(op_defs[0]) + 1];

	if (!names[0])
		for (size_t i = 0; i < sizeof(op_defs) / sizeof(op_defs[0]); i++)
			names[i] = op_defs[i].name;
	return names;
}

/* Cores used: one per ~64 KiB of traffic (or per 16x16 output tiles for cube work). */
static uint32_t block_dim_for(uint64_t units, uint32_t cap)
{
	if (units < 1)
		return 1;
	return units > cap ? cap : (uint32_t)units;
}

int npu_op_cost(const char *op, const struct npu_shape *in, int nin, const struct npu_shape *out,
		int nout, struct npu_op_cost *cost)
{
	const struct op_def *d = NULL;
	uint64_t bytes = 0, m, n, k, batch;

	if (!op || !cost || nin < 0 || nout < 0 || (nin && !in) || (nout && !out))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(op_defs) / sizeof(op_defs[0]); i++)
		if (!strcmp(op_defs[i].name, op))
			d = &op_defs[i];
	if (!d)
		return -EINVAL;
	for (int i = 0; i < nin; i++)
		bytes += shape_bytes(&in[i]);
	for (int i = 0; i < nout; i++)
		bytes += shape_bytes(&out[i]);

	memset(cost, 0, sizeof(*cost));
	snprintf(cost->kernel, sizeof(cost->kernel), "%s", d->name);
	cost->task_type = d->task_type;
	cost->bytes = bytes;

	switch (d->cls) {
	case OPC_ELEMWISE:
		if (nout < 1)
			return -EINVAL;
		for (int i = 0; i < nout; i++)
			cost->flops += (uint64_t)d->per_elem * npu_shape_numel(&out[i]);
		cost->block_dim = block_dim_for(bytes >> 16, NPU_AIV_CORES);
		break;
	case OPC_REDUCE:
	case OPC_OPTIMIZER:
		if (nin < 1)
			return -EINVAL;
		cost->flops = (uint64_t)d->per_elem * npu_shape_numel(&in[0]);
		cost->block_dim = block_dim_for(bytes >> 16, d->task_type == NPU_TASK_AI_CPU ?
								     4 :
								     NPU_AIV_CORES);
		break;
	case OPC_COPY:
		if (nin < 1 || nout < 1)
			return -EINVAL;
		cost->block_dim = block_dim_for(bytes >> 16, NPU_AIV_CORES);
		break;
	case OPC_MATMUL:
		if (nin < 2 || in[0].ndim < 2 || in[1].ndim < 2)
			return -EINVAL;
		m = (uint64_t)in[0].dims[in[0].ndim - 2];
		k = (uint64_t)in[0].dims[in[0].ndim - 1];
		n = (uint64_t)in[1].dims[in[1].ndim - 1];
		if ((uint64_t)in[1].dims[in[1].ndim - 2] != k)
			return -EINVAL;
		batch = 1;
		for (int i = 0; i < in[0].ndim - 2; i++)
			batch *= (uint64_t)in[0].dims[i];
		cost->flops = 2 * batch * m * n * k;
		cost->block_dim = block_dim_for(batch * ((m + 15) / 16) * ((n + 15) / 16) / 4,
						NPU_AIC_CORES);
		break;
	case OPC_CONV:
	case OPC_CONV_BWD: {
		const struct npu_shape *o;

		/* in0: input NCHW, in1: weight [O, C/g, kh, kw]; the output (or, backward,
		 * the forward output shape as last input) is [N, O, Ho, Wo]. */
		if (nin < 2 || in[0].ndim != 4 || in[1].ndim != 4)
			return -EINVAL;
		o = d->cls == OPC_CONV ? (nout ? &out[0] : NULL) : (nin >= 3 ? &in[2] : NULL);
		if (!o || o->ndim != 4)
			return -EINVAL;
		cost->flops = 2ull * npu_shape_numel(o) * (uint64_t)in[1].dims[1] *
			      (uint64_t)in[1].dims[2] * (uint64_t)in[1].dims[3];
		cost->block_dim = block_dim_for(npu_shape_numel(o) >> 12, NPU_AIC_CORES);
		break;
	}
	}
	return 0;
}
