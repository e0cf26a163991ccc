/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Code generation: kernel IR -> LLVM IR (through the LLVM C API) -> optimized with the new pass
 * manager ("default<O3>") for the host CPU -> an x86-64 object per kernel.
 *
 * Every phase of a kernel becomes one function named after the kernel (which is named after its
 * graph node: "n57_Conv_Clip_p0"), so a symbol in a profile or a disassembly leads back to the
 * node. Objects are cached by the kernel's content hash (fb_kernel_hash) plus the target, in
 * memory and in the user's cache folder, so that a toggle in the pipeline recompiles only the
 * kernels it changed. */
#pragma once

#include "fb-kernel.h"

G_BEGIN_DECLS

#define FB_CODEGEN_ERROR (fb_codegen_error_quark ())
GQuark fb_codegen_error_quark (void);

typedef enum {
  FB_CODEGEN_ERROR_LLVM,        /* LLVM refused the module or could not emit it */
  FB_CODEGEN_ERROR_TARGET,      /* no LLVM target for this machine */
  FB_CODEGEN_ERROR_UNSUPPORTED, /* a kernel this target has no code for (the message names it) */
  FB_CODEGEN_ERROR_TOOL,        /* an external tool (ptxas) is missing or refused the code */
} FbCodegenError;

/* "x86_64-pc-linux-gnu znver4 +avx,+avx2,...": the triple, CPU and features code is generated
 * for; part of every cache key. Static, valid for the life of the process. */
const char *fb_codegen_host_target   (void);

/* The lowering stages of one kernel, as the UI shows them. Every instruction carries the kernel
 * IR line of the statement it came from as its debug location (!dbg in the IR, .loc in the
 * assembly and the PTX); the *_lines maps read those back, so that a line of any stage leads to
 * the kernel IR line, and that line's phase to the graph nodes it computes (FbKPhase.prov). */
typedef struct {
  char   *kernel_ir;            /* fb_kernel_to_string */
  char   *llvm_ir;              /* as generated */
  char   *llvm_ir_opt;          /* after default<O3> */
  char   *assembly;             /* x86-64, AT&T syntax; PTX for the CUDA target */
  char   *sass;                 /* CUDA target: the SASS of the PTX where ptxas and cuobjdump
                                   or nvdisasm are on this machine, else a comment saying which
                                   tool is missing; NULL for the cpu target */
  GArray *kir_phase;            /* guint per line of kernel_ir: 1 + the phase the line belongs
                                   to, 0 for the kernel's header and arguments */
  GArray *llvm_ir_lines;        /* guint per line of llvm_ir: the kernel IR line its code came
                                   from (from 1), 0 for none */
  GArray *llvm_ir_opt_lines;    /* the same for llvm_ir_opt */
  GArray *assembly_lines;       /* the same for assembly */
} FbKernelStages;

FbKernelStages *fb_codegen_kernel_stages (const FbKernel *kernel, const FbPlan *plan,
                                          GError **error);
void            fb_kernel_stages_free    (FbKernelStages *stages);

/* For each line of text (LLVM IR as LLVM prints it, or assembly and PTX with .loc directives),
 * the kernel IR line its debug location names; 0 where none (fb-stage-lines.c). */
GArray         *fb_stage_lines_llvm_ir   (const char *text);
GArray         *fb_stage_lines_assembly  (const char *text);

/* The object code of one kernel (an ELF relocatable, position independent). */
GBytes     *fb_codegen_kernel_object (const FbKernel *kernel, GError **error);

/* Objects of every kernel of plan that has code (NULL entries for views and host kernels),
 * compiled on up to n_threads threads, through the cache. *n_cached receives how many came
 * from the cache (may be NULL). */
GPtrArray  *fb_codegen_plan          (const FbPlan *plan, guint n_threads, guint *n_cached,
                                      GError **error);

/* The object of a standalone driver for plan: `int fb_model_run (const void *const *inputs,
 * void *const *outputs)` runs every kernel in order on one thread, with the weights (the bytes
 * of weights, constant buffer i at weight_offsets[i]) inside the object. Linked with the
 * kernels' objects it makes a shared library. Plans with host kernels (If, Loop) have no
 * driver: the interpreter they need is not part of the library. */
GBytes     *fb_codegen_driver_object (const FbPlan *plan, GBytes *weights,
                                      const int64_t *weight_offsets, GError **error);

/* The compiled-kernel cache: in memory for the process, and on disk under
 * $XDG_CACHE_HOME/fusebench/kernels unless disabled (FUSEBENCH_KERNEL_CACHE=off). */
GBytes     *fb_kernel_cache_lookup   (const char *key);
void        fb_kernel_cache_store    (const char *key, GBytes *object);
void        fb_kernel_cache_clear_memory (void);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbKernelStages, fb_kernel_stages_free)

G_END_DECLS
