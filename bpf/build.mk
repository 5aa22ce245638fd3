# bpf/: BPF programs.  Each bpf/NAME.bpf.c becomes $(OUTPUT)/bpf/NAME.bpf.o and
# the skeleton $(OUTPUT)/bpf/NAME.skel.h, which user/ includes.
# vmlinux.h is generated from the running kernel's BTF at build time.

BPF_OUT		:= $(OUTPUT)/bpf
VMLINUX_BTF	?= /sys/kernel/btf/vmlinux
BPF_SRCS	:= $(wildcard bpf/*.bpf.c)
BPF_OBJS	:= $(patsubst bpf/%.bpf.c,$(BPF_OUT)/%.bpf.o,$(BPF_SRCS))
BPF_SKELS	:= $(patsubst bpf/%.bpf.c,$(BPF_OUT)/%.skel.h,$(BPF_SRCS))
OUTPUT_DIRS	+= $(BPF_OUT)

# clang's own system include dirs, so BPF code sees <asm/...> of this arch.
CLANG_BPF_SYS_INCLUDES ?= $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

BPF_CFLAGS	:= -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
		   -MMD -MP -I$(BPF_OUT) -Ibpf -Iinclude $(CLANG_BPF_SYS_INCLUDES)

$(BPF_OUT)/vmlinux.h: | $(BPF_OUT)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

$(BPF_OUT)/%.bpf.o: bpf/%.bpf.c $(BPF_OUT)/vmlinux.h | $(BPF_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BPF_OUT)/%.skel.h: $(BPF_OUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

ALL_TARGETS	+= $(BPF_SKELS)
