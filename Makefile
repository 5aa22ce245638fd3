# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# One build for everything, out of tree into $(OUTPUT).
#
#   make            build ascbpf, the BPF objects, npu_model and the tests
#   make demo       install deps, trace a Python job by PID, write ./result/*_ascend_pt
#   make check      install deps, build, lint, run unit + integration tests + short fuzzing,
#                   then check-asan
#   make check-asan unit tests + trace/convert/report under ASAN+UBSAN ($(OUTPUT)/asan)
#   make lint       100 columns; clang-format conformance of the C sources (tools/lint.sh)
#   make format [FILES=...]   clang-format in place (default: what make lint checks)
#   make fuzz       the libFuzzer harnesses, FUZZ_SECONDS (300) each (tests/fuzz/)
#   make soak       trace under load for SOAK_SECONDS (3600): RSS curve, counts (tools/soak.sh)
#   make bench      run the benchmarks and rewrite BENCHMARKS.md
#   make check-kernels  the kernel-sensitive tests in VMs of Debian's 5.10 and 6.1 (tools/vm)
#   make install PREFIX=/usr/local      (ascbpf + man page, the agent's systemd unit
#                                       and alerting rules)
#   make install-model PREFIX=...       (the npu_model simulator)
#   V=1             show full command lines
#
# Each directory owns a fragment (bpf/build.mk, user/build.mk,
# npu_model/build.mk, tests/build.mk) that appends to the lists below.

# ARCH: the target, in the kernel's names (x86, arm64); the host's by default.
# `make ARCH=arm64` on an x86-64 host cross-builds everything (ascbpf, the BPF
# objects for the arm64 target against the BTF of Debian's arm64 kernel,
# npu_model, the unit tests) with Debian's gcc-aarch64-linux-gnu and :arm64
# libraries into build-arm64/ (README "aarch64"); `make check-arm64` runs it.
HOST_ARCH	:= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
ARCH		?= $(HOST_ARCH)
ARCH_TRIPLE_x86	:= x86_64-linux-gnu
ARCH_TRIPLE_arm64 := aarch64-linux-gnu
ifneq ($(ARCH),$(HOST_ARCH))
ifeq ($(ARCH_TRIPLE_$(ARCH)),)
$(error ARCH=$(ARCH): only x86 and arm64 are supported)
endif
CROSS_COMPILE	?= $(ARCH_TRIPLE_$(ARCH))-
OUTPUT		?= build-$(ARCH)
CC		:= $(CROSS_COMPILE)gcc
CXX		:= $(CROSS_COMPILE)g++
AR		:= $(CROSS_COMPILE)ar
OBJCOPY		:= $(CROSS_COMPILE)objcopy
STRIP		:= $(CROSS_COMPILE)strip
PKG_CONFIG	?= PKG_CONFIG_LIBDIR=/usr/lib/$(ARCH_TRIPLE_$(ARCH))/pkgconfig:/usr/share/pkgconfig \
		   pkg-config
endif
OUTPUT		?= build
PREFIX		?= /usr/local
CC		?= cc
CLANG		?= clang
BPFTOOL		?= bpftool
PKG_CONFIG	?= pkg-config
OBJCOPY		?= objcopy
STRIP		?= strip
PYTHON		?= /usr/bin/python3

VERSION		:= 0.1.0

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# Warnings are errors for everything we compile (issue 5).
WARN_CFLAGS	:= -Wall -Wextra -Werror -Werror=undef
COMMON_CFLAGS	:= -O2 -g -MMD -MP $(WARN_CFLAGS) -D_GNU_SOURCE -Iinclude $(EXTRA_CFLAGS)
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

.PHONY: all deps check check-asan lint format unit integration fuzz soak demo bench install \
	install-model clean

all: $(ALL_TARGETS)

$(OUTPUT) $(sort $(OUTPUT_DIRS)):
	$(Q)mkdir -p $@

# The dependency step: idempotent, quiet when everything is already there.
deps:
	$(Q)tools/setup.sh

# `make check` = deps, then a fresh make (pkg-config needs the packages), lint, then tests,
# then the sanitizer stage.
check: deps
	$(Q)$(MAKE) --no-print-directory all fuzz-build
	$(Q)$(MAKE) --no-print-directory lint
	$(Q)OUTPUT=$(abspath $(OUTPUT)) FUZZ_SECONDS=$(or $(FUZZ_SECONDS),30) ASCBPF_REQUIRE_FUZZ=1 \
		tests/run.sh
	$(Q)$(MAKE) --no-print-directory check-asan

FUZZ_SECONDS	?=
fuzz: deps
	$(Q)$(MAKE) --no-print-directory all fuzz-build
	$(Q)OUTPUT=$(abspath $(OUTPUT)) FUZZ_SECONDS=$(or $(FUZZ_SECONDS),300) tests/run.sh --fuzz

soak: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)OUTPUT=$(abspath $(OUTPUT)) tools/soak.sh

# The sanitizer stage (issue 19): a second tree, $(ASAN_OUTPUT), built with
# ASAN+UBSAN (no recovery: a report ends the process); its unit tests, and
# the sanitized ascbpf through trace, convert and report of every npu_train
# scenario (tests/run_asan.sh; ASAN_INTEGRATION overrides the list).  Any
# sanitizer report fails it.  That tree holds only what the stage runs,
# asan-build: ascbpf and the unit tests with their prerequisites (the npu_model
# objects a unit test links, the probe fixtures), not the simulator's
# libraries, daemon and C++ backend, which the integration tests take from
# the normal tree.
ASAN_OUTPUT	?= $(OUTPUT)/asan
ASAN_FLAGS	:= -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
check-asan: all
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(ASAN_OUTPUT) EXTRA_CFLAGS='$(ASAN_FLAGS)' \
		EXTRA_LDFLAGS='$(ASAN_FLAGS)' asan-build
	$(Q)OUTPUT=$(abspath $(OUTPUT)) ASAN_OUTPUT=$(abspath $(ASAN_OUTPUT)) tests/run_asan.sh

.PHONY: asan-build
asan-build: $(OUTPUT)/ascbpf $(UNIT_TESTS)

# Style (docs/CONTRIBUTING.md): lint checks, format rewrites.
lint:
	$(Q)tools/lint.sh

FORMAT_FILES	= $(or $(FILES),$(shell tools/lint.sh --list))
format:
	$(call msg,FORMAT,$(words $(FORMAT_FILES)) files)
	$(Q)clang-format -i --style=file $(FORMAT_FILES)

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
	$(Q)install -d $(DESTDIR)$(PREFIX)/lib/systemd/system $(DESTDIR)$(PREFIX)/share/ascbpf
	$(Q)sed 's|@BINDIR@|$(PREFIX)/bin|g' user/agent/ascbpf-agent.service.in \
		> $(DESTDIR)$(PREFIX)/lib/systemd/system/ascbpf-agent.service
	$(Q)install -m 0644 user/agent/ascbpf-alerts.rules.yml $(DESTDIR)$(PREFIX)/share/ascbpf/

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
