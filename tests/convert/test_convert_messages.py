# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Messages on bad input and failed output that issue 19 found missing or
misleading, on a synthetic capture (mkcapture):

* a capture whose first frame fails its checksum (a byte of its zstd payload
  flipped): convert says what happened (the frame, the bytes not read), as
  dump and report do, and exits 1 -- not "has no process record" with 2;
* `ascbpf dump CAPTURE > /dev/full`: a message naming the failed write, exit 1.
"""
import os
import shutil
import subprocess
import sys
import tempfile

TOP = os.environ.get("ASCBPF_TOP", os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
OUTPUT = os.environ.get("OUTPUT", os.path.join(TOP, "build"))
ASCBPF = os.path.join(OUTPUT, "ascbpf")
MKCAP = os.path.join(OUTPUT, "tests", "lib", "mkcapture")
FILE_HDR, FRAME_HDR = 32, 24	# user/capture/capture.c


def check(cond, msg):
    if not cond:
        print("FAIL:", msg)
        sys.exit(1)


def main():
    tmp = tempfile.mkdtemp(prefix="test_convert_messages.")
    try:
        cap = os.path.join(tmp, "c.ascb")
        subprocess.run([MKCAP, "-o", cap, "--truth", os.path.join(tmp, "c.json"), "--steps",
                        "2", "--ops", "2"], check=True)
        data = bytearray(open(cap, "rb").read())
        data[FILE_HDR + FRAME_HDR + 40] ^= 0xff
        first = os.path.join(tmp, "first.ascb")
        open(first, "wb").write(data)
        for cmd in (["convert", first, "-o", os.path.join(tmp, "out")], ["dump", first],
                    ["report", first]):
            p = subprocess.run([ASCBPF] + cmd, capture_output=True, text=True)
            print("$ ascbpf %s -> %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
            check(p.returncode == 1, "%s: exit %d, expected 1" % (cmd[0], p.returncode))
            check("frame 0" in p.stderr and "no process record" not in p.stderr,
                  "%s does not say that frame 0 is damaged" % cmd[0])
        check(not os.path.exists(os.path.join(tmp, "out")) or
              not os.listdir(os.path.join(tmp, "out")), "convert wrote a run of nothing")

        with open("/dev/full", "w") as full:
            p = subprocess.run([ASCBPF, "dump", cap], stdout=full, stderr=subprocess.PIPE,
                               text=True)
        print("$ ascbpf dump > /dev/full -> %d: %s" % (p.returncode, p.stderr.strip()))
        check(p.returncode == 1, "dump > /dev/full: exit %d, expected 1" % p.returncode)
        check("writing standard output" in p.stderr and "No space" in p.stderr,
              "dump > /dev/full: no message naming the failed write")
        print("PASS")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
