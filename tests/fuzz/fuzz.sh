#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tests/fuzz/fuzz.sh replay HARNESS
# tests/fuzz/fuzz.sh fuzz HARNESS [SECONDS]
#
# One stage of one libFuzzer harness ($OUTPUT/fuzz/bin/HARNESS, built by
# `make fuzz-build`), as tests/run.sh counts them: exit 0 pass, 1 fail.
#   replay  runs every seed ($OUTPUT/fuzz/seeds/HARNESS, made by our build)
#           and every committed finding (tests/fuzz/findings/HARNESS/) once.
#   fuzz    fuzzes for SECONDS (FUZZ_SECONDS, 30) from the seeds, the findings
#           and the corpus of earlier runs ($OUTPUT/fuzz/corpus/HARNESS, kept
#           between runs), at nice 19, then appends "HARNESS SECONDS execs cov
#           ft corpus" to $OUTPUT/fuzz/stats.tsv.
# Either fails on any crash, leak, timeout (FUZZ_TIMEOUT s per input, 20),
# input needing more than FUZZ_MALLOC_MB in one allocation (512) or FUZZ_RSS_MB
# resident (1536), or sanitizer report; the input is kept under
# $OUTPUT/fuzz/artifacts/HARNESS/ (commit it to findings/ as a regression
# test once the bug is fixed).  Undefined behaviour already filed and being
# fixed elsewhere is suppressed by name in tests/fuzz/pending.supp, and its
# inputs wait in tests/fuzz/pending/ (not replayed).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
OUTPUT=${OUTPUT:-$top/build}
stage=${1:-}
h=${2:-}
secs=${3:-${FUZZ_SECONDS:-30}}
bin=$OUTPUT/fuzz/bin/$h
seeds=$OUTPUT/fuzz/seeds/$h
findings=$top/tests/fuzz/findings/$h
corpus=$OUTPUT/fuzz/corpus/$h
artifacts=$OUTPUT/fuzz/artifacts/$h

case "$stage" in
replay | fuzz) ;;
*) echo "usage: $0 replay|fuzz HARNESS [SECONDS]" >&2; exit 2 ;;
esac
if [ ! -x "$bin" ] || [ ! -d "$seeds" ]; then
	echo "fuzz: $bin or its seeds are missing: run make fuzz-build" >&2
	exit 1
fi
mkdir -p "$corpus" "$artifacts" "$findings"

export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0:detect_stack_use_after_return=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=$top/tests/fuzz/pending.supp
opts=(-timeout="${FUZZ_TIMEOUT:-20}" -rss_limit_mb="${FUZZ_RSS_MB:-1536}"
      -malloc_limit_mb="${FUZZ_MALLOC_MB:-512}" -artifact_prefix="$artifacts/"
      -print_final_stats=1)
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# A sanitizer that recovers (none should) or a report libFuzzer missed still fails the stage.
reported() {
	grep -E '^==[0-9]+==(ERROR|WARNING): |runtime error: |^SUMMARY: ' "$log"
}

if [ "$stage" = replay ]; then
	mapfile -t inputs < <(find "$seeds" "$findings" -type f ! -name '.*' | sort)
	nfind=$(find "$findings" -type f ! -name '.*' | wc -l)
	echo "fuzz: $h: replaying ${#inputs[@]} inputs ($nfind committed findings)"
	nice -n 19 "$bin" "${opts[@]}" -runs=1 "${inputs[@]}" >"$log" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] || reported >/dev/null; then
		tail -n 60 "$log"
		echo "fuzz: $h: replay FAILED (status $rc)"
		exit 1
	fi
	echo "fuzz: $h: all ${#inputs[@]} inputs ran clean"
	exit 0
fi

echo "fuzz: $h: fuzzing for $secs s"
nice -n 19 "$bin" "${opts[@]}" -max_total_time="$secs" "$corpus" "$seeds" "$findings" >"$log" 2>&1
rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n 1)
cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
ncorp=$(find "$corpus" -type f | wc -l)
echo "$last"
if [ "$rc" -ne 0 ] || reported >/dev/null; then
	tail -n 80 "$log"
	echo "fuzz: $h: FAILED (status $rc); inputs kept in $artifacts/"
	exit 1
fi
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$h" "$secs" "${execs:-0}" \
	"${cov:-0}" "${ft:-0}" "$ncorp" >>"$OUTPUT/fuzz/stats.tsv"
echo "fuzz: $h: ${execs:-0} executions in $secs s, cov ${cov:-0} ft ${ft:-0}, corpus $ncorp files"
