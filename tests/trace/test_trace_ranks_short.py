# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Short ranks are not adopted late (issue 16, item 4): `ascbpf trace --level 2
-- npu_train --scenario multi-rank --ranks 4 --steps 20`, each rank done in
well under a second.  A forked child is stopped at its return from fork
until its probes are attached (as the first process is held at its loader
hook), so every rank's capture holds every one of its 20 steps and every
call its journal records, from its first to its last, complete (before:
four captures and no event, every rank finished before it was adopted)."""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon  # noqa: E402

RANKS, STEPS = 4, 20
if __name__ == "__main__":
    d = tc.workdir()
    try:
        jdir = os.path.join(d, "journal")
        os.mkdir(jdir)
        out = os.path.join(d, "out")
        with ModelDaemon(cards=RANKS) as m:
            r = tc.run_ascbpf(["trace", "--level", "2", "-o", out, "--no-convert", "--",
                               m.bin("npu_train"), "--scenario", "multi-rank", "--ranks",
                               str(RANKS), "--steps", str(STEPS)],
                              env=m.env(NPU_MODEL_JOURNAL=jdir), timeout=240)
        tc.check(r.returncode == 0, "trace exited %d" % r.returncode)
        caps = sorted(f for f in os.listdir(out) if f.endswith(".cap"))
        tc.check(len(caps) == RANKS + 1, "expected the launcher and %d ranks, got %s" %
                 (RANKS, caps))
        seen = []
        for c in caps:
            recs = tc.records(os.path.join(out, c))
            proc = [x for x in recs if x["type"] == "process"]
            if not proc or proc[0]["rank"] < 0:
                continue		# the launcher
            pid = recs[0]["tgid"]
            seen.append(proc[0]["rank"])
            n = tc.check_rank_complete(pid, recs, jdir, STEPS)
            print("rank %d pid %d: %d steps, %d calls match the journal" %
                  (proc[0]["rank"], pid, STEPS, n))
        tc.check(sorted(seen) == list(range(RANKS)), "ranks %s" % sorted(seen))
        print("PASS")
    finally:
        shutil.rmtree(d, ignore_errors=True)
