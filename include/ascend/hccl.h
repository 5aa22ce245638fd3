/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ascend/hccl.h - the HCCL ABI a tracer reads: result codes, data types,
 * reduce ops, the root info and its handle, the collective prototypes, and
 * the profiling report HCCL gives msprof for each communication task.
 * Vendor ABI, shared by bpf/ (offsets), user/ and npu_model/ (which
 * implements the API in libhccl.so).
 *
 * Mirrors (CANN 8.x):
 *   HcclResult, HcclDataType, HcclReduceOp,        hccl/hccl_types.h
 *   HcclRootInfo (HCCL_ROOT_INFO_BYTES 4108)
 *   the Hccl* prototypes                           hccl/hccl.h
 *   HcclRootHandle (what HcclRootInfo holds)       hcomm topo: ip, port,
 *                                                  nicDeploy, identifier, rankId
 *   MsprofAdditionalInfo, MsprofHcclInfo,          toolchain/prof_common.h,
 *   MsprofReportAdditionalInfo, MsprofGetHashId    prof_api.h (libprofapi.so)
 */
#ifndef __ASCEND_HCCL_H
#define __ASCEND_HCCL_H

#ifdef __bpf__
/* BPF programs: the fixed-width types come from vmlinux.h; no prototypes */
#else
#include <stddef.h>
#include <stdint.h>
#endif

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

typedef enum {
	HCCL_SUCCESS = 0,
	HCCL_E_PARA = 1,
	HCCL_E_PTR = 2,
	HCCL_E_MEMORY = 3,
	HCCL_E_INTERNAL = 4,
	HCCL_E_NOT_SUPPORT = 5,
	HCCL_E_NOT_FOUND = 6,
	HCCL_E_UNAVAIL = 7,
	HCCL_E_SYSCALL = 8,
	HCCL_E_TIMEOUT = 9,
	HCCL_E_OPEN_FILE_FAILURE = 10,
	HCCL_E_TCP_CONNECT = 11,
	HCCL_E_ROCE_CONNECT = 12,
	HCCL_E_TCP_TRANSFER = 13,
	HCCL_E_ROCE_TRANSFER = 14,
	HCCL_E_RUNTIME = 15,
	HCCL_E_DRV = 16,
	HCCL_E_PROFILING = 17,
	HCCL_E_CCE = 18,
	HCCL_E_NETWORK = 19,
	HCCL_E_AGAIN = 20,
	HCCL_E_REMOTE = 21,
	HCCL_E_SUSPENDING = 22,
	HCCL_E_RESERVED
} HcclResult;

typedef enum {
	HCCL_REDUCE_SUM = 0,
	HCCL_REDUCE_PROD = 1,
	HCCL_REDUCE_MAX = 2,
	HCCL_REDUCE_MIN = 3,
	HCCL_REDUCE_RESERVED
} HcclReduceOp;

typedef enum {
	HCCL_DATA_TYPE_INT8 = 0,
	HCCL_DATA_TYPE_INT16 = 1,
	HCCL_DATA_TYPE_INT32 = 2,
	HCCL_DATA_TYPE_FP16 = 3,
	HCCL_DATA_TYPE_FP32 = 4,
	HCCL_DATA_TYPE_INT64 = 5,
	HCCL_DATA_TYPE_UINT64 = 6,
	HCCL_DATA_TYPE_UINT8 = 7,
	HCCL_DATA_TYPE_UINT16 = 8,
	HCCL_DATA_TYPE_UINT32 = 9,
	HCCL_DATA_TYPE_FP64 = 10,
	HCCL_DATA_TYPE_BFP16 = 11,
	HCCL_DATA_TYPE_INT128 = 12,
	HCCL_DATA_TYPE_RESERVED
} HcclDataType;

#define HCCL_ROOT_INFO_BYTES 4108
typedef struct HcclRootInfoDef {
	char internal[HCCL_ROOT_INFO_BYTES];
} HcclRootInfo;

#ifndef __bpf__
typedef void *HcclComm;
typedef void *aclrtStream;
#endif

/*
 * What HcclGetRootInfo writes at the start of HcclRootInfo.internal: the
 * root's address and the communicator's identifier
 * ("ip_port_devPhyId_timestamp"), which is the name of every communicator
 * made from this root info (HcclGetCommName, msprof's group name).
 */
#define HCCL_ROOT_IP_LEN	 64
#define HCCL_ROOT_IDENTIFIER_LEN 128 /* ROOTINFO_INDENTIFIER_MAX_LENGTH */
typedef struct HcclRootHandleDef {
	char ip[HCCL_ROOT_IP_LEN];
	uint32_t port;
	uint32_t nicDeploy;
	char identifier[HCCL_ROOT_IDENTIFIER_LEN];
	uint32_t rankId;
} HcclRootHandle;
#define HCCL_ROOT_HANDLE_IDENTIFIER_OFF 72
ASCEND_STATIC_ASSERT(__builtin_offsetof(HcclRootHandle, identifier) ==
			     HCCL_ROOT_HANDLE_IDENTIFIER_OFF,
		     "HcclRootHandle.identifier offset");
ASCEND_STATIC_ASSERT(sizeof(HcclRootHandle) <= HCCL_ROOT_INFO_BYTES, "root handle fits");

/* The name HcclCommInitClusterInfo gives its communicator (HCCL_WORLD_GROUP). */
#define HCCL_WORLD_GROUP "hccl_world_group"

#ifndef __bpf__
/* libhccl.so (hccl.h); argument order is what a probe reads. */
HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo);
HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank,
				HcclComm *comm);
HcclResult HcclCommInitClusterInfo(const char *clusterInfo, uint32_t rank, HcclComm *comm);
HcclResult HcclCommDestroy(HcclComm comm);
HcclResult HcclGetRankSize(HcclComm comm, uint32_t *rankSize);
HcclResult HcclGetRankId(HcclComm comm, uint32_t *rank);
HcclResult HcclGetCommName(HcclComm comm, char *commName);
HcclResult HcclAllReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
			 HcclReduceOp op, HcclComm comm, aclrtStream stream);
HcclResult HcclBroadcast(void *buf, uint64_t count, HcclDataType dataType, uint32_t root,
			 HcclComm comm, aclrtStream stream);
HcclResult HcclReduceScatter(void *sendBuf, void *recvBuf, uint64_t recvCount,
			     HcclDataType dataType, HcclReduceOp op, HcclComm comm,
			     aclrtStream stream);
HcclResult HcclAllGather(void *sendBuf, void *recvBuf, uint64_t sendCount, HcclDataType dataType,
			 HcclComm comm, aclrtStream stream);
HcclResult HcclReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
		      HcclReduceOp op, uint32_t root, HcclComm comm, aclrtStream stream);
HcclResult HcclAlltoAll(const void *sendBuf, uint64_t sendCount, HcclDataType sendType,
			const void *recvBuf, uint64_t recvCount, HcclDataType recvType,
			HcclComm comm, aclrtStream stream);
HcclResult HcclAlltoAllV(const void *sendBuf, const void *sendCounts, const void *sdispls,
			 HcclDataType sendType, const void *recvBuf, const void *recvCounts,
			 const void *rdispls, HcclDataType recvType, HcclComm comm,
			 aclrtStream stream);
HcclResult HcclSend(void *sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank,
		    HcclComm comm, aclrtStream stream);
HcclResult HcclRecv(void *recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank,
		    HcclComm comm, aclrtStream stream);
HcclResult HcclBarrier(HcclComm comm, aclrtStream stream);

/* Bytes of one element of an HcclDataType; 0 for an unknown type. */
static inline uint32_t hccl_dtype_size(uint32_t t)
{
	static const uint8_t sz[] = { 1, 2, 4, 2, 4, 8, 8, 1, 2, 4, 8, 2, 16 };

	return t < sizeof(sz) ? sz[t] : 0;
}
#endif /* !__bpf__ */

/* ---- the profiling report (libprofapi.so) ---- */

#define MSPROF_REPORT_DATA_MAGIC_NUM	  0x5A5AU
#define MSPROF_REPORT_HCCL_NODE_LEVEL	  5500U
#define MSPROF_ADDTIONAL_INFO_DATA_LENGTH 232

#pragma pack(push, 1)
struct MsprofAdditionalInfo {
	uint16_t magicNumber; /* MSPROF_REPORT_DATA_MAGIC_NUM */
	uint16_t level;	      /* MSPROF_REPORT_HCCL_NODE_LEVEL for HCCL's task info */
	uint32_t type;
	uint32_t threadId;
	uint32_t dataLen;
	uint64_t timeStamp;
	uint8_t data[MSPROF_ADDTIONAL_INFO_DATA_LENGTH];
};
#pragma pack(pop)

/* One communication task, as HCCL reports it (the data of a level-5500 info). */
#pragma pack(push, 4)
struct MsprofHcclInfo {
	uint64_t itemId; /* hash id (MsprofGetHashId) of the task name */
	uint64_t cclTag;
	uint64_t groupName; /* hash id of the group name */
	uint32_t localRank;
	uint32_t remoteRank;
	uint32_t rankSize;
	uint32_t workFlowMode;
	uint32_t planeID;
	uint32_t ctxId;
	uint64_t notifyID;
	uint32_t stage;
	uint32_t role; /* 0 dst, 1 src */
	double durationEstimated;
	uint64_t srcAddr;
	uint64_t dstAddr;
	uint64_t dataSize;	/* bytes */
	uint32_t opType;	/* HcclReduceOp */
	uint32_t dataType;	/* HcclDataType */
	uint32_t linkType;	/* 0 OnChip, 1 HCCS, 2 PCIe, 3 RoCE */
	uint32_t transportType; /* 0 SDMA, 1 RDMA, 2 LOCAL */
	uint32_t rdmaType;	/* 0 RDMASendNotify, 1 RDMASendPayload */
	uint32_t reserve2;
};
#pragma pack(pop)

ASCEND_STATIC_ASSERT(sizeof(struct MsprofAdditionalInfo) == 256, "MsprofAdditionalInfo size");
ASCEND_STATIC_ASSERT(sizeof(struct MsprofHcclInfo) == 120, "MsprofHcclInfo size");
ASCEND_STATIC_ASSERT(__builtin_offsetof(struct MsprofHcclInfo, srcAddr) == 72,
		     "MsprofHcclInfo layout");
ASCEND_STATIC_ASSERT(__builtin_offsetof(struct MsprofHcclInfo, linkType) == 104,
		     "MsprofHcclInfo layout");

#ifndef __bpf__
int32_t MsprofReportAdditionalInfo(uint32_t nonPersistantFlag, const void *data, uint32_t length);
uint64_t MsprofGetHashId(const char *hashInfo, size_t length);
#endif

#ifdef __cplusplus
}
#endif

#endif /* __ASCEND_HCCL_H */
