# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""ascbpf trace -- npu_train SCENARIO against npu_model's ground truth, for
the scenarios of the workload table.  Per scenario:

* no ring-buffer drops, no device records lost, every ENTER has its EXIT;
* api: for every function the capture's probe table covers, the number of
  calls equals the journal's, and each journal call is enclosed by its
  captured call (same thread) within the stated tolerance; journal functions
  the table does not cover must be in NOT_PROBED below (with the reason);
  captured functions the journal does not list must be library-internal
  (absent from `nm -D`), never an exported API;
* queue: the Enqueue/Dequeue records carry the same (side, correlation id,
  stream, type) as the journal's queue lines;
* memory (--profile-memory): one MEM record per caching-allocator (PTA),
  segment (GE) and driver (APP) event with the same pointer, size, totals,
  kind and device;
* tasks: the SQE headers hold the journal's (stream, task id) of every task
  submitted (launch-storm's 32-SQE calls too: one SQE record per 8 SQEs of a
  call), and every task the card executed has one DEVTASK with its
  counter values (device records join the submissions);
* ioctls and steps: same counts as the journal."""
import collections
import os
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon, read_journal  # noqa: E402

# Journal functions outside the probe table, and why.
NOT_PROBED = {
    # torch_npu internals below the probed Enqueue/AsncExecFunc pair: the queue
    # records already carry their correlation id, stream and type
    "_ZN6at_npu6native13ExecFuncOpApiEPN7c10_npu5queue10QueueParasEPv",
    "_ZN6at_npu6native16MemcopyAsyncFuncEPN7c10_npu5queue10QueueParasEPv",
    "_ZN6at_npu6native8ExecFuncEPN7c10_npu5queue10QueueParasEPv",
    "_ZN6at_npu6native15RecordEventFuncEPN7c10_npu5queue10QueueParasEPv",
    "_ZN6at_npu6native13WaitEventFuncEPN7c10_npu5queue10QueueParasEPv",
    "_ZN6at_npu6native20LazyDestroyEventFuncEPN7c10_npu5queue10QueueParasEPv",
    "_ZN7c10_npu18enCurrentNPUStreamEPvaPNS_9NPUStreamE",
    # device enumeration at start-up (the table's driver globs are hal*)
    "drvGetDevNum",
    # torch_npu's format cast (the TransData site): not in user/discovery/probes.c's table yet
    # (reported to E); its TransData kernel is still seen as an aclnn call and a task
    "_ZN6at_npu6native10custom_ops15npu_format_castERKN2at6TensorEl",
}

SCENARIOS = [
    ("baseline", 3), ("dispatch-bound", 2), ("native-optimizer", 2), ("fused-optimizer", 2),
    ("transdata", 2), ("mem-growth", 3), ("oom", 2), ("multi-stream", 2), ("launch-storm", 1),
    # the most SQEs one halSqTaskSend can have in npu_model: 64, all 8 SQE records of a call
    ("launch-storm", 1, {"NPU_MODEL_SQE_BATCH": "64"}),
]

exported_cache = {}


def exported(lib_path):
    if lib_path not in exported_cache:
        r = subprocess.run(["nm", "-D", "--defined-only", lib_path], capture_output=True,
                           text=True)
        exported_cache[lib_path] = {l.split()[-1] for l in r.stdout.splitlines() if l.strip()}
    return exported_cache[lib_path]


def run(scenario, steps, env=None):
    d = tc.workdir()
    try:
        with ModelDaemon(cards=1, journal=True) as m:
            jdir = os.path.join(d, "journal")
            os.mkdir(jdir)
            out = os.path.join(d, "out")
            r = tc.run_ascbpf(["trace", "--level", "2", "-o", out, "--no-convert", "--profile-memory", "--",
                               m.bin("npu_train"), "--scenario", scenario, "--steps",
                               str(steps)], env=m.env(NPU_MODEL_JOURNAL=jdir, **(env or {})), timeout=240)
            tc.check(r.returncode == 0, "%s: trace exited %d" % (scenario, r.returncode))
            m.proc.send_signal(signal.SIGTERM)	# flushes the daemon's journal
            m.proc.wait(timeout=30)
            caps = [f for f in os.listdir(out) if f.endswith(".cap")]
            tc.check(len(caps) == 1, "captures %s" % caps)
            recs = tc.records(os.path.join(out, caps[0]))
            pid = recs[0]["tgid"]
            j = [(k, x) for k, x in read_journal(jdir, pid)]
            execs = [x for k, x in read_journal(m.journal_dir) if k == "exec" and
                     int(x["pid"]) == pid]
        tc.check(os.path.exists(os.path.join(jdir, "journal.%d.tsv" % pid)),
                 "no journal for pid %d" % pid)
        st = tc.stats(recs)
        tc.check(st["drops"] == 0 and st["devtask_drops"] == 0, "%s: drops %s" % (scenario, st))
        probes = [p for p in recs if p["type"] == "probe"]
        probed = {p["symbol"] for p in probes}
        lib_of = {p["symbol"]: p["library"] for p in probes}
        ccalls, unpaired = tc.calls(recs)
        tc.check(not unpaired, "%s: %d unpaired records" % (scenario, len(unpaired)))

        # api calls
        japi = [(x["name"], int(x["tid"]), int(x["t0"]), int(x["t1"]), 0) for k, x in j
                if k == "api"]
        jn = collections.Counter(a[0] for a in japi)
        cn = collections.Counter(c[0] for c in ccalls)
        missing = set(jn) - probed
        tc.check(missing <= NOT_PROBED, "%s: journal functions not probed: %s" %
                 (scenario, sorted(missing - NOT_PROBED)))
        for name in set(cn) - set(jn):
            tc.check(name not in exported(lib_of[name]),
                     "%s: exported %s called %d times but not in the journal" %
                     (scenario, name, cn[name]))
        for name in set(jn) & probed:
            tc.check(jn[name] == cn[name], "%s: %s: journal %d calls, capture %d" %
                     (scenario, name, jn[name], cn[name]))
        tc.match_calls([a for a in japi if a[0] in probed],
                       [c for c in ccalls if c[0] in jn])

        # task queue
        jq = collections.Counter((x["side"], int(x["corr"]), int(x["stream"], 0), int(x["type"]))
                                 for k, x in j if k == "queue")
        cq = collections.Counter(("enqueue" if q["side"] == 0 else "dequeue", q["correlation_id"],
                                  q["stream"], q["param_type"])
                                 for q in recs if q["type"] == "queue")
        tc.check(jq == cq, "%s: queue records differ: %s / %s" %
                 (scenario, list((jq - cq).items())[:3], list((cq - jq).items())[:3]))

        # memory: caching allocator (PTA), segments (GE, rtMalloc/rtFree), driver (APP,
        # halMemAlloc/halMemFree of device memory): pointer, size, totals, kind, device
        kinds = {"malloc": 0, "free": 1, "block_free": 2}
        comps = {"PTA": 0, "GE": 1, "APP": 2}
        for comp, cid in comps.items():
            jm = collections.Counter((int(x["ptr"], 0), int(x["size"]), int(x["total_allocated"]),
                                      int(x["total_reserved"]), int(x["total_active"]),
                                      kinds[x["op"]], int(x["device"]))
                                     for k, x in j if k == "mem" and x["component"] == comp)
            cm = collections.Counter((r["ptr"], r["size"], r["total_allocated"],
                                      r["total_reserved"], r["total_active"], r["data_type"],
                                      r["device"])
                                     for r in recs if r["type"] == "mem" and r["component"] == cid)
            tc.check(jm == cm, "%s: %s memory events differ: %s / %s" %
                     (scenario, comp, list((jm - cm).items())[:3], list((cm - jm).items())[:3]))
            if comp == "PTA":
                npta = sum(cm.values())
            else:
                tc.check(sum(cm.values()) > 0, "%s: no %s memory event" % (scenario, comp))
        cm = collections.Counter(r["component"] for r in recs if r["type"] == "mem")

        # submissions and device records
        jt = collections.Counter((int(x["stream"]), int(x["task"])) for k, x in j if k == "task")
        sqes = [r for r in recs if r["type"] == "sqe"]
        # one halSqTaskSend is consecutive SQE records of its thread with one timestamp,
        # part k holding SQEs 8k.. of the call and sqe_num = the call's SQEs from 8k on
        calls, last = [], {}
        for s in sqes:
            c = last.get(s["tid"])
            if c and c[-1]["ts_ns"] == s["ts_ns"] and s["sqe_num"] == c[-1]["sqe_num"] - 8:
                c.append(s)
            else:
                c = last[s["tid"]] = [s]
                calls.append(c)
        for c in calls:
            tc.check(all(p["sqe_num"] == c[0]["sqe_num"] - 8 * k and
                         p["nr_kept"] == min(8, p["sqe_num"]) for k, p in enumerate(c)) and
                     len(c) == min(8, max(1, (c[0]["sqe_num"] + 7) // 8)),
                     "%s: a call of %d SQEs written as %s" %
                     (scenario, c[0]["sqe_num"], [(p["sqe_num"], p["nr_kept"]) for p in c]))
        nsub = sum(c[0]["sqe_num"] for c in calls)
        tc.check(nsub == sum(jt.values()), "%s: %d SQEs submitted, journal %d tasks" %
                 (scenario, nsub, sum(jt.values())))
        ct = collections.Counter((h["stream_id"], h["task_id"]) for s in sqes
                                 for h in s["sqe"][:s["nr_kept"]])
        tc.check(not (ct - jt), "%s: SQE headers not in the journal: %s" %
                 (scenario, list((ct - jt).items())[:3]))
        # up to 64 SQEs per call every header is kept: every task line has its header
        if all(c[0]["sqe_num"] <= 64 for c in calls):
            tc.check(ct == jt, "%s: SQE headers differ from the journal's tasks: %d of %d "
                     "tasks have theirs" % (scenario, sum((ct & jt).values()),
                                            sum(jt.values())))
        if scenario == "launch-storm":
            batch = int((env or {}).get("NPU_MODEL_SQE_BATCH", "32"))
            tc.check(max(c[0]["sqe_num"] for c in calls) == batch,
                     "launch-storm: largest call %d SQEs, batch %d (the case under test)" %
                     (max(c[0]["sqe_num"] for c in calls), batch))
        lost = [r["text"] for r in recs if r["type"] == "lost" and "SQE" in r["text"]]
        tc.check(not lost, "%s: SQEs counted lost: %s" % (scenario, lost))
        dev = collections.Counter((r["stream_id"], r["task_id"], r["start_cnt"], r["end_cnt"])
                                  for r in recs if r["type"] == "devtask")
        je = collections.Counter((int(x["stream"]), int(x["task"]), int(x["c0"]), int(x["c1"]))
                                 for x in execs)
        tc.check(dev == je, "%s: DEVTASK records differ from exec lines (%d vs %d)" %
                 (scenario, sum(dev.values()), sum(je.values())))
        dkeys = {(k[0], k[1]) for k in dev}
        tc.check(all(k in dkeys for k in ct), "%s: a submission without device record" %
                 scenario)

        # ioctls, steps
        ji = sum(1 for k, x in j if k == "ioctl")
        ci = sum(1 for r in recs if r["type"] == "ioctl")
        tc.check(ji == ci, "%s: ioctls journal %d, capture %d" % (scenario, ji, ci))
        js = [int(x["step"]) for k, x in j if k == "step"]
        cs = [r["step"] for r in recs if r["type"] == "step"]
        # step 0 from the start, then each optimizer step's return starts the next
        tc.check(len(js) == steps and cs == [0] + js, "%s: steps journal %s, capture %s" %
                 (scenario, js, cs))
        print("%-18s %5d calls %5d queue %5d mem %5d tasks %5d device %4d ioctls: all match" %
              (scenario, len(ccalls), sum(cq.values()), sum(cm.values()), sum(jt.values()),
               sum(dev.values()), ci))
        print("%18s memory: PTA %d, GE %d, APP %d events match" % ("", cm[0], cm[1], cm[2]))
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":  # tests/trace/test_trace_fallbacks.py imports run()
    for sc in SCENARIOS:
        run(*sc)
    print("PASS")
