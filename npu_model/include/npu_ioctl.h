/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * npu_ioctl.h - the driver interface between libascend_hal.so and npu-modeld:
 * ioctl command numbers and argument layouts on the davinci nodes, the
 * shared-memory ("uio") SQ rings, and the model's discovery file.
 *
 * Two kinds of definitions live here:
 *   REAL   numbers and layouts from the Ascend driver (davinci_interface.h,
 *          trs_ioctl.h, svm_ioctl.h; docs/cann_api.md §3), so an ioctl
 *          tracer sees what it would see on an Ascend host.
 *   MODEL  npu_model's own choices where the real mechanism is not known or
 *          cannot be reproduced with FUSE (profiling channel, UIO mapping,
 *          clock pair, memory info).  Each is marked "MODEL".
 */
#ifndef __NPU_MODEL_IOCTL_H
#define __NPU_MODEL_IOCTL_H

#include <stddef.h>
#include <stdint.h>
#include <linux/ioctl.h>

#include "ascend_hal.h"
#include "ascend/driver_ioctl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- where the nodes are -------------------------------------------------------------- */

/* Directory holding davinci_manager and davinci0..N-1 (the daemon's --mount). */
#define NPU_MODEL_DEV_DIR_ENV	  "NPU_MODEL_DEV_DIR"
#define NPU_MODEL_DEV_DIR_DEFAULT "/run/npu_model/dev"
/* Submission mode of the HAL: "uio" (default) or "ioctl". */
#define NPU_MODEL_SQ_MODE_ENV	  "NPU_MODEL_SQ_MODE"
/*
 * MODEL: a read-only text file next to the nodes, one "key=value" per line,
 * regenerated on every open: daemon pid, cards, counter parameters, the
 * shared-memory file of each card, and live state (memory, ids, clients).
 */
#define NPU_MODEL_INFO_NAME	  "npu_model_info"
#define NPU_MODEL_MAX_CARDS	  64

#define DAVINCI_MODULE_PROF "PROF" /* MODEL: profiling transport, below */

/* MODEL layout of DEVMM_SVM_QUERY_MEM_USEDINFO's data (at devmm_ioctl_arg.data.raw). */
struct devmm_query_mem_usedinfo_para {
	uint64_t total;		 /* out: HBM capacity of the device, bytes */
	uint64_t used;		 /* out: bytes populated by all processes */
	uint64_t used_by_caller; /* out: bytes populated through this fd */
	uint64_t peak;		 /* out: high-water mark of used */
	uint64_t oom_count;	 /* out: allocations refused */
};

#define NPU_DEVMM_QUERY(arg) ((struct devmm_query_mem_usedinfo_para *)(void *)(arg)->data.raw)

/* Device memory granularity the card accounts in (a small page of the real SVM). */
#define NPU_HBM_PAGE 4096ull

/* ---- 'P': MODEL profiling channels on a davinci_manager fd bound to "PROF" ------------ */
/*
 * The real kernel interface behind prof_drv_start / prof_channel_read is not
 * known.  npu_model's choice: the HAL binds one davinci_manager fd to module
 * "PROF" per process; START opens a reader session for (device, channel) on
 * that fd, READ copies whole records into the caller's buffer (the daemon
 * writes them with process_vm_writev), POLL waits until a session has data.
 * Each session has its own ring of NPU_PROF_RING_RECORDS records; records that
 * arrive while it is full are dropped and counted (READ returns the count).
 */
#define NPU_PROF_RING_RECORDS 65536

struct npu_prof_ctl { /* 32 bytes */
	uint32_t device_id;
	uint32_t channel_id;
	uint32_t sample_period;
	uint32_t real_time;
	uint64_t user_data;	 /* START: prof_start_para.user_data */
	uint32_t user_data_size; /* START: its size (StarsSocLogConfigT, 36..44) */
	uint32_t channel_type;	 /* START: prof_start_para.channel_type */
};

struct npu_prof_read_arg { /* 40 bytes */
	uint32_t device_id;
	uint32_t channel_id;
	uint64_t buf;	   /* user pointer */
	uint32_t buf_size; /* bytes; whole records are copied */
	uint32_t bytes;	   /* out: bytes copied */
	uint64_t dropped;  /* out: records lost since START */
	uint64_t pending;  /* out: records still queued after this read */
};

struct npu_prof_poll_arg {  /* 24 bytes */
	int32_t timeout_ms; /* 0: do not wait */
	uint32_t num;	    /* entries at out */
	uint64_t out;	    /* user pointer: prof_poll_info[num] */
	uint32_t ready;	    /* out: entries written */
	uint32_t resv;
};

#define NPU_PROF_MAGIC	     'P'
#define NPU_PROF_IOCTL_START _IOW(NPU_PROF_MAGIC, 0, struct npu_prof_ctl)
#define NPU_PROF_IOCTL_STOP  _IOW(NPU_PROF_MAGIC, 1, struct npu_prof_ctl)
#define NPU_PROF_IOCTL_READ  _IOWR(NPU_PROF_MAGIC, 2, struct npu_prof_read_arg)
#define NPU_PROF_IOCTL_POLL  _IOWR(NPU_PROF_MAGIC, 3, struct npu_prof_poll_arg)

/* ---- MODEL halGetDeviceInfo info types (module MODULE_TYPE_SYSTEM) ------------------- */
/*
 * INFO_TYPE_SYS_COUNT_FREQ (24, real) returns the counter frequency in Hz.
 * The pair below gives ascbpf a (counter, CLOCK_MONOTONIC) sample to convert
 * ticks to host time: SYS_COUNT reads the device counter now; SYS_COUNT_MONO
 * returns the CLOCK_MONOTONIC ns at which this thread's last SYS_COUNT read
 * was taken.  The counter starts at a non-zero offset (daemon option).
 */
#define NPU_INFO_TYPE_SYS_COUNT	     0x4e50 /* device system counter now */
#define NPU_INFO_TYPE_SYS_COUNT_MONO 0x4e51 /* host monotonic ns of that read */
#define NPU_INFO_TYPE_HBM_TOTAL	     0x4e52 /* bytes */
#define NPU_INFO_TYPE_HBM_USED	     0x4e53 /* bytes, all processes */
#define NPU_INFO_TYPE_PROF_DROPS     0x4e54 /* channel-50 records this process lost */

/* ---- MODEL: "uio" SQ rings in shared memory ------------------------------------------ */
/*
 * The real UIO path maps the SQ ring and its doorbell through a "TSDRV_MMAP"
 * fd; FUSE cannot map memory shared with the daemon, so each card has one
 * shared-memory file (named in npu_model_info as devN.shm) holding a card
 * header and one ring per SQ id.  The submitter writes SQEs at tail, stamps
 * each with a card-wide sequence number (so the card sees submissions across
 * SQs in host order), publishes tail with a release store, sets the SQ's
 * pending bit and rings the doorbell (a futex wake when the card sleeps).
 * Only the card writes head.  The same rings carry ioctl-mode submissions:
 * there the daemon copies the SQEs in.
 */
#define NPU_UIO_MAGIC	 0x4e505551u /* "QUPN" */
#define NPU_UIO_VERSION	 1
#define NPU_UIO_MAX_SQ	 256
#define NPU_UIO_SQ_DEPTH 1024
#define NPU_UIO_SQE_SIZE 64

struct npu_uio_card { /* at offset 0 of the card's file, one page */
	uint32_t magic;
	uint32_t version;
	uint32_t max_sq;
	uint32_t sq_depth;
	uint64_t submit_seq;		       /* fetch-add by submitters */
	uint32_t doorbell;		       /* futex: submitters add 1 after publishing */
	uint32_t card_sleeping;		       /* nonzero while the card waits */
	uint32_t completions;		       /* futex: card adds 1 after completing tasks */
	uint32_t completion_waiters;	       /* submitters waiting on completions */
	uint64_t pending[NPU_UIO_MAX_SQ / 64]; /* one bit per SQ with unread SQEs */
};

struct npu_uio_sq {	     /* one per SQ id, after the card page */
	uint32_t head;	     /* card: SQEs completed (free-running) */
	uint32_t tail;	     /* submitter: SQEs published (free-running) */
	uint32_t generation; /* card: bumped on every alloc of this id */
	uint32_t resv;
	uint64_t seq[NPU_UIO_SQ_DEPTH]; /* submit_seq of each slot */
	uint8_t sqe[NPU_UIO_SQ_DEPTH][NPU_UIO_SQE_SIZE];
};

#define NPU_UIO_CARD_BYTES 4096ul
#define NPU_UIO_SQ_BYTES   (((sizeof(struct npu_uio_sq) + 4095) / 4096) * 4096)
#define NPU_UIO_FILE_BYTES (NPU_UIO_CARD_BYTES + NPU_UIO_MAX_SQ * NPU_UIO_SQ_BYTES)

static inline struct npu_uio_sq *npu_uio_sq_at(void *base, uint32_t sq_id)
{
	return (struct npu_uio_sq *)((char *)base + NPU_UIO_CARD_BYTES + sq_id * NPU_UIO_SQ_BYTES);
}

/*
 * MODEL: halSqCqQuery property that waits.  value[1] = the head the caller
 * last saw, value[2] = timeout in microseconds; returns (value[0] = head)
 * as soon as the head differs from value[1] or the timeout passes, so a
 * synchronize can sleep instead of spinning on DRV_SQCQ_PROP_SQ_HEAD.
 */
#define NPU_SQCQ_PROP_SQ_HEAD_WAIT 0x100

_Static_assert(sizeof(struct npu_uio_card) <= NPU_UIO_CARD_BYTES, "uio card page");

#ifdef __cplusplus
}
#endif

#endif /* __NPU_MODEL_IOCTL_H */
