# npu_model/acl/: libacl_rt.so (aclInit, aclrt*: acl.c, over libruntime),
# libascendcl.so (the compatibility layer forwarding those to libacl_rt.so:
# compat.c, plus the tensor descriptions: acl_op.c) and
# libacl_op_compiler.so (aclopCompileAndExecute(V2)).

include npu_model/common/defs.mk
OUTPUT_DIRS	+= $(MODEL_OBJ_DIR)/acl

LIBACL_RT	:= $(MODEL_LIB_DIR)/libacl_rt.so
LIBASCENDCL	:= $(MODEL_LIB_DIR)/libascendcl.so
LIBACLOP	:= $(MODEL_LIB_DIR)/libacl_op_compiler.so

$(MODEL_OBJ_DIR)/acl/%.o: npu_model/acl/%.c | $(MODEL_OBJ_DIR)/acl
	$(call msg,CC,$@)
	$(Q)$(CC) $(MODEL_LIB_CFLAGS) -c $< -o $@

$(LIBACL_RT): $(MODEL_OBJ_DIR)/acl/acl.o $(MODEL_LIB_DIR)/libruntime.so $(LIBNPU_COMMON)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_SO_LDFLAGS) -Wl,-soname,libacl_rt.so $< -lruntime -lnpu_common \
		-lpthread -o $@

# --no-as-needed: libacl_rt.so is reached through dlsym only, and must be DT_NEEDED.
$(LIBASCENDCL): $(MODEL_OBJ_DIR)/acl/compat.o $(MODEL_OBJ_DIR)/acl/acl_op.o $(LIBACL_RT)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_SO_LDFLAGS) -Wl,-soname,libascendcl.so $(filter %.o,$^) \
		-Wl,--no-as-needed -lacl_rt -Wl,--as-needed -lnpu_common -ldl -o $@

$(LIBACLOP): $(MODEL_OBJ_DIR)/acl/aclop.o $(LIBASCENDCL)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_SO_LDFLAGS) -Wl,-soname,libacl_op_compiler.so $< -lascendcl -lruntime \
		-lnpu_common -lpthread -o $@

ALL_TARGETS	+= $(LIBACL_RT) $(LIBASCENDCL) $(LIBACLOP)
MODEL_LIB	+= $(LIBACL_RT) $(LIBASCENDCL) $(LIBACLOP)
