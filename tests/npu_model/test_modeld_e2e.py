# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""npu-modeld end to end, in both submission modes: a client allocates device
memory, creates two streams, submits kernels in batches with an event between
the streams, synchronizes and reads profiling channel 50.  Checked against
the daemon's ground-truth journal (exec lines) and the HAL's journal (api,
ioctl lines):

* every submitted task ran exactly once, in FIFO order per stream, and the
  compute engine never ran two kernels at once;
* the event: stream 1's kernels start after stream 0's record finished;
* the synchronize returned only after the last task's device end time;
* channel 50 delivered a start and an end record for every task, whose
  counter values are the exec lines' c0/c1, and converting them with the
  published (offset, base, frequency) gives the exec lines' host times;
* the HAL bound TSDRV and SVM fds, issued ALLOC+ADVISE for the allocation and
  FREE_PAGES for the free, and TRS_SQCQ_SEND only in ioctl mode; it wrote
  `mem component=APP` lines for the allocation and the free.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from npu_model import ModelDaemon, read_journal  # noqa: E402

STREAMS, TASKS, BATCH = 2, 60, 4


def check(cond, msg):
    if not cond:
        print("FAIL:", msg)
        sys.exit(1)


def main():
    for mode in ("uio", "ioctl"):
        with ModelDaemon(cards=1, journal=True) as m:
            jdir = os.path.join(m.tmp, "hal-journal")
            os.makedirs(jdir)
            out = subprocess.run(
                [m.bin("npu_halclient"), "run", "--streams", str(STREAMS), "--tasks", str(TASKS),
                 "--batch", str(BATCH), "--flops", "200000000", "--bytes", "65536",
                 "--alloc", str(8 << 20), "--prof", "--events"],
                env=m.env(NPU_MODEL_SQ_MODE=mode, NPU_MODEL_JOURNAL=jdir),
                capture_output=True, text=True, timeout=60)
            check(out.returncode == 0, "%s: client failed: %s %s" % (mode, out.stdout, out.stderr))
            res = json.loads(out.stdout)
            info = m.info()
            m.proc.terminate()	# flushes the daemon's journal
            m.proc.wait(10)
            execs = [f for k, f in read_journal(m.journal_dir) if k == "exec"]
            hal = read_journal(jdir)
            check_run(mode, res, info, execs, hal)
        print("PASS: %s mode" % mode)
    return 0


def check_run(mode, res, info, execs, hal):
    per_stream = TASKS + 1
    total = STREAMS * per_stream
    check(res["ok"] and res["submitted"] == total, "%s: submitted %s" % (mode, res["submitted"]))
    check(len(execs) == total, "%s: %d exec lines for %d tasks" % (mode, len(execs), total))
    check(all(int(e["pid"]) == res["pid"] and e["status"] == "ok" for e in execs),
          "%s: exec pid/status" % mode)
    keys = [(int(e["stream"]), int(e["task"])) for e in execs]
    check(len(set(keys)) == total, "%s: a task ran twice" % mode)
    streams = [s["id"] for s in res["streams"]]
    by_stream = {s: sorted((e for e in execs if int(e["stream"]) == s), key=lambda e: int(e["task"]))
                 for s in streams}
    for s, lst in by_stream.items():
        check(len(lst) == per_stream, "%s: stream %d ran %d tasks" % (mode, s, len(lst)))
        for a, b in zip(lst, lst[1:]):
            check(int(b["t0"]) >= int(a["t1"]), "%s: stream %d not FIFO" % (mode, s))
    kernels = sorted((e for e in execs if e["kernel"].startswith("ClientKernel")),
                     key=lambda e: int(e["t0"]))
    check(len(kernels) == STREAMS * TASKS, "%s: kernel count" % mode)
    for a, b in zip(kernels, kernels[1:]):
        check(int(b["t0"]) >= int(a["t1"]), "%s: two kernels overlap on the compute engine" % mode)
    rec = [e for e in execs if e["kernel"] == "EVENT_RECORD"]
    wait = [e for e in execs if e["kernel"] == "EVENT_WAIT"]
    check(len(rec) == 1 and len(wait) == STREAMS - 1, "%s: event tasks" % mode)
    s1_kernels = [e for e in by_stream[streams[1]] if e["kernel"].startswith("ClientKernel")]
    check(int(wait[0]["t1"]) >= int(rec[0]["t1"]), "%s: wait ended before the record" % mode)
    check(min(int(e["t0"]) for e in s1_kernels) >= int(rec[0]["t1"]),
          "%s: stream 1 ran before the event was recorded" % mode)
    last_end = max(int(e["t1"]) for e in execs)
    check(res["t_sync1"] >= last_end, "%s: synchronize returned before the device finished" % mode)
    check(res["dropped"] == 0, "%s: dropped %d" % (mode, res["dropped"]))

    # Channel 50 against the exec lines.
    recs = res["records"]
    check(len(recs) == 2 * total, "%s: %d records for %d tasks" % (mode, len(recs), total))
    starts = {(r[2], r[3]): r[4] for r in recs if r[0] == 0}
    ends = {(r[2], r[3]): r[4] for r in recs if r[0] == 1}
    freq = info["dev0.syscnt_freq_hz"]
    off = info["dev0.syscnt_offset"]
    base = info["dev0.syscnt_base_ns"]
    check(off > 0 and res["freq_khz"] * 1000 == freq, "%s: counter parameters" % mode)
    for e in execs:
        k = (int(e["stream"]), int(e["task"]))
        check(starts.get(k) == int(e["c0"]) and ends.get(k) == int(e["c1"]),
              "%s: records of %s do not match exec c0/c1" % (mode, k))
        t0 = base + (starts[k] - off) * 1e9 / freq
        check(abs(t0 - int(e["t0"])) <= 1e9 / freq + 1, "%s: counter->host conversion" % mode)
    sqe_types = {(r[2], r[3]): r[1] for r in recs}
    check(all(sqe_types[(int(e["stream"]), int(e["task"]))] == int(e["sqe_type"]) for e in execs),
          "%s: record sqe types" % mode)

    # HAL journal: binds, memory ioctls, submission path.
    ioctls = [f for k, f in hal if k == "ioctl"]
    apis = [f for k, f in hal if k == "api"]
    binds = [f for f in ioctls if f["cmd"] == "0x5a00"]
    check(len(binds) >= 3 and all(f["ret"] == "0" for f in binds), "%s: binds %s" % (mode, binds))
    cmds = [f["cmd"] for f in ioctls]
    for c in ("0xc02c5800", "0xc060580f", "0x41584d03", "0x41584d0d", "0x41584d04"):
        check(c in cmds, "%s: ioctl %s missing" % (mode, c))
    check(all(f["module"] == "SVM" for f in ioctls if f["cmd"].startswith("0x41584d")),
          "%s: SVM ioctls on an SVM fd" % mode)
    sends = [f for f in ioctls if f["cmd"] == "0x40405813"]
    api_sends = [f for f in apis if f["name"] == "halSqTaskSend"]
    check(sum(int(f["sqe_num"]) for f in api_sends) == total, "%s: api sqe_num sum" % mode)
    if mode == "ioctl":
        check(len(sends) == len(api_sends), "%s: one SEND ioctl per halSqTaskSend" % mode)
    else:
        check(not sends, "uio mode issued TRS_SQCQ_SEND")
    check(all(f["layer"] == "driver" for f in apis), "%s: api layer" % mode)
    app = [f for k, f in hal if k == "mem" and f["component"] == "APP"]
    check([(f["op"], int(f["size"]), int(f["total_allocated"]), int(f["device"])) for f in app] ==
          [("malloc", 8 << 20, 8 << 20, 0), ("free", -(8 << 20), 0, 0)],
          "%s: APP mem lines %s" % (mode, app))
    alloc_api = [f for f in apis if f["name"] == "halMemAlloc"][0]
    check(app[0]["ptr"] == alloc_api["ptr"] == res["mem"], "%s: APP ptr" % mode)
    names = {f["name"] for f in apis}
    for n in ("halMemAlloc", "halMemFree", "halResourceIdAlloc", "halSqCqAllocate", "halSqTaskSend",
              "halSqCqQuery", "prof_drv_start", "prof_channel_read", "halGetDeviceInfo"):
        check(n in names, "%s: no api line for %s" % (mode, n))


if __name__ == "__main__":
    sys.exit(main())
