# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A client killed with SIGKILL mid-run (device memory held, two streams with
queued tasks, a profiling session open) has everything reclaimed, checked
through the daemon's own state (npu_model_info) and its journal (`reclaim`
line, no exec line for the dropped tasks); the daemon keeps running and
serves the next client, in both submission modes.  A child forked after
its parent used the HAL gets resources of its own.
"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from npu_model import ModelDaemon, read_journal  # noqa: E402

TASKS = 20
FLOPS = str(28 * 10**12)	# 100 ms each at 280 TFLOPS: the queue is long when we kill


def check(cond, msg):
    if not cond:
        print("FAIL:", msg)
        sys.exit(1)


def wait_for(m, pred, what, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        info = m.info()
        if pred(info):
            return info
        time.sleep(0.02)
    print("FAIL: timed out waiting for", what, m.info())
    sys.exit(1)


def forked_child():
    """A child forked after the parent used the HAL binds its own fds: its
    memory and tasks are its own and are reclaimed when it exits, while the
    parent's allocation stays."""
    with ModelDaemon(cards=1, journal=True) as m:
        out = subprocess.run([m.bin("npu_halclient"), "fork"], env=m.env(), capture_output=True,
                             text=True, timeout=60)
        check(out.returncode == 0, "fork client failed: %s %s" % (out.stdout, out.stderr))
        lines = [json.loads(x) for x in out.stdout.splitlines()]
        child_run = [x for x in lines if not x.get("fork")]
        parent = [x for x in lines if x.get("fork")][0]
        check(child_run and child_run[0]["ok"] and parent["child_status"] == 0, "child run %s" % lines)
        check(parent["used_before"] == 1 << 20 and parent["used_after"] == 1 << 20,
              "parent's memory after the child exited: %s" % parent)
        m.proc.terminate()
        m.proc.wait(10)
        execs = [f for k, f in read_journal(m.journal_dir) if k == "exec"]
        check(len(execs) == 5 and all(int(e["pid"]) == parent["child"] for e in execs),
              "the child's tasks ran as the child's: %s" % execs[:1])
    print("PASS: a forked child binds its own fds")


def killed_while_blocked():
    """A client killed inside a blocking ioctl (halCqReportRecv with no
    timeout): the daemon answers the interrupted request, reclaims the
    client's memory, SQ, ids and profiling session, and keeps serving."""
    with ModelDaemon(cards=1) as m:
        for mode in ("uio", "ioctl"):
            p = subprocess.Popen([m.bin("npu_halclient"), "block"], env=m.env(NPU_MODEL_SQ_MODE=mode),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            first = json.loads(p.stdout.readline())
            check(first["ok"], "block client setup %s" % first)
            time.sleep(0.3)	# inside halCqReportRecv by now
            check(p.poll() is None, "the blocking call returned early")
            p.send_signal(signal.SIGKILL)
            p.wait(10)
            wait_for(m, lambda i: i["dev0.sqs"] == 0 and i["dev0.hbm_used"] == 0 and
                     i["dev0.streams"] == 0 and i["dev0.prof_sessions"] == 0,
                     "reclaim after a kill inside an ioctl")
            check(m.alive(), "daemon died")
        out = subprocess.run([m.bin("npu_halclient"), "run", "--tasks", "3"], env=m.env(),
                             capture_output=True, text=True, timeout=30)
        check(out.returncode == 0, "client after the kills: %s" % out.stderr)
    print("PASS: killed inside a blocking ioctl: reclaimed")


def main():
    killed_while_blocked()
    forked_child()
    for mode in ("uio", "ioctl"):
        with ModelDaemon(cards=1, journal=True, hbm_mib=1024) as m:
            victim = subprocess.Popen(
                [m.bin("npu_halclient"), "run", "--streams", "2", "--tasks", str(TASKS),
                 "--batch", str(TASKS), "--flops", FLOPS, "--alloc", str(256 << 20), "--prof",
                 "--hold-ms", "30000"],
                env=m.env(NPU_MODEL_SQ_MODE=mode), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            busy = wait_for(m, lambda i: i["dev0.sqs"] == 2 and i["dev0.prof_sessions"] == 1 and
                            i["dev0.hbm_used"] >= 256 << 20 and i["dev0.tasks_done"] >= 1,
                            "the victim to be busy")
            check(busy["dev0.streams"] == 2 and busy["dev0.opens"] == 1, "victim state %s" % busy)
            victim.send_signal(signal.SIGKILL)
            victim.wait(10)
            after = wait_for(m, lambda i: i["dev0.sqs"] == 0 and i["dev0.hbm_used"] == 0 and
                             i["dev0.streams"] == 0 and i["dev0.prof_sessions"] == 0 and
                             i["dev0.opens"] == 0, "reclaim")
            check(m.alive(), "daemon died with its client")
            dropped = after["dev0.tasks_dropped"]
            done = after["dev0.tasks_done"]
            check(dropped > 0 and done + dropped == 2 * TASKS,
                  "%s: done %d + dropped %d != %d" % (mode, done, dropped, 2 * TASKS))
            # The card is usable again, by a new process, with all its memory.
            out = subprocess.run([m.bin("npu_halclient"), "run", "--tasks", "5", "--prof",
                                  "--alloc", str(1000 << 20)], env=m.env(NPU_MODEL_SQ_MODE=mode),
                                 capture_output=True, text=True, timeout=30)
            check(out.returncode == 0, "%s: next client failed: %s %s" % (mode, out.stdout, out.stderr))
            res = json.loads(out.stdout)
            check(res["ok"] and len(res["records"]) == 10, "%s: next client %s" % (mode, res))
            time.sleep(0.1)
            # Not "done + 5" blindly: the dropped tasks must never have run later.
            final = m.info()
            check(final["dev0.tasks_done"] == done + 5, "%s: tasks_done %d" % (mode, final["dev0.tasks_done"]))
            m.proc.terminate()
            m.proc.wait(10)
            lines = read_journal(m.journal_dir)
            rec = [f for k, f in lines if k == "reclaim" and int(f["pid"]) == victim.pid]
            mods = {f["module"] for f in rec}
            check({"TSDRV", "SVM", "PROF"} <= mods, "%s: reclaim lines %s" % (mode, rec))
            tsdrv = [f for f in rec if f["module"] == "TSDRV"][0]
            check(int(tsdrv["sqs"]) == 2 and int(tsdrv["ids"]) >= 2, "%s: tsdrv reclaim %s" % (mode, tsdrv))
            execs = [f for k, f in lines if k == "exec" and int(f["pid"]) == victim.pid]
            check(len(execs) == done, "%s: %d exec lines, %d done" % (mode, len(execs), done))
        print("PASS: %s mode: %d tasks ran, %d dropped, everything reclaimed" % (mode, done, dropped))
    return 0


if __name__ == "__main__":
    sys.exit(main())
