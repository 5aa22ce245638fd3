# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""`ascbpf report JOBDIR` names the culprit of a hung job traced on npu_model: 3 ranks
of npu_train multi-rank (two simulated nodes), rank 1 hangs at the entry of its HCCL op
3 (NPU_MODEL_HCCL_HANG=1:3, npu_model/README.md "HCCL"); the others enter op 3, their
Notify_Wait on rank 1 never ends and their next synchronize times out
(NPU_MODEL_SYNC_TIMEOUT_S).  The hung rank's tracer is stopped with SIGINT, as a user
stops a job that does not progress.  Checked against the journal: the report's `hang`
finding names collective 3 of the journal's group and rank 1 (the journal's
hccl_fault line) as never arrived; every rank's last collective is the last one its
journal has (rank 1: its fault's seq), the others' stuck on the card.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon, read_journal  # noqa: E402

RANKS = 3
HANG = (1, 3)

d = tc.workdir()
jdir = tempfile.mkdtemp(prefix="hang-journal.")
m = ModelDaemon(cards=RANKS, extra=["--journal", jdir, "--cards-per-node", "2"])
procs = []
try:
    m.start()
    root = os.path.join(d, "root_info")
    for r in range(RANKS):
        out = os.path.join(d, "job", "rank%d" % r)
        cmd = [tc.ASCBPF, "trace", "--level", "0", "-o", out, "--no-convert", "--",
               m.bin("npu_train"), "--scenario", "multi-rank", "--ranks", str(RANKS),
               "--rank", str(r), "--root-info", root, "--steps", "8"]
        env = m.env(NPU_MODEL_JOURNAL=jdir, RANK=r, ASCEND_DEVICE_ID=r,
                    NPU_MODEL_HCCL_HANG="%d:%d" % HANG, NPU_MODEL_SYNC_TIMEOUT_S="3")
        # own process group: the hung npu_train is killed with it at the end
        procs.append((r, out, subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                               stderr=subprocess.STDOUT, text=True,
                                               start_new_session=True)))
    # the others give up after their synchronize times out; the hung rank never ends
    deadline = time.time() + 200
    for r, out, p in procs:
        if r == HANG[0]:
            continue
        try:
            p.wait(timeout=max(1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGINT)
    time.sleep(1)
    for r, out, p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)    # stop tracing the hung rank
    for r, out, p in procs:
        try:
            p.wait(timeout=60)              # the tracer writes its capture and exits
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(p.pid, signal.SIGKILL)    # the hung npu_train, in the group we made
        except ProcessLookupError:
            pass
        text, _ = p.communicate()
        print("--- rank %d (rc %s)\n%s" % (r, p.returncode, text[-800:]), end="")
    m.stop()
    journal = read_journal(jdir)
finally:
    for _, _, p in procs:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    m.stop()

faults = [f for k, f in journal if k == "hccl_fault"]
tc.check(len(faults) == 1 and int(faults[0]["rank"]) == HANG[0] and
         int(faults[0]["seq"]) == HANG[1] and faults[0]["fault"] == "hang",
         "journal fault %s" % faults)
group = [f for k, f in journal if k == "hccl_comm"][0]["group"]
last = {}
for k, f in journal:
    if k == "hccl":
        last[int(f["rank"])] = max(last.get(int(f["rank"]), -1), int(f["seq"]))
print("journal: last op written per rank", last)

rp = subprocess.run([tc.ASCBPF, "report", "--json", os.path.join(d, "job")],
                    capture_output=True, text=True, timeout=240)
tc.check(rp.returncode == 0, "report exited %d: %s" % (rp.returncode, rp.stderr[-400:]))
print(rp.stdout[:800])
job = json.loads(rp.stdout)["job"]
hang = [f for f in job["findings"] if f["id"] == "hang"]
tc.check(len(hang) == 1, "one hang finding: %s" % job["findings"])
tc.check(hang[0]["never_arrived"] == [HANG[0]] and hang[0]["seq"] == HANG[1] and
         hang[0]["group"] == group, "hang: %s, want rank %d at %d of %s" %
         (hang[0], HANG[0], HANG[1], group))
for x in job["ranks"]:
    if x["rank"] == HANG[0]:
        # entered op 3 (its ENTRY record) but never returned: the journal's last is 2
        tc.check(x["last_seq"] == HANG[1] and x["last_state"] == "host" and
                 last.get(x["rank"]) == HANG[1] - 1, "hung rank: %s, journal %s" %
                 (x, last.get(x["rank"])))
    else:
        # returned from op 3 (the journal has it), its tasks stuck on the card
        tc.check(x["last_seq"] == HANG[1] and x["last_state"] == "device" and
                 last.get(x["rank"]) == HANG[1], "rank %d: %s, journal %s" %
                 (x["rank"], x, last.get(x["rank"])))
shutil.rmtree(jdir, ignore_errors=True)
shutil.rmtree(d, ignore_errors=True)
print("PASS")
