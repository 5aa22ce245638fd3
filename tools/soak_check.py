#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""tools/soak_check.py DIR ASCBPF SECONDS JOBS FAILED_JOBS ASCBPF_STATUS: the checks and
summary of tools/soak.sh.  Per capture (one per traced npu_train process): its step records
are the journal's last steps (--comm attaches once the process runs: a launch-storm process
often has its step 0 done by then); captured tasks (SQE headers kept) + the records the
capture says were dropped = the journal's task lines from the first captured step on (every
step is recorded with the default SOAK_SCHEDULE); every *_ascend_pt of the process parses
(json, csv).  Writes DIR/summary.txt; exits 1 if any check failed."""
import csv
import glob
import json
import os
import subprocess
import sys

d, ascbpf, secs, jobs, failed_jobs, arc = sys.argv[1:7]
problems = []


def capture_counts(cap):
    """(pid, step records, SQE tasks, stats record or None) of cap, streamed from `ascbpf
    dump --json`: a launch-storm capture holds millions of records, none is kept."""
    pid, steps, tasks, stats = None, 0, 0, None
    p = subprocess.Popen([ascbpf, "dump", "--json", cap], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    for line in p.stdout:
        head = line[:40]
        if '"type": "sqe"' in head:
            # headers of this record (a batch spans several)
            tasks += json.loads(line)["nr_kept"]
        elif '"type": "step"' in head:
            steps += 1
        elif '"type": "process"' in head:
            pid = json.loads(line)["tgid"]
        elif '"type": "stats"' in head:
            stats = json.loads(line)
    if p.wait() != 0:
        problems.append("%s: ascbpf dump exited %d" % (cap, p.returncode))
    return pid, steps, tasks, stats


def journal_counts(pid, nsteps):
    """(steps, tasks from the first of the last nsteps steps on) of the process's journal, or
    None.  --comm adopts a process once it runs: steps before the probes were attached are in
    the journal only, so the capture's steps are the journal's last ones."""
    path = os.path.join(d, "journal", "journal.%d.tsv" % pid)
    if not os.path.exists(path):
        return None
    step_ts, task_ts = [], []
    for line in open(path):
        if line.startswith("step\t"):
            step_ts.append(int(line.split("\tt=", 1)[1].split("\t", 1)[0]))
        elif line.startswith("task\t"):
            task_ts.append(int(line.split("\tt=", 1)[1].split("\t", 1)[0]))
    if not nsteps or nsteps > len(step_ts):
        return len(step_ts), None, 0
    t0 = step_ts[len(step_ts) - nsteps]
    return len(step_ts), sum(1 for t in task_ts if t >= t0), len(step_ts) - nsteps


def parses(run):
    n = 0
    for f in glob.glob(os.path.join(run, "**", "*"), recursive=True):
        try:
            if f.endswith(".json"):
                json.load(open(f))
                n += 1
            elif f.endswith(".csv"):
                list(csv.reader(open(f, newline="")))
                n += 1
        except (ValueError, UnicodeDecodeError, csv.Error) as e:
            problems.append("%s does not parse: %s" % (f, e))
    return n


caps = sorted(glob.glob(os.path.join(d, "trace", "*.cap")))
runs = sorted(glob.glob(os.path.join(d, "trace", "*_ascend_pt")))
tot = dict(caps=len(caps), steps=0, tasks=0, jtasks=0, drops=0, devtask_drops=0, files=0, early=0)
for cap in caps:
    pid, steps, tasks, st = capture_counts(cap)
    if pid is None:
        problems.append("%s: no process record" % cap)
        continue
    jc = journal_counts(pid, steps)
    if jc is None:
        problems.append("%s: no journal for pid %d" % (cap, pid))
        continue
    jsteps, jtasks, early = jc
    if jtasks is None:
        if jsteps:
            problems.append("pid %d: %d step records, journal %d steps" % (pid, steps, jsteps))
        jtasks = 0
    tot["early"] += early
    drops = st["drops"] if st else 0
    if not st:
        problems.append("pid %d: no stats record (trace did not end)" % pid)
    # ring drops are counted in records: with any, the task count can only be bounded
    if (tasks + drops < jtasks) if drops else (tasks != jtasks):
        problems.append("pid %d: captured %d tasks + %d dropped records, journal %d tasks" %
                        (pid, tasks, drops, jtasks))
    mine = [r for r in runs if "_%d_" % pid in os.path.basename(r)]
    if not mine and steps:
        problems.append("pid %d: %d steps but no *_ascend_pt output" % (pid, steps))
    for r in mine:
        tot["files"] += parses(r)
    tot["steps"] += steps
    tot["tasks"] += tasks
    tot["jtasks"] += jtasks
    tot["drops"] += drops
    tot["devtask_drops"] += st["devtask_drops"] if st else 0

# every process that ran steps must have been traced (--comm: also forked ranks)
traced = {os.path.basename(c)[len("ascbpf-"):-len(".cap")] for c in caps}
for j in sorted(glob.glob(os.path.join(d, "journal", "journal.*.tsv"))):
    jpid = os.path.basename(j)[len("journal."):-len(".tsv")]
    if jpid not in traced and any(line.startswith("step\t") for line in open(j)):
        problems.append("pid %s ran steps (journal) but was not traced" % jpid)

rss = [(int(t), int(k)) for t, k in csv.reader(open(os.path.join(d, "rss.csv"))) if t != "t_s"]
if arc != "0":
    problems.append("ascbpf trace exited %s" % arc)
if failed_jobs != "0":
    problems.append("%s jobs failed" % failed_jobs)
if not caps:
    problems.append("no capture written")
parsed = not any("parse" in p for p in problems)
lines = ["soak: %s s requested, %s jobs (launch-storm and multi-rank alternating), "
         "%d processes traced" % (secs, jobs, tot["caps"]),
         "cycles: %d *_ascend_pt directories, %d JSON/CSV files, all parsed" %
         (len(runs), tot["files"]) if parsed else
         "cycles: %d directories, parse errors" % len(runs),
         "steps: %d step records (%d earlier steps ran before --comm had attached); tasks of "
         "those steps: %d captured + %d ring drops, journal %d"
         % (tot["steps"], tot["early"], tot["tasks"], tot["drops"], tot["jtasks"]),
         "device records dropped: %d" % tot["devtask_drops"]]
if rss:
    ks = [k for _, k in rss]
    half = rss[len(rss) // 2:]
    n = len(half)
    mt = sum(t for t, _ in half) / n
    mk = sum(k for _, k in half) / n
    var = sum((t - mt) ** 2 for t, _ in half)
    slope = sum((t - mt) * (k - mk) for t, k in half) / var * 3600 if var else 0.0
    lines.append("ascbpf RSS (KiB): first %d, min %d, max %d, last %d over %d samples to t=%d s; "
                 "second-half slope %+.0f KiB/h" % (ks[0], min(ks), max(ks), ks[-1], len(ks),
                                                    rss[-1][0], slope))
lines += ["PROBLEM: " + p for p in problems]
lines.append("soak: %s" % ("PASS" if not problems else "FAIL (%d problems)" % len(problems)))
open(os.path.join(d, "summary.txt"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
sys.exit(1 if problems else 0)
