# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Jobs one after another on one card under one `ascbpf trace --comm NAME`
(the soak's pattern, issue 19 item 5): three npu_train --scenario baseline
runs in a row on a one-card npu-modeld.  Each process's capture holds one
device record for each task its journal says it sent, and no other: the
card's reader gives a process that has exited only its own tasks' records
(before: the first job's capture got every later job's records too, 3x its
own, and kept its capture buffers for them, about 1.7 MiB of ascbpf's RSS
per finished job), and a process joining the running reader is given only
the records that arrived after its first submission, never an earlier job's."""
import collections
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon  # noqa: E402

JOBS, STEPS = 3, 10
d = tc.workdir()
asc = None
try:
    jdir = os.path.join(d, "journal")
    os.mkdir(jdir)
    out = os.path.join(d, "out")
    with ModelDaemon(cards=1) as m:
        comm = "njb%d" % os.getpid()	# ours only (a symlink: $ORIGIN is the real one's)
        exe = os.path.join(d, comm)
        os.symlink(m.bin("npu_train"), exe)
        asc = tc.Background(["trace", "--comm", comm, "-o", out, "--no-convert"])
        for _ in range(JOBS):
            w = subprocess.run([exe, "--scenario", "baseline", "--steps", str(STEPS)],
                               env=m.env(NPU_MODEL_JOURNAL=jdir), capture_output=True,
                               text=True, timeout=180)
            tc.check(w.returncode == 0, "npu_train exited %d: %s" % (w.returncode, w.stderr))
        asc.stop()
    tc.check(asc.proc.returncode == 0, "trace exited %d" % asc.proc.returncode)
    caps = sorted(f for f in os.listdir(out) if f.endswith(".cap"))
    tc.check(len(caps) == JOBS, "expected %d captures, got %s" % (JOBS, caps))
    for c in caps:
        recs = tc.records(os.path.join(out, c))
        pid = recs[0]["tgid"]
        jt = collections.Counter((int(f["dev"]), int(f["stream"]), int(f["task"]))
                                 for kind, f in tc.process_journal(jdir, pid) if kind == "task")
        dev = collections.Counter((x["dev_id"], x["stream_id"], x["task_id"])
                                  for x in recs if x["type"] == "devtask")
        tc.check(sum(jt.values()) > 0, "pid %d: no task in its journal" % pid)
        tc.check(not dev - jt, "pid %d: %d device records of tasks it did not send (%d of "
                 "its own %d)" % (pid, sum((dev - jt).values()), sum((dev & jt).values()),
                                  sum(jt.values())))
        tc.check(not jt - dev, "pid %d: %d of its %d tasks without a device record" %
                 (pid, sum((jt - dev).values()), sum(jt.values())))
        print("pid %d: %d tasks, each with its device record, no other" %
              (pid, sum(jt.values())))
    print("PASS")
finally:
    if asc:
        asc.kill()
    shutil.rmtree(d, ignore_errors=True)
