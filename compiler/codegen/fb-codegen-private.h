/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Internals of code generation shared by its files. Only compiler/codegen/ includes this. */
#pragma once

#include "fb-codegen.h"

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

G_BEGIN_DECLS

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
} FbEmit;

/* Builds the module of one kernel: a function per phase. */
LLVMModuleRef _fb_codegen_emit_kernel (LLVMContextRef ctx, const FbKernel *kernel,
                                       const char *triple, const char *data_layout,
                                       GError **error);

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
