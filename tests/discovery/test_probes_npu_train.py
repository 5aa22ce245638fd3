#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""`ascbpf probes -p PID` on a running npu_train (npu_model's training job).

The expectation is the probe contract written out here from the reference
(docs/cann_api.md §1: which library, which exported
names, which probe kind), evaluated with `nm -D` and Python's fnmatch on the
libraries the process really maps: every expected symbol must be planned
with the right kind at the offset nm + readelf give, nothing else may be
planned in those libraries, and nothing but optional entries may be missing.
libopapi.so is dlopened by the job, so the test waits until it is mapped.
"""
import fnmatch
import json
import os
import subprocess
import sys
import time

TOP = os.environ.get("ASCBPF_TOP") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
OUTPUT = os.environ.get("OUTPUT") or os.path.join(TOP, "build")
sys.path.insert(0, os.path.join(TOP, "tests", "lib"))
sys.path.insert(0, os.path.join(TOP, "tests", "lib", "probes"))
from npu_model import ModelDaemon  # noqa: E402
import elfcheck  # noqa: E402

ASCBPF = os.path.join(OUTPUT, "ascbpf")
RUN_OP_API_V2 = ("_ZN6at_npu6native9OpCommand10RunOpApiV2ERKNSt7__cxx1112basic_stringIcSt11char_"
                 "traitsIcESaIcEEERKSt8functionIFivEEb")

# (library, exported name or glob, kind, trace level), first match wins, as in the reference.
# Levels as torch_npu's ProfilerLevel: 0 framework + task queue + SQE, 1 the AscendCL API
# and kernel names, 2 runtime and driver calls.
CONTRACT = [
    ("libtorch_cpu.so", "_ZN2at4_ops*4callE*", "aten_op", 0),
    ("libtorch_cpu.so", "_ZN5torch8autograd6Engine17evaluate_functionERSt10shared_ptrINS0_9"
     "GraphTaskEEPNS0_4NodeERNS0_11InputBufferERKS2_INS0_10ReadyQueueEE", "autograd_eval", 0),
    ("libtorch_npu.so", RUN_OP_API_V2, "opname_stdstr", 1),
    ("libtorch_npu.so", "_ZN6at_npu6native10custom_ops15npu_format_castERKN2at6TensorEl", "aten_op",
     0),
    ("libtorch_npu.so", "_ZN7c10_npu10Repository7EnqueueEPv", "enqueue", 0),
    ("libtorch_npu.so", "_ZN6at_npu6native12AsncExecFuncEPv", "dequeue", 0),
    ("libtorch_npu.so",
     "_ZN9torch_npu8profiler29reportMemoryDataToNpuProfilerERKNS0_11MemoryUsageE", "mem_report", 0),
    # the step boundary: the C++ optimizer's step(LossClosure) (torch::optim::AdamW::step)
    ("libtorch_cpu.so", "_ZN5torch5optim*4stepESt8functionIFN2at6TensorEvEE", "step", 0),
    # CANN 8.x/9.x: aclInit / aclrt* in libacl_rt.so; libascendcl.so's functions of the same
    # names forward there and are not planned (kind None: none of them may be a site)
    ("libascendcl.so", "acl*", None, None),
    ("libacl_rt.so", "aclrtMalloc*", "call", 1),
    ("libacl_rt.so", "aclrtFree*", "call", 1),
    ("libacl_rt.so", "aclInit", "call", 1),
    ("libacl_rt.so", "aclFinalize", "call", 1),
    ("libacl_rt.so", "aclrtBinaryGetFunction", "funcname_get", 1),
    ("libacl_rt.so", "aclrtBinaryLoadFromFile", "binary_load", 1),
    ("libacl_rt.so", "aclrtBinaryGetFunctionByEntry", "funcname_entry", 1),
    ("libacl_rt.so", "aclrt*", "call", 1),
    ("libacl_op_compiler.so", "aclopCompileAndExecute", "opname_cstr", 1),
    ("libacl_op_compiler.so", "aclopCompileAndExecuteV2", "opname_cstr", 1),
    ("libopapi.so", "aclnn*", "call", 1),
    # the split operator libraries op-plugin loads with it
    ("libopapi_math.so", "aclnn*", "call", 1),
    ("libopapi_nn.so", "aclnn*", "call", 1),
    ("libaclnn_ops_train.so", "aclnn*", "call", 1),
    ("libcust_opapi.so", "aclnn*", "call", 1),
    ("libruntime.so", "rtFunctionRegister", "funcname_reg", 1),
    # aclop kernels' launch: LAUNCH records for their Node@launch from Level1 (no Runtime@)
    ("libruntime.so", "rtKernelLaunch", "node_launch", 1),
    ("libruntime.so", "rtKernelLaunchWithFlagV2", "node_launch", 1),
    ("libruntime.so", "rtKernelLaunchWithHandleV2", "node_launch", 1),
    ("libruntime.so", "rtCpuKernelLaunchWithFlag", "node_launch", 1),
    ("libruntime.so", "rtAicpuKernelLaunchExWithArgs", "node_launch", 1),
    ("libruntime.so", "rt*", "call", 2),
    ("libascend_hal.so", "halSqTaskSend", "sqe_send", 0),
    ("libascend_hal.so", "hal*", "call", 2),
    # HCCL (hccl.h): every collective / p2p op at Level0, communicator creation, the rest of
    # the Hccl* API at Level1; msprof's report entry points that HCCL's task reports go through
] + [("libhccl.so", op, "hccl_op", 0) for op in (
    "HcclAllReduce", "HcclBroadcast", "HcclAllGather", "HcclReduceScatter", "HcclReduce",
    "HcclAlltoAll", "HcclAlltoAllV", "HcclSend", "HcclRecv", "HcclBarrier")] + [
    ("libhccl.so", "HcclCommInitRootInfo", "hccl_comm_init", 0),
    ("libhccl.so", "HcclCommInitClusterInfo", "hccl_comm_init", 0),
    ("libhccl.so", "Hccl*", "call", 1),
    ("libprofapi.so", "MsprofReportAdditionalInfo", "hccl_report", 0),
    ("libprofapi.so", "MsprofGetHashId", "hccl_hash", 0),
]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def main():
    check(os.access(ASCBPF, os.X_OK), f"{ASCBPF} is not built")
    with ModelDaemon(cards=1) as m:
        job = subprocess.Popen([m.bin("npu_train"), "--scenario", "baseline", "--steps", "0"],
                               env=m.env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.time() + 60
            while elfcheck.mapped_path(job.pid, "libopapi.so") is None:
                if job.poll() is not None:
                    fail(f"npu_train exited {job.returncode}: {job.stderr.read()}")
                check(time.time() < deadline, "npu_train never dlopened libopapi.so")
                time.sleep(0.1)
            r = subprocess.run([ASCBPF, "probes", "-p", str(job.pid), "--json"],
                               capture_output=True, text=True, timeout=60)
            check(r.returncode == 0, f"probes exited {r.returncode}: {r.stderr}")
            plan = json.loads(r.stdout)
            text = subprocess.run([ASCBPF, "probes", "-p", str(job.pid)], capture_output=True,
                                  text=True, timeout=60)
            check(text.returncode == 0, text.stderr)
            by_level = {}
            for level in (0, 1, 2):
                r = subprocess.run([ASCBPF, "probes", "-p", str(job.pid), "--json", "--level",
                                    str(level), "--families", "framework,cann,driver,step"],
                                   capture_output=True, text=True, timeout=60)
                check(r.returncode == 0, f"probes --level {level} exited {r.returncode}: "
                      f"{r.stderr}")
                by_level[level] = json.loads(r.stdout)
            bad = subprocess.run([ASCBPF, "probes", "-p", str(job.pid), "--level", "3"],
                                 capture_output=True, text=True, timeout=60)
            check(bad.returncode == 2 and "--level must be 0, 1 or 2" in bad.stderr,
                  f"--level 3: exit {bad.returncode}, {bad.stderr!r}")
            paths = {lib: elfcheck.mapped_path(job.pid, lib) for lib, _, _, _ in CONTRACT}
        finally:
            job.kill()
            job.wait()

    total = 0
    for lib, path in paths.items():
        check(path is not None, f"{lib} is not mapped in npu_train")
        check(path in plan["libraries"], f"{path} not in the plan's libraries")
        funcs = elfcheck.nm_functions(path)
        segs = elfcheck.load_segments(path)
        # A stripped release library (libtorch_npu.so): its hidden functions are named by the
        # debug file next to it (.debug/, .gnu_debuglink), which ascbpf must find and use;
        # only exact contract names may match them (a glob names exported functions).
        hidden = {}
        dbg = None if elfcheck.has_symtab(path) else elfcheck.debuglink_file(path)
        if dbg and elfcheck.build_id(dbg) == elfcheck.build_id(path):
            hidden = {n: v for n, v in elfcheck.debug_functions(dbg).items() if n not in funcs}
        mode = [x for x in plan["symbols"] if x["library"] == path]
        check(len(mode) == 1, f"{path}: {len(mode)} symbol-mode entries")
        check(mode[0]["mode"] == ("debug" if hidden else "symtab" if elfcheck.has_symtab(path)
                                  else "dynsym") and mode[0]["debug_file"] == (dbg if hidden
                                                                               else None),
              f"{lib}: symbol mode {mode[0]}, debug file {dbg}")
        funcs.update(hidden)
        want = {}
        for name in sorted(funcs):
            for clib, pat, kind, level in CONTRACT:
                if name in hidden and pat != name:
                    continue
                if clib == lib and fnmatch.fnmatchcase(name, pat):
                    want.setdefault(name, (kind, level))
                    break
        got = {s["symbol"]: s for s in plan["sites"] if s["library"] == path}
        never = {n for n, (kind, _) in want.items() if kind is None}
        check(not never & set(got), f"{lib}: compat forwarders planned {sorted(never & set(got))}")
        want = {n: v for n, v in want.items() if v[0] is not None}
        check(set(got) == set(want), f"{lib}: planned {sorted(set(got) - set(want))[:5]} "
              f"extra, {sorted(set(want) - set(got))[:5]} missing")
        for name, (kind, level) in want.items():
            s = got[name]
            check(s["kind"] == kind, f"{lib} {name}: kind {s['kind']}, contract says {kind}")
            check(s["level"] == level, f"{lib} {name}: level {s['level']}, contract says {level}")
            err = elfcheck.site_offsets_error(s, path, funcs[name], segs)
            check(err is None, f"{lib}: {err}")
            check(s["prologue"] in ("emulated", "single-stepped", "after endbr64, emulated",
                                    "after endbr64, single-stepped"), s["prologue"])
        total += len(want)
        print(f"{lib}: {len(want)} sites")
    check(len(plan["sites"]) == total, f"{len(plan['sites'])} sites, {total} expected")
    for mis in plan["missing"]:
        check(mis["optional"] or mis["reason"].startswith("forwards to libacl_rt.so"),
              f"required probe missing: {mis}")
    ids = [s["id"] for s in plan["sites"]]
    check(sorted(ids) == list(range(1, len(ids) + 1)), "ids are not 1..N")
    check(f"{len(plan['sites'])} probe sites in {len(plan['libraries'])} libraries" in text.stdout,
          text.stdout.splitlines()[0])
    for layer in ("framework", "cann", "driver", "memory"):
        check(any(line.startswith(layer + " (") for line in text.stdout.splitlines()),
              f"no {layer} section in the text listing")
    print(f"{total} sites in {len(paths)} libraries match the contract")
    # --level N plans exactly the sites of level <= N (memory-only entries are off here)
    nomem = {(s["library"], s["symbol"], s["kind"], s["level"]) for s in by_level[2]["sites"]}
    check(nomem == {(s["library"], s["symbol"], s["kind"], s["level"]) for s in plan["sites"]
                    if s["kind"] != "mem_report"}, "--level 2 without memory differs from all")
    for level in (0, 1):
        got = {(s["library"], s["symbol"], s["kind"], s["level"])
               for s in by_level[level]["sites"]}
        want = {x for x in nomem if x[3] <= level}
        check(got == want, f"--level {level}: {sorted(got - want)[:3]} extra, "
              f"{sorted(want - got)[:3]} missing")
        print(f"--level {level}: {len(got)} sites")
    l0 = {(s["symbol"], s["kind"]) for s in by_level[0]["sites"]}
    for name, kind in (("halSqTaskSend", "sqe_send"),
                       ("_ZN7c10_npu10Repository7EnqueueEPv", "enqueue"),
                       ("_ZN6at_npu6native12AsncExecFuncEPv", "dequeue")):
        check((name, kind) in l0, f"--level 0 lacks {name}")
    check(not any(k == "call" for _, k in l0), "--level 0 plans plain API calls")
    # per view, its mode: the task queue and PTA memory come from libtorch_npu's debug file
    views = {v["view"]: v for v in plan["views"]}
    check(sorted(views) == sorted(["framework ops", "task queue", "memory", "steps",
                                   "kernel names", "device timing"]), sorted(views))
    by_id = {s["id"]: s for s in plan["sites"]}
    for view, kinds in (("task queue", {"enqueue", "dequeue"}), ("memory", {"mem_report"})):
        check(views[view]["mode"] == "debug symbols", f"{view}: {views[view]}")
        check(kinds <= {by_id[i]["kind"] for i in views[view]["sites"]}, f"{view}: sites")
    for view in ("framework ops", "steps", "kernel names", "device timing"):
        check(views[view]["mode"] == "exported symbols", f"{view}: {views[view]}")
    check("views" in text.stdout and "task queue     debug symbols" in text.stdout, text.stdout)


if __name__ == "__main__":
    main()
