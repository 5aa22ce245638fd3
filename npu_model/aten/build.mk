# npu_model/aten/: libtorch_cpu.so -- the aten operator entry points
# (at::_ops::<op>::call, real mangled names) and the tensor objects; the NPU
# kernels behind them come from libtorch_npu (registered at load time).

include npu_model/common/defs.mk
OUTPUT_DIRS	+= $(MODEL_OBJ_DIR)/aten
LIBTORCH_CPU	:= $(MODEL_LIB_DIR)/libtorch_cpu.so

$(MODEL_OBJ_DIR)/aten/%.o: npu_model/aten/%.c | $(MODEL_OBJ_DIR)/aten
	$(call msg,CC,$@)
	$(Q)$(CC) $(MODEL_LIB_CFLAGS) -c $< -o $@

ATEN_OBJS	:= $(MODEL_OBJ_DIR)/aten/aten.o $(MODEL_OBJ_DIR)/aten/autograd.o \
		   $(MODEL_OBJ_DIR)/aten/optim.o

$(LIBTORCH_CPU): $(ATEN_OBJS) $(LIBNPU_COMMON) | $(MODEL_LIB_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_SO_LDFLAGS) -Wl,-soname,libtorch_cpu.so $(ATEN_OBJS) -lnpu_common \
		-lpthread -o $@

ALL_TARGETS	+= $(LIBTORCH_CPU)
MODEL_LIB	+= $(LIBTORCH_CPU)

# The unit test links the module with a fake NPU backend of its own.
TEST_OBJS_test_aten := $(ATEN_OBJS) $(COMMON_OBJS_FOR_TESTS)
TEST_LIBS_test_aten := -lpthread
