#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Sequence numbers, backward nodes and fwdbwd flows: `ascbpf trace` vs torch.profiler.

A small CNN (conv2d, relu, max_pool2d, linear, mse_loss: the sample's kind
of graph) is trained for STEPS steps twice, by the same script: once under
torch.profiler (step 0 its warm-up), once under `ascbpf trace --step-py
train_one_step` (converted; trace_view.json read with json).  For steps
1..STEPS-1, per op name, the k-th occurrence is compared:

  * backward nodes (MulBackward0, torch::autograd::AccumulateGrad, ...) and the
    "autograd::engine::evaluate_function: X" ranges: the same names, counts,
    "Sequence number" and "Fwd thread id", exactly;
  * forward ops: the same "Sequence number" for every op torch numbers and
    that created a node (the ones fwdbwd links), "Fwd thread id" 0.
    Difference, by design (user/discovery/seqnr.h): torch also numbers Autograd-key ops
    in grad mode that create no node (peek()); ascbpf writes -1 there.  For
    each such op the test checks that torch's number is exactly the counter
    at that time, i.e. 1 + the last number ascbpf gave before the op starts,
    so the difference is that one case and nothing else.

Then one more step (ascbpf run only) runs loss.backward() on another
Python thread, as torch_npu's device thread does: its fwdbwd flows must link
each forward node creator with the backward node of the same number (s on
the main thread at the forward op's ts, f on the backward thread at the
node's ts), one flow per number, and the main-thread steps have none (their
tids are equal: torch_npu writes no flow then).  torch.profiler cannot be the
reference for that step: its callbacks are thread-local, a user thread's
backward is not recorded.
"""
import collections
import glob
import json
import os
import subprocess
import sys
import tempfile

TOP = os.environ.get("ASCBPF_TOP", os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
OUTPUT = os.environ.get("OUTPUT", os.path.join(TOP, "build"))
ASCBPF = os.path.join(OUTPUT, "ascbpf")
PY = "/usr/bin/python3"
STEPS = 4
EVAL = "autograd::engine::evaluate_function: "

SCRIPT = r'''
import json, sys, threading, torch
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(),
                          torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(64, 4))
x = torch.randn(8, 1, 8, 8)
y = torch.randn(8, 4)
opt = torch.optim.SGD(net.parameters(), lr=0.01)


def train_one_step(threaded=False):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(net(x), y)
    if threaded:
        t = threading.Thread(target=loss.backward)
        t.start()
        t.join()
    else:
        loss.backward()
    opt.step()


steps, mode = int(sys.argv[1]), sys.argv[2]
if mode == "profile":
    from torch.profiler import ProfilerActivity, profile, schedule
    done = []
    with profile(activities=[ProfilerActivity.CPU],
                 schedule=schedule(wait=0, warmup=1, active=steps - 1, repeat=1),
                 on_trace_ready=lambda p: done.append(p.profiler.function_events)) as prof:
        for i in range(steps):
            train_one_step()
            prof.step()
    ev = done[0]
    marks = sorted((e for e in ev if e.name.startswith("ProfilerStep")),
                   key=lambda e: e.time_range.start)
    out = []
    for e in ev:
        if e.name.startswith("ProfilerStep"):
            continue
        st = [k + 1 for k, m in enumerate(marks) if m.time_range.start <= e.time_range.start
              and e.time_range.end <= m.time_range.end]
        if st:
            out.append({"name": e.name, "step": st[0], "start": e.time_range.start,
                        "seq": e.sequence_nr, "fwd": e.fwd_thread, "thread": e.thread})
    json.dump(out, open(sys.argv[3], "w"))
else:
    for i in range(steps):
        train_one_step()
    train_one_step(threaded=True)
'''


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def is_node(name):
    return name.startswith("autograd::engine::evaluate_function: ") or \
        name.endswith("Backward0") or name.endswith("Backward1") or \
        name == "torch::autograd::AccumulateGrad"


def reference(tmp, script):
    out = os.path.join(tmp, "ref.json")
    subprocess.run([PY, script, str(STEPS), "profile", out], check=True,
                   stderr=subprocess.DEVNULL, timeout=300)
    with open(out) as f:
        ops = json.load(f)
    steps = collections.defaultdict(list)
    for o in ops:
        steps[o["step"]].append(o)
    for s in steps:
        steps[s].sort(key=lambda o: o["start"])
    return steps


def traced(tmp, script):
    outdir = os.path.join(tmp, "trace")
    r = subprocess.run([ASCBPF, "trace", "-o", outdir, "--activities", "cpu", "--step-py",
                        "train_one_step", "--", PY, script, str(STEPS), "run"],
                       capture_output=True, text=True, timeout=300)
    print(r.stderr.strip())
    if r.returncode != 0:
        fail("ascbpf trace exited %d" % r.returncode)
    if "sequence_number" in r.stderr:
        fail("the sequence counter was not found")
    tv = glob.glob(os.path.join(outdir, "*_ascend_pt", "ASCEND_PROFILER_OUTPUT",
                                "trace_view.json"))
    if len(tv) != 1:
        fail("expected one trace_view.json, found %s" % tv)
    with open(tv[0]) as f:
        trace = json.load(f)
    ops = [e for e in trace if e.get("cat") == "cpu_op"]
    flows = [e for e in trace if e.get("cat") == "fwdbwd"]
    marks = sorted((e for e in ops if e["name"].startswith("ProfilerStep#")),
                   key=lambda e: float(e["ts"]))
    if len(marks) != STEPS + 1:
        fail("expected %d ProfilerStep ranges, got %d" % (STEPS + 1, len(marks)))
    steps = collections.defaultdict(list)
    for e in ops:
        if e["name"].startswith("ProfilerStep#"):
            continue
        ts, end = float(e["ts"]), float(e["ts"]) + e["dur"]
        for k, m in enumerate(marks):
            if float(m["ts"]) <= ts and end <= float(m["ts"]) + m["dur"] + 0.001:
                steps[k].append({"name": e["name"], "start": ts, "tid": e["tid"],
                                 "seq": e["args"]["Sequence number"],
                                 "fwd": e["args"]["Fwd thread id"], "ts": e["ts"]})
                break
    for s in steps:
        steps[s].sort(key=lambda o: o["start"])
    return steps, flows


def compare(ref, got):
    counts = collections.Counter()
    for s in range(1, STEPS):
        r_by, g_by = collections.defaultdict(list), collections.defaultdict(list)
        for o in ref[s]:
            r_by[o["name"]].append(o)
        for o in got[s]:
            g_by[o["name"]].append(o)
        # backward side: names, counts and numbers exactly
        rn = sorted(n for n in r_by if is_node(n))
        gn = sorted(n for n in g_by if is_node(n))
        if rn != gn:
            fail("step %d: backward names differ: torch %s, ascbpf %s" % (s, rn, gn))
        if not any(n.startswith("autograd::engine::") for n in rn):
            fail("step %d: no evaluate_function range in torch.profiler's run" % s)
        step_fwd = set(o["fwd"] for o in ref[s] if o["seq"] >= 0 and is_node(o["name"]))
        if len(step_fwd) != 1 or 0 in step_fwd:
            fail("step %d: torch.profiler's backward nodes have forward thread ids %s" %
                 (s, step_fwd))
        step_fwd = step_fwd.pop()
        for n in rn:
            if len(r_by[n]) != len(g_by[n]):
                fail("step %d: %d x %s under torch, %d under ascbpf" %
                     (s, len(r_by[n]), n, len(g_by[n])))
            for k, (r, g) in enumerate(zip(r_by[n], g_by[n])):
                if n.startswith(EVAL):
                    # torch.profiler's post-processing copies the node's numbers onto
                    # its evaluate_function range; torch_npu does not (the sample:
                    # -1 / 0), and ascbpf writes what torch_npu writes.  Check both.
                    # (only a node with a number: AccumulateGrad's range stays -1 / 0)
                    node = g_by[n[len(EVAL):]][k]
                    copied = (node["seq"], node["fwd"]) if node["seq"] >= 0 else (-1, 0)
                    if (g["seq"], g["fwd"]) != (-1, 0) or (r["seq"], r["fwd"]) != copied:
                        fail("step %d: %s #%d: torch seq %d fwd %d, ascbpf seq %d fwd %d, "
                             "node %d/%d" % (s, n, k, r["seq"], r["fwd"], g["seq"], g["fwd"],
                                             node["seq"], node["fwd"]))
                    counts["evaluate_function"] += 1
                    continue
                if r["seq"] == g["seq"] == -1 and r["fwd"] == 0 and g["fwd"] == step_fwd:
                    # a node without a number (AccumulateGrad): torch.profiler drops its
                    # forward thread id, torch_npu writes Node::thread_id_ (the sample:
                    # -1 / 1), as ascbpf does: the same thread index as the other nodes
                    counts["backward, unnumbered"] += 1
                    continue
                if (r["seq"], r["fwd"]) != (g["seq"], g["fwd"]):
                    fail("step %d: %s #%d: torch seq %d fwd %d, ascbpf seq %d fwd %d" %
                         (s, n, k, r["seq"], r["fwd"], g["seq"], g["fwd"]))
                counts["backward"] += 1
        # forward side
        numbered = [o for o in got[s] if o["seq"] >= 0 and o["fwd"] == 0]
        for n in r_by:
            if is_node(n) or not n.startswith("aten::"):
                continue
            if len(r_by[n]) != len(g_by.get(n, [])):
                continue    # counts are test_pytorch_ops.py's business; compare what aligns
            for k, (r, g) in enumerate(zip(r_by[n], g_by[n])):
                if g["fwd"] != 0:
                    fail("step %d: forward op %s #%d has Fwd thread id %d" % (s, n, k, g["fwd"]))
                if g["seq"] == r["seq"]:
                    counts["forward equal" if r["seq"] >= 0 else "forward -1"] += 1
                    continue
                if g["seq"] >= 0 or r["seq"] < 0:
                    fail("step %d: %s #%d: torch seq %d, ascbpf %d" % (s, n, k, r["seq"],
                                                                     g["seq"]))
                # torch's peek() of an op that created no node: the counter then
                before = [o["seq"] for st in range(0, s + 1) for o in got[st]
                          if o["seq"] >= 0 and o["fwd"] == 0 and
                          (st < s or o["start"] < g["start"])]
                if not before or r["seq"] != max(before) + 1:
                    fail("step %d: %s #%d: torch seq %d is not the counter at its start "
                         "(last number before it: %s)" % (s, n, k, r["seq"],
                                                          max(before) if before else None))
                counts["forward peek (-1 here)"] += 1
        # every backward node with a number has its forward creator in the same step
        fwd_seqs = set(o["seq"] for o in numbered)
        for o in got[s]:
            if is_node(o["name"]) and o["seq"] >= 0 and o["seq"] not in fwd_seqs:
                fail("step %d: %s seq %d has no forward op" % (s, o["name"], o["seq"]))
    if counts["forward equal"] < 5 * (STEPS - 1):
        fail("too few numbered forward ops agree: %s" % dict(counts))
    return counts


def check_flows(got, flows):
    th = STEPS     # the threaded step
    for f in flows:
        if f["name"] != "fwdbwd" or f["bp"] != "e" or f["ph"] not in ("s", "f") or \
                not isinstance(f["id"], int) or not isinstance(f["ts"], str):
            fail("flow %s is not serialised as torch_npu's" % f)
    by_id = collections.defaultdict(dict)
    for f in flows:
        if f["ph"] in by_id[f["id"]]:
            fail("two %s ends for flow %d" % (f["ph"], f["id"]))
        by_id[f["id"]][f["ph"]] = f
    fwd = {}
    for o in got[th]:
        if o["seq"] >= 0 and o["fwd"] == 0:
            if o["seq"] not in fwd or fwd[o["seq"]]["start"] < o["start"]:
                fwd[o["seq"]] = o
    bwd = {}
    for o in got[th]:
        if o["seq"] >= 0 and o["fwd"] != 0:
            if o["seq"] not in bwd or bwd[o["seq"]]["start"] < o["start"]:
                bwd[o["seq"]] = o
    want = sorted(k for k in fwd if k in bwd)
    if len(want) < 5:
        fail("threaded step: only %d numbered backward nodes" % len(want))
    if sorted(by_id) != want:
        fail("flow ids %s, expected the threaded step's numbers %s" % (sorted(by_id), want))
    for k in want:
        s, f = by_id[k].get("s"), by_id[k].get("f")
        if not s or not f:
            fail("flow %d lacks an end" % k)
        if (s["tid"], s["ts"]) != (fwd[k]["tid"], fwd[k]["ts"]) or \
                (f["tid"], f["ts"]) != (bwd[k]["tid"], bwd[k]["ts"]):
            fail("flow %d: s %s/%s f %s/%s, ops %s %s" % (k, s["tid"], s["ts"], f["tid"],
                                                          f["ts"], fwd[k], bwd[k]))
        if s["tid"] == f["tid"] or not is_node(bwd[k]["name"]):
            fail("flow %d links %s and %s" % (k, fwd[k]["name"], bwd[k]["name"]))
    return len(want)


def main():
    if os.geteuid() != 0:
        fail("needs root (BPF)")
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "fwdbwd_train.py")
        with open(script, "w") as f:
            f.write(SCRIPT)
        ref = reference(tmp, script)
        if sorted(ref) != list(range(1, STEPS)):
            fail("torch.profiler steps %s" % sorted(ref))
        got, flows = traced(tmp, script)
        counts = compare(ref, got)
        nflows = check_flows(got, flows)
        print("steps 1..%d agree with torch.profiler: %s; %d fwdbwd flows in the threaded step"
              % (STEPS - 1, dict(counts), nflows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
