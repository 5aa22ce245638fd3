#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Real traces of npu_train scenarios at --level 0, 1 and 2 (`ascbpf trace
--level N --profile-memory -- npu_train --scenario S` on a private
npu-modeld), the converted output checked against npu_model's journal and
the format (docs/torch_npu_format.md; the real sample's headers in
tests/data/torch_npu_format):

* files: Level0 writes no op_statistic / api_statistic, Level1/2 do;
  kernel_details has the reference's Level0 columns at Level0 and the
  sample's columns at Level1/2; every CSV ends its lines with CRLF;
* trace_view.json: json.dumps serialised on one line with one '},{' seam;
  Level0 has no CANN process and no AscendCL@/Runtime@ events, Level1 has
  AscendCL@ and no Runtime@, Level2 both;
* kernel names: at Level1/2 every kernel_details row (step, stream, task)
  is named by the journal's `kernel` of that task (the real kernel name the
  runtime registered: FUNCNAME records joined through the launch call); at
  Level0, where launches are not probed, rows keep the op-type fallback,
  and their Types are the same as at Level1 (the Dequeue path alone);
* the Level0 join: every compute kernel the journal chain ties to an aten op
  (task -> AsncExecFunc -> dequeue corr -> enqueue -> at::_ops call) has a
  torch_to_npu flow starting at a cpu_op, at every level alike, and the
  operator_details device time is the sum of the kernel durations;
* batched submissions (launch-storm: 32 launches' SQEs per halSqTaskSend): at
  Level1/2 every kernel keeps its own name and op as above; at Level0, where
  no launch is probed, a batch of several slots cannot be split among them:
  those kernels keep the name the slots share and no op, and convert says
  how many (their count + the joined ones = Level1's flows)."""
import re
import collections
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from checks import check, failures  # noqa: E402
import torch_npu_format as fmt  # noqa: E402

# Not here: multi-rank (one process per rank: test_trace_ranks.py).
SCENARIOS = ["baseline", "transdata", "multi-stream", "mem-growth", "dispatch-bound", "oom",
             "native-optimizer", "fused-optimizer", "launch-storm"]
UNJOINED_RE = re.compile(r"(\d+) kernels of batched submissions")
COMPUTE = {"0", "1", "2"}
TOP = os.environ.get("ASCBPF_TOP", os.path.join(os.path.dirname(__file__), "..", ".."))


def trace(scenario, level, d):
    """Traces one run; returns (ASCEND_PROFILER_OUTPUT dir, journal lines, kernels convert
    left without op) or None."""
    t = tc.trace_model(d, "%s L%d" % (scenario, level),
                       ["--level", str(level), "--profile-memory"],
                       ["npu_train", "--scenario", scenario, "--steps", "2"], check)
    if not t:
        return None
    m = UNJOINED_RE.search(t.r.stderr)
    return t.po, t.journal(), int(m.group(1)) if m else 0


def check_level(scenario, level, po, jl, unjoined):
    S = "%s L%d: " % (scenario, level)
    check(unjoined == 0 or (level == 0 and scenario == "launch-storm"),
          S + "%d kernels of batched submissions left without op" % unjoined)
    files = set(os.listdir(po))
    stats = {"op_statistic.csv", "api_statistic.csv"}
    if level == 0:
        check(not stats & files, S + "no statistics at Level0: %s" % sorted(files))
    else:
        check(stats <= files, S + "statistics at Level1/2: %s" % sorted(files))
    for f in files:
        if f.endswith(".csv"):
            raw = open(os.path.join(po, f), "rb").read()
            check(raw.endswith(b"\r\n") and raw.count(b"\n") == raw.count(b"\r\n"),
                  S + f + " CRLF line ends")
    raw, hdr, rows = tc.read_csv(os.path.join(po, "kernel_details.csv"))
    want_hdr = fmt.header("kernel_details.csv", level)
    check(",".join(hdr) == want_hdr, S + "kernel_details header %s" % ",".join(hdr)[:80])
    check(raw.count(b"\r\n") == len(rows) + 1, S + "no kernel_details cell spans lines")

    text = open(os.path.join(po, "trace_view.json"), encoding="utf-8").read()
    events = json.loads(text)
    check("\n" not in text and text.count("},{") == 1 and
          text.replace("},{", "}, {") == json.dumps(events, ensure_ascii=False),
          S + "trace_view.json serialisation")
    procs = set(e["args"]["name"] for e in events if e.get("ph") == "M" and
                e["name"] == "process_name")
    acl = any(e.get("name", "").startswith("AscendCL@") for e in events)
    rt = any(e.get("name", "").startswith("Runtime@") for e in events)
    check(("CANN" in procs) == (level > 0), S + "CANN process %s" % sorted(procs))
    check(acl == (level > 0) and rt == (level == 2),
          S + "AscendCL@ %s, Runtime@ %s" % (acl, rt))

    # kernel names against the journal's tasks (stream, task id) in order
    tasks = collections.defaultdict(list)
    for k, x in jl:
        if k == "task" and x["sqe_type"] in COMPUTE:
            tasks[(x["stream"], x["task"])].append(x)
    col = {h: i for i, h in enumerate(hdr)}
    seen = collections.Counter()
    named = 0
    types = []
    for r in rows:
        types.append((r[col["Type"]], r[col["Accelerator Core"]]))
        if level == 0:
            continue
        key = (r[col["Stream ID"]], r[col["Task ID"]])
        lst = tasks.get(key, [])
        i = seen[key]
        seen[key] += 1
        if check(i < len(lst), S + "row %s without a journal task" % (key,)):
            named += check(r[col["Name"]] == lst[i]["kernel"],
                           S + "kernel %s/%s named %r, journal %r" %
                           (key[0], key[1], r[col["Name"]], lst[i]["kernel"]))
    if level > 0:
        check(named == len(rows) and rows, S + "%d of %d kernels by their real name" %
              (named, len(rows)))

    # the aten join at every level: torch_to_npu flows start at cpu_op events
    cpu = {(e["tid"], e["ts"]) for e in events if e.get("cat") == "cpu_op"}
    flows = [e for e in events if e.get("cat") == "async_npu" and e["ph"] == "s"]
    check((flows or unjoined) and all((e["tid"], e["ts"]) in cpu for e in flows),
          S + "torch_to_npu flows start at cpu_op events (%d)" % len(flows))
    check(len(flows) + unjoined <= len(rows), S + "%d flows + %d unjoined <= %d kernels" %
          (len(flows), unjoined, len(rows)))
    # operator_details device totals: the sum over the ops' own kernels
    _, ohdr, orows = tc.read_csv(os.path.join(po, "operator_details.csv"))
    dev_self = sum(float(r[5]) for r in orows)
    ks = [float(r[col["Duration(us)"]]) for r in rows]
    check((dev_self > 0 or unjoined == len(rows)) and dev_self <= sum(ks) + 0.01 * len(ks),
          S + "operator_details device self %.3f vs kernels %.3f" % (dev_self, sum(ks)))
    return sorted(types), len(flows), unjoined


def main():
    for sc in SCENARIOS:
        per_level = {}
        for level in (0, 1, 2):
            d = tc.workdir()
            try:
                got = trace(sc, level, d)
                if got:
                    per_level[level] = check_level(sc, level, *got)
            finally:
                shutil.rmtree(d, ignore_errors=True)
        if len(per_level) == 3:
            check(per_level[0][0] == per_level[1][0] == per_level[2][0],
                  "%s: kernel Types and cores are the same at every level" % sc)
            check(per_level[0][1] + per_level[0][2] == per_level[1][1] == per_level[2][1],
                  "%s: torch_to_npu flows %s (+ %d unjoined at Level0) at levels 0/1/2" %
                  (sc, [per_level[x][1] for x in (0, 1, 2)], per_level[0][2]))
            print("%s: %d kernels, %d torch_to_npu flows at each level" %
                  (sc, len(per_level[0][0]), per_level[0][1]))
    print("%d checks failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
