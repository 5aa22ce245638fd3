// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * db_schema.c - table definitions and enum contents of torch_npu's db export,
 * written down from docs/db_schema.md (which names the sources).
 */
#include "convert/db_schema.h"

#define I		   "INTEGER"
#define T		   "TEXT"
#define N		   "NUMERIC"
#define TABLE(id, nm, arr) [id] = { nm, arr, (int)(sizeof(arr) / sizeof(arr[0])) }

static const struct asc_db_col string_ids[] = { { "id", I, 1 }, { "value", T, 0 } };
static const struct asc_db_col session_time_info[] = {
	{ "startTimeNs", I, 0 },
	{ "endTimeNs", I, 0 },
};
static const struct asc_db_col rank_device_map[] = { { "rankId", I, 0 }, { "deviceId", I, 0 } };
static const struct asc_db_col meta_data[] = { { "name", T, 0 }, { "value", T, 0 } };
static const struct asc_db_col task[] = {
	{ "startNs", I, 0 },	  { "endNs", I, 0 },	    { "deviceId", I, 0 },
	{ "connectionId", I, 0 }, { "globalTaskId", I, 0 }, { "globalPid", I, 0 },
	{ "taskType", I, 0 },	  { "contextId", I, 0 },    { "streamId", I, 0 },
	{ "taskId", I, 0 },	  { "modelId", I, 0 },
};
static const struct asc_db_col compute_task_info[] = {
	{ "name", I, 0 },	   { "globalTaskId", I, 1 },	{ "blockNum", I, 0 },
	{ "mixBlockNum", I, 0 },   { "taskType", I, 0 },	{ "opType", I, 0 },
	{ "inputFormats", I, 0 },  { "inputDataTypes", I, 0 },	{ "inputShapes", I, 0 },
	{ "outputFormats", I, 0 }, { "outputDataTypes", I, 0 }, { "outputShapes", I, 0 },
	{ "attrInfo", I, 0 },	   { "opState", I, 0 },		{ "hf32Eligible", I, 0 },
	{ "gridDim", I, 0 },	   { "blockDim", I, 0 },
};
static const struct asc_db_col communication_task_info[] = {
	{ "name", I, 0 },	   { "globalTaskId", I, 0 }, { "taskType", I, 0 },
	{ "planeId", I, 0 },	   { "groupName", I, 0 },    { "notifyId", I, 0 },
	{ "rdmaType", I, 0 },	   { "srcRank", I, 0 },	     { "dstRank", I, 0 },
	{ "transportType", I, 0 }, { "size", I, 0 },	     { "dataType", I, 0 },
	{ "linkType", I, 0 },	   { "opId", I, 0 },	     { "isMaster", I, 0 },
	{ "bandwidth", N, 0 },
};
static const struct asc_db_col communication_op[] = {
	{ "opName", I, 0 },    { "startNs", I, 0 },  { "endNs", I, 0 }, { "connectionId", I, 0 },
	{ "groupName", I, 0 }, { "opId", I, 1 },     { "relay", I, 0 }, { "retry", I, 0 },
	{ "dataType", I, 0 },  { "algType", I, 0 },  { "count", N, 0 }, { "opType", I, 0 },
	{ "deviceId", I, 0 },  { "rankSize", I, 0 },
};
static const struct asc_db_col cann_api[] = {
	{ "startNs", I, 0 },   { "endNs", I, 0 },	 { "type", I, 0 },
	{ "globalTid", I, 0 }, { "connectionId", I, 1 }, { "name", I, 0 },
};
static const struct asc_db_col npu_mem[] = {
	{ "type", I, 0 },	 { "ddr", N, 0 },      { "hbm", N, 0 },
	{ "timestampNs", I, 0 }, { "deviceId", I, 0 },
};
static const struct asc_db_col enum_cols[] = { { "id", I, 1 }, { "name", T, 0 } };
/* torch_npu declares PYTORCH_API's times TEXT (so SQLite stores them as text) */
static const struct asc_db_col pytorch_api[] = {
	{ "startNs", T, 0 },	  { "endNs", T, 0 },	   { "globalTid", I, 0 },
	{ "connectionId", I, 0 }, { "name", I, 0 },	   { "sequenceNumber", I, 0 },
	{ "fwdThreadId", I, 0 },  { "inputDtypes", I, 0 }, { "inputShapes", I, 0 },
	{ "callchainId", I, 0 },  { "type", I, 0 },
};
static const struct asc_db_col connection_ids[] = { { "id", I, 0 }, { "connectionId", I, 0 } };
static const struct asc_db_col pytorch_callchains[] = {
	{ "id", I, 0 },
	{ "stack", I, 0 },
	{ "stackDepth", I, 0 },
};
static const struct asc_db_col memory_record[] = {
	{ "component", I, 0 },	   { "timestamp", I, 0 },   { "totalAllocated", I, 0 },
	{ "totalReserved", I, 0 }, { "totalActive", I, 0 }, { "streamPtr", I, 0 },
	{ "deviceId", I, 0 },
};
static const struct asc_db_col op_memory[] = {
	{ "name", I, 0 },
	{ "size", I, 0 },
	{ "allocationTime", I, 0 },
	{ "releaseTime", I, 0 },
	{ "activeReleaseTime", I, 0 },
	{ "duration", I, 0 },
	{ "activeDuration", I, 0 },
	{ "allocationTotalAllocated", I, 0 },
	{ "allocationTotalReserved", I, 0 },
	{ "allocationTotalActive", I, 0 },
	{ "releaseTotalAllocated", I, 0 },
	{ "releaseTotalReserved", I, 0 },
	{ "releaseTotalActive", I, 0 },
	{ "streamPtr", I, 0 },
	{ "deviceId", I, 0 },
};
static const struct asc_db_col step_time[] = {
	{ "id", I, 0 },
	{ "startNs", I, 0 },
	{ "endNs", I, 0 },
};
static const struct asc_db_col step_trace_time[] = {
	{ "deviceId", I, 0 },	{ "step", T, 0 },
	{ "computing", N, 0 },	{ "communication_not_overlapped", N, 0 },
	{ "overlapped", N, 0 }, { "communication", N, 0 },
	{ "free", N, 0 },	{ "stage", N, 0 },
	{ "bubble", N, 0 },	{ "communication_not_overlapped_and_exclude_receive", N, 0 },
	{ "preparing", N, 0 },
};
static const struct asc_db_col comm_time[] = {
	{ "hccl_op_name", T, 0 },
	{ "group_name", T, 0 },
	{ "start_timestamp", N, 0 },
	{ "elapse_time", N, 0 },
	{ "transit_time", N, 0 },
	{ "wait_time", N, 0 },
	{ "synchronization_time", N, 0 },
	{ "idle_time", N, 0 },
	{ "step", T, 0 },
	{ "type", T, 0 },
};
static const struct asc_db_col comm_bandwidth[] = {
	{ "hccl_op_name", T, 0 },	{ "group_name", T, 0 },	  { "transport_type", T, 0 },
	{ "transit_size", N, 0 },	{ "transit_time", N, 0 }, { "bandwidth", N, 0 },
	{ "large_packet_ratio", N, 0 }, { "package_size", N, 0 }, { "count", N, 0 },
	{ "total_duration", N, 0 },	{ "step", T, 0 },	  { "type", T, 0 },
};
static const struct asc_db_col comm_matrix[] = {
	{ "hccl_op_name", T, 0 }, { "group_name", T, 0 },     { "src_rank", T, 0 },
	{ "dst_rank", T, 0 },	  { "transport_type", T, 0 }, { "transit_size", N, 0 },
	{ "transit_time", N, 0 }, { "bandwidth", N, 0 },      { "step", T, 0 },
	{ "type", T, 0 },	  { "op_name", T, 0 },
};

const struct asc_db_table asc_db_tables[ASC_DBT_NR] = {
	TABLE(ASC_DBT_STRING_IDS, "STRING_IDS", string_ids),
	TABLE(ASC_DBT_SESSION_TIME_INFO, "SESSION_TIME_INFO", session_time_info),
	TABLE(ASC_DBT_RANK_DEVICE_MAP, "RANK_DEVICE_MAP", rank_device_map),
	TABLE(ASC_DBT_META_DATA, "META_DATA", meta_data),
	TABLE(ASC_DBT_TASK, "TASK", task),
	TABLE(ASC_DBT_COMPUTE_TASK_INFO, "COMPUTE_TASK_INFO", compute_task_info),
	TABLE(ASC_DBT_COMMUNICATION_TASK_INFO, "COMMUNICATION_TASK_INFO", communication_task_info),
	TABLE(ASC_DBT_COMMUNICATION_OP, "COMMUNICATION_OP", communication_op),
	TABLE(ASC_DBT_CANN_API, "CANN_API", cann_api),
	TABLE(ASC_DBT_NPU_MEM, "NPU_MEM", npu_mem),
	TABLE(ASC_DBT_ENUM, "ENUM_*", enum_cols),
	TABLE(ASC_DBT_PYTORCH_API, "PYTORCH_API", pytorch_api),
	TABLE(ASC_DBT_CONNECTION_IDS, "CONNECTION_IDS", connection_ids),
	TABLE(ASC_DBT_PYTORCH_CALLCHAINS, "PYTORCH_CALLCHAINS", pytorch_callchains),
	TABLE(ASC_DBT_MEMORY_RECORD, "MEMORY_RECORD", memory_record),
	TABLE(ASC_DBT_OP_MEMORY, "OP_MEMORY", op_memory),
	TABLE(ASC_DBT_STEP_TIME, "STEP_TIME", step_time),
	TABLE(ASC_DBT_STEP_TRACE_TIME, "StepTraceTime", step_trace_time),
	TABLE(ASC_DBT_COMM_ANALYZER_TIME, "CommAnalyzerTime", comm_time),
	TABLE(ASC_DBT_COMM_ANALYZER_BANDWIDTH, "CommAnalyzerBandwidth", comm_bandwidth),
	TABLE(ASC_DBT_COMM_ANALYZER_MATRIX, "CommAnalyzerMatrix", comm_matrix),
};

#define ROWS(arr) arr, (int)(sizeof(arr) / sizeof(arr[0]))

/* msprof's levels, then the framework types torch_npu adds to the same table */
static const struct asc_db_enum api_type[] = {
	{ 5000, "runtime" }, { 5500, "communication" }, { 10000, "node" },
	{ 15000, "model" },  { 20000, "acl" },		{ 50001, "op" },
	{ 50002, "queue" },  { 50003, "trace" },	{ 50004, "mstx" },
};
static const struct asc_db_enum module[] = {
	{ 0, "SLOG" },	      { 1, "IDEDD" },	  { 2, "SCC" },
	{ 3, "HCCL" },	      { 4, "FMK" },	  { 5, "CCU" },
	{ 6, "DVPP" },	      { 7, "RUNTIME" },	  { 8, "CCE" },
	{ 9, "HDC" },	      { 10, "DRV" },	  { 11, "NET" },
	{ 22, "DEVMM" },      { 23, "KERNEL" },	  { 24, "LIBMEDIA" },
	{ 25, "CCECPU" },     { 27, "ROS" },	  { 28, "HCCP" },
	{ 29, "ROCE" },	      { 30, "TEFUSION" }, { 31, "PROFILING" },
	{ 32, "DP" },	      { 33, "APP" },	  { 34, "TS" },
	{ 35, "TSDUMP" },     { 36, "AICPU" },	  { 37, "LP" },
	{ 38, "TDT" },	      { 39, "FE" },	  { 40, "MD" },
	{ 41, "MB" },	      { 42, "ME" },	  { 43, "IMU" },
	{ 44, "IMP" },	      { 45, "GE" },	  { 47, "CAMERA" },
	{ 48, "ASCENDCL" },   { 49, "TEEOS" },	  { 50, "ISP" },
	{ 51, "SIS" },	      { 52, "HSM" },	  { 53, "DSS" },
	{ 54, "PROCMGR" },    { 55, "BBOX" },	  { 56, "AIVECTOR" },
	{ 57, "TBE" },	      { 58, "FV" },	  { 60, "TUNE" },
	{ 61, "HSS" },	      { 62, "FFTS" },	  { 63, "OP" },
	{ 64, "UDF" },	      { 65, "HICAID" },	  { 66, "TSYNC" },
	{ 67, "AUDIO" },      { 68, "TPRT" },	  { 69, "ASCENDCKERNEL" },
	{ 70, "ASYS" },	      { 71, "ATRACE" },	  { 72, "RTC" },
	{ 73, "SYSMONITOR" }, { 74, "AMP" },	  { 75, "ADETECT" },
	{ 76, "MBUFF" },      { 77, "CUSTOM" },
};
static const struct asc_db_enum hccl_data_type[] = {
	{ 0, "INT8" },	   { 1, "INT16" },	{ 2, "INT32" },	   { 3, "FP16" },
	{ 4, "FP32" },	   { 5, "INT64" },	{ 6, "UINT64" },   { 7, "UINT8" },
	{ 8, "UINT16" },   { 9, "UINT32" },	{ 10, "FP64" },	   { 11, "BFP16" },
	{ 12, "INT128" },  { 14, "HIF8" },	{ 15, "FP8E4M3" }, { 16, "FP8E5M2" },
	{ 17, "FP8E8M0" }, { 255, "RESERVED" }, { 65534, "N/A" },  { 65535, "INVALID_TYPE" },
};
static const struct asc_db_enum hccl_link_type[] = {
	{ 0, "ON_CHIP" }, { 1, "HCCS" },       { 2, "PCIE" },	       { 3, "ROCE" },
	{ 4, "SIO" },	  { 5, "HCCS_SW" },    { 6, "STANDARD_ROCE" }, { 7, "UB" },
	{ 8, "UBoE" },	  { 255, "RESERVED" }, { 65534, "N/A" },       { 65535, "INVALID_TYPE" },
};
static const struct asc_db_enum hccl_transport_type[] = {
	{ 0, "SDMA" }, { 1, "RDMA" },	    { 2, "LOCAL" },   { 3, "UB" },
	{ 4, "ROCE" }, { 255, "RESERVED" }, { 65534, "N/A" }, { 65535, "INVALID_TYPE" },
};
static const struct asc_db_enum hccl_rdma_type[] = {
	{ 0, "RDMA_SEND_NOTIFY" }, { 1, "RDMA_SEND_PAYLOAD" }, { 255, "RESERVED" },
	{ 65534, "N/A" },	   { 65535, "INVALID_TYPE" },
};
static const struct asc_db_enum mstx_event_type[] = {
	{ 0, "marker" },
	{ 1, "push/pop" },
	{ 2, "start/end" },
	{ 3, "marker_ex" },
};
static const struct asc_db_enum memcpy_operation[] = {
	{ 0, "host to host" },	    { 1, "host to device" },	{ 2, "device to host" },
	{ 3, "device to device" },  { 4, "managed memory" },	{ 5, "addr device to device" },
	{ 6, "host to device ex" }, { 7, "device to host ex" }, { 65535, "other" },
};
static const struct asc_db_enum overlap_type[] = {
	{ 0, "COMPUTE" }, { 1, "COMMUNICATION" }, { 2, "COMM_NOT_OVERLAP_COMP" },
	{ 3, "FREE" },	  { 65535, "RESERVE" },
};

const struct asc_db_enum_table asc_db_enums[] = {
	{ "ENUM_API_TYPE", ROWS(api_type) },
	{ "ENUM_MODULE", ROWS(module) },
	{ "ENUM_HCCL_DATA_TYPE", ROWS(hccl_data_type) },
	{ "ENUM_HCCL_LINK_TYPE", ROWS(hccl_link_type) },
	{ "ENUM_HCCL_TRANSPORT_TYPE", ROWS(hccl_transport_type) },
	{ "ENUM_HCCL_RDMA_TYPE", ROWS(hccl_rdma_type) },
	{ "ENUM_MSTX_EVENT_TYPE", ROWS(mstx_event_type) },
	{ "ENUM_MEMCPY_OPERATION", ROWS(memcpy_operation) },
	{ "ENUM_OVERLAP_ANALYSIS_TYPE", ROWS(overlap_type) },
};
const int asc_db_nr_enums = (int)(sizeof(asc_db_enums) / sizeof(asc_db_enums[0]));
