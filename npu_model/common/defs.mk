# npu_model/common/defs.mk: paths and link flags shared by every npu_model
# fragment.  Include it at the top of a fragment (it is guarded, so any
# number of includes in any order is fine):  include npu_model/common/defs.mk

ifndef MODEL_DEFS_INCLUDED
MODEL_DEFS_INCLUDED	:= 1
MODEL_LIB_DIR	:= $(MODEL_OUT)/lib
MODEL_BIN_DIR	:= $(MODEL_OUT)/bin
MODEL_OBJ_DIR	:= $(MODEL_OUT)/obj
OUTPUT_DIRS	+= $(MODEL_LIB_DIR) $(MODEL_BIN_DIR) $(MODEL_OBJ_DIR)
# Libraries find each other next to themselves ($ORIGIN); binaries in ../lib.
MODEL_SO_LDFLAGS	:= $(COMMON_LDFLAGS) -shared -Wl,-z,defs -Wl,--enable-new-dtags \
			   -Wl,-rpath,'$$ORIGIN' -L$(MODEL_LIB_DIR)
MODEL_EXE_LDFLAGS	:= $(COMMON_LDFLAGS) -Wl,--enable-new-dtags -Wl,-rpath,'$$ORIGIN/../lib' \
			   -L$(MODEL_LIB_DIR)
# libnpu_common.so (journal writer + cost model): link with -lnpu_common.
LIBNPU_COMMON	:= $(MODEL_LIB_DIR)/libnpu_common.so
# Its objects, for unit tests that link a module without the shared libraries.
COMMON_OBJS_FOR_TESTS := $(MODEL_OBJ_DIR)/common/journal.o $(MODEL_OBJ_DIR)/common/costmodel.o
# Model libraries export only their entry points (NPU_NOINLINE = default visibility).
MODEL_LIB_CFLAGS := $(MODEL_CFLAGS) -fvisibility=hidden
endif
