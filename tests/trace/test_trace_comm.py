# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""--comm NAME: one process of that name already running and one that
starts after ascbpf attached (adopted through sched_process_exec) are both
traced, each into its own capture; a process of another name is not.  For
the late one the probes attach asynchronously after its exec, so the check
is from its first captured call on: every journal call after that is there."""
import os
import shutil
import sys
import subprocess
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402

d = tc.workdir()
ts = []
asc = None
try:
    tc.build(d)
    shutil.copy(os.path.join(d, "tt"), os.path.join(d, "ttother"))
    early = tc.Target(d, [-1, 10, 1000], None, "early")
    ts.append(early)
    out = os.path.join(d, "out")
    asc = subprocess.Popen([tc.ASCBPF, "trace", "--level", "2", "--comm", tc.TT_COMM, "-o", out, "--no-convert",
                            "--duration", "4"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    time.sleep(1.0)
    # started after the attach; tt dlopens its libraries 500 ms after exec
    late = tc.Target(d, [-1, 10, 1000, 500], None, "late")
    ts.append(late)
    env = dict(os.environ, TT_LIBDIR=d, TT_JOURNAL=os.path.join(d, "j.other"))
    other = subprocess.Popen([os.path.join(d, "ttother"), "-1", "10", "1000"], env=env,
                             stdout=subprocess.DEVNULL)
    so, se = asc.communicate(timeout=60)
    print(so, se)
    other.terminate()
    other.wait()
    tc.check(asc.returncode == 0, "trace exited %d" % asc.returncode)
    for t in ts:
        t.stop()
    caps = sorted(f for f in os.listdir(out) if f.endswith(".cap"))
    tc.check(caps == sorted("ascbpf-%d.cap" % t.pid for t in (early, late)),
             "captures %s, expected the two tt processes" % caps)
    for t in (early, late):
        recs = tc.records(os.path.join(out, "ascbpf-%d.cap" % t.pid))
        ccalls, unpaired = tc.calls(recs)
        tc.check(len(ccalls) > 100, "pid %d: %d calls" % (t.pid, len(ccalls)))
        tc.check(len(unpaired) <= 4, "pid %d: %d unpaired" % (t.pid, len(unpaired)))
        first, last = ccalls[0][2], max(c[3] for c in ccalls)
        j = [x for x in tc.journal(t.journal) if x[0] in tc.CALLS and x[2] >= first and
             x[3] <= last]
        tc.check(len(j) == len(ccalls), "pid %d: journal %d, capture %d" %
                 (t.pid, len(j), len(ccalls)))
        tc.match_calls(j, ccalls)
        print("pid %d: %d calls match" % (t.pid, len(ccalls)))
    print("PASS")
finally:
    if asc and asc.poll() is None:
        asc.kill()
    for t in ts:
        try:
            t.stop()
        except Exception:
            pass
    shutil.rmtree(d, ignore_errors=True)
