# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The ring buffer does not wake the consumer per event (issue 3: "ring buffer
without a wake-up per event").

The tiny target makes ~8000 traced calls a second with sleeps between them,
so a consumer woken per record would wake (and sleep again: one voluntary
context switch) about once per record: the producer is far slower than the
consumer.  ascbpf submits with BPF_RB_NO_WAKEUP and drains on its poll
timer (user/trace/trace.c POLL_MS, 100 ms) or when the ring is half full.  The
voluntary context switches of the ascbpf process over a 2 s trace (all its
threads, from getrusage(RUSAGE_CHILDREN) around the one child) must be a
small fraction of the records it consumed: at most one per 20 records.  The
bound is loose on purpose (per-event wake-ups give ~1 per record; the timer
gives ~20 in 2 s plus attach and detach); it says nothing about speed.
"""
import os
import re
import resource
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402

d = tc.workdir()
t = None
try:
    tc.build(d)
    t = tc.Target(d, [-1, 20, 500], None, "wake")
    out = os.path.join(d, "out")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_nvcsw
    r = subprocess.run([tc.ASCBPF, "trace", "--level", "2", "-p", str(t.pid), "-o", out,
                        "--no-convert", "--duration", "2"], capture_output=True, text=True,
                       timeout=120)
    nvcsw = resource.getrusage(resource.RUSAGE_CHILDREN).ru_nvcsw - before
    print(r.stdout, r.stderr[-500:])
    tc.check(r.returncode == 0, "trace exited %d" % r.returncode)
    m = re.search(r"^ascbpf: (\d+) events", r.stdout, re.M)
    tc.check(m, "no summary line")
    events = int(m.group(1))
    print("%d records consumed, %d voluntary context switches of ascbpf" % (events, nvcsw))
    tc.check(events >= 5000, "only %d records: the target did not call enough" % events)
    tc.check(nvcsw * 20 <= events, "%d voluntary context switches for %d records: the consumer "
             "is woken per record" % (nvcsw, events))
    print("PASS")
finally:
    if t:
        t.stop()
    shutil.rmtree(d, ignore_errors=True)
