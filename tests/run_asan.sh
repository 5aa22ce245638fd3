#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tests/run_asan.sh - the sanitizer stage of `make check` (issue 19), run by
# `make check-asan`: $ASAN_OUTPUT is the tree built with
# -fsanitize=address,undefined -fno-sanitize-recover=all (only what this
# stage runs, `make asan-build`: ascbpf and the unit tests, with the npu_model
# objects those link; the BPF objects are not sanitized), $OUTPUT the normal
# tree.
#
# Runs the unit tests of $ASAN_OUTPUT, then the integration tests named in
# $ASAN_INTEGRATION (substrings of test file names, as tests/run.sh takes
# them; default: trace, convert and report of every npu_train scenario, and
# the bad-input reproducers of test_convert_messages) with the sanitized
# ascbpf against the normal npu_model: a simulator built with ASAN is a
# different program (its code is what ascbpf's discovery decodes, its libfuse
# leaks at exit), and the stage tests ascbpf.  The integration tests see a
# tree $ASAN_OUTPUT/mix: $OUTPUT's entries as links, ascbpf the sanitized one.
# Every sanitized process writes its reports to $ASAN_OUTPUT/sanitizer-logs/
# (log_path), so a report fails the stage even where the process's exit
# status is not checked (a daemon, the traced workload, a command expected to
# fail): the stage passes only when the tests pass and that directory stays
# empty.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
: "${OUTPUT:?OUTPUT: the normal build tree}"
: "${ASAN_OUTPUT:?ASAN_OUTPUT: the sanitizer build tree}"
ASAN_INTEGRATION=${ASAN_INTEGRATION:-"test_trace_npu_train test_convert_npu_train \
test_report_scenarios test_convert_messages"}
logs=$ASAN_OUTPUT/sanitizer-logs
mix=$ASAN_OUTPUT/mix
rm -rf "$mix"
mkdir -p "$mix" || exit 1
for e in "$OUTPUT"/*; do
	case "$(basename "$e")" in ascbpf | test-logs) continue ;; esac
	[ "$(cd "$e" 2>/dev/null && pwd -P)" = "$(cd "$ASAN_OUTPUT" && pwd -P)" ] && continue
	ln -s "$e" "$mix/$(basename "$e")"
done
ln -s "$ASAN_OUTPUT/ascbpf" "$mix/ascbpf"

rm -rf "$logs"
mkdir -p "$logs" || exit 1
# abort_on_error=0: exit with exitcode (a status no test expects) rather than SIGABRT;
# leaks are reported (detect_leaks), UBSAN stops at the first report (-fno-sanitize-recover)
ASAN_OPTIONS="log_path=$logs/asan:exitcode=86:detect_leaks=1:abort_on_error=0"
export ASAN_OPTIONS="$ASAN_OPTIONS:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1:halt_on_error=1:exitcode=86"
export LSAN_OPTIONS="exitcode=86"

start=$(date +%s)
rc=0
OUTPUT=$ASAN_OUTPUT "$top/tests/run.sh" --unit || rc=1
for t in $ASAN_INTEGRATION; do
	OUTPUT=$mix "$top/tests/run.sh" --integration "$t" || rc=1
done
reports=$(find "$logs" -type f | sort)
if [ -n "$reports" ]; then
	for f in $reports; do
		echo "=== sanitizer report $f"
		head -n 60 "$f"
	done
	echo "sanitizer stage: $(echo "$reports" | wc -l) report(s)"
	rc=1
fi
verdict=passed
[ $rc -eq 0 ] || verdict=FAILED
echo "sanitizer stage: $verdict in $(( $(date +%s) - start )) s"
exit $rc
