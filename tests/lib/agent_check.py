# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""tests/lib/agent_check.py - `ascbpf agent` for one Python test.

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
    import agent_check as ac
    with ac.Agent(workdir, linger=1) as a:
        text = a.metrics()                 # GET /metrics
        ac.promtool_metrics(text)          # Prometheus's own parser accepts it
        s = ac.parse(text)                 # [(name, {label: value}, float)]

Parsing here only splits the lines promtool already accepted; values are
compared with npu_model's journal by the tests.
"""
import bisect
import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.request

TOP = os.environ.get("ASCBPF_TOP") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.environ.get("OUTPUT") or os.path.join(TOP, "build")
ASCBPF = os.path.join(OUT, "ascbpf")


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Agent:
    def __init__(self, d, linger=1, interval=0.2, extra=()):
        self.d = d
        self.port = free_port()
        self.args = [ASCBPF, "agent", "-v", "--listen", "127.0.0.1:%d" % self.port,
                     "--dir", os.path.join(d, "agentdir"), "--interval", str(interval),
                     "--linger", str(linger)] + list(extra)
        self.proc = None

    def start(self):
        self.log = open(os.path.join(self.d, "agent.log"), "w+")
        self.proc = subprocess.Popen(self.args, stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(600):
            check(self.proc.poll() is None, "agent exited %s: %s" % (self.proc.returncode,
                                                                     self.logtext()))
            try:
                self.metrics()
                return self
            except OSError:
                time.sleep(0.05)
        raise AssertionError("agent did not answer on port %d" % self.port)

    def url(self):
        return "http://127.0.0.1:%d/metrics" % self.port

    def metrics(self):
        with urllib.request.urlopen(self.url(), timeout=10) as r:
            check(r.status == 200, "GET /metrics: %d" % r.status)
            check(r.headers["Content-Type"].startswith("text/plain; version=0.0.4"),
                  "Content-Type %s" % r.headers["Content-Type"])
            return r.read().decode()

    def logtext(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()

    def stop(self):
        """SIGTERM; returns the exit status (0 expected)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        rc = self.proc.returncode
        self.proc = None
        self.log.close()
        return rc

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def wait_for(self, pred, what, timeout=60):
        """Polls /metrics until pred(samples) is true; returns those samples (the text
        they came from in self.last_text)."""
        end = time.monotonic() + timeout
        while True:
            self.last_text = self.metrics()
            s = parse(self.last_text)
            if pred(s):
                return s
            check(time.monotonic() < end, "agent: %s not seen in %d s; log:\n%s" %
                  (what, timeout, self.logtext()))
            time.sleep(0.1)


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        check(m, "not a sample line: %r" % line)
        labels = {k: unescape(v) for k, v in LABEL.findall(m.group(2) or "")}
        out.append((m.group(1), labels, float(m.group(3))))
    return out


def unescape(v):
    """A label value as written: \\, \" and \n are the format's escapes."""
    out, i = [], 0
    while i < len(v):
        if v[i] == "\\" and i + 1 < len(v):
            out.append({"n": "\n"}.get(v[i + 1], v[i + 1]))
            i += 2
        else:
            out.append(v[i])
            i += 1
    return "".join(out)


def value(samples, name, **labels):
    """The one sample of name whose labels include labels, or None."""
    got = [v for n, l, v in samples if n == name and
           all(l.get(k) == str(x) for k, x in labels.items())]
    check(len(got) <= 1, "%s %s: %d samples" % (name, labels, len(got)))
    return got[0] if got else None


def has_pid(samples, pid):
    return any(l.get("pid") == str(pid) for _, l, _ in samples)


def promtool_metrics(text):
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0, "promtool check metrics: %s%s" % (r.stdout, r.stderr))


def capture_span(cap):
    """The number of consecutive step intervals the task submissions of capture file cap
    lie in (its STEP records are kept for every boundary, recorded steps or not)."""
    r = subprocess.run([ASCBPF, "dump", "--json", cap], capture_output=True, text=True,
                       timeout=120)
    check(r.returncode == 0, "dump %s: %s" % (cap, r.stderr))
    recs = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    bounds = sorted(x["ts_ns"] for x in recs if x["type"] == "step")
    sqes = sorted(x["ts_ns"] for x in recs if x["type"] == "sqe")
    check(bounds and sqes, "%s: %d steps, %d submissions" % (cap, len(bounds), len(sqes)))
    return bisect.bisect(bounds, sqes[-1]) - bisect.bisect(bounds, sqes[0]) + 1


def gated_job(m, d, name, args, env):
    """npu_train ARGS started now, waiting (--start-after) for release(); (Popen, gate path)."""
    gate = os.path.join(d, name + ".go")
    out = open(os.path.join(d, name + ".out"), "w")
    p = subprocess.Popen([m.bin("npu_train")] + args + ["--start-after", gate], env=env,
                         stdout=out, stderr=subprocess.STDOUT)
    return p, gate


def release(gate):
    open(gate, "w").close()
