#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Every CANN 8.x/9.x launch path, captured, against npu_model's journal.

npu_launch_paths (npu_model/workloads) makes one task through each of the
runtime's launch calls, each on its own stream, twice, then dlopens
libopapi_math.so (after the attach) and calls one of its aclnn ops:

* Level2 (every rt* call traced): the ENTER of each launch call, per call,
  holds the journal's stream in the argument hicann/runtime's prototype puts
  it in (include/ascend/rt_launch.h), e.g. rtLaunchKernelByFuncHandleV3's
  arg3 and rtKernelLaunchWithFlagV2's arg4; the AI CPU calls'
  FUNCNAME names their kernel (the name string's address is the handle).
* Level1: the aclop / AI CPU launch calls are LAUNCH records (Node@launch)
  whose stream is the journal's; aclrtBinaryGetFunctionByEntry of a binary
  from aclrtBinaryLoadFromFile gives the journal's kernel name for the
  handle the launch passes; each aclrt* user call is one API event though
  libascendcl.so forwards it to libacl_rt.so (capture count == journal
  count, no libascendcl.so aclrt* site); the late libopapi_math.so is
  probed and its aclnn call traced once.
* Attached by pid (`-p`) after the launches: the process then dlopens
  libopapi_math.so (it waits for the test's go file, written once ascbpf says
  it is tracing): the library's sites are attached through the loader hook
  (the process waits for a second file, written once ascbpf -v reports that
  plan, as a -p target is never stopped) and its one aclnn call is captured
  with the journal's return code.
"""
import collections
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon, read_journal  # noqa: E402

ROUNDS = 2
# the launch calls and their stream argument (hicann/runtime headers)
STREAM_ARG = {
    "rtsLaunchKernelWithHostArgs": 2, "rtKernelLaunch": 5, "rtKernelLaunchWithFlagV2": 4,
    "rtKernelLaunchWithHandleV2": 5, "rtLaunchKernelByFuncHandleV3": 3,
    "rtsLaunchKernelWithConfig": 2, "rtsLaunchKernelWithDevArgs": 2,
    "rtCpuKernelLaunchWithFlag": 5, "rtAicpuKernelLaunchExWithArgs": 5, "rtKernelLaunchEx": 3,
    "rtMemcpyAsync": 5, "rtMemcpyAsyncEx": 5, "rtMemsetAsync": 4, "rtEventRecord": 1,
    "rtStreamWaitEvent": 0,
}
AICPU = ("rtCpuKernelLaunchWithFlag", "rtAicpuKernelLaunchExWithArgs")
NODE = ("rtKernelLaunch", "rtKernelLaunchWithFlagV2", "rtKernelLaunchWithHandleV2") + AICPU


def check(cond, msg):
    """tc.check (fails the test at once), returning the condition as trace_model wants."""
    tc.check(cond, msg)
    return True


def api_lines(j, name):
    return [x for k, x in j if k == "api" and x["name"] == name]


def probes_of(recs):
    return {r["probe_id"]: r for r in recs if r["type"] == "probe"}


def check_level2(t):
    recs, j = t.recs, t.journal()
    probes = probes_of(recs)
    enters = collections.defaultdict(list)
    for r in recs:
        if r["type"] == "enter" and r["probe_id"] in probes:
            enters[probes[r["probe_id"]]["symbol"]].append(r)
    for name, idx in STREAM_ARG.items():
        want = sorted(int(x["stream"], 16) for x in api_lines(j, name))
        got = sorted(r["args"][idx] for r in enters[name])
        check(len(want) == ROUNDS and got == want,
              "level 2: %s streams (arg%d): journal %s, capture %s" %
              (name, idx, [hex(s) for s in want], [hex(s) for s in got]))
    streams = {int(x["stream"], 16) for n in STREAM_ARG for x in api_lines(j, n)}
    check(len(streams) == len(STREAM_ARG), "%d distinct streams" % len(streams))
    # AI CPU kernels: named by their launch (the handle is the name string's address)
    for name in AICPU:
        fn = {r["handle"]: r["name"] for r in recs if r["type"] == "funcname" and
              probes[r["probe_id"]]["symbol"] == name}
        got = sorted(fn.get(r["args"][1]) for r in enters[name])
        want = sorted(x["op"] for x in api_lines(j, name))
        check(got == want, "level 2: %s names: journal %s, capture %s" % (name, want, got))
    print("level 2: %d launch calls, stream of each as the journal's" % len(STREAM_ARG))


def check_level1(t):
    recs, j = t.recs, t.journal()
    probes = probes_of(recs)
    # aclop / AI CPU runtime launches: LAUNCH records with the journal's stream
    for name in NODE:
        ids = {i for i, p in probes.items() if p["symbol"] == name}
        got = sorted(r["stream"] for r in recs if r["type"] == "launch" and
                     r["probe_id"] in ids and r["side"] == 0)
        want = sorted(int(x["stream"], 16) for x in api_lines(j, name))
        check(ids and got == want, "level 1: %s LAUNCH streams: journal %s, capture %s" %
              (name, [hex(s) for s in want], [hex(s) for s in got]))
    # opbase's names: ByEntry on a binary from a file -> the kernel the journal says (the
    # runtime's rtsFuncGetByEntry inside aclrtBinaryGetFunctionByEntry, not those that
    # rtKernelLaunchWithHandleV2 makes itself)
    fent = [r for r in recs if r["type"] == "funcname" and
            probes[r["probe_id"]]["kind_name"] == "funcname_entry"]
    outer = api_lines(j, "aclrtBinaryGetFunctionByEntry")
    want = sorted(x["op"] for x in api_lines(j, "rtsFuncGetByEntry") if x["ret"] == "0" and
                  any(o["tid"] == x["tid"] and int(o["t0"]) <= int(x["t0"]) <= int(o["t1"])
                      for o in outer))
    check(want and sorted(f["name"] for f in fent) == want,
          "ByEntry names: journal %s, capture %s" % (want, [f["name"] for f in fent]))
    names = {r["handle"]: r["name"] for r in recs if r["type"] == "funcname"}
    # each node launch's handle is named: registered stubs, the binary of a handle launch,
    # the AI CPU kernel's own name
    for name, kernel in (("rtKernelLaunch", "LpStub"), ("rtKernelLaunchWithFlagV2", "LpFlagV2"),
                         ("rtKernelLaunchWithHandleV2", "LpHandleV2"),
                         ("rtCpuKernelLaunchWithFlag", "LpCpuKernel"),
                         ("rtAicpuKernelLaunchExWithArgs", "LpAicpuOp")):
        ids = {i for i, p in probes.items() if p["symbol"] == name}
        got = [names.get(r["handle"]) for r in recs if r["type"] == "launch" and
               r["probe_id"] in ids and r["side"] == 0]
        want_k = [x["op"] for x in api_lines(j, name)]
        check(got == want_k == [kernel] * ROUNDS, "level 1: %s kernels: journal %s, capture %s" %
              (name, want_k, got))
    ids = {i for i, p in probes.items() if p["symbol"] == "aclrtLaunchKernelWithHostArgs"}
    launched = [names.get(r["args"][0]) for r in recs if r["type"] == "enter" and
                r["probe_id"] in ids]
    check(launched == ["LpHostArgs"] * ROUNDS, "aclrtLaunchKernelWithHostArgs kernels %s" %
          launched)
    # the compatibility layer: one API event per aclrt* call
    calls, unpaired = tc.calls(recs)
    check(not unpaired, "%d unpaired records" % len(unpaired))
    cn = collections.Counter(c[0] for c in calls)
    jn = collections.Counter(x["name"] for k, x in j if k == "api")
    for name in ("aclrtMemcpyAsync", "aclrtMemsetAsync", "aclrtRecordEvent", "aclrtMalloc",
                 "aclrtLaunchKernel", "aclrtBinaryGetFunctionByEntry", "aclInit"):
        check(jn[name] > 0 and cn[name] == jn[name], "%s: journal %d, capture %d" %
              (name, jn[name], cn[name]))
    libs = {os.path.basename(p["library"]) for p in probes.values()
            if p["symbol"].startswith("aclrt")}
    check(libs == {"libacl_rt.so"}, "aclrt* probed in %s" % sorted(libs))
    # the split library dlopened after the attach: probed, its call traced once
    late = [p for p in probes.values() if os.path.basename(p["library"]) == "libopapi_math.so"]
    check(any(p["symbol"] == "aclnnAddGetWorkspaceSize" for p in late),
          "libopapi_math.so sites: %s" % [p["symbol"] for p in late][:5])
    check(cn["aclnnAddGetWorkspaceSize"] == jn["aclnnAddGetWorkspaceSize"] == 1,
          "late aclnnAddGetWorkspaceSize: journal %d, capture %d" %
          (jn["aclnnAddGetWorkspaceSize"], cn["aclnnAddGetWorkspaceSize"]))
    print("level 1: %d node launches, %d ByEntry names, %d late sites" %
          (len(NODE), len(fent), len(late)))


def read_until(proc, what):
    """proc's stderr lines up to the first holding what (all of it if it ends first)."""
    err = ""
    while what not in err:
        more = proc.stderr.readline()
        if not more:
            break
        err += more
    return err


def check_attach_then_dlopen(d):
    with ModelDaemon(cards=1, journal=True) as m:
        jdir, go, out = (os.path.join(d, n) for n in ("journal", "go", "out"))
        os.mkdir(jdir)
        job = subprocess.Popen([m.bin("npu_launch_paths"), "1"], stdout=subprocess.PIPE,
                               env=m.env(NPU_MODEL_JOURNAL=jdir, NPU_LAUNCH_PATHS_GO=go),
                               text=True)
        tr = None
        try:
            line = job.stdout.readline()
            check("ready" in line, "npu_launch_paths said %r" % line)
            tr = subprocess.Popen([tc.ASCBPF, "trace", "-v", "--level", "1", "-p", str(job.pid),
                                   "-o", out, "--no-convert"], stderr=subprocess.PIPE,
                                  text=True)
            err = read_until(tr, "tracing 1 process")
            check("tracing 1 process" in err, "ascbpf did not attach: %s" % err[-500:])
            open(go, "w").close()
            line = job.stdout.readline()
            check("loaded" in line, "npu_launch_paths said %r" % line)
            err = read_until(tr, "plan 1 attached")
            check("plan 1 attached" in err, "no plan after the dlopen: %s" % err[-500:])
            open(go + ".2", "w").close()
            check(job.wait(timeout=120) == 0, "npu_launch_paths exited %s" % job.returncode)
            tr.stderr.read()
            check(tr.wait(timeout=120) == 0, "trace exited %s" % tr.returncode)
        finally:
            for p in (job, tr):
                if p and p.poll() is None:
                    p.kill()
                    p.wait()
    recs = tc.records(os.path.join(out, "ascbpf-%d.cap" % job.pid))
    j = read_journal(jdir, job.pid)
    probes = probes_of(recs)
    late = {i: p for i, p in probes.items()
            if os.path.basename(p["library"]) == "libopapi_math.so"}
    check(any(p["symbol"] == "aclnnAddGetWorkspaceSize" for p in late.values()),
          "-p: libopapi_math.so sites %s" % [p["symbol"] for p in late.values()][:5])
    calls, _ = tc.calls(recs)
    got = [c for c in calls if c[0] == "aclnnAddGetWorkspaceSize"]
    want = api_lines(j, "aclnnAddGetWorkspaceSize")
    exits = [r for r in recs if r["type"] == "exit" and r["probe_id"] in late]
    check(len(got) == len(want) == 1 and len(exits) == 1 and
          exits[0]["ret"] == int(want[0]["ret"]),
          "-p: late aclnnAddGetWorkspaceSize: journal %s, capture %d calls, exits %s" %
          ([x["ret"] for x in want], len(got), [r["ret"] for r in exits]))
    print("-p: %d libopapi_math.so sites attached after its dlopen, its call captured" %
          len(late))


def main():
    for level, fn in ((2, check_level2), (1, check_level1)):
        d = tc.workdir()
        try:
            t = tc.trace_model(d, "level %d" % level, ["--level", str(level), "--no-convert"],
                               ["npu_launch_paths", ROUNDS], check, runs=0)
            if t:
                st = tc.stats(t.recs)
                check(st["drops"] == 0, "drops %s" % st)
                fn(t)
        finally:
            shutil.rmtree(d, ignore_errors=True)
    d = tc.workdir()
    try:
        check_attach_then_dlopen(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
