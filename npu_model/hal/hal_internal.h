/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * hal_internal.h - libascend_hal.so internals shared by its source files.
 */
#ifndef __NPU_HAL_INTERNAL_H
#define __NPU_HAL_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "ascend_hal.h"
#include "npu_ioctl.h"

/* Exported entry points: real, probe-able functions (ascbpf uprobes them). */
#define HAL_API __attribute__((visibility("default"), noinline, used))

struct hal_sq {
	pthread_mutex_t lock;
	int used;
	uint32_t cq_id;
	uint32_t tail;	      /* free-running: SQEs this process published */
	struct npu_uio_sq *u; /* the ring in the card's shared memory */
};

struct hal_dev {
	pthread_mutex_t lock; /* fds, heap */
	int tsdrv_fd;	      /* davinci_manager bound to TSDRV for this device */
	int davinci_fd;	      /* davinciN, held open while the device is in use */
	void *uio;	      /* the card's shared memory (NPU_UIO_FILE_BYTES) */
	char shm[128];
	uint64_t cnt_freq_hz, cnt_offset, cnt_base_ns;
	uint64_t va_next; /* device VA heap: bump pointer ... */
	uint64_t va_end;
	struct hal_sq sq[NPU_UIO_MAX_SQ];
	uint64_t prof_dropped;	   /* last drop count READ returned (channel 50) */
	uint64_t alive_checked_ns; /* last liveness probe of the daemon */
	int dead;		   /* the daemon went away: every call fails */
};

struct hal_state {
	int ready;
	int uio_mode;	/* 1: SQEs go through the shared rings (default) */
	int no_private; /* the daemon runs --no-private (npu_model_info) */
	uint32_t cards;
	char dir[4096];
	int svm_fd;
	int prof_fd;
	struct hal_dev dev[NPU_MODEL_MAX_CARDS];
};

extern struct hal_state hal;

/* 0 when the daemon was found (once per process), else DRV_ERROR_NO_DEVICE. */
drvError_t hal_init(void);
drvError_t hal_errno_to_drv(int err);
uint64_t hal_now_ns(void);
/* ioctl() with an `ioctl` journal line; returns the result or -errno. */
int hal_ioctl(int fd, const char *module, unsigned long cmd, void *arg);
/* Opens and binds a davinci_manager fd (or returns the cached one); -errno. */
int hal_module_fd(const char *module, int device_id, int *cache);
/* The device, its TSDRV fd bound; NULL (and *err) if the id is bad or the bind failed. */
struct hal_dev *hal_dev_get(uint32_t dev, drvError_t *err);

/*
 * 0 while the daemon answers; DRV_ERROR_NO_DEVICE once it has gone away.
 * In uio mode nothing else would notice (the rings are plain memory), so
 * waits call this; it probes with one ioctl at most every 200 ms.
 */
drvError_t hal_dev_alive(struct hal_dev *dv);

#endif /* __NPU_HAL_INTERNAL_H */
