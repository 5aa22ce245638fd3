# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""--schedule counted in steps by the BPF gate: with the reference's example
(skip_first=1, wait=2, warmup=1, active=2, repeat=2, skip_first_wait=1) over
12 steps, and a second one without skip_first_wait, the calls of exactly the
RECORD / RECORD_AND_SAVE steps are captured (all of them), none of the
others, and every step has a STEP record with its state.  As in torch_npu,
step 0 runs from the start of the trace (ProfilerStep#0 from
profile.start()) and each boundary (the return of tt's optimizer step, which
ends each of its iterations) ends step N and starts N + 1: tt's 12
iterations are steps 0..11 and the tail after the last boundary step 12.
The expected states come from torch_npu's algorithm written out below, not
from ascbpf's schedule.h."""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402

NONE, WARMUP, RECORD, SAVE = 0, 1, 2, 3


def torch_npu_action(step, wait, active, warmup, repeat, skip_first, skip_first_wait):
    """torch_npu.profiler.schedule's __call__ (docs/torch_npu_format.md §5)."""
    if step < skip_first:
        return NONE
    step -= skip_first
    if skip_first_wait:
        step += wait
    num_steps = wait + warmup + active
    if repeat > 0 and step / num_steps >= repeat:
        return NONE
    mod = step % num_steps
    if mod < wait:
        return NONE
    if mod < wait + warmup:
        return WARMUP
    return RECORD if mod < num_steps - 1 else SAVE


def run(d, spec, params, nsteps=12, per_step=20):
    jpath = os.path.join(d, "journal." + spec.replace(",", "_").replace("=", ""))
    env = dict(os.environ, TT_LIBDIR=d, TT_JOURNAL=jpath)
    out = os.path.join(d, "out." + str(len(os.listdir(d))))
    r = tc.run_ascbpf(["trace", "--level", "2", "-o", out, "--no-convert", "--schedule", spec, "--",
                       os.path.join(d, "tt"), str(nsteps), str(per_step), "100"], env=env)
    tc.check(r.returncode == 0, "trace exited %d" % r.returncode)
    caps = [f for f in os.listdir(out) if f.endswith(".cap")]
    recs = tc.records(os.path.join(out, caps[0]))
    want = [torch_npu_action(s, **params) for s in range(nsteps + 1)]
    steps = [x for x in recs if x["type"] == "step"]
    tc.check([s["step"] for s in steps] == list(range(nsteps + 1)), "step records %s" %
             [s["step"] for s in steps])
    tc.check([s["state"] for s in steps] == want, "states %s, torch_npu %s" %
             ([s["state"] for s in steps], want))
    # journal calls by step: step 0 until the first boundary, then the step the last
    # boundary line before the call started (its index)
    j = tc.journal(jpath)
    cur, expected = 0, []
    for x in j:
        if x[0] == "step":
            cur = x[4]
        elif x[0] in tc.CALLS and want[cur] in (RECORD, SAVE):
            expected.append(x)
    ccalls, unpaired = tc.calls(recs)
    tc.check(not unpaired, "%d unpaired records" % len(unpaired))
    tc.check(want[0] == NONE and all(c[0] != "aclInit" for c in ccalls),
             "aclInit (in step 0, not recorded) was captured")
    recorded = [s for s in range(nsteps + 1) if want[s] in (RECORD, SAVE)]
    # each iteration: per_step malloc/free pairs and one sync; the tail step has no call
    tc.check(len(expected) == len([s for s in recorded if s < nsteps]) * (2 * per_step + 1),
             "journal grouping: %d" % len(expected))
    tc.check(len(ccalls) == len(expected), "%s: capture %d calls, journal %d in steps %s" %
             (spec, len(ccalls), len(expected), recorded))
    tc.match_calls(expected, ccalls)
    print("%s: steps %s recorded, %d calls match" % (spec, recorded, len(ccalls)))


d = tc.workdir()
try:
    tc.build(d)
    run(d, "skip_first=1,wait=2,warmup=1,active=2,repeat=2,skip_first_wait=1",
        dict(wait=2, active=2, warmup=1, repeat=2, skip_first=1, skip_first_wait=1))
    run(d, "skip_first=2,wait=1,warmup=1,active=3,repeat=0",
        dict(wait=1, active=3, warmup=1, repeat=0, skip_first=2, skip_first_wait=0))
    print("PASS")
finally:
    shutil.rmtree(d, ignore_errors=True)
