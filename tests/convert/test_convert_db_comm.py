#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The communication tables of `--export-type db` on a synthetic 4-rank job over two
# nodes (tests/lib/mkcomm), opened with Python's sqlite3 and checked against
# mkcomm's truth: COMMUNICATION_OP (one row per op: name and group through
# STRING_IDS, device start / end, count, data type, rank size),
# COMMUNICATION_TASK_INFO (one row per comm task, each joined to its TASK row,
# ranks, sizes, link and transport ids of the ENUM_HCCL_* tables), and
# analysis.db's CommAnalyzerTime / Bandwidth / Matrix (the same numbers as
# communication.json of the text export of the same capture).
import glob
import math
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from checks import check  # noqa: E402
from commjob import load, make_job  # noqa: E402
from golden import ASCBPF, run, run_tests  # noqa: E402


def test_db_comm(tmp):
    job = make_job(tmp, "db", "--ranks", "4", "--nodes", "2", "--steps", "2", convert=False)
    n = job.truth["ranks"]
    for r in range(n):
        out = os.path.join(job.dir, "db%d" % r)
        run([ASCBPF, "convert", job.capture(r), "-o", out, "--export-type", "text,db"])
        d = glob.glob(os.path.join(out, "*_ascend_pt", "ASCEND_PROFILER_OUTPUT"))
        if not check(len(d) == 1, "rank %d: one run" % r):
            continue
        db = sqlite3.connect(os.path.join(d[0], "ascend_pytorch_profiler_%d.db" % r))
        s = dict(db.execute("SELECT id, value FROM STRING_IDS"))
        ops = db.execute("SELECT opName, startNs, endNs, groupName, opId, dataType, count, "
                         "rankSize, deviceId FROM COMMUNICATION_OP ORDER BY startNs").fetchall()
        want = job.ops(r)
        check(len(ops) == len(want), "rank %d: %d COMMUNICATION_OP rows, want %d" %
              (r, len(ops), len(want)))
        dt = dict(db.execute("SELECT id, name FROM ENUM_HCCL_DATA_TYPE"))
        for row, o in zip(ops, want):
            check(s.get(row[0]) == o["name"], "op name %r" % s.get(row[0]))
            check(s.get(row[3]) == job.truth["group"], "group %r" % s.get(row[3]))
            check((row[1], row[2]) == (o["dev_start"], o["dev_end"]),
                  "rank %d op times %s, want %s" % (r, row[1:3], (o["dev_start"], o["dev_end"])))
            check(dt.get(row[5]) == "FP32" and row[6] == job.truth["bytes"] // 4,
                  "data type %r count %r" % (dt.get(row[5]), row[6]))
            check(row[7] == n and row[8] == r, "rank size %r device %r" % (row[7], row[8]))
        tasks = db.execute("SELECT c.srcRank, c.dstRank, c.size, c.opId, t.startNs, t.endNs, "
                           "c.linkType, c.transportType, c.name FROM COMMUNICATION_TASK_INFO c "
                           "JOIN TASK t ON t.globalTaskId = c.globalTaskId").fetchall()
        check(len(tasks) == len(want) * 8 * (n - 1),
              "rank %d: %d task rows joined to TASK" % (r, len(tasks)))
        lk = dict(db.execute("SELECT id, name FROM ENUM_HCCL_LINK_TYPE"))
        tp = dict(db.execute("SELECT id, name FROM ENUM_HCCL_TRANSPORT_TYPE"))
        node = lambda x: x * job.truth["nodes"] // n  # noqa: E731
        for t in tasks:
            check(t[0] == r, "src rank %r" % t[0])
            same = node(t[0]) == node(t[1])
            check(lk.get(t[6]) == ("HCCS" if same else "ROCE"), "link %r" % lk.get(t[6]))
            check(tp.get(t[7]) == ("SDMA" if same else "RDMA"), "transport %r" % tp.get(t[7]))
            if s.get(t[8]) in ("Memcpy", "Reduce_Inline"):
                check(t[2] == job.truth["bytes"] // n, "copy size %r" % t[2])
        db.close()
        an = sqlite3.connect(os.path.join(d[0], "analysis.db"))
        text = load(os.path.join(d[0], "communication.json"))
        rows = an.execute("SELECT hccl_op_name, group_name, elapse_time, transit_time, "
                          "wait_time, synchronization_time, idle_time, step, type "
                          "FROM CommAnalyzerTime").fetchall()
        check(len(rows) == len(want), "rank %d CommAnalyzerTime rows %d" % (r, len(rows)))
        for row, o in zip(rows, want):
            check(row[0] == o["name"] and row[7] == "step%d" % o["step"] and
                  row[8] == "collective", "time row %r" % (row,))
            check(math.isclose(row[4], o["wait_ns"] / 1e6, rel_tol=1e-9),
                  "wait %r, truth %r" % (row[4], o["wait_ns"] / 1e6))
            ti = text["step%d" % o["step"]]["collective"][o["name"] + "@" + row[1]][
                "Communication Time Info"]
            check(math.isclose(row[2], ti["Elapse Time(ms)"]) and
                  math.isclose(row[3], ti["Transit Time(ms)"]),
                  "db and text agree on %s" % o["name"])
        bw = an.execute("SELECT transport_type, sum(count) FROM CommAnalyzerBandwidth "
                        "WHERE transport_type IN ('HCCS', 'RDMA') GROUP BY transport_type "
                        "ORDER BY transport_type").fetchall()
        per = {"HCCS": 0, "RDMA": 0}
        for o in want:
            for l in o["links"]:
                per[l["transport"]] += 2
        check(bw == sorted((k, float(v)) for k, v in per.items() if v),
              "rank %d bandwidth transfers %r, want %r" % (r, bw, per))
        # StepTraceTime: the numbers of step_trace_time.csv of the same capture
        import csv
        with open(os.path.join(d[0], "step_trace_time.csv"), newline="") as f:
            crow = list(csv.DictReader(f))
        st = an.execute("SELECT step, computing, communication_not_overlapped, overlapped, "
                        "communication, free, stage FROM StepTraceTime ORDER BY step").fetchall()
        check(len(st) == len(crow) == len(want), "rank %d StepTraceTime rows %d" % (r, len(st)))
        for a, b in zip(st, crow):
            for v, k in zip(a[1:], ("Computing", "Communication(Not Overlapped)", "Overlapped",
                                    "Communication", "Free", "Stage")):
                check(math.isclose(v, float(b[k]), abs_tol=1e-6),
                      "rank %d step %s %s: db %r, csv %r" % (r, a[0], k, v, b[k]))
        for a, o in zip(st, want):
            check(math.isclose(a[4], (o["dev_end"] - o["dev_start"]) / 1000.0),
                  "rank %d StepTraceTime communication %r" % (r, a[4]))
        # CommAnalyzerMatrix: torch_npu regroups the links as communication_matrix.json
        # (top1 / middle / bottom1 / total ... per type, group and link): the same entries
        mtext = load(os.path.join(d[0], "communication_matrix.json"))
        mx = an.execute("SELECT hccl_op_name, group_name, src_rank, dst_rank, transport_type, "
                        "transit_size, transit_time, bandwidth, step, type, op_name "
                        "FROM CommAnalyzerMatrix").fetchall()
        nent = sum(len(links) for st in mtext.values() for ty in st.values()
                   for links in ty.values())
        check(mx and len(mx) == nent, "rank %d matrix rows %d, json entries %d" %
              (r, len(mx), nent))
        for row in mx:
            e = mtext[row[8]][row[9]]["%s@%s" % (row[0], row[1])]["%s-%s" % (row[2], row[3])]
            check(row[4] == e["Transport Type"] and
                  math.isclose(row[5], e["Transit Size(MB)"]) and
                  math.isclose(row[6], e["Transit Time(ms)"]) and
                  math.isclose(row[7], e["Bandwidth(GB/s)"]) and
                  row[10] == e.get("Op Name", ""), "matrix row %r, json %r" % (row, e))
        names = {row[0].rsplit("-", 1)[1] for row in mx}
        check({"top1", "middle", "bottom1", "total"} <= names, "matrix entries %s" % names)
        check(all(row[10] == "" for row in mx if row[0].endswith("-total")) and
              all(row[10] for row in mx if not row[0].endswith("-total")),
              "op_name of totals and of ops")
        an.close()


sys.exit(run_tests("test_convert_db_comm.", [test_db_comm]))
