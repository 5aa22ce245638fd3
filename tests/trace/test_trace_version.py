# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""ascbpf version --json: valid JSON whose feature answers agree with what
this machine has, probed independently here (sysfs files, bpftool's own
feature probe) and with the capture format the records header defines.

The device channel: without a HAL in the library search path it is not
usable and says why; with -p PID of an npu_train on a private npu-modeld
(--no-private: only what a real driver answers) it is usable, with the
card's counter frequency (npu_model_info) and a clock-pair bound, and the
target keeps running."""
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402
from npu_model import ModelDaemon  # noqa: E402

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
env = {k: x for k, x in os.environ.items() if k != "LD_LIBRARY_PATH"}
dc = v["device_channel"]
tc.check(not dc["usable"] and dc["detail"] == "no libascend_hal.so in the library search path",
         "device channel without a HAL: %s" % dc)
tc.check("device channel: not usable (no libascend_hal.so" in t.stdout, "text: %s" % t.stdout)
with ModelDaemon(cards=1, extra=["--no-private"]) as m:
    p = subprocess.Popen([m.bin("npu_train"), "--scenario", "baseline", "--steps", "0"],
                         env=m.env(), stdout=subprocess.DEVNULL)
    try:
        time.sleep(1.0)
        tc.check(p.poll() is None, "npu_train died")
        r = subprocess.run([tc.ASCBPF, "version", "--json", "-p", str(p.pid)],
                           capture_output=True, text=True, env=env)
        tc.check(r.returncode == 0, "version -p exited %d: %s" % (r.returncode, r.stderr))
        dc = json.loads(r.stdout)["device_channel"]
        hz = m.info()["dev0.syscnt_freq_hz"]
        tc.check(dc["usable"] and dc["freq_hz"] == hz and 0 < dc["clock_bound_ns"] < 10**7,
                 "device channel of pid %d: %s (card: %d Hz)" % (p.pid, dc, hz))
        want = "channel 50, STARS acsq_task, counter %g MHz" % (hz / 1e6)
        tc.check(dc["detail"].startswith(want), "detail %r, expected %r" % (dc["detail"], want))
        r = subprocess.run([tc.ASCBPF, "version", "-p", str(p.pid)], capture_output=True,
                           text=True, env=env)
        tc.check(("device channel: usable (%s" % want) in r.stdout, "text: %s" % r.stdout)
        tc.check(p.poll() is None, "npu_train did not survive version -p")
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)
bad = subprocess.run([tc.ASCBPF, "version", "-p", "0"], capture_output=True, text=True)
tc.check(bad.returncode == 2 and "no such process" in bad.stderr, "bad -p")
print("PASS:", json.dumps(v))
