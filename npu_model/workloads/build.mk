# npu_model/workloads/: npu_train, the training-loop workload (scenario table:
# npu_train --list).  Runs from build/ without LD_LIBRARY_PATH (RUNPATH).

include npu_model/common/defs.mk
OUTPUT_DIRS	+= $(MODEL_OBJ_DIR)/workloads
NPU_TRAIN	:= $(MODEL_BIN_DIR)/npu_train

$(MODEL_OBJ_DIR)/workloads/%.o: npu_model/workloads/%.c | $(MODEL_OBJ_DIR)/workloads
	$(call msg,CC,$@)
	$(Q)$(CC) $(MODEL_CFLAGS) -c $< -o $@

$(NPU_TRAIN): $(MODEL_OBJ_DIR)/workloads/npu_train.o $(MODEL_LIB_DIR)/libtorch_npu.so \
	      $(MODEL_LIB_DIR)/libhccl.so | $(MODEL_BIN_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_EXE_LDFLAGS) $< -ltorch_npu -ltorch_cpu -lascendcl -lhccl -lruntime \
		-lnpu_common -o $@

# npu_aclclient: AscendCL used directly, as a CANN sample would (tests/npu_model).
NPU_ACLCLIENT	:= $(MODEL_BIN_DIR)/npu_aclclient
$(NPU_ACLCLIENT): $(MODEL_OBJ_DIR)/workloads/npu_aclclient.o $(MODEL_LIB_DIR)/libacl_op_compiler.so \
		  | $(MODEL_BIN_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_EXE_LDFLAGS) $< -lacl_op_compiler -lascendcl -o $@

ALL_TARGETS	+= $(NPU_TRAIN) $(NPU_ACLCLIENT)
MODEL_BIN	+= $(NPU_TRAIN) $(NPU_ACLCLIENT)

# npu_launch_paths: one task through every CANN 8.x/9.x launch path (tests/trace).
NPU_LAUNCH_PATHS := $(MODEL_BIN_DIR)/npu_launch_paths
$(NPU_LAUNCH_PATHS): $(MODEL_OBJ_DIR)/workloads/npu_launch_paths.o $(MODEL_LIB_DIR)/libascendcl.so \
		     $(MODEL_LIB_DIR)/libruntime.so | $(MODEL_BIN_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_EXE_LDFLAGS) $< -lascendcl -lruntime -ldl -o $@

ALL_TARGETS	+= $(NPU_LAUNCH_PATHS)
MODEL_BIN	+= $(NPU_LAUNCH_PATHS)
