# npu_model/runtime/: libruntime.so (rt* API: devices, streams, events,
# memory, kernel launch -> SQEs -> halSqTaskSend).  Links the driver HAL,
# libascend_hal.so (npu_model/hal/, engineer B).

include npu_model/common/defs.mk
OUTPUT_DIRS	+= $(MODEL_OBJ_DIR)/runtime

RUNTIME_OBJS	:= $(MODEL_OBJ_DIR)/runtime/runtime.o
LIBRUNTIME	:= $(MODEL_LIB_DIR)/libruntime.so

$(MODEL_OBJ_DIR)/runtime/%.o: npu_model/runtime/%.c | $(MODEL_OBJ_DIR)/runtime
	$(call msg,CC,$@)
	$(Q)$(CC) $(MODEL_LIB_CFLAGS) -c $< -o $@

# The unit test links the objects with a fake HAL of its own (no daemon).
TEST_OBJS_test_runtime := $(RUNTIME_OBJS) $(COMMON_OBJS_FOR_TESTS)
TEST_LIBS_test_runtime := -lpthread -lm

$(LIBRUNTIME): $(RUNTIME_OBJS) $(LIBNPU_COMMON) $(MODEL_LIB_DIR)/libascend_hal.so | $(MODEL_LIB_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_SO_LDFLAGS) -Wl,-soname,libruntime.so $(RUNTIME_OBJS) \
		-lascend_hal -lnpu_common -lpthread -o $@

ALL_TARGETS	+= $(LIBRUNTIME)
MODEL_LIB	+= $(LIBRUNTIME)
