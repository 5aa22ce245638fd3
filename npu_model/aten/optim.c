// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optim.c - torch::optim::AdamW::step(LossClosure), the optimizer step that
 * libtorch_cpu.so exports and a C++ training loop calls once per step
 * (npu_model/include/npu_torch.h).  It is where the C workload's step
 * boundary is, as optimizer.step() is a Python job's: the journal's `step`
 * line is written here, at its return, after the update: step N ends and
 * step N + 1 starts (`step=N+1`; step 0 starts with the process, as
 * torch_npu's ProfilerStep#0 starts with the profiler).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "npu_api_journal.h"
#include "npu_autograd.h"
#include "npu_torch.h"

static uint64_t next_step;

NPU_NOINLINE struct at_tensor *_ZN5torch5optim5AdamW4stepESt8functionIFN2at6TensorEvEE(
	struct at_tensor *ret, struct npu_optimizer *self, const struct cxx_function *closure)
{
	uint64_t step;

	(void)closure; /* no closure re-evaluates a loss here: the loss is undefined */
	npu_autograd_set_grad_enabled(false);
	if (self && self->update)
		self->update(self->ctx);
	npu_autograd_set_grad_enabled(true);
	memset(ret, 0, sizeof(*ret));
	step = __atomic_add_fetch(&next_step, 1, __ATOMIC_RELAXED);
	if (npu_journal_on)
		npu_journal_write("step", "tid=%d\tt=%llu\tstep=%llu", npu_tid(),
				  (unsigned long long)npu_now_ns(), (unsigned long long)step);
	NPU_BARRIER();
	return ret;
}
