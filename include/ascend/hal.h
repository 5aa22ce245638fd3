/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ascend/hal.h - the driver's user-space HAL (libascend_hal.so): function
 * names, prototypes, structure layouts and constants as the real driver
 * ships them.  Vendor ABI, shared by bpf/, user/ and npu_model/ (the
 * simulator implements exactly this and static-asserts its layouts here);
 * nothing simulator-only belongs in this folder.
 *
 * Mirrors (CANN 8.x driver, hicann/driver and the CANN pkg_inc headers):
 *   drvError_t, DRV_ERROR_*            ascend_hal_error.h
 *   halSqCq*, halTaskSendInfo,
 *   halReportRecvInfo, halResourceId*  pkg_inc/driver/ascend_hal_base.h, hal_pkg/trs_pkg.h
 *   MEM_* flag word                    ascend_hal_define.h
 *   PROF_CHANNEL_*, prof_start_para,
 *   prof_poll_info, prof_* prototypes  ascend_hal.h ("DLLEXPORT int prof_drv_start(unsigned
 *                                      int device_id, unsigned int channel_id, struct
 *                                      prof_start_para *start_para)"); the driver's
 *                                      src/ascend_hal/dmc/prof/ checks the arguments and
 *                                      carries them to the device over HDC (prof_hdc_msg.h)
 *   StarsSocLogConfigT,
 *   TS_PROFILE_COMMAND_TYPE_*          msprof's ai_drv_prof_api.cpp (DrvStarsSocLogStart) and
 *                                      MindStudio mspti's inject_base.h (2025: 11 words; older
 *                                      toolkits pass the first 9 or 10, a prefix)
 *   MODULE_TYPE_SYSTEM, INFO_TYPE_*    DEV_INFO_TYPE of ascend_hal_base.h (hicann/runtime
 *                                      copy, lines 369-381); the driver's halGetDeviceInfo
 *                                      answers INFO_TYPE_SYS_COUNT from the host-device info
 *                                      and *_OSC_FREQUE from drv_get_osc_freq
 */
#ifndef __ASCEND_HAL_H
#define __ASCEND_HAL_H

#include <stddef.h>
#include <stdint.h>

#ifndef ASCEND_STATIC_ASSERT
#ifdef __cplusplus
#define ASCEND_STATIC_ASSERT static_assert
#else
#define ASCEND_STATIC_ASSERT _Static_assert
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef int drvError_t; /* real: enum (ascend_hal_error.h); DRV_ERROR_NONE = 0 */
#define DRV_ERROR_NONE		      0
#define DRV_ERROR_NO_DEVICE	      1
#define DRV_ERROR_INVALID_DEVICE      2
#define DRV_ERROR_INVALID_VALUE	      3
#define DRV_ERROR_INVALID_HANDLE      4
#define DRV_ERROR_INVALID_MALLOC_TYPE 5
#define DRV_ERROR_OUT_OF_MEMORY	      6
#define DRV_ERROR_INNER_ERR	      7
#define DRV_ERROR_PARA_ERROR	      8
#define DRV_ERROR_UNINIT	      9
#define DRV_ERROR_REPEATED_INIT	      10
#define DRV_ERROR_NOT_EXIST	      11
#define DRV_ERROR_REPEATED_USERD      12
#define DRV_ERROR_BUSY		      13
#define DRV_ERROR_NO_RESOURCES	      14
#define DRV_ERROR_OUT_OF_CMD_SLOT     15
#define DRV_ERROR_WAIT_TIMEOUT	      16
#define DRV_ERROR_IOCRL_FAIL	      17
#define DRV_ERROR_NOT_SUPPORT	      0xfffe

#define SQCQ_RTS_INFO_LENGTH 5
#define SQCQ_RESV_LENGTH     8

typedef enum tagDrvSqCqType {
	DRV_NORMAL_TYPE = 0,
	DRV_CALLBACK_TYPE,
	DRV_LOGIC_TYPE,
	DRV_SHM_TYPE,
	DRV_CTRL_TYPE,
	DRV_GDB_TYPE,
	DRV_INVALID_TYPE
} drvSqCqType_t;

struct halSqCqInputInfo { /* 96 bytes */
	drvSqCqType_t type;
	uint32_t tsId;
	uint32_t sqeSize;  /* normal: 64 */
	uint32_t cqeSize;  /* normal: 12 */
	uint32_t sqeDepth; /* normal: 1024 */
	uint32_t cqeDepth;
	uint32_t grpId;
	uint32_t flag;
	uint32_t cqId;
	uint32_t sqId;
	uint32_t info[SQCQ_RTS_INFO_LENGTH];
	uint32_t ext_info_len;
	void *ext_info;
	uint32_t res[SQCQ_RESV_LENGTH - 3];
};

struct halSqCqOutputInfo {
	uint32_t sqId;
	uint32_t cqId;
	unsigned long long queueVAddr;
	uint32_t flag;
	uint32_t res[SQCQ_RESV_LENGTH - 1];
};

struct halSqCqFreeInfo { /* 52 bytes */
	drvSqCqType_t type;
	uint32_t tsId;
	uint32_t sqId;
	uint32_t cqId;
	uint32_t flag;
	uint32_t res[SQCQ_RESV_LENGTH];
};

typedef enum tagDrvSqCqPropType {
	DRV_SQCQ_PROP_SQ_STATUS = 0,
	DRV_SQCQ_PROP_SQ_HEAD,
	DRV_SQCQ_PROP_SQ_TAIL,
	DRV_SQCQ_PROP_SQ_DISABLE_TO_ENABLE,
	DRV_SQCQ_PROP_SQ_CQE_STATUS,
	DRV_SQCQ_PROP_SQ_REG_BASE,
	DRV_SQCQ_PROP_SQ_BASE,
	DRV_SQCQ_PROP_SQ_DEPTH,
	DRV_SQCQ_PROP_MAX
} drvSqCqPropType_t;

struct halSqCqQueryInfo { /* 52 bytes */
	drvSqCqType_t type;
	uint32_t tsId;
	uint32_t sqId;
	uint32_t cqId;
	drvSqCqPropType_t prop;
	uint32_t value[SQCQ_RESV_LENGTH];
};

struct halSqCqConfigInfo { /* 52 bytes */
	drvSqCqType_t type;
	uint32_t tsId;
	uint32_t sqId;
	uint32_t cqId;
	drvSqCqPropType_t prop;
	uint32_t value[SQCQ_RESV_LENGTH];
};

struct halTaskSendInfo { /* 64 bytes */
	drvSqCqType_t type;
	uint32_t tsId;
	uint32_t sqId;
	int32_t timeout;
	uint8_t *sqe_addr;
	uint32_t sqe_num;
	uint32_t pos;			/* output: first sqe pos */
	uint32_t res[SQCQ_RESV_LENGTH]; /* must be zero */
};

struct halReportRecvInfo { /* 72 bytes */
	drvSqCqType_t type;
	uint32_t tsId;
	uint32_t cqId;
	int32_t timeout;
	uint8_t *cqe_addr;
	uint32_t cqe_num;
	uint32_t report_cqe_num; /* output */
	uint32_t stream_id;
	uint32_t task_id; /* all ones: no strict task-id match */
	uint32_t res[SQCQ_RESV_LENGTH];
};

typedef enum tagDrvIdType {
	DRV_STREAM_ID = 0,
	DRV_EVENT_ID,
	DRV_MODEL_ID,
	DRV_NOTIFY_ID,
	DRV_CMO_ID,
	DRV_CNT_NOTIFY_ID,
	DRV_SQ_ID,
	DRV_CQ_ID,
	DRV_INVALID_ID
} drvIdType_t;

struct halResourceIdInputInfo { /* 44 bytes; res[0]: stream priority, res[1]: flag */
	drvIdType_t type;
	uint32_t tsId;
	uint32_t resourceId;
	uint32_t res[8];
};

struct halResourceIdOutputInfo {
	uint32_t resourceId;
	uint32_t res[8];
};

/* halMemAlloc flag word (ascend_hal_define.h). */
#define MEM_SVM		    (0ULL << 10)
#define MEM_DEV		    (1ULL << 10)
#define MEM_HOST	    (2ULL << 10)
#define MEM_TYPE_DDR	    (0ULL << 14)
#define MEM_TYPE_HBM	    (1ULL << 14)
#define MEM_PAGE_HUGE	    (1ULL << 17)
#define MEM_DEVID(flag)	    ((uint32_t)((flag)&0x3ff))
#define MEM_MODULE_ID(flag) ((uint32_t)(((flag) >> 56) & 0xff))

/* Profiling channels (enum AI_DRV_CHANNEL, ai_drv_prof_api.h). */
#define PROF_CHANNEL_TS_CPU	   10
#define PROF_CHANNEL_AI_CORE	   43
#define PROF_CHANNEL_TS_FW	   44
#define PROF_CHANNEL_HWTS_LOG	   45
#define PROF_CHANNEL_STARS_SOC_LOG 50
#define PROF_CHANNEL_NPU_APP_MEM   130
#define PROF_CHANNEL_NUM_MAX	   160

/* prof_start_para.channel_type (enum ProfChannelType). */
#define PROF_CHANNEL_TYPE_TS	     0
#define PROF_CHANNEL_TYPE_PERIPHERAL 1

struct prof_start_para {       /* 32 bytes */
	uint32_t channel_type; /* PROF_CHANNEL_TYPE_*: channel 50 is a TS channel */
	uint32_t sample_period;
	uint32_t real_time;	 /* 1: PROFILE_REAL_TIME */
	void *user_data;	 /* channel 50: a StarsSocLogConfigT */
	uint32_t user_data_size; /* bytes at user_data; must be 0 when user_data is NULL */
};

struct prof_poll_info {
	uint32_t device_id;
	uint32_t channel_id;
};

/* StarsSocLogConfigT fields: 1 enables, 2 disables; 0 (memset) leaves it off. */
#define TS_PROFILE_COMMAND_TYPE_ACK		  0
#define TS_PROFILE_COMMAND_TYPE_PROFILING_ENABLE  1
#define TS_PROFILE_COMMAND_TYPE_PROFILING_DISABLE 2

/*
 * What channel 50 (STARS SOC log) collects: msprof zeroes it and enables
 * acsq_task (and ffts_thread_task) for task times.  Without acsq_task the
 * card writes no ACSQ task records to the channel.
 */
typedef struct TagStarsSocLogConfig { /* 44 bytes */
	uint32_t acsq_task;
	uint32_t acc_pmu;
	uint32_t cdqm_reg;
	uint32_t dvpp_vpc_block;
	uint32_t dvpp_jpegd_block;
	uint32_t dvpp_jpede_block;
	uint32_t ffts_thread_task;
	uint32_t ffts_block;
	uint32_t sdma_dmu;
	uint32_t tag; /* 0: enable immediately, 1: delayed */
	uint32_t blockShinkFlag;
} StarsSocLogConfigT;
/* The oldest published layout ends after sdma_dmu; later ones only append words. */
#define STARS_SOC_LOG_CONFIG_MIN_SIZE 36

/* halGetDeviceInfo(dev, MODULE_TYPE_SYSTEM, INFO_TYPE_*, &value) (DEV_INFO_TYPE). */
#define MODULE_TYPE_SYSTEM	  0
#define INFO_TYPE_VERSION	  1
#define INFO_TYPE_SYS_COUNT	  13 /* the device system counter, now */
#define INFO_TYPE_MONOTONIC_RAW	  14
#define INFO_TYPE_HOST_OSC_FREQUE 24 /* host oscillator (torch_npu's clock), kHz */
#define INFO_TYPE_DEV_OSC_FREQUE  25 /* device system counter frequency, kHz */

drvError_t halGetAPIVersion(int *halAPIVersion);
drvError_t halGetDeviceInfo(uint32_t devId, int32_t moduleType, int32_t infoType, int64_t *value);
drvError_t drvGetDevNum(uint32_t *num_dev);

drvError_t halMemAlloc(void **pp, unsigned long long size, unsigned long long flag);
drvError_t halMemFree(void *pp);

drvError_t halResourceIdAlloc(uint32_t devId, struct halResourceIdInputInfo *in,
			      struct halResourceIdOutputInfo *out);
drvError_t halResourceIdFree(uint32_t devId, struct halResourceIdInputInfo *in);
drvError_t halSqCqAllocate(uint32_t devId, struct halSqCqInputInfo *in,
			   struct halSqCqOutputInfo *out);
drvError_t halSqCqFree(uint32_t devId, struct halSqCqFreeInfo *info);
drvError_t halSqCqQuery(uint32_t devId, struct halSqCqQueryInfo *info);
drvError_t halSqCqConfig(uint32_t devId, struct halSqCqConfigInfo *info);
drvError_t halSqTaskSend(uint32_t devId, struct halTaskSendInfo *info);
drvError_t halCqReportRecv(uint32_t devId, struct halReportRecvInfo *info);

int prof_drv_start(unsigned int device_id, unsigned int channel_id,
		   struct prof_start_para *start_para);
int prof_stop(unsigned int device_id, unsigned int channel_id);
int prof_channel_read(unsigned int device_id, unsigned int channel_id, char *out_buf,
		      unsigned int buf_size);
int prof_channel_poll(struct prof_poll_info *out_buf, int num, int timeout);
int halProfDataFlush(unsigned int device_id, unsigned int channel_id, unsigned int *data_len);

ASCEND_STATIC_ASSERT(sizeof(struct halSqCqInputInfo) == 96, "halSqCqInputInfo");
ASCEND_STATIC_ASSERT(sizeof(struct halSqCqFreeInfo) == 52, "halSqCqFreeInfo");
ASCEND_STATIC_ASSERT(sizeof(struct halSqCqQueryInfo) == 52, "halSqCqQueryInfo");
ASCEND_STATIC_ASSERT(sizeof(struct halTaskSendInfo) == 64, "halTaskSendInfo");
ASCEND_STATIC_ASSERT(sizeof(struct halReportRecvInfo) == 72, "halReportRecvInfo");
ASCEND_STATIC_ASSERT(sizeof(struct prof_start_para) == 32, "prof_start_para");
ASCEND_STATIC_ASSERT(sizeof(StarsSocLogConfigT) == 44, "StarsSocLogConfigT");

#ifdef __cplusplus
}
#endif

#endif /* __ASCEND_HAL_H */
