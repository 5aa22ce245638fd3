# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""torch_npu.optim: NpuFusedAdamW, AdamW in one NPU kernel per parameter.

torch.optim's per-parameter AdamW launches five to eight elementwise kernels
for every parameter every step (Muls, Adds, Addcmul, Sqrt, Addcdiv...); torch_npu's
fused optimizers launch one ApplyAdamW kernel each (torch_npu.npu_apply_adam_w,
aclnnApplyAdamWV2), which is what the profiler guide's "use a fused
optimizer" advice buys.
"""
import torch


def npu_apply_adam_w(var, m, v, grad, step, lr, beta1, beta2, weight_decay, eps):
    torch.ops.torch_npu.npu_apply_adam_w(var, m, v, grad, step, lr, beta1, beta2,
                                         weight_decay, eps)


class NpuFusedAdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        loss = closure() if closure is not None else None
        for g in self.param_groups:
            b1, b2 = g["betas"]
            for p in g["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if not st:
                    st["step"] = torch.zeros((), device=p.device)
                    st["exp_avg"] = torch.zeros_like(p)
                    st["exp_avg_sq"] = torch.zeros_like(p)
                st["step"].add_(1)
                npu_apply_adam_w(p, st["exp_avg"], st["exp_avg_sq"], p.grad, st["step"],
                                 g["lr"], b1, b2, g["weight_decay"], g["eps"])
        return loss
