# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""`ascbpf agent`: collective and task-queue metrics against the journal, and the
collective_hang finding.

A 3-rank data-parallel npu_train job (one process per rank, --rank, as torchrun starts
them), started after the agent and released once the agent shows each rank's probes.

* healthy run, per rank, against npu_model's journal (npu_model/JOURNAL.md "HCCL",
  "queue"): ascbpf_collective_calls_total{op} = its hccl lines of that op,
  ascbpf_collective_bytes_total{op} = the sum of their bytes, failures = those with
  ret != 0, the duration histogram's count = the calls, nothing in progress;
  ascbpf_task_queue_enqueued_total / _dequeued_total = its queue lines per side and the
  depth 0 once it is done; no collective_hang; promtool check metrics accepts the text;
* NPU_MODEL_HCCL_HANG=1:3 (rank 1 sleeps at the entry of its op 3): rank 1 gets
  ascbpf_finding{kind="collective_hang"} 1 and one op in progress, the agent's log line
  names HcclAllReduce call 3 and ranks 0 and 2 as returned from it (their journals have
  seq 3) and no process of the job as not returned, and ranks 0 and 2 get no
  collective_hang.
* a second agent with --no-task-queue beside the first: each rank has 2 probes fewer
  (Enqueue, AsncExecFunc), the same collective calls and no task-queue entry counted.
"""
import collections
import os
import re
import signal
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import agent_check as ac  # noqa: E402
from npu_model import ModelDaemon, read_journal  # noqa: E402

check = ac.check
RANKS = 3
STEPS = 8
HANG_SEQ = 3


def probes(agent, pid):
    return ac.value(ac.parse(agent.metrics()), "ascbpf_process_probes", pid=pid) or 0


def start_ranks(a, m, d, tag, jdir, extra_env, b=None):
    root = os.path.join(d, "root_info_" + tag)
    procs = []
    for r in range(RANKS):
        env = m.env(NPU_MODEL_JOURNAL=jdir, RANK=r, **extra_env)
        for k in ("SLURM_JOB_ID", "RANK_ID", "TORCHELASTIC_RUN_ID", "JOB_ID"):
            env.pop(k, None)
        p, gate = ac.gated_job(m, d, "%s%d" % (tag, r),
                               ["--scenario", "multi-rank", "--ranks", str(RANKS), "--rank",
                                str(r), "--root-info", root, "--steps", str(STEPS)], env)
        procs.append((r, p, gate))
    for r, p, gate in procs:
        for agent in (a, b) if b else (a,):
            agent.wait_for(lambda s: (ac.value(s, "ascbpf_process_probes", pid=p.pid) or 0) > 0,
                           "rank %d attached" % r)
        if b:
            # --no-task-queue: the same sites but Enqueue and AsncExecFunc (entry only)
            check(probes(b, p.pid) == probes(a, p.pid) - 2, "rank %d: probes %s, %s with "
                  "--no-task-queue" % (r, probes(a, p.pid), probes(b, p.pid)))
    for r, p, gate in procs:
        ac.release(gate)
    return procs


def healthy(a, b, d):
    jdir = os.path.join(d, "journal-ok")
    os.mkdir(jdir)
    with ModelDaemon(cards=RANKS) as m:
        procs = start_ranks(a, m, d, "ok", jdir, {}, b)
        for r, p, _ in procs:
            rc = p.wait(240)
            check(rc == 0, "rank %d exited %d: %s" % (r, rc,
                                                     open(os.path.join(d, "ok%d.out" % r)).read()))
        last = {}

        def all_exited(s):
            for r, p, _ in procs:
                if r not in last and ac.value(s, "ascbpf_process_probes", pid=p.pid) == 0:
                    last[r] = s
                    ac.promtool_metrics(a.last_text)
            return len(last) == RANKS
        a.wait_for(all_exited, "the ranks' exit")
        m.proc.send_signal(signal.SIGTERM)
        m.proc.wait(30)
    for r, p, _ in procs:
        s = last[r]
        j = read_journal(jdir, p.pid)
        ops = collections.defaultdict(list)
        for k, f in j:
            if k == "hccl":
                ops[f["op"]].append(f)
        check(sum(len(v) for v in ops.values()) == STEPS, "rank %d: journal hccl %s" %
              (r, {k: len(v) for k, v in ops.items()}))
        v = lambda name, **kw: ac.value(s, name, pid=p.pid, **kw)  # noqa: E731
        for op, lines in ops.items():
            calls = v("ascbpf_collective_calls_total", op=op)
            check(calls == len(lines), "rank %d %s: calls %s, journal %d" %
                  (r, op, calls, len(lines)))
            nbytes = sum(int(f["bytes"]) for f in lines)
            got = v("ascbpf_collective_bytes_total", op=op)
            check(got == nbytes, "rank %d %s: bytes %s, journal %d" % (r, op, got, nbytes))
            fails = sum(1 for f in lines if f["ret"] != "0")
            got = v("ascbpf_collective_failures_total", op=op)
            check(got == fails, "rank %d %s: failures %s, journal %d" % (r, op, got, fails))
            cnt = v("ascbpf_collective_duration_seconds_count", op=op)
            inf = v("ascbpf_collective_duration_seconds_bucket", op=op, le="+Inf")
            check(cnt == inf == len(lines), "rank %d %s: duration count %s +Inf %s" %
                  (r, op, cnt, inf))
            check(v("ascbpf_collectives_in_progress", op=op) == 0, "rank %d in progress" % r)
            # the host time inside the calls: within the journal's t0..t1 spans' sum, plus
            # the probes' own time (bounded by the whole job, not by a timing)
            span = sum(int(f["t1"]) - int(f["t0"]) for f in lines) / 1e9
            wait = v("ascbpf_collective_wait_seconds_total", op=op)
            check(wait >= span, "rank %d %s: wait %s s < journal spans %s s" %
                  (r, op, wait, span))
        side = collections.Counter(f["side"] for k, f in j if k == "queue")
        check(side["enqueue"] > 0, "rank %d: no queue lines" % r)
        for name, key in (("ascbpf_task_queue_enqueued_total", "enqueue"),
                          ("ascbpf_task_queue_dequeued_total", "dequeue")):
            check(v(name) == side[key], "rank %d: %s %s, journal %d" %
                  (r, name, v(name), side[key]))
        check(v("ascbpf_task_queue_depth") == side["enqueue"] - side["dequeue"],
              "rank %d: depth %s" % (r, v("ascbpf_task_queue_depth")))
        check(v("ascbpf_findings_total", kind="collective_hang") == 0,
              "rank %d: collective_hang in a healthy run" % r)
        # the --no-task-queue agent counted the same collectives and no queue entry
        sb = ac.parse(b.metrics())
        check(ac.value(sb, "ascbpf_task_queue_enqueued_total", pid=p.pid) == 0 and
              ac.value(sb, "ascbpf_collective_calls_total", pid=p.pid, op="HcclAllReduce") ==
              len(ops["HcclAllReduce"]), "rank %d: the --no-task-queue agent's counts" % r)
        print("rank %d (pid %d): %s, queue %s: as the journal" %
              (r, p.pid, {k: len(x) for k, x in ops.items()}, dict(side)))


def hang(a, d):
    jdir = os.path.join(d, "journal-hang")
    os.mkdir(jdir)
    with ModelDaemon(cards=RANKS) as m:
        procs = start_ranks(a, m, d, "hang", jdir, {"NPU_MODEL_HCCL_HANG": "1:%d" % HANG_SEQ})
        pid = {r: p.pid for r, p, _ in procs}
        try:
            s = a.wait_for(lambda s: ac.value(s, "ascbpf_finding", pid=pid[1],
                                              kind="collective_hang") == 1,
                           "rank 1's collective_hang", timeout=120)
            check(ac.value(s, "ascbpf_collectives_in_progress", pid=pid[1],
                           op="HcclAllReduce") == 1, "rank 1: not one op in progress")
            log = a.logtext()
            m_ = re.search(r"finding collective_hang: pid %d .*\n" % pid[1], log)
            check(m_, "no collective_hang line for pid %d:\n%s" % (pid[1], log))
            line = m_.group(0)
            check("in HcclAllReduce call %d " % HANG_SEQ in line, "line: %s" % line)
            for r in (0, 2):
                check("rank %d (pid %d)" % (r, pid[r]) in line.split("not returned")[0],
                      "rank %d not named as returned: %s" % (r, line))
                check(ac.value(s, "ascbpf_findings_total", pid=pid[r],
                               kind="collective_hang") == 0, "rank %d: collective_hang" % r)
            check(line.rstrip().endswith("not returned: none"), "line: %s" % line)
            print("collective_hang: %s" % line.strip())
        finally:
            for r, p, _ in procs:
                if p.poll() is None:
                    p.kill()
                p.wait(30)
    # the peers' journals hold the op the hung rank never finished
    for r in (0, 2):
        seqs = {int(f["seq"]) for k, f in read_journal(jdir, pid[r]) if k == "hccl"}
        check(HANG_SEQ in seqs, "rank %d: journal seqs %s" % (r, sorted(seqs)))


d = tempfile.mkdtemp(prefix="ascbpf-agent-hccl.")
with ac.Agent(d, linger=30, extra=["--hang-min", "2"]) as a:
    db = os.path.join(d, "b")
    os.mkdir(db)
    with ac.Agent(db, linger=60, extra=["--no-task-queue"]) as b:
        healthy(a, b, d)
    hang(a, d)
    rc = a.stop()
    check(rc == 0, "agent exited %s on SIGTERM" % rc)
print("ok")
