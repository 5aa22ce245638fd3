# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""ascbpf trace -- CMD: the child is held at the dynamic loader until its
dlopened libraries are attached, so every call from the first one on is in
the capture: counts per function equal the target's journal, every call
encloses its journal interval within the stated tolerance, step records
count 0..N-1, no drops, and ascbpf stops by itself when the child exits."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402

d = tc.workdir()
try:
    tc.build(d)
    jpath = os.path.join(d, "journal.launch")
    env = dict(os.environ, TT_LIBDIR=d, TT_JOURNAL=jpath)
    out = os.path.join(d, "out")
    r = tc.run_ascbpf(["trace", "--level", "2", "-o", out, "--no-convert", "--", os.path.join(d, "tt"),
                       "6", "40", "200"], env=env)
    tc.check(r.returncode == 0, "trace exited %d" % r.returncode)
    caps = [f for f in os.listdir(out) if f.endswith(".cap")]
    tc.check(len(caps) == 1, "one capture expected, found %s" % caps)
    recs = tc.records(os.path.join(out, caps[0]))
    j = tc.journal(jpath)
    jcalls = [x for x in j if x[0] in tc.CALLS]
    tc.check(len(jcalls) == 1 + 6 * 40 * 2 + 6, "journal has %d calls" % len(jcalls))
    ccalls, unpaired = tc.calls(recs)
    tc.check(not unpaired, "%d unpaired enter/exit records" % len(unpaired))
    for name in tc.CALLS:
        nj = sum(1 for x in jcalls if x[0] == name)
        nc = sum(1 for x in ccalls if x[0] == name)
        print("%-24s journal %4d capture %4d" % (name, nj, nc))
        tc.check(nj == nc, "%s: journal %d, capture %d" % (name, nj, nc))
    tc.match_calls(jcalls, ccalls)
    steps = [x for x in recs if x["type"] == "step"]
    # step 0 from the start, then one per optimizer call, at its return (journal t before it)
    tc.check([s["step"] for s in steps] == list(range(7)),
             "step records %s" % [s["step"] for s in steps])
    jsteps = [x for x in j if x[0] == "step"]
    tc.check([x[4] for x in jsteps] == [s["step"] for s in steps[1:]],
             "journal step lines %s" % [x[4] for x in jsteps])
    for s, js in zip(steps[1:], jsteps):
        tc.check(0 <= s["ts_ns"] - js[2] <= tc.TOLERANCE_NS,
                 "step %d: capture %d, journal %d" % (s["step"], s["ts_ns"], js[2]))
    st = tc.stats(recs)
    tc.check(st["drops"] == 0, "drops: %d" % st["drops"])
    procs = [x for x in recs if x["type"] == "process"]
    tc.check(len(procs) == 1 and procs[0]["cmdline"][0].endswith("/tt"),
             "process record is the command, not ascbpf: %s" % procs)
    tc.check(any(x["type"] == "clock" and x["which"] == 1 for x in recs), "no end clock")
    print("PASS: %d calls, %d steps, 0 drops" % (len(ccalls), len(steps)))
finally:
    shutil.rmtree(d, ignore_errors=True)
