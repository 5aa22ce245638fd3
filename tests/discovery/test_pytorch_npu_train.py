#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Sequence numbers, backward nodes and fwdbwd flows end to end on npu_train.

`ascbpf trace -- npu_train --scenario S` on a private npu-modeld, converted
by trace; trace_view.json (read with json) against npu_model's ground-truth
journal (the simulated libtorch_cpu's autograd, npu_model/JOURNAL.md
"Autograd"), never against ascbpf's own reading of the capture:

  * every journal Engine::evaluate_function call (engine thread pt_autograd_0)
    is one "autograd::engine::evaluate_function: NODE" cpu_op (-1 / 0) with,
    inside it, one NODE cpu_op with the journal's seq and fwd, same thread,
    both enclosing the call's [t0, t1] (within trace_check's tolerance);
  * every journal aten call that created a node (grad_fn=...) is a cpu_op of
    that name, same thread and time, whose "Sequence number" is the journal's
    seq and "Fwd thread id" 0; journal calls with seq -1 are -1.  Difference,
    by design (user/discovery/seqnr.h): a top-level call that created no node has the
    journal's (torch's) peek value there and -1 in ascbpf's output; each
    such call is checked to be exactly that case (no grad_fn, seq = the
    next node's number);
  * fwdbwd flows: one per sequence number whose node ran in the trace, id =
    the journal seq, "s" on the forward thread at the latest forward op with
    that number, "f" on the engine thread at the node's range, the two tids
    different; no other flow;
  * `ascbpf convert --export chrome` writes the same cpu_ops and flows;
  * layout: each flow event has the reference's keys, order and spacing, and
    the flows are one block right after the Python process/thread metadata.
"""
import collections
import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from checks import check, failures  # noqa: E402

SCENARIOS = [("baseline", 3), ("multi-stream", 2)]
TOL = tc.TOLERANCE_NS
EVAL_SYM = ("_ZN5torch8autograd6Engine17evaluate_functionERSt10shared_ptrINS0_9GraphTaskEEPNS0_4"
            "NodeERNS0_11InputBufferERKS2_INS0_10ReadyQueueEE")
EVAL = "autograd::engine::evaluate_function: "


def us_ns(s):
    return int(s.replace(".", ""))


def encloses(op, t0, t1):
    s = us_ns(op["ts"])
    e = s + int(round(op["dur"] * 1000))
    return s <= t0 + TOL and e >= t1 - TOL


def distance(op, t0, t1):
    """How far op's span is from [t0, t1]: both ends, so that of two short calls of one op
    within the tolerance of each other the one that also ends where the call ended wins (by
    its start alone, a late uprobe entry under load picked the next call)."""
    s = us_ns(op["ts"])
    return abs(s - t0) + abs(s + int(round(op["dur"] * 1000)) - t1)


def run(scenario, steps):
    d = tc.workdir()
    try:
        t = tc.trace_model(d, scenario, [], ["npu_train", "--scenario", scenario, "--steps",
                                             steps], check)
        if t:
            check("sequence_number" not in t.r.stderr, "%s: counter not found" % scenario)
            tv = os.path.join(t.po, "trace_view.json")
            if not check(os.path.isfile(tv), "%s: outputs %s" % (scenario, os.listdir(t.po))):
                return
            with open(tv, encoding="utf-8") as f:
                text = f.read()
            events = json.loads(text)
            check_run(scenario, events, t.journal(), t.wall_off)
            check_layout(scenario, text, events, t.pid)
            # --export chrome writes the same framework events and flows
            chrome = os.path.join(d, "chrome.json")
            r = tc.run_ascbpf(["convert", t.cap, "--export", "chrome", "-o", chrome])
            if check(r.returncode == 0, "%s: convert --export chrome exited %d" %
                     (scenario, r.returncode)):
                with open(chrome, encoding="utf-8") as f:
                    ch = json.load(f)
                ch = ch["traceEvents"] if isinstance(ch, dict) else ch

                def fw(evs):
                    return [e for e in evs if e.get("cat") in ("cpu_op", "fwdbwd")]
                check(fw(ch) == fw(events) and any(e.get("cat") == "fwdbwd" for e in ch),
                      "%s: chrome export's cpu_ops / fwdbwd flows differ from trace_view's" %
                      scenario)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def check_run(scenario, events, jl, off):
    S = scenario + ": "
    ops = collections.defaultdict(list)		# (tid, name) -> cpu_ops by start
    for e in events:
        if e.get("cat") == "cpu_op":
            ops[(e["tid"], e["name"])].append(e)
    for v in ops.values():
        v.sort(key=lambda e: us_ns(e["ts"]))
    used = set()

    by_tid = collections.defaultdict(list)
    for (tid, name), v in ops.items():
        by_tid[tid].extend(v)

    def find(tid, name, t0, t1):
        best = None
        # aten names from symbols without the model's schemas keep an overload
        # suffix ("aten::sum_dim" for at::_ops::sum_dim_IntList): a prefix at "_"
        for e in ops.get((tid, name), ()) if not name.startswith("aten::") else \
                (e for e in by_tid.get(tid, ()) if e["name"] == name or
                 e["name"].startswith(name + "_")):
            if id(e) not in used and encloses(e, t0, t1) and \
                    (best is None or distance(e, t0, t1) < distance(best, t0, t1)):
                best = e
        if best is not None:
            used.add(id(best))
        return best

    api = [x for k, x in jl if k == "api" and x.get("layer") == "framework"]
    evals = [x for x in api if x["name"] == EVAL_SYM]
    fwd_calls = [x for x in api if "op" in x and "seq" in x]
    check(len(evals) >= 10 and len(fwd_calls) >= 20, S + "journal has %d evaluate_function, "
          "%d aten calls with seq" % (len(evals), len(fwd_calls)))
    node_of = {}				# seq -> the node's cpu_op
    for x in evals:
        tid, t0, t1 = int(x["tid"]), int(x["t0"]) + off, int(x["t1"]) + off
        outer = find(tid, EVAL + x["node"], t0, t1)
        inner = find(tid, x["node"], t0, t1)
        if not check(outer and inner, S + "evaluate_function %s seq %s at %s: outer %s inner %s"
                     % (x["node"], x["seq"], x["t0"], bool(outer), bool(inner))):
            continue
        check((outer["args"]["Sequence number"], outer["args"]["Fwd thread id"]) == (-1, 0),
              S + "%s args %s" % (outer["name"], outer["args"]))
        check((inner["args"]["Sequence number"], inner["args"]["Fwd thread id"]) ==
              (int(x["seq"]), int(x["fwd"])), S + "%s: journal seq %s fwd %s, args %s" %
              (x["node"], x["seq"], x["fwd"], inner["args"]))
        if int(x["seq"]) >= 0:
            node_of[int(x["seq"])] = inner
    numbered = {}				# seq -> latest forward cpu_op with it
    peek_only = 0
    creators = sorted(int(x["seq"]) for x in fwd_calls if "grad_fn" in x)
    for x in fwd_calls:
        tid, t0, t1 = int(x["tid"]), int(x["t0"]) + off, int(x["t1"]) + off
        e = find(tid, x["op"], t0, t1)
        if not check(e is not None, S + "no cpu_op for %s seq %s at %s" %
                     (x["op"], x["seq"], x["t0"])):
            continue
        seq, got = int(x["seq"]), e["args"]["Sequence number"]
        check(e["args"]["Fwd thread id"] == 0, S + "%s: Fwd thread id %s" %
              (x["op"], e["args"]["Fwd thread id"]))
        if "grad_fn" in x or seq < 0:
            check(got == seq, S + "%s (grad_fn %s): journal seq %d, ascbpf %d" %
                  (x["op"], x.get("grad_fn"), seq, got))
        else:
            # torch's peek() of a call that created no node: ascbpf writes -1; the
            # journal's number must be the next node's (no node was created in it)
            later = [c for c in creators if c >= seq]
            check(got == -1 and later and later[0] == seq, S + "%s: journal seq %d (no node), "
                  "ascbpf %d" % (x["op"], seq, got))
            peek_only += 1
        if got >= 0 and (got not in numbered or
                         us_ns(numbered[got]["ts"]) < us_ns(e["ts"])):
            numbered[got] = e
    flows = [e for e in events if e.get("cat") == "fwdbwd"]
    by_id = collections.defaultdict(dict)
    for f in flows:
        check(f["name"] == "fwdbwd" and f["bp"] == "e" and isinstance(f["ts"], str) and
              f["ph"] not in by_id[f["id"]], S + "flow %s" % f)
        by_id[f["id"]][f["ph"]] = f
    want = sorted(s for s in node_of if s in numbered)
    check(len(want) >= 10, S + "only %d forward/backward pairs" % len(want))
    check(sorted(by_id) == want, S + "flow ids %s, journal pairs %s" % (sorted(by_id), want))
    for s in want:
        fw, bw = numbered[s], node_of[s]
        sf, ff = by_id.get(s, {}).get("s"), by_id.get(s, {}).get("f")
        if not check(sf and ff, S + "flow %d incomplete" % s):
            continue
        check((sf["tid"], sf["ts"]) == (fw["tid"], fw["ts"]) and
              (ff["tid"], ff["ts"]) == (bw["tid"], bw["ts"]) and sf["tid"] != ff["tid"],
              S + "flow %d: s %s@%s f %s@%s; forward %s@%s, node %s@%s" %
              (s, sf["tid"], sf["ts"], ff["tid"], ff["ts"], fw["tid"], fw["ts"], bw["tid"],
               bw["ts"]))
    print("%s%d evaluate_function calls, %d numbered aten calls (%d peek-only), %d fwdbwd flows"
          % (S, len(evals), len(fwd_calls), peek_only, len(want)))


def check_layout(scenario, text, events, pid):
    """The flows as torch_npu serialises and places them (docs/torch_npu_format.md §2, §4):
    key order and spacing of the reference, one block after the Python metadata."""
    S = scenario + ": "
    pat = re.compile(r'\{"ph": "[sf]", "bp": "e", "name": "fwdbwd", "id": -?\d+, "pid": %d, '
                     r'"tid": \d+, "ts": "\d+\.\d{3}", "cat": "fwdbwd"\}' % pid)
    idx = [i for i, e in enumerate(events) if e.get("cat") == "fwdbwd"]
    check(len(pat.findall(text)) == len(idx) > 0, S + "%d fwdbwd events, %d in the reference "
          "layout" % (len(idx), len(pat.findall(text))))
    meta = [i for i, e in enumerate(events) if e.get("ph") == "M" and e.get("pid") == pid]
    check(idx and idx == list(range(idx[0], idx[-1] + 1)) and meta and idx[0] == meta[-1] + 1,
          S + "fwdbwd flows are not one block right after the Python metadata")


def main():
    if os.geteuid() != 0:
        print("FAIL: needs root (BPF)")
        return 1
    for scenario, steps in SCENARIOS:
        run(scenario, steps)
    if failures:
        print("%d failures" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
