# npu_model/acl/: libascendcl.so (aclInit, aclrt*, tensor descriptions) and
# libacl_op_compiler.so (aclopCompileAndExecute(V2)), both over libruntime.

include npu_model/common/defs.mk
OUTPUT_DIRS	+= $(MODEL_OBJ_DIR)/acl

LIBASCENDCL	:= $(MODEL_LIB_DIR)/libascendcl.so
LIBACLOP	:= $(MODEL_LIB_DIR)/libacl_op_compiler.so

$(MODEL_OBJ_DIR)/acl/%.o: npu_model/acl/%.c | $(MODEL_OBJ_DIR)/acl
	$(call msg,CC,$@)
	$(Q)$(CC) $(MODEL_LIB_CFLAGS) -c $< -o $@

$(LIBASCENDCL): $(MODEL_OBJ_DIR)/acl/acl.o $(MODEL_LIB_DIR)/libruntime.so $(LIBNPU_COMMON)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_SO_LDFLAGS) -Wl,-soname,libascendcl.so $< -lruntime -lnpu_common \
		-lpthread -o $@

$(LIBACLOP): $(MODEL_OBJ_DIR)/acl/aclop.o $(LIBASCENDCL)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(MODEL_SO_LDFLAGS) -Wl,-soname,libacl_op_compiler.so $< -lascendcl -lruntime \
		-lnpu_common -lpthread -o $@

ALL_TARGETS	+= $(LIBASCENDCL) $(LIBACLOP)
MODEL_LIB	+= $(LIBASCENDCL) $(LIBACLOP)
