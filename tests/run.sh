#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tests/run.sh [--unit|--integration|--fuzz] [NAME-FILTER]
#
# Runs the cmocka unit binaries ($OUTPUT/tests/test_*, built from
# tests/<room>/test_*.c), the integration tests (tests/<room>/test_*.sh and
# test_*.py, room by room) and the fuzz stage (per libFuzzer harness
# $OUTPUT/fuzz/bin/fuzz_*: the replay of seeds and findings, then FUZZ_SECONDS
# (30) of fuzzing, each counted as one test, see tests/fuzz/fuzz.sh; with --fuzz
# or ASCBPF_REQUIRE_FUZZ=1 no harness built is a failure), then prints one
# closing line "N passed, N failed, N skipped".  An integration test exits 0 (pass),
# 77 (skip: it must print the reason) or anything else (fail).  A skip fails
# the run unless ASCBPF_ALLOW_SKIP=1: on our machines and in CI nothing may be
# skipped.  Each test runs under a timeout ($ASCBPF_TEST_TIMEOUT s, 300).
# A cmocka binary counts its own tests; one that exits non-zero without a
# FAILED line (crash, timeout) counts as one failure, and cmocka's SKIPPED
# tests count as skips.
#
# Logs go to $OUTPUT/test-logs/run-<UTC time>-<pid>/ (one directory per run,
# so runs side by side in one tree never overwrite each other's logs);
# $OUTPUT/test-logs/latest points at the newest.  Directories of runs that
# have ended (their pid is gone) are removed after 12 hours.
# NAME-FILTER is a substring of the unit binary's name, or of ROOM/FILE for an
# integration test (so `trace/` runs one room's).
# ASCBPF_INTEGRATION_DIR replaces the rooms by one folder (tests of this script).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
OUTPUT=${OUTPUT:-$top/build}
export OUTPUT ASCBPF_TOP=$top
timeout_s=${ASCBPF_TEST_TIMEOUT:-300}
# make check sets it: no fuzz harness built is then a failure (not inherited by nested runs)
require_fuzz=${ASCBPF_REQUIRE_FUZZ:-0}
unset ASCBPF_REQUIRE_FUZZ
mode=all
filter=""
for a in "$@"; do
	case "$a" in
	--unit) mode=unit ;;
	--integration) mode=integration ;;
	--fuzz) mode=fuzz ;;
	*) filter=$a ;;
	esac
done

passed=0 failed=0 skipped=0
failed_names=() skipped_names=()
logroot=$OUTPUT/test-logs
logdir=$logroot/run-$(date -u +%Y%m%dT%H%M%SZ)-$$
mkdir -p "$logdir" || exit 1
ln -sfn "$(basename "$logdir")" "$logroot/latest.tmp.$$" &&
	mv -T "$logroot/latest.tmp.$$" "$logroot/latest"
# logs of the flat layout (before per-run directories), and old runs that have ended:
# never a directory a run side by side still writes to
find "$logroot" -maxdepth 1 -type f -name 'test_*.log' -delete
for old in $(find "$logroot" -maxdepth 1 -type d -name 'run-*' -mmin +720); do
	kill -0 "${old##*-}" 2>/dev/null || rm -rf "$old"
done

# sum_of SED-SCRIPT FILE: the sum of the numbers the script prints (0 for none)
sum_of() {
	sed -n "$1" "$2" | awk '{s+=$1} END {print s+0}'
}

run_unit() {
	local bin=$1 name out rc p f s
	name=$(basename "$bin")
	out=$logdir/$name.log
	# ASCBPF_UNIT_RUNNER: what runs a binary of another architecture (make check-arm64's
	# qemu-aarch64); empty: run it directly
	timeout "$timeout_s" ${ASCBPF_UNIT_RUNNER:-} "$bin" >"$out" 2>&1
	rc=$?
	cat "$out"
	p=$(sum_of 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' "$out")
	f=$(sum_of 's/^\[  FAILED  \] \([0-9]*\) test(s), listed below:/\1/p' "$out")
	s=$(sum_of 's/^\[  SKIPPED \] \([0-9]*\) test(s), listed below:/\1/p' "$out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1	# crashed or timed out before cmocka could count
		echo "FAIL: $name exited with status $rc"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	[ "$f" -gt 0 ] && failed_names+=("$name")
	[ "$s" -gt 0 ] && skipped_names+=("$name: $s cmocka test(s) skipped")
}

run_integration() {
	local t=$1 name out rc
	name=$(basename "$t")
	out=$logdir/$name.log
	echo "=== $name"
	case "$t" in
	*.py) timeout "$timeout_s" "${PYTHON:-/usr/bin/python3}" "$t" >"$out" 2>&1 ;;
	*) timeout "$timeout_s" bash "$t" >"$out" 2>&1 ;;
	esac
	rc=$?
	case $rc in
	0) passed=$((passed + 1)); tail -n 3 "$out"; echo "PASS: $name" ;;
	77)
		skipped=$((skipped + 1))
		skipped_names+=("$name: $(tail -n 1 "$out")")
		echo "SKIP: $name: $(tail -n 1 "$out")" ;;
	*)
		failed=$((failed + 1))
		failed_names+=("$name")
		tail -n 40 "$out"
		echo "FAIL: $name (status $rc, log $out)" ;;
	esac
}

# the fuzz stages of tests/fuzz/fuzz.sh, counted as integration tests are
run_fuzz() {
	local h=$1 stage=$2 name out rc
	name=$h.$stage
	out=$logdir/$name.log
	echo "=== $name"
	timeout $((${FUZZ_SECONDS:-30} + timeout_s)) bash "$top/tests/fuzz/fuzz.sh" "$stage" "$h" \
		>"$out" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		passed=$((passed + 1)); tail -n 2 "$out"; echo "PASS: $name"
	else
		failed=$((failed + 1))
		failed_names+=("$name")
		tail -n 40 "$out"
		echo "FAIL: $name (status $rc, log $out)"
	fi
}

if [ "$mode" = all ] || [ "$mode" = unit ]; then
	for bin in "$OUTPUT"/tests/test_*; do
		[ -x "$bin" ] || continue
		case "$(basename "$bin")" in *"$filter"*) ;; *) continue ;; esac
		run_unit "$bin"
	done
fi
if [ "$mode" = all ] || [ "$mode" = integration ]; then
	if [ -n "${ASCBPF_INTEGRATION_DIR:-}" ]; then
		idirs=("$ASCBPF_INTEGRATION_DIR")
	else
		idirs=("$top"/tests/*/)
	fi
	for idir in "${idirs[@]}"; do
		idir=${idir%/}
		for t in "$idir"/test_*.sh "$idir"/test_*.py; do
			[ -f "$t" ] || continue
			case "$(basename "$idir")/$(basename "$t")" in
			*"$filter"*) ;;
			*) continue ;;
			esac
			run_integration "$t"
		done
	done
fi

if [ "$mode" = all ] || [ "$mode" = fuzz ]; then
	nfuzz=0
	for bin in "$OUTPUT"/fuzz/bin/fuzz_*; do
		[ -x "$bin" ] || continue
		case "$(basename "$bin")" in *"$filter"*) ;; *) continue ;; esac
		nfuzz=$((nfuzz + 1))
		for stage in replay fuzz; do
			run_fuzz "$(basename "$bin")" "$stage"
		done
	done
	if [ "$nfuzz" -eq 0 ] && [ -z "$filter" ] &&
		{ [ "$mode" = fuzz ] || [ "$require_fuzz" = 1 ]; }; then
		failed=$((failed + 1))
		failed_names+=("fuzz stage: no harness in $OUTPUT/fuzz/bin (make fuzz-build)")
	fi
fi

echo
for n in "${failed_names[@]}"; do echo "failed: $n"; done
for n in "${skipped_names[@]}"; do echo "skipped: $n"; done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] || exit 1
if [ "$skipped" -gt 0 ] && [ "${ASCBPF_ALLOW_SKIP:-0}" != 1 ]; then
	echo "tests were skipped: nothing may be skipped on our machines or in CI" \
		"(ASCBPF_ALLOW_SKIP=1 to allow)"
	exit 1
fi
exit 0
