/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Lowering: the final stage of the pipeline becomes a plan of kernels (fb-kernel.h).
 *
 * Every node becomes one kernel. FUSED groups and plain elementwise and reduction nodes become
 * loop nests in which elementwise members are computed in registers; channels-last Convs are
 * oneDNN convolution primitives with their epilogue as post-ops (fb-lower-dnnl-conv.c); other
 * Convs, MatMul and Gemm call dnnl_sgemm (through im2col where needed) with their epilogue
 * (bias, activation, residual) generated as loops over each tile of the product; channels-first
 * depthwise convolutions, pools, softmax,
 * normalizations and data movement are generated loops; Reshape-like nodes are views. Kernels
 * follow the layout pass's "fb_layout" attribute. Shape computations that are known at compile
 * time (Shape, Constant, nodes of constant inputs) are evaluated here and become constants. */
#pragma once

#include "fb-kernel.h"

G_BEGIN_DECLS


/* Lowers graph (every shape static: pin dynamic inputs first). The plan borrows graph, which
 * must outlive it. NULL with an FB_LOWER_ERROR naming the node when one cannot be lowered. */
FbPlan     *fb_lower_graph         (const FbGraph *graph, const FbTargetDesc *target,
                                    GError **error);
/* Whether the CPU target compiles node; when not and reason is given, *reason says why
 * (caller frees). Shapes must be inferred. */
gboolean    fb_lower_supports_node (const FbNode *node, char **reason);

G_END_DECLS
