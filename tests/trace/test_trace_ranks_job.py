# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A node's job in one command (issue 16, item 4): `ascbpf trace --level 1 --
npu_train --scenario multi-rank --ranks 4 --steps 400` on a 4-card npu-modeld.

* Every rank's device channel reads before the rank's first task: each rank's
  capture holds one device record for every task its journal says it
  submitted, all on its own card, no ASC_LOST_BEFORE_DEVCHANNEL, and its
  *_ascend_pt has kernel_details.csv and step_trace_time.csv (before: ranks
  1-3 lost their first submissions, or all of them, "N submissions before
  its device channel started").
* The launcher, which forks and waits and never uses a card, gets no device
  record and no *_ascend_pt, and the summary line says so (before: it got
  rank 0's 22,000 kernels)."""
import collections
import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon  # noqa: E402

RANKS, STEPS = 4, 400
d = tc.workdir()
try:
    jdir = os.path.join(d, "journal")
    os.mkdir(jdir)
    out = os.path.join(d, "out")
    with ModelDaemon(cards=RANKS) as m:
        r = tc.run_ascbpf(["trace", "--level", "1", "-o", out, "--", m.bin("npu_train"),
                           "--scenario", "multi-rank", "--ranks", str(RANKS), "--steps",
                           str(STEPS)], env=m.env(NPU_MODEL_JOURNAL=jdir), timeout=280)
    tc.check(r.returncode == 0, "trace exited %d" % r.returncode)
    caps = sorted(f for f in os.listdir(out) if f.endswith(".cap"))
    tc.check(len(caps) == RANKS + 1, "expected the launcher and %d ranks, got %s" %
             (RANKS, caps))
    runs = sorted(f for f in os.listdir(out) if f.endswith("_ascend_pt"))
    run_of = {int(x.split("_")[-4]): x for x in runs}  # {worker}_{pid}_{stamp}_ascend_pt
    ranks = {}
    launcher = None
    for c in caps:
        recs = tc.records(os.path.join(out, c))
        pid = recs[0]["tgid"]
        proc = [x for x in recs if x["type"] == "process"]
        if proc and proc[0]["rank"] >= 0:
            ranks[proc[0]["rank"]] = (pid, recs)
        else:
            launcher = (pid, recs)
    tc.check(sorted(ranks) == list(range(RANKS)), "ranks %s" % sorted(ranks))
    tc.check(launcher is not None, "no launcher capture")
    lpid, lrecs = launcher
    ldev = [x for x in lrecs if x["type"] == "devtask"]
    tc.check(not ldev, "launcher pid %d: %d device records of other processes" %
             (lpid, len(ldev)))
    tc.check(lpid not in run_of, "launcher pid %d got %s" % (lpid, run_of.get(lpid)))
    line = [x for x in r.stdout.splitlines() if x.startswith("ascbpf: pid %d " % lpid)]
    tc.check(line and "no *_ascend_pt" in line[0],
             "summary line of the launcher does not say it has no output: %s" % line)
    tc.check(len(runs) == RANKS, "%d *_ascend_pt for %d ranks: %s" % (len(runs), RANKS, runs))
    for rank in sorted(ranks):
        pid, recs = ranks[rank]
        jt = collections.Counter()
        for kind, f in tc.process_journal(jdir, pid):
            if kind == "task":
                jt[(int(f["dev"]), int(f["stream"]), int(f["task"]))] += 1
        dev = collections.Counter((x["dev_id"], x["stream_id"], x["task_id"])
                                  for x in recs if x["type"] == "devtask")
        missing = jt - dev
        extra = dev - jt
        tc.check(sum(jt.values()) > 0, "rank %d: no task in the journal" % rank)
        tc.check(not missing, "rank %d pid %d: %d of %d tasks without a device record, "
                 "e.g. %s" % (rank, pid, sum(missing.values()), sum(jt.values()),
                              list(missing)[:3]))
        tc.check(not extra, "rank %d pid %d: %d device records of tasks it did not send" %
                 (rank, pid, sum(extra.values())))
        tc.check({k[0] for k in dev} <= {rank}, "rank %d: cards %s" %
                 (rank, sorted({k[0] for k in dev})))
        lost = [x for x in recs if x["type"] == "lost" and "device channel" in json.dumps(x)]
        tc.check(not lost, "rank %d: %s" % (rank, lost))
        tc.check(not re.search(r"pid %d: \d+ submissions before" % pid, r.stderr),
                 "rank %d: submissions before its device channel" % rank)
        tc.check(pid in run_of, "rank %d pid %d: no *_ascend_pt" % (rank, pid))
        po = os.path.join(out, run_of.get(pid, "?"), "ASCEND_PROFILER_OUTPUT")
        for f in ("kernel_details.csv", "step_trace_time.csv"):
            tc.check(os.path.exists(os.path.join(po, f)), "rank %d: no %s" % (rank, f))
        if os.path.exists(os.path.join(po, "kernel_details.csv")):
            _, _, rows = tc.read_csv(os.path.join(po, "kernel_details.csv"))
            tc.check(len(rows) > 0, "rank %d: kernel_details.csv has no row" % rank)
        print("rank %d pid %d: %d tasks, %d device records" %
              (rank, pid, sum(jt.values()), sum(dev.values())))
    print("PASS")
finally:
    shutil.rmtree(d, ignore_errors=True)
