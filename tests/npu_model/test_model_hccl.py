# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""HCCL in npu_model: npu_train multi-rank all-reduces its gradients through libhccl.so,
and the collectives really synchronize the ranks on the cards (npu_model/README.md
"HCCL"; journal format in npu_model/JOURNAL.md "HCCL").

* healthy job, 4 ranks on 2 simulated nodes of 2 cards: every rank journals one
  communicator (same group, its rank, 4 ranks, the cards of ranks 0..3) and one
  HcclAllReduce per step, seq 0..N-1, same group, count and bytes on every rank;
  each op's device tasks (hccl_task lines of its dev, stream, task ids
  first_task..last_task) are the mesh algorithm's: per peer 3 Notify_Record,
  3 Notify_Wait, 1 Reduce_Inline, 1 Memcpy, all ok, copies over HCCS to the card of
  the same node and over ROCE to the other node, 1/4 of the op's bytes each;
* synchronization (device-time causality, no wall clock): no rank's op ends on its
  card before every rank's op has started on its card, and a rank's first Notify_Wait
  for peer p ends no earlier than p's first Notify_Record of the same op ends;
* a slow rank (--slow-rank 1:100): its peers spend longer in Notify_Wait than it does;
* a slow link (npu-modeld --slow-link 0-1:50): the copies between cards 0 and 1 take
  longer than the ones between 2 and 3 (same HCCS link type, same bytes);
* a rank that dies before op 2 (--die-rank 2:2): the hccl_fault line names it, the
  others issue op 2 and their Notify_Wait for rank 2 fails at the card's task timeout;
* a rank that hangs before op 2 (--hang-rank 1:2): the same, and the job does not end
  while it hangs (the test ends it once the journal shows the failed waits);
* the dp-tp scenario (4 ranks, tensor-parallel pairs 0-1 and 2-3 on the two nodes,
  data-parallel pairs 0-2 and 1-3 across them): every process has two communicators
  of 2, four groups in all with the right cards, and each group's members issue the
  same all-reduces (1 MiB of activations on TP groups over HCCS, 2 MiB of gradients on
  DP groups over ROCE);
* the pipeline scenario (2 stages): every step rank 0 sends the activations and receives
  their gradient, rank 1 receives and sends back (HcclSend 4 tasks, HcclRecv 3, all ok,
  the copy pushed to the peer card with the op's bytes), and a Recv ends on its card no
  earlier than the matching Send's last task (the receiver waits for the data).
"""
import collections
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from npu_model import ModelDaemon, read_journal  # noqa: E402

STEPS = 6


def check(cond, msg):
    if not cond:
        print("FAIL:", msg)
        sys.exit(1)


def run_job(daemon_extra, train_extra, ranks=4, cards_per_node=2, expect_rc=0, timeout=240,
            scenario="multi-rank", per_pid=False):
    jdir = tempfile.mkdtemp(prefix="hccl-journal.")
    m = ModelDaemon(cards=ranks, extra=["--journal", jdir, "--cards-per-node",
                                        str(cards_per_node)] + daemon_extra)
    m.start()
    try:
        r = subprocess.run([m.bin("npu_train"), "--scenario", scenario, "--ranks",
                            str(ranks), "--steps", str(STEPS)] + train_extra,
                           env=m.env(NPU_MODEL_JOURNAL=jdir), capture_output=True,
                           text=True, timeout=timeout)
        print(r.stdout, end="")
        print(r.stderr, end="")
        if expect_rc == 0:
            check(r.returncode == 0, "npu_train exited %d" % r.returncode)
        else:
            check(r.returncode != 0, "npu_train should have failed")
        m.stop()    # the daemon's journal is complete once it has stopped
        if per_pid:
            return {n: read_journal(jdir, n.split(".")[1]) for n in os.listdir(jdir)
                    if n.startswith("journal.")}
        return read_journal(jdir)
    finally:
        m.stop()
        shutil.rmtree(jdir, ignore_errors=True)


def split(j):
    ops = collections.defaultdict(dict)     # rank -> seq -> hccl line
    comms = {}
    tasks = {}                              # (dev, stream, task) -> [hccl_task lines]
    faults = []
    for kind, f in j:
        if kind == "hccl":
            ops[int(f["rank"])][int(f["seq"])] = f
        elif kind == "hccl_comm":
            comms[int(f["rank"])] = f
        elif kind == "hccl_task":
            tasks.setdefault((int(f["dev"]), int(f["stream"]), int(f["task"])), []).append(f)
        elif kind == "hccl_fault":
            faults.append(f)
    return ops, comms, tasks, faults


def op_tasks(op, tasks):
    """The hccl_task lines of one op, in submission order (task ids wrap at 65536)."""
    dev, sid = int(op["dev"]), int(op["stream_id"])
    n, first = int(op["tasks"]), int(op["first_task"])
    out = []
    for k in range(n):
        key = (dev, sid, (first + k) % 65536)
        check(key in tasks, "op %s seq %s rank %s: task %s has no hccl_task line" %
              (op["op"], op["seq"], op["rank"], key))
        out.append(tasks[key][-1])
    check((first + n - 1) % 65536 == int(op["last_task"]), "last_task of %s" % op)
    return out


def healthy():
    j = run_job([], [])
    ops, comms, tasks, _ = split(j)
    check(sorted(comms) == [0, 1, 2, 3], "communicators of ranks %s" % sorted(comms))
    groups = {c["group"] for c in comms.values()}
    check(len(groups) == 1, "one group for all ranks, got %s" % groups)
    for r, c in comms.items():
        check(c["ret"] == "0" and c["nranks"] == "4" and c["ranks"] == "0,1,2,3",
              "rank %d communicator %s" % (r, c))
    ref = ops[0]
    check(sorted(ref) == list(range(STEPS)), "rank 0 ops %s" % sorted(ref))
    link_of = lambda a, b: "HCCS" if a // 2 == b // 2 else "ROCE"  # noqa: E731
    spans = collections.defaultdict(dict)   # seq -> rank -> (start, end) on the card
    first_rec = {}                          # (seq, rank, peer) -> end of first record to peer
    first_wait = {}                         # (seq, rank, peer_notify_card?) -> handled below
    for r in range(4):
        check(sorted(ops[r]) == list(range(STEPS)), "rank %d ops %s" % (r, sorted(ops[r])))
        for seq, op in ops[r].items():
            check(op["op"] == "HcclAllReduce" and op["ret"] == "0", "rank %d seq %d %s" %
                  (r, seq, op))
            check(op["group"] == comms[0]["group"], "rank %d seq %d group" % (r, seq))
            for k in ("count", "dtype", "bytes", "name"):
                check(op[k] == ref[seq][k], "rank %d seq %d %s %s != %s" %
                      (r, seq, k, op[k], ref[seq][k]))
            check(op["name"].startswith("hcom_allReduce__") and
                  op["name"].endswith("_%d_1" % seq), "op name %s" % op["name"])
            ts = op_tasks(op, tasks)
            kinds = collections.Counter(t["ctask"] for t in ts)
            check(kinds == {"Notify_Record": 9, "Notify_Wait": 9, "Reduce_Inline": 3,
                            "Memcpy": 3}, "rank %d seq %d tasks %s" % (r, seq, kinds))
            check(all(t["status"] == "ok" for t in ts), "rank %d seq %d: failed task" % (r, seq))
            chunk = (int(op["bytes"]) + 3) // 4
            for t in ts:
                peer = int(t["peer_dev"])
                if t["ctask"] in ("Memcpy", "Reduce_Inline", "Notify_Record"):
                    check(peer != r and t["link"] == link_of(r, peer),
                          "rank %d: %s to card %d over %s" % (r, t["ctask"], peer, t["link"]))
                if t["ctask"] in ("Memcpy", "Reduce_Inline"):
                    check(int(t["bytes"]) == chunk, "copy of %s bytes, want %d" %
                          (t["bytes"], chunk))
                if t["ctask"] == "Notify_Record":
                    first_rec.setdefault((seq, r, peer), int(t["t1"]))
            spans[seq][r] = (min(int(t["t0"]) for t in ts), max(int(t["t1"]) for t in ts))
            # the first waits come one per peer, in peer order, after the records
            waits = [t for t in ts if t["ctask"] == "Notify_Wait"][:3]
            for peer, w in zip([p for p in range(4) if p != r], waits):
                first_wait[(seq, r, peer)] = int(w["t1"])
    for seq, per in spans.items():
        last_start = max(s for s, _ in per.values())
        for r, (_, e) in per.items():
            check(e >= last_start, "seq %d: rank %d ended at %d before the last rank started "
                  "at %d" % (seq, r, e, last_start))
    for (seq, r, peer), t1 in first_wait.items():
        rec = first_rec[(seq, peer, r)]
        check(t1 >= rec, "seq %d: rank %d's wait for %d ended at %d before %d's record "
              "ended at %d" % (seq, r, peer, t1, peer, rec))
    print("healthy: %d ops on 4 ranks synchronized" % (4 * STEPS))


def wait_ns(ops, tasks, rank):
    return sum(int(t["t1"]) - int(t["t0"]) for op in ops[rank].values()
               for t in op_tasks(op, tasks) if t["ctask"] == "Notify_Wait")


def slow_rank():
    ops, _, tasks, _ = split(run_job([], ["--slow-rank", "1:100"]))
    slow = wait_ns(ops, tasks, 1)
    for r in (0, 2, 3):
        other = wait_ns(ops, tasks, r)
        check(other > slow, "rank %d waited %d ns, the slow rank 1 %d ns" % (r, other, slow))
    print("slow rank: peers waited longer than rank 1")


def slow_link():
    ops, _, tasks, _ = split(run_job(["--slow-link", "0-1:50"], []))

    def copy_ns(rank, peer):
        return [int(t["t1"]) - int(t["t0"]) for op in ops[rank].values()
                for t in op_tasks(op, tasks)
                if t["ctask"] in ("Memcpy", "Reduce_Inline") and int(t["peer_dev"]) == peer]
    slow, fast = copy_ns(0, 1), copy_ns(2, 3)
    check(slow and fast and min(slow) > max(fast),
          "copies 0<-1 %s not all slower than 2<-3 %s" % (slow[:4], fast[:4]))
    print("slow link: 0-1 copies slower than 2-3")


def dying_rank():
    ops, _, tasks, faults = split(run_job(["--task-timeout-s", "2"], ["--die-rank", "2:2"],
                                          expect_rc=1))
    check([(f["rank"], f["seq"], f["fault"]) for f in faults] == [("2", "2", "die")],
          "fault lines %s" % faults)
    check(2 not in ops[2], "rank 2 issued op 2 after dying")
    for r in (0, 1, 3):
        op = ops[r].get(2)
        check(op is not None, "rank %d did not issue op 2" % r)
        failed = [t for t in op_tasks(op, tasks) if t["ctask"] == "Notify_Wait" and
                  t["status"] == "failed"]
        check(failed, "rank %d: no Notify_Wait of op 2 failed" % r)
    print("dying rank: peers' waits failed at op 2")


def hanging_rank():
    jdir = tempfile.mkdtemp(prefix="hccl-journal.")
    m = ModelDaemon(cards=4, extra=["--journal", jdir, "--cards-per-node", "2",
                                    "--task-timeout-s", "2"])
    m.start()
    p = None
    try:
        p = subprocess.Popen([m.bin("npu_train"), "--scenario", "multi-rank", "--ranks", "4",
                              "--steps", str(STEPS), "--hang-rank", "1:2"],
                             env=m.env(NPU_MODEL_JOURNAL=jdir), start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        done = False
        for _ in range(900):        # until the journal shows it (at most 90 s)
            time.sleep(0.1)
            ops, _, tasks, faults = split(read_journal(jdir))
            if not faults or any(2 not in ops[r] for r in (0, 2, 3)):
                continue
            try:
                done = all(any(t["ctask"] == "Notify_Wait" and t["status"] == "failed"
                               for t in op_tasks_partial(ops[r][2], tasks)) for r in (0, 2, 3))
            except KeyError:
                done = False
            if done:
                break
        check(done, "the peers of the hanging rank never failed their waits of op 2")
        check([(f["rank"], f["seq"], f["fault"]) for f in faults] == [("1", "2", "hang")],
              "fault lines %s" % faults)
        check(2 not in ops[1], "rank 1 issued op 2 while hanging")
        check(p.poll() is None, "the job ended while rank 1 hangs")
    finally:
        if p is not None and p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        m.stop()
        shutil.rmtree(jdir, ignore_errors=True)
    print("hanging rank: peers' waits failed at op 2, the job hangs")


def op_tasks_partial(op, tasks):
    """The hccl_task lines an op has so far (KeyError for a task not journaled yet)."""
    dev, sid, first = int(op["dev"]), int(op["stream_id"]), int(op["first_task"])
    return [tasks[(dev, sid, (first + k) % 65536)][-1] for k in range(int(op["tasks"]))]


def pipeline():
    ops, comms, tasks, _ = split(run_job([], [], ranks=2, cards_per_node=1,
                                         scenario="pipeline"))
    check(sorted(comms) == [0, 1], "pipeline communicators %s" % sorted(comms))
    want = {0: ["HcclSend", "HcclRecv"], 1: ["HcclRecv", "HcclSend"]}
    for r in (0, 1):
        seqs = sorted(ops[r])
        check(seqs == list(range(2 * STEPS)), "rank %d ops %s" % (r, seqs))
        for seq in seqs:
            op = ops[r][seq]
            check(op["op"] == want[r][seq % 2] and op["peer"] == str(1 - r) and
                  op["ret"] == "0" and op["bytes"] == str(2 << 20),
                  "rank %d seq %d: %s" % (r, seq, op))
            ts = op_tasks(op, tasks)
            names = [t["ctask"] for t in ts]
            check(names == (["Notify_Record", "Notify_Wait", "Memcpy", "Notify_Record"]
                            if op["op"] == "HcclSend" else
                            ["Notify_Record", "Notify_Wait", "Notify_Wait"]),
                  "rank %d seq %d tasks %s" % (r, seq, names))
            check(all(t["status"] == "ok" for t in ts), "rank %d seq %d failed" % (r, seq))
            if op["op"] == "HcclSend":
                cp = ts[2]
                check(cp["peer_dev"] == str(1 - r) and cp["link"] == "ROCE" and
                      cp["bytes"] == op["bytes"], "rank %d seq %d copy %s" % (r, seq, cp))
                recv = op_tasks(ops[1 - r][seq], tasks)
                check(int(recv[-1]["t1"]) >= int(ts[-1]["t1"]),
                      "seq %d: rank %d's Recv ended before the Send's data" % (seq, 1 - r))
    print("pipeline: %d sends and receives matched" % (4 * STEPS))


def dptp():
    files = run_job([], [], scenario="dp-tp", per_pid=True)
    groups = collections.defaultdict(list)      # group -> [(process, hccl_comm line)]
    gops = collections.defaultdict(lambda: collections.defaultdict(list))
    procs = 0
    for name, recs in files.items():
        comms = [f for k, f in recs if k == "hccl_comm"]
        if not comms:
            continue
        procs += 1
        check(len(comms) == 2, "%s: %d communicators" % (name, len(comms)))
        for c in comms:
            groups[c["group"]].append((name, c))
        for k, f in recs:
            if k == "hccl":
                gops[f["group"]][int(f["seq"])].append(f)
    check(procs == 4 and len(groups) == 4, "%d processes, groups %s" % (procs, list(groups)))
    tasks = split(files["journal.modeld.tsv"])[2]
    for g, members in groups.items():
        devs = {c["ranks"] for _, c in members}
        check(len(members) == 2 and sorted(c["rank"] for _, c in members) == ["0", "1"] and
              len(devs) == 1 and devs <= {"0,1", "2,3", "0,2", "1,3"},
              "group %s members %s" % (g, members))
        tp = devs <= {"0,1", "2,3"}
        check(sorted(gops[g]) == list(range(STEPS)), "group %s ops %s" % (g, sorted(gops[g])))
        for seq, ops in gops[g].items():
            check(len(ops) == 2 and {o["count"] for o in ops} == {str(1 << (19 if tp else 20))},
                  "group %s seq %d: %s" % (g, seq, ops))
            for o in ops:
                links = {t["link"] for t in op_tasks(o, tasks)
                         if t["ctask"] in ("Memcpy", "Reduce_Inline")}
                check(links == {"HCCS" if tp else "ROCE"}, "group %s seq %d links %s" %
                      (g, seq, links))
    print("dp-tp: 4 groups of 2, %d ops each" % STEPS)


healthy()
dptp()
pipeline()
slow_rank()
slow_link()
dying_rank()
hanging_rank()
print("PASS")
