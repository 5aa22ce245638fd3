#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# sudo tools/bench_align.sh [STEPS] [RUNS]
#
# Benchmark of the cross-node clock alignment (not a test: its own asserts
# are the test's).  Runs tests/trace/test_trace_ranks_nodes.py's job (8 ranks
# on two npu-modeld daemons of 4 cards, node 2's wall clock +7 ms) for STEPS
# steps (default 50), keeping the job directory, and prints the alignment
# error against the daemons' journals (worst op start, all ranks) and the
# median wall time of `ascbpf report JOBDIR` over RUNS runs (default 5).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
OUTPUT=${OUTPUT:-$top/build}
steps=${1:-50}
runs=${2:-5}
[ -x "$OUTPUT/ascbpf" ] || { echo "bench_align: $OUTPUT/ascbpf missing: run make" >&2; exit 2; }
work=$(mktemp -d /tmp/bench_align.XXXXXX)
trap 'rm -rf "$work"' EXIT
ASCBPF_BENCH_STEPS=$steps ASCBPF_BENCH_KEEP=$work/job \
	python3 "$top/tests/trace/test_trace_ranks_nodes.py" >"$work/log" 2>&1 ||
	{ tail -20 "$work/log" >&2; echo "bench_align: the job failed" >&2; exit 1; }
grep '^alignment:' "$work/log"
times=()
for i in $(seq "$runs"); do
	s=$(date +%s.%N)
	"$OUTPUT/ascbpf" report "$work/job" >/dev/null
	e=$(date +%s.%N)
	times+=("$(echo "$e - $s" | bc)")
done
med=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "report: 8 ranks, $steps steps: median $med s over $runs runs"
