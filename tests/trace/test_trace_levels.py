# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""ascbpf trace's levels against npu_model's ground truth (npu_train, with
TASK_QUEUE_ENABLE on, so Enqueue and AsncExecFunc run on two threads).

Default level (0, as torch_npu's ProfilerLevel.Level0), scenario transdata
(aclnn and aclop ops, copies, events):
* CONFIG level=0 and one env.NAME CONFIG per profiler_metadata.json
  variable: the values the process was started with, "" for unset ones;
* only Level0 probes are attached (no plain API call sites), and the only
  ENTER/EXIT pairs are aten ops and AsncExecFunc (the Dequeue span);
* the QUEUE records are the journal's (side, correlation id, stream, type);
* every Enqueue of an EXECUTE_OPAPI_V2 slot is followed, among its thread's
  records, by an OPNAME (same tid, probe id, time) naming the journal's op of
  the enclosing OpCommand::RunOpApiV2; aclop slots (COMPILE_AND_EXECUTE) name
  a non-empty op type; other slots have none; no op name was lost (LOST
  "op names not read" is absent);
* the SQE records hold the journal's (stream, task id) of every task;
* no FUNCNAME (kernel names need the launch calls, which are Level1).
Level 1 (transdata) adds the AscendCL calls (aclnn*, aclrt*) but no rt*/hal*
call and no ioctl (aclop's rtKernelLaunch is in LAUNCH entry/return records
only, one pair per journal call, for its Node@launch); level 2 (baseline)
adds both (counts equal the journal's), with no LAUNCH record.  Level 0
without batched sends has no launch marks.  At both, FUNCNAME records: one per successful
aclrtBinaryGetFunction of the journal, with its kernel name and a non-zero
handle (one name per handle), and one per rtFunctionRegister."""
import collections
import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon, read_journal  # noqa: E402

ENV = {"ASCEND_GLOBAL_LOG_LEVEL": "3", "PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True",
       "HCCL_ALGO": "level0:NA;level1:ring"}
UNSET = ["HCCL_RDMA_TC", "HCCL_RDMA_SL", "ACLNN_CACHE_LIMIT", "HOST_CACHE_CAPACITY",
         "ASCEND_ENHANCE_ENABLE", "ASCEND_LAUNCH_BLOCKING"]
RUN_OP_API_V2 = ("_ZN6at_npu6native9OpCommand10RunOpApiV2ERKNSt7__cxx1112basic_stringIcSt11char_"
                 "traitsIcESaIcEEERKSt8functionIFivEEb")
ENQUEUE = "_ZN7c10_npu10Repository7EnqueueEPv"
DEQUEUE = "_ZN6at_npu6native12AsncExecFuncEPv"


def trace(level, scenario, steps):
    d = tc.workdir()
    with ModelDaemon(cards=1, journal=True) as m:
        jdir = os.path.join(d, "journal")
        os.mkdir(jdir)
        out = os.path.join(d, "out")
        args = ["trace"] + ([] if level is None else ["--level", str(level)])
        env = m.env(NPU_MODEL_JOURNAL=jdir, **ENV)
        for name in UNSET:
            env.pop(name, None)
        r = tc.run_ascbpf(args + ["-o", out, "--no-convert", "--", m.bin("npu_train"),
                                  "--scenario", scenario, "--steps", str(steps)],
                          env=env, timeout=240)
        tc.check(r.returncode == 0, "level %s: trace exited %d" % (level, r.returncode))
        m.proc.send_signal(signal.SIGTERM)	# flushes the daemon's journal
        m.proc.wait(timeout=30)
        caps = [f for f in os.listdir(out) if f.endswith(".cap")]
        tc.check(len(caps) == 1, "captures %s" % caps)
        recs = tc.records(os.path.join(out, caps[0]))
        j = read_journal(jdir, recs[0]["tgid"])
    st = tc.stats(recs)
    tc.check(st["drops"] == 0, "level %s: drops %s" % (level, st))
    return recs, j


# enum asc_probe_kind (user/discovery/probes.h), as ascbpf dump prints a probe's kind
KIND = {1: "call", 2: "opname_stdstr", 3: "opname_cstr", 4: "enqueue", 5: "dequeue",
        6: "sqe_send", 7: "mem_report", 8: "step", 9: "aten_op", 10: "funcname_get",
        11: "funcname_reg", 12: "autograd_eval", 13: "autograd_apply", 14: "launch_mark",
        15: "node_launch", 16: "binary_load", 17: "funcname_entry"}


def probes_of(recs):
    out = {}
    for p in recs:
        if p["type"] == "probe":
            out[p["probe_id"]] = dict(p, kind=KIND.get(p["kind"], p["kind"]))
    return out


def config(recs):
    out = {}
    for r in recs:
        if r["type"] == "config":
            k, _, v = r["text"].partition("=")
            out[k] = v
    return out


def check_level0(recs, j):
    cfg = config(recs)
    tc.check(cfg.get("level") == "0", "default level is %r, not 0" % cfg.get("level"))
    for name, value in ENV.items():
        tc.check(cfg.get("env." + name) == value, "env.%s = %r, started with %r" %
                 (name, cfg.get("env." + name), value))
    for name in UNSET:
        tc.check(cfg.get("env." + name) == "", "unset env.%s = %r" % (name, cfg.get("env." + name)))

    probes = probes_of(recs)
    kinds = collections.Counter(p["kind"] for p in probes.values())
    tc.check(kinds["call"] == 0, "level 0 attached %d plain call sites" % kinds["call"])
    for need in ("enqueue", "dequeue", "sqe_send", "aten_op"):
        tc.check(kinds[need] > 0, "level 0 lacks %s probes: %s" % (need, dict(kinds)))
    tc.check(not any(p["symbol"] == RUN_OP_API_V2 for p in probes.values()),
             "RunOpApiV2 probed at level 0")
    spans = collections.Counter(probes[r["probe_id"]]["kind"] for r in recs
                                if r["type"] in ("enter", "exit") and r["probe_id"] in probes)
    # framework ranges: aten ops, backward nodes (Engine::evaluate_function), Dequeue
    tc.check(set(spans) == {"aten_op", "autograd_eval", "dequeue"},
             "level 0 ENTER/EXIT of %s" % dict(spans))
    # no batched send here: no launch marks (they come only with batches)
    tc.check(not kinds["launch_mark"] and not any(r["type"] == "launch" for r in recs),
             "level 0 without batches has launch marks")
    ccalls, unpaired = tc.calls(recs)
    tc.check(not unpaired, "level 0: %d unpaired records" % len(unpaired))

    # queue records and the op names read from the slots
    jq = collections.Counter((x["side"], int(x["corr"]), int(x["stream"], 0), int(x["type"]))
                             for k, x in j if k == "queue")
    cq = collections.Counter(("enqueue" if q["side"] == 0 else "dequeue", q["correlation_id"],
                              q["stream"], q["param_type"]) for q in recs if q["type"] == "queue")
    tc.check(jq == cq, "queue records differ: %s / %s" %
             (list((jq - cq).items())[:3], list((cq - jq).items())[:3]))
    runop = [(int(x["tid"]), int(x["t0"]), int(x["t1"]), x["op"]) for k, x in j
             if k == "api" and x["name"] == RUN_OP_API_V2]
    op_of = {}
    for k, x in j:
        if k == "api" and x["name"] == ENQUEUE:
            tid, t0, t1 = int(x["tid"]), int(x["t0"]), int(x["t1"])
            outer = [op for rt, r0, r1, op in runop if rt == tid and r0 <= t0 and t1 <= r1]
            if outer:
                op_of[int(x["corr"])] = outer[-1]
    tc.check(op_of, "no RunOpApiV2 encloses an Enqueue in the journal")
    # names the BPF side could not read are counted (LOST), never silently missing
    name_lost = sum(x["value"] for x in recs if x["type"] == "lost" and
                    x["text"].startswith("op names not read"))
    tc.check(name_lost == 0, "level 0: %d op names not read (LOST)" % name_lost)
    # The OPNAME is the next record of the enqueuing thread: another thread's
    # record (the acl_thread's Dequeue on the other CPU) may be reserved in the
    # ring between the two, as the converter allows (user/analysis/correlate.c on_opname).
    next_of_tid, later = {}, {}
    for i in range(len(recs) - 1, -1, -1):
        tid = recs[i].get("tid")
        next_of_tid[i] = later.get(tid, {})
        later[tid] = recs[i]
    n_v2 = n_aclop = 0
    for i, r in enumerate(recs):
        if r["type"] != "queue" or r["side"] != 0:
            continue
        nxt = next_of_tid[i]
        named = (nxt.get("type") == "opname" and nxt["tid"] == r["tid"] and
                 nxt["probe_id"] == r["probe_id"] and nxt["ts_ns"] == r["ts_ns"])
        if r["param_type"] == 8:
            tc.check(named, "EXECUTE_OPAPI_V2 slot %d has no OPNAME" % r["correlation_id"])
            want = op_of.get(r["correlation_id"])
            tc.check(want is not None, "slot %d: no journal op" % r["correlation_id"])
            tc.check(nxt["name"] == want, "slot %d: OPNAME %r, journal %r" %
                     (r["correlation_id"], nxt["name"], want))
            n_v2 += 1
        elif r["param_type"] == 1:
            tc.check(named and nxt["name"], "aclop slot %d has no op type" % r["correlation_id"])
            n_aclop += 1
        else:
            tc.check(not named, "slot %d of type %d has an OPNAME" %
                     (r["correlation_id"], r["param_type"]))
    tc.check(n_v2 > 0 and n_aclop > 0, "%d opapi and %d aclop slots" % (n_v2, n_aclop))

    # submissions
    jt = collections.Counter((int(x["stream"]), int(x["task"])) for k, x in j if k == "task")
    ct = collections.Counter()
    for s in (r for r in recs if r["type"] == "sqe"):
        for h in s["sqe"][:s["nr_kept"]]:
            ct[(h["stream_id"], h["task_id"])] += 1
    tc.check(jt == ct, "SQE tasks differ: %s / %s" %
             (list((jt - ct).items())[:3], list((ct - jt).items())[:3]))

    tc.check(not any(r["type"] == "funcname" for r in recs), "FUNCNAME at level 0")
    print("level 0: %d queue records, %d opapi + %d aclop names, %d tasks" %
          (sum(cq.values()), n_v2, n_aclop, sum(ct.values())))


def check_funcnames(level, recs, j):
    """FUNCNAME records against the journal's registration calls."""
    probes = probes_of(recs)
    get = [x["op"] for k, x in j if k == "api" and x["name"] == "aclrtBinaryGetFunction" and
           int(x["ret"]) == 0]
    reg = [x for k, x in j if k == "api" and x["name"] == "rtFunctionRegister"]
    fget = [r for r in recs if r["type"] == "funcname" and
            probes[r["probe_id"]]["kind"] == "funcname_get"]
    freg = [r for r in recs if r["type"] == "funcname" and
            probes[r["probe_id"]]["kind"] == "funcname_reg"]
    tc.check(get and sorted(get) == sorted(f["name"] for f in fget),
             "aclrtBinaryGetFunction names: journal %s, capture %s" %
             (sorted(get)[:5], sorted(f["name"] for f in fget)[:5]))
    tc.check(len(freg) == len(reg), "rtFunctionRegister: journal %d, capture %d" %
             (len(reg), len(freg)))
    for f in fget + freg:
        tc.check(f["handle"] != 0 and f["name"], "bad FUNCNAME %s" % f)
    by_handle = collections.defaultdict(set)
    for f in fget:
        by_handle[f["handle"]].add(f["name"])
    tc.check(all(len(v) == 1 for v in by_handle.values()), "one handle, two names")
    # CANN 8.x/9.x opbase: aclrtBinaryGetFunctionByEntry on a binary from a file names the
    # first kernel of each aclnn op; the journal's rtsFuncGetByEntry says which kernel
    by_entry = [x["op"] for k, x in j if k == "api" and x["name"] == "rtsFuncGetByEntry" and
                int(x["ret"]) == 0]
    fent = [r for r in recs if r["type"] == "funcname" and
            probes[r["probe_id"]]["kind"] == "funcname_entry"]
    tc.check(by_entry and sorted(by_entry) == sorted(f["name"] for f in fent),
             "aclrtBinaryGetFunctionByEntry names: journal %s, capture %s" %
             (sorted(by_entry)[:5], sorted(f["name"] for f in fent)[:5]))
    tc.check(len(by_entry) > len(get), "ByEntry %d, by name %d" % (len(by_entry), len(get)))
    fget += fent
    # the launches carry those handles (arg0): the converter names kernels by them
    launches = [r for r in recs if r["type"] == "enter" and r["probe_id"] in probes and
                probes[r["probe_id"]]["symbol"].startswith("aclrtLaunchKernel")]
    tc.check(launches, "level %d: no aclrtLaunchKernel* call" % level)
    names = {f["handle"] for f in fget + freg}
    unnamed = [r for r in launches if r["args"][0] not in names]
    tc.check(not unnamed, "level %d: %d of %d launches have a handle without FUNCNAME" %
             (level, len(unnamed), len(launches)))
    print("level %d: %d + %d kernel names" % (level, len(fget), len(freg)))


def api_counts(recs, j):
    probes = probes_of(recs)
    ccalls, unpaired = tc.calls(recs)
    tc.check(not unpaired, "%d unpaired records" % len(unpaired))
    cn = collections.Counter(c[0] for c in ccalls)
    jn = collections.Counter(x["name"] for k, x in j if k == "api")
    return probes, cn, jn


def check_level(level, recs, j):
    probes, cn, jn = api_counts(recs, j)
    cfg = config(recs)
    tc.check(cfg.get("level") == str(level), "level config %r" % cfg.get("level"))
    acl = [n for n in cn if n.startswith(("aclnn", "aclrt"))]
    rt = [n for n in cn if n.startswith(("rt", "hal"))]
    tc.check(acl, "level %d: no AscendCL calls" % level)
    for n in acl:
        tc.check(cn[n] == jn[n], "level %d: %s journal %d, capture %d" % (level, n, jn[n], cn[n]))
    nioctl = sum(1 for r in recs if r["type"] == "ioctl")
    # aclop and AI CPU kernels' runtime launch calls: LAUNCH records (Node@launch) at
    # Level1, a call at Level2
    nodes = {i for i, p in probes.items() if p["kind"] == "node_launch"}
    launch = [r for r in recs if r["type"] == "launch"]
    if level == 1:
        syms = sorted(probes[i]["symbol"] for i in nodes)
        tc.check(set(syms) <= NODE_CALLS and "rtKernelLaunchWithFlagV2" in syms,
                 "level 1 node launch probes %s" % syms)
        njl = sum(jn[n] for n in NODE_CALLS)
        tc.check(all(r["probe_id"] in nodes for r in launch) and
                 sum(r["side"] == 0 for r in launch) == sum(r["side"] == 1 for r in launch) ==
                 njl > 0,
                 "level 1: %d LAUNCH records, journal %d node launch calls" % (len(launch), njl))
    else:
        tc.check(not nodes and not launch, "level 2: node launches %d, LAUNCH records %d" %
                 (len(nodes), len(launch)))
    if level == 1:
        tc.check(not rt, "level 1 has runtime/driver calls %s" % rt[:5])
        tc.check(nioctl == 0, "level 1 has %d ioctls" % nioctl)
    else:
        tc.check(rt and nioctl, "level 2: %d rt/hal functions, %d ioctls" % (len(rt), nioctl))
        for n in rt:
            if n in jn:
                tc.check(cn[n] == jn[n], "level 2: %s journal %d, capture %d" %
                         (n, jn[n], cn[n]))
        jio = sum(1 for k, x in j if k == "ioctl")
        tc.check(jio == 0 or nioctl >= 1, "no ioctls")
    print("level %d: %d AscendCL functions, %d rt/hal functions, %d ioctls" %
          (level, len(acl), len(rt), nioctl))


# The runtime calls traced as a Node@launch at Level1 (user/discovery/probes.c).
NODE_CALLS = {"rtKernelLaunch", "rtKernelLaunchWithFlagV2", "rtKernelLaunchWithHandleV2",
              "rtCpuKernelLaunchWithFlag", "rtAicpuKernelLaunchExWithArgs"}


def main():
    recs, j = trace(None, "transdata", 2)
    check_level0(recs, j)
    for level, scenario in ((1, "transdata"), (2, "baseline")):
        recs, j = trace(level, scenario, 2)
        check_level(level, recs, j)
        check_funcnames(level, recs, j)
    print("PASS")


if __name__ == "__main__":
    main()
