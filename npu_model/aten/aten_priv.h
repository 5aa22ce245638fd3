/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * aten_priv.h - what aten.c and autograd.c (both in libtorch_cpu.so) share
 * beyond the exported API.
 */
#ifndef __NPU_MODEL_ATEN_PRIV_H
#define __NPU_MODEL_ATEN_PRIV_H

#include <stdbool.h>

#include "npu_autograd.h"
#include "npu_torch.h"

#define ATEN_PRIV __attribute__((visibility("hidden")))

/*
 * Drops the autograd meta of a tensor being freed (its grad_fn and .grad
 * references); true: its grad_fn saved it and outlives it, and took it over
 * (the caller does not free it).
 */
ATEN_PRIV bool npu_autograd_release_meta(struct npu_tensor_impl *impl);

/*
 * The autograd kernel of a forward op: called after npu_autograd_op_enter()
 * returned seq (>= 0 only at the Autograd key with grad mode on) and before
 * the implementation runs.  Creates the backward node of class `vt` when one
 * of the `nin` inputs (NULL or undefined entries allowed) requires grad, with
 * one edge per input; NULL when no node is needed.
 */
ATEN_PRIV struct torch_autograd_node *npu_ag_node_new(int64_t seq,
						      const struct torch_autograd_vtable *vt,
						      const struct at_tensor *const *ins, int nin);
/* The op's outputs: each defined one gets grad_fn = node, output_nr = its index. */
ATEN_PRIV void npu_ag_set_outputs(struct torch_autograd_node *node, struct at_tensor *outs,
				  int nout);
/* Saves a tensor (a reference; NULL / undefined allowed) or an integer for the backward. */
ATEN_PRIV void npu_ag_save(struct torch_autograd_node *node, int slot, const struct at_tensor *t);
ATEN_PRIV void npu_ag_save_int(struct torch_autograd_node *node, int slot, int64_t v);
/* Node::name() for the journal. */
static inline const char *npu_ag_name(const struct torch_autograd_node *n)
{
	return n ? n->name : "-";
}

#endif /* __NPU_MODEL_ATEN_PRIV_H */
