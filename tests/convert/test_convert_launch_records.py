#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Golden tests of ASC_REC_LAUNCH (bpf/ascbpf_events.h) on synthetic captures
(tests/lib/mkcapture, its truth file), no BPF:

* Level0 launch marks (--level0 --batch 8 --launch-marks N): the launches
  from the Nth op on carry an entry-only LAUNCH record (what `ascbpf trace`
  attaches at Level0 once a batched send is seen).  Every kernel of a batch
  whose launches are all marked joins its own aten op (the truth's op,
  started before its submission and holding it), including the step-end
  batch sent from the Python thread; every kernel of a batch with an
  unmarked launch joins no op, and convert counts exactly those.  No CANN
  process, no AscendCL@ / Runtime@ event (Level0).
* Level1 node launches (--node-launch --funcnames): rtKernelLaunch traced as
  LAUNCH entry/return only: every kernel has its Node@launch (item_id its
  kernel name, inside the launching AscendCL@ API) with its HostToDevice s
  inside the Node, and no Runtime@ event or api_statistic row for
  rtKernelLaunch, converted at --level 1 and at --level 2 alike."""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOP = os.environ.get("ASCBPF_TOP", os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
OUT = os.environ.get("OUTPUT", os.path.join(TOP, "build"))
failures = []


class g:	# the helpers this test needs (the golden tests have their own)
    ASCBPF = os.path.join(OUT, "ascbpf")
    MKCAP = os.path.join(OUT, "tests", "lib", "mkcapture")
    failures = failures

    @staticmethod
    def run(args, expect_rc=0):
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check(p.returncode == expect_rc, "%s exited %d: %s" %
              (" ".join(args), p.returncode, p.stderr.decode(errors="replace")[-400:]))
        return p

    @staticmethod
    def make(tmp, name, *opts):
        cap = os.path.join(tmp, name + ".ascb")
        truth = os.path.join(tmp, name + ".json")
        g.run([g.MKCAP, "-o", cap, "--truth", truth] + list(opts))
        with open(truth, encoding="utf-8") as f:
            return cap, json.load(f)

    @staticmethod
    def runs_in(d):
        return sorted(x for x in os.listdir(d) if x.endswith("_ascend_pt"))

    @staticmethod
    def ns_of(ts):
        a, b = ts.split(".")
        return int(a) * 1000 + int(b)

    @staticmethod
    def read_csv(path):
        with open(path, "rb") as f:
            raw = f.read()
        return raw, list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))

    @staticmethod
    def kernels_and_flows(po):
        """Ascend Hardware kernels by start: (event, torch_to_npu start op, Node@launch,
        the AscendCL@ API holding the Node)."""
        events = json.load(open(os.path.join(po, "trace_view.json"), encoding="utf-8"))
        procs = {e["pid"]: e["args"]["name"] for e in events
                 if e.get("ph") == "M" and e["name"] == "process_name"}
        kx = [e for e in events if e.get("ph") == "X" and
              procs.get(e["pid"]) == "Ascend Hardware"]
        ops = {(e["tid"], e["ts"]): e for e in events if e.get("cat") == "cpu_op"}
        fs = {e["id"]: e for e in events if e.get("cat") == "async_npu" and e["ph"] == "s"}
        nodes = {e["args"]["connection_id"]: e for e in events
                 if e.get("name") == "Node@launch"}
        cann = [e for e in events if e.get("ph") == "X" and procs.get(e["pid"]) == "CANN" and
                e["name"].startswith("AscendCL@")]
        out = []
        for e in sorted(kx, key=lambda e: g.ns_of(e["ts"])):
            s = fs.get(int(e["ts"].replace(".", "")))
            op = ops.get((s["tid"], s["ts"])) if s else None
            node = nodes.get(e["args"]["connection_id"])
            api = None
            if node:
                t0 = g.ns_of(node["ts"])
                enc = [a for a in cann if a["tid"] == node["tid"] and g.ns_of(a["ts"]) <= t0 and
                       t0 <= g.ns_of(a["ts"]) + a["dur"] * 1000]
                api = enc[0]["name"][len("AscendCL@"):] if enc else None
            out.append((e, op, node, api))
        return events, out


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def test_level0_marks(tmp):
    ops, steps, batch, first = 20, 2, 8, 13
    cap, truth = g.make(tmp, "m0", "--steps", str(steps), "--ops", str(ops), "--batch",
                        str(batch), "--level0", "--launch-marks", str(first))
    out = os.path.join(tmp, "outm0")
    p = g.run([g.ASCBPF, "convert", cap, "-o", out, "--level", "0"])
    err = p.stderr.decode()
    po = os.path.join(out, g.runs_in(out)[0], "ASCEND_PROFILER_OUTPUT")
    events, ks = g.kernels_and_flows(po)
    want = sorted(truth["kernels"], key=lambda k: k["start"])
    check(len(ks) == len(want) == ops * steps, "marks: every kernel (%d vs %d)" %
          (len(ks), len(want)))
    whole = {}
    for k in want:
        whole[k["batch"]] = whole.get(k["batch"], True) and bool(k["marked"])
    # the first batches (op 0..15) have unmarked launches; the step-1 remainder is marked
    check(sorted(b for b, ok in whole.items() if not ok) == [0, 1],
          "marks: truth batches without marks %s" % whole)
    joined = unjoined = 0
    for (e, op, node, api), k in zip(ks, want):
        aten = truth["names"][k["name_index"]][2]
        if whole[k["batch"]]:
            ok = check(op is not None and op["name"] == aten and
                       g.ns_of(op["ts"]) <= k["submit"] - 5000 and
                       k["submit"] <= g.ns_of(op["ts"]) + op["dur"] * 1000,
                       "marks: kernel %d (batch %d) joins its own %s (%s)" %
                       (k["task_id"], k["batch"], aten, op and op["name"]))
            joined += ok
        else:
            check(op is None, "marks: kernel %d of a batch with unmarked launches joins "
                  "no op (%s)" % (k["task_id"], op and op["name"]))
            unjoined += 1
        check(node is None, "marks: no Node@launch at Level0")
    m = re.search(r"(\d+) kernels of batched submissions", err)
    check(m is not None and int(m.group(1)) == unjoined == 16,
          "marks: the %d kernels of unmarked batches are counted: %s" % (unjoined, err[-300:]))
    procs = {e["args"]["name"] for e in events if e.get("ph") == "M" and
             e["name"] == "process_name"}
    check("CANN" not in procs and not any(e.get("name", "").startswith(("AscendCL@", "Runtime@"))
                                          for e in events),
          "marks: no CANN events at Level0 (%s)" % sorted(procs))
    print("level0 marks: %d kernels joined, %d unjoined (before the marks)" % (joined, unjoined))


def test_node_launch(tmp):
    cap, truth = g.make(tmp, "nl", "--steps", "2", "--ops", "6", "--node-launch", "--funcnames")
    want = sorted(truth["kernels"], key=lambda k: k["start"])
    for level in (1, 2):
        out = os.path.join(tmp, "outnl%d" % level)
        g.run([g.ASCBPF, "convert", cap, "-o", out, "--level", str(level)])
        po = os.path.join(out, g.runs_in(out)[0], "ASCEND_PROFILER_OUTPUT")
        events, ks = g.kernels_and_flows(po)
        L = "node launch L%d: " % level
        check(len(ks) == len(want), L + "every kernel")
        h2d = {e["id"]: e for e in events if e.get("cat") == "HostToDevice" and e["ph"] == "s"}
        nodes = [e for e in events if e.get("name") == "Node@launch"]
        check(len(nodes) == len(want), L + "one Node@launch per kernel (%d vs %d)" %
              (len(nodes), len(want)))
        for (e, op, node, api), k in zip(ks, want):
            kname = truth["names"][k["name_index"]][0]
            ok = check(node is not None and node["args"]["item_id"] == kname == e["name"] and
                       api == k["api"], L + "kernel %d: Node@launch %s inside AscendCL@%s (%s)"
                       % (k["task_id"], node and node["args"]["item_id"], k["api"], api))
            if not ok:
                continue
            hs = h2d.get(str(node["args"]["connection_id"]))
            t0 = g.ns_of(node["ts"])
            check(hs is not None and hs["tid"] == node["tid"] and
                  t0 <= g.ns_of(hs["ts"]) <= t0 + node["dur"] * 1000,
                  L + "kernel %d: its HostToDevice s inside its Node@launch" % k["task_id"])
        check(not any(e.get("name", "").startswith("Runtime@") for e in events),
              L + "no Runtime@ event from a node launch")
        _, rows = g.read_csv(os.path.join(po, "api_statistic.csv"))
        names = [r[1] for r in rows[1:]]
        check(names and "rtKernelLaunch" not in names,
              L + "api_statistic without rtKernelLaunch: %s" % names)
    print("node launch: %d kernels with Node@launch at Level1 and Level2" % len(want))


def main():
    for p in (g.ASCBPF, g.MKCAP):
        if not os.access(p, os.X_OK):
            print("missing %s: run make first" % p)
            return 1
    tmp = tempfile.mkdtemp(prefix="test_convert_launch.")
    try:
        for t in (test_level0_marks, test_node_launch):
            n = len(g.failures)
            t(tmp)
            print("%s: %s" % (t.__name__, "ok" if len(g.failures) == n else "FAILED"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d checks failed" % len(g.failures))
    return 1 if g.failures else 0


if __name__ == "__main__":
    sys.exit(main())
