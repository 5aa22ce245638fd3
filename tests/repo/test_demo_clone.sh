#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The README's two-command path, from a clean clone in a temporary
# directory: `make demo` builds from nothing, traces the Python job by PID and writes
# ./result/*_ascend_pt with every file the converter writes at the demo's
# level (each parsed with Python's json / csv); it works a second time, and
# after a failed run that left a dead daemon's stale FUSE mount behind.
set -eu
top=${ASCBPF_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
work=$(mktemp -d /tmp/ascbpf-clone.XXXXXX)
cleanup() {
	grep -qs " /run/ascbpf-demo/dev " /proc/mounts && { fusermount3 -u /run/ascbpf-demo/dev 2>/dev/null || umount -l /run/ascbpf-demo/dev; }
	rm -rf "$work"
}
trap cleanup EXIT

git clone -q "$top" "$work/ascbpf"
cd "$work/ascbpf"
# The clone builds into its own build/: drop the build directory the test
# runner exported for the tree under test.
unset OUTPUT MAKEFLAGS MFLAGS

check_output() {
	local n=$1 d
	d=$(ls -d result/*_ascend_pt | sort | tail -n 1)
	[ "$(ls -d result/*_ascend_pt | wc -l)" -eq "$n" ] || { echo "expected $n output directories"; ls result; exit 1; }
	/usr/bin/python3 - "$d" <<'PY'
import csv, glob, json, os, sys
d = sys.argv[1]
out = os.path.join(d, "ASCEND_PROFILER_OUTPUT")
want = ["trace_view.json", "kernel_details.csv", "operator_details.csv", "op_statistic.csv",
        "api_statistic.csv", "step_trace_time.csv", "memory_record.csv", "operator_memory.csv"]
missing = [f for f in want if not os.path.isfile(os.path.join(out, f))]
assert not missing, f"missing in {out}: {missing}"
info = glob.glob(os.path.join(d, "profiler_info*.json"))
assert len(info) == 1, info
json.load(open(info[0]))
events = json.load(open(os.path.join(out, "trace_view.json")))
assert isinstance(events, list) and events, "trace_view.json is empty"
for f in want[1:]:
    with open(os.path.join(out, f), newline="") as fh:
        raw = fh.read()
    assert "\r\n" in raw, f"{f}: lines must end with CRLF"
    rows = list(csv.reader(raw.splitlines()))
    assert len(rows) >= 2, f"{f}: no data rows"
    assert all(len(r) == len(rows[0]) for r in rows), f"{f}: ragged rows"
print(f"{d}: {len(events)} trace events, all {len(want)} files parse")
PY
}

make demo
check_output 1
sleep 1.1	# the directory stamp has millisecond resolution; keep runs apart
make demo
check_output 2

# A failed run: a daemon killed with SIGKILL leaves its FUSE mount behind.
mkdir -p /run/ascbpf-demo/dev
build/npu_model/bin/npu-modeld --mount /run/ascbpf-demo/dev >/dev/null 2>&1 &
stale=$!
for _ in $(seq 100); do [ -e /run/ascbpf-demo/dev/davinci_manager ] && break; sleep 0.05; done
echo $stale >/run/ascbpf-demo/modeld.pid
kill -9 $stale
wait $stale 2>/dev/null || true
sleep 1.1
make demo
check_output 3
echo "make demo: clean clone, second run and run after a failed one all wrote complete output"
