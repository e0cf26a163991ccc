/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The host target machine, the O3 pipeline, object and assembly emission, the lowering stages
 * of a kernel, and compiling a whole plan on several threads through the cache. */
#include "fb-codegen-private.h"
#include "fb-ptx.h"

#include "fb-config.h"

#include <glib/gstdio.h>
#include <llvm-c/Analysis.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <string.h>

G_DEFINE_QUARK (fb-codegen-error-quark, fb_codegen_error)

static char *host_triple, *host_cpu, *host_features, *host_target, *cache_salt;

static gpointer
init_llvm (gpointer data)
{
  LLVMInitializeNativeTarget ();
  LLVMInitializeNativeAsmPrinter ();
  host_triple = LLVMGetDefaultTargetTriple ();
  host_cpu = LLVMGetHostCPUName ();
  host_features = LLVMGetHostCPUFeatures ();
  host_target = g_strdup_printf ("%s %s %s", host_triple, host_cpu, host_features);
  /* Cached objects are only as good as the code generator that made them: the key also names
   * this build (the executable's size and time, as ccache checks a compiler). */
  GStatBuf st;
  unsigned major = 0, minor = 0, patch = 0;
  LLVMGetVersion (&major, &minor, &patch);
  if (g_stat ("/proc/self/exe", &st) == 0)
    cache_salt = g_strdup_printf ("fusebench %s llvm %u.%u.%u exe %" G_GINT64_FORMAT "/%" G_GINT64_FORMAT,
                                  FB_VERSION, major, minor, patch, (gint64) st.st_size,
                                  (gint64) st.st_mtime);
  else
    cache_salt = g_strdup_printf ("fusebench %s llvm %u.%u.%u", FB_VERSION, major, minor, patch);
  return NULL;
}

static void
ensure_llvm (void)
{
  static GOnce once = G_ONCE_INIT;
  g_once (&once, init_llvm, NULL);
}

const char *
fb_codegen_host_target (void)
{
  ensure_llvm ();
  return host_target;
}

LLVMTargetMachineRef
_fb_codegen_target_machine (GError **error)
{
  ensure_llvm ();
  LLVMTargetRef target;
  char *msg = NULL;
  if (LLVMGetTargetFromTriple (host_triple, &target, &msg))
    {
      g_set_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_TARGET,
                   "no LLVM target for %s: %s", host_triple, msg);
      LLVMDisposeMessage (msg);
      return NULL;
    }
  /* Position independent, so that the same objects load into the JIT and link into a shared
   * library. */
  return LLVMCreateTargetMachine (target, host_triple, host_cpu, host_features,
                                  LLVMCodeGenLevelAggressive, LLVMRelocPIC,
                                  LLVMCodeModelDefault);
}

static char *
take_message (char *msg)
{
  char *s = g_strdup (msg ? msg : "");
  if (msg)
    LLVMDisposeMessage (msg);
  return s;
}

static gboolean
optimize (LLVMModuleRef mod, LLVMTargetMachineRef tm, GError **error)
{
  char *msg = NULL;
  if (LLVMVerifyModule (mod, LLVMReturnStatusAction, &msg))
    {
      g_autofree char *m = take_message (msg);
      g_set_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_LLVM,
                   "generated LLVM IR does not verify: %s", m);
      return FALSE;
    }
  LLVMDisposeMessage (msg);
  LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions ();
  LLVMPassBuilderOptionsSetLoopVectorization (opts, TRUE);
  LLVMPassBuilderOptionsSetSLPVectorization (opts, TRUE);
  /* The unroller doubles compile time (MobileNetV2: 1.4 s to 0.63 s of CPU) for no measured
   * gain: the vectorizer already interleaves the loops that matter, and GEMMs are the
   * library's. */
  LLVMPassBuilderOptionsSetLoopUnrolling (opts, FALSE);
  LLVMPassBuilderOptionsSetLoopInterleaving (opts, TRUE);
  LLVMErrorRef err = LLVMRunPasses (mod, "default<O3>", tm, opts);
  LLVMDisposePassBuilderOptions (opts);
  if (err)
    {
      g_autofree char *m = take_message (LLVMGetErrorMessage (err));
      g_set_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_LLVM, "LLVM passes failed: %s", m);
      return FALSE;
    }
  return TRUE;
}

static GBytes *
emit (LLVMModuleRef mod, LLVMTargetMachineRef tm, LLVMCodeGenFileType kind, GError **error)
{
  LLVMMemoryBufferRef buf = NULL;
  char *msg = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer (tm, mod, kind, &msg, &buf))
    {
      g_autofree char *m = take_message (msg);
      g_set_error (error, FB_CODEGEN_ERROR, FB_CODEGEN_ERROR_LLVM, "LLVM could not emit: %s", m);
      return NULL;
    }
  GBytes *bytes = g_bytes_new (LLVMGetBufferStart (buf), LLVMGetBufferSize (buf));
  LLVMDisposeMemoryBuffer (buf);
  return bytes;
}

static LLVMModuleRef
build (LLVMContextRef ctx, LLVMTargetMachineRef tm, const FbKernel *kernel, GError **error)
{
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout (tm);
  char *layout = LLVMCopyStringRepOfTargetData (td);
  LLVMModuleRef mod = _fb_codegen_emit_kernel (ctx, kernel, host_triple, layout, error);
  LLVMDisposeMessage (layout);
  LLVMDisposeTargetData (td);
  return mod;
}

static GBytes *
compile_with (LLVMTargetMachineRef tm, const FbKernel *kernel, GError **error)
{
  LLVMContextRef ctx = LLVMContextCreate ();
  GBytes *obj = NULL;
  LLVMModuleRef mod = build (ctx, tm, kernel, error);
  if (mod && optimize (mod, tm, error))
    obj = emit (mod, tm, LLVMObjectFile, error);
  if (mod)
    LLVMDisposeModule (mod);
  LLVMContextDispose (ctx);
  return obj;
}

GBytes *
fb_codegen_kernel_object (const FbKernel *kernel, GError **error)
{
  g_return_val_if_fail (kernel != NULL, NULL);
  LLVMTargetMachineRef tm = _fb_codegen_target_machine (error);
  if (tm == NULL)
    return NULL;
  GBytes *obj = compile_with (tm, kernel, error);
  LLVMDisposeTargetMachine (tm);
  return obj;
}

GBytes *
fb_codegen_kernel_object_gpu_math (const FbKernel *kernel, GError **error)
{
  g_return_val_if_fail (kernel != NULL, NULL);
  LLVMTargetMachineRef tm = _fb_codegen_target_machine (error);
  if (tm == NULL)
    return NULL;
  LLVMContextRef ctx = LLVMContextCreate ();
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout (tm);
  char *layout = LLVMCopyStringRepOfTargetData (td);
  LLVMModuleRef mod = _fb_codegen_emit_kernel_math (ctx, kernel, host_triple, layout, TRUE, NULL,
                                                    error);
  LLVMDisposeMessage (layout);
  LLVMDisposeTargetData (td);
  GBytes *obj = NULL;
  if (mod && optimize (mod, tm, error))
    obj = emit (mod, tm, LLVMObjectFile, error);
  if (mod)
    LLVMDisposeModule (mod);
  LLVMContextDispose (ctx);
  LLVMDisposeTargetMachine (tm);
  return obj;
}

void
fb_kernel_stages_free (FbKernelStages *stages)
{
  if (stages == NULL)
    return;
  g_free (stages->kernel_ir);
  g_free (stages->llvm_ir);
  g_free (stages->llvm_ir_opt);
  g_free (stages->assembly);
  g_free (stages->sass);
  g_clear_pointer (&stages->kir_phase, g_array_unref);
  g_clear_pointer (&stages->llvm_ir_lines, g_array_unref);
  g_clear_pointer (&stages->llvm_ir_opt_lines, g_array_unref);
  g_clear_pointer (&stages->assembly_lines, g_array_unref);
  g_free (stages);
}

/* Phases that the target's convolution library runs have no code here: the listings say so
 * instead of leaving a reader to look for them. */
static void
note_library_phases (const FbKernel *kernel, const FbTargetDesc *target, FbKernelStages *st)
{
  g_autoptr(GString) ir = g_string_new (NULL), as = g_string_new (NULL);
  const char *library = target && target->conv_library ? target->conv_library : "library";
  for (guint p = 0; p < kernel->phases->len; p++)
    {
      const FbKConv *cv = ((FbKPhase *) g_ptr_array_index (kernel->phases, p))->conv;
      if (cv == NULL)
        continue;
      /* Which kernel runs it on this machine: the library's JIT code is not ours to show, and
       * the direct and Winograd convolutions are compiled C, not generated code either. */
      char impl[256];
      g_autofree char *by = target == NULL || target->conv_implementation == NULL
                              ? g_strdup_printf ("run by %s", library)
                            : target->conv_implementation (&cv->desc, impl, sizeof impl) != 0
                              ? g_strdup_printf ("not runnable here (%s)", impl)
                            : g_str_has_prefix (impl, "direct:") ||
                                g_str_has_prefix (impl, "winograd:")
                              ? g_strdup_printf ("run by fusebench's %s", impl)
                              : g_strdup_printf ("run by %s's %s", library, impl);
      const char *what = cv->desc.transposed ? "deconvolution" : "convolution";
      g_string_append_printf (ir, "; phase %u is a %s %s (see the kernel IR), %s: "
                              "no generated code\n", p, library, what, by);
      g_string_append_printf (as, "# phase %u is a %s %s (see the kernel IR), %s: "
                              "no generated code\n", p, library, what, by);
    }
  if (ir->len == 0)
    return;
  char **texts[3] = { &st->llvm_ir, &st->llvm_ir_opt, &st->assembly };
  for (int i = 0; i < 3; i++)
    {
      char *old = *texts[i];
      *texts[i] = g_strconcat (i == 2 ? as->str : ir->str, old, NULL);
      g_free (old);
    }
}

FbKernelStages *
fb_codegen_kernel_stages (const FbKernel *kernel, const FbPlan *plan, GError **error)
{
  g_return_val_if_fail (kernel != NULL, NULL);
  g_autoptr(FbKernelStages) st = g_new0 (FbKernelStages, 1);
  g_autoptr(FbKernelLines) lines = NULL;
  st->kernel_ir = fb_kernel_to_string_lines (kernel, plan, &lines);
  if (kernel->phases->len == 0)
    {
      const char *why = kernel->kind == FB_KERNEL_VIEW
        ? "; no code: a view of its input's bytes\n"
        : "; no code: run on the host by the reference interpreter\n";
      st->llvm_ir = g_strdup (why);
      st->llvm_ir_opt = g_strdup (why);
      st->assembly = g_strdup (why);
      _fb_kernel_stages_map (st, lines);
      return g_steal_pointer (&st);
    }
  LLVMTargetMachineRef tm = _fb_codegen_target_machine (error);
  if (tm == NULL)
    return NULL;
  LLVMContextRef ctx = LLVMContextCreate ();
  /* As build does, with the kernel IR's lines as debug locations. */
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout (tm);
  char *layout = LLVMCopyStringRepOfTargetData (td);
  LLVMModuleRef mod = _fb_codegen_emit_kernel_math (ctx, kernel, host_triple, layout, FALSE, lines,
                                                    error);
  LLVMDisposeMessage (layout);
  LLVMDisposeTargetData (td);
  gboolean ok = mod != NULL;
  if (ok)
    {
      st->llvm_ir = take_message (LLVMPrintModuleToString (mod));
      ok = optimize (mod, tm, error);
    }
  if (ok)
    {
      st->llvm_ir_opt = take_message (LLVMPrintModuleToString (mod));
      LLVMSetTargetMachineAsmVerbosity (tm, TRUE);
      g_autoptr(GBytes) text = emit (mod, tm, LLVMAssemblyFile, error);
      ok = text != NULL;
      if (ok)
        st->assembly = g_strndup (g_bytes_get_data (text, NULL), g_bytes_get_size (text));
    }
  if (mod)
    LLVMDisposeModule (mod);
  LLVMContextDispose (ctx);
  LLVMDisposeTargetMachine (tm);
  if (!ok)
    return NULL;
  note_library_phases (kernel, plan ? plan->target_desc : NULL, st);
  _fb_kernel_stages_map (st, lines);
  return g_steal_pointer (&st);
}

/* ---- whole plans -------------------------------------------------------------------------- */

typedef struct {
  const FbPlan *plan;
  GPtrArray    *objects;
  char        **keys;
  gint          next;           /* next kernel to take (atomic) */
  gint          cached;
  GMutex        lock;
  GError       *error;          /* the first failure */
} PlanJob;

static gpointer
plan_worker (gpointer data)
{
  PlanJob *job = data;
  LLVMTargetMachineRef tm = NULL;
  for (;;)
    {
      guint i = g_atomic_int_add (&job->next, 1);
      if (i >= job->plan->kernels->len)
        break;
      const FbKernel *k = g_ptr_array_index (job->plan->kernels, i);
      if (k->phases->len == 0)
        continue;
      GBytes *obj = fb_kernel_cache_lookup (job->keys[i]);
      if (obj)
        g_atomic_int_inc (&job->cached);
      else
        {
          GError *error = NULL;
          if (tm == NULL)
            tm = _fb_codegen_target_machine (&error);
          if (tm)
            obj = compile_with (tm, k, &error);
          if (obj == NULL)
            {
              g_mutex_lock (&job->lock);
              if (job->error == NULL)
                g_propagate_prefixed_error (&job->error, error, "kernel %s: ", k->name);
              else
                g_clear_error (&error);
              g_mutex_unlock (&job->lock);
              break;
            }
          fb_kernel_cache_store (job->keys[i], obj);
        }
      g_mutex_lock (&job->lock);
      g_ptr_array_index (job->objects, i) = obj;
      g_mutex_unlock (&job->lock);
    }
  if (tm)
    LLVMDisposeTargetMachine (tm);
  return NULL;
}

GPtrArray *
fb_codegen_plan (const FbPlan *plan, guint n_threads, guint *n_cached, GError **error)
{
  g_return_val_if_fail (plan != NULL, NULL);
  ensure_llvm ();
  guint n = plan->kernels->len;
  PlanJob job = { .plan = plan };
  job.objects = g_ptr_array_new_full (n, (GDestroyNotify) g_bytes_unref);
  g_ptr_array_set_size (job.objects, n);
  job.keys = g_new0 (char *, n + 1);
  g_autofree char *key_target = g_strconcat (cache_salt, "\n", host_target, NULL);
  for (guint i = 0; i < n; i++)
    {
      const FbKernel *k = g_ptr_array_index (plan->kernels, i);
      g_autofree char *hash = fb_kernel_hash (k, key_target);
      /* Equal bodies under different names (a one-input Max, Sum or Transpose is the same copy)
       * are different objects: each defines its own function names. */
      g_autoptr(GString) key = g_string_new (hash);
      for (guint p = 0; p < k->phases->len; p++)
        {
          const FbKPhase *ph = g_ptr_array_index (k->phases, p);
          g_string_append_printf (key, "-%s", ph->fn ? ph->fn : "");
        }
      job.keys[i] = g_compute_checksum_for_string (G_CHECKSUM_SHA256, key->str, key->len);
    }
  g_mutex_init (&job.lock);
  n_threads = CLAMP (n_threads, 1, 64);
  GThread *threads[64];
  for (guint t = 1; t < n_threads; t++)
    threads[t] = g_thread_new ("fb-codegen", plan_worker, &job);
  plan_worker (&job);
  for (guint t = 1; t < n_threads; t++)
    g_thread_join (threads[t]);
  g_mutex_clear (&job.lock);
  g_strfreev (job.keys);
  if (n_cached)
    *n_cached = job.cached;
  if (job.error)
    {
      g_propagate_error (error, job.error);
      g_ptr_array_unref (job.objects);
      return NULL;
    }
  return job.objects;
}
