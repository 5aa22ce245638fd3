#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Step boundaries a real job has without being changed, with no step option
(issue 14 item 4), against the journal (whose `step` line is written where
the job's optimizer step returns, npu_model/JOURNAL.md).  As torch_npu
numbers them, step 0 runs from the start of the trace (ProfilerStep#0 from
profile.start()) and the end of the optimizer step of iteration N (where a
job calls prof.step()) ends step N and starts N + 1:

* npu_train (a C++ job): the return of its optimizer's step,
  torch::optim::AdamW::step() of libtorch_cpu.so (the probe table's default
  step site, not a torch_npu export): STEP 0 of no probe before the first
  journal line, then one STEP record per journal step line, numbered 1..N as
  the lines, each on the line's thread, stamped at the call's return (at or
  after the journal t, written just before it returns, within the
  single-event tolerance), from that probe;
* the same with --schedule wait=1,active=1,repeat=1: the aten calls captured
  are exactly the journal's between step lines 1 and 2 (step 1 recorded:
  the second iteration's forward, backward and optimizer);
* train.py on real PyTorch (python3 + our torch_npu, two optimizers: Adam
  and torch_npu.optim.NpuFusedAdamW): optimizer.step() found from outside,
  STEP 0, then one STEP record per journal step line, numbered as the lines,
  each after its line (written right after opt.step() returns; the boundary
  is stamped at the next aten op) and before the next one.
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon  # noqa: E402

STEPS = 5
OPTIM_STEP = "_ZN5torch5optim*4stepESt8functionIFN2at6TensorEvEE"
TRAIN_PY = os.path.join(tc.TOP, "npu_model", "workloads", "python", "train.py")
PYPKG = os.path.join(tc.OUTPUT, "npu_model", "python")


def check(cond, msg):
    """tc.check (exits on a failure) with the condition returned, as trace_model wants."""
    tc.check(cond, msg)
    return True


def journal_steps(jl):
    return [(int(x["tid"]), int(x["t"]), int(x["step"])) for k, x in jl if k == "step"]


def check_numbered(what, steps, js):
    """STEP 0 (of no probe, before the first line), then one per journal line, numbered
    as the lines (1..N: the step each starts)."""
    tc.check(len(js) == STEPS and [s for _, _, s in js] == list(range(1, STEPS + 1)),
             "%s: journal step lines %s" % (what, js))
    tc.check([s["step"] for s in steps] == list(range(len(js) + 1)),
             "%s: STEP indices %s, journal %d lines" %
             (what, [s["step"] for s in steps], len(js)))
    tc.check(steps[0]["probe_id"] == 0 and steps[0]["ts_ns"] < js[0][1],
             "%s: step 0 from probe %d at %d, first line %d" %
             (what, steps[0]["probe_id"], steps[0]["ts_ns"], js[0][1]))


def npu_train(d):
    t = tc.trace_model(d, "npu_train", ["--level", "0", "--no-convert"],
                       ["npu_train", "--scenario", "native-optimizer", "--steps", STEPS],
                       check, runs=0)
    if not t:
        return
    recs, jl = t.recs, t.journal()
    probes = {p["probe_id"]: p for p in recs if p["type"] == "probe"}
    steps = [x for x in recs if x["type"] == "step"]
    js = journal_steps(jl)
    check_numbered("npu_train", steps, js)
    for s, (tid, jt, _) in zip(steps[1:], js):
        sym = probes.get(s["probe_id"], {}).get("symbol", "?")
        tc.check(sym == "_ZN5torch5optim5AdamW4stepESt8functionIFN2at6TensorEvEE",
                 "npu_train step %d from probe %s" % (s["step"], sym))
        tc.check(s["tid"] == tid and jt <= s["ts_ns"] <= jt + tc.TOLERANCE_NS,
                 "npu_train step %d at %d tid %d, journal t %d tid %d" %
                 (s["step"], s["ts_ns"], s["tid"], jt, tid))
    print("npu_train: %d STEP records at torch::optim::AdamW::step's return, as the journal" %
          len(steps))


def npu_train_schedule(d):
    t = tc.trace_model(d, "schedule", ["--level", "0", "--no-convert",
                                       "--schedule", "wait=1,active=1,repeat=1"],
                       ["npu_train", "--scenario", "native-optimizer", "--steps", STEPS],
                       check, runs=0)
    if not t:
        return
    recs, jl = t.recs, t.journal()
    probed = {p["symbol"] for p in recs if p["type"] == "probe"}
    js = [jt for _, jt, _ in journal_steps(jl)]
    tc.check(len(js) == STEPS, "schedule: %d journal steps" % len(js))
    # step k >= 1 runs from line k (js[k - 1]) to line k + 1: wait=1,active=1: step 1
    want = [(x["name"], int(x["tid"]), int(x["t0"]), int(x["t1"]), x) for k, x in jl
            if k == "api" and x["name"].startswith("_ZN2at4_ops") and x["name"] in probed and
            js[0] < int(x["t0"]) and int(x["t1"]) < js[1]]
    ccalls, unpaired = tc.calls(recs)
    got = [c for c in ccalls if c[0].startswith("_ZN2at4_ops")]
    tc.check(want, "schedule: no journal aten call in step 1")
    tc.check(len(got) == len(want), "schedule: capture %d aten calls, journal %d in step 1" %
             (len(got), len(want)))
    tc.match_calls(want, got)
    print("schedule over the default steps: step 1 recorded, %d aten calls match" % len(got))


def python_job(d, scenario):
    jdir = os.path.join(d, "pyjournal." + scenario)
    out = os.path.join(d, "pyout." + scenario)
    os.mkdir(jdir)
    with ModelDaemon(cards=1, journal=True) as m:
        env = m.env(NPU_MODEL_JOURNAL=jdir, PYTHONPATH=PYPKG)
        r = tc.run_ascbpf(["trace", "--level", "0", "--no-convert", "-o", out, "--",
                           "/usr/bin/python3", TRAIN_PY, "--scenario", scenario,
                           "--steps", str(STEPS)], env=env, timeout=280)
    tc.check(r.returncode == 0, "%s: trace exited %d: %s" %
             (scenario, r.returncode, r.stderr[-500:]))
    caps = [f for f in os.listdir(out) if f.endswith(".cap")]
    tc.check(len(caps) == 1, "%s: captures %s" % (scenario, caps))
    recs = tc.records(os.path.join(out, caps[0]))
    jl = tc.process_journal(jdir, recs[0]["tgid"])
    steps = [x for x in recs if x["type"] == "step"]
    js = journal_steps(jl)
    check_numbered(scenario, steps, js)
    ends = [jt for _, jt, _ in js[1:]] + [None]
    for s, (tid, jt, _), nxt in zip(steps[1:], js, ends):
        tc.check(s["tid"] == tid and jt <= s["ts_ns"] and (nxt is None or s["ts_ns"] < nxt),
                 "%s step %d at %d tid %d, journal t %d tid %d, next %s" %
                 (scenario, s["step"], s["ts_ns"], s["tid"], jt, tid, nxt))
    print("%s (python3): %d STEP records at optimizer.step()'s return, as the journal" %
          (scenario, len(steps)))


d = tc.workdir()
try:
    for sub, fn in (("a", npu_train), ("b", npu_train_schedule)):
        os.mkdir(os.path.join(d, sub))
        fn(os.path.join(d, sub))
    python_job(d, "baseline")
    python_job(d, "fused-optimizer")
    print("PASS")
finally:
    shutil.rmtree(d, ignore_errors=True)
