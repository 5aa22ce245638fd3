# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""`ascbpf agent` scraped by Debian's real Prometheus (issue 18, "How it is checked").

Prometheus runs on loopback with a scrape config for the agent (1 s, honor_labels so
the agent's `job` label is kept); npu_train jobs are started after both, each
released (--start-after) once Prometheus has its ascbpf_process_probes series.
Through Prometheus's HTTP API:

* a job started after the agent shows up (every job here is);
* the last scraped ascbpf_steps_total, the step-duration histogram's count and
  sum, ascbpf_kernel_launches_total and the task queue's enqueued / dequeued
  totals equal npu_model's journal, and the queue's depth is 0 after the job;
* once the job has exited its series go stale: the instant query is empty;
* the shipped alerting rules pass `promtool check rules`, the scrape config
  `promtool check config`; `make install` installs the systemd unit and the
  rules, and `systemd-analyze verify` accepts the installed unit.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import agent_check as ac  # noqa: E402
from npu_model import ModelDaemon, read_journal  # noqa: E402

check = ac.check
TOP = ac.TOP
RULES = os.path.join(TOP, "user", "agent", "ascbpf-alerts.rules.yml")


class Prometheus:
    def __init__(self, d, agent_port):
        self.d = d
        self.port = ac.free_port()
        self.conf = os.path.join(d, "prometheus.yml")
        with open(self.conf, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "rule_files:\n  - %s\n"
                    "scrape_configs:\n  - job_name: ascbpf\n    honor_labels: true\n"
                    "    static_configs:\n      - targets: ['127.0.0.1:%d']\n" %
                    (RULES, agent_port))
        self.proc = None

    def start(self):
        self.log = open(os.path.join(self.d, "prometheus.log"), "w")
        self.proc = subprocess.Popen(
            ["prometheus", "--config.file", self.conf,
             "--storage.tsdb.path", os.path.join(self.d, "tsdb"),
             "--web.listen-address", "127.0.0.1:%d" % self.port],
            stdout=self.log, stderr=subprocess.STDOUT)
        end = time.monotonic() + 120
        while True:
            check(self.proc.poll() is None, "prometheus exited: %s" % self.logtext())
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/-/ready" % self.port,
                                            timeout=5) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            check(time.monotonic() < end, "prometheus not ready: %s" % self.logtext())
            time.sleep(0.2)

    def logtext(self):
        self.log.flush()
        return open(self.log.name).read()[-4000:]

    def query(self, q):
        url = "http://127.0.0.1:%d/api/v1/query?%s" % (self.port,
                                                        urllib.parse.urlencode({"query": q}))
        with urllib.request.urlopen(url, timeout=30) as r:
            res = json.load(r)
        check(res["status"] == "success", "query %s: %s" % (q, res))
        return [(x["metric"], float(x["value"][1])) for x in res["data"]["result"]]

    def one(self, q):
        r = self.query(q)
        check(len(r) <= 1, "query %s: %d series" % (q, len(r)))
        return r[0][1] if r else None

    def wait(self, q, pred, what, timeout=90):
        end = time.monotonic() + timeout
        while True:
            r = self.query(q)
            if pred(r):
                return r
            check(time.monotonic() < end, "prometheus: %s not seen (query %s -> %s)" %
                  (what, q, r))
            time.sleep(0.3)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


def job(prom, m, d, name, steps):
    jdir = os.path.join(d, "journal-" + name)
    os.mkdir(jdir)
    env = m.env(NPU_MODEL_JOURNAL=jdir, RANK="0", SLURM_JOB_ID="prom-" + name)
    p, gate = ac.gated_job(m, d, name, ["--scenario", "baseline", "--steps", str(steps)], env)
    sel = '{pid="%d",job="prom-%s",rank="0"}' % (p.pid, name)
    prom.wait("ascbpf_process_probes" + sel, lambda r: r and r[0][1] > 0,
              "%s's probes in prometheus" % name)
    print("%s (pid %d): in prometheus before its first step" % (name, p.pid))
    ac.release(gate)
    check(p.wait(120) == 0, "%s failed: %s" % (name, open(os.path.join(d, name + ".out")).read()))
    # the agent shows the exited process (probes 0) until scraped after --linger
    prom.wait("ascbpf_process_probes" + sel, lambda r: r and r[0][1] == 0,
              "%s's exit in prometheus" % name)
    m.proc.send_signal(signal.SIGTERM)	# the daemon writes its journal out
    m.proc.wait(30)
    j = read_journal(jdir, p.pid)
    steps_t = sorted(int(f["t"]) for k, f in j if k == "step")
    tasks = sum(1 for k, f in j if k == "task")
    last = lambda metric: prom.one("last_over_time(%s%s[10m])" % (metric, sel))  # noqa: E731
    got = last("ascbpf_steps_total")
    check(got == len(steps_t), "%s: prometheus steps %s, journal %d" % (name, got, len(steps_t)))
    got = last("ascbpf_step_duration_seconds_count")
    check(got == len(steps_t) - 1, "%s: duration count %s, want %d" %
          (name, got, len(steps_t) - 1))
    span = (steps_t[-1] - steps_t[0]) / 1e9
    got = last("ascbpf_step_duration_seconds_sum")
    check(abs(got - span) <= 0.002 * len(steps_t) + 0.1 * span,
          "%s: duration sum %s, journal span %.6f" % (name, got, span))
    got = last('ascbpf_kernel_launches_total')
    check(got == tasks, "%s: launches %s, journal tasks %d" % (name, got, tasks))
    # torch_npu's task queue: both sides as the journal's queue lines, nothing left queued
    sides = {x: sum(1 for k, f in j if k == "queue" and f["side"] == x)
             for x in ("enqueue", "dequeue")}
    for metric, side in (("ascbpf_task_queue_enqueued_total", "enqueue"),
                         ("ascbpf_task_queue_dequeued_total", "dequeue")):
        got = last(metric)
        check(sides[side] > 0 and got == sides[side], "%s: %s %s, journal %d" %
              (name, metric, got, sides[side]))
    got = last("ascbpf_task_queue_depth")
    check(got == 0, "%s: task queue depth %s after the job" % (name, got))
    print("%s: steps %d, durations %d (sum %.4f s), launches %d: as the journal" %
          (name, len(steps_t), len(steps_t) - 1, span, tasks))
    prom.wait("ascbpf_steps_total" + sel, lambda r: not r, "%s's series stale" % name)
    print("%s: series stale in prometheus after the exit" % name)


def shipped_files(d):
    r = subprocess.run(["promtool", "check", "rules", RULES], capture_output=True, text=True,
                       timeout=60)
    check(r.returncode == 0, "promtool check rules: %s%s" % (r.stdout, r.stderr))
    prefix = os.path.join(d, "prefix")
    r = subprocess.run(["make", "-s", "-C", TOP, "OUTPUT=" + ac.OUT, "install",
                        "PREFIX=" + prefix], capture_output=True, text=True, timeout=600)
    check(r.returncode == 0, "make install: %s" % r.stderr)
    unit = os.path.join(prefix, "lib", "systemd", "system", "ascbpf-agent.service")
    text = open(unit).read()
    check("ExecStart=%s/bin/ascbpf agent" % prefix in text, "unit's ExecStart: %s" % text)
    check(os.path.exists(os.path.join(prefix, "share", "ascbpf", "ascbpf-alerts.rules.yml")),
          "make install did not install the rules")
    r = subprocess.run(["systemd-analyze", "verify", "--man=no", unit], capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0 and not r.stderr.strip(), "systemd-analyze verify: %d %s" %
          (r.returncode, r.stderr))
    print("rules accepted by promtool; make install: unit (verified) and rules installed")


d = tempfile.mkdtemp(prefix="ascbpf-agent-prom.")
prom = None
try:
    shipped_files(d)
    with ac.Agent(d, linger=3) as a:
        prom = Prometheus(d, a.port)
        r = subprocess.run(["promtool", "check", "config", prom.conf], capture_output=True,
                           text=True, timeout=60)
        check(r.returncode == 0, "promtool check config: %s%s" % (r.stdout, r.stderr))
        prom.start()
        prom.wait('up{job="ascbpf"}', lambda r: r and r[0][1] == 1, "the agent's target up")
        for name, steps in (("first", 15), ("later", 8)):
            with ModelDaemon(cards=1, journal=True) as m:
                job(prom, m, d, name, steps)
        check(a.stop() == 0, "agent: non-zero exit on SIGTERM")
    print("PASS")
finally:
    if prom:
        prom.stop()
    shutil.rmtree(d, ignore_errors=True)
