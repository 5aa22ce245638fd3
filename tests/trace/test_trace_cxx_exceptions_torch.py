# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The unwind guard (bpf/unwind.bpf.h) on real PyTorch (/usr/bin/python3); the guard's
cases on a C++ fixture and the control without it: test_trace_cxx_exceptions.py.

* `-- CMD`: a shape error raised inside at::_ops::add_Tensor::call (return-probed) and
  caught by Python, 20 times: the script ends normally, each exception is one hold, and
  the ops after the exceptions still have their ENTER and EXIT;
* `-p` on a script already running (not our child: held through the release watchdog),
  throwing every 50 ms while the trace runs: it ends normally.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402

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


d = tempfile.mkdtemp(prefix="ascbpf-cxx-exc-torch.")
try:
    py = os.path.join(d, "exc.py")
    with open(py, "w") as f:
        f.write(PY)
    r, recs = tc.trace_records(d, "torch", [], ["/usr/bin/python3", py])
    tc.check(r.returncode == 0 and "caught 20 4.0" in r.stdout + r.stderr and
             "killed by signal" not in r.stderr,
             "torch: the script did not run to its end (exit %d)" % r.returncode)
    probes = {p["probe_id"]: p["symbol"] for p in recs if p["type"] == "probe"}
    mul = [p for p, s in probes.items()
           if re.match(r"_ZN2at4_ops10mul_(Tensor|Scalar)4callE", s)]
    ent = sum(1 for x in recs if x["type"] == "enter" and x["probe_id"] in mul)
    ext = sum(1 for x in recs if x["type"] == "exit" and x["probe_id"] in mul)
    tc.check(mul and ent >= 1 and ent == ext,
             "torch: aten::mul after the exceptions: %d ENTER, %d EXIT" % (ent, ext))
    g = tc.unwind_holds(r.stderr)
    tc.check(g is not None and g[0] >= 1 and g[2] == 0, "torch: guard %s" % (g,))
    print("torch: 20 RuntimeErrors from at::_ops::add_Tensor::call caught in Python: ran to "
          "the end; aten::mul %d ENTER / %d EXIT" % (ent, ext))

    # -p: not our child; the release watchdog lets it go on should ascbpf die
    with open(py, "w") as f:
        f.write(PY_P)
    flag = os.path.join(d, "stop")
    p = subprocess.Popen(["/usr/bin/python3", py, flag], stdout=subprocess.PIPE, text=True)
    ready = p.stdout.readline()
    r, recs = tc.trace_records(d, "torch-p", ["--duration", "2", "-p", str(p.pid)], [])
    open(flag, "w").close()
    outp, _ = p.communicate(timeout=120)
    m = re.search(r"caught (\d+) 4.0", outp)
    tc.check(ready == "ready\n" and r.returncode == 0 and p.returncode == 0 and m,
             "torch -p: trace exit %d, the script's exit %d, output %r" %
             (r.returncode, p.returncode, ready + outp))
    g = tc.unwind_holds(r.stderr)
    tc.check(g is not None and g[0] >= 1 and g[2] == 0, "torch -p: guard %s" % (g,))
    print("torch -p: %d holds while the running script threw (%s exceptions in all); it ran "
          "to the end" % (g[0], m.group(1)))
finally:
    shutil.rmtree(d, ignore_errors=True)
print("PASS")
