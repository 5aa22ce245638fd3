# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Never silent loss: with a 1 MiB ring and the consumer (ascbpf) stopped
for a second while the target makes calls as fast as it can, reserves fail;
every failure is counted, so records in the capture + counted drops equal,
exactly, the records the target's calls produced (2 per call, 1 per step,
from the journal).  The drops are reported in the STATS record, in a LOST
record and in the summary line; the target is not slowed to a halt."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402

d = tc.workdir()
a = None
try:
    tc.build(d)
    j = os.path.join(d, "journal")
    env = dict(os.environ, TT_LIBDIR=d, TT_JOURNAL=j)
    out = os.path.join(d, "out")
    a = subprocess.Popen([tc.ASCBPF, "trace", "--level", "2", "-o", out, "--no-convert", "--ringbuf-size", "1",
                          "--", os.path.join(d, "tt"), "20", "10000", "0"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = a.stdout.readline()		# the target's "ready": its libraries are attached
    tc.check(line.startswith("ready"), "target did not start: %r" % line)
    a.send_signal(signal.SIGSTOP)	# the consumer stops draining
    time.sleep(1.0)
    a.send_signal(signal.SIGCONT)
    so, se = a.communicate(timeout=120)
    print(so, se[-2000:])
    tc.check(a.returncode == 0, "trace exited %d" % a.returncode)
    caps = [f for f in os.listdir(out) if f.endswith(".cap")]
    recs = tc.records(os.path.join(out, caps[0]))
    st = tc.stats(recs)
    tc.check(st["drops"] > 0, "no drops: the test did not overflow the ring")
    jr = tc.journal(j)
    calls = sum(1 for x in jr if x[0] in tc.CALLS)
    steps = sum(1 for x in jr if x[0] == "step") + 1  # + step 0, the loader's record
    got = sum(1 for x in recs if x["type"] in ("enter", "exit", "step"))
    print("journal: %d calls, %d steps -> %d records; capture %d + %d drops" %
          (calls, steps, 2 * calls + steps, got, st["drops"]))
    tc.check(got + st["drops"] == 2 * calls + steps,
             "capture %d + drops %d != %d records produced" %
             (got, st["drops"], 2 * calls + steps))
    lost = [x for x in recs if x["type"] == "lost" and "ring buffer" in x["text"]]
    tc.check(len(lost) == 1 and lost[0]["value"] == st["drops"], "LOST record: %s" % lost)
    m = re.search(r"(\d+) dropped", so)
    tc.check(m and int(m[1]) == st["drops"], "summary line does not say the drops")
    # BPF counts what it emits: not step 0's STEP record, which the loader writes
    tc.check(st["events"] >= got - 1, "STATS.events %d < %d records" % (st["events"], got - 1))
    print("PASS: %d drops, all accounted for" % st["drops"])
finally:
    if a and a.poll() is None:
        a.send_signal(signal.SIGCONT)
        a.kill()
    shutil.rmtree(d, ignore_errors=True)
