# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""tests/lib/probes/elfcheck.py - independent ELF facts for the `ascbpf probes`
integration tests: function symbols from `nm -D`, PT_LOAD segments from
`readelf -l`, the library a process maps, and the check that a plan site's
offsets are what those tools say.  Nothing here uses ascbpf's own code."""
import os
import subprocess


def mapped_path(pid, base):
    """Path of the first mapping whose file name starts with base (e.g. 'libascendcl.so')."""
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6:
                path = parts[5].strip()
                name = os.path.basename(path)
                if name == base or name.startswith(base + "."):
                    return path
    return None


def load_segments(path):
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True, check=True)
    segs = []
    for line in out.stdout.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))  # offset, vaddr, filesz
    return segs


def vaddr_to_off(segs, v):
    for off, vaddr, filesz in segs:
        if vaddr <= v < vaddr + filesz:
            return v - vaddr + off
    return None


def nm_functions(path):
    """{name: vaddr} of the defined function symbols in .dynsym."""
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True,
                         check=True)
    funcs = {}
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in ("T", "W", "t", "w"):
            funcs[f[2].split("@")[0]] = int(f[0], 16)  # without the version (@@GLIBC_...)
    return funcs


def build_id(path):
    """The NT_GNU_BUILD_ID of path as readelf -n prints it, or None."""
    out = subprocess.run(["readelf", "-nW", path], capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        if "Build ID:" in line:
            return line.split("Build ID:")[1].strip()
    return None


def debuglink_file(path):
    """The file .gnu_debuglink names, looked for in the library's dir and its .debug/, or None."""
    # (the section ends in a CRC-32, which readelf dumps as a string of raw bytes)
    out = subprocess.run(["readelf", "-W", "--string-dump=.gnu_debuglink", path],
                         capture_output=True, text=True, errors="replace")
    for line in out.stdout.splitlines():
        f = line.split("]", 1)
        if len(f) == 2 and f[0].strip().startswith("[") and f[1].strip():
            name = f[1].strip()
            for d in (os.path.dirname(path), os.path.join(os.path.dirname(path), ".debug")):
                if os.path.isfile(os.path.join(d, name)):
                    return os.path.join(d, name)
            return None
    return None


def has_symtab(path):
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True, check=True)
    return " .symtab " in out.stdout


def debug_functions(debug_file):
    """{name: vaddr} of the defined function symbols of a separate debug file's .symtab."""
    out = subprocess.run(["nm", "--defined-only", debug_file], capture_output=True, text=True,
                         check=True)
    funcs = {}
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in ("T", "W", "t", "w"):
            funcs[f[2]] = int(f[0], 16)
    return funcs


def site_offsets_error(site, path, vaddr, segs):
    """None if site's func/attach offsets agree with nm+readelf and the file's bytes, else why."""
    off = vaddr_to_off(segs, vaddr)
    if site["func_offset"] != off:
        return f"{site['symbol']}: func_offset {site['func_offset']:#x}, readelf/nm say {off}"
    with open(path, "rb") as f:
        f.seek(off)
        endbr = f.read(4) == b"\xf3\x0f\x1e\xfa"
    if site["skipped_endbr"] != endbr:
        return f"{site['symbol']}: skipped_endbr {site['skipped_endbr']}, file says {endbr}"
    if site["attach_offset"] != off + (4 if endbr else 0):
        return f"{site['symbol']}: attach_offset {site['attach_offset']:#x} for func {off:#x}"
    return None
