#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""tools/check_layering.py [--top DIR] [--allow FILE] - the include rules of
user/ and bpf/ (docs/CONTRIBUTING.md, "Rooms and include rules"):

* user/ROOM/ may include its own room, lib/, the BPF contract (bpf/, and the
  skeletons generated from it) and user/commands.h, plus what RULES allows:
  arch <- discovery, trace; discovery <- trace, agent; trace <- agent (the
  always-on daemon reuses the attach layer); capture <- trace, analysis,
  convert, report (every consumer reads captures); analysis <- convert, report;
  convert <- trace (a trace converts when it ends); include/ascend (the vendor
  ABI) <- every room and bpf/; user/main.c may include any room;
* bpf/ includes only bpf/ (and the generated vmlinux.h);
* nothing in user/ or bpf/ includes anything from npu_model/, or names a
  simulator-only interface (SIM_ONLY: npu_model's environment variables,
  its private ioctls and halGetDeviceInfo queries, marked MODEL in
  npu_model/include/npu_ioctl.h).  Comments are not checked: they may say
  what the simulator does.

Every violation is one line "FILE: KIND: WHAT".  The allow-list (default
tools/layering-allow.txt) names the ones that exist today, one per line as
"FILE KIND WHAT  # the issue that removes it"; a listed violation passes, an
entry that no longer matches fails too (delete it: the list only shrinks).
Exit 0 when clean, 1 otherwise.
"""
import argparse
import os
import re
import subprocess
import sys

ROOMS = ["lib", "arch", "discovery", "trace", "capture", "analysis", "convert", "report", "agent"]
# room -> rooms that may include it (besides itself and user/main.c)
RULES = {
    "lib": set(ROOMS),
    "arch": {"discovery", "trace"},
    "discovery": {"trace", "agent"},
    "capture": {"trace", "analysis", "convert", "report"},
    "analysis": {"convert", "report"},
    "trace": {"agent"},	# the agent attaches (trace/attach.h) as trace does
    "convert": {"trace"},
    "report": set(),
    "agent": set(),
}
# Names only npu_model has (the real driver and CANN do not): a regex each.
SIM_ONLY = [
    (r"\bNPU_MODEL_\w+", "npu_model's environment variables and constants"),
    (r"\bNPU_INFO_TYPE_\w+", "npu_model's private halGetDeviceInfo queries"),
    (r"\b0x4e5[0-9a-f]\b", "the value of an NPU_INFO_TYPE_* query"),
    (r"\bNPU_PROF_\w+", "npu_model's 'P' profiling ioctls"),
    (r"\bIOW?R?\(\s*'P'", "an ioctl of npu_model's 'P' magic"),
    (r"\bNPU_UIO_\w+", "npu_model's shared-memory SQ layout"),
    (r"\bNPU_SQCQ_PROP_\w+", "npu_model's private halSqCqQuery property"),
    (r"\bnpu_model_info\b", "npu_model's discovery file"),
]
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
GENERATED = re.compile(r"^(vmlinux\.h|[\w-]+\.skel\.h)$")	# written into build/bpf/


def strip_comments(text):
    """C text with /* */ and // comments blanked (strings kept, newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def tracked(top):
    """The C sources and headers of user/ and bpf/ (tracked by git when TOP is a checkout)."""
    try:
        files = subprocess.run(["git", "-C", top, "ls-files", "--", "user", "bpf"],
                               capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d in ("user", "bpf"):
            for root, _, names in os.walk(os.path.join(top, d)):
                files += [os.path.relpath(os.path.join(root, f), top) for f in names]
    return sorted(f for f in files if f.endswith((".c", ".h")))


def room_of(path):
    """'main', 'cli' (user/commands.h), a user room, 'bpf', 'npu_model' or None (elsewhere)."""
    parts = path.split("/")
    if parts[:2] == ["include", "ascend"]:
        return "vendor"
    if parts[0] == "npu_model":
        return "npu_model"
    if parts[0] == "bpf":
        return "bpf"
    if parts[0] == "user":
        if path == "user/main.c":
            return "main"
        if path == "user/commands.h":
            return "cli"
        if len(parts) > 2 and parts[1] in ROOMS:
            return parts[1]
        return "user/?"
    return None


def resolve(top, src, inc):
    """Repository path an include names: next to the file first, then -Iuser, -Ibpf,
    -Iinclude (the compiler's order); None for a generated or system header."""
    for base in (os.path.dirname(src), "user", "bpf", "include"):
        p = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(os.path.join(top, p)):
            return p
    return None


def violations(top):
    out = []
    for f in tracked(top):
        with open(os.path.join(top, f), encoding="utf-8", errors="replace") as fh:
            code = strip_comments(fh.read())
        src_room = room_of(f)
        for inc in INCLUDE_RE.findall(code):
            p = resolve(top, f, inc)
            if p is None:
                if not GENERATED.match(os.path.basename(inc)) and "/" in inc:
                    out.append("%s: include: %s (not found in user/, bpf/ or include/)" % (f, inc))
                continue
            dst = room_of(p)
            if dst is None or dst == "npu_model" or p.startswith(".."):
                out.append("%s: include: %s" % (f, inc))
                continue
            if dst == "vendor":
                continue        # the vendor ABI (include/ascend) serves every room
            if src_room == "bpf":
                if dst != "bpf":
                    out.append("%s: include: %s" % (f, inc))
                continue
            if dst in ("bpf", "cli", "lib") or dst == src_room or src_room == "main":
                continue
            if dst in RULES and src_room in RULES[dst]:
                continue
            out.append("%s: include: %s" % (f, inc))
        for rx, _ in SIM_ONLY:
            for m in sorted(set(re.findall(rx, code))):
                out.append("%s: simulator-only: %s" % (f, m.replace(" ", "")))
    return out


def read_allow(path):
    allow = {}
    if not os.path.isfile(path):
        return allow
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            entry = line.split("#", 1)[0].split()
            if not entry:
                continue
            if len(entry) != 3 or "#" not in line:
                sys.exit("%s:%d: want 'FILE KIND WHAT  # issue that removes it'" % (path, n))
            allow["%s: %s: %s" % tuple(entry)] = n
    return allow


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--allow")
    a = ap.parse_args()
    allow_path = a.allow or os.path.join(a.top, "tools", "layering-allow.txt")
    allow = read_allow(allow_path)
    found = violations(a.top)
    bad = [v for v in found if v not in allow]
    stale = sorted((n, k) for k, n in allow.items() if k not in found)
    for v in bad:
        print(v)
    for n, k in stale:
        print("%s:%d: fixed, delete this entry: %s" % (allow_path, n, k))
    if bad:
        print("layering: %d violation(s) (docs/CONTRIBUTING.md, \"Rooms and include rules\")"
              % len(bad))
    if bad or stale:
        return 1
    print("layering: clean (%d known violation(s) in %s)" % (len(allow), os.path.relpath(
        allow_path, a.top)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
