# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""ascbpf trace -p on a process in a container-like mount namespace.

The tiny target (tests/lib/trace_target.c) runs under `unshare --mount --root=ROOT`:
its own mount namespace and root directory, holding private copies of its
libraries (libc and ld.so too) at paths the host does not have
(/opt/ascend/lib64) or has with other files (/lib/x86_64-linux-gnu/libc.so.6
is another inode than the host's).  The paths in /proc/PID/maps are the
container's, so ascbpf must open the files through /proc/PID/root (issue 3:
"and /proc/PID/root for processes in containers"), including the dynamic
loader it hooks for libraries dlopened later.  Checked against the target's
journal (written inside the container):

* mid-run attach (--duration): every journal call inside the captured window
  is captured, enclosing its interval (trace_check's tolerance), nothing else;
  the PROBE records name the container's libraries;
* libascendcl.so dlopened 1.5 s after the attach: its probes are attached
  through the loader hook (ld.so found in the container), and from its first
  captured call on every journal call is there;
* `ascbpf probes -p PID` lists the container's library paths, nothing missing
  of the four tt functions.
"""
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import trace_check as tc  # noqa: E402

LIBDIR = "/opt/ascend/lib64"	# inside the container only
UNSHARE = shutil.which("unshare") or "/usr/bin/unshare"


def make_root(d):
    """ROOT with private copies of tt, its libraries, libc and ld.so."""
    root = os.path.join(d, "root")
    os.makedirs(root + LIBDIR)
    for lib in ("libascendcl.so", "libtorch_npu.so", "libtorch_cpu.so"):
        shutil.copy(os.path.join(d, lib), root + LIBDIR)
    shutil.copy(os.path.join(d, "tt"), os.path.join(root, tc.TT_COMM))
    r = subprocess.run(["ldd", os.path.join(d, "tt")], capture_output=True, text=True, check=True)
    for line in r.stdout.splitlines():
        f = line.split()
        path = f[2] if len(f) >= 3 and f[1] == "=>" else f[0]
        if not path.startswith("/"):
            continue		# linux-vdso.so.1
        dst = root + path
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(os.path.realpath(path), dst)	# a regular file, another inode
        os.chmod(dst, 0o755)
    return root


def start(d, root, name, args):
    out = open(os.path.join(d, name + ".out"), "w+")
    env = {"TT_LIBDIR": LIBDIR, "TT_JOURNAL": "/journal." + name, "PATH": "/"}
    p = subprocess.Popen([UNSHARE, "--mount", "--root=" + root, "/" + tc.TT_COMM] +
                         [str(a) for a in args], env=env, stdout=out, stderr=subprocess.STDOUT)
    for _ in range(500):
        out.seek(0)
        if out.read().startswith("ready"):
            break
        tc.check(p.poll() is None, "container target exited: " + open(out.name).read())
        time.sleep(0.02)
    else:
        tc.fail("container target never became ready")
    # unshare execs the target: the pid is tt's, in another mount namespace and root
    tc.check(os.readlink("/proc/%d/ns/mnt" % p.pid) != os.readlink("/proc/self/ns/mnt"),
             "the target shares our mount namespace")
    tc.check(os.stat("/proc/%d/root" % p.pid).st_ino != os.stat("/").st_ino or
             os.stat("/proc/%d/root" % p.pid).st_dev != os.stat("/").st_dev,
             "the target has our root directory")
    with open("/proc/%d/maps" % p.pid) as f:
        maps = f.read()
    tc.check(LIBDIR + "/libtorch_npu.so" in maps, "container path not in the target's maps")
    tc.check(not os.path.exists(LIBDIR), "the host has %s: the test needs it absent" % LIBDIR)
    return p, os.path.join(root, "journal." + name)


def stop(p):
    if p.poll() is None:
        p.terminate()
    p.wait(timeout=30)


d = tc.workdir()
procs = []
try:
    tc.build(d)
    root = make_root(d)

    # 1. mid-run attach, libraries found only through /proc/PID/root
    p, jpath = start(d, root, "mid", [-1, 20, 500])
    procs.append(p)
    out = os.path.join(d, "out1")
    r = tc.run_ascbpf(["trace", "--level", "2", "-p", str(p.pid), "-o", out, "--no-convert",
                       "--duration", "1.5"])
    tc.check(r.returncode == 0, "trace exited %d" % r.returncode)
    tc.check(p.poll() is None, "the target died while traced")
    stop(p)
    recs = tc.records(os.path.join(out, "ascbpf-%d.cap" % p.pid))
    libs = {x["library"] for x in recs if x["type"] == "probe"}
    tc.check(any(LIBDIR + "/libascendcl.so" in lib for lib in libs) and
             any(LIBDIR + "/libtorch_npu.so" in lib for lib in libs),
             "PROBE records do not name the container's libraries: %s" % sorted(libs))
    ccalls, unpaired = tc.calls(recs)
    tc.check(ccalls, "nothing captured")
    tc.check(len(unpaired) <= 4, "%d unpaired records" % len(unpaired))
    first, last = ccalls[0][2], max(c[3] for c in ccalls)
    j = [x for x in tc.journal(jpath) if x[0] in tc.CALLS and x[2] >= first and x[3] <= last]
    tc.check(len(j) == len(ccalls), "journal has %d calls in the window, capture %d" %
             (len(j), len(ccalls)))
    tc.match_calls(j, ccalls)
    tc.check(tc.stats(recs)["drops"] == 0, "drops")
    print("container, mid-run attach: %d calls match, libraries %s" % (len(ccalls), sorted(libs)))

    # 2. dlopen after the attach: the loader hook inside the container
    p, jpath = start(d, root, "dl", [8, 40, 500, 1500])
    procs.append(p)
    out = os.path.join(d, "out2")
    r = tc.run_ascbpf(["trace", "--level", "2", "-p", str(p.pid), "-o", out, "--no-convert"],
                      timeout=120)
    tc.check(r.returncode == 0, "trace exited %d" % r.returncode)
    p.wait(timeout=30)
    recs = tc.records(os.path.join(out, "ascbpf-%d.cap" % p.pid))
    ccalls, unpaired = tc.calls(recs)
    cm = [c for c in ccalls if c[0] == "aclrtMalloc"]
    jm = [x for x in tc.journal(jpath) if x[0] == "aclrtMalloc"]
    tc.check(cm, "no call of the library dlopened after the attach was captured")
    first = ccalls[0][2]
    j = [x for x in tc.journal(jpath) if x[0] in tc.CALLS and x[2] >= first]
    tc.check(len(j) == len(ccalls), "after the dlopen: journal %d calls, capture %d" %
             (len(j), len(ccalls)))
    tc.match_calls(j, ccalls)
    print("container, dlopen after attach: %d of %d aclrtMalloc calls captured, all from the "
          "first one on" % (len(cm), len(jm)))

    # 3. ascbpf probes -p: the container's paths, the four tt functions planned
    p, _ = start(d, root, "probes", [-1, 10, 1000])
    procs.append(p)
    r = subprocess.run([tc.ASCBPF, "probes", "-p", str(p.pid), "--level", "2", "--json"],
                       capture_output=True, text=True, timeout=60)
    tc.check(r.returncode == 0, "probes exited %d: %s" % (r.returncode, r.stderr))
    doc = json.loads(r.stdout)
    text = json.dumps(doc)
    for fn in tc.CALLS:
        tc.check('"%s"' % fn in text, "probes does not plan %s" % fn)
    tc.check(LIBDIR + "/libascendcl.so" in text, "probes does not name the container path")
    stop(p)
    print("PASS")
finally:
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    shutil.rmtree(d, ignore_errors=True)
