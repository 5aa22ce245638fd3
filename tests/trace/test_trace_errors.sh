#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# ascbpf trace's error cases: each is a clear message, exit status 2, and
# nothing written (no capture, no output directory left behind):
# missing PID, a process without Ascend libraries (the message names the
# libraries looked for), a non-empty output directory without --force, an
# output path that is a file, an unwritable directory, bad options, not root.
set -u
. "$ASCBPF_TOP/tests/lib/trace_lib.sh"

work=$(mktemp -d /tmp/ascbpf-trace-errors.XXXXXX)
sleeper=
cleanup() {
	[ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# expect_fail NAME PATTERN ARGS... : exit 2, PATTERN in stderr
expect_fail() {
	local name=$1 pat=$2 rc
	shift 2
	"$ASCBPF" "$@" >"$work/out" 2>"$work/err"
	rc=$?
	echo "--- $name: exit $rc: $(head -c 300 "$work/err")"
	[ "$rc" -eq 2 ] || fail "$name: exit status $rc, expected 2"
	grep -q -- "$pat" "$work/err" || fail "$name: message lacks '$pat'"
}

# a pid that does not exist: past pid_max
pid_max=$(cat /proc/sys/kernel/pid_max)
expect_fail "missing pid" "no such process" trace -p $((pid_max + 1)) -o "$work/o1"
[ ! -e "$work/o1" ] || fail "missing pid: output directory created"

# a process without Ascend libraries
sleep 60 &
sleeper=$!
expect_fail "non-Ascend process" "has no Ascend libraries" trace -p "$sleeper" -o "$work/o2"
grep -q "libtorch_npu.so" "$work/err" || fail "non-Ascend: libtorch_npu.so not named"
grep -q "libascend_hal.so" "$work/err" || fail "non-Ascend: libascend_hal.so not named"
[ ! -e "$work/o2" ] || fail "non-Ascend: output directory created"

# output directory not empty, output is a file, not writable
tt_build "$work" || fail "cannot build the target"
TT_LIBDIR=$work "$work/tt" -1 10 1000 >"$work/tt.out" 2>&1 &
tt=$!
for i in $(seq 1 100); do grep -q ready "$work/tt.out" && break; sleep 0.05; done
mkdir -p "$work/full" && echo x >"$work/full/keep"
expect_fail "non-empty dir" "not empty" trace -p "$tt" -o "$work/full" --duration 1
[ "$(ls "$work/full")" = keep ] || fail "non-empty dir: something was written"
echo x >"$work/afile"
expect_fail "output is a file" "not a directory" trace -p "$tt" -o "$work/afile" --duration 1
mkdir -p "$work/ro" && chmod 0555 "$work/ro"
if [ "$(id -u)" -eq 0 ]; then
	# root ignores modes: a read-only bind mount makes it unwritable for root too
	mount --bind -o ro "$work/ro" "$work/ro" 2>/dev/null && ro_mounted=1
fi
if [ "${ro_mounted:-0}" = 1 ] || [ "$(id -u)" -ne 0 ]; then
	expect_fail "unwritable dir" "not writable" trace -p "$tt" -o "$work/ro" --duration 1
	[ "${ro_mounted:-0}" = 1 ] && umount "$work/ro"
else
	fail "cannot make an unwritable directory to test"
fi
# --force writes into the non-empty directory
"$ASCBPF" trace -p "$tt" -o "$work/full" --force --no-convert --duration 0.5 >"$work/out" 2>"$work/err"
rc=$?
[ "$rc" -eq 0 ] || fail "--force: exit $rc: $(cat "$work/err")"
[ -s "$work/full/ascbpf-$tt.cap" ] || fail "--force: no capture"
kill "$tt"; wait "$tt" 2>/dev/null

# bad options
expect_fail "no target" "exactly one of" trace -o "$work/o3"
expect_fail "two kinds of target" "exactly one of" trace -p 1 --comm x
expect_fail "bad pid" "not a" trace -p abc
expect_fail "bad schedule key" "unknown key" trace --schedule wait=1,foo=2 -p 1
expect_fail "bad schedule value" "not a non-negative integer" trace --schedule wait=-1 -p 1
expect_fail "bad activity" "unknown activity" trace --activities gpu -p 1
expect_fail "bad level" "0, 1 or 2" trace --level 3 -p 1
expect_fail "bad ring size" "power of two" trace --ringbuf-size 3 -p 1
expect_fail "bad duration" "positive number" trace --duration 0 -p 1
expect_fail "bad step" "LIB:SYMBOL" trace --step foo -p 1
expect_fail "unknown option" "unknown option" trace --frobnicate -p 1
# a worker name with '/' is refused as convert refuses it (it names a directory; issue 19)
expect_fail "worker name with /" "without '/'" trace --worker-name ../../y -p 1 -o "$work/o4"
expect_fail "empty worker name" "without '/'" trace --worker-name "" -p 1 -o "$work/o4"
[ ! -e "$work/o4" ] || fail "worker name: output directory created"
[ ! -e ./result ] || [ -n "$(ls -A ./result 2>/dev/null)" ] || fail "an empty ./result was left"

# not root: drop to nobody (no capabilities)
if command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$ASCBPF" trace -p 1 -o "$work/o4" >"$work/out" 2>"$work/err"
	rc=$?
	echo "--- not root: exit $rc: $(cat "$work/err")"
	[ "$rc" -eq 2 ] || fail "not root: exit $rc"
	grep -q "CAP_BPF" "$work/err" || fail "not root: message lacks CAP_BPF"
else
	fail "setpriv missing: cannot test the unprivileged case"
fi
echo "PASS: every error case exits 2 with its message and writes nothing"
