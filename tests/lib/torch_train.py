#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A small real-PyTorch training job that knows nothing of ascbpf.

A two-layer MLP (or a tiny CNN) trained with SGD on fixed random data for a
fixed number of steps; one step is train_one_step().  Every run does the same
aten calls per step, so a run under `ascbpf trace` and a run under
torch.profiler can be compared op by op.

  torch_train.py [--steps N] [--model mlp|cnn] [--steps-file F]
                 [--wait-file F] [--profile OUT.json] [--profile-memory OUT.json]
                 [--bench N [--bench-out F]] [--linger S]

--steps-file F   write one line per step: "<index> <start_ns> <end_ns>"
                 (CLOCK_MONOTONIC, the clock of ascbpf's records), after the run
--wait-file F    write our pid to F.pid, then wait until F exists before the
                 first step (lets a tracer attach with -p first)
--profile OUT    run under torch.profiler (CPU activity, record_shapes=True; step 0
                 is its warm-up step, steps 1.. are recorded) and write every aten
                 op as JSON: name, step, parent aten op, depth, input shapes, types
--bench N        no training output; print the wall time of N steps in ns
"""
import argparse
import json
import os
import sys
import time

import torch


def build(model):
    torch.manual_seed(0)
    if model == "cnn":
        net = torch.nn.Sequential(
            torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Flatten(), torch.nn.Linear(4 * 4 * 4, 4))
        x = torch.randn(32, 1, 8, 8)
    else:
        net = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                                  torch.nn.Linear(256, 4))
        x = torch.randn(32, 64)
    y = torch.randn(x.shape[0], 4)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    return net, opt, x, y


def train_one_step(net, opt, x, y):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(net(x), y)
    loss.backward()
    opt.step()
    return loss


def run(args, net, opt, x, y, after_step=None):
    marks = []
    for i in range(args.steps):
        t0 = time.monotonic_ns()
        train_one_step(net, opt, x, y)
        marks.append((i, t0, time.monotonic_ns()))
        if after_step:
            after_step()
    return marks


def profiler(args, ready):
    """torch.profiler with one ProfilerStep#k range per step (a schedule makes it mark steps).

    Step 0 is the profiler's warm-up step (torch.profiler warns that results are skewed
    without one: its first recorded step misses nested ops); steps 1.. are recorded.
    """
    from torch.profiler import ProfilerActivity, profile as tprofile, schedule

    return tprofile(activities=[ProfilerActivity.CPU], record_shapes=True,
                    schedule=schedule(wait=0, warmup=1, active=args.steps - 1, repeat=1),
                    on_trace_ready=ready)


def profile(args, net, opt, x, y):
    done = []

    def ready(p):
        # dtypes are only on the kineto events: FunctionEvent.id is their correlation id
        dt = {e.correlation_id(): e.dtypes() for e in p.profiler.kineto_results.events()}
        done.append((p.profiler.function_events, dt))

    with profiler(args, ready) as prof:
        marks = run(args, net, opt, x, y, after_step=prof.step)
    # ProfilerStep#k ranges (function_events renames them "ProfilerStep*"): k by start time
    events, dtypes = done[0]
    marks_ev = sorted((ev for ev in events if ev.name.startswith("ProfilerStep")),
                      key=lambda ev: ev.time_range.start)
    step_of = {id(ev): k + 1 for k, ev in enumerate(marks_ev)}  # step 0 was the warm-up
    ops = []
    for ev in events:
        if not ev.name.startswith("aten::"):
            continue
        step, parent, depth, p = None, None, 0, ev.cpu_parent
        while p is not None:
            if p.name.startswith("ProfilerStep"):
                step = step_of[id(p)]
                break
            if p.name.startswith("aten::"):
                depth += 1
                if parent is None:
                    parent = p.name
            p = p.cpu_parent
        ops.append({"name": ev.name, "step": step, "parent": parent, "depth": depth,
                    "thread": ev.thread, "start_us": ev.time_range.start,
                    "end_us": ev.time_range.end, "input_shapes": ev.input_shapes,
                    "input_types": dtypes.get(ev.id)})
    with open(args.profile, "w") as f:
        json.dump({"steps": args.steps, "ops": ops, "marks": marks}, f)


def profile_memory(args, net, opt, x, y):
    """The steps under torch.profiler(profile_memory=True): its [memory] events as JSON."""
    from torch.profiler import ProfilerActivity, profile as tprofile

    with tprofile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        marks = run(args, net, opt, x, y)
    mem = [{"bytes": e.nbytes(), "device_type": int(e.device_type()), "start_us": e.start_us()}
           for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    mem.sort(key=lambda m: m["start_us"])
    with open(args.profile_memory, "w") as f:
        json.dump({"memory": mem, "marks": marks}, f)
    time.sleep(args.linger)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--model", choices=("mlp", "cnn"), default="mlp")
    ap.add_argument("--steps-file")
    ap.add_argument("--wait-file")
    ap.add_argument("--profile")
    ap.add_argument("--bench", type=int, default=0)
    ap.add_argument("--bench-out", help="write the --bench result here too")
    ap.add_argument("--profile-memory", metavar="OUT",
                    help="run the steps under torch.profiler(profile_memory=True) and write "
                    "its [memory] events (bytes, in order) as JSON")
    ap.add_argument("--linger", type=float, default=0,
                    help="seconds to stay alive after the last step (a tracer resolves "
                    "Python frames from our memory while we live)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    net, opt, x, y = build(args.model)
    train_one_step(net, opt, x, y)  # warm-up: lazy initialisation outside the measured steps

    if args.bench:
        args.steps = args.bench
        if args.profile:
            t0 = time.monotonic_ns()
            with profiler(args, lambda p: None) as prof:
                run(args, net, opt, x, y, after_step=prof.step)
            t1 = time.monotonic_ns()
        else:
            if args.wait_file:
                wait_for(args.wait_file)
            t0 = time.monotonic_ns()
            run(args, net, opt, x, y)
            t1 = time.monotonic_ns()
        print(t1 - t0)
        if args.bench_out:
            with open(args.bench_out, "w") as f:
                f.write("%d\n" % (t1 - t0))
        return 0
    if args.profile:
        profile(args, net, opt, x, y)
        return 0
    if args.wait_file:
        wait_for(args.wait_file)
    if args.profile_memory:
        profile_memory(args, net, opt, x, y)
        return 0
    marks = run(args, net, opt, x, y)
    if args.steps_file:
        with open(args.steps_file, "w") as f:
            for m in marks:
                f.write("%d %d %d\n" % m)
    time.sleep(args.linger)
    return 0


def wait_for(path):
    with open(path + ".pid", "w") as f:
        f.write("%d\n" % os.getpid())
    while not os.path.exists(path):
        time.sleep(0.01)


if __name__ == "__main__":
    sys.exit(main())
