#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/vm/boot.sh DIR LOG [CMD]
#
# Boots DIR/vmlinuz with DIR/initramfs.cpio in qemu-system-x86_64 under TCG
# emulation (-cpu max, 2 vCPUs, 6 GiB), serial console into LOG, niced; the
# guest's /init runs the tests (or /vm/cmd.CMD) and powers off.  No KVM:
# on this machine's kind /dev/kvm opens, but -cpu host aborts qemu (setting
# MSR 0x10a fails) and -cpu host,-arch-capabilities or max hang after the
# firmware.  The guest gets at most ASCBPF_VM_TIMEOUT seconds (2400),
# ASCBPF_VM_MEM MiB (6144: test_convert_npu_train.py alone holds 2.5 GB,
# the OOM killer ended it in 3 GiB) and ASCBPF_VM_CPUS vCPUs (2).
# Exit status: qemu's, 124 on timeout.
set -u
dir=$1
log=$2
cmd=${3:-}
accel=(-accel tcg -cpu max)
append="console=ttyS0 panic=-1 quiet loglevel=4 nokaslr"
[ -n "$cmd" ] && append="$append ascbpf_vm_cmd=$cmd"
exec timeout "${ASCBPF_VM_TIMEOUT:-2400}" nice -n 19 qemu-system-x86_64 "${accel[@]}" \
	-smp "${ASCBPF_VM_CPUS:-2}" -m "${ASCBPF_VM_MEM:-6144}" -nographic -no-reboot -nodefaults \
	-serial stdio -kernel "$dir/vmlinuz" -initrd "$dir/initramfs.cpio" -append "$append" \
	</dev/null >"$log" 2>&1
