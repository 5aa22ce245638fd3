// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ioctl_decode.c - davinci ioctl names and argument fields (ioctl_decode.h).
 */
#include <stdio.h>
#include <string.h>
#include "ascbpf_events.h"
#include "capture/ioctl_decode.h"

#define IOC(dir, type, nr, size) \
	(((uint32_t)(dir) << 30) | ((uint32_t)(size) << 16) | ((uint32_t)(type) << 8) | (nr))
#define IO_(t, nr)     IOC(0, t, nr, 0)
#define IOW(t, nr, s)  IOC(1, t, nr, s)
#define IOR(t, nr, s)  IOC(2, t, nr, s)
#define IOWR(t, nr, s) IOC(3, t, nr, s)

static const struct asc_ioctl_desc cmds[] = {
	/* davinci interface, any fd on davinci_manager (module_name[256], int device_id) */
	{ IO_('Z', 0), ASC_MOD_UNKNOWN, 260, "DAVINCI_INTF_IOCTL_OPEN" },
	{ IO_('Z', 1), ASC_MOD_UNKNOWN, 260, "DAVINCI_INTF_IOCTL_CLOSE" },
	{ IO_('Z', 2), ASC_MOD_UNKNOWN, 260, "DAVINCI_INTF_IOCTL_GET_MODULE_STATUS" },
	/* TSDRV, trs_ioctl.h */
	{ IOWR('X', 0, 44), ASC_MOD_TSDRV, 44, "TRS_RES_ID_ALLOC" },
	{ IOW('X', 1, 44), ASC_MOD_TSDRV, 44, "TRS_RES_ID_FREE" },
	{ IOW('X', 2, 44), ASC_MOD_TSDRV, 44, "TRS_RES_ID_ENABLE" },
	{ IOW('X', 3, 44), ASC_MOD_TSDRV, 44, "TRS_RES_ID_DISABLE" },
	{ IOWR('X', 4, 44), ASC_MOD_TSDRV, 44, "TRS_RES_ID_NUM_QUERY" },
	{ IOWR('X', 5, 44), ASC_MOD_TSDRV, 44, "TRS_RES_ID_MAX_QUERY" },
	{ IOWR('X', 6, 44), ASC_MOD_TSDRV, 44, "TRS_RES_ID_USED_NUM_QUERY" },
	{ IOWR('X', 7, 44), ASC_MOD_TSDRV, 44, "TRS_RES_ID_AVAIL_NUM_QUERY" },
	{ IOWR('X', 15, 96), ASC_MOD_TSDRV, 96, "TRS_SQCQ_ALLOC" },
	{ IOW('X', 16, 52), ASC_MOD_TSDRV, 52, "TRS_SQCQ_FREE" },
	{ IOW('X', 17, 52), ASC_MOD_TSDRV, 52, "TRS_SQCQ_CONFIG" },
	{ IOWR('X', 18, 52), ASC_MOD_TSDRV, 52, "TRS_SQCQ_QUERY" },
	{ IOW('X', 19, 64), ASC_MOD_TSDRV, 64, "TRS_SQCQ_SEND" },
	{ IOWR('X', 20, 72), ASC_MOD_TSDRV, 72, "TRS_SQCQ_RECV" },
	{ IOWR('X', 27, 96), ASC_MOD_TSDRV, 96, "TRS_ID_SQCQ_GET" },
	{ IOWR('X', 31, 24), ASC_MOD_TSDRV, 24, "TRS_STREAM_TASK_FILL" },
	/* SVM, svm_ioctl.h: every argument is struct devmm_ioctl_arg (344 bytes) */
	{ IOW('M', 3, 344), ASC_MOD_SVM, 344, "DEVMM_SVM_ALLOC" },
	{ IOW('M', 4, 344), ASC_MOD_SVM, 344, "DEVMM_SVM_FREE_PAGES" },
	{ IOWR('M', 5, 344), ASC_MOD_SVM, 344, "DEVMM_SVM_MEMCPY" },
	{ IOWR('M', 7, 344), ASC_MOD_SVM, 344, "DEVMM_SVM_ASYNC_MEMCPY" },
	{ IOW('M', 13, 344), ASC_MOD_SVM, 344, "DEVMM_SVM_ADVISE" },
	{ IOWR('M', 15, 344), ASC_MOD_SVM, 344, "DEVMM_SVM_MEMSET8" },
	{ IOWR('M', 26, 344), ASC_MOD_SVM, 344, "DEVMM_SVM_SETUP_DEVICE" },
	{ IOWR('M', 36, 344), ASC_MOD_SVM, 344, "DEVMM_SVM_INIT_PROCESS" },
	{ IOW('M', 37, 344), ASC_MOD_SVM, 344, "DEVMM_SVM_UPDATE_HEAP" },
	{ IOWR('M', 47, 344), ASC_MOD_SVM, 344, "DEVMM_SVM_QUERY_MEM_USEDINFO" },
	{ IOWR('M', 50, 344), ASC_MOD_SVM, 344, "DEVMM_SVM_MEM_CREATE" },
	{ IOWR('M', 51, 344), ASC_MOD_SVM, 344, "DEVMM_SVM_MEM_RELEASE" },
	{ IOW('M', 52, 344), ASC_MOD_SVM, 344, "DEVMM_SVM_MEM_MAP" },
	{ IOWR('M', 53, 344), ASC_MOD_SVM, 344, "DEVMM_SVM_MEM_UNMAP" },
	{ IOW('M', 101, 344), ASC_MOD_SVM, 344, "DEVMM_SVM_ALLOC_PROC_STRUCT" },
	/*
	 * No simulator-only command is named: npu_model's profiling transport
	 * ('P' on a "PROF" fd) stands in for the driver's HDC channel and shows
	 * as an unnamed command, as anything unknown on a real host.
	 */
};

unsigned int asc_ioctl_guess_module(uint32_t cmd)
{
	switch (ASC_IOC_TYPE(cmd)) {
	case 'Z':
		return ASC_MOD_UNKNOWN; /* the interface itself, any module */
	case 'X':
		return ASC_MOD_TSDRV;
	case 'M':
		/* SVM passes the 344-byte devmm_ioctl_arg; DEVMNG uses _IO (size 0) */
		return ASC_IOC_SIZE(cmd) == ASC_SVM_ARG_SIZE ? ASC_MOD_SVM : ASC_MOD_DEVMNG;
	default:
		return ASC_MOD_OTHER;
	}
}

const struct asc_ioctl_desc *asc_ioctl_lookup(uint32_t cmd, unsigned int module)
{
	size_t i;

	if (ASC_IOC_TYPE(cmd) != 'Z') {
		if (module == ASC_MOD_UNKNOWN)
			module = asc_ioctl_guess_module(cmd);
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (cmds[i].cmd != cmd)
			continue;
		if (cmds[i].module != ASC_MOD_UNKNOWN && cmds[i].module != module)
			return NULL;
		return &cmds[i];
	}
	return NULL;
}

int asc_ioctl_name(uint32_t cmd, unsigned int module, char *buf, size_t len)
{
	static const char *const dirs[] = { "_IO", "_IOW", "_IOR", "_IOWR" };
	const struct asc_ioctl_desc *d = asc_ioctl_lookup(cmd, module);
	unsigned int type = ASC_IOC_TYPE(cmd);

	if (d)
		return snprintf(buf, len, "%s", d->name);
	if (type >= 0x20 && type < 0x7f)
		return snprintf(buf, len, "%s('%c',%u,%u)", dirs[ASC_IOC_DIR(cmd)], type,
				ASC_IOC_NR(cmd), ASC_IOC_SIZE(cmd));
	return snprintf(buf, len, "0x%08x", cmd);
}

/* One argument field: name, offset, width in bytes (4 or 8), printed as a pointer. */
struct field {
	const char *name;
	uint16_t off;
	uint8_t width;
	uint8_t hex;
};

/* macros that expand to initializers: clang-format takes their braces for blocks */
// clang-format off
#define F32(n, o)	{ n, o, 4, 0 }
#define F64(n, o)	{ n, o, 8, 0 }
#define PTR(n, o)	{ n, o, 8, 1 }
#define FEND		{ NULL, 0, 0, 0 }
// clang-format on

struct layout {
	const char *cmd_name;
	struct field f[8];
};

/* Offsets from the argument structs (ascend_hal.h, trs_ioctl.h, svm_ioctl.h; LP64). */
static const struct layout layouts[] = {
	{ "TRS_RES_ID_ALLOC",
	  { F32("tsid", 0), F32("res_type", 4), F32("id", 8), F32("stream_pri", 12),
	    F32("flag", 16), FEND } },
	{ "TRS_RES_ID_FREE", { F32("tsid", 0), F32("res_type", 4), F32("id", 8), FEND } },
	{ "TRS_SQCQ_ALLOC",
	  { F32("type", 0), F32("ts_id", 4), F32("sqe_size", 8), F32("cqe_size", 12),
	    F32("sqe_depth", 16), F32("cqe_depth", 20), F32("cq_id", 32), F32("sq_id", 36) } },
	{ "TRS_SQCQ_FREE",
	  { F32("type", 0), F32("ts_id", 4), F32("sq_id", 8), F32("cq_id", 12), F32("flag", 16),
	    FEND } },
	{ "TRS_SQCQ_CONFIG",
	  { F32("type", 0), F32("sq_id", 8), F32("cq_id", 12), F32("prop", 16), F32("value", 20),
	    FEND } },
	{ "TRS_SQCQ_QUERY",
	  { F32("type", 0), F32("sq_id", 8), F32("cq_id", 12), F32("prop", 16), F32("value", 20),
	    FEND } },
	{ "TRS_SQCQ_SEND",
	  { F32("type", 0), F32("ts_id", 4), F32("sq_id", 8), F32("timeout", 12),
	    PTR("sqe_addr", 16), F32("sqe_num", 24), F32("pos", 28), FEND } },
	{ "TRS_SQCQ_RECV",
	  { F32("type", 0), F32("cq_id", 8), F32("timeout", 12), PTR("cqe_addr", 16),
	    F32("cqe_num", 24), F32("report_cqe_num", 28), F32("stream_id", 32),
	    F32("task_id", 36) } },
	/* SVM: devmm_devid head (logical_devid, devid, vfid) then the union at 16 */
	{ "DEVMM_SVM_ALLOC", { F32("devid", 4), PTR("va", 16), F64("size", 24), FEND } },
	{ "DEVMM_SVM_FREE_PAGES", { F32("devid", 4), PTR("va", 16), FEND } },
	{ "DEVMM_SVM_MEMCPY",
	  { F32("devid", 4), PTR("dst", 16), PTR("src", 24), F64("size", 32), FEND } },
	{ "DEVMM_SVM_ASYNC_MEMCPY",
	  { F32("devid", 4), PTR("dst", 16), PTR("src", 24), F64("size", 32), FEND } },
	{ "DEVMM_SVM_ADVISE",
	  { F32("devid", 4), PTR("ptr", 16), F64("count", 24), F32("advise", 32), FEND } },
	{ "DEVMM_SVM_MEMSET8",
	  { F32("devid", 4), PTR("dst", 16), F64("value", 24), F64("count", 32), FEND } },
	{ "DEVMM_SVM_QUERY_MEM_USEDINFO",
	  { F32("devid", 4), F64("total", 16), F64("used", 24), F64("used_by_caller", 32),
	    F64("peak", 40), FEND } },
	{ "DEVMM_SVM_UPDATE_HEAP",
	  { F32("devid", 4), F32("op", 16), F32("heap_type", 20), F32("heap_sub_type", 24),
	    F32("heap_idx", 28), F64("heap_size", 32), FEND } },
};

int asc_ioctl_format_args(uint32_t cmd, unsigned int module, const uint8_t *arg, size_t arg_len,
			  char *buf, size_t len)
{
	const struct asc_ioctl_desc *d = asc_ioctl_lookup(cmd, module);
	const struct layout *l = NULL;
	size_t i, pos = 0;
	int nr = 0;

	if (len)
		buf[0] = 0;
	if (!d || !arg)
		return 0;
	if (!strcmp(d->name, "DAVINCI_INTF_IOCTL_OPEN") ||
	    !strcmp(d->name, "DAVINCI_INTF_IOCTL_CLOSE")) {
		size_t n = strnlen((const char *)arg, arg_len);

		if (n == 0 || n == arg_len) /* absent, or cut before its NUL */
			return 0;
		snprintf(buf, len, "module=%.*s", (int)n, (const char *)arg);
		return 1;
	}
	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (!strcmp(layouts[i].cmd_name, d->name))
			l = &layouts[i];
	if (!l)
		return 0;
	for (i = 0; i < 8 && l->f[i].name; i++) {
		const struct field *f = &l->f[i];
		uint64_t v = 0;
		int n;

		if ((size_t)f->off + f->width > arg_len)
			continue;
		if (f->width == 8) {
			memcpy(&v, arg + f->off, 8);
		} else {
			uint32_t v32;

			memcpy(&v32, arg + f->off, 4);
			v = v32;
		}
		n = snprintf(buf + pos, pos < len ? len - pos : 0,
			     f->hex ? "%s%s=0x%llx" : "%s%s=%llu", nr ? " " : "", f->name,
			     (unsigned long long)v);
		if (n > 0)
			pos += n;
		nr++;
	}
	return nr;
}
