# tests/lib/: helpers for the tests.  mkcapture writes synthetic captures
# (and their ground truth) for the converter's golden tests and benchmark.

TESTLIB_OUT	:= $(OUTPUT)/tests/lib
OUTPUT_DIRS	+= $(TESTLIB_OUT)

$(TESTLIB_OUT)/mkcapture: tests/lib/mkcapture.c $(OUTPUT)/libascbpf.a | $(TESTLIB_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(TEST_CFLAGS) $< $(OUTPUT)/libascbpf.a $(USER_LDLIBS) -o $@

ALL_TARGETS	+= $(TESTLIB_OUT)/mkcapture
