#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Tensor shapes, Python stacks and --step-py on real PyTorch, from user memory.

`ascbpf trace --record-shapes --with-stack --step-py train_one_step --
python3 tests/lib/torch_train.py` (the script knows nothing of ascbpf), and
the same with tests/lib/pt_trace (bpf/pytorch.bpf.c alone, attached with
-p to the waiting script).  Checked against PyTorch and Python themselves:

  * shapes: for every aten op both runs have (k-th call of a name in a
    step), every tensor argument ascbpf read has the dims torch.profiler
    (record_shapes=True) recorded for that argument, and its dtype is the
    one torch.profiler names ("float");
  * stacks: every op inside a step has a Python stack whose frames are
    "file(line): function" with torch_train.py's train_one_step at a line of
    its body and run() at the line that calls it (lines from Python's own
    inspect of the script), and torch.nn.Linear.forward at the line of its
    return statement for aten::linear;
  * --step-py train_one_step: one STEP record per call of train_one_step,
    each inside the step's time range (stamped at the step's first aten op),
    consecutive indices (the script's warm-up call counts when traced).
"""
import collections
import inspect
import json
import os
import subprocess
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_pytorch_ops as ops  # noqa: E402  (names, reference run, op trees)

TOP = ops.TOP
PT_TRACE = os.path.join(ops.OUTPUT, "tests", "pt_trace")
TRAIN = ops.TRAIN
STEPS = ops.STEPS


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run_pt_trace(tmp, extra):
    wait = os.path.join(tmp, "go")
    stepsf = os.path.join(tmp, "steps.txt")
    out = os.path.join(tmp, "pt.json")
    py = subprocess.Popen([ops.PY, TRAIN, "--steps", str(STEPS), "--wait-file", wait,
                           "--steps-file", stepsf, "--linger", "0.5"])
    try:
        for _ in range(3000):
            if os.path.exists(wait + ".pid") or py.poll() is not None:
                break
            time.sleep(0.01)
        if not os.path.exists(wait + ".pid"):
            fail("torch_train.py did not start")
        r = subprocess.run([PT_TRACE, "-p", str(py.pid), "--ready", wait, "--json", out] + extra,
                           capture_output=True, text=True, timeout=240)
        print(r.stderr.strip()[-2000:])
        if r.returncode != 0:
            fail("pt_trace exited %d" % r.returncode)
        if py.wait(timeout=120) != 0:
            fail("torch_train.py failed under pt_trace")
    finally:
        if py.poll() is None:
            py.kill()
    with open(out) as f:
        recs = [json.loads(l) for l in f if l.strip()]
    marks = []
    with open(stepsf) as f:
        for line in f:
            i, a, b = line.split()
            marks.append((int(i), int(a), int(b)))
    return recs, marks, r.stderr


def body_lines(fn):
    lines, first = inspect.getsourcelines(fn)
    return set(range(first + 1, first + len(lines)))


def line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    hits = [first + i for i, l in enumerate(lines) if text in l]
    if len(hits) != 1:
        fail("%s: %r found %d times" % (fn.__name__, text, len(hits)))
    return hits[0]


def main():
    if os.geteuid() != 0:
        fail("needs root (BPF)")
    sys.path.insert(0, os.path.join(TOP, "tests", "lib"))
    import torch_train

    names = ops.struct_to_name()
    train_file = os.path.realpath(TRAIN)
    step_lines = body_lines(torch_train.train_one_step)
    run_call = line_of(torch_train.run, "train_one_step(net, opt, x, y)")
    linear_ret = line_of(torch.nn.Linear.forward, "return F.linear")
    linear_file = inspect.getsourcefile(torch.nn.Linear.forward)

    with tempfile.TemporaryDirectory() as tmp:
        ref = ops.run_reference(tmp)
        for tracer in ("ascbpf trace", "pt_trace"):
            sub = os.path.join(tmp, tracer.replace(" ", "_"))
            os.mkdir(sub)
            flags = ["--record-shapes", "--with-stack", "--step-py", "train_one_step"]
            if tracer == "pt_trace":
                recs, marks, _ = run_pt_trace(sub, flags)
            else:
                recs, marks = ops.run_ascbpf(sub, flags)
            print(tracer + ": " + check(recs, marks, ref, names, train_file, step_lines,
                                        run_call, linear_file, linear_ret))
    return 0


def check(recs, marks, ref, names, train_file, step_lines, run_call, linear_file, linear_ret):
    if True:

        # the op trees; TENSOR and PYSTACK records hang on the ENTER with the same
        # (tid, probe id, ts)
        got = ops.ascbpf_ops(recs, marks, names)

        # ---- shapes and dtypes against torch.profiler ----
        checked = dtypes = 0
        for s in range(1, STEPS):
            seen_r, seen_g, by_r = collections.Counter(), collections.Counter(), {}
            for o in ref[s]:
                by_r[(o["name"], seen_r[o["name"]])] = o
                seen_r[o["name"]] += 1
            for g in got[s]:
                key = (g["name"], seen_g[g["name"]])
                seen_g[g["name"]] += 1
                r = by_r.get(key)
                if r is None or g["name"] in ops.EXPECTED_DIFF:
                    continue
                for idx, t in g["tensors"].items():
                    if t["kind"] != 0 or t["flags"] & 2:
                        continue	# undefined / unreadable / element of a Tensor[]
                    if idx >= len(r["input_shapes"]):
                        fail("%s: tensor argument %d, torch.profiler has %d inputs" %
                             (g["name"], idx, len(r["input_shapes"])))
                    if t["dims"] != r["input_shapes"][idx]:
                        fail("step %d: %s #%d arg %d: dims %s under ascbpf, %s under "
                             "torch.profiler" % (s, key[0], key[1], idx, t["dims"],
                                                 r["input_shapes"][idx]))
                    checked += 1
                    rt = r["input_types"]
                    if rt and idx < len(rt) and rt[idx]:
                        if t["dtype_name"] != rt[idx]:
                            fail("%s arg %d: dtype %s under ascbpf, %s under torch.profiler" %
                                 (key[0], idx, t["dtype_name"], rt[idx]))
                        dtypes += 1
        nops = sum(len(got[s]) for s in range(1, STEPS))
        if nops < 50 * (STEPS - 1):
            fail("only %d aten ops in %d steps" % (nops, STEPS - 1))
        if checked < nops:
            fail("only %d tensor arguments compared for %d ops" % (checked, nops))
        if dtypes < checked // 2:
            fail("only %d of %d dtypes compared" % (dtypes, checked))

        # ---- Python stacks against the script's own source ----
        nstack = 0
        for s in range(STEPS):
            for g in got[s]:
                st = g.get("pystack")
                if st is None:
                    fail("step %d: %s has no PYSTACK record" % (s, g["name"]))
                frames = st["frames"]
                where = [i for i, f in enumerate(frames)
                         if f.startswith(train_file + "(") and f.endswith("): train_one_step")]
                if len(where) != 1:
                    fail("%s: stack without one train_one_step frame: %s" % (g["name"], frames))
                i = where[0]
                line = int(frames[i][len(train_file) + 1:].split(")")[0])
                if line not in step_lines:
                    fail("%s: train_one_step at line %d, not in its body %s" %
                         (g["name"], line, sorted(step_lines)))
                if i + 1 >= len(frames) or frames[i + 1] != "%s(%d): run" % (train_file,
                                                                             run_call):
                    fail("%s: caller of train_one_step is %s, want %s(%d): run" %
                         (g["name"], frames[i + 1:i + 2], train_file, run_call))
                if g["name"] == "aten::linear" and g["parent"] is None:
                    want = "%s(%d): forward" % (linear_file, linear_ret)
                    if frames[0] != want:
                        fail("aten::linear innermost frame %s, want %s" % (frames[0], want))
                nstack += 1

        # ---- --step-py ----
        # torch_train.py calls train_one_step once as a warm-up before the measured steps;
        # a tracer attached from the start (ascbpf trace -- CMD) sees that call too
        steps = [r for r in recs if r["type"] == "step"]
        warm = [r for r in steps if r["ts_ns"] < marks[0][1]]
        if len(warm) > 1 or [r["step"] for r in steps] != list(range(len(steps))):
            fail("--step-py steps %s" % [(r["step"], r["ts_ns"]) for r in steps])
        steps = steps[len(warm):]
        # a boundary is the end of a train_one_step call, stamped at the next aten op: the
        # first of the next call (docs/trace.md "Step defaults"); the last call's end gives
        # one only if an aten op follows it
        if len(steps) not in (STEPS - 1, STEPS):
            fail("--step-py: %d boundaries in %d steps: %s, marks %s" %
                 (len(steps), STEPS, [(r["step"], r["ts_ns"]) for r in steps], marks))
        at = 1 if steps and steps[0]["ts_ns"] > marks[0][2] else 0
        for r, (i, a, b) in zip(steps, marks[at:]):
            if not a <= r["ts_ns"] <= b:
                fail("step %d boundary at %d, outside call %d [%d, %d]" %
                     (r["step"], r["ts_ns"], i, a, b))
        return ("%d tensor arguments (%d dtypes) agree with torch.profiler; %d Python stacks "
                "match the source; %d --step-py boundaries" % (checked, dtypes, nstack,
                                                               len(steps)))


if __name__ == "__main__":
    sys.exit(main())
