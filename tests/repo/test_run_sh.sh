#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tests/run.sh counts what it runs: real cmocka binaries that pass, fail, skip
# and crash (SIGSEGV after a passing group), and integration scripts that
# pass, fail and skip (77).  Checks the closing line, the exit status, that
# a skip fails the run unless ASCBPF_ALLOW_SKIP=1, and that each run keeps its
# logs in its own directory.
set -u
top=${ASCBPF_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d /tmp/ascbpf-runsh.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}

mkdir -p "$tmp/out/tests" "$tmp/it"
cat >"$tmp/cm.c" <<'C'
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
static void ok(void **s) { (void)s; assert_int_equal(1, 1); }
static void bad(void **s) { (void)s; assert_int_equal(1, 2); }
static void skipme(void **s) { (void)s; skip(); }
int main(void)
{
	const struct CMUnitTest a[] = { cmocka_unit_test(ok), cmocka_unit_test(ok) };
	const struct CMUnitTest b[] = { cmocka_unit_test(ok), cmocka_unit_test(MODE) };
	int r = cmocka_run_group_tests_name("a", a, NULL, NULL);
#ifdef CRASH
	raise(SIGSEGV);
#endif
	return r + cmocka_run_group_tests_name("b", b, NULL, NULL);
}
C
for m in ok bad skipme; do
	gcc -O0 -Wall -Werror -Wno-unused-function -DMODE=$m -o "$tmp/out/tests/test_$m" "$tmp/cm.c" -lcmocka || fail "build $m"
done
gcc -O0 -Wall -Werror -Wno-unused-function -DMODE=ok -DCRASH -o "$tmp/out/tests/test_crash" "$tmp/cm.c" -lcmocka ||
	fail "build crash"

run() {	# run EXPECTED-RC EXPECTED-LINE ARGS...
	local want_rc=$1 want=$2 rc last
	shift 2
	env OUTPUT="$tmp/out" ASCBPF_INTEGRATION_DIR="$tmp/it" "$top/tests/run.sh" "$@" \
		>"$tmp/log" 2>&1
	rc=$?
	last=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$tmp/log" | tail -n 1)
	[ "$last" = "$want" ] || { cat "$tmp/log"; fail "run.sh $*: '$last', expected '$want'"; }
	[ "$rc" -eq "$want_rc" ] || { cat "$tmp/log"; fail "run.sh $*: exit $rc, expected $want_rc"; }
	echo "ok: run.sh $* -> $last, exit $rc"
}

# cmocka: test_ok 4 passed; test_bad 3 passed 1 failed; test_skipme 3 passed 1 skipped;
# test_crash 2 passed, then SIGSEGV: one failure
run 0 "4 passed, 0 failed, 0 skipped" --unit test_ok
run 1 "3 passed, 1 failed, 0 skipped" --unit test_bad
run 1 "2 passed, 1 failed, 0 skipped" --unit test_crash
grep -q "FAIL: test_crash exited with status" "$tmp/log" || fail "crash not named"
run 1 "3 passed, 0 failed, 1 skipped" --unit test_skipme
grep -q "tests were skipped" "$tmp/log" || fail "no message for the skip"
ASCBPF_ALLOW_SKIP=1 run 0 "3 passed, 0 failed, 1 skipped" --unit test_skipme
run 1 "12 passed, 2 failed, 1 skipped" --unit

printf '#!/bin/sh\necho fine\nexit 0\n' >"$tmp/it/test_p.sh"
printf '#!/bin/sh\necho "needs a thing we lack"\nexit 77\n' >"$tmp/it/test_s.sh"
printf 'import sys\nprint("broken")\nsys.exit(3)\n' >"$tmp/it/test_f.py"
run 0 "1 passed, 0 failed, 0 skipped" --integration test_p
run 1 "0 passed, 0 failed, 1 skipped" --integration test_s
grep -q "skipped: test_s.sh: needs a thing we lack" "$tmp/log" || fail "skip reason not shown"
ASCBPF_ALLOW_SKIP=1 run 0 "0 passed, 0 failed, 1 skipped" --integration test_s
run 1 "0 passed, 1 failed, 0 skipped" --integration test_f
run 1 "13 passed, 3 failed, 2 skipped"

# every run above has its own log directory (none removed: they are recent); latest is
# the newest; a run that ended more than 12 hours ago loses its directory, one whose pid
# still runs keeps it
n=$(ls -1d "$tmp/out/test-logs"/run-* | wc -l)
[ "$n" -eq 11 ] || { ls -la "$tmp/out/test-logs"; fail "$n run directories, expected 11"; }
[ -f "$tmp/out/test-logs/latest/test_f.py.log" ] || fail "latest has no test_f.py.log"
grep -q broken "$tmp/out/test-logs/latest/test_f.py.log" || fail "test_f.py.log lacks its output"
mkdir "$tmp/out/test-logs/run-19700101T000000Z-999999999" "$tmp/out/test-logs/run-19700101T000000Z-$$"
touch -d '13 hours ago' "$tmp/out/test-logs"/run-19700101T000000Z-*
run 0 "4 passed, 0 failed, 0 skipped" --unit test_ok
[ ! -d "$tmp/out/test-logs/run-19700101T000000Z-999999999" ] || fail "an old ended run was kept"
[ -d "$tmp/out/test-logs/run-19700101T000000Z-$$" ] || fail "a live run's directory was removed"
echo "PASS: run.sh counts passes, failures, crashes and skips"
