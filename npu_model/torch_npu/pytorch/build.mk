# npu_model/torch_npu/pytorch/: the torch_npu Python package for Debian's real
# PyTorch (python3-torch / libtorch-dev 1.13), laid out as the wheel is:
#   $(MODEL_OUT)/python/torch_npu/{__init__.py,optim.py}
#   $(MODEL_OUT)/python/torch_npu/lib/libtorch_npu.so
# libtorch_npu.so here is the same task queue, caching allocator, op plugin
# and profiler objects as the C workload's, plus backend.cpp (the PrivateUse1
# registration), linked against the real libtorch_cpu/libc10 (by path: our own
# libtorch_cpu.so in $(MODEL_LIB_DIR) must not be picked up by -l) and finding
# the model's CANN libraries through RUNPATH $ORIGIN/../../../lib.
# A script uses it with PYTHONPATH=$(MODEL_OUT)/python.

CXX		?= g++
TORCH_LIBDIR	?= /usr/lib/$(shell $(CC) -dumpmachine)
PYPKG_DIR	:= $(MODEL_OUT)/python/torch_npu
OUTPUT_DIRS	+= $(PYPKG_DIR) $(PYPKG_DIR)/lib $(MODEL_OBJ_DIR)/torch_npu/pytorch
PYPKG_CXXFLAGS	:= -O2 -g -MMD -MP -fPIC -std=c++17 -fvisibility=hidden $(WARN_CFLAGS) \
		   -D_GNU_SOURCE -Inpu_model/include -Inpu_model \
		   -I/usr/include/torch/csrc/api/include $(EXTRA_CFLAGS)
PYPKG_BACKEND_O	:= $(MODEL_OBJ_DIR)/torch_npu/pytorch/backend.o
PYPKG_LIB	:= $(PYPKG_DIR)/lib/libtorch_npu.so
PYPKG_PY	:= $(patsubst npu_model/torch_npu/pytorch/torch_npu/%,$(PYPKG_DIR)/%,\
		   $(wildcard npu_model/torch_npu/pytorch/torch_npu/*.py))

$(PYPKG_BACKEND_O): npu_model/torch_npu/pytorch/backend.cpp | $(MODEL_OBJ_DIR)/torch_npu/pytorch
	$(call msg,CXX,$@)
	$(Q)$(CXX) $(PYPKG_CXXFLAGS) -c $< -o $@

$(PYPKG_LIB): $(TORCH_NPU_OBJS) $(PYPKG_BACKEND_O) $(MODEL_LIB_DIR)/libascendcl.so \
	      $(MODEL_LIB_DIR)/libacl_op_compiler.so $(MODEL_LIB_DIR)/libnnopbase.so | $(PYPKG_DIR)/lib
	$(call msg,LINK,$@)
	$(Q)$(CXX) $(COMMON_LDFLAGS) -shared -Wl,-z,defs -Wl,--enable-new-dtags \
		-Wl,-rpath,'$$ORIGIN/../../../lib' -Wl,-soname,libtorch_npu.so \
		$(TORCH_NPU_OBJS) $(PYPKG_BACKEND_O) \
		$(TORCH_LIBDIR)/libtorch_cpu.so $(TORCH_LIBDIR)/libc10.so \
		-L$(MODEL_LIB_DIR) -lacl_op_compiler -lnnopbase -lascendcl -lnpu_common \
		-ldl -lpthread -o $@
	$(call tnpu_release_strip,$@)

$(PYPKG_DIR)/%.py: npu_model/torch_npu/pytorch/torch_npu/%.py | $(PYPKG_DIR)
	$(Q)cp $< $@

# Not in a cross build (ARCH=arm64): it needs the target's libtorch-dev and Python.
ifeq ($(ARCH),$(HOST_ARCH))
ALL_TARGETS	+= $(PYPKG_LIB) $(PYPKG_PY)
endif
