# npu_model/: the simulated Ascend stack (libraries, npu-modeld, npu_train).
# See npu_model/README.md.  Sub-directories with their own fragment
# (npu_model/*/build.mk) are included here.

MODEL_OUT	:= $(OUTPUT)/npu_model
MODEL_CFLAGS	:= $(COMMON_CFLAGS) -fPIC -fno-lto -Inpu_model/include -Inpu_model
OUTPUT_DIRS	+= $(MODEL_OUT)

include $(wildcard npu_model/*/build.mk)
