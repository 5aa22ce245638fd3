# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""torch.distributed's "hccl" backend on npu_model's libhccl.so, as torch_npu
registers it: `dist.init_process_group("hccl", ...)` then all_reduce, broadcast,
all_gather, reduce_scatter, reduce, barrier, send and recv on NPU tensors.

Rank 0 makes the root info (HcclGetRootInfo) and publishes it in the store, every
rank joins with HcclCommInitRootInfo; each op drains the card (the caller's
kernels are done), runs the HCCL call on the group's own stream and waits for
that stream, then returns a completed Work (PyTorch 1.13's Python ProcessGroup).
Tensors must be NPU tensors; the model moves no data (nothing is reduced), but
shapes, sizes and the ranks' synchronization on the cards are real.
"""
import ctypes
import datetime
import os

import torch
import torch.distributed as dist

from . import _C

_LIBDIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib")
_HCCL = ctypes.CDLL(os.path.join(_LIBDIR, "libhccl.so"))
ROOT_INFO_BYTES = 4108
_DTYPES = {torch.int8: 0, torch.int16: 1, torch.int32: 2, torch.float16: 3, torch.float32: 4,
           torch.int64: 5, torch.uint8: 7, torch.float64: 10, torch.bfloat16: 11}
_OPS = {dist.ReduceOp.SUM: 0, dist.ReduceOp.PRODUCT: 1, dist.ReduceOp.MAX: 2,
        dist.ReduceOp.MIN: 3}
_c = ctypes.c_void_p
_HCCL.HcclCommInitRootInfo.argtypes = [ctypes.c_uint32, _c, ctypes.c_uint32, _c]
for _name, _args in (("HcclAllReduce", [_c, _c, ctypes.c_uint64, ctypes.c_int, ctypes.c_int, _c,
                                        _c]),
                     ("HcclBroadcast", [_c, ctypes.c_uint64, ctypes.c_int, ctypes.c_uint32, _c,
                                        _c]),
                     ("HcclAllGather", [_c, _c, ctypes.c_uint64, ctypes.c_int, _c, _c]),
                     ("HcclReduceScatter", [_c, _c, ctypes.c_uint64, ctypes.c_int, ctypes.c_int,
                                            _c, _c]),
                     ("HcclReduce", [_c, _c, ctypes.c_uint64, ctypes.c_int, ctypes.c_int,
                                     ctypes.c_uint32, _c, _c]),
                     ("HcclSend", [_c, ctypes.c_uint64, ctypes.c_int, ctypes.c_uint32, _c, _c]),
                     ("HcclRecv", [_c, ctypes.c_uint64, ctypes.c_int, ctypes.c_uint32, _c, _c]),
                     ("HcclBarrier", [_c, _c]), ("HcclCommDestroy", [_c])):
    getattr(_HCCL, _name).argtypes = _args


def _check(r, what):
    if r:
        raise RuntimeError("hccl: %s failed: HcclResult %d" % (what, r))


def _done(result):
    fut = torch.futures.Future()
    fut.set_result(result)
    return torch._C._distributed_c10d._create_work_from_future(fut)


class ProcessGroupHCCL(dist.ProcessGroup):
    """One communicator of `size` ranks (this one `rank`), on the current NPU."""

    def __init__(self, store, rank, size, timeout=None):
        super().__init__(rank, size)
        self._store = store
        root = ctypes.create_string_buffer(ROOT_INFO_BYTES)
        if rank == 0:
            _check(_HCCL.HcclGetRootInfo(root), "HcclGetRootInfo")
            store.set("hccl_root_info", root.raw)
        else:
            ctypes.memmove(root, store.get("hccl_root_info"), ROOT_INFO_BYTES)
        self._comm = _c()
        _check(_HCCL.HcclCommInitRootInfo(size, root, rank, ctypes.byref(self._comm)),
               "HcclCommInitRootInfo")
        self._stream = _c()
        _check(_C.aclrtCreateStream(ctypes.byref(self._stream)), "aclrtCreateStream")

    def getBackendName(self):
        return "hccl"

    def _run(self, fn, *args):
        _check(_C.npu_torch_synchronize(), "synchronize")
        _check(getattr(_HCCL, fn)(*args, self._comm, self._stream), fn)
        _check(_C.aclrtSynchronizeStream(self._stream), "aclrtSynchronizeStream")

    @staticmethod
    def _t(t):
        if t.device.type != "privateuseone":
            raise RuntimeError("hccl: tensors must be on the NPU, not %s" % t.device)
        return _c(t.data_ptr()), t.numel(), _DTYPES[t.dtype]

    def allreduce(self, tensors, opts=None):
        op = _OPS.get(getattr(opts, "reduceOp", dist.ReduceOp.SUM), 0)
        for t in tensors:
            p, n, dt = self._t(t)
            self._run("HcclAllReduce", p, p, n, dt, op)
        return _done(tensors)

    def broadcast(self, tensors, opts=None):
        root = getattr(opts, "rootRank", 0)
        for t in tensors:
            p, n, dt = self._t(t)
            self._run("HcclBroadcast", p, n, dt, root)
        return _done(tensors)

    def allgather(self, output_lists, inputs, opts=None):
        for outs, t in zip(output_lists, inputs):
            p, n, dt = self._t(t)
            self._run("HcclAllGather", p, self._t(outs[0])[0], n, dt)
        return _done(output_lists)

    def reduce_scatter(self, outputs, input_lists, opts=None):
        op = _OPS.get(getattr(opts, "reduceOp", dist.ReduceOp.SUM), 0)
        for t, ins in zip(outputs, input_lists):
            p, n, dt = self._t(t)
            self._run("HcclReduceScatter", self._t(ins[0])[0], p, n, dt, op)
        return _done(outputs)

    def reduce(self, tensors, opts=None):
        op = _OPS.get(getattr(opts, "reduceOp", dist.ReduceOp.SUM), 0)
        root = getattr(opts, "rootRank", 0)
        for t in tensors:
            p, n, dt = self._t(t)
            self._run("HcclReduce", p, p, n, dt, op, root)
        return _done(tensors)

    def barrier(self, opts=None):
        self._run("HcclBarrier")
        return _done([])

    def send(self, tensors, dst, tag=0):
        for t in tensors:
            p, n, dt = self._t(t)
            self._run("HcclSend", p, n, dt, dst)
        return _done(tensors)

    def recv(self, tensors, src, tag=0):
        for t in tensors:
            p, n, dt = self._t(t)
            self._run("HcclRecv", p, n, dt, src)
        return _done(tensors)


def _create(store, rank, size, timeout=datetime.timedelta(seconds=1800)):
    return ProcessGroupHCCL(store, rank, size, timeout)


if "hccl" not in dist.Backend.__dict__.values():
    dist.Backend.register_backend("hccl", _create)
