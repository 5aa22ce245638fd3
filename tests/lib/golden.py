# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""tests/lib/golden.py - the set-up of the converter's golden tests on synthetic
captures (test_convert_golden.py, test_convert_names.py): mkcapture writes a
capture and its ground truth, `ascbpf convert` turns it into *_ascend_pt, and
the test parses the output with json / csv.

    sys.path.insert(0, os.path.join(os.environ["ASCBPF_TOP"], "tests", "lib"))
    from golden import ASCBPF, check, make, run, run_tests
    def test_x(tmp):
        cap, truth = make(tmp, "x", "--steps", "2")
        run([ASCBPF, "convert", cap, "-o", os.path.join(tmp, "out")])
    sys.exit(run_tests("test_x.", [test_x]))

check() records a failure and goes on (checks.py; failures is the one list
of this process); run_tests() runs each test function in one scratch directory and
exits non-zero if any check failed.
"""
import csv
import io
import json
import os
import shutil
import subprocess
import tempfile

from checks import check, failures
import torch_npu_format

TOP = os.environ.get("ASCBPF_TOP") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.environ.get("OUTPUT") or os.path.join(TOP, "build")
ASCBPF = os.path.join(OUT, "ascbpf")
MKCAP = os.path.join(OUT, "tests", "lib", "mkcapture")
# kernel_details.csv's header at Level0 (tests/data/torch_npu_format/csv_headers.json)
LEVEL0_KD = torch_npu_format.header("kernel_details.csv", level=0)


def run(args, expect_rc=0):
    """Runs args, checks its exit status; returns the CompletedProcess (bytes)."""
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check(p.returncode == expect_rc,
          "%s exited %d, expected %d: %s" % (" ".join(args), p.returncode, expect_rc,
                                             p.stderr.decode(errors="replace")[-400:]))
    return p


def read_csv(path):
    """(raw bytes, rows including the header) of a CSV file."""
    with open(path, "rb") as f:
        raw = f.read()
    return raw, list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))


def runs_in(d):
    return sorted(x for x in os.listdir(d) if x.endswith("_ascend_pt"))


def make(tmp, name, *opts):
    """mkcapture OPTS into TMP/NAME.ascb; returns (capture path, its ground truth)."""
    cap = os.path.join(tmp, name + ".ascb")
    truth = os.path.join(tmp, name + ".json")
    run([MKCAP, "-o", cap, "--truth", truth] + list(opts))
    with open(truth, encoding="utf-8") as f:
        return cap, json.load(f)


def run_tests(prefix, tests, need_dirs=()):
    """Runs each tests(tmp) in one mkdtemp(prefix) directory, a line per test; returns the
    exit status (1 if a check failed or ascbpf, mkcapture or a need_dirs entry is missing)."""
    for p in (ASCBPF, MKCAP):
        if not os.access(p, os.X_OK):
            print("missing %s: run make first" % p)
            return 1
    for p in need_dirs:
        if not os.path.isdir(p):
            print("missing %s" % p)
            return 1
    tmp = tempfile.mkdtemp(prefix=prefix)
    try:
        for t in tests:
            n = len(failures)
            t(tmp)
            print("%s: %s" % (t.__name__, "ok" if len(failures) == n else "FAILED"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d checks failed" % len(failures))
    return 1 if failures else 0
