#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""ASC_REC_LAUNCH end to end: real traces of npu_train on a private
npu-modeld, the converted output checked against npu_model's journal (the
ground truth, npu_model/JOURNAL.md).

Level0 + batched submissions (launch-storm, 32 SQEs per halSqTaskSend; and
multi-stream with NPU_MODEL_SQE_BATCH=8: kernels, copies, event records and
waits on two streams):
* the tracer attaches the launch marks once it sees the first batched send:
  a CONFIG level0.launch_marks_ns=T0 (the attach began) and launch_mark
  PROBE records (the last written at T1, after every site was attached);
  the marks emit LAUNCH entry records only (no ENTER/EXIT), and the output
  has no CANN process and no AscendCL@ / Runtime@ event (Level0);
* every kernel of a batch (the journal's halSqTaskSend: stream, first task,
  sqe_num) whose launches (the journal's call among the marked runtime calls
  holding each task of the batch, copies and events too: its t0) all
  began after T1 joins the journal's aten op instance (task -> AsncExecFunc
  -> dequeue corr -> enqueue -> at::_ops call): its torch_to_npu flow starts
  at a cpu_op of that op's name whose span holds the journal call; every
  kernel of a batch with a launch before T0 joins no op; a batch straddling
  [T0, T1] joins no op or the right one, never another; the kernels without
  op are exactly the tasks convert counts (launch-storm: kernels only; with
  copies and events, at most that count); kernel_details has every kernel
  with the journal's step;
* baseline (no batching) at Level0 attaches nothing new: no launch_mark
  probe, no LAUNCH record, no level0.launch_marks CONFIG.
Level1 node launches (transdata: aclnn kernels through aclrtLaunchKernel*,
aclop kernels through rtKernelLaunchWithFlagV2, CANN 8.x/9.x's single-op launch):
* one Node@launch per compute kernel launched in the recorded steps, in the
  CANN process on the launching thread, holding the journal's outermost
  launch call (aclrtLaunchKernel* or a NODE_CALLS one) around the task, with
  item_id the kernel's name and its HostToDevice s inside it; the aclop
  kernels' launch is in the capture as LAUNCH records only (no rt* ENTER /
  EXIT) and there is no Runtime@ event and no runtime api_statistic row."""
import bisect
import collections
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from checks import check, failures  # noqa: E402

COMPUTE = {"0", "1", "2"}	# STARS SQE types AI_CORE, AI_CPU, AI_VECTOR_CORE
ASYNC_EXEC = "_ZN6at_npu6native12AsncExecFuncEPv"
LAUNCH = "rtsLaunchKernelWithHostArgs"
# the runtime calls that queue one task each (user/discovery/probes.c asc_probe_launch_marks)
MARKED = {LAUNCH, "rtKernelLaunch", "rtEventRecord", "rtStreamWaitEvent", "rtMemcpyAsync",
          "rtMemsetAsync", "rtKernelLaunchWithFlagV2", "rtKernelLaunchWithHandleV2",
          "rtLaunchKernelByFuncHandleV3", "rtsLaunchKernelWithConfig", "rtsLaunchKernelWithDevArgs",
          "rtCpuKernelLaunchWithFlag", "rtAicpuKernelLaunchExWithArgs", "rtKernelLaunchEx",
          "rtMemcpyAsyncEx"}
# the runtime calls traced as a Node@launch at Level1 (aclop and AI CPU kernels)
NODE_CALLS = {"rtKernelLaunch", "rtKernelLaunchWithFlagV2", "rtKernelLaunchWithHandleV2",
              "rtCpuKernelLaunchWithFlag", "rtAicpuKernelLaunchExWithArgs"}
ACLOP_LAUNCH = "rtKernelLaunchWithFlagV2"

TOL = tc.TOLERANCE_MAX_NS

def us_ns(s):
    a, b = s.split(".")
    return int(a) * 1000 + int(b)


def same_op(sym, name):
    """Is the converted op name torch's name of the journal's at::_ops symbol?"""
    p = "_ZN2at4_ops"
    if not sym.startswith(p):
        return False
    j = len(p)
    while sym[j].isdigit():
        j += 1
    st = sym[j:j + int(sym[len(p):j])]
    return name.startswith("aten::") and st.startswith(name[6:])


def trace(scenario, level, d, env=None, steps=2):
    """(records, journal lines, output dir, convert's stderr) of one traced run, or None."""
    t = tc.trace_model(d, "%s L%d" % (scenario, level), ["--level", str(level)],
                       ["npu_train", "--scenario", scenario, "--steps", str(steps)], check,
                       env=env)
    return (t.recs, t.journal(), t.po, t.r.stderr) if t else None


def wall_off(recs):
    clock = next(x for x in recs if x["type"] == "clock")
    return clock["realtime_ns"] - clock["ts_ns"]


def config(recs):
    out = {}
    for r in recs:
        if r["type"] == "config" and "=" in r["text"]:
            k, v = r["text"].split("=", 1)
            out[k] = v
    return out


def hardware_kernels(events, pid):
    """(stream, task) -> Ascend Hardware X events in time order."""
    hw = (pid << 10 | 13 << 5) & 0xffffffff
    kx = collections.defaultdict(list)
    for e in sorted((e for e in events if e.get("ph") == "X" and e["pid"] == hw),
                    key=lambda e: us_ns(e["ts"])):
        kx[(int(e["args"]["Stream Id"]), int(e["args"]["Task Id"]))].append(e)
    return kx


def submitted_at(jl):
    """(stream, task) -> when the task reached the device: the t0 of the halSqTaskSend
    carrying it (a batch is sent after its launches; the converter steps a kernel by it)."""
    out = {}
    for k, x in jl:
        if k == "api" and x["name"] == "halSqTaskSend":
            for j in range(int(x["sqe_num"])):
                out[(int(x["stream"]), (int(x["task"]) + j) & 0xffff)] = int(x["t0"])
    return out


def recorded_tasks(jl):
    """The starts of the steps (step 0 from the start, then the journal's step lines,
    each at an optimizer step's return) and the compute tasks, each with the time its
    batch was sent (_sub: a task launched in an optimizer step may be sent after it
    returned, in the next step)."""
    steps = [0] + sorted(int(x["t"]) for k, x in jl if k == "step")
    sub = submitted_at(jl)
    tasks = [x for k, x in jl if k == "task" and x["sqe_type"] in COMPUTE]
    for x in tasks:
        x["_sub"] = sub.get((int(x["stream"]), int(x["task"])), int(x["t"]))
    return steps, sorted(tasks, key=lambda x: int(x["t"]))


def check_level0_storm(recs, jl, po, err, scenario="launch-storm", kernels=40000):
    S = "%s L0: " % scenario
    off = wall_off(recs)
    pid = recs[0]["tgid"]
    probes = {r["probe_id"]: r for r in recs if r["type"] == "probe"}
    marks = {i for i, r in probes.items() if r["kind_name"] == "launch_mark"}
    cfg = config(recs)
    if not check(marks and "level0.launch_marks_ns" in cfg,
                 S + "launch marks attached (%d probes, config %s)" %
                 (len(marks), cfg.get("level0.launch_marks_ns"))):
        return
    t0_on = int(cfg["level0.launch_marks_ns"])
    t1_on = max(probes[i]["ts_ns"] for i in marks)
    check(t0_on <= t1_on, S + "marks attached after the config time")
    check({probes[i]["symbol"] for i in marks} >= {LAUNCH, ACLOP_LAUNCH, "rtEventRecord"},
          S + "mark sites %s" % sorted(probes[i]["symbol"] for i in marks))
    launches = [r for r in recs if r["type"] == "launch"]
    check(launches and all(r["probe_id"] in marks and r["side"] == 0 for r in launches),
          S + "LAUNCH records: %d, all entries of mark probes" % len(launches))
    check(not any(r["type"] in ("enter", "exit") and r["probe_id"] in marks for r in recs),
          S + "no ENTER/EXIT of a mark probe")

    text = open(os.path.join(po, "trace_view.json"), encoding="utf-8").read()
    events = json.loads(text)
    procs = {e["args"]["name"] for e in events if e.get("ph") == "M" and
             e["name"] == "process_name"}
    check("CANN" not in procs and
          not any(e.get("name", "").startswith(("AscendCL@", "Runtime@")) for e in events),
          S + "no CANN events at Level0 (%s)" % sorted(procs))

    steps, tasks = recorded_tasks(jl)
    launch_calls = tc.Calls(jl, lambda n: n in MARKED)
    execs = tc.Calls(jl, lambda n: n == ASYNC_EXEC)
    atens = tc.Calls(jl, lambda n: n.startswith("_ZN2at4_ops"))
    deq = {x["corr"]: x for k, x in jl if k == "queue" and x["side"] == "dequeue"}
    enq = {x["corr"]: x for k, x in jl if k == "queue" and x["side"] == "enqueue"}
    # the batch of each task: the halSqTaskSend whose (stream, first task, sqe_num) covers it
    sends = [x for k, x in jl if k == "api" and x["name"] == "halSqTaskSend"]
    send_of = {}
    for i, x in enumerate(sends):
        for j in range(int(x["sqe_num"])):
            send_of[(int(x["stream"]), (int(x["task"]) + j) & 0xffff)] = i
    kx = hardware_kernels(events, pid)
    cpu = {(e["tid"], e["ts"]): e for e in events if e.get("cat") == "cpu_op"}
    t2n = {e["id"]: e for e in events if e.get("cat") == "async_npu" and e["ph"] == "s"}

    rows = []	# (task, its batch, the launch's journal t0, its kernel event)
    seen = collections.Counter()
    for x in tasks:
        key = (int(x["stream"]), int(x["task"]))
        lst = kx.get(key, [])
        i = seen[key]
        seen[key] += 1
        if not check(i < len(lst), S + "task %s not in the trace" % (key,)):
            continue
        lc = launch_calls.holding(int(x["tid"]), int(x["t"]))
        if not check(lc and key in send_of, S + "task %s: journal launch and send" % (key,)):
            continue
        rows.append((x, send_of[key], lc[0]["_t0"], lst[i]))
    check(len(rows) == len(tasks) and (kernels is None or len(tasks) == kernels),
          S + "%d kernels, journal %d" % (len(rows), len(tasks)))
    # a batch's launches: of every task it carries (copies and events too); a task
    # without a journal launch call makes its batch's time unknown (never "after")
    first_launch = collections.defaultdict(lambda: 1 << 62)
    last_launch = collections.defaultdict(int)
    unknown = set()
    for k, x in jl:
        if k != "task" or (int(x["stream"]), int(x["task"])) not in send_of:
            continue
        b = send_of[(int(x["stream"]), int(x["task"]))]
        lc = launch_calls.holding(int(x["tid"]), int(x["t"]))
        if not lc:
            unknown.add(b)
            continue
        first_launch[b] = min(first_launch[b], lc[0]["_t0"])
        last_launch[b] = max(last_launch[b], lc[0]["_t0"])

    after = before = straddle = joined = unjoined = 0
    for x, b, lt0, e in rows:
        s = t2n.get(int(e["ts"].replace(".", "")))
        op = cpu.get((s["tid"], s["ts"])) if s else None
        unjoined += op is None
        tid, t = int(x["tid"]), int(x["t"])
        ex = execs.holding(tid, t)
        q = deq.get(ex[-1]["corr"]) if ex else None
        nq = enq.get(q["corr"]) if q else None
        aten = atens.holding(int(nq["tid"]), int(nq["t"])) if nq else []
        right = False
        if op is not None and aten:
            j = aten[-1]
            a0 = us_ns(op["ts"]) - off
            a1 = a0 + round(op["dur"] * 1000)
            right = (same_op(j["name"], op["name"]) and a0 <= j["_t0"] and j["_t1"] <= a1 and
                     j["_t0"] - a0 <= TOL)
        if first_launch[b] > t1_on and b not in unknown:
            after += 1
            joined += check(right, S + "kernel %s/%s (batch %d, launched after the marks): "
                            "op %s, journal %s" % (x["stream"], x["task"], b,
                                                   op and op["name"], aten and aten[-1]["op"]))
        elif last_launch[b] < t0_on and b not in unknown:
            before += 1
            check(op is None, S + "kernel %s/%s (batch %d, launched before the marks) joins "
                  "no op: %s" % (x["stream"], x["task"], b, op and op["name"]))
        else:
            straddle += 1
            check(op is None or right, S + "kernel %s/%s (batch %d, straddling the switch-on) "
                  "joins no op or its own" % (x["stream"], x["task"], b))
    counted = 0
    for line in err.splitlines():
        if "kernels of batched submissions" in line:
            counted = int(line.split("convert: ")[1].split()[0])
    # convert counts every task of a batch without op; copies and events have no row here
    check(counted == unjoined if kernels else counted >= unjoined,
          S + "convert counts %d tasks without op, %d kernels in the output" %
          (counted, unjoined))
    # how many batches precede the switch-on depends on the machine's load (1..71 batches
    # seen here): that the marks came on at all is asserted, not how soon
    check(after > 0, S + "kernels launched after the marks: %d of %d" % (after, len(rows)))

    _, hdr, krows = tc.read_csv(os.path.join(po, "kernel_details.csv"))
    # the journal's step line is written inside the optimizer step, ascbpf's boundary is
    # its return probe: a batch another thread sends between the two is in either step,
    # so a kernel sent near a boundary counts in either (as in test_convert_npu_train)
    def step_of(t):
        i = bisect.bisect_right(steps, t) - 1
        near = i + 1 < len(steps) and steps[i + 1] - t <= tc.TOLERANCE_TIGHT_NS
        near = near or (i > 0 and t - steps[i] <= tc.TOLERANCE_TIGHT_NS)
        return i, near
    # a Level0 row has no stream or task id: its start time (as in its trace_view event)
    # names the kernel
    want = {e["ts"]: step_of(x["_sub"]) for x, b, lt0, e in rows}
    col = {h: k for k, h in enumerate(hdr)}
    got = [(r[col["Start Time(us)"]].strip(), int(r[col["Step Id"]])) for r in krows]
    wrong = [(k, st, want.get(k)) for k, st in got
             if k not in want or (st != want[k][0] and not
                                  (want[k][1] and abs(st - want[k][0]) == 1))]
    check(len(got) == len(want) and not wrong,
          S + "kernel_details: %d rows with the journal's steps (%d), %d near a boundary; "
          "wrong %s" % (len(krows), len(rows), sum(v[1] for v in want.values()), wrong[:4]))
    print(S + "%d kernels: %d in batches launched after the marks (all joined), "
          "%d before (none joined), %d straddling; %d without op, counted %d" %
          (len(rows), after, before, straddle, unjoined, counted))


def check_level0_baseline(recs):
    S = "baseline L0: "
    kinds = collections.Counter(r["kind_name"] for r in recs if r["type"] == "probe")
    check(kinds and "launch_mark" not in kinds and "node_launch" not in kinds,
          S + "probe kinds %s" % dict(kinds))
    check(not any(r["type"] == "launch" for r in recs), S + "no LAUNCH record")
    check("level0.launch_marks_ns" not in config(recs), S + "no launch-marks config")
    check(not any(r["type"] == "sqe" and r["sqe_num"] > 1 for r in recs),
          S + "the scenario does not batch")
    print("baseline L0: %d probes, no launch marks" % sum(kinds.values()))


def check_level1_nodes(recs, jl, po):
    S = "transdata L1: "
    off = wall_off(recs)
    pid = recs[0]["tgid"]
    probes = {r["probe_id"]: r for r in recs if r["type"] == "probe"}
    node_probes = {i for i, r in probes.items() if r["kind_name"] == "node_launch"}
    check(ACLOP_LAUNCH in {probes[i]["symbol"] for i in node_probes} and
          {probes[i]["symbol"] for i in node_probes} <= NODE_CALLS,
          S + "node launch probes %s" % sorted(probes[i]["symbol"] for i in node_probes))
    check(not any(r["type"] in ("enter", "exit") and
                  probes.get(r["probe_id"], {}).get("symbol", "").startswith("rt")
                  for r in recs), S + "no rt* ENTER/EXIT at Level1")
    nl = [r for r in recs if r["type"] == "launch" and r["probe_id"] in node_probes]
    check(nl and sum(r["side"] == 0 for r in nl) == sum(r["side"] == 1 for r in nl),
          S + "LAUNCH entry/return pairs (%d records)" % len(nl))

    events = json.loads(open(os.path.join(po, "trace_view.json"), encoding="utf-8").read())
    cann = (pid << 10 | 7 << 5) & 0xffffffff
    check(not any(e.get("name", "").startswith("Runtime@") for e in events),
          S + "no Runtime@ event")
    _, hdr, rows = tc.read_csv(os.path.join(po, "api_statistic.csv"))
    check(rows and hdr[:2] == ["Level", "API Name"] and
          not any(r[0] == "runtime" or r[1].startswith("rt") for r in rows),
          S + "no runtime api_statistic row")
    nodes = {e["args"]["connection_id"]: e for e in events if e.get("name") == "Node@launch"}
    check(all(e["pid"] == cann for e in nodes.values()), S + "Node@launch in the CANN process")
    h2d = {e["id"]: e for e in events if e.get("cat") == "HostToDevice" and e["ph"] == "s"}
    steps, tasks = recorded_tasks(jl)
    launchers = tc.Calls(jl, lambda n: n.startswith("aclrtLaunchKernel") or n in NODE_CALLS)
    kx = hardware_kernels(events, pid)
    seen = collections.Counter()
    n_launch = n_ok = n_aclop = 0
    for x in tasks:
        key = (int(x["stream"]), int(x["task"]))
        lst = kx.get(key, [])
        i = seen[key]
        seen[key] += 1
        if not check(i < len(lst), S + "task %s not in the trace" % (key,)):
            continue
        e = lst[i]
        tid, t = int(x["tid"]), int(x["t"])
        lc = launchers.holding(tid, t)
        if not check(lc, S + "task %s has a journal launch call" % (key,)):
            continue
        n_launch += 1
        n_aclop += lc[0]["name"] == ACLOP_LAUNCH
        node = nodes.get(e["args"]["connection_id"])
        if not check(node is not None, S + "kernel %s (%s, via %s) has a Node@launch" %
                     (key, e["name"], lc[0]["name"])):
            continue
        n0 = us_ns(node["ts"]) - off
        n1 = n0 + round(node["dur"] * 1000)
        hs = h2d.get(str(e["args"]["connection_id"]))
        n_ok += check(node["tid"] == tid and n0 <= lc[0]["_t0"] and lc[0]["_t1"] <= n1 and
                      lc[0]["_t0"] - n0 <= TOL and n0 <= t <= n1 and
                      node["args"]["item_id"] == e["name"] == x["kernel"] and
                      hs is not None and hs["tid"] == tid and
                      n0 <= us_ns(hs["ts"]) - off <= n1,
                      S + "kernel %s: Node@launch %s+%s us holds its %s, its s inside" %
                      (key, node["ts"], node["dur"], lc[0]["name"]))
    check(len(nodes) == n_launch == n_ok == len(tasks) and n_aclop > 0,
          S + "Node@launch %d, kernels launched %d (%d by %s), %d checked" %
          (len(nodes), n_launch, n_aclop, ACLOP_LAUNCH, n_ok))
    print("transdata L1: %d Node@launch = kernels launched (%d aclop through %s)" %
          (len(nodes), n_aclop, ACLOP_LAUNCH))


def main():
    # multi-stream batched 8 per send: kernels, copies and events on two streams.  The marks
    # attach when ascbpf has seen the first batched send: 2 steps of multi-stream (28 ms) can
    # end before that on a loaded machine, so it runs 40 steps (about 0.5 s).
    for scenario, level, fn, env, steps in (
            ("launch-storm", 0, check_level0_storm, None, 2),
            ("multi-stream", 0, check_level0_storm, {"NPU_MODEL_SQE_BATCH": "8"}, 40),
            ("baseline", 0, check_level0_baseline, None, 2),
            ("transdata", 1, check_level1_nodes, None, 2)):
        d = tc.workdir()
        try:
            got = trace(scenario, level, d, env, steps)
            if not got:
                continue
            recs, jl, po, err = got
            if fn is check_level0_storm and env:
                fn(recs, jl, po, err, scenario, None)
            elif fn is check_level0_storm:
                fn(recs, jl, po, err)
            elif fn is check_level0_baseline:
                fn(recs)
            else:
                fn(recs, jl, po)
        finally:
            shutil.rmtree(d, ignore_errors=True)
    print("%d checks failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
