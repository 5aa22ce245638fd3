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
    workload scripts write at each step start.  Real torch_npu has no such
    call, and ascbpf never relies on it."""
    if _journal_on.value:
        _COMMON.npu_journal_write(b"step", b"tid=%d\tt=%llu\tstep=%llu",
                                  ctypes.c_int(threading.get_native_id()),
                                  ctypes.c_uint64(_COMMON.npu_now_ns()), ctypes.c_uint64(step))


torch.Tensor.npu = _tensor_npu
torch.nn.Module.npu = _module_npu
torch.Tensor.is_npu = property(lambda self: self.device.type == DEVICE_TYPE)

npu = types.ModuleType("torch.npu")
for _name in ("set_device", "current_device", "device_count", "is_available", "synchronize",
              "memory_allocated", "max_memory_allocated", "memory_reserved", "empty_cache"):
    setattr(npu, _name, globals()[_name])
torch.npu = npu
sys.modules["torch.npu"] = npu

from . import optim  # noqa: E402  (needs torch.npu)
from .optim import npu_apply_adam_w  # noqa: E402,F401
