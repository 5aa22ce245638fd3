# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Helpers of the test_trace_*.py tests: build the tiny target
(tests/lib/trace_target.c), run ascbpf, read captures through `ascbpf dump --json`
and the target's ground-truth journal, and compare them.  trace_model() is the
set-up of the tests that trace an npu_model workload (npu_train,
npu_halclient) on a private npu-modeld and check the converted output against
npu_model's journals."""
import bisect
import collections
import csv
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TOP = os.environ.get("ASCBPF_TOP", os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(TOP, "tests", "lib"))
from npu_model import ModelDaemon, read_journal  # noqa: E402
OUTPUT = os.environ.get("OUTPUT", os.path.join(TOP, "build"))
ASCBPF = os.path.join(OUTPUT, "ascbpf")
SRC = os.path.join(TOP, "tests", "lib", "trace_target.c")

# A uprobe fires before the function's first instruction and a uretprobe
# after its last; the target stamps t0/t1 inside, so the capture must
# enclose the journal interval exactly (checked strictly, for every call).
# The stated tolerance on the distance between them: 99% of calls within
# 1 ms each way, every call within 200 ms.  A probe costs 0.6-11 us; the
# rest is the traced thread being preempted between the probe and its own
# clock read on a shared, loaded 2-core VM (seen up to ~30 ms).
# TOLERANCE_NS (20 ms) is the single-event bound other tests import.
TOLERANCE_TIGHT_NS = 1_000_000
TOLERANCE_SHARE = 0.99
TOLERANCE_MAX_NS = 200_000_000
TOLERANCE_NS = 20_000_000

# The name (and so the comm) Target processes run under: unique per test run,
# so `--comm` sees only this run's processes, never those of another test run
# side by side (the tt of another checkout's test_trace_*).  build() makes it
# a copy of tt.
TT_COMM = "tt%06d" % (os.getpid() % 1000000)

CALLS = ("aclInit", "aclrtMalloc", "aclrtFree", "aclrtSynchronizeStream")


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def trace_records(d, name, opts, cmd):
    """`ascbpf trace -o D/out.NAME --no-convert OPTS [-- CMD]`, its output printed: the
    result and the records of its one capture ([] if not exactly one)."""
    out = os.path.join(d, "out." + name)
    r = run_ascbpf(["trace", "-o", out, "--no-convert"] + opts + (["--"] + cmd if cmd else []),
                   timeout=240)
    print("--- %s: exit %d\n%s%s" % (name, r.returncode, r.stdout, r.stderr), end="")
    caps = [f for f in os.listdir(out) if f.endswith(".cap")] if os.path.isdir(out) else []
    return r, records(os.path.join(out, caps[0])) if len(caps) == 1 else []


def unwind_holds(stderr):
    """(holds, slots rewritten, slots not) of trace's unwind guard line, or None."""
    m = re.search(r"unwind guard: (\d+) holds? .*?, (\d+) return address(?:es)? rewritten, "
                  r"(\d+) not", stderr)
    return tuple(int(x) for x in m.groups()) if m else None


def build(d):
    for flags, out, libs in (("-shared -fPIC -DTT_ACL", "libascendcl.so", ["-lpthread"]),
                             ("-shared -fPIC -DTT_STEP", "libtorch_npu.so", ["-lpthread"]),
                             ("-shared -fPIC -DTT_STEP", "libtorch_cpu.so", ["-lpthread"]),
                             ("", "tt", ["-ldl", "-lpthread"])):
        cmd = ["gcc", "-O2", "-g", "-Wall", "-Werror"] + flags.split() + \
              ["-o", os.path.join(d, out), SRC] + libs
        subprocess.run(cmd, check=True)
    shutil.copy(os.path.join(d, "tt"), os.path.join(d, TT_COMM))


class Target:
    """One tt process started by the test (not by ascbpf), running as TT_COMM."""

    def __init__(self, d, args, env_extra=None, name="tt"):
        self.journal = os.path.join(d, "journal.%s.%d" % (name, time.monotonic_ns()))
        env = dict(os.environ, TT_LIBDIR=d, TT_JOURNAL=self.journal)
        env.update(env_extra or {})
        self.out = open(os.path.join(d, name + ".out"), "w+")
        self.p = subprocess.Popen([os.path.join(d, TT_COMM)] + [str(a) for a in args], env=env,
                                  stdout=self.out, stderr=subprocess.STDOUT)
        self.pid = self.p.pid
        for _ in range(400):
            self.out.seek(0)
            if self.out.read().startswith("ready"):
                return
            if self.p.poll() is not None:
                fail("target exited early: " + open(self.out.name).read())
            time.sleep(0.02)
        fail("target never became ready")

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        self.p.wait(timeout=30)


def run_ascbpf(args, timeout=120, env=None):
    r = subprocess.run([ASCBPF] + args, capture_output=True, text=True, timeout=timeout,
                       env=env)
    print("$ ascbpf", " ".join(args), "->", r.returncode)
    print(r.stdout, end="")
    print(r.stderr, end="")
    return r


def records(cap):
    r = subprocess.run([ASCBPF, "dump", "--json", cap], capture_output=True, text=True,
                       timeout=120)
    check(r.returncode == 0, "ascbpf dump --json %s failed: %s" % (cap, r.stderr))
    return [json.loads(l) for l in r.stdout.splitlines() if l.strip()]


def journal(path):
    """[(name, tid, t0, t1, ret)] in file order."""
    out = []
    if not os.path.exists(path):
        return out
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        out.append((f[0], int(f[1]), int(f[2]), int(f[3]), int(f[4])))
    return out


def calls(recs):
    """Pairs ENTER/EXIT per (tid, probe) into [(name, tid, enter_ts, exit_ts)], plus
    the list of unpaired records; names from the capture's probe records."""
    names = {r["probe_id"]: r["symbol"] for r in recs if r["type"] == "probe"}
    open_ = collections.defaultdict(list)
    out, unpaired = [], []
    for r in recs:
        if r["type"] == "enter":
            open_[(r["tid"], r["probe_id"])].append(r)
        elif r["type"] == "exit":
            st = open_[(r["tid"], r["probe_id"])]
            if not st:
                unpaired.append(r)
                continue
            e = st.pop()
            out.append((names.get(r["probe_id"], "?"), r["tid"], e["ts_ns"], r["ts_ns"]))
    for st in open_.values():
        unpaired.extend(st)
    out.sort(key=lambda c: c[2])
    return out, unpaired


def stats(recs):
    s = [r for r in recs if r["type"] == "stats"]
    check(len(s) == 1, "expected one stats record, found %d" % len(s))
    return s[0]


def match_calls(jcalls, ccalls):
    """Every journal call must have exactly one captured call of the same name
    and thread that encloses it; distances within the stated tolerance.
    Returns the pairs."""
    by = collections.defaultdict(collections.deque)   # popleft: O(1), a list's pop(0) is O(n)
    for c in ccalls:
        by[(c[0], c[1])].append(c)
    pairs = []
    far = 0
    for name, tid, t0, t1, _ in jcalls:
        lst = by[(name, tid)]
        check(lst, "journal call %s tid %d t0 %d not in the capture" % (name, tid, t0))
        c = lst.popleft()
        check(c[2] <= t0 and c[3] >= t1,
              "%s tid %d: capture [%d, %d] does not enclose journal [%d, %d]" %
              (name, tid, c[2], c[3], t0, t1))
        d = max(t0 - c[2], c[3] - t1)
        check(d <= TOLERANCE_MAX_NS, "%s tid %d: %d ns away from the journal (max %d)" %
              (name, tid, d, TOLERANCE_MAX_NS))
        far += d > TOLERANCE_TIGHT_NS
        pairs.append((c, (name, tid, t0, t1)))
    left = sum(len(v) for v in by.values())
    check(left == 0, "%d captured calls have no journal line" % left)
    check(far <= (1 - TOLERANCE_SHARE) * len(jcalls),
          "%d of %d calls more than %d ns away from the journal" %
          (far, len(jcalls), TOLERANCE_TIGHT_NS))
    return pairs


def workdir():
    return tempfile.mkdtemp(prefix="ascbpf-trace-test.")


def read_csv(path):
    """(raw bytes, header, rows) of a CSV file; the raw bytes for the line-end checks."""
    raw = open(path, "rb").read()
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))
    return raw, rows[0], rows[1:]


def process_journal(jdir, pid):
    """The journal the npu_model libraries of process pid wrote under NPU_MODEL_JOURNAL=jdir
    (npu_model/JOURNAL.md): [(kind, {key: value})] in file order."""
    out = []
    for line in open(os.path.join(jdir, "journal.%d.tsv" % pid)):
        if line.startswith("#") or not line.strip():
            continue
        kind, *fields = line.rstrip("\n").split("\t")
        out.append((kind, dict(x.split("=", 1) for x in fields)))
    return out


class Calls:
    """Journal api calls per thread, indexed for "which calls hold time t" (launch-storm
    has hundreds of thousands): sorted by start, each with its enclosing call
    (the parent chain gives the calls around t without a scan)."""

    def __init__(self, jl, pred=None):
        """pred: keep only the calls whose name it accepts (None: every call)."""
        self.by_tid = collections.defaultdict(list)
        for k, x in jl:
            if k == "api" and (pred is None or pred(x["name"])):
                x["_t0"], x["_t1"] = int(x["t0"]), int(x["t1"])
                self.by_tid[int(x["tid"])].append(x)
        self.starts = {}
        for tid, lst in self.by_tid.items():
            lst.sort(key=lambda c: (c["_t0"], -c["_t1"]))
            stack = []
            for c in lst:
                while stack and stack[-1]["_t1"] < c["_t0"]:
                    stack.pop()
                c["_parent"] = stack[-1] if stack else None
                stack.append(c)
            self.starts[tid] = [c["_t0"] for c in lst]

    def get(self, tid, default=()):
        return self.by_tid.get(tid, default)

    def values(self):
        return self.by_tid.values()

    def holding(self, tid, t):
        """The calls on tid whose [t0, t1] holds t, outermost first."""
        lst = self.by_tid.get(tid)
        if not lst:
            return []
        i = bisect.bisect_right(self.starts[tid], t) - 1
        c = lst[i] if i >= 0 else None
        while c is not None and c["_t1"] < t:
            c = c["_parent"]
        out = []
        while c is not None:
            out.append(c)
            c = c["_parent"]
        return out[::-1]


class ModelTrace:
    """One traced npu_model run (trace_model()).  r: the CompletedProcess of `ascbpf trace`;
    out: its -o directory; runs: the *_ascend_pt directories in it, sorted; cap, run_dir, po
    (ASCEND_PROFILER_OUTPUT): the single capture and run, where the trace wrote exactly one;
    execs: the daemon journal's exec lines of the traced process (with device_journal).  The
    capture's records, the process's pid and journal, and the clocks are read on first use."""

    def __init__(self, r, out, jdir):
        self.r, self.out, self.jdir = r, out, jdir
        caps = sorted(f for f in os.listdir(out) if f.endswith(".cap"))
        self.caps = [os.path.join(out, f) for f in caps]
        self.runs = sorted(f for f in os.listdir(out) if f.endswith("_ascend_pt"))
        self.cap = self.caps[0] if len(self.caps) == 1 else None
        self.run_dir = os.path.join(out, self.runs[0]) if len(self.runs) == 1 else None
        self.po = os.path.join(self.run_dir, "ASCEND_PROFILER_OUTPUT") if self.run_dir else None
        self.execs = None
        self._recs = None

    @property
    def recs(self):
        if self._recs is None:
            self._recs = records(self.cap)
        return self._recs

    @property
    def pid(self):
        return self.recs[0]["tgid"]

    @property
    def wall_off(self):
        """CLOCK_REALTIME - CLOCK_MONOTONIC of the capture's clock pair."""
        clock = next(x for x in self.recs if x["type"] == "clock")
        return clock["realtime_ns"] - clock["ts_ns"]

    @property
    def freq_hz(self):
        return next(x for x in self.recs if x["type"] == "devclock")["freq_hz"]

    def journal(self):
        """The traced process's own journal (process_journal())."""
        return process_journal(self.jdir, self.pid)


def trace_model(d, label, trace_args, workload, check, timeout=280, runs=1,
                device_journal=False, daemon_timeout=30, env=None):
    """`ascbpf trace -o D/out TRACE_ARGS -- WORKLOAD` on a private one-card npu-modeld with
    journals: WORKLOAD[0] is an npu_model binary's name, the process journals go to D/journal
    (NPU_MODEL_JOURNAL); then the daemon is stopped (SIGTERM: it flushes its own journal at
    exit), its exec lines of the traced process kept when device_journal.  check is the
    test's own (it records a failure and returns the condition); env: more variables for
    the workload (e.g. NPU_MODEL_SQE_BATCH).  trace must exit 0 and write
    one capture and `runs` *_ascend_pt directories (None: any number, e.g. --schedule).
    Returns a ModelTrace, or None after a failed check; messages start with label."""
    with ModelDaemon(cards=1, journal=True) as m:
        jdir = os.path.join(d, "journal")
        os.mkdir(jdir)
        out = os.path.join(d, "out")
        r = run_ascbpf(["trace", "-o", out] + list(trace_args) + ["--", m.bin(workload[0])] +
                       [str(a) for a in workload[1:]],
                       env=m.env(NPU_MODEL_JOURNAL=jdir, **(env or {})), timeout=timeout)
        if not check(r.returncode == 0, "%s: trace exited %d: %s" %
                     (label, r.returncode, r.stderr[-500:])):
            return None
        m.proc.send_signal(signal.SIGTERM)
        m.proc.wait(timeout=daemon_timeout)
        t = ModelTrace(r, out, jdir)
        if runs is not None and not check(len(t.caps) == 1 and len(t.runs) == runs,
                                          "%s: outputs %s" % (label, os.listdir(out))):
            return None
        if device_journal:
            t.execs = [x for k, x in read_journal(m.journal_dir) if k == "exec" and
                       int(x["pid"]) == t.pid]
        return t


_exp = {}


def exported(lib):
    """The dynamic symbols lib defines (nm -D), cached."""
    if lib not in _exp:
        r = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True)
        _exp[lib] = {l.split()[-1] for l in r.stdout.splitlines() if l.strip()}
    return _exp[lib]


def check_rank_complete(pid, recs, jdir, steps):
    """An npu_train rank traced from its start (held until adopted): its capture has
    every step 0..steps (step 0 from the start, each of the steps optimizer returns
    starting the next), no unpaired record, and per exported function as many
    calls as the process's journal (NPU_MODEL_JOURNAL=jdir).  Returns its calls."""
    got = [x["step"] for x in recs if x["type"] == "step"]
    check(got == list(range(steps + 1)), "pid %d: steps %s, expected 0..%d" %
          (pid, got, steps))
    ccalls, unpaired = calls(recs)
    check(not unpaired, "pid %d: %d unpaired records, e.g. %s" %
          (pid, len(unpaired), unpaired[:3]))
    lib_of = {p["symbol"]: p["library"] for p in recs if p["type"] == "probe"}
    # exported functions are journaled (the table's globs also catch internal ones), and so are
    # the hidden ones the release build's debug file names (Enqueue, AsncExecFunc)
    jn = collections.Counter(f["name"] for kind, f in process_journal(jdir, pid)
                             if kind == "api" and f["name"] in lib_of)
    cn = collections.Counter(x[0] for x in ccalls
                             if x[0] in jn or x[0] in exported(lib_of[x[0]]))
    check(sum(jn.values()) > 1000, "pid %d: %d journal calls" % (pid, sum(jn.values())))
    diff = {n: (jn[n], cn[n]) for n in set(jn) | set(cn) if jn[n] != cn[n]}
    check(not diff, "pid %d: journal / capture calls differ: %s" %
          (pid, sorted(diff.items())[:6]))
    return sum(cn.values())


class Background:
    """`ascbpf ARGS` started in the background, ready once it says it traces (its
    "Ctrl-C to stop" line on stderr; fails after limit seconds).  stop(): SIGINT,
    then (stdout, stderr) once it has exited; .proc is the Popen."""

    def __init__(self, args, limit=60):
        import threading
        self.proc = subprocess.Popen([ASCBPF] + args, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.err = []
        ready = threading.Event()

        def read_err():
            for line in self.proc.stderr:
                self.err.append(line)
                if "Ctrl-C to stop" in line:
                    ready.set()
            ready.set()
        self.th = threading.Thread(target=read_err, daemon=True)
        self.th.start()
        ready.wait(limit)
        check(self.proc.poll() is None, "ascbpf exited early: %s" % "".join(self.err))

    def stop(self, timeout=120):
        self.proc.send_signal(signal.SIGINT)
        out = self.proc.stdout.read()
        self.proc.wait(timeout=timeout)
        self.th.join(10)
        print(out, "".join(self.err))
        return out, "".join(self.err)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
