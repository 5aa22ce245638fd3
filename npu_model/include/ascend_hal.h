/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ascend_hal.h - the driver user-space HAL (libascend_hal.so) as npu_model
 * implements it: the real function names, prototypes and structure layouts
 * of CANN's pkg_inc/driver/ascend_hal_base.h and hal_pkg/trs_pkg.h (see
 * docs/cann_api.md §2.3, §4), so that upper layers and
 * ascbpf's probes see the same ABI as on an Ascend host.
 */
#ifndef __NPU_MODEL_ASCEND_HAL_H
#define __NPU_MODEL_ASCEND_HAL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int drvError_t;		/* real: enum (ascend_hal_error.h); DRV_ERROR_NONE = 0 */
#define DRV_ERROR_NONE			0
#define DRV_ERROR_NO_DEVICE		1
#define DRV_ERROR_INVALID_DEVICE	2
#define DRV_ERROR_INVALID_VALUE		3
#define DRV_ERROR_INVALID_HANDLE	4
#define DRV_ERROR_INVALID_MALLOC_TYPE	5
#define DRV_ERROR_OUT_OF_MEMORY		6
#define DRV_ERROR_INNER_ERR		7
#define DRV_ERROR_PARA_ERROR		8
#define DRV_ERROR_UNINIT		9
#define DRV_ERROR_REPEATED_INIT		10
#define DRV_ERROR_NOT_EXIST		11
#define DRV_ERROR_REPEATED_USERD	12
#define DRV_ERROR_BUSY			13
#define DRV_ERROR_NO_RESOURCES		14
#define DRV_ERROR_OUT_OF_CMD_SLOT	15
#define DRV_ERROR_WAIT_TIMEOUT		16
#define DRV_ERROR_IOCRL_FAIL		17
#define DRV_ERROR_NOT_SUPPORT		0xfffe

#define SQCQ_RTS_INFO_LENGTH	5
#define SQCQ_RESV_LENGTH	8

typedef enum tagDrvSqCqType {
	DRV_NORMAL_TYPE = 0, DRV_CALLBACK_TYPE, DRV_LOGIC_TYPE, DRV_SHM_TYPE,
	DRV_CTRL_TYPE, DRV_GDB_TYPE, DRV_INVALID_TYPE
} drvSqCqType_t;

struct halSqCqInputInfo {		/* 96 bytes */
	drvSqCqType_t type;
	uint32_t tsId;
	uint32_t sqeSize;		/* normal: 64 */
	uint32_t cqeSize;		/* normal: 12 */
	uint32_t sqeDepth;		/* normal: 1024 */
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

struct halSqCqFreeInfo {		/* 52 bytes */
	drvSqCqType_t type;
	uint32_t tsId;
	uint32_t sqId;
	uint32_t cqId;
	uint32_t flag;
	uint32_t res[SQCQ_RESV_LENGTH];
};

typedef enum tagDrvSqCqPropType {
	DRV_SQCQ_PROP_SQ_STATUS = 0, DRV_SQCQ_PROP_SQ_HEAD, DRV_SQCQ_PROP_SQ_TAIL,
	DRV_SQCQ_PROP_SQ_DISABLE_TO_ENABLE, DRV_SQCQ_PROP_SQ_CQE_STATUS,
	DRV_SQCQ_PROP_SQ_REG_BASE, DRV_SQCQ_PROP_SQ_BASE, DRV_SQCQ_PROP_SQ_DEPTH,
	DRV_SQCQ_PROP_MAX
} drvSqCqPropType_t;

struct halSqCqQueryInfo {		/* 52 bytes */
	drvSqCqType_t type;
	uint32_t tsId;
	uint32_t sqId;
	uint32_t cqId;
	drvSqCqPropType_t prop;
	uint32_t value[SQCQ_RESV_LENGTH];
};

struct halSqCqConfigInfo {		/* 52 bytes */
	drvSqCqType_t type;
	uint32_t tsId;
	uint32_t sqId;
	uint32_t cqId;
	drvSqCqPropType_t prop;
	uint32_t value[SQCQ_RESV_LENGTH];
};

struct halTaskSendInfo {		/* 64 bytes */
	drvSqCqType_t type;
	uint32_t tsId;
	uint32_t sqId;
	int32_t timeout;
	uint8_t *sqe_addr;
	uint32_t sqe_num;
	uint32_t pos;			/* output: first sqe pos */
	uint32_t res[SQCQ_RESV_LENGTH];	/* must be zero */
};

struct halReportRecvInfo {		/* 72 bytes */
	drvSqCqType_t type;
	uint32_t tsId;
	uint32_t cqId;
	int32_t timeout;
	uint8_t *cqe_addr;
	uint32_t cqe_num;
	uint32_t report_cqe_num;	/* output */
	uint32_t stream_id;
	uint32_t task_id;		/* all ones: no strict task-id match */
	uint32_t res[SQCQ_RESV_LENGTH];
};

typedef enum tagDrvIdType {
	DRV_STREAM_ID = 0, DRV_EVENT_ID, DRV_MODEL_ID, DRV_NOTIFY_ID, DRV_CMO_ID,
	DRV_CNT_NOTIFY_ID, DRV_SQ_ID, DRV_CQ_ID, DRV_INVALID_ID
} drvIdType_t;

struct halResourceIdInputInfo {		/* 44 bytes; res[0]: stream priority, res[1]: flag */
	drvIdType_t type;
	uint32_t tsId;
	uint32_t resourceId;
	uint32_t res[8];
};

struct halResourceIdOutputInfo {
	uint32_t resourceId;
	uint32_t res[8];
};

/* STARS SQE header (rt_external_stars_define.h, packed): 8 bytes, then 56 command bytes. */
#pragma pack(push, 1)
typedef struct tagStarsSqeHeader {
	uint8_t type : 6;
	uint8_t l1Lock : 1;
	uint8_t l1Unlock : 1;
	uint8_t ie : 2;
	uint8_t preP : 2;
	uint8_t postP : 2;
	uint8_t wrCqe : 1;
	uint8_t reserved : 1;
	uint16_t blockDim;
	uint16_t rtStreamId;
	uint16_t taskId;
} rtStarsSqeHeader_t;
#pragma pack(pop)

typedef struct tagRtStarsCommonSqe {
	rtStarsSqeHeader_t sqeHeader;
	uint32_t commandCustom[14];
} rtStarsCommonSqe_t;

/* halMemAlloc flag word (ascend_hal_define.h). */
#define MEM_SVM			(0ULL << 10)
#define MEM_DEV			(1ULL << 10)
#define MEM_HOST		(2ULL << 10)
#define MEM_TYPE_DDR		(0ULL << 14)
#define MEM_TYPE_HBM		(1ULL << 14)
#define MEM_PAGE_HUGE		(1ULL << 17)
#define MEM_DEVID(flag)		((uint32_t)((flag) & 0x3ff))
#define MEM_MODULE_ID(flag)	((uint32_t)(((flag) >> 56) & 0xff))

/* Profiling channels (ai_drv_prof_api.h). */
#define PROF_CHANNEL_TS_CPU		10
#define PROF_CHANNEL_AI_CORE		43
#define PROF_CHANNEL_HWTS_LOG		45
#define PROF_CHANNEL_STARS_SOC_LOG	50
#define PROF_CHANNEL_NPU_APP_MEM	130

struct prof_start_para {
	uint32_t channel_type;
	uint32_t sample_period;
	uint32_t real_time;
	void *user_data;
	uint32_t user_data_size;
};

struct prof_poll_info {
	uint32_t device_id;
	uint32_t channel_id;
};

/* STARS ACSQ task log record (64 bytes) delivered on channel 50. */
struct StarsLogHead {
	uint16_t logType : 6;
	uint16_t cnt : 4;
	uint16_t sqeType : 6;
	uint16_t hex6bd3;
};
struct StarsAcsqLog {
	struct StarsLogHead head;
	uint16_t streamId;
	uint16_t taskId;
	uint32_t sysCountLow;
	uint32_t sysCountHigh;
	uint32_t reserved[12];
};
#define ACSQ_TASK_START_FUNC_TYPE	0
#define ACSQ_TASK_END_FUNC_TYPE		1

/* halGetDeviceInfo module/info types used by torch_npu and ascbpf. */
#define MODULE_TYPE_SYSTEM		0
#define INFO_TYPE_SYS_COUNT_FREQ	24	/* torch_npu: halGetDeviceInfo(0, 0, 24, &freq) */

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

#ifdef __cplusplus
}
#endif

#endif /* __NPU_MODEL_ASCEND_HAL_H */
