#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""`--export-type db` (issue 17): torch_npu's database output, end to end.

`ascbpf trace --export-type text,db` of npu_train on a private npu-modeld
(baseline at Level1 and Level0; test_convert_db_scenarios.py runs the same
checks on multi-stream at Level2, launch-storm's batched submissions at
Level1, transdata at Level0, and a --schedule of two cycles: one pair of
databases per *_ascend_pt), the databases opened with
Python's sqlite3 and checked against:

* the schema written down from torch_npu's and msprof's sources,
  docs/db_schema.md (parsed here, not produced by the code under test):
  every table of both files is documented, its columns, declared types and
  primary keys are the document's in order, every table not marked "with
  rows only" exists, and every marked one that exists has rows; a job
  without communication has none of the communication tables;
* string interning: every column documented as a STRING_IDS id resolves,
  framework and memory names in torch_npu's id ranges (1 << 28, 2 << 28),
  PYTORCH_API times stored as text as torch_npu's TEXT columns make them;
* npu_model's journal: TASK rows are the journal's tasks of the recorded
  steps (stream, task id, in order), CANN_API acl rows its traced acl* calls
  (name, thread, start within tolerance), NPU_MEM the APP totals and
  MEMORY_RECORD's PTA rows the PTA totals of those steps;
* the text output of the same capture: every kernel_details.csv row equals
  its COMPUTE_TASK_INFO + TASK row (name, type, core, stream, task id, block
  dim, start and duration to the ns), memory_record.csv's rows equal
  MEMORY_RECORD's, step_trace_time.csv StepTraceTime, trace_view.json's
  cpu_op / Enqueue / Dequeue / AscendCL@ / Node@launch events the PYTORCH_API
  and CANN_API rows, and its torch_to_npu flows the op -> task pairs of the
  PYTORCH_API -> CONNECTION_IDS -> TASK join msprof-analyze uses;
* real PyTorch (framework only) with --record-shapes --with-stack: only
  torch_npu's own tables (no msprof table, no primary keys, no analysis.db,
  ENUM_API_TYPE with torch_npu's four types), and every cpu_op is its
  PYTORCH_API row, shapes, types and call stack (PYTORCH_CALLCHAINS) alike;
* tests/lib/mkcapture's rank-0 capture against its truth file: the rank's
  file name, every kernel's TASK row and its op through CONNECTION_IDS;
* `ascbpf convert --export-type db` of the capture writes the same rows and
  no text file; profiler_info records the export type; bad values exit 2.
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from checks import check, failures  # noqa: E402

DOC = os.path.join(tc.TOP, "docs", "db_schema.md")
FWK, MEM = 1 << 28, 2 << 28
COMM_TABLES = {"COMMUNICATION_OP", "COMMUNICATION_TASK_INFO", "CommAnalyzerTime",
               "CommAnalyzerBandwidth", "CommAnalyzerMatrix"}
COMPUTE = {"AI_CORE", "AI_VECTOR_CORE", "AI_CPU"}


def parse_doc():
    """{file: {table: (always, [(col, type, pk)], [fk cols])}}, ENUM_API_TYPE rows."""
    files = collections.defaultdict(dict)
    enum_rows = []
    cur = None
    head = re.compile(r"^### `(\w+)` \(([\w.]+)(, with rows only)?\)\s*$")
    col = re.compile(r"^\| `(\w+)` \| (INTEGER|TEXT|NUMERIC)( PRIMARY KEY)? \| (.*)\|\s*$")
    enum = re.compile(r"^\| (\d+) \| ([\w/ ]+) \|\s*$")
    for line in open(DOC, encoding="utf-8"):
        m = head.match(line)
        if m:
            cur = (m.group(2), m.group(1))
            files[m.group(2)][m.group(1)] = (not m.group(3), [], [])
            continue
        m = col.match(line)
        if m and cur:
            t = files[cur[0]][cur[1]]
            t[1].append((m.group(1), m.group(2), 1 if m.group(3) else 0))
            if m.group(4).strip().startswith("STRING_IDS") and cur[1] != "STRING_IDS":
                t[2].append(m.group(1))
            continue
        m = enum.match(line)
        if m and cur and cur[1] == "ENUM_API_TYPE":
            enum_rows.append((int(m.group(1)), m.group(2).strip()))
    return files, enum_rows


def ns_of_us(s):
    """A torch_npu us string ("1736408883704643.212\\t") as integer ns."""
    s = s.strip()
    whole, _, frac = s.partition(".")
    return int(whole) * 1000 + int((frac + "000")[:3])


def q(db, sql):
    """The rows of sql, [] when its table does not exist (created with rows only)."""
    try:
        return db.execute(sql).fetchall()
    except sqlite3.OperationalError as e:
        if "no such table" not in str(e):
            raise
        return []


def tables(db):
    return {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def check_schema(S, path, doc, want_present):
    db = sqlite3.connect(path)
    name = "analysis.db" if path.endswith("analysis.db") else "ascend_pytorch_profiler.db"
    spec = doc[name]
    have = tables(db)
    check(have <= set(spec), S + "%s: undocumented tables %s" % (name, sorted(have - set(spec))))
    for t, (always, cols, _) in spec.items():
        if t not in have:
            check(not always, S + "%s: table %s missing" % (name, t))
            continue
        info = [(r[1], r[2], 1 if r[5] else 0) for r in db.execute("PRAGMA table_info(%s)" % t)]
        check(info == cols, S + "%s.%s columns %s, documented %s" % (name, t, info, cols))
        n = db.execute("SELECT count(*) FROM %s" % t).fetchone()[0]
        check(always or n > 0, S + "%s.%s exists without rows" % (name, t))
    check(want_present <= have, S + "%s: tables %s missing" % (name, sorted(want_present - have)))
    check(not (have & COMM_TABLES), S + "%s: communication tables without communication: %s" %
          (name, sorted(have & COMM_TABLES)))
    return db


def check_strings(S, db, doc):
    spec = doc["ascend_pytorch_profiler.db"]
    ids = dict(db.execute("SELECT id, value FROM STRING_IDS"))
    check(len(ids) == db.execute("SELECT count(*) FROM STRING_IDS").fetchone()[0],
          S + "STRING_IDS ids not unique")
    check(len(set((v, i >> 28) for i, v in ids.items())) == len(ids),
          S + "a string interned twice in one id range")
    have = tables(db)
    nfk = 0
    for t, (_, _, fks) in spec.items():
        if t not in have:
            continue
        for c in fks:
            for (v,) in db.execute("SELECT DISTINCT %s FROM %s WHERE %s IS NOT NULL" % (c, t, c)):
                nfk += 1
                check(v in ids, S + "%s.%s = %r not in STRING_IDS" % (t, c, v))
    check(nfk > 0, S + "no string id checked")
    for t, c, lo, hi in (("PYTORCH_API", "name", FWK, MEM), ("MEMORY_RECORD", "component", MEM,
                                                             3 << 28),
                         ("OP_MEMORY", "name", MEM, 3 << 28), ("TASK", "taskType", 0, FWK),
                         ("COMPUTE_TASK_INFO", "name", 0, FWK)):
        if t in have:
            bad = db.execute("SELECT count(*) FROM %s WHERE %s < ? OR %s >= ?" % (t, c, c),
                             (lo, hi)).fetchone()[0]
            check(bad == 0, S + "%s.%s: %d ids outside [%#x, %#x)" % (t, c, bad, lo, hi))
    if "PYTORCH_API" in have:
        kinds = {k for (k,) in db.execute("SELECT DISTINCT typeof(startNs) FROM PYTORCH_API")}
        check(kinds == {"text"}, S + "PYTORCH_API.startNs stored as %s" % kinds)
    return ids


def trace_events(po):
    return json.load(open(os.path.join(po, "trace_view.json"), encoding="utf-8"))


def check_text(S, db, ids, po, level):
    """The database against the text files of the same capture."""
    _, hdr, rows = tc.read_csv(os.path.join(po, "kernel_details.csv"))
    col = {h: i for i, h in enumerate(hdr)}
    sql = ("SELECT c.name, c.opType, c.taskType, t.streamId, t.taskId, c.blockNum, t.startNs, "
           "t.endNs FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId "
           "ORDER BY t.startNs, t.globalTaskId")
    got = [(ids[n], ids[o], ids[tt], s, tk, b, t0, t1 - t0)
           for n, o, tt, s, tk, b, t0, t1 in db.execute(sql)]
    want = []
    for r in rows:
        want.append((r[col["Name"]], r[col["Type"]], r[col["Accelerator Core"]],
                     int(r[col["Stream ID"]]) if level else None,
                     int(r[col["Task ID"]]) if level else None, int(r[col["Block Dim"]]),
                     ns_of_us(r[col["Start Time(us)"]]), ns_of_us(r[col["Duration(us)"]])))
    if not level:
        got = [g[:3] + (None, None) + g[5:] for g in got]
    check(got == want and want, S + "kernel_details (%d rows) vs COMPUTE_TASK_INFO+TASK (%d): "
          "first difference %s" % (len(want), len(got),
                                   next(((a, b) for a, b in zip(want, got) if a != b), None)))

    # memory_record.csv (bytes = MB * 2^20, exactly) without its APP rows
    mpath = os.path.join(po, "memory_record.csv")
    mrows = tc.read_csv(mpath)[2] if os.path.exists(mpath) else []

    def mb(s):
        return None if s == "" else round(float(s) * (1 << 20))
    want = [(r[0], ns_of_us(r[1]), mb(r[2]), mb(r[3]), mb(r[4]) or 0,
             None if r[5] == "" else int(r[5])) for r in mrows if r[0] != "APP"]
    got = [(ids[c], ts, a, rs, ac, sp) for c, ts, a, rs, ac, sp in q(db,
        "SELECT component, timestamp, totalAllocated, totalReserved, totalActive, streamPtr "
        "FROM MEMORY_RECORD")]
    check(len(got) == len(want), S + "MEMORY_RECORD %d rows, memory_record.csv %d" %
          (len(got), len(want)))
    # the CSV's MB values have 6 decimals at most: compare allocated/reserved to 1 KB
    diff = [(a, b) for a, b in zip(want, got) if a[:2] != b[:2] or
            any(x is not None and abs(x - y) > 1024 for x, y in zip(a[2:4], b[2:4]))]
    check(not diff, S + "MEMORY_RECORD vs memory_record.csv: %s" % diff[:3])
    app = [round(float(r[3]) * (1 << 20)) for r in mrows if r[0] == "APP"]
    hbm = [h for (h,) in q(db, "SELECT hbm FROM NPU_MEM ORDER BY timestampNs")]
    check(len(app) == len(hbm) and all(abs(a - b) <= 1024 for a, b in zip(app, hbm)),
          S + "NPU_MEM %d rows vs %d APP rows" % (len(hbm), len(app)))

    # step_trace_time.csv vs analysis.db
    _, sh, srows = tc.read_csv(os.path.join(po, "step_trace_time.csv"))
    adb = sqlite3.connect(os.path.join(po, "analysis.db"))
    got = [r for r in adb.execute("SELECT * FROM StepTraceTime ORDER BY deviceId, "
                                  "CAST(step AS INTEGER)")]
    check(len(got) == len(srows) and srows, S + "StepTraceTime %d rows, csv %d" %
          (len(got), len(srows)))
    for g, r in zip(got, srows):
        check(g[1] == r[0] and all(abs(float(a) - float(b)) < 1e-6 for a, b in zip(g[2:], r[1:])),
              S + "StepTraceTime %s vs csv %s" % (g, r))

    # META_DATA's ENV_VARIABLES: profiler_metadata.json's, when the capture has them
    meta = os.path.join(os.path.dirname(po), "profiler_metadata.json")
    env = db.execute("SELECT value FROM META_DATA WHERE name = 'ENV_VARIABLES'").fetchall()
    if os.path.exists(meta):
        check(len(env) == 1 and json.loads(env[0][0]) ==
              json.load(open(meta))["ENV_VARIABLES"], S + "ENV_VARIABLES %s" % env)
    else:
        check(not env, S + "ENV_VARIABLES without profiler_metadata.json")

    ev = trace_events(po)
    cpu = [e for e in ev if e.get("cat") == "cpu_op"]
    n_ops = db.execute("SELECT count(*) FROM PYTORCH_API WHERE type = 50001").fetchone()[0]
    check(n_ops == len(cpu) and cpu, S + "PYTORCH_API ops %d, cpu_op events %d" %
          (n_ops, len(cpu)))
    qn = sum(1 for e in ev if e.get("ph") == "X" and e.get("cat") in ("enqueue", "dequeue"))
    n_q = db.execute("SELECT count(*) FROM PYTORCH_API WHERE type = 50002").fetchone()[0]
    check(n_q == qn and qn, S + "PYTORCH_API queue rows %d, Enqueue/Dequeue events %d" % (n_q, qn))
    acl = sum(1 for e in ev if e.get("name", "").startswith("AscendCL@"))
    node = sum(1 for e in ev if e.get("name") == "Node@launch")
    have = tables(db)
    n_acl = db.execute("SELECT count(*) FROM CANN_API WHERE type = 20000").fetchone()[0] \
        if "CANN_API" in have else 0
    n_node = db.execute("SELECT count(*) FROM CANN_API WHERE type = 10000 AND name = "
                        "(SELECT id FROM STRING_IDS WHERE value = 'launch')").fetchone()[0] \
        if "CANN_API" in have else 0
    check(n_acl == acl and n_node == node and (level == 0) == (acl == 0),
          S + "CANN_API acl %d node %d, AscendCL@ %d Node@launch %d" % (n_acl, n_node, acl, node))
    rt = sum(1 for e in ev if e.get("name", "").startswith("Runtime@"))
    n_rt = db.execute("SELECT count(*) FROM CANN_API WHERE type = 5000").fetchone()[0] \
        if "CANN_API" in have else 0
    check(n_rt == rt and (level == 2) == (rt > 0),
          S + "CANN_API runtime rows %d, Runtime@ events %d" % (n_rt, rt))
    # torch_to_npu flows = the PYTORCH_API -> CONNECTION_IDS -> TASK join
    s_ends = {e["id"]: e for e in ev if e.get("cat") == "async_npu" and e["ph"] == "s"}
    f_ends = {e["id"]: e for e in ev if e.get("cat") == "async_npu" and e["ph"] == "f"}
    want = collections.Counter((ns_of_us(s["ts"]), ns_of_us(f_ends[i]["ts"]))
                               for i, s in s_ends.items() if i in f_ends)
    got = collections.Counter(
        (int(p), t) for p, t in db.execute(
            "SELECT p.startNs, t.startNs FROM PYTORCH_API p JOIN CONNECTION_IDS c ON "
            "c.id = p.connectionId JOIN TASK t ON t.connectionId = c.connectionId "
            "WHERE p.type = 50001"))
    check(got == want and want, S + "op -> task pairs: %d by the join, %d torch_to_npu flows; "
          "only in the db %s, only in the trace %s" %
          (sum(got.values()), sum(want.values()), list((got - want).items())[:3],
           list((want - got).items())[:3]))
    # every node launch row is the CANN_API row of a task
    if n_node:
        orphan = db.execute("SELECT count(*) FROM CANN_API a WHERE a.type = 10000 AND NOT "
                            "EXISTS (SELECT 1 FROM TASK t WHERE t.connectionId = "
                            "a.connectionId)").fetchone()[0]
        check(orphan == 0, S + "%d node launches without their TASK" % orphan)


def check_journal(S, db, ids, t):
    """Row counts and values against npu_model's journal of the traced process."""
    jl = t.journal()
    steps = [0] + sorted(int(x["t"]) for k, x in jl if k == "step")
    if not check(steps, S + "no step in the journal"):
        return
    t0 = steps[0]
    # tasks: those the text output (and so the db) holds are the recorded steps'; compare
    # (stream, task id) in order with the journal's tasks submitted from the first step on
    jt = [(int(x["stream"]), int(x["task"])) for k, x in jl if k == "task" and int(x["t"]) >= t0]
    dt = [(s, tk) for s, tk in db.execute("SELECT streamId, taskId FROM TASK ORDER BY "
                                          "globalTaskId")]
    check(collections.Counter(dt) == collections.Counter(jt),
          S + "TASK %d rows, journal tasks from the first step %d" % (len(dt), len(jt)))
    # acl* calls: name, thread, start
    off = t.wall_off
    japi = sorted((x["name"], int(x["tid"]), int(x["t0"]) + off) for k, x in jl
                  if k == "api" and x["layer"] == "cann" and x["name"].startswith("acl") and
                  int(x["t0"]) >= t0)
    if "CANN_API" in tables(db):
        dapi = sorted((ids[n], g & 0xffffffff, s) for n, g, s in db.execute(
            "SELECT name, globalTid, startNs FROM CANN_API WHERE type = 20000"))
        check(len(dapi) == len(japi) and dapi, S + "CANN_API acl rows %d, journal acl calls %d" %
              (len(dapi), len(japi)))
        # trace_check's stated tolerance: 99% within 1 ms, every call within 200 ms
        bad = [(a, b) for a, b in zip(dapi, japi) if a[:2] != b[:2] or
               abs(a[2] - b[2]) > tc.TOLERANCE_MAX_NS]
        loose = sum(1 for a, b in zip(dapi, japi) if abs(a[2] - b[2]) > tc.TOLERANCE_TIGHT_NS)
        check(not bad and loose <= len(dapi) * (1 - tc.TOLERANCE_SHARE),
              S + "CANN_API vs journal: %d beyond 1 ms, %s" % (loose, bad[:3]))
    pid = db.execute("SELECT DISTINCT globalPid FROM TASK").fetchall()
    check(pid == [(t.pid,)], S + "TASK.globalPid %s, pid %d" % (pid, t.pid))
    jm = [x for k, x in jl if k == "mem" and int(x["t"]) >= t0]
    app = sorted(int(x["total_reserved"]) for x in jm if x["component"] == "APP")
    hbm = sorted(int(h) for (h,) in q(db, "SELECT hbm FROM NPU_MEM"))
    check(app == hbm, S + "NPU_MEM %d rows, journal APP events %d" % (len(hbm), len(app)))
    pta = sorted((int(x["total_allocated"]), int(x["total_reserved"])) for x in jm
                 if x["component"] == "PTA")
    dpta = sorted(q(db, "SELECT totalAllocated, totalReserved FROM MEMORY_RECORD WHERE "
                        "component = (SELECT id FROM STRING_IDS WHERE value = 'PTA')"))
    check(dpta == pta, S + "MEMORY_RECORD PTA rows %d, journal PTA events %d" %
          (len(dpta), len(pta)))
    nst = db.execute("SELECT count(*) FROM STEP_TIME").fetchone()[0]
    check(nst == len(steps), S + "STEP_TIME %d rows, journal steps %d" % (nst, len(steps)))


def dump(path):
    db = sqlite3.connect(path)
    return {t: sorted(db.execute("SELECT * FROM %s" % t), key=repr) for t in tables(db)}


def run(level, d, doc, enum_rows, scenario="baseline", steps=3):
    S = "%s L%d: " % (scenario, level)
    args = ["--level", str(level), "--profile-memory", "--export-type", "text,db"]
    t = tc.trace_model(d, S, args, ["npu_train", "--scenario", scenario, "--steps", steps],
                       check)
    if not t:
        return
    info = [f for f in os.listdir(t.run_dir) if f.startswith("profiler_info")]
    cfg = json.load(open(os.path.join(t.run_dir, info[0])))
    check(cfg["config"]["experimental_config"]["_export_type"] == ["text", "db"],
          S + "profiler_info _export_type %s" % cfg["config"]["experimental_config"])
    dbname = "ascend_pytorch_profiler.db"
    present = {"STRING_IDS", "META_DATA", "SESSION_TIME_INFO", "RANK_DEVICE_MAP", "TASK",
               "COMPUTE_TASK_INFO", "PYTORCH_API", "CONNECTION_IDS", "STEP_TIME",
               "ENUM_API_TYPE"}
    if level:
        present.add("CANN_API")
    # the memory tables exist where the text has their rows (and baseline has them all)
    if scenario == "baseline" or os.path.exists(os.path.join(t.po, "operator_memory.csv")):
        present.add("OP_MEMORY")
    mpath = os.path.join(t.po, "memory_record.csv")
    kinds = {r[0] for r in tc.read_csv(mpath)[2]} if os.path.exists(mpath) else set()
    if scenario == "baseline" or "APP" in kinds:
        present.add("NPU_MEM")
    if scenario == "baseline" or kinds - {"APP"}:
        present.add("MEMORY_RECORD")
    db = check_schema(S, os.path.join(t.po, dbname), doc, present)
    check_schema(S, os.path.join(t.po, "analysis.db"), doc, {"StepTraceTime"})
    if level == 0:
        check("CANN_API" not in tables(db), S + "CANN_API at Level0 (nothing collected)")
    got = sorted(db.execute("SELECT id, name FROM ENUM_API_TYPE"))
    check(got == sorted(enum_rows) and enum_rows, S + "ENUM_API_TYPE %s" % got)
    ids = check_strings(S, db, doc)
    check_text(S, db, ids, t.po, level)
    check_journal(S, db, ids, t)
    if scenario != "baseline":
        return

    # convert the same capture with db only: the same rows, no text file
    out = os.path.join(d, "conv")
    r = tc.run_ascbpf(["convert", "--export-type", "db", "-o", out, t.cap])
    check(r.returncode == 0, S + "convert --export-type db exited %d: %s" %
          (r.returncode, r.stderr[-300:]))
    runs = os.listdir(out) if os.path.isdir(out) else []
    if check(len(runs) == 1, S + "convert wrote %s" % runs):
        po = os.path.join(out, runs[0], "ASCEND_PROFILER_OUTPUT")
        check(sorted(os.listdir(po)) == ["analysis.db", dbname],
              S + "db only: %s" % sorted(os.listdir(po)))
        for f in ("analysis.db", dbname):
            check(dump(os.path.join(po, f)) == dump(os.path.join(t.po, f)),
                  S + "%s of convert differs from the trace's" % f)
        cfg = json.load(open(os.path.join(out, runs[0], info[0])))
        check(cfg["config"]["experimental_config"]["_export_type"] == "db",
              S + "profiler_info _export_type with db only")
    for bad in (["--export-type", "xml"], ["--export-type", "db", "--export", "chrome"]):
        r = tc.run_ascbpf(["convert"] + bad + ["-o", os.path.join(d, "bad"), t.cap])
        check(r.returncode == 2 and "export" in r.stderr, S + "convert %s exited %d" %
              (bad, r.returncode))
    r = tc.run_ascbpf(["trace", "--export-type", "txt", "--", "/bin/true"])
    check(r.returncode == 2 and "--export-type" in r.stderr,
          S + "trace --export-type txt exited %d" % r.returncode)


def run_pytorch(d, doc, enum_rows):
    """Real PyTorch (framework only) with --record-shapes --with-stack: every cpu_op of
    trace_view.json is its PYTORCH_API row (start, end, thread, name, sequence number,
    Input type / Input Dims, and the Call stack frame by frame in PYTORCH_CALLCHAINS); an
    empty one is NULL, as torch_npu's get_fwk_api writes a falsy value."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "discovery"))
    import test_pytorch_ops as tpo
    S = "pytorch: "
    _, _, outdir = tpo.run_ascbpf(d, ["--record-shapes", "--with-stack", "--export-type",
                                      "text,db"], convert=True)
    runs = [f for f in os.listdir(outdir) if f.endswith("_ascend_pt")]
    if not check(len(runs) == 1, S + "runs %s" % runs):
        return
    po = os.path.join(outdir, runs[0], "ASCEND_PROFILER_OUTPUT")
    # framework only: torch_npu's tables alone, as its own CREATE TABLE makes them (no
    # primary key), no msprof table and no analysis.db
    check(not os.path.exists(os.path.join(po, "analysis.db")), S + "analysis.db written")
    db = sqlite3.connect(os.path.join(po, "ascend_pytorch_profiler.db"))
    spec = doc["ascend_pytorch_profiler.db"]
    have = tables(db)
    check({"STRING_IDS", "META_DATA", "RANK_DEVICE_MAP", "ENUM_API_TYPE", "PYTORCH_API",
           "PYTORCH_CALLCHAINS"} <= have <= {"STRING_IDS", "META_DATA", "RANK_DEVICE_MAP",
                                            "ENUM_API_TYPE", "PYTORCH_API", "PYTORCH_CALLCHAINS",
                                            "CONNECTION_IDS", "STEP_TIME", "MEMORY_RECORD",
                                            "OP_MEMORY"}, S + "tables %s" % sorted(have))
    for t in have & set(spec):
        info = [(r[1], r[2], r[5]) for r in db.execute("PRAGMA table_info(%s)" % t)]
        check(info == [(c, ty, 0) for c, ty, _ in spec[t][1]],
              S + "%s columns %s, documented %s (no primary key)" % (t, info, spec[t][1]))
    got = sorted(db.execute("SELECT id, name FROM ENUM_API_TYPE"))
    check(got == [r for r in sorted(enum_rows) if r[0] > 50000] and got,
          S + "ENUM_API_TYPE %s" % got)
    rdm = db.execute("SELECT deviceId FROM RANK_DEVICE_MAP").fetchall()
    check(rdm == [(-1,)], S + "RANK_DEVICE_MAP devices %s" % rdm)
    ids = check_strings(S, db, doc)
    check(all(i >= FWK for i in ids), S + "msprof-range strings %s" %
          [v for i, v in ids.items() if i < FWK][:5])
    chains = collections.defaultdict(list)
    for i, fr, depth in db.execute("SELECT id, stack, stackDepth FROM PYTORCH_CALLCHAINS "
                                   "ORDER BY id, stackDepth"):
        check(depth == len(chains[i]), S + "callchain %d depth %d out of order" % (i, depth))
        chains[i].append(ids[fr])
    got = collections.Counter()
    for t0, t1, g, n, seq, dt, sh, cc in db.execute(
            "SELECT startNs, endNs, globalTid, name, sequenceNumber, inputDtypes, inputShapes, "
            "callchainId FROM PYTORCH_API WHERE type = 50001"):
        got[(int(t0), int(t1) - int(t0), g & 0xffffffff, ids[n], seq,
             ids[dt] if dt is not None else None, ids[sh] if sh is not None else None,
             ";\r\n".join(chains[cc]) if cc is not None else None)] += 1
    want = collections.Counter()
    for e in trace_events(po):
        if e.get("cat") != "cpu_op":
            continue
        a = e["args"]
        want[(ns_of_us(e["ts"]), round(e["dur"] * 1000), e["tid"], e["name"],
              a["Sequence number"], a.get("Input type") or None, a.get("Input Dims") or None,
              a.get("Call stack") or None)] += 1
    n_stack = sum(v for k, v in want.items() if k[7])
    n_dims = sum(v for k, v in want.items() if k[6])
    check(got == want and n_stack and n_dims,
          S + "PYTORCH_API vs cpu_op (%d events, %d with stacks, %d with dims): only in the db "
          "%s, only in the trace %s" % (sum(want.values()), n_stack, n_dims,
                                        list(got - want)[:2], list(want - got)[:2]))


def run_synthetic(d, doc):
    """tests/lib/mkcapture's capture of rank 0 (its truth file is the ground truth): the
    file is ascend_pytorch_profiler_0.db, RANK_DEVICE_MAP says rank 0, and every kernel
    is its TASK row (start, end, stream, task id, type) joined to its aten op through
    PYTORCH_API -> CONNECTION_IDS."""
    S = "synthetic: "
    cap, truth = os.path.join(d, "c.ascb"), os.path.join(d, "truth.json")
    r = subprocess.run([os.path.join(tc.OUTPUT, "tests", "lib", "mkcapture"), "-o", cap,
                           "--truth", truth, "--events", "20000", "--ops", "20"],
                          capture_output=True, text=True)
    if not check(r.returncode == 0, S + "mkcapture exited %d" % r.returncode):
        return
    out = os.path.join(d, "out")
    r = tc.run_ascbpf(["convert", "--export-type", "db", "--level", "1", "-o", out, cap])
    if not check(r.returncode == 0, S + "convert exited %d: %s" % (r.returncode, r.stderr)):
        return
    t = json.load(open(truth))
    runs = os.listdir(out)
    po = os.path.join(out, runs[0], "ASCEND_PROFILER_OUTPUT")
    check(sorted(os.listdir(po)) == ["analysis.db", "ascend_pytorch_profiler_0.db"],
          S + "files %s" % sorted(os.listdir(po)))
    path = os.path.join(po, "ascend_pytorch_profiler_0.db")
    if not os.path.exists(path):
        return
    db = check_schema(S, path, doc, {"TASK", "COMPUTE_TASK_INFO", "CANN_API", "PYTORCH_API"})
    ids = check_strings(S, db, doc)
    check(db.execute("SELECT DISTINCT rankId FROM RANK_DEVICE_MAP").fetchall() == [(0,)],
          S + "RANK_DEVICE_MAP %s" % db.execute("SELECT * FROM RANK_DEVICE_MAP").fetchall())
    got = sorted((a, b, st, tk, ids[tt]) for a, b, st, tk, tt in db.execute(
        "SELECT startNs, endNs, streamId, taskId, taskType FROM TASK"))
    want = sorted((k["start"], k["end"], k["stream"], k["task_id"], k["task_type"])
                  for k in t["kernels"])
    check(got == want and len(want) == t["kernel_count"],
          S + "TASK %d rows, truth %d kernels" % (len(got), len(want)))
    got = sorted((a, ids[n]) for a, n in db.execute(
        "SELECT t.startNs, p.name FROM PYTORCH_API p JOIN CONNECTION_IDS c ON "
        "c.id = p.connectionId JOIN TASK t ON t.connectionId = c.connectionId"))
    want = sorted((k["start"], k["op"]) for k in t["kernels"] if k.get("op"))
    check(got == want and want, S + "op -> task pairs %d, truth %d" % (len(got), len(want)))


def run_schedule(d, doc):
    """--schedule with two RECORD_AND_SAVE cycles: each *_ascend_pt has its own databases
    holding that cycle's rows, the same as its text files."""
    S = "schedule: "
    t = tc.trace_model(d, S, ["--level", "1", "--profile-memory", "--export-type", "text,db",
                              "--schedule", "wait=1,warmup=1,active=2,repeat=2"],
                       ["npu_train", "--scenario", "dispatch-bound", "--steps", "10"], check,
                       runs=None)
    if not t or not check(len(t.runs) == 2, S + "runs %s" % t.runs):
        return
    steps = []
    for run_dir in t.runs:
        po = os.path.join(t.out, run_dir, "ASCEND_PROFILER_OUTPUT")
        db = check_schema(S, os.path.join(po, "ascend_pytorch_profiler.db"), doc,
                          {"TASK", "CANN_API", "STEP_TIME", "PYTORCH_API"})
        ids = check_strings(S, db, doc)
        check_text(S + run_dir + ": ", db, ids, po, 1)
        steps.append(sorted(i for (i,) in db.execute("SELECT id FROM STEP_TIME")))
    check(steps == [[2, 3], [6, 7]], S + "STEP_TIME ids per cycle %s" % steps)


# test_convert_db_scenarios.py runs SCENARIO_PARTS (split for the suite's 300 s per test)
MAIN_PARTS = ("synthetic", 1, 0, "pytorch")
# launch-storm: 20000 launches per step, one step is plenty
SCENARIO_PARTS = (("multi-stream", 2, 3), ("launch-storm", 1, 1), ("transdata", 0, 3), "schedule")


def main(parts=MAIN_PARTS):
    doc, enum_rows = parse_doc()
    check(len(doc.get("ascend_pytorch_profiler.db", {})) >= 20 and
          len(doc.get("analysis.db", {})) == 4, "docs/db_schema.md parsed: %s" %
          {k: len(v) for k, v in doc.items()})
    for part in parts:
        d = tc.workdir()
        try:
            if part == "synthetic":
                run_synthetic(d, doc)
            elif part == "schedule":
                run_schedule(d, doc)
            elif part == "pytorch":
                run_pytorch(d, doc, enum_rows)
            elif isinstance(part, tuple):
                run(part[1], d, doc, enum_rows, part[0], part[2])
            else:
                run(part, d, doc, enum_rows)
        finally:
            shutil.rmtree(d, ignore_errors=True)
    print("%d checks failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
