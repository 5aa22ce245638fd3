# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""ascbpf trace under failure, on npu_train against a private npu-modeld:

* ascbpf killed with SIGKILL mid-trace (-p): npu_train finishes its run and
  exits 0; the capture is readable up to its last frame: every task the
  journal says was submitted inside the captured window (its edges left out)
  is in the capture and nothing else is; `ascbpf convert` exits 1 saying
  how many bytes were lost (killed inside a frame) or that the trace did not
  end (killed between frames: no end record);
* the target exits mid-trace (-p, no --duration): ascbpf ends by itself,
  exit 0, a complete capture (its stats record), the summary line;
* the disk fills while the capture is written (-o on a 512 KiB tmpfs): a
  clear "No space left on device" error, ascbpf stops by itself once every
  capture has failed (while npu_train still runs, which then finishes and
  exits 0), exit 1; the failed frame was cut off again, so the capture ends
  cleanly at its last complete frame: dump and convert read it with no
  damage reported;
* npu-modeld killed while a traced npu_train (-- CMD) runs: npu_train fails
  with its own error, ascbpf warns and exits 0 with its summary."""
import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon  # noqa: E402

EDGE_NS = 50_000_000	# calls in flight at either edge of the window are left out


def train(m, jdir, seconds):
    env = m.env(NPU_MODEL_JOURNAL=jdir)
    return subprocess.Popen([m.bin("npu_train"), "--scenario", "baseline", "--duration",
                             str(seconds)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def journal_tasks(jdir, pid):
    out = []
    for line in open(os.path.join(jdir, "journal.%d.tsv" % pid)):
        if line.startswith("task\t"):
            f = dict(x.split("=", 1) for x in line.rstrip("\n").split("\t")[1:])
            out.append((int(f["t"]), int(f["stream"]), int(f["task"])))
    return out


def sqe_tasks(recs):
    return [(x["ts_ns"], h["stream_id"], h["task_id"]) for x in recs if x["type"] == "sqe"
            for h in x["sqe"][:x["nr_kept"]]]


def check_prefix(what, recs, jtasks):
    """The capture holds exactly the journal's tasks of its window, both ways: every task
    the journal gave an id inside the window is captured, every submission captured inside
    it is in the journal (by (stream, task), counted: ids repeat after a wrap)."""
    cap = sqe_tasks(recs)
    tc.check(len(cap) > 100, "%s: only %d submissions captured" % (what, len(cap)))
    lo, hi = cap[0][0] + EDGE_NS, cap[-1][0] - EDGE_NS
    want = collections.Counter((s, t) for ts, s, t in jtasks if lo <= ts <= hi)
    got = collections.Counter((s, t) for ts, s, t in cap if lo <= ts <= hi)
    tc.check(sum(want.values()) > 100, "%s: window too short" % what)
    lost = want - collections.Counter((s, t) for ts, s, t in cap)
    extra = got - collections.Counter((s, t) for ts, s, t in jtasks)
    tc.check(not lost and not extra, "%s: window of %d journal tasks: %d not captured, %d "
             "captured not in the journal" % (what, sum(want.values()), sum(lost.values()),
                                              sum(extra.values())))
    return sum(want.values())


def convert_ok_or_says_lost(what, cap, d, ended=None):
    """convert exits 0, or 1 saying what was lost: a torn frame ("bytes after it were
    lost") or a trace without its end record ("did not end", a tracer killed between
    frames).  ended=False: the tracer was killed, so exit 1 is required."""
    r = subprocess.run([tc.ASCBPF, "convert", cap, "-o", os.path.join(d, "conv." + what)],
                       capture_output=True, text=True, timeout=300)
    tc.check(r.returncode in ((1,) if ended is False else (0, 1)),
             "%s: convert exited %d: %s" % (what, r.returncode, r.stderr))
    if r.returncode == 1:
        tc.check("bytes after it were lost" in r.stderr or
                 ("did not end" in r.stderr and r.stderr.count("did not end") == 1),
                 "%s: convert exit 1 without saying what was lost: %s" % (what, r.stderr))
    return r.returncode


def dump_damaged(cap):
    """(records, stderr) of `ascbpf dump --json`; never a crash."""
    r = subprocess.run([tc.ASCBPF, "dump", "--json", cap], capture_output=True, text=True,
                       timeout=120)
    tc.check(r.returncode >= 0, "dump crashed: signal %d" % -r.returncode)
    return [json.loads(x) for x in r.stdout.splitlines() if x.strip()], r.returncode, r.stderr


d = tc.workdir()
procs = []
mnt = None
try:
    with ModelDaemon(cards=1, journal=True) as m:
        # ---- SIGKILL of ascbpf mid-trace
        jdir = os.path.join(d, "j1")
        os.mkdir(jdir)
        p = train(m, jdir, 4)
        procs.append(p)
        time.sleep(0.5)
        out = os.path.join(d, "kill")
        a = subprocess.Popen([tc.ASCBPF, "trace", "-p", str(p.pid), "-o", out, "--no-convert"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(a)
        time.sleep(2.0)
        tc.check(a.poll() is None, "ascbpf ended before the kill")
        a.kill()
        a.wait()
        so, _ = p.communicate(timeout=60)
        tc.check(p.returncode == 0, "SIGKILL: npu_train exited %d: %s" % (p.returncode, so))
        cap = os.path.join(out, "ascbpf-%d.cap" % p.pid)
        recs, rc, err = dump_damaged(cap)
        tc.check(rc in (0, 1), "SIGKILL: dump exited %d: %s" % (rc, err))
        n = check_prefix("SIGKILL", recs, journal_tasks(jdir, p.pid))
        crc = convert_ok_or_says_lost("kill", cap, d, ended=False)
        print("SIGKILL: npu_train exit 0, %d tasks of the window in the capture, convert %d"
              % (n, crc))

        # ---- the target exits mid-trace
        jdir = os.path.join(d, "j2")
        os.mkdir(jdir)
        p = train(m, jdir, 2)
        procs.append(p)
        time.sleep(0.5)
        out = os.path.join(d, "exit")
        r = tc.run_ascbpf(["trace", "-p", str(p.pid), "-o", out, "--no-convert"], timeout=120)
        so, _ = p.communicate(timeout=60)
        tc.check(p.returncode == 0, "exit: npu_train exited %d: %s" % (p.returncode, so))
        tc.check(r.returncode == 0, "exit: ascbpf exited %d" % r.returncode)
        tc.check("pid %d exited" % p.pid in r.stderr + r.stdout, "exit: no word of the exit")
        tc.check(r.stdout.startswith("ascbpf: ") and " events (" in r.stdout,
                 "exit: no summary line")
        recs = tc.records(os.path.join(out, "ascbpf-%d.cap" % p.pid))
        tc.stats(recs)
        n = check_prefix("exit", recs, journal_tasks(jdir, p.pid))
        print("target exit: ascbpf ended by itself, exit 0, %d tasks matched" % n)

        # ---- full disk
        jdir = os.path.join(d, "j3")
        os.mkdir(jdir)
        mnt = os.path.join(d, "small")
        os.mkdir(mnt)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "ascbpf-test", mnt],
                       check=True)
        # npu_train runs 8 s: the first frames fill the 512 KiB (about a second of capture at
        # baseline rates: enough for a window of tasks past both edges) well before that
        p = train(m, jdir, 8)
        procs.append(p)
        time.sleep(0.5)
        out = os.path.join(mnt, "o")
        r = tc.run_ascbpf(["trace", "-p", str(p.pid), "-o", out, "--no-convert"], timeout=120)
        alive = p.poll() is None
        so, _ = p.communicate(timeout=60)
        tc.check(p.returncode == 0, "full disk: npu_train exited %d: %s" % (p.returncode, so))
        tc.check(r.returncode == 1, "full disk: ascbpf exited %d, not 1" % r.returncode)
        tc.check("No space left on device" in r.stderr, "full disk: no clear error")
        tc.check("every capture failed" in r.stderr, "full disk: no word of the stop")
        tc.check(alive, "full disk: ascbpf ran on until npu_train ended")
        tc.check(" events (" in r.stdout, "full disk: no summary line")
        cap = os.path.join(out, "ascbpf-%d.cap" % p.pid)
        recs, rc, err = dump_damaged(cap)
        tc.check(rc == 0 and "damaged" not in err, "full disk: dump exited %d: %s" % (rc, err))
        tc.check(os.path.getsize(cap) <= 512 * 1024, "full disk: capture larger than the disk")
        n = check_prefix("full disk", recs, journal_tasks(jdir, p.pid))
        c = subprocess.run([tc.ASCBPF, "convert", cap, "-o", os.path.join(d, "conv.full")],
                           capture_output=True, text=True, timeout=300)
        tc.check(c.returncode in (0, 1) and "damaged" not in c.stderr,
                 "full disk: convert exited %d: %s" % (c.returncode, c.stderr))
        subprocess.run(["umount", mnt], check=True)
        mnt = None
        print("full disk: ascbpf stopped by itself (exit 1) with the error while npu_train ran "
              "on (exit 0), clean capture with %d tasks readable, convert %d" %
              (n, c.returncode))

        # ---- the daemon killed under a traced npu_train
        out = os.path.join(d, "daemon")
        a = subprocess.Popen([tc.ASCBPF, "trace", "-o", out, "--no-convert", "--",
                              m.bin("npu_train"), "--scenario", "baseline", "--duration", "6"],
                             env=m.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        procs.append(a)
        time.sleep(2.0)
        m.proc.send_signal(signal.SIGKILL)
        m.proc.wait()
        so, se = a.communicate(timeout=120)
        print(so, se)
        tc.check(a.returncode == 0, "daemon killed: ascbpf exited %d" % a.returncode)
        tc.check("npu_train: " in se and "exited with status" in se,
                 "daemon killed: npu_train's own error and status not shown")
        tc.check(" events (" in so, "daemon killed: no summary line")
        caps = [f for f in os.listdir(out) if f.endswith(".cap")]
        tc.check(len(caps) == 1, "daemon killed: captures %s" % caps)
        tc.stats(tc.records(os.path.join(out, caps[0])))
        print("daemon killed: npu_train failed on its own, ascbpf exit 0 with a complete "
              "capture")
    print("PASS")
finally:
    for q in procs:
        if q.poll() is None:
            q.kill()
            q.wait()
    if mnt:
        subprocess.call(["umount", "-l", mnt])
    shutil.rmtree(d, ignore_errors=True)
