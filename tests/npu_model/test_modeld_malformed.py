# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Malformed ioctls on real npu-modeld nodes get an error code, never a crash:
raw ioctl system calls from Python (libc ioctl via ctypes) with wrong sizes, unknown
numbers, bad ids, another process's resources, bad user pointers, an
unbound fd, a double bind, ioctls on davinciN; junk written into a shared SQ
ring.  After all of it the daemon is alive and a normal client works.
"""
import ctypes
import errno
import json
import mmap
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from npu_model import ModelDaemon  # noqa: E402

Z_OPEN = 0x5a00
RES_ID_ALLOC, RES_ID_FREE = 0xc02c5800, 0x402c5801
SQCQ_ALLOC, SQCQ_FREE, SQCQ_QUERY, SQCQ_SEND, SQCQ_RECV = (
    0xc060580f, 0x40345810, 0xc0345812, 0x40405813, 0xc0485814)
SVM_ALLOC, SVM_FREE, SVM_ADVISE = 0x41584d03, 0x41584d04, 0x41584d0d
PROF_START = 0x40205000


_libc = ctypes.CDLL(None, use_errno=True)
_libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]


def raw_ioctl(fd, cmd, arg):
    """ioctl(2) with a bytes argument (copied in and back, like fcntl.ioctl) or a raw pointer."""
    if isinstance(arg, (bytes, bytearray)):
        buf = ctypes.create_string_buffer(bytes(arg), len(arg))
        ptr = ctypes.addressof(buf)
    else:
        buf, ptr = None, arg
    if _libc.ioctl(fd, cmd, ptr) < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return buf.raw if buf is not None else 0


def ioc(nr, size, d="rw", t="X"):
    dirs = {"": 0, "w": 1, "r": 2, "rw": 3}[d]
    return dirs << 30 | size << 16 | ord(t) << 8 | nr


fails = []


def expect(name, err, fn):
    try:
        fn()
        got = 0
    except OSError as e:
        got = e.errno
    if got != err:
        fails.append("%s: errno %s, expected %s" % (name, errno.errorcode.get(got, got),
                                                    errno.errorcode.get(err, err)))


def bind(fd, module, dev=0):
    buf = ctypes.create_string_buffer(module.encode().ljust(256, b"\0") + struct.pack("<i", dev))
    raw_ioctl(fd, Z_OPEN, ctypes.addressof(buf))
    return buf


def res_para(res_type, rid=0, tsid=0):
    return struct.pack("<IiI3III i2I", tsid, res_type, rid, 0, 0, 0, 0, 0, 0, 0, 0)


def sq_input(sqe_size=64, depth=1024, typ=0):
    return struct.pack("<10I5II", typ, 0, sqe_size, 12, depth, 1024, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0) + \
        b"\0" * 32	# ext_info, res[5], tail padding: 96 bytes


def send_info(sq, addr, num, res3=0):
    return struct.pack("<IIIiQII8I", 0, 0, sq, 0, addr, num, 0, 0, 0, 0, res3, 0, 0, 0, 0)


def svm_arg(dev, a, b, c=0):
    return struct.pack("<3I4xQQI", dev, dev, 0, a, b, c).ljust(344, b"\0")


def main():
    with ModelDaemon(cards=1, hbm_mib=256) as m:
        mgr = os.path.join(m.mnt, "davinci_manager")
        fd = os.open(mgr, os.O_RDWR)
        # Unbound fd: nothing to forward to.
        expect("unbound RES_ID_ALLOC", errno.ENXIO, lambda: raw_ioctl(fd, RES_ID_ALLOC, res_para(0)))
        # Bind with a pointer that is not mapped, with an unknown module, a bad device.
        expect("bind bad pointer", errno.EFAULT, lambda: raw_ioctl(fd, Z_OPEN, 16))
        expect("bind unknown module", errno.ENODEV, lambda: bind(fd, "NOPE"))
        expect("bind bad device", errno.ENODEV, lambda: bind(fd, "TSDRV", 3))
        bind(fd, "TSDRV", 0)
        expect("double bind", errno.EBUSY, lambda: bind(fd, "SVM"))
        # Wrong sizes: the same nr with another size is another (unknown) command.
        expect("RES_ID_ALLOC short", errno.ENOTTY, lambda: raw_ioctl(fd, ioc(0, 40), b"\0" * 40))
        expect("SQCQ_ALLOC long", errno.ENOTTY, lambda: raw_ioctl(fd, ioc(15, 100), b"\0" * 100))
        expect("SEND as _IOWR", errno.ENOTTY, lambda: raw_ioctl(fd, ioc(19, 64), b"\0" * 64))
        expect("unknown nr", errno.ENOTTY, lambda: raw_ioctl(fd, ioc(77, 8), b"\0" * 8))
        expect("_IO on TSDRV", errno.ENOTTY, lambda: raw_ioctl(fd, ioc(0, 0, ""), 0))
        # Bad ids and types.
        expect("res type invalid", errno.EINVAL, lambda: raw_ioctl(fd, RES_ID_ALLOC, res_para(8)))
        expect("res type negative", errno.EINVAL, lambda: raw_ioctl(fd, RES_ID_ALLOC, res_para(-1)))
        expect("res tsid", errno.EINVAL, lambda: raw_ioctl(fd, RES_ID_ALLOC, res_para(0, tsid=5)))
        expect("free unallocated id", errno.EINVAL, lambda: raw_ioctl(fd, RES_ID_FREE, res_para(0, 77)))
        expect("free huge id", errno.EINVAL, lambda: raw_ioctl(fd, RES_ID_FREE, res_para(1, 0xffffffff)))
        expect("sqe size 32", errno.EINVAL, lambda: raw_ioctl(fd, SQCQ_ALLOC, sq_input(sqe_size=32)))
        expect("depth 7", errno.EINVAL, lambda: raw_ioctl(fd, SQCQ_ALLOC, sq_input(depth=7)))
        expect("sq type", errno.EOPNOTSUPP, lambda: raw_ioctl(fd, SQCQ_ALLOC, sq_input(typ=3)))
        out = raw_ioctl(fd, SQCQ_ALLOC, sq_input())
        cq_id, sq_id = struct.unpack_from("<II", out, 32)
        buf = ctypes.create_string_buffer(64 * 4)
        expect("send bad sqe pointer", errno.EFAULT,
               lambda: raw_ioctl(fd, SQCQ_SEND, send_info(sq_id, 0x10, 1)))
        expect("send null sqe pointer", errno.EFAULT,
               lambda: raw_ioctl(fd, SQCQ_SEND, send_info(sq_id, 0, 1)))
        expect("send 0 sqes", errno.EINVAL,
               lambda: raw_ioctl(fd, SQCQ_SEND, send_info(sq_id, ctypes.addressof(buf), 0)))
        expect("send 5000 sqes", errno.EINVAL,
               lambda: raw_ioctl(fd, SQCQ_SEND, send_info(sq_id, ctypes.addressof(buf), 5000)))
        expect("send reserved", errno.EINVAL,
               lambda: raw_ioctl(fd, SQCQ_SEND, send_info(sq_id, ctypes.addressof(buf), 1, 1)))
        expect("send bad sq", errno.EINVAL,
               lambda: raw_ioctl(fd, SQCQ_SEND, send_info(200, ctypes.addressof(buf), 1)))
        expect("send sq 70000", errno.EINVAL,
               lambda: raw_ioctl(fd, SQCQ_SEND, send_info(70000, ctypes.addressof(buf), 1)))
        # Junk SQEs (kind 0) are accepted and fail on the card (CQE), they do not kill it.
        raw_ioctl(fd, SQCQ_SEND, send_info(sq_id, ctypes.addressof(buf), 4))
        cqes = ctypes.create_string_buffer(32 * 8)
        recv = struct.pack("<IIIiQIIII8I", 0, 0, cq_id, 2000, ctypes.addressof(cqes), 8, 0, 0,
                           0xffffffff, *([0] * 8))
        out = raw_ioctl(fd, SQCQ_RECV, recv)
        n = struct.unpack_from("<I", out, 28)[0]
        if n < 1:
            fails.append("no CQE for junk SQEs")
        expect("recv bad pointer", errno.EFAULT if n < 4 else errno.ETIMEDOUT,
               lambda: raw_ioctl(fd, SQCQ_RECV, struct.pack("<IIIiQIIII8I", 0, 0, cq_id, 200, 8, 8,
                                                               0, 0, 0, *([0] * 8))))
        # Another process's SQ: a second fd is another owner.
        fd2 = os.open(mgr, os.O_RDWR)
        bind(fd2, "TSDRV", 0)
        expect("foreign SQ send", errno.EPERM,
               lambda: raw_ioctl(fd2, SQCQ_SEND, send_info(sq_id, ctypes.addressof(buf), 1)))
        expect("foreign SQ free", errno.EPERM,
               lambda: raw_ioctl(fd2, SQCQ_FREE, struct.pack("<5I8I", 0, 0, sq_id, 0, 0, *([0] * 8))))
        # SVM.
        fs = os.open(mgr, os.O_RDWR)
        bind(fs, "SVM")
        expect("svm bad dev", errno.ENODEV, lambda: raw_ioctl(fs, SVM_ALLOC, svm_arg(9, 1 << 44, 4096)))
        expect("svm va 0", errno.EINVAL, lambda: raw_ioctl(fs, SVM_ALLOC, svm_arg(0, 0, 4096)))
        expect("svm size 0", errno.EINVAL, lambda: raw_ioctl(fs, SVM_ALLOC, svm_arg(0, 1 << 44, 0)))
        expect("svm wrap", errno.EINVAL, lambda: raw_ioctl(fs, SVM_ALLOC, svm_arg(0, 2**64 - 4096, 8192)))
        expect("svm too big", errno.ENOMEM, lambda: raw_ioctl(fs, SVM_ALLOC, svm_arg(0, 1 << 44, 1 << 40)))
        expect("svm free unknown", errno.EINVAL, lambda: raw_ioctl(fs, SVM_FREE, svm_arg(0, 1 << 44, 0)))
        expect("svm advise unknown", errno.EINVAL, lambda: raw_ioctl(fs, SVM_ADVISE, svm_arg(0, 1 << 44, 4096)))
        expect("svm cmd on TSDRV fd", errno.ENOTTY, lambda: raw_ioctl(fd, SVM_ALLOC, svm_arg(0, 1 << 44, 4096)))
        # PROF.
        fp = os.open(mgr, os.O_RDWR)
        bind(fp, "PROF")
        expect("prof channel 45", errno.EOPNOTSUPP,
               lambda: raw_ioctl(fp, PROF_START, struct.pack("<4I2Q", 0, 45, 0, 0, 0, 0)))
        expect("prof bad dev", errno.ENODEV,
               lambda: raw_ioctl(fp, PROF_START, struct.pack("<4I2Q", 4, 50, 0, 0, 0, 0)))
        # davinciN: open/close only; the info file is read-only.
        dv = os.open(os.path.join(m.mnt, "davinci0"), os.O_RDWR)
        expect("ioctl on davinci0", errno.ENOTTY, lambda: bind(dv, "TSDRV"))
        expect("open info for write", errno.EACCES,
               lambda: os.open(os.path.join(m.mnt, "npu_model_info"), os.O_WRONLY))
        expect("open davinci5", errno.ENOENT, lambda: os.open(os.path.join(m.mnt, "davinci5"), os.O_RDWR))
        expect("open davinci00", errno.ENOENT, lambda: os.open(os.path.join(m.mnt, "davinci00"), os.O_RDWR))
        # Junk in a shared SQ ring: an impossible tail marks the SQ broken, nothing else.
        info = m.info()
        with open(info["dev0.shm"], "r+b") as f:
            mm = mmap.mmap(f.fileno(), 0)
            sq_bytes = ((16 + 8 * 1024 + 64 * 1024 + 4095) // 4096) * 4096
            base = 4096 + sq_id * sq_bytes
            mm[base + 4:base + 8] = struct.pack("<I", 0x7fffffff)
            mm[40:72] = b"\xff" * 32				# every pending bit
            mm[24:28] = struct.pack("<I", 12345)			# doorbell
            mm.close()
        for f in (fd, fd2, fs, fp, dv):
            os.close(f)
        if not m.alive():
            fails.append("daemon died")
        out = subprocess.run([m.bin("npu_halclient"), "run", "--tasks", "20", "--batch", "3",
                              "--prof", "--alloc", "65536"], env=m.env(),
                             capture_output=True, text=True, timeout=30)
        if out.returncode != 0 or len(json.loads(out.stdout)["records"]) != 40:
            fails.append("client after the abuse: %s %s" % (out.stdout[:300], out.stderr))
        info = m.info()
        if info["dev0.sqs"] != 0 or info["dev0.hbm_used"] != 0:
            fails.append("leftovers after all fds closed: %s" % info)
    for f in fails:
        print("FAIL:", f)
    if not fails:
        print("PASS: every malformed request got its error; the daemon survived")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
