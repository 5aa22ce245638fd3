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
	$(Q)$(CC) $(MODEL_SO_LDFLAGS) -Wl,-soname,libnnopbase.so $< -lascendcl -lruntime -lnpu_common \
		-lpthread -o $@

$(LIBOPAPI): $(MODEL_OBJ_DIR)/opapi/opapi.o $(LIBNNOPBASE)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_SO_LDFLAGS) -Wl,-soname,libopapi.so $< -lnnopbase -lascendcl \
		-lnpu_common -o $@

ALL_TARGETS	+= $(LIBNNOPBASE) $(LIBOPAPI)
MODEL_LIB	+= $(LIBNNOPBASE) $(LIBOPAPI)

# CANN 8.x/9.x's split operator libraries (npu_model/README.md): the same
# opapi.o, each exporting one family's aclnn ops (a version script; the
# rest stays local).  libopapi.so above keeps them all, as CANN still ships it.
OPAPI_FAMILY_math	:= Add Mul Cast Sqrt ReduceSum InplaceMuls InplaceAdds InplaceAddcmul \
			   InplaceAddcdiv NpuFormatCast Nonzero
OPAPI_FAMILY_nn		:= Relu ThresholdBackward Gelu GeluBackward Softmax SoftmaxBackward \
			   LayerNorm LayerNormBackward Convolution ConvolutionBackward Matmul Addmm
OPAPI_LIB_aclnn_ops_train := ApplyAdamWV2 ForeachMulScalar
OPAPI_LIB_cust_opapi	:= ForeachMulScalar
OPAPI_SPLIT_NAMES	:= opapi_math opapi_nn aclnn_ops_train cust_opapi
OPAPI_LIB_opapi_math	:= $(OPAPI_FAMILY_math)
OPAPI_LIB_opapi_nn	:= $(OPAPI_FAMILY_nn)
OPAPI_SPLIT_LIBS	:= $(patsubst %,$(MODEL_LIB_DIR)/lib%.so,$(OPAPI_SPLIT_NAMES))

$(OPAPI_SPLIT_NAMES:%=$(MODEL_OBJ_DIR)/opapi/%.ver): $(MODEL_OBJ_DIR)/opapi/%.ver: npu_model/opapi/build.mk | $(MODEL_OBJ_DIR)/opapi
	$(Q)printf '{ global: %s local: *; };\n' \
		"$(foreach op,$(OPAPI_LIB_$*),aclnn$(op); aclnn$(op)GetWorkspaceSize;)" > $@

$(OPAPI_SPLIT_LIBS): $(MODEL_LIB_DIR)/lib%.so: $(MODEL_OBJ_DIR)/opapi/opapi.o $(MODEL_OBJ_DIR)/opapi/%.ver $(LIBNNOPBASE)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_SO_LDFLAGS) -Wl,-soname,lib$*.so \
		-Wl,--version-script,$(MODEL_OBJ_DIR)/opapi/$*.ver $< -lnnopbase -lascendcl \
		-lnpu_common -o $@

ALL_TARGETS	+= $(OPAPI_SPLIT_LIBS)
MODEL_LIB	+= $(OPAPI_SPLIT_LIBS)

# The unit test links both modules with fake AscendCL launches of its own.
TEST_OBJS_test_opapi := $(MODEL_OBJ_DIR)/opapi/opapi.o $(MODEL_OBJ_DIR)/opapi/nnopbase.o \
			$(COMMON_OBJS_FOR_TESTS)
TEST_LIBS_test_opapi := -lpthread
