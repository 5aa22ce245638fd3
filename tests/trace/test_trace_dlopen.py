# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A library dlopened after ascbpf attached (as torch_npu dlopens
libopapi.so): the dynamic loader hook makes ascbpf rescan the maps and attach
the new library's probes without restarting anything.  For -p the target is
never stopped, so calls made in the moment between the dlopen and the attach
may be missed (documented); the target here waits 300 ms after its dlopen,
and from the first captured call on every journal call must be there."""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402

d = tc.workdir()
t = None
try:
    tc.build(d)
    # libtorch_npu.so now, libascendcl.so 1.5 s after "ready"
    t = tc.Target(d, [8, 40, 500, 1500], None, "dl")
    maps = open("/proc/%d/maps" % t.pid).read()
    tc.check("libascendcl.so" not in maps, "libascendcl.so mapped before the dlopen")
    out = os.path.join(d, "out")
    r = tc.run_ascbpf(["trace", "--level", "2", "-p", str(t.pid), "-o", out, "--no-convert", "-v"], timeout=60)
    tc.check(r.returncode == 0, "trace exited %d" % r.returncode)
    t.p.wait(timeout=30)
    recs = tc.records(os.path.join(out, "ascbpf-%d.cap" % t.pid))
    probes = {p["symbol"]: p for p in recs if p["type"] == "probe"}
    tc.check("aclrtMalloc" in probes, "no probe record for the dlopened library's aclrtMalloc")
    ccalls, unpaired = tc.calls(recs)
    tc.check(len(unpaired) <= 2, "%d unpaired records" % len(unpaired))
    names = {c[0] for c in ccalls}
    tc.check("aclrtMalloc" in names and "aclrtFree" in names,
             "no calls of the dlopened library captured: %s" % names)
    first = ccalls[0][2]
    j = [x for x in tc.journal(t.journal) if x[0] in tc.CALLS and x[2] >= first]
    jm = [x for x in tc.journal(t.journal) if x[0] == "aclrtMalloc"]
    cm = [c for c in ccalls if c[0] == "aclrtMalloc"]
    print("journal aclrtMalloc %d, captured %d" % (len(jm), len(cm)))
    tc.check(len(cm) == len(jm) == 8 * 40, "aclrtMalloc: journal %d, capture %d" %
             (len(jm), len(cm)))
    tc.match_calls(j, ccalls)
    tc.check(tc.stats(recs)["drops"] == 0, "drops")
    print("PASS: %d calls after the dlopen" % len(ccalls))
finally:
    if t:
        t.stop()
    shutil.rmtree(d, ignore_errors=True)
