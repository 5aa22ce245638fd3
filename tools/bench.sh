#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/bench.sh - what `make bench` runs: every benchmark, side by side in
# one run, written to BENCHMARKS.md with the command that reproduces each
# section.  Benchmarks report medians and ratios against a baseline measured
# in the same run (these machines are noisy); nothing here is a test.
#
# Environment: OUTPUT (build dir), BENCH_RUNS (rounds per benchmark, 5),
# BENCH_ONLY (space-separated subset: model rate trace attach convert pytorch
# fuzzmem fuzz soak agent unwind; fuzz and soak report the last `make fuzz` / `make soak`),
# BENCH_FILE (default BENCHMARKS.md at the top of the tree).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
OUTPUT=${OUTPUT:-$top/build}
export OUTPUT
runs=${BENCH_RUNS:-5}
only=${BENCH_ONLY:-model rate trace attach convert pytorch fuzzmem fuzz soak agent unwind}
out=${BENCH_FILE:-$top/BENCHMARKS.md}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (eBPF)" >&2; exit 2; }

want() { case " $only " in *" $1 "*) return 0 ;; esac; return 1; }

# A script's output goes in as it is when it is already a markdown table;
# "key number unit" lines alone become a table; anything else is kept
# verbatim in a code block (never reshaped halfway).
as_markdown() {
	local f=$1
	if grep -q '^|' "$f"; then
		cat "$f"
	elif ! grep -v -e '^#' -e '^$' "$f" | grep -qvE '^[^ ]+ +-?[0-9.]+([eE][-+]?[0-9]+)?( |$)'; then
		awk '/^#/ || /^$/ { next }
		{ if (!t) { print "| measure | value | unit |"; print "|---|---:|---|"; t = 1 }
		  unit = ""; for (i = 3; i <= NF; i++) unit = unit (i > 3 ? " " : "") $i
		  printf "| %s | %s | %s |\n", $1, $2, unit }' "$f"
	else
		echo '```'
		cat "$f"
		echo '```'
	fi
}

section() {	# title, command as a user types it, [command run here, default the same]
	local title=$1 cmd=$2 run=${3:-${2#sudo }} log=$tmp/section.log
	echo "bench: $title ..." >&2
	{
		echo "## $title"
		echo
		echo "Reproduce: \`$cmd\`"
		echo
		if (cd "$top" && eval "$run") >"$log" 2>"$tmp/err.log"; then
			as_markdown "$log"
		else
			echo "Not measured in this run: the benchmark failed:"
			echo
			echo '```'
			tail -n 15 "$tmp/err.log"
			echo '```'
		fi
		echo
	} >>"$tmp/body.md"
}

median() { sort -g | awk '{a[NR] = $1} END { if (NR) printf "%.10g\n", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }

model_storm() {
	# launch-storm throughput of npu_model alone (journal off): the rate the
	# tracer can be stressed with.
	. "$top/tests/lib/model.sh"
	MODEL_NO_TRAP=1 model_start >/dev/null || return 1
	local i rates=""
	for i in $(seq "$runs"); do
		r=$("$OUTPUT/npu_model/bin/npu_train" --scenario launch-storm --steps 20 2>/dev/null |
			sed -n 's/.*kernels_per_s=\([0-9.]*\).*/\1/p')
		rates="$rates $r"
	done
	model_stop
	echo "launch_storm_kernels_per_s_median $(echo $rates | tr ' ' '\n' | median) kernels/s (runs:$rates; target >= 50000)"
}

capture_rate() {
	# The event rate the tracer keeps up with: launch-storm (the fastest
	# workload) under `ascbpf trace --level 2 --no-convert` (every probe), at
	# the default ring buffer and at a small one; events per second of the
	# target's own run time, drops as counted by BPF, capture bytes per event.
	. "$top/tests/lib/model.sh"
	MODEL_NO_TRAP=1 model_start >/dev/null || return 1
	local rb i log="$tmp/rate.log" rates drops bpe
	echo "| ring buffer | level | events/s (median) | drops (median) | capture bytes/event (median) | runs |"
	echo "|---|---|---:|---:|---:|---:|"
	for rb in 16 1; do
		rates="" drops="" bpe=""
		for i in $(seq "$runs"); do
			"$OUTPUT/ascbpf" trace --level 2 --no-convert --force --ringbuf-size "$rb" -o "$tmp/rate" \
				-- "$OUTPUT/npu_model/bin/npu_train" --scenario launch-storm --steps 20 >"$log" 2>&1 || continue
			local ev dr by wall
			ev=$(sed -n 's/^ascbpf: \([0-9]*\) events.*/\1/p' "$log" | tail -n 1)
			dr=$(sed -n 's/.*), \([0-9]*\) dropped.*/\1/p' "$log" | tail -n 1)
			by=$(sed -n 's/.* \([0-9]*\) bytes in .*/\1/p' "$log" | tail -n 1)
			wall=$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' "$log" | tail -n 1)
			[ -n "$ev" ] && [ -n "$wall" ] || continue
			rates="$rates $(awk -v e="$ev" -v w="$wall" 'BEGIN { printf "%.0f", e / w }')"
			drops="$drops $dr"
			bpe="$bpe $(awk -v b="$by" -v e="$ev" 'BEGIN { printf "%.2f", b / e }')"
			rm -rf "$tmp/rate"
		done
		echo "| $rb MiB | 2 | $(echo $rates | tr ' ' '\n' | median) | $(echo $drops | tr ' ' '\n' | median) | $(echo $bpe | tr ' ' '\n' | median) | $(echo $rates | wc -w) |"
	done
	model_stop
	echo
	echo "Events/s counts every record the BPF side committed over npu_train's own wall time;"
	echo "drops are ring-buffer reserve failures counted per CPU by BPF and reported by ascbpf."
}

fuzz_last() {	# the latest fuzz stage of each harness ($OUTPUT/fuzz/stats.tsv, tests/fuzz/fuzz.sh)
	[ -s "$OUTPUT/fuzz/stats.tsv" ] || { echo "no make fuzz run in $OUTPUT" >&2; return 1; }
	echo "| harness | seconds | executions | exec/s | cov | ft | corpus files | run (UTC) |"
	echo "|---|---:|---:|---:|---:|---:|---:|---|"
	awk -F '\t' '{ last[$2] = $0 } END { for (h in last) print last[h] }' \
		"$OUTPUT/fuzz/stats.tsv" |
		sort -t "$(printf '\t')" -k2,2 |
		awk -F '\t' '{ printf "| %s | %s | %s | %.0f | %s | %s | %s | %s |\n",
			      $2, $3, $4, $4 / $3, $5, $6, $7, $1 }'
}

: >"$tmp/body.md"
want model && section "npu_model launch-storm throughput" "sudo BENCH_ONLY=model make bench" model_storm
want rate && section "Highest event rate, drops and capture bytes per event" "sudo BENCH_ONLY=rate make bench" capture_rate
want trace && [ -x tools/bench_trace.sh ] && section "Cost per traced call and workload slowdown" "sudo tools/bench_trace.sh $runs"
want attach && [ -x tools/bench_attach.sh ] && section "Attach time and probe placement" "sudo tools/bench_attach.sh"
want convert && [ -x tools/bench_convert.sh ] && section "Conversion throughput and memory" "tools/bench_convert.sh 10000000 $runs"
want pytorch && [ -x tools/bench_pytorch.sh ] && section "Real PyTorch: ascbpf vs torch.profiler" "sudo tools/bench_pytorch.sh"
want fuzzmem && [ -x tools/bench_fuzzmem.sh ] &&
	section "Memory and time per input byte on the fuzz corpus" "tools/bench_fuzzmem.sh"
want fuzz && section "Fuzzing: executions and coverage (last make fuzz)" \
	"make fuzz FUZZ_SECONDS=300" fuzz_last
want soak && section "Soak (last make soak)" "sudo make soak" "cat \"\$OUTPUT/soak/summary.txt\""
want agent && [ -x tools/bench_agent.sh ] && section "ascbpf agent: overhead, footprint, latency" \
	"sudo tools/bench_agent.sh $runs"
want unwind && [ -x tools/bench_unwind.sh ] && section "C++ exceptions under the unwind guard" \
	"sudo tools/bench_unwind.sh $runs"

{
	echo "# Benchmarks"
	echo
	echo "Written by \`make bench\` ($(date -u +%Y-%m-%d), commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown))"
	echo "on $(nproc) CPUs, $(uname -r), $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)."
	echo "Every figure is a median over repeated runs, and costs are given next to a baseline measured"
	echo "in the same run (no tracer, the empty-probe floor, bpftrace, torch.profiler): these VMs are noisy,"
	echo "so compare ratios, not absolute times, across machines."
	echo
	cat "$tmp/body.md"
} >"$out"
echo "bench: wrote $out" >&2
