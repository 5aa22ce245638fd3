# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""`ascbpf agent`'s slow_step rule on a healthy job under CPU load (issue 18:
"a healthy job fires none during a long run"), and an injected slow step that
still fires it.

* npu_train baseline (~10 ms and ~1 ms steps) runs pinned to one CPU beside two
  busy-loop processes pinned to the same CPU, so its steps are delayed by the
  scheduler, by factors of the median (what fired slow_step before --slow-min
  and --slow-warmup);
* over 600 steps (the agent's step count, which equals what it counted, no
  clock involved) no finding of any kind starts for the job;
* then, still under load, the job is stopped (SIGSTOP, the injected hang) until
  the hang finding is active, and continued: the stopped step (> 2 s, far over
  the median + --slow-min 0.5 s) is one slow_step finding with its log line.
Nothing here asserts a wall-clock time; the waits only bound the test.
"""
import os
import re
import signal
import subprocess
import sys
import shutil
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import agent_check as ac  # noqa: E402
from npu_model import ModelDaemon  # noqa: E402

check = ac.check
KINDS = ("hang", "slow_step", "alloc_failure", "straggler")
HEALTHY_STEPS = 600


def episodes(s, pid, kind):
    return ac.value(s, "ascbpf_findings_total", pid=pid, kind=kind)


def busy_loops(cpu, n):
    loops = []
    for _ in range(n):
        b = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        os.sched_setaffinity(b.pid, {cpu})
        loops.append(b)
    return loops


def run(d):
    cpu = sorted(os.sched_getaffinity(0))[0]
    with ModelDaemon(cards=1) as m, ac.Agent(d, linger=1, extra=["--hang-min", "2"]) as a:
        p, gate = ac.gated_job(m, d, "loaded", ["--scenario", "baseline", "--steps", "0",
                                               "--duration", "300"], m.env())
        loops = []
        try:
            os.sched_setaffinity(p.pid, {cpu})  # its threads start after the gate: pinned too
            a.wait_for(lambda s: (ac.value(s, "ascbpf_process_probes", pid=p.pid) or 0) > 0,
                       "the job attached")
            loops = busy_loops(cpu, 2)
            ac.release(gate)
            s = a.wait_for(lambda s: (ac.value(s, "ascbpf_steps_total", pid=p.pid) or 0) >=
                           HEALTHY_STEPS, "%d steps" % HEALTHY_STEPS, timeout=240)
            found = {k: episodes(s, p.pid, k) for k in KINDS}
            check(all(v == 0 for v in found.values()),
                  "a healthy job under load fired findings %s; log:\n%s" % (found, a.logtext()))
            check(not re.search(r"finding \w+: pid %d \(" % p.pid, a.logtext()),
                  "finding log line for the healthy job:\n" + a.logtext())
            print("healthy under load: %d steps, no finding" %
                  ac.value(s, "ascbpf_steps_total", pid=p.pid))
            p.send_signal(signal.SIGSTOP)
            a.wait_for(lambda s: ac.value(s, "ascbpf_finding", pid=p.pid, kind="hang") == 1,
                       "the hang finding")
            n = ac.value(a.wait_for(lambda s: True, "metrics"), "ascbpf_steps_total", pid=p.pid)
            p.send_signal(signal.SIGCONT)
            s = a.wait_for(lambda s: ac.value(s, "ascbpf_steps_total", pid=p.pid) > n + 2 and
                           (episodes(s, p.pid, "slow_step") or 0) > 0,
                           "a slow_step finding after SIGCONT")
            check(episodes(s, p.pid, "slow_step") == 1,
                  "the stopped step: slow_step episodes %s; log:\n%s" %
                  (episodes(s, p.pid, "slow_step"), a.logtext()))
            check(re.search(r"finding slow_step: pid %d \(" % p.pid, a.logtext()),
                  "no slow_step log line")
            print("injected stop under load: one slow_step finding")
        finally:
            for b in loops:
                b.kill()
                b.wait()
            p.send_signal(signal.SIGCONT)
            p.send_signal(signal.SIGTERM)
            rc = p.wait(60)
        check(rc == 0, "npu_train exited %d after SIGTERM" % rc)


d = tempfile.mkdtemp(prefix="ascbpf-agent-load.")
try:
    run(d)
    print("PASS")
finally:
    shutil.rmtree(d, ignore_errors=True)
