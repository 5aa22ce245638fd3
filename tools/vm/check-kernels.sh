#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/vm/check-kernels.sh   (make check-kernels)
#
# Runs the kernel-sensitive integration tests inside x86-64 VMs booted with
# Debian's own kernels, under TCG emulation, niced:
#   bullseye  5.10: no bpf_get_attach_cookie for uprobes, no task storage, no
#                   bpf_get_current_task_btf in uprobes: the fallback paths
#                   (user/trace/features.h): version, attach -p, npu_train
#                   against the journal, signals, the unwind guard (CO-RE
#                   reads of the kernel's return_instance)
#   bookworm  6.1:  no uprobe_multi (perf-event uprobes), the full subset:
#                   attach -p and -- CMD, every level on npu_train, drops,
#                   signals (SIGKILL of ascbpf), convert of the capture
# The kernels come from Debian's archive (tools/vm/fetch-kernel.sh, cached
# in $OUTPUT/vm/SUITE: a second run downloads nothing); the root file system
# is an initramfs of this build and this host's libraries
# (tools/vm/mkinitramfs.sh).  Prints per kernel the boot time and each
# test's time, and ends with the summed "N passed, N failed, N skipped".
# ASCBPF_VM_SUITES="bookworm" runs only those; ASCBPF_VM_TESTS_<suite>
# replaces a suite's test list.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
OUTPUT=${OUTPUT:-$top/build}
export OUTPUT
cd "$top" || exit 2

tests_bullseye="test_trace_kernel_floor.py test_trace_version.py test_trace_attach.py
	test_trace_fallbacks.py test_trace_signals.py test_trace_cxx_exceptions.py"
tests_bookworm="test_trace_kernel_floor.py test_trace_version.py test_trace_attach.py
	test_trace_cxx_exceptions.py test_trace_npu_train.py test_trace_levels.py
	test_trace_drops.py test_trace_signals.py test_convert_npu_train.py"

for tool in qemu-system-x86_64 cpio dpkg-deb apt-get; do
	if ! command -v "$tool" >/dev/null; then
		echo "check-kernels: $tool not found (apt-get install qemu-system-x86 cpio)" >&2
		exit 2
	fi
done
if [ ! -x /bin/busybox ]; then
	echo "check-kernels: /bin/busybox missing (apt-get install busybox-static)" >&2
	exit 2
fi

p=0 f=0 k=0
for suite in ${ASCBPF_VM_SUITES:-bullseye bookworm}; do
	dir=$OUTPUT/vm/$suite
	var=tests_$suite
	ovr=ASCBPF_VM_TESTS_$suite
	list=${!ovr:-${!var:-}}
	t0=$(date +%s.%N)
	if ! tools/vm/fetch-kernel.sh "$suite" "$dir"; then
		echo "check-kernels: $suite: no kernel" >&2
		f=$((f + 1))
		continue
	fi
	# shellcheck disable=SC2086
	nice -n 19 tools/vm/mkinitramfs.sh "$dir/initramfs.cpio" "$dir/modules" $list || exit 2
	t1=$(date +%s.%N)
	tools/vm/boot.sh "$dir" "$dir/console.log"
	rc=$?
	t2=$(date +%s.%N)
	echo "== $suite: kernel $(cat "$dir/release"), console $dir/console.log"
	grep -a -E '^(=== test_|PASS|FAIL|SKIP|vm:|vm-time|vm-result|=== vm-end)' \
		"$dir/console.log" |
		sed 's/^/   /'
	line=$(grep -a -E '^vm-result: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' \
		"$dir/console.log" |
	       tail -n 1)
	if [ -z "$line" ]; then
		echo "   no result from the guest (qemu exit $rc)"
		f=$((f + 1))
	else
		set -- ${line#vm-result: }
		p=$((p + $1)) f=$((f + $3)) k=$((k + $5))
	fi
	awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {
		printf "   host: fetch + initramfs %.1f s, VM %.1f s\n", b - a, c - b }'
done
echo "$p passed, $f failed, $k skipped"
[ "$f" -eq 0 ] && [ "$k" -eq 0 ]
