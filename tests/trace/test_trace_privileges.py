# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Least privilege (issue 19; README "Privileges", user/trace/privs.h):

* `ascbpf trace` started as root, once running (probes attached, capture
  open), holds in every thread exactly CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN,
  CAP_SYS_PTRACE and CAP_DAC_OVERRIDE (without the first two on a kernel
  without CAP_BPF) as effective, permitted and bounding sets, nothing
  inheritable or ambient, and no_new_privs; read from /proc/PID/task/*/status
  while it traces tt (the capture it writes is whole: ascbpf dump reads it)
  and while it traces npu_train, whose device-channel reader thread was
  started before the drop;
* convert, report and dump need no privilege: run as nobody (setpriv, no
  capabilities, no groups) on a capture nobody may read, into a directory
  nobody owns, they succeed and write what root's run writes.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402

MKCAP = os.path.join(tc.OUTPUT, "tests", "lib", "mkcapture")
CAP_DAC_OVERRIDE, CAP_SYS_ADMIN, CAP_SYS_PTRACE, CAP_PERFMON, CAP_BPF = 1, 21, 19, 38, 39


def expected():
    last = int(open("/proc/sys/kernel/cap_last_cap").read())
    # CAP_SYS_ADMIN on every kernel: perf-event uprobes attached after the drop need it
    keep = 1 << CAP_SYS_PTRACE | 1 << CAP_DAC_OVERRIDE | 1 << CAP_SYS_ADMIN
    keep |= (1 << CAP_BPF | 1 << CAP_PERFMON) if last >= CAP_BPF else 0
    return keep


def status(path):
    out = {}
    for line in open(path):
        k, _, v = line.partition(":")
        out[k] = v.strip()
    return out


def traced_caps(d):
    t = tc.Target(d, [-1, 20, 500])
    try:
        out = os.path.join(d, "out")
        p = subprocess.Popen([tc.ASCBPF, "trace", "-p", str(t.pid), "-o", out, "--no-convert",
                              "--duration", "4"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        # running: the capture exists and the drop follows the attach within the start-up
        seen = None
        for _ in range(300):
            time.sleep(0.02)
            if os.path.exists(os.path.join(out, "ascbpf-%d.cap" % t.pid)):
                time.sleep(0.5)
                try:
                    seen = {tid: status("/proc/%d/task/%s/status" % (p.pid, tid))
                            for tid in os.listdir("/proc/%d/task" % p.pid)}
                except FileNotFoundError:
                    seen = None
                break
        log, _ = p.communicate(timeout=120)
        print(log, end="")
        tc.check(p.returncode == 0, "trace exited %d" % p.returncode)
        tc.check(seen, "trace was never seen running")
        tc.records(os.path.join(out, "ascbpf-%d.cap" % t.pid))
        return seen
    finally:
        t.stop()


def traced_caps_model(d):
    """The same while tracing npu_train on a private npu-modeld: the device-channel reader
    thread, started before the drop, has dropped too."""
    from npu_model import ModelDaemon
    with ModelDaemon(cards=1, journal=False) as m:
        out = os.path.join(d, "mout")
        p = subprocess.Popen([tc.ASCBPF, "trace", "-o", out, "--no-convert", "--",
                              m.bin("npu_train"), "--steps", "3000"], env=m.env(),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        seen = None
        for _ in range(1000):
            time.sleep(0.02)
            if os.path.isdir(out) and any(n.endswith(".cap") for n in os.listdir(out)):
                time.sleep(1.0)
                try:
                    seen = {tid: status("/proc/%d/task/%s/status" % (p.pid, tid))
                            for tid in os.listdir("/proc/%d/task" % p.pid)}
                except FileNotFoundError:
                    seen = None
                break
        log, _ = p.communicate(timeout=240)
        print(log, end="")
        tc.check(p.returncode == 0, "trace of npu_train exited %d" % p.returncode)
        tc.check(seen and len(seen) >= 2, "trace of npu_train: threads seen %s" %
                 (sorted(seen) if seen else None))
        return seen


def main():
    d = tempfile.mkdtemp(prefix="test_trace_privileges.")
    try:
        os.chmod(d, 0o755)
        tc.build(d)
        keep = expected()
        seen = traced_caps(d)
        seen.update(traced_caps_model(d))
        for tid, st in sorted(seen.items()):
            caps = {k: int(st[k], 16) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd",
                                                "CapAmb")}
            print("thread %s: %s NoNewPrivs %s" % (tid, {k: hex(v) for k, v in caps.items()},
                                                    st.get("NoNewPrivs")))
            tc.check(caps["CapEff"] == keep and caps["CapPrm"] == keep,
                     "thread %s keeps %#x, expected %#x" % (tid, caps["CapEff"], keep))
            tc.check(caps["CapBnd"] == keep, "thread %s bounding set %#x" % (tid, caps["CapBnd"]))
            tc.check(caps["CapInh"] == 0 and caps["CapAmb"] == 0,
                     "thread %s inheritable/ambient not empty" % tid)
            tc.check(st.get("NoNewPrivs") == "1", "thread %s: no_new_privs not set" % tid)
        print("trace keeps %#x in its %d thread(s), no_new_privs" % (keep, len(seen)))

        # convert, report, dump as nobody on a capture only readable
        cap = os.path.join(d, "c.ascb")
        subprocess.run([MKCAP, "-o", cap, "--truth", os.path.join(d, "c.json"), "--steps", "2",
                        "--ops", "3"], check=True)
        os.chmod(cap, 0o444)
        work = os.path.join(d, "nobody")
        os.mkdir(work)
        os.chown(work, 65534, 65534)
        asnobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                    "--inh-caps=-all", "--bounding-set=-all", "--"]
        root_out = os.path.join(d, "root")
        subprocess.run([tc.ASCBPF, "convert", cap, "-o", root_out], check=True)
        for cmd in (["convert", cap, "-o", os.path.join(work, "result")],
                    ["report", "--json", cap], ["dump", "--json", cap]):
            p = subprocess.run(asnobody + [tc.ASCBPF] + cmd, capture_output=True, text=True,
                               cwd=work)
            print("$ (nobody) ascbpf %s -> %d %s" % (" ".join(cmd), p.returncode,
                                                      p.stderr.strip()[-200:]))
            tc.check(p.returncode == 0, "%s as nobody exited %d" % (cmd[0], p.returncode))
            if cmd[0] == "report":
                json.loads(p.stdout)
            if cmd[0] == "dump":
                tc.check(len(p.stdout.splitlines()) > 10, "dump as nobody printed nothing")
        ours = sorted(os.listdir(os.path.join(work, "result")))
        theirs = sorted(os.listdir(root_out))
        tc.check(ours == theirs, "nobody's run %s, root's %s" % (ours, theirs))
        for sub in ("ASCEND_PROFILER_OUTPUT",):
            a = sorted(os.listdir(os.path.join(work, "result", ours[0], sub)))
            b = sorted(os.listdir(os.path.join(root_out, theirs[0], sub)))
            tc.check(a == b, "nobody wrote %s, root %s" % (a, b))
        tc.check(os.stat(os.path.join(work, "result", ours[0])).st_uid == 65534,
                 "the run directory is not nobody's")
        print("PASS: trace keeps only what it needs; convert, report, dump need nothing")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
