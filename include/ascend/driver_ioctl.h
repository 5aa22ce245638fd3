/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ascend/driver_ioctl.h - the Ascend kernel driver's ioctl interface on the
 * davinci nodes as libascend_hal.so drives it: command numbers and argument
 * layouts.  Vendor ABI, shared by user/ (the ioctl view) and npu_model/ (its
 * daemon serves exactly these); nothing simulator-only belongs here.
 *
 * Mirrors (CANN 8.x driver, hicann/driver):
 *   'Z' davinci_intf_open_arg, DAVINCI_INTF_IOCTL_*   davinci_interface.h
 *   'X' trs_res_id_para, TRS_*                       trs_ioctl.h
 *       trs_logic_cqe                                trs_core.h
 *   'M' devmm_ioctl_arg, DEVMM_SVM_*                 svm_ioctl.h (the union is the real
 *       44-byte head + 328 data bytes; only the members the HAL uses are named)
 * Device nodes: /dev/davinci_manager and /dev/davinciN.
 */
#ifndef __ASCEND_DRIVER_IOCTL_H
#define __ASCEND_DRIVER_IOCTL_H

#include <stddef.h>
#include <stdint.h>
#include <linux/ioctl.h>

#include "ascend/hal.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ASCEND_DEV_DIR	   "/dev"
#define ASCEND_DEV_MANAGER "davinci_manager"

/* ---- 'Z': module bind on davinci_manager (REAL, davinci_interface.h) ------------------ */

#define DAVINIC_MODULE_NAME_MAX		     256 /* sic, real spelling */
#define DAVINCI_INTF_IOC_MAGIC		     'Z'
#define DAVINCI_INTF_IOCTL_OPEN		     _IO(DAVINCI_INTF_IOC_MAGIC, 0) /* 0x5a00 */
#define DAVINCI_INTF_IOCTL_CLOSE	     _IO(DAVINCI_INTF_IOC_MAGIC, 1) /* 0x5a01 */
#define DAVINCI_INTF_IOCTL_GET_MODULE_STATUS _IO(DAVINCI_INTF_IOC_MAGIC, 2)

/* _IO carries no size: the pointer is passed anyway and the driver copies it in. */
struct davinci_intf_open_arg {
	char module_name[DAVINIC_MODULE_NAME_MAX];
	int device_id;
};

#define DAVINCI_MODULE_TSDRV "TSDRV"
#define DAVINCI_MODULE_SVM   "SVM"

/* ---- 'X': TSDRV (REAL, trs_ioctl.h); the fd is bound to "TSDRV" for one device -------- */

struct trs_res_id_usr_para {
	unsigned int stream_pri;
	unsigned int flag;
	unsigned int vfid;
};

struct trs_res_id_para { /* 44 bytes */
	unsigned int tsid;
	int res_type;	 /* drvIdType_t */
	unsigned int id; /* ALLOC: out; FREE: in */
	struct trs_res_id_usr_para usr_para;
	unsigned int para;
	unsigned int flag;
	int prop;
	uint32_t value[2];
};

#define TRS_IOC_MAGIC	 'X'
/* TRS_RES_ID_ALLOC = 0xc02c5800 */
#define TRS_RES_ID_ALLOC _IOWR(TRS_IOC_MAGIC, 0, struct trs_res_id_para)
/* TRS_RES_ID_FREE = 0x402c5801 */
#define TRS_RES_ID_FREE	 _IOW(TRS_IOC_MAGIC, 1, struct trs_res_id_para)
/* TRS_SQCQ_ALLOC = 0xc060580f */
#define TRS_SQCQ_ALLOC	 _IOWR(TRS_IOC_MAGIC, 15, struct halSqCqInputInfo)
/* TRS_SQCQ_FREE = 0x40345810 */
#define TRS_SQCQ_FREE	 _IOW(TRS_IOC_MAGIC, 16, struct halSqCqFreeInfo)
/* TRS_SQCQ_CONFIG = 0x40345811 */
#define TRS_SQCQ_CONFIG	 _IOW(TRS_IOC_MAGIC, 17, struct halSqCqConfigInfo)
/* TRS_SQCQ_QUERY = 0xc0345812 */
#define TRS_SQCQ_QUERY	 _IOWR(TRS_IOC_MAGIC, 18, struct halSqCqQueryInfo)
/* TRS_SQCQ_SEND = 0x40405813 */
#define TRS_SQCQ_SEND	 _IOW(TRS_IOC_MAGIC, 19, struct halTaskSendInfo)
/* TRS_SQCQ_RECV = 0xc0485814 */
#define TRS_SQCQ_RECV	 _IOWR(TRS_IOC_MAGIC, 20, struct halReportRecvInfo)

/*
 * TRS_SQCQ_ALLOC returns the new ids in the input struct's sqId / cqId (the
 * command is _IOWR on halSqCqInputInfo).  TRS_SQCQ_SEND reads sqe_num * 64
 * bytes at sqe_addr from the caller's memory.  TRS_SQCQ_RECV writes up to
 * cqe_num CQEs (struct trs_logic_cqe, 32 bytes) to cqe_addr.
 */
struct trs_logic_cqe { /* 32 bytes (trs_core.h) */
	uint16_t stream_id;
	uint16_t task_id;
	uint32_t error_code;
	uint8_t error_type;
	uint8_t sqe_type;
	uint16_t sq_id;
	uint16_t sq_head;
	uint16_t match_flag : 1, drop_flag : 1, error_bit : 1, acc_error : 1, next_task_vld : 1,
		notify_attached : 1, reserved0 : 10;
	uint64_t timestamp; /* device system counter at completion */
	uint64_t enque_timestamp;
};

/* ---- 'M': SVM (REAL numbers, svm_ioctl.h); the fd is bound to "SVM" ------------------- */

struct devmm_devid {
	uint32_t logical_devid;
	uint32_t devid;
	uint32_t vfid;
};

struct devmm_alloc_svm_para {
	uint64_t p; /* device VA chosen by the HAL */
	size_t size;
};

struct devmm_free_pages_para {
	uint64_t va;
};

enum devmm_copy_direction {
	DEVMM_COPY_HOST_TO_HOST,
	DEVMM_COPY_HOST_TO_DEVICE,
	DEVMM_COPY_DEVICE_TO_HOST,
	DEVMM_COPY_DEVICE_TO_DEVICE,
	DEVMM_COPY_INVILED_DIRECTION
};

struct devmm_copy_para {
	uint64_t dst;
	uint64_t src;
	size_t ByteCount;
	_Bool is_support_dev_local_addr;
	enum devmm_copy_direction direction;
};

struct devmm_advise_para {
	uint64_t ptr;
	size_t count;
	uint32_t advise;
};
#define DV_ADVISE_POPULATE 0x0001
#define DV_ADVISE_LOCK_DEV 0x0010

#define DEVMM_IOCTL_DATA_LEN 328
struct devmm_ioctl_arg { /* 344 bytes */
	struct devmm_devid head;
	union {
		struct devmm_alloc_svm_para alloc_svm_para;
		struct devmm_free_pages_para free_pages_para;
		struct devmm_copy_para copy_para;
		struct devmm_advise_para advise_para;
		uint64_t raw[DEVMM_IOCTL_DATA_LEN / 8];
	} data;
};

#define DEVMM_SVM_MAGIC		     'M'
/* DEVMM_SVM_ALLOC = 0x41584d03 */
#define DEVMM_SVM_ALLOC		     _IOW(DEVMM_SVM_MAGIC, 3, struct devmm_ioctl_arg)
/* DEVMM_SVM_FREE_PAGES = 0x41584d04 */
#define DEVMM_SVM_FREE_PAGES	     _IOW(DEVMM_SVM_MAGIC, 4, struct devmm_ioctl_arg)
/* DEVMM_SVM_MEMCPY = 0xc1584d05 */
#define DEVMM_SVM_MEMCPY	     _IOWR(DEVMM_SVM_MAGIC, 5, struct devmm_ioctl_arg)
/* DEVMM_SVM_ADVISE = 0x41584d0d */
#define DEVMM_SVM_ADVISE	     _IOW(DEVMM_SVM_MAGIC, 13, struct devmm_ioctl_arg)
/* DEVMM_SVM_QUERY_MEM_USEDINFO = 0xc1584d2f */
#define DEVMM_SVM_QUERY_MEM_USEDINFO _IOWR(DEVMM_SVM_MAGIC, 47, struct devmm_ioctl_arg)

ASCEND_STATIC_ASSERT(sizeof(struct davinci_intf_open_arg) == 260, "davinci_intf_open_arg");
ASCEND_STATIC_ASSERT(sizeof(struct trs_res_id_para) == 44, "trs_res_id_para");
ASCEND_STATIC_ASSERT(sizeof(struct devmm_ioctl_arg) == 344, "devmm_ioctl_arg");
ASCEND_STATIC_ASSERT(sizeof(struct trs_logic_cqe) == 32, "trs_logic_cqe");

#ifdef __cplusplus
}
#endif

#endif /* __ASCEND_DRIVER_IOCTL_H */
