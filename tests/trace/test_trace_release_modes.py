# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The tracer's two symbol modes on the release-built libtorch_npu.so (issue 14 item 1).

npu_train and the model's libraries are copied without the .debug/ directory, as a host with
the wheel but not its debug files has them.  Then:

* `ascbpf probes` without debug symbols: libtorch_npu.so is in .dynsym-only mode, the hidden
  functions (Repository::Enqueue, AsncExecFunc, reportMemoryDataToNpuProfiler) are not planned
  but listed as missing ("not exported"), the task-queue view is unavailable and the memory view
  says PTA is; with `--debug-dir build/npu_model/debug` the same process is in debug mode, the
  debug file being the one readelf's build-id names, and the views come from it;
* a debug file of another build under the debuglink's name is not used (build-ids differ);
* `ascbpf probes` on the Python job (real PyTorch, the release-built Python backend): all six
  views with their modes, the task queue unavailable without the debug file, served with it;
* `ascbpf trace` without debug symbols: exits 0 on a mem-growth run, warns about each hidden
  entry, and invents nothing: no queue record and no PTA memory record although the journal
  has both; the aten ops and the GE/APP memory events still equal the journal's.
"""
import collections
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib",
                                "probes"))
import elfcheck  # noqa: E402
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon, read_journal, OUT  # noqa: E402

TRAIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "npu_model",
                     "workloads", "python", "train.py")
HIDDEN = {"_ZN7c10_npu10Repository7EnqueueEPv": "enqueue",
          "_ZN6at_npu6native12AsncExecFuncEPv": "dequeue",
          "_ZN9torch_npu8profiler29reportMemoryDataToNpuProfilerERKNS0_11MemoryUsageE":
          "mem_report"}


def release_copy(d):
    """bin/npu_train and lib/*.so (RUNPATH $ORIGIN/../lib), python/torch_npu (RUNPATH
    $ORIGIN/../../../lib), all without their .debug/ directories."""
    for sub in ("bin", "lib"):
        os.mkdir(os.path.join(d, sub))
    shutil.copy2(os.path.join(OUT, "npu_model", "bin", "npu_train"), os.path.join(d, "bin"))
    for lib in glob.glob(os.path.join(OUT, "npu_model", "lib", "*.so")):
        shutil.copy2(lib, os.path.join(d, "lib"))
    shutil.copytree(os.path.join(OUT, "npu_model", "python"), os.path.join(d, "python"),
                    ignore=shutil.ignore_patterns(".debug"))
    for sub in ("lib", "python/torch_npu/lib"):
        tc.check(not os.path.exists(os.path.join(d, sub, ".debug")), f"copied {sub}/.debug/")
    return os.path.join(d, "bin", "npu_train")


def probes(pid, *extra):
    r = subprocess.run([tc.ASCBPF, "probes", "-p", str(pid), "--json"] + list(extra),
                       capture_output=True, text=True, timeout=60)
    tc.check(r.returncode == 0, f"probes {extra} exited {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


def check_probes(train, m):
    job = subprocess.Popen([train, "--scenario", "baseline", "--steps", "0"], env=m.env(),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 60
        while elfcheck.mapped_path(job.pid, "libopapi.so") is None:
            tc.check(job.poll() is None, f"npu_train exited {job.returncode}")
            tc.check(time.time() < deadline, "npu_train never dlopened libopapi.so")
            time.sleep(0.1)
        lib = elfcheck.mapped_path(job.pid, "libtorch_npu.so")
        nodbg = probes(job.pid)
        dbgdir = os.path.join(OUT, "npu_model", "debug")
        withdbg = probes(job.pid, "--debug-dir", dbgdir)
        bad = subprocess.run([tc.ASCBPF, "probes", "-p", str(job.pid), "--debug-dir",
                              "/nonexistent/dir"], capture_output=True, text=True, timeout=60)
    finally:
        job.kill()
        job.wait()
    tc.check(bad.returncode == 2 and "--debug-dir" in bad.stderr, f"bad --debug-dir: {bad}")
    bid = elfcheck.build_id(lib)
    want_dbg = os.path.join(dbgdir, ".build-id", bid[:2], bid[2:] + ".debug")

    mode = {x["library"]: x for x in nodbg["symbols"]}
    tc.check(mode[lib]["mode"] == "dynsym" and mode[lib]["debug_file"] is None, mode[lib])
    kinds = {s["kind"] for s in nodbg["sites"] if s["library"] == lib}
    tc.check(not kinds & set(HIDDEN.values()), f"hidden kinds planned without debug: {kinds}")
    tc.check("opname_stdstr" in kinds, f"exported entries not planned: {kinds}")
    missing = {x["symbol"]: x["reason"] for x in nodbg["missing"] if x["library"] ==
               "libtorch_npu.so"}
    for sym in HIDDEN:
        tc.check(sym in missing and "not exported" in missing[sym], f"{sym}: {missing.get(sym)}")
    views = {v["view"]: v for v in nodbg["views"]}
    tc.check(views["task queue"]["mode"] == "unavailable" and not views["task queue"]["sites"]
             and "not exported" in views["task queue"]["note"], views["task queue"])
    tc.check(views["memory"]["mode"] == "exported symbols" and
             "PTA" in views["memory"]["note"], views["memory"])
    for v in ("framework ops", "steps"):
        tc.check(views[v]["mode"] == "exported symbols", views[v])
    print("no debug symbols:", {v: views[v]["mode"] for v in views})

    mode = {x["library"]: x for x in withdbg["symbols"]}
    tc.check(mode[lib]["mode"] == "debug" and mode[lib]["debug_file"] == want_dbg,
             f"{mode[lib]}, readelf's build-id names {want_dbg}")
    got = {s["symbol"]: s["kind"] for s in withdbg["sites"] if s["library"] == lib}
    for sym, kind in HIDDEN.items():
        tc.check(got.get(sym) == kind, f"--debug-dir: {sym} planned as {got.get(sym)}")
    views = {v["view"]: v for v in withdbg["views"]}
    for v in ("task queue", "memory"):
        tc.check(views[v]["mode"] == "debug symbols" and views[v]["note"] is None, views[v])
    print("--debug-dir:", {v: views[v]["mode"] for v in views})


def check_python_probes(d, m):
    """probes -p on the Python job (real PyTorch + the release-built torch_npu): each view and
    its mode, without and with the debug file."""
    ready = os.path.join(d, "ready")
    job = subprocess.Popen(["/usr/bin/python3", TRAIN, "--scenario", "baseline", "--steps", "0",
                            "--wait-ready", ready],
                           env=m.env(PYTHONPATH=os.path.join(d, "python")),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 120
        while not os.path.exists(ready):
            tc.check(job.poll() is None, f"train.py exited {job.returncode}")
            tc.check(time.time() < deadline, "train.py never got ready")
            time.sleep(0.1)
        lib = elfcheck.mapped_path(job.pid, "libtorch_npu.so")
        nodbg = probes(job.pid)
        withdbg = probes(job.pid, "--debug-dir", os.path.join(OUT, "npu_model", "debug"))
    finally:
        job.kill()
        job.communicate()
    tc.check(lib and lib.startswith(os.path.join(d, "python")), f"torch_npu from {lib}")
    want = {"framework ops", "task queue", "memory", "steps", "kernel names", "device timing"}
    for plan, mode, queue in ((nodbg, "dynsym", "unavailable"), (withdbg, "debug",
                                                                   "debug symbols")):
        views = {v["view"]: v for v in plan["views"]}
        tc.check(set(views) == want, sorted(views))
        libmode = {x["library"]: x["mode"] for x in plan["symbols"]}
        tc.check(libmode.get(lib) == mode, f"{lib}: {libmode.get(lib)}, wanted {mode}")
        tc.check(views["task queue"]["mode"] == queue, views["task queue"])
        tc.check(views["framework ops"]["mode"] == "exported symbols", views["framework ops"])
        print(f"python job, {mode}:", {v: views[v]["mode"] for v in sorted(views)})


def check_wrong_debug_file(train, m, d):
    """A debug file under the right name but of another build (the Python backend's) is not
    used: the build-ids differ, so the mode stays .dynsym only."""
    os.mkdir(os.path.join(d, "lib", ".debug"))
    shutil.copy2(os.path.join(OUT, "npu_model", "python", "torch_npu", "lib", ".debug",
                              "libtorch_npu.so.debug"),
                 os.path.join(d, "lib", ".debug", "libtorch_npu.so.debug"))
    job = subprocess.Popen([train, "--scenario", "baseline", "--steps", "0"], env=m.env(),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 60
        while elfcheck.mapped_path(job.pid, "libtorch_npu.so") is None:
            tc.check(job.poll() is None and time.time() < deadline, "npu_train did not start")
            time.sleep(0.1)
        lib = elfcheck.mapped_path(job.pid, "libtorch_npu.so")
        plan = probes(job.pid)
    finally:
        job.kill()
        job.wait()
        shutil.rmtree(os.path.join(d, "lib", ".debug"))
    mode = {x["library"]: x for x in plan["symbols"]}[lib]
    tc.check(mode["mode"] == "dynsym" and mode["debug_file"] is None,
             f"another build's debug file was used: {mode}")
    print("another build's debug file: not used")


def check_trace(train, m, d):
    jdir = os.path.join(d, "journal")
    os.mkdir(jdir)
    out = os.path.join(d, "out")
    r = tc.run_ascbpf(["trace", "--level", "2", "-o", out, "--no-convert", "--profile-memory",
                       "--", train, "--scenario", "mem-growth", "--steps", "3"],
                      env=m.env(NPU_MODEL_JOURNAL=jdir), timeout=240)
    tc.check(r.returncode == 0, f"trace exited {r.returncode}")
    for sym in HIDDEN:
        tc.check(f"{sym} not attached: not exported" in r.stderr, f"no warning for {sym}")
    m.proc.send_signal(signal.SIGTERM)	# flushes the daemon's journal
    m.proc.wait(timeout=30)
    caps = [f for f in os.listdir(out) if f.endswith(".cap")]
    tc.check(len(caps) == 1, f"captures {caps}")
    recs = tc.records(os.path.join(out, caps[0]))
    pid = recs[0]["tgid"]
    j = list(read_journal(jdir, pid))
    st = tc.stats(recs)
    tc.check(st["drops"] == 0, f"drops {st}")

    # nothing invented where the symbols are missing, though the job had both
    jq = sum(1 for k, _ in j if k == "queue")
    jpta = sum(1 for k, x in j if k == "mem" and x["component"] == "PTA")
    tc.check(jq > 0 and jpta > 0, f"journal: {jq} queue lines, {jpta} PTA events")
    tc.check(not any(x["type"] == "queue" for x in recs), "queue records without Enqueue probes")
    tc.check(not any(x["type"] == "mem" and x["component"] == 0 for x in recs),
             "PTA memory records without the allocator's report probe")

    # what is exported still matches the journal: aten ops, GE and APP memory
    probed = {p["symbol"] for p in recs if p["type"] == "probe"}
    tc.check(not probed & set(HIDDEN), f"hidden functions probed: {probed & set(HIDDEN)}")
    ccalls, unpaired = tc.calls(recs)
    tc.check(not unpaired, f"{len(unpaired)} unpaired records")
    jn = collections.Counter(x["name"] for k, x in j if k == "api" and x["name"] in probed)
    cn = collections.Counter(c[0] for c in ccalls if c[0] in jn)
    aten = [n for n in jn if n.startswith("_ZN2at4_ops")]
    tc.check(aten and jn == cn, f"calls differ: {list((jn - cn).items())[:3]} / "
             f"{list((cn - jn).items())[:3]}")
    kinds = {"malloc": 0, "free": 1, "block_free": 2}
    for comp, cid in (("GE", 1), ("APP", 2)):
        jm = collections.Counter((int(x["ptr"], 0), int(x["size"]), kinds[x["op"]])
                                 for k, x in j if k == "mem" and x["component"] == comp)
        cm = collections.Counter((x["ptr"], x["size"], x["data_type"]) for x in recs
                                 if x["type"] == "mem" and x["component"] == cid)
        tc.check(jm and jm == cm, f"{comp} memory differs: {list((jm - cm).items())[:3]} / "
                 f"{list((cm - jm).items())[:3]}")
    print(f"trace without debug symbols: {len(aten)} aten ops as the journal, 0 of {jq} queue "
          f"lines and 0 of {jpta} PTA events captured (unavailable, not invented)")


def main():
    d = tc.workdir()
    try:
        train = release_copy(d)
        with ModelDaemon(cards=1) as m:
            check_probes(train, m)
            check_wrong_debug_file(train, m, d)
            check_python_probes(d, m)
        with ModelDaemon(cards=1, journal=True) as m:
            check_trace(train, m, d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
