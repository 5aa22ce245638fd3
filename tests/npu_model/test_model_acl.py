# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""test_model_acl.py - AscendCL used directly (build/npu_model/bin/npu_aclclient,
which checks every return code itself) against a private npu-modeld, then the
journal: the calls it made are there with the right names and codes, the
kernels it launched ran on the card with the task type and name given, the
legacy aclop MatMul became a MatMulV2 kernel, the events became EVENT_RECORD
/ EVENT_WAIT tasks, the oversized aclrtMalloc was refused with 207001 and
every device allocation was freed again.
"""
import collections
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ.get("ASCBPF_TOP", os.path.join(
    os.path.dirname(__file__), "..", "..")), "tests", "lib"))
from npu_model import ModelDaemon, read_journal  # noqa: E402

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)
    return cond


def main():
    with ModelDaemon(journal=True, hbm_mib=2048) as m:
        p = subprocess.run([m.bin("npu_aclclient")], env=m.env(NPU_MODEL_JOURNAL=m.journal_dir),
                           capture_output=True, text=True, timeout=120)
        print(p.stdout.strip())
        check(p.returncode == 0 and "checks passed" in p.stdout,
              "npu_aclclient exit %d: %s" % (p.returncode, p.stderr[-800:]))
        recs = []
        for _ in range(50):		# the daemon's journal lags by up to 50 ms
            recs = read_journal(m.journal_dir)
            ex = [r for k, r in recs if k == "exec"]
            tk = [r for k, r in recs if k == "task"]
            if tk and len(ex) >= len(tk):
                break
            time.sleep(0.1)
    api = [r for k, r in recs if k == "api"]
    tasks = [r for k, r in recs if k == "task"]
    execs = {(r["stream"], r["task"], r["wrap"]): r for k, r in recs if k == "exec"}
    names = collections.Counter(r["name"] for r in api)

    launches = [r for r in api if r["name"] == "aclrtLaunchKernel"]
    check(len(launches) == 12, "%d aclrtLaunchKernel calls, want 12" % len(launches))
    check(sum(r["ret"] == "0" for r in launches) == 10, "aclrtLaunchKernel successes")
    check(sorted(r["ret"] for r in launches if r["ret"] != "0") == ["100000", "107000"],
          "aclrtLaunchKernel errors %s" % [r["ret"] for r in launches])
    custom = [t for t in tasks if t["kernel"] == "AddCustom"]
    check(len(custom) == 10 and all(t["task_type"] == "AI_CORE" and t["block_dim"] == "8" and
                                    t["flops"] == "1000000" for t in custom),
          "AddCustom tasks %s" % custom[:1])
    for t in tasks:
        e = execs.get((t["stream"], t["task"], t["wrap"]))
        if check(e is not None, "task %s/%s never executed" % (t["stream"], t["task"])):
            check(e["kernel"] == t["kernel"], "exec kernel %s for task %s" %
                  (e["kernel"], t["kernel"]))
    # the aclop path: MatMul -> MatMulV2 through rtKernelLaunchWithFlagV2 (CANN 8.x/9.x)
    mm = [t for t in tasks if t["kernel"] == "MatMulV2"]
    check(len(mm) == 1 and mm[0]["flops"] == str(2 * 64 * 32 * 128),
          "aclop MatMul tasks %s" % mm)
    check(names["rtKernelLaunchWithFlagV2"] == 1 and names["rtKernelLaunch"] == 0,
          "%d rtKernelLaunchWithFlagV2, %d rtKernelLaunch calls" %
          (names["rtKernelLaunchWithFlagV2"], names["rtKernelLaunch"]))
    ops = [r for r in api if r["name"] == "aclopCompileAndExecuteV2"]
    check([r["ret"] for r in ops] == ["0", "100000", "100000"], "aclop returns %s" %
          [r["ret"] for r in ops])
    kinds = collections.Counter(t["kernel"] for t in tasks)
    check(kinds["EVENT_RECORD"] == 2 and kinds["EVENT_WAIT"] == 1, "event tasks %s" % dict(kinds))
    check(kinds["MEMCPY"] == 3 and kinds["MEMSET"] == 1, "copy tasks %s" % dict(kinds))
    # out of memory: refused with the real code, at the runtime layer
    oom = [r for k, r in recs if k == "oom" and r.get("layer") == "rtMalloc"]
    check(oom and all(r["ret"] == "207001" for r in oom), "oom lines %s" % oom)
    big = [r for r in api if r["name"] == "aclrtMalloc" and r["ret"] == "207001"]
    check(len(big) == 1, "aclrtMalloc 207001 calls: %d" % len(big))
    # GE segments: every rtMalloc freed, totals back to zero
    ge = [r for k, r in recs if k == "mem" and r["component"] == "GE"]
    live = collections.Counter()
    for r in ge:
        live[r["ptr"]] += 1 if r["op"] == "malloc" else -1
    check(ge and all(v == 0 for v in live.values()) and ge[-1]["total_allocated"] == "0",
          "GE mallocs not all freed: %s" % {k: v for k, v in live.items() if v})
    # the documented per-call keys
    alloc = [r for r in api if r["name"] == "aclrtMalloc" and r["ret"] == "0"]
    check(alloc and all(int(r["size"]) > 0 and r["ptr"] != "0x0" for r in alloc),
          "aclrtMalloc keys")

    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    print("all AscendCL checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
