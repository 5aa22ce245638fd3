#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""tools/demo.sh (what `make demo` runs after the build) in this tree: it starts the Python
job (train.py on real PyTorch with the model's torch_npu) and attaches by PID.  Checked:

* demo.sh exits 0, says it traced pid N with `ascbpf trace -p`, and N was a /usr/bin/python3
  running train.py (the *_ascend_pt directory is named after N: {worker}_{N}_{stamp});
* the output opens as a torch_npu profiler output: every CSV has torch_npu's header row
  (tests/data/torch_npu_format) and CRLF line ends, rows as wide as the header;
  trace_view.json is a JSON list; profiler_info*.json parses;
* it is the Python job's trace: aten ops in trace_view.json carry "Call stack" frames of
  train.py's train_one_step and "Input Dims"; operator_details.csv's Call Stack column names
  train_one_step; step_trace_time.csv has the schedule's active steps (2).
The tracer's own correctness is the trace/ and convert/ rooms' business.
"""
import csv
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import torch_npu_format as fmt  # noqa: E402
from checks import check, failures  # noqa: E402

OUTPUT = os.environ.get("OUTPUT", os.path.join(TOP, "build"))


def main():
    if os.geteuid() != 0:
        print("FAIL: needs root (BPF, FUSE)")
        return 1
    with tempfile.TemporaryDirectory() as res:
        r = subprocess.run([os.path.join(TOP, "tools", "demo.sh")], capture_output=True,
                           text=True, timeout=400,
                           env=dict(os.environ, OUTPUT=os.path.abspath(OUTPUT),
                                    ASCBPF_DEMO_RESULT=res))
        print(r.stdout[-3000:], r.stderr[-3000:])
        check(r.returncode == 0, "demo.sh exited %d" % r.returncode)
        m = re.search(r"demo: tracing pid (\d+)", r.stdout)
        if not check(m, "demo.sh did not trace a pid"):
            return 1
        pid = m.group(1)
        runs = glob.glob(os.path.join(res, "*_%s_*_ascend_pt" % pid))
        if not check(len(runs) == 1, "runs of pid %s: %s" % (pid, os.listdir(res))):
            return 1
        log = open("/run/ascbpf-demo/job.log").read()
        check("train.py: scenario=baseline" in log, "the job's log: %r" % log[-300:])
        out = os.path.join(runs[0], "ASCEND_PROFILER_OUTPUT")
        for f in sorted(os.listdir(out)):
            path = os.path.join(out, f)
            if not f.endswith(".csv"):
                continue
            raw = open(path, newline="").read()
            rows = list(csv.reader(raw.splitlines()))
            check(raw.endswith("\r\n") and "\n" not in raw.replace("\r\n", ""),
                  "%s: lines must end with CRLF" % f)
            head = raw.split("\r\n", 1)[0]
            check(head == fmt.header(f, 1), "%s: header %r, torch_npu's %r" %
                  (f, head, fmt.header(f, 1)))
            check(len(rows) >= 2 and all(len(x) == len(rows[0]) for x in rows),
                  "%s: no data rows or ragged rows" % f)
        info = glob.glob(os.path.join(runs[0], "profiler_info*.json"))
        check(len(info) == 1 and json.load(open(info[0])), "profiler_info: %s" % info)
        events = json.load(open(os.path.join(out, "trace_view.json")))
        check(isinstance(events, list) and events, "trace_view.json is not a list of events")
        ops = [e for e in events if e.get("ph") == "X" and e.get("name", "").startswith("aten::")]
        stacks = [e for e in ops if "train_one_step" in e.get("args", {}).get("Call stack", "")]
        dims = [e for e in ops if e.get("args", {}).get("Input Dims")]
        check(stacks and dims, "aten ops %d: %d with train_one_step stacks, %d with Input Dims" %
              (len(ops), len(stacks), len(dims)))
        with open(os.path.join(out, "operator_details.csv"), newline="") as f:
            det = list(csv.DictReader(f))
        check(any("train_one_step" in (x.get("Call Stack") or "") for x in det),
              "operator_details.csv: no Call Stack through train_one_step")
        with open(os.path.join(out, "step_trace_time.csv"), newline="") as f:
            steps = list(csv.DictReader(f))
        check(len(steps) == 2, "step_trace_time.csv: %d steps, the schedule's active=2" %
              len(steps))
        print("demo: pid %s traced, %d events, %d aten ops with stacks, %d with shapes" %
              (pid, len(events), len(stacks), len(dims)))
    if failures:
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
