/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * ascend_hal.h - the HAL ABI npu_model's libascend_hal.so implements: the
 * vendor's (include/ascend/hal.h, include/ascend/stars.h), which upper layers
 * of the simulator include under this name.  Nothing simulator-only is added
 * here; the simulator's own interfaces are in npu_ioctl.h (marked MODEL).
 */
#ifndef __NPU_MODEL_ASCEND_HAL_H
#define __NPU_MODEL_ASCEND_HAL_H

#include "ascend/hal.h"
#include "ascend/stars.h"

#endif /* __NPU_MODEL_ASCEND_HAL_H */
