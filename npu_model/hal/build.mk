# npu_model/hal/: libascend_hal.so, the driver user-space HAL (ascend_hal.h)
# over npu-modeld's device nodes (npu_ioctl.h).  Real soname; only the hal*,
# drv* and prof_* entry points are exported (noinline, default visibility).

include npu_model/common/defs.mk
HAL_OBJ_DIR	:= $(MODEL_OBJ_DIR)/hal
OUTPUT_DIRS	+= $(HAL_OBJ_DIR)
HAL_SRCS	:= $(wildcard npu_model/hal/*.c)
HAL_OBJS	:= $(patsubst npu_model/hal/%.c,$(HAL_OBJ_DIR)/%.o,$(HAL_SRCS))
LIBASCEND_HAL	:= $(MODEL_LIB_DIR)/libascend_hal.so

$(HAL_OBJ_DIR)/%.o: npu_model/hal/%.c | $(HAL_OBJ_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(MODEL_LIB_CFLAGS) -c $< -o $@

$(LIBASCEND_HAL): $(HAL_OBJS) $(LIBNPU_COMMON) | $(MODEL_LIB_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_SO_LDFLAGS) -Wl,-soname,libascend_hal.so $(HAL_OBJS) -lnpu_common \
		-lpthread -o $@

ALL_TARGETS	+= $(LIBASCEND_HAL)
MODEL_LIB	+= $(LIBASCEND_HAL)
