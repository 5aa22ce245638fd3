# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""test_model_scenarios.py - every npu_train scenario against a private
npu-modeld with the journal on, checked from the journal (npu_model/JOURNAL.md):

  all           exit 0, the summary line, one `step` line per step, every
                `task` line has its `exec` line (pid, dev, stream, task, wrap),
                every enqueue its dequeue (same corr) on acl_thread, and the
                aclnn phase 2 runs on acl_thread while GetWorkspaceSize runs on
                the main thread
  baseline      device-bound: the card is idle < 40 % of its busy span
  dispatch-bound the card is idle >= 80 % of the span (host 200 us per op)
  native/fused  native: Muls/Addcmul/Sqrt/Adds/Addcdiv per parameter, no
                ApplyAdamW; fused: one ApplyAdamW per parameter, none of those
  transdata     TransData kernels, each submitted inside an
                aclopCompileAndExecute(op=TransData) call that the
                npu_format_cast call site made, 3 per step
  mem-growth    PTA total_allocated at each step start grows >= 8 MiB a step
  oom           an `oom` line ret=207001 with action=release_cached_blocks,
                then a successful PTA malloc of that size; training goes on
  multi-stream  two streams; MEMCPY on one overlaps kernels on the other;
                EVENT_RECORD / EVENT_WAIT tasks present
  launch-storm  80000 kernels, all executed, the 16-bit task id wrapping once
  multi-rank 2  two processes, card 0 and card 1, each fully executed
  TASK_QUEUE_ENABLE=0  every task submitted from the main thread or (backward) the
                autograd engine's thread
  --steps 0     runs until SIGTERM, then finishes the step, exit 0
  daemon killed npu_train exits 1 with a message, no hang
  bad input     unknown scenario / bad numbers: exit 2 with a message; no
                daemon: exit 1 with a message, promptly
"""
import collections
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.environ.get("ASCBPF_TOP", os.path.join(
    os.path.dirname(__file__), "..", "..")), "tests", "lib"))
from npu_model import ModelDaemon, read_journal  # noqa: E402

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)
    return cond


def run_train(m, args, env_extra=None, timeout=240):
    jdir = m.journal_dir
    env = m.env(NPU_MODEL_JOURNAL=jdir, **(env_extra or {}))
    p = subprocess.run([m.bin("npu_train")] + args, env=env, capture_output=True, text=True,
                       timeout=timeout)
    return p


def summary(out):
    for line in out.splitlines():
        if line.startswith("npu_train: scenario="):
            return dict(kv.split("=", 1) for kv in line[len("npu_train: "):].split())
    return None


def journal_by_pid(jdir, settle=True):
    """{pid: [(kind, rec)]} for the process journals, plus the modeld records.

    The daemon's journal reaches the file within 50 ms of a line (the
    writer's flush period) and exec lines follow the card's clock, so this
    waits (up to 10 s) until every task of every process has its exec line
    or the files stop changing."""
    last = None
    for _ in range(100):
        procs, modeld = _read_journals(jdir)
        ekeys = {(r["pid"], r["dev"], r["stream"], r["task"], r["wrap"])
                 for k, r in modeld if k == "exec"}
        tkeys = {(pid, r["dev"], r["stream"], r["task"], r["wrap"])
                 for pid, recs in procs.items() for k, r in recs if k == "task"}
        size = (len(modeld), sum(len(v) for v in procs.values()))
        if not settle or tkeys <= ekeys or size == last:
            return procs, modeld
        last = size
        time.sleep(0.1)
    return procs, modeld


def _read_journals(jdir):
    procs, modeld = {}, []
    for name in os.listdir(jdir):
        mt = re.match(r"journal\.(\d+)\.tsv$", name)
        path = os.path.join(jdir, name)
        recs = []
        with open(path) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                kind, *fields = line.rstrip("\n").split("\t")
                recs.append((kind, dict(x.split("=", 1) for x in fields)))
        if mt:
            procs[mt.group(1)] = recs
        elif name == "journal.modeld.tsv":
            modeld = recs
    return procs, modeld


def idle_share(execs):
    iv = sorted((int(e["t0"]), int(e["t1"])) for e in execs)
    if not iv:
        return None
    busy, cur = 0, list(iv[0])
    for a, b in iv[1:]:
        if a > cur[1]:
            busy += cur[1] - cur[0]
            cur = [a, b]
        else:
            cur[1] = max(cur[1], b)
    busy += cur[1] - cur[0]
    span = iv[-1][1] - iv[0][0]
    return 1.0 - busy / span if span > 0 else 0.0


def common_checks(name, p, steps, m, pid_expect=1):
    """Checks every scenario shares; returns (process records, its exec records)."""
    check(p.returncode == 0, "%s: exit %d: %s" % (name, p.returncode, p.stderr[-500:]))
    s = summary(p.stdout)
    check(s is not None, "%s: summary line missing: %r" % (name, p.stdout[-300:]))
    if s:
        check(int(s["steps"]) == steps, "%s: steps=%s, wanted %d" % (name, s["steps"], steps))
        check(int(s["kernels"]) > 0 and float(s["wall_s"]) > 0, "%s: summary %s" % (name, s))
    procs, modeld = journal_by_pid(m.journal_dir)
    check(len(procs) == pid_expect, "%s: %d process journals" % (name, len(procs)))
    out = {}
    for pid, recs in procs.items():
        kinds = collections.Counter(k for k, _ in recs)
        tasks = [r for k, r in recs if k == "task"]
        execs = [r for k, r in modeld if k == "exec" and r["pid"] == pid]
        if pid_expect == 1:
            check(kinds["step"] == steps, "%s: %d step lines" % (name, kinds["step"]))
            check([int(r["step"]) for k, r in recs if k == "step"] == list(range(1, steps + 1)),
                  "%s: step numbers" % name)
        tkeys = {(r["dev"], r["stream"], r["task"], r["wrap"]) for r in tasks}
        ekeys = {(r["dev"], r["stream"], r["task"], r["wrap"]) for r in execs}
        check(len(tkeys) == len(tasks), "%s: duplicate task keys" % name)
        check(tkeys <= ekeys, "%s: %d tasks never executed" % (name, len(tkeys - ekeys)))
        check(len(execs) == len(tasks), "%s: %d exec vs %d task lines" %
              (name, len(execs), len(tasks)))
        # queue: every enqueue has its dequeue, the dequeue on another thread
        enq = {r["corr"]: r for k, r in recs if k == "queue" and r["side"] == "enqueue"}
        deq = {r["corr"]: r for k, r in recs if k == "queue" and r["side"] == "dequeue"}
        if os.environ.get("TASK_QUEUE_ENABLE", "1") != "0" and enq:
            check(set(enq) == set(deq), "%s: enqueue/dequeue corr mismatch" % name)
            check(all(deq[c]["tid"] != enq[c]["tid"] for c in enq if c in deq),
                  "%s: dequeue on the producer thread" % name)
        # phase 1 on the caller, phase 2 on acl_thread
        apis = [r for k, r in recs if k == "api"]
        gws = {r["tid"] for r in apis if r["name"].endswith("GetWorkspaceSize")}
        ph2 = {r["tid"] for r in apis if r["name"].startswith("aclnn")
               and not r["name"].endswith("GetWorkspaceSize")}
        if gws and ph2:
            check(not (gws & ph2), "%s: aclnn phase 1 and 2 on the same thread" % name)
        bad = [r for r in apis if not r["t0"].isdigit() or int(r["t1"]) < int(r["t0"])]
        check(not bad, "%s: api lines with t1 < t0: %s" % (name, bad[:2]))
        out[pid] = (recs, execs, tasks)
    return out


def single(out):
    return next(iter(out.values()))


def kernel_counts(tasks):
    return collections.Counter(t["kernel"] for t in tasks)


def main():
    steps = 4
    # ---- device-bound vs dispatch-bound -------------------------------------------------
    for name, lo, hi in (("baseline", 0.0, 0.40), ("dispatch-bound", 0.80, 1.0)):
        with ModelDaemon(journal=True) as m:
            p = run_train(m, ["--scenario", name, "--steps", str(steps)])
            out = common_checks(name, p, steps, m)
            if out:
                recs, execs, tasks = single(out)
                idle = idle_share(execs)
                print("%s: device idle %.2f of its span" % (name, idle))
                check(idle is not None and lo <= idle <= hi,
                      "%s: idle share %s not in [%.2f, %.2f]" % (name, idle, lo, hi))

    # ---- optimizers -----------------------------------------------------------------------
    n_params = 30   # TF_MID: 2 layers x 14 + head 2
    for name in ("native-optimizer", "fused-optimizer"):
        with ModelDaemon(journal=True) as m:
            p = run_train(m, ["--scenario", name, "--steps", str(steps)])
            out = common_checks(name, p, steps, m)
            if out:
                k = kernel_counts(single(out)[2])
                if name == "native-optimizer":
                    for kn in ("Muls", "Addcmul", "Sqrt", "Adds", "Addcdiv"):
                        want = steps * n_params * (2 if kn == "Muls" else 1)
                        check(k[kn] == want, "%s: %d %s kernels, want %d" % (name, k[kn], kn, want))
                    check(k["ApplyAdamW"] == 0, "%s: ApplyAdamW present" % name)
                else:
                    check(k["ApplyAdamW"] == steps * n_params,
                          "%s: %d ApplyAdamW, want %d" % (name, k["ApplyAdamW"], steps * n_params))
                    check(k["Addcmul"] == 0 and k["Muls"] == 0, "%s: native kernels" % name)

    # ---- transdata -------------------------------------------------------------------------
    with ModelDaemon(journal=True) as m:
        p = run_train(m, ["--scenario", "transdata", "--steps", str(steps)])
        out = common_checks("transdata", p, steps, m)
        if out:
            recs, execs, tasks = single(out)
            td = [t for t in tasks if t["kernel"] == "TransData"]
            check(len(td) == 3 * steps, "transdata: %d TransData tasks, want %d" %
                  (len(td), 3 * steps))
            calls = [r for k, r in recs if k == "api" and r["name"] == "aclopCompileAndExecute"
                     and r.get("op") == "TransData"]
            sites = [r for k, r in recs if k == "api" and r["name"] ==
                     "_ZN6at_npu6native10custom_ops15npu_format_castERKN2at6TensorEl"]
            check(len(sites) == len(td), "transdata: %d npu_format_cast calls for %d TransData" %
                  (len(sites), len(td)))
            inside = all(any(c["tid"] == t["tid"] and int(c["t0"]) <= int(t["t"]) <= int(c["t1"])
                             for c in calls) for t in td)
            check(inside, "transdata: a TransData task outside aclopCompileAndExecute(TransData)")
            check(all(e["kernel"] == "TransData" for e in execs
                      if (e["stream"], e["task"]) in {(t["stream"], t["task"]) for t in td}),
                  "transdata: exec kernel names")

    # ---- mem-growth ---------------------------------------------------------------------------
    with ModelDaemon(journal=True) as m:
        p = run_train(m, ["--scenario", "mem-growth", "--steps", str(steps)])
        out = common_checks("mem-growth", p, steps, m)
        if out:
            recs = single(out)[0]
            starts = [int(r["t"]) for k, r in recs if k == "step"]
            pta = [(int(r["t"]), int(r["total_allocated"])) for k, r in recs
                   if k == "mem" and r["component"] == "PTA"]
            at_start = []
            for t in starts:
                before = [a for tt, a in pta if tt <= t]
                at_start.append(before[-1] if before else 0)
            print("mem-growth: PTA allocated at step starts", at_start)
            check(all(b - a >= 8 << 20 for a, b in zip(at_start, at_start[1:])),
                  "mem-growth: allocated does not grow 8 MiB per step: %s" % at_start)

    # ---- oom ------------------------------------------------------------------------------------
    with ModelDaemon(journal=True, hbm_mib=1024) as m:
        p = run_train(m, ["--scenario", "oom", "--steps", str(steps)])
        out = common_checks("oom", p, steps, m)
        if out:
            recs = single(out)[0]
            rel = [r for k, r in recs if k == "oom" and r.get("layer") == "PTA"
                   and r.get("action") == "release_cached_blocks"]
            check(rel and all(r["ret"] == "207001" for r in rel),
                  "oom: no oom line ret=207001 action=release_cached_blocks")
            if rel:
                last = rel[-1]
                ok = [r for k, r in recs if k == "mem" and r["component"] == "PTA" and
                      r["op"] == "malloc" and int(r["t"]) > int(last["t"]) and
                      int(r["size"]) >= int(last["size"])]
                check(ok, "oom: no successful malloc of %s bytes after the cache release" %
                      last["size"])

    # ---- multi-stream ---------------------------------------------------------------------------
    with ModelDaemon(journal=True) as m:
        p = run_train(m, ["--scenario", "multi-stream", "--steps", str(steps)])
        out = common_checks("multi-stream", p, steps, m)
        if out:
            recs, execs, tasks = single(out)
            by = collections.defaultdict(list)
            for e in execs:
                by[e["stream"]].append(e)
            check(len(by) == 2, "multi-stream: %d streams" % len(by))
            copies = [e for e in execs if e["kernel"] == "MEMCPY"]
            kernels = [e for e in execs
                       if e["kernel"] not in ("MEMCPY", "EVENT_RECORD", "EVENT_WAIT")]
            ov = sum(1 for c in copies for k in kernels if k["stream"] != c["stream"] and
                     int(c["t0"]) < int(k["t1"]) and int(k["t0"]) < int(c["t1"]))
            print("multi-stream: %d copy/kernel overlaps" % ov)
            check(ov > 0, "multi-stream: no copy overlaps a kernel on the other stream")
            kc = kernel_counts(tasks)
            check(kc["EVENT_RECORD"] >= steps and kc["EVENT_WAIT"] >= steps,
                  "multi-stream: events %s" % dict(kc))

    # ---- launch-storm ----------------------------------------------------------------------------
    with ModelDaemon(journal=True) as m:
        # 80000 tasks on one stream: the 16-bit task id wraps once (flip 1)
        p = run_train(m, ["--scenario", "launch-storm", "--steps", "4"])
        out = common_checks("launch-storm", p, 4, m)
        if out:
            recs, execs, tasks = single(out)
            check(kernel_counts(tasks)["Adds"] == 80000, "launch-storm: %d Adds" %
                  kernel_counts(tasks)["Adds"])
            wrapped = [e for e in execs if e["wrap"] == "1"]
            check(len(wrapped) >= 80000 - 65536 and all(int(e["task"]) < 65536 for e in execs),
                  "launch-storm: %d executed tasks after the wrap" % len(wrapped))

    # ---- multi-rank ------------------------------------------------------------------------------
    with ModelDaemon(cards=2, journal=True) as m:
        p = run_train(m, ["--scenario", "multi-rank", "--ranks", "2", "--steps", "3"])
        check(p.returncode == 0, "multi-rank: exit %d %s" % (p.returncode, p.stderr[-300:]))
        check(p.stdout.count("npu_train: scenario=multi-rank") == 2, "multi-rank: summaries")
        out = common_checks_ranks(m)
        devs = sorted({t["dev"] for recs, execs, tasks in out.values() for t in tasks})
        check(len(out) == 2 and devs == ["0", "1"], "multi-rank: devices %s over %d pids" %
              (devs, len(out)))
        for pid, (recs, execs, tasks) in out.items():
            check(len({t["dev"] for t in tasks}) == 1, "multi-rank: pid %s on two cards" % pid)

    # more ranks than cards: the failing rank names the missing card and the daemon option
    with ModelDaemon(cards=3) as m:
        p = run_train(m, ["--scenario", "multi-rank", "--ranks", "4", "--steps", "1"])
        check(p.returncode != 0, "multi-rank on 3 cards with 4 ranks: exit 0")
        check("rank 3 needs card 3, but npu-modeld has 3 cards (0..2): start it with --cards 4"
              in p.stderr, "multi-rank 4 on 3 cards: message %r" % p.stderr[-400:])

    # ---- TASK_QUEUE_ENABLE=0 ---------------------------------------------------------------------
    with ModelDaemon(journal=True) as m:
        p = run_train(m, ["--scenario", "fused-optimizer", "--steps", "2"],
                      env_extra={"TASK_QUEUE_ENABLE": "0"})
        check(p.returncode == 0, "TASK_QUEUE_ENABLE=0: exit %d" % p.returncode)
        procs, _ = journal_by_pid(m.journal_dir)
        for pid, recs in procs.items():
            tids = {r["tid"] for k, r in recs if k == "task"}
            # the backward runs on the autograd engine's thread (Engine::evaluate_function)
            engine = {r["tid"] for k, r in recs if k == "api" and
                      "Engine17evaluate_function" in r["name"]}
            check(len(engine) == 1 and pid not in engine and tids == {pid} | engine,
                  "TASK_QUEUE_ENABLE=0: tasks from threads %s, want %s and the engine "
                  "thread %s" % (tids, pid, engine))
            check(not [r for k, r in recs if k == "queue"], "TASK_QUEUE_ENABLE=0: queue lines")

    # ---- long-running mode: --steps 0 until SIGTERM, finishing the step in flight ------------
    with ModelDaemon(journal=True) as m:
        env = m.env(NPU_MODEL_JOURNAL=m.journal_dir)
        p = subprocess.Popen([m.bin("npu_train"), "--scenario", "fused-optimizer", "--steps", "0"],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)
        p.send_signal(signal.SIGTERM)
        so, se = p.communicate(timeout=60)
        s = summary(so)
        check(p.returncode == 0 and s and int(s["steps"]) > 0,
              "--steps 0: exit %s, summary %s, %s" % (p.returncode, s, se[-200:]))
        if s:
            procs, _ = journal_by_pid(m.journal_dir)
            nsteps = sum(1 for recs in procs.values() for k, _ in recs if k == "step")
            check(nsteps == int(s["steps"]), "--steps 0: %d step lines for %s steps" %
                  (nsteps, s["steps"]))

    # ---- --duration: runs until the time is up, then exits 0 ----------------------------------
    with ModelDaemon() as m:
        p = subprocess.run([m.bin("npu_train"), "--scenario", "dispatch-bound", "--duration", "0.3"],
                           env=m.env(), capture_output=True, text=True, timeout=120)
        s = summary(p.stdout)
        check(p.returncode == 0 and s and int(s["steps"]) > 0 and float(s["wall_s"]) >= 0.3,
              "--duration 0.3: exit %s, summary %s" % (p.returncode, s))

    # ---- the daemon dies mid-run: npu_train fails promptly, no hang ----------------------------
    m = ModelDaemon()
    m.start()
    try:
        p = subprocess.Popen([m.bin("npu_train"), "--scenario", "fused-optimizer", "--steps", "0"],
                             env=m.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        m.proc.kill()
        m.proc.wait()
        try:
            so, se = p.communicate(timeout=60)
            check(p.returncode == 1 and "failed" in se, "daemon killed: exit %s, stderr %r" %
                  (p.returncode, se[-300:]))
        except subprocess.TimeoutExpired:
            p.kill()
            check(False, "daemon killed: npu_train hung")
    finally:
        m.stop()

    # ---- bad input -------------------------------------------------------------------------------
    out_dir = os.environ.get("OUTPUT", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
    train = os.path.join(out_dir, "npu_model", "bin", "npu_train")
    for args in (["--scenario", "nope"], ["--steps", "-1"], ["--batch", "0"],
                 ["--card", "tflops=x"], ["--ranks", "0"], ["extra"], ["--bogus"]):
        p = subprocess.run([train] + args, capture_output=True, text=True, timeout=30)
        check(p.returncode == 2 and p.stderr.strip(), "bad input %s: exit %d, stderr %r" %
              (args, p.returncode, p.stderr))
    empty = tempfile.mkdtemp(prefix="npu_model.nodev.")
    env = dict(os.environ, NPU_MODEL_DEV_DIR=empty)
    p = subprocess.run([train, "--steps", "1"], env=env, capture_output=True, text=True, timeout=60)
    check(p.returncode == 1 and "npu-modeld" in p.stderr, "no daemon: exit %d, stderr %r" %
          (p.returncode, p.stderr[-300:]))
    os.rmdir(empty)
    p = subprocess.run([train, "--list"], capture_output=True, text=True, timeout=30)
    names = [l.split()[0] for l in p.stdout.splitlines() if l.strip()]
    for want in ("baseline", "dispatch-bound", "native-optimizer", "fused-optimizer", "transdata",
                 "mem-growth", "oom", "multi-stream", "launch-storm", "multi-rank"):
        check(want in names, "--list lacks %s" % want)

    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    print("all scenario checks passed")
    return 0


def common_checks_ranks(m):
    procs, modeld = journal_by_pid(m.journal_dir)
    out = {}
    for pid, recs in procs.items():
        tasks = [r for k, r in recs if k == "task"]
        if not tasks:
            continue   # the parent: it only forks
        execs = [r for k, r in modeld if k == "exec" and r["pid"] == pid]
        tkeys = {(r["dev"], r["stream"], r["task"], r["wrap"]) for r in tasks}
        ekeys = {(r["dev"], r["stream"], r["task"], r["wrap"]) for r in execs}
        check(tkeys <= ekeys, "multi-rank pid %s: %d tasks not executed" %
              (pid, len(tkeys - ekeys)))
        out[pid] = (recs, execs, tasks)
    return out


if __name__ == "__main__":
    sys.exit(main())
