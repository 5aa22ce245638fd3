# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""--step LIB:SYMBOL, a step boundary the user names (issue 3: "a step
boundary from a probe the user names"), and --step none, on the tiny target
(tests/lib/trace_target.c), against its journal:

* --step libascendcl.so:aclrtSynchronizeStream (tt calls it once at the end
  of every step): step 0 from the start of the trace (a STEP record of no
  probe), then one STEP record per journal aclrtSynchronizeStream call,
  indices 1..N, each stamped at that call's return (after its journal t1,
  within trace_check's single-event tolerance), as a boundary ends step N
  where it returns; the default one (the optimizer step's return,
  torch::optim::AdamW::step, which tt also calls) makes none;
* with --schedule wait=1,active=1,repeat=2 counted in those steps (step 0
  until the first sync returns, step k from the k-th sync's return, 1-based,
  to the next): the aclrtMalloc calls captured are exactly the journal's
  between syncs 1 and 2 and between syncs 3 and 4 (1-based: steps 1 and 3
  recorded, 0 and 2 waited);
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
    tc.check([s["step"] for s in steps] == list(range(STEPS + 1)),
             "STEP indices %s, want 0..%d" % ([s["step"] for s in steps], STEPS))
    probes = {p["probe_id"]: p["symbol"] for p in recs if p["type"] == "probe"}
    tc.check(steps[0]["probe_id"] == 0 and steps[0]["ts_ns"] < syncs[0][2],
             "step 0: probe %d at %d, first sync %d" % (steps[0]["probe_id"], steps[0]["ts_ns"],
                                                        syncs[0][2]))
    for s, js in zip(steps[1:], syncs):
        tc.check(probes.get(s["probe_id"]) == "aclrtSynchronizeStream",
                 "step %d from probe %s" % (s["step"], probes.get(s["probe_id"])))
        tc.check(s["tid"] == js[1] and js[3] <= s["ts_ns"] <= js[3] + tc.TOLERANCE_NS,
                 "step %d at %d, its sync's journal t1 %d" % (s["step"], s["ts_ns"], js[3]))
    print("--step LIB:SYMBOL: %d STEP records at the named function's calls" % len(steps))

    recs, j = trace(d, "sched", ["--step", "libascendcl.so:aclrtSynchronizeStream",
                                 "--schedule", "wait=1,active=1,repeat=2"])
    syncs = [x[2] for x in j if x[0] == "aclrtSynchronizeStream"]
    # step k >= 1 runs from the return of syncs[k - 1] (0-based) to that of syncs[k];
    # wait=1,active=1: steps 0 and 2 wait, steps 1 and 3 are recorded
    want = [x for x in j if x[0] == "aclrtMalloc" and
            (syncs[0] < x[2] < syncs[1] or syncs[2] < x[2] < syncs[3])]
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
