#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/bench_unwind.sh [RUNS] - what a C++ exception costs under the unwind
# guard (bpf/unwind.bpf.h; a benchmark, not a test).  unwtest
# (tests/lib/probes/unwtest.cpp) throws 2 exceptions per iteration, 2000
# iterations, and times its own loop: untraced, traced with a return probe on
# unw_through (each exception unwinds through it: one hold, at the throw) and
# on unw_catcher (caught inside it: two holds, at the throw and at the catch).
# RUNS (5) rounds, the variants' order rotated each round; medians of the
# loop's ns per iteration, and the cost per hold against the untraced loop in
# the same rounds.  Needs root and a built tree (make).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
OUTPUT=${OUTPUT:-$top/build}
runs=${1:-5}
iters=2000
bin=$OUTPUT/tests/lib/probes/unwtest
[ "$(id -u)" -eq 0 ] || { echo "bench_unwind: needs root" >&2; exit 2; }
[ -x "$bin" ] || { echo "bench_unwind: $bin missing (make)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

one() {	# variant -> ns per iteration of the loop
	local out
	case $1 in
	none) out=$("$bin" $iters) ;;
	through | catcher)
		out=$("$OUTPUT/ascbpf" trace -o "$tmp/o" --no-convert \
			--step "libunwtest.so:unw_$1" -- "$bin" $iters 2>/dev/null) ;;
	esac
	rm -rf "$tmp/o"
	echo "$out" | sed -n 's/^ns_per_iter //p'
}

variants=(none through catcher)
for r in $(seq 0 $((runs - 1))); do
	for k in 0 1 2; do	# round r starts at variant r mod 3
		v=${variants[$(((r + k) % 3))]}
		echo "$v $(one "$v")" >>"$tmp/runs"
	done
done
get() { awk -v v="$1" '$1 == v { print $2 }' "$tmp/runs" | median; }
none=$(get none)
echo "| variant | holds per iteration | ns per iteration (median of $runs) |" \
	"cost per hold (us) |"
echo "|---|---:|---:|---:|"
echo "| untraced | 0 | $none | - |"
for v in through catcher; do
	h=$([ $v = through ] && echo 1 || echo 2)
	# unw_catcher's probe also fires each iteration: its return probe, a few us
	n=$(get $v)
	echo "| return probe on unw_$v | $h | $n | $(awk -v a="$n" -v b="$none" -v h="$h" \
		'BEGIN { printf "%.1f", (a - b) / h / 1000 }') |"
done
echo
echo "Each iteration throws twice (once through unw_through, once inside unw_catcher); only"
echo "exceptions that meet a pending return probe are held.  The catcher row's cost includes"
echo "its return probe's own firing (one per iteration)."
