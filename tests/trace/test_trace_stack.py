# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""--with-stack: every ENTER is followed by a STACK record of the same
thread, probe and time; its first frame is the probed function and the
frames resolve (SYMBOL records, from the ELF symbol tables) to the
library function and to the target's main() that called it.  Checked
against nm(1)'s view of the same files, not against ascbpf's own code."""
import collections
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402


def nm_funcs(path):
    out = {}
    r = subprocess.run(["nm", "--defined-only", path], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tTwW":
            out[f[2]] = int(f[0], 16)
    return out


d = tc.workdir()
try:
    tc.build(d)
    env = dict(os.environ, TT_LIBDIR=d, TT_JOURNAL=os.path.join(d, "j"))
    out = os.path.join(d, "out")
    r = tc.run_ascbpf(["trace", "--level", "2", "-o", out, "--no-convert", "--with-stack", "--",
                       os.path.join(d, "tt"), "3", "10", "0"], env=env)
    tc.check(r.returncode == 0, "trace exited %d" % r.returncode)
    caps = [f for f in os.listdir(out) if f.endswith(".cap")]
    recs = tc.records(os.path.join(out, caps[0]))
    names = {p["probe_id"]: p["symbol"] for p in recs if p["type"] == "probe"}
    syms = {s["value"]: s["text"] for s in recs if s["type"] == "symbol"}
    enters = stacks = 0
    for i, x in enumerate(recs):
        if x["type"] != "enter" or x["probe_id"] not in names:
            continue
        enters += 1
        s = recs[i + 1]
        tc.check(s["type"] == "stack" and s["tid"] == x["tid"] and
                 s["probe_id"] == x["probe_id"] and s["ts_ns"] == x["ts_ns"],
                 "ENTER %d not followed by its STACK: %s" % (i, s))
        stacks += 1
        tc.check(s["nr"] >= 2, "stack of %d frames" % s["nr"])
        top = syms.get(s["ips"][0], "")
        fn = names[x["probe_id"]]
        tc.check(top.startswith("libascendcl.so!%s+" % fn) or
                 top.startswith("libtorch_npu.so!%s+" % fn),
                 "first frame %r is not %s" % (top, fn))
        frames = [syms.get(ip, "") for ip in s["ips"][:s["nr"]]]
        tc.check(any(f.startswith("tt!main+") for f in frames),
                 "no tt!main frame in %s" % frames)
        tc.check(all(ip in syms for ip in s["ips"][:s["nr"]] if ip), "unsymbolised frames")
    tc.check(enters == stacks and enters == 1 + 3 * 10 * 2 + 3, "%d enters, %d stacks" %
             (enters, stacks))
    # the offsets agree with nm: lib!sym+off = the address nm gives sym, plus off
    acl = nm_funcs(os.path.join(d, "libascendcl.so"))
    for text in syms.values():
        if text.startswith("libascendcl.so!"):
            sym, off = text.split("!", 1)[1].rsplit("+", 1)
            tc.check(sym in acl and int(off, 16) < 0x400, "symbol %s not in nm's list" % text)
    print("PASS: %d stacks, %d symbols" % (stacks, len(syms)))
finally:
    shutil.rmtree(d, ignore_errors=True)
