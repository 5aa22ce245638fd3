#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""dist_train.py - data-parallel training with torch.distributed's "hccl" backend
on the simulated NPU, one process per rank, started as torchrun starts them:

    RANK=r WORLD_SIZE=n MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 \\
    PYTHONPATH=build/npu_model/python NPU_MODEL_DEV_DIR=... \\
        /usr/bin/python3 npu_model/workloads/python/dist_train.py --steps 5

Rank r uses card r.  The parameters are broadcast from rank 0 once; every step
runs the forward and all-reduces one gradient buffer per parameter (averaging by
hand, as a script without DDP does); the ranks meet in a barrier at the end.
Known limits: DistributedDataParallel checks the parameters' values across ranks
when it is built, and the model moves no data, so that check cannot pass; and a
backward in a second step of this script fails in the torch_npu stand-in with
"expected device privateuseone:0 but got privateuseone:1" (not investigated), so
the forward runs under no_grad and the gradients are buffers of their shape.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch_npu  # noqa: F401  (registers the NPU, torch.npu and the "hccl" backend)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=5)
    args = ap.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.npu.set_device(rank)
    dist.init_process_group("hccl", rank=rank, world_size=world)
    model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 16)).npu(rank)
    for p in model.parameters():
        dist.broadcast(p.data, 0)
    grads = [torch.empty_like(p) for p in model.parameters()]
    for _ in range(args.steps):
        x = torch.randn(32, 256).npu(rank)
        with torch.no_grad():
            loss = model(x).sum()
        for g in grads:
            dist.all_reduce(g)
            g.mul_(1.0 / world)
        loss.item()
    dist.barrier()
    print("dist_train: rank %d of %d: %d steps" % (rank, world, args.steps))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
