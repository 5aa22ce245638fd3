# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Without uprobe_multi only the aten ops a job used are attached (user/trace/lazyops.c).

The Python job (npu_model/workloads/python/train.py: Debian's real PyTorch on npu_model's
torch_npu) runs until SIGTERM; once its first step is done, `ascbpf trace -p` with
ASCBPF_NO_UPROBE_MULTI=1 (every probe a perf-event uprobe, as on kernels before 6.6):

* the aten op probes attached at the start (PROBE records right after CONFIG aten_ops.attach) are
  the at::_ops::<op>::call functions whose static-init guard is set in the job: every aten op
  the model's journal shows the job called before the attach is among them (by op name), and
  the attached count equals what CONFIG reports;
* far fewer probes than the plan's 2952 aten ops (and no autograd apply() probe);
* every journaled aten op call (the NPU backend's `api layer=framework` lines) from one second
  after the attach to the end has a captured call of that op: per op, captured >= journaled.

And `-- python3 SCRIPT` (traced from its exec: nothing used when libtorch_cpu loads): the
script calls torch.mm only after a while, 60 times, writing each call's CLOCK_MONOTONIC start;
mm's probe is attached by a later check (CONFIG aten_ops.late >= 1), and every mm call that
started after its PROBE record is captured; the earlier ones are the documented window.
"""
import collections
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon, read_journal, OUT  # noqa: E402

TRAIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "npu_model",
                     "workloads", "python", "train.py")
PYPKG = os.path.join(OUT, "npu_model", "python")


def op_struct(sym):
    """_ZN2at4_ops10add_Tensor4callE... -> add_Tensor"""
    p = sym[len("_ZN2at4_ops"):]
    n = 0
    while p[n].isdigit():
        n += 1
    ln = int(p[:n])
    return p[n:n + ln]


def journal_struct(name):
    """the backend's "add.Tensor" -> add_Tensor, "aten::_copy_from" -> _copy_from"""
    return name.split("::")[-1].replace(".", "_")


MM_SCRIPT = """
import sys, time, torch
x = torch.ones(3)
for i in range(20):
    x = x + 1
    time.sleep(0.05)
a = torch.ones(8, 8)
with open(sys.argv[1], "w") as f:
    for i in range(60):
        f.write("%d\\n" % time.monotonic_ns())
        a = torch.mm(a, torch.ones(8, 8)) / 8
        time.sleep(0.05)
"""


def check_exec(d):
    script = os.path.join(d, "mm.py")
    stamps = os.path.join(d, "mm.txt")
    out = os.path.join(d, "out-exec")
    with open(script, "w") as f:
        f.write(MM_SCRIPT)
    env = dict(os.environ, ASCBPF_NO_UPROBE_MULTI="1")
    r = tc.run_ascbpf(["trace", "--activities", "cpu", "-o", out, "--no-convert", "--",
                       "/usr/bin/python3", script, stamps], env=env, timeout=600)
    tc.check(r.returncode == 0, f"trace -- python3 exited {r.returncode}")
    calls = [int(x) for x in open(stamps).read().split()]
    tc.check(len(calls) == 60, f"{len(calls)} mm calls")
    caps = [f for f in os.listdir(out) if f.endswith(".cap")]
    recs = tc.records(os.path.join(out, caps[0]))
    late = [x["text"] for x in recs if x["type"] == "config" and
            x["text"].startswith("aten_ops.late=")]
    tc.check(late and int(late[0].split()[0].split("=")[1]) >= 1, f"late attaches: {late}")
    mm = [x for x in recs if x["type"] == "probe" and x["symbol"].startswith("_ZN2at4_ops2mm4")]
    tc.check(len(mm) == 1, f"mm probes: {[x['symbol'] for x in mm]}")
    t_probe = mm[0]["ts_ns"]
    entered = sorted(x["ts_ns"] for x in recs
                     if x["type"] == "enter" and x["probe_id"] == mm[0]["probe_id"])
    after = [c for c in calls if c > t_probe]
    # each call after the probe was attached has its entry after its own stamp
    tc.check(len(entered) >= len(after), f"{len(after)} mm calls after the attach, "
             f"{len(entered)} captured")
    tc.check(after, "every mm call was before its probe attached (the check never came)")
    print(f"-- CMD: mm attached {(t_probe - calls[0]) / 1e9:.2f} s after its first call; "
          f"{len(calls) - len(after)} of 60 calls before it (not captured), {len(entered)} "
          f"captured")


def main():
    d = tc.workdir()
    out = os.path.join(d, "out")
    with ModelDaemon(journal=True) as m:
        ready = os.path.join(d, "ready")
        job = subprocess.Popen(["/usr/bin/python3", TRAIN, "--scenario", "baseline", "--steps",
                                "0", "--wait-ready", ready],
                               env=m.env(NPU_MODEL_JOURNAL=m.journal_dir, PYTHONPATH=PYPKG),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.time() + 180
            while not os.path.exists(ready):
                tc.check(job.poll() is None, f"train.py exited {job.returncode}")
                tc.check(time.time() < deadline, "train.py never got ready")
                time.sleep(0.1)
            env = dict(os.environ, ASCBPF_NO_UPROBE_MULTI="1")
            r = tc.run_ascbpf(["trace", "-p", str(job.pid), "--activities", "cpu",
                               "--duration", "6", "-o", out, "--no-convert"], env=env,
                              timeout=600)
        finally:
            job.send_signal(signal.SIGTERM)
            job.communicate(timeout=120)
        jl = [x for k, x in read_journal(m.journal_dir, job.pid)
              if k == "api" and x.get("layer") == "framework" and
              not x["name"].startswith("_Z")]	# torch_npu's own functions, not aten ops
    tc.check(r.returncode == 0, f"trace exited {r.returncode}")
    recs = tc.records(os.path.join(out, "ascbpf-%d.cap" % job.pid))
    cfg = [x for x in recs if x["type"] == "config" and x["text"].startswith("aten_ops.")]
    tc.check(len(cfg) == 2, f"aten_ops CONFIG records: {cfg}")
    start = dict(kv.split("=") for kv in cfg[0]["text"].split()[1:])
    t_attach = cfg[0]["ts_ns"]
    probes = {x["probe_id"]: x for x in recs if x["type"] == "probe"}
    aten = {i: op_struct(p["symbol"]) for i, p in probes.items()
            if p["symbol"].startswith("_ZN2at4_ops") and "4callE" in p["symbol"]}
    # the CONFIG comes right before the attach; a later check is a second after it
    first = {i for i in aten if probes[i]["ts_ns"] <= t_attach + 500_000_000}
    tc.check(len(first) == int(start["attached"]),
             f"{len(first)} aten probes before the attach CONFIG, it says {start}")
    tc.check(int(start["ops"]) >= 2000 and len(first) < int(start["ops"]) // 5,
             f"attached {len(first)} of {start['ops']} aten ops: not far fewer")
    tc.check(not [p for p in probes.values() if "5applyEOSt6vector" in p["symbol"]],
             "autograd apply() probes attached on the perf-event path")
    print(f"aten ops attached at the start: {len(first)} of {start['ops']}, "
          f"{len(aten) - len(first)} later; all probes {len(probes)}")

    tc.check(jl, "no framework op in the journal")
    planned = set(aten.values())
    before = {journal_struct(x["name"]) for x in jl if int(x["t1"]) < t_attach}
    names_first = {aten[i] for i in first}
    miss = sorted(n for n in before if n not in names_first)
    tc.check(before and not miss,
             f"ops the journal shows before the attach without a probe: {miss}")

    t_end = max(x["ts_ns"] for x in recs if x["type"] in ("enter", "exit"))
    lo, hi = t_attach + 1500_000_000, t_end - 200_000_000
    jcount = collections.Counter(journal_struct(x["name"]) for x in jl
                                 if lo <= int(x["t0"]) and int(x["t1"]) <= hi)
    ccount = collections.Counter(aten[x["probe_id"]] for x in recs
                                 if x["type"] == "enter" and x["probe_id"] in aten and
                                 lo - 100_000_000 <= x["ts_ns"] <= hi + 100_000_000)
    tc.check(sum(jcount.values()) > 100, f"journal window too short: {jcount}")
    short = {n: (jcount[n], ccount[n]) for n in jcount if n in planned and ccount[n] < jcount[n]}
    tc.check(not short, f"journaled calls not captured (op: journal, captured): {short}")
    print(f"journal window: {sum(jcount.values())} calls of {len(jcount)} ops, all captured")
    tc.check("detached" in r.stderr, "no detach line")
    check_exec(d)
    print("PASS")


if __name__ == "__main__":
    main()
