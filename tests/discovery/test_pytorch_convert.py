#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A real-PyTorch trace converts to a framework-only *_ascend_pt directory.

`ascbpf trace --activities cpu --record-shapes --with-stack -- python3
tests/lib/torch_train.py` (converted as it ends) must give, per the reference
conventions (docs/torch_npu_format.md §3, §4):

  * trace_view.json: one "X" cpu_op event per aten call of the capture, with
    the same names; "Input Dims"/"Input type" for ops with tensor arguments
    and "Call stack" frames "file(line): func" joined by ";\\r\\n"; for ops
    whose inputs are all tensors, Input Dims equal torch.profiler's
    record_shapes dims of the same call; no device rows (every event is
    the traced process's);
  * operator_details.csv: the reference header, one row per aten call,
    "Input Shapes" / "Call Stack" equal to the event's Input Dims / Call stack.
"""
import collections
import csv
import glob
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_pytorch_ops as ops  # noqa: E402

# operator_details.csv header of torch_npu (reference sample and format notes)
OPDETAILS_HEADER = ["Name", "Input Shapes", "Call Stack", "Host Self Duration(us)",
                    "Host Total Duration(us)", "Device Self Duration(us)",
                    "Device Total Duration(us)", "Device Self Duration With AICore(us)",
                    "Device Total Duration With AICore(us)"]


# torch.profiler's input types of tensors (caffe2 TypeMeta names)
DTYPES = {"float", "double", "c10::Half", "c10::BFloat16", "long int", "int", "short int",
          "signed char", "unsigned char", "bool"}


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    if os.geteuid() != 0:
        fail("needs root (BPF)")
    names = ops.struct_to_name()
    with tempfile.TemporaryDirectory() as tmp:
        ref = ops.run_reference(tmp)
        recs, marks, outdir = ops.run_ascbpf(tmp, ["--record-shapes", "--with-stack"],
                                             convert=True)
        pid = next(r["tgid"] for r in recs if r["type"] == "process")
        probes = {r["probe_id"]: names.get(ops.aten_struct(r["symbol"]))
                  for r in recs if r["type"] == "probe" and r.get("kind_name") == "aten_op"}
        calls = collections.Counter(probes[r["probe_id"]] for r in recs
                                    if r["type"] == "enter" and r["probe_id"] in probes)
        dirs = glob.glob(os.path.join(outdir, "*_ascend_pt"))
        if len(dirs) != 1:
            fail("expected one *_ascend_pt directory in %s, found %s" % (outdir, dirs))
        out = os.path.join(dirs[0], "ASCEND_PROFILER_OUTPUT")

        with open(os.path.join(out, "trace_view.json")) as f:
            tv = json.load(f)
        events = tv if isinstance(tv, list) else tv["traceEvents"]
        aten = [e for e in events if e.get("ph") == "X" and e["name"].startswith("aten::")]
        got = collections.Counter(e["name"] for e in aten)
        if got != calls:
            fail("trace_view aten events %s differ from the capture's calls %s" %
                 (sorted((got - calls).items())[:5], sorted((calls - got).items())[:5]))
        for e in events:
            if e.get("pid") not in (pid, str(pid)):
                fail("event of another process (device row?): %s" % e)
        with_dims = with_stack = 0
        for e in aten:
            a = e.get("args", {})
            if e.get("cat") != "cpu_op" or "Sequence number" not in a or "Fwd thread id" not in a:
                fail("not a framework cpu_op event: %s" % e)
            if "Input Dims" in a:
                with_dims += 1
                if "Input type" not in a or a["Input Dims"].count(";\r\n") != \
                        a["Input type"].count(";\r\n"):
                    fail("Input Dims and Input type disagree: %s" % a)
            if "Call stack" in a:
                with_stack += 1
                for fr in a["Call stack"].split(";\r\n"):
                    if "(" not in fr or "): " not in fr:
                        fail("call stack frame %r is not file(line): func" % fr)
        if with_dims < len(aten) * 3 // 4 or with_stack < len(aten) * 3 // 4:
            fail("only %d Input Dims and %d Call stack args for %d aten events" %
                 (with_dims, with_stack, len(aten)))

        # Input Dims of ops whose inputs are all tensors, against torch.profiler
        # trace_view ts is wall-clock us; the step marks are CLOCK_MONOTONIC ns: the
        # capture's CLOCK record pairs the two clocks
        clk = next(r for r in recs if r["type"] == "clock" and r["which"] == 0)
        off_us = (clk["realtime_ns"] - clk["ts_ns"]) / 1000.0
        steps = []
        for i, a, b in marks:
            lo, hi = a / 1000.0 + off_us, b / 1000.0 + off_us
            steps.append(sorted((e for e in aten if lo <= float(e["ts"]) <= hi),
                                key=lambda e: float(e["ts"])))
        compared = 0
        for s in range(1, ops.STEPS):
            seen_r, seen_g, by_r = collections.Counter(), collections.Counter(), {}
            for o in ref[s]:
                by_r[(o["name"], seen_r[o["name"]])] = o
                seen_r[o["name"]] += 1
            for e in steps[s]:
                key = (e["name"], seen_g[e["name"]])
                seen_g[e["name"]] += 1
                r = by_r.get(key)
                if r is None or e["name"] in ops.EXPECTED_DIFF or not r["input_shapes"]:
                    continue
                if not r["input_types"] or not all(t in DTYPES for t in r["input_types"]):
                    continue	# a non-tensor input (Scalar, TensorList, None, ...)
                want = ";\r\n".join(",".join(str(d) for d in sh) for sh in r["input_shapes"])
                if e["args"].get("Input Dims") != want:
                    fail("step %d %s #%d: Input Dims %r, torch.profiler %r" %
                         (s, key[0], key[1], e["args"].get("Input Dims"), want))
                compared += 1
        if compared < 10 * (ops.STEPS - 1):
            fail("only %d all-tensor ops compared" % compared)

        with open(os.path.join(out, "operator_details.csv"), newline="") as f:
            rows = list(csv.reader(f))
        if rows[0] != OPDETAILS_HEADER:
            fail("operator_details.csv header %s" % rows[0])
        body = [dict(zip(rows[0], r)) for r in rows[1:]]
        if collections.Counter(r["Name"] for r in body if r["Name"].startswith("aten::")) \
                != calls:
            fail("operator_details.csv rows differ from the capture's aten calls")
        by_shape = collections.Counter((e["name"], e["args"].get("Input Dims", ""),
                                        e["args"].get("Call stack", "")) for e in aten)
        rows_shape = collections.Counter((r["Name"], r["Input Shapes"], r["Call Stack"])
                                         for r in body if r["Name"].startswith("aten::"))
        if by_shape != rows_shape:
            diff = list((rows_shape - by_shape).items())[:2]
            fail("operator_details.csv Input Shapes / Call Stack differ from trace_view: %s" %
                 diff)
        print("%d aten events and %d operator_details rows; %d Input Dims equal torch.profiler's"
              % (len(aten), len(body), compared))
    return 0


if __name__ == "__main__":
    sys.exit(main())
