# npu_model/torch_npu_oldabi/: libtorch_npu.so built for the old C++ ABI
# (-D_GLIBCXX_USE_CXX11_ABI=0), as torch_npu wheels before 2.7 (2.6 on
# aarch64) are: OpCommand::RunOpApiV2 takes a copy-on-write std::string and
# has the other mangled name (npu_model/include/npu_torch.h).  The same
# sources as npu_model/torch_npu/, in $(MODEL_OUT)/lib-oldabi/; a C workload
# uses it with LD_LIBRARY_PATH=$(MODEL_OUT)/lib-oldabi (searched before the
# binaries' RUNPATH); its own RUNPATH finds the other libraries in ../lib.
# Stripped and split like the new-ABI build (tnpu_release_strip, torch_npu/build.mk).

include npu_model/common/defs.mk
OLDABI_LIB_DIR	:= $(MODEL_OUT)/lib-oldabi
OLDABI_OBJ_DIR	:= $(MODEL_OBJ_DIR)/torch_npu-oldabi
OUTPUT_DIRS	+= $(OLDABI_LIB_DIR) $(OLDABI_OBJ_DIR)
OLDABI_OBJS	:= $(patsubst npu_model/torch_npu/%.c,$(OLDABI_OBJ_DIR)/%.o,\
		   $(wildcard npu_model/torch_npu/*.c))
LIBTORCH_NPU_OLDABI := $(OLDABI_LIB_DIR)/libtorch_npu.so

$(OLDABI_OBJ_DIR)/%.o: npu_model/torch_npu/%.c | $(OLDABI_OBJ_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(MODEL_LIB_CFLAGS) -D_GLIBCXX_USE_CXX11_ABI=0 -c $< -o $@

$(LIBTORCH_NPU_OLDABI): $(OLDABI_OBJS) $(MODEL_LIB_DIR)/libtorch_cpu.so \
			$(MODEL_LIB_DIR)/libascendcl.so $(MODEL_LIB_DIR)/libacl_op_compiler.so \
			$(MODEL_LIB_DIR)/libnnopbase.so | $(OLDABI_LIB_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(COMMON_LDFLAGS) -shared -Wl,-z,defs -Wl,--enable-new-dtags \
		-Wl,-rpath,'$$ORIGIN/../lib' -L$(MODEL_LIB_DIR) -Wl,-soname,libtorch_npu.so \
		$(OLDABI_OBJS) -ltorch_cpu -lacl_op_compiler -lnnopbase -lascendcl -lnpu_common \
		-ldl -lpthread -o $@
	$(call tnpu_release_strip,$@)

ALL_TARGETS	+= $(LIBTORCH_NPU_OLDABI)
