#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/compare_outputs.sh ASCBPF CAPDIR OUTDIR [REFDIR]
# tools/compare_outputs.sh --capture BUILD CAPDIR
#
# Before/after check of a change that must not change behaviour (not a test:
# it needs captures made beforehand).  Runs every consumer of ASCBPF over each
# CAPDIR/NAME.cap into OUTDIR/NAME/:
#   convert/          ascbpf convert (as traced, --worker-name cmp)
#   convert-lN/       ascbpf convert --level N, N = 0 1 2
#   chrome.json       ascbpf convert --export chrome
#   report.json       ascbpf report --json
#   report.txt        ascbpf report
#   dump.txt          ascbpf dump
#   dump.json         ascbpf dump --json
# plus NAME.rc (every command's exit status; stderr goes to NAME.err).  With
# REFDIR (the OUTDIR of an earlier run, e.g. with the binary of the base
# commit), diffs OUTDIR against it file by file and exits 1 on any
# difference.
#
# --capture (root) makes the captures with BUILD's ascbpf and npu_model on a
# private npu-modeld (tests/lib/model.sh): `ascbpf trace --no-convert` of
# npu_train's scenarios at --level 0/1/2, with --profile-memory,
# --with-stack, --record-shapes, a schedule, and of tests/lib/torch_train.py
# (real PyTorch), one CAPDIR/NAME.cap each.  Capture with the newer tree
# when the change adds records (the older binary skips unknown ones).
# Typical use:
#   git clone -q . /tmp/base && git -C /tmp/base checkout -q BASE && nice make -C /tmp/base -j2
#   tools/compare_outputs.sh --capture build /tmp/cmp/caps
#   tools/compare_outputs.sh /tmp/base/build/ascbpf /tmp/cmp/caps /tmp/cmp/old
#   tools/compare_outputs.sh build/ascbpf /tmp/cmp/caps /tmp/cmp/new /tmp/cmp/old
set -u
top=$(cd "$(dirname "$0")/.." && pwd)

# cap NAME TRACE-ARGS... -- WORKLOAD...: one capture into $capdir/NAME.cap
cap() {
	local name=$1 tmp
	shift
	tmp=$(mktemp -d /tmp/compare_outputs.XXXXXX) || return 1
	if nice timeout 300 "$build/ascbpf" trace -o "$tmp/out" --no-convert "$@" \
		>"$tmp/log" 2>&1; then
		mv "$tmp"/out/*.cap "$capdir/$name.cap" && echo "captured $name"
	else
		echo "FAILED $name:" >&2
		tail -3 "$tmp/log" >&2
	fi
	rm -rf "$tmp"
}

capture_all() {
	local t s l
	export OUTPUT=$build ASCBPF_TOP=$top
	. "$top/tests/lib/model.sh"
	model_start --cards 1 || exit 1
	t=$MODEL_BIN/npu_train
	for s in baseline dispatch-bound transdata mem-growth oom multi-stream; do
		for l in 0 1 2; do
			cap "$s-l$l" --level $l -- "$t" --scenario $s --steps 3
		done
	done
	cap launch-storm-l0 --level 0 -- "$t" --scenario launch-storm --steps 2
	cap launch-storm-l1 --level 1 -- "$t" --scenario launch-storm --steps 1
	cap baseline-mem --profile-memory -- "$t" --scenario baseline --steps 3
	cap mem-growth-mem --profile-memory --level 1 -- "$t" --scenario mem-growth --steps 4
	cap oom-mem --profile-memory -- "$t" --scenario oom --steps 3
	cap baseline-stack --with-stack --level 1 -- "$t" --scenario baseline --steps 2
	cap transdata-shapes --record-shapes -- "$t" --scenario transdata --steps 2
	cap native-opt-l2 --level 2 --profile-memory --with-stack -- "$t" \
		--scenario native-optimizer --steps 2
	cap sched --schedule wait=1,warmup=1,active=1,repeat=1 -- "$t" --scenario baseline --steps 4
	cap torch-mlp --record-shapes --profile-memory --with-stack -- /usr/bin/python3 \
		"$top/tests/lib/torch_train.py" --steps 3
	cap torch-cnn-l1 --level 1 --step-py train_one_step -- /usr/bin/python3 \
		"$top/tests/lib/torch_train.py" --steps 3 --model cnn
	model_stop
}

if [ "${1:-}" = --capture ]; then
	[ $# -eq 3 ] || { sed -n 4,5p "$0" >&2; exit 2; }
	build=$(cd "$2" && pwd) capdir=$3
	[ -x "$build/ascbpf" ] || { echo "compare_outputs: $build/ascbpf missing" >&2; exit 2; }
	mkdir -p "$capdir" || exit 2
	capture_all
	exit 0
fi
[ $# -ge 3 ] || { sed -n 4,5p "$0" >&2; exit 2; }
ascbpf=$1 caps=$2 out=$3 ref=${4:-}
[ -x "$ascbpf" ] || { echo "compare_outputs: $ascbpf is not executable" >&2; exit 2; }
ls "$caps"/*.cap >/dev/null 2>&1 || { echo "compare_outputs: no $caps/*.cap" >&2; exit 2; }
mkdir -p "$out" || exit 2

for cap in "$caps"/*.cap; do
	n=$(basename "$cap" .cap)
	o=$out/$n
	rm -rf "$o" && mkdir -p "$o"
	{
		nice "$ascbpf" convert "$cap" -o "$o/convert" --worker-name cmp
		echo "convert $?"
		for l in 0 1 2; do
			nice "$ascbpf" convert "$cap" -o "$o/convert-l$l" --worker-name cmp \
				--level $l
			echo "convert-l$l $?"
		done
		nice "$ascbpf" convert "$cap" -o "$o/chrome.json" --export chrome --worker-name cmp
		echo "chrome $?"
		nice "$ascbpf" report --json "$cap" >"$o/report.json"
		echo "report.json $?"
		nice "$ascbpf" report "$cap" >"$o/report.txt"
		echo "report.txt $?"
		nice "$ascbpf" dump "$cap" >"$o/dump.txt"
		echo "dump $?"
		nice "$ascbpf" dump --json "$cap" >"$o/dump.json"
		echo "dump.json $?"
	} >"$out/$n.rc" 2>"$out/$n.err"
done

[ -n "$ref" ] || exit 0
status=0
for cap in "$caps"/*.cap; do
	n=$(basename "$cap" .cap)
	if diff -r -q "$ref/$n" "$out/$n" >/dev/null && cmp -s "$ref/$n.rc" "$out/$n.rc"; then
		echo "same    $n"
	else
		echo "DIFFERS $n"
		diff -r -q "$ref/$n" "$out/$n"
		diff "$ref/$n.rc" "$out/$n.rc"
		status=1
	fi
done
exit $status
