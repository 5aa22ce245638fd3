#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""npu_model as CANN 8.x/9.x lays it out, from its journal and its files (no tracer).

* Libraries: libacl_rt.so defines aclInit / aclrt*; libascendcl.so exports the
  same names, needs libacl_rt.so, and writes no api line of its own (a call
  through it is one api line); the split operator libraries export their
  family only, libopapi.so all of them.
* op-plugin's order: npu_train's `oplib` lines load libcust_opapi.so, then
  every libopapi_*.so in name order, then libopapi.so, then every
  libaclnn_*.so.
* Launch paths (npu_launch_paths): each launch call has ROUNDS api lines,
  each on its own stream, the task it makes on that stream (a `task` line
  inside the call), AI CPU calls' tasks are AI_CPU (SQE type 1).
* opbase's kernel names (npu_train baseline): aclnn kernels get their handle
  from aclrtBinaryGetFunctionByEntry more often than aclrtBinaryGetFunction,
  the AI CPU NonZero goes through rtAicpuKernelLaunchExWithArgs.
"""
import collections
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from npu_model import ModelDaemon, read_journal  # noqa: E402

ROUNDS = 2
LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "npu_model",
                   "lib")
LAUNCH = {"rtsLaunchKernelWithHostArgs", "rtKernelLaunch", "rtKernelLaunchWithFlagV2",
          "rtKernelLaunchWithHandleV2", "rtLaunchKernelByFuncHandleV3",
          "rtsLaunchKernelWithConfig", "rtsLaunchKernelWithDevArgs", "rtCpuKernelLaunchWithFlag",
          "rtAicpuKernelLaunchExWithArgs", "rtKernelLaunchEx", "rtMemcpyAsync", "rtMemcpyAsyncEx",
          "rtMemsetAsync", "rtEventRecord", "rtStreamWaitEvent"}
AICPU = {"rtCpuKernelLaunchWithFlag", "rtAicpuKernelLaunchExWithArgs", "rtKernelLaunchEx"}
failures = 0


def check(cond, msg):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", msg)
    return cond


def dynsyms(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", os.path.join(LIB, lib)],
                         capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if " T " in line}


def needed(lib):
    out = subprocess.run(["readelf", "-d", os.path.join(LIB, lib)], capture_output=True,
                         text=True, check=True).stdout
    return re.findall(r"NEEDED.*\[(.*)\]", out)


def check_libraries():
    rt, cl = dynsyms("libacl_rt.so"), dynsyms("libascendcl.so")
    aclrt = {s for s in rt if s.startswith("aclrt")} | {"aclInit", "aclFinalize"}
    check({"aclrtMalloc", "aclrtBinaryGetFunctionByEntry", "aclrtBinaryLoadFromFile",
           "aclrtMemsetAsync"} <= aclrt, "libacl_rt.so exports %d aclrt*" % len(aclrt))
    check(aclrt <= cl, "libascendcl.so lacks %s" % sorted(aclrt - cl)[:5])
    check("libacl_rt.so" in needed("libascendcl.so"), "libascendcl.so needs %s" %
          needed("libascendcl.so"))
    check("aclCreateTensorDesc" in cl and "aclCreateTensorDesc" not in rt,
          "op descriptions are libascendcl.so's own")
    fam = {lib: {s for s in dynsyms(lib) if s.startswith("aclnn")}
           for lib in ("libopapi_math.so", "libopapi_nn.so", "libaclnn_ops_train.so",
                       "libcust_opapi.so", "libopapi.so")}
    check("aclnnAdd" in fam["libopapi_math.so"] and "aclnnRelu" not in fam["libopapi_math.so"],
          "libopapi_math.so: %s" % sorted(fam["libopapi_math.so"])[:6])
    check("aclnnRelu" in fam["libopapi_nn.so"] and "aclnnAdd" not in fam["libopapi_nn.so"],
          "libopapi_nn.so: %s" % sorted(fam["libopapi_nn.so"])[:6])
    split = set().union(*(v for k, v in fam.items() if k != "libopapi.so"))
    check(split == fam["libopapi.so"], "split libraries export %d, libopapi.so %d" %
          (len(split), len(fam["libopapi.so"])))


def check_launch_paths(m):
    jdir = os.path.join(m.tmp, "jl")
    os.mkdir(jdir)
    r = subprocess.run([m.bin("npu_launch_paths"), str(ROUNDS)], env=m.env(NPU_MODEL_JOURNAL=jdir),
                       capture_output=True, text=True, timeout=120)
    if not check(r.returncode == 0, "npu_launch_paths exited %d: %s" % (r.returncode, r.stderr)):
        return
    j = read_journal(jdir)
    api = collections.defaultdict(list)
    for k, x in j:
        if k == "api":
            api[x["name"]].append(x)
    tasks = [x for k, x in j if k == "task"]
    ptrs = set()
    for name in sorted(LAUNCH):
        lines = api[name]
        check(len(lines) == ROUNDS and len({x["stream"] for x in lines}) == 1,
              "%s: %d api lines, streams %s" % (name, len(lines), {x["stream"] for x in lines}))
        ptrs |= {x["stream"] for x in lines}
        for x in lines:
            made = [t for t in tasks if t["tid"] == x["tid"] and
                    int(x["t0"]) <= int(t["t"]) <= int(x["t1"])]
            if not check(len(made) == 1, "%s made %d tasks" % (name, len(made))):
                continue
            if "op" in x:
                check(made[0]["kernel"] == x["op"], "%s: task %s, op %s" %
                      (name, made[0]["kernel"], x["op"]))
            if name in AICPU:
                check(made[0]["task_type"] == "AI_CPU" and made[0]["sqe_type"] == "1",
                      "%s: task type %s sqe %s" % (name, made[0]["task_type"],
                                                  made[0]["sqe_type"]))
    check(len(ptrs) == len(LAUNCH), "%d streams for %d launch calls" % (len(ptrs), len(LAUNCH)))
    # the compatibility layer writes nothing: one aclrt* line per call
    check(len(api["aclrtMemsetAsync"]) == ROUNDS and len(api["aclrtLaunchKernel"]) == ROUNDS,
          "aclrtMemsetAsync %d, aclrtLaunchKernel %d lines" %
          (len(api["aclrtMemsetAsync"]), len(api["aclrtLaunchKernel"])))
    check(len(api["aclnnAddGetWorkspaceSize"]) == 1, "late libopapi_math.so call")
    print("launch paths: %d calls x %d rounds on %d streams" % (len(LAUNCH), ROUNDS, len(ptrs)))


def check_npu_train(m):
    jdir = os.path.join(m.tmp, "jt")
    os.mkdir(jdir)
    r = subprocess.run([m.bin("npu_train"), "--scenario", "baseline", "--steps", "2"],
                       env=m.env(NPU_MODEL_JOURNAL=jdir), capture_output=True, text=True,
                       timeout=240)
    if not check(r.returncode == 0, "npu_train exited %d: %s" % (r.returncode, r.stderr)):
        return
    j = read_journal(jdir)
    libs = [x["lib"] for k, x in sorted((kx for kx in j if kx[0] == "oplib"),
                                        key=lambda kx: int(kx[1]["idx"]))]
    files = sorted(os.listdir(LIB))
    want = (["libcust_opapi.so"] +
            sorted(f for f in files if f.startswith("libopapi_") and f.endswith(".so")) +
            ["libopapi.so"] +
            sorted(f for f in files if f.startswith("libaclnn_") and f.endswith(".so")))
    check(libs == want, "op-plugin order %s, want %s" % (libs, want))
    n = collections.Counter(x["name"] for k, x in j if k == "api")
    check(n["aclrtBinaryGetFunctionByEntry"] > n["aclrtBinaryGetFunction"] > 0,
          "ByEntry %d, by name %d" % (n["aclrtBinaryGetFunctionByEntry"],
                                     n["aclrtBinaryGetFunction"]))
    nz = [x for k, x in j if k == "api" and x["name"] == "rtAicpuKernelLaunchExWithArgs"]
    check(nz and all(x["op"] == "NonZero" for x in nz), "AI CPU launches %s" %
          [x.get("op") for x in nz][:3])
    print("npu_train: libraries %s; %d ByEntry, %d by name, %d AI CPU launches" %
          (libs, n["aclrtBinaryGetFunctionByEntry"], n["aclrtBinaryGetFunction"], len(nz)))


def main():
    check_libraries()
    with ModelDaemon(cards=1) as m:
        check_launch_paths(m)
        check_npu_train(m)
    if failures:
        print("%d check(s) failed" % failures)
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
