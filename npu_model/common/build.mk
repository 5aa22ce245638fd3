# npu_model/common/: libnpu_common.so -- the journal writer (npu_journal.h)
# and the card cost model (npu_cost.h).  Every model library and npu-modeld
# link it (-lnpu_common).  Shared paths and link flags: npu_model/common/defs.mk.

include npu_model/common/defs.mk
OUTPUT_DIRS	+= $(MODEL_OBJ_DIR)/common

COMMON_SRCS	:= $(wildcard npu_model/common/*.c)
COMMON_OBJS	:= $(patsubst npu_model/common/%.c,$(MODEL_OBJ_DIR)/common/%.o,$(COMMON_SRCS))

$(MODEL_OBJ_DIR)/common/%.o: npu_model/common/%.c | $(MODEL_OBJ_DIR)/common
	$(call msg,CC,$@)
	$(Q)$(CC) $(MODEL_CFLAGS) -c $< -o $@

$(LIBNPU_COMMON): $(COMMON_OBJS) | $(MODEL_LIB_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_SO_LDFLAGS) -Wl,-soname,libnpu_common.so $^ -lpthread -o $@

# Unit tests of the cost model link its object directly.
TEST_OBJS_test_costmodel := $(MODEL_OBJ_DIR)/common/costmodel.o
TEST_LIBS_test_costmodel := -lm

ALL_TARGETS	+= $(LIBNPU_COMMON)
MODEL_LIB	+= $(LIBNPU_COMMON)
