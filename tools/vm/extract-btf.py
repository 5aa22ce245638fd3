#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""tools/vm/extract-btf.py VMLINUZ OUT

Writes the kernel's raw .BTF section (what /sys/kernel/btf/vmlinux holds on
that kernel) out of a Debian kernel image, so BPF objects of another
architecture are built against that architecture's types (bpftool btf dump
file OUT format c).  Debian's arm64 vmlinuz is a gzip'ed Image; the amd64 one
a bzImage (not handled: the x86 build uses the running kernel's BTF).

The blob is found by its header (include/uapi/linux/btf.h): magic 0xeB9F
(little-endian bytes 9f eb), version 1, hdr_len 24, type_off 0, str_off ==
type_len; its size is hdr_len + str_off + str_len.  Of the candidates that
satisfy this (the magic may occur elsewhere by chance), the largest is the
kernel's.  Exit status 0, 1 when none is found.
"""
import gzip
import os
import struct
import sys


def candidates(data):
    pos = data.find(b"\x9f\xeb\x01")
    while pos >= 0:
        if pos + 24 <= len(data):
            _, _, _, hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from(
                "<HBBIIIII", data, pos)
            size = hdr_len + str_off + str_len
            if (hdr_len == 24 and type_off == 0 and str_off == type_len and type_len
                    and str_len and pos + size <= len(data)
                    and data[pos + hdr_len + str_off] == 0):
                yield pos, size
        pos = data.find(b"\x9f\xeb\x01", pos + 1)


def main():
    if len(sys.argv) != 3:
        print("usage: extract-btf.py VMLINUZ OUT", file=sys.stderr)
        return 2
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    best = max(candidates(data), key=lambda c: c[1], default=None)
    if best is None:
        print(f"extract-btf: no BTF in {sys.argv[1]}", file=sys.stderr)
        return 1
    pos, size = best
    with open(sys.argv[2] + ".tmp", "wb") as f:
        f.write(data[pos:pos + size])
    os.replace(sys.argv[2] + ".tmp", sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
