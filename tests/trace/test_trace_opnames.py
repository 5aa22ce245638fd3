# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Op names that BPF cannot read are counted, never silently missing.

The tiny target (tests/lib/trace_target.c, TT_OPNAMES=N) calls
OpCommand::RunOpApiV2 (an opname_stdstr site, Level1) N times per step with
a name it wrote and N times with a name in an anonymous page it never
touched: that page is not mapped, and bpf_probe_read_user cannot fault it
in.  Under `ascbpf trace --level 1 -- tt`:
* every call has its ENTER/EXIT and exactly one OPNAME (same tid, probe id
  and time as the ENTER, the next record of that thread);
* the written names read back as written, the untouched ones are empty;
* the capture has one LOST record "op names not read ..." whose count is the
  number of untouched names (the journal's), and STATS shows no drops."""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402

RUN_OP_API_V2 = ("_ZN6at_npu6native9OpCommand10RunOpApiV2ERKNSt7__cxx1112basic_stringIcSt11char_"
                 "traitsIcESaIcEEERKSt8functionIFivEEb")
STEPS, PER_STEP = 5, 4

d = tc.workdir()
try:
    tc.build(d)
    jpath = os.path.join(d, "journal.opnames")
    env = dict(os.environ, TT_LIBDIR=d, TT_JOURNAL=jpath, TT_OPNAMES=str(PER_STEP))
    out = os.path.join(d, "out")
    r = tc.run_ascbpf(["trace", "--level", "1", "-o", out, "--no-convert", "--",
                       os.path.join(d, "tt"), str(STEPS), "1", "0"], env=env)
    tc.check(r.returncode == 0, "trace exited %d" % r.returncode)
    caps = [f for f in os.listdir(out) if f.endswith(".cap")]
    tc.check(len(caps) == 1, "one capture expected, found %s" % caps)
    recs = tc.records(os.path.join(out, caps[0]))
    j = [x for x in tc.journal(jpath) if x[0] == "RunOpApiV2"]
    tc.check(len(j) == 2 * STEPS * PER_STEP, "journal has %d RunOpApiV2 calls" % len(j))
    untouched = sum(1 for x in j if x[4] == 20)

    ids = {x["probe_id"] for x in recs if x["type"] == "probe" and x["symbol"] == RUN_OP_API_V2}
    tc.check(len(ids) == 1, "RunOpApiV2 probe records: %s" % ids)
    pid = ids.pop()
    names = []
    for i, e in enumerate(recs):
        if e["type"] != "enter" or e["probe_id"] != pid:
            continue
        nxt = next((x for x in recs[i + 1:] if x.get("tid") == e["tid"]), {})
        tc.check(nxt.get("type") == "opname" and nxt["probe_id"] == pid and
                 nxt["ts_ns"] == e["ts_ns"], "RunOpApiV2 ENTER at %d has no OPNAME: %s" %
                 (e["ts_ns"], nxt))
        names.append(nxt["name"])
    tc.check(len(names) == len(j), "capture %d RunOpApiV2 calls, journal %d" % (len(names), len(j)))
    tc.check(names.count("tt_resident_op") == len(j) - untouched and
             names.count("") == untouched,
             "names read: %s" % sorted(set(names)))
    lost = [x for x in recs if x["type"] == "lost" and x["text"].startswith("op names not read")]
    tc.check(len(lost) == 1 and lost[0]["value"] == untouched,
             "LOST op names %s, expected one with %d" % ([x["value"] for x in lost], untouched))
    tc.check(tc.stats(recs)["drops"] == 0, "drops")
    print("PASS: %d names read, %d unreadable ones counted as LOST %d" %
          (len(j) - untouched, untouched, lost[0]["value"]))
finally:
    shutil.rmtree(d, ignore_errors=True)
