# tests/lib/: the helpers every test folder shares (and the unit tests of
# user/lib/, built by tests/build.mk).  mkcapture writes synthetic captures
# (and their ground truth) for the converter's golden tests and benchmark.

TESTLIB_OUT	:= $(OUTPUT)/tests/lib
OUTPUT_DIRS	+= $(TESTLIB_OUT)

$(TESTLIB_OUT)/mkcapture: tests/lib/mkcapture.c $(OUTPUT)/libascbpf.a | $(TESTLIB_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(TEST_CFLAGS) $< $(OUTPUT)/libascbpf.a $(USER_LDLIBS) -o $@

ALL_TARGETS	+= $(TESTLIB_OUT)/mkcapture

# capbuild: the record builders of the converter's unit tests, linked into
# each binary that writes hand-made captures.
CAPBUILD_O	:= $(TESTLIB_OUT)/capbuild.o
TEST_CFLAGS	+= -Itests/lib
$(CAPBUILD_O): tests/lib/capbuild.c | $(TESTLIB_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(TEST_CFLAGS) -c $< -o $@

TEST_OBJS_test_correlate := $(CAPBUILD_O) $(OUTPUT)/libascbpf.a
TEST_OBJS_test_seqnr	:= $(CAPBUILD_O) $(OUTPUT)/libascbpf.a
TEST_OBJS_test_names	:= $(CAPBUILD_O) $(OUTPUT)/libascbpf.a

# pt_trace: standalone loader of bpf/pytorch.bpf.c (tests and benchmark): attaches
# the aten programs alone, writes a capture file.  Explicit objects, not
# libascbpf.a: pt_trace keeps building while an unrelated module does not.
PT_TRACE := $(TEST_OUT)/pt_trace
PT_TRACE_OBJS := $(addprefix $(USER_OUT)/,discovery/pytorch.o discovery/seqnr.o discovery/pystack.o \
		 trace/attach.o lib/log.o discovery/elfsym.o discovery/probes.o lib/procmaps.o \
		 lib/hashmap.o lib/safeio.o arch/prologue.o arch/x86.o arch/arm64.o arch/arch.o \
		 lib/json_writer.o capture/records.o discovery/opguard.o arch/guard.o)
$(PT_TRACE): tests/lib/pt_trace.c $(PT_TRACE_OBJS) | $(TEST_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(TEST_CFLAGS) $< $(PT_TRACE_OBJS) $(USER_LDLIBS) -o $@

ALL_TARGETS += $(PT_TRACE)

# mkcomm: the captures of a synthetic multi-rank job with HCCL records (and
# their truth) for the communication outputs' and cluster report's tests.
$(TESTLIB_OUT)/mkcomm: tests/lib/mkcomm.c $(OUTPUT)/libascbpf.a | $(TESTLIB_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(TEST_CFLAGS) $< $(OUTPUT)/libascbpf.a $(USER_LDLIBS) -o $@

ALL_TARGETS	+= $(TESTLIB_OUT)/mkcomm
