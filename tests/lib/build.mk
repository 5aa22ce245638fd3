# tests/lib/: helpers for the tests.  mkcapture writes synthetic captures
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
