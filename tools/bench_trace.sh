#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/bench_trace.sh [RUNS] - what `ascbpf trace` costs the traced process.
# Not a test (nothing is asserted); prints a markdown table for BENCHMARKS.md.
#
# 1. Cost per traced call.  The tiny target of the tests
#    (tests/integration/test_trace_target.c, built without CET so every tool
#    probes the function's first instruction) calls aclrtMalloc + aclrtFree
#    PAIRS times in a loop and reports the loop's time.  Variants, run side by
#    side, RUNS rounds in rotation:
#      none      no tracer
#      floor     bpftrace with empty uprobe + uretprobe on the same two
#                functions at the same offset (the kernel's uprobe cost alone)
#      ascbpf    ascbpf trace -p PID --no-convert --level 1 (aclrt* calls are
#                Level1: the default level 0 does not probe them at all)
#      bpftrace  bpftrace writing the same capture: tid and entry/exit times
#                of every call through its ring buffer
#    cost/call = (variant ns per call - none ns per call); ratio = cost/floor.
# 2. npu_train slowdown (baseline, launch-storm), when npu_model's npu_train
#    is built: the workload's own wall_s (its training loop, not ascbpf's
#    start-up) untraced vs under `ascbpf trace --level N -- npu_train ...`,
#    for the default level 0 and for levels 1 and 2.
# Medians over RUNS (default 5).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
OUTPUT=${OUTPUT:-$top/build}
export OUTPUT ASCBPF_TOP=$top
runs=${1:-5}
exec /usr/bin/python3 - "$runs" <<'PY'
import os, re, shutil, signal, statistics, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.join(os.environ["ASCBPF_TOP"], "tests", "integration"))
import trace_check as tc

RUNS = int(sys.argv[1])
PAIRS = 100000
DLOPEN_MS = 4000		# time for the tracer to start before the library is loaded
TRAIN_STEPS = 100

d = tempfile.mkdtemp(prefix="ascbpf-bench.")
tc.build(d)
lib = os.path.join(d, "libascendcl.so")
have_bpftrace = shutil.which("bpftrace") is not None


def run_variant(v):
    env = dict(os.environ, TT_LIBDIR=d)
    p = subprocess.Popen([os.path.join(d, "tt"), "1", str(PAIRS), "0", str(DLOPEN_MS)],
                         env=env, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()		# "ready PID"
    tool = None
    if v == "ascbpf":
        tool = subprocess.Popen([tc.ASCBPF, "trace", "--level", "1", "-p", str(p.pid),
                                 "--no-convert",
                                 "--force", "-o", os.path.join(d, "out")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elif v in ("floor", "bpftrace"):
        if v == "floor":
            prog = "".join("uprobe:%s:%s {} uretprobe:%s:%s {}\n" % (lib, f, lib, f)
                           for f in ("aclrtMalloc", "aclrtFree"))
        else:
            prog = "".join(
                'uprobe:%s:%s { printf("E %%d %%llu\\n", tid, nsecs); }\n'
                'uretprobe:%s:%s { printf("X %%d %%llu\\n", tid, nsecs); }\n' % (lib, f, lib, f)
                for f in ("aclrtMalloc", "aclrtFree"))
        tool = subprocess.Popen(["bpftrace", "-p", str(p.pid), "-o", os.path.join(d, "bt.out"),
                                 "-e", prog], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    p.wait()
    if tool:
        try:
            tool.wait(timeout=30)
        except subprocess.TimeoutExpired:
            tool.send_signal(signal.SIGINT)
            tool.wait()
    m = re.search(r"loop_ns=(\d+)", out)
    return int(m[1]) / (2 * PAIRS) if m else float("nan")


variants = ["none", "floor", "ascbpf", "bpftrace"] if have_bpftrace else ["none", "ascbpf"]
res = {v: [] for v in variants}
for r in range(RUNS):
    for v in variants:
        res[v].append(run_variant(v))
med = {v: statistics.median(x) for v, x in res.items()}
print("## ascbpf trace: cost per traced call (%d runs, median, %d calls each)\n" %
      (RUNS, 2 * PAIRS))
print("| variant | ns/call | cost over none (ns) | cost / floor |")
print("|---|---|---|---|")
floor = med.get("floor", float("nan")) - med["none"]
for v in variants:
    c = med[v] - med["none"]
    print("| %s | %.0f | %.0f | %s |" % (v, med[v], c,
          "%.2f" % (c / floor) if v != "none" and floor == floor and floor > 0 else "-"))
if not have_bpftrace:
    print("\n(bpftrace not installed: no floor and no bpftrace comparison)")

train = os.path.join(tc.OUTPUT, "npu_model", "bin", "npu_train")
print()
if not os.path.exists(train):
    print("npu_train is not built: no workload slowdown measured")
else:
    sys.path.insert(0, os.path.join(os.environ["ASCBPF_TOP"], "tests", "lib"))
    from npu_model import ModelDaemon
    print("## npu_train slowdown under ascbpf trace (%d runs, median of the workload's own "
          "wall_s, %d steps)\n" % (RUNS, TRAIN_STEPS))
    print("| scenario | level | untraced (s) | traced (s) | slowdown |")
    print("|---|---|---|---|---|")

    def wall(out):
        m = re.search(r"wall_s=([0-9.]+)", out)
        return float(m[1]) if m else float("nan")

    with ModelDaemon(cards=1) as m:
        for sc in ("baseline", "launch-storm"):
            steps = TRAIN_STEPS if sc == "baseline" else 2
            cmd = [train, "--scenario", sc, "--steps", str(steps)]
            levels = (0, 1, 2)
            t0s, t1s = [], {lv: [] for lv in levels}
            for r in range(RUNS):	# untraced and each level in rotation
                t0s.append(wall(subprocess.run(cmd, env=m.env(), capture_output=True,
                                               text=True).stdout))
                for lv in levels:
                    t1s[lv].append(wall(subprocess.run(
                        [tc.ASCBPF, "trace", "--level", str(lv), "--no-convert", "--force",
                         "-o", os.path.join(d, "tr"), "--"] + cmd, env=m.env(),
                        capture_output=True, text=True).stdout))
            a = statistics.median(t0s)
            for lv in levels:
                b = statistics.median(t1s[lv])
                print("| %s (%d steps) | %d%s | %.3f | %.3f | %+.1f%% |" %
                      (sc, steps, lv, " (default)" if lv == 0 else "", a, b,
                       (b / a - 1) * 100))
shutil.rmtree(d, ignore_errors=True)
PY
