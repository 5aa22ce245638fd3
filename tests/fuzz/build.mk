# tests/fuzz/: libFuzzer harnesses (clang's -fsanitize=fuzzer, with ASAN and
# UBSAN) for the code that reads what ascbpf did not write: captures,
# correlation + convert, report's input, ELF files mapped by the target, the
# instruction decoders and the ioctl decoder.  Not part of `make`: `make
# fuzz-build` builds them (`make check` and `make fuzz` do it first), with the
# user/ modules compiled again, instrumented, into $(FUZZ_OUT)/obj/.  Seeds are
# made from our own build by tests/fuzz/seeds.sh (never downloaded); findings
# worth keeping are committed under tests/fuzz/findings/<harness>/.

FUZZ_CC		?= clang
FUZZ_OUT	:= $(OUTPUT)/fuzz
FUZZ_SAN	:= -fsanitize=address,undefined -fno-omit-frame-pointer
FUZZ_CFLAGS	:= $(filter-out -O2,$(USER_CFLAGS)) -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_HARNESSES	:= $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_HARNESSES	:= $(filter-out fuzz_common,$(FUZZ_HARNESSES))
FUZZ_BINS	:= $(addprefix $(FUZZ_OUT)/bin/,$(FUZZ_HARNESSES))
FUZZ_LIB_OBJS	:= $(patsubst $(USER_OUT)/%,$(FUZZ_OUT)/obj/%,$(USER_LIB_OBJS)) \
		   $(FUZZ_OUT)/obj/fuzz_common.o
OUTPUT_DIRS	+= $(FUZZ_OUT)/bin $(addprefix $(FUZZ_OUT)/obj/,$(USER_ROOMS))

$(FUZZ_OUT)/obj/%.o: user/%.c | $(addprefix $(FUZZ_OUT)/obj/,$(USER_ROOMS)) $(BPF_SKELS)
	$(call msg,FUZZ-CC,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_OUT)/obj/fuzz_common.o: tests/fuzz/fuzz_common.c | $(FUZZ_OUT)/obj/lib
	$(call msg,FUZZ-CC,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_OUT)/libascbpf-fuzz.a: $(FUZZ_LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(FUZZ_OUT)/bin/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OUT)/libascbpf-fuzz.a | $(FUZZ_OUT)/bin
	$(call msg,FUZZ-LD,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -Itests/fuzz -fsanitize=fuzzer $< \
		$(FUZZ_OUT)/libascbpf-fuzz.a $(USER_LDLIBS) -o $@

# Seed inputs: mkseed (an ordinary build) and a tiny shared object.
$(FUZZ_OUT)/mkseed: tests/fuzz/mkseed.c tests/fuzz/fuzz_common.c $(OUTPUT)/libascbpf.a | $(FUZZ_OUT)/bin
	$(call msg,CC,$@)
	$(Q)$(CC) $(TEST_CFLAGS) -Itests/fuzz $< tests/fuzz/fuzz_common.c $(OUTPUT)/libascbpf.a \
		$(USER_LDLIBS) -o $@

$(FUZZ_OUT)/seed_elf.so: tests/fuzz/seed_elf.c | $(FUZZ_OUT)/bin
	$(call msg,CC,$@)
	$(Q)$(CC) $(COMMON_CFLAGS) -fPIC -shared -nostdlib -Wl,--build-id -o $@ $<

$(FUZZ_OUT)/seeds/.stamp: tests/fuzz/seeds.sh $(FUZZ_OUT)/mkseed $(FUZZ_OUT)/seed_elf.so \
			  $(TESTLIB_OUT)/mkcapture $(OUTPUT)/ascbpf
	$(call msg,SEEDS,$(FUZZ_OUT)/seeds)
	$(Q)OUTPUT=$(abspath $(OUTPUT)) tests/fuzz/seeds.sh && touch $@

.PHONY: fuzz-build
fuzz-build: $(FUZZ_BINS) $(FUZZ_OUT)/seeds/.stamp
