/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * npu_cost.h - the card's speed model, in libnpu_common.so.
 *
 * Contract with npu-modeld (engineer B): the daemon is started with a card
 * configuration and calls npu_cost_duration_ns() for every task it executes,
 * with the flops/bytes/task type the runtime put in the SQE (npu_sqe.h), so
 * device time depends on the shapes as on a real card:
 *   kernel:  launch_latency + max(flops / peak, bytes / hbm_bandwidth)
 *   copy:    bytes / pcie bandwidth (npu_cost_copy_ns(): per direction)
 *   event, memset-free sync tasks:   launch_latency
 */
#ifndef __NPU_MODEL_COST_H
#define __NPU_MODEL_COST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Task types as the SQE carries them (npu_sqe.h npu_sqe_payload.task_type). */
enum npu_task_type {
	NPU_TASK_AI_CORE = 0,
	NPU_TASK_AI_VECTOR_CORE = 1,
	NPU_TASK_AI_CPU = 2,
	NPU_TASK_MEMCPY = 3,
	NPU_TASK_EVENT_RECORD = 4,
	NPU_TASK_EVENT_WAIT = 5,
	NPU_TASK_MEMSET = 6,
	NPU_TASK_TYPE_MAX
};

struct npu_card_config {
	double cube_tflops;	    /* AI_CORE peak, 1e12 flop/s */
	double vector_tflops;	    /* AI_VECTOR_CORE peak */
	double aicpu_gflops;	    /* AI_CPU peak, 1e9 flop/s */
	double hbm_gbps;	    /* device memory bandwidth, 1e9 byte/s */
	double pcie_gbps;	    /* host<->device copy bandwidth */
	uint64_t launch_latency_ns; /* fixed cost of every task */
	uint64_t hbm_bytes;	    /* device memory size */
};

/* Copy direction for NPU_TASK_MEMCPY (same values as aclrtMemcpyKind). */
#define NPU_COPY_H2H 0
#define NPU_COPY_H2D 1
#define NPU_COPY_D2H 2
#define NPU_COPY_D2D 3

/* A 910B-like card: 280 TFLOPS fp16 cube, 1.6 TB/s HBM, 2 us launch, 64 GiB. */
void npu_card_config_default(struct npu_card_config *cfg);

/*
 * Parses "key=value,key=value" (keys: tflops, vector_tflops, aicpu_gflops,
 * hbm_gbps, pcie_gbps, launch_us, hbm_gib) over *cfg; 0 or -EINVAL (cfg
 * unchanged on error).
 */
int npu_card_config_parse(struct npu_card_config *cfg, const char *spec);

/* Device time of one task; task types that are not kernels ignore flops. */
uint64_t npu_cost_duration_ns(const struct npu_card_config *cfg, uint64_t flops, uint64_t bytes,
			      int task_type);

/* A copy by direction (NPU_COPY_*): D2D at HBM bandwidth, H2D/D2H over PCIe. */
uint64_t npu_cost_copy_ns(const struct npu_card_config *cfg, uint64_t bytes, int copy_kind);

/*
 * The FLOP/byte side: what one kernel of an operator costs, from the shapes.
 * Shared by the aclnn (libopapi) and aclop (libacl_op_compiler) paths so the
 * same op costs the same on both.
 */
#define NPU_OP_MAX_DIMS 8
#define NPU_AIC_CORES	24 /* 910B-like: cube cores, block dim cap for AI_CORE */
#define NPU_AIV_CORES	48 /* vector cores, cap for AI_VECTOR_CORE */

struct npu_shape {
	int ndim;
	int64_t dims[NPU_OP_MAX_DIMS];
	uint32_t elem_size; /* bytes per element */
};

struct npu_op_cost {
	char kernel[24];    /* kernel name on the card (NUL-terminated) */
	int task_type;	    /* enum npu_task_type */
	uint32_t block_dim; /* cores the kernel is split over */
	uint64_t flops;
	uint64_t bytes;
};

/* Elements of a shape (1 for a scalar, ndim 0); 0 if a dim is negative. */
uint64_t npu_shape_numel(const struct npu_shape *s);

/*
 * Cost of kernel `op` (an aclop op type / kernel name: "Add", "MatMulV2",
 * "Conv2D", "TransData", ... -- see npu_op_cost_kernels()) with `nin` input and
 * `nout` output shapes.  0, or -EINVAL for an unknown op or shapes that do
 * not fit it (MatMul inner dimensions differ, missing operands, ...).
 */
int npu_op_cost(const char *op, const struct npu_shape *in, int nin, const struct npu_shape *out,
		int nout, struct npu_op_cost *cost);

/* NULL-terminated list of the kernel names npu_op_cost() knows. */
const char *const *npu_op_cost_kernels(void);

/* "AI_CORE", "AI_VECTOR_CORE", ... ; "UNKNOWN" out of range. */
const char *npu_task_type_name(int task_type);

#ifdef __cplusplus
}
#endif

#endif /* __NPU_MODEL_COST_H */
