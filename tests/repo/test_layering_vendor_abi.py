# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The tool and the simulator meet only at the vendor ABI (include/ascend/):

* nothing in user/ or bpf/ includes anything of npu_model/ (by path or by one of
  npu_model/include's header names);
* user/ and bpf/ code (comments aside) names no simulator-only interface:
  NPU_MODEL_* variables, the model's info types (NPU_INFO_TYPE_*, 0x4e50..0x4e54),
  its 'P' profiling ioctls (NPU_PROF_*, npu_prof_*), npu_model_info;
* include/ascend/ holds no simulator-only name (NPU_ / npu_ / "npu_model"), and
  every header there says which real source it mirrors ("Mirrors").
The check has teeth: it is run once on a planted violation of each kind."""
import os
import re
import sys
import tempfile

TOP = os.environ.get("ASCBPF_TOP") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
MODEL_HEADERS = set(os.listdir(os.path.join(TOP, "npu_model", "include")))
PRIVATE = re.compile(r"\bNPU_MODEL_\w+|\bNPU_INFO_TYPE_\w+|\bNPU_PROF_\w+|\bnpu_prof_\w+|"
                     r"\b0x4e5[0-4]\b|npu_model_info", re.I)
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def sources(root):
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith((".c", ".h")):
                yield os.path.join(d, f)


def problems(top):
    out = []
    for room in ("user", "bpf"):
        for path in sources(os.path.join(top, room)):
            text = open(path, errors="replace").read()
            rel = os.path.relpath(path, top)
            for inc in INCLUDE.findall(text):
                if "npu_model" in inc or os.path.basename(inc) in MODEL_HEADERS:
                    out.append("%s includes %s" % (rel, inc))
            for m in PRIVATE.finditer(COMMENT.sub(" ", text)):
                out.append("%s uses the simulator-only %s" % (rel, m.group(0)))
    for path in sources(os.path.join(top, "include", "ascend")):
        text = open(path).read()
        rel = os.path.relpath(path, top)
        for m in re.finditer(r"\bNPU_\w+|\bnpu_\w+|npu_model", COMMENT.sub(" ", text)):
            out.append("%s: simulator name %s in the vendor ABI" % (rel, m.group(0)))
        if "Mirrors" not in text:
            out.append("%s does not say which real header it mirrors" % rel)
    return out


found = problems(TOP)
for p in found:
    print("FAIL:", p)
if found:
    sys.exit(1)

# the same check on a planted tree: one violation of each kind must be found
with tempfile.TemporaryDirectory() as t:
    os.makedirs(os.path.join(t, "user", "trace"))
    os.makedirs(os.path.join(t, "bpf"))
    os.makedirs(os.path.join(t, "include", "ascend"))
    open(os.path.join(t, "user", "trace", "a.c"), "w").write(
        '#include "../../npu_model/include/npu_ioctl.h"\n/* NPU_MODEL_DEV_DIR ok */\n')
    open(os.path.join(t, "bpf", "b.c"), "w").write(
        '#include "ascend_hal.h"\nint x = getenv("NPU_MODEL_DEV_DIR") != 0 || 0x4e54;\n')
    open(os.path.join(t, "include", "ascend", "c.h"), "w").write("#define NPU_PRIVATE 1\n")
    planted = problems(t)
    want = ["user/trace/a.c includes ../../npu_model/include/npu_ioctl.h",
            "bpf/b.c includes ascend_hal.h", "bpf/b.c uses the simulator-only NPU_MODEL_DEV_DIR",
            "bpf/b.c uses the simulator-only 0x4e54",
            "include/ascend/c.h: simulator name NPU_PRIVATE in the vendor ABI",
            "include/ascend/c.h does not say which real header it mirrors"]
    if sorted(planted) != sorted(want):
        print("FAIL: planted violations found as %s" % planted)
        sys.exit(1)
print("PASS: user/ and bpf/ use only include/ascend/; %d vendor headers" %
      len(os.listdir(os.path.join(TOP, "include", "ascend"))))
