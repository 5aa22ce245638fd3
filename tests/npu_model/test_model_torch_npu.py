#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""test_model_torch_npu.py - npu_model's torch_npu on Debian's real PyTorch.

Each Python training scenario (npu_model/workloads/python/train.py) runs
under /usr/bin/python3 against a private npu-modeld with the journal on, and
the journal shows what the scenario is for:

  all               exit 0 and the summary line; one `step` line per step; the
                    process maps the real libtorch_cpu.so (not npu_model's) and
                    the package's libtorch_npu.so; every `task` has its `exec`;
                    every enqueue its dequeue (same corr) on acl_thread; aclnn
                    phase 1 on the submitting threads, phase 2 on acl_thread;
                    the caching allocator's PTA memory lines
  baseline          MatMulV2 / BatchMatMulV2, SoftmaxV2, Gelu kernels, forward and
                    backward (GeluGrad, SoftmaxGrad); Adam's Addcmul/Addcdiv/Sqrt
  native-optimizer  the per-parameter AdamW kernels: at least one Addcdiv per
                    parameter per step, no ApplyAdamW
  fused-optimizer   one ApplyAdamW per parameter per step, no Addcdiv
  mem-growth        PTA allocated grows from step to step
  cnn               Conv2D forward and Conv2DBackpropInput/Filter backward
  TASK_QUEUE_ENABLE=0  no dequeue: every aclnn phase 2 runs on a submitting thread
"""
import collections
import os
import subprocess
import sys

TOP = os.environ.get("ASCBPF_TOP", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "tests", "lib"))
from npu_model import ModelDaemon  # noqa: E402

OUTPUT = os.environ.get("OUTPUT", os.path.join(TOP, "build"))
PYPKG = os.path.join(OUTPUT, "npu_model", "python")
TRAIN = os.path.join(TOP, "npu_model", "workloads", "python", "train.py")
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)
    return cond


def read_journals(jdir):
    procs, modeld = {}, []
    for name in os.listdir(jdir):
        recs = []
        with open(os.path.join(jdir, name)) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                kind, *fields = line.rstrip("\n").split("\t")
                recs.append((kind, dict(x.split("=", 1) for x in fields)))
        if name == "journal.modeld.tsv":
            modeld = recs
        elif name.startswith("journal."):
            procs[name.split(".")[1]] = recs
    return procs, modeld


def run(m, scenario, steps, env_extra=None, maps_probe=False):
    env = m.env(NPU_MODEL_JOURNAL=m.journal_dir, PYTHONPATH=PYPKG, **(env_extra or {}))
    args = ["/usr/bin/python3", TRAIN, "--scenario", scenario, "--steps", str(steps),
            "--log-every", "2"]
    if maps_probe:
        # the maps of the running job, read from outside once its first step is done
        ready = os.path.join(m.journal_dir, "..", "ready")
        p = subprocess.Popen(args + ["--wait-ready", ready, "--steps", "0"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        import time
        for _ in range(600):
            if os.path.exists(ready) or p.poll() is not None:
                break
            time.sleep(0.1)
        time.sleep(0.2)
        maps = open("/proc/%d/maps" % p.pid).read() if p.poll() is None else ""
        p.terminate()
        out, err = p.communicate(timeout=120)
        return p.returncode, out, err, maps
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr, None


def common(name, rc, out, err, m, steps):
    check(rc == 0, "%s: exit %d: %s" % (name, rc, err[-600:]))
    check(("train.py: scenario=%s steps=%d" % (name, steps)) in out,
          "%s: summary line missing: %r" % (name, out[-300:]))
    procs, modeld = read_journals(m.journal_dir)
    check(len(procs) == 1, "%s: %d process journals" % (name, len(procs)))
    if len(procs) != 1:
        return None
    pid, recs = next(iter(procs.items()))
    kinds = collections.Counter(k for k, _ in recs)
    check(kinds["step"] == steps, "%s: %d step lines, wanted %d" % (name, kinds["step"], steps))
    tasks = [r for k, r in recs if k == "task"]
    execs = [r for k, r in modeld if k == "exec" and r["pid"] == pid]
    tkeys = {(r["dev"], r["stream"], r["task"], r["wrap"]) for r in tasks}
    ekeys = {(r["dev"], r["stream"], r["task"], r["wrap"]) for r in execs}
    check(tasks and tkeys <= ekeys, "%s: %d tasks, %d never executed" %
          (name, len(tasks), len(tkeys - ekeys)))
    enq = {r["corr"]: r for k, r in recs if k == "queue" and r["side"] == "enqueue"}
    deq = {r["corr"]: r for k, r in recs if k == "queue" and r["side"] == "dequeue"}
    apis = [r for k, r in recs if k == "api"]
    gws = {r["tid"] for r in apis if r["name"].endswith("GetWorkspaceSize")}
    ph2 = {r["tid"] for r in apis if r["name"].startswith("aclnn")
           and not r["name"].endswith("GetWorkspaceSize")}
    if os.environ.get("TASK_QUEUE_ENABLE", "1") != "0":
        check(enq and set(enq) == set(deq), "%s: %d enqueues, %d dequeues, corr mismatch" %
              (name, len(enq), len(deq)))
        check(all(deq[c]["tid"] != enq[c]["tid"] for c in enq if c in deq),
              "%s: dequeue on the producer thread" % name)
        check(gws and ph2 and not (gws & ph2), "%s: aclnn phase 1 %s / phase 2 %s threads" %
              (name, gws, ph2))
    pta = [r for k, r in recs if k == "mem" and r.get("component") == "PTA"]
    check(pta, "%s: no PTA memory lines" % name)
    return recs, tasks


def kernels(tasks):
    return collections.Counter(t["kernel"] for t in tasks)


def main():
    if not os.path.exists(os.path.join(PYPKG, "torch_npu", "lib", "libtorch_npu.so")):
        print("FAIL: %s is not built (make)" % PYPKG)
        return 1
    steps = 4
    with ModelDaemon(journal=True) as m:
        rc, out, err, maps = run(m, "baseline", steps, maps_probe=True)
        check(rc == 0, "baseline --wait-ready: exit %d %s" % (rc, err[-300:]))
        libs = {ln.split()[-1] for ln in maps.splitlines() if ln.endswith(".so") or ".so." in ln}
        cpu = [p for p in libs if os.path.basename(p).startswith("libtorch_cpu.so")]
        check(cpu and all(not p.startswith(os.path.abspath(OUTPUT)) for p in cpu),
              "the real libtorch_cpu.so is not the one mapped: %s" % cpu)
        check(any(p.endswith("python/torch_npu/lib/libtorch_npu.so") for p in libs),
              "the package's libtorch_npu.so is not mapped")
    with ModelDaemon(journal=True) as m:
        got = common("baseline", *run(m, "baseline", steps)[:3], m, steps)
        if got:
            kc = kernels(got[1])
            for k in ("MatMulV2", "BatchMatMulV2", "SoftmaxV2", "SoftmaxGrad", "Gelu",
                      "GeluGrad", "Addcmul", "Addcdiv", "Sqrt"):
                check(kc[k] > 0, "baseline: no %s kernel: %s" % (k, dict(kc)))
    nparams = 12  # Block: six Linear layers, weight and bias each
    opt_kernels = {}
    for name in ("native-optimizer", "fused-optimizer"):
        with ModelDaemon(journal=True) as m:
            got = common(name, *run(m, name, steps)[:3], m, steps)
            if got:
                opt_kernels[name] = kernels(got[1])
    if len(opt_kernels) == 2:
        nat, fus = opt_kernels["native-optimizer"], opt_kernels["fused-optimizer"]
        check(nat["Addcdiv"] >= nparams * steps and nat["ApplyAdamW"] == 0,
              "native-optimizer: %d Addcdiv, %d ApplyAdamW kernels for %d params x %d steps" %
              (nat["Addcdiv"], nat["ApplyAdamW"], nparams, steps))
        check(fus["ApplyAdamW"] == nparams * steps and fus["Addcdiv"] == 0,
              "fused-optimizer: %d ApplyAdamW, %d Addcdiv kernels for %d params x %d steps" %
              (fus["ApplyAdamW"], fus["Addcdiv"], nparams, steps))
    with ModelDaemon(journal=True) as m:
        got = common("mem-growth", *run(m, "mem-growth", 6)[:3], m, 6)
        if got:
            recs = got[0]
            marks = [int(r["t"]) for k, r in recs if k == "step"]
            pta = [(int(r["t"]), int(r["total_allocated"])) for k, r in recs
                   if k == "mem" and r.get("component") == "PTA"]
            at = []
            for t in marks[1:]:
                before = [a for ts, a in pta if ts <= t]
                at.append(before[-1] if before else 0)
            check(len(at) >= 4 and all(b > a for a, b in zip(at, at[1:])),
                  "mem-growth: allocated at step starts does not grow: %s" % at)
    with ModelDaemon(journal=True) as m:
        got = common("cnn", *run(m, "cnn", steps)[:3], m, steps)
        if got:
            kc = kernels(got[1])
            for k in ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "Relu"):
                check(kc[k] > 0, "cnn: no %s kernel: %s" % (k, dict(kc)))
    with ModelDaemon(journal=True) as m:
        got = common("dispatch-bound", *run(m, "dispatch-bound", steps)[:3], m, steps)
    os.environ["TASK_QUEUE_ENABLE"] = "0"
    with ModelDaemon(journal=True) as m:
        got = common("baseline", *run(m, "baseline", 2, {"TASK_QUEUE_ENABLE": "0"})[:3], m, 2)
        if got:
            deq = [r for k, r in got[0] if k == "queue" and r["side"] == "dequeue"]
            check(not deq, "TASK_QUEUE_ENABLE=0: %d dequeues" % len(deq))
    if FAILS:
        print("%d checks failed" % len(FAILS))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
