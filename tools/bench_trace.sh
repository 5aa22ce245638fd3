#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/bench_trace.sh [RUNS] - what `ascbpf trace` costs the traced process.
# Not a test (nothing is asserted); prints a markdown table for BENCHMARKS.md.
#
# 1. Cost per traced call.  The tiny target of the tests
#    (tests/lib/trace_target.c, built without CET so every tool
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
#    for the default level 0 and for levels 1 and 2, and the Level0 floor:
#    bpftrace with empty probes on exactly the sites (and offsets, and return
#    probes) that `ascbpf probes --level 0` lists for npu_train.
# Medians over RUNS (default 5).
#
# ASCBPF_ALT=PATH  another ascbpf binary (e.g. the build before a change,
#                  OUTPUT=/tmp/before make) run as variant "alt" in the same
#                  rotation: per call at --level 1, and npu_train at level 0.
# BPF_STATS=1      section 1 again with kernel.bpf_stats_enabled=1, this build
#                  and alt in rotation: ns per run of asc_call_enter/exit on
#                  the same loop (the programs' own time, steadier than the
#                  loop's on a shared machine); and afterwards one traced
#                  npu_train baseline run per build: run_cnt and ns per run
#                  of each BPF program (sampled with bpftool while it runs).
# SECTIONS=1       only section 1 (per call), e.g. while comparing builds.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
OUTPUT=${OUTPUT:-$top/build}
export OUTPUT ASCBPF_TOP=$top
runs=${1:-5}
exec /usr/bin/python3 - "$runs" <<'PY'
import json, os, re, shutil, signal, statistics, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.join(os.environ["ASCBPF_TOP"], "tests", "lib"))
import trace_check as tc

RUNS = int(sys.argv[1])
PAIRS = 100000
DLOPEN_MS = 4000		# time for the tracer to start before the library is loaded
TRAIN_STEPS = 100

d = tempfile.mkdtemp(prefix="ascbpf-bench.")
tc.build(d)
lib = os.path.join(d, "libascendcl.so")
have_bpftrace = shutil.which("bpftrace") is not None


ALT = os.environ.get("ASCBPF_ALT")
BIN = {"ascbpf": tc.ASCBPF, "alt": ALT}


def run_variant(v):
    env = dict(os.environ, TT_LIBDIR=d)
    p = subprocess.Popen([os.path.join(d, "tt"), "1", str(PAIRS), "0", str(DLOPEN_MS)],
                         env=env, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()		# "ready PID"
    tool = None
    if v in BIN:
        tool = subprocess.Popen([BIN[v], "trace", "--level", "1", "-p", str(p.pid),
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


def prog_ids_of(pid):
    """Ids of the BPF programs this process holds (fdinfo prog_id): the
    other tracers on the machine load programs of the same names."""
    ids = set()
    try:
        for fd in os.listdir("/proc/%d/fdinfo" % pid):
            try:
                for line in open("/proc/%d/fdinfo/%s" % (pid, fd)):
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
            except OSError:
                pass
    except OSError:
        pass
    return ids


def prog_stats(pid):
    """{program name: (run_cnt, run_time_ns)} of the programs pid holds now."""
    mine = prog_ids_of(pid)
    r = subprocess.run(["bpftool", "prog", "show", "--json"], capture_output=True, text=True)
    try:
        progs = json.loads(r.stdout)
    except ValueError:
        return {}
    snap = {}
    for x in progs:
        if x.get("id") in mine and x.get("run_cnt"):
            c, t = snap.get(x["name"], (0, 0))
            snap[x["name"]] = (c + x["run_cnt"], t + x["run_time_ns"])
    return snap


def call_prog_ns(binary):
    """ns per run of asc_call_enter and asc_call_exit over one traced loop."""
    env = dict(os.environ, TT_LIBDIR=d)
    p = subprocess.Popen([os.path.join(d, "tt"), "1", str(PAIRS), "0", str(DLOPEN_MS)],
                         env=env, stdout=subprocess.PIPE, text=True)
    p.stdout.readline()
    tool = subprocess.Popen([binary, "trace", "--level", "1", "-p", str(p.pid), "--no-convert",
                             "--force", "-o", os.path.join(d, "out")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    last = {}
    while tool.poll() is None:
        last = prog_stats(tool.pid) or last
        time.sleep(0.05)
    p.stdout.read()
    p.wait()
    return [last[k][1] / last[k][0] if k in last else float("nan")
            for k in ("asc_call_enter", "asc_call_exit")]


variants = ["none", "floor", "ascbpf", "bpftrace"] if have_bpftrace else ["none", "ascbpf"]
if ALT:
    variants.insert(variants.index("ascbpf") + 1, "alt")
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

if os.environ.get("BPF_STATS") == "1":
    builds = [("this", tc.ASCBPF)] + ([("alt", ALT)] if ALT else [])
    ns = {b: [] for b, _ in builds}
    subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=1"])
    try:
        for r in range(RUNS):
            for b, binary in builds:
                ns[b].append(call_prog_ns(binary))
    finally:
        subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=0"])
    print("\n## per call: the generic programs' own time (kernel.bpf_stats_enabled, %d runs "
          "in rotation, median ns per run)\n" % RUNS)
    print("| build | asc_call_enter | asc_call_exit | sum per call |")
    print("|---|---|---|---|")
    for b, _ in builds:
        en = statistics.median(x[0] for x in ns[b])
        ex = statistics.median(x[1] for x in ns[b])
        print("| %s | %.1f | %.1f | %.1f |" % (b, en, ex, en + ex))

train = os.path.join(tc.OUTPUT, "npu_model", "bin", "npu_train")
print()
if os.environ.get("SECTIONS") == "1":
    pass
elif not os.path.exists(train):
    print("npu_train is not built: no workload slowdown measured")
else:
    sys.path.insert(0, os.path.join(os.environ["ASCBPF_TOP"], "tests", "lib"))
    from npu_model import ModelDaemon
    print("## npu_train slowdown under ascbpf trace (%d runs, median of the workload's own "
          "wall_s, %d steps)\n" % (RUNS, TRAIN_STEPS))
    print("| scenario | variant | untraced (s) | traced (s) | slowdown |")
    print("|---|---|---|---|---|")

    def wall(out):
        m = re.search(r"wall_s=([0-9.]+)", out)
        return float(m[1]) if m else float("nan")

    def level0_floor_prog(m):
        """bpftrace program with empty probes on the Level0 sites of npu_train, at
        ascbpf's offsets, a return probe where ascbpf has one."""
        p = subprocess.Popen([train, "--scenario", "baseline", "--steps", "100000"],
                             env=m.env(), stdout=subprocess.DEVNULL)
        try:
            for _ in range(100):
                r = subprocess.run([tc.ASCBPF, "probes", "-p", str(p.pid), "--json", "--level",
                                    "0"], capture_output=True, text=True)
                if r.returncode == 0 and "halSqTaskSend" in r.stdout:
                    break
                time.sleep(0.05)
        finally:
            p.kill()
            p.wait()
        prog = []
        for site in json.loads(r.stdout)["sites"]:
            # what `ascbpf trace` attaches at level 0 without --profile-memory
            # (user/trace/trace.c select_progs): entry probes of these kinds, return
            # probes only on aten ops and AsncExecFunc (the Dequeue span)
            if site["kind"] not in ("aten_op", "enqueue", "dequeue", "sqe_send", "step"):
                continue
            off = site["attach_offset"] - site["func_offset"]
            at = "%s:%s%s" % (site["library"], site["symbol"], "+%d" % off if off else "")
            prog.append("uprobe:%s {}" % at)
            if site["kind"] in ("aten_op", "dequeue"):
                prog.append("uretprobe:%s:%s {}" % (site["library"], site["symbol"]))
        return "\n".join(prog) + "\n", len(prog)

    with ModelDaemon(cards=1) as m:
        floor0 = None
        if have_bpftrace:
            floor0, nprobes = level0_floor_prog(m)
            with open(os.path.join(d, "floor0.bt"), "w") as f:
                f.write(floor0)
        for sc in ("baseline", "launch-storm"):
            steps = TRAIN_STEPS if sc == "baseline" else 2
            cmd = [train, "--scenario", sc, "--steps", str(steps)]
            rows = [("level 0 (default)", [tc.ASCBPF, "trace", "--level", "0"]),
                    ("level 1", [tc.ASCBPF, "trace", "--level", "1"]),
                    ("level 2", [tc.ASCBPF, "trace", "--level", "2"])]
            if ALT:
                rows.insert(1, ("alt level 0", [ALT, "trace", "--level", "0"]))
            if floor0:
                rows.append(("floor of the level 0 sites", None))
            t0s, t1s = [], {name: [] for name, _ in rows}
            for r in range(RUNS):	# untraced and each variant in rotation
                t0s.append(wall(subprocess.run(cmd, env=m.env(), capture_output=True,
                                               text=True).stdout))
                for name, tool in rows:
                    if tool is None:
                        argv = ["bpftrace", os.path.join(d, "floor0.bt"), "-c", " ".join(cmd)]
                    else:
                        argv = tool + ["--no-convert", "--force", "-o", os.path.join(d, "tr"),
                                       "--"] + cmd
                    t1s[name].append(wall(subprocess.run(argv, env=m.env(),
                                                         capture_output=True,
                                                         text=True).stdout))
            a = statistics.median(t0s)
            for name, _ in rows:
                b = statistics.median(t1s[name])
                print("| %s (%d steps) | %s | %.3f | %.3f | %+.1f%% |" %
                      (sc, steps, name, a, b, (b / a - 1) * 100))
        if floor0:
            print("\n(floor: %d empty bpftrace probes, `ascbpf probes --level 0` of npu_train)" %
                  nprobes)

        if os.environ.get("BPF_STATS") == "1":
            print("\n## BPF programs under ascbpf trace --level 0, npu_train baseline %d steps "
                  "(kernel.bpf_stats_enabled)\n" % (10 * TRAIN_STEPS))
            print("| build | program | runs | ns per run |")
            print("|---|---|---|---|")
            subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=1"])
            try:
                for label, binary in [("this", tc.ASCBPF)] + ([("alt", ALT)] if ALT else []):
                    p = subprocess.Popen([binary, "trace", "--level", "0", "--no-convert",
                                          "--force", "-o", os.path.join(d, "st"), "--", train,
                                          "--scenario", "baseline", "--steps",
                                          str(10 * TRAIN_STEPS)],
                                         env=m.env(), stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
                    last = {}
                    while p.poll() is None:
                        last = prog_stats(p.pid) or last
                        time.sleep(0.1)
                    for k, (c, t) in sorted(last.items(), key=lambda kv: -kv[1][1]):
                        if c >= TRAIN_STEPS:
                            print("| %s | %s | %d | %.0f |" % (label, k, c, t / c))
            finally:
                subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=0"])
shutil.rmtree(d, ignore_errors=True)
PY
