# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""ascbpf trace -- npu_train --scenario multi-rank: the launcher forks one
process per rank (one card each); ascbpf follows the forks (sched_process_fork),
adopts each child into its own capture and reads each card's profiling
channel once, from the child's TSDRV bind on.  Children are held at their
fork until adopted (test_trace_ranks_short.py checks that exactly); this
test keeps the looser window check that also holds where they are adopted
while they run (--no-hold, arm64), so per rank: from its first captured call
on, every journal call is in the capture; every device record in a rank's
capture belongs to one of that rank's submissions, on its card."""
import collections
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon  # noqa: E402

STEPS = 150     # about 0.3 s a rank: well past its asynchronous adoption (tens of ms)
_exp = {}


def exported(lib):
    if lib not in _exp:
        r = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True)
        _exp[lib] = {l.split()[-1] for l in r.stdout.splitlines() if l.strip()}
    return _exp[lib]

d = tc.workdir()
try:
    with ModelDaemon(cards=2, journal=True) as m:
        jdir = os.path.join(d, "journal")
        os.mkdir(jdir)
        out = os.path.join(d, "out")
        r = tc.run_ascbpf(["trace", "--level", "2", "-o", out, "--no-convert", "--", m.bin("npu_train"),
                           "--scenario", "multi-rank", "--steps", str(STEPS)],
                          env=m.env(NPU_MODEL_JOURNAL=jdir), timeout=240)
        tc.check(r.returncode == 0, "trace exited %d" % r.returncode)
    caps = sorted(os.listdir(out))
    seen_ranks = []
    tc.check(len(caps) == 3, "expected the launcher and two ranks, got %s" % caps)
    ranks = 0
    for c in caps:
        recs = tc.records(os.path.join(out, c))
        pid = recs[0]["tgid"]
        sqes = [x for x in recs if x["type"] == "sqe"]
        if not sqes:
            continue			# the launcher: forks and waits
        ranks += 1
        proc = [x for x in recs if x["type"] == "process"]
        tc.check(len(proc) == 1, "pid %d: %d process records" % (pid, len(proc)))
        seen_ranks.append(proc[0]["rank"])
        tc.check(tc.stats(recs)["drops"] == 0, "pid %d: drops" % pid)
        ccalls, unpaired = tc.calls(recs)
        # half-recorded calls only while probes were being attached (at the adoption, and
        # at the sites of the dlopened libopapi.so) or at the process's end: per thread and
        # function, none between its first and last complete call (how many there are
        # depends on how much the rank ran during its asynchronous adoption)
        names = {p["probe_id"]: p["symbol"] for p in recs if p["type"] == "probe"}
        paired = {}
        for name, tid, t0, t1 in ccalls:
            lo, hi = paired.get((tid, name), (t0, t1))
            paired[(tid, name)] = (min(lo, t0), max(hi, t1))
        inside = [u for u in unpaired
                  if (u["tid"], names.get(u["probe_id"], "?")) in paired and
                  paired[(u["tid"], names.get(u["probe_id"], "?"))][0] < u["ts_ns"] <
                  paired[(u["tid"], names.get(u["probe_id"], "?"))][1]]
        tc.check(not inside, "pid %d: %d of %d unpaired records between complete calls of "
                 "their thread and function, e.g. %s" % (pid, len(inside), len(unpaired),
                                                        inside[:3]))
        last = max(x[3] for x in ccalls)
        jpath = os.path.join(jdir, "journal.%d.tsv" % pid)
        # per function, from its first captured call on (a dlopened library is attached
        # later than the process)
        first = {}
        for x in ccalls:
            first.setdefault(x[0], x[2])
        jn = collections.Counter()
        for line in open(jpath):
            if line.startswith("api\t"):
                f = dict(kv.split("=", 1) for kv in line.rstrip("\n").split("\t")[1:])
                if f["name"] in first and int(f["t0"]) >= first[f["name"]] and \
                        int(f["t1"]) <= last:
                    jn[f["name"]] += 1
        # exported functions (the journal's); library-internal ones the table's globs catch
        # (nm -D does not list them) are not journaled
        lib_of = {p["symbol"]: p["library"] for p in recs if p["type"] == "probe"}
        cn = collections.Counter(x[0] for x in ccalls if x[0] in exported(lib_of[x[0]]))
        for name, n in cn.items():
            tc.check(jn[name] == n, "pid %d: %s journal %d, capture %d (window)" %
                     (pid, name, jn[name], n))
        steps = [x["step"] for x in recs if x["type"] == "step"]
        tc.check(len(steps) >= STEPS // 2 and steps == list(range(len(steps))),
                 "pid %d: steps %s" % (pid, steps))
        keys = {(h["stream_id"], h["task_id"]) for s in sqes for h in s["sqe"][:s["nr_kept"]]}
        dev = [x for x in recs if x["type"] == "devtask"]
        tc.check(len(dev) > 0.5 * len(keys), "pid %d: %d device records for %d tasks" %
                 (pid, len(dev), len(keys)))
        # tasks submitted before halSqTaskSend was attached in the child can still
        # complete after its card's reader started: judge by the rank's streams
        streams = {k[0] for k in keys}
        tc.check(all(x["stream_id"] in streams for x in dev),
                 "pid %d: a device record of another process's stream" % pid)
        tc.check(sum(1 for x in dev if (x["stream_id"], x["task_id"]) in keys) >
                 0.5 * len(keys), "pid %d: device records do not join submissions" % pid)
        binds = {b["device_id"] for b in recs if b["type"] == "fdbind" and
                 b["module_name"] == "TSDRV"}
        tc.check(len(binds) == 1 and {x["dev_id"] for x in dev} == binds,
                 "pid %d: cards %s / %s" % (pid, binds, {x["dev_id"] for x in dev}))
        print("rank pid %d card %s: %d calls, %d steps, %d/%d device records" %
              (pid, binds, len(ccalls), len(steps), len(dev), len(keys)))
    tc.check(ranks == 2, "%d rank captures" % ranks)
    # the launcher sets RANK with setenv() after its fork: read from the live environment
    tc.check(sorted(seen_ranks) == [0, 1], "ranks %s, expected [0, 1]" % seen_ranks)
    print("PASS")
finally:
    shutil.rmtree(d, ignore_errors=True)
