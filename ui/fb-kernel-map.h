/* SPDX-License-Identifier: GPL-3.0-or-later */
/* From a node of any stage to the nodes of the final stage that carry its work, and so to the
 * kernels lowered from them: through the changes of every later stage (fused into, folded into,
 * merged into), keyed on stable node ids, and through provenance where a pass left no trail. */
#pragma once

#include "fb-run.h"

G_BEGIN_DECLS

/* node belongs to stage index of run: one of its graph's nodes, or a member of a fused body in
 * it. Returns the ids (guint) of the final stage's nodes that carry node's work, empty when it
 * was folded away with nothing left to compute it. *note (caller frees; may be NULL) says for
 * people how it got there ("Folded into “conv1” by fold-batchnorm; fused into “Fused_3” by
 * fuse-epilogue") or why there is nothing; NULL for a node of the final stage itself. */
GArray *fb_kernel_map_node (FbRun         *run,
                            guint          index,
                            const FbNode  *node,
                            char         **note);

G_END_DECLS
