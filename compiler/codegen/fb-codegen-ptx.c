/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Kernel IR to PTX: the statements and expressions are emitted by the CPU's emitter
 * (fb-codegen-emit.c, with the GPU's math), inside a frame that maps the phase onto the grid
 * (fb-codegen-ptx-map.c says how).
 *
 * Each phase is `ptx_kernel void NAME (ptr addrspace(1) args, i64 begin, i64 end)`: it loads
 * the buffer pointers (global address space, 16-byte aligned, noalias where the buffers are
 * distinct) and calls an always-inlined body. The body loops over the grid ("grid-stride"), so
 * it is correct for any grid; FbPtxPhase says the grid that gives each thread one share. */
#include "fb-codegen-ptx-private.h"

#include <llvm-c/DebugInfo.h>
#include <math.h>
#include <string.h>

static gpointer
init_nvptx (gpointer data)
{
  LLVMInitializeNVPTXTargetInfo ();
  LLVMInitializeNVPTXTarget ();
  LLVMInitializeNVPTXTargetMC ();
  LLVMInitializeNVPTXAsmPrinter ();
  return NULL;
}

LLVMTargetMachineRef
_fb_ptx_target_machine (GError **error)
{
  static GOnce once = G_ONCE_INIT;
  g_once (&once, init_nvptx, NULL);
  LLVMTargetRef target;
  char *msg = NULL;
  if (LLVMGetTargetFromTriple (PTX_TRIPLE, &target, &msg))
    {
      g_set_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_TARGET,
                   "no LLVM target for %s: %s", PTX_TRIPLE, msg ? msg : "");
      LLVMDisposeMessage (msg);
      return NULL;
    }
  return LLVMCreateTargetMachine (target, PTX_TRIPLE, "sm_90", "", LLVMCodeGenLevelAggressive,
                                  LLVMRelocDefault, LLVMCodeModelDefault);
}

/* ---- the frame ----------------------------------------------------------------------------- */


/* A field of the emulated thread (fb-ptx.h, FbPtxEmuThread) at byte offset off. */
static LLVMValueRef
emu_field (FbPtxGpu *g, int off, LLVMTypeRef t)
{
  LLVMValueRef idx = LLVMConstInt (LLVMInt64TypeInContext (g->e.ctx), off, 0);
  LLVMValueRef at = LLVMBuildInBoundsGEP2 (g->e.b, LLVMInt8TypeInContext (g->e.ctx), g->emu, &idx, 1, "");
  return LLVMBuildLoad2 (g->e.b, t, at, "");
}

static LLVMValueRef
sreg (FbPtxGpu *g, const char *name)
{
  if (g->emulate)
    {
      int off = strstr (name, "nctaid") ? 8 : strstr (name, "ctaid") ? 4 : strstr (name, "ntid") ? 12 : 0;
      return LLVMBuildZExt (g->e.b, emu_field (g, off, g->i32), g->i64, "");
    }
  unsigned id = LLVMLookupIntrinsicID (name, strlen (name));
  LLVMValueRef f = LLVMGetIntrinsicDeclaration (g->e.mod, id, NULL, 0);
  LLVMValueRef v = LLVMBuildCall2 (g->e.b, LLVMIntrinsicGetType (g->e.ctx, id, NULL, 0), f, NULL, 0, "");
  return LLVMBuildZExt (g->e.b, v, g->i64, "");
}

/* A barrier: on the GPU the intrinsic name (with its lane mask where mask is not NULL), in
 * the emulation the FbPtxEmuThread function at byte offset off. */
static void
sync_call (FbPtxGpu *g, const char *name, LLVMValueRef mask, int off)
{
  if (g->emulate)
    {
      LLVMTypeRef ptr = LLVMPointerTypeInContext (g->e.ctx, 0);
      LLVMTypeRef ft = LLVMFunctionType (LLVMVoidTypeInContext (g->e.ctx), &ptr, 1, FALSE);
      LLVMBuildCall2 (g->e.b, ft, emu_field (g, off, ptr), &g->emu, 1, "");
      return;
    }
  unsigned id = LLVMLookupIntrinsicID (name, strlen (name));
  LLVMValueRef f = LLVMGetIntrinsicDeclaration (g->e.mod, id, NULL, 0);
  LLVMBuildCall2 (g->e.b, LLVMIntrinsicGetType (g->e.ctx, id, NULL, 0), f, &mask, mask ? 1 : 0, "");
}

static void
barrier (FbPtxGpu *g)
{
  sync_call (g, "llvm.nvvm.barrier0", NULL, 16);
}

/* What the other threads of a row stored is visible to the thread after this: a barrier of
 * the block, or of the warp where a warp works on a row (the block's warps then run rows of
 * their own, each warp its own number of them). */
static void
row_barrier (FbPtxGpu *g)
{
  if (g->map->row_threads == g->map->block_threads)
    barrier (g);
  else
    sync_call (g, "llvm.nvvm.bar.warp.sync", LLVMConstInt (g->i32, 0xffffffffu, 0), 40);
}

static LLVMValueRef
c64 (FbPtxGpu *g, int64_t v)
{
  return LLVMConstInt (g->i64, (unsigned long long) v, 1);
}

/* for (i = start; i < stop; i += step): returns i; the builder is in the body. */
typedef struct {
  LLVMBasicBlockRef pre, head, exit;
  LLVMValueRef      i, step;
  LLVMValueRef      latch;      /* the back edge's branch, once ended */
} Loop;

static LLVMValueRef
loop_begin (FbPtxGpu *g, Loop *l, LLVMValueRef start, LLVMValueRef stop, LLVMValueRef step)
{
  l->pre = LLVMGetInsertBlock (g->e.b);
  l->head = LLVMAppendBasicBlockInContext (g->e.ctx, g->e.fn, "grid");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext (g->e.ctx, g->e.fn, "item");
  l->exit = LLVMAppendBasicBlockInContext (g->e.ctx, g->e.fn, "grid_done");
  l->step = step;
  LLVMBuildBr (g->e.b, l->head);
  LLVMPositionBuilderAtEnd (g->e.b, l->head);
  l->i = LLVMBuildPhi (g->e.b, g->i64, "u");
  LLVMValueRef in = LLVMBuildICmp (g->e.b, LLVMIntSLT, l->i, stop, "");
  LLVMBuildCondBr (g->e.b, in, body, l->exit);
  LLVMPositionBuilderAtEnd (g->e.b, body);
  LLVMValueRef v[1] = { start };
  LLVMBasicBlockRef b[1] = { l->pre };
  LLVMAddIncoming (l->i, v, b, 1);
  return l->i;
}

static void
loop_end (FbPtxGpu *g, Loop *l)
{
  LLVMValueRef next = LLVMBuildNSWAdd (g->e.b, l->i, l->step, "");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock (g->e.b);
  l->latch = LLVMBuildBr (g->e.b, l->head);
  LLVMAddIncoming (l->i, &next, &latch, 1);
  LLVMPositionBuilderAtEnd (g->e.b, l->exit);
}

/* llvm.loop.unroll.disable on the loop of latch. */
static void
keep_rolled (FbPtxGpu *g, LLVMValueRef latch)
{
  LLVMContextRef ctx = g->e.ctx;
  LLVMMetadataRef self = LLVMTemporaryMDNode (ctx, NULL, 0);
  LLVMMetadataRef name = LLVMMDStringInContext2 (ctx, "llvm.loop.unroll.disable", 24);
  LLVMMetadataRef ops[2] = { self, LLVMMDNodeInContext2 (ctx, &name, 1) };
  LLVMMetadataRef loop = LLVMMDNodeInContext2 (ctx, ops, 2);
  LLVMMetadataReplaceAllUsesWith (self, loop);
  LLVMSetMetadata (latch, LLVMGetMDKindIDInContext (ctx, "llvm.loop", 9),
                   LLVMMetadataAsValue (ctx, loop));
}

/* Sets the variables of nest[first..n) from the linear index u (row-major, the last fastest);
 * nest[first - 1]'s variable (when first > 0) gets what is left. */
static void
bind_nest (FbPtxGpu *g, const FbKStmt *const *nest, guint n, guint first, LLVMValueRef u,
           gboolean narrow)
{
  LLVMBuilderRef b = g->e.b;
  /* Below 2^31 the divisions are 32-bit ones, several times cheaper on the GPU. */
  LLVMTypeRef t = narrow ? g->i32 : g->i64;
  LLVMValueRef x = narrow ? LLVMBuildTrunc (b, u, g->i32, "") : u;
  for (guint j = n; j-- > first;)
    {
      double ext;
      fb_kx_is_const (nest[j]->loop.extent, &ext);
      LLVMValueRef e = LLVMConstInt (t, (unsigned long long) ext, 0);
      LLVMValueRef v = j == first && first == 0 ? x : LLVMBuildURem (b, x, e, "");
      g->e.vars[nest[j]->loop.var] = narrow ? LLVMBuildZExt (b, v, g->i64, "") : v;
      x = LLVMBuildUDiv (b, x, e, "");
    }
  if (first > 0)
    g->e.vars[nest[first - 1]->loop.var] = narrow ? LLVMBuildZExt (b, x, g->i64, "") : x;
}

static void
emit_one (FbPtxGpu *g, const FbKStmt *s)
{
  GPtrArray one = { .pdata = (gpointer *) &s, .len = 1 };
  _fb_codegen_stmts (&g->e, &one);
}

/* ---- block reductions ---------------------------------------------------------------------- */

static gboolean
is_float_type (LLVMTypeRef t)
{
  LLVMTypeKind k = LLVMGetTypeKind (t);
  return k == LLVMFloatTypeKind || k == LLVMDoubleTypeKind;
}

static LLVMValueRef
combine (FbPtxGpu *g, FbPtxRed op, FbDType dt, LLVMValueRef a, LLVMValueRef b)
{
  LLVMTypeRef t = LLVMTypeOf (a);
  LLVMValueRef args[2] = { a, b }, r;
  gboolean f = is_float_type (t);
  switch (op)
    {
    case FB_PTX_RED_ADD: r = f ? LLVMBuildFAdd (g->e.b, a, b, "") : LLVMBuildAdd (g->e.b, a, b, ""); break;
    case FB_PTX_RED_MUL: r = f ? LLVMBuildFMul (g->e.b, a, b, "") : LLVMBuildMul (g->e.b, a, b, ""); break;
    case FB_PTX_RED_MAX:
      return _fb_codegen_intrinsic (&g->e, f ? "llvm.maxnum" : "llvm.smax", t, args, 2);
    case FB_PTX_RED_MIN:
      return _fb_codegen_intrinsic (&g->e, f ? "llvm.minnum" : "llvm.smin", t, args, 2);
    default:
      g_assert_not_reached ();
    }
  (void) dt;
  if (f)
    LLVMSetFastMathFlags (r, LLVMFastMathAllowReassoc | LLVMFastMathAllowContract |
                             LLVMFastMathNoSignedZeros);
  return r;
}

static LLVMValueRef
identity (FbPtxRed op, LLVMTypeRef t)
{
  gboolean f = is_float_type (t);
  unsigned bits = f ? 0 : LLVMGetIntTypeWidth (t);
  switch (op)
    {
    case FB_PTX_RED_ADD: return f ? LLVMConstReal (t, 0.0) : LLVMConstInt (t, 0, 0);
    case FB_PTX_RED_MUL: return f ? LLVMConstReal (t, 1.0) : LLVMConstInt (t, 1, 0);
    case FB_PTX_RED_MAX:
      return f ? LLVMConstReal (t, -INFINITY) : LLVMConstInt (t, 1ull << (bits - 1), 0);
    default:
      return f ? LLVMConstReal (t, INFINITY) : LLVMConstInt (t, (1ull << (bits - 1)) - 1, 0);
    }
}

static LLVMValueRef
shfl32 (FbPtxGpu *g, LLVMValueRef v, int lane_mask, gboolean fl)
{
  if (g->emulate)
    {
      LLVMTypeRef ptr = LLVMPointerTypeInContext (g->e.ctx, 0), t = LLVMTypeOf (v);
      LLVMTypeRef params[3] = { ptr, t, g->i32 };
      LLVMTypeRef ft = LLVMFunctionType (t, params, 3, FALSE);
      LLVMValueRef args[3] = { g->emu, v, LLVMConstInt (g->i32, lane_mask, 0) };
      return LLVMBuildCall2 (g->e.b, ft, emu_field (g, fl ? 24 : 32, ptr), args, 3, "");
    }
  const char *name = fl ? "llvm.nvvm.shfl.sync.bfly.f32" : "llvm.nvvm.shfl.sync.bfly.i32";
  unsigned id = LLVMLookupIntrinsicID (name, strlen (name));
  LLVMValueRef f = LLVMGetIntrinsicDeclaration (g->e.mod, id, NULL, 0);
  LLVMValueRef args[4] = { LLVMConstInt (g->i32, 0xffffffffu, 0), v,
                           LLVMConstInt (g->i32, lane_mask, 0), LLVMConstInt (g->i32, 31, 0) };
  return LLVMBuildCall2 (g->e.b, LLVMIntrinsicGetType (g->e.ctx, id, NULL, 0), f, args, 4, "");
}

/* The value of lane (lane ^ lane_mask), for 32- and 64-bit values. */
static LLVMValueRef
shfl (FbPtxGpu *g, LLVMValueRef v, int lane_mask)
{
  LLVMTypeRef t = LLVMTypeOf (v);
  LLVMTypeKind k = LLVMGetTypeKind (t);
  if (k == LLVMFloatTypeKind)
    return shfl32 (g, v, lane_mask, TRUE);
  if (k == LLVMIntegerTypeKind && LLVMGetIntTypeWidth (t) == 32)
    return shfl32 (g, v, lane_mask, FALSE);
  LLVMBuilderRef b = g->e.b;
  LLVMValueRef bits = k == LLVMDoubleTypeKind ? LLVMBuildBitCast (b, v, g->i64, "") : v;
  LLVMValueRef lo = shfl32 (g, LLVMBuildTrunc (b, bits, g->i32, ""), lane_mask, FALSE);
  LLVMValueRef hi = shfl32 (g, LLVMBuildTrunc (b, LLVMBuildLShr (b, bits, c64 (g, 32), ""), g->i32, ""),
                            lane_mask, FALSE);
  LLVMValueRef w = LLVMBuildOr (b, LLVMBuildZExt (b, lo, g->i64, ""),
                                LLVMBuildShl (b, LLVMBuildZExt (b, hi, g->i64, ""), c64 (g, 32), ""), "");
  return k == LLVMDoubleTypeKind ? LLVMBuildBitCast (b, w, t, "") : w;
}

static LLVMValueRef
warp_reduce (FbPtxGpu *g, FbPtxRed op, FbDType dt, LLVMValueRef v)
{
  for (int m = 16; m >= 1; m /= 2)
    v = combine (g, op, dt, v, shfl (g, v, m));
  return v;
}

/* The reduction of v over the row's threads, in every one of them: each warp reduces by
 * shuffles; where a block works on the row, lane 0 leaves the warp's value in shared memory,
 * and every warp then reduces those. */
static LLVMValueRef
block_reduce (FbPtxGpu *g, FbPtxRed op, FbDType dt, LLVMValueRef v)
{
  LLVMBuilderRef b = g->e.b;
  LLVMTypeRef t = LLVMTypeOf (v);
  guint warps = g->map->row_threads / 32;
  v = warp_reduce (g, op, dt, v);
  if (warps <= 1)
    return v;
  g_autofree char *name = g_strdup_printf ("%s.red%u", LLVMGetValueName (g->e.fn), g->n_shared++);
  LLVMTypeRef at = LLVMArrayType2 (t, 32);
  LLVMValueRef sh = LLVMAddGlobalInAddressSpace (g->e.mod, at, name, g->emulate ? 0 : 3);
  LLVMSetInitializer (sh, LLVMGetUndef (at));
  LLVMSetLinkage (sh, LLVMInternalLinkage);
  LLVMSetAlignment (sh, 8);
  LLVMValueRef lane = LLVMBuildAnd (b, g->tid, c64 (g, 31), "");
  LLVMValueRef warp = LLVMBuildLShr (b, g->tid, c64 (g, 5), "");
  LLVMBasicBlockRef put = LLVMAppendBasicBlockInContext (g->e.ctx, g->e.fn, "red_put");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext (g->e.ctx, g->e.fn, "red_join");
  LLVMBuildCondBr (b, LLVMBuildICmp (b, LLVMIntEQ, lane, c64 (g, 0), ""), put, join);
  LLVMPositionBuilderAtEnd (b, put);
  LLVMValueRef idx[2] = { c64 (g, 0), warp };
  LLVMBuildStore (b, v, LLVMBuildInBoundsGEP2 (b, at, sh, idx, 2, ""));
  LLVMBuildBr (b, join);
  LLVMPositionBuilderAtEnd (b, join);
  barrier (g);
  /* Every lane reads a slot (within the array), the ones past the warps count as identity. */
  LLVMValueRef idx2[2] = { c64 (g, 0), lane };
  LLVMValueRef w = LLVMBuildLoad2 (b, t, LLVMBuildInBoundsGEP2 (b, at, sh, idx2, 2, ""), "");
  w = LLVMBuildSelect (b, LLVMBuildICmp (b, LLVMIntULT, lane, c64 (g, warps), ""), w,
                       identity (op, t), "");
  w = warp_reduce (g, op, dt, w);
  barrier (g);                  /* the slots are free again for the next reduction */
  return w;
}

/* ---- phases -------------------------------------------------------------------------------- */

/* A split loop: thread t runs its items t, t + T, ... (four consecutive ones at a time where
 * the extent allows, so that contiguous loads are 16 bytes wide). */
/* Runs body for the vec items from u on: the variables of nest[0..n) set from u, the
 * innermost stepping. u is a multiple of vec and a group never crosses the innermost loop's
 * end; the innermost variable is masked to say so to LLVM, whose load-store vectorizer then
 * knows that contiguous accesses are 16-byte aligned and makes them one vector access. */
static void
emit_items (FbPtxGpu *g, const FbKStmt *const *nest, guint n, guint first_bound, LLVMValueRef u,
            gboolean narrow, guint vec, const GPtrArray *body, LLVMValueRef lo, LLVMValueRef hi)
{
  LLVMBuilderRef b = g->e.b;
  bind_nest (g, nest, n, first_bound, u, narrow);
  guint iv = nest[n - 1]->loop.var;
  if (vec == 1)
    {
      _fb_codegen_stmts (&g->e, body);
      return;
    }
  LLVMValueRef base = LLVMBuildAnd (b, g->e.vars[iv], c64 (g, -(int64_t) vec), "");
  LLVMBasicBlockRef whole = NULL, edge = NULL, join = NULL;
  if (lo)
    {
      /* The first and last groups of a range that does not start or end on a multiple of
       * vec: item by item, each checked. */
      whole = LLVMAppendBasicBlockInContext (g->e.ctx, g->e.fn, "vec");
      edge = LLVMAppendBasicBlockInContext (g->e.ctx, g->e.fn, "vec_edge");
      join = LLVMAppendBasicBlockInContext (g->e.ctx, g->e.fn, "vec_done");
      LLVMValueRef full = LLVMBuildAnd (b, LLVMBuildICmp (b, LLVMIntSGE, u, lo, ""),
                                        LLVMBuildICmp (b, LLVMIntSLE, LLVMBuildAdd (b, u, c64 (g, vec), ""), hi, ""), "");
      LLVMBuildCondBr (b, full, whole, edge);
      /* A loop, kept rolled: unrolled, its copies would look like the vector path's and be
       * merged with it, which splits the vector path's accesses. */
      LLVMPositionBuilderAtEnd (b, edge);
      LLVMValueRef args[2] = { u, lo };
      LLVMValueRef from = _fb_codegen_intrinsic (&g->e, "llvm.smax", g->i64, args, 2);
      LLVMValueRef args2[2] = { LLVMBuildAdd (b, u, c64 (g, vec), ""), hi };
      LLVMValueRef to = _fb_codegen_intrinsic (&g->e, "llvm.smin", g->i64, args2, 2);
      Loop el;
      LLVMValueRef x = loop_begin (g, &el, from, to, c64 (g, 1));
      g->e.vars[iv] = LLVMBuildAdd (b, base, LLVMBuildSub (b, x, u, ""), "");
      _fb_codegen_stmts (&g->e, body);
      loop_end (g, &el);
      keep_rolled (g, el.latch);
      LLVMBuildBr (b, join);
      LLVMPositionBuilderAtEnd (b, whole);
    }
  for (guint j = 0; j < vec; j++)
    {
      g->e.vars[iv] = base;
      if (j)
        {
          g->e.vars[iv] = LLVMBuildNSWAdd (b, base, c64 (g, j), "");
          LLVMSetNUW (g->e.vars[iv], TRUE);
        }
      _fb_codegen_stmts (&g->e, body);
    }
  if (lo)
    {
      LLVMBuildBr (b, join);
      LLVMPositionBuilderAtEnd (b, join);
    }
}

/* A split loop: thread t of a row's T runs its items t, t + T, ... (four consecutive ones at a
 * time where the extent allows, so that contiguous loads are 16 bytes wide). */
static void
emit_split (FbPtxGpu *g, const FbPtxSplit *sp)
{
  guint T = g->map->row_threads;
  double inner = 0;
  fb_kx_is_const (sp->nest[sp->n_nest - 1]->loop.extent, &inner);
  /* A group of four must not cross the end of the innermost loop. */
  guint vec = (int64_t) inner % 4 == 0 && sp->extent >= 4 * (int64_t) T ? 4 : 1;
  Loop l;
  LLVMValueRef start = LLVMBuildMul (g->e.b, g->lane, c64 (g, vec), "");
  LLVMValueRef u = loop_begin (g, &l, start, c64 (g, sp->extent), c64 (g, (int64_t) T * vec));
  emit_items (g, sp->nest, sp->n_nest, 0, u, sp->extent < G_MAXINT32, vec, sp->body, NULL, NULL);
  loop_end (g, &l);
}

static void
emit_reduce_row (FbPtxGpu *g, const FbKStmt *s)
{
  const FbKernel *k = g->e.k;
  guint na = k->accs->len;
  g_autofree gboolean *set = g_new0 (gboolean, na + 1);
  g_autofree FbPtxRed *ops = g_new0 (FbPtxRed, na + 1);
  g_autofree LLVMValueRef *pre = g_new0 (LLVMValueRef, na + 1);
  _fb_ptx_accs_assigned (s, set);
  /* Each reduced accumulator: its op, from any one of its assignments. */
  FbPtxSplit sp;
  _fb_ptx_split (k, s, TRUE, &sp);
  GPtrArray *todo = g_ptr_array_new ();
  g_ptr_array_add (todo, (gpointer) s);
  while (todo->len)
    {
      const FbKStmt *x = g_ptr_array_steal_index (todo, todo->len - 1);
      if (x->kind == FB_KS_LOOP)
        for (guint i = 0; i < x->loop.body->len; i++)
          g_ptr_array_add (todo, g_ptr_array_index (x->loop.body, i));
      else if (x->kind == FB_KS_ASSIGN)
        _fb_ptx_reduction_op (k, x, &ops[x->assign.acc]);
    }
  g_ptr_array_unref (todo);
  for (guint a = 0; a < na; a++)
    if (set[a])
      {
        LLVMTypeRef t = _fb_codegen_reg_type (g->e.ctx, g_array_index (k->accs, FbDType, a));
        pre[a] = LLVMBuildLoad2 (g->e.b, t, g->e.accs[a], "");
        LLVMBuildStore (g->e.b, identity (ops[a], t), g->e.accs[a]);
      }
  emit_split (g, &sp);
  for (guint a = 0; a < na; a++)
    if (set[a])
      {
        FbDType dt = g_array_index (k->accs, FbDType, a);
        LLVMTypeRef t = _fb_codegen_reg_type (g->e.ctx, dt);
        LLVMValueRef part = LLVMBuildLoad2 (g->e.b, t, g->e.accs[a], "");
        LLVMValueRef all = block_reduce (g, ops[a], dt, part);
        LLVMBuildStore (g->e.b, combine (g, ops[a], dt, pre[a], all), g->e.accs[a]);
      }
}

static void
emit_cooperative_row (FbPtxGpu *g)
{
  const FbKernel *k = g->e.k;
  const GPtrArray *body = g->map->body;
  guint nargs = k->args->len;
  g_autofree gboolean *pending = g_new0 (gboolean, nargs + 1);   /* stored since a barrier */
  g_autofree gboolean *loads = g_new0 (gboolean, nargs + 1);
  for (guint i = 0; i < body->len; i++)
    {
      const FbKStmt *s = g_ptr_array_index (body, i);
      /* What other threads of the row stored must be visible before it is read. */
      memset (loads, 0, (nargs + 1) * sizeof (gboolean));
      _fb_ptx_args_loaded (s, loads);
      for (guint a = 0; a < nargs; a++)
        if (loads[a] && pending[a])
          {
            row_barrier (g);
            memset (pending, 0, (nargs + 1) * sizeof (gboolean));
            break;
          }
      /* A row's barriers, shuffles and shared memory are its statement's. */
      _fb_debug_lines_at (&g->e, s);
      switch (g->map->rows[i])
        {
        case FB_PTX_ROW_UNIFORM:
          emit_one (g, s);
          break;
        case FB_PTX_ROW_THREAD0:
          {
            LLVMBasicBlockRef one = LLVMAppendBasicBlockInContext (g->e.ctx, g->e.fn, "thread0");
            LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext (g->e.ctx, g->e.fn, "thread0_done");
            LLVMBuildCondBr (g->e.b, LLVMBuildICmp (g->e.b, LLVMIntEQ, g->lane, c64 (g, 0), ""), one, join);
            LLVMPositionBuilderAtEnd (g->e.b, one);
            emit_one (g, s);
            LLVMBuildBr (g->e.b, join);
            LLVMPositionBuilderAtEnd (g->e.b, join);
            break;
          }
        case FB_PTX_ROW_REDUCE:
          emit_reduce_row (g, s);
          break;
        case FB_PTX_ROW_STORES:
          {
            FbPtxSplit sp;
            _fb_ptx_split (k, s, FALSE, &sp);
            emit_split (g, &sp);
            break;
          }
        }
      _fb_ptx_args_stored (s, pending);
    }
  /* The next row this block runs may read what this one's threads wrote nowhere (rows are
   * independent), but it reuses the shared slots: block_reduce ends on a barrier already. */
}

static void
emit_body (FbPtxGpu *g, const FbKPhase *phase)
{
  const FbPtxMap *map = g->map;
  LLVMBuilderRef b = g->e.b;
  gboolean narrow = MAX (phase->extent, 1) * map->inner < G_MAXINT32;
  LLVMValueRef first = LLVMBuildMul (b, g->e.begin, c64 (g, map->inner), "");
  LLVMValueRef last = LLVMBuildMul (b, g->e.end, c64 (g, map->inner), "");
  LLVMValueRef block = sreg (g, "llvm.nvvm.read.ptx.sreg.ctaid.x");
  LLVMValueRef blocks = sreg (g, "llvm.nvvm.read.ptx.sreg.nctaid.x");
  /* The grid loop is the parallel loop of the kernel IR. */
  const FbKStmt *par = g_ptr_array_index (phase->body, 0);
  _fb_debug_lines_at (&g->e, par);
  Loop l;
  if (map->cooperative)
    {
      /* Row u of a block's R rows: its warp's (R > 1), or the whole block's. */
      guint R = map->block_threads / map->row_threads;
      LLVMValueRef row = LLVMBuildAdd (b, LLVMBuildMul (b, block, c64 (g, R), ""),
                                       LLVMBuildUDiv (b, g->tid, c64 (g, map->row_threads), ""), "");
      LLVMValueRef u = loop_begin (g, &l, LLVMBuildAdd (b, first, row, ""), last,
                                   LLVMBuildMul (b, blocks, c64 (g, R), ""));
      bind_nest (g, map->nest, map->n_nest, 1, u, narrow);
      emit_cooperative_row (g);
      _fb_debug_lines_at (&g->e, par);
      loop_end (g, &l);
      return;
    }
  LLVMValueRef ntid = sreg (g, "llvm.nvvm.read.ptx.sreg.ntid.x");
  LLVMValueRef thread = LLVMBuildAdd (b, LLVMBuildMul (b, block, ntid, ""), g->tid, "");
  /* Groups of vec items start on multiples of vec, so that their accesses align. */
  LLVMValueRef group0 = LLVMBuildAnd (b, first, c64 (g, -(int64_t) map->vec), "");
  LLVMValueRef start = LLVMBuildAdd (b, group0, LLVMBuildMul (b, thread, c64 (g, map->vec), ""), "");
  LLVMValueRef step = LLVMBuildMul (b, LLVMBuildMul (b, blocks, ntid, ""), c64 (g, map->vec), "");
  LLVMValueRef u = loop_begin (g, &l, start, last, step);
  emit_items (g, map->nest, map->n_nest, 1, u, narrow, map->vec, map->body,
              map->vec > 1 ? first : NULL, last);
  _fb_debug_lines_at (&g->e, par);
  loop_end (g, &l);
}

static void
annotate (FbPtxGpu *g, LLVMValueRef fn, const char *key, guint value)
{
  LLVMMetadataRef md[3] = {
    LLVMValueAsMetadata (fn),
    LLVMMDStringInContext2 (g->e.ctx, key, strlen (key)),
    LLVMValueAsMetadata (LLVMConstInt (g->i32, value, 0)),
  };
  LLVMAddNamedMetadataOperand (g->e.mod, "nvvm.annotations",
                               LLVMMetadataAsValue (g->e.ctx, LLVMMDNodeInContext2 (g->e.ctx, md, 3)));
}

/* The registers a thread of a generated kernel may hold (the entry's .maxnreg), 0 where ptxas
 * chooses. Left to itself, ptxas hoists every load of an unrolled body above the first use: the
 * CUDA 13 driver gave a 3x3 depthwise convolution of four channels a thread 138 registers and a
 * pool's partial sums of 28 pixels 226, so one block of 256 threads fit an SM (12 % of its warps)
 * and the rest of the grid waited in waves. Measured on an H200 (graph replays, ms, budgets 0 /
 * 64 / 96 / 128): EfficientNet-B0 at batch 32 1.841 / 1.821 / 1.744 / 1.735, MobileNetV3-Large
 * at batch 32 1.316 / 1.302 / 1.295 / 1.295, MobileNetV2 at batch 32, ViT-B/16 and BERT-base
 * within 1 %. At 64 the depthwise kernels spill. Where the assembler keeps to the budget only
 * by spilling (a 7x7 depthwise convolution: 218 registers, or 128 and 556 bytes of spill stores),
 * the cuda runtime assembles the module again without it (fb_ptx_without_register_budget).
 * FUSEBENCH_PTX_MAX_REGISTERS=N sets another budget (0: ptxas's own choice), for measuring. */
#define PTX_MAX_REGISTERS 128

static guint
register_budget (void)
{
  const char *env = g_getenv ("FUSEBENCH_PTX_MAX_REGISTERS");
  return env ? (guint) CLAMP (atoi (env), 0, 255) : PTX_MAX_REGISTERS;
}

/* The entry and body of one phase; the pointer attributes per argument come from the plan. */
void
_fb_ptx_emit_phase (FbPtxGpu *g, const FbKPhase *phase, const gboolean *distinct)
{
  LLVMContextRef ctx = g->e.ctx;
  const FbKernel *k = g->e.k;
  LLVMTypeRef gptr = LLVMPointerTypeInContext (ctx, g->emulate ? 0 : 1);
  LLVMTypeRef ptr = LLVMPointerTypeInContext (ctx, 0);
  guint na = k->args->len, extra = g->emulate ? 3 : 2;
  g_autofree LLVMTypeRef *ptypes = g_new0 (LLVMTypeRef, na + 3);
  for (guint i = 0; i < na; i++)
    ptypes[i] = gptr;
  ptypes[na] = g->i64;
  ptypes[na + 1] = g->i64;
  ptypes[na + 2] = ptr;
  g_autofree char *body_name = g_strdup_printf ("%s.body", phase->fn);
  LLVMTypeRef bt = LLVMFunctionType (LLVMVoidTypeInContext (ctx), ptypes, na + extra, FALSE);
  LLVMValueRef body = LLVMAddFunction (g->e.mod, body_name, bt);
  LLVMSetLinkage (body, LLVMInternalLinkage);
  _fb_codegen_add_attr (ctx, body, LLVMAttributeFunctionIndex, "alwaysinline");
  _fb_codegen_add_attr (ctx, body, LLVMAttributeFunctionIndex, "nounwind");
  unsigned align_kind = LLVMGetEnumAttributeKindForName ("align", 5);
  for (guint i = 0; i < na; i++)
    {
      if (distinct[i])
        _fb_codegen_add_attr (ctx, body, i + 1, "noalias");
      _fb_codegen_add_attr (ctx, body, i + 1, "nocapture");
      LLVMAddAttributeAtIndex (body, i + 1, LLVMCreateEnumAttribute (ctx, align_kind, 16));
      if (g_array_index (k->args, FbKArg, i).role == FB_KARG_INPUT && distinct[i])
        _fb_codegen_add_attr (ctx, body, i + 1, "readonly");
    }
  g->e.fn = body;
  g->n_shared = 0;
  LLVMPositionBuilderAtEnd (g->e.b, LLVMAppendBasicBlockInContext (ctx, body, "entry"));
  _fb_debug_lines_enter (&g->e, body, phase);
  for (guint i = 0; i < na; i++)
    g->e.args[i] = LLVMGetParam (body, i);
  g->e.begin = LLVMGetParam (body, na);
  g->e.end = LLVMGetParam (body, na + 1);
  g->emu = g->emulate ? LLVMGetParam (body, na + 2) : NULL;
  for (guint i = 0; i < k->accs->len; i++)
    g->e.accs[i] = LLVMBuildAlloca (g->e.b, _fb_codegen_reg_type (ctx, g_array_index (k->accs, FbDType, i)), "acc");
  g->tid = sreg (g, "llvm.nvvm.read.ptx.sreg.tid.x");
  g->lane = g->map->cooperative
    ? LLVMBuildURem (g->e.b, g->tid, c64 (g, g->map->row_threads), "") : g->tid;
  emit_body (g, phase);
  _fb_debug_lines_at (&g->e, phase);
  LLVMBuildRetVoid (g->e.b);
  _fb_debug_lines_leave (&g->e);

  LLVMTypeRef et_params[4] = { gptr, g->i64, g->i64, ptr };
  LLVMTypeRef et = LLVMFunctionType (LLVMVoidTypeInContext (ctx), et_params, extra + 1, FALSE);
  LLVMValueRef fn = LLVMAddFunction (g->e.mod, phase->fn, et);
  if (!g->emulate)
    LLVMSetFunctionCallConv (fn, 71 /* ptx_kernel */);
  _fb_codegen_add_attr (ctx, fn, LLVMAttributeFunctionIndex, "nounwind");
  _fb_codegen_add_attr (ctx, fn, 1, "noalias");
  _fb_codegen_add_attr (ctx, fn, 1, "readonly");
  annotate (g, fn, "kernel", 1);
  annotate (g, fn, "maxntidx", g->map->block_threads);
  guint registers = register_budget ();
  if (registers > 0 && !g->emulate)
    annotate (g, fn, "maxnreg", registers);
  LLVMPositionBuilderAtEnd (g->e.b, LLVMAppendBasicBlockInContext (ctx, fn, "entry"));
  _fb_debug_lines_enter (&g->e, fn, phase);
  g_autofree LLVMValueRef *cargs = g_new0 (LLVMValueRef, na + 3);
  for (guint i = 0; i < na; i++)
    {
      LLVMValueRef idx = c64 (g, i);
      LLVMValueRef slot = LLVMBuildInBoundsGEP2 (g->e.b, gptr, LLVMGetParam (fn, 0), &idx, 1, "");
      cargs[i] = LLVMBuildLoad2 (g->e.b, gptr, slot, "");
      _fb_codegen_mark_invariant (&g->e, cargs[i]);
      /* The body's align attribute does not survive inlining; this does. */
      LLVMMetadataRef a16 = LLVMValueAsMetadata (c64 (g, 16));
      LLVMSetMetadata (cargs[i], LLVMGetMDKindIDInContext (ctx, "align", 5),
                       LLVMMetadataAsValue (ctx, LLVMMDNodeInContext2 (ctx, &a16, 1)));
    }
  cargs[na] = LLVMGetParam (fn, 1);
  cargs[na + 1] = LLVMGetParam (fn, 2);
  if (g->emulate)
    cargs[na + 2] = LLVMGetParam (fn, 3);
  LLVMBuildCall2 (g->e.b, bt, body, cargs, na + extra, "");
  LLVMBuildRetVoid (g->e.b);
  _fb_debug_lines_leave (&g->e);
}

