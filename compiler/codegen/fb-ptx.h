/* SPDX-License-Identifier: GPL-3.0-or-later */
/* PTX code generation: the same kernel IR the CPU target compiles, emitted through LLVM's
 * NVPTX back end for sm_90.
 *
 * Each generated phase of a kernel becomes one `.entry` with the parameters
 * (.u64 args, .s64 begin, .s64 end; PTX spells all three .u64): args is a device array of the
 * kernel's buffer pointers (kernel argument order), and [begin, end) the iterations of the
 * phase's parallel loop, as on the CPU. A block runs iters_per_block consecutive iterations
 * with block_threads threads (plain loops: one item, or four consecutive ones, a thread; the
 * loops nested in the parallel one join the grid where their iterations are independent;
 * reductions: a whole block per row, or a warp per row for many short rows), so the grid
 * is ceil((end - begin) / iters_per_block) blocks, times blocks_per_iter. Library phases (oneDNN convolutions, sgemm calls) have no
 * entry: the CUDA runtime runs them through cuDNN and cuBLASLt.
 *
 * Launch an entry with exactly block_threads threads per block (cooperative entries size their
 * shared memory and shuffles by it; it is also the entry's .maxntid) and 16-byte aligned
 * buffers (the accesses are vectorized on that promise). Every entry loops over the grid, so
 * any grid size computes the right result; ceil((end - begin) / iters_per_block) *
 * blocks_per_iter blocks is the size that gives each thread one share of the work (an
 * iteration of the parallel loop can hold more work than a block: a row per block for a
 * reduction, or an elementwise loop nest whose outer loop is short). */
#pragma once

#include "fb-codegen.h"

G_BEGIN_DECLS

/* How to launch one generated entry. */
typedef struct {
  char      *entry;              /* the .entry name in the module; NULL: nothing to launch */
  guint      block_threads;
  guint      iters_per_block;
  guint      blocks_per_iter;
  gboolean   cooperative;
  guint      row_threads;        /* cooperative: threads per row (the block's, or 32) */
} FbPtxLaunch;

typedef struct {
  char      *entry;              /* the .entry name in the module; NULL for a library phase */
  guint      block_threads;      /* threads per block */
  guint      iters_per_block;    /* iterations of the parallel loop one block runs */
  guint      shared_bytes;       /* dynamic shared memory per block */
  guint      blocks_per_iter;    /* blocks that one iteration's work fills (1 when
                                    iters_per_block > 1): multiplies the grid */
  gboolean   cooperative;        /* a block works on one item together (warp shuffles, shared
                                    memory, barriers), or each of its warps on one */
  guint      row_threads;        /* cooperative: threads per item, block_threads or 32 */
  /* A phase that calls a library (a convolution phase, or FB_KS_CALL statements in its
   * parallel loop, e.g. dnnl_sgemm) has no entry: the runtime makes its calls for every
   * iteration of [begin, end). Generated statements of the same iterations around the calls
   * are entries of their own: before (im2col, padding) is launched over [begin, end) ahead
   * of the calls, after (an epilogue: bias, activation, residual) behind them. */
  gboolean    library;
  FbPtxLaunch before;
  FbPtxLaunch after;
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

/* Every generated kernel of plan (a plan lowered for the GPU) in one PTX module for sm_90,
 * each kernel's code as fb_codegen_ptx makes it, kernels of equal code once; the text starts
 * with comments that name each kernel's entries and launch shapes. Caller frees; NULL with an
 * error naming the kernel that could not be made, or saying that no kernel has code. */
char        *fb_codegen_ptx_plan   (const FbPlan *plan, GError **error);

/* The lowering stages of one kernel for the CUDA target: kernel IR, LLVM IR before and after
 * optimization, PTX as assembly (each instruction with its kernel IR line as debug location),
 * and SASS (stages->sass) where ptxas and cuobjdump or nvdisasm are on this machine, else a
 * comment naming the missing tool. Library phases are noted, not compiled. */
FbKernelStages *fb_codegen_ptx_stages (const FbKernel *kernel, const FbPlan *plan,
                                       GError **error);

/* The register budget against spills. Every generated entry carries a budget (.maxnreg); where
 * the assembler can only keep to it by spilling to local memory, the spills cost more than the
 * occupancy gains (ConvNeXt-Tiny's 7x7 depthwise convolutions: 218 registers, or 128 and 556
 * bytes of spill stores a thread; the model 0.81 ms against 1.04 on an H200). Whether an
 * assembler's verbose log (ptxas -v, or the driver's JIT with CU_JIT_LOG_VERBOSE) reports
 * spill stores, and the PTX without its budgets, for assembling again: caller frees. */
gboolean     fb_ptx_log_spills            (const char *log);
char        *fb_ptx_without_register_budget (const char *ptx);

/* ptxas of the CUDA toolkit: on PATH, under $CUDA_PATH or $CUDA_HOME, or in the toolkit's usual
 * install location; NULL when absent. The same for "cuobjdump" and "nvdisasm". Caller frees. */
char        *fb_ptx_find_tool      (const char *name);
/* Assembles ptx with `ptxas -arch=sm_90` (with -v when info is given: the register and spill
 * report lands there); FALSE with ptxas's messages when it refuses the text. The cubin is
 * returned in *cubin when asked for. */
gboolean     fb_ptx_assemble       (const char *ptx, GBytes **cubin, char **info, GError **error);

/* The kernel as an x86-64 object (as fb_codegen_kernel_object) computing with the GPU's math
 * (log, sin, cos, pow, double exp and erf as inline arithmetic instead of libm), so that a
 * machine without a GPU can check the arithmetic of the PTX. */
GBytes      *fb_codegen_kernel_object_gpu_math (const FbKernel *kernel, GError **error);

/* A thread of the host's emulation of a GPU launch: what the GPU's special registers, barrier
 * and warp shuffles would give it (the emulator fills it; the byte offsets are fixed). */
typedef struct _FbPtxEmuThread FbPtxEmuThread;
struct _FbPtxEmuThread {
  gint32   tid, ctaid, nctaid, ntid;                               /* at 0, 4, 8, 12 */
  void   (*barrier)  (FbPtxEmuThread *self);                       /* at 16 */
  float  (*shfl_f32) (FbPtxEmuThread *self, float v, gint32 lane_xor);   /* at 24 */
  gint32 (*shfl_i32) (FbPtxEmuThread *self, gint32 v, gint32 lane_xor);  /* at 32 */
  void   (*warp_sync) (FbPtxEmuThread *self);                      /* at 40 */
};
/* The signature of an emulated entry. */
typedef void (*FbPtxEmuFn) (void **args, int64_t begin, int64_t end, FbPtxEmuThread *thread);

/* The same kernel, grid mapping and entries as fb_codegen_ptx, compiled for the host
 * (*object, an x86-64 object for the JIT) with the GPU's registers, barriers and shuffles read
 * through FbPtxEmuThread: a machine without a GPU runs the launch geometry, the block
 * reductions and the vectorized paths thread by thread. The module's ptx is NULL. */
FbPtxModule *fb_codegen_ptx_emulation (const FbKernel *kernel, const FbPlan *plan,
                                       GBytes **object, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbPtxModule, fb_ptx_module_free)

G_END_DECLS
