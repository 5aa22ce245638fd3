# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The defaults of `ascbpf convert` that issue 4 names, on a synthetic capture
(mkcapture), run in an empty working directory:

* no -o: the output goes to ./result, as tensorboard_trace_handler(dir_name)
  with its default; no --worker-name: the run directory is
  {hostname}_{pid}_{YYYYmmddHHMMSSmmm}_ascend_pt, hostname from Python's
  socket.gethostname(), pid the traced process's (mkcapture's truth);
* that name matches torch-tb-profiler-ascend's run regex
  ^(.*?)_(\\d+(\\.\\d+)?)_ascend_pt$ (reference 7.1), so the plugin finds it;
* a second conversion into the same ./result does not overwrite the run
  (exit 2, nothing changed) and --force does; in a ./result that holds other
  runs and files the run is added beside them (a log directory holds many);
* --export chrome without -o writes ./trace.json.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

TOP = os.environ.get("ASCBPF_TOP", os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
OUTPUT = os.environ.get("OUTPUT", os.path.join(TOP, "build"))
ASCBPF = os.path.join(OUTPUT, "ascbpf")
MKCAP = os.path.join(OUTPUT, "tests", "lib", "mkcapture")
TB_RUN = re.compile(r"^(.*?)_(\d+(\.\d+)?)_ascend_pt$")


def check(cond, msg):
    if not cond:
        print("FAIL:", msg)
        sys.exit(1)


def run(args, cwd, expect_rc=0):
    p = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    check(p.returncode == expect_rc, "%s exited %d, expected %d: %s" %
          (" ".join(args), p.returncode, expect_rc, p.stderr[-400:]))
    return p


def main():
    tmp = tempfile.mkdtemp(prefix="test_convert_defaults.")
    try:
        cap = os.path.join(tmp, "c.ascb")
        run([MKCAP, "-o", cap, "--truth", os.path.join(tmp, "c.json"), "--steps", "2",
             "--ops", "2"], tmp)
        truth = json.load(open(os.path.join(tmp, "c.json")))
        pid = truth.get("pid")
        work = os.path.join(tmp, "cwd")
        os.mkdir(work)
        run([ASCBPF, "convert", cap], work)
        check(os.listdir(work) == ["result"], "cwd holds %s" % os.listdir(work))
        runs = os.listdir(os.path.join(work, "result"))
        check(len(runs) == 1, "runs %s" % runs)
        name = runs[0]
        m = re.match(r"^(.*)_(\d+)_(\d{17})_ascend_pt$", name)
        check(m is not None, "run name %s" % name)
        check(m.group(1) == socket.gethostname(), "worker %r, hostname %r" %
              (m.group(1), socket.gethostname()))
        if pid is not None:
            check(int(m.group(2)) == pid, "pid %s in the name, capture's %s" % (m.group(2), pid))
        tb = TB_RUN.match(name)
        check(tb is not None and tb.group(1) == "%s_%s" % (m.group(1), m.group(2)),
              "the TensorBoard plugin's regex reads worker %s" % (tb.group(1) if tb else None))
        print("default: ./result/%s (worker = hostname_pid)" % name)

        run_dir = os.path.join(work, "result", name)
        stamp = {f: os.stat(os.path.join(run_dir, "ASCEND_PROFILER_OUTPUT", f)).st_mtime_ns
                 for f in os.listdir(os.path.join(run_dir, "ASCEND_PROFILER_OUTPUT"))}
        p = run([ASCBPF, "convert", cap], work, expect_rc=2)
        check("--force" in p.stderr, "second run: message %r" % p.stderr[-300:])
        check({f: os.stat(os.path.join(run_dir, "ASCEND_PROFILER_OUTPUT", f)).st_mtime_ns
               for f in stamp} == stamp, "the refused conversion changed files")
        run([ASCBPF, "convert", cap, "--force"], work)
        # a log directory that already holds other runs and files takes a new run beside them
        work2 = os.path.join(tmp, "cwd2")
        os.makedirs(os.path.join(work2, "result", "other_77_20240101000000000_ascend_pt"))
        open(os.path.join(work2, "result", "notes.txt"), "w").write("x")
        run([ASCBPF, "convert", cap], work2)
        runs = sorted(os.listdir(os.path.join(work2, "result")))
        check(runs == sorted(["notes.txt", "other_77_20240101000000000_ascend_pt", name]),
              "a run beside the others: %s" % runs)
        print("existing run refused without --force, rewritten with it; a new run beside others")

        run([ASCBPF, "convert", cap, "--export", "chrome"], work)
        events = json.load(open(os.path.join(work, "trace.json")))
        check(isinstance(events, list) and events, "./trace.json is not a JSON array")
        print("--export chrome: ./trace.json, %d events" % len(events))
        print("PASS")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
