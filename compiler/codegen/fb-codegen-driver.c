/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The driver of an exported shared library: fb_model_run, generated as LLVM IR like the
 * kernels it calls, with the weights as one constant array. It allocates the arena, points
 * every buffer at its bytes, calls each phase over its whole range, copies the outputs out. */
#include "fb-codegen-private.h"

#include <string.h>

typedef struct {
  LLVMContextRef ctx;
  LLVMModuleRef  mod;
  LLVMBuilderRef b;
  LLVMTypeRef    ptr, i64, i32;
  LLVMValueRef   weights, arena, inputs, outputs;
} Driver;

static LLVMValueRef
declare (Driver *d, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, unsigned n)
{
  LLVMValueRef f = LLVMGetNamedFunction (d->mod, name);
  if (f == NULL)
    f = LLVMAddFunction (d->mod, name, LLVMFunctionType (ret, params, n, FALSE));
  return f;
}

static LLVMValueRef
call (Driver *d, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, LLVMValueRef *args,
      unsigned n)
{
  LLVMValueRef f = declare (d, name, ret, params, n);
  return LLVMBuildCall2 (d->b, LLVMFunctionType (ret, params, n, FALSE), f, args, n, "");
}

static LLVMValueRef
byte_offset (Driver *d, LLVMValueRef base, int64_t offset)
{
  LLVMValueRef idx = LLVMConstInt (d->i64, offset, 0);
  return LLVMBuildInBoundsGEP2 (d->b, LLVMInt8TypeInContext (d->ctx), base, &idx, 1, "");
}

static LLVMValueRef
slot (Driver *d, LLVMValueRef array, guint i)
{
  LLVMValueRef idx = LLVMConstInt (d->i64, i, 0);
  return LLVMBuildInBoundsGEP2 (d->b, d->ptr, array, &idx, 1, "");
}

/* The address of buffer b (through views to the bytes' owner). */
static LLVMValueRef
buffer_ptr (Driver *d, const FbPlan *plan, guint b, const int64_t *weight_offsets)
{
  guint root = fb_plan_root (plan, b);
  const FbBuffer *buf = fb_plan_buffer (plan, root);
  if (buf->kind == FB_BUF_CONST)
    return byte_offset (d, d->weights, weight_offsets[root]);
  if (buf->kind == FB_BUF_INPUT)
    for (guint i = 0; i < plan->inputs->len; i++)
      if (g_array_index (plan->inputs, guint, i) == root)
        return LLVMBuildLoad2 (d->b, d->ptr, slot (d, d->inputs, i), "");
  return byte_offset (d, d->arena, MAX (buf->offset, 0));
}

/* A oneDNN convolution phase: its description as a constant, a slot for the primitive the
 * library makes on first use, and the call; a failure ends the run with -1. */
static void
emit_conv (Driver *d, LLVMValueRef run, LLVMValueRef args, const FbKConv *cv, guint index,
           LLVMBasicBlockRef failed)
{
  G_STATIC_ASSERT (sizeof (FbConvDesc) % sizeof (int64_t) == 0);
  enum { WORDS = sizeof (FbConvDesc) / sizeof (int64_t) };
  int64_t words[WORDS];
  memcpy (words, &cv->desc, sizeof words);
  LLVMValueRef init[WORDS];
  for (guint i = 0; i < WORDS; i++)
    init[i] = LLVMConstInt (d->i64, (unsigned long long) words[i], 0);
  g_autofree char *desc_name = g_strdup_printf ("fb_conv_desc_%u", index);
  g_autofree char *slot_name = g_strdup_printf ("fb_conv_primitive_%u", index);
  LLVMValueRef desc = LLVMAddGlobal (d->mod, LLVMArrayType2 (d->i64, WORDS), desc_name);
  LLVMSetInitializer (desc, LLVMConstArray2 (d->i64, init, WORDS));
  LLVMSetGlobalConstant (desc, TRUE);
  LLVMSetLinkage (desc, LLVMInternalLinkage);
  LLVMValueRef prim = LLVMAddGlobal (d->mod, d->ptr, slot_name);
  LLVMSetInitializer (prim, LLVMConstPointerNull (d->ptr));
  LLVMSetLinkage (prim, LLVMInternalLinkage);

  guint which[6] = { cv->x, cv->desc.scaled_input ? cv->scale : FB_KCONV_NO_ARG, cv->w, cv->bias,
                     cv->add, cv->y };
  LLVMValueRef cargs[8] = { prim, desc };
  LLVMTypeRef params[8];
  for (int i = 0; i < 8; i++)
    params[i] = d->ptr;
  for (int i = 0; i < 6; i++)
    cargs[2 + i] = which[i] == FB_KCONV_NO_ARG ? LLVMConstPointerNull (d->ptr)
                 : LLVMBuildLoad2 (d->b, d->ptr, slot (d, args, which[i]), "");
  LLVMValueRef status = call (d, "fb_dnnl_conv_once", d->i32, params, cargs, 8);
  LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext (d->ctx, run, "");
  LLVMBuildCondBr (d->b, LLVMBuildICmp (d->b, LLVMIntNE, status, LLVMConstInt (d->i32, 0, 0), ""),
                   failed, next);
  LLVMPositionBuilderAtEnd (d->b, next);
}

GBytes *
fb_codegen_driver_object (const FbPlan *plan, GBytes *weights, const int64_t *weight_offsets,
                          GError **error)
{
  g_return_val_if_fail (plan != NULL && weights != NULL, NULL);
  for (guint k = 0; k < plan->kernels->len; k++)
    if (((FbKernel *) g_ptr_array_index (plan->kernels, k))->kind == FB_KERNEL_HOST)
      {
        g_set_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_LLVM,
                     "the model has control flow (If or Loop), which runs in the interpreter: "
                     "it cannot be exported as a shared library");
        return NULL;
      }
  LLVMTargetMachineRef tm = _fb_codegen_target_machine (error);
  if (tm == NULL)
    return NULL;
  Driver d = { 0 };
  d.ctx = LLVMContextCreate ();
  d.mod = LLVMModuleCreateWithNameInContext ("fb_model", d.ctx);
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout (tm);
  char *layout = LLVMCopyStringRepOfTargetData (td);
  char *triple = LLVMGetTargetMachineTriple (tm);
  LLVMSetTarget (d.mod, triple);
  LLVMSetDataLayout (d.mod, layout);
  LLVMDisposeMessage (layout);
  LLVMDisposeMessage (triple);
  LLVMDisposeTargetData (td);
  d.b = LLVMCreateBuilderInContext (d.ctx);
  d.ptr = LLVMPointerTypeInContext (d.ctx, 0);
  d.i64 = LLVMInt64TypeInContext (d.ctx);
  d.i32 = LLVMInt32TypeInContext (d.ctx);

  gsize wlen;
  const char *wdata = g_bytes_get_data (weights, &wlen);
  LLVMValueRef init = LLVMConstStringInContext2 (d.ctx, wdata ? wdata : "", wlen, TRUE);
  d.weights = LLVMAddGlobal (d.mod, LLVMTypeOf (init), "fb_model_weights");
  LLVMSetInitializer (d.weights, init);
  LLVMSetGlobalConstant (d.weights, TRUE);
  LLVMSetLinkage (d.weights, LLVMInternalLinkage);
  LLVMSetAlignment (d.weights, 64);

  LLVMTypeRef run_params[2] = { d.ptr, d.ptr };
  LLVMValueRef run = LLVMAddFunction (d.mod, "fb_model_run",
                                      LLVMFunctionType (d.i32, run_params, 2, FALSE));
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext (d.ctx, run, "entry");
  LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext (d.ctx, run, "no_memory");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext (d.ctx, run, "run");
  LLVMBasicBlockRef conv_failed = LLVMAppendBasicBlockInContext (d.ctx, run, "conv_failed");
  LLVMPositionBuilderAtEnd (d.b, entry);
  d.inputs = LLVMGetParam (run, 0);
  d.outputs = LLVMGetParam (run, 1);
  int64_t arena = (MAX (plan->arena_bytes, 1) + 63) / 64 * 64;
  LLVMTypeRef aa_params[2] = { d.i64, d.i64 };
  LLVMValueRef aa_args[2] = { LLVMConstInt (d.i64, 64, 0), LLVMConstInt (d.i64, arena, 0) };
  d.arena = call (&d, "aligned_alloc", d.ptr, aa_params, aa_args, 2);
  LLVMBuildCondBr (d.b, LLVMBuildIsNull (d.b, d.arena, ""), fail, body);
  LLVMPositionBuilderAtEnd (d.b, fail);
  LLVMBuildRet (d.b, LLVMConstInt (d.i32, (unsigned long long) -1, 1));
  LLVMPositionBuilderAtEnd (d.b, conv_failed);
  call (&d, "free", LLVMVoidTypeInContext (d.ctx), &d.ptr, &d.arena, 1);
  LLVMBuildRet (d.b, LLVMConstInt (d.i32, (unsigned long long) -1, 1));
  LLVMPositionBuilderAtEnd (d.b, body);

  LLVMTypeRef phase_params[3] = { d.ptr, d.i64, d.i64 };
  guint n_convs = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      if (kernel->phases->len == 0)
        continue;
      guint na = kernel->args->len;
      LLVMValueRef args = LLVMBuildArrayAlloca (d.b, d.ptr, LLVMConstInt (d.i32, MAX (na, 1), 0), "args");
      for (guint a = 0; a < na; a++)
        LLVMBuildStore (d.b, buffer_ptr (&d, plan, g_array_index (kernel->args, FbKArg, a).buffer,
                                         weight_offsets), slot (&d, args, a));
      for (guint p = 0; p < kernel->phases->len; p++)
        {
          const FbKPhase *ph = g_ptr_array_index (kernel->phases, p);
          if (ph->conv)
            {
              emit_conv (&d, run, args, ph->conv, n_convs++, conv_failed);
              continue;
            }
          LLVMValueRef cargs[3] = { args, LLVMConstInt (d.i64, 0, 0), LLVMConstInt (d.i64, ph->extent, 0) };
          call (&d, ph->fn, LLVMVoidTypeInContext (d.ctx), phase_params, cargs, 3);
        }
    }
  LLVMTypeRef mc_params[3] = { d.ptr, d.ptr, d.i64 };
  for (guint i = 0; i < plan->outputs->len; i++)
    {
      guint b = g_array_index (plan->outputs, guint, i);
      LLVMValueRef mc_args[3] = {
        LLVMBuildLoad2 (d.b, d.ptr, slot (&d, d.outputs, i), ""),
        buffer_ptr (&d, plan, b, weight_offsets),
        LLVMConstInt (d.i64, fb_plan_buffer (plan, b)->nbytes, 0),
      };
      call (&d, "memcpy", d.ptr, mc_params, mc_args, 3);
    }
  call (&d, "free", LLVMVoidTypeInContext (d.ctx), &d.ptr, &d.arena, 1);
  LLVMBuildRet (d.b, LLVMConstInt (d.i32, 0, 0));

  LLVMMemoryBufferRef buf = NULL;
  char *msg = NULL;
  GBytes *obj = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer (tm, d.mod, LLVMObjectFile, &msg, &buf))
    {
      g_set_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_LLVM,
                   "LLVM could not emit the driver: %s", msg ? msg : "");
      LLVMDisposeMessage (msg);
    }
  else
    {
      obj = g_bytes_new (LLVMGetBufferStart (buf), LLVMGetBufferSize (buf));
      LLVMDisposeMemoryBuffer (buf);
    }
  LLVMDisposeBuilder (d.b);
  LLVMDisposeModule (d.mod);
  LLVMContextDispose (d.ctx);
  LLVMDisposeTargetMachine (tm);
  return obj;
}
