#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/vm/check-arm64.sh - `make check-arm64`, first stage: the aarch64 cross
# build's (make ARCH=arm64, in $ARM64_OUTPUT, default build-arm64/) cmocka unit
# tests, each run under Debian's qemu-user (qemu-aarch64, the :arm64 libraries
# of multiarch and libc6-arm64-cross), through tests/run.sh, which prints the
# closing "N passed, N failed, N skipped" line.  Every unit binary runs but
# those of NOT_HERE, each with its reason: what qemu-user does not emulate (the
# bpf() syscall, the model's ioctls), or an x86-64 expectation the test still
# holds, or x86-64 code (the CPython offset finder) not yet ported: they are
# for the VM stage or the arm64 work that remains (README "aarch64").
# ARM64_UNIT overrides the list (name filters).  Niced: the machine is shared.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
out=${ARM64_OUTPUT:-$top/build-arm64}
# No -L prefix: with one, qemu-user resolves "/" itself under the prefix, which
# breaks the tests that walk absolute paths (user/lib/safeio); the :arm64
# loader and libraries are where multiarch put them.
runner=qemu-aarch64
if ! command -v qemu-aarch64 >/dev/null; then
	echo "check-arm64: no qemu-aarch64 (make deps)" >&2
	exit 2
fi
declare -A NOT_HERE=(
	[test_attach]="attaches uprobes: qemu-user has no bpf() syscall (VM stage)"
	[test_ioctl]="the model's device ioctls: qemu-user does not translate them (VM stage)"
	[test_elfsym]="its fixture checks are x86-64's (e_machine EM_X86_64)"
	[test_probes]="expects the x86-64 endbr64 skip of its fixture"
	[test_pystack]="the CPython offsets are found by decoding x86-64 libpython only"
	[test_seqnr]="its live group loads the host's (x86-64) libtorch_cpu.so"
)
if [ -n "${ARM64_UNIT:-}" ]; then
	unit=$ARM64_UNIT
else
	unit=
	for b in "$out"/tests/test_*; do
		[ -x "$b" ] && [ "${b%.d}" = "$b" ] || continue
		n=$(basename "$b")
		if [ -n "${NOT_HERE[$n]:-}" ]; then
			echo "not in this stage: $n: ${NOT_HERE[$n]}"
		else
			unit="$unit $n"
		fi
	done
fi
[ -n "$unit" ] || { echo "check-arm64: no unit test in $out/tests (make ARCH=arm64)" >&2; exit 2; }
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
passed=0 failed=0 skipped=0
for t in $unit; do
	OUTPUT=$out ASCBPF_UNIT_RUNNER=$runner nice -n 19 tests/run.sh --unit "$t" \
		>"$logs/$t.log" 2>&1
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$logs/$t.log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "FAIL: $t: no result line"; tail -n 20 "$logs/$t.log"; failed=$((failed + 1))
		continue
	fi
	read -r p _ f _ s _ <<<"${line//,/}"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	if [ "$f" -eq 0 ] && [ "$s" -eq 0 ]; then
		echo "PASS: $t ($p)"
	else
		echo "FAIL: $t"
		tail -n 30 "$logs/$t.log"
	fi
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$skipped" -eq 0 ]
