#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""test_model_torch_npu_scenarios.py - the Python scenarios that match npu_train's
transdata, oom, multi-stream, launch-storm and multi-rank, each a real torch
training loop (npu_model/workloads/python/train.py under /usr/bin/python3) against
a private npu-modeld, checked against the journal (the common checks of
test_model_torch_npu.py, then):

  transdata     3 TransData tasks per step, one custom_ops::npu_format_cast call
                each, every one submitted inside aclopCompileAndExecute(TransData)
                on the acl_thread, executed under that name
  oom           the script caught torch.npu.OutOfMemoryError with torch_npu's
                message; `oom` lines ret=207001: one release_cached_blocks whose
                retry failed (action=fail), then one whose retry succeeded (a PTA
                malloc of at least that size after it); an APP free (aclrtFree of
                a cached segment) between the release and that malloc; the card's
                oom count in the daemon journal
  multi-stream  tasks on exactly 2 streams; MEMCPY on the side stream overlaps a
                kernel on the compute stream; an EVENT_RECORD on the side stream
                and an EVENT_WAIT on the compute stream per step, each wait
                after the record it waits for (card time)
  launch-storm  2000 Adds per step (in-place adds of a Python number), each
                executed
  multi-rank    2 rank processes, rank r's tasks all on card r; per rank one
                hccl_comm of 2 ranks, 12 HcclBroadcast and 12 HcclAllReduce per
                step (one per parameter) whose counts match across ranks, then
                an HcclBarrier; both ranks took the same number of steps
"""
import collections
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
import test_model_torch_npu as base  # noqa: E402
from npu_model import ModelDaemon  # noqa: E402

check = base.check
NPARAMS = 12  # train.py's Block: six Linear layers, weight and bias each


def transdata(steps):
    with ModelDaemon(journal=True) as m:
        got = base.common("transdata", *base.run(m, "transdata", steps)[:3], m, steps)
        if not got:
            return
        recs, tasks = got
        _, modeld = base.read_journals(m.journal_dir)
    td = [t for t in tasks if t["kernel"] == "TransData"]
    check(len(td) == 3 * steps, "transdata: %d TransData tasks, want %d" % (len(td), 3 * steps))
    apis = [r for k, r in recs if k == "api"]
    sites = [r for r in apis
             if r["name"] == "_ZN6at_npu6native10custom_ops15npu_format_castERKN2at6TensorEl"]
    check(len(sites) == len(td), "transdata: %d npu_format_cast calls for %d TransData" %
          (len(sites), len(td)))
    calls = [r for r in apis
             if r["name"] == "aclopCompileAndExecute" and r.get("op") == "TransData"]
    check(all(any(c["tid"] == t["tid"] and int(c["t0"]) <= int(t["t"]) <= int(c["t1"])
                  for c in calls) for t in td),
          "transdata: a TransData task outside aclopCompileAndExecute(TransData)")
    check(len({t["tid"] for t in td}) == 1 and {t["tid"] for t in td} != {s["tid"] for s in sites},
          "transdata: TransData not submitted on the acl_thread")
    keys = {(t["stream"], t["task"], t["wrap"]) for t in td}
    names = {r["kernel"] for k, r in modeld
             if k == "exec" and (r["stream"], r["task"], r["wrap"]) in keys}
    check(names == {"TransData"}, "transdata: exec kernel names %s" % names)


def oom(steps):
    with ModelDaemon(journal=True, hbm_mib=1024) as m:
        rc, out, err, _ = base.run(m, "oom", steps)
        got = base.common("oom", rc, out, err, m, steps)
        _, modeld = base.read_journals(m.journal_dir)
    msg = "x 64 MiB, then NPU out of memory. Tried to allocate 64.00 MiB (NPU 0; "
    check(msg in out and "reserved in total by PyTorch)" in out,
          "oom: no torch.npu.OutOfMemoryError with torch_npu's message: %r" % out[-600:])
    if not got:
        return
    recs = got[0]
    ooms = [r for k, r in recs if k == "oom" and r.get("layer") == "PTA"]
    check(ooms and all(r["ret"] == "207001" for r in ooms), "oom: PTA oom lines %s" % ooms)
    acts = [r["action"] for r in ooms]
    # the fill: release, retry fails; the big block: release, retry succeeds
    check(acts == ["release_cached_blocks", "fail", "release_cached_blocks"],
          "oom: PTA oom actions %s" % acts)
    if len(ooms) != 3:
        return
    last = ooms[-1]
    t_rel = int(last["t"])
    mallocs = [r for k, r in recs if k == "mem" and r.get("component") == "PTA" and
               r["op"] == "malloc" and int(r["t"]) > t_rel and int(r["size"]) >= int(last["size"])]
    check(mallocs, "oom: no PTA malloc of %s bytes after the cache release" % last["size"])
    frees = [r for k, r in recs if k == "mem" and r.get("component") == "APP" and
             r["op"] == "free" and t_rel <= int(r["t"]) <= int(mallocs[0]["t"] if mallocs else 0)]
    check(frees, "oom: no cached segment returned to the card (APP free) by the release")
    check(any(k == "oom" for k, _ in modeld), "oom: the card counted no failed allocation")


def multi_stream(steps):
    with ModelDaemon(journal=True) as m:
        got = base.common("multi-stream", *base.run(m, "multi-stream", steps)[:3], m, steps)
        if not got:
            return
        recs, tasks = got
        _, modeld = base.read_journals(m.journal_dir)
    execs = [r for k, r in modeld if k == "exec"]
    streams = {e["stream"] for e in execs}
    check(len(streams) == 2, "multi-stream: tasks on streams %s" % streams)
    rec = [e for e in execs if e["kernel"] == "EVENT_RECORD"]
    wait = [e for e in execs if e["kernel"] == "EVENT_WAIT"]
    check(len(rec) >= steps and len(wait) >= steps - 1,
          "multi-stream: %d records, %d waits for %d steps" % (len(rec), len(wait), steps))
    side = {e["stream"] for e in rec}
    check(len(side) == 1 and not side & {e["stream"] for e in wait},
          "multi-stream: records on %s, waits on %s" % (side, {e["stream"] for e in wait}))
    check(all(any(int(r["t1"]) <= int(w["t1"]) for r in rec) for w in wait),
          "multi-stream: a wait ended before any record")
    copies = [e for e in execs if e["kernel"] == "MEMCPY" and e["stream"] in side]
    kern = [e for e in execs if e["kernel"] not in ("MEMCPY", "EVENT_RECORD", "EVENT_WAIT")
            and e["stream"] not in side]
    ov = sum(1 for c in copies for k in kern
             if int(c["t0"]) < int(k["t1"]) and int(k["t0"]) < int(c["t1"]))
    print("multi-stream: %d side-stream copies, %d copy/kernel overlaps" % (len(copies), ov))
    check(copies and ov > 0, "multi-stream: no side-stream copy overlaps a compute kernel")


def launch_storm(steps):
    with ModelDaemon(journal=True) as m:
        got = base.common("launch-storm", *base.run(m, "launch-storm", steps)[:3], m, steps)
        if not got:
            return
        _, modeld = base.read_journals(m.journal_dir)
    adds = [t for t in got[1] if t["kernel"] == "Adds"]
    check(len(adds) == 2000 * steps, "launch-storm: %d Adds, want %d" % (len(adds), 2000 * steps))
    done = sum(1 for k, r in modeld if k == "exec" and r["kernel"] == "Adds" and
               r["status"] == "ok")
    check(done == len(adds), "launch-storm: %d of %d Adds executed" % (done, len(adds)))


def multi_rank(steps):
    with ModelDaemon(cards=2, journal=True) as m:
        rc, out, err, _ = base.run(m, "multi-rank", steps)
        procs, modeld = base.read_journals(m.journal_dir)
    check(rc == 0, "multi-rank: exit %d: %s" % (rc, err[-600:]))
    check(out.count("train.py: scenario=multi-rank steps=%d" % steps) == 2,
          "multi-rank: %r" % out[-400:])
    ranks = {}
    for pid, recs in procs.items():
        comm = [r for k, r in recs if k == "hccl_comm"]
        if comm:
            ranks[int(comm[0]["rank"])] = (pid, recs, comm)
    check(sorted(ranks) == [0, 1], "multi-rank: ranks %s" % sorted(ranks))
    ops = {}
    for rank, (pid, recs, comm) in sorted(ranks.items()):
        check(len(comm) == 1 and comm[0]["nranks"] == "2" and comm[0]["dev"] == str(rank),
              "multi-rank: rank %d communicators %s" % (rank, comm))
        nsteps = sum(1 for k, _ in recs if k == "step")
        check(nsteps == steps, "multi-rank: rank %d took %d steps" % (rank, nsteps))
        devs = {r["dev"] for k, r in recs if k == "task"}
        check(devs == {str(rank)}, "multi-rank: rank %d tasks on cards %s" % (rank, devs))
        hc = [r for k, r in recs if k == "hccl"]
        names = collections.Counter(r["op"] for r in hc)
        check(names["HcclBroadcast"] == NPARAMS and names["HcclAllReduce"] == NPARAMS * steps
              and names["HcclBarrier"] == 1 and all(r["ret"] == "0" for r in hc),
              "multi-rank: rank %d collectives %s" % (rank, dict(names)))
        ops[rank] = [(r["op"], r["count"]) for r in sorted(hc, key=lambda r: int(r["seq"]))]
        execd = {(r["dev"], r["stream"], r["task"], r["wrap"]) for k, r in modeld
                 if k == "exec" and r["pid"] == pid}
        tk = {(r["dev"], r["stream"], r["task"], r["wrap"]) for k, r in recs if k == "task"}
        check(tk and tk <= execd, "multi-rank: rank %d: %d tasks never executed" %
              (rank, len(tk - execd)))
    if len(ops) == 2:
        check(ops[0] == ops[1], "multi-rank: the ranks' collectives differ")


def main():
    if not os.path.exists(os.path.join(base.PYPKG, "torch_npu", "lib", "libtorch_npu.so")):
        print("FAIL: %s is not built (make)" % base.PYPKG)
        return 1
    transdata(3)
    oom(3)
    multi_stream(4)
    launch_storm(2)
    multi_rank(3)
    if base.FAILS:
        print("%d checks failed" % len(base.FAILS))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
