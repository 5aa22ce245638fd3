# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""`ascbpf agent`: processes found while they run, /metrics against the journal.

The agent is started first; then npu_train jobs that wait (--start-after) until
the agent shows their probes, so every call of the run is seen.  Checked:

* /metrics is the Prometheus text format (promtool check metrics accepts it);
* a job gets labels rank and job from its environment (RANK, SLURM_JOB_ID; one
  with a backslash and double quotes, escaped, passes promtool and reads back),
  a job without them job=<command> and rank="";
* per job, against npu_model's journal: steps = its step lines, step
  durations = the spans between them (count steps-1, sum within a tolerance),
  kernel launches per device = its task lines, synchronisations = its
  aclrtSynchronize* calls, segment allocations and failures = its aclrtMalloc*
  calls by result, HBM reserved (live segments) and allocated (--memory-blocks:
  the block report) = the totals of its last PTA record;
* oom: the refused segment allocations are counted as failures (> 0);
* after a job exits its series stay for --linger, then are gone;
* --textfile DIR: DIR/ascbpf.prom is the same format (promtool), 0644, no
  temporary left;
* --config FILE sets the options it names; bad options, a bad config line and a
  port in use exit 2.
"""
import collections
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import agent_check as ac  # noqa: E402
from npu_model import ModelDaemon, read_journal  # noqa: E402

check = ac.check
MALLOCS = ("aclrtMalloc", "aclrtMallocAlign32", "aclrtMallocCached")
# a job id with the characters the format escapes (backslash, double quote) and a space
JOB_ID = 'job "42" \\x'



def truth(jdir, pid):
    j = read_journal(jdir, pid)
    steps = sorted(int(f["t"]) for k, f in j if k == "step")
    api = [f for k, f in j if k == "api"]
    tasks = collections.Counter(f["dev"] for k, f in j if k == "task")
    pta = [f for k, f in j if k == "mem" and f["component"] == "PTA"]
    return {
        "steps": len(steps),
        "span_s": (steps[-1] - steps[0]) / 1e9 if steps else 0,
        "tasks": tasks,
        "syncs": sum(1 for f in api if f["name"].startswith("aclrtSynchronize")),
        "allocs": sum(1 for f in api if f["name"] in MALLOCS and f["ret"] == "0"),
        "fails": sum(1 for f in api if f["name"] in MALLOCS and f["ret"] != "0"),
        "alloc_bytes": sum(int(f["size"]) for f in api
                           if f["name"] in MALLOCS and f["ret"] == "0"),
        "pta": pta[-1] if pta else None,
    }


def compare(s, pid, t, what):
    v = lambda name, **kw: ac.value(s, name, pid=pid, **kw)  # noqa: E731
    check(v("ascbpf_steps_total") == t["steps"],
          "%s: steps %s, journal %d" % (what, v("ascbpf_steps_total"), t["steps"]))
    cnt = v("ascbpf_step_duration_seconds_count")
    inf = v("ascbpf_step_duration_seconds_bucket", le="+Inf")
    check(cnt == t["steps"] - 1 and inf == cnt, "%s: duration count %s (+Inf %s), want %d" %
          (what, cnt, inf, t["steps"] - 1))
    ssum = v("ascbpf_step_duration_seconds_sum")
    check(abs(ssum - t["span_s"]) <= 0.002 * t["steps"] + 0.1 * t["span_s"],
          "%s: duration sum %.6f s, journal's steps span %.6f s" % (what, ssum, t["span_s"]))
    for dev, n in t["tasks"].items():
        got = v("ascbpf_kernel_launches_total", device=dev)
        check(got == n, "%s: launches on device %s: %s, journal %d tasks" % (what, dev, got, n))
    for name, key in (("ascbpf_synchronizations_total", "syncs"),
                      ("ascbpf_segment_allocations_total", "allocs"),
                      ("ascbpf_segment_allocated_bytes_total", "alloc_bytes"),
                      ("ascbpf_alloc_failures_total", "fails")):
        check(v(name) == t[key], "%s: %s %s, journal %d" % (what, name, v(name), t[key]))
    if t["pta"]:
        # reserved: the live segments (aclrtMalloc* - aclrtFree); allocated: the block report
        dev = t["pta"]["device"]
        got = v("ascbpf_hbm_reserved_bytes")
        check(got == int(t["pta"]["total_reserved"]), "%s: hbm reserved %s, journal %s" %
              (what, got, t["pta"]["total_reserved"]))
        got = v("ascbpf_hbm_allocated_bytes", device=dev)
        check(got == int(t["pta"]["total_allocated"]), "%s: hbm allocated %s, journal %s" %
              (what, got, t["pta"]["total_allocated"]))
    print("%s: pid %d: %d steps, %s tasks, %d syncs, %d segments, %d failures: as the journal" %
          (what, pid, t["steps"], dict(t["tasks"]), t["syncs"], t["allocs"], t["fails"]))


def attached(pid):
    return lambda s: (ac.value(s, "ascbpf_process_probes", pid=pid) or 0) > 0


def exited(pid):
    return lambda s: ac.value(s, "ascbpf_process_probes", pid=pid) == 0


def gone(pid):
    return lambda s: not ac.has_pid(s, pid)


def run_phase(a, m, d, jobs, tag):
    """Starts jobs (gated), releases each once the agent shows its probes; the final samples
    of each after its exit, and the journal's truth."""
    jdir = os.path.join(d, "journal-" + tag)
    os.mkdir(jdir)
    procs = []
    for name, args, env in jobs:
        e = m.env(NPU_MODEL_JOURNAL=jdir, **env)
        for k in ("RANK", "SLURM_JOB_ID", "RANK_ID", "TORCHELASTIC_RUN_ID", "JOB_ID"):
            if k not in env:
                e.pop(k, None)
        p, gate = ac.gated_job(m, d, name, args, e)
        procs.append((name, p, gate))
    for name, p, gate in procs:
        a.wait_for(attached(p.pid), "%s (pid %d) attached" % (name, p.pid))
        ac.release(gate)
    for name, p, gate in procs:
        rc = p.wait(120)
        check(rc == 0, "%s exited %d: %s" % (name, rc,
                                              open(os.path.join(d, name + ".out")).read()))
    # each job's last samples: the first scrape that shows it exited (probes 0), before
    # --linger removes it; one poll loop for all, so none lingers out unseen
    out = {}

    def all_exited(s):
        for name, p, _ in procs:
            if name not in out and exited(p.pid)(s):
                out[name] = (p.pid, s)
                ac.promtool_metrics(a.last_text)	# its labels as the format wants them
        return len(out) == len(procs)
    a.wait_for(all_exited, "the exit of %s" % [name for name, _, _ in procs])
    m.proc.send_signal(signal.SIGTERM)	# flushes the daemon's journal
    m.proc.wait(30)
    return {name: (pid, s, truth(jdir, pid)) for name, (pid, s) in out.items()}


def run_jobs(d):
    tf = os.path.join(d, "textfile")
    os.mkdir(tf)
    with ac.Agent(d, linger=3, extra=["--memory-blocks", "--textfile", tf]) as a:
        with ModelDaemon(cards=1, journal=True) as m:
            res = run_phase(a, m, d, [
                ("labelled", ["--scenario", "baseline", "--steps", "12"],
                 {"RANK": "3", "SLURM_JOB_ID": JOB_ID}),
                ("plain", ["--scenario", "mem-growth", "--steps", "6"], {})], "1")
        ac.promtool_metrics(a.metrics())
        # --textfile: the same text for node_exporter, renamed into place whole
        prom = os.path.join(tf, "ascbpf.prom")
        text = open(prom).read()
        ac.promtool_metrics(text)
        check("ascbpf_agent_probes_attached " in text and "ascbpf_steps_total{" in text,
              "ascbpf.prom lacks the agent's metrics")
        check(os.stat(prom).st_mode & 0o777 == 0o644 and os.listdir(tf) == ["ascbpf.prom"],
              "textfile dir: %s, mode %o" % (os.listdir(tf), os.stat(prom).st_mode & 0o777))
        print("--textfile: ascbpf.prom accepted by promtool")
        # a small card for the oom scenario, the agent still running
        with ModelDaemon(cards=1, journal=True, hbm_mib=256) as m:
            res.update(run_phase(a, m, d, [("oom", ["--scenario", "oom"], {})], "2"))
        pid, s, _ = res["labelled"]
        check(ac.value(s, "ascbpf_steps_total", pid=pid, rank=3, job=JOB_ID) is not None,
              "labelled: no series with rank=3 job=%r" % JOB_ID)
        pid, s, _ = res["plain"]
        check(ac.value(s, "ascbpf_steps_total", pid=pid, rank="", job="npu_train") is not None,
              "plain: no series with rank=\"\" job=npu_train")
        for name, (pid, s, t) in res.items():
            compare(s, pid, t, name)
        check(res["oom"][2]["fails"] > 0, "oom: the journal has no refused allocation")
        for name, (pid, s, t) in res.items():
            a.wait_for(gone(pid), "%s's series removed" % name)
        print("series of the exited jobs removed after --linger")
        check(ac.value(ac.parse(a.metrics()), "ascbpf_agent_probes_attached") is not None,
              "no ascbpf_agent_probes_attached")
        rc = a.stop()
        check(rc == 0, "agent exited %s on SIGTERM" % rc)


def errors(d):
    for args in (["--bogus"], ["--listen", "nonsense"], ["--interval", "0"],
                 ["--config", os.path.join(d, "missing.conf")], ["extra"]):
        r = subprocess.run([ac.ASCBPF, "agent", "--dir", os.path.join(d, "e")] + args,
                           capture_output=True, text=True, timeout=30)
        check(r.returncode == 2 and r.stderr.strip(),
              "agent %s: exit %d, stderr %r" % (args, r.returncode, r.stderr))
    bad = os.path.join(d, "bad.conf")
    with open(bad, "w") as f:
        f.write("# comment\nlisten 127.0.0.1:1\nfrobnicate 3\n")
    r = subprocess.run([ac.ASCBPF, "agent", "--config", bad], capture_output=True, text=True,
                       timeout=30)
    check(r.returncode == 2 and "bad.conf:3" in r.stderr, "bad config: %d %r" %
          (r.returncode, r.stderr))
    # a good config: its listen address is used, the command line's --dir too
    port = ac.free_port()
    good = os.path.join(d, "good.conf")
    with open(good, "w") as f:
        f.write("# the agent's config\nlisten 127.0.0.1:%d\ninterval=0.5\nlinger 2  # s\n" %
                port)
    p = subprocess.Popen([ac.ASCBPF, "agent", "--config", good, "--dir",
                          os.path.join(d, "cfgdir")], stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()
        check("serving http://127.0.0.1:%d/metrics" % port in line, "config agent: %r" % line)
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
            check(b"ascbpf_agent_scrapes_total" in r.read(), "config agent: no metrics")
    finally:
        p.terminate()
        check(p.wait(30) == 0, "config agent: exit %s" % p.returncode)
    print("--config: listen and interval from the file")
    with ac.Agent(d) as a:
        r = subprocess.run([ac.ASCBPF, "agent", "--listen", "127.0.0.1:%d" % a.port, "--dir",
                            os.path.join(d, "e")], capture_output=True, text=True, timeout=30)
        check(r.returncode == 2 and "listen" in r.stderr,
              "second agent on the same port: exit %d %r" % (r.returncode, r.stderr))
        st = os.stat(os.path.join(d, "agentdir"))
        check(st.st_mode & 0o777 == 0o700 and st.st_uid == 0, "--dir mode %o uid %d" %
              (st.st_mode & 0o777, st.st_uid))
    print("bad options, a bad config line and a taken port exit 2; --dir is root-only")


d = tempfile.mkdtemp(prefix="ascbpf-agent-test.")
try:
    run_jobs(d)
    errors(d)
    print("PASS")
finally:
    shutil.rmtree(d, ignore_errors=True)
