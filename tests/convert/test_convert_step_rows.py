#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""step_trace_time.csv has one row for every recorded step, counted from
npu_model's journal, also for npu_train baseline's short (~1 ms) steps whose
tasks the card starts only after the next step began (no Overlap Analysis
event starts inside such a step's host range; the converter used to leave
its row out, so a K-step capture showed K-1 rows).  torch_npu writes a row
per ProfilerStep with launches (docs/torch_npu_format.md, step_trace_time).

`ascbpf trace -- npu_train --scenario baseline --steps 40`: the rows' Step
column equals the journal's steps (index of the step boundary before the
submission) in which the process submitted a compute task; each row's numbers
parse, and a step with no task starting in it has Computing 0."""
import bisect
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from checks import check, failures  # noqa: E402

COMPUTE = {"0", "1", "2"}  # STARS SQE types AI_CORE, AI_CPU, AI_VECTOR_CORE
STEPS = 40


def main():
    d = tc.workdir()
    try:
        t = tc.trace_model(d, "baseline", [], ["npu_train", "--scenario", "baseline",
                                               "--steps", STEPS], check)
        if not t:
            return 1
        jl = t.journal()
        step_t = [0] + sorted(int(x["t"]) for k, x in jl if k == "step")
        ran = sorted(set(bisect.bisect_right(step_t, int(x["t"])) - 1 for k, x in jl
                         if k == "task" and x["sqe_type"] in COMPUTE and
                         int(x["t"]) >= step_t[0]))
        check(len(ran) >= STEPS - 1, "journal: compute submissions in %d steps of %d" %
              (len(ran), STEPS))
        po = os.path.join(t.run_dir, "ASCEND_PROFILER_OUTPUT")
        _, hdr, rows = tc.read_csv(os.path.join(po, "step_trace_time.csv"))
        got = [int(r[0]) for r in rows]
        check(got == ran, "step_trace_time.csv steps %s, the journal's %s (missing %s)" %
              (got, ran, sorted(set(ran) - set(got))))
        for r in rows:
            check(len(r) == len(hdr) and all(float(c) >= 0 for c in r[1:]), "row %s" % r)
        print("%d steps in the journal, %d rows, %d with Computing 0" %
              (len(ran), len(rows), sum(1 for r in rows if float(r[1]) == 0)))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print("%d checks failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
