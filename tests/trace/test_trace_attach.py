# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""ascbpf trace -p PID on processes that are already running:

1. mid-run attach with --duration: every journal call that starts after the
   first captured entry and ends before the last captured exit is in the
   capture, enclosed within the tolerance, and nothing else is;
2. the target exits mid-trace: ascbpf notices, drains, writes a complete
   capture (end clock, stats) and exits 0 on its own;
3. two processes at once: one capture each, each holding only its own
   process, with the rank from the target's RANK;
4. the target is never stopped or slowed to a halt: it keeps stepping."""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402


def window_check(recs, jpath, pid):
    ccalls, unpaired = tc.calls(recs)
    tc.check(ccalls, "pid %d: nothing captured" % pid)
    # a call in flight at attach or detach may show only one side
    tc.check(len(unpaired) <= 4, "pid %d: %d unpaired records" % (pid, len(unpaired)))
    first, last = ccalls[0][2], max(c[3] for c in ccalls)
    j = [x for x in tc.journal(jpath) if x[0] in tc.CALLS and x[2] >= first and x[3] <= last]
    tc.check(len(j) == len(ccalls), "pid %d: journal has %d calls in the window, capture %d" %
             (pid, len(j), len(ccalls)))
    tc.match_calls(j, ccalls)
    tc.check(all(r["tgid"] == pid for r in recs), "records of another process")
    st = tc.stats(recs)
    tc.check(st["drops"] == 0, "drops: %d" % st["drops"])
    return len(ccalls)


d = tc.workdir()
targets = []
try:
    tc.build(d)

    # 1. mid-run attach, stopped by --duration
    t = tc.Target(d, [-1, 20, 500], {"RANK": "3"}, "mid")
    targets.append(t)
    out = os.path.join(d, "out1")
    r = tc.run_ascbpf(["trace", "--level", "2", "-p", str(t.pid), "-o", out, "--no-convert", "--duration", "1.5"])
    tc.check(r.returncode == 0, "trace exited %d" % r.returncode)
    tc.check(t.p.poll() is None, "the target died while traced")
    t.stop()
    recs = tc.records(os.path.join(out, "ascbpf-%d.cap" % t.pid))
    n = window_check(recs, t.journal, t.pid)
    proc = [x for x in recs if x["type"] == "process"]
    tc.check(len(proc) == 1 and proc[0]["rank"] == 3, "process record: %s" % proc)
    print("mid-run attach: %d calls match" % n)

    # 2. the target exits while traced (about 1 s of work left)
    t = tc.Target(d, [10, 50, 2000], None, "exit")
    targets.append(t)
    out = os.path.join(d, "out2")
    r = tc.run_ascbpf(["trace", "--level", "2", "-p", str(t.pid), "-o", out, "--no-convert"], timeout=60)
    tc.check(r.returncode == 0, "trace exited %d" % r.returncode)
    tc.check("exited" in r.stderr, "no word about the target's exit")
    t.p.wait(timeout=30)
    recs = tc.records(os.path.join(out, "ascbpf-%d.cap" % t.pid))
    tc.check(any(x["type"] == "clock" and x["which"] == 1 for x in recs), "no end clock")
    n = window_check(recs, t.journal, t.pid)
    print("target exit: %d calls match" % n)

    # 3. two processes at once
    a = tc.Target(d, [-1, 20, 500], {"RANK": "0"}, "a")
    b = tc.Target(d, [-1, 20, 500], {"RANK": "1"}, "b")
    targets += [a, b]
    out = os.path.join(d, "out3")
    r = tc.run_ascbpf(["trace", "--level", "2", "-p", str(a.pid), "-p", str(b.pid), "-o", out, "--no-convert",
                       "--duration", "1.5"])
    tc.check(r.returncode == 0, "trace exited %d" % r.returncode)
    a.stop()
    b.stop()
    for t, rank in ((a, 0), (b, 1)):
        recs = tc.records(os.path.join(out, "ascbpf-%d.cap" % t.pid))
        n = window_check(recs, t.journal, t.pid)
        proc = [x for x in recs if x["type"] == "process"]
        tc.check(proc and proc[0]["rank"] == rank, "pid %d rank %s" % (t.pid, proc))
        print("two processes: pid %d rank %d: %d calls match" % (t.pid, rank, n))
    print("PASS")
finally:
    for t in targets:
        try:
            t.stop()
        except Exception:
            pass
    shutil.rmtree(d, ignore_errors=True)
