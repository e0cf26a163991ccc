/* SPDX-License-Identifier: GPL-3.0-or-later */
/* PTX code generation: the same kernel IR the CPU target compiles, emitted through LLVM's
 * NVPTX back end for sm_90.
 *
 * Each generated phase of a kernel becomes one `.entry` with the parameters
 * (.u64 args, .s64 begin, .s64 end): args is a device array of the kernel's buffer pointers
 * (kernel argument order), and [begin, end) the iterations of the phase's parallel loop, as on
 * the CPU. A block runs iters_per_block consecutive iterations with block_threads threads (one
 * iteration per thread for plain loops; a warp or a whole block per iteration for reductions),
 * so the grid is ceil((end - begin) / iters_per_block) blocks. Library phases (oneDNN
 * convolutions, sgemm calls) have no entry: the CUDA runtime runs them through cuDNN and
 * cuBLASLt. */
#pragma once

#include "fb-kernel.h"

G_BEGIN_DECLS

typedef struct {
  char      *entry;              /* the .entry name in the module; NULL for a library phase */
  guint      block_threads;      /* threads per block */
  guint      iters_per_block;    /* iterations of the parallel loop one block runs */
  guint      shared_bytes;       /* dynamic shared memory per block */
} FbPtxPhase;

typedef struct {
  char      *ptx;                /* the module's text, for sm_90 (NULL when no phase has code) */
  char      *llvm_ir;            /* as generated, for the lowering stages */
  char      *llvm_ir_opt;        /* after optimization */
  GArray    *phases;             /* FbPtxPhase, one per phase of the kernel, in order */
} FbPtxModule;

/* The PTX of one kernel of plan; FB_CODEGEN_ERROR naming the kernel when it cannot be made. */
FbPtxModule *fb_codegen_ptx        (const FbKernel *kernel, const FbPlan *plan, GError **error);
void         fb_ptx_module_free    (FbPtxModule *module);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbPtxModule, fb_ptx_module_free)

G_END_DECLS
