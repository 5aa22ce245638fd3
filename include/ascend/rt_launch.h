/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ascend/rt_launch.h - where the task-making runtime calls of CANN 8.x/9.x
 * take their stream (and, for AI CPU kernels, their name): the argument
 * index, 0-based, of each prototype.  Vendor ABI for the probes (a uprobe
 * reads arguments by position); npu_model declares the same prototypes.
 *
 * Mirrors (hicann/runtime):
 *   rtsLaunchKernelWithHostArgs, rtsLaunchKernelWithConfig,
 *   rtsLaunchKernelWithDevArgs                 pkg_inc/runtime/runtime/rts/rts_kernel.h
 *   rtKernelLaunch, rtKernelLaunchWithFlagV2, rtKernelLaunchWithHandleV2,
 *   rtLaunchKernelByFuncHandleV3, rtCpuKernelLaunchWithFlag,
 *   rtAicpuKernelLaunchExWithArgs, rtKernelLaunchEx
 *                                              pkg_inc/runtime/runtime/kernel.h,
 *                                              pkg_inc/runtime/rt_external_kernel.h
 *   rtMemcpyAsync, rtMemcpyAsyncEx, rtMemsetAsync   pkg_inc/runtime/runtime/mem.h
 *   rtEventRecord, rtStreamWaitEvent           pkg_inc/runtime/runtime/event.h, stream.h
 *
 * Every index is < 6 (x86-64 and aarch64 pass it in a register).
 */
#ifndef __ASCEND_RT_LAUNCH_H
#define __ASCEND_RT_LAUNCH_H

/* (funcHandle, numBlocks, stm, cfg, hostArgs, argsSize, placeHolderArray, placeHolderNum) */
#define RT_STREAM_ARG_rtsLaunchKernelWithHostArgs   2
/* (stubFunc, numBlocks, args, argsSize, smDesc, stm) */
#define RT_STREAM_ARG_rtKernelLaunch		    5
/* (stubFunc, numBlocks, argsInfo, smDesc, stm, flags, cfgInfo) */
#define RT_STREAM_ARG_rtKernelLaunchWithFlagV2	    4
/* (hdl, tilingKey, numBlocks, argsInfo, smDesc, stm, cfgInfo) */
#define RT_STREAM_ARG_rtKernelLaunchWithHandleV2    5
/* (funcHandle, numBlocks, argsInfo, stm, cfgInfo) */
#define RT_STREAM_ARG_rtLaunchKernelByFuncHandleV3  3
/* (funcHandle, numBlocks, stm, cfg, argsHandle, reserve) */
#define RT_STREAM_ARG_rtsLaunchKernelWithConfig	    2
/* (funcHandle, numBlocks, stm, cfg, args, argsSize, reserve) */
#define RT_STREAM_ARG_rtsLaunchKernelWithDevArgs    2
/* (soName, kernelName, numBlocks, argsInfo, smDesc, stm, flags) */
#define RT_STREAM_ARG_rtCpuKernelLaunchWithFlag	    5
/* (kernelType, opName, numBlocks, argsInfo, smDesc, stm, flags) */
#define RT_STREAM_ARG_rtAicpuKernelLaunchExWithArgs 5
/* (args, argsSize, flags, stm) */
#define RT_STREAM_ARG_rtKernelLaunchEx		    3
/* (dst, destMax, src, cnt, kind, stm) */
#define RT_STREAM_ARG_rtMemcpyAsync		    5
/* (dst, destMax, src, cnt, kind, stm, memcpyConfig) */
#define RT_STREAM_ARG_rtMemcpyAsyncEx		    5
/* (ptr, destMax, val, cnt, stm) */
#define RT_STREAM_ARG_rtMemsetAsync		    4
/* (evt, stm) */
#define RT_STREAM_ARG_rtEventRecord		    1
/* (stm, evt) */
#define RT_STREAM_ARG_rtStreamWaitEvent		    0

/* The AI CPU calls name their kernel with a C string: kernelName / opName. */
#define RT_NAME_ARG_rtCpuKernelLaunchWithFlag	  1
#define RT_NAME_ARG_rtAicpuKernelLaunchExWithArgs 1

#endif /* __ASCEND_RT_LAUNCH_H */
