#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""End to end: `ascbpf trace -- npu_halclient run` on a private npu-modeld
(real BPF, real ioctls, the card's channel-50 device records), converted by
trace itself, then the output checked against npu_model's ground-truth
journal (not against anything ascbpf computed):

* every task the card executed for the process (journal `exec` lines) is
  exactly one `Ascend Hardware` X event on its stream with its task id, and
  its ts is the executed start (journal t0, CLOCK_MONOTONIC) on the wall
  clock of the capture's clock pair, within 2 us; its dur is c1 - c0 in
  counter ticks at the journal's frequency;
* the 16-bit task ids wrap on a long stream and every task still appears
  once (wraps counted on both sides);
* kernel_details.csv has one row per compute task (AI_CORE) with the same
  Task ID / Stream ID / Start Time, single-line rows, CRLF, TAB after times;
* Overlap Analysis Computing covers exactly the executed time.

npu_train (aten ops, task queue, aclnn) is not built yet, so this test
covers the driver and device layers; test_convert_golden.py covers the
framework/CANN chain on synthetic captures."""
import csv
import io
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from checks import check, failures  # noqa: E402


def main():
    d = tc.workdir()
    try:
        return run(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def run(d):
    # 70000 tasks per stream: the 16-bit task ids wrap on both
    t = tc.trace_model(d, "e2e", ["--level", "1"], ["npu_halclient", "run", "--streams", "2",
                                                     "--tasks", "70000", "--batch", "8"],
                       check, timeout=600, device_journal=True, daemon_timeout=60)
    if t:
        pid, wall_off, execs = t.pid, t.wall_off, t.execs
        check(len(execs) == 140000, "the card executed every task (%d)" % len(execs))
        check(any(int(x["wrap"]) > 0 for x in execs), "the scenario wraps task ids")
        freq_hz = t.freq_hz

        po = t.po
        text = open(os.path.join(po, "trace_view.json"), encoding="utf-8").read()
        events = json.loads(text)
        check(text.replace("},{", "}, {") == json.dumps(events, ensure_ascii=False),
              "trace_view.json serialised as json.dumps")
        procs = {e["pid"]: e["args"]["name"] for e in events
                 if e.get("ph") == "M" and e["name"] == "process_name"}
        hw_pid = (pid << 10 | 13 << 5 | 0) & 0xffffffff
        check(procs.get(hw_pid) == "Ascend Hardware", "Ascend Hardware pid encoding")
        kx = {}
        for e in events:
            if e.get("ph") == "X" and e["pid"] == hw_pid:
                key = (e["tid"], e["args"]["Task Id"])
                kx.setdefault(key, []).append(e)
        seen = 0
        worst = 0
        for x in execs:
            key = (int(x["stream"]), int(x["task"]))
            lst = kx.get(key, [])
            # the same (stream, task id) recurs once per wrap: pick by order
            w = int(x["wrap"])
            if not check(len(lst) > w, "exec stream %s task %s wrap %d in the trace" %
                         (x["stream"], x["task"], w)):
                continue
            e = lst[w]
            ts_ns = int(e["ts"].replace(".", ""))
            want = int(x["t0"]) + wall_off
            worst = max(worst, abs(ts_ns - want))
            dur_ns = (int(x["c1"]) - int(x["c0"])) * 1_000_000_000 / freq_hz
            check(abs(e["dur"] * 1000 - dur_ns) < 1.5, "dur from the counters")
            seen += 1
        check(worst <= 2000, "device start within 2 us of the executed t0 (worst %d ns)" % worst)
        check(seen == len(execs) and sum(len(v) for v in kx.values()) == len(execs),
              "each executed task exactly once in the trace")

        raw = open(os.path.join(po, "kernel_details.csv"), "rb").read()
        rows = list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))
        check(raw.count(b"\n") == raw.count(b"\r\n") == len(rows),
              "kernel_details: CRLF, one line per row")
        hdr = rows[0]
        col = {h: i for i, h in enumerate(hdr)}
        compute = [x for x in execs if x["sqe_type"] in ("0", "1", "2")]
        check(len(rows) - 1 == len(compute), "one kernel row per compute task: %d vs %d" %
              (len(rows) - 1, len(compute)))
        want = sorted((int(x["t0"]) + wall_off, int(x["stream"]), int(x["task"])) for x in compute)
        got = sorted((int(r[col["Start Time(us)"]].rstrip("\t").replace(".", "")),
                      int(r[col["Stream ID"]]), int(r[col["Task ID"]])) for r in rows[1:])
        check(all(r[col["Start Time(us)"]].endswith("\t") for r in rows[1:]), "TAB after times")
        check(len(got) == len(want) and all(g[1:] == w[1:] and abs(g[0] - w[0]) <= 2000
                                            for g, w in zip(got, want)),
              "kernel rows match the executed tasks (stream, task, start)")
        comp = sum(e["dur"] for e in events if e.get("name") == "Computing")
        busy = []
        for x in sorted(compute, key=lambda x: int(x["t0"])):
            s, t = int(x["t0"]), int(x["t1"])
            if busy and s <= busy[-1][1]:
                busy[-1][1] = max(busy[-1][1], t)
            else:
                busy.append([s, t])
        exec_busy = sum(t - s for s, t in busy) / 1000
        check(abs(comp - exec_busy) <= 0.002 * len(busy) + 1,
              "Computing %.3f us == executed busy time %.3f us" % (comp, exec_busy))
    print("%d checks failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
