# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The driver layer against npu_model's ground truth: `ascbpf trace --
npu_halclient run` with a private npu-modeld, in both submission modes.

* every ioctl the HAL journals for the process is in the capture (same fd,
  cmd, ret, module), its sys_enter/sys_exit times inside the HAL's t0/t1;
  the 'Z' binds appear as FDBIND records naming the module;
* every halSqTaskSend call has an SQE record with the same stream, first
  task id and sqe_num;
* every task the card executed for the process (exec lines) has exactly one
  DEVTASK with the same (stream, task) and counter values c0/c1, and every
  submitted SQE header has its DEVTASK (device records join submissions);
* the DEVCLOCK pair and frequency convert the device counter to host time:
  exec t0 agrees within 2 us (the model's device time is CLOCK_MONOTONIC);
* no ring-buffer drops and no device records lost;
* `ascbpf dump` names the driver's own commands (values of the driver
  headers, written out here) and decodes their arguments; npu_model's private
  'P' commands are not named (their _IOC text)."""
import collections
import os
import shutil
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon, read_journal  # noqa: E402

MODULES = {"TSDRV": 1, "SVM": 2, "DEVMNG": 3}
# trs_ioctl.h / svm_ioctl.h command values (x86-64), as the reference lists them
DRIVER_CMDS = {0xc060580f: "TRS_SQCQ_ALLOC", 0x40405813: "TRS_SQCQ_SEND",
               0xc0485814: "TRS_SQCQ_RECV", 0x41584d03: "DEVMM_SVM_ALLOC"}


def journal_of(path, pid):
    out = []
    f = os.path.join(path, "journal.%d.tsv" % pid)
    for line in open(f):
        if line.startswith("#") or not line.strip():
            continue
        kind, *fields = line.rstrip("\n").split("\t")
        out.append((kind, dict(x.split("=", 1) for x in fields)))
    return out


def run(mode):
    d = tc.workdir()
    try:
        with ModelDaemon(cards=1, journal=True) as m:
            jdir = os.path.join(d, "journal")
            os.mkdir(jdir)
            env = m.env(NPU_MODEL_JOURNAL=jdir, NPU_MODEL_SQ_MODE=mode)
            out = os.path.join(d, "out")
            r = tc.run_ascbpf(["trace", "--level", "2", "-o", out, "--no-convert", "--", m.bin("npu_halclient"),
                               "run", "--streams", "3", "--tasks", "300", "--batch", "4",
                               "--alloc", "1048576"], env=env)
            tc.check(r.returncode == 0, "trace exited %d" % r.returncode)
            m.proc.send_signal(signal.SIGTERM)	# the daemon flushes its journal at exit
            m.proc.wait(timeout=30)
            caps = [f for f in os.listdir(out) if f.endswith(".cap")]
            recs = tc.records(os.path.join(out, caps[0]))
            pid = recs[0]["tgid"]
            j = journal_of(jdir, pid)
            execs = [x for k, x in read_journal(m.journal_dir) if k == "exec" and
                     int(x["pid"]) == pid]
        st = tc.stats(recs)
        tc.check(st["drops"] == 0 and st["devtask_drops"] == 0, "drops %s" % st)
        tc.check(not [x for x in recs if x["type"] == "lost"], "lost records")

        # ioctls
        jio = [x for k, x in j if k == "ioctl"]
        cio = [x for x in recs if x["type"] == "ioctl"]
        tc.check(len(jio) == len(cio), "%s: journal %d ioctls, capture %d" %
                 (mode, len(jio), len(cio)))
        by = collections.defaultdict(list)
        for c in cio:
            by[(c["tid"], c["fd"], c["cmd"])].append(c)
        for x in jio:
            key = (int(x["tid"]), int(x["fd"]), int(x["cmd"], 16))
            tc.check(by[key], "%s: ioctl %s not captured" % (mode, x))
            c = by[key].pop(0)
            tc.check(c["ret"] == int(x["ret"]), "ioctl ret %d vs %s" % (c["ret"], x["ret"]))
            t0, t1 = int(x["t0"]), int(x["t1"])
            tc.check(t0 <= c["ts_ns"] <= c["exit_ns"] <= t1,
                     "ioctl %s: capture [%d, %d] outside the HAL's [%d, %d]" %
                     (x["cmd"], c["ts_ns"], c["exit_ns"], t0, t1))
            if x["module"] in MODULES:
                tc.check(c["module"] == MODULES[x["module"]], "module %d for %s" %
                         (c["module"], x["module"]))
        named = 0
        for c in cio:
            if c["cmd"] in DRIVER_CMDS:
                tc.check(c["cmd_name"] == DRIVER_CMDS[c["cmd"]] and "=" in c["decoded"],
                         "ioctl 0x%x dumped as %r %r" % (c["cmd"], c["cmd_name"], c["decoded"]))
                named += 1
            elif (c["cmd"] >> 8) & 0xff == ord("P"):
                tc.check(c["cmd_name"].startswith("_IO") and c["decoded"] == "",
                         "model command 0x%x dumped as %r" % (c["cmd"], c["cmd_name"]))
        tc.check(named, "%s: no driver command of %s captured" % (mode, sorted(DRIVER_CMDS)))
        binds = [x for x in recs if x["type"] == "fdbind"]
        jbinds = [x for x in jio if x["module"] == "-"]
        tc.check(len(binds) == len(jbinds), "binds: capture %d, journal %d" %
                 (len(binds), len(jbinds)))
        tc.check("TSDRV" in {b["module_name"] for b in binds}, "no TSDRV bind")

        # submissions
        jsend = [x for k, x in j if k == "api" and x["name"] == "halSqTaskSend"]
        csqe = [x for x in recs if x["type"] == "sqe"]
        tc.check(len(jsend) == len(csqe), "halSqTaskSend: journal %d, capture %d" %
                 (len(jsend), len(csqe)))
        for x, c in zip(sorted(jsend, key=lambda x: int(x["t0"])),
                        sorted(csqe, key=lambda c: c["ts_ns"])):
            tc.check(c["sqe_num"] == int(x["sqe_num"]) and c["nr_kept"] == min(8, c["sqe_num"]),
                     "sqe_num %s vs %s" % (c["sqe_num"], x["sqe_num"]))
            tc.check(c["sqe"][0]["stream_id"] == int(x["stream"]) and
                     c["sqe"][0]["task_id"] == int(x["task"]),
                     "first SQE (%s) vs journal stream %s task %s" %
                     (c["sqe"][0], x["stream"], x["task"]))

        # device records
        dev = [x for x in recs if x["type"] == "devtask"]
        tc.check(len(dev) == len(execs) == 900, "%s: %d DEVTASK, %d exec lines" %
                 (mode, len(dev), len(execs)))
        dkey = collections.Counter((x["stream_id"], x["task_id"], x["start_cnt"], x["end_cnt"])
                                   for x in dev)
        for e in execs:
            k = (int(e["stream"]), int(e["task"]), int(e["c0"]), int(e["c1"]))
            tc.check(dkey[k] == 1, "exec %s has %d DEVTASK records" % (k, dkey[k]))
        dst = {(x["stream_id"], x["task_id"]) for x in dev}
        for c in csqe:
            for h in c["sqe"][:c["nr_kept"]]:
                tc.check((h["stream_id"], h["task_id"]) in dst,
                         "SQE %s has no device record" % h)
        clk = [x for x in recs if x["type"] == "devclock"]
        tc.check(clk and clk[0]["freq_hz"] > 0, "devclock %s" % clk)
        c0 = clk[0]
        worst = 0
        for e in execs:
            t = c0["ts_ns"] + (int(e["c0"]) - c0["counter"]) * 1e9 / c0["freq_hz"]
            worst = max(worst, abs(t - int(e["t0"])))
        tc.check(worst <= 2000, "device->host time off by %d ns" % worst)
        print("%s: %d ioctls, %d submissions, %d device tasks joined, clock within %d ns" %
              (mode, len(cio), len(csqe), len(dev), worst))
    finally:
        shutil.rmtree(d, ignore_errors=True)


run("ioctl")
run("uio")
print("PASS")
