# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""trace_view.json's memory counters (issue 4: "counter events for memory"),
end to end against npu_model's journal.

`ascbpf trace --level 1 --profile-memory -- npu_train --scenario mem-growth`
on a private npu-modeld, converted by trace.  The driver-level (APP)
allocations (halMemAlloc / halMemFree, journal `mem component=APP` lines)
made from the first step boundary on must be, in order, the `APP/HBM` "C"
events of the `NPU MEM` process (its name as in the reference's process
table), each with args {"KB": total_reserved / 1024} of that journal line,
ts strings with 3 decimals, and nothing else in that process.  mem-growth
grows device memory every step, so the values differ.  (The sample also has
APP/DDR counters, 0.0 on its card; ascbpf writes none: it cannot know DDR.)
"""
import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402


def strict(cond, msg):
    tc.check(cond, msg)		# trace_model's check: this test stops at the first failure
    return True


d = tc.workdir()
try:
    t = tc.trace_model(d, "mem-growth", ["--level", "1", "--profile-memory"],
                       ["npu_train", "--scenario", "mem-growth", "--steps", 3], strict)
    j = t.journal()
    steps = [0] + sorted(int(x["t"]) for k, x in j if k == "step")
    tc.check(steps, "no step in the journal")
    app = [x for k, x in j if k == "mem" and x["component"] == "APP" and int(x["t"]) >= steps[0]]
    app.sort(key=lambda x: int(x["t"]))
    tc.check(len(app) >= 3, "only %d APP events in the steps" % len(app))
    ev = json.load(open(os.path.join(t.po, "trace_view.json")))
    mem_pid = [e["pid"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name" and
               e["args"].get("name") == "NPU MEM"]
    tc.check(len(mem_pid) == 1, "NPU MEM process_name events: %d" % len(mem_pid))
    in_proc = [e for e in ev if e.get("pid") == mem_pid[0] and e.get("ph") != "M"]
    tc.check(all(e.get("ph") == "C" and e.get("name") == "APP/HBM" for e in in_proc),
             "other events in NPU MEM: %s" % {(e.get("ph"), e.get("name")) for e in in_proc})
    for e in in_proc:
        tc.check(isinstance(e["ts"], str) and re.fullmatch(r"\d+\.\d{3}", e["ts"]) and
                 list(e["args"]) == ["KB"], "counter serialisation %s" % e)
    in_proc.sort(key=lambda e: tuple(int(p) for p in e["ts"].split(".")))
    got = [round(e["args"]["KB"] * 1024) for e in in_proc]
    want = [int(x["total_reserved"]) for x in app]
    tc.check(got == want, "APP/HBM counters (bytes) %s, journal totals %s" % (got[:8], want[:8]))
    tc.check(len(set(want)) > 1, "the totals never changed: the scenario did not grow")
    print("PASS: %d APP/HBM counters equal the journal's APP totals, %d .. %d KB" %
          (len(got), want[0] // 1024, want[-1] // 1024))
finally:
    shutil.rmtree(d, ignore_errors=True)
