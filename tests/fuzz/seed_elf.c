// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * seed_elf.c - a tiny shared object, built as a seed for fuzz_elf: functions
 * whose names the readers look for (a CANN API, the c10::TensorImpl
 * accessors PyTorch discovery decodes), of a few prologue kinds, with
 * .dynsym, .symtab and a build-id.  Never run.
 */
#include <stdint.h>

struct impl {
	char pad[0x40];
	int64_t size;
	int64_t sizes[5];
	uint16_t dtype;
};

int aclnnAdd(void *ws, uint64_t n, void *exec, void *stream)
{
	return ws && n && exec && stream ? 0 : 1;
}

/* c10::TensorImpl::dim_custom() const */
int64_t _ZNK3c1010TensorImpl10dim_customEv(const struct impl *t)
{
	return t->size;
}

/* c10::TensorImpl::sizes_custom() const */
const int64_t *_ZNK3c1010TensorImpl12sizes_customEv(const struct impl *t)
{
	return t->size > 5 ? (const int64_t *)t->sizes[0] : t->sizes;
}

static int local_helper(int x)
{
	return x * 3 + 1;
}

int asc_seed_loop(int n)
{
	int s = 0;

	while (n--)
		s += local_helper(n);
	return s;
}
