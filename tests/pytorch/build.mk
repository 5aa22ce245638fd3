# tests/pytorch/: real-PyTorch tests.
#   test_pytorch, test_pystack   unit tests linking only the modules they test
#   pt_trace                     standalone loader of bpf/pytorch.bpf.c (tests and benchmark):
#                                attaches the aten programs alone, writes a capture file

PT_TEST_OBJS := $(addprefix $(USER_OUT)/,discovery/pytorch.o discovery/seqnr.o discovery/pystack.o \
		trace/attach.o lib/log.o discovery/elfsym.o)
TEST_OBJS_test_pytorch := $(PT_TEST_OBJS)
TEST_OBJS_test_pystack := $(PT_TEST_OBJS)

# Explicit objects, not libascbpf.a: pt_trace keeps building while an unrelated module does not.
PT_TRACE := $(TEST_OUT)/pt_trace
PT_TRACE_OBJS := $(PT_TEST_OBJS) $(addprefix $(USER_OUT)/,discovery/probes.o lib/procmaps.o \
		 arch/prologue.o lib/json_writer.o lib/safeio.o capture/records.o)
$(PT_TRACE): tests/pytorch/pt_trace.c $(PT_TRACE_OBJS) | $(TEST_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(TEST_CFLAGS) $< $(PT_TRACE_OBJS) $(USER_LDLIBS) -o $@

ALL_TARGETS += $(PT_TRACE)
