# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Each traced process reads the device records of the card it uses, learned from what
it does (its first submission, the /dev/davinciN it holds open), not from
ASCEND_DEVICE_ID.  A 2-rank data-parallel npu_train job, each rank started as its own
process (npu_train --rank r sets card r with aclrtSetDevice), ASCEND_DEVICE_ID unset:

* `-- CMD`: each rank traced from its exec by its own `ascbpf trace`: the capture's
  DEVTASK records are exactly the journal's exec lines of that process (card, stream,
  task), all on card r; the summary line counts its HCCL records as hccl= (they were
  counted as other= before);
* `-p`: both ranks already running, traced by one `ascbpf trace -p P0 -p P1
  --duration`: each capture's DEVTASK records are exactly the journal's exec lines of
  that process whose record reached a channel session (prof > 0; ascbpf's readers are
  the only sessions), but for the last ones (written as the channel closed) and any
  the channel dropped (prof_drop, counted by LOST), all on card r.  Before the fix a
  running process joined card ASCEND_DEVICE_ID or 0: rank 1 got rank 0's card-0
  records and none of its own.
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon, read_journal  # noqa: E402

STEPS = 6
RANKS = 2
HCCL_TYPES = ("hccl_op", "hccl_comm", "hccl_task", "hccl_hash")
texts = {}

d = tc.workdir()
jdir = tempfile.mkdtemp(prefix="card-route-journal.")
m = ModelDaemon(cards=RANKS, extra=["--journal", jdir])
try:
    m.start()
    root = os.path.join(d, "root_info")
    procs = []
    for r in range(RANKS):
        out = os.path.join(d, "out%d" % r)
        cmd = [tc.ASCBPF, "trace", "--level", "0", "-o", out, "--no-convert", "--",
               m.bin("npu_train"), "--scenario", "multi-rank", "--ranks", str(RANKS),
               "--rank", str(r), "--root-info", root, "--steps", str(STEPS)]
        env = m.env(NPU_MODEL_JOURNAL=jdir, RANK=r)
        env.pop("ASCEND_DEVICE_ID", None)
        procs.append((r, out, subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                               stderr=subprocess.STDOUT, text=True)))
    for r, out, p in procs:
        text, _ = p.communicate(timeout=280)
        texts[r] = text
        print("--- rank %d\n%s" % (r, text), end="")
        tc.check(p.returncode == 0, "rank %d: trace exited %d" % (r, p.returncode))
    m.stop()        # the card's journal is complete
    journal = read_journal(jdir)
finally:
    m.stop()
    shutil.rmtree(jdir, ignore_errors=True)     # hundreds of MB: read, then gone

jexec = collections.defaultdict(collections.Counter)    # pid -> (dev, stream, task)
for kind, f in journal:
    if kind == "exec":
        jexec[int(f["pid"])][(int(f["dev"]), int(f["stream"]), int(f["task"]))] += 1

for r, out, _ in procs:
    caps = os.listdir(out)
    tc.check(len(caps) == 1, "rank %d: captures %s" % (r, caps))
    recs = tc.records(os.path.join(out, caps[0]))
    proc = [x for x in recs if x["type"] == "process"]
    tc.check(len(proc) == 1 and proc[0]["rank"] == r, "rank %d: process %s" % (r, proc))
    pid = proc[0]["tgid"]
    want = jexec[pid]
    tc.check(want and {k[0] for k in want} == {r},
             "rank %d: journal cards %s" % (r, sorted({k[0] for k in want})))
    seq = [(x["dev_id"], x["stream_id"], x["task_id"]) for x in recs if x["type"] == "devtask"]
    got = collections.Counter(seq)
    tc.check(got == want,
             "rank %d: %d device records (cards %s), journal %d on card %d; "
             "missing %s, extra %s" %
             (r, sum(got.values()), sorted({k[0] for k in got}), sum(want.values()), r,
              sorted((want - got).items())[:5], sorted((got - want).items())[:5]))
    print("rank %d: %d device records, all of card %d, as journaled" %
          (r, sum(got.values()), r))
    # the summary line counts the HCCL records (communicator, ops, task reports, hashes)
    # as hccl=, not as other=: as many as the capture has (no drop)
    nh = sum(1 for x in recs if x["type"] in HCCL_TYPES)
    m_ = re.search(r" events \(framework=\d+ cann=\d+ driver=\d+ memory=\d+ python=\d+ "
                   r"hccl=(\d+) other=\d+\)", texts[r])
    tc.check(nh > 0 and m_ and int(m_.group(1)) == nh,
             "rank %d: summary %s, capture %d HCCL records" %
             (r, m_.group(0) if m_ else None, nh))

# -p: the ranks run (--steps 0: until killed) before the trace starts
jdir = tempfile.mkdtemp(prefix="card-route-journal-p.")
m = ModelDaemon(cards=RANKS, extra=["--journal", jdir])
ranks = []
try:
    m.start()
    root = os.path.join(d, "root_info_p")
    for r in range(RANKS):
        env = m.env(NPU_MODEL_JOURNAL=jdir, RANK=r)
        env.pop("ASCEND_DEVICE_ID", None)
        ranks.append(subprocess.Popen(
            [m.bin("npu_train"), "--scenario", "multi-rank", "--ranks", str(RANKS),
             "--rank", str(r), "--root-info", root, "--steps", "0"],
            env=env, stdout=subprocess.DEVNULL))
    time.sleep(1.0)     # not an assertion: lets them set their cards up
    for r, p in enumerate(ranks):
        tc.check(p.poll() is None, "rank %d died" % r)
    out = os.path.join(d, "outp")
    args = ["trace", "--level", "0", "-o", out, "--no-convert", "--duration", "2"]
    for p in ranks:
        args += ["-p", str(p.pid)]
    res = tc.run_ascbpf(args, timeout=120)
    print(res.stdout, res.stderr, end="")
    tc.check(res.returncode == 0, "-p trace exited %d" % res.returncode)
    # a rank left alone waits for its peer in the next all-reduce: both killed; the exec
    # lines are the daemon's journal
    for p in ranks:
        p.kill()
    for p in ranks:
        p.wait(timeout=30)
    m.stop()
    journal = read_journal(jdir)
finally:
    for p in ranks:
        if p.poll() is None:
            p.kill()
    m.stop()
    shutil.rmtree(jdir, ignore_errors=True)

jexec = collections.defaultdict(collections.Counter)
jdrop = collections.defaultdict(collections.Counter)    # lost by a full channel ring
jorder = collections.defaultdict(list)                  # pid -> [key], as written
for kind, f in journal:
    if kind == "exec" and int(f["prof"]) > 0:
        key = (int(f["dev"]), int(f["stream"]), int(f["task"]))
        jexec[int(f["pid"])][key] += 1
        jorder[int(f["pid"])].append(key)
        if int(f.get("prof_drop", "0")) > 0:
            jdrop[int(f["pid"])][key] += 1


def late(pid, got):
    """The journal's tasks of pid written into the channel after the last one the
    capture has: the records the card wrote as ascbpf closed it (--duration's end).
    The card writes a task's record as the task completes, in the order it journals
    the task, not in start order, and the capture keeps the channel's order: got (the
    capture's keys in order) is a subsequence of the journal's, and the tail is what
    follows the journal line matched by its last key.  Matched in order, not by count:
    task ids wrap at 65536 per stream, so a key of the tail can also be one the capture
    has from an earlier wrap."""
    order, i = jorder[pid], 0
    for key in got:
        while i < len(order) and order[i] != key:
            i += 1
        if i == len(order):
            return collections.Counter()    # not a subsequence: nothing is excused
        i += 1
    return collections.Counter(order[i:])


for r, p in enumerate(ranks):
    recs = tc.records(os.path.join(out, "ascbpf-%d.cap" % p.pid))
    tc.check(tc.stats(recs)["drops"] == 0, "-p rank %d: drops" % r)
    want = jexec[p.pid]
    seq = [(x["dev_id"], x["stream_id"], x["task_id"]) for x in recs if x["type"] == "devtask"]
    got = collections.Counter(seq)
    tc.check(want and {k[0] for k in want} == {r},
             "-p rank %d: journal cards read %s" % (r, sorted({k[0] for k in want})))
    # exactly the journal's, but for the last ones, written as the channel closed, and
    # records the channel dropped (prof_drop, the machine is loaded), counted by LOST
    missing, extra = want - got, got - want
    lost = sum(x["value"] for x in recs if x["type"] == "lost")
    dropped = missing - late(p.pid, seq)
    tc.check(not extra and not (dropped - jdrop[p.pid]) and lost >= sum(dropped.values()),
             "-p rank %d: %d device records (cards %s), journal %d read on card %d "
             "(%d dropped by the channel, LOST %d); missing %s, extra %s" %
             (r, sum(got.values()), sorted({k[0] for k in got}), sum(want.values()), r,
              sum(jdrop[p.pid].values()), lost, sorted(missing.items())[:5],
              sorted(extra.items())[:5]))
    print("-p rank %d: %d device records, all of card %d, as journaled" %
          (r, sum(got.values()), r))
print("PASS")
