# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""npu_model's torch_npu: the simulated NPU as a device of real PyTorch.

`import torch_npu` loads lib/libtorch_npu.so, which registers the NPU as
PyTorch's out-of-tree device (PrivateUse1: the allocator, the device guard and
the kernels; see backend.cpp), and adds what torch_npu adds to torch:
`tensor.npu()`, `module.npu()`, `torch.npu.*` (set_device, synchronize,
current_device, device_count, is_available, memory_allocated,
max_memory_allocated, memory_reserved, empty_cache) and
`torch_npu.optim.NpuFusedAdamW`.

PyTorch 1.13 cannot rename PrivateUse1, so the device is spelled
"privateuseone" where real torch_npu says "npu": `torch.device("npu")` and
`.to("npu")` are translated by torch_npu.npu_device() and Tensor.npu(); the
README lists what a script writes differently.
"""
import ctypes
import os
import sys
import threading
import types

import torch

_LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "libtorch_npu.so")
torch.ops.load_library(_LIB)
_C = ctypes.CDLL(_LIB)

DEVICE_TYPE = "privateuseone"


class _AllocStats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("allocated", "reserved", "active", "nr_segments",
                                                "nr_oom_retries", "nr_alloc_failures")]


_state = {"device": None, "peak": 0}


def _check(r, what):
    if r:
        raise RuntimeError("torch_npu: %s failed: error %d" % (what, r))


def npu_device(index=None):
    """The torch.device of NPU `index` (the current one if None)."""
    if index is None:
        index = current_device()
    return torch.device(DEVICE_TYPE, index)


def _to_device(device):
    if device is None:
        return npu_device()
    if isinstance(device, int):
        return npu_device(device)
    if isinstance(device, str) and device.startswith("npu"):
        return npu_device(int(device[4:]) if device[3:4] == ":" else None)
    return torch.device(device)


def set_device(device):
    """torch.npu.set_device: binds this process to the card (aclrtSetDevice, the task queue)."""
    d = _to_device(device)
    idx = d.index if d.index is not None else 0
    if _state["device"] != idx:
        _check(_C.npu_torch_init(ctypes.c_int(idx)), "set_device(%d)" % idx)
        _state["device"] = idx


def current_device():
    if _state["device"] is None:
        set_device(int(os.environ.get("LOCAL_RANK", "0")))
    return _state["device"]


def device_count():
    n = ctypes.c_uint32(0)
    return n.value if _C.aclrtGetDeviceCount(ctypes.byref(n)) == 0 else 0


def is_available():
    return device_count() > 0


def synchronize(device=None):
    """Drains the task queue, then waits for the card (aclrtSynchronizeDevice)."""
    current_device()
    _check(_C.npu_torch_synchronize(), "synchronize")


def _stats():
    st = _AllocStats()
    _C.npu_torch_alloc_stats(ctypes.byref(st))
    _state["peak"] = max(_state["peak"], st.allocated)
    return st


def memory_allocated(device=None):
    return _stats().allocated


def max_memory_allocated(device=None):
    _stats()
    return _state["peak"]


def memory_reserved(device=None):
    return _stats().reserved


def mem_get_info(device=None):
    """torch.npu.mem_get_info: (free, total) bytes of the card's HBM (aclrtGetMemInfo)."""
    current_device()
    free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
    _check(_C.aclrtGetMemInfo(1, ctypes.byref(free), ctypes.byref(total)),  # ACL_HBM_MEM
           "aclrtGetMemInfo")
    return free.value, total.value


def empty_cache():
    _C.npu_torch_empty_cache()


def _tensor_npu(self, device=None, non_blocking=False):
    return self.to(_to_device(device), non_blocking=non_blocking)


def _module_npu(self, device=None):
    d = _to_device(device)
    return self._apply(lambda t: t.to(d))


_COMMON = ctypes.CDLL("libnpu_common.so")     # already loaded by libtorch_npu.so
_journal_on = ctypes.c_int.in_dll(_COMMON, "npu_journal_on")
_COMMON.npu_now_ns.restype = ctypes.c_uint64


def _journal_step(step):
    """Simulator only: the ground-truth `step` line (npu_model/JOURNAL.md) the
    workload scripts write where each optimizer.step() returns (step `step`
    starts there).  Real torch_npu has no such call, and ascbpf never relies
    on it."""
    if _journal_on.value:
        _COMMON.npu_journal_write(b"step", b"tid=%d\tt=%llu\tstep=%llu",
                                  ctypes.c_int(threading.get_native_id()),
                                  ctypes.c_uint64(_COMMON.npu_now_ns()), ctypes.c_uint64(step))


# torch_npu raises c10::OutOfMemoryError: in PyTorch 1.13 that is torch.cuda.OutOfMemoryError
# (a RuntimeError); torch.npu.OutOfMemoryError names it as torch_npu's torch.npu does.
OutOfMemoryError = getattr(torch, "OutOfMemoryError", torch.cuda.OutOfMemoryError)

_C.npu_torch_current_stream.restype = ctypes.c_void_p
_C.npu_torch_set_stream.argtypes = [ctypes.c_void_p]
_C.npu_torch_record_event.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
_C.npu_torch_wait_event.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
_C.aclrtSynchronizeStream.argtypes = [ctypes.c_void_p]
_C.aclrtSynchronizeEvent.argtypes = [ctypes.c_void_p]
_C.aclrtDestroyStream.argtypes = [ctypes.c_void_p]
_C.aclrtDestroyEvent.argtypes = [ctypes.c_void_p]


class Stream:
    """torch.npu.Stream: an aclrtStream of the current device (None: the default stream).
    Work queued while it is current (`with torch.npu.stream(s)`) goes to it through the
    task queue, as in torch_npu."""

    def __init__(self, device=None, priority=0, _handle=-1):
        current_device()
        if _handle == -1:
            h = ctypes.c_void_p()
            _check(_C.aclrtCreateStream(ctypes.byref(h)), "aclrtCreateStream")
            self._handle, self._owned = h.value, True
        else:
            self._handle, self._owned = _handle or None, False

    def wait_event(self, event):
        event.wait(self)

    def wait_stream(self, stream):
        ev = Event()
        ev.record(stream)
        self.wait_event(ev)

    def record_event(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    def synchronize(self):
        _check(_C.npu_torch_synchronize(), "synchronize")

    def __eq__(self, other):
        return isinstance(other, Stream) and self._handle == other._handle

    def __hash__(self):
        return hash(self._handle)

    def __del__(self):
        if getattr(self, "_owned", False) and self._handle:
            _C.npu_torch_synchronize()
            _C.aclrtDestroyStream(ctypes.c_void_p(self._handle))
            self._handle = None


class Event:
    """torch.npu.Event: an aclrtEvent; record() and wait() go through the task queue
    (RecordEventFunc / WaitEventFunc, as torch_npu's NPUEvent)."""

    def __init__(self, enable_timing=False, blocking=False):
        current_device()
        h = ctypes.c_void_p()
        _check(_C.aclrtCreateEvent(ctypes.byref(h)), "aclrtCreateEvent")
        self._handle = h.value

    def record(self, stream=None):
        s = (stream or current_stream())._handle
        _check(_C.npu_torch_record_event(ctypes.c_void_p(self._handle), ctypes.c_void_p(s)),
               "record event")

    def wait(self, stream=None):
        s = (stream or current_stream())._handle
        _check(_C.npu_torch_wait_event(ctypes.c_void_p(self._handle), ctypes.c_void_p(s)),
               "wait event")

    def synchronize(self):
        _check(_C.npu_torch_synchronize(), "synchronize")

    def __del__(self):
        if getattr(self, "_handle", None):
            _C.npu_torch_synchronize()
            _C.aclrtDestroyEvent(ctypes.c_void_p(self._handle))
            self._handle = None


def current_stream(device=None):
    current_device()
    return Stream(_handle=_C.npu_torch_current_stream())


def default_stream(device=None):
    current_device()
    return Stream(_handle=None)


def set_stream(stream):
    _check(_C.npu_torch_set_stream(ctypes.c_void_p(stream._handle if stream else None)),
           "set_stream")


class stream:  # noqa: N801  (torch.npu.stream, a context manager as in torch)
    def __init__(self, s):
        self.s, self.prev = s, None

    def __enter__(self):
        if self.s is not None:
            self.prev = current_stream()
            set_stream(self.s)
        return self.s

    def __exit__(self, *exc):
        if self.s is not None:
            set_stream(self.prev)


class _FormatCast(torch.autograd.Function):
    """npu_format_cast's gradient passes through, as in torch_npu."""

    @staticmethod
    def forward(ctx, x, acl_format):
        return torch.ops.torch_npu.npu_format_cast(x, acl_format)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def npu_format_cast(tensor, acl_format):
    """torch_npu.npu_format_cast: a copy of `tensor` in ACL storage format `acl_format`
    (2 ND, 0 NCHW, 3 NC1HWC0, 29 FRACTAL_NZ), one TransData kernel."""
    return _FormatCast.apply(tensor, int(acl_format))


torch.Tensor.npu = _tensor_npu
torch.nn.Module.npu = _module_npu
torch.Tensor.is_npu = property(lambda self: self.device.type == DEVICE_TYPE)

npu = types.ModuleType("torch.npu")
for _name in ("set_device", "current_device", "device_count", "is_available", "synchronize",
              "memory_allocated", "max_memory_allocated", "memory_reserved", "empty_cache",
              "mem_get_info",
              "OutOfMemoryError", "Stream", "Event", "current_stream", "default_stream",
              "set_stream", "stream"):
    setattr(npu, _name, globals()[_name])
torch.npu = npu
sys.modules["torch.npu"] = npu

from . import optim  # noqa: E402  (needs torch.npu)
from .optim import npu_apply_adam_w  # noqa: E402,F401
from . import distributed  # noqa: E402,F401  (registers torch.distributed's "hccl" backend)
