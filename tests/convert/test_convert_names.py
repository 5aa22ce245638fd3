#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Kernel names and the Level0 join of `ascbpf convert`, on synthetic captures
# (tests/lib/mkcapture, no BPF):
#  - --funcnames: FUNCNAME records name the function handles that
#    rtKernelLaunch passes (arg0); kernel_details Name and the Ascend Hardware
#    event name are the real kernel names (trans_TransData_0), Type stays the
#    op type (TransData); a kernel whose handle was never named keeps the
#    API name (aclnnMm).  Expected names come from mkcapture's truth file.
#  - --level0: no CANN call records at all (what --level 0 traces) and the op
#    name as an OPNAME after the Enqueue's QUEUE record: kernels still join to
#    their aten ops through the Dequeue span (correlation id -> Enqueue ->
#    enclosing op), operator_details device durations equal the truth's
#    kernel durations, torch_to_npu flows start at the op, no op/api
#    statistics, no CANN events, and the kernels are named by the queue's op.
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from checks import check, us_str  # noqa: E402
from golden import ASCBPF, LEVEL0_KD, make, read_csv, run, run_tests, runs_in  # noqa: E402


def convert(tmp, cap, name, *opts):
    out = os.path.join(tmp, name)
    run([ASCBPF, "convert", cap, "-o", out] + list(opts))
    runs = runs_in(out)
    check(len(runs) == 1, "%s: one run directory (%s)" % (name, runs))
    return os.path.join(out, runs[0], "ASCEND_PROFILER_OUTPUT")


def load_trace(po):
    with open(os.path.join(po, "trace_view.json"), encoding="utf-8") as f:
        return json.load(f)


def hw_events(events):
    hw = [e["pid"] for e in events if e.get("ph") == "M" and e["name"] == "process_name" and
          e["args"]["name"] == "Ascend Hardware"]
    return [e for e in events if e.get("ph") == "X" and e["pid"] in hw]


def test_funcnames(tmp):
    cap, truth = make(tmp, "fn", "--steps", "3", "--ops", "6", "--funcnames")
    _, plain = make(tmp, "plain", "--steps", "3", "--ops", "6")
    po = convert(tmp, cap, "out_fn", "--level", "1")
    _, rows = read_csv(os.path.join(po, "kernel_details.csv"))
    h = rows[0]
    got = [(r[h.index("Name")], r[h.index("Type")]) for r in rows[1:]]
    want = [tuple(truth["names"][k["name_index"]][:2]) for k in truth["kernels"]]
    check(got == want, "kernel_details Name/Type with FUNCNAME: %s, want %s" % (got[:3], want[:3]))
    check(("trans_TransData_0", "TransData") in got, "aclop kernel by its registered name")
    check(("Add_4a1c9e0b_mix_aiv", "Add") in got, "aclnn kernel by its function's name")
    check(("aclnnMm", "Mm") in got, "a handle never named keeps the API name")
    hw = hw_events(load_trace(po))
    check([e["name"] for e in hw] == [n for n, _ in want], "Ascend Hardware events named alike")
    # without FUNCNAME records, the fallback: the launching API / aclop op type
    po = convert(tmp, cap.replace("fn.ascb", "plain.ascb"), "out_plain", "--level", "1")
    _, rows = read_csv(os.path.join(po, "kernel_details.csv"))
    got = [(r[h.index("Name")], r[h.index("Type")]) for r in rows[1:]]
    want = [tuple(plain["names"][k["name_index"]][:2]) for k in plain["kernels"]]
    check(got == want, "fallback names without FUNCNAME: %s" % got[:3])
    check(("aclnnAdd", "Add") in got and ("TransData", "TransData") in got, "fallback names")


def test_level0_dequeue_join(tmp):
    # the truth of the plain capture names kernels by the queue's op (no launch is probed)
    cap, truth = make(tmp, "l0", "--steps", "3", "--ops", "6", "--level0", "--funcnames")
    _, plain = make(tmp, "l0plain", "--steps", "3", "--ops", "6", "--level0")
    p = subprocess.run([ASCBPF, "dump", "--json", cap], stdout=subprocess.PIPE, check=True)
    recs = [json.loads(line) for line in p.stdout.decode().splitlines()]
    probes = {r["probe_id"]: r for r in recs if r["type"] == "probe"}
    cann = [r for r in recs if r["type"] in ("enter", "exit") and probes[r["probe_id"]]["layer"] == 2]
    check(not cann, "the Level0 capture has no CANN call records")
    po = convert(tmp, cap, "out_l0")		# level as traced: 0
    check(not os.path.exists(os.path.join(po, "op_statistic.csv")) and
          not os.path.exists(os.path.join(po, "api_statistic.csv")), "Level0: no statistics")
    _, rows = read_csv(os.path.join(po, "kernel_details.csv"))
    check(",".join(rows[0]) == LEVEL0_KD, "Level0 kernel_details header %s" % rows[0])
    h = rows[0]
    got = [(r[h.index("Name")], r[h.index("Type")], r[h.index("Step Id")]) for r in rows[1:]]
    want = [tuple(plain["names"][k["name_index"]][:2]) + (str(k["step"]),)
            for k in plain["kernels"]]
    check(got == want, "Level0 kernels named by the Enqueue OPNAME: %s, want %s" %
          (got[:3], want[:3]))
    # device durations through Dequeue -> correlation id -> Enqueue -> aten op
    _, od = read_csv(os.path.join(po, "operator_details.csv"))
    ops = [(r[0], r[5]) for r in od[1:]]
    want = [(truth["names"][k["name_index"]][2], repr((k["end"] - k["start"]) / 1000))
            for k in truth["kernels"]]
    check(ops == want, "Level0 operator_details device self durations: %s, want %s" %
          (ops[:3], want[:3]))
    events = load_trace(po)
    check(not any(e.get("name", "").startswith(("AscendCL@", "Runtime@")) for e in events),
          "Level0: no CANN API events")
    procs = [e["args"]["name"] for e in events if e.get("ph") == "M" and
             e["name"] == "process_name"]
    check("CANN" not in procs, "Level0: no CANN process")
    cpu = {(e["tid"], e["ts"]): e["name"] for e in events if e.get("cat") == "cpu_op"}
    starts = [e for e in events if e.get("cat") == "async_npu" and e["ph"] == "s"]
    ends = {e["id"]: e for e in events if e.get("cat") == "async_npu" and e["ph"] == "f"}
    check(len(starts) == len(truth["kernels"]), "one torch_to_npu flow per kernel")
    for k in truth["kernels"]:
        kid = int(us_str(k["start"]).replace(".", ""))
        s = [e for e in starts if e["id"] == kid]
        if not check(len(s) == 1 and kid in ends, "flow of the kernel at %d" % k["start"]):
            continue
        check(cpu.get((s[0]["tid"], s[0]["ts"])) == truth["names"][k["name_index"]][2],
              "flow starts at the aten op %s" % truth["names"][k["name_index"]][2])
        check(ends[kid]["ts"] == us_str(k["start"]), "flow ends at the kernel")
    enq = [e["name"] for e in events if e.get("cat") == "enqueue"]
    check(enq and all(n.startswith("Enqueue@") and len(n) > 8 for n in enq),
          "Enqueue events named by the Enqueue OPNAME")


def main():
    return run_tests("test_convert_names.", [test_funcnames, test_level0_dequeue_join])


if __name__ == "__main__":
    sys.exit(main())
