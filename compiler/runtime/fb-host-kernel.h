/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Host kernels (If, Loop, Scan): what every target's executor runs on the host, through the
 * reference interpreter, between its own kernels. */
#pragma once

#include "fb-kernel.h"

G_BEGIN_DECLS

/* The tensor of buffer b as the executor holds it: a view of its bytes, or for a buffer whose
 * size is only known at run time (FbBuffer.dynamic) the tensor the host step made (a new
 * reference either way; NULL when a dynamic buffer has no value yet). */
FbTensor *fb_host_buffer_tensor (const FbPlan *plan, void **bufptr, FbTensor **dynamic, guint b);

/* Runs a FB_KERNEL_HOST kernel (If, Loop): the reference interpreter evaluates the node on
 * the tensors of its argument buffers, with the enclosing graph's values its bodies capture,
 * and the results are copied into the output buffers (or held in dynamic[] for outputs whose
 * size is only known now). */
gboolean  fb_host_kernel_run    (const FbPlan *plan, void **bufptr, FbTensor **dynamic,
                                 const FbKernel *kernel, GError **error);

G_END_DECLS
