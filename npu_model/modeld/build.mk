# npu_model/modeld/: npu-modeld, the simulated card(s) and driver behind FUSE
# device nodes (npu_model/README.md, "Driver and card").  Its modules other
# than main.c are also linked into the unit tests test_ioctl, test_hbm,
# test_taskid, test_sched.

include npu_model/common/defs.mk
MODELD_OBJ_DIR	:= $(MODEL_OBJ_DIR)/modeld
OUTPUT_DIRS	+= $(MODELD_OBJ_DIR)
MODELD_SRCS	:= $(filter-out npu_model/modeld/nodeclock.c,$(wildcard npu_model/modeld/*.c))
MODELD_OBJS	:= $(patsubst npu_model/modeld/%.c,$(MODELD_OBJ_DIR)/%.o,$(MODELD_SRCS))
MODELD_LIB_OBJS	:= $(filter-out $(MODELD_OBJ_DIR)/main.o,$(MODELD_OBJS))
MODELD_CFLAGS	:= $(MODEL_CFLAGS) $(shell $(PKG_CONFIG) --cflags fuse3 2>/dev/null)
MODELD_LDLIBS	:= $(shell $(PKG_CONFIG) --libs fuse3 2>/dev/null) -lpthread
NPU_MODELD	:= $(MODEL_BIN_DIR)/npu-modeld

$(MODELD_OBJ_DIR)/%.o: npu_model/modeld/%.c | $(MODELD_OBJ_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(MODELD_CFLAGS) -c $< -o $@

$(NPU_MODELD): $(MODELD_OBJS) $(LIBNPU_COMMON) | $(MODEL_BIN_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_EXE_LDFLAGS) $(MODELD_OBJS) -lnpu_common $(MODELD_LDLIBS) -o $@

# Unit tests: the daemon's modules plus libnpu_common (journal, cost model).
MODELD_TEST_OBJS := $(MODELD_LIB_OBJS)
MODELD_TEST_LIBS := -Wl,-rpath,$(abspath $(MODEL_LIB_DIR)) -L$(MODEL_LIB_DIR) -lnpu_common -lpthread
TEST_OBJS_test_ioctl	:= $(MODELD_TEST_OBJS)
TEST_LIBS_test_ioctl	:= $(MODELD_TEST_LIBS)
TEST_OBJS_test_hbm	:= $(MODELD_TEST_OBJS)
TEST_LIBS_test_hbm	:= $(MODELD_TEST_LIBS)
TEST_OBJS_test_taskid	:= $(MODELD_TEST_OBJS)
TEST_LIBS_test_taskid	:= $(MODELD_TEST_LIBS)
TEST_OBJS_test_sched	:= $(MODELD_TEST_OBJS)
TEST_LIBS_test_sched	:= $(MODELD_TEST_LIBS)
$(OUTPUT)/tests/test_ioctl $(OUTPUT)/tests/test_hbm $(OUTPUT)/tests/test_taskid \
	$(OUTPUT)/tests/test_sched: $(LIBNPU_COMMON)

ALL_TARGETS	+= $(NPU_MODELD)
MODEL_BIN	+= $(NPU_MODELD)

# npu_halclient: a small libascend_hal.so client for the driver's integration tests.
NPU_HALCLIENT	:= $(MODEL_BIN_DIR)/npu_halclient
OUTPUT_DIRS	+= $(MODELD_OBJ_DIR)/tools
$(MODELD_OBJ_DIR)/tools/%.o: npu_model/modeld/tools/%.c | $(MODELD_OBJ_DIR)/tools
	$(call msg,CC,$@)
	$(Q)$(CC) $(MODEL_CFLAGS) -c $< -o $@

$(NPU_HALCLIENT): $(MODELD_OBJ_DIR)/tools/npu_halclient.o $(LIBASCEND_HAL) | $(MODEL_BIN_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_EXE_LDFLAGS) $< -lascend_hal -o $@

ALL_TARGETS	+= $(NPU_HALCLIENT)
MODEL_BIN	+= $(NPU_HALCLIENT)

# libnpu_nodeclock.so: a simulated node's wall clock (nodeclock.c), LD_PRELOADed by tests.
LIBNPU_NODECLOCK := $(MODEL_LIB_DIR)/libnpu_nodeclock.so

$(MODEL_OBJ_DIR)/nodeclock.o: npu_model/modeld/nodeclock.c | $(MODEL_OBJ_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(MODEL_LIB_CFLAGS) -c $< -o $@

$(LIBNPU_NODECLOCK): $(MODEL_OBJ_DIR)/nodeclock.o | $(MODEL_LIB_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_SO_LDFLAGS) -Wl,-soname,libnpu_nodeclock.so $< -ldl -lpthread -o $@

ALL_TARGETS	+= $(LIBNPU_NODECLOCK)
MODEL_LIB	+= $(LIBNPU_NODECLOCK)
