# bpf/: BPF programs.  Each bpf/NAME.bpf.c becomes $(OUTPUT)/bpf/NAME.bpf.o and
# the skeleton $(OUTPUT)/bpf/NAME.skel.h, which user/ includes.
# vmlinux.h is generated from the running kernel's BTF at build time.

BPF_OUT		:= $(OUTPUT)/bpf
# A cross build (ARCH != the host's) takes the target's types from the .BTF of
# Debian bookworm's kernel image for that architecture, fetched once from
# Debian's archive into $(OUTPUT)/vm/bookworm (tools/vm/fetch-kernel.sh) and cut
# out by tools/vm/extract-btf.py.
ifeq ($(ARCH),$(HOST_ARCH))
VMLINUX_BTF	?= /sys/kernel/btf/vmlinux
else
DEB_ARCH_arm64	:= arm64
VMLINUX_BTF	?= $(OUTPUT)/vm/bookworm/vmlinux.btf
$(OUTPUT)/vm/bookworm/vmlinux.btf: tools/vm/fetch-kernel.sh tools/vm/extract-btf.py
	$(call msg,BTF,$@)
	$(Q)tools/vm/fetch-kernel.sh bookworm $(OUTPUT)/vm/bookworm $(DEB_ARCH_$(ARCH))
	$(Q)$(PYTHON) tools/vm/extract-btf.py $(OUTPUT)/vm/bookworm/vmlinuz $@
endif
BPF_SRCS	:= $(wildcard bpf/*.bpf.c)
BPF_OBJS	:= $(patsubst bpf/%.bpf.c,$(BPF_OUT)/%.bpf.o,$(BPF_SRCS))
BPF_SKELS	:= $(patsubst bpf/%.bpf.c,$(BPF_OUT)/%.skel.h,$(BPF_SRCS))
OUTPUT_DIRS	+= $(BPF_OUT)

# clang's own system include dirs, so BPF code sees <asm/...> of this arch.
CLANG_BPF_SYS_INCLUDES ?= $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

BPF_CFLAGS	:= -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
		   -MMD -MP -I$(BPF_OUT) -Ibpf -Iinclude $(CLANG_BPF_SYS_INCLUDES)

$(BPF_OUT)/vmlinux.h: $(filter $(OUTPUT)/%,$(VMLINUX_BTF)) | $(BPF_OUT)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

$(BPF_OUT)/%.bpf.o: bpf/%.bpf.c $(BPF_OUT)/vmlinux.h | $(BPF_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BPF_OUT)/%.skel.h: $(BPF_OUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

ALL_TARGETS	+= $(BPF_SKELS)
