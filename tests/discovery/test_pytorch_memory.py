#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""PyTorch's own memory reports (c10::reportMemoryUsageToProfiler) as ASC_REC_MEM.

CPU-only PyTorch calls c10::reportMemoryUsageToProfiler only while a
profiler records memory, so tests/lib/torch_train.py runs its steps under
torch.profiler(profile_memory=True) while tests/lib/pt_trace has the
probe attached (--profile-memory).  Every call is one record on each side:
the sequence of block sizes (negative for frees) ascbpf read from the
arguments must equal torch.profiler's [memory] events, in order, and
total_allocated must move by exactly each event's size.  The same is checked
for `ascbpf trace --profile-memory -- python3 torch_train.py` (the MEM
records of probe id ASC_PYTORCH_MEM_ID in its capture, read with
`ascbpf dump --json`).
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
ASC_PYTORCH_MEM_ID = 0xfffffff2	# user/discovery/pytorch.h


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def compare(want, got, device_type_key):
    """got: MEM records in order; want: torch.profiler's block sizes in order."""
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
    if device_type_key and any(g[device_type_key] != 0 for g in got):
        fail("a CPU block reported on device type %s" % set(g[device_type_key] for g in got))
    return "%d memory events agree with torch.profiler (sizes in order, totals)" % len(got)


def run_ascbpf_trace(tmp):
    """`ascbpf trace --profile-memory -- torch_train.py`: (torch.profiler sizes, MEM records)."""
    ref, outdir = os.path.join(tmp, "mem2.json"), os.path.join(tmp, "trace")
    r = subprocess.run([ops.ASCBPF, "trace", "-o", outdir, "--activities", "cpu",
                        "--no-convert", "--profile-memory", "--",
                        ops.PY, ops.TRAIN, "--steps", "3", "--profile-memory", ref,
                        "--linger", "0.3"], capture_output=True, text=True, timeout=240)
    print(r.stderr.strip()[-1000:])
    if r.returncode != 0:
        fail("ascbpf trace exited %d" % r.returncode)
    caps = [f for f in os.listdir(outdir) if f.endswith(".cap")]
    if len(caps) != 1:
        fail("expected one capture, found %s" % caps)
    d = subprocess.run([ops.ASCBPF, "dump", "--json", os.path.join(outdir, caps[0])],
                       capture_output=True, text=True, check=True)
    recs = [json.loads(l) for l in d.stdout.splitlines() if l.strip()]
    got = [x for x in recs if x["type"] == "mem" and x["probe_id"] == ASC_PYTORCH_MEM_ID]
    if any(x["component"] != 0 for x in got):	# ASC_MEM_PTA
        fail("PyTorch memory records of component %s" % set(x["component"] for x in got))
    with open(ref) as f:
        want = [m["bytes"] for m in json.load(f)["memory"]]
    return want, got


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
        print("pt_trace: " + compare(want, got, "device_type"))
        want, got = run_ascbpf_trace(tmp)
        print("ascbpf trace: " + compare(want, got, None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
