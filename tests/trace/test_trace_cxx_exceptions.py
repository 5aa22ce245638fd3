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
  make it abort: the test can tell the guard from its absence.
No PyTorch here, so that tools/vm/check-kernels.sh runs it on 5.10 and 6.1 (the guard reads
kernel structures with CO-RE); real PyTorch: test_trace_cxx_exceptions_torch.py.
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402

N = 5
FIX = os.path.join(tc.OUTPUT, "tests", "lib", "probes")
UNWTEST = os.path.join(FIX, "unwtest")


def trace(name, opts):
    return tc.trace_records(d, name, opts, [UNWTEST, str(N)])


d = tempfile.mkdtemp(prefix="ascbpf-cxx-exc.")
try:
    r, recs = trace("through", ["--step", "libunwtest.so:unw_through"])
    tc.check(r.returncode == 0 and "through %d caught %d" % (N, N) in r.stdout + r.stderr and
             "killed by signal" not in r.stderr,
             "through: the traced process did not run to its end (exit %d)" % r.returncode)
    g = tc.unwind_holds(r.stderr)
    tc.check(g == (N, N, 0), "through: guard %s, want %d holds, %d rewritten" % (g, N, N))
    tc.check(not [x for x in recs if x["type"] == "step" and x["probe_id"]],
             "through: a step ended, but unw_through never returns")

    r, recs = trace("catcher", ["--step", "libunwtest.so:unw_catcher"])
    steps = [x for x in recs if x["type"] == "step" and x["probe_id"]]
    tc.check(r.returncode == 0 and "through %d caught %d" % (N, N) in r.stdout + r.stderr,
             "catcher: the traced process did not run to its end (exit %d)" % r.returncode)
    tc.check(len(steps) == N, "catcher: %d STEP records at unw_catcher's returns, want %d "
             "(its frame re-armed at each catch)" % (len(steps), N))
    # each exception: one hold at the throw (both frames), one at the catch (unw_catcher's)
    g = tc.unwind_holds(r.stderr)
    tc.check(g is not None and g[0] == 2 * N and g[2] == 0,
             "catcher: guard %s, want %d holds" % (g, 2 * N))
    print("unwtest: %d exceptions through a probed frame, %d caught inside one: ran to the "
          "end, %d steps" % (N, N, len(steps)))

    r, recs = trace("no-guard", ["--no-hold", "--step", "libunwtest.so:unw_through"])
    tc.check("no unwind guard (--no-hold)" in r.stderr and
             "killed by signal 6" in r.stderr and "terminate called" in r.stderr,
             "control: without the guard the process did not abort as it would")
finally:
    shutil.rmtree(d, ignore_errors=True)
print("PASS")
