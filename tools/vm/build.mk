# tools/vm/: `make check-kernels` boots Debian's 5.10 and 6.1 kernels in
# x86-64 VMs (qemu, TCG) and runs the kernel-sensitive integration tests
# there (tools/vm/check-kernels.sh).  Not part of `make check`: about 25
# minutes on the loaded 2-core machine (BENCHMARKS.md "Kernels").
.PHONY: check-kernels
check-kernels: all
	$(Q)OUTPUT=$(abspath $(OUTPUT)) nice -n 19 tools/vm/check-kernels.sh
