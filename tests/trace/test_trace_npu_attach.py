# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""ascbpf trace -p on an npu_train that is already running (ioctl submission
mode, so every task is an ioctl), stopped by --duration while it goes on:

* api calls: every journal call of an exported, probed function inside the
  captured window is captured (and nothing else);
* ioctls on fds opened and bound before the attach: found in /proc/PID/fd,
  the module inferred from the command (TSDRV for 'X'), and every journal
  ioctl inside the window is captured with its cmd and ret;
* queue: each captured Dequeue's correlation id was enqueued (in the window
  or before it), ids are unique per side;
* device: every submission of the window has its device record;
* the target keeps running after ascbpf has left."""
import bisect
import collections
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon  # noqa: E402

_exp = {}


def exported(lib):
    if lib not in _exp:
        r = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True)
        _exp[lib] = {l.split()[-1] for l in r.stdout.splitlines() if l.strip()}
    return _exp[lib]


d = tc.workdir()
p = None
try:
    with ModelDaemon(cards=1, journal=True) as m:
        jdir = os.path.join(d, "journal")
        os.mkdir(jdir)
        env = m.env(NPU_MODEL_JOURNAL=jdir, NPU_MODEL_SQ_MODE="ioctl")
        p = subprocess.Popen([m.bin("npu_train"), "--scenario", "baseline", "--steps", "0"],
                             env=env, stdout=subprocess.DEVNULL)
        time.sleep(1.0)
        tc.check(p.poll() is None, "npu_train died")
        out = os.path.join(d, "out")
        r = tc.run_ascbpf(["trace", "--level", "2", "-p", str(p.pid), "-o", out, "--no-convert",
                           "--duration", "2"], timeout=120)
        tc.check(r.returncode == 0, "trace exited %d" % r.returncode)
        time.sleep(0.3)
        tc.check(p.poll() is None, "npu_train did not survive the trace")
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)
        m.proc.send_signal(signal.SIGTERM)
        m.proc.wait(timeout=30)
        execs = [line for line in open(os.path.join(m.journal_dir, "journal.modeld.tsv"))
                 if line.startswith("exec\t")]
    recs = tc.records(os.path.join(out, "ascbpf-%d.cap" % p.pid))
    tc.check(tc.stats(recs)["drops"] == 0, "drops")
    j = []
    for line in open(os.path.join(jdir, "journal.%d.tsv" % p.pid)):
        if line.startswith("#") or not line.strip():
            continue
        k, *f = line.rstrip("\n").split("\t")
        j.append((k, dict(x.split("=", 1) for x in f)))
    ccalls, unpaired = tc.calls(recs)
    first, last = ccalls[0][2], max(c[3] for c in ccalls)
    # calls in flight (nested, on every thread) when the gate opened or closed: exits
    # without entries at the start, entries without exits at the end, nowhere else
    for u in unpaired:
        edge = u["ts_ns"] <= first + 50_000_000 if u["type"] == "exit" else \
            u["ts_ns"] >= last - 50_000_000
        tc.check(edge, "unpaired %s at %d, inside the window [%d, %d]" %
                 (u["type"], u["ts_ns"], first, last))
    lib_of = {x["symbol"]: x["library"] for x in recs if x["type"] == "probe"}
    ex = [c for c in ccalls if c[0] in exported(lib_of[c[0]])]
    # (the release build's hidden functions, probed from its debug file, are compared as
    # queue records below, not here)
    jw = [(x["name"], int(x["tid"]), int(x["t0"]), int(x["t1"]), 0) for k, x in j
          if k == "api" and x["name"] in lib_of and x["name"] in exported(lib_of[x["name"]])
          and int(x["t0"]) >= first and int(x["t1"]) <= last]
    tc.check(len(jw) == len(ex), "window: journal %d calls, capture %d" % (len(jw), len(ex)))
    tc.match_calls(jw, ex)

    cio = [x for x in recs if x["type"] == "ioctl"]
    tc.check(cio, "no ioctl captured")
    tc.check(not [x for x in recs if x["type"] == "fdbind"], "a bind after the attach?")
    for x in cio:
        if (x["cmd"] >> 8) & 0xff == ord("X"):
            tc.check(x["module"] == 1, "TSDRV ioctl with module %d" % x["module"])
    # both ways, by enclosure (the HAL stamps t0/t1 around the system call), inside the
    # captured window shrunk by 10 ms so no call straddles its edges
    t0 = min(x["ts_ns"] for x in cio) + 10_000_000
    t1 = max(x["exit_ns"] for x in cio) - 10_000_000
    jio = [(int(x["tid"]), int(x["cmd"], 16), int(x["ret"]), int(x["t0"]), int(x["t1"]))
           for k, x in j if k == "ioctl"]
    # per (tid, cmd), sorted by entry time: the candidates of a journal ioctl [a, b] are
    # those entered inside it (bisect), then the enclosure is checked on each
    by = collections.defaultdict(list)
    for x in cio:
        by[(x["tid"], x["cmd"])].append(x)
    for v in by.values():
        v.sort(key=lambda x: x["ts_ns"])
    starts = {k: [x["ts_ns"] for x in v] for k, v in by.items()}
    used = set()
    for tid, cmd, ret, a, b in jio:
        if a < t0 or b > t1:
            continue
        v, st = by.get((tid, cmd), []), starts.get((tid, cmd), [])
        hit = [x for x in v[bisect.bisect_left(st, a):bisect.bisect_right(st, b)]
               if a <= x["ts_ns"] <= x["exit_ns"] <= b]
        tc.check(len(hit) == 1 and hit[0]["ret"] == ret,
                 "journal ioctl 0x%x at %d: %d captured" % (cmd, a, len(hit)))
        used.add(id(hit[0]))
    inside = [x for x in cio if x["ts_ns"] >= t0 + 1_000_000 and x["exit_ns"] <= t1 - 1_000_000]
    tc.check(all(id(x) in used for x in inside), "%d captured ioctls without journal line" %
             sum(1 for x in inside if id(x) not in used))

    q = [x for x in recs if x["type"] == "queue"]
    enq = {x["correlation_id"] for x in q if x["side"] == 0}
    deq = [x["correlation_id"] for x in q if x["side"] == 1]
    tc.check(len(deq) == len(set(deq)) and len(enq) == sum(1 for x in q if x["side"] == 0),
             "duplicate correlation ids")
    jenq = {int(x["corr"]) for k, x in j if k == "queue" and x["side"] == "enqueue"}
    tc.check(all(c in enq or c in jenq for c in deq), "a dequeue without its enqueue")
    tc.check(len(enq & set(deq)) > 0.9 * len(deq), "enqueue/dequeue do not join")

    # device: every captured submission ran on the card (its journal exec line, found by
    # (stream, task, wrap), the wrap from the task line written when the id was given);
    # the exec line's prof says how many channel-50 sessions got its records (ascbpf's is
    # the only one).  Exactly the submissions whose records reached no session (prof=0:
    # completed before ascbpf's channel started or after it stopped) lack a device record.
    dev = {(x["stream_id"], x["task_id"]) for x in recs if x["type"] == "devtask"}
    tasks = collections.defaultdict(list)
    for k, x in j:
        if k == "task":
            tasks[(int(x["stream"]), int(x["task"]))].append((int(x["t"]), int(x["wrap"])))
    ran = {}
    for line in execs:
        f = dict(x.split("=", 1) for x in line.rstrip("\n").split("\t")[1:])
        if int(f["pid"]) == p.pid:
            ran[(int(f["stream"]), int(f["task"]), int(f["wrap"]))] = \
                (int(f["prof"]), int(f["prof_drop"]))
    sub = []
    for x in recs:
        if x["type"] != "sqe":
            continue
        for h in x["sqe"][:x["nr_kept"]]:
            key = (h["stream_id"], h["task_id"])
            given = [w for t, w in tasks[key] if t <= x["ts_ns"]]
            tc.check(given, "submission %s at %d has no journal task line" % (key, x["ts_ns"]))
            sub.append((key, given[-1]))
    tc.check(sub, "no submission captured")
    noexec = [s for s in sub if s[0] + (s[1],) not in ran]
    tc.check(not noexec, "%d of %d captured submissions never ran on the card" %
             (len(noexec), len(sub)))
    missing = {s for s in sub if s[0] not in dev}
    outside = {s for s in sub if ran[s[0] + (s[1],)] == (0, 0)}
    dropped = {s for s in sub if ran[s[0] + (s[1],)][1] > 0}
    tc.check(missing == outside | dropped, "%d of %d submissions without device record; the "
             "journal says %d completed while ascbpf's channel was not open (prof=0), %d were "
             "dropped by the channel (prof_drop)" %
             (len(missing), len(sub), len(outside), len(dropped)))
    # a drop is never silent: the capture's LOST record counts at least these
    lost = sum(x["value"] for x in recs if x["type"] == "lost")
    tc.check(lost >= 2 * len(dropped), "%d tasks dropped by the channel, LOST says %d records"
             % (len(dropped), lost))
    print("PASS: %d calls, %d ioctls (module inferred), %d queue records, %d submissions "
          "joined, %d completed outside the device channel, %d dropped by it" %
          (len(ex), len(cio), len(q), len(sub) - len(missing), len(outside), len(dropped)))
finally:
    if p and p.poll() is None:
        p.kill()
    shutil.rmtree(d, ignore_errors=True)
