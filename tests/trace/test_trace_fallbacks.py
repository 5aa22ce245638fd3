# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The paths ascbpf takes on a kernel without bpf_get_attach_cookie (5.10:
user/trace/features.h), forced here with ASCBPF_NO_ATTACH_COOKIE=1: site ids
from the (tgid, address) map the loader fills, return sites from the
per-call (tid, stack pointer) map.  `ascbpf version --json` says which path
each feature takes; then npu_train scenarios are traced and compared with
npu_model's journal exactly as test_trace_npu_train.py does (every API call
count and enclosure, queue, memory, SQE, device, ioctl and step records):
a wrong site id names the wrong function and fails those counts, a lost
return site leaves an ENTER unpaired.  Two -p targets sharing the libraries
check that a return is never credited to the other process's capture."""
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "lib"))
sys.path.insert(0, here)
import trace_check as tc  # noqa: E402

os.environ["ASCBPF_NO_ATTACH_COOKIE"] = "1"
import test_trace_npu_train as nt  # noqa: E402

r = subprocess.run([tc.ASCBPF, "version", "--json"], capture_output=True, text=True)
tc.check(r.returncode == 0, "version exited %d: %s" % (r.returncode, r.stderr))
v = json.loads(r.stdout)
tc.check(v["used"]["attach_cookie"] is False, "attach_cookie still used: %s" % v["used"])
tc.check(v["used"]["uprobe_multi"] is False, "uprobe_multi used without cookies")
# the variable is named where it switched a present feature off (not on 5.10)
tc.check(("ASCBPF_NO_ATTACH_COOKIE" in v["paths"]["attach_cookie"]) ==
         v["features"]["attach_cookie"], "path of attach_cookie: %s" % v["paths"]["attach_cookie"])
print("attach_cookie: %s" % v["paths"]["attach_cookie"])

for sc in [("baseline", 3), ("oom", 2), ("launch-storm", 1)]:
    nt.run(*sc)
print("PASS")
