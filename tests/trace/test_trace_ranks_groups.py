# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A node's job traced with one command, `ascbpf trace -- npu_train --scenario S`,
converted at the end: each rank's profiler_metadata.json has parallel_group_info for
every communicator the rank joined, with the global ranks of its members, as the
journal says (its hccl_comm lines: group, rank in group, nranks; the global rank of a
pid is its capture's PROCESS rank).  The end-of-trace conversion passes the job's other
captures as peers (as `ascbpf convert --peer`); before, each rank saw only its own
communicator record and the group was left out ("1 of its 2 ranks' captures known").

* multi-rank, 2 ranks: one group, "default_group", global ranks [0, 1];
* dp-tp, 4 ranks (2 x 2 data x tensor parallel, forked by the launcher and held at
  the fork): every rank's capture has both of its communicators (HCCL_COMM records,
  one per journal hccl_comm line), and parallel_group_info both groups, named "" (not
  the whole job) with their global ranks."""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon, read_journal  # noqa: E402

STEPS = 8


def run(scenario, nranks, want_groups):
    d = tc.workdir()
    jdir = os.path.join(d, "journal")
    os.mkdir(jdir)
    out = os.path.join(d, "out")
    with ModelDaemon(cards=nranks) as m:
        r = tc.run_ascbpf(["trace", "--level", "0", "-o", out, "--", m.bin("npu_train"),
                           "--scenario", scenario, "--ranks", str(nranks), "--steps",
                           str(STEPS)], env=m.env(NPU_MODEL_JOURNAL=jdir), timeout=280)
    print(r.stdout, r.stderr, end="")
    tc.check(r.returncode == 0, "%s: trace exited %d" % (scenario, r.returncode))
    runs = {int(x.split("_")[-4]): x for x in os.listdir(out) if x.endswith("_ascend_pt")}
    ranks = {}      # global rank -> (pid, records)
    for c in sorted(f for f in os.listdir(out) if f.endswith(".cap")):
        recs = tc.records(os.path.join(out, c))
        proc = [x for x in recs if x["type"] == "process"]
        if proc and proc[0]["rank"] >= 0:
            ranks[proc[0]["rank"]] = (proc[0]["tgid"], recs)
    tc.check(sorted(ranks) == list(range(nranks)), "%s: ranks %s" % (scenario, sorted(ranks)))
    # the journal's communicators: group -> {group rank: global rank}; per rank its groups
    members = collections.defaultdict(dict)
    joined = collections.defaultdict(dict)      # global rank -> {group: (group rank, n)}
    for g, (pid, _) in ranks.items():
        for kind, f in read_journal(jdir, pid):
            if kind == "hccl_comm" and int(f["ret"]) == 0:
                members[f["group"]][int(f["rank"])] = g
                joined[g][f["group"]] = (int(f["rank"]), int(f["nranks"]))
    for g, (pid, recs) in sorted(ranks.items()):
        tc.check(len(joined[g]) == want_groups, "%s rank %d: journal communicators %s" %
                 (scenario, g, joined[g]))
        comms = sorted(x["group"] for x in recs if x["type"] == "hccl_comm")
        tc.check(comms == sorted(joined[g]), "%s rank %d: communicator records %s, journal %s"
                 % (scenario, g, comms, sorted(joined[g])))
        want = {}
        for grp, (grank, n) in joined[g].items():
            tc.check(sorted(members[grp]) == list(range(n)),
                     "%s: group %s members %s" % (scenario, grp, members[grp]))
            want[grp] = {"group_name": "default_group" if n == nranks else "",
                         "group_rank": grank,
                         "global_ranks": [members[grp][k] for k in range(n)]}
        tc.check(pid in runs, "%s rank %d: no *_ascend_pt" % (scenario, g))
        with open(os.path.join(out, runs[pid], "profiler_metadata.json")) as f:
            pg = json.load(f).get("parallel_group_info")
        tc.check(pg == want, "%s rank %d: parallel_group_info %s, journal %s" %
                 (scenario, g, pg, want))
        print("%s rank %d: parallel_group_info %s" % (scenario, g, pg))


run("multi-rank", 2, 1)
run("dp-tp", 4, 2)
print("PASS")
