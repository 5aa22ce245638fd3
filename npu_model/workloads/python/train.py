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
  transdata         the CNN with every conv input cast by torch_npu.npu_format_cast to
                    NC1HWC0 (3 TransData kernels per step)
  oom               first step fills the card until torch.npu.OutOfMemoryError, frees it
                    to the cache, then asks for a block no cached segment holds (the
                    allocator releases its cache and retries); then baseline steps
  multi-stream      batches and a 32 MiB data shard prefetched on a side stream, the
                    compute stream waits for an event (the usual prefetcher)
  launch-storm      a tiny model plus 2000 tiny in-place adds per step (a per-element
                    Python loop)
  multi-rank        data parallel over 2 ranks with torch.distributed's "hccl" backend:
                    started without WORLD_SIZE it launches them as torchrun does

--oom-fill free fills the card only while mem_get_info() reports room (no exception).
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
             "cnn", "transdata", "oom", "multi-stream", "launch-storm", "multi-rank")


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


ACL_FORMAT_NC1HWC0 = 3
STORM_OPS = 2000


class TransDataCNN(SmallCNN):
    """SmallCNN whose conv inputs are cast to the NPU's 5-D format first (a model ported
    from another framework that calls npu_format_cast by hand)."""

    def forward(self, x):
        x = torch.relu(self.conv1(torch_npu.npu_format_cast(x, ACL_FORMAT_NC1HWC0)))
        x = torch.relu(self.conv2(torch_npu.npu_format_cast(x, ACL_FORMAT_NC1HWC0)))
        return self.fc(torch_npu.npu_format_cast(x, ACL_FORMAT_NC1HWC0).flatten(1))


def fill_until_oom(device, until_error=True):
    """oom, first step: 64 MiB buffers until the card is full (torch.npu.OutOfMemoryError,
    after the allocator's own release-and-retry), all freed to the cache; then one buffer
    larger than any cached segment: its first try fails, the allocator returns its cache to
    the card (aclrtFree) and the retry succeeds.  until_error False (--oom-fill free): stop
    while torch.npu.mem_get_info() says less than 64 MiB is free, so nothing raises."""
    held = []
    try:
        while len(held) < 4096 and (until_error or torch.npu.mem_get_info()[0] >= 64 << 20):
            held.append(torch.empty(64 << 20, dtype=torch.uint8, device=device))
        if until_error:
            raise SystemExit("train.py: oom: the card never filled; run npu-modeld "
                             "--hbm-mib 1024")
        print("oom: %d x 64 MiB, card full" % len(held), flush=True)
    except torch.npu.OutOfMemoryError as e:
        print("oom: %d x 64 MiB, then %s" % (len(held), str(e).splitlines()[0]), flush=True)
    held.clear()
    big = max(torch.npu.memory_reserved() // 2 & ~((2 << 20) - 1), 128 << 20)
    buf = torch.empty(big, dtype=torch.uint8, device=device)
    print("oom: %d MiB after the cache release: ok" % (big >> 20), flush=True)
    del buf
    torch.npu.empty_cache()


def prefetched(scenario, device, steps):
    """multi-stream: batches copied to the card on a side stream one step ahead, with the
    next data shard; the compute stream waits for the copies' event."""
    side, ready = torch.npu.Stream(), torch.npu.Event()
    shard_host = torch.empty(8 << 20)  # 32 MiB of float32

    def load(batch):
        with torch.npu.stream(side):
            out = [t.to(device, non_blocking=True) for t in batch]
            out.append(shard_host.to(device, non_blocking=True))
            ready.record()
        return out

    nxt = None
    for batch in batches(scenario, "cpu", steps):
        if nxt is not None:
            torch.npu.current_stream().wait_event(ready)
            x, y, _ = nxt
            nxt = load(batch)
            yield x, y
        else:
            nxt = load(batch)
    if nxt is not None:
        torch.npu.current_stream().wait_event(ready)
        yield nxt[0], nxt[1]


class AllReduceGrads:
    """multi-rank: averages every gradient over the ranks (one all_reduce per parameter)
    before the wrapped optimizer's step, as a script without DDP does."""

    def __init__(self, opt, params):
        self.opt, self.params = opt, list(params)
        self.world = torch.distributed.get_world_size()

    def zero_grad(self):
        self.opt.zero_grad()

    def step(self):
        for p in self.params:
            if p.grad is not None:
                torch.distributed.all_reduce(p.grad)
                p.grad.mul_(1.0 / self.world)
        self.opt.step()


def launch_ranks(argv, world=2):
    """multi-rank without WORLD_SIZE: start `world` ranks of this script as torchrun does
    (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR/PORT); the exit status is the worst rank's."""
    import socket
    import subprocess
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for r in range(world):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(world),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        procs.append(subprocess.Popen([sys.executable, os.path.abspath(__file__)] + argv,
                                      env=env))
    return max(p.wait() for p in procs)


def make_scenario_job(scenario, device, args):
    """The jobs of the scenarios added after make_job's: (model, opt, loss_fn, data, hook);
    data yields the batches, hook(step) runs inside each step before train_one_step."""
    hook = None
    data = batches
    if scenario == "transdata":
        model = TransDataCNN().npu()
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        return model, opt, torch.nn.functional.cross_entropy, \
            lambda _s, dev, n: batches("cnn", dev, n), None
    if scenario == "launch-storm":
        model = TinyOps(depth=2).npu()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        seen = torch.zeros(16).npu()

        def hook(step):
            for _ in range(STORM_OPS):
                seen.add_(1.0)
        return model, opt, torch.nn.functional.mse_loss, \
            lambda _s, dev, n: batches("dispatch-bound", dev, n), hook
    model, opt, loss_fn = make_job("baseline", device)
    if scenario == "oom":
        def hook(step):
            if step == 0:
                fill_until_oom(device, args.oom_fill == "error")
    elif scenario == "multi-stream":
        data = prefetched
    elif scenario == "multi-rank":
        import atexit
        torch.distributed.init_process_group("hccl")
        for p in model.parameters():
            torch.distributed.broadcast(p.data, 0)
        opt = AllReduceGrads(opt, model.parameters())
        atexit.register(torch.distributed.destroy_process_group)
        atexit.register(torch.distributed.barrier)
    return model, opt, loss_fn, data, hook


def train_one_step(model, opt, loss_fn, x, y, keep, step):
    opt.zero_grad()
    out = model(x)
    loss = loss_fn(out, y)
    loss.backward()
    opt.step()
    # the journal's step boundary (simulator only) is where the job's own one is: the return
    # of opt.step() ends step `step` and starts the next (step 0 starts with the process)
    torch_npu._journal_step(step + 1)
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
    ap.add_argument("--oom-fill", choices=("error", "free"), default="error")
    args = ap.parse_args()

    if args.scenario == "multi-rank" and "WORLD_SIZE" not in os.environ:
        return launch_ranks(sys.argv[1:])
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    torch.npu.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    device = torch_npu.npu_device()
    data, hook = batches, None
    if args.scenario in SCENARIOS[6:]:
        model, opt, loss_fn, data, hook = make_scenario_job(args.scenario, device, args)
    else:
        model, opt, loss_fn = make_job(args.scenario, device)
    keep = [] if args.scenario == "mem-growth" else None
    step = 0
    for x, y in data(args.scenario, device, args.steps):
        if hook:
            hook(step)
        loss = train_one_step(model, opt, loss_fn, x, y, keep, step)
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
