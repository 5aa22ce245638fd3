# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""tests/lib/commjob.py - a synthetic multi-rank job with HCCL records (tests/lib/mkcomm)
converted rank by rank with `ascbpf convert`, for the communication outputs' tests:

    job = make_job(tmp, "--ranks", "4", "--nodes", "2")
    job.truth["ops"], job.out(rank) -> the rank's ASCEND_PROFILER_OUTPUT

The truth is mkcomm's own input (its task durations and sizes), never the
converter's output."""
import glob
import json
import os

from golden import OUT, ASCBPF, run

MKCOMM = os.path.join(OUT, "tests", "lib", "mkcomm")


class Job:
    def __init__(self, d, truth):
        self.dir = d
        self.truth = truth

    def capture(self, rank):
        return os.path.join(self.dir, "rank%d.ascb" % rank)

    def run_dir(self, rank):
        runs = glob.glob(os.path.join(self.dir, "out", "rank%d" % rank, "*_ascend_pt"))
        return runs[0] if len(runs) == 1 else None

    def out(self, rank):
        d = self.run_dir(rank)
        return os.path.join(d, "ASCEND_PROFILER_OUTPUT") if d else None

    def ops(self, rank):
        return [o for o in self.truth["ops"] if o["rank"] == rank]


def make_job(tmp, name, *opts, convert=True, expect_rc=0):
    d = os.path.join(tmp, name)
    os.makedirs(d, exist_ok=True)
    run([MKCOMM, "-o", d] + list(opts))
    with open(os.path.join(d, "truth.json")) as f:
        truth = json.load(f)
    job = Job(d, truth)
    if convert:
        for r in range(truth["ranks"]):
            run([ASCBPF, "convert", job.capture(r), "-o", os.path.join(d, "out", "rank%d" % r)],
                expect_rc=expect_rc)
    return job


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)
