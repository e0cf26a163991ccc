/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Internals of code generation shared by its files. Only compiler/codegen/ includes this. */
#pragma once

#include "fb-codegen.h"

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

G_BEGIN_DECLS

typedef struct _FbDebugLines FbDebugLines;

typedef struct {
  LLVMContextRef  ctx;
  LLVMModuleRef   mod;
  LLVMBuilderRef  b;
  const FbKernel *k;
  LLVMValueRef    fn;           /* the function being filled */
  LLVMValueRef   *args;         /* one pointer per kernel argument */
  LLVMValueRef   *accs;         /* one alloca per accumulator */
  LLVMValueRef   *vars;         /* the current value of each loop variable */
  LLVMValueRef    begin, end;   /* the range of the parallel loop */
  gboolean        gpu;          /* NVPTX: no libm calls, math inline (fb-codegen-ptx-math.c) */
  const gboolean *invariant;    /* per argument: nothing writes it while the kernel runs, so its
                                   loads may go through the read-only cache (NULL: none) */
  FbDebugLines   *debug;        /* kernel IR lines as debug locations, or NULL for none */
  LLVMMetadataRef scope;        /* the subprogram of fn while debug is set */
} FbEmit;

/* Builds the module of one kernel: a function per phase. */
LLVMModuleRef _fb_codegen_emit_kernel (LLVMContextRef ctx, const FbKernel *kernel,
                                       const char *triple, const char *data_layout,
                                       GError **error);

/* The same with the GPU's math (fb-codegen-ptx-math.c) when gpu_math: lets the host check the
 * arithmetic the PTX does; with lines (may be NULL), every instruction's debug location is the
 * kernel IR line of its statement. */
LLVMModuleRef _fb_codegen_emit_kernel_math (LLVMContextRef ctx, const FbKernel *kernel,
                                            const char *triple, const char *data_layout,
                                            gboolean gpu_math, const FbKernelLines *lines,
                                            GError **error);

/* Fills the line maps of st from its texts and the kernel IR's lines (fb-stage-lines.c). */
void          _fb_kernel_stages_map  (FbKernelStages *st, const FbKernelLines *lines);

/* Debug locations pointing into the kernel IR (fb-codegen-lines.c). */
FbDebugLines *_fb_debug_lines_new    (LLVMModuleRef mod, const FbKernel *kernel,
                                      const FbKernelLines *lines);
/* Finalizes the module's debug information. */
void          _fb_debug_lines_free   (FbDebugLines *dl);
/* The kernel IR holds copy (a statement or phase made of another) where it holds original;
 * original NULL forgets copy. */
void          _fb_debug_lines_alias  (FbDebugLines *dl, gconstpointer copy, gconstpointer original);
/* fn becomes e's scope (a subprogram at the line of phase); what is built next is at that
 * line. Nothing without e->debug. */
void          _fb_debug_lines_enter  (FbEmit *e, LLVMValueRef fn, gconstpointer phase);
/* What is built next is at the line of stmt_or_phase (unchanged when the text lacks it). */
void          _fb_debug_lines_at     (FbEmit *e, gconstpointer stmt_or_phase);
/* Ends fn's scope: no location is carried into the next function. */
void          _fb_debug_lines_leave  (FbEmit *e);

/* The pieces of emission the NVPTX kernels share with the CPU's (fb-codegen-emit.c). */
LLVMTypeRef   _fb_codegen_reg_type    (LLVMContextRef ctx, FbDType t);
LLVMValueRef  _fb_codegen_expr        (FbEmit *e, const FbKExpr *x);
void          _fb_codegen_stmts       (FbEmit *e, const GPtrArray *body);
void          _fb_codegen_add_attr    (LLVMContextRef ctx, LLVMValueRef fn, unsigned index,
                                       const char *name);

/* Math for the GPU, where there is no libm (fb-codegen-ptx-math.c): x float or double. */
LLVMValueRef  _fb_codegen_gpu_log     (FbEmit *e, LLVMValueRef x);
LLVMValueRef  _fb_codegen_gpu_exp_f64 (FbEmit *e, LLVMValueRef x);
LLVMValueRef  _fb_codegen_gpu_erf_f64 (FbEmit *e, LLVMValueRef x);
LLVMValueRef  _fb_codegen_gpu_sincos  (FbEmit *e, LLVMValueRef x, gboolean cosine);
LLVMValueRef  _fb_codegen_gpu_pow     (FbEmit *e, LLVMValueRef x, LLVMValueRef y);
void          _fb_codegen_mark_invariant (FbEmit *e, LLVMValueRef load);

/* Math that vectorizes: polynomial exp and the functions built on it. x is float or double
 * (a scalar; the loop vectorizer widens it). */
LLVMValueRef  _fb_codegen_exp         (FbEmit *e, LLVMValueRef x);
LLVMValueRef  _fb_codegen_tanh        (FbEmit *e, LLVMValueRef x);
LLVMValueRef  _fb_codegen_sigmoid     (FbEmit *e, LLVMValueRef x);
LLVMValueRef  _fb_codegen_erf         (FbEmit *e, LLVMValueRef x);
/* A call of the overloaded intrinsic name ("llvm.sqrt") on arguments of type t. */
LLVMValueRef  _fb_codegen_intrinsic   (FbEmit *e, const char *name, LLVMTypeRef t,
                                       LLVMValueRef *args, unsigned n);
LLVMValueRef  _fb_codegen_fconst      (LLVMTypeRef t, double v);

/* Target machine of the host (one per thread: LLVM's are not shared between threads). */
LLVMTargetMachineRef _fb_codegen_target_machine (GError **error);

G_END_DECLS
