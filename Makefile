# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# One build for everything, out of tree into $(OUTPUT).
#
#   make            build ascbpf, the BPF objects, npu_model and the tests
#   make demo       install deps, trace npu_train, write ./result/*_ascend_pt
#   make check      install deps, build, lint, run unit + integration tests + short fuzzing,
#                   then check-asan
#   make check-asan unit tests + trace/convert/report under ASAN+UBSAN ($(OUTPUT)/asan)
#   make lint       100 columns, clang-format on the files of tools/clang-format-files.txt
#   make format [FILES=...]   clang-format in place (default: every C source)
#   make fuzz       the libFuzzer harnesses, FUZZ_SECONDS (300) each (tests/fuzz/)
#   make soak       trace under load for SOAK_SECONDS (3600): RSS curve, counts (tools/soak.sh)
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

# The sanitizer stage (issue 19): a second tree, $(ASAN_OUTPUT), with all user
# space built with ASAN+UBSAN (no recovery: a report ends the process); its
# unit tests, and the sanitized ascbpf through trace, convert and report of
# every npu_train scenario (tests/run_asan.sh; ASAN_INTEGRATION overrides the
# list).  Any sanitizer report fails it.
ASAN_OUTPUT	?= $(OUTPUT)/asan
ASAN_FLAGS	:= -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
check-asan: all
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(ASAN_OUTPUT) EXTRA_CFLAGS='$(ASAN_FLAGS)' \
		EXTRA_LDFLAGS='$(ASAN_FLAGS)' all
	$(Q)OUTPUT=$(abspath $(OUTPUT)) ASAN_OUTPUT=$(abspath $(ASAN_OUTPUT)) tests/run_asan.sh

# Style (docs/CONTRIBUTING.md): lint checks, format rewrites.
lint:
	$(Q)tools/lint.sh

FORMAT_FILES	= $(or $(FILES),$(shell git ls-files 'user/*.[ch]' 'bpf/*.[ch]' 'tests/*.[ch]' \
		  'npu_model/*.[ch]'))
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
