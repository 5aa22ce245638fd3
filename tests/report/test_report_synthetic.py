# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""
test_report_synthetic.py - `ascbpf report` on captures written by mkcapture
(tests/lib/mkcapture.c, the correlation layer's synthetic capture helper),
checked against mkcapture's ground-truth JSON, not against report's own
output: kernel statistics per type, the TransData call site and rate, gaps
between kernels, the memory peak and who holds it; thresholds moved exactly
onto and just past the measured values flip the findings; output directory
lookup; and every bad input gets a message and a non-zero exit.
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

OUTPUT = os.environ.get("OUTPUT", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
ASCBPF = os.environ.get("ASCBPF", os.path.join(OUTPUT, "ascbpf"))
MKCAPTURE = os.path.join(OUTPUT, "tests", "lib", "mkcapture")

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def close(a, b, tol=1e-6):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def run(args, expect_rc=None):
    p = subprocess.run([ASCBPF, "report"] + args, capture_output=True, text=True)
    if expect_rc is not None and p.returncode != expect_rc:
        failures.append("report %s: exit %d, expected %d; stderr: %s"
                        % (" ".join(args), p.returncode, expect_rc, p.stderr.strip()))
        print("FAIL:", failures[-1])
    return p


def report_json(args):
    p = run(["--json"] + args, expect_rc=0)
    return json.loads(p.stdout)


def mkcapture(path, truth, *extra):
    subprocess.run([MKCAPTURE, "-o", path, "--truth", truth] + list(extra), check=True)
    with open(truth) as f:
        return json.load(f)


def nearest_rank(values, p):
    v = sorted(values)
    r = max(1, min(len(v), math.ceil(p / 100.0 * len(v))))
    return v[r - 1]


def truth_types(t):
    """per kernel: (type, duration ns)"""
    return [(t["names"][k["name_index"]][1], k["end"] - k["start"]) for k in t["kernels"]]


def test_statistics(tmp):
    cap = os.path.join(tmp, "a.ascb")
    t = mkcapture(cap, os.path.join(tmp, "a.json"), "--steps", "6", "--ops", "24", "--stacks")
    r = report_json([cap])
    kernels = truth_types(t)
    check(r["counts"]["kernels"] == len(kernels),
          "kernels %d, truth %d" % (r["counts"]["kernels"], len(kernels)))
    total = sum(d for _, d in kernels)
    check(close(r["device_us"], total / 1000.0), "device_us %s, truth %s" % (r["device_us"], total / 1000.0))

    # top kernels: count, total, max, avg, share per type, sorted by total
    by_type = {}
    for ty, d in kernels:
        by_type.setdefault(ty, []).append(d)
    check(r["kernel_types"] == len(by_type), "kernel types %d, truth %d" % (r["kernel_types"], len(by_type)))
    tops = r["top_kernels"]
    check([k["total_us"] for k in tops] == sorted([k["total_us"] for k in tops], reverse=True),
          "top kernels not sorted by total")
    for k in tops:
        ds = by_type.get(k["name"])
        check(ds is not None, "top kernel %s not in truth" % k["name"])
        if ds is None:
            continue
        check(k["count"] == len(ds), "%s count %d, truth %d" % (k["name"], k["count"], len(ds)))
        check(close(k["total_us"], sum(ds) / 1000.0), "%s total %s" % (k["name"], k["total_us"]))
        check(close(k["max_us"], max(ds) / 1000.0), "%s max %s" % (k["name"], k["max_us"]))
        check(close(k["avg_us"], sum(ds) / len(ds) / 1000.0), "%s avg %s" % (k["name"], k["avg_us"]))
        check(close(k["share"], sum(ds) / total), "%s share %s" % (k["name"], k["share"]))

    # TransData: every one launched by aten::npu_format_cast (the helper's conversion op)
    td = [k for k in t["kernels"] if t["names"][k["name_index"]][1] == "TransData"]
    steps = len([s for s in t["steps"] if s in (2, 3)])
    sites = [c for c in r["conversions"] if c["kind"] == "TransData"]
    check(len(sites) == 1, "TransData sites %d, expected 1" % len(sites))
    if sites:
        s = sites[0]
        check(s["count"] == len(td), "TransData count %d, truth %d" % (s["count"], len(td)))
        check(s["op"] is not None and s["op"].endswith(td[0]["op"]),
              "TransData op %r, truth %r" % (s["op"], td[0]["op"]))
        check(s["api"] == td[0]["api"], "TransData api %r, truth %r" % (s["api"], td[0]["api"]))
        check(s["stack"] is not None and "train.py" in s["stack"], "TransData stack %r" % s["stack"])
        check(close(s["per_step"], len(td) / steps), "TransData per step %s, truth %s" % (s["per_step"], len(td) / steps))
        check(s["flagged"], "TransData at %s per step not flagged at the default threshold" % s["per_step"])
        ids = [f["id"] for f in r["findings"]]
        check("transdata" in ids, "no transdata finding: %s" % ids)

    # gaps between consecutive kernels of a stream in a step
    gaps = []
    ks = sorted(t["kernels"], key=lambda k: (k["stream"], k["start"]))
    for a, b in zip(ks, ks[1:]):
        if a["stream"] == b["stream"] and a["step"] == b["step"]:
            gaps.append(max(0, b["start"] - a["end"]))
    d = r["dispatch"]
    check(d["gaps"] == len(gaps), "gaps %d, truth %d" % (d["gaps"], len(gaps)))
    med = nearest_rank(gaps, 50) / 1000.0
    p99 = nearest_rank(gaps, 99) / 1000.0
    check(close(d["gap_median_us"], med), "gap median %s, truth %s" % (d["gap_median_us"], med))
    check(close(d["gap_p99_us"], p99), "gap p99 %s, truth %s" % (d["gap_p99_us"], p99))
    check(d["queue_measured"] and d["queue_slots"] == len(t["kernels"]),
          "queue slots %s, kernels %d" % (d["queue_slots"], len(t["kernels"])))

    # starvation: each step's device window less every kernel's [submission, end], in
    # stretches of at least gap_us (default 5 us)
    gap_ns = r["thresholds"]["gap_us"] * 1000
    cover = sorted((min(k["submit"], k["start"]), k["end"]) for k in t["kernels"])
    merged = []
    for a, b in cover:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    pieces = []
    for step in sorted({k["step"] for k in t["kernels"]}):
        w0 = min(k["start"] for k in t["kernels"] if k["step"] == step)
        w1 = max(k["end"] for k in t["kernels"] if k["step"] == step)
        at = w0
        for a, b in merged:
            if b <= w0 or a >= w1:
                continue
            if a > at:
                pieces.append(a - at)
            at = max(at, b)
        if at < w1:
            pieces.append(w1 - at)
    pieces = [p for p in pieces if p >= gap_ns]
    check(d["submissions_known"], "submission times not known")
    check(close(d["starved_us"], sum(pieces) / 1000.0),
          "starved %s us, truth %s us" % (d["starved_us"], sum(pieces) / 1000.0))
    check(d["starved_gaps"] == len(pieces) and pieces and close(d["starved_max_us"], max(pieces) / 1000.0),
          "starved stretches %s (max %s us), truth %d (max %s)" %
          (d["starved_gaps"], d["starved_max_us"], len(pieces), pieces and max(pieces) / 1000.0))
    starved_tr = [1 for a, b in zip(ks, ks[1:]) if a["stream"] == b["stream"] and
                  a["step"] == b["step"] and b["submit"] > a["end"] and b["start"] - a["end"] >= gap_ns]
    check(d["transitions"] == len(gaps) and d["starved_transitions"] == len(starved_tr),
          "starved transitions %s of %s, truth %d of %d" %
          (d["starved_transitions"], d["transitions"], len(starved_tr), len(gaps)))

    # the split adds up per step
    for s in r["steps"]:
        check(close(s["compute_us"] + s["copy_us"] + s["idle_us"] + s["host_only_us"], s["duration_us"]),
              "step %s split does not add up" % s["step"])

    # memory: the allocator's totals as recorded (ascbpf dump), ops from the truth
    dump = subprocess.run([ASCBPF, "dump", "--json", cap], capture_output=True, text=True, check=True)
    mems = [json.loads(l) for l in dump.stdout.splitlines()]
    mems = [m for m in mems if m.get("type") == "mem"]
    op_of = {(m["ts"], m["ptr"]): m["op"] for m in t["mems"]}
    step_of = {(m["ts"], m["ptr"]): m["step"] for m in t["mems"]}
    wall = lambda m: m["ts_ns"] - t["mono_base"] + t["wall_base"]
    mems.sort(key=lambda m: m["ts_ns"])
    peak_i = max(range(len(mems)), key=lambda i: (mems[i]["total_allocated"], -i))
    live = {}
    for m in mems[:peak_i + 1]:
        if m["size"] > 0 and m["data_type"] == 0:
            live[m["ptr"]] = m
        else:
            live.pop(m["ptr"], None)
    holders = {}
    for m in live.values():
        op = op_of.get((wall(m), m["ptr"]))
        holders[op] = holders.get(op, 0) + m["size"]
    holders = dict(sorted(holders.items(), key=lambda kv: -kv[1])[:r["thresholds"]["top"]])
    got = {h["op"].split(" > ")[-1]: h["bytes"] for h in r["memory"]["holders"]}
    check(r["memory"]["measured"], "memory not measured")
    check(got == holders, "holders at the peak %s, truth %s" % (got, holders))
    check(close(r["memory"]["peak_allocated_mb"], mems[peak_i]["total_allocated"] / 1048576.0),
          "peak %s MiB, recorded %s B" % (r["memory"]["peak_allocated_mb"], mems[peak_i]["total_allocated"]))
    truth_step = step_of.get((wall(mems[peak_i]), mems[peak_i]["ptr"]))
    check(r["memory"]["peak_step"] == truth_step,
          "peak step %s, truth %s" % (r["memory"]["peak_step"], truth_step))
    return cap, r


def test_thresholds(cap, r):
    td = [c for c in r["conversions"] if c["kind"] == "TransData"][0]
    at = report_json(["--threshold", "transdata_per_step=%r" % td["per_step"], cap])
    check("transdata" in [f["id"] for f in at["findings"]], "transdata not flagged exactly at its rate")
    above = report_json(["--threshold", "transdata_per_step=%r" % (td["per_step"] * 1.0001), cap])
    check("transdata" not in [f["id"] for f in above["findings"]], "transdata flagged above its rate")
    for f in at["findings"]:
        check(f["thresholds"] and f["evidence"] and f["suggestion"], "finding %s lacks numbers" % f["id"])
        for name, v in f["thresholds"].items():
            check(v == at["thresholds"][name], "finding %s states %s=%s" % (f["id"], name, v))

    # dispatch_bound: starved share >= idle_share, longest stretch < stall_share of the starved
    # time; the measured values put exactly on and just past each threshold
    d = r["dispatch"]
    share, stall = d["starved_share"], d["starved_max_us"] / d["starved_us"]
    loose = ["--threshold", "stall_share=1"]
    at = report_json(["--threshold", "idle_share=%r" % share] + loose + [cap])
    check(at["dispatch"]["dispatch_bound"], "not dispatch-bound exactly at the measured starved share")
    check("dispatch_bound" in [f["id"] for f in at["findings"]], "no dispatch_bound finding")
    above = report_json(["--threshold", "idle_share=%r" % min(1.0, share + 1e-6)] + loose + [cap])
    check(not above["dispatch"]["dispatch_bound"], "dispatch-bound with idle_share above the share")
    base = ["--threshold", "idle_share=%r" % share]
    gap = report_json(base + loose + ["--threshold", "gap_us=%r" % d["starved_max_us"], cap])
    check(gap["dispatch"]["starved_gaps"] >= 1 and gap["dispatch"]["starved_max_us"] == d["starved_max_us"],
          "gap_us at the longest stretch keeps %s stretches" % gap["dispatch"]["starved_gaps"])
    gap = report_json(base + loose + ["--threshold", "gap_us=%r" % (d["starved_max_us"] + 0.001), cap])
    check(gap["dispatch"]["starved_us"] == 0 and not gap["dispatch"]["dispatch_bound"],
          "gap_us above the longest stretch still starves %s us" % gap["dispatch"]["starved_us"])
    st = report_json(base + ["--threshold", "stall_share=%r" % (stall * (1 + 1e-6)), cap])
    check(st["dispatch"]["dispatch_bound"], "not dispatch-bound with stall_share above the longest stretch")
    st = report_json(base + ["--threshold", "stall_share=%r" % (stall * (1 - 1e-6)), cap])
    check(not st["dispatch"]["dispatch_bound"], "dispatch-bound with stall_share below the longest stretch")

    top1 = report_json(["--top", "1", cap])
    check(len(top1["top_kernels"]) == 1 and top1["top_kernels"][0] == r["top_kernels"][0],
          "--top 1 gave %s" % top1["top_kernels"])

    # the text report states the same findings with their thresholds
    p = run([cap], expect_rc=0)
    check("thresholds: idle_share=" in p.stdout, "text report does not state the thresholds")
    check("TransData" in p.stdout and "suggested: " in p.stdout, "text report lacks the TransData finding")


def test_inputs(tmp, cap):
    # an output directory, its parent, and a parent with two runs
    run_dir = os.path.join(tmp, "res", "host_1_20261202_ascend_pt")
    os.makedirs(os.path.join(run_dir, "ascbpf"))
    shutil.copy(cap, os.path.join(run_dir, "ascbpf", "capture.ascb"))
    a = report_json([run_dir])
    b = report_json([os.path.join(tmp, "res")])
    check(a["counts"] == b["counts"] and a["capture"] == b["capture"], "directory lookup differs")
    run2 = os.path.join(tmp, "res", "host_2_20261202_ascend_pt", "ascbpf")
    os.makedirs(run2)
    shutil.copy(cap, os.path.join(run2, "capture.ascb"))
    p = run([os.path.join(tmp, "res")], expect_rc=2)
    check("2 captures" in p.stderr, "two runs: %r" % p.stderr)

    # a run directory of one cycle: only the steps its step_trace_time.csv lists
    t = json.load(open(os.path.join(tmp, "a.json")))
    recorded = [i for i, s in enumerate(t["steps"]) if s in (2, 3)]
    keep = recorded[1:3]
    os.makedirs(os.path.join(run_dir, "ASCEND_PROFILER_OUTPUT"))
    with open(os.path.join(run_dir, "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"), "w") as f:
        f.write("Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,"
                "Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\r\n")
        for st in keep:
            f.write("0,%d,1.0,0.0,0.0,0.0,1.0,2.0,0,0.0,1.0\r\n" % st)
    d = report_json([run_dir])
    check([s["step"] for s in d["steps"]] == keep, "run steps %s, csv %s" % ([s["step"] for s in d["steps"]], keep))
    check(d["run_steps"] == keep, "run_steps %s" % d["run_steps"])
    n = len([k for k in t["kernels"] if k["step"] in keep])
    check(d["counts"]["kernels"] == n, "run kernels %d, truth %d in steps %s" % (d["counts"]["kernels"], n, keep))
    # a run directory whose steps the capture does not hold: an error, not a guess
    bad_run = os.path.join(tmp, "badrun_ascend_pt")
    os.makedirs(os.path.join(bad_run, "ascbpf"))
    os.makedirs(os.path.join(bad_run, "ASCEND_PROFILER_OUTPUT"))
    shutil.copy(cap, os.path.join(bad_run, "ascbpf", "capture.ascb"))
    with open(os.path.join(bad_run, "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"), "w") as f:
        f.write("Step,Computing\n9999,1.0\n")
    p = run([bad_run])
    check(p.returncode == 1 and "does not record" in p.stderr, "bad run dir: %d %r" % (p.returncode, p.stderr))
    whole = report_json([cap])
    check(whole["run_steps"] == [] and len(whole["steps"]) == len(recorded), "whole capture steps")

    # the tracer's own capture in a result directory wins over the converted copies
    shutil.copy(cap, os.path.join(tmp, "res", "ascbpf-4242.cap"))
    c = report_json([os.path.join(tmp, "res")])
    check(c["capture"].endswith("/ascbpf-4242.cap"), "result dir picked %s" % c["capture"])

    empty = os.path.join(tmp, "empty")
    os.makedirs(empty)
    p = run([empty], expect_rc=2)
    check("no capture" in p.stderr, "empty dir: %r" % p.stderr)
    p = run([os.path.join(tmp, "missing.ascb")], expect_rc=2)
    check("No such file" in p.stderr, "missing: %r" % p.stderr)
    junk = os.path.join(tmp, "junk.ascb")
    with open(junk, "wb") as f:
        f.write(b"not a capture at all, just bytes" * 4)
    p = run([junk])
    check(p.returncode != 0 and p.stderr, "junk file: exit %d %r" % (p.returncode, p.stderr))
    for bad in (["--threshold", "nope=1", cap], ["--threshold", "idle_share=2", cap],
                ["--threshold", "gap_us=-3", cap], ["--top", "0", cap], ["--top", "x", cap],
                [], [cap, cap], ["--bogus", cap]):
        p = run(bad, expect_rc=2)
        check(p.stderr.strip() != "", "no message for %s" % bad)

    # a capture cut mid-frame: what was read is reported, and the exit says damaged
    trunc = os.path.join(tmp, "trunc.ascb")
    mkcapture(trunc, os.path.join(tmp, "trunc.json"), "--steps", "4", "--ops", "20", "--truncate-last")
    p = run(["--json", trunc])
    check(p.returncode == 1, "truncated capture: exit %d" % p.returncode)
    if p.stdout:
        j = json.loads(p.stdout)
        check(j["damaged"] and j["damage"], "truncated capture not reported damaged")
    check("damaged" in p.stderr, "truncated: %r" % p.stderr)

    # no step records at all: one pseudo step, step null
    nos = os.path.join(tmp, "nosteps.ascb")
    t = mkcapture(nos, os.path.join(tmp, "nosteps.json"), "--no-steps", "--ops", "12")
    j = report_json([nos])
    check(len(j["steps"]) == 1 and j["steps"][0]["step"] is None, "no-steps: %s" % j["steps"])
    check(j["counts"]["kernels"] == len(t["kernels"]), "no-steps kernels %d" % j["counts"]["kernels"])


def main():
    for exe in (ASCBPF, MKCAPTURE):
        if not os.access(exe, os.X_OK):
            print("FAIL: %s not built (run make)" % exe)
            return 1
    tmp = tempfile.mkdtemp(prefix="ascbpf-report-")
    try:
        cap, r = test_statistics(tmp)
        test_thresholds(cap, r)
        test_inputs(tmp, cap)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d checks failed" % len(failures))
        return 1
    print("report on synthetic captures matches the ground truth")
    return 0


if __name__ == "__main__":
    sys.exit(main())
