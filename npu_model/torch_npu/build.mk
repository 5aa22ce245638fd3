# npu_model/torch_npu/: libtorch_npu.so -- torch_npu's task queue
# (Repository, OpCommand, acl_thread), caching allocator, profiler hooks and
# op plugin.  libopapi.so is dlopen'ed on first use, not linked.

include npu_model/common/defs.mk
OUTPUT_DIRS	+= $(MODEL_OBJ_DIR)/torch_npu
TORCH_NPU_OBJS	:= $(patsubst npu_model/torch_npu/%.c,$(MODEL_OBJ_DIR)/torch_npu/%.o,\
		   $(wildcard npu_model/torch_npu/*.c))
LIBTORCH_NPU	:= $(MODEL_LIB_DIR)/libtorch_npu.so

$(MODEL_OBJ_DIR)/torch_npu/%.o: npu_model/torch_npu/%.c | $(MODEL_OBJ_DIR)/torch_npu
	$(call msg,CC,$@)
	$(Q)$(CC) $(MODEL_LIB_CFLAGS) -c $< -o $@

# Unit tests link single modules with fakes of their neighbours.
TEST_OBJS_test_taskqueue := $(MODEL_OBJ_DIR)/torch_npu/queue.o $(COMMON_OBJS_FOR_TESTS)
TEST_LIBS_test_taskqueue := -lpthread
TEST_OBJS_test_allocator := $(MODEL_OBJ_DIR)/torch_npu/allocator.o $(COMMON_OBJS_FOR_TESTS)
TEST_LIBS_test_allocator := -lpthread

$(LIBTORCH_NPU): $(TORCH_NPU_OBJS) $(LIBTORCH_CPU) $(MODEL_LIB_DIR)/libascendcl.so \
		 $(MODEL_LIB_DIR)/libacl_op_compiler.so $(MODEL_LIB_DIR)/libnnopbase.so
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_SO_LDFLAGS) -Wl,-soname,libtorch_npu.so $(TORCH_NPU_OBJS) -ltorch_cpu \
		-lacl_op_compiler -lnnopbase -lascendcl -lnpu_common -ldl -lpthread -o $@

ALL_TARGETS	+= $(LIBTORCH_NPU)
MODEL_LIB	+= $(LIBTORCH_NPU)
include npu_model/torch_npu/pytorch/build.mk
