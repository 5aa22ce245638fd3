# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""--activities cpu / npu (torch_npu.profiler's ProfilerActivity.CPU / NPU),
`ascbpf trace --level 1 -- npu_train --scenario baseline` on a private
npu-modeld, each capture against the journal and its converted output read
with json:

* npu: the CANN calls of every probed function are all there (counts equal
  the journal's per function) with their SQE and device records (one DEVTASK
  per journal exec line of the process); nothing of the framework layer but
  the step hook (no aten op, queue, op name or sequence-number record); the
  output has kernel_details.csv and no cpu_op but the ProfilerStep#N ranges;
* cpu: the framework layer only: the queue records equal the journal's
  queue lines, no CANN or driver call, no SQE, no device record or clock;
  the output has operator_details.csv, cpu_op events, and no device file
  (kernel_details.csv) or Ascend Hardware process.
"""
import collections
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402


def strict(cond, msg):
    tc.check(cond, msg)		# trace_model's check: this test stops at the first failure
    return True


def trace(act):
    d = tc.workdir()
    try:
        t = tc.trace_model(d, act, ["--level", "1", "--activities", act],
                           ["npu_train", "--scenario", "baseline", "--steps", 3], strict,
                           device_journal=True)
        files = set(os.listdir(t.po))
        events = json.load(open(os.path.join(t.po, "trace_view.json")))
        return t.recs, t.journal(), t.execs, files, events
    finally:
        shutil.rmtree(d, ignore_errors=True)


def layers(recs):
    probes = {p["probe_id"]: p for p in recs if p["type"] == "probe"}
    by = collections.Counter()
    for r in recs:
        if r["type"] == "enter" and r["probe_id"] in probes:
            by[probes[r["probe_id"]]["layer_name"]] += 1
    return probes, by


# npu
recs, j, execs, files, events = trace("npu")
probes, by = layers(recs)
types = collections.Counter(r["type"] for r in recs)
fw = [p for p in probes.values() if p["layer_name"] == "framework"]
tc.check(all(p["kind_name"] == "step" for p in fw), "npu: framework probes %s" %
         [(p["symbol"], p["kind_name"]) for p in fw])
for t in ("queue", "opname", "seqnr", "tensor", "pystack"):
    tc.check(types[t] == 0, "npu: %d %s records" % (types[t], t))
# node launches (aclop / AI CPU runtime launch calls) are LAUNCH records, not ENTERs
names = {p["probe_id"]: p["symbol"] for p in probes.values() if p["layer_name"] == "cann"}
cn = collections.Counter(names[r["probe_id"]] for r in recs
                         if (r["type"] == "enter" or (r["type"] == "launch" and r["side"] == 0))
                         and r["probe_id"] in names)
jn = collections.Counter(x["name"] for k, x in j if k == "api" and x["name"] in set(names.values()))
tc.check(cn and cn == jn, "npu: CANN calls differ from the journal: %s / %s" %
         (list((jn - cn).items())[:3], list((cn - jn).items())[:3]))
mine = execs		# the traced process's exec lines (trace_model)
tc.check(types["devtask"] == len(mine) > 0 and types["sqe"] > 0,
         "npu: %d DEVTASK for %d executed tasks, %d SQE" %
         (types["devtask"], len(mine), types["sqe"]))
tc.check("kernel_details.csv" in files, "npu: files %s" % sorted(files))
cpu_ops = [e["name"] for e in events if e.get("cat") == "cpu_op"]
tc.check(all(n.startswith("ProfilerStep#") for n in cpu_ops), "npu: cpu_ops %s" % cpu_ops[:5])
print("npu: %d CANN calls as the journal, %d device records, framework only the step hook" %
      (sum(cn.values()), types["devtask"]))

# cpu
recs, j, execs, files, events = trace("cpu")
probes, by = layers(recs)
types = collections.Counter(r["type"] for r in recs)
tc.check(set(by) == {"framework"}, "cpu: calls of layers %s" % dict(by))
for t in ("sqe", "devtask", "devclock", "ioctl", "fdbind", "funcname"):
    tc.check(types[t] == 0, "cpu: %d %s records" % (types[t], t))
jq = sum(1 for k, x in j if k == "queue")
tc.check(types["queue"] == jq > 0, "cpu: %d queue records, journal %d" % (types["queue"], jq))
tc.check("operator_details.csv" in files and "kernel_details.csv" not in files,
         "cpu: files %s" % sorted(files))
procs = {e["args"]["name"] for e in events
         if e.get("ph") == "M" and e.get("name") == "process_name"}
tc.check("Ascend Hardware" not in procs and any(e.get("cat") == "cpu_op" for e in events),
         "cpu: processes %s" % sorted(procs))
print("cpu: %d queue records as the journal, no CANN/driver/device record" % types["queue"])
print("PASS")
