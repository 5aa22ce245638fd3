#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Real PyTorch (framework only, no NPU): `ascbpf trace --activities cpu
--record-shapes -- python3 torch_train.py`, converted, and the output
checked against the capture as test_pytorch_ops.py reads it (its own record
walk, op names from torch's schema registry, not from ascbpf's code) and
against torch.profiler:

* per training step, trace_view.json has exactly the aten ops of the capture
  as cpu_op X events, with torch's names, the same start (wall clock of the
  capture's clock pair) and duration, on the traced thread; the other
  cpu_ops are the backward side: each "autograd::engine::evaluate_function:
  X" range with its node's range X strictly inside it (the node's apply());
* the aten op names per step agree with torch.profiler's run of the same
  script (the differences test_pytorch_ops.py explains are allowed);
* "Input Dims" has, for each tensor argument the capture recorded, that
  tensor's dims in its argument's segment;
* each step (the script's own marks) holds the start of one ProfilerStep#N
  range: the default boundary, the end of optimizer.step();
* operator_details.csv has one row per cpu_op with the same name and host
  total duration; no device files are written for a framework-only capture
  (torch_npu writes no CSV without rows)."""
import collections
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "discovery"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import test_pytorch_ops as tpo  # noqa: E402
from checks import check, failures, us_str  # noqa: E402
EVAL = "autograd::engine::evaluate_function: "


def us(e):
    """[start, end] of an X event in ns."""
    a = int(e["ts"].replace(".", ""))
    return a, a + round(e["dur"] * 1000)


STEP = "ProfilerStep#"


def is_node(name):
    """A backward node's range or its evaluate_function range (not an aten op, nor a
    ProfilerStep#N range)."""
    return not name.startswith("aten::") and not name.startswith(STEP)


def main():
    if os.geteuid() != 0:
        print("needs root (BPF)")
        return 1
    names = tpo.struct_to_name()
    with tempfile.TemporaryDirectory() as tmp:
        ref = tpo.run_reference(tmp)
        outdir = os.path.join(tmp, "trace")
        stepsf = os.path.join(tmp, "steps.txt")
        cmd = [tpo.ASCBPF, "trace", "-o", outdir, "--activities", "cpu", "--record-shapes",
               "--", tpo.PY, tpo.TRAIN, "--steps", str(tpo.STEPS), "--steps-file", stepsf]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=280)
        print(r.stderr.strip()[-2000:])
        if not check(r.returncode == 0, "ascbpf trace exited %d" % r.returncode):
            return 1
        caps = [f for f in os.listdir(outdir) if f.endswith(".cap")]
        runs = [f for f in os.listdir(outdir) if f.endswith("_ascend_pt")]
        if not check(len(caps) == 1 and len(runs) == 1, "one capture and one run: %s" %
                     os.listdir(outdir)):
            return 1
        d = subprocess.run([tpo.ASCBPF, "dump", "--json", os.path.join(outdir, caps[0])],
                           capture_output=True, text=True, check=True)
        recs = [json.loads(l) for l in d.stdout.splitlines() if l.strip()]
        marks = []
        with open(stepsf) as f:
            for line in f:
                i, a, b = line.split()
                marks.append((int(i), int(a), int(b)))
        got = tpo.ascbpf_ops(recs, marks, names)
        clock = next(x for x in recs if x["type"] == "clock")
        off = clock["realtime_ns"] - clock["ts_ns"]
        pid = recs[0]["tgid"]

        po = os.path.join(outdir, runs[0], "ASCEND_PROFILER_OUTPUT")
        files = sorted(os.listdir(po))
        check(files == ["operator_details.csv", "trace_view.json"],
              "framework-only output files: %s" % files)
        text = open(os.path.join(po, "trace_view.json"), encoding="utf-8").read()
        events = json.loads(text)
        check(text == json.dumps(events, ensure_ascii=False),
              "framework-only trace_view.json is one json.dumps list (no seam)")
        ops = [e for e in events if e.get("cat") == "cpu_op"]
        check(all(e["pid"] == pid for e in ops), "cpu_op pid is the OS pid")
        for s, a, b in marks:
            want = sorted((o["name"], us_str(o["start"] + off), o["end"] - o["start"])
                          for o in got[s])
            in_step = [e for e in ops if a + off <= int(e["ts"].replace(".", "")) <= b + off]
            have = sorted((e["name"], e["ts"], round(e["dur"] * 1000)) for e in in_step
                          if e["name"].startswith("aten::"))
            # the backward side (test_pytorch_seqnr.py checks its numbers against
            # torch.profiler): each evaluate_function range holds its node's range
            # (the node's apply(), strictly inside)
            # the default step boundary, the end of optimizer.step(), is stamped at the
            # next aten op: the first of this step's forward (the script's warm-up step
            # before the measured ones ends step 0), so each window holds the start of
            # exactly one ProfilerStep#N range
            steps = [e for e in in_step if e["name"].startswith(STEP)]
            check(len(steps) == 1, "step %d: ProfilerStep ranges starting in it: %s" %
                  (s, [e["name"] for e in steps]))
            evals = [e for e in in_step if e["name"].startswith(EVAL)]
            nodes = [e for e in in_step if is_node(e["name"]) and not e["name"].startswith(EVAL)]

            def inside(n, e):
                a, b = us(e), us(n)
                return n["tid"] == e["tid"] and n["name"] == e["name"][len(EVAL):] and \
                    a[0] < b[0] and b[1] < a[1]
            check(len(evals) >= 4 and len(nodes) == len(evals) and
                  all(sum(1 for n in nodes if inside(n, e)) == 1 for e in evals),
                  "step %d: %d evaluate_function ranges, %d node ranges, not nested 1:1" %
                  (s, len(evals), len(nodes)))
            check(want == have, "step %d: %d ops in the capture, %d in trace_view (first "
                  "difference %s)" % (s, len(want), len(have),
                                      next((x for x in zip(want, have) if x[0] != x[1]), None)))
            if s in ref:
                rc = collections.Counter(o["name"] for o in ref[s])
                gc = collections.Counter(n for n, _, _ in have)
                for name in set(rc) | set(gc):
                    lo = tpo.EXPECTED_DIFF.get(name, (0, None))[0]
                    # ops torch.profiler may fold into a same-named parent
                    hi = lo + sum(1 for o in got[s] if o["parent"] == name == o["name"])
                    check(lo <= gc[name] - rc[name] <= hi, "step %d: %s: %d converted, %d "
                          "under torch.profiler" % (s, name, gc[name], rc[name]))
        # Input Dims: each recorded tensor argument's dims in its segment
        by_key = {(e["tid"], e["ts"]): e for e in ops}
        shapes = 0
        for s in got:
            for o in got[s]:
                e = by_key.get((o["tid"], us_str(o["start"] + off)))
                if e is None or not o["tensors"]:
                    continue
                segs = e["args"].get("Input Dims", "").split(";\r\n")
                for idx, t in o["tensors"].items():
                    if t["kind"] != 0 or t["ndim"] > 8:
                        continue
                    dims = ",".join(str(x) for x in t["dims"][:t["ndim"]])
                    if check(idx < len(segs), "%s: no segment for argument %d" % (o["name"], idx)):
                        check(segs[idx] == dims or segs[idx].startswith("["),
                              "%s arg %d: %r vs %r" % (o["name"], idx, segs[idx], dims))
                        shapes += 1
        check(shapes > 50, "Input Dims checked for %d tensor arguments" % shapes)
        raw = open(os.path.join(po, "operator_details.csv"), "rb").read()
        rows = list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))
        check(len(rows) - 1 == len([e for e in ops if not e["name"].startswith("ProfilerStep#")]),
              "one operator_details row per cpu_op")
        check(raw.endswith(b"\r\n"), "CRLF rows")
        total = sum(len(got[s]) for s in got)
        print("%d aten ops checked, %d tensor arguments" % (total, shapes))
    print("%d checks failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
