#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tools/setup.sh - make this machine able to build, test and demo ascbpf.
#
# Idempotent and quiet when everything is already there.  Installs missing
# Debian packages (needs root and Debian's archive), and mounts tracefs and
# bpffs when they are not mounted.  Exit status 0 when ready, 1 otherwise,
# with a message saying what is missing.
set -u

# Build and test dependencies, one Debian package each (README: Dependencies).
PACKAGES=(
	make gcc clang llvm pkg-config
	libbpf-dev bpftool libelf-dev zlib1g-dev libzstd-dev zstd libsqlite3-dev
	libcmocka-dev libfuse3-dev fuse3
	python3 python3-torch libtorch-dev bpftrace strace
	binutils man-db time clang-format
	libclang-rt-14-dev
	prometheus
	# the aarch64 cross build and its unit tests under qemu-user (make ARCH=arm64,
	# make check-arm64): Debian's cross toolchain and the :arm64 multiarch libraries
	gcc-aarch64-linux-gnu g++-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-user
	libc6:arm64 libbpf-dev:arm64 libelf-dev:arm64 zlib1g-dev:arm64 libzstd-dev:arm64
	libsqlite3-dev:arm64 libfuse3-dev:arm64 libcmocka-dev:arm64 libstdc++6:arm64
)
# binutils: nm/readelf/c++filt, the tests' independent ELF oracle (gcc pulls it in today);
# libsqlite3-dev: --export-type db (torch_npu's database output, user/convert/db_export.c);
# man-db: test_docs renders the man page; time: /usr/bin/time, the benchmarks' peak RSS;
# libtorch-dev: PyTorch's C++ headers, for npu_model's torch_npu backend
# (npu_model/torch_npu/pytorch/backend.cpp);
# clang-format: make lint / make format (.clang-format);
# libclang-rt-14-dev: clang's libFuzzer and sanitizer runtimes (tests/fuzz/, -fsanitize=fuzzer;
# clang-14 only recommends it).
# prometheus: the agent's integration test scrapes it with Debian's real server and checks
# the shipped alerting rules with its promtool (tests/agent/); the package enables a
# prometheus.service of its own, which the tests do not use.
# util-linux (unshare, setpriv: error and container tests) is Essential, always there.

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	# :arm64 packages need the architecture in dpkg (the install below then retries after
	# apt-get update, which fetches arm64's lists)
	if [ "$(id -u)" -eq 0 ] && printf '%s\n' "${missing[@]}" | grep -q ':arm64$' &&
		! dpkg --print-foreign-architectures | grep -qx arm64; then
		dpkg --add-architecture arm64
	fi
	if [ "$(id -u)" -ne 0 ]; then
		echo "setup: missing packages: ${missing[*]}" >&2
		echo "setup: run as root (sudo make ...) to install them, or: sudo apt-get install ${missing[*]}" >&2
		exit 1
	fi
	echo "setup: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y -qq "${missing[@]}" >/tmp/ascbpf-setup.log 2>&1; then
		apt-get update -qq >>/tmp/ascbpf-setup.log 2>&1
		if ! apt-get install -y -qq "${missing[@]}" >>/tmp/ascbpf-setup.log 2>&1; then
			echo "setup: apt-get install failed; see /tmp/ascbpf-setup.log" >&2
			tail -n 20 /tmp/ascbpf-setup.log >&2
			exit 1
		fi
	fi
fi

# Kernel interfaces: tracefs for tracepoints/uprobe events, bpffs for pinning.
mount_if_missing() {
	local fstype=$1 dir=$2
	grep -qs " $dir $fstype " /proc/mounts && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "setup: $fstype is not mounted at $dir (needs root)" >&2
		return 1
	fi
	mkdir -p "$dir" && mount -t "$fstype" "$fstype" "$dir" || {
		echo "setup: cannot mount $fstype at $dir" >&2
		return 1
	}
}
rc=0
mount_if_missing tracefs /sys/kernel/tracing || rc=1
mount_if_missing bpf /sys/fs/bpf || rc=1
if [ ! -e /sys/kernel/debug/tracing ] && [ -d /sys/kernel/debug ] && [ "$(id -u)" -eq 0 ]; then
	grep -qs " /sys/kernel/debug debugfs " /proc/mounts || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
fi
[ -c /dev/fuse ] || { echo "setup: /dev/fuse is missing: npu_model's device nodes need FUSE" >&2; rc=1; }
[ -r /sys/kernel/btf/vmlinux ] || { echo "setup: no kernel BTF at /sys/kernel/btf/vmlinux: ascbpf needs CO-RE" >&2; rc=1; }
exit $rc
