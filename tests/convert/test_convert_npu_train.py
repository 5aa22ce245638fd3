#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""End to end over the whole chain: `ascbpf trace --level 1 --profile-memory
-- npu_train --scenario S` on a private npu-modeld, converted by trace, and
the *_ascend_pt output checked against npu_model's ground-truth journal
(what the simulated torch_npu / CANN / driver / card really did), never
against ascbpf's own reading of the capture:

* kernels: every task the card executed for the process after the first
  step boundary (but those sent by another thread within 1 ms of it, which
  may be on either side) is one `Ascend Hardware` X event (stream, task id, start
  within 2 us of the executed start, duration from the device counters);
  compute tasks are kernel_details rows with the journal's step (the step
  whose range holds the submission);
* correlation: a kernel launched through aclrtLaunchKernel* or (aclop, AI CPU)
  a runtime launch call of NODE_CALLS has one Node@launch around the journal's launch
  call (the journal's task line is
  written inside the call that made the task), inside the AscendCL event of
  its launching API (the outermost aclnn / aclop call around it), and its
  HostToDevice flow starts inside the Node; other tasks' flows (copies,
  events) start at the AscendCL event of their launching API; launch-storm's runtime sends 32
  launches' SQEs per halSqTaskSend, so this checks the batch join; its torch_to_npu
  flow at the cpu_op of the aten op that enqueued it (journal chain: task ->
  AsncExecFunc -> dequeue corr -> enqueue -> enclosing at::_ops call); both
  host events enclose the journal's call interval on the same thread;
* API calls: per acl* API, the converted AscendCL events (and api_statistic
  Count) equal the journal's calls in the recorded steps, each enclosing one;
* memory: one operator_memory row per caching-allocator malloc made inside an
  aten op during the steps, named after that op, same size; memory_record has
  one PTA row per PTA event;
* steps: step_trace_time has one row per step that ran kernels.
The host-side tolerance is trace_check's (probes fire before/after the
journal's own clock reads; preemption on a loaded VM)."""
import bisect
import collections
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from checks import check, failures  # noqa: E402

# launch-storm: its runtime batches the SQEs of 32 launches into one halSqTaskSend
# (NPU_MODEL_SQE_BATCH=32), so each kernel must join through the launch that made it
SCENARIOS = [("baseline", 3), ("transdata", 2), ("multi-stream", 2), ("mem-growth", 3),
             ("dispatch-bound", 2), ("oom", 2), ("launch-storm", 2)]
# How late a traced thread's own clock read may follow the probe.  Host events of
# one name on one thread are disjoint, so enclosing the journal's call interval is
# what identifies the instance; the bound only keeps an outer event of the same
# name out.  Under load, launch-storm's 40000 launches meet preemptions of 20+ ms
# (trace_check: seen up to ~30 ms): the per-call bound of trace_check, not its
# single-event one.
TOL = tc.TOLERANCE_MAX_NS
COMPUTE = {"0", "1", "2"}	# STARS SQE types AI_CORE, AI_CPU, AI_VECTOR_CORE
ASYNC_EXEC = "_ZN6at_npu6native12AsncExecFuncEPv"


# The runtime launch calls traced as a Node@launch at Level1 (user/discovery/probes.c):
# aclop kernels (rtKernelLaunch*, CANN 8.x/9.x: WithFlagV2 / WithHandleV2) and AI CPU ops.
NODE_CALLS = {"rtKernelLaunch", "rtKernelLaunchWithFlagV2", "rtKernelLaunchWithHandleV2",
              "rtCpuKernelLaunchWithFlag", "rtAicpuKernelLaunchExWithArgs"}


def us_ns(s):
    return int(s.rstrip("\t").replace(".", ""))


def enclosing(calls, tid, t, pred):
    """Journal api calls on tid whose [t0, t1] holds t and match pred, outermost first."""
    return [c for c in calls.holding(tid, t) if pred(c["name"])]


def aten_struct(sym):
    p = "_ZN2at4_ops"
    if not sym.startswith(p):
        return None
    j = len(p)
    while sym[j].isdigit():
        j += 1
    n = int(sym[len(p):j])
    return sym[j:j + n]


def op_struct(sym):
    """The op part of a framework op symbol: at::_ops::<struct>::call or torch_npu's
    at_npu::native::custom_ops::<name> (shown as npu::<name>)."""
    st = aten_struct(sym)
    if st is not None:
        return st
    p = "_ZN6at_npu6native10custom_ops"
    if sym.startswith(p):
        j = len(p)
        while sym[j].isdigit():
            j += 1
        return "npu::" + sym[j:j + int(sym[len(p):j])]
    return None


def same_op(sym_struct, name):
    """Does a converted op name belong to a journal op (at::_ops struct or npu::name)?"""
    if sym_struct.startswith("npu::"):
        return name == sym_struct
    return name.startswith("aten::") and sym_struct.startswith(name[6:])


def run(scenario, steps):
    d = tc.workdir()
    try:
        t = tc.trace_model(d, scenario, ["--level", "1", "--profile-memory"],
                           ["npu_train", "--scenario", scenario, "--steps", steps], check,
                           device_journal=True)
        if t:
            check_run(scenario, t.run_dir, t.journal(), t.execs, t.pid, t.wall_off, t.freq_hz)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def check_run(scenario, run_dir, jl, execs, pid, off, freq):
    S = scenario + ": "
    po = os.path.join(run_dir, "ASCEND_PROFILER_OUTPUT")
    step_t = [0] + sorted(int(x["t"]) for k, x in jl if k == "step")
    first = step_t[0]

    def step_of(t):
        i = bisect.bisect_right(step_t, t) - 1
        return i if i >= 0 else None

    calls = tc.Calls(jl)
    tasks = {(x["stream"], x["task"], x["wrap"]): x for k, x in jl if k == "task"}
    queue = {(x["side"], x["corr"]): x for k, x in jl if k == "queue"}
    deqs = collections.defaultdict(list)	# tid -> dequeue lines by time
    for (side, c), q in queue.items():
        if side == "dequeue":
            deqs[int(q["tid"])].append((int(q["t"]), q))
    for v in deqs.values():
        v.sort(key=lambda p: p[0])
    deq_t = {tid: [p[0] for p in v] for tid, v in deqs.items()}

    events = json.load(open(os.path.join(po, "trace_view.json"), encoding="utf-8"))
    procs = {e["pid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e["name"] == "process_name"}
    hw = (pid << 10 | 13 << 5) & 0xffffffff
    cann = (pid << 10 | 7 << 5) & 0xffffffff
    check(procs.get(hw) == "Ascend Hardware" and procs.get(cann) == "CANN" and
          procs.get(pid) == "Python", S + "processes %s" % procs)
    kx = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e["pid"] == hw:
            kx[(e["tid"], e["args"]["Task Id"])].append(e)
    cpu = {(e["tid"], e["ts"]): e for e in events if e.get("cat") == "cpu_op"}
    # (Node@launch shares its launch call's tid and ts: kept apart)
    acl = {(e["tid"], e["ts"]): e for e in events if e.get("ph") == "X" and e["pid"] == cann and
           e["name"] != "Node@launch"}
    h2d_s = {e["id"]: e for e in events if e.get("cat") == "HostToDevice" and e["ph"] == "s"}
    t2n_s = {e["id"]: e for e in events if e.get("cat") == "async_npu" and e["ph"] == "s"}
    nodes = {e["args"]["connection_id"]: e for e in events if e.get("name") == "Node@launch"}
    acl_by = collections.defaultdict(list)	# (tid, name) -> AscendCL events by ts
    for e in acl.values():
        if e["name"].startswith("AscendCL@"):
            acl_by[(e["tid"], e["name"])].append((us_ns(e["ts"]), e))
    for v in acl_by.values():
        v.sort(key=lambda p: p[0])
    acl_ts = {k: [p[0] for p in v] for k, v in acl_by.items()}

    def acl_around(tid, name, t):
        """The AscendCL@name event on tid that holds wall time t (us_ns), or None."""
        k = (tid, "AscendCL@" + name)
        j = bisect.bisect_right(acl_ts.get(k, []), t) - 1
        if j < 0:
            return None
        e = acl_by[k][j][1]
        return e if t <= us_ns(e["ts"]) + round(e["dur"] * 1000) else None

    def encloses(e, c):
        s, t = us_ns(e["ts"]) - off, us_ns(e["ts"]) - off + round(e["dur"] * 1000)
        return s <= int(c["t0"]) and int(c["t1"]) <= t and int(c["t0"]) - s <= TOL

    def holds(e, t):
        s = us_ns(e["ts"]) - off
        return s <= t <= s + round(e["dur"] * 1000)

    # The first step boundary is exact for the thread that crosses it, not for
    # another one: acl_thread drains the queue (sends tasks, calls AscendCL)
    # while the Python thread returns from the optimizer step, and convert orders by
    # the probes' times while the journal's times are taken inside the calls, after
    # the probe (within TOLERANCE_TIGHT_NS for 99% of calls, trace_check).  A
    # task or call whose journal time is that close to the boundary may be on
    # either side: it is left out of the exact comparisons, and counted as
    # "may be in" (seen once: a multi-stream task 216 == 215).
    edge = tc.TOLERANCE_TIGHT_NS

    def at_edge(t):
        return abs(t - first) <= edge

    def at_step_edge(t):
        """near a step boundary: the journal writes a step line inside the optimizer
        step, ascbpf's boundary is its return probe, and another thread's task or call
        between the two is in either step"""
        i = bisect.bisect_left(step_t, t - edge)
        return at_edge(t) or (i < len(step_t) and abs(step_t[i] - t) <= edge)

    # ---- kernels
    sent_t = {}     # (stream, task) -> its halSqTaskSend's time
    for k, a in jl:
        if k == "api" and a["name"] == "halSqTaskSend" and "sqe_num" in a:
            for i in range(int(a["sqe_num"])):
                sent_t[(int(a["stream"]), (int(a["task"]) + i) & 0xffff)] = int(a["t0"])
    want = []
    edge_keys = set()
    step_keys = set()   # in either step (at_step_edge): not in the per-step comparisons
    for x in execs:
        t = tasks.get((x["stream"], x["task"], x["wrap"]))
        if not check(t is not None, S + "exec without a task line %s" % x):
            continue
        snd = sent_t.get((int(x["stream"]), int(x["task"])))
        if at_step_edge(int(t["t"])) or (snd is not None and at_step_edge(snd)):
            step_keys.add((int(x["stream"]), int(x["task"])))
        if at_edge(int(t["t"])):
            edge_keys.add((int(x["stream"]), int(x["task"])))
        elif int(t["t"]) >= first:
            want.append((x, t))
    seen = collections.Counter()
    n_corr = n_aten = n_node = n_launch = 0
    for x, t in sorted(want, key=lambda p: int(p[0]["t0"])):
        key = (int(x["stream"]), int(x["task"]))
        lst = kx.get(key, [])
        i = seen[key]
        seen[key] += 1
        if not check(i < len(lst), S + "task %s/%s wrap %s not in the trace" %
                     (x["stream"], x["task"], x["wrap"])):
            continue
        e = lst[i]
        check(abs(us_ns(e["ts"]) - (int(x["t0"]) + off)) <= 2000, S + "kernel start")
        check(abs(e["dur"] * 1000 - (int(x["c1"]) - int(x["c0"])) * 1e9 / freq) < 1.5,
              S + "kernel duration")
        tid, ts = int(t["tid"]), int(t["t"])
        # launching API: outermost aclnn / aclop call around the submission, else aclrt
        api = enclosing(calls, tid, ts, lambda n: (n.startswith("aclnn") and
                                                   not n.endswith("GetWorkspaceSize")) or
                        n.startswith("aclop"))
        api = api or enclosing(calls, tid, ts, lambda n: n.startswith("aclrt"))
        hs = h2d_s.get(str(e["args"]["connection_id"]))
        node = nodes.get(e["args"]["connection_id"])
        # Node@launch: the kernel launch call that made this task (the journal's task
        # line is written inside it, on its thread); the flow starts inside it.  aclop's
        # and AI CPU ops' runtime launch calls have one at Level1 too (traced as LAUNCH
        # records for them only)
        launch = enclosing(calls, tid, ts, lambda n: n.startswith("aclrtLaunchKernel") or
                           n in NODE_CALLS)
        if t["sqe_type"] in COMPUTE and launch:
            n_launch += 1
            ok = check(node is not None and hs is not None and launch and
                       node["tid"] == tid and encloses(node, launch[0]) and holds(node, ts) and
                       node["args"]["item_id"] == e["name"] and hs["tid"] == tid and
                       holds(node, us_ns(hs["ts"]) - off),
                       S + "kernel %s/%s: Node@launch around its launch, s end inside it "
                       "(node %s+%s us tid %s, journal launch %s..%s task %d tid %d, wall-mono %d)" %
                       (key + ((node or {}).get("ts"), (node or {}).get("dur"),
                               (node or {}).get("tid"), launch and launch[0]["t0"],
                               launch and launch[0]["t1"], ts, tid, off)))
            a = acl_around(tid, api[0]["name"], us_ns(node["ts"])) if ok and api else None
            n_node += 1 if ok else 0
        else:
            check(node is None, S + "kernel %s/%s: a Node@launch without a launch call" % key)
            a = acl.get((hs["tid"], hs["ts"])) if hs else None
        if check(api and a is not None, S + "kernel %s has a launching API" % e["name"]):
            check(a["name"] == "AscendCL@" + api[0]["name"] and encloses(a, api[0]),
                  S + "HostToDevice starts at %s, not %s" % (a["name"], api[0]["name"]))
            n_corr += 1
        # aten op: journal chain task -> AsncExecFunc -> dequeue -> enqueue -> at::_ops call
        # (the dequeue line is written when the slot is read, just before AsncExecFunc)
        ex = enclosing(calls, tid, ts, lambda n: n == ASYNC_EXEC)
        deq = None
        if ex and deqs.get(tid):
            j = bisect.bisect_right(deq_t[tid], int(ex[-1]["t0"])) - 1
            deq = deqs[tid][j][1] if j >= 0 else None
        enq = queue.get(("enqueue", deq["corr"])) if deq else None
        aten = enclosing(calls, int(enq["tid"]), int(enq["t"]),
                         lambda n: op_struct(n) is not None) if enq else []
        s = t2n_s.get(int(e["ts"].replace(".", "")))
        if aten:
            op = cpu.get((s["tid"], s["ts"])) if s else None
            st = op_struct(aten[-1]["name"])
            if check(op is not None, S + "kernel %s has a torch_to_npu start" % e["name"]):
                check(same_op(st, op["name"]) and encloses(op, aten[-1]),
                      S + "torch_to_npu starts at %s (%s+%s us), journal op %s (%s..%s)" %
                      (op["name"], op["ts"], op["dur"], st, aten[-1]["t0"], aten[-1]["t1"]))
                n_aten += 1
    n_hw = sum(len(v) for k, v in kx.items() if k not in edge_keys)
    check(n_hw == len(want), S + "Ascend Hardware events %d == executed tasks %d "
          "(and %d of %d at the step edge)" %
          (n_hw, len(want), sum(len(kx.get(k, [])) for k in edge_keys), len(edge_keys)))
    check(n_corr == len(want) and n_aten > 0, S + "correlated %d/%d kernels, %d to aten ops" %
          (n_corr, len(want), n_aten))
    # one Node@launch per kernel launched (aclrtLaunchKernel*, NODE_CALLS) in the
    # recorded steps (and at most one more per kernel at the step edge)
    check(n_launch == n_node and n_launch <= len(nodes) <= n_launch + len(edge_keys),
          S + "Node@launch %d, kernels launched %d, %d checked" % (len(nodes), n_launch, n_node))

    raw, hdr, rows = tc.read_csv(os.path.join(po, "kernel_details.csv"))
    check(raw.count(b"\n") == raw.count(b"\r\n") == len(rows) + 1, S + "kernel_details lines")
    col = {h: i for i, h in enumerate(hdr)}
    # a kernel's step is that of its submission, the halSqTaskSend carrying it (a batch of
    # launch-storm's adds may be sent after its optimizer step returned, in the next step)
    sent = {}
    for k, a in jl:
        if k == "api" and a["name"] == "halSqTaskSend" and "sqe_num" in a:
            for i in range(int(a["sqe_num"])):
                sent[(int(a["stream"]), (int(a["task"]) + i) & 0xffff)] = int(a["t0"])
    exp = sorted((step_of(sent.get((int(x["stream"]), int(x["task"])), int(t["t"]))),
                  int(x["stream"]), int(x["task"]))
                 for x, t in want if t["sqe_type"] in COMPUTE and
                 (int(x["stream"]), int(x["task"])) not in step_keys)
    got = sorted((int(r[col["Step Id"]]), int(r[col["Stream ID"]]), int(r[col["Task ID"]]))
                 for r in rows if (int(r[col["Stream ID"]]), int(r[col["Task ID"]]))
                 not in edge_keys | step_keys)
    check(exp == got, S + "kernel_details (step, stream, task) rows: %d vs %d; only in "
          "the output %s, only in the journal %s" %
          (len(got), len(exp), sorted(set(got) - set(exp))[:4], sorted(set(exp) - set(got))[:4]))

    # ---- API calls (Level1: the acl* layer)
    # (calls at the step edge: in the output or not, so counts between jc and jc_edge)
    acl_calls = [c for lst in calls.values() for c in lst
                 if c["layer"] == "cann" and c["name"].startswith("acl")]
    jc = collections.Counter(c["name"] for c in acl_calls
                             if int(c["t0"]) >= first and not at_step_edge(int(c["t0"])))
    jc_edge = jc + collections.Counter(c["name"] for c in acl_calls
                                       if at_step_edge(int(c["t0"])))
    gc = collections.Counter(e["name"][len("AscendCL@"):] for e in acl.values()
                             if e["name"].startswith("AscendCL@"))
    check(all(jc[k] <= gc[k] <= jc_edge[k] for k in set(jc_edge) | set(gc)),
          S + "AscendCL calls per API differ: %s" %
          {k: (gc[k], jc[k], jc_edge[k]) for k in set(jc_edge) | set(gc)
           if not jc[k] <= gc[k] <= jc_edge[k]})
    _, hdr, rows = tc.read_csv(os.path.join(po, "api_statistic.csv"))
    stat = collections.Counter({r[1]: int(r[3]) for r in rows})
    check(stat == gc and all(jc[k] <= stat[k] <= jc_edge[k] for k in stat),
          S + "api_statistic counts")

    # ---- memory
    pta = [x for k, x in jl if k == "mem" and x["component"] == "PTA" and int(x["t"]) >= first]
    mallocs = []
    for x in pta:
        if x["op"] != "malloc":
            continue
        ops = enclosing(calls, int(x["tid"]), int(x["t"]), lambda n: op_struct(n) is not None)
        if ops:
            mallocs.append((op_struct(ops[-1]["name"]), int(x["size"])))
    # (no allocation inside an op, as in launch-storm: no operator_memory.csv, as torch_npu)
    om = os.path.join(po, "operator_memory.csv")
    rows = tc.read_csv(om)[2] if os.path.exists(om) or mallocs else []
    got = [(r[0], float(r[1])) for r in rows]
    check(len(got) == len(mallocs), S + "operator_memory rows %d vs mallocs in ops %d" %
          (len(got), len(mallocs)))
    check(all(same_op(st, n) and kb == size / 1024 for (n, kb), (st, size) in zip(got, mallocs)),
          S + "operator_memory names and sizes follow the journal")
    _, hdr, rows = tc.read_csv(os.path.join(po, "memory_record.csv"))
    check(sum(1 for r in rows if r[0] == "PTA") == len(pta),
          S + "memory_record PTA rows %d vs journal %d" %
          (sum(1 for r in rows if r[0] == "PTA"), len(pta)))

    # ---- steps
    _, hdr, rows = tc.read_csv(os.path.join(po, "step_trace_time.csv"))
    ran = set(step_of(int(t["t"])) for x, t in want if t["sqe_type"] in COMPUTE and
              (int(x["stream"]), int(x["task"])) not in step_keys)
    # a task at a step edge gives its row to the step on either side
    maybe = set()
    for x in execs:
        t = tasks.get((x["stream"], x["task"], x["wrap"]))
        if t and (int(x["stream"]), int(x["task"])) in edge_keys | step_keys and \
                t["sqe_type"] in COMPUTE:
            i = step_of(int(t["t"]))
            maybe |= {i - 1, i, i + 1} if i is not None else set()
    got_steps = set(int(r[0]) for r in rows)
    check(len(got_steps) == len(rows) and ran <= got_steps <= ran | maybe,
          S + "step_trace_time steps %s vs %s (and maybe %s)" %
          ([r[0] for r in rows], sorted(ran), sorted(maybe - ran)))
    print("%s: %d kernels, %d correlated to APIs, %d to aten ops, %d Node@launch, %d API calls, "
          "%d mallocs" % (scenario, len(want), n_corr, n_aten, n_node, sum(jc.values()),
                          len(mallocs)))


def torch_npu_action(step, wait, active, warmup, repeat, skip_first):
    """torch_npu.profiler.schedule (docs/torch_npu_format.md §5): 0 NONE .. 3 SAVE."""
    if step < skip_first:
        return 0
    step -= skip_first
    n = wait + warmup + active
    if repeat > 0 and step / n >= repeat:
        return 0
    m = step % n
    if m < wait:
        return 0
    if m < wait + warmup:
        return 1
    return 2 if m < n - 1 else 3


def run_schedule():
    """One *_ascend_pt per RECORD_AND_SAVE cycle, holding exactly its recorded steps."""
    d = tc.workdir()
    try:
        t = tc.trace_model(d, "schedule", ["--level", "1", "--schedule",
                                           "wait=1,warmup=1,active=2,repeat=2"],
                           ["npu_train", "--scenario", "dispatch-bound", "--steps", "10"], check,
                           runs=None)
        if t:
            out, runs = t.out, t.runs
            acts = [torch_npu_action(i, 1, 2, 1, 2, 0) for i in range(10)]
            cycles, cur = [], []
            for i, a in enumerate(acts):
                if a in (2, 3):
                    cur.append(i)
                if a == 3:
                    cycles.append(cur)
                    cur = []
            check(len(runs) == len(cycles), "schedule: %d directories for %d cycles" %
                  (len(runs), len(cycles)))
            for run_dir, steps in zip(runs, cycles):
                _, hdr, rows = tc.read_csv(os.path.join(out, run_dir, "ASCEND_PROFILER_OUTPUT",
                                                        "kernel_details.csv"))
                got = sorted(set(int(r[0]) for r in rows))
                check(got == steps, "schedule: %s has steps %s, expected %s" %
                      (run_dir, got, steps))
                events = json.load(open(os.path.join(out, run_dir, "ASCEND_PROFILER_OUTPUT",
                                                     "trace_view.json")))
                marks = sorted(int(e["name"].split("#")[1]) for e in events
                               if e.get("cat") == "cpu_op" and e["name"].startswith("ProfilerStep#"))
                check(marks == steps, "schedule: ProfilerStep#N %s, expected %s" % (marks, steps))
            print("schedule: %d cycles %s" % (len(cycles), cycles))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    for scenario, steps in SCENARIOS:
        run(scenario, steps)
    run_schedule()
    print("%d checks failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
