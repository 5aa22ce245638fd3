#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/compare_outputs.sh ASCBPF CAPDIR OUTDIR [REFDIR]
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
# Making captures: `ascbpf trace --no-convert -o DIR ...` of npu_model's
# npu_train scenarios (tests/lib/model.sh starts a private npu-modeld),
# at --level 0/1/2 and with --profile-memory, --with-stack, --record-shapes,
# and of tests/lib/torch_train.py.  Typical use:
#   git worktree add /tmp/base BASE && make -C /tmp/base -j2
#   tools/compare_outputs.sh /tmp/base/build/ascbpf CAPS /tmp/cmp/old
#   tools/compare_outputs.sh build/ascbpf CAPS /tmp/cmp/new /tmp/cmp/old
set -u
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
