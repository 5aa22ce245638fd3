# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""CANN and driver calls carry "the arguments that matter (sizes, pointers,
stream, kind)" and their return codes (issue 3), checked against npu_model's
journal, not against ascbpf's reading of them.

`ascbpf trace --level 2 -- npu_train --scenario S` (multi-stream: async
copies, events, two streams; oom: failed allocations) on a private
npu-modeld.  The k-th call of a function on a thread in the capture (ENTER and
EXIT paired innermost first, in entry order) is the k-th `api` line of that
function and thread in the journal (npu_model/JOURNAL.md).  For every such
pair:

* the EXIT's return value, as the C function's int return type, is the
  journal's `ret` (every cann and driver layer function: aclError,
  aclnnStatus, rtError_t, drvError_t are all int);
* where the journal line has `size`, `ptr`, `stream`, `kind` or `event`, the
  ENTER's argument register of that parameter holds it; the positions are
  the prototypes in docs/cann_api.md §2 (ARGS below).

At least one call of each function in ARGS that the scenario makes must have
been compared, and some calls must have failed (oom), so a capture that lost
the arguments or the return codes cannot pass.
"""
import collections
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402

# journal key -> index of the argument register holding it (x86-64 SysV, ENTER args[0..5])
ARGS = {
    "aclrtMalloc": {"size": 1},			# (void **devPtr, size_t size, policy)
    "aclrtMallocHost": {"size": 1},		# (void **hostPtr, size_t size)
    "aclrtFree": {"ptr": 0},			# (void *devPtr)
    "aclrtFreeHost": {"ptr": 0},		# (void *hostPtr)
    "aclrtMemcpy": {"size": 3, "kind": 4},	# (dst, destMax, src, count, kind)
    "aclrtMemcpyAsync": {"size": 3, "kind": 4, "stream": 5},
    "aclrtMemset": {"ptr": 0, "size": 3},	# (devPtr, maxCount, value, count)
    "aclrtMemsetAsync": {"ptr": 0, "size": 3, "stream": 4},
    "aclrtSynchronizeStream": {"stream": 0},	# (aclrtStream stream)
    "aclrtRecordEvent": {"event": 0, "stream": 1},	# (aclrtEvent event, aclrtStream stream)
    "aclrtStreamWaitEvent": {"stream": 0, "event": 1},	# (aclrtStream stream, aclrtEvent event)
    "halMemAlloc": {"size": 1},			# (void **pp, unsigned long long size, flag)
    "halMemFree": {"ptr": 0},			# (void *pp)
}


def s32(v):
    v &= 0xffffffff
    return v - (1 << 32) if v >= 1 << 31 else v


def num(v):
    return int(v, 0)


def run(scenario, steps):
    d = tc.workdir()
    try:
        return check_run(d, scenario, steps)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def strict(cond, msg):
    tc.check(cond, msg)		# trace_model's check: this test stops at the first failure
    return True


def check_run(d, scenario, steps):
    t = tc.trace_model(d, scenario, ["--level", "2", "--no-convert"],
                       ["npu_train", "--scenario", scenario, "--steps", steps], strict, runs=0)
    recs = t.recs
    japi = [x for k, x in t.journal() if k == "api"]
    tc.check(tc.stats(recs)["drops"] == 0, "%s: drops" % scenario)
    probes = {p["probe_id"]: p for p in recs if p["type"] == "probe"}
    # ENTER/EXIT pairs per (tid, probe id), innermost first; then per (name, tid) by entry
    open_ = collections.defaultdict(list)
    got = collections.defaultdict(list)
    for x in recs:
        if x["type"] == "enter" and x["probe_id"] in probes:
            open_[(x["tid"], x["probe_id"])].append(x)
        elif x["type"] == "exit" and x["probe_id"] in probes:
            st = open_[(x["tid"], x["probe_id"])]
            tc.check(st, "%s: an EXIT without ENTER" % scenario)
            e = st.pop()
            got[(probes[x["probe_id"]]["symbol"], x["tid"])].append((e, x))
    for v in got.values():
        v.sort(key=lambda p: p[0]["ts_ns"])
    want = collections.defaultdict(list)
    for x in japi:
        if x["layer"] in ("cann", "driver"):
            want[(x["name"], int(x["tid"]))].append(x)
    probed = {p["symbol"] for p in probes.values()}
    compared = collections.Counter()
    rets = collections.Counter()
    for key, jl in want.items():
        name = key[0]
        if name not in probed:
            continue		# test_trace_npu_train lists what is not probed, and why
        cl = got.get(key, [])
        tc.check(len(cl) == len(jl), "%s: %s tid %d: journal %d calls, capture %d" %
                 (scenario, name, key[1], len(jl), len(cl)))
        for (e, x), jx in zip(cl, jl):
            tc.check(e["ts_ns"] <= int(jx["t0"]) and x["ts_ns"] >= int(jx["t1"]),
                     "%s: %s: the k-th calls do not enclose each other" % (scenario, name))
            tc.check(s32(x["ret"]) == int(jx["ret"]), "%s: %s at %s: ret %d, journal %s" %
                     (scenario, name, jx["t0"], s32(x["ret"]), jx["ret"]))
            rets["fail" if int(jx["ret"]) else "ok"] += 1
            for k, i in ARGS.get(name, {}).items():
                if k not in jx:
                    continue
                tc.check(e["args"][i] == num(jx[k]),
                         "%s: %s at %s: args[%d] = %#x, journal %s=%s" %
                         (scenario, name, jx["t0"], i, e["args"][i], k, jx[k]))
                compared[name] += 1
    made = {n for n, _ in want if n in ARGS and n in probed}
    tc.check(made, "%s: none of the argument-checked functions was called" % scenario)
    for n in made:
        tc.check(compared[n] > 0, "%s: %s called but no journal key to compare" % (scenario, n))
    print("%s: %d calls' return codes (%d failed), arguments compared: %s" %
          (scenario, sum(rets.values()), rets["fail"], dict(sorted(compared.items()))))
    return compared, rets


c1, _ = run("multi-stream", 2)
for n in ("aclrtMemcpyAsync", "aclrtRecordEvent", "aclrtStreamWaitEvent", "halMemAlloc"):
    tc.check(c1[n] > 0, "multi-stream: %s arguments never compared" % n)
_, r2 = run("oom", 2)
tc.check(r2["fail"] > 0, "oom: no failed call: the return codes were not exercised")
print("PASS")
