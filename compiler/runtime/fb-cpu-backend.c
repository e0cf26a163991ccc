/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The CPU target behind the backend interface: lower, lay out memory, generate code (through
 * the kernel cache), load it, run it; bundles hold its x86-64 objects. */
#include "fb-bundle.h"
#include "fb-cpu-threads.h"
#include "fb-codegen.h"
#include "fb-lower.h"

static gboolean
cpu_supports_op (const FbBackend *backend, const FbNode *node, char **reason)
{
  return fb_lower_supports_node (node, reason);
}

static FbPlan *
cpu_lower (const FbBackend *backend, const FbGraph *graph, GError **error)
{
  if (!fb_backend_check_graph (backend, graph, error))
    return NULL;
  FbPlan *plan = fb_lower_graph (graph, fb_codegen_host_target (), error);
  if (plan != NULL)
    fb_plan_layout_memory (plan);
  return plan;
}

FbCpuModule *
fb_cpu_compile (const FbGraph *graph, guint n_threads, GError **error)
{
  g_return_val_if_fail (graph != NULL, NULL);
  g_autoptr(FbPlan) plan = cpu_lower (fb_backend_cpu (), graph, error);
  if (plan == NULL)
    return NULL;
  if (n_threads == 0)
    n_threads = fb_thread_count_default ();
  g_autoptr(GPtrArray) objects = fb_codegen_plan (plan, n_threads, NULL, error);
  if (objects == NULL)
    return NULL;
  return fb_cpu_module_new (plan, objects, n_threads, error);
}

static FbKernelStages *
cpu_kernel_stages (const FbBackend *backend, const FbKernel *kernel, const FbPlan *plan,
                   GError **error)
{
  return fb_codegen_kernel_stages (kernel, plan, error);
}

static FbCompiled *
cpu_compile (const FbBackend *backend, const FbGraph *graph, const FbBackendOptions *options,
             GError **error)
{
  return (FbCompiled *) fb_cpu_compile (graph, options ? options->n_threads : 0, error);
}

static gboolean
cpu_compile_bundle (const FbBackend *backend, const FbGraph *graph, const char *path,
                    const FbBundleOptions *bundle_options, const FbBackendOptions *options,
                    FbCompileStats *stats, GError **error)
{
  guint threads = options && options->n_threads ? options->n_threads : fb_thread_count_default ();
  FbCompileStats local = { 0 };
  gint64 t0 = g_get_monotonic_time ();
  g_autoptr(FbPlan) plan = cpu_lower (backend, graph, error);
  if (plan == NULL)
    return FALSE;
  gint64 t1 = g_get_monotonic_time ();
  g_autoptr(GPtrArray) objects = fb_codegen_plan (plan, threads, &local.n_cached, error);
  if (objects == NULL)
    return FALSE;
  gint64 t2 = g_get_monotonic_time ();
  if (!fb_bundle_write (path, plan, objects, graph, bundle_options, error))
    return FALSE;
  gint64 t3 = g_get_monotonic_time ();
  for (guint i = 0; i < objects->len; i++)
    local.n_with_code += g_ptr_array_index (objects, i) != NULL;
  local.lower_ms = (t1 - t0) / 1e3;
  local.codegen_ms = (t2 - t1) / 1e3;
  local.bundle_ms = (t3 - t2) / 1e3;
  if (stats != NULL)
    *stats = local;
  return TRUE;
}

static FbCompiled *
cpu_load_bundle (const FbBackend *backend, const char *path, const FbBackendOptions *options,
                 GError **error)
{
  return (FbCompiled *) fb_bundle_load (path, options ? options->n_threads : 0, error);
}

static FbPlan *
cpu_plan (FbCompiled *compiled)
{
  return fb_cpu_module_plan ((FbCpuModule *) compiled);
}

static GPtrArray *
cpu_run (FbCompiled *compiled, GPtrArray *inputs, GCancellable *cancellable, GError **error)
{
  return fb_cpu_module_run ((FbCpuModule *) compiled, inputs, cancellable, error);
}

static GPtrArray *
cpu_run_timed (FbCompiled *compiled, GPtrArray *inputs, guint n, double *ms, GError **error)
{
  return fb_backend_run_timed_host (fb_backend_cpu (), compiled, inputs, n, ms, error);
}

/* The thread count and where it came from: a request (--threads) when it is not the default. */
static char *
cpu_describe (FbCompiled *compiled)
{
  guint n = fb_cpu_module_n_threads ((FbCpuModule *) compiled);
  FbThreadCount count;
  fb_thread_count_resolve (0, &count);
  return g_strdup_printf ("cpu: %u thread%s, from %s", n, n == 1 ? "" : "s",
                          n == count.n ? count.source : "--threads");
}

static void
cpu_free (FbCompiled *compiled)
{
  fb_cpu_module_free ((FbCpuModule *) compiled);
}

static const FbBackend cpu_backend = {
  .name            = "cpu",                /* x86-64 through LLVM, oneDNN for contractions */
  .assembly_suffix = "s",                  /* x86-64 assembly, AT&T syntax */
  .channels_last   = TRUE,                 /* oneDNN's convolution primitives want NHWC */
  .supports_op     = cpu_supports_op,      /* fb_lower_supports_node: op, dtypes, attributes */
  .lower           = cpu_lower,            /* check + lower + memory plan */
  .kernel_stages   = cpu_kernel_stages,    /* kernel IR, LLVM IR, optimized, x86-64 */
  .compile         = cpu_compile,          /* lower + codegen (cached) + LLJIT */
  .compile_bundle  = cpu_compile_bundle,   /* lower + codegen + fb_bundle_write */
  .load_bundle     = cpu_load_bundle,      /* fb_bundle_load: objects into LLJIT */
  .plan            = cpu_plan,
  .run             = cpu_run,              /* the plan's kernels over the worker pool */
  .run_timed       = cpu_run_timed,        /* the host clock around each run */
  .describe_run    = cpu_describe,         /* the thread count and where it came from */
  .free            = cpu_free,
};

const FbBackend *
fb_backend_cpu (void)
{
  return &cpu_backend;
}
