/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The PTX module of a kernel: which phases are generated and which are the libraries' (with
 * the generated statements around a library call as entries of their own), the O3 pipeline
 * for NVPTX, and the PTX text. */
#include "fb-codegen-ptx-private.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <string.h>

/* ---- modules ------------------------------------------------------------------------------- */

void
fb_ptx_module_free (FbPtxModule *module)
{
  if (module == NULL)
    return;
  g_free (module->ptx);
  g_free (module->llvm_ir);
  g_free (module->llvm_ir_opt);
  if (module->phases)
    {
      for (guint i = 0; i < module->phases->len; i++)
        {
          FbPtxPhase *ph = &g_array_index (module->phases, FbPtxPhase, i);
          g_free (ph->entry);
          g_free (ph->before.entry);
          g_free (ph->after.entry);
        }
      g_array_unref (module->phases);
    }
  g_free (module);
}

static char *
take_message (char *msg)
{
  char *s = g_strdup (msg ? msg : "");
  if (msg)
    LLVMDisposeMessage (msg);
  return s;
}

/* Arguments whose bytes no other argument of the kernel shares (through views). */
static gboolean *
distinct_args (const FbKernel *k, const FbPlan *plan)
{
  guint na = k->args->len;
  gboolean *d = g_new0 (gboolean, na + 1);
  for (guint i = 0; i < na; i++)
    {
      d[i] = TRUE;
      if (plan == NULL)
        continue;
      guint bi = g_array_index (k->args, FbKArg, i).buffer;
      for (guint j = 0; j < na; j++)
        if (j != i && bi < plan->buffers->len &&
            g_array_index (k->args, FbKArg, j).buffer < plan->buffers->len &&
            fb_plan_root (plan, bi) == fb_plan_root (plan, g_array_index (k->args, FbKArg, j).buffer))
          d[i] = FALSE;
    }
  return d;
}

static gboolean
phase_has (const FbKPhase *ph, gboolean (*pred) (const FbKStmt *))
{
  for (guint i = 0; i < ph->body->len; i++)
    if (pred (g_ptr_array_index (ph->body, i)))
      return TRUE;
  return FALSE;
}

static const char *
first_callee (const GPtrArray *body)
{
  for (guint i = 0; i < body->len; i++)
    {
      const FbKStmt *s = g_ptr_array_index (body, i);
      if (s->kind == FB_KS_CALL)
        return s->call.callee;
      if (s->kind == FB_KS_LOOP)
        {
          const char *c = first_callee (s->loop.body);
          if (c)
            return c;
        }
    }
  return NULL;
}

/* Emits phase as one entry and says how to launch it. */
static gboolean
generate (FbPtxGpu *g, const FbKernel *k, guint p, const FbKPhase *ph, const gboolean *distinct,
          FbPtxLaunch *l, GError **error)
{
  FbPtxMap map;
  g_autofree char *why = NULL;
  if (!_fb_ptx_map_phase (k, ph, &map, &why))
    {
      g_set_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_UNSUPPORTED,
                   "kernel %s: phase %u: %s", k->name, p, why);
      return FALSE;
    }
  g->map = &map;
  _fb_ptx_emit_phase (g, ph, distinct);
  l->entry = g_strdup (ph->fn);
  l->block_threads = map.block_threads;
  l->cooperative = map.cooperative;
  l->row_threads = map.cooperative ? map.row_threads : 0;
  /* Items a block runs at once: rows (a block's, or a warp's each) or a thread's vec each. */
  int64_t per_block = map.cooperative ? map.block_threads / map.row_threads
                                      : (int64_t) map.block_threads * map.vec;
  l->iters_per_block = (guint) MAX (per_block / map.inner, 1);
  l->blocks_per_iter = (guint) MIN ((map.inner + per_block - 1) / per_block, G_MAXUINT);
  _fb_ptx_map_clear (&map);
  g->map = NULL;
  return TRUE;
}

/* The statements [from, to) of the parallel loop par as a phase of their own, named fn. */
static gboolean
generate_part (FbPtxGpu *g, const FbKernel *k, guint p, const FbKPhase *ph, const FbKStmt *par,
               guint from, guint to, const char *suffix, const gboolean *distinct,
               FbPtxLaunch *l, GError **error)
{
  if (from == to)
    return TRUE;
  g_autoptr(GPtrArray) part = g_ptr_array_new ();
  for (guint i = from; i < to; i++)
    g_ptr_array_add (part, g_ptr_array_index (par->loop.body, i));
  FbKStmt loop = *par;
  loop.loop.body = part;
  g_autoptr(GPtrArray) body = g_ptr_array_new ();
  g_ptr_array_add (body, &loop);
  g_autofree char *fn = g_strconcat (ph->fn, suffix, NULL);
  FbKPhase sub = *ph;
  sub.fn = fn;
  sub.body = body;
  /* Their debug locations are those of the statements and the phase they are made of. */
  _fb_debug_lines_alias (g->e.debug, &loop, par);
  _fb_debug_lines_alias (g->e.debug, &sub, ph);
  gboolean ok = generate (g, k, p, &sub, distinct, l, error);
  _fb_debug_lines_alias (g->e.debug, &loop, NULL);
  _fb_debug_lines_alias (g->e.debug, &sub, NULL);
  return ok;
}

/* A phase with library calls: the generated statements before and after them, where the calls
 * sit at the top of the parallel loop's body (so that all iterations' statements before can
 * run ahead of all calls, and those after behind them). */
static gboolean
refuse (const FbKernel *k, guint p, const char *callee, GError **error)
{
  g_set_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_UNSUPPORTED,
               "kernel %s: phase %u interleaves generated loops with calls of %s; the CUDA "
               "target has no GPU form for this lowering yet", k->name, p, callee);
  return FALSE;
}

static gboolean
library_parts (FbPtxGpu *g, const FbKernel *k, guint p, const FbKPhase *ph, const gboolean *distinct,
               FbPtxPhase *info, guint *n_generated, GError **error)
{
  const FbKStmt *par = ph->body->len == 1 ? g_ptr_array_index (ph->body, 0) : NULL;
  const char *callee = first_callee (ph->body);
  if (!phase_has (ph, _fb_ptx_has_store))
    return TRUE;                  /* calls only (batched over loops): all the library's */
  if (par == NULL || par->kind != FB_KS_LOOP || !par->loop.parallel)
    return refuse (k, p, callee, error);
  const GPtrArray *body = par->loop.body;
  guint c0 = body->len, c1 = body->len;
  for (guint i = 0; i < body->len; i++)
    {
      const FbKStmt *s = g_ptr_array_index (body, i);
      if (s->kind == FB_KS_CALL)
        {
          if (c0 == body->len)
            c0 = i;
          else if (c1 != i)
            return refuse (k, p, callee, error);   /* generated statements between calls */
          c1 = i + 1;
        }
      else if (_fb_ptx_has_call (s))
        return refuse (k, p, callee, error);     /* a call inside a loop (tiles) */
    }
  /* Accumulators do not survive from one launch to the next. */
  guint na = k->accs->len;
  g_autofree gboolean *set = g_new0 (gboolean, na + 1);
  g_autofree gboolean *read = g_new0 (gboolean, na + 1);
  for (guint i = 0; i < c0; i++)
    _fb_ptx_accs_assigned (g_ptr_array_index (body, i), set);
  for (guint i = c1; i < body->len; i++)
    _fb_ptx_accs_read (g_ptr_array_index (body, i), read);
  for (guint a = 0; a < na; a++)
    if (set[a] && read[a])
      return refuse (k, p, callee, error);
  if (!generate_part (g, k, p, ph, par, 0, c0, "_before", distinct, &info->before, error) ||
      !generate_part (g, k, p, ph, par, c1, body->len, "_after", distinct, &info->after, error))
    return FALSE;
  *n_generated += (info->before.entry != NULL) + (info->after.entry != NULL);
  return TRUE;

}

/* Fills module->phases and the LLVM module; FALSE with error naming the kernel. With lines,
 * every instruction's debug location is its kernel IR line. */
static gboolean
build (LLVMModuleRef mod, const FbKernel *k, const FbPlan *plan, gboolean emulate,
       const FbKernelLines *lines, FbPtxModule *out, guint *n_generated, GError **error)
{
  LLVMContextRef ctx = LLVMGetModuleContext (mod);
  FbPtxGpu g = { .e = { .ctx = ctx, .mod = mod, .k = k, .gpu = TRUE }, .emulate = emulate };
  if (lines != NULL)
    g.e.debug = _fb_debug_lines_new (mod, k, lines);
  g.i64 = LLVMInt64TypeInContext (ctx);
  g.i32 = LLVMInt32TypeInContext (ctx);
  g_autofree gboolean *distinct = distinct_args (k, plan);
  g_autofree gboolean *invariant = g_new0 (gboolean, k->args->len + 1);
  for (guint i = 0; i < k->args->len; i++)
    invariant[i] = distinct[i] && g_array_index (k->args, FbKArg, i).role == FB_KARG_INPUT;
  g.e.invariant = invariant;
  g.e.b = LLVMCreateBuilderInContext (ctx);
  g.e.args = g_new0 (LLVMValueRef, k->args->len + 1);
  g.e.accs = g_new0 (LLVMValueRef, k->accs->len + 1);
  g.e.vars = g_new0 (LLVMValueRef, k->n_vars + 1);
  gboolean ok = TRUE;
  *n_generated = 0;
  for (guint p = 0; p < k->phases->len && ok; p++)
    {
      const FbKPhase *ph = g_ptr_array_index (k->phases, p);
      FbPtxPhase info = { 0 };
      if (ph->conv)
        info.library = TRUE;
      else if (phase_has (ph, _fb_ptx_has_call))
        {
          info.library = TRUE;
          ok = library_parts (&g, k, p, ph, distinct, &info, n_generated, error);
        }
      else
        {
          FbPtxLaunch l = { 0 };
          ok = generate (&g, k, p, ph, distinct, &l, error);
          info.entry = l.entry;
          info.block_threads = l.block_threads;
          info.iters_per_block = l.iters_per_block;
          info.blocks_per_iter = l.blocks_per_iter;
          info.cooperative = l.cooperative;
          info.row_threads = l.row_threads;
          *n_generated += ok;
        }
      g_array_append_val (out->phases, info);
    }
  _fb_debug_lines_free (g.e.debug);
  LLVMDisposeBuilder (g.e.b);
  g_free (g.e.args);
  g_free (g.e.accs);
  g_free (g.e.vars);
  return ok;
}

static gboolean
optimize (LLVMModuleRef mod, LLVMTargetMachineRef tm, const FbKernel *k, GError **error)
{
  char *msg = NULL;
  if (LLVMVerifyModule (mod, LLVMReturnStatusAction, &msg))
    {
      g_autofree char *m = take_message (msg);
      g_set_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_LLVM,
                   "kernel %s: generated NVPTX LLVM IR does not verify: %s", k->name, m);
      return FALSE;
    }
  LLVMDisposeMessage (msg);
  LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions ();
  LLVMErrorRef err = LLVMRunPasses (mod, "default<O3>", tm, opts);
  LLVMDisposePassBuilderOptions (opts);
  if (err)
    {
      g_autofree char *m = take_message (LLVMGetErrorMessage (err));
      g_set_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_LLVM,
                   "kernel %s: LLVM passes failed: %s", k->name, m);
      return FALSE;
    }
  return TRUE;
}

/* The optimized LLVM module of kernel in ctx, for tm's target (the GPU, or the host when
 * emulate), out's phases and IR texts filled in; NULL with *error set when it cannot be made,
 * and NULL without when no phase has generated code. lines (may be NULL) as in build. */
static LLVMModuleRef
kernel_module (LLVMContextRef ctx, LLVMTargetMachineRef tm, const FbKernel *kernel,
               const FbPlan *plan, gboolean emulate, const FbKernelLines *lines,
               FbPtxModule *out, GError **error)
{
  const char *mod_name = ((FbKPhase *) g_ptr_array_index (kernel->phases, 0))->fn;
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext (mod_name, ctx);
  char *triple = LLVMGetTargetMachineTriple (tm);
  LLVMSetTarget (mod, triple);
  LLVMDisposeMessage (triple);
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout (tm);
  char *layout = LLVMCopyStringRepOfTargetData (td);
  LLVMSetDataLayout (mod, layout);
  LLVMDisposeMessage (layout);
  LLVMDisposeTargetData (td);
  guint n_generated = 0;
  gboolean ok = build (mod, kernel, plan, emulate, lines, out, &n_generated, error);
  if (ok && n_generated > 0)
    {
      out->llvm_ir = take_message (LLVMPrintModuleToString (mod));
      ok = optimize (mod, tm, kernel, error);
      if (ok)
        {
          out->llvm_ir_opt = take_message (LLVMPrintModuleToString (mod));
          return mod;
        }
    }
  LLVMDisposeModule (mod);
  return NULL;
}

LLVMModuleRef
_fb_ptx_kernel_module (LLVMContextRef ctx, LLVMTargetMachineRef tm, const FbKernel *kernel,
                       const FbPlan *plan, FbPtxModule *out, GError **error)
{
  g_assert (ctx != NULL && tm != NULL && kernel != NULL && out != NULL);
  if (out->phases == NULL)
    out->phases = g_array_new (FALSE, TRUE, sizeof (FbPtxPhase));
  if (kernel->phases->len == 0)
    return NULL;
  return kernel_module (ctx, tm, kernel, plan, FALSE, NULL, out, error);
}

/* The module of kernel for the GPU, or (emulate) for the host with *object set; lines (may be
 * NULL) as in build. */
static FbPtxModule *
make (const FbKernel *kernel, const FbPlan *plan, gboolean emulate, const FbKernelLines *lines,
      GBytes **object, GError **error)
{
  g_autoptr(FbPtxModule) out = g_new0 (FbPtxModule, 1);
  out->phases = g_array_new (FALSE, TRUE, sizeof (FbPtxPhase));
  if (kernel->phases->len == 0)
    return g_steal_pointer (&out);
  LLVMTargetMachineRef tm = emulate ? _fb_codegen_target_machine (error) : _fb_ptx_target_machine (error);
  if (tm == NULL)
    return NULL;
  LLVMContextRef ctx = LLVMContextCreate ();
  GError *failed = NULL;
  LLVMModuleRef mod = kernel_module (ctx, tm, kernel, plan, emulate, lines, out, &failed);
  gboolean ok = failed == NULL;
  if (mod != NULL)
    {
      LLVMMemoryBufferRef buf = NULL;
      char *msg = NULL;
      if (LLVMTargetMachineEmitToMemoryBuffer (tm, mod, emulate ? LLVMObjectFile : LLVMAssemblyFile,
                                               &msg, &buf))
        {
          g_autofree char *m = take_message (msg);
          g_set_error (&failed, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_LLVM,
                       "kernel %s: LLVM could not emit %s: %s", kernel->name,
                       emulate ? "the emulation" : "PTX", m);
          ok = FALSE;
        }
      else if (emulate)
        {
          *object = g_bytes_new (LLVMGetBufferStart (buf), LLVMGetBufferSize (buf));
          LLVMDisposeMemoryBuffer (buf);
        }
      else
        {
          out->ptx = g_strndup (LLVMGetBufferStart (buf), LLVMGetBufferSize (buf));
          LLVMDisposeMemoryBuffer (buf);
        }
      LLVMDisposeModule (mod);
    }
  LLVMContextDispose (ctx);
  LLVMDisposeTargetMachine (tm);
  if (!ok)
    {
      g_propagate_error (error, failed);
      return NULL;
    }
  return g_steal_pointer (&out);
}

FbPtxModule *
fb_codegen_ptx (const FbKernel *kernel, const FbPlan *plan, GError **error)
{
  g_return_val_if_fail (kernel != NULL, NULL);
  return make (kernel, plan, FALSE, NULL, NULL, error);
}

FbPtxModule *
_fb_codegen_ptx_lines (const FbKernel *kernel, const FbPlan *plan, const FbKernelLines *lines,
                       GError **error)
{
  g_assert (kernel != NULL && lines != NULL);
  return make (kernel, plan, FALSE, lines, NULL, error);
}

FbPtxModule *
fb_codegen_ptx_emulation (const FbKernel *kernel, const FbPlan *plan, GBytes **object,
                          GError **error)
{
  g_return_val_if_fail (kernel != NULL && object != NULL, NULL);
  *object = NULL;
  return make (kernel, plan, TRUE, NULL, object, error);
}
