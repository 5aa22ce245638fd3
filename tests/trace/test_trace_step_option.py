# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""--step LIB:SYMBOL, a step boundary the user names (issue 3: "a step
boundary from a probe the user names"), and --step none, on the tiny target
(tests/lib/trace_target.c), against its journal:

* --step libascendcl.so:aclrtSynchronizeStream (tt calls it once at the end
  of every step): one STEP record per journal aclrtSynchronizeStream call,
  indices 0..N-1, each stamped at that call's entry (before its journal t0,
  within trace_check's single-event tolerance); the default step hook
  (stepMarker) makes none;
* with --schedule wait=1,active=1,repeat=2 counted in those steps (step k
  starts at the k-th sync, 0-based): the aclrtMalloc calls captured are
  exactly the journal's between syncs 1 and 2 and between syncs 3 and 4
  (steps 1 and 3 recorded, 0 and 2 waited);
* --step none: no STEP record at all, every call captured.
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402

STEPS, PER_STEP = 6, 5


def trace(d, name, opts):
    j = os.path.join(d, "journal." + name)
    out = os.path.join(d, "out." + name)
    env = dict(os.environ, TT_LIBDIR=d, TT_JOURNAL=j)
    r = tc.run_ascbpf(["trace", "--level", "1", "-o", out, "--no-convert"] + opts +
                      ["--", os.path.join(d, "tt"), str(STEPS), str(PER_STEP), "200"], env=env)
    tc.check(r.returncode == 0, "%s: trace exited %d" % (name, r.returncode))
    caps = [f for f in os.listdir(out) if f.endswith(".cap")]
    return tc.records(os.path.join(out, caps[0])), tc.journal(j)


d = tc.workdir()
try:
    tc.build(d)
    recs, j = trace(d, "sync", ["--step", "libascendcl.so:aclrtSynchronizeStream"])
    syncs = [x for x in j if x[0] == "aclrtSynchronizeStream"]
    steps = [x for x in recs if x["type"] == "step"]
    tc.check(len(syncs) == STEPS, "journal has %d syncs" % len(syncs))
    tc.check([s["step"] for s in steps] == list(range(STEPS)),
             "STEP indices %s, want 0..%d" % ([s["step"] for s in steps], STEPS - 1))
    for s, js in zip(steps, syncs):
        tc.check(s["tid"] == js[1] and s["ts_ns"] <= js[2] <= s["ts_ns"] + tc.TOLERANCE_NS,
                 "step %d at %d, its sync's journal t0 %d" % (s["step"], s["ts_ns"], js[2]))
    print("--step LIB:SYMBOL: %d STEP records at the named function's calls" % len(steps))

    recs, j = trace(d, "sched", ["--step", "libascendcl.so:aclrtSynchronizeStream",
                                 "--schedule", "wait=1,active=1,repeat=2"])
    syncs = [x[2] for x in j if x[0] == "aclrtSynchronizeStream"]
    # step k runs from the k-th boundary (the (k+1)-th sync, 0-based syncs[k]) to the next;
    # wait=1,active=1: steps 0 and 2 wait, steps 1 and 3 are recorded
    want = [x for x in j if x[0] == "aclrtMalloc" and
            (syncs[1] < x[2] < syncs[2] or syncs[3] < x[2] < syncs[4])]
    ccalls, unpaired = tc.calls(recs)
    cm = [c for c in ccalls if c[0] == "aclrtMalloc"]
    tc.check(len(want) == 2 * PER_STEP, "journal grouping: %d" % len(want))
    tc.check(len(cm) == len(want), "schedule in named steps: capture %d aclrtMalloc, journal %d" %
             (len(cm), len(want)))
    tc.match_calls(want, cm)
    print("--schedule over --step LIB:SYMBOL: steps 1 and 3 recorded, %d calls match" % len(cm))

    recs, j = trace(d, "none", ["--step", "none"])
    tc.check(not [x for x in recs if x["type"] == "step"], "--step none: STEP records")
    ccalls, unpaired = tc.calls(recs)
    jc = [x for x in j if x[0] in tc.CALLS]
    tc.check(not unpaired and len(ccalls) == len(jc), "--step none: capture %d calls, journal %d" %
             (len(ccalls), len(jc)))
    print("--step none: no STEP record, all %d calls" % len(ccalls))
    print("PASS")
finally:
    shutil.rmtree(d, ignore_errors=True)
