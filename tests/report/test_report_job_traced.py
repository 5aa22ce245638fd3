# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The communication outputs and the job report of a traced multi-rank job, against
the model's journal (npu_model/JOURNAL.md "HCCL"): a 3-rank data-parallel npu_train job
on two simulated nodes (cards 0-1 one node, card 2 the other), rank 1 slow (its
kernels x 100), each rank traced from its exec as its own process, rank 0 at Level1, the
others at Level0.  Then

* `ascbpf convert` of each rank (with the others as --peer): communication.json has
  every journal op of that rank once, as "<name>@<group>", with Elapse = its tasks'
  device span, Wait = its Notify_Waits and Transit = its copies, all from the card's
  hccl_task lines (within the 50 MHz counter's rounding); communication_matrix.json
  has the rank's peers with the link types the card used; step_trace_time.csv's
  Communication of each step covers that step's op; profiler_metadata.json's
  parallel_group_info has the journal's group, rank and global ranks;
* rank 0 (Level1): trace_view.json has one `Hccl@HcclAllReduce` API event per op, and
  a HostToDevice flow from it to its op on the HCCL process's group row;
* `ascbpf report --json` of the job directory names rank 1 as the slow rank.
"""
import collections
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

STEPS = 6
RANKS = 3
TOL_MS = 0.002      # 2 us: device ticks of 20 ns on each task end

d = tc.workdir()
jdir = tempfile.mkdtemp(prefix="comm-journal.")
m = ModelDaemon(cards=RANKS, extra=["--journal", jdir, "--cards-per-node", "2"])
try:
    m.start()
    root = os.path.join(d, "root_info")
    procs = []
    for r in range(RANKS):
        out = os.path.join(d, "job", "rank%d" % r)
        cmd = [tc.ASCBPF, "trace", "--level", "1" if r == 0 else "0", "-o", out,
               "--no-convert", "--",
               m.bin("npu_train"), "--scenario", "multi-rank", "--ranks", str(RANKS),
               "--rank", str(r), "--root-info", root, "--steps", str(STEPS),
               "--slow-rank", "1:100"]
        env = m.env(NPU_MODEL_JOURNAL=jdir, RANK=r, ASCEND_DEVICE_ID=r)
        procs.append((r, out, subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                               stderr=subprocess.STDOUT, text=True)))
    for r, out, p in procs:
        text, _ = p.communicate(timeout=280)
        print("--- rank %d\n%s" % (r, text[-1500:]), end="")
        tc.check(p.returncode == 0, "rank %d: trace exited %d" % (r, p.returncode))
    m.stop()
    journal = read_journal(jdir)
finally:
    m.stop()

ctasks = {}
jops = collections.defaultdict(list)
jcomm = {}
for kind, f in journal:
    if kind == "hccl_task":
        ctasks[(int(f["dev"]), int(f["stream"]), int(f["task"]))] = f
    elif kind == "hccl":
        jops[int(f["rank"])].append(f)
    elif kind == "hccl_comm":
        jcomm[int(f["rank"])] = f


def op_tasks(r, jo):
    first, n = int(jo["first_task"]), int(jo["tasks"])
    return [ctasks.get((r, int(jo["stream_id"]), (first + k) % 65536)) for k in range(n)]


caps = {}
for r, out, _ in procs:
    c = [os.path.join(out, x) for x in os.listdir(out)] if os.path.isdir(out) else []
    tc.check(len(c) == 1, "rank %d: captures %s" % (r, c))
    if c:
        caps[r] = c[0]

for r in sorted(caps):
    out = os.path.join(d, "conv%d" % r)
    peers = []
    for p in sorted(caps):
        if p != r:
            peers += ["--peer", caps[p]]
    cp = subprocess.run([tc.ASCBPF, "convert", caps[r], "-o", out] + peers,
                        capture_output=True, text=True, timeout=240)
    tc.check(cp.returncode == 0, "rank %d: convert exited %d: %s" %
             (r, cp.returncode, cp.stderr[-500:]))
    runs = glob.glob(os.path.join(out, "*_ascend_pt"))
    tc.check(len(runs) == 1, "rank %d: runs %s" % (r, runs))
    po = os.path.join(runs[0], "ASCEND_PROFILER_OUTPUT")
    group = jcomm[r]["group"]
    with open(os.path.join(po, "communication.json")) as f:
        comm = json.load(f)
    got = {}
    for step, kinds in comm.items():
        tc.check(set(kinds) == {"p2p", "collective"}, "rank %d %s: %s" % (r, step, list(kinds)))
        for k, v in kinds["collective"].items():
            if k != "Total Op Info":
                tc.check(k not in got, "rank %d: %s twice" % (r, k))
                got[k] = (step, v)
    want = {jo["name"] + "@" + group: jo for jo in jops[r]}
    tc.check(sorted(got) == sorted(want), "rank %d: ops %s, journal %s" %
             (r, sorted(got)[:3], sorted(want)[:3]))
    for k, jo in want.items():
        if k not in got:
            continue
        ti = got[k][1]["Communication Time Info"]
        ts = op_tasks(r, jo)
        tc.check(all(ts), "rank %d %s: journal tasks" % (r, k))
        el = (max(int(t["t1"]) for t in ts) - min(int(t["t0"]) for t in ts)) / 1e6
        wait = sum(int(t["t1"]) - int(t["t0"]) for t in ts if t["ctask"] == "Notify_Wait") / 1e6
        transit = sum(int(t["t1"]) - int(t["t0"]) for t in ts
                      if t["ctask"] in ("Memcpy", "Reduce_Inline")) / 1e6
        n = len(ts)
        tc.check(abs(ti["Elapse Time(ms)"] - el) <= TOL_MS,
                 "rank %d %s: elapse %r, journal %r" % (r, k, ti["Elapse Time(ms)"], el))
        tc.check(abs(ti["Wait Time(ms)"] - wait) <= TOL_MS * n,
                 "rank %d %s: wait %r, journal %r" % (r, k, ti["Wait Time(ms)"], wait))
        tc.check(abs(ti["Transit Time(ms)"] - transit) <= TOL_MS * n,
                 "rank %d %s: transit %r, journal %r" % (r, k, ti["Transit Time(ms)"], transit))
    with open(os.path.join(po, "communication_matrix.json")) as f:
        mx = json.load(f)
    links = {}
    for step in mx.values():
        for key, ls in step["collective"].items():
            if "-total@" in key:
                for lk, e in ls.items():
                    links[lk] = e["Transport Type"]
    want_links = {}
    for jo in jops[r]:
        for t in op_tasks(r, jo):
            if t and t["ctask"] in ("Memcpy", "Reduce_Inline"):
                want_links["%d-%s" % (r, t["peer_dev"])] = "HCCS" if t["link"] == "HCCS" \
                    else "RDMA"
    tc.check(links == want_links, "rank %d: matrix links %s, card %s" % (r, links, want_links))
    with open(os.path.join(runs[0], "profiler_metadata.json")) as f:
        pg = json.load(f).get("parallel_group_info", {})
    tc.check(pg.get(group) == {"group_name": "default_group", "group_rank": r,
                               "global_ranks": list(range(RANKS))},
             "rank %d: parallel_group_info %s" % (r, pg))
    if r == 0:
        with open(os.path.join(po, "trace_view.json")) as f:
            ev = json.load(f)
        pn = {e["pid"]: e["args"]["name"] for e in ev if e.get("name") == "process_name"}
        api = [e for e in ev if e.get("ph") == "X" and e["name"] == "Hccl@HcclAllReduce"]
        tc.check(len(api) == len(jops[0]), "rank 0: %d Hccl@ events, journal %d ops" %
                 (len(api), len(jops[0])))
        tc.check(all(e["args"]["level"] == "hccl" and pn.get(e["pid"]) == "CANN" for e in api),
                 "Hccl@ events in CANN, level hccl: %s" % api[:1])
        ids = {str(e["args"]["connection_id"]) for e in api}
        hp = [p for p, n in pn.items() if n == "HCCL"]
        ops = [e for e in ev if e.get("ph") == "X" and hp and e["pid"] == hp[0] and
               e["tid"] == 0]
        ends = {e["id"] for e in ev if e.get("cat") == "HostToDevice" and e["ph"] == "f" and
                hp and e["pid"] == hp[0]}
        starts = {e["id"] for e in ev if e.get("cat") == "HostToDevice" and e["ph"] == "s"}
        tc.check({str(e["args"]["connection_id"]) for e in ops} == ids and ids <= ends and
                 ids <= starts, "rank 0: Hccl@ events joined to their ops by HostToDevice")
    with open(os.path.join(po, "step_trace_time.csv"), newline="") as f:
        import csv
        rows = list(csv.DictReader(f))
    # every training iteration all-reduces: steps 0..STEPS-1 (each ends at its optimizer
    # step's return); step STEPS, after the last one, has none
    it = [x for x in rows if int(x["Step"]) < STEPS]
    tc.check(len(it) == STEPS and all(float(x["Communication"]) > 0 for x in it) and
             all(int(x["Step"]) <= STEPS for x in rows),
             "rank %d: step rows with communication %s" % (r, rows[:2]))

rp = subprocess.run([tc.ASCBPF, "report", "--json", os.path.join(d, "job")],
                    capture_output=True, text=True, timeout=240)
tc.check(rp.returncode == 0, "report exited %d: %s" % (rp.returncode, rp.stderr[-400:]))
try:
    job = json.loads(rp.stdout)["job"]
except ValueError:
    job = {"findings": [], "ranks": []}
tc.check([x["rank"] for x in job["ranks"]] == list(range(RANKS)), "report ranks %s" %
         job["ranks"])
# the card's truth: each rank's arrival waits (the first sync: a Notify_Wait per peer,
# peers in rank order) summed per peer they waited on, over every op
on = collections.Counter()
for r in range(RANKS):
    peers = [p for p in range(RANKS) if p != r]
    for jo in jops[r]:
        waits = [t for t in op_tasks(r, jo) if t and t["ctask"] == "Notify_Wait"]
        for p, t in zip(peers, waits[:len(peers)]):
            on[p] += int(t["t1"]) - int(t["t0"])
late = on.most_common(1)[0][0]
print("journal: arrival waits per peer waited on (ns):", dict(on))
slow = [f for f in job["findings"] if f["id"] == "slow_rank"]
tc.check(late == 1, "the card's waits blame rank %d, not the slowed rank 1" % late)
tc.check(len(slow) == 1 and slow[0]["rank"] == late,
         "report names rank %d slow: %s" % (late, job["findings"]))
print(rp.stdout[:600])
shutil.rmtree(jdir, ignore_errors=True)
shutil.rmtree(d, ignore_errors=True)
print("PASS")
