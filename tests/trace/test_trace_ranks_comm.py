# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""--comm NAME follows forks (issue 16, item 4; found by the soak): `ascbpf
trace --comm NAME` started first, then npu_train (through a symlink named
NAME) --scenario multi-rank --ranks 2 --steps 20.  The launcher (a new
process of that name, stopped at its exec until adopted) and both ranks (its
forks, which never exec: stopped at their return from fork until adopted)
each get a capture with every step and every call of their journal (before:
the ranks were not traced at all)."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon  # noqa: E402

RANKS, STEPS = 2, 20
d = tc.workdir()
asc = None
try:
    jdir = os.path.join(d, "journal")
    os.mkdir(jdir)
    out = os.path.join(d, "out")
    with ModelDaemon(cards=RANKS) as m:
        # a name of our own: other npu_train runs on the machine are not ours to adopt (a
        # symlink: comm is its name, $ORIGIN the real binary's directory)
        comm = "ntr%d" % os.getpid()
        exe = os.path.join(d, comm)
        os.symlink(m.bin("npu_train"), exe)
        asc = tc.Background(["trace", "--level", "2", "--comm", comm, "-o", out,
                             "--no-convert"])
        w = subprocess.run([exe, "--scenario", "multi-rank", "--ranks",
                            str(RANKS), "--steps", str(STEPS)],
                           env=m.env(NPU_MODEL_JOURNAL=jdir), capture_output=True, text=True,
                           timeout=180)
        tc.check(w.returncode == 0, "npu_train exited %d: %s" % (w.returncode, w.stderr))
        asc.stop()
    tc.check(asc.proc.returncode == 0, "trace exited %d" % asc.proc.returncode)
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
    if asc:
        asc.kill()
    shutil.rmtree(d, ignore_errors=True)
