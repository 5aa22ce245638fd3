# tests/lib/probes/: fixtures of the attach-layer tests (lib, arch, discovery, trace).
#   libasctest.so           test shared object (.dynsym + .symtab)
#   libasctest-stripped.so  the same, strip --strip-all (.dynsym only)
#   libasctest-offset.so    text segment at a virtual address != its file offset
#   libasctest-split.so     stripped as a release build: .dynsym only, .gnu_debuglink, the
#                           debug file in debug/.build-id/xx/rest.debug
#   libasctest-late.so      a copy, for dlopen-after-plan tests
#   attach_counter.bpf.o    hit counter per cookie (test_attach)
#   libunwtest.so, unwtest  C++ exceptions through return-probed frames
# The unit tests find them through ASC_TEST_FIXTURES (compiled in).

PROBES_FIX	:= $(OUTPUT)/tests/lib/probes
OUTPUT_DIRS	+= $(PROBES_FIX)
# Entry landing pads as distributions build them: endbr64 on x86-64, bti c / paciasp on arm64.
PROBES_CF_x86	:= -fcf-protection=full
PROBES_CF_arm64	:= -mbranch-protection=standard
PROBES_LIB_CFLAGS := -O2 -g -fPIC -shared -Wall -Wextra -Werror $(PROBES_CF_$(ARCH))
PROBES_FIXTURES	:= $(PROBES_FIX)/libasctest.so $(PROBES_FIX)/libasctest-stripped.so \
		   $(PROBES_FIX)/libasctest-offset.so $(PROBES_FIX)/libasctest-late.so \
		   $(PROBES_FIX)/attach_counter.bpf.o $(PROBES_FIX)/libasctest-split.so

$(PROBES_FIX)/libasctest.so: tests/lib/probes/libasctest.c tests/lib/probes/asctest.h | $(PROBES_FIX)
	$(call msg,CC,$@)
	$(Q)$(CC) $(PROBES_LIB_CFLAGS) -Itests/lib/probes $< -o $@

$(PROBES_FIX)/libasctest-late.so: tests/lib/probes/libasctest.c tests/lib/probes/asctest.h | $(PROBES_FIX)
	$(call msg,CC,$@)
	$(Q)$(CC) $(PROBES_LIB_CFLAGS) -Itests/lib/probes -Wl,-soname,libasctest-late.so $< -o $@

$(PROBES_FIX)/libasctest-stripped.so: $(PROBES_FIX)/libasctest.so
	$(call msg,STRIP,$@)
	$(Q)$(STRIP) --strip-all -o $@ $<

$(PROBES_FIX)/libasctest-split.so: $(PROBES_FIX)/libasctest.so
	$(call msg,STRIP,$@)
	$(Q)id=$$(readelf -n $< | sed -n 's/.*Build ID: *//p'); \
	dbg=$(PROBES_FIX)/debug/.build-id/$$(echo $$id | cut -c1-2)/$$(echo $$id | cut -c3-).debug; \
	mkdir -p $$(dirname $$dbg) && $(OBJCOPY) --only-keep-debug $< $$dbg && \
	$(OBJCOPY) --strip-all --add-gnu-debuglink=$$dbg $< $@

# -Ttext-segment moves the first PT_LOAD to 0x10000: every segment's p_vaddr
# then differs from its p_offset, which symbol -> file offset must handle.
$(PROBES_FIX)/libasctest-offset.so: tests/lib/probes/libasctest.c tests/lib/probes/asctest.h | $(PROBES_FIX)
	$(call msg,CC,$@)
	$(Q)$(CC) $(PROBES_LIB_CFLAGS) -Itests/lib/probes -Wl,-Ttext-segment=0x10000 $< -o $@

$(PROBES_FIX)/attach_counter.bpf.o: tests/lib/probes/attach_counter.bpf.c $(BPF_OUT)/vmlinux.h | $(PROBES_FIX)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

PROBES_TESTS	:= $(addprefix $(TEST_OUT)/,test_elfsym test_probes test_attach test_procmaps test_prologue)
$(PROBES_TESTS): $(PROBES_FIXTURES)
$(PROBES_TESTS): TEST_CFLAGS += -Itests/lib/probes -DASC_TEST_FIXTURES='"$(abspath $(PROBES_FIX))"'
TEST_LIBS_test_procmaps	:= $(USER_LDLIBS) -ldl
TEST_LIBS_test_probes	:= $(USER_LDLIBS) -ldl
TEST_LIBS_test_elfsym	:= $(USER_LDLIBS) -ldl
TEST_LIBS_test_attach	:= $(USER_LDLIBS) -ldl

ALL_TARGETS	+= $(PROBES_FIXTURES)

# C++ exceptions through return-probed frames (tests/trace/test_trace_cxx_exceptions.py):
# libunwtest.so and its driver, noinline as a release build's -O2 leaves these calls
UNW_CXXFLAGS	:= -O2 -g -Wall -Wextra -Werror -fno-inline $(PROBES_CF_$(ARCH))
$(PROBES_FIX)/libunwtest.so: tests/lib/probes/unwtest.cpp | $(PROBES_FIX)
	$(call msg,CXX,$@)
	$(Q)$(CXX) $(UNW_CXXFLAGS) -fPIC -shared -DUNW_LIB $< -o $@

$(PROBES_FIX)/unwtest: tests/lib/probes/unwtest.cpp $(PROBES_FIX)/libunwtest.so | $(PROBES_FIX)
	$(call msg,CXX,$@)
	$(Q)$(CXX) $(UNW_CXXFLAGS) $< -L$(PROBES_FIX) -lunwtest -Wl,-rpath,$(abspath $(PROBES_FIX)) -o $@

ALL_TARGETS	+= $(PROBES_FIX)/libunwtest.so $(PROBES_FIX)/unwtest

# The attach benchmark driver (tools/bench_attach.sh runs it; not a test).
$(PROBES_FIX)/bench_attach: tests/lib/probes/bench_attach.c $(OUTPUT)/libascbpf.a $(PROBES_FIXTURES) | $(PROBES_FIX)
	$(call msg,CC,$@)
	$(Q)$(CC) $(TEST_CFLAGS) -Itests/lib/probes -DASC_TEST_FIXTURES='"$(abspath $(PROBES_FIX))"' \
		$< $(OUTPUT)/libascbpf.a $(USER_LDLIBS) -o $@
ALL_TARGETS	+= $(PROBES_FIX)/bench_attach
