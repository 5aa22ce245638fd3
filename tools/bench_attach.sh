#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/bench_attach.sh - attach-layer benchmark (a benchmark, not a test).
#
#  1. Attach time for every at::_ops::<op>::call in Debian's libtorch_cpu.so
#     (python3-torch, a /usr/bin/python3 process that imported torch), entry
#     and return probes, through uprobe_multi links, and through single
#     perf-event uprobes for the first $SINGLE_MAX (default 200) of them: a
#     single uprobe costs ~110 ms to detach on our kernel (an RCU tasks-trace
#     grace period each, serialised), so all of them would take 10+ minutes.
#  2. `ascbpf trace -p` without uprobe_multi: the used aten ops only, their
#     attach counts and detach time (ascbpf's own "detached" line).
#  3. Cost per hit of an entry uprobe by first instruction, at the function
#     and where ascbpf's plan puts it (after endbr64), on this kernel.
#
# Needs root and a built tree (make).  Prints "key value unit" lines.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
OUTPUT=${OUTPUT:-$top/build}
bench=$OUTPUT/tests/lib/probes/bench_attach
[ -x "$bench" ] || { echo "bench_attach: $bench is not built (run make)" >&2; exit 2; }

fifo=$(mktemp -u /tmp/bench_attach.XXXXXX)
mkfifo "$fifo"
/usr/bin/python3 -c "import sys, torch; print('ready', flush=True); sys.stdin.read()" \
	<"$fifo" >"$fifo.out" &
py=$!
exec 3>"$fifo"
cleanup() {
	exec 3>&-
	kill "$py" 2>/dev/null || true
	wait "$py" 2>/dev/null || true
	rm -f "$fifo" "$fifo.out"
}
trap cleanup EXIT
for _ in $(seq 1 600); do
	grep -q ready "$fifo.out" 2>/dev/null && break
	sleep 0.1
done
grep -q ready "$fifo.out" || { echo "bench_attach: python3 did not import torch" >&2; exit 1; }

echo "# kernel $(uname -r), $(nproc) CPUs, libtorch_cpu from python3-torch $(dpkg-query -W -f='${Version}' python3-torch 2>/dev/null || echo '?')"
echo "# aten ops of pid $py (framework family), entry + return probes"
"$bench" "$py" framework "${SINGLE_MAX:-200}"
echo "# ascbpf trace -p, ASCBPF_NO_UPROBE_MULTI=1: only the aten ops used so far (lazyops.c)"
out=$(mktemp -d /tmp/bench_attach_out.XXXXXX)
t0=$(date +%s.%N)
ASCBPF_NO_UPROBE_MULTI=1 "$OUTPUT/ascbpf" trace -p "$py" --activities cpu --duration 1 \
	-o "$out" --no-convert 2>&1 | grep -E "aten ops attached|detached" |
	sed 's/^ascbpf: trace: //'
echo "used_ops_trace_wall $(echo "$(date +%s.%N) - $t0" | bc) s (1 s traced)"
rm -rf "$out"
echo "# cost per hit by first instruction (200000 calls each)"
"$bench" --prologue
