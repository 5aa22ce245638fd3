# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""test_model_autograd.py - npu_model's autograd numbering against what PyTorch
1.13 does, checked from the journal (npu_model/JOURNAL.md, `seq`, `fwd`,
`grad_fn` on aten lines, `node seq fwd` on Engine::evaluate_function lines):

  forward       on the main thread, every op that creates a backward node
                records the next sequence number (consecutive from 0), with
                torch's class for its op (aten::addmm -> AddmmBackward0, ...);
                a top-level op that creates none records the number the next
                node will get (peek without increment); ops nested in another
                op record -1; optimizer ops (torch.no_grad) record -1
  backward      every evaluate_function runs on one other thread (not main,
                not acl_thread), named pt_autograd_0; each node's seq is the
                seq of exactly one forward op, which created that class;
                nodes run in reverse creation order; fwd is the forward
                thread's id (1); AccumulateGrad has seq -1, one per parameter
                (= ApplyAdamW kernels of the step); the backward aten ops
                run inside an evaluate_function of that thread, with seq -1,
                and reach the card through the shared task queue
  scenarios     fused-optimizer (transformer), transdata (CNN, TransData
                passes the gradient through), baseline (both models),
                native-optimizer (per-parameter optimizer ops)
  ABI           libtorch_cpu.so exports the functions (text) and vtables (data,
                >= 24 bytes) under torch's names (also in Debian's real
                libtorch_cpu.so 1.13 where it is installed), evaluate_function
                demangles to torch's declaration; peek / get_and_increment
                reach the counter general-dynamic: data16 lea X(%rip),%rdi;
                data16 data16 rex.W call __tls_get_addr, X a DTPMOD64 slot
"""
import bisect
import collections
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ.get("ASCBPF_TOP", os.path.join(
    os.path.dirname(__file__), "..", "..")), "tests", "lib"))
from npu_model import ModelDaemon  # noqa: E402

FAILS = []
EVAL = ("_ZN5torch8autograd6Engine17evaluate_functionERSt10shared_ptrINS0_9GraphTaskEE"
        "PNS0_4NodeERNS0_11InputBufferERKS2_INS0_10ReadyQueueEE")
# torch/csrc/autograd/generated/Functions.h class of each differentiable op the model has
TORCH_CLASS = {
    "aten::addmm": "AddmmBackward0", "aten::mm": "MmBackward0", "aten::add": "AddBackward0",
    "aten::mul": "MulBackward0", "aten::relu": "ReluBackward0", "aten::gelu": "GeluBackward0",
    "aten::_softmax": "SoftmaxBackward0", "aten::native_layer_norm": "NativeLayerNormBackward0",
    "aten::convolution": "ConvolutionBackward0", "aten::view": "ViewBackward0",
    "aten::t": "TBackward0",
}
NO_GRAD_OPS = {"aten::_fused_adamw_", "aten::_foreach_mul_", "aten::mul_", "aten::add_",
               "aten::addcmul_", "aten::addcdiv_", "aten::sqrt"}
ACC = "torch::autograd::AccumulateGrad"


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)
    return cond


def journal(jdir):
    """{pid: [(kind, rec)]} of the process journals (not the daemon's)."""
    out = {}
    for name in os.listdir(jdir):
        if not (name.startswith("journal.") and name[8:-4].isdigit()):
            continue
        recs = []
        with open(os.path.join(jdir, name)) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                kind, *fields = line.rstrip("\n").split("\t")
                recs.append((kind, dict(x.split("=", 1) for x in fields)))
        out[name[8:-4]] = recs
    return out


def steps_of(recs):
    """Times of the step lines (each where an optimizer step returns, JOURNAL.md)."""
    return sorted(int(r["t"]) for k, r in recs if k == "step")


def iteration_of(marks, t):
    """The training iteration of a forward / backward record at t: iteration k's come
    before the line where its optimizer step returns, marks[k] (and after marks[k - 1])."""
    return bisect.bisect_left(marks, t)


def within(c, outer):
    return int(outer["t0"]) <= int(c["t0"]) and int(c["t1"]) <= int(outer["t1"])


def check_scenario(name, recs, pid, steps):
    apis = [r for k, r in recs if k == "api"]
    aten = [r for r in apis if r.get("op", "").startswith("aten::")]
    evals = [r for r in apis if r["name"] == EVAL]
    starts = steps_of(recs)
    check(len(starts) == steps, "%s: %d step lines" % (name, len(starts)))
    check(aten and all("seq" in r and r.get("fwd") == "0" for r in aten),
          "%s: aten lines without seq / fwd=0: %s" %
          (name, [r for r in aten if "seq" not in r or r.get("fwd") != "0"][:2]))
    main = [r for r in aten if r["tid"] == pid]
    eng_tids = {r["tid"] for r in evals}
    check(len(eng_tids) == 1 and pid not in eng_tids,
          "%s: evaluate_function on threads %s (main %s)" % (name, eng_tids, pid))
    acl_tids = {r["tid"] for k, r in recs if k == "queue" and r["side"] == "dequeue"}
    check(not (eng_tids & acl_tids), "%s: the engine thread is acl_thread" % name)
    eng = eng_tids.pop() if len(eng_tids) == 1 else None

    # forward, main thread: top-level ops (not inside another aten op of the main thread)
    def nested(c):
        return any(o is not c and within(c, o) and (o["t0"], o["t1"]) != (c["t0"], c["t1"])
                   for o in main)
    top = [c for c in main if not nested(c)]
    inner = [c for c in main if c not in top]
    check(all(c["seq"] == "-1" for c in inner), "%s: nested ops with a seq: %s" %
          (name, [(c["op"], c["seq"]) for c in inner if c["seq"] != "-1"][:3]))
    nograd = [c for c in top if c["op"] in NO_GRAD_OPS]
    check(all(c["seq"] == "-1" for c in nograd), "%s: optimizer ops with a seq: %s" %
          (name, [(c["op"], c["seq"]) for c in nograd if c["seq"] != "-1"][:3]))
    fwd = sorted((c for c in top if c["op"] not in NO_GRAD_OPS), key=lambda c: int(c["t0"]))
    check(all(c["seq"] != "-1" for c in fwd), "%s: forward ops without seq: %s" %
          (name, [c["op"] for c in fwd if c["seq"] == "-1"][:3]))
    creators = [c for c in fwd if "grad_fn" in c]
    check([int(c["seq"]) for c in creators] == list(range(len(creators))),
          "%s: node-creating forward seqs not 0,1,2,...: %s" %
          (name, [c["seq"] for c in creators][:12]))
    for c in creators:
        want = TORCH_CLASS.get(c["op"])
        check(c["grad_fn"] == want, "%s: %s created %s, torch creates %s" %
              (name, c["op"], c["grad_fn"], want))
    # a forward op that creates no node records what the next node will get
    nxt = len(creators)    # the counter after the last node of the run
    for c in reversed(fwd):
        if "grad_fn" in c:
            nxt = int(c["seq"])
        elif c["seq"] != "-1":
            check(int(c["seq"]) == nxt,
                  "%s: %s (no node) seq %s, next node %s" % (name, c["op"], c["seq"], nxt))
    by_seq = collections.defaultdict(list)
    for c in fwd:
        by_seq[int(c["seq"])].append(c)

    # backward nodes
    nodes = [e for e in evals if e["node"] != ACC]
    accs = [e for e in evals if e["node"] == ACC]
    check(nodes, "%s: no backward nodes" % name)
    check(all(e["fwd"] == "1" for e in evals), "%s: node fwd thread ids %s" %
          (name, sorted({e["fwd"] for e in evals})))
    check(all(e["seq"] == "-1" for e in accs), "%s: AccumulateGrad seqs %s" %
          (name, sorted({e["seq"] for e in accs})))
    seen = collections.Counter(int(e["seq"]) for e in nodes)
    check(all(n == 1 for n in seen.values()), "%s: nodes evaluated twice: %s" %
          (name, [s for s, n in seen.items() if n > 1][:5]))
    check(set(seen) == {int(c["seq"]) for c in creators},
          "%s: %d nodes evaluated, %d created" % (name, len(seen), len(creators)))
    for e in nodes:
        made = [c for c in by_seq.get(int(e["seq"]), []) if "grad_fn" in c]
        if check(len(made) == 1, "%s: node %s seq %s made by %d forward ops" %
                 (name, e["node"], e["seq"], len(made))):
            check(made[0]["grad_fn"] == e["node"] and made[0]["tid"] != e["tid"],
                  "%s: node %s seq %s on tid %s, forward %s (%s) on tid %s" %
                  (name, e["node"], e["seq"], e["tid"], made[0]["op"], made[0]["grad_fn"],
                   made[0]["tid"]))
    for s in range(steps):
        order = [int(e["seq"]) for e in nodes if iteration_of(starts, int(e["t0"])) == s]
        check(order == sorted(order, reverse=True) and order,
              "%s step %d: nodes not in reverse creation order: %s" % (name, s, order[:10]))
    # backward ops: inside an evaluate_function of the engine thread, seq -1
    bops = [r for r in aten if r["tid"] == eng]
    check(bops and all(r["seq"] == "-1" for r in bops), "%s: backward ops with a seq" % name)
    check(all(any(within(r, e) for e in evals) for r in bops),
          "%s: engine-thread ops outside evaluate_function" % name)
    bwd_named = [r for r in aten if "backward" in r["op"]]
    check(bwd_named and all(r["tid"] == eng for r in bwd_named),
          "%s: *_backward ops off the engine thread: %s" %
          (name, sorted({r["tid"] for r in bwd_named})))
    enq = {r["tid"] for k, r in recs if k == "queue" and r["side"] == "enqueue"}
    check(eng in enq and pid in enq, "%s: enqueuing threads %s (main %s, engine %s)" %
          (name, enq, pid, eng))
    return accs, starts


def run(m, scenario, steps):
    env = m.env(NPU_MODEL_JOURNAL=m.journal_dir)
    p = subprocess.run([m.bin("npu_train"), "--scenario", scenario, "--steps", str(steps)],
                       env=env, capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, "%s: exit %d %s" % (scenario, p.returncode, p.stderr[-300:]))
    procs = journal(m.journal_dir)
    check(len(procs) == 1, "%s: %d process journals" % (scenario, len(procs)))
    pid, recs = next(iter(procs.items()))
    return pid, recs


TOP = os.environ.get("ASCBPF_TOP", os.path.join(os.path.dirname(__file__), "..", ".."))
LIBTORCH = os.path.join(os.environ.get("OUTPUT", os.path.join(TOP, "build")), "npu_model", "lib",
                        "libtorch_cpu.so")
REAL_LIBTORCH = "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13"
FUNCS = ["_ZN2at15sequence_number4peekEv", "_ZN2at15sequence_number17get_and_incrementEv",
         "_ZN2at14RecordFunction15currentThreadIdEv", EVAL]
VTABLES = ["_ZTVN5torch8autograd14AccumulateGradE"] + [
    "_ZTVN5torch8autograd9generated%d%sE" % (len(c), c) for c in sorted(set(TORCH_CLASS.values()))]
EVAL_DECL = ("torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::"
             "GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&, "
             "std::shared_ptr<torch::autograd::ReadyQueue> const&)")


def out(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def check_abi():
    dyn = {}
    for line in out("nm", "-D", "--defined-only", LIBTORCH).splitlines():
        f = line.split()
        if len(f) == 3:
            dyn[f[2]] = f[1]
    for fn in FUNCS:
        check(dyn.get(fn) == "T", "libtorch_cpu.so: %s is %s, want T" % (fn, dyn.get(fn)))
    sizes = {}
    for line in out("readelf", "-sW", "--dyn-syms", LIBTORCH).splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "OBJECT":
            sizes[f[7]] = int(f[2])
    for vt in VTABLES:
        check(dyn.get(vt) in ("D", "V", "R") and sizes.get(vt, 0) >= 24,
              "libtorch_cpu.so: vtable %s is %s, %s bytes" % (vt, dyn.get(vt), sizes.get(vt)))
    check(out("c++filt", EVAL).strip() == EVAL_DECL, "evaluate_function demangles to %s" %
          out("c++filt", EVAL).strip())
    if os.path.exists(REAL_LIBTORCH):
        real = set(out("nm", "-D", "--defined-only", REAL_LIBTORCH).split())
        for sym in FUNCS + VTABLES:
            check(sym in real, "%s is not in PyTorch's own libtorch_cpu.so" % sym)
    else:
        print("note: %s not installed, names checked against the list only" % REAL_LIBTORCH)
    dtpmod = set()
    for line in out("readelf", "-rW", LIBTORCH).splitlines():
        f = line.split()
        if len(f) >= 3 and f[2] == "R_X86_64_DTPMOD64":
            dtpmod.add(int(f[0], 16))
    dis = out("objdump", "-d", "--no-show-raw-insn", LIBTORCH)
    for fn in FUNCS[:2]:
        m = re.search(r"<%s>:\n(.*?)\n\n" % re.escape(fn), dis + "\n\n", re.S)
        body = m.group(1) if m else ""
        lea = re.search(r"data16 lea 0x[0-9a-f]+\(%rip\),%rdi\s+# ([0-9a-f]+)", body)
        call = re.search(r"data16 data16 rex\.W call [0-9a-f]+ <__tls_get_addr@plt>", body)
        check(lea and call and lea.start() < call.start(),
              "%s: no general-dynamic TLS access in\n%s" % (fn, body))
        if lea:
            check(int(lea.group(1), 16) in dtpmod, "%s: lea target %s is not a tls_index" %
                  (fn, lea.group(1)))


def main():
    check_abi()
    for scenario, steps in (("fused-optimizer", 2), ("transdata", 2), ("baseline", 2),
                            ("native-optimizer", 1)):
        with ModelDaemon(journal=True) as m:
            pid, recs = run(m, scenario, steps)
            accs, starts = check_scenario(scenario, recs, pid, steps)
            if scenario in ("fused-optimizer", "transdata"):
                # one AccumulateGrad per parameter, one ApplyAdamW per parameter
                # an ApplyAdamW task is sent by acl_thread, possibly after its optimizer
                # step returned (the step line), but before the next iteration's backward:
                # iteration s's run from its first AccumulateGrad to the next one's
                first = [min([int(e["t0"]) for e in accs
                              if iteration_of(starts, int(e["t0"])) == s] or [0])
                         for s in range(steps)] + [float("inf")]
                for s in range(steps):
                    na = sum(1 for e in accs if iteration_of(starts, int(e["t0"])) == s)
                    nk = sum(1 for k, r in recs if k == "task" and r["kernel"] == "ApplyAdamW"
                             and first[s] < int(r["t"]) < first[s + 1])
                    check(na == nk and na > 0, "%s step %d: %d AccumulateGrad, %d ApplyAdamW" %
                          (scenario, s, na, nk))
            if scenario == "transdata":
                tds = [r for k, r in recs if k == "api" and "npu_format_cast" in r["name"]]
                check(tds and all(r.get("seq", "-1") != "-1" for r in tds),
                      "transdata: npu_format_cast lines without a seq")

    # the engine's device thread by name, on a live process
    with ModelDaemon(journal=False) as m:
        p = subprocess.Popen([m.bin("npu_train"), "--scenario", "fused-optimizer", "--steps",
                              "0"], env=m.env(), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        names = set()
        for _ in range(100):
            time.sleep(0.1)
            try:
                names = set()
                for t in os.listdir("/proc/%d/task" % p.pid):
                    with open("/proc/%d/task/%s/comm" % (p.pid, t)) as f:
                        names.add(f.read().strip())
            except OSError:
                break
            if "pt_autograd_0" in names:
                break
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=60)
        check("pt_autograd_0" in names and "acl_thread" in names,
              "thread names %s" % sorted(names))
        check(p.returncode == 0, "--steps 0 after SIGTERM: exit %d" % p.returncode)

    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    print("all autograd checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
