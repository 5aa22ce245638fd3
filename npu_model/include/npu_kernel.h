/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * npu_kernel.h - what a kernel launch carries in npu_model.
 *
 * On a real card the launch arguments are tensor addresses and tiling data
 * the kernel's code reads.  npu_model's kernels have no code; the first bytes
 * of every launch's argument buffer (rtKernelLaunch args,
 * rtsLaunchKernelWithHostArgs / aclrtLaunchKernelWithHostArgs hostArgs,
 * aclrtLaunchKernel argsData) are this header instead, from which the
 * runtime fills the SQE payload (npu_sqe.h) the card's cost model runs.
 * Kernels are named by registration: rtFunctionRegister(bin, stub, name, ...)
 * for rtKernelLaunch, rtsFuncGetByName(bin, name, &handle) for handle launches.
 */
#ifndef __NPU_MODEL_KERNEL_H
#define __NPU_MODEL_KERNEL_H

#include <stdint.h>

struct npu_kernel_args {
	uint64_t flops;	    /* floating-point operations of this launch */
	uint64_t bytes;	    /* device-memory bytes it reads and writes */
	uint32_t task_type; /* enum npu_task_type: AI_CORE, AI_VECTOR_CORE, AI_CPU */
	uint32_t reserved;
};

/*
 * rtKernelLaunchEx's argument block in the model (an AI CPU framework op:
 * real CANN passes STR_FWK_OP_KERNEL, which names the op inside): the cost,
 * then the op name.
 */
struct npu_fwk_kernel_args {
	struct npu_kernel_args cost;
	char op_name[32];
};

#endif /* __NPU_MODEL_KERNEL_H */
