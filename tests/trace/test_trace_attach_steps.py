# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A step boundary while ascbpf is still attaching must not start the trace.

`ascbpf trace -p` attaches the step probe with the other sites, then starts
the device channel, then opens the gate (docs/trace.md).  A target that
crosses step boundaries all the time (tt with one call pair per step and no
sleep: a boundary every few microseconds) hits the step probe inside that
window.  Before the fix, the step program opened the gate itself and counted
steps there, so recording began before the device channel (submissions
without device records, seen in 1 of 5 `-p` traces of npu_train baseline:
"36 submissions before its device channel started"), and the loader's own
gate opening then reset the step counter: the capture numbered steps 0, 1,
0, 1, 2, ...  Checked here, for -p with and without a schedule:

* the STEP records are numbered 0..N-1, each once, in order (3 runs);
* with --schedule wait=1,active=2,repeat=1 the recorded calls are exactly
  those of steps 1 and 2 (between the 2nd and the 4th STEP record).
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon  # noqa: E402


def check_steps(recs, what):
    steps = [x for x in recs if x["type"] == "step"]
    idx = [s["step"] for s in steps]
    tc.check(idx and idx == list(range(len(idx))),
             "%s: STEP indices %s..., %d records, %d distinct" %
             (what, idx[:8], len(idx), len(set(idx))))
    return steps


d = tc.workdir()
t = None
m = ModelDaemon(cards=1)
try:
    tc.build(d)
    m.start()
    # npu_model's libascend_hal.so preloaded: ascbpf starts a device channel through it
    # (tens of FUSE requests), which makes the attach window as long as a real job's
    env = m.env(LD_PRELOAD=os.path.join(os.path.dirname(m.bin("x")), "..", "lib",
                                        "libascend_hal.so"))
    env = {k: v for k, v in env.items() if k in ("NPU_MODEL_DEV_DIR", "LD_PRELOAD")}
    for rnd in range(3):
        t = tc.Target(d, [-1, 1, 0], env, "busy%d" % rnd)
        out = os.path.join(d, "out%d" % rnd)
        r = tc.run_ascbpf(["trace", "--level", "1", "-p", str(t.pid), "-o", out, "--no-convert",
                           "--duration", "0.5"])
        tc.check(r.returncode == 0, "trace exited %d" % r.returncode)
        recs = tc.records(os.path.join(out, "ascbpf-%d.cap" % t.pid))
        steps = check_steps(recs, "run %d" % rnd)
        ccalls, unpaired = tc.calls(recs)
        tc.check(ccalls, "run %d: no call recorded" % rnd)
        t.stop()
        print("run %d: %d steps numbered 0..%d" % (rnd, len(steps), len(steps) - 1))

    t = tc.Target(d, [-1, 1, 0], env, "sched")
    out = os.path.join(d, "outs")
    r = tc.run_ascbpf(["trace", "--level", "1", "-p", str(t.pid), "-o", out, "--no-convert",
                       "--schedule", "wait=1,active=2,repeat=1", "--duration", "0.5"])
    tc.check(r.returncode == 0, "trace exited %d" % r.returncode)
    recs = tc.records(os.path.join(out, "ascbpf-%d.cap" % t.pid))
    steps = check_steps(recs, "schedule")
    tc.check(len(steps) >= 4, "schedule: only %d steps" % len(steps))
    lo, hi = steps[1]["ts_ns"], steps[3]["ts_ns"]
    calls = [x for x in recs if x["type"] in ("enter", "exit")]
    tc.check(calls and all(lo <= x["ts_ns"] <= hi for x in calls),
             "schedule: calls outside steps 1-2: %d of %d" %
             (sum(1 for x in calls if not lo <= x["ts_ns"] <= hi), len(calls)))
    ccalls, unpaired = tc.calls(recs)
    tc.check(not unpaired and len(ccalls) == 2 * 3,
             "schedule: %d calls (%d unpaired), want 2 steps x 3 calls" %
             (len(ccalls), len(unpaired)))
    t.stop()
    print("schedule: steps 1 and 2 recorded, %d calls" % len(ccalls))
    print("PASS")
finally:
    if t:
        try:
            t.stop()
        except Exception:
            pass
    m.stop()
    shutil.rmtree(d, ignore_errors=True)
