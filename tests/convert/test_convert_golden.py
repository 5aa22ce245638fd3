#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Golden test of `ascbpf convert` on synthetic captures (tests/lib/mkcapture):
# the output is parsed with Python's json and csv and checked against
#  - the facts of a real torch_npu output (tests/data/torch_npu_format, via
#    tests/lib/torch_npu_format.py): file layout, CSV headers, profiler_info
#    keys, trace event shapes;
#  - the serialisation rules of the format reference: CRLF rows, TAB after
#    timestamps, 3-decimal ts strings, one-line JSON with json.dumps
#    separators and exactly one "},{" seam, ensure_ascii=False;
#  - the ground truth mkcapture wrote: every recorded kernel with its step,
#    device times, task id, name, type, aten op and launching API; memory
#    rows attributed to their ops; one directory per RECORD_AND_SAVE cycle.
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from checks import check, us_str  # noqa: E402
from golden import (ASCBPF, LEVEL0_KD, MKCAP, make, read_csv, run, run_tests,  # noqa: E402
                    runs_in)
import torch_npu_format as fmt  # noqa: E402

RUN_RE = re.compile(r"^(.*?)_(\d+(\.\d+)?)_ascend_pt$")     # torch-tb-profiler-ascend
TS_RE = re.compile(r"^\d+\.\d{3}$")


def ns_of(ts):
    a, b = ts.split(".")
    return int(a) * 1000 + int(b)


def check_csv_conventions(path, ts_cols, one_line=False):
    raw, rows = read_csv(path)
    name = os.path.basename(path)
    check(raw.endswith(b"\r\n"), name + ": ends with CRLF")
    # every line break is CRLF (a bare LF only inside a quoted cell)
    check(raw.count(b"\n") == raw.count(b"\r\n"), name + ": all line ends are CRLF")
    if one_line:
        check(len(rows) == raw.count(b"\r\n"), name + ": no cell spans lines")
    header = rows[0]
    for i, r in enumerate(rows[1:]):
        check(len(r) == len(header), "%s row %d has %d cells, header %d" %
              (name, i, len(r), len(header)))
        for col in ts_cols:
            if col in header and r[header.index(col)] != "":
                v = r[header.index(col)]
                check(v.endswith("\t") and TS_RE.match(v[:-1]),
                      "%s %s is 'us.3f<TAB>': %r" % (name, col, v))
    return header, rows[1:]


def check_trace_serialisation(path):
    with open(path, "rb") as f:
        raw = f.read()
    text = raw.decode("utf-8")
    events = json.loads(text)
    check(isinstance(events, list), "trace_view.json is a top-level array")
    check("\n" not in text, "trace_view.json is one line without a trailing newline")
    check(text.count("},{") == 1, "trace_view.json has exactly one '},{' seam (has %d)" %
          text.count("},{"))
    # apart from the seam, the bytes are what json.dumps(ensure_ascii=False) writes
    again = json.dumps(events, ensure_ascii=False)
    check(text.replace("},{", "}, {") == again, "trace_view.json is json.dumps serialised")
    for e in events:
        if "ts" in e:
            check(isinstance(e["ts"], str) and TS_RE.match(e["ts"]),
                  "ts is a 3-decimal string: %r" % (e.get("ts"),))
        if "dur" in e:
            check(isinstance(e["dur"], (int, float)), "dur is a number")
    return events


def by_process(events):
    names = {}
    for e in events:
        if e.get("ph") == "M" and e["name"] == "process_name":
            names[e["pid"]] = e["args"]["name"]
    return names


def test_level1_against_sample_and_truth(tmp):
    cap, truth = make(tmp, "l1", "--steps", "10", "--ops", "7", "--schedule", "1,1,1,2,0",
                      "--stacks")
    outdir = os.path.join(tmp, "out1")
    run([ASCBPF, "convert", cap, "-o", outdir, "--level", "1", "--worker-name", "node7"])
    runs = runs_in(outdir)
    check(len(runs) == truth["cycles"], "one directory per cycle: %d vs %d" %
          (len(runs), truth["cycles"]))
    if not runs:
        return
    run_dir = os.path.join(outdir, runs[0])
    m = RUN_RE.match(runs[0])
    check(m is not None and m.group(1) == "node7_%d" % truth["pid"],
          "run dir name %s matches {worker}_{pid}_{stamp}_ascend_pt" % runs[0])
    check(m is not None and len(m.group(2)) == 17, "17-digit millisecond stamp")
    # layout: every file we write exists in the sample with the same relative path
    sample_files = fmt.layout()
    ours = set()
    for root, _, files in os.walk(run_dir):
        for f in files:
            ours.add(os.path.relpath(os.path.join(root, f), run_dir))
    extra = sorted(f for f in ours - sample_files if not f.startswith("ascbpf/"))
    check(not extra, "files not in the sample layout: %s" % extra)
    for need in ["profiler_info_0.json", "profiler_metadata.json",
                 "ASCEND_PROFILER_OUTPUT/trace_view.json",
                 "ASCEND_PROFILER_OUTPUT/kernel_details.csv",
                 "ASCEND_PROFILER_OUTPUT/operator_details.csv",
                 "ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
                 "ASCEND_PROFILER_OUTPUT/memory_record.csv",
                 "ASCEND_PROFILER_OUTPUT/operator_memory.csv",
                 "ASCEND_PROFILER_OUTPUT/op_statistic.csv",
                 "ASCEND_PROFILER_OUTPUT/api_statistic.csv", "ascbpf/capture.ascb"]:
        check(need in ours, "output has " + need)
    with open(os.path.join(run_dir, "ascbpf", "capture.ascb"), "rb") as a, open(cap, "rb") as b:
        check(a.read() == b.read(), "ascbpf/capture.ascb is the capture")

    # profiler_info: same keys as the sample, indent=4, rank
    with open(os.path.join(run_dir, "profiler_info_0.json")) as f:
        info_text = f.read()
    info = json.loads(info_text)

    def keys(d, prefix=""):
        out = set()
        for k, v in d.items():
            out.add(prefix + k)
            if isinstance(v, dict) and k != "schedule":
                out |= keys(v, prefix + k + ".")
        return out
    check(keys(info) == fmt.profiler_info_keys(), "profiler_info keys equal the sample's: %s" %
          sorted(keys(info) ^ fmt.profiler_info_keys()))
    check(info_text == json.dumps(info, indent=4), "profiler_info is json.dump(indent=4)")
    check(info["config"]["common_config"]["schedule"] ==
          {"wait": 1, "active": 2, "warmup": 1, "repeat": 0, "skip_first": 1},
          "schedule as traced: %s" % info["config"]["common_config"]["schedule"])
    check(info["rank_id"] == 0 and info["config"]["experimental_config"]["_profiler_level"] ==
          "Level1", "profiler_info rank and level")
    with open(os.path.join(run_dir, "profiler_metadata.json")) as f:
        meta_text = f.read()
    meta = json.loads(meta_text)
    check(meta_text == json.dumps(meta), "profiler_metadata.json is one json.dumps line")
    check(meta["ENV_VARIABLES"]["ASCEND_LAUNCH_BLOCKING"] == "0", "env value as traced")

    po = os.path.join(run_dir, "ASCEND_PROFILER_OUTPUT")
    # CSV headers equal the sample's, conventions hold
    ts_cols = ["Start Time(us)", "Timestamp(us)", "Allocation Time(us)", "Release Time(us)",
               "Active Release Time(us)", "Duration(us)", "Active Duration(us)"]
    tables = {}
    for name in ["kernel_details.csv", "operator_details.csv", "step_trace_time.csv",
                 "memory_record.csv", "operator_memory.csv", "op_statistic.csv",
                 "api_statistic.csv"]:
        cols = ts_cols if name != "kernel_details.csv" else ["Start Time(us)"]
        if name == "operator_details.csv":
            cols = []
        header, rows = check_csv_conventions(os.path.join(po, name), cols,
                                             one_line=name == "kernel_details.csv")
        check(",".join(header) == fmt.header(name), name + " header equals the sample's")
        tables[name] = (header, rows)

    # kernels: every recorded kernel of the first cycle, as the truth has it
    header, rows = tables["kernel_details.csv"]
    col = {h: i for i, h in enumerate(header)}
    first_cycle_steps = set()
    states = truth["steps"]
    cyc = []
    for s, st in enumerate(states):
        if st != 0:
            cyc.append(s)
        if st == 3:
            break
    first_cycle_steps = set(s for s in cyc if states[s] in (2, 3))
    want = [k for k in truth["kernels"] if k["step"] in first_cycle_steps]
    check(len(rows) == len(want), "kernel rows %d == recorded kernels %d" % (len(rows), len(want)))
    for r, k in zip(rows, want):
        kname, ktype, aten = truth["names"][k["name_index"]]
        check(r[col["Step Id"]] == str(k["step"]), "kernel step %s == %s" %
              (r[col["Step Id"]], k["step"]))
        check(r[col["Start Time(us)"]] == us_str(k["start"]) + "\t", "kernel start time")
        check(abs(float(r[col["Duration(us)"]]) - (k["end"] - k["start"]) / 1000) < 1e-9,
              "kernel duration")
        check(r[col["Task ID"]] == str(k["task_id"]) and r[col["Stream ID"]] == "2",
              "task and stream id")
        check(r[col["Name"]] == kname and r[col["Type"]] == ktype, "kernel name/type %s/%s" %
              (r[col["Name"]], r[col["Type"]]))
        check(r[col["Accelerator Core"]] == k["task_type"], "accelerator core")
        check(r[col["Model ID"]] == "4294967295", "invalid model id as CANN writes it")
        check(r[col["aicore_time(us)"]] == "N/A" and r[col["HF32 Eligible"]] == "N/A",
              "unknown PMU / HF32 columns are N/A, not invented")

    # trace_view: shapes, processes, per-kernel X, flows to op and API
    events = check_trace_serialisation(os.path.join(po, "trace_view.json"))
    procs = by_process(events)
    pid = truth["pid"]
    hw = [p for p, n in procs.items() if n == "Ascend Hardware"]
    check(procs.get(pid) == "Python", "framework process is 'Python' with the OS pid")
    check(hw == [(pid << 10) | (13 << 5) | 0], "Ascend Hardware pid encoding")
    check(((pid << 10) | (7 << 5)) in procs and procs[(pid << 10) | (7 << 5)] == "CANN",
          "CANN process pid encoding")
    check(any(n == "Overlap Analysis" for n in procs.values()), "Overlap Analysis process")

    def shape(e):
        return (e.get("ph"), e.get("cat"), tuple(sorted(e.keys())),
                tuple(sorted(e["args"].keys())) if isinstance(e.get("args"), dict) else None)
    sample_shapes = fmt.trace_shapes()	# {key: {(keys, args keys)}}
    for e in events:
        key = (e.get("ph"), e.get("cat"), procs.get(e["pid"], "?"))
        s = shape(e)
        ok = key in sample_shapes and any(set(s[2]) >= set(x[0]) and
                                          (x[1] is None or set(s[3] or ()) >= set(x[1]))
                                          for x in sample_shapes[key])
        if e.get("cat") == "cpu_op":	# our ops have no Input Dims (not captured)
            ok = key in sample_shapes and {"Sequence number", "Fwd thread id"} <= set(e["args"])
        check(ok, "event shape %s %s has the sample's keys" % (key, s[2]))
    kx = [e for e in events if e.get("ph") == "X" and e["pid"] in hw]
    check(len(kx) == len(want), "Ascend Hardware X per kernel: %d vs %d" % (len(kx), len(want)))
    for e, k in zip(kx, want):
        check(e["ts"] == us_str(k["start"]), "kernel ts in trace")
        check(e["args"]["Task Id"] == k["task_id"] and e["args"]["Physic Stream Id"] == 2 and
              e["args"]["Task Type"] == k["task_type"], "kernel args")
    ops = {(e["tid"], e["ts"]): e for e in events if e.get("cat") == "cpu_op"}
    flows_s = {e["id"]: e for e in events if e.get("cat") == "async_npu" and e["ph"] == "s"}
    flows_f = {e["id"]: e for e in events if e.get("cat") == "async_npu" and e["ph"] == "f"}
    h2d_s = {e["id"]: e for e in events if e.get("cat") == "HostToDevice" and e["ph"] == "s"}
    cann = {(e["tid"], e["ts"]): e for e in events if e.get("ph") == "X" and
            procs.get(e["pid"]) == "CANN" and e["name"] != "Node@launch"}
    nodes = {e["args"]["connection_id"]: e for e in events if e.get("name") == "Node@launch"}
    check(len(nodes) == len(want) and
          all(procs.get(e["pid"]) == "CANN" for e in nodes.values()),
          "one Node@launch per kernel launch in the CANN process (%d vs %d)" %
          (len(nodes), len(want)))
    node_keys, node_args = fmt.node_launch()
    for e in nodes.values():
        check(sorted(e.keys()) == sorted(node_keys) and
              list(e["args"].keys()) == node_args and
              e["args"]["Mode"] == "launch" and e["args"]["level"] == "node" and
              e["args"]["id"] == "0" and e["args"]["Thread Id"] == e["tid"] == truth["acl_tid"],
              "Node@launch has the sample's shape: %r" % e)
    for e, k in zip(kx, want):
        kname, ktype, aten = truth["names"][k["name_index"]]
        fid = int(e["ts"].replace(".", ""))
        f = flows_f.get(fid)
        s = flows_s.get(fid)
        check(f is not None and f["ts"] == e["ts"] and f["tid"] == e["tid"],
              "torch_to_npu f ends at the kernel")
        check(s is not None and ops.get((s["tid"], s["ts"]), {}).get("name") == aten,
              "torch_to_npu starts at the aten op %s" % aten)
        # the reference: a kernel's HostToDevice s end lies inside its Node@launch
        # (the launch call, item_id the kernel name), which lies inside the API
        cid = str(e["args"]["connection_id"])
        hs = h2d_s.get(cid)
        node = nodes.get(e["args"]["connection_id"])
        check(node is not None and node["args"]["item_id"] == e["name"],
              "kernel %s has its Node@launch" % e["name"])
        if hs is None or node is None:
            check(False, "HostToDevice%s has its s end and Node@launch" % cid)
            continue
        check(hs["tid"] == node["tid"] and
              ns_of(node["ts"]) <= ns_of(hs["ts"]) <= ns_of(node["ts"]) + node["dur"] * 1000,
              "HostToDevice s inside Node@launch (%s, %s)" % (hs["ts"], node["ts"]))
        api = [a for (tid, ts), a in cann.items() if tid == node["tid"] and
               a["name"] == "AscendCL@" + k["api"] and ns_of(ts) <= ns_of(node["ts"]) and
               ns_of(node["ts"]) + node["dur"] * 1000 <= ns_of(ts) + a["dur"] * 1000 + 1]
        check(len(api) == 1, "Node@launch inside AscendCL@%s" % k["api"])
    steps = [e for e in events if e.get("cat") == "cpu_op" and e["name"].startswith("ProfilerStep#")]
    check(sorted(int(e["name"].split("#")[1]) for e in steps) == sorted(first_cycle_steps),
          "ProfilerStep#N for the recorded steps")
    enq = [e for e in events if e.get("cat") == "enqueue"]
    deq = [e for e in events if e.get("cat") == "dequeue"]
    check(len(enq) == len(want) and len(deq) == len(want), "one Enqueue/Dequeue per kernel")
    check(all(e["name"].startswith("Enqueue@") for e in enq), "matched Enqueue@name")
    tq = [e for e in events if e.get("cat") == "async_task_queue"]
    check(len(tq) == 2 * len(want), "enqueue_to_dequeue flows")
    stacks = [e for e in events if e.get("cat") == "cpu_op" and "Call stack" in e["args"]]
    # native frames as torch prints frames, "file(line): function": the library
    # (the probe's path), line 0 (unknown), the name demangled (binutils' c++filt
    # is the oracle), or the file offset where the address had no symbol
    mangled = "_ZN2at4_ops10add_Tensor4callERKNS_6TensorES4_RKN3c106ScalarE"
    demangled = subprocess.run(["c++filt", mangled], stdout=subprocess.PIPE,
                               check=True).stdout.decode().strip()
    check(demangled != mangled, "c++filt demangles the test symbol")
    want_stack = ("libtorch_cpu.so(0): %s;\r\nlibpython3.11.so.1.0(0): 0x1a2b;\r\n"
                  "/work/train.py(40): <module>" % demangled)
    check(stacks and stacks[0]["args"]["Call stack"] == want_stack,
          "Call stack from the stack record and its symbols: %r" %
          (stacks[0]["args"]["Call stack"] if stacks else None))

    # operator_details: device time of each aten op = its kernel's duration
    header, rows = tables["operator_details.csv"]
    check(len(rows) == len(want), "one operator row per aten op")
    for r, k in zip(rows, want):
        kname, ktype, aten = truth["names"][k["name_index"]]
        check(r[0] == aten, "operator name")
        check(abs(float(r[5]) - (k["end"] - k["start"]) / 1000) < 1e-9, "device self duration")
        aic = k["task_type"] == "AI_CORE"
        check((float(r[7]) > 0) == aic, "device AI_CORE duration only for AI_CORE kernels")
        check(r[2].count(";\r\n") == 2, "Call Stack joined by ;CRLF (multi-line cell)")

    # memory: every malloc of the cycle, attributed to its op
    header, rows = tables["operator_memory.csv"]
    mems = [m for m in truth["mems"] if m["step"] in first_cycle_steps]
    check(len(rows) == len(mems), "operator_memory rows %d == mallocs %d" % (len(rows), len(mems)))
    for r, m in zip(rows, mems):
        check(r[0] == m["op"], "allocation attributed to %s (%s)" % (m["op"], r[0]))
        check(r[2] == us_str(m["ts"]) + "\t", "allocation time")
        check(float(r[1]) == m["size"] / 1024, "Size(KB)")
        check(r[3] != "" and r[4] != "", "release times from the free records")
    header, rows = tables["memory_record.csv"]
    comps = set(r[0] for r in rows)
    check(comps == {"PTA", "PTA+GE"}, "memory_record components %s" % comps)

    # step_trace_time: one row per recorded step, Computing = kernel time of the step
    header, rows = tables["step_trace_time.csv"]
    check([int(r[0]) for r in rows] == sorted(first_cycle_steps), "step rows")
    for r in rows:
        s = int(r[0])
        comp = sum(k["end"] - k["start"] for k in want if k["step"] == s) / 1000
        check(abs(float(r[1]) - comp) < 1e-6, "Computing of step %d" % s)

    # op_statistic: counts per op type
    header, rows = tables["op_statistic.csv"]
    for r in rows:
        n = sum(1 for k in want if truth["names"][k["name_index"]][1] == r[0])
        check(int(r[2]) == n, "op_statistic count of %s" % r[0])
    header, rows = tables["api_statistic.csv"]
    check(all(r[0] == "acl" for r in rows), "Level1 api_statistic has acl APIs only")

    # the second cycle got its own directory with its own steps
    check(len(runs) == 2, "the scenario has two cycles")
    if len(runs) > 1:
        _, rows2 = read_csv(os.path.join(outdir, runs[1], "ASCEND_PROFILER_OUTPUT",
                                         "kernel_details.csv"))
        steps2 = set(r[0] for r in rows2[1:])
        check(steps2 and not (steps2 & set(str(s) for s in first_cycle_steps)),
              "second cycle has other steps: %s" % steps2)


def test_level0(tmp):
    cap, truth = make(tmp, "l0", "--steps", "3", "--ops", "4")
    outdir = os.path.join(tmp, "out0")
    run([ASCBPF, "convert", cap, "-o", outdir, "--level", "0"])
    runs = runs_in(outdir)
    if not check(len(runs) == 1, "level0: one run"):
        return
    po = os.path.join(outdir, runs[0], "ASCEND_PROFILER_OUTPUT")
    header, rows = check_csv_conventions(os.path.join(po, "kernel_details.csv"),
                                         ["Start Time(us)"], one_line=True)
    check(",".join(header) == LEVEL0_KD, "Level0 kernel_details header (reference)")
    check(len(rows) == truth["kernel_count"], "level0 kernel rows")
    check(not os.path.exists(os.path.join(po, "op_statistic.csv")) and
          not os.path.exists(os.path.join(po, "api_statistic.csv")),
          "Level0 writes no op/api statistics")
    events = check_trace_serialisation(os.path.join(po, "trace_view.json"))
    names = by_process(events)
    check("CANN" not in names.values(), "Level0 prunes the CANN process")
    check(not any(e.get("name", "").startswith("AscendCL@") for e in events),
          "Level0 prunes AscendCL events")
    check(any(e.get("cat") == "HostToDevice" and e["ph"] == "s" for e in events),
          "HostToDevice starts survive Level0 pruning")


def test_level2_runtime(tmp):
    cap, truth = make(tmp, "l2", "--steps", "2", "--ops", "3")
    outdir = os.path.join(tmp, "out2")
    run([ASCBPF, "convert", cap, "-o", outdir, "--level", "2"])
    po = os.path.join(outdir, runs_in(outdir)[0], "ASCEND_PROFILER_OUTPUT")
    _, rows = read_csv(os.path.join(po, "api_statistic.csv"))
    levels = set(r[0] for r in rows[1:])
    check(levels == {"acl", "runtime"}, "Level2 api_statistic levels %s" % levels)
    events = json.load(open(os.path.join(po, "trace_view.json")))
    check(any(e.get("name") == "Runtime@rtKernelLaunch" for e in events),
          "Level2 trace has Runtime@ events")


def test_weird_names_and_wrap(tmp):
    cap, truth = make(tmp, "w", "--steps", "3", "--ops", "9", "--weird-names",
                      "--task-start", "65530")
    check(any(k["wrap"] > 0 for k in truth["kernels"]), "the scenario wraps task ids")
    outdir = os.path.join(tmp, "outw")
    run([ASCBPF, "convert", cap, "-o", outdir, "--level", "1"])
    po = os.path.join(outdir, runs_in(outdir)[0], "ASCEND_PROFILER_OUTPUT")
    header, rows = check_csv_conventions(os.path.join(po, "kernel_details.csv"),
                                         ["Start Time(us)"], one_line=True)
    col = {h: i for i, h in enumerate(header)}
    check(len(rows) == truth["kernel_count"], "all kernels across the wrap")
    weird = truth["names"][2][0]
    for r, k in zip(rows, truth["kernels"]):
        name = truth["names"][k["name_index"]][0]
        if name == weird:
            # one line: CR/LF -> space; control bytes -> U+FFFD; the rest kept
            expect = name.replace("\n", " ").replace("\r", " ").replace("\x01", "\ufffd")
            check(r[col["Name"]] == expect, "weird kernel name in CSV: %r" % r[col["Name"]])
        else:
            check(r[col["Name"]] == name, "name after wrap: %r (task %d wrap %d)" %
                  (r[col["Name"]], k["task_id"], k["wrap"]))
        check(r[col["Start Time(us)"]] == us_str(k["start"]) + "\t", "start after wrap")
    events = check_trace_serialisation(os.path.join(po, "trace_view.json"))
    hw = [e for e in events if e.get("ph") == "X" and "Task Id" in e.get("args", {})]
    check(sum(1 for e in hw if e["name"] == weird) == sum(
        1 for k in truth["kernels"] if truth["names"][k["name_index"]][0] == weird),
        "weird name round-trips through trace_view.json exactly")
    _, od = read_csv(os.path.join(po, "op_statistic.csv"))
    # not one-line: the newline stays (quoted), the control byte becomes U+FFFD
    check(any(r[0] == truth["names"][2][1].replace("\x01", "\ufffd") for r in od[1:]),
          "weird type in op_statistic")


def test_no_queue_and_no_steps(tmp):
    cap, truth = make(tmp, "nq", "--no-steps", "--no-queue", "--steps", "2", "--ops", "3")
    outdir = os.path.join(tmp, "outnq")
    run([ASCBPF, "convert", cap, "-o", outdir, "--level", "1"])
    runs = runs_in(outdir)
    if not check(len(runs) == 1, "no steps: one directory"):
        return
    po = os.path.join(outdir, runs[0], "ASCEND_PROFILER_OUTPUT")
    header, rows = check_csv_conventions(os.path.join(po, "kernel_details.csv"),
                                         ["Start Time(us)"], one_line=True)
    check(header[0] == "Model ID", "no Step Id column without steps")
    check(len(rows) == truth["kernel_count"], "no-queue kernels")
    events = json.load(open(os.path.join(po, "trace_view.json")))
    ops = {(e["tid"], e["ts"]): e["name"] for e in events if e.get("cat") == "cpu_op"}
    flows = [e for e in events if e.get("cat") == "async_npu" and e["ph"] == "s"]
    want = [truth["names"][k["name_index"]][2] for k in truth["kernels"]]
    check(sorted(ops.get((f["tid"], f["ts"])) for f in flows) == sorted(want),
          "without a task queue kernels map to the enclosing aten op")
    check(not any(e.get("cat") == "enqueue" for e in events), "no Enqueue without a queue")
    _, st = read_csv(os.path.join(po, "step_trace_time.csv"))
    check(len(st) == 2 and st[1][0] == "", "one step_trace row with an empty Step")


# c10::ScalarType -> the name torch.profiler prints for it (c10 TypeMeta names)
DTYPE_NAMES = {5: "c10::Half", 6: "float", 7: "double", 3: "int", 4: "long int",
               11: "bool", 15: "c10::BFloat16"}


def test_shapes_and_python_stacks(tmp):
    cap, truth = make(tmp, "sh", "--steps", "2", "--ops", "6", "--shapes", "--pystacks",
                      "--stacks")
    outdir = os.path.join(tmp, "outsh")
    run([ASCBPF, "convert", cap, "-o", outdir, "--level", "1"])
    po = os.path.join(outdir, runs_in(outdir)[0], "ASCEND_PROFILER_OUTPUT")
    events = check_trace_serialisation(os.path.join(po, "trace_view.json"))
    ops = [e for e in events if e.get("cat") == "cpu_op" and
           not e["name"].startswith("ProfilerStep#")]
    by_name = {n[2]: i for i, n in enumerate(truth["names"])}

    def expected(kind):
        # torch: one segment per argument, dims joined by ',', segments by ';' then ';\r\n'
        tens = truth["tensors"][kind]
        last = max(t["arg"] for t in tens)
        dims, types = [], []
        for a in range(last + 1):
            t = next((x for x in tens if x["arg"] == a), None)
            if t is None:
                dims.append("")
                types.append("")
            elif t["kind"] == 1:
                dims.append("")
                types.append("None")
            else:
                dims.append(",".join(str(d) for d in t["dims"]))
                types.append(DTYPE_NAMES[t["dtype"]])
        return ";".join(dims).replace(";", ";\r\n"), ";".join(types).replace(";", ";\r\n")
    check(len(ops) == 12, "12 aten ops")
    for e in ops:
        dims, types = expected(by_name[e["name"]])
        check(e["args"].get("Input Dims") == dims, "Input Dims of %s: %r vs %r" %
              (e["name"], e["args"].get("Input Dims"), dims))
        check(e["args"].get("Input type") == types, "Input type of %s: %r vs %r" %
              (e["name"], e["args"].get("Input type"), types))
        check(list(e["args"].keys()) == ["Sequence number", "Fwd thread id", "Input Dims",
                                         "Input type", "Call stack"], "args key order")
        # Python frames win over native ones; the unresolved frame is left out
        check(e["args"]["Call stack"] ==
              "/work/model.py(12): forward;\r\n/work/train.py(40): <module>",
              "Python call stack: %r" % e["args"]["Call stack"])
    header, rows = check_csv_conventions(os.path.join(po, "operator_details.csv"), [])
    for r in rows:
        check(r[1] == expected(by_name[r[0]])[0], "operator_details Input Shapes of " + r[0])


def test_chrome_export(tmp):
    cap, truth = make(tmp, "ch", "--steps", "2", "--ops", "2")
    out = os.path.join(tmp, "trace.json")
    run([ASCBPF, "convert", cap, "--export", "chrome", "-o", out, "--level", "1"])
    events = check_trace_serialisation(out)
    check(sum(1 for e in events if "Task Id" in e.get("args", {})) == truth["kernel_count"],
          "chrome export has every kernel")
    run([ASCBPF, "convert", cap, "--export", "chrome", "-o", out], expect_rc=2)


def kernels_and_flows(po):
    """kernel X events of Ascend Hardware with their torch_to_npu start op and Node@launch."""
    events = check_trace_serialisation(os.path.join(po, "trace_view.json"))
    procs = by_process(events)
    kx = [e for e in events if e.get("ph") == "X" and procs.get(e["pid"]) == "Ascend Hardware"]
    ops = {(e["tid"], e["ts"]): e for e in events if e.get("cat") == "cpu_op"}
    fs = {e["id"]: e for e in events if e.get("cat") == "async_npu" and e["ph"] == "s"}
    nodes = {e["args"]["connection_id"]: e for e in events if e.get("name") == "Node@launch"}
    cann = [e for e in events if e.get("ph") == "X" and procs.get(e["pid"]) == "CANN" and
            e["name"].startswith("AscendCL@")]
    out = []
    for e in sorted(kx, key=lambda e: ns_of(e["ts"])):
        s = fs.get(int(e["ts"].replace(".", "")))
        op = ops.get((s["tid"], s["ts"])) if s else None
        node = nodes.get(e["args"]["connection_id"])
        api = None
        if node:
            t0 = ns_of(node["ts"])
            enc = [a for a in cann if a["tid"] == node["tid"] and ns_of(a["ts"]) <= t0 and
                   t0 <= ns_of(a["ts"]) + a["dur"] * 1000]
            api = enc[0]["name"][len("AscendCL@"):] if enc else None
        out.append((e, op, node, api))
    return events, out


def test_batched_submissions(tmp):
    # 45 launches per step, the runtime sends 32 at a time inside the 32nd launch and
    # the other 13 from the Python thread at the step's synchronize: every kernel
    # still joins to its own op, API, slot and step (the truth)
    cap, truth = make(tmp, "b", "--steps", "3", "--ops", "45", "--batch", "32")
    outdir = os.path.join(tmp, "outb")
    p = run([ASCBPF, "convert", cap, "-o", outdir, "--level", "1"])
    check(b"batched" not in p.stderr, "batched level1: nothing left unjoined: %s" %
          p.stderr.decode()[-300:])
    po = os.path.join(outdir, runs_in(outdir)[0], "ASCEND_PROFILER_OUTPUT")
    events, ks = kernels_and_flows(po)
    want = sorted(truth["kernels"], key=lambda k: k["start"])
    check(len(ks) == len(want) == truth["kernel_count"],
          "batched: every kernel (%d vs %d)" % (len(ks), len(want)))
    for (e, op, node, api), k in zip(ks, want):
        kname, ktype, aten = truth["names"][k["name_index"]]
        check(e["ts"] == us_str(k["start"]) and e["args"]["Task Id"] == k["task_id"],
              "batched: kernel order")
        check(e["name"] == kname, "batched: kernel %d named %s (%s)" % (k["task_id"], kname,
                                                                       e["name"]))
        check(op is not None and op["name"] == aten,
              "batched: kernel %d joins aten op %s (%s)" % (k["task_id"], aten,
                                                            op and op["name"]))
        check(op is not None and ns_of(op["ts"]) <= k["submit"] - 5000 and
              k["submit"] <= ns_of(op["ts"]) + op["dur"] * 1000,
              "batched: kernel %d joins its own %s, not a later one" % (k["task_id"], aten))
        check(node is not None and node["args"]["item_id"] == kname and api == k["api"],
              "batched: kernel %d Node@launch inside AscendCL@%s (%s)" % (k["task_id"],
                                                                         k["api"], api))
    _, rows = read_csv(os.path.join(po, "kernel_details.csv"))
    h = rows[0]
    got = sorted((int(r[h.index("Step Id")]), r[h.index("Name")], r[h.index("Type")])
                 for r in rows[1:])
    exp = sorted((k["step"], truth["names"][k["name_index"]][0],
                  truth["names"][k["name_index"]][1]) for k in want)
    check(got == exp, "batched: kernel_details steps, names and types are the truth's")
    enq = {e["args"].get("correlation_id") for e in events if e.get("cat") == "enqueue"}
    check(len(enq) == len(want), "batched: one Enqueue per kernel")

    # Level0: the launches are not traced; only what is exact is kept, the rest is said
    cap0, truth0 = make(tmp, "b0", "--steps", "2", "--ops", "20", "--batch", "8", "--level0")
    out0 = os.path.join(tmp, "outb0")
    p = run([ASCBPF, "convert", cap0, "-o", out0, "--level", "0"])
    err = p.stderr.decode()
    po = os.path.join(out0, runs_in(out0)[0], "ASCEND_PROFILER_OUTPUT")
    _, ks = kernels_and_flows(po)
    want = sorted(truth0["kernels"], key=lambda k: k["start"])
    check(len(ks) == len(want), "batched level0: every kernel")
    unjoined = 0
    for (e, op, node, api), k in zip(ks, want):
        if op is None:
            unjoined += 1
        else:
            check(op["name"] == truth0["names"][k["name_index"]][2],
                  "batched level0: a joined kernel joins its own op")
    m = re.search(r"(\d+) kernels of batched submissions", err)
    check(m is not None and int(m.group(1)) == unjoined > 0,
          "batched level0: the kernels left without op are counted (%d): %s" %
          (unjoined, err[-300:]))


def test_no_end(tmp):
    # whole frames but no STATS / end clock: a tracer killed between two frames
    cap, truth = make(tmp, "ne", "--steps", "2", "--ops", "3", "--no-end")
    outdir = os.path.join(tmp, "outne")
    p = run([ASCBPF, "convert", cap, "-o", outdir, "--level", "1"], expect_rc=1)
    err = p.stderr.decode()
    check(err.count("did not end") == 1 and "may be missing" in err,
          "no end record: said once: %s" % err[-300:])
    m = re.search(r"after (\d+\.\d{3}) us", err)
    check(m is not None and ns_of(m.group(1)) > truth["wall_base"], "the last ts is named")
    runs = runs_in(outdir) if os.path.isdir(outdir) else []
    if check(len(runs) == 1, "no end record: still converted"):
        _, rows = read_csv(os.path.join(outdir, runs[0], "ASCEND_PROFILER_OUTPUT",
                                        "kernel_details.csv"))
        check(len(rows) - 1 == truth["kernel_count"], "no end record: every kernel written")
    # the same capture with its end converts with exit 0
    cap2, _ = make(tmp, "ne2", "--steps", "2", "--ops", "3")
    p = run([ASCBPF, "convert", cap2, "-o", os.path.join(tmp, "outne2")])
    check(b"did not end" not in p.stderr, "a capture with its end is not reported")


def test_errors(tmp):
    cap, truth = make(tmp, "e", "--steps", "6", "--ops", "40")
    outdir = os.path.join(tmp, "oute")
    run([ASCBPF, "convert", cap, "-o", outdir])
    # an existing output directory is never overwritten without --force
    p = run([ASCBPF, "convert", cap, "-o", outdir], expect_rc=2)
    check(b"--force" in p.stderr, "EEXIST message names --force")
    run([ASCBPF, "convert", cap, "-o", outdir, "--force"])
    p = run([ASCBPF, "convert", cap, "-o", outdir, "--gzip"], expect_rc=2)
    check(b"gzip" in p.stderr, "--gzip refused with a reason")
    run([ASCBPF, "convert", cap, "--level", "3"], expect_rc=2)
    run([ASCBPF, "convert"], expect_rc=2)
    run([ASCBPF, "convert", os.path.join(tmp, "missing.ascb")], expect_rc=2)
    run([ASCBPF, "dump", os.path.join(tmp, "missing.ascb")], expect_rc=2)

    # truncated: converts up to the last good frame, says what was lost, exits 1
    size = os.path.getsize(cap)
    trunc = os.path.join(tmp, "trunc.ascb")
    with open(cap, "rb") as a, open(trunc, "wb") as b:
        b.write(a.read()[:size * 2 // 3])
    out_t = os.path.join(tmp, "outt")
    p = run([ASCBPF, "convert", trunc, "-o", out_t, "--level", "1"], expect_rc=1)
    err = p.stderr.decode()
    check("damaged" in err and "lost" in err and "bytes" in err,
          "truncation reported with the loss: %s" % err[-300:])
    runs = runs_in(out_t) if os.path.isdir(out_t) else []
    if check(len(runs) == 1, "the truncated capture was still converted"):
        _, rows = read_csv(os.path.join(out_t, runs[0], "ASCEND_PROFILER_OUTPUT",
                                        "kernel_details.csv"))
        check(0 < len(rows) - 1 < truth["kernel_count"], "part of the kernels survived")
    p = run([ASCBPF, "dump", trunc], expect_rc=1)
    check(b"damaged" in p.stderr, "dump reports the damage")

    # corrupted byte in the middle: stops there, exits 1
    corrupt = os.path.join(tmp, "corrupt.ascb")
    data = bytearray(open(cap, "rb").read())
    data[size // 2] ^= 0xff
    open(corrupt, "wb").write(data)
    run([ASCBPF, "convert", corrupt, "-o", os.path.join(tmp, "outc")], expect_rc=1)

    # a writer killed with SIGKILL mid-capture: readable up to its last whole frame
    killed = os.path.join(tmp, "killed.ascb")
    w = subprocess.Popen([MKCAP, "-o", killed, "--events", "50000000", "--ops", "50"])
    import time
    for _ in range(200):
        if os.path.exists(killed) and os.path.getsize(killed) > 3 << 20:
            break
        time.sleep(0.02)
    w.kill()
    w.wait()
    p = subprocess.run([ASCBPF, "dump", "--json", killed], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    check(p.returncode in (0, 1), "dump of a SIGKILLed capture exits %d" % p.returncode)
    lines = p.stdout.decode().splitlines()
    check(len(lines) > 10000 and all(json.loads(l)["type"] != "invalid" for l in lines),
          "a SIGKILLed capture reads as whole valid records (%d)" % len(lines))
    check(p.returncode == 0 or b"damaged" in p.stderr, "a torn last frame is reported")
    out_k = os.path.join(tmp, "outk")
    torn = p.returncode == 1
    # killed between frames (no end record) or inside one (damaged): converted, exit 1
    p = run([ASCBPF, "convert", killed, "-o", out_k, "--level", "1"], expect_rc=1)
    check(os.path.isdir(out_k) and len(runs_in(out_k)) >= 1, "a SIGKILLed capture converts")
    err = p.stderr.decode()
    check(("damaged" in err) if torn else ("did not end" in err),
          "a SIGKILLed capture is reported: %s" % err[-300:])

    # an unknown capture version is refused (exit 2) with a clear message
    data = bytearray(open(cap, "rb").read())
    data[8] = 99
    crc = crc32c(bytes(data[:24]))
    data[24:28] = crc.to_bytes(4, "little")
    newer = os.path.join(tmp, "v99.ascb")
    open(newer, "wb").write(data)
    p = run([ASCBPF, "convert", newer, "-o", os.path.join(tmp, "outv")], expect_rc=2)
    check(b"version 99" in p.stderr, "unknown version named in the error")
    check(not os.path.exists(os.path.join(tmp, "outv")), "nothing written for a refused file")
    # not a capture at all
    junk = os.path.join(tmp, "junk.ascb")
    open(junk, "wb").write(b"hello world, not a capture" * 4)
    run([ASCBPF, "convert", junk], expect_rc=2)


def test_dump_json(tmp):
    cap, truth = make(tmp, "d", "--steps", "2", "--ops", "3", "--stacks", "--shapes",
                      "--pystacks")
    p = run([ASCBPF, "dump", "--json", cap])
    lines = p.stdout.decode("utf-8").splitlines()
    recs = [json.loads(l) for l in lines]
    check(len(recs) == truth["records"], "dump --json prints every record (%d vs %d)" %
          (len(recs), truth["records"]))
    types = set(r["type"] for r in recs)
    for t in ["clock", "devclock", "process", "thread", "config", "probe", "step", "enter",
              "exit", "opname", "queue", "sqe", "mem", "stack", "devtask", "stats", "symbol",
              "tensor", "pystack", "pyframe"]:
        check(t in types, "dump has %s records" % t)
    for r in recs:
        for k in ["type", "size", "tgid", "tid", "probe_id", "ts_ns"]:
            check(k in r, "header field %s" % k)
    sqe = next(r for r in recs if r["type"] == "sqe")
    check(sqe["sqe"][0]["task_id"] == truth["kernels"][0]["task_id"], "sqe task id by name")
    dev = [r for r in recs if r["type"] == "devtask"]
    check(len(dev) == truth["kernel_count"], "devtask count")
    pr = next(r for r in recs if r["type"] == "probe" and r["symbol"] == "aclnnAdd")
    check(pr["kind_name"] == "call" and pr["layer_name"] == "cann", "probe fields by name")
    ten = next(r for r in recs if r["type"] == "tensor")
    check(ten["dims"] == truth["tensors"][0][0]["dims"] and ten["dtype"] == 6 and
          ten["dtype_name"] == "float" and ten["kind_name"] == "defined", "tensor fields")
    pf = next(r for r in recs if r["type"] == "pyframe")
    check(pf["text"] == "/work/model.py(12): forward" and pf["line"] == 12, "pyframe fields")
    text = run([ASCBPF, "dump", cap]).stdout.decode().splitlines()
    check(len(text) == len(lines), "text dump: one line per record")


def crc32c(data):
    crc = 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xffffffff


def main():
    return run_tests("test_convert.",
                     [test_level1_against_sample_and_truth, test_level0, test_level2_runtime,
                      test_weird_names_and_wrap, test_no_queue_and_no_steps,
                      test_shapes_and_python_stacks, test_chrome_export,
                      test_errors, test_dump_json, test_batched_submissions, test_no_end])


if __name__ == "__main__":
    sys.exit(main())
