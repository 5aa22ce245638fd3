# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The kernel floor: `ascbpf version --json` lists every feature with the
path ascbpf takes, and its exit status says whether this kernel has every
feature ascbpf trace requires (btf, uprobes, ringbuf, bounded_loops:
user/trace/features.h; the floor is the ring buffer's 5.8).  attach_cookie
is not required any more: without it (Debian 11's 5.10; tools/vm boots it)
version exits 0, says the site ids come from the address map, and does not
use it nor uprobe_multi.  Where a required one is missing, version and
`ascbpf trace` exit 2 naming each missing feature, trace runs no command
and leaves no capture.  attach_cookie's answer is checked against the
kernel: loading a kprobe program that calls bpf_get_attach_cookie (helper
174) through bpf(2) here, not through ascbpf's probe."""
import ctypes
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402

REQUIRED = ("btf", "uprobes", "ringbuf", "bounded_loops")
ALL = REQUIRED + ("attach_cookie", "uprobe_multi", "task_btf", "task_storage", "bpf_loop")


def kernel_has_attach_cookie():
    """BPF_PROG_LOAD of a kprobe program: call bpf_get_attach_cookie; exit."""
    insns = bytes([0x85, 0, 0, 0, 174, 0, 0, 0,     # call 174
                   0x95, 0, 0, 0, 0, 0, 0, 0])      # exit
    buf = ctypes.create_string_buffer(insns)
    lic = ctypes.create_string_buffer(b"GPL")
    attr = ctypes.create_string_buffer(128)
    ctypes.c_uint32.from_buffer(attr, 0).value = 2          # BPF_PROG_TYPE_KPROBE
    ctypes.c_uint32.from_buffer(attr, 4).value = 2          # insn_cnt
    ctypes.c_uint64.from_buffer(attr, 8).value = ctypes.addressof(buf)
    ctypes.c_uint64.from_buffer(attr, 16).value = ctypes.addressof(lic)
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.syscall(321, 5, attr, 128)                    # __NR_bpf, BPF_PROG_LOAD
    if fd >= 0:
        os.close(fd)
    return fd >= 0


r = subprocess.run([tc.ASCBPF, "version", "--json"], capture_output=True, text=True)
v = json.loads(r.stdout)
f, paths = v["features"], v["paths"]
for n in ALL:
    tc.check(n in f and isinstance(f[n], bool), "feature %s missing from version --json" % n)
    tc.check(isinstance(paths.get(n), str) and paths[n], "no path for %s" % n)
if os.uname().machine == "x86_64":
    tc.check(f["attach_cookie"] == kernel_has_attach_cookie(),
             "attach_cookie says %s, the kernel disagrees" % f["attach_cookie"])
tc.check(r.returncode == 0 or any(not f[n] for n in REQUIRED),
         "version exited %d though only optional features are missing" % r.returncode)
if not f["attach_cookie"]:
    u = v["used"]
    tc.check(not u["attach_cookie"] and not u["uprobe_multi"],
             "without attach cookies: used %s" % u)
    tc.check("(process, address) map" in paths["attach_cookie"],
             "attach_cookie's path: %s" % paths["attach_cookie"])
    tc.check("attach_cookie" not in r.stderr, "version complains: %s" % r.stderr)
    print("no attach cookies: %s" % paths["attach_cookie"])
missing = [n for n in REQUIRED if not f[n]]
print("kernel %s, missing: %s" % (v["kernel"], missing or "none"))
if not missing:
    tc.check(r.returncode == 0, "version exited %d with every feature present" % r.returncode)
    print("PASS: every required feature present")
    sys.exit(0)
tc.check(r.returncode == 2, "version exited %d with %s missing" % (r.returncode, missing))
for n in missing:
    tc.check(n in r.stderr, "version's error does not name %s: %s" % (n, r.stderr))
with tempfile.TemporaryDirectory() as d:
    mark = os.path.join(d, "ran")
    t = subprocess.run([tc.ASCBPF, "trace", "-o", os.path.join(d, "out"), "--",
                        "/bin/sh", "-c", "touch " + mark], capture_output=True, text=True,
                       timeout=120)
    print(t.stderr)
    tc.check(t.returncode == 2, "trace exited %d, not 2" % t.returncode)
    for n in missing:
        tc.check(n in t.stderr, "trace's error does not name %s" % n)
    tc.check(not os.path.exists(mark), "trace ran the command on a kernel it refuses")
    out = os.path.join(d, "out")
    tc.check(not os.path.exists(out) or not os.listdir(out), "trace left output behind")
print("PASS: refused with exit 2, naming", ", ".join(missing))
