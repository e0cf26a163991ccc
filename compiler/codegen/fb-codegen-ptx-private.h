/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Internals of the NVPTX code generation shared by its files. Only compiler/codegen/ includes
 * this. */
#pragma once

#include "fb-codegen-private.h"
#include "fb-ptx.h"

G_BEGIN_DECLS

#define FB_PTX_MAX_NEST 8
#define PTX_TRIPLE      "nvptx64-nvidia-cuda"

typedef enum {
  FB_PTX_ROW_UNIFORM,           /* every thread of the block runs it (the same values) */
  FB_PTX_ROW_THREAD0,           /* a store of uniform values: thread 0 makes it */
  FB_PTX_ROW_REDUCE,            /* a reduction loop, split over the block and combined */
  FB_PTX_ROW_STORES,            /* a loop of independent stores, split over the block */
} FbPtxRowKind;

typedef enum {
  FB_PTX_RED_ADD, FB_PTX_RED_MUL, FB_PTX_RED_MAX, FB_PTX_RED_MIN,
} FbPtxRed;

/* How one generated phase maps onto the grid.
 *
 * The parallel loop and the perfectly nested loops under it whose iterations are provably
 * independent ("collapsed") form one linear space of items: item u of the phase is iteration
 * u / inner of the parallel loop and, below it, the collapsed loops' iterations in row-major
 * order. In the plain form a thread runs vec consecutive items; in the cooperative form a block
 * (or a warp) runs one item (a row), its top-level statements classified by rows[]. */
typedef struct {
  const FbKStmt *nest[FB_PTX_MAX_NEST];   /* nest[0]: the parallel loop, then the collapsed */
  guint          n_nest;
  int64_t        inner;                   /* items per parallel iteration */
  const GPtrArray *body;                  /* one item's statements */
  gboolean       cooperative;
  guint          vec;                     /* plain: items per thread (1 or 4) */
  guint          block_threads;
  guint          row_threads;             /* cooperative: threads per row, the block's or
                                             a warp's (then block_threads / 32 rows a block) */
  FbPtxRowKind  *rows;                    /* cooperative: one per statement of body */
  int64_t        reduce_extent;           /* cooperative: the longest reduction loop */
} FbPtxMap;

/* A loop split over the threads of a block: the loop and its perfectly nested independent
 * loops, as one linear index. */
typedef struct {
  const FbKStmt *nest[FB_PTX_MAX_NEST];
  guint          n_nest;
  int64_t        extent;                  /* product of their extents */
  const GPtrArray *body;
} FbPtxSplit;

/* The mapping of phase (its body's first statement the parallel loop); FALSE with a reason
 * when the phase's shape is not one this code generation knows. */
gboolean _fb_ptx_map_phase     (const FbKernel *k, const FbKPhase *phase, FbPtxMap *map,
                                char **why);
void     _fb_ptx_map_clear     (FbPtxMap *map);
/* The split form of a REDUCE (reduction TRUE) or STORES row statement. */
void     _fb_ptx_split         (const FbKernel *k, const FbKStmt *loop, gboolean reduction,
                                FbPtxSplit *split);
/* For a reduction assignment acc = op (acc, x): the op; FALSE when it is not one. */
gboolean _fb_ptx_reduction_op  (const FbKernel *k, const FbKStmt *assign, FbPtxRed *op);
/* Whether s (a statement) contains a FB_KS_CALL / a store / reads arg anywhere. */
gboolean _fb_ptx_has_call      (const FbKStmt *s);
gboolean _fb_ptx_has_store     (const FbKStmt *s);
void     _fb_ptx_args_loaded   (const FbKStmt *s, gboolean *loaded);
void     _fb_ptx_args_stored   (const FbKStmt *s, gboolean *stored);
void     _fb_ptx_accs_assigned (const FbKStmt *s, gboolean *assigned);
void     _fb_ptx_accs_read     (const FbKStmt *s, gboolean *read);

/* The state of emitting one phase for the GPU. */
typedef struct {
  FbEmit          e;
  const FbPtxMap *map;
  LLVMTypeRef     i64, i32;
  LLVMValueRef    tid;          /* threadIdx.x, i64 */
  LLVMValueRef    lane;         /* cooperative: the thread's place among its row's threads */
  guint           n_shared;     /* shared arrays made so far in the module */
  gboolean        emulate;      /* for the host: FbPtxEmuThread instead of the GPU's registers */
  LLVMValueRef    emu;          /* the body's FbPtxEmuThread* */
} FbPtxGpu;

/* The entry (ptx_kernel) and body of phase, as g->map says; distinct: per argument, whether
 * no other argument shares its bytes (noalias). */
void     _fb_ptx_emit_phase    (FbPtxGpu *g, const FbKPhase *phase, const gboolean *distinct);

/* fb_codegen_ptx with every instruction's debug location its kernel IR line (the code view's
 * stages). */
FbPtxModule *_fb_codegen_ptx_lines (const FbKernel *kernel, const FbPlan *plan,
                                    const FbKernelLines *lines, GError **error);

/* The optimized NVPTX module of kernel in ctx (out's phases and IR texts filled in, its ptx
 * left NULL); NULL with *error set when it cannot be made, NULL without when the kernel has no
 * generated code. */
LLVMModuleRef _fb_ptx_kernel_module (LLVMContextRef ctx, LLVMTargetMachineRef tm,
                                     const FbKernel *kernel, const FbPlan *plan,
                                     FbPtxModule *out, GError **error);

/* The NVPTX target machine for sm_90 (a new one per call: not shared between threads). */
LLVMTargetMachineRef _fb_ptx_target_machine (GError **error);

G_END_DECLS
