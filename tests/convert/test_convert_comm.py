#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# communication.json and communication_matrix.json of a synthetic 4-rank job over
# two nodes (tests/lib/mkcomm: HCCL records as `ascbpf trace` writes them), each
# rank converted by `ascbpf convert`, parsed with Python's json and checked
#  - against the facts of the real torch_npu output (tests/data/torch_npu_format/
#    communication.json): key names and order, p2p / collective, Total Op Info,
#    the matrix's top1/middle/bottom/total keys, ints where nothing was added;
#  - against mkcomm's truth (its own task times and sizes): per op and rank the
#    Elapse / Transit / Wait / Synchronization / Idle times, the start timestamp,
#    bytes and time per transport (HCCS in the node, RDMA between nodes) and
#    per rank pair in the matrix, each op in its step.
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from checks import check  # noqa: E402
from commjob import load, make_job  # noqa: E402
from golden import run_tests  # noqa: E402
import torch_npu_format as fmt  # noqa: E402

F = load(os.path.join(fmt.DIR, "communication.json"))


def close(a, b, eps=1e-9):
    return isinstance(a, (int, float)) and math.isclose(a, b, rel_tol=eps, abs_tol=eps)


def check_raw(path):
    with open(path, "rb") as f:
        raw = f.read()
    check(b"\n" not in raw, "%s is one line" % path)
    check(b'": ' in raw and b', "' in raw, "%s uses json.dumps' separators" % path)


def check_time(rank, op, ti):
    c = F["communication"]
    check(list(ti) == c["time_keys"], "rank %d %s time keys %s" % (rank, op["name"], list(ti)))
    ms = 1e6
    elapse = (op["dev_end"] - op["dev_start"]) / ms
    want = {
        "Elapse Time(ms)": elapse, "Transit Time(ms)": op["transit_ns"] / ms,
        "Wait Time(ms)": op["wait_ns"] / ms, "Synchronization Time(ms)": op["sync_ns"] / ms,
        "Idle Time(ms)": elapse - op["transit_ns"] / ms - op["wait_ns"] / ms,
    }
    for k, v in want.items():
        check(close(ti.get(k), v, 1e-7), "rank %d %s %s = %r, want %r" %
              (rank, op["name"], k, ti.get(k), v))
    w, t, s = op["wait_ns"], op["transit_ns"], op["sync_ns"]
    check(close(ti["Wait Time Ratio"], round(w / (w + t), 4), 1e-12),
          "rank %d %s wait ratio %r" % (rank, op["name"], ti["Wait Time Ratio"]))
    check(close(ti["Synchronization Time Ratio"], round(s / (s + t), 4), 1e-12),
          "rank %d %s sync ratio %r" % (rank, op["name"], ti["Synchronization Time Ratio"]))
    check(close(ti["Start Timestamp(us)"], op["dev_start"] / 1000.0, 1e-15),
          "rank %d %s start %r, want %r us" % (rank, op["name"], ti["Start Timestamp(us)"],
                                               op["dev_start"] / 1000.0))


def check_bw(rank, op, bw):
    c = F["communication"]
    check(list(bw) == c["bandwidth_transports"], "rank %d transports %s" % (rank, list(bw)))
    want = {}
    for l in op["links"]:
        s = want.setdefault(l["transport"], [0, 0, 0])
        s[0] += l["bytes"] / 1e6
        s[1] += l["ns"] / 1e6
        s[2] += 2    # one Reduce_Inline and one Memcpy per peer
    want["SDMA"] = want.get("HCCS", [0, 0, 0])
    for tp in c["bandwidth_transports"]:
        b = bw[tp]
        check(list(b) == c["bandwidth_keys"], "rank %d %s keys %s" % (rank, tp, list(b)))
        if tp not in want:
            check(b == c["unused_transport_value"] and all(type(x) is int for x in
                                                           list(b.values())[:4]),
                  "rank %d %s unused: %r" % (rank, tp, b))
            continue
        size, ms, n = want[tp]
        check(close(b["Transit Size(MB)"], size), "rank %d %s size %r, want %r" %
              (rank, tp, b["Transit Size(MB)"], size))
        check(close(b["Transit Time(ms)"], ms), "rank %d %s time %r, want %r" %
              (rank, tp, b["Transit Time(ms)"], ms))
        check(close(b["Bandwidth(GB/s)"], round(size / ms, 4), 1e-12),
              "rank %d %s bandwidth %r" % (rank, tp, b["Bandwidth(GB/s)"]))
        if tp != "SDMA":
            per = op["bytes"] // op_ranks(op) / 1e6
            dist = b["Size Distribution"]
            check(list(dist) == [str(per)] and dist[str(per)][0] == n,
                  "rank %d %s size distribution %r, want %d x %s" % (rank, tp, dist, n, per))


def op_ranks(op):
    return len(op["links"]) + 1


def test_communication(tmp):
    job = make_job(tmp, "dp4", "--ranks", "4", "--nodes", "2", "--steps", "3")
    group = job.truth["group"]
    c = F["communication"]
    for r in range(job.truth["ranks"]):
        out = job.out(r)
        if not check(out is not None, "rank %d has one run directory" % r):
            continue
        for name in ("communication.json", "communication_matrix.json"):
            check(os.path.isfile(os.path.join(out, name)), "rank %d has %s" % (r, name))
            check_raw(os.path.join(out, name))
        info = os.path.join(job.run_dir(r), "profiler_info_%d.json" % r)
        check(os.path.isfile(info) and load(info).get("rank_id") == r,
              "rank %d: profiler_info_%d.json with rank_id %d" % (r, r, r))
        comm = load(os.path.join(out, "communication.json"))
        ops = job.ops(r)
        check(sorted(comm) == sorted("step%d" % o["step"] for o in ops),
              "rank %d steps %s" % (r, sorted(comm)))
        for op in ops:
            for o in ops:
                o["bytes"] = job.truth["bytes"]
            st = comm.get("step%d" % op["step"], {})
            check(list(st) == c["step_members"], "rank %d step members %s" % (r, list(st)))
            check(st.get("p2p") == {}, "rank %d: no p2p op, p2p is {}" % r)
            coll = st.get("collective", {})
            key = op["name"] + "@" + group
            check(list(coll) == [key, c["total_key"]],
                  "rank %d step %d collective keys %s" % (r, op["step"], list(coll)))
            if key not in coll:
                continue
            check(list(coll[key]) == c["op_members"], "op members %s" % list(coll[key]))
            check_time(r, op, coll[key]["Communication Time Info"])
            check_bw(r, op, coll[key]["Communication Bandwidth Info"])
            tot = coll[c["total_key"]]
            check(list(tot["Communication Time Info"]) == c["total_time_keys"],
                  "total time keys %s" % list(tot["Communication Time Info"]))
            for tp, b in tot["Communication Bandwidth Info"].items():
                check(list(b) == c["total_bandwidth_keys"], "total %s keys %s" % (tp, list(b)))
            # one op per step: the total is that op's numbers
            for k in c["total_time_keys"]:
                check(close(tot["Communication Time Info"][k],
                            coll[key]["Communication Time Info"][k]),
                      "rank %d total %s" % (r, k))


def test_matrix(tmp):
    job = make_job(tmp, "mx", "--ranks", "4", "--nodes", "2", "--steps", "2")
    group = job.truth["group"]
    m = F["matrix"]
    for r in range(job.truth["ranks"]):
        out = job.out(r)
        if not check(out is not None, "rank %d has one run directory" % r):
            continue
        mx = load(os.path.join(out, "communication_matrix.json"))
        for op in job.ops(r):
            st = mx.get("step%d" % op["step"], {})
            check(list(st) == m["step_members"], "matrix step members %s" % list(st))
            coll = st.get("collective", {})
            # one op per step: bottom2 / bottom3 need 2 / 3 ops
            want_keys = ["allreduce-%s@%s" % (s, group) for s in m["suffix_order"]
                         if s not in ("bottom2", "bottom3")]
            check(list(coll) == want_keys, "rank %d matrix keys %s" % (r, list(coll)))
            top, tot = coll.get(want_keys[0], {}), coll.get(want_keys[3], {})
            links = {"%d-%d" % (l["src"], l["dst"]): l for l in op["links"]}
            check(sorted(top) == sorted(links), "rank %d links %s, want %s" %
                  (r, sorted(top), sorted(links)))
            for lk, l in links.items():
                e, t = top.get(lk, {}), tot.get(lk, {})
                check(list(e) == m["entry_keys"], "entry keys %s" % list(e))
                check(list(t) == m["total_entry_keys"], "total entry keys %s" % list(t))
                check(e.get("Transport Type") == l["transport"],
                      "rank %d %s transport %r, want %s" % (r, lk, e.get("Transport Type"),
                                                           l["transport"]))
                check(e.get("Op Name") == op["name"], "rank %d %s op name" % (r, lk))
                check(close(t.get("Transit Size(MB)"), l["bytes"] / 1e6),
                      "rank %d %s size %r" % (r, lk, t.get("Transit Size(MB)")))
                check(close(t.get("Transit Time(ms)"), l["ns"] / 1e6),
                      "rank %d %s time %r, want %r" % (r, lk, t.get("Transit Time(ms)"),
                                                      l["ns"] / 1e6))
                check(close(t.get("Bandwidth(GB/s)"), round(l["bytes"] / l["ns"], 4), 1e-12),
                      "rank %d %s bandwidth %r" % (r, lk, t.get("Bandwidth(GB/s)")))


def test_matrix_ranking(tmp):
    # one step holds every op: the slow link's op must rank bottom, the others top
    job = make_job(tmp, "rk", "--ranks", "2", "--steps", "1")
    out = job.out(0)
    mx = load(os.path.join(out, "communication_matrix.json")) if out else {}
    check(list(mx) == ["step0"], "one step: %s" % list(mx))


def us(ns):
    return ns / 1000.0


def check_hccl_process(r, job, events):
    tv = F["trace_view"]
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    pids = [p for p, n in names.items() if n == tv["process_name"]]
    if not check(len(pids) == 1, "rank %d: one %s process (%s)" % (r, tv["process_name"],
                                                                  sorted(names.values()))):
        return
    pid = pids[0]
    meta = {(e["name"], e["tid"]): e["args"] for e in events
            if e.get("pid") == pid and e["ph"] == "M"}
    check(meta.get(("process_labels", 0)) == {"labels": tv["process_labels"]}, "HCCL labels")
    check(meta.get(("process_sort_index", 0)) == {"sort_index": tv["process_sort_index"]},
          "HCCL sort index")
    n = job.truth["ranks"]
    check(meta.get(("thread_name", 0)) == {"name": "Group 0 Communication"},
          "rank %d group row: %r" % (r, meta.get(("thread_name", 0))))
    for p in range(n - 1):   # one plane per peer: Plane p at tid p + 1
        check(meta.get(("thread_name", p + 1)) == {"name": "Plane %d" % p},
              "rank %d plane %d row: %r" % (r, p, meta.get(("thread_name", p + 1))))
    xs = [e for e in events if e.get("pid") == pid and e["ph"] == "X"]
    ops = [e for e in xs if e["tid"] == 0]
    tasks = [e for e in xs if e["tid"] != 0]
    want = job.ops(r)
    check([e["name"] for e in ops] == [o["name"] for o in want],
          "rank %d op rows %s" % (r, [e["name"] for e in ops]))
    for e, o in zip(ops, want):
        check(list(e["args"]) == tv["op_args"], "op args %s" % list(e["args"]))
        check(e["ts"] == "%d.%03d" % divmod(o["dev_start"], 1000), "op ts %s" % e["ts"])
        check(math.isclose(e["dur"], us(o["dev_end"] - o["dev_start"])), "op dur %r" % e["dur"])
        check(e["args"]["count"] == job.truth["bytes"] // 4 and e["args"]["data_type"] == "FP32",
              "op count / data type %r" % e["args"])
    # per op: 3 syncs of a record and a wait per peer, 2 transfers per peer
    check(len(tasks) == len(want) * 8 * (n - 1), "rank %d: %d task rows" % (r, len(tasks)))
    for e in tasks[:3]:
        check(list(e["args"]) == tv["task_args"], "task args %s" % list(e["args"]))


def test_trace_and_steps(tmp):
    job = make_job(tmp, "ov", "--ranks", "3", "--steps", "3", "--overlap-us", "50")
    from golden import read_csv
    for r in range(job.truth["ranks"]):
        out = job.out(r)
        if not check(out is not None, "rank %d has one run directory" % r):
            continue
        events = load(os.path.join(out, "trace_view.json"))
        check_hccl_process(r, job, events)
        names = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
        ov = [p for p, n in names.items() if n == "Overlap Analysis"]
        rows = {}
        for e in events:
            if ov and e.get("pid") == ov[0] and e["ph"] == "X":
                rows.setdefault(e["name"], []).append(e)
        ops = job.ops(r)
        comm = rows.get("Communication", [])
        check([x["ts"] for x in comm] == ["%d.%03d" % divmod(o["dev_start"], 1000) for o in ops],
              "rank %d Communication rows %s" % (r, [x["ts"] for x in comm]))
        nov = rows.get("Communication(Not Overlapped)", [])
        # the overlapping kernel splits each op's span in two
        check(len(nov) == 2 * len(ops), "rank %d not-overlapped rows: %d" % (r, len(nov)))
        _, csvrows = read_csv(os.path.join(out, "step_trace_time.csv"))
        hdr, data = csvrows[0], csvrows[1:]
        check(len(data) == len(ops), "rank %d step rows %d" % (r, len(data)))
        for i, (row, o) in enumerate(zip(data, ops)):
            v = dict(zip(hdr, row))
            comm_us = us(o["dev_end"] - o["dev_start"])
            olap = us(o["overlap"][1] - o["overlap"][0])
            comp = us(o["comp_end"] - o["comp_start"]) + olap
            free = us(o["dev_start"] - o["comp_end"])
            if i + 1 < len(ops):
                free += us(ops[i + 1]["comp_start"] - o["dev_end"])
            want = {"Step": str(o["step"]), "Computing": comp, "Communication": comm_us,
                    "Communication(Not Overlapped)": comm_us - olap, "Overlapped": olap,
                    "Free": free, "Bubble": "0",
                    "Communication(Not Overlapped and Exclude Receive)": comm_us - olap,
                    "Preparing": us(o["comp_start"] - o["step_start"])}
            for k, w in want.items():
                got = v.get(k)
                ok = got == w if isinstance(w, str) else got is not None and \
                    math.isclose(float(got), w, abs_tol=1e-6)
                check(ok, "rank %d step %d %s = %r, want %r" % (r, o["step"], k, got, w))


def test_parallel_group_info(tmp):
    # 4 ranks; each also in a strided group of 2 ("sub0" = ranks 0, 2; "sub1" = 1, 3)
    job = make_job(tmp, "pg", "--ranks", "4", "--steps", "1", "--subgroup", "2")
    from golden import run, ASCBPF
    for r in range(4):
        md = load(os.path.join(job.run_dir(r), "profiler_metadata.json"))
        pg = md.get("parallel_group_info", {})
        # without the other ranks' captures no group's global ranks are known: none
        check(pg == {}, "rank %d alone: groups %s" % (r, list(pg)))
        check(list(md)[0] == "ENV_VARIABLES", "ENV_VARIABLES first: %s" % list(md))
        peers = []
        for p in range(4):
            if p != r:
                peers += ["--peer", job.capture(p)]
        out = os.path.join(job.dir, "peers%d" % r)
        run([ASCBPF, "convert", job.capture(r), "-o", out] + peers)
        import glob
        md = load(glob.glob(os.path.join(out, "*_ascend_pt", "profiler_metadata.json"))[0])
        pg = md.get("parallel_group_info", {})
        sub = "sub%d" % (r % 2)
        check(list(pg) == [job.truth["group"], sub], "rank %d with peers: %s" % (r, list(pg)))
        check(pg.get(job.truth["group"]) == {"group_name": "default_group", "group_rank": r,
                                             "global_ranks": [0, 1, 2, 3]},
              "rank %d world group %r" % (r, pg.get(job.truth["group"])))
        check(pg.get(sub) == {"group_name": "", "group_rank": r // 2,
                              "global_ranks": [r % 2, r % 2 + 2]},
              "rank %d %s: %r" % (r, sub, pg.get(sub)))


def test_pipeline(tmp):
    # rank 0 sends to rank 1 every step: p2p ops; rank 1's receive is its Bubble
    job = make_job(tmp, "pp", "--ranks", "2", "--steps", "2", "--pipeline")
    from golden import read_csv
    group = job.truth["group"]
    for r in range(2):
        out = job.out(r)
        if not check(out is not None, "rank %d has one run directory" % r):
            continue
        comm = load(os.path.join(out, "communication.json"))
        mx = load(os.path.join(out, "communication_matrix.json"))
        ops = job.ops(r)
        for o in ops:
            st = comm.get("step%d" % o["step"], {})
            check(st.get("collective") == {}, "rank %d: no collective" % r)
            check(list(st.get("p2p", {})) == [o["name"] + "@" + group, "Total Op Info"],
                  "rank %d p2p ops %s" % (r, list(st.get("p2p", {}))))
            m = mx.get("step%d" % o["step"], {})
            # only the sender copies: its matrix has the send entries, the receiver none
            want = ["send-%s@%s" % (x, group) for x in ("top1", "middle", "bottom1", "total")]
            check(list(m.get("p2p", {})) == (want if r == 0 else []),
                  "rank %d matrix p2p keys %s" % (r, list(m.get("p2p", {}))))
        _, rows = read_csv(os.path.join(out, "step_trace_time.csv"))
        hdr, data = rows[0], rows[1:]
        for i, (row, o) in enumerate(zip(data, ops)):
            v = dict(zip(hdr, row))
            dur = us(o["dev_end"] - o["dev_start"])
            bubble = dur if r == 1 else 0.0
            # in ns first: absolute us as floats lose the digits
            last = ops[i + 1]["comp_start"] if i + 1 < len(ops) else o["dev_end"]
            want = {"Communication": dur, "Communication(Not Overlapped)": dur,
                    "Bubble": bubble, "Stage": us(last - o["comp_start"]) - bubble,
                    "Communication(Not Overlapped and Exclude Receive)": max(dur - bubble, 0)}
            for k, w in want.items():
                got = float(v[k]) if v.get(k) not in (None, "") else None
                check(got is not None and math.isclose(got, w, abs_tol=1e-6),
                      "rank %d step %d %s = %r, want %r" % (r, o["step"], k, v.get(k), w))
            check((v["Bubble"] == "0") == (r == 0), "Bubble is int 0 without receive: %r" %
                  v["Bubble"])


def test_no_hccl(tmp):
    # a capture without HCCL records has no communication files (as torch_npu)
    from golden import make, run, ASCBPF, runs_in
    cap, _ = make(tmp, "plain", "--steps", "2")
    run([ASCBPF, "convert", cap, "-o", os.path.join(tmp, "plain_out")])
    for d in runs_in(os.path.join(tmp, "plain_out")):
        o = os.path.join(tmp, "plain_out", d, "ASCEND_PROFILER_OUTPUT")
        check(not os.path.exists(os.path.join(o, "communication.json")),
              "no communication.json without HCCL")


sys.exit(run_tests("test_convert_comm.", [test_communication, test_matrix,
                                          test_matrix_ranking, test_trace_and_steps,
                                          test_parallel_group_info, test_pipeline,
                                          test_no_hccl]))
