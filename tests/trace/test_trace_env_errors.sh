#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The error cases of issue 3 that test_trace_errors.sh does not reach, each
# made real rather than simulated inside ascbpf:
#   * a PID that is gone but still listed (a zombie: /proc/PID exists, the
#     process has exited): exit 2, says it exited, writes nothing;
#   * a kernel without BTF, and one without uprobes: /sys/kernel/btf or
#     /sys/bus/event_source/devices hidden by an empty tmpfs in a private
#     mount namespace (unshare -m), so ascbpf sees exactly what such a
#     kernel shows; exit 2, names the kernel option, writes nothing;
#   * a symbol missing: a libascendcl.so exporting aclInit and aclrtMalloc
#     only; the trace attaches the rest, warns once per missing function
#     (naming it), exits 0, and captures every aclrtMalloc call.
set -u
. "$ASCBPF_TOP/tests/lib/trace_lib.sh"

work=$(mktemp -d /tmp/ascbpf-trace-env.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT

# expect_fail NAME PATTERN CMD... : exit 2, PATTERN in stderr, -o $work/o.NAME never created
expect_fail() {
	local name=$1 pat=$2 rc
	shift 2
	"$@" >"$work/out" 2>"$work/err"
	rc=$?
	echo "--- $name: exit $rc: $(head -c 300 "$work/err")"
	[ "$rc" -eq 2 ] || fail "$name: exit status $rc, expected 2"
	grep -q -- "$pat" "$work/err" || fail "$name: message lacks '$pat'"
	[ ! -e "$work/o.$name" ] || fail "$name: the output directory was created"
}

# a zombie: the subshell's child exits at once and is not reaped while the subshell sleeps
( sleep 0 & echo $! >"$work/zpid"; exec sleep 30 ) &
pids+=($!)
for i in $(seq 1 100); do
	z=$(cat "$work/zpid" 2>/dev/null)
	[ -n "$z" ] && [ "$(awk '{print $3}' "/proc/$z/stat" 2>/dev/null)" = Z ] && break
	sleep 0.05
done
[ "$(awk '{print $3}' "/proc/$z/stat" 2>/dev/null)" = Z ] || fail "could not make a zombie"
expect_fail zombie "has exited" "$ASCBPF" trace -p "$z" -o "$work/o.zombie"

# a running target for the kernel checks (they come before anything is attached)
tt_build "$work" || fail "cannot build the target"
TT_LIBDIR=$work "$work/tt" -1 10 1000 >"$work/tt.out" 2>&1 &
tt=$!
pids+=($tt)
for i in $(seq 1 100); do grep -q ready "$work/tt.out" && break; sleep 0.05; done
grep -q ready "$work/tt.out" || fail "target not ready"

expect_fail no-btf "CONFIG_DEBUG_INFO_BTF" unshare -m sh -c \
	'mount -t tmpfs none /sys/kernel/btf && exec "$0" trace -p "$1" -o "$2"' \
	"$ASCBPF" "$tt" "$work/o.no-btf"
expect_fail no-uprobes "CONFIG_UPROBE_EVENTS" unshare -m sh -c \
	'mount -t tmpfs none /sys/bus/event_source/devices && exec "$0" trace -p "$1" -o "$2"' \
	"$ASCBPF" "$tt" "$work/o.no-uprobes"
# the hiding itself worked (else the two cases above prove nothing)
unshare -m sh -c 'mount -t tmpfs none /sys/kernel/btf && test ! -e /sys/kernel/btf/vmlinux' ||
	fail "cannot hide /sys/kernel/btf/vmlinux"
[ -e /sys/kernel/btf/vmlinux ] || fail "the host lost its BTF file"

# a symbol missing: libascendcl.so with two of the probe table's functions
mkdir "$work/part"
cat >"$work/part/acl.c" <<'EOF'
#include <stdlib.h>
int aclInit(const char *cfg) { (void)cfg; return 0; }
int aclrtMalloc(void **p, size_t size, int policy) { (void)policy; *p = malloc(size); return 0; }
EOF
cat >"$work/part/main.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	int (*m)(void **, size_t, int) = h ? (int (*)(void **, size_t, int))dlsym(h, "aclrtMalloc") : NULL;
	volatile long n = 0;

	if (!m)
		return 1;
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		void *p;

		m(&p, 64, 0);
		free(p);
		n++;
		usleep(2000);
	}
}
EOF
gcc -O2 -shared -fPIC -o "$work/part/libascendcl.so" "$work/part/acl.c" || fail "build lib"
gcc -O2 -o "$work/part/partial" "$work/part/main.c" -ldl || fail "build program"
"$work/part/partial" "$work/part/libascendcl.so" >"$work/part/out" 2>&1 &
part=$!
pids+=($part)
for i in $(seq 1 100); do grep -q ready "$work/part/out" && break; sleep 0.05; done
"$ASCBPF" trace --level 1 -p "$part" -o "$work/o.part" --no-convert --duration 1 \
	>"$work/out" 2>"$work/err"
rc=$?
echo "--- missing symbols: exit $rc"
grep -c "not attached" "$work/err"
[ "$rc" -eq 0 ] || fail "missing symbols: exit $rc: $(tail -5 "$work/err")"
for fn in aclrtFree aclrtFreeHost aclrtMallocHost; do
	n=$(grep -c "libascendcl.so:$fn not attached: symbol not found" "$work/err")
	[ "$n" -eq 1 ] || fail "missing symbols: $fn warned $n times"
done
kill -0 "$part" || fail "missing symbols: the target died"
cap="$work/o.part/ascbpf-$part.cap"
[ -s "$cap" ] || fail "missing symbols: no capture"
"$ASCBPF" dump --json "$cap" >"$work/dump" || fail "dump"
$PY - "$work/dump" <<'EOF' || fail "missing symbols: the present function was not captured"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
probes = {r["probe_id"]: r["symbol"] for r in recs if r["type"] == "probe"}
assert "aclrtMalloc" in probes.values(), probes
assert "aclrtFree" not in probes.values(), probes
ids = [k for k, v in probes.items() if v == "aclrtMalloc"]
ent = sum(1 for r in recs if r["type"] == "enter" and r["probe_id"] in ids)
ext = sum(1 for r in recs if r["type"] == "exit" and r["probe_id"] in ids)
print("aclrtMalloc: %d enter, %d exit" % (ent, ext))
# 2 ms between calls for 1 s: a few hundred calls, every one paired (at most the edges not)
assert ent > 50 and abs(ent - ext) <= 1, (ent, ext)
EOF
echo "PASS: zombie, no BTF, no uprobes: exit 2, nothing written;" \
	"missing symbols: warned, the rest traced"
