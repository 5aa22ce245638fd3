#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""`ascbpf probes -p PID` on a real /usr/bin/python3 process that imported torch.

Checked independently of ascbpf's own ELF code: the aten sites must be
exactly the at::_ops::<op>::call functions `nm -D` lists in the process's
libtorch_cpu.so (glob matched by Python's fnmatch), each function's file
offset must be its nm value mapped through the PT_LOAD segments `readelf -l`
prints, the attach offset must skip exactly a leading endbr64 read from the
file, and the text and --json listings must agree.  Then the errors: a PID
that does not exist, a process with none of the libraries (the message must
name what was looked for), bad usage -- each exit status 2.
"""
import fnmatch
import json
import os
import re
import subprocess
import sys

TOP = os.environ.get("ASCBPF_TOP") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
OUTPUT = os.environ.get("OUTPUT") or os.path.join(TOP, "build")
sys.path.insert(0, os.path.join(TOP, "tests", "lib", "probes"))
from elfcheck import load_segments, mapped_path, nm_functions, vaddr_to_off  # noqa: E402
ASCBPF = os.path.join(OUTPUT, "ascbpf")
ATEN_GLOB = "_ZN2at4_ops*4callE*"


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def run(args):
    return subprocess.run([ASCBPF] + args, capture_output=True, text=True, timeout=120)


def main():
    check(os.access(ASCBPF, os.X_OK), f"{ASCBPF} is not built")
    py = subprocess.Popen(["/usr/bin/python3", "-c",
                           "import sys, torch; torch.ones(2).add_(1); print('ready', flush=True); "
                           "sys.stdin.read()"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    sleeper = subprocess.Popen(["sleep", "300"])
    try:
        check(py.stdout.readline().strip() == "ready", "python3 did not import torch")
        pid = py.pid

        r = run(["probes", "-p", str(pid), "--json"])
        check(r.returncode == 0, f"probes --json exited {r.returncode}: {r.stderr}")
        plan = json.loads(r.stdout)
        check(plan["pid"] == pid, "wrong pid in JSON")
        check(plan["comm"] == "python3", f"comm is {plan['comm']!r}")

        libtorch = mapped_path(pid, "libtorch_cpu.so")
        check(libtorch is not None, "libtorch_cpu.so is not mapped in the python process")
        check(libtorch in plan["libraries"], f"{libtorch} not in {plan['libraries']}")

        # Expected aten sites: nm's function symbols matching the glob, one per address.
        funcs = nm_functions(libtorch)
        want = {}
        for name, v in sorted(funcs.items()):
            if fnmatch.fnmatchcase(name, ATEN_GLOB) and v not in want.values():
                want[name] = v
        check(len(want) > 2000, f"only {len(want)} aten ops in {libtorch}?")
        aten = [s for s in plan["sites"] if s["kind"] == "aten_op"]
        got = {s["symbol"]: s for s in aten}
        check(len(got) == len(aten), "an aten symbol is listed twice")
        missing = set(want) - set(got)
        extra = set(got) - set(want)
        check(not missing, f"{len(missing)} aten ops not planned, e.g. {sorted(missing)[:3]}")
        check(not extra, f"{len(extra)} unexpected aten sites, e.g. {sorted(extra)[:3]}")

        segs = load_segments(libtorch)
        ids = set()
        with open(libtorch, "rb") as f:
            for name, s in got.items():
                check(s["layer"] == "framework", f"{name}: layer {s['layer']}")
                check(s["library"] == libtorch, f"{name}: library {s['library']}")
                off = vaddr_to_off(segs, want[name])
                check(s["func_offset"] == off,
                      f"{name}: func_offset {s['func_offset']:#x}, readelf/nm say {off:#x}")
                f.seek(off)
                head = f.read(4)
                endbr = head == b"\xf3\x0f\x1e\xfa"
                check(s["skipped_endbr"] == endbr, f"{name}: skipped_endbr wrong ({head.hex()})")
                check(s["attach_offset"] == off + (4 if endbr else 0),
                      f"{name}: attach_offset {s['attach_offset']:#x}")
                f.seek(s["attach_offset"])
                b = f.read(2)
                # push %reg (0x50-0x57, REX.B 0x41 + 0x50-0x57) is emulated, lea/sub/mov are not
                if b[0] in range(0x50, 0x58) or (b[0] == 0x41 and b[1] in range(0x50, 0x58)):
                    check(not s["singlestep"], f"{name}: push reported single-stepped")
                    check(s["prologue"].endswith("emulated"), f"{name}: {s['prologue']}")
                elif b[0] in (0x48, 0x4c) and b[1] in (0x8d, 0x83, 0x81, 0x89, 0x8b):
                    check(s["singlestep"], f"{name}: {b.hex()} reported emulated")
                check(s["retprobe"], f"{name}: aten ops need their return")
                check(s["id"] not in ids, f"duplicate id {s['id']}")
                ids.add(s["id"])

        # real PyTorch's allocator report hook in libc10.so, when this build has it
        libc10 = mapped_path(pid, "libc10.so")
        c10 = [n for n in nm_functions(libc10) if n.startswith("_ZN3c1027reportMemoryUsageToProfiler")]
        mem = [s for s in plan["sites"] if s["layer"] == "memory"]
        check(sorted(s["symbol"] for s in mem) == sorted(c10), f"memory sites {mem} vs nm {c10}")

        # the Ascend libraries are not in this process: listed as missing, by library
        miss = {(m["library"], m["symbol"]): m for m in plan["missing"]}
        for lib, sym in (("libascendcl.so", "aclrt*"), ("libopapi.so", "aclnn*"),
                         ("libascend_hal.so", "halSqTaskSend"), ("libtorch_npu.so",
                         "_ZN7c10_npu10Repository7EnqueueEPv")):
            check((lib, sym) in miss, f"{lib} {sym} not listed missing")
            check(miss[(lib, sym)]["reason"] == "library not mapped", str(miss[(lib, sym)]))

        # the dlopen watch: _dl_debug_state of the ld.so the process maps
        ld = plan["loader"]
        check(ld is not None, "no loader hook found")
        ldpath = mapped_path(pid, "ld-linux-x86-64.so.2")
        check(ld["library"] == ldpath, f"loader {ld['library']} vs maps {ldpath}")
        dbg = nm_functions(ldpath).get("_dl_debug_state")
        check(dbg is not None, "nm finds no _dl_debug_state")
        with open(ldpath, "rb") as f:
            f.seek(vaddr_to_off(load_segments(ldpath), dbg))
            skip = 4 if f.read(4) == b"\xf3\x0f\x1e\xfa" else 0
        check(ld["attach_offset"] == vaddr_to_off(load_segments(ldpath), dbg) + skip,
              f"loader hook offset {ld['attach_offset']:#x}")

        # the text listing says the same
        t = run(["probes", "-p", str(pid)])
        check(t.returncode == 0, f"probes exited {t.returncode}: {t.stderr}")
        head = t.stdout.splitlines()[0]
        m = re.match(r"pid (\d+) \(python3\): (\d+) probe sites in (\d+) libraries, (\d+) "
                     r"single-stepped, (\d+) missing", head)
        check(m is not None, f"bad header {head!r}")
        check(int(m.group(2)) == len(plan["sites"]), head)
        check(int(m.group(4)) == sum(s["singlestep"] for s in plan["sites"]), head)
        check(int(m.group(5)) == len(plan["missing"]), head)
        for name in list(got)[:50]:
            check(re.search(r"\b%s\b" % re.escape(name), t.stdout), f"{name} not in text listing")
        check("after endbr64" in t.stdout or "emulated" in t.stdout, "no prologue choices shown")
        lines = t.stdout.splitlines()
        check(lines[1].startswith("arch x86_64: arguments rdi-r9"), f"arch line {lines[1]!r}")
        check(lines[2].startswith(f"dlopen watch: {ldpath} _dl_debug_state "
                                  f"{ld['attach_offset']:#x}"), lines[2])

        # --families narrows the plan
        r = run(["probes", "-p", str(pid), "--json", "--families", "memory"])
        check(r.returncode == 0, r.stderr)
        sites = json.loads(r.stdout)["sites"]
        check({s["layer"] for s in sites} == {"memory", "unwind"}, "families")
        # the unwind guard comes with any family: the unwinder's entry and the catch
        check({s["symbol"] for s in sites if s["layer"] == "unwind"} >=
              {"_Unwind_RaiseException", "__cxa_begin_catch"}, "unwind guard sites")

        # errors: exit status 2 and a clear message
        r = run(["probes", "-p", "1073741000"])
        check(r.returncode == 2, f"missing pid: exit {r.returncode}")
        check("no process with PID 1073741000" in r.stderr, r.stderr)
        r = run(["probes", "-p", str(sleeper.pid)])
        check(r.returncode == 2, f"no libraries: exit {r.returncode}")
        check("looked for:" in r.stderr and "libascendcl.so" in r.stderr and
              "libtorch_cpu.so" in r.stderr and "libascend_hal.so" in r.stderr, r.stderr)
        check(r.stdout == "", "nothing half-written on stdout")
        for bad in (["probes"], ["probes", "-p", "12x"], ["probes", "-p", str(pid), "--families",
                    "gpu"], ["probes", "-p", str(pid), "--bogus"], ["probes", "-p", str(pid),
                    "extra"]):
            r = run(bad)
            check(r.returncode == 2, f"{bad}: exit {r.returncode}")
            check(r.stderr.strip() != "", f"{bad}: no message")
        r = run(["probes", "--help"])
        check(r.returncode == 0 and "--json" in r.stdout, "help")
    finally:
        py.kill()
        sleeper.kill()
        py.wait()
        sleeper.wait()
    print(f"{len(got)} aten sites match nm/readelf; errors exit 2")


if __name__ == "__main__":
    main()
