// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * costmodel.c - the card's speed model (npu_cost.h): roofline time of a
 * kernel from its FLOPs and bytes, copy time from bandwidth.  Pure functions:
 * npu-modeld calls them per executed task, unit tests call them directly.
 */
#include <errno.h>
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
	default:	/* event record / wait: a scheduler action only */
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
