#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# `ascbpf report JOBDIR` over the ranks of synthetic jobs (tests/lib/mkcomm), --json
# parsed with Python's json and text checked for the same findings, against what
# mkcomm injected and its truth (its own arrival and wait times):
#  - a healthy job: no finding;
#  - a slow rank (compute x 3): named, last in every collective, with the
#    others' mean wait for it;
#  - a slow link (bandwidth / 4 between two ranks): that pair, both ways, only;
#  - a hang (a rank never enters collective Q): the culprit, Q, and the last
#    collective each rank entered;
#  - per rank and step the communication time and its non-overlapped part.
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from checks import check  # noqa: E402
from commjob import make_job  # noqa: E402
from golden import ASCBPF, run_tests  # noqa: E402


def report(job, json_out=True):
    args = [ASCBPF, "report"] + (["--json"] if json_out else []) + [job.dir]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check(p.returncode == 0, "report exited %d: %s" % (p.returncode, p.stderr[-300:]))
    if not json_out:
        return p.stdout.decode()
    try:
        return json.loads(p.stdout)["job"]
    except (ValueError, KeyError) as e:
        check(False, "report --json: %s: %r" % (e, p.stdout[:200]))
        return {"findings": [], "ranks": [], "steps": [], "collectives": [], "links": []}


def ids(rep):
    return sorted(f["id"] for f in rep["findings"])


def test_healthy(tmp):
    job = make_job(tmp, "ok", "--ranks", "4", "--nodes", "2", "--steps", "3", convert=False)
    rep = report(job)
    check(rep["findings"] == [], "healthy job: no finding, got %s" % rep["findings"])
    check([r["rank"] for r in rep["ranks"]] == [0, 1, 2, 3], "ranks %s" % rep["ranks"])
    check(len(rep["collectives"]) == 3, "3 collectives: %d" % len(rep["collectives"]))
    # communication time per rank and step: the op's device span (no overlap here)
    for s in rep["steps"]:
        op = [o for o in job.truth["ops"] if o["rank"] == s["rank"] and o["step"] == s["step"]]
        if not check(len(op) == 1, "rank %d step %d in the truth" % (s["rank"], s["step"])):
            continue
        want = (op[0]["dev_end"] - op[0]["dev_start"]) / 1000.0
        check(math.isclose(s["communication_us"], want, abs_tol=1e-3),
              "rank %d step %d communication %r us, want %r" %
              (s["rank"], s["step"], s["communication_us"], want))
        check(math.isclose(s["not_overlapped_us"], want, abs_tol=1e-3),
              "rank %d step %d not overlapped %r" % (s["rank"], s["step"], s["not_overlapped_us"]))
    check("none" in report(job, False), "text: no finding")


def test_overlap_share(tmp):
    job = make_job(tmp, "olap", "--ranks", "2", "--steps", "2", "--overlap-us", "40",
                   convert=False)
    rep = report(job)
    for s in rep["steps"]:
        op = [o for o in job.truth["ops"] if o["rank"] == s["rank"] and o["step"] == s["step"]][0]
        comm = (op["dev_end"] - op["dev_start"]) / 1000.0
        check(math.isclose(s["not_overlapped_us"], comm - 40.0, abs_tol=1e-3),
              "rank %d step %d not overlapped %r, want %r" %
              (s["rank"], s["step"], s["not_overlapped_us"], comm - 40.0))
        check(math.isclose(s["communication_share"], s["communication_us"] / s["step_us"]),
              "share is communication / step")


def test_slow_rank(tmp):
    job = make_job(tmp, "slow", "--ranks", "4", "--steps", "3", "--slow-rank", "2",
                   "--slow-factor", "3", convert=False)
    rep = report(job)
    check(ids(rep) == ["slow_rank"], "slow rank: findings %s" % ids(rep))
    f = [x for x in rep["findings"] if x["id"] == "slow_rank"]
    if f:
        f = f[0]
        check(f["rank"] == 2, "slow rank named %r, want 2" % f["rank"])
        check(f["last_in"] == 3 and f["collectives"] == 3, "last in %r of %r" %
              (f["last_in"], f["collectives"]))
        # the others' wait on rank 2: their Notify_Waits on it (truth), mean over ranks, ops
        others = [o["wait_on"][2] / 1000.0 for o in job.truth["ops"] if o["rank"] != 2]
        want = sum(others) / len(others)
        check(math.isclose(f["others_wait_us"], want, rel_tol=1e-6),
              "others waited %r us, truth %r" % (f["others_wait_us"], want))
    for c in rep["collectives"]:
        check(c["last_rank"] == 2, "collective %d: last %r" % (c["seq"], c["last_rank"]))
        on = [sum(o["wait_on"][p] for o in job.truth["ops"] if o["seq"] == c["seq"])
              for p in range(4)]
        check(on.index(max(on)) == 2, "truth: the others waited on rank 2 most (%s)" % on)
        arr = [o["dev_start"] for o in job.truth["ops"] if o["seq"] == c["seq"]]
        check(math.isclose(c["arrival_spread_us"], (max(arr) - min(arr)) / 1000.0,
                           abs_tol=1e-3), "spread %r" % c["arrival_spread_us"])
    check("[slow_rank] rank 2" in report(job, False), "text names the slow rank")


def test_slow_link(tmp):
    job = make_job(tmp, "link", "--ranks", "4", "--steps", "2", "--slow-link", "1-3",
                   "--link-factor", "4", convert=False)
    rep = report(job)
    links = sorted((f["src"], f["dst"]) for f in rep["findings"] if f["id"] == "slow_link")
    check(links == [(1, 3), (3, 1)], "slow links %s, want 1-3 both ways" % links)
    check(all(f["id"] == "slow_link" for f in rep["findings"]), "only link findings: %s" %
          ids(rep))
    for f in rep["findings"]:
        # truth: bytes / ns of that pair over all its ops
        tl = [l for o in job.truth["ops"] for l in o["links"]
              if (l["src"], l["dst"]) == (f["src"], f["dst"])]
        want = sum(l["bytes"] for l in tl) / sum(l["ns"] for l in tl)
        check(math.isclose(f["bandwidth_gbps"], want, rel_tol=1e-6),
              "link %d-%d %r GB/s, truth %r" % (f["src"], f["dst"], f["bandwidth_gbps"], want))
        check(f["transport"] == "HCCS", "transport %r" % f["transport"])


def test_hang(tmp):
    job = make_job(tmp, "hang", "--ranks", "4", "--steps", "5", "--hang-rank", "1",
                   "--hang-seq", "2", convert=False)
    rep = report(job)
    h = [f for f in rep["findings"] if f["id"] == "hang"]
    check(ids(rep) == ["hang"], "hang: findings %s" % ids(rep))
    if h:
        check(h[0]["never_arrived"] == [1] and h[0]["seq"] == 2,
              "hang culprit %r at %r, want [1] at 2" % (h[0]["never_arrived"], h[0]["seq"]))
        check(h[0]["group"] == job.truth["group"], "hang group %r" % h[0]["group"])
    for r in rep["ranks"]:
        want = max(o["seq"] for o in job.truth["ops"] if o["rank"] == r["rank"])
        check(r.get("last_seq") == want, "rank %d last seq %r, truth %d" %
              (r["rank"], r.get("last_seq"), want))
        check(r.get("stuck") == (r["rank"] != 1), "rank %d stuck %r" % (r["rank"], r.get("stuck")))
    check("rank(s) 1 never arrived" in report(job, False), "text names the culprit")


sys.exit(run_tests("test_report_job.", [test_healthy, test_overlap_share, test_slow_rank,
                                        test_slow_link, test_hang]))
