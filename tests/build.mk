# tests/: one folder per room of the code, the tool's (lib, arch, discovery,
# trace, capture, analysis, convert, report: user/<room>/), the simulator's
# (npu_model) and the repository's own checks (repo); tests/lib/ also holds
# the helpers every folder shares.
#
# cmocka unit tests: tests/<room>/test_NAME.c becomes $(OUTPUT)/tests/test_NAME
# (one flat folder: names are unique across rooms), linked with every user/
# module object (unused ones are dropped by --gc-sections / the archive)
# unless the fragment that owns NAME sets TEST_OBJS_test_NAME /
# TEST_LIBS_test_NAME itself, e.g. for npu_model modules:
#   TEST_OBJS_test_costmodel := $(OUTPUT)/npu_model/costmodel.o
#   TEST_LIBS_test_costmodel := -lm
# Integration tests are the scripts tests/<room>/test_*.{sh,py}, run by tests/run.sh.

TEST_OUT	:= $(OUTPUT)/tests
OUTPUT_DIRS	+= $(TEST_OUT)
TEST_ROOMS	:= lib arch discovery trace capture analysis convert report agent npu_model repo
UNIT_SRCS	:= $(wildcard $(addsuffix /test_*.c,$(addprefix tests/,$(TEST_ROOMS))))
UNIT_TESTS	+= $(addprefix $(TEST_OUT)/,$(basename $(notdir $(UNIT_SRCS))))
vpath test_%.c $(addprefix tests/,$(TEST_ROOMS))
# A test outside the rooms (a branch that still adds to the old tests/unit or
# tests/integration) would silently not run: stop instead.
STRAY_TESTS	:= $(sort $(filter-out $(UNIT_SRCS),$(wildcard tests/*/test_*.c)) \
		   $(wildcard tests/unit/*.c $(addprefix tests/integration/*.,py sh c)))
ifneq ($(STRAY_TESTS),)
$(error tests outside tests/<room>/ (TEST_ROOMS in tests/build.mk): $(STRAY_TESTS))
endif
TEST_CFLAGS	:= $(COMMON_CFLAGS) -Wno-unused-parameter -Iuser -Ibpf -I$(BPF_OUT) -Inpu_model/include \
		   -Inpu_model $(shell $(PKG_CONFIG) --cflags cmocka 2>/dev/null)
TEST_LDLIBS	:= $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null)
$(OUTPUT)/libascbpf.a: $(USER_LIB_OBJS) | $(OUTPUT)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

.SECONDEXPANSION:
$(TEST_OUT)/test_%: test_%.c $$(or $$(TEST_OBJS_test_$$*),$(OUTPUT)/libascbpf.a) | $(TEST_OUT)
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(TEST_CFLAGS) $< $(or $(TEST_OBJS_test_$*),$(OUTPUT)/libascbpf.a) \
		$(or $(TEST_LIBS_test_$*),$(USER_LDLIBS)) $(TEST_LDLIBS) -o $@

ALL_TARGETS	+= $(UNIT_TESTS)
include tests/lib/build.mk
include tests/lib/probes/build.mk
include tests/discovery/build.mk
include tests/fuzz/build.mk
