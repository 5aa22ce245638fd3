# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# One build for everything, out of tree into $(OUTPUT).
#
#   make            build ascbpf, the BPF objects, npu_model and the tests
#   make demo       install deps, trace npu_train, write ./result/*_ascend_pt
#   make check      install deps, build, run unit + integration tests
#   make bench      run the benchmarks and rewrite BENCHMARKS.md
#   make check-kernels  the kernel-sensitive tests in VMs of Debian's 5.10 and 6.1 (tools/vm)
#   make install PREFIX=/usr/local      (ascbpf + man page)
#   make install-model PREFIX=...       (the npu_model simulator)
#   V=1             show full command lines
#
# Each directory owns a fragment (bpf/build.mk, user/build.mk,
# npu_model/build.mk, tests/build.mk) that appends to the lists below.

OUTPUT		?= build
PREFIX		?= /usr/local
CC		?= cc
CLANG		?= clang
BPFTOOL		?= bpftool
PKG_CONFIG	?= pkg-config
PYTHON		?= /usr/bin/python3

VERSION		:= 0.1.0
ARCH		:= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# Warnings are errors for everything we compile (issue 5).
WARN_CFLAGS	:= -Wall -Wextra -Werror -Werror=undef
COMMON_CFLAGS	:= -O2 -g -MMD -MP $(WARN_CFLAGS) -D_GNU_SOURCE $(EXTRA_CFLAGS)
COMMON_LDFLAGS	:= $(EXTRA_LDFLAGS)

# Lists the fragments append to.
ALL_TARGETS	:=	# everything `make` builds
UNIT_TESTS	:=	# cmocka binaries run by `make check`
INSTALL_BIN	:=	# installed by `make install`
MODEL_BIN	:=	# installed by `make install-model` (bin/)
MODEL_LIB	:=	# installed by `make install-model` (lib/)

.DEFAULT_GOAL	:= all
.DELETE_ON_ERROR:
.SECONDARY:

include npu_model/build.mk
include bpf/build.mk
include user/build.mk
include tests/build.mk
include tools/vm/build.mk

.PHONY: all deps check unit integration demo bench install install-model clean

all: $(ALL_TARGETS)

$(OUTPUT) $(sort $(OUTPUT_DIRS)):
	$(Q)mkdir -p $@

# The dependency step: idempotent, quiet when everything is already there.
deps:
	$(Q)tools/setup.sh

# `make check` = deps, then a fresh make (pkg-config needs the packages), then tests.
check: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)OUTPUT=$(abspath $(OUTPUT)) tests/run.sh

unit: all
	$(Q)OUTPUT=$(abspath $(OUTPUT)) tests/run.sh --unit

integration: all
	$(Q)OUTPUT=$(abspath $(OUTPUT)) tests/run.sh --integration

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)OUTPUT=$(abspath $(OUTPUT)) tools/demo.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)OUTPUT=$(abspath $(OUTPUT)) tools/bench.sh

install: all
	$(Q)install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man8
	$(Q)install -m 0755 $(INSTALL_BIN) $(DESTDIR)$(PREFIX)/bin/
	$(Q)if [ -f $(OUTPUT)/ascbpf.8 ]; then install -m 0644 $(OUTPUT)/ascbpf.8 $(DESTDIR)$(PREFIX)/share/man/man8/; fi

# The simulator is installed as one tree, $(PREFIX)/lib/npu_model/{bin,lib}, so
# its libascendcl.so & co. never shadow a real CANN on the library path; the
# binaries find their libraries through RUNPATH $ORIGIN/../lib and are linked
# from $(PREFIX)/bin.
install-model: all
	$(Q)install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/npu_model/bin $(DESTDIR)$(PREFIX)/lib/npu_model/lib
	$(Q)install -m 0755 $(MODEL_BIN) $(DESTDIR)$(PREFIX)/lib/npu_model/bin/
	$(Q)cp -P $(MODEL_LIB) $(DESTDIR)$(PREFIX)/lib/npu_model/lib/
	$(Q)for b in $(notdir $(MODEL_BIN)); do ln -sf ../lib/npu_model/bin/$$b $(DESTDIR)$(PREFIX)/bin/$$b; done

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

-include $(shell find $(OUTPUT) -name '*.d' 2>/dev/null)
