# tests/: cmocka unit tests.  tests/unit/test_NAME.c becomes
# $(OUTPUT)/tests/test_NAME, linked with every user/ module object (unused
# ones are dropped by --gc-sections / the archive) unless the fragment that
# owns NAME sets TEST_OBJS_test_NAME / TEST_LIBS_test_NAME itself, e.g. for
# npu_model modules:
#   TEST_OBJS_test_costmodel := $(OUTPUT)/npu_model/costmodel.o
#   TEST_LIBS_test_costmodel := -lm
# Integration tests are scripts under tests/integration/ run by tests/run.sh.

TEST_OUT	:= $(OUTPUT)/tests
OUTPUT_DIRS	+= $(TEST_OUT)
UNIT_SRCS	:= $(wildcard tests/unit/test_*.c)
UNIT_TESTS	+= $(patsubst tests/unit/%.c,$(TEST_OUT)/%,$(UNIT_SRCS))
TEST_CFLAGS	:= $(COMMON_CFLAGS) -Wno-unused-parameter -Iuser -Ibpf -I$(BPF_OUT) -Inpu_model/include \
		   -Inpu_model $(shell $(PKG_CONFIG) --cflags cmocka 2>/dev/null)
TEST_LDLIBS	:= $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null)
$(OUTPUT)/libascbpf.a: $(USER_LIB_OBJS) | $(OUTPUT)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

.SECONDEXPANSION:
$(TEST_OUT)/test_%: tests/unit/test_%.c $$(or $$(TEST_OBJS_test_$$*),$(OUTPUT)/libascbpf.a) | $(TEST_OUT)
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(TEST_CFLAGS) $< $(or $(TEST_OBJS_test_$*),$(OUTPUT)/libascbpf.a) \
		$(or $(TEST_LIBS_test_$*),$(USER_LDLIBS)) $(TEST_LDLIBS) -o $@

ALL_TARGETS	+= $(UNIT_TESTS)
include tests/lib/build.mk
include tests/pytorch/build.mk
include tests/probes/build.mk
include tests/fuzz/build.mk
