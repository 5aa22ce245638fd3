# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""tests/lib/torch_npu_format.py - the facts of torch_npu's output that the golden
tests compare ascbpf's output with: file layout, CSV header rows, profiler_info
keys, trace_view event shapes.  They are the project's own test data
(tests/data/torch_npu_format/*.json, each with the sample file and torch_npu
source it was taken from); nothing here reads outside the repository."""
import json
import os

DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                   "torch_npu_format")


def _load(name):
    with open(os.path.join(DIR, name), encoding="utf-8") as f:
        return json.load(f)


def layout():
    """Set of the files of a torch_npu run directory, relative to it."""
    return set(_load("layout.json")["files"])


def header(name, level=1):
    """Header row of ASCEND_PROFILER_OUTPUT/NAME (as one line, no line end); level 0
    selects the Level0 variant where torch_npu writes one (kernel_details.csv)."""
    h = _load("csv_headers.json")["headers"]
    if level == 0 and name + "@Level0" in h:
        return h[name + "@Level0"]["header"]
    return h[name]["header"]


def profiler_info_keys():
    """Set of the keys of profiler_info_{rank}.json, nested ones joined by '.'
    (the schedule's members not listed)."""
    return set(_load("profiler_info_keys.json")["keys"])


def trace_shapes():
    """{(ph, cat, process name): set of (sorted keys, sorted args keys or None)}."""
    out = {}
    for s in _load("trace_view_shapes.json")["shapes"]:
        out.setdefault((s["ph"], s["cat"], s["process"]), set()).add(
            (tuple(s["keys"]), None if s["args"] is None else tuple(s["args"])))
    return out


def node_launch():
    """(key order of a Node@launch event, key order of its args)."""
    n = _load("trace_view_shapes.json")["node_launch"]
    return n["keys"], n["args"]
