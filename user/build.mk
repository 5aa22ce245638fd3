# user/: the ascbpf program, one folder ("room") per stage of the data flow
# (docs/CONTRIBUTING.md).  Every user/ROOM/NAME.c is a module
# (-> $(OUTPUT)/user/ROOM/NAME.o) linked into ascbpf with user/main.c; unit
# tests link the modules they test (tests/build.mk).  Includes name the room:
# #include "capture/capture.h".

USER_OUT	:= $(OUTPUT)/user
OUTPUT_DIRS	+= $(USER_OUT)
USER_ROOMS	:= lib arch discovery trace capture analysis convert report agent
USER_SRCS	:= user/main.c $(foreach r,$(USER_ROOMS),$(wildcard user/$(r)/*.c))
USER_OBJS	:= $(patsubst user/%.c,$(USER_OUT)/%.o,$(USER_SRCS))
OUTPUT_DIRS	+= $(addprefix $(USER_OUT)/,$(USER_ROOMS))
USER_LIB_OBJS	:= $(filter-out $(USER_OUT)/main.o,$(USER_OBJS))

USER_PKGS	:= libbpf libelf libzstd zlib sqlite3
USER_CFLAGS	:= $(COMMON_CFLAGS) -Iuser -Ibpf -I$(BPF_OUT) \
		   -DASCBPF_VERSION='"$(VERSION)"' \
		   $(shell $(PKG_CONFIG) --cflags $(USER_PKGS) 2>/dev/null)
USER_LDLIBS	:= $(shell $(PKG_CONFIG) --libs $(USER_PKGS) 2>/dev/null) -ldl -lpthread -lm
# __cxa_demangle for native call stacks (user/analysis/correlate.c, a weak reference):
# libstdc++ goes into ascbpf only, kept even where the linker drops unused libs.
ASCBPF_DEMANGLE_LIBS := -Wl,--push-state,--no-as-needed -lstdc++ -Wl,--pop-state
TEST_LIBS_test_correlate := $(USER_LDLIBS) $(ASCBPF_DEMANGLE_LIBS)

# Modules may include BPF skeletons: build those first.
$(USER_OUT)/%.o: user/%.c | $(USER_OUT) $(addprefix $(USER_OUT)/,$(USER_ROOMS)) $(BPF_SKELS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -c $< -o $@

ifneq ($(wildcard user/main.c),)
$(OUTPUT)/ascbpf: $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(COMMON_LDFLAGS) $^ $(USER_LDLIBS) $(ASCBPF_DEMANGLE_LIBS) -o $@

ALL_TARGETS	+= $(OUTPUT)/ascbpf
INSTALL_BIN	+= $(OUTPUT)/ascbpf
endif

# The man page is generated from the program's own --help texts (so not in a cross build).
ifneq ($(wildcard user/main.c),)
ifeq ($(ARCH),$(HOST_ARCH))
$(OUTPUT)/ascbpf.8: $(OUTPUT)/ascbpf tools/mkman.sh
	$(call msg,MAN,$@)
	$(Q)tools/mkman.sh $(OUTPUT)/ascbpf $(VERSION) > $@

ALL_TARGETS	+= $(OUTPUT)/ascbpf.8
endif
endif
