# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Helpers of the test_trace_* tests (sourced).  Needs: $OUTPUT, $ASCBPF_TOP.
#
#   tt_build DIR        builds DIR/tt, DIR/libascendcl.so, DIR/libtorch_npu.so, libtorch_cpu.so
#                       from tests/lib/trace_target.c
#   tt_count FILE NAME  lines of NAME in a journal FILE
#   cap_json CAP        ascbpf dump --json CAP
#   fail MSG            prints MSG and exits 1

ASCBPF=${ASCBPF:-$OUTPUT/ascbpf}
PY=${PYTHON:-/usr/bin/python3}

fail() {
	echo "FAIL: $*"
	exit 1
}

tt_build() {
	local d=$1 src=$ASCBPF_TOP/tests/lib/trace_target.c cc="gcc -O2 -g -Wall -Werror"
	$cc -shared -fPIC -DTT_ACL -o "$d/libascendcl.so" "$src" -lpthread || return 1
	$cc -shared -fPIC -DTT_STEP -o "$d/libtorch_npu.so" "$src" -lpthread || return 1
	$cc -shared -fPIC -DTT_STEP -o "$d/libtorch_cpu.so" "$src" -lpthread || return 1
	$cc -o "$d/tt" "$src" -ldl -lpthread || return 1
}

# Waits until FILE has a line starting with "ready"; prints its pid.
tt_wait_ready() {
	local f=$1 i
	for i in $(seq 1 200); do
		if grep -q '^ready' "$f" 2>/dev/null; then
			sed -n 's/^ready \([0-9]*\)$/\1/p' "$f" | head -n 1
			return 0
		fi
		sleep 0.05
	done
	return 1
}
