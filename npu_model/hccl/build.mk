# npu_model/hccl/: libhccl.so (the HCCL API over libruntime's notifies and
# link copies; npu_model/README.md "HCCL") and libprofapi.so (the msprof
# report entry points HCCL calls for each task).

include npu_model/common/defs.mk
OUTPUT_DIRS	+= $(MODEL_OBJ_DIR)/hccl

LIBHCCL		:= $(MODEL_LIB_DIR)/libhccl.so
LIBPROFAPI	:= $(MODEL_LIB_DIR)/libprofapi.so

$(MODEL_OBJ_DIR)/hccl/%.o: npu_model/hccl/%.c | $(MODEL_OBJ_DIR)/hccl
	$(call msg,CC,$@)
	$(Q)$(CC) $(MODEL_LIB_CFLAGS) -c $< -o $@

$(LIBPROFAPI): $(MODEL_OBJ_DIR)/hccl/profapi.o | $(MODEL_LIB_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_SO_LDFLAGS) -Wl,-soname,libprofapi.so $< -o $@

$(LIBHCCL): $(MODEL_OBJ_DIR)/hccl/hccl.o $(LIBPROFAPI) $(MODEL_LIB_DIR)/libruntime.so \
	    $(LIBNPU_COMMON)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_SO_LDFLAGS) -Wl,-soname,libhccl.so $< -lruntime -lprofapi \
		-lnpu_common -lpthread -lrt -o $@

ALL_TARGETS	+= $(LIBHCCL) $(LIBPROFAPI)
MODEL_LIB	+= $(LIBHCCL) $(LIBPROFAPI)
