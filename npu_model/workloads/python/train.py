#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""train.py - training jobs on the simulated NPU, written as people write them.

    PYTHONPATH=build/npu_model/python NPU_MODEL_DEV_DIR=... \\
        /usr/bin/python3 npu_model/workloads/python/train.py --scenario baseline --steps 20

Real PyTorch (Debian's python3-torch) runs the Python, the dispatcher, autograd
and the optimizers; `import torch_npu` puts the model's torch_npu underneath
(npu_model/torch_npu/pytorch).  Each scenario is one of npu_train's, on the
same libraries:

  baseline          a small transformer block, torch.optim.Adam (per parameter)
  dispatch-bound    many tiny ops per step: the host cannot keep the card busy
  native-optimizer  torch.optim.AdamW with foreach=False: several kernels per parameter
  fused-optimizer   torch_npu.optim.NpuFusedAdamW: one pass over all parameters
  mem-growth        keeps a reference to every step's activations (memory grows)
  cnn               a small CNN (convolution, ReLU, linear head), SGD with momentum

--wait-ready FILE writes FILE once the first step is done and keeps stepping
(for tracers that attach by PID); --steps 0 with it runs until SIGTERM.
"""
import argparse
import os
import signal
import sys

import torch
import torch_npu  # noqa: F401  (registers the NPU and torch.npu)

SCENARIOS = ("baseline", "dispatch-bound", "native-optimizer", "fused-optimizer", "mem-growth",
             "cnn")


class Block(torch.nn.Module):
    """One pre-activation transformer block: attention, then an MLP."""

    def __init__(self, dim=64, hidden=256):
        super().__init__()
        self.q = torch.nn.Linear(dim, dim)
        self.k = torch.nn.Linear(dim, dim)
        self.v = torch.nn.Linear(dim, dim)
        self.up = torch.nn.Linear(dim, hidden)
        self.down = torch.nn.Linear(hidden, dim)
        self.head = torch.nn.Linear(dim, 16)

    def forward(self, x):
        att = torch.softmax(torch.bmm(self.q(x), self.k(x).transpose(1, 2)), dim=-1)
        x = x + torch.bmm(att, self.v(x))
        x = x + self.down(torch.nn.functional.gelu(self.up(x)))
        return self.head(x).mean(dim=1)


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, padding=1)
        self.fc = torch.nn.Linear(16 * 8 * 8, 10)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        return self.fc(x.flatten(1))


class TinyOps(torch.nn.Module):
    """Dispatch-bound: a long chain of small elementwise ops on a small tensor."""

    def __init__(self, dim=32, depth=24):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(dim, dim) for _ in range(depth))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x)) * 0.5 + x
        return x.sum(dim=1)


def batches(scenario, device, steps):
    """A DataLoader-like stream of (input, target) pairs, made on the host and moved to the card."""
    g = torch.Generator().manual_seed(0)
    i = 0
    while steps <= 0 or i < steps:
        if scenario == "cnn":
            x, y = torch.randn(8, 3, 8, 8, generator=g), torch.randint(0, 10, (8,), generator=g)
        elif scenario == "dispatch-bound":
            x, y = torch.randn(4, 32, generator=g), torch.randn(4, generator=g)
        else:
            x, y = torch.randn(4, 16, 64, generator=g), torch.randint(0, 16, (4,), generator=g)
        yield x.to(device), y.to(device)
        i += 1


def make_job(scenario, device):
    if scenario == "cnn":
        model = SmallCNN().npu()
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        loss_fn = torch.nn.functional.cross_entropy
    elif scenario == "dispatch-bound":
        model = TinyOps().npu()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        loss_fn = torch.nn.functional.mse_loss
    else:
        model = Block().npu()
        loss_fn = torch.nn.functional.cross_entropy
        if scenario == "native-optimizer":
            opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False)
        elif scenario == "fused-optimizer":
            opt = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=1e-3)
        else:
            opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return model, opt, loss_fn


def train_one_step(model, opt, loss_fn, x, y, keep):
    opt.zero_grad()
    out = model(x)
    loss = loss_fn(out, y)
    loss.backward()
    opt.step()
    if keep is not None:
        # mem-growth: a hidden activation per step stays referenced (a typical leak: a
        # list of tensors kept for logging)
        keep.append(model.up(x).detach())
    return loss


def main():
    ap = argparse.ArgumentParser(description="a training job on the simulated NPU")
    ap.add_argument("--scenario", default="baseline", choices=SCENARIOS)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--log-every", type=int, default=5)
    ap.add_argument("--wait-ready", metavar="FILE")
    args = ap.parse_args()

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    torch.npu.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    device = torch_npu.npu_device()
    model, opt, loss_fn = make_job(args.scenario, device)
    keep = [] if args.scenario == "mem-growth" else None
    step = 0
    for x, y in batches(args.scenario, device, args.steps):
        torch_npu._journal_step(step)
        loss = train_one_step(model, opt, loss_fn, x, y, keep)
        step += 1
        if step % args.log_every == 0:
            print("step %d loss %.4f" % (step, loss.item()), flush=True)
        if step == 1 and args.wait_ready:
            torch.npu.synchronize()
            with open(args.wait_ready, "w") as f:
                f.write("%d\n" % os.getpid())
        if stop:
            break
    torch.npu.synchronize()
    print("train.py: scenario=%s steps=%d allocated=%d peak=%d" %
          (args.scenario, step, torch.npu.memory_allocated(), torch.npu.max_memory_allocated()),
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
