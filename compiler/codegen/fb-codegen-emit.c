/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Kernel IR to LLVM IR, through the C API's builder.
 *
 * Each phase is `void NAME (ptr args, i64 begin, i64 end)`; it loads the argument pointers and
 * calls an always-inlined body whose pointer parameters are noalias (buffers of one kernel never
 * overlap), so that after inlining the vectorizer knows the stores do not feed the loads. Loop
 * variables are phis; accumulators are allocas that mem2reg turns into registers. Float adds
 * and multiplies may be reassociated and contracted, which is what lets reductions vectorize;
 * NaN and infinity semantics are kept. */
#include "fb-codegen-private.h"

#include <string.h>

LLVMTypeRef
_fb_codegen_reg_type (LLVMContextRef ctx, FbDType t)
{
  switch (t)
    {
    case FB_DTYPE_FLOAT32: case FB_DTYPE_FLOAT16: return LLVMFloatTypeInContext (ctx);
    case FB_DTYPE_FLOAT64: return LLVMDoubleTypeInContext (ctx);
    case FB_DTYPE_BOOL: return LLVMInt1TypeInContext (ctx);
    case FB_DTYPE_INT8: case FB_DTYPE_UINT8: return LLVMInt8TypeInContext (ctx);
    case FB_DTYPE_INT16: case FB_DTYPE_UINT16: return LLVMInt16TypeInContext (ctx);
    case FB_DTYPE_INT32: case FB_DTYPE_UINT32: return LLVMInt32TypeInContext (ctx);
    default: return LLVMInt64TypeInContext (ctx);
    }
}

#define reg_type _fb_codegen_reg_type

static LLVMTypeRef
mem_type (LLVMContextRef ctx, FbDType t)
{
  /* Half floats are computed in float registers (as ONNX Runtime's CPU kernels do) and
   * rounded to half where they are stored or cast to float16. */
  if (t == FB_DTYPE_FLOAT16)
    return LLVMHalfTypeInContext (ctx);
  return t == FB_DTYPE_BOOL ? LLVMInt8TypeInContext (ctx) : reg_type (ctx, t);
}

static gboolean
is_float (FbDType t)
{
  return t == FB_DTYPE_FLOAT32 || t == FB_DTYPE_FLOAT64 || t == FB_DTYPE_FLOAT16;
}

static gboolean
is_unsigned (FbDType t)
{
  return t == FB_DTYPE_UINT8 || t == FB_DTYPE_UINT16 || t == FB_DTYPE_UINT32 ||
         t == FB_DTYPE_UINT64 || t == FB_DTYPE_BOOL;
}

LLVMValueRef
_fb_codegen_fconst (LLVMTypeRef t, double v)
{
  return LLVMConstReal (t, v);
}

LLVMValueRef
_fb_codegen_intrinsic (FbEmit *e, const char *name, LLVMTypeRef t, LLVMValueRef *args,
                       unsigned n)
{
  unsigned id = LLVMLookupIntrinsicID (name, strlen (name));
  LLVMTypeRef tys[1] = { t };
  LLVMValueRef f = LLVMGetIntrinsicDeclaration (e->mod, id, tys, 1);
  LLVMTypeRef ft = LLVMIntrinsicGetType (e->ctx, id, tys, 1);
  return LLVMBuildCall2 (e->b, ft, f, args, n, "");
}

static LLVMValueRef
fast (LLVMValueRef v)
{
  if (LLVMIsAInstruction (v) && LLVMCanValueUseFastMathFlags (v))
    LLVMSetFastMathFlags (v, LLVMFastMathAllowReassoc | LLVMFastMathAllowContract |
                             LLVMFastMathNoSignedZeros);
  return v;
}

static LLVMValueRef
convert (FbEmit *e, LLVMValueRef v, FbDType from, FbDType to)
{
  if (from == to)
    return v;
  if (to == FB_DTYPE_FLOAT16)
    {
      v = convert (e, v, from, FB_DTYPE_FLOAT32);
      v = LLVMBuildFPTrunc (e->b, v, LLVMHalfTypeInContext (e->ctx), "");
      return LLVMBuildFPExt (e->b, v, LLVMFloatTypeInContext (e->ctx), "");
    }
  if (from == FB_DTYPE_FLOAT16)
    from = FB_DTYPE_FLOAT32;
  if (from == to)
    return v;
  LLVMTypeRef tt = reg_type (e->ctx, to);
  if (to == FB_DTYPE_BOOL)
    return is_float (from)
      ? LLVMBuildFCmp (e->b, LLVMRealUNE, v, LLVMConstNull (reg_type (e->ctx, from)), "")
      : LLVMBuildICmp (e->b, LLVMIntNE, v, LLVMConstNull (reg_type (e->ctx, from)), "");
  if (is_float (from) && is_float (to))
    return to == FB_DTYPE_FLOAT64 ? LLVMBuildFPExt (e->b, v, tt, "") : LLVMBuildFPTrunc (e->b, v, tt, "");
  if (is_float (from))
    return is_unsigned (to) ? LLVMBuildFPToUI (e->b, v, tt, "") : LLVMBuildFPToSI (e->b, v, tt, "");
  if (is_float (to))
    return is_unsigned (from) ? LLVMBuildUIToFP (e->b, v, tt, "") : LLVMBuildSIToFP (e->b, v, tt, "");
  return LLVMBuildIntCast2 (e->b, v, tt, !is_unsigned (from), "");
}

#define expr _fb_codegen_expr
#define add_attr _fb_codegen_add_attr
#define stmts _fb_codegen_stmts

static LLVMValueRef
element_ptr (FbEmit *e, guint arg, const FbKExpr *index)
{
  FbDType t = g_array_index (e->k->args, FbKArg, arg).dtype;
  LLVMValueRef idx = expr (e, index);
  return LLVMBuildInBoundsGEP2 (e->b, mem_type (e->ctx, t), e->args[arg], &idx, 1, "");
}

/* fb_tf32_round in integer operations on the float's bits: add half of the lowest kept bit,
 * clear the 13 dropped ones; where that reaches the exponent's all-ones pattern (an infinity,
 * a NaN, or an overflow) clear them without rounding. */
static LLVMValueRef
tf32_round (FbEmit *e, LLVMValueRef a)
{
  LLVMTypeRef i32 = LLVMInt32TypeInContext (e->ctx);
  LLVMValueRef bits = LLVMBuildBitCast (e->b, a, i32, "");
  LLVMValueRef keep = LLVMConstInt (i32, 0xffffe000u, 0), expo = LLVMConstInt (i32, 0x7f800000u, 0);
  LLVMValueRef rounded = LLVMBuildAnd (e->b, LLVMBuildAdd (e->b, bits, LLVMConstInt (i32, 0x1000, 0), ""),
                                       keep, "");
  LLVMValueRef special = LLVMBuildICmp (e->b, LLVMIntEQ, LLVMBuildAnd (e->b, rounded, expo, ""), expo, "");
  LLVMValueRef r = LLVMBuildSelect (e->b, special, LLVMBuildAnd (e->b, bits, keep, ""), rounded, "");
  return LLVMBuildBitCast (e->b, r, LLVMTypeOf (a), "");
}

static LLVMValueRef
unary (FbEmit *e, const FbKExpr *x)
{
  LLVMValueRef a = expr (e, x->a);
  LLVMTypeRef t = reg_type (e->ctx, x->a->dtype);
  gboolean f = is_float (x->a->dtype);
  switch (x->uop)
    {
    case FB_KU_NEG: return f ? LLVMBuildFNeg (e->b, a, "") : LLVMBuildNeg (e->b, a, "");
    case FB_KU_ABS:
      if (f)
        return _fb_codegen_intrinsic (e, "llvm.fabs", t, &a, 1);
      else
        {
          LLVMValueRef args[2] = { a, LLVMConstInt (LLVMInt1TypeInContext (e->ctx), 0, 0) };
          return _fb_codegen_intrinsic (e, "llvm.abs", t, args, 2);
        }
    case FB_KU_EXP: return _fb_codegen_exp (e, a);
    case FB_KU_LOG: return e->gpu ? _fb_codegen_gpu_log (e, a) : _fb_codegen_intrinsic (e, "llvm.log", t, &a, 1);
    case FB_KU_SQRT: return _fb_codegen_intrinsic (e, "llvm.sqrt", t, &a, 1);
    case FB_KU_TANH: return _fb_codegen_tanh (e, a);
    case FB_KU_ERF: return _fb_codegen_erf (e, a);
    case FB_KU_SIGMOID: return _fb_codegen_sigmoid (e, a);
    case FB_KU_SIN: return e->gpu ? _fb_codegen_gpu_sincos (e, a, FALSE) : _fb_codegen_intrinsic (e, "llvm.sin", t, &a, 1);
    case FB_KU_COS: return e->gpu ? _fb_codegen_gpu_sincos (e, a, TRUE) : _fb_codegen_intrinsic (e, "llvm.cos", t, &a, 1);
    case FB_KU_FLOOR: return f ? _fb_codegen_intrinsic (e, "llvm.floor", t, &a, 1) : a;
    case FB_KU_CEIL: return f ? _fb_codegen_intrinsic (e, "llvm.ceil", t, &a, 1) : a;
    case FB_KU_ROUND: return f ? _fb_codegen_intrinsic (e, "llvm.roundeven", t, &a, 1) : a;
    case FB_KU_NOT:
      return LLVMBuildXor (e->b, a, LLVMConstAllOnes (t), "");
    case FB_KU_ISNAN:
      return LLVMBuildFCmp (e->b, LLVMRealUNO, a, a, "");
    case FB_KU_TF32:
      return x->a->dtype == FB_DTYPE_FLOAT32 ? tf32_round (e, a) : a;
    default:
      g_assert_not_reached ();
    }
}

static LLVMValueRef
binary (FbEmit *e, const FbKExpr *x)
{
  FbDType t = x->a->dtype;
  LLVMValueRef a = expr (e, x->a);
  LLVMValueRef b = convert (e, expr (e, x->b), x->b->dtype, t);
  LLVMTypeRef lt = reg_type (e->ctx, t);
  gboolean f = is_float (t), u = is_unsigned (t);
  LLVMValueRef args[2] = { a, b };
  switch (x->bop)
    {
    case FB_KB_ADD: return f ? fast (LLVMBuildFAdd (e->b, a, b, "")) : LLVMBuildAdd (e->b, a, b, "");
    case FB_KB_SUB: return f ? fast (LLVMBuildFSub (e->b, a, b, "")) : LLVMBuildSub (e->b, a, b, "");
    case FB_KB_SUB_EXACT: return f ? LLVMBuildFSub (e->b, a, b, "") : LLVMBuildSub (e->b, a, b, "");
    case FB_KB_MUL: return f ? fast (LLVMBuildFMul (e->b, a, b, "")) : LLVMBuildMul (e->b, a, b, "");
    case FB_KB_DIV:
      if (f)
        return LLVMBuildFDiv (e->b, a, b, "");
      /* A zero divisor in data must not trap: it divides by one instead. */
      b = LLVMBuildSelect (e->b, LLVMBuildICmp (e->b, LLVMIntEQ, b, LLVMConstNull (lt), ""),
                           LLVMConstInt (lt, 1, 0), b, "");
      return u ? LLVMBuildUDiv (e->b, a, b, "") : LLVMBuildSDiv (e->b, a, b, "");
    case FB_KB_MOD:
      if (f)
        return LLVMBuildFRem (e->b, a, b, "");
      b = LLVMBuildSelect (e->b, LLVMBuildICmp (e->b, LLVMIntEQ, b, LLVMConstNull (lt), ""),
                           LLVMConstInt (lt, 1, 0), b, "");
      return u ? LLVMBuildURem (e->b, a, b, "") : LLVMBuildSRem (e->b, a, b, "");
    case FB_KB_FMOD: return LLVMBuildFRem (e->b, a, b, "");
    case FB_KB_POW:
      if (e->gpu)
        return _fb_codegen_gpu_pow (e, a, b);
      return _fb_codegen_intrinsic (e, "llvm.pow", lt, args, 2);
    case FB_KB_MIN:
      if (f)
        return _fb_codegen_intrinsic (e, "llvm.minnum", lt, args, 2);
      return _fb_codegen_intrinsic (e, u ? "llvm.umin" : "llvm.smin", lt, args, 2);
    case FB_KB_MAX:
      if (f)
        return _fb_codegen_intrinsic (e, "llvm.maxnum", lt, args, 2);
      return _fb_codegen_intrinsic (e, u ? "llvm.umax" : "llvm.smax", lt, args, 2);
    case FB_KB_EQ: return f ? LLVMBuildFCmp (e->b, LLVMRealOEQ, a, b, "") : LLVMBuildICmp (e->b, LLVMIntEQ, a, b, "");
    case FB_KB_NE: return f ? LLVMBuildFCmp (e->b, LLVMRealUNE, a, b, "") : LLVMBuildICmp (e->b, LLVMIntNE, a, b, "");
    case FB_KB_LT: return f ? LLVMBuildFCmp (e->b, LLVMRealOLT, a, b, "") : LLVMBuildICmp (e->b, u ? LLVMIntULT : LLVMIntSLT, a, b, "");
    case FB_KB_LE: return f ? LLVMBuildFCmp (e->b, LLVMRealOLE, a, b, "") : LLVMBuildICmp (e->b, u ? LLVMIntULE : LLVMIntSLE, a, b, "");
    case FB_KB_GT: return f ? LLVMBuildFCmp (e->b, LLVMRealOGT, a, b, "") : LLVMBuildICmp (e->b, u ? LLVMIntUGT : LLVMIntSGT, a, b, "");
    case FB_KB_GE: return f ? LLVMBuildFCmp (e->b, LLVMRealOGE, a, b, "") : LLVMBuildICmp (e->b, u ? LLVMIntUGE : LLVMIntSGE, a, b, "");
    case FB_KB_AND: return LLVMBuildAnd (e->b, a, b, "");
    case FB_KB_OR: return LLVMBuildOr (e->b, a, b, "");
    case FB_KB_XOR: return LLVMBuildXor (e->b, a, b, "");
    case FB_KB_SHL: case FB_KB_SHR:
      {
        /* LLVM makes a shift by the width or more poison; the kernel IR defines it as 0. */
        unsigned width = LLVMGetIntTypeWidth (lt);
        LLVMValueRef big = LLVMBuildICmp (e->b, LLVMIntUGE, b, LLVMConstInt (lt, width, 0), "");
        LLVMValueRef sh = x->bop == FB_KB_SHL ? LLVMBuildShl (e->b, a, b, "")
                                              : LLVMBuildLShr (e->b, a, b, "");
        return LLVMBuildSelect (e->b, big, LLVMConstNull (lt), sh, "");
      }
    default:
      g_assert_not_reached ();
    }
}

LLVMValueRef
_fb_codegen_expr (FbEmit *e, const FbKExpr *x)
{
  switch (x->kind)
    {
    case FB_KX_CONST:
      if (is_float (x->dtype))
        return LLVMConstReal (reg_type (e->ctx, x->dtype), x->f);
      return LLVMConstInt (reg_type (e->ctx, x->dtype), (unsigned long long) x->i,
                           !is_unsigned (x->dtype));
    case FB_KX_VAR:
      return e->vars[x->var];
    case FB_KX_ACC:
      return LLVMBuildLoad2 (e->b, reg_type (e->ctx, x->dtype), e->accs[x->acc], "");
    case FB_KX_LOAD:
      {
        LLVMValueRef v = LLVMBuildLoad2 (e->b, mem_type (e->ctx, x->dtype),
                                         element_ptr (e, x->arg, x->a), "");
        if (e->invariant && e->invariant[x->arg])
          _fb_codegen_mark_invariant (e, v);
        if (x->dtype == FB_DTYPE_BOOL)
          v = LLVMBuildICmp (e->b, LLVMIntNE, v, LLVMConstNull (LLVMInt8TypeInContext (e->ctx)), "");
        if (x->dtype == FB_DTYPE_FLOAT16)
          v = LLVMBuildFPExt (e->b, v, LLVMFloatTypeInContext (e->ctx), "");
        return v;
      }
    case FB_KX_PTR:
      return element_ptr (e, x->arg, x->a);
    case FB_KX_UNARY:
      return unary (e, x);
    case FB_KX_BINARY:
      return binary (e, x);
    case FB_KX_SELECT:
      return LLVMBuildSelect (e->b, convert (e, expr (e, x->a), x->a->dtype, FB_DTYPE_BOOL),
                              expr (e, x->b), convert (e, expr (e, x->c), x->c->dtype, x->dtype), "");
    case FB_KX_CAST:
      return convert (e, expr (e, x->a), x->a->dtype, x->dtype);
    default:
      g_assert_not_reached ();
    }
}

static void
loop (FbEmit *e, const FbKStmt *s)
{
  LLVMTypeRef i64 = LLVMInt64TypeInContext (e->ctx);
  LLVMValueRef start = s->loop.parallel ? e->begin : LLVMConstInt (i64, 0, 0);
  LLVMValueRef stop = s->loop.parallel ? e->end : expr (e, s->loop.extent);
  LLVMBasicBlockRef pre = LLVMGetInsertBlock (e->b);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext (e->ctx, e->fn, "loop");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext (e->ctx, e->fn, "body");
  LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext (e->ctx, e->fn, "done");
  LLVMBuildBr (e->b, head);
  LLVMPositionBuilderAtEnd (e->b, head);
  LLVMValueRef i = LLVMBuildPhi (e->b, i64, "i");
  LLVMValueRef cond = LLVMBuildICmp (e->b, LLVMIntSLT, i, stop, "");
  LLVMBuildCondBr (e->b, cond, body, exit);
  LLVMPositionBuilderAtEnd (e->b, body);
  e->vars[s->loop.var] = i;
  stmts (e, s->loop.body);
  /* The step and the branch back are the loop's own. */
  _fb_debug_lines_at (e, s);
  LLVMValueRef next = LLVMBuildNSWAdd (e->b, i, LLVMConstInt (i64, 1, 0), "");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock (e->b);
  LLVMBuildBr (e->b, head);
  LLVMValueRef in_vals[2] = { start, next };
  LLVMBasicBlockRef in_blocks[2] = { pre, latch };
  LLVMAddIncoming (i, in_vals, in_blocks, 2);
  LLVMPositionBuilderAtEnd (e->b, exit);
}

static void
call (FbEmit *e, const FbKStmt *s)
{
  guint n = s->call.n_args;
  g_autofree LLVMValueRef *vals = g_new0 (LLVMValueRef, MAX (n, 1));
  g_autofree LLVMTypeRef *types = g_new0 (LLVMTypeRef, MAX (n, 1));
  for (guint i = 0; i < n; i++)
    {
      vals[i] = expr (e, s->call.args[i]);
      types[i] = LLVMTypeOf (vals[i]);
    }
  LLVMTypeRef ft = LLVMFunctionType (LLVMVoidTypeInContext (e->ctx), types, n, FALSE);
  LLVMValueRef f = LLVMGetNamedFunction (e->mod, s->call.callee);
  if (f == NULL)
    f = LLVMAddFunction (e->mod, s->call.callee, ft);
  LLVMBuildCall2 (e->b, ft, f, vals, n, "");
}

/* acc = max(acc, x) (or min) over floats: LLVM 19 vectorizes such a reduction only when the
 * maxnum call says no NaNs and no signed zeros. Without that, a row max (softmax) is a scalar
 * chain of maxnum, several times slower than the rest of the softmax together. The flags only
 * matter where the data holds NaN, where maxnum (dropping NaN) already differs from ONNX's Max
 * (propagating it); they sit on this one call, not on the function. */
static gboolean
is_minmax_reduction (const FbKStmt *s)
{
  const FbKExpr *v = s->assign.value;
  if (v->kind != FB_KX_BINARY || (v->bop != FB_KB_MAX && v->bop != FB_KB_MIN) ||
      !fb_dtype_is_float (v->dtype))
    return FALSE;
  return (v->a->kind == FB_KX_ACC && v->a->acc == s->assign.acc) ||
         (v->b->kind == FB_KX_ACC && v->b->acc == s->assign.acc);
}

void
_fb_codegen_stmts (FbEmit *e, const GPtrArray *body)
{
  for (guint i = 0; i < body->len; i++)
    {
      const FbKStmt *s = g_ptr_array_index (body, i);
      _fb_debug_lines_at (e, s);
      switch (s->kind)
        {
        case FB_KS_LOOP:
          loop (e, s);
          break;
        case FB_KS_STORE:
          {
            FbDType t = g_array_index (e->k->args, FbKArg, s->store.arg).dtype;
            LLVMValueRef v = convert (e, expr (e, s->store.value), s->store.value->dtype, t);
            if (t == FB_DTYPE_BOOL)
              v = LLVMBuildZExt (e->b, v, LLVMInt8TypeInContext (e->ctx), "");
            if (t == FB_DTYPE_FLOAT16)
              v = LLVMBuildFPTrunc (e->b, v, LLVMHalfTypeInContext (e->ctx), "");
            LLVMBuildStore (e->b, v, element_ptr (e, s->store.arg, s->store.index));
            break;
          }
        case FB_KS_ASSIGN:
          {
            FbDType t = g_array_index (e->k->accs, FbDType, s->assign.acc);
            LLVMValueRef r = expr (e, s->assign.value);
            if (is_minmax_reduction (s) && LLVMIsAInstruction (r) && LLVMCanValueUseFastMathFlags (r))
              LLVMSetFastMathFlags (r, LLVMFastMathAllowReassoc | LLVMFastMathAllowContract |
                                       LLVMFastMathNoSignedZeros | LLVMFastMathNoNaNs);
            LLVMValueRef v = convert (e, r, s->assign.value->dtype, t);
            LLVMBuildStore (e->b, v, e->accs[s->assign.acc]);
            break;
          }
        case FB_KS_CALL:
          call (e, s);
          break;
        }
    }
}

void
_fb_codegen_add_attr (LLVMContextRef ctx, LLVMValueRef fn, unsigned index, const char *name)
{
  unsigned kind = LLVMGetEnumAttributeKindForName (name, strlen (name));
  LLVMAddAttributeAtIndex (fn, index, LLVMCreateEnumAttribute (ctx, kind, 0));
}

static void
emit_phase (FbEmit *e, const FbKPhase *phase)
{
  LLVMContextRef ctx = e->ctx;
  LLVMTypeRef ptr = LLVMPointerTypeInContext (ctx, 0), i64 = LLVMInt64TypeInContext (ctx);
  guint na = e->k->args->len;

  /* The body: noalias buffers, then the range. */
  g_autofree LLVMTypeRef *ptypes = g_new0 (LLVMTypeRef, na + 2);
  for (guint i = 0; i < na; i++)
    ptypes[i] = ptr;
  ptypes[na] = i64;
  ptypes[na + 1] = i64;
  g_autofree char *body_name = g_strdup_printf ("%s.body", phase->fn);
  LLVMTypeRef bt = LLVMFunctionType (LLVMVoidTypeInContext (ctx), ptypes, na + 2, FALSE);
  LLVMValueRef body = LLVMAddFunction (e->mod, body_name, bt);
  LLVMSetLinkage (body, LLVMInternalLinkage);
  add_attr (ctx, body, LLVMAttributeFunctionIndex, "alwaysinline");
  add_attr (ctx, body, LLVMAttributeFunctionIndex, "nounwind");
  for (guint i = 0; i < na; i++)
    {
      add_attr (ctx, body, i + 1, "noalias");
      add_attr (ctx, body, i + 1, "nocapture");
      if (g_array_index (e->k->args, FbKArg, i).role == FB_KARG_INPUT)
        add_attr (ctx, body, i + 1, "readonly");
    }
  e->fn = body;
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext (ctx, body, "entry");
  LLVMPositionBuilderAtEnd (e->b, entry);
  _fb_debug_lines_enter (e, body, phase);
  for (guint i = 0; i < na; i++)
    e->args[i] = LLVMGetParam (body, i);
  e->begin = LLVMGetParam (body, na);
  e->end = LLVMGetParam (body, na + 1);
  for (guint i = 0; i < e->k->accs->len; i++)
    e->accs[i] = LLVMBuildAlloca (e->b, reg_type (ctx, g_array_index (e->k->accs, FbDType, i)), "acc");
  stmts (e, phase->body);
  _fb_debug_lines_at (e, phase);
  LLVMBuildRetVoid (e->b);
  _fb_debug_lines_leave (e);

  /* The entry point. */
  LLVMTypeRef et_params[3] = { ptr, i64, i64 };
  LLVMTypeRef et = LLVMFunctionType (LLVMVoidTypeInContext (ctx), et_params, 3, FALSE);
  LLVMValueRef fn = LLVMAddFunction (e->mod, phase->fn, et);
  add_attr (ctx, fn, LLVMAttributeFunctionIndex, "nounwind");
  LLVMPositionBuilderAtEnd (e->b, LLVMAppendBasicBlockInContext (ctx, fn, "entry"));
  _fb_debug_lines_enter (e, fn, phase);
  g_autofree LLVMValueRef *cargs = g_new0 (LLVMValueRef, na + 2);
  for (guint i = 0; i < na; i++)
    {
      LLVMValueRef idx = LLVMConstInt (i64, i, 0);
      LLVMValueRef slot = LLVMBuildInBoundsGEP2 (e->b, ptr, LLVMGetParam (fn, 0), &idx, 1, "");
      cargs[i] = LLVMBuildLoad2 (e->b, ptr, slot, "");
    }
  cargs[na] = LLVMGetParam (fn, 1);
  cargs[na + 1] = LLVMGetParam (fn, 2);
  LLVMBuildCall2 (e->b, bt, body, cargs, na + 2, "");
  LLVMBuildRetVoid (e->b);
  _fb_debug_lines_leave (e);
}

LLVMModuleRef
_fb_codegen_emit_kernel (LLVMContextRef ctx, const FbKernel *kernel, const char *triple,
                         const char *data_layout, GError **error)
{
  return _fb_codegen_emit_kernel_math (ctx, kernel, triple, data_layout, FALSE, NULL, error);
}

LLVMModuleRef
_fb_codegen_emit_kernel_math (LLVMContextRef ctx, const FbKernel *kernel, const char *triple,
                              const char *data_layout, gboolean gpu_math,
                              const FbKernelLines *lines, GError **error)
{
  /* Named after the content, like its functions: cached objects carry no node's name. */
  const char *mod_name = kernel->phases->len ? ((FbKPhase *) g_ptr_array_index (kernel->phases, 0))->fn
                                             : kernel->name;
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext (mod_name, ctx);
  LLVMSetTarget (mod, triple);
  LLVMSetDataLayout (mod, data_layout);
  FbEmit e = { .ctx = ctx, .mod = mod, .k = kernel, .gpu = gpu_math };
  e.b = LLVMCreateBuilderInContext (ctx);
  e.args = g_new0 (LLVMValueRef, kernel->args->len + 1);
  e.accs = g_new0 (LLVMValueRef, kernel->accs->len + 1);
  e.vars = g_new0 (LLVMValueRef, kernel->n_vars + 1);
  if (lines != NULL)
    e.debug = _fb_debug_lines_new (mod, kernel, lines);
  for (guint p = 0; p < kernel->phases->len; p++)
    {
      const FbKPhase *ph = g_ptr_array_index (kernel->phases, p);
      if (ph->conv == NULL)     /* a oneDNN convolution is run by the runtime */
        emit_phase (&e, ph);
    }
  _fb_debug_lines_free (e.debug);
  LLVMDisposeBuilder (e.b);
  g_free (e.args);
  g_free (e.accs);
  g_free (e.vars);
  return mod;
}
