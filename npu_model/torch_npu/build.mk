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

# Built as the wheel ships (issue 13; npu_model/README.md "Release build"): after the link the
# debug information moves to a file named by the build-id under $(MODEL_DEBUG_DIR) (as gdb and
# perf look it up in /usr/lib/debug/.build-id/) and to .debug/ next to the library (the
# .gnu_debuglink search); the library keeps .dynsym only, no .symtab, and a .gnu_debuglink.
MODEL_DEBUG_DIR	:= $(MODEL_OUT)/debug
define tnpu_release_strip
	$(Q)id=$$(readelf -n $1 | sed -n 's/.*Build ID: *//p'); \
	test -n "$$id" || { echo "$1: no build-id" >&2; exit 1; }; \
	dbg=$(MODEL_DEBUG_DIR)/.build-id/$$(echo $$id | cut -c1-2)/$$(echo $$id | cut -c3-).debug; \
	mkdir -p $$(dirname $$dbg) $(dir $1).debug && $(OBJCOPY) --only-keep-debug $1 $$dbg && \
	cp $$dbg $(dir $1).debug/$(notdir $1).debug && \
	$(OBJCOPY) --strip-all --add-gnu-debuglink=$(dir $1).debug/$(notdir $1).debug $1
endef

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
	$(call tnpu_release_strip,$@)

ALL_TARGETS	+= $(LIBTORCH_NPU)
MODEL_LIB	+= $(LIBTORCH_NPU)
include npu_model/torch_npu/pytorch/build.mk
