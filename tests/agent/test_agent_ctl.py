# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""`ascbpf ctl capture` through the agent's root-only control socket.

* the socket is DIR/ctl.sock, mode 0600, root's, in the root-only DIR;
* `ctl capture --pid P --iterations 3` on a running npu_train exits 0 with
  "done status=0 output=OUT"; OUT holds one *_ascend_pt that `ascbpf trace`
  machinery wrote: the capture's submissions lie in exactly 3 consecutive steps,
  step_trace_time.csv has at most 3, kernel_details.csv kernels, trace_view.json
  parses, and `ascbpf report` accepts it;
* --start-step S: the capture starts only once the agent has counted step S;
  --activities cpu: the capture has framework records and no SQE or device
  record (the default capture has both); --activities gpu exits 2;
* a non-root user is refused (exit 2), a pid the agent does not follow gets an
  error (exit 1), bad usage exits 2;
* `ctl capture --job J` captures every process of the job (two here, 2 steps
  each); an unknown job is an error (exit 1);
* --quota of 1.5 captures: the third capture removes the first one's entries
  before it starts (and the second's only if it alone was over the quota);
* --sample-every: the two processes of one job get their sampled 2-step
  captures in the same slot, each with a sampling record (period, steps,
  weight);
* SIGKILL of the agent mid-capture: the job keeps running (and ends with exit
  0 later), the capture child ends its trace (PR_SET_PDEATHSIG): the capture
  file is readable (`ascbpf dump`) and the output converted.
"""
import collections
import csv
import glob
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import agent_check as ac  # noqa: E402
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon  # noqa: E402

check = ac.check


def ctl(args, user=None, timeout=300):
    cmd = [ac.ASCBPF, "ctl"] + args
    if user:
        cmd = ["setpriv", "--reuid", user, "--regid", user, "--clear-groups"] + cmd
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    print("$ ascbpf ctl", " ".join(args), "->", r.returncode)
    print(r.stdout + r.stderr, end="")
    return r


def long_job(a, m, d, name, **env):
    p, gate = ac.gated_job(m, d, name, ["--scenario", "baseline", "--steps", "0",
                                        "--duration", "300"], m.env(**env))
    a.wait_for(lambda s: (ac.value(s, "ascbpf_process_probes", pid=p.pid) or 0) > 0,
               "%s attached" % name)
    ac.release(gate)
    return p


def stop_job(p):
    p.send_signal(signal.SIGTERM)
    rc = p.wait(60)
    check(rc == 0, "npu_train exited %d" % rc)


def check_output(out, steps):
    pts = glob.glob(os.path.join(out, "*_ascend_pt"))
    check(len(pts) == 1, "%s: %d *_ascend_pt" % (out, len(pts)))
    po = os.path.join(pts[0], "ASCEND_PROFILER_OUTPUT")
    with open(os.path.join(po, "step_trace_time.csv"), newline="") as f:
        rows = list(csv.reader(f))[1:]
    if steps is not None:
        # the recorded window: the capture's task submissions lie in exactly `steps`
        # consecutive step intervals (STEP records are kept for every boundary);
        # step_trace_time.csv has a row for each of them, also for a step in which no
        # task starts (npu_train baseline's alternate ~1 ms ones; torch_npu writes a row
        # for every step with launches, docs/torch_npu_format.md)
        span = ac.capture_span(out + ".cap")
        check(span == steps, "%s: submissions over %d steps, want %d" % (out, span, steps))
        check(len(rows) == steps, "step_trace_time.csv: %d steps, want %d" %
              (len(rows), steps))
    with open(os.path.join(po, "kernel_details.csv"), newline="") as f:
        kernels = list(csv.reader(f))[1:]
    check(kernels, "kernel_details.csv has no kernel")
    with open(os.path.join(po, "trace_view.json")) as f:
        tv = json.load(f)
    check(tv, "trace_view.json is empty")
    r = subprocess.run([ac.ASCBPF, "report", pts[0]], capture_output=True, text=True,
                       timeout=300)
    check(r.returncode == 0, "ascbpf report: %d %s" % (r.returncode, r.stderr))
    return len(rows), len(kernels)


def start_step_and_activities(a, adir, p, full):
    """--start-step S: "started" only once the agent counted step S; --activities cpu: the
    capture has the framework layer and no SQE / device record (the default one has both)."""
    now = ac.value(ac.parse(a.metrics()), "ascbpf_steps_total", pid=p.pid)
    start = int(now) + 150
    c = subprocess.Popen([ac.ASCBPF, "ctl", "capture", "--pid", str(p.pid), "--iterations",
                          "2", "--start-step", str(start), "--activities", "cpu", "--dir",
                          adir], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = c.stdout.readline()
    at = ac.value(ac.parse(a.metrics()), "ascbpf_steps_total", pid=p.pid)
    check(line.startswith("started output=") and at >= start,
          "--start-step %d: %r at step %s" % (start, line, at))
    rest, _ = c.communicate(timeout=300)
    check(c.returncode == 0, "ctl --start-step exited %d: %s" % (c.returncode, line + rest))
    out = line.split("output=", 1)[1].strip()
    types = collections.Counter(x["type"] for x in tc.records(out + ".cap"))
    full_types = collections.Counter(x["type"] for x in tc.records(full + ".cap"))
    check(full_types["sqe"] > 0 and full_types["devtask"] > 0, "default capture: %s" %
          dict(full_types))
    check(types["step"] > 0 and types["enter"] > 0 and not types["sqe"] and
          not types["devtask"], "--activities cpu capture: %s" % dict(types))
    print("ctl capture --start-step %d (started at step %d) --activities cpu: framework "
          "records only" % (start, at))
    r = ctl(["capture", "--pid", str(p.pid), "--activities", "gpu", "--dir", adir])
    check(r.returncode == 2, "--activities gpu: exit %d" % r.returncode)


def on_demand(d):
    with ModelDaemon(cards=1) as m, ac.Agent(d) as a:
        adir = os.path.join(d, "agentdir")
        st = os.lstat(os.path.join(adir, "ctl.sock"))
        check(stat.S_ISSOCK(st.st_mode) and st.st_mode & 0o777 == 0o600 and st.st_uid == 0,
              "ctl.sock mode %o uid %d" % (st.st_mode & 0o777, st.st_uid))
        p = long_job(a, m, d, "ondemand")
        try:
            r = ctl(["capture", "--pid", str(p.pid), "--iterations", "3", "--dir", adir])
            check(r.returncode == 0, "ctl capture exited %d" % r.returncode)
            done = [l for l in r.stdout.splitlines() if l.startswith("done status=0 output=")]
            check(len(done) == 1, "no done line: %r" % r.stdout)
            first = done[0].split("output=", 1)[1]
            steps, kernels = check_output(first, 3)
            print("ctl capture: 3 steps, %d kernels, converted and reported" % kernels)
            size = sum(du(e) for e in glob.glob(first + "*"))
            start_step_and_activities(a, adir, p, first)
            r = ctl(["capture", "--pid", str(p.pid), "--dir", adir], user="65534")
            check(r.returncode == 2, "non-root ctl: exit %d" % r.returncode)
            r = ctl(["capture", "--pid", "1", "--dir", adir])
            check(r.returncode == 1 and "error pid 1" in r.stdout,
                  "pid 1: exit %d %r" % (r.returncode, r.stdout))
            for bad in ([], ["capture"], ["capture", "--pid", "x"], ["frob"],
                        ["capture", "--pid", "5", "--iterations", "0"],
                        ["capture", "--pid", "5", "--job", "j"]):
                r = ctl(bad + ["--dir", adir] if bad else bad)
                check(r.returncode == 2, "ctl %s: exit %d" % (bad, r.returncode))
            print("non-root refused, unknown pid an error, bad usage exit 2")
        finally:
            stop_job(p)
        # --job: both processes of one job, one capture each
        jobs = [long_job(a, m, d, "job%d" % i, SLURM_JOB_ID="ctl job", RANK=str(i))
                for i in range(2)]
        try:
            r = ctl(["capture", "--job", "ctl job", "--iterations", "2", "--dir", adir])
            check(r.returncode == 0, "ctl capture --job exited %d" % r.returncode)
            done = sorted(l.split("output=", 1)[1] for l in r.stdout.splitlines()
                          if l.startswith("done status=0 output="))
            want = sorted("%s/captures/%d-" % (adir, p.pid) for p in jobs)
            check(len(done) == 2 and all(o.startswith(w) for o, w in zip(done, want)),
                  "--job outputs %s, want %s*" % (done, want))
            for o in done:
                check_output(o, 2)
            r = ctl(["capture", "--job", "no such job", "--dir", adir])
            check(r.returncode == 1 and "error no capture" in r.stdout,
                  "unknown job: %d %r" % (r.returncode, r.stdout))
            print("ctl capture --job: one 2-step capture per process of the job")
        finally:
            for p in jobs:
                stop_job(p)
    return size


def du(path):
    """Bytes allocated under path, links not followed (as the agent's --quota counts)."""
    st = os.lstat(path)
    total = st.st_blocks * 512
    if stat.S_ISDIR(st.st_mode):
        for name in os.listdir(path):
            total += du(os.path.join(path, name))
    return total


def quota(d, size):
    """--quota 1.5 x one capture's size: the third capture makes room by removing the first."""
    limit = int(1.5 * size)
    with ModelDaemon(cards=1) as m, ac.Agent(d, extra=["--quota", "%.6f" % (
            limit / 1048576)]) as a:
        adir = os.path.join(d, "agentdir")
        p = long_job(a, m, d, "quota")
        outs = []
        try:
            for i in range(3):
                r = ctl(["capture", "--pid", str(p.pid), "--iterations", "3", "--dir", adir])
                check(r.returncode == 0, "capture %d exited %d" % (i, r.returncode))
                outs.append([l.split("output=", 1)[1] for l in r.stdout.splitlines()
                             if l.startswith("done status=0")][0])
        finally:
            stop_job(p)
        # before the third started, the oldest groups went until the rest was under the
        # quota: the first (two captures exceed 1.5 of one) always; the second only if it
        # alone was over the quota (capture sizes vary with the steps they hold)
        left = [os.path.exists(o) for o in outs]
        check(not left[0] and not glob.glob(outs[0] + ".*") and left[2],
              "after 3 captures under --quota: %s exist %s" % (outs, left))
        kept = sum(du(e) for e in glob.glob(outs[1] + "*"))
        check(kept <= limit, "the second capture (%d bytes) kept over the quota %d" %
              (kept, limit))
        print("--quota: the oldest capture removed to make room, the newest kept")


def sampled(d):
    """--sample-every 3 --sample-steps 2: the processes of one job are captured in one slot
    (once both are followed: a process joins at the slot after the one it was found in)."""
    # --sample-job: only this test's processes (the agent follows every process on the node)
    with ModelDaemon(cards=1) as m, ac.Agent(d, extra=["--sample-every", "3",
                                                       "--sample-steps", "2",
                                                       "--sample-job", "sjob"]) as a:
        caps = os.path.join(d, "agentdir", "captures")
        jobs = [long_job(a, m, d, "s%d" % i, SLURM_JOB_ID="sjob", RANK=str(i))
                for i in range(2)]
        try:
            end = time.monotonic() + 120
            while True:
                log = a.logtext()
                done = {}	# slot -> {pid: (output, record)}
                for f in glob.glob(os.path.join(caps, "*.sampling.json")):
                    out = f[:-len(".sampling.json")]
                    with open(f) as fh:
                        smp = json.load(fh)
                    if "done (status 0): %s\n" % out in log:
                        done.setdefault(smp["slot"], {})[smp["pid"]] = (out, smp)
                both = [v for v in done.values() if len(v) == 2]
                if both:
                    break
                check(time.monotonic() < end, "no slot with both processes captured:\n" + log)
                time.sleep(0.2)
        finally:
            for p in jobs:
                stop_job(p)
        check(sorted(both[0]) == sorted(p.pid for p in jobs), "slot pids %s" % sorted(both[0]))
        for out, smp in both[0].values():
            check_output(out, 2)
            check(smp["period_s"] == 3 and smp["steps"] == 2 and smp["weight"] > 0,
                  "sampling record %s" % smp)
        print("--sample-every: both ranks of the job captured (2 steps each) in one slot")


def killed(d):
    with ModelDaemon(cards=1) as m:
        a = ac.Agent(d).start()
        adir = os.path.join(d, "agentdir")
        p = long_job(a, m, d, "killed")
        try:
            c = subprocess.Popen([ac.ASCBPF, "ctl", "capture", "--pid", str(p.pid),
                                  "--iterations", "10000", "--dir", adir],
                                 stdout=subprocess.PIPE, text=True)
            line = c.stdout.readline()
            check(line.startswith("started output="), "ctl: %r" % line)
            out = line.strip().split("output=", 1)[1]
            end = time.monotonic() + 120
            log = out + ".log"
            while not (os.path.exists(log) and "trace: tracing " in open(log).read()):
                check(time.monotonic() < end, "the capture did not start")
                time.sleep(0.1)
            time.sleep(1)	# some steps inside the capture
            a.proc.kill()
            a.proc.wait()
            a.stop()
            rc = c.wait(60)
            check(rc != 0, "ctl exited 0 though the agent was killed")
            while not glob.glob(os.path.join(out, "*_ascend_pt")):
                check(time.monotonic() < end, "no output after the agent's SIGKILL")
                time.sleep(0.2)
            check(p.poll() is None, "the job died with the agent")
            while "ascbpf: pid %d" % p.pid not in open(log).read():
                check(time.monotonic() < end, "the capture child did not finish")
                time.sleep(0.2)
            r = subprocess.run([ac.ASCBPF, "dump", out + ".cap"], capture_output=True,
                               text=True, timeout=120)
            check(r.returncode == 0 and r.stdout, "dump of the capture: %d %s" %
                  (r.returncode, r.stderr))
            steps, kernels = check_output(out, None)
            print("SIGKILL mid-capture: job running, capture readable, %d steps converted" %
                  steps)
        finally:
            stop_job(p)


d = tempfile.mkdtemp(prefix="ascbpf-agent-ctl.")
try:
    size = on_demand(d)
    shutil.rmtree(os.path.join(d, "agentdir"), ignore_errors=True)
    quota(d, size)
    shutil.rmtree(os.path.join(d, "agentdir"), ignore_errors=True)
    sampled(d)
    shutil.rmtree(os.path.join(d, "agentdir"), ignore_errors=True)
    killed(d)
    print("PASS")
finally:
    shutil.rmtree(d, ignore_errors=True)
