# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The communication outputs of npu_model's pipeline scenario, each rank traced from its
exec (npu_train --rank, as torchrun starts ranks), converted rank by rank with the other
as --peer, checked against the model's journal:

* pipeline (2 stages, HcclSend / HcclRecv): every op is p2p (collective is empty), and
  each rank's step_trace_time.csv Bubble, summed over steps, is the device time of its
  receives (the journal's hccl_task lines of those ops), within the counter's rounding.
"""
import collections
import csv
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon, read_journal  # noqa: E402


def trace_job(d, name, ranks, cards_per_node, scenario, steps):
    """Traces each rank from its exec; returns ({rank: capture}, journal)."""
    out = os.path.join(d, name)
    jdir = tempfile.mkdtemp(prefix="comm-%s." % name)
    m = ModelDaemon(cards=ranks, extra=["--journal", jdir, "--cards-per-node",
                                        str(cards_per_node)])
    try:
        m.start()
        procs = []
        for r in range(ranks):
            cmd = [tc.ASCBPF, "trace", "--level", "0", "-o", out, "--no-convert", "--",
                   m.bin("npu_train"), "--scenario", scenario, "--ranks", str(ranks),
                   "--rank", str(r), "--root-info", os.path.join(d, name + ".root"),
                   "--steps", str(steps)]
            env = m.env(NPU_MODEL_JOURNAL=jdir, RANK=r, ASCEND_DEVICE_ID=r)
            procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, text=True))
        for r, p in enumerate(procs):
            text, _ = p.communicate(timeout=280)
            print(text[-800:])
            tc.check(p.returncode == 0, "%s rank %d: trace exited %d" % (name, r, p.returncode))
        m.stop()
        journal = read_journal(jdir)
    finally:
        m.stop()
        shutil.rmtree(jdir, ignore_errors=True)
    caps = {}
    for c in glob.glob(os.path.join(out, "ascbpf-*.cap")):
        recs = tc.records(c)
        proc = [x for x in recs if x["type"] == "process"]
        if proc and proc[0]["rank"] >= 0:
            caps[proc[0]["rank"]] = c
    tc.check(sorted(caps) == list(range(ranks)), "%s: rank captures %s" % (name, sorted(caps)))
    return caps, journal


def convert(d, name, caps, r):
    out = os.path.join(d, "%s-conv%d" % (name, r))
    peers = []
    for p in sorted(caps):
        if p != r:
            peers += ["--peer", caps[p]]
    cp = subprocess.run([tc.ASCBPF, "convert", caps[r], "-o", out] + peers,
                        capture_output=True, text=True, timeout=240)
    tc.check(cp.returncode == 0, "%s rank %d: convert exited %d: %s" %
             (name, r, cp.returncode, cp.stderr[-400:]))
    runs = glob.glob(os.path.join(out, "*_ascend_pt"))
    tc.check(len(runs) == 1, "%s rank %d: runs %s" % (name, r, runs))
    return runs[0]


def load(path):
    with open(path) as f:
        return json.load(f)


d = tc.workdir()

# ---- pipeline ----
caps, journal = trace_job(d, "pp", 2, 1, "pipeline", 4)
ctasks = {}
pops = collections.defaultdict(list)
for kind, f in journal:
    if kind == "hccl_task":
        ctasks[(int(f["dev"]), int(f["stream"]), int(f["task"]))] = f
    elif kind == "hccl":
        pops[int(f["dev"])].append(f)
for r in range(2):
    run = convert(d, "pp", caps, r)
    po = os.path.join(run, "ASCEND_PROFILER_OUTPUT")
    comm = load(os.path.join(po, "communication.json"))
    p2p = sorted(k for st in comm.values() for k in st["p2p"] if k != "Total Op Info")
    tc.check(all(st["collective"] == {} for st in comm.values()), "rank %d: collective ops" % r)
    tc.check(p2p == sorted(f["name"] + "@" + f["group"] for f in pops[r]),
             "rank %d: p2p ops %s, journal %s" % (r, p2p[:3], len(pops[r])))
    recv_ns = 0
    ntasks = 0
    for f in pops[r]:
        if f["op"] != "HcclRecv":
            continue
        first, n = int(f["first_task"]), int(f["tasks"])
        ts = [ctasks[(r, int(f["stream_id"]), (first + k) % 65536)] for k in range(n)]
        recv_ns += max(int(t["t1"]) for t in ts) - min(int(t["t0"]) for t in ts)
        ntasks += n
    with open(os.path.join(po, "step_trace_time.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    bubble = sum(float(x["Bubble"]) for x in rows) * 1000.0
    tc.check(recv_ns > 0 and abs(bubble - recv_ns) <= 40 * (ntasks + len(rows)),
             "rank %d: Bubble %.0f ns, journal receives %d ns" % (r, bubble, recv_ns))
print("pipeline: p2p ops and the receive Bubble of 2 ranks match the journal")
shutil.rmtree(d, ignore_errors=True)
print("PASS")
