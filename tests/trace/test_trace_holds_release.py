# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A forked child held until adopted never stays stopped if ascbpf dies
(issue 16, item 4; user/trace/holds.h).  `ascbpf trace -- sh -c 'read x <
FIFO; sleep 0; touch DONE'`: once sh waits on the FIFO, ascbpf is stopped
(SIGSTOP: it can adopt nobody), then the FIFO is written: sh forks, and its
child is held at its return from fork (state T; DONE not written).  Then
ascbpf is killed with SIGKILL (no clean-up of its own): the release
watchdog lets the child go on, sh finishes and writes DONE, and the
watchdog exits."""
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402


def state(pid):
    try:
        s = open("/proc/%d/stat" % pid).read()
    except OSError:
        return None
    return s[s.rindex(")") + 2]


def children(pid):
    out = []
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            out += [int(x) for x in open("/proc/%d/task/%s/children" % (pid, tid)).read().split()]
    except OSError:
        pass
    return out


def comm(pid):
    try:
        return open("/proc/%d/comm" % pid).read().strip()
    except OSError:
        return None


def wait_for(pred, what, limit=60):
    """Polls pred until true; fails after limit seconds (a bound, not a measurement)."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    tc.fail("%s: not within %d s" % (what, limit))


d = tc.workdir()
asc = None
try:
    fifo, done = os.path.join(d, "go"), os.path.join(d, "done")
    os.mkfifo(fifo)
    asc = subprocess.Popen([tc.ASCBPF, "trace", "--level", "2", "-o", os.path.join(d, "out"),
                            "--no-convert", "--", "sh", "-c",
                            'read x < "$1"; sleep 0; touch "$2"', "sh", fifo, done],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = []
    th = threading.Thread(target=lambda: err.extend(asc.stderr), daemon=True)
    th.start()
    sh = wait_for(lambda: [c for c in children(asc.pid) if comm(c) == "sh"], "sh started")[0]
    # sh has exec'ed, been released after its rescan and waits on the FIFO
    wait_for(lambda: state(sh) == "S" and open("/proc/%d/wchan" % sh).read() in
             ("wait_for_partner", "fifo_open"), "sh waiting on the FIFO")
    watch = [c for c in children(asc.pid) if comm(c) == "ascbpf-holds"]
    tc.check(len(watch) == 1, "no release watchdog among ascbpf's children %s" %
             [(c, comm(c)) for c in children(asc.pid)])
    os.kill(asc.pid, signal.SIGSTOP)
    with open(fifo, "w") as f:
        f.write("x\n")
    kid = wait_for(lambda: [c for c in children(sh) if state(c) == "T"] or os.path.exists(done),
                   "sh's child held")
    tc.check(kid is not True and not os.path.exists(done),
             "sh's child ran on while ascbpf could not adopt it (DONE written)")
    os.kill(asc.pid, signal.SIGKILL)
    asc.wait(timeout=30)
    wait_for(lambda: os.path.exists(done), "DONE after ascbpf was killed (child released)")
    for w in watch:
        wait_for(lambda: state(w) in (None, "Z"), "watchdog %d exited" % w)
    print("held child %s released by the watchdog %s after SIGKILL" % (kid, watch))
    print("PASS")
finally:
    if asc and asc.poll() is None:
        asc.kill()
    try:			# a failed run must not leave sh waiting on the FIFO
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, b"x\n")
        os.close(fd)
    except OSError:
        pass
    shutil.rmtree(d, ignore_errors=True)
