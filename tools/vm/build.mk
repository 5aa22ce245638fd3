# tools/vm/: `make check-kernels` boots Debian's 5.10 and 6.1 kernels in
# x86-64 VMs (qemu, TCG) and runs the kernel-sensitive integration tests
# there (tools/vm/check-kernels.sh).  Not part of `make check`: about 25
# minutes on the loaded 2-core machine (BENCHMARKS.md "Kernels").
.PHONY: check-kernels
check-kernels: all
	$(Q)OUTPUT=$(abspath $(OUTPUT)) nice -n 19 tools/vm/check-kernels.sh

# `make check-arm64`: the aarch64 cross build (make ARCH=arm64 into build-arm64/),
# then its unit tests under qemu-user (tools/vm/check-arm64.sh); README "aarch64".
.PHONY: check-arm64
check-arm64: deps
	$(Q)nice -n 19 $(MAKE) --no-print-directory ARCH=arm64 OUTPUT=build-arm64 all
	$(Q)ARM64_OUTPUT=$(abspath build-arm64) tools/vm/check-arm64.sh
