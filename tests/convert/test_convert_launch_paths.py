#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""kernel_details of every CANN 8.x/9.x launch path against npu_model's journal.

npu_launch_paths makes one task through each launch call of the runtime, each
on its own stream, twice (tests/trace/test_trace_launch_paths.py has the
capture side).  `ascbpf trace` (converting) at Level2 and Level1; for every
compute task of the journal (`task` lines: stream id, task id, kernel,
task_type) kernel_details has the row (Stream ID, Task ID) with:
* Accelerator Core = the journal's task type: AI_CPU for the three AI CPU
  calls (rtCpuKernelLaunchWithFlag, rtAicpuKernelLaunchExWithArgs,
  rtKernelLaunchEx), AI_VECTOR_CORE / AI_CORE for the others;
* Name = the journal's kernel name where the trace can know it: at Level2
  every kernel launch but rtKernelLaunchEx (whose op name is inside a
  framework-op argument block no probe reads); at Level1 also not the two
  launch calls that only a runtime client makes here
  (rtsLaunchKernelWithConfig / WithDevArgs: Level2 calls).  Those few are
  named as the converter names a kernel without a handle name: by their
  launch call at Level2 (a Runtime@ call), by the task type at Level1;
  never another kernel's name.
"""
import collections
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402

ROUNDS = 2
COMPUTE = {"AI_CORE", "AI_VECTOR_CORE", "AI_CPU"}
UNNAMED = {2: {"rtKernelLaunchEx"},
           1: {"rtKernelLaunchEx", "rtsLaunchKernelWithConfig", "rtsLaunchKernelWithDevArgs"}}
AICPU = {"rtCpuKernelLaunchWithFlag", "rtAicpuKernelLaunchExWithArgs", "rtKernelLaunchEx"}


def check(cond, msg):
    """tc.check (fails the test at once), returning the condition as trace_model wants."""
    tc.check(cond, msg)
    return True


def check_run(level, t):
    S = "level %d: " % level
    j = t.journal()
    tasks = [x for k, x in j if k == "task" and x["task_type"] in COMPUTE]
    check(len(tasks) == 10 * ROUNDS, S + "%d compute tasks in the journal" % len(tasks))
    # which launch call made each task: the runtime api line holding the task line
    calls = [x for k, x in j if k == "api" and x["name"].startswith("rt") and "op" in x]
    _, hdr, rows = tc.read_csv(os.path.join(t.po, "kernel_details.csv"))
    col = {h: i for i, h in enumerate(hdr)}
    kd = {(r[col["Stream ID"]], r[col["Task ID"]]): r for r in rows}
    names = collections.Counter()
    for x in tasks:
        t0 = int(x["t"])
        made = [c for c in calls if c["tid"] == x["tid"] and int(c["t0"]) <= t0 <= int(c["t1"])]
        call = min(made, key=lambda c: int(c["t1"]) - int(c["t0"]))["name"] if made else "?"
        r = kd.get((x["stream"], x["task"]))
        if not check(r is not None, S + "task %s/%s (%s) not in kernel_details" %
                     (x["stream"], x["task"], call)):
            continue
        check(r[col["Accelerator Core"]] == x["task_type"] and
              (call not in AICPU or x["task_type"] == "AI_CPU"),
              S + "%s task %s/%s: core %s, journal %s" %
              (call, x["stream"], x["task"], r[col["Accelerator Core"]], x["task_type"]))
        if call in UNNAMED[level]:	# the launching API's name where it is traced
            want = call if level == 2 else x["task_type"]
        else:
            want = x["kernel"]
            names[call] += 1
        check(r[col["Name"]] == want, S + "%s task %s/%s: Name %s, want %s" %
              (call, x["stream"], x["task"], r[col["Name"]], want))
    print(S + "%d kernels named by their launch: %s" % (sum(names.values()), dict(names)))


def main():
    for level in (2, 1):
        d = tc.workdir()
        try:
            t = tc.trace_model(d, "level %d" % level, ["--level", str(level)],
                               ["npu_launch_paths", ROUNDS], check)
            if t:
                check_run(level, t)
        finally:
            shutil.rmtree(d, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
