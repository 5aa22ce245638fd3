#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Both C++ ABIs of OpCommand::RunOpApiV2(const std::string &, ...) (issue 13
item 2, issue 14 item 5): npu_model builds libtorch_npu.so twice, for the new
ABI (lib/, SSO std::string {data, len, buffer}) and the old one
(lib-oldabi/, -D_GLIBCXX_USE_CXX11_ABI=0: copy-on-write std::string, a
pointer to the characters with the length 24 bytes before them), as torch_npu
wheels before 2.7 are.  Checked:

* each library exports exactly one RunOpApiV2, of its own ABI (nm -D);
* `ascbpf trace --level 1 -- npu_train` with each (LD_LIBRARY_PATH picks the
  old one): the probe attached is that library's name, flagged old-ABI
  (ASC_PROBE_CXX_OLD_ABI) only in the old one; the op names read at every
  RunOpApiV2 entry are, per thread and in order, the journal's RunOpApiV2
  calls' op names (none lost, none truncated); where Repository::Enqueue is
  probed, the names read from its EXECUTE_OPAPI_V2 entries are the same
  multiset.
"""
import collections
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402

NEW = ("_ZN6at_npu6native9OpCommand10RunOpApiV2ERKNSt7__cxx1112basic_stringIcSt11char_"
       "traitsIcESaIcEEERKSt8functionIFivEEb")
OLD = "_ZN6at_npu6native9OpCommand10RunOpApiV2ERKSsRKSt8functionIFivEEb"
OLD_ABI_FLAG = 0x10
MODEL = os.path.join(tc.OUTPUT, "npu_model")


def check(cond, msg):
    tc.check(cond, msg)
    return True


def exported(lib):
    r = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                       check=True)
    return {ln.split()[-1] for ln in r.stdout.splitlines() if ln.strip()}


def run(d, label, libdir, want_sym):
    env = {"LD_LIBRARY_PATH": libdir} if libdir else None
    t = tc.trace_model(d, label, ["--level", "1", "--no-convert"],
                       ["npu_train", "--scenario", "baseline", "--steps", 2], check, runs=0,
                       env=env)
    recs, jl = t.recs, t.journal()
    probes = {p["probe_id"]: p for p in recs if p["type"] == "probe"}
    runop = [p for p in probes.values() if p["symbol"] in (NEW, OLD)]
    tc.check([p["symbol"] for p in runop] == [want_sym],
             "%s: RunOpApiV2 probes %s" % (label, [p["symbol"] for p in runop]))
    old = bool(runop[0]["flags"] & OLD_ABI_FLAG)
    tc.check(old == (want_sym == OLD), "%s: probe flags 0x%x" % (label, runop[0]["flags"]))
    rid = runop[0]["probe_id"]
    # ENTER + OPNAME of the same probe, thread and time, in that order per thread
    got = collections.defaultdict(list)
    last = {}
    for r in recs:
        if r["type"] == "enter" and r["probe_id"] == rid:
            last[r["tid"]] = r
        elif r["type"] == "opname" and r["probe_id"] == rid:
            e = last.pop(r["tid"], None)
            tc.check(e is not None and e["ts_ns"] == r["ts_ns"],
                     "%s: OPNAME without its ENTER: %s" % (label, r))
            tc.check(r["flags"] == 0 and r["len"] == len(r["name"]),
                     "%s: OPNAME %r flags %d len %d" % (label, r["name"], r["flags"], r["len"]))
            got[r["tid"]].append(r["name"])
    want = collections.defaultdict(list)
    for k, x in jl:
        if k == "api" and x["name"] == want_sym:
            want[int(x["tid"])].append(x["op"])
    tc.check(want and sum(map(len, want.values())) > 20, "%s: journal RunOpApiV2 calls %d" %
             (label, sum(map(len, want.values()))))
    tc.check(dict(got) == dict(want), "%s: op names per thread differ: capture %s, journal %s" %
             (label, {k: v[:4] for k, v in got.items()}, {k: v[:4] for k, v in want.items()}))
    lost = sum(x["value"] for x in recs if x["type"] == "lost" and
               x["text"].startswith("op names not read"))
    tc.check(lost == 0, "%s: %d op names not read" % (label, lost))
    enq = {i for i, p in probes.items() if p["symbol"] == "_ZN7c10_npu10Repository7EnqueueEPv"}
    if enq:
        qnames = collections.Counter(r["name"] for r in recs
                                     if r["type"] == "opname" and r["probe_id"] in enq)
        tc.check(qnames == collections.Counter(n for v in want.values() for n in v),
                 "%s: Enqueue op names %s" % (label, list(qnames.items())[:4]))
    print("%s: %s, %d op names equal the journal's%s" %
          (label, "old ABI (COW)" if old else "new ABI (SSO)", sum(map(len, got.values())),
           ", and at Enqueue" if enq else " (Enqueue not probed)"))


d = tc.workdir()
try:
    new_lib = os.path.join(MODEL, "lib", "libtorch_npu.so")
    old_dir = os.path.join(MODEL, "lib-oldabi")
    old_lib = os.path.join(old_dir, "libtorch_npu.so")
    en, eo = exported(new_lib), exported(old_lib)
    tc.check(NEW in en and OLD not in en, "lib/libtorch_npu.so exports the wrong RunOpApiV2")
    tc.check(OLD in eo and NEW not in eo, "lib-oldabi/libtorch_npu.so exports the wrong one")
    for sub, libdir, sym in (("new", None, NEW), ("old", old_dir, OLD)):
        os.mkdir(os.path.join(d, sub))
        run(os.path.join(d, sub), sub, libdir, sym)
    print("PASS")
finally:
    import shutil
    shutil.rmtree(d, ignore_errors=True)
