# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""C++ exceptions through functions ascbpf puts a return probe on (bpf/unwind.bpf.h).

A return probe replaces the return address with the kernel's trampoline, where the C++
unwinder finds no frame: without the unwind guard the traced process aborts in
std::terminate at the first exception that unwinds through such a frame.

* unwtest (tests/lib/probes/unwtest.cpp) under `--step libunwtest.so:unw_through`: every
  call throws through the probed frame; the process runs to the end (its own check: N
  exceptions caught by main), trace says N holds, and no step ends (unw_through never
  returns);
* under `--step libunwtest.so:unw_catcher`: the exception is caught inside the probed
  frame, which is re-armed at the catch: its N returns are N STEP records (without the
  re-arm its return would bypass the trampoline: no STEP at all);
* the control: with --no-hold (no guard) the first case aborts, as bpftrace's uretprobes
  make it abort: the test can tell the guard from its absence;
* real PyTorch (/usr/bin/python3): a shape error raised inside at::_ops::add_Tensor::call
  (return-probed) and caught by Python, 20 times: the script ends normally, and the ops
  after each exception still have their ENTER and EXIT; the same with `-p` on a script
  already running (not our child: held through the release watchdog).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402

N = 5
FIX = os.path.join(tc.OUTPUT, "tests", "lib", "probes")
UNWTEST = os.path.join(FIX, "unwtest")
PY = """import torch
a, b = torch.ones(2), torch.ones(3)
n = 0
for i in range(20):
    try:
        a + b
    except RuntimeError:
        n += 1
    c = a * 2
print("caught", n, float(c.sum()))
"""
# the same in a process already running (-p): it says when torch is imported, then throws
# every 50 ms until the file argv[1] exists
PY_P = """import os, sys, time
import torch
a, b = torch.ones(2), torch.ones(3)
print("ready", flush=True)
n = 0
while not os.path.exists(sys.argv[1]):
    try:
        a + b
    except RuntimeError:
        n += 1
    c = a * 2
    time.sleep(0.05)
print("caught", n, float(c.sum()))
"""


def trace(d, name, opts, cmd):
    out = os.path.join(d, "out." + name)
    r = tc.run_ascbpf(["trace", "-o", out, "--no-convert"] + opts + (["--"] + cmd if cmd else []),
                      timeout=240)
    print("--- %s: exit %d\n%s%s" % (name, r.returncode, r.stdout, r.stderr), end="")
    caps = [f for f in os.listdir(out) if f.endswith(".cap")] if os.path.isdir(out) else []
    recs = tc.records(os.path.join(out, caps[0])) if len(caps) == 1 else []
    return r, recs


def holds(r):
    m = re.search(r"unwind guard: (\d+) holds? .*?, (\d+) return address(?:es)? rewritten, "
                  r"(\d+) not", r.stderr)
    return tuple(int(x) for x in m.groups()) if m else None


d = tempfile.mkdtemp(prefix="ascbpf-cxx-exc.")
try:
    r, recs = trace(d, "through", ["--step", "libunwtest.so:unw_through"], [UNWTEST, str(N)])
    tc.check(r.returncode == 0 and "through %d caught %d" % (N, N) in r.stdout + r.stderr and
             "killed by signal" not in r.stderr,
             "through: the traced process did not run to its end (exit %d)" % r.returncode)
    tc.check(holds(r) == (N, N, 0), "through: guard %s, want %d holds, %d rewritten" %
             (holds(r), N, N))
    tc.check(not [x for x in recs if x["type"] == "step" and x["probe_id"]],
             "through: a step ended, but unw_through never returns")

    r, recs = trace(d, "catcher", ["--step", "libunwtest.so:unw_catcher"], [UNWTEST, str(N)])
    steps = [x for x in recs if x["type"] == "step" and x["probe_id"]]
    tc.check(r.returncode == 0 and "through %d caught %d" % (N, N) in r.stdout + r.stderr,
             "catcher: the traced process did not run to its end (exit %d)" % r.returncode)
    tc.check(len(steps) == N, "catcher: %d STEP records at unw_catcher's returns, want %d "
             "(its frame re-armed at each catch)" % (len(steps), N))
    # each exception: one hold at the throw (both frames), one at the catch (unw_catcher's)
    g = holds(r)
    tc.check(g is not None and g[0] == 2 * N and g[2] == 0,
             "catcher: guard %s, want %d holds" % (g, 2 * N))
    print("unwtest: %d exceptions through a probed frame, %d caught inside one: ran to the "
          "end, %d steps" % (N, N, len(steps)))

    r, recs = trace(d, "no-guard", ["--no-hold", "--step", "libunwtest.so:unw_through"],
                    [UNWTEST, str(N)])
    tc.check("no unwind guard (--no-hold)" in r.stderr and
             "killed by signal 6" in r.stderr and "terminate called" in r.stderr,
             "control: without the guard the process did not abort as it would")

    py = os.path.join(d, "exc.py")
    with open(py, "w") as f:
        f.write(PY)
    r, recs = trace(d, "torch", [], ["/usr/bin/python3", py])
    tc.check(r.returncode == 0 and "caught 20 4.0" in r.stdout + r.stderr and
             "killed by signal" not in r.stderr,
             "torch: the script did not run to its end (exit %d)" % r.returncode)
    probes = {p["probe_id"]: p["symbol"] for p in recs if p["type"] == "probe"}
    mul = [p for p, s in probes.items() if re.match(r"_ZN2at4_ops10mul_(Tensor|Scalar)4callE", s)]
    ent = sum(1 for x in recs if x["type"] == "enter" and x["probe_id"] in mul)
    ext = sum(1 for x in recs if x["type"] == "exit" and x["probe_id"] in mul)
    tc.check(mul and ent >= 1 and ent == ext,
             "torch: aten::mul after the exceptions: %d ENTER, %d EXIT" % (ent, ext))
    g = holds(r)
    tc.check(g is not None and g[0] >= 1 and g[2] == 0, "torch: guard %s" % (g,))
    print("torch: 20 RuntimeErrors from at::_ops::add_Tensor::call caught in Python: ran to "
          "the end; aten::mul %d ENTER / %d EXIT" % (ent, ext))

    # -p: not our child; the release watchdog lets it go on should ascbpf die
    with open(py, "w") as f:
        f.write(PY_P)
    flag = os.path.join(d, "stop")
    p = subprocess.Popen(["/usr/bin/python3", py, flag], stdout=subprocess.PIPE, text=True)
    ready = p.stdout.readline()
    r, recs = trace(d, "torch-p", ["--duration", "2", "-p", str(p.pid)], [])
    open(flag, "w").close()
    outp, _ = p.communicate(timeout=120)
    m = re.search(r"caught (\d+) 4.0", outp)
    tc.check(ready == "ready\n" and r.returncode == 0 and p.returncode == 0 and m,
             "torch -p: trace exit %d, the script's exit %d, output %r" %
             (r.returncode, p.returncode, ready + outp))
    g = holds(r)
    tc.check(g is not None and g[0] >= 1 and g[2] == 0, "torch -p: guard %s" % (g,))
    print("torch -p: %d holds while the running script threw (%s exceptions in all); it ran "
          "to the end" % (g[0], m.group(1)))
finally:
    shutil.rmtree(d, ignore_errors=True)
print("PASS")
