# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""torch.distributed's "hccl" backend (npu_model/torch_npu/pytorch/torch_npu/distributed.py)
on real PyTorch: npu_model/workloads/python/dist_train.py with 2 ranks (cards 0, 1) runs
to its end, and the journal has what it asked for: one communicator per rank (same group,
2 ranks), then on both ranks the same ops in the same order: one HcclBroadcast per
parameter (4), one HcclAllReduce per gradient per step, a final HcclBarrier; counts are
the parameters' numels, data type fp32 (4); every op's device tasks all ran ok.
"""
import collections
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from npu_model import ModelDaemon, OUT, TOP, read_journal  # noqa: E402

STEPS = 3
NUMELS = [256 * 256, 256, 16 * 256, 16]


def check(cond, msg):
    if not cond:
        print("FAIL:", msg)
        sys.exit(1)


jdir = tempfile.mkdtemp(prefix="hccl-torch-journal.")
m = ModelDaemon(cards=2, extra=["--journal", jdir])
try:
    m.start()
    script = os.path.join(TOP, "npu_model", "workloads", "python", "dist_train.py")
    procs = []
    for r in range(2):
        env = m.env(NPU_MODEL_JOURNAL=jdir, RANK=r, WORLD_SIZE=2, MASTER_ADDR="127.0.0.1",
                    MASTER_PORT=29500 + os.getpid() % 1000,
                    PYTHONPATH=os.path.join(OUT, "npu_model", "python"))
        procs.append(subprocess.Popen(["/usr/bin/python3", script, "--steps", str(STEPS)],
                                      env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    for r, p in enumerate(procs):
        out, _ = p.communicate(timeout=240)
        print(out, end="")
        check(p.returncode == 0, "rank %d exited %d" % (r, p.returncode))
        check("dist_train: rank %d of 2: %d steps" % (r, STEPS) in out, "rank %d summary" % r)
    m.stop()
    j = read_journal(jdir)
finally:
    m.stop()
    shutil.rmtree(jdir, ignore_errors=True)

ops = collections.defaultdict(list)
comms = {}
tasks = {}
for kind, f in j:
    if kind == "hccl":
        ops[int(f["rank"])].append(f)
    elif kind == "hccl_comm":
        comms[int(f["rank"])] = f
    elif kind == "hccl_task":
        tasks[(int(f["dev"]), int(f["stream"]), int(f["task"]))] = f
check(sorted(comms) == [0, 1] and comms[0]["group"] == comms[1]["group"] and
      all(c["nranks"] == "2" and c["ret"] == "0" for c in comms.values()),
      "communicators %s" % comms)
want = ([("HcclBroadcast", n) for n in NUMELS] +
        [("HcclAllReduce", n) for _ in range(STEPS) for n in NUMELS] + [("HcclBarrier", 0)])
for r in (0, 1):
    got = [(f["op"], int(f["count"])) for f in sorted(ops[r], key=lambda f: int(f["seq"]))]
    check(got == want, "rank %d ops %s" % (r, got))
    for f in ops[r]:
        check(f["ret"] == "0" and (f["op"] == "HcclBarrier" or f["dtype"] == "4"),
              "rank %d op %s" % (r, f))
        for k in range(int(f["tasks"])):
            t = tasks.get((int(f["dev"]), int(f["stream_id"]), (int(f["first_task"]) + k) % 65536))
            check(t is not None and t["status"] == "ok", "rank %d seq %s task %d" %
                  (r, f["seq"], k))
print("PASS: %d ops on each rank" % len(want))
