// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_ioctl_decode.c - the davinci ioctl table against the values the
 * driver headers give (docs/cann_api.md §3) and against <linux/ioctl.h>
 * applied to npu_model's HAL structs; module disambiguation; field decoding
 * of real argument structs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/ioctl.h>
#include <cmocka.h>
#include "ascbpf_events.h"
#include "ascend_hal.h"
#include "capture/ioctl_decode.h"
#include "npu_ioctl.h"

struct known {
	uint32_t cmd;
	unsigned int module;
	const char *name;
};

/* Hex values as listed in the reference (derived there with gcc, x86-64). */
static const struct known reference[] = {
	{ 0xc02c5800, ASC_MOD_TSDRV, "TRS_RES_ID_ALLOC" },
	{ 0x402c5801, ASC_MOD_TSDRV, "TRS_RES_ID_FREE" },
	{ 0xc060580f, ASC_MOD_TSDRV, "TRS_SQCQ_ALLOC" },
	{ 0x40345810, ASC_MOD_TSDRV, "TRS_SQCQ_FREE" },
	{ 0x40345811, ASC_MOD_TSDRV, "TRS_SQCQ_CONFIG" },
	{ 0xc0345812, ASC_MOD_TSDRV, "TRS_SQCQ_QUERY" },
	{ 0x40405813, ASC_MOD_TSDRV, "TRS_SQCQ_SEND" },
	{ 0xc0485814, ASC_MOD_TSDRV, "TRS_SQCQ_RECV" },
	{ 0xc060581b, ASC_MOD_TSDRV, "TRS_ID_SQCQ_GET" },
	{ 0xc018581f, ASC_MOD_TSDRV, "TRS_STREAM_TASK_FILL" },
	{ 0x41584d03, ASC_MOD_SVM, "DEVMM_SVM_ALLOC" },
	{ 0x41584d04, ASC_MOD_SVM, "DEVMM_SVM_FREE_PAGES" },
	{ 0xc1584d05, ASC_MOD_SVM, "DEVMM_SVM_MEMCPY" },
	{ 0xc1584d07, ASC_MOD_SVM, "DEVMM_SVM_ASYNC_MEMCPY" },
	{ 0x41584d0d, ASC_MOD_SVM, "DEVMM_SVM_ADVISE" },
	{ 0xc1584d0f, ASC_MOD_SVM, "DEVMM_SVM_MEMSET8" },
	{ 0xc1584d1a, ASC_MOD_SVM, "DEVMM_SVM_SETUP_DEVICE" },
	{ 0xc1584d24, ASC_MOD_SVM, "DEVMM_SVM_INIT_PROCESS" },
	{ 0x41584d25, ASC_MOD_SVM, "DEVMM_SVM_UPDATE_HEAP" },
	{ 0xc1584d2f, ASC_MOD_SVM, "DEVMM_SVM_QUERY_MEM_USEDINFO" },
	{ 0xc1584d32, ASC_MOD_SVM, "DEVMM_SVM_MEM_CREATE" },
	{ 0xc1584d33, ASC_MOD_SVM, "DEVMM_SVM_MEM_RELEASE" },
	{ 0x41584d34, ASC_MOD_SVM, "DEVMM_SVM_MEM_MAP" },
	{ 0xc1584d35, ASC_MOD_SVM, "DEVMM_SVM_MEM_UNMAP" },
	{ 0x41584d65, ASC_MOD_SVM, "DEVMM_SVM_ALLOC_PROC_STRUCT" },
	{ 0x00005a00, ASC_MOD_UNKNOWN, "DAVINCI_INTF_IOCTL_OPEN" },
	{ 0x00005a01, ASC_MOD_UNKNOWN, "DAVINCI_INTF_IOCTL_CLOSE" },
	{ 0x00005a02, ASC_MOD_UNKNOWN, "DAVINCI_INTF_IOCTL_GET_MODULE_STATUS" },
};

static void test_reference_values(void **state)
{
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(reference) / sizeof(reference[0]); i++) {
		const struct asc_ioctl_desc *d = asc_ioctl_lookup(reference[i].cmd,
								  reference[i].module);

		if (!d)
			fail_msg("0x%08x (%s) not found", reference[i].cmd, reference[i].name);
		assert_string_equal(d->name, reference[i].name);
		/* also found with the module left to the guess */
		assert_non_null(asc_ioctl_lookup(reference[i].cmd, ASC_MOD_UNKNOWN));
		asc_ioctl_name(reference[i].cmd, reference[i].module, buf, sizeof(buf));
		assert_string_equal(buf, reference[i].name);
	}
}

/* The same commands built with the kernel's macros from npu_model's structs. */
static void test_matches_linux_ioctl_macros(void **state)
{
	(void)state;
	assert_string_equal(
		asc_ioctl_lookup(_IOWR('X', 15, struct halSqCqInputInfo), ASC_MOD_TSDRV)->name,
		"TRS_SQCQ_ALLOC");
	assert_string_equal(
		asc_ioctl_lookup(_IOW('X', 16, struct halSqCqFreeInfo), ASC_MOD_TSDRV)->name,
		"TRS_SQCQ_FREE");
	assert_string_equal(
		asc_ioctl_lookup(_IOWR('X', 18, struct halSqCqQueryInfo), ASC_MOD_TSDRV)->name,
		"TRS_SQCQ_QUERY");
	assert_string_equal(
		asc_ioctl_lookup(_IOW('X', 19, struct halTaskSendInfo), ASC_MOD_TSDRV)->name,
		"TRS_SQCQ_SEND");
	assert_string_equal(
		asc_ioctl_lookup(_IOWR('X', 20, struct halReportRecvInfo), ASC_MOD_TSDRV)->name,
		"TRS_SQCQ_RECV");
	assert_int_equal(_IO('Z', 0), 0x5a00);
}

static void test_module_disambiguation(void **state)
{
	(void)state;
	assert_int_equal(asc_ioctl_guess_module(0x41584d03), ASC_MOD_SVM);
	assert_int_equal(asc_ioctl_guess_module(_IO('M', 3)), ASC_MOD_DEVMNG);
	assert_int_equal(asc_ioctl_guess_module(0xc060580f), ASC_MOD_TSDRV);
	assert_int_equal(asc_ioctl_guess_module(_IOR('T', 1, int)), ASC_MOD_OTHER);
	/* an SVM command seen on an fd bound to TSDRV is not decoded as SVM */
	assert_null(asc_ioctl_lookup(0x41584d03, ASC_MOD_TSDRV));
	assert_null(asc_ioctl_lookup(0xc060580f, ASC_MOD_SVM));
	/* the 'Z' interface works on every module */
	assert_non_null(asc_ioctl_lookup(0x5a00, ASC_MOD_SVM));
	assert_null(asc_ioctl_lookup(0xdeadbeef, ASC_MOD_UNKNOWN));
}

static void test_unknown_name_fallback(void **state)
{
	char buf[64];

	(void)state;
	asc_ioctl_name(_IOWR('X', 99, struct halSqCqFreeInfo), ASC_MOD_TSDRV, buf, sizeof(buf));
	assert_string_equal(buf, "_IOWR('X',99,52)");
	asc_ioctl_name(0x00000001, ASC_MOD_OTHER, buf, sizeof(buf));
	assert_string_equal(buf, "0x00000001");
}

static void test_format_sqcq_alloc(void **state)
{
	struct halSqCqInputInfo in = { .type = DRV_NORMAL_TYPE,
				       .tsId = 0,
				       .sqeSize = 64,
				       .cqeSize = 12,
				       .sqeDepth = 1024,
				       .cqeDepth = 1024,
				       .cqId = 3,
				       .sqId = 7 };
	char buf[256];
	uint8_t arg[ASC_IOCTL_ARG_LEN];

	(void)state;
	memcpy(arg, &in, sizeof(arg)); /* the BPF side keeps the first 48 bytes */
	assert_int_equal(asc_ioctl_format_args(0xc060580f, ASC_MOD_TSDRV, arg, sizeof(arg), buf,
					       sizeof(buf)),
			 8);
	assert_string_equal(buf, "type=0 ts_id=0 sqe_size=64 cqe_size=12 sqe_depth=1024 "
				 "cqe_depth=1024 cq_id=3 sq_id=7");
}

static void test_format_task_send_and_short_copy(void **state)
{
	uint8_t sqes[64];
	struct halTaskSendInfo ti = {
		.sqId = 2, .timeout = -1, .sqe_addr = sqes, .sqe_num = 5, .pos = 9
	};
	char buf[256], want[256];

	(void)state;
	assert_int_equal(asc_ioctl_format_args(0x40405813, ASC_MOD_TSDRV, (uint8_t *)&ti,
					       sizeof(ti), buf, sizeof(buf)),
			 7);
	snprintf(want, sizeof(want),
		 "type=0 ts_id=0 sq_id=2 timeout=4294967295 sqe_addr=%p "
		 "sqe_num=5 pos=9",
		 (void *)sqes);
	assert_string_equal(buf, want);
	/* only 12 bytes copied: fields beyond are left out, not read */
	assert_int_equal(asc_ioctl_format_args(0x40405813, ASC_MOD_TSDRV, (uint8_t *)&ti, 12, buf,
					       sizeof(buf)),
			 3);
	assert_string_equal(buf, "type=0 ts_id=0 sq_id=2");
}

static void test_format_svm_alloc_and_bind(void **state)
{
	uint8_t arg[ASC_IOCTL_ARG_LEN] = {};
	uint32_t devid = 1;
	uint64_t va = 0x100000000ULL, size = 2 << 20;
	char buf[128];

	(void)state;
	memcpy(arg + 4, &devid, 4);
	memcpy(arg + 16, &va, 8);
	memcpy(arg + 24, &size, 8);
	assert_int_equal(asc_ioctl_format_args(0x41584d03, ASC_MOD_SVM, arg, sizeof(arg), buf,
					       sizeof(buf)),
			 3);
	assert_string_equal(buf, "devid=1 va=0x100000000 size=2097152");

	memset(arg, 0, sizeof(arg));
	strcpy((char *)arg, "TSDRV");
	assert_int_equal(asc_ioctl_format_args(0x5a00, ASC_MOD_UNKNOWN, arg, sizeof(arg), buf,
					       sizeof(buf)),
			 1);
	assert_string_equal(buf, "module=TSDRV");
	/* a name without its NUL in the copied bytes is not printed */
	memset(arg, 'A', sizeof(arg));
	assert_int_equal(asc_ioctl_format_args(0x5a00, ASC_MOD_UNKNOWN, arg, sizeof(arg), buf,
					       sizeof(buf)),
			 0);
	assert_string_equal(buf, "");
	/* unknown command or no bytes */
	assert_int_equal(asc_ioctl_format_args(0x1234, ASC_MOD_OTHER, arg, sizeof(arg), buf,
					       sizeof(buf)),
			 0);
	assert_int_equal(asc_ioctl_format_args(0x41584d03, ASC_MOD_SVM, NULL, 0, buf, sizeof(buf)),
			 0);
}

/*
 * npu_model's own profiling commands ('P' on an fd bound to "PROF") are no
 * driver's: they are not named or decoded, on any module.
 */
static void test_model_prof_commands_not_decoded(void **state)
{
	struct npu_prof_read_arg ra = { .device_id = 1,
					.channel_id = 50,
					.buf = 0x1000,
					.buf_size = 4096,
					.bytes = 128,
					.dropped = 3,
					.pending = 7 };
	char buf[256];

	(void)state;
	assert_null(asc_ioctl_lookup(NPU_PROF_IOCTL_START, ASC_MOD_OTHER));
	assert_null(asc_ioctl_lookup(NPU_PROF_IOCTL_POLL, ASC_MOD_UNKNOWN));
	assert_null(asc_ioctl_lookup(NPU_PROF_IOCTL_READ, ASC_MOD_TSDRV));
	assert_int_equal(asc_ioctl_format_args(NPU_PROF_IOCTL_READ, ASC_MOD_OTHER, (uint8_t *)&ra,
					       sizeof(ra), buf, sizeof(buf)),
			 0);
	assert_string_equal(buf, "");
	asc_ioctl_name(NPU_PROF_IOCTL_START, ASC_MOD_OTHER, buf, sizeof(buf));
	assert_string_equal(buf, "_IOW('P',0,32)");
	asc_ioctl_name(NPU_PROF_IOCTL_READ, ASC_MOD_OTHER, buf, sizeof(buf));
	assert_string_equal(buf, "_IOWR('P',2,40)");
	assert_string_equal(asc_ioctl_lookup(DEVMM_SVM_QUERY_MEM_USEDINFO, ASC_MOD_SVM)->name,
			    "DEVMM_SVM_QUERY_MEM_USEDINFO");
}

static void test_format_truncates_safely(void **state)
{
	struct halSqCqInputInfo in = { .sqeSize = 64 };
	char buf[10];

	(void)state;
	asc_ioctl_format_args(0xc060580f, ASC_MOD_TSDRV, (uint8_t *)&in, 48, buf, sizeof(buf));
	assert_int_equal(strlen(buf), sizeof(buf) - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_values),
		cmocka_unit_test(test_matches_linux_ioctl_macros),
		cmocka_unit_test(test_module_disambiguation),
		cmocka_unit_test(test_unknown_name_fallback),
		cmocka_unit_test(test_format_sqcq_alloc),
		cmocka_unit_test(test_format_task_send_and_short_copy),
		cmocka_unit_test(test_format_svm_alloc_and_bind),
		cmocka_unit_test(test_model_prof_commands_not_decoded),
		cmocka_unit_test(test_format_truncates_safely),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
