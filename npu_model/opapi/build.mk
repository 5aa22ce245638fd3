# npu_model/opapi/: libnnopbase.so (aclTensor & co, the aclOpExecutor and its
# kernel launches) and libopapi.so (the aclnn two-phase ops).  libopapi is
# dlopen'ed by libtorch_npu, never linked.

include npu_model/common/defs.mk
OUTPUT_DIRS	+= $(MODEL_OBJ_DIR)/opapi

LIBNNOPBASE	:= $(MODEL_LIB_DIR)/libnnopbase.so
LIBOPAPI	:= $(MODEL_LIB_DIR)/libopapi.so

$(MODEL_OBJ_DIR)/opapi/%.o: npu_model/opapi/%.c | $(MODEL_OBJ_DIR)/opapi
	$(call msg,CC,$@)
	$(Q)$(CC) $(MODEL_LIB_CFLAGS) -c $< -o $@

$(LIBNNOPBASE): $(MODEL_OBJ_DIR)/opapi/nnopbase.o $(MODEL_LIB_DIR)/libascendcl.so
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_SO_LDFLAGS) -Wl,-soname,libnnopbase.so $< -lascendcl -lnpu_common \
		-lpthread -o $@

$(LIBOPAPI): $(MODEL_OBJ_DIR)/opapi/opapi.o $(LIBNNOPBASE)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_SO_LDFLAGS) -Wl,-soname,libopapi.so $< -lnnopbase -lascendcl \
		-lnpu_common -o $@

ALL_TARGETS	+= $(LIBNNOPBASE) $(LIBOPAPI)
MODEL_LIB	+= $(LIBNNOPBASE) $(LIBOPAPI)

# The unit test links both modules with fake AscendCL launches of its own.
TEST_OBJS_test_opapi := $(MODEL_OBJ_DIR)/opapi/opapi.o $(MODEL_OBJ_DIR)/opapi/nnopbase.o \
			$(COMMON_OBJS_FOR_TESTS)
TEST_LIBS_test_opapi := -lpthread
