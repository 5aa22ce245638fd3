#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""PyTorch's own memory reports (c10::reportMemoryUsageToProfiler) as ASC_REC_MEM.

CPU-only PyTorch calls c10::reportMemoryUsageToProfiler only while a
profiler records memory, so tests/lib/torch_train.py runs its steps under
torch.profiler(profile_memory=True) while tests/pytorch/pt_trace has the
probe attached (--profile-memory).  Every call is one record on each side:
the sequence of block sizes (negative for frees) ascbpf read from the
arguments must equal torch.profiler's [memory] events, in order, and
total_allocated must move by exactly each event's size.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_pytorch_ops as ops  # noqa: E402

PT_TRACE = os.path.join(ops.OUTPUT, "tests", "pt_trace")


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    if os.geteuid() != 0:
        fail("needs root (BPF)")
    with tempfile.TemporaryDirectory() as tmp:
        wait, ref, out = (os.path.join(tmp, n) for n in ("go", "mem.json", "pt.json"))
        py = subprocess.Popen([ops.PY, ops.TRAIN, "--steps", "3", "--wait-file", wait,
                               "--profile-memory", ref, "--linger", "0.5"])
        try:
            for _ in range(3000):
                if os.path.exists(wait + ".pid") or py.poll() is not None:
                    break
                time.sleep(0.01)
            r = subprocess.run([PT_TRACE, "-p", str(py.pid), "--ready", wait, "--json", out,
                                "--profile-memory"], capture_output=True, text=True, timeout=240)
            print(r.stderr.strip()[-1000:])
            if r.returncode != 0:
                fail("pt_trace exited %d" % r.returncode)
            if py.wait(timeout=120) != 0:
                fail("torch_train.py failed")
        finally:
            if py.poll() is None:
                py.kill()
        with open(ref) as f:
            want = [m["bytes"] for m in json.load(f)["memory"]]
        with open(out) as f:
            got = [json.loads(l) for l in f if '"mem"' in l]
        got = [g for g in got if g["type"] == "mem"]
        if len(want) < 20:
            fail("torch.profiler saw only %d memory events" % len(want))
        sizes = [g["size"] for g in got]
        if sizes != want:
            fail("block sizes differ: ascbpf %d events %s..., torch.profiler %d events %s..." %
                 (len(sizes), sizes[:10], len(want), want[:10]))
        for a, b in zip(got, got[1:]):
            if b["total_allocated"] - a["total_allocated"] != b["size"]:
                fail("total_allocated %d -> %d for a block of %d" %
                     (a["total_allocated"], b["total_allocated"], b["size"]))
        if any(g["device_type"] != 0 for g in got):
            fail("a CPU block reported on device type %s" % set(g["device_type"] for g in got))
        print("%d memory events agree with torch.profiler (sizes in order, totals)" % len(got))
    return 0


if __name__ == "__main__":
    sys.exit(main())
