#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/bench_pytorch.sh [STEPS] [REPEATS]
#
# Slowdown of one real-PyTorch training loop (tests/lib/torch_train.py, MLP,
# STEPS steps, default 300) under ascbpf and under torch.profiler (CPU
# activity, record_shapes=True), measured side by side in one run, each mode
# REPEATS times (default 3, the median is reported), and the time to attach
# every aten op (about 3,000 at::_ops::<op>::call sites) with uprobe_multi and
# with single uprobes.  A benchmark, not a test: it prints a table and checks
# nothing.  Target (issue 6): ascbpf's slowdown at most half of
# torch.profiler's; attaching all aten ops under one second.
#
# Modes:
#   baseline          the loop alone
#   torch.profiler    profile(activities=[CPU], record_shapes=True)
#   ascbpf trace      `ascbpf trace --activities cpu -- python3 torch_train.py` (aten ranges)
#   pt aten           bpf/pytorch.bpf.c alone (tests/lib/pt_trace): aten ranges with
#                     sequence numbers (the TLS counter read at entry and return)
#   pt aten, no seqnr the same without sequence numbers (their cost: the difference)
#   pt shapes         + --record-shapes
#   pt shapes+stack   + --record-shapes --with-stack
#
# Needs root (BPF), /usr/bin/python3 with torch, a built tree (make).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
OUTPUT=${OUTPUT:-$top/build}
steps=${1:-300}
repeats=${2:-3}
py=/usr/bin/python3
train=$top/tests/lib/torch_train.py
pt=$OUTPUT/tests/pt_trace
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ "$(id -u)" = 0 ] || { echo "bench_pytorch: needs root" >&2; exit 2; }
[ -x "$pt" ] || { echo "bench_pytorch: $pt missing: run make" >&2; exit 2; }

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# One loop under pt_trace: the target waits until the probes are attached.
pt_run() {	# pt_trace args...
	local wait=$tmp/go ns
	rm -f "$wait" "$wait.pid"
	$py "$train" --bench "$steps" --wait-file "$wait" >"$tmp/ns" &
	local tp=$!
	while [ ! -f "$wait.pid" ]; do sleep 0.02; done
	"$pt" -p "$(cat "$wait.pid")" --ready "$wait" --json /dev/null "$@" 2>"$tmp/pt.err"
	wait "$tp"
	cat "$tmp/ns"
}

declare -A res
for r in $(seq "$repeats"); do
	res[baseline]+="$($py "$train" --bench "$steps") "
	res[profiler]+="$($py "$train" --bench "$steps" --profile /dev/null 2>/dev/null) "
	if [ -x "$OUTPUT/ascbpf" ]; then
		rm -f "$tmp/trace.ns"
		"$OUTPUT/ascbpf" trace -o "$tmp/tr$r" --no-convert --activities cpu -- \
			$py "$train" --bench "$steps" --bench-out "$tmp/trace.ns" >/dev/null 2>"$tmp/trace.err"
		out=$(cat "$tmp/trace.ns" 2>/dev/null)
		case "$out" in ''|*[!0-9]*) ;; *) res[trace]+="$out " ;; esac
	fi
	res[pt_aten]+="$(pt_run) "
	res[pt_noseq]+="$(pt_run --no-seqnr) "
	res[pt_shapes]+="$(pt_run --record-shapes) "
	res[pt_stack]+="$(pt_run --record-shapes --with-stack) "
done
attach_multi=$(pt_run >/dev/null; sed -n 's/^attach: \([0-9]*\) sites in \([0-9.]*\) ms.*/\1 sites in \2 ms/p' "$tmp/pt.err")
# Single perf-event uprobes: ~6,000 of them take tens of seconds to attach and minutes
# to detach (one RCU grace period each), so only on request.
attach_single="not measured (BENCH_SINGLE=1)"
if [ "${BENCH_SINGLE:-0}" = 1 ]; then
	attach_single=$(pt_run --no-multi >/dev/null; sed -n 's/^attach: \([0-9]*\) sites in \([0-9.]*\) ms.*/\1 sites in \2 ms/p' "$tmp/pt.err")
fi

base=$(echo "${res[baseline]}" | tr ' ' '\n' | grep . | median)
printf '%-18s %14s %12s\n' mode "us/step" slowdown
row() {	# name key
	local v
	[ -n "${res[$2]:-}" ] || { printf '%-18s %14s %12s\n' "$1" "n/a" "n/a"; return; }
	v=$(echo "${res[$2]}" | tr ' ' '\n' | grep . | median)
	awk -v n="$1" -v v="$v" -v b="$base" -v s="$steps" \
		'BEGIN { printf "%-18s %14.1f %11.1f%%\n", n, v / s / 1000, (v - b) * 100 / b }'
}
row baseline baseline
row torch.profiler profiler
row "ascbpf trace" trace
row "pt aten" pt_aten
row "pt aten, no seqnr" pt_noseq
row "pt shapes" pt_shapes
row "pt shapes+stack" pt_stack
echo "attach all aten ops: uprobe_multi ${attach_multi:-n/a}; single uprobes ${attach_single:-n/a}"
echo "($steps steps, median of $repeats runs; slowdown = extra time of the loop over baseline)"
