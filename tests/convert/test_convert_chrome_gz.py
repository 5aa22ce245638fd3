# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""`ascbpf convert --export chrome` with gzip, on synthetic captures (mkcapture).

torch.profiler's export_chrome_trace(path) writes gzip when path ends in
".gz" (chrome://tracing and Perfetto open .json.gz); trace_view.json in the
*_ascend_pt directory stays plain, because torch-tb-profiler-ascend only
finds a file named exactly trace_view.json (reference 7.1).  Checked with
Python's gzip and json modules:

* -o trace.json.gz is a gzip stream (magic 1f 8b) whose content is byte for
  byte the plain export of the same capture (-o trace.json), which parses as
  a JSON array holding every kernel of mkcapture's truth;
* no temporary file is left beside it;
* an existing .gz is not overwritten without --force (exit 2, names
  --force), and is with it;
* with two RECORD_AND_SAVE cycles: one file per cycle, trace_0.json.gz and
  trace_1.json.gz, each equal to its plain counterpart;
* --gzip (for the *_ascend_pt output) is still refused with its reason.
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

TOP = os.environ.get("ASCBPF_TOP", os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
OUTPUT = os.environ.get("OUTPUT", os.path.join(TOP, "build"))
ASCBPF = os.path.join(OUTPUT, "ascbpf")
MKCAP = os.path.join(OUTPUT, "tests", "lib", "mkcapture")


def check(cond, msg):
    if not cond:
        print("FAIL:", msg)
        sys.exit(1)


def run(args, expect_rc=0):
    p = subprocess.run(args, capture_output=True, text=True)
    check(p.returncode == expect_rc, "%s exited %d, expected %d: %s" %
          (" ".join(args), p.returncode, expect_rc, p.stderr[-400:]))
    return p


def gz_equals_plain(gz, plain):
    raw = open(gz, "rb").read()
    check(raw[:2] == b"\x1f\x8b", "%s is not gzip (starts %r)" % (gz, raw[:4]))
    with gzip.open(gz, "rb") as f:
        inner = f.read()
    check(inner == open(plain, "rb").read(), "%s does not hold %s byte for byte" % (gz, plain))
    events = json.loads(inner.decode("utf-8"))
    check(isinstance(events, list) and events, "%s: not a non-empty JSON array" % gz)
    return events


def main():
    tmp = tempfile.mkdtemp(prefix="test_chrome_gz.")
    try:
        cap = os.path.join(tmp, "c.ascb")
        truth_path = os.path.join(tmp, "c.json")
        run([MKCAP, "-o", cap, "--truth", truth_path, "--steps", "2", "--ops", "3"])
        truth = json.load(open(truth_path))
        plain = os.path.join(tmp, "trace.json")
        gz = os.path.join(tmp, "trace.json.gz")
        run([ASCBPF, "convert", cap, "--export", "chrome", "-o", plain, "--level", "1"])
        run([ASCBPF, "convert", cap, "--export", "chrome", "-o", gz, "--level", "1"])
        events = gz_equals_plain(gz, plain)
        kernels = sum(1 for e in events if "Task Id" in e.get("args", {}))
        check(kernels == truth["kernel_count"], "gz export: %d kernels, truth %d" %
              (kernels, truth["kernel_count"]))
        check(sorted(os.listdir(tmp)) == ["c.ascb", "c.json", "trace.json", "trace.json.gz"],
              "files left beside the export: %s" % sorted(os.listdir(tmp)))
        print("trace.json.gz: gzip of the plain export, %d events, %d kernels" %
              (len(events), kernels))

        p = run([ASCBPF, "convert", cap, "--export", "chrome", "-o", gz], expect_rc=2)
        check("--force" in p.stderr, "existing .gz: message %r" % p.stderr[-300:])
        run([ASCBPF, "convert", cap, "--export", "chrome", "-o", gz, "--level", "1", "--force"])
        gz_equals_plain(gz, plain)
        print("existing .gz: refused without --force, rewritten with it")

        # two cycles: skip_first=0, wait=0, warmup=0, active=1, repeat=2
        cap2 = os.path.join(tmp, "c2.ascb")
        run([MKCAP, "-o", cap2, "--steps", "4", "--ops", "2", "--schedule", "0,0,0,1,2"])
        d2 = os.path.join(tmp, "two")
        os.mkdir(d2)
        run([ASCBPF, "convert", cap2, "--export", "chrome", "-o", os.path.join(d2, "t.json")])
        run([ASCBPF, "convert", cap2, "--export", "chrome", "-o", os.path.join(d2, "t.json.gz")])
        names = sorted(os.listdir(d2))
        check(names == ["t_0.json", "t_0.json.gz", "t_1.json", "t_1.json.gz"],
              "two cycles: files %s" % names)
        for i in (0, 1):
            gz_equals_plain(os.path.join(d2, "t_%d.json.gz" % i), os.path.join(d2, "t_%d.json" % i))
        print("two cycles: t_0.json.gz, t_1.json.gz")

        p = run([ASCBPF, "convert", cap, "-o", os.path.join(tmp, "o"), "--gzip"], expect_rc=2)
        check("gzip" in p.stderr, "--gzip: message %r" % p.stderr[-300:])
        print("PASS")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
