/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Which lines of a kernel's lowering stages came from the selected graph node. A node stands for
 * original ONNX nodes (its provenance); each phase of a kernel knows the original nodes whose
 * work it does (FbKPhase.prov), each kernel IR line its phase, and each line of LLVM IR, assembly
 * and PTX the kernel IR line its debug location names (FbKernelStages' maps). A line is marked
 * when that chain leads to one of the selection's original nodes: no name is matched. */
#pragma once

#include "fb-codegen.h"

G_BEGIN_DECLS

/* gboolean per line of st->kernel_ir: inside a phase of kernel that does the work of one of
 * prov[0..n). Empty (no line marked) when n is 0. */
GArray *_fb_code_marks_kernel_ir (const FbKernel       *kernel,
                                  const FbKernelStages *st,
                                  const guint          *prov,
                                  guint                 n);
/* gboolean per line of a stage whose map (kernel IR line per line, from 1; 0 none) is map:
 * the kernel IR line it came from is marked in kir. map NULL: nothing marked. */
GArray *_fb_code_marks_follow    (GArray               *kir,
                                  GArray               *map);

G_END_DECLS
