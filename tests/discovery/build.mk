# tests/discovery/: the unit tests of PyTorch discovery link only the
# modules they test (they keep building while an unrelated module does not).

PT_TEST_OBJS := $(addprefix $(USER_OUT)/,discovery/pytorch.o discovery/seqnr.o discovery/pystack.o \
		arch/x86.o arch/arm64.o arch/arch.o lib/procmaps.o lib/hashmap.o trace/attach.o lib/log.o \
		discovery/elfsym.o)
TEST_OBJS_test_pytorch := $(PT_TEST_OBJS)
TEST_OBJS_test_pystack := $(PT_TEST_OBJS)
