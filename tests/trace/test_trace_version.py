# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""ascbpf version --json: valid JSON whose feature answers agree with what
this machine has, probed independently here (sysfs files, bpftool's own
feature probe) and with the capture format the records header defines."""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402

r = subprocess.run([tc.ASCBPF, "version", "--json"], capture_output=True, text=True)
tc.check(r.returncode == 0, "version exited %d: %s" % (r.returncode, r.stderr))
v = json.loads(r.stdout)
f = v["features"]
tc.check(f["btf"] == os.path.exists("/sys/kernel/btf/vmlinux"), "btf")
tc.check(f["uprobes"] == os.path.exists("/sys/bus/event_source/devices/uprobe/type"), "uprobes")
tc.check(v["kernel"] == os.uname().release, "kernel release")
hdr = open(os.path.join(tc.TOP, "bpf", "ascbpf_events.h")).read()
tc.check(v["capture_format"] == int(re.search(r"#define ASC_CAPTURE_VERSION\s+(\d+)", hdr)[1]),
         "capture format")
bt = subprocess.run(["bpftool", "feature", "probe", "kernel"], capture_output=True, text=True)
if bt.returncode == 0:
    tc.check(f["ringbuf"] == ("eBPF map_type ringbuf is available" in bt.stdout), "ringbuf")
    m = re.search(r"eBPF helpers supported for program type kprobe:(.*?)\n\n", bt.stdout, re.S)
    if m:
        tc.check(f["attach_cookie"] == ("bpf_get_attach_cookie" in m[1]), "attach_cookie")
t = subprocess.run([tc.ASCBPF, "version"], capture_output=True, text=True)
tc.check(t.returncode == 0 and t.stdout.startswith("ascbpf " + v["ascbpf"]), "text output")
bad = subprocess.run([tc.ASCBPF, "version", "--bogus"], capture_output=True, text=True)
tc.check(bad.returncode == 2 and "unknown argument" in bad.stderr, "bad argument")
print("PASS:", json.dumps(v))
