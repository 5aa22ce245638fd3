# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""`ascbpf agent` triggers, and the safety of the job when the agent dies.

* hang: a running npu_train is stopped (SIGSTOP, the injected hang):
  ascbpf_finding{kind="hang"} becomes 1 and one "finding hang: pid P" line is
  logged (--hang-min 2: the threshold is max(3 x p99 step, 2 s)); after SIGCONT
  it is 0 again, and the step that held the stop is a slow_step finding
  (> 3 x the median of the steps before);
* while it ran normally, before the stop, no finding was active;
* each finding dumps a flight record (DIR/captures/PID-flight-KIND-N.json):
  the hang's has the (up to 32) step durations before the stop and the per-scan
  counters, its step count the one the metrics show;
* alloc_failure: the oom scenario's refused allocations start the finding;
* straggler: of two ranks of one job, the one on an 8 x slower card is found,
  the other not; with --capture-on straggler a 3-step capture of that rank
  (and none of the other) is written and converted;
* SIGKILL of the agent while a job runs: the job finishes (exit 0) with all its
  steps in the journal, and every BPF program the agent held is gone from the
  kernel (its ids, read from the agent's fdinfo, no longer exist).
"""
import csv
import glob
import json
import os
import re
import time
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import agent_check as ac  # noqa: E402
from npu_model import ModelDaemon, read_journal  # noqa: E402

check = ac.check


def finding(s, pid, kind):
    return ac.value(s, "ascbpf_finding", pid=pid, kind=kind)


def episodes(s, pid, kind):
    return ac.value(s, "ascbpf_findings_total", pid=pid, kind=kind)


def flight(a, d, pid, kind):
    """The flight record the agent logged for pid's finding kind, parsed."""
    end = time.monotonic() + 60
    while True:
        m = re.search(r"flight record of pid %d \(%s\): (\S+)" % (pid, kind), a.logtext())
        if m:
            with open(m.group(1)) as f:
                return json.load(f)
        check(time.monotonic() < end, "no %s flight record for %d:\n%s" %
              (kind, pid, a.logtext()))
        time.sleep(0.2)


def start_job(a, m, d, name, args, jdir=None):
    env = m.env(**({"NPU_MODEL_JOURNAL": jdir} if jdir else {}))
    p, gate = ac.gated_job(m, d, name, args, env)
    a.wait_for(lambda s: (ac.value(s, "ascbpf_process_probes", pid=p.pid) or 0) > 0,
               "%s attached" % name)
    ac.release(gate)
    return p


def hang_and_slow(d):
    with ModelDaemon(cards=1) as m, ac.Agent(d, linger=1,
                                             extra=["--hang-min", "2"]) as a:
        p = start_job(a, m, d, "hang", ["--scenario", "baseline", "--steps", "0",
                                        "--duration", "120"])
        try:
            s = a.wait_for(lambda s: (ac.value(s, "ascbpf_steps_total", pid=p.pid) or 0) >= 20,
                           "20 steps")
            check(finding(s, p.pid, "hang") == 0 and episodes(s, p.pid, "hang") == 0,
                  "hang found in a running job")
            check(episodes(s, p.pid, "alloc_failure") == 0, "alloc_failure in a healthy job")
            p.send_signal(signal.SIGSTOP)
            s = a.wait_for(lambda s: finding(s, p.pid, "hang") == 1, "the hang finding")
            check(episodes(s, p.pid, "hang") == 1, "hang episodes %s" % episodes(s, p.pid, "hang"))
            check(re.search(r"finding hang: pid %d \(" % p.pid, a.logtext()),
                  "no hang log line:\n" + a.logtext())
            print("hang: finding and log line while the job is stopped")
            fr = flight(a, d, p.pid, "hang")
            n_stop = ac.value(s, "ascbpf_steps_total", pid=p.pid)
            rec = fr["recent_steps"]
            check(fr["pid"] == p.pid and fr["steps"] == n_stop and
                  len(rec) == min(32, n_stop - 1) and rec[-1]["step"] == n_stop - 2 and
                  all(x["duration_s"] > 0 for x in rec),
                  "hang flight record: steps %s (metrics %s), recent %s" %
                  (fr["steps"], n_stop, rec[-3:]))
            check(fr["scans"] and fr["scans"][-1]["steps"] == n_stop and
                  fr["scans"][-1]["tasks"] > 0, "hang flight record scans: %s" % fr["scans"][-2:])
            print("hang: flight record with the last %d steps and %d scans" %
                  (len(rec), len(fr["scans"])))
            n = ac.value(s, "ascbpf_steps_total", pid=p.pid)
            p.send_signal(signal.SIGCONT)
            s = a.wait_for(lambda s: finding(s, p.pid, "hang") == 0 and
                           ac.value(s, "ascbpf_steps_total", pid=p.pid) > n + 2,
                           "the hang's end")
            check(episodes(s, p.pid, "slow_step") >= 1, "the stopped step was no slow_step")
            check(re.search(r"finding slow_step: pid %d \(" % p.pid, a.logtext()),
                  "no slow_step log line")
            print("after SIGCONT: hang cleared, the stopped step a slow_step finding")
        finally:
            p.send_signal(signal.SIGCONT)
            p.send_signal(signal.SIGTERM)
            rc = p.wait(60)
        check(rc == 0, "npu_train exited %d after SIGTERM" % rc)


def oom(d):
    with ModelDaemon(cards=1, hbm_mib=256) as m, ac.Agent(d, linger=5) as a:
        p = start_job(a, m, d, "oom", ["--scenario", "oom"])
        check(p.wait(120) == 0, "oom scenario failed")
        s = a.wait_for(lambda s: ac.value(s, "ascbpf_process_probes", pid=p.pid) == 0,
                       "oom's exit")
        check(episodes(s, p.pid, "alloc_failure") == 1, "alloc_failure episodes %s" %
              episodes(s, p.pid, "alloc_failure"))
        check(re.search(r"finding alloc_failure: pid %d \(" % p.pid, a.logtext()),
              "no alloc_failure log line")
        print("oom: alloc_failure finding and log line")
        fr = flight(a, d, p.pid, "alloc_failure")
        check(fr["kind"] == "alloc_failure" and fr["steps"] > 0, "oom flight record: %s" % fr)
        print("oom: flight record written")


def straggler(d):
    """Two processes of one job (SLURM_JOB_ID), rank 1 on a card 8 x slower (its own
    npu-modeld --card): rank 1 is the straggler, rank 0 never."""
    slow = "tflops=35,vector_tflops=2.5,hbm_gbps=200,pcie_gbps=3"
    with ModelDaemon(cards=1) as fast_m, ModelDaemon(cards=1, card=slow) as slow_m, \
            ac.Agent(d, linger=1, extra=["--capture-on", "straggler",
                                         "--capture-steps", "3"]) as a:
        procs = []
        try:
            for rank, m in ((0, fast_m), (1, slow_m)):
                env = m.env(SLURM_JOB_ID="strag", RANK=str(rank))
                p, gate = ac.gated_job(m, d, "rank%d" % rank,
                                       ["--scenario", "baseline", "--steps", "0",
                                        "--duration", "300"], env)
                procs.append((p, gate))
            for p, gate in procs:
                a.wait_for(lambda s: (ac.value(s, "ascbpf_process_probes", pid=p.pid) or 0) > 0,
                           "pid %d attached" % p.pid)
            for p, gate in procs:
                ac.release(gate)
            fast, slow_p = procs[0][0], procs[1][0]
            s = a.wait_for(lambda s: finding(s, slow_p.pid, "straggler") == 1,
                           "rank 1's straggler finding", timeout=180)
            check(finding(s, fast.pid, "straggler") == 0 and
                  episodes(s, fast.pid, "straggler") == 0, "rank 0 found a straggler")
            check(re.search(r"finding straggler: pid %d \(job strag, rank 1\)" % slow_p.pid,
                            a.logtext()), "no straggler log line")
            print("straggler: rank 1 (8 x slower card) found, rank 0 not")
            # the triggered capture: 3 steps of rank 1 into DIR/captures/PID-N
            end = time.monotonic() + 180
            done = "capture of pid %d done (status 0)" % slow_p.pid
            while done not in a.logtext():
                check(time.monotonic() < end, "no triggered capture:\n" + a.logtext())
                time.sleep(0.2)
            caps = os.path.join(d, "agentdir", "captures")
            pts = glob.glob(os.path.join(caps, "%d-[0-9]*" % slow_p.pid, "*_ascend_pt"))
            check(len(pts) == 1, "triggered capture outputs: %s" % pts)
            with open(os.path.join(pts[0], "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"),
                      newline="") as f:
                rows = list(csv.reader(f))[1:]
            span = ac.capture_span(os.path.dirname(pts[0]) + ".cap")
            check(span == 3 and 1 <= len(rows) <= 3, "triggered capture: submissions over "
                  "%d steps, %d in step_trace_time.csv, want 3" % (span, len(rows)))
            check(not glob.glob(os.path.join(caps, "%d-[0-9]*" % fast.pid)),
                  "rank 0 was captured too")
            print("straggler: --capture-on straggler captured 3 steps of rank 1 only")
        finally:
            for p, _ in procs:
                p.send_signal(signal.SIGTERM)
                p.wait(60)


def prog_ids(pid):
    ids = set()
    fddir = "/proc/%d/fd" % pid
    for fd in os.listdir(fddir):
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                m = re.search(r"^prog_id:\s*(\d+)", f.read(), re.M)
        except OSError:
            continue
        if m:
            ids.add(int(m.group(1)))
    return ids


def sigkill(d):
    jdir = os.path.join(d, "journal-kill")
    os.mkdir(jdir)
    with ModelDaemon(cards=1, journal=True) as m:
        a = ac.Agent(d, linger=1).start()
        p = start_job(a, m, d, "kill", ["--scenario", "baseline", "--steps", "40"], jdir)
        a.wait_for(lambda s: (ac.value(s, "ascbpf_steps_total", pid=p.pid) or 0) >= 2,
                   "2 steps")
        ids = prog_ids(a.proc.pid)
        check(len(ids) >= 5, "agent holds %d BPF programs: %s" % (len(ids), ids))
        a.proc.kill()
        a.proc.wait()
        a.stop()
        rc = p.wait(120)
        check(rc == 0, "npu_train exited %d after the agent's SIGKILL" % rc)
        m.proc.send_signal(signal.SIGTERM)
        m.proc.wait(30)
        steps = sum(1 for k, _ in read_journal(jdir, p.pid) if k == "step")
        check(steps == 40, "journal has %d steps of 40" % steps)
        left = [i for i in ids if subprocess.run(["bpftool", "prog", "show", "id", str(i)],
                                                 capture_output=True).returncode == 0]
        check(not left, "BPF programs %s still loaded after the agent's SIGKILL" % left)
        print("SIGKILL: job finished its 40 steps; the agent's %d programs are gone" % len(ids))


d = tempfile.mkdtemp(prefix="ascbpf-agent-find.")
try:
    hang_and_slow(d)
    oom(d)
    straggler(d)
    sigkill(d)
    print("PASS")
finally:
    shutil.rmtree(d, ignore_errors=True)
