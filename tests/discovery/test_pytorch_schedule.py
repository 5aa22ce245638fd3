#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""--schedule with --step-py on real PyTorch: the recorded steps are whole.

`ascbpf trace --schedule wait=1,warmup=1,active=2,repeat=1 --step-py
train_one_step -- python3 tests/lib/torch_train.py` (the script knows
nothing of ascbpf).  The --step-py boundaries are found by the PyTorch BPF
object (bpf/pytorch.bpf.c), the aten EXIT records come from the main
object's return probe: both must follow the same gate.  Checked:

  * the STEP records follow torch_npu's schedule (bpf/schedule.h semantics
    restated here: step 0 wait, 1 warmup, 2 and 3 recorded, then none);
  * ENTER records exist only inside recorded steps, and on each thread every
    ENTER there has its EXIT (same probe id, innermost first), so no op of a
    recorded step is cut;
  * the capture writes one PROBE record per probe id and per attached place
    (dlopen rescans do not describe a site again under a new id), and the CONFIG line pytorch_aten_sites equals the
    aten op PROBE records (it is written after the sites are added).
"""
import collections
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_pytorch_ops as ops  # noqa: E402

STEPS = 6


ERRORS = []


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def error(msg):
    """A failed check; the others still run, the test fails at the end."""
    print("FAIL:", msg)
    ERRORS.append(msg)


def main():
    if os.geteuid() != 0:
        fail("needs root (BPF)")
    with tempfile.TemporaryDirectory() as tmp:
        outdir = os.path.join(tmp, "trace")
        cmd = [ops.ASCBPF, "trace", "-o", outdir, "--activities", "cpu", "--no-convert",
               "--schedule", "wait=1,warmup=1,active=2,repeat=1",
               "--step-py", "train_one_step",
               "--", ops.PY, ops.TRAIN, "--steps", str(STEPS), "--linger", "0.3"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
        print(r.stderr.strip()[-2000:])
        if r.returncode != 0:
            fail("ascbpf trace exited %d" % r.returncode)
        caps = [f for f in os.listdir(outdir) if f.endswith(".cap")]
        if len(caps) != 1:
            fail("expected one capture, found %s" % caps)
        d = subprocess.run([ops.ASCBPF, "dump", "--json", os.path.join(outdir, caps[0])],
                           capture_output=True, text=True, check=True)
        recs = [json.loads(l) for l in d.stdout.splitlines() if l.strip()]

    # ---- PROBE records: one per id; CONFIG pytorch_aten_sites ----
    probes = [x for x in recs if x["type"] == "probe"]
    per_id = collections.Counter(x["probe_id"] for x in probes)
    dup = {k: v for k, v in per_id.items() if v != 1}
    if not probes or dup:
        error("%d PROBE records, ids written more than once: %s" %
              (len(probes), sorted(dup.items())[:10]))
    # and one per attached place: a rescan must not describe a site again under a new id
    per_place = collections.Counter((x["library"], x["offset"], x["kind"]) for x in probes)
    again = [(k, v) for k, v in per_place.items() if v != 1]
    if again:
        error("%d places have more than one PROBE record, e.g. %s" % (len(again), again[:3]))
    aten = [x for x in probes if "libtorch_cpu.so" in x["library"] and
            x["symbol"].startswith("_ZN2at4_ops")]
    conf = [x["text"] for x in recs if x["type"] == "config" and
            x["text"].startswith("pytorch_aten_sites=")]
    if len(conf) != 1:
        fail("CONFIG pytorch_aten_sites lines: %s" % conf)
    n_conf = int(conf[0].split("=", 1)[1])
    if n_conf == 0 or n_conf != len(set((x["library"], x["offset"]) for x in aten)):
        error("CONFIG says %s, the capture has %d aten op PROBE records" % (conf[0], len(aten)))

    # ---- the schedule over the --step-py boundaries ----
    steps = sorted((x for x in recs if x["type"] == "step"), key=lambda x: x["ts_ns"])
    # torch_train.py calls train_one_step once as a warm-up: STEPS + 1 calls
    if [x["step"] for x in steps] != list(range(STEPS + 1)):
        fail("STEP records %s" % [(x["step"], x["state"]) for x in steps])
    want = [0, 1, 2, 3] + [0] * (STEPS + 1 - 4)	# NONE, WARMUP, RECORD, RECORD_AND_SAVE
    if [x["state"] for x in steps] != want:
        fail("step states %s, want %s" % ([x["state"] for x in steps], want))
    t_open, t_close = steps[2]["ts_ns"], steps[4]["ts_ns"]

    # ---- every ENTER of a recorded step has its EXIT ----
    stacks = collections.defaultdict(list)
    nenter = nexit = 0
    for x in sorted((x for x in recs if x["type"] in ("enter", "exit")),
                    key=lambda x: x["ts_ns"]):
        if not t_open <= x["ts_ns"] <= t_close:
            fail("%s of probe %d at %d, outside the recorded steps [%d, %d]" %
                 (x["type"], x["probe_id"], x["ts_ns"], t_open, t_close))
        st = stacks[x["tid"]]
        if x["type"] == "enter":
            st.append(x["probe_id"])
            nenter += 1
        else:
            if not st or st[-1] != x["probe_id"]:
                error("EXIT of probe %d on tid %d without its ENTER (open: %s)" %
                      (x["probe_id"], x["tid"], st[-5:]))
                break
            st.pop()
            nexit += 1
    open_left = {t: s for t, s in stacks.items() if s}
    if nenter < 50 or open_left:
        error("%d ENTER, %d EXIT; ENTERs without EXIT per thread: %s" %
              (nenter, nexit, {t: len(s) for t, s in open_left.items()}))
    if ERRORS:
        sys.exit(1)
    print("%d PROBE records, one per id (%d aten, as CONFIG says); %d ENTER / %d EXIT "
          "in the 2 recorded of %d steps, all paired" %
          (len(probes), len(aten), nenter, nexit, len(steps)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
