# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The communication layer of the capture (bpf/ascbpf_events.h "HCCL"), against the
model's journal (npu_model/JOURNAL.md "HCCL"): a 3-rank data-parallel npu_train job on
two simulated nodes (cards 0-1 one node, card 2 the other), each rank started as its
own process (npu_train --rank, as torchrun starts ranks) and traced from its exec, rank
0 at Level1, ranks 1 and 2 at Level0.  Per rank:

* one HCCL_COMM record: the journal's group, nranks 3, the rank, the handle the ops use;
* one HCCL_OP ENTRY and one RETURN per journal hccl line, in seq order: API symbol,
  count, data type, comm and stream as journaled, ret 0;
* the op's device tasks: the SQE headers its thread submitted between ENTRY and RETURN
  are the journal's (stream id, task ids first_task..last_task), one HCCL_TASK report
  each, in order: the task name (HCCL_HASH of item_id) and SQE type are the card's
  (Notify_Record 6, Notify_Wait 7, Memcpy / Reduce_Inline 11), the link type of records
  and copies is the card's (HCCS 1 / RoCE 3), copy sizes are the card's, group_hash
  names the group, and every task has its device record (DEVTASK) on the rank's card;
* Level1 only: each HCCL_OP ENTRY / RETURN shares its tid and time with the call's
  ENTER / EXIT (layer hccl); HcclCommDestroy is an API call too; Level0 has no ENTER
  for any Hccl function;
* `ascbpf dump` (text) prints the new records.
Across ranks: the same group name and the same ops (seq, count) everywhere.
"""
import collections
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon, read_journal  # noqa: E402

STEPS = 10
RANKS = 3
LEVELS = {0: "1", 1: "0", 2: "0"}
SQE_TYPE = {"Notify_Record": 6, "Notify_Wait": 7, "Memcpy": 11, "Reduce_Inline": 11}
LINK = {"HCCS": 1, "ROCE": 3}

d = tc.workdir()
jdir = tempfile.mkdtemp(prefix="hccl-journal.")
m = ModelDaemon(cards=RANKS, extra=["--journal", jdir, "--cards-per-node", "2"])
try:
    m.start()
    root = os.path.join(d, "root_info")
    procs = []
    for r in range(RANKS):
        out = os.path.join(d, "out%d" % r)
        cmd = [tc.ASCBPF, "trace", "--level", LEVELS[r], "-o", out, "--no-convert", "--",
               m.bin("npu_train"), "--scenario", "multi-rank", "--ranks", str(RANKS),
               "--rank", str(r), "--root-info", root, "--steps", str(STEPS)]
        # no ASCEND_DEVICE_ID: the trace learns the rank's card from its first submission
        env = m.env(NPU_MODEL_JOURNAL=jdir, RANK=r)
        env.pop("ASCEND_DEVICE_ID", None)
        procs.append((r, out, subprocess.Popen(cmd, env=env,
                                               stdout=subprocess.PIPE,
                                               stderr=subprocess.STDOUT, text=True)))
    for r, out, p in procs:
        text, _ = p.communicate(timeout=280)
        print("--- rank %d\n%s" % (r, text), end="")
        tc.check(p.returncode == 0, "rank %d: trace exited %d" % (r, p.returncode))
    m.stop()        # the card's journal is complete
    journal = read_journal(jdir)
finally:
    m.stop()

ctasks = {}     # (dev, stream, task) -> hccl_task line
jops = collections.defaultdict(list)
jcomm = {}
for kind, f in journal:
    if kind == "hccl_task":
        ctasks[(int(f["dev"]), int(f["stream"]), int(f["task"]))] = f
    elif kind == "hccl":
        jops[int(f["rank"])].append(f)
    elif kind == "hccl_comm":
        jcomm[int(f["rank"])] = f

groups = set()
for r, out, _ in procs:
    caps = os.listdir(out)
    tc.check(len(caps) == 1, "rank %d: captures %s" % (r, caps))
    cap = os.path.join(out, caps[0])
    recs = tc.records(cap)
    tc.check(tc.stats(recs)["drops"] == 0, "rank %d: drops" % r)
    proc = [x for x in recs if x["type"] == "process"]
    tc.check(len(proc) == 1 and proc[0]["rank"] == r, "rank %d: process %s" % (r, proc))
    pid = proc[0]["tgid"]
    probes = {x["probe_id"]: x for x in recs if x["type"] == "probe"}
    hashes = {x["hash"]: x["name"] for x in recs if x["type"] == "hccl_hash"}
    jc = jcomm[r]
    ops = sorted(jops[r], key=lambda f: int(f["seq"]))
    tc.check([int(f["seq"]) for f in ops] == list(range(STEPS)), "rank %d journal ops" % r)

    comms = [x for x in recs if x["type"] == "hccl_comm"]
    tc.check(len(comms) == 1, "rank %d: %d communicator records" % (r, len(comms)))
    c = comms[0]
    tc.check(c["group"] == jc["group"] and c["nranks"] == RANKS and c["rank"] == r and
             c["ret"] == 0 and c["kind"] == 1 and c["comm"] == int(jc["comm"], 16),
             "rank %d: communicator %s, journal %s" % (r, c, jc))
    tc.check(probes[c["probe_id"]]["symbol"] == "HcclCommInitRootInfo", "comm probe")
    groups.add(c["group"])

    hops = [x for x in recs if x["type"] == "hccl_op"]
    entries = [x for x in hops if x["side"] == 0]
    returns = [x for x in hops if x["side"] == 1]
    tc.check(len(entries) == STEPS and len(returns) == STEPS,
             "rank %d: %d entries, %d returns" % (r, len(entries), len(returns)))
    by_tid = collections.defaultdict(list)
    for x in recs:
        by_tid[x["tid"]].append(x)
    dev_tasks = {(x["dev_id"], x["stream_id"], x["task_id"])
                 for x in recs if x["type"] == "devtask"}
    for seq, (e, ret, jo) in enumerate(zip(entries, returns, ops)):
        tc.check(probes[e["probe_id"]]["symbol"] == jo["op"] == "HcclAllReduce" and
                 probes[e["probe_id"]]["layer_name"] == "hccl", "seq %d symbol" % seq)
        a = e["args"]
        tc.check(a[2] == int(jo["count"]) and a[3] == int(jo["dtype"]) and
                 a[5] == c["comm"] and a[6] == int(jo["stream"], 16),
                 "rank %d seq %d: args %s, journal %s" % (r, seq, a, jo))
        tc.check(ret["ret"] == 0 and ret["tid"] == e["tid"] and ret["ts_ns"] > e["ts_ns"],
                 "rank %d seq %d: return %s" % (r, seq, ret))
        window = [x for x in by_tid[e["tid"]] if e["ts_ns"] <= x["ts_ns"] <= ret["ts_ns"]]
        sqes = [h for x in window if x["type"] == "sqe" for h in x["sqe"]]
        reports = [x for x in window if x["type"] == "hccl_task"]
        n, first = int(jo["tasks"]), int(jo["first_task"])
        tc.check(len(sqes) == n and len(reports) == n,
                 "rank %d seq %d: %d SQEs, %d reports, journal %d tasks" %
                 (r, seq, len(sqes), len(reports), n))
        for k, (h, rep) in enumerate(zip(sqes, reports)):
            key = (r, h["stream_id"], h["task_id"])
            tc.check(h["stream_id"] == int(jo["stream_id"]) and
                     h["task_id"] == (first + k) % 65536, "rank %d seq %d task %d: %s" %
                     (r, seq, k, h))
            jt = ctasks[key]
            name = hashes.get(rep["item_id"])
            tc.check(name == jt["ctask"] and h["sqe_type"] == SQE_TYPE[name],
                     "rank %d seq %d task %d: %s / sqe type %d, card ran %s" %
                     (r, seq, k, name, h["sqe_type"], jt["ctask"]))
            tc.check(hashes.get(rep["group_hash"]) == c["group"] and
                     rep["local_rank"] == r and rep["rank_size"] == RANKS,
                     "rank %d seq %d task %d: report %s" % (r, seq, k, rep))
            if name != "Notify_Wait":
                tc.check(rep["link_type"] == LINK[jt["link"]] and
                         rep["remote_rank"] == int(jt["peer_dev"]),
                         "rank %d seq %d task %d: link %d to %d, card %s to %s" %
                         (r, seq, k, rep["link_type"], rep["remote_rank"], jt["link"],
                          jt["peer_dev"]))
            if name in ("Memcpy", "Reduce_Inline"):
                tc.check(rep["data_size"] == int(jt["bytes"]), "copy size")
            tc.check(key in dev_tasks, "rank %d seq %d task %d: no device record %s" %
                     (r, seq, k, key))

    hccl_enters = [x for x in recs if x["type"] == "enter" and
                   probes[x["probe_id"]]["layer_name"] == "hccl"]
    if LEVELS[r] == "0":
        tc.check(not hccl_enters, "rank %d: Level0 has %d Hccl ENTER records" %
                 (r, len(hccl_enters)))
    else:
        api = {(x["tid"], x["ts_ns"], x["probe_id"]) for x in hccl_enters}
        exits = {(x["tid"], x["ts_ns"], x["probe_id"]) for x in recs if x["type"] == "exit"}
        for e, ret in zip(entries, returns):
            tc.check((e["tid"], e["ts_ns"], e["probe_id"]) in api, "op without its ENTER")
            tc.check((ret["tid"], ret["ts_ns"], ret["probe_id"]) in exits,
                     "op without its EXIT")
        names = {probes[x["probe_id"]]["symbol"] for x in hccl_enters}
        tc.check({"HcclAllReduce", "HcclCommInitRootInfo", "HcclCommDestroy"} <= names,
                 "Level1 Hccl calls %s" % names)

    text = subprocess.run([tc.ASCBPF, "dump", cap], capture_output=True, text=True,
                          timeout=120).stdout
    for t in ("hccl_op ", "hccl_comm ", "hccl_task ", "hccl_hash "):
        tc.check(any(l.startswith(t) for l in text.splitlines()), "dump prints no %s" % t)
    print("rank %d (pid %d, level %s): %d ops, %d tasks checked" %
          (r, pid, LEVELS[r], STEPS, sum(int(f["tasks"]) for f in ops)))

tc.check(len(groups) == 1, "groups %s" % groups)
counts = {r: [f["count"] for f in sorted(jops[r], key=lambda f: int(f["seq"]))]
          for r in range(RANKS)}
tc.check(counts[0] == counts[1] == counts[2], "ranks issued different ops")
shutil.rmtree(jdir, ignore_errors=True)
shutil.rmtree(d, ignore_errors=True)
print("PASS")
