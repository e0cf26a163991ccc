/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The CPU target behind the backend interface: lower, lay out memory, generate code (through
 * the kernel cache), load it, run it; bundles hold its x86-64 objects. */
#include "fb-cpu.h"
#include "fb-cpu-threads.h"
#include "fb-codegen.h"
#include "fb-dnnl-conv.h"
#include "fb-lower.h"

#include <string.h>

static gboolean
cpu_supports_op (const FbBackend *backend, const FbNode *node, char **reason)
{
  return fb_lower_supports_node (node, reason);
}

static gboolean
cpu_conv_writes_rows (const FbConvDesc *d)
{
  return fb_dnnl_conv_writes_rows (d) != 0;
}

const FbTargetDesc *
fb_cpu_target_desc (void)
{
  static FbTargetDesc desc = {
    .gpu                 = FALSE,
    .conv_library        = "oneDNN",
    .conv_implementation = fb_dnnl_conv_implementation,
    .conv_writes_rows    = cpu_conv_writes_rows,
  };
  static gsize ready;
  if (g_once_init_enter (&ready))
    {
      desc.triple = fb_codegen_host_target ();
      g_once_init_leave (&ready, 1);
    }
  return &desc;
}

static const FbTargetDesc *
cpu_describe_target (const FbBackend *backend)
{
  return fb_cpu_target_desc ();
}

static FbPlan *
cpu_lower (const FbBackend *backend, const FbGraph *graph, GError **error)
{
  if (!fb_backend_check_graph (backend, graph, error))
    return NULL;
  FbPlan *plan = fb_lower_graph (graph, fb_cpu_target_desc (), error);
  if (plan != NULL)
    fb_plan_layout_memory (plan);
  return plan;
}

static FbCpuModule *
compile_plan (FbPlan *plan, guint n_threads, GError **error)
{
  g_autoptr(GPtrArray) objects = fb_codegen_plan (plan, n_threads ? n_threads : fb_thread_count_default (),
                                                  NULL, error);
  if (objects == NULL)
    return NULL;
  return fb_cpu_module_new (plan, objects, n_threads, error);
}

FbCpuModule *
fb_cpu_compile (const FbGraph *graph, guint n_threads, GError **error)
{
  g_return_val_if_fail (graph != NULL, NULL);
  g_autoptr(FbPlan) plan = cpu_lower (fb_backend_cpu (), graph, error);
  if (plan == NULL)
    return NULL;
  return compile_plan (plan, n_threads, error);
}

static FbCompiled *
cpu_compile_plan (const FbBackend *backend, FbPlan *plan, const FbBackendOptions *options,
                  GError **error)
{
  return (FbCompiled *) compile_plan (plan, options ? options->n_threads : 0, error);
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
  FbBundleCompileStats made = { 0 };
  g_autoptr(GPtrArray) objects = NULL;
  g_autoptr(FbPlan) plan = fb_cpu_bundle_compile (graph, options ? options->n_threads : 0,
                                                  &objects, &made, error);
  if (plan == NULL)
    return FALSE;
  /* Only this target links its kernels into a shared library. */
  FbBundleOptions written = bundle_options ? *bundle_options : (FbBundleOptions) { 0 };
  written.write_library = fb_cpu_write_shared_library;
  gint64 t0 = g_get_monotonic_time ();
  if (!fb_bundle_write (path, plan, objects, graph, &written, error))
    return FALSE;
  if (stats != NULL)
    {
      *stats = (FbCompileStats) { .lower_ms = made.lower_ms, .codegen_ms = made.codegen_ms,
                                  .bundle_ms = (g_get_monotonic_time () - t0) / 1e3,
                                  .n_cached = made.n_cached };
      for (guint i = 0; i < objects->len; i++)
        stats->n_with_code += g_ptr_array_index (objects, i) != NULL;
    }
  return TRUE;
}

static FbCompiled *
cpu_load_bundle (const FbBackend *backend, const char *path, const FbBackendOptions *options,
                 GError **error)
{
  return (FbCompiled *) fb_cpu_bundle_load (path, options ? options->n_threads : 0, error);
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

static const char *
cpu_threads_source (FbCompiled *compiled)
{
  return fb_cpu_module_threads_source ((FbCpuModule *) compiled);
}

static guint
cpu_n_threads (FbCompiled *compiled)
{
  return fb_cpu_module_n_threads ((FbCpuModule *) compiled);
}

/* The thread count and where it came from. */
static char *
cpu_describe (FbCompiled *compiled)
{
  guint n = cpu_n_threads (compiled);
  return g_strdup_printf ("cpu: %u thread%s, from %s", n, n == 1 ? "" : "s",
                          cpu_threads_source (compiled));
}

/* The processor's model name, as /proc/cpuinfo gives it. */
static char *
cpu_describe_device (const FbBackend *backend, GError **error)
{
  g_autofree char *info = NULL;
  if (g_file_get_contents ("/proc/cpuinfo", &info, NULL, NULL))
    {
      g_auto(GStrv) lines = g_strsplit (info, "\n", -1);
      for (guint i = 0; lines[i] != NULL; i++)
        if (g_str_has_prefix (lines[i], "model name") && strchr (lines[i], ':') != NULL)
          return g_strstrip (g_strdup (strchr (lines[i], ':') + 1));
    }
  return g_strdup ("this machine's CPU");
}

static GBytes *
cpu_emit_object (const FbBackend *backend, const FbKernel *kernel, GError **error)
{
  return fb_codegen_kernel_object (kernel, error);
}

static const FbGraph *
cpu_graph (FbCompiled *compiled)
{
  return fb_cpu_module_plan ((FbCpuModule *) compiled)->graph;
}

static void
cpu_set_timing (FbCompiled *compiled, gboolean timing)
{
  fb_cpu_module_set_timing ((FbCpuModule *) compiled, timing);
}

static gboolean
cpu_timing (FbCompiled *compiled, FbKernelTiming *timing)
{
  return fb_cpu_module_timing ((FbCpuModule *) compiled, timing);
}

static void
cpu_set_kernel_hook (FbCompiled *compiled, FbKernelHook hook, gpointer data)
{
  fb_cpu_module_set_kernel_hook ((FbCpuModule *) compiled, hook, data);
}

static void
cpu_free (FbCompiled *compiled)
{
  fb_cpu_module_free ((FbCpuModule *) compiled);
}

static const FbHostTiming cpu_host_timing = {
  .n_threads       = cpu_n_threads,
  .threads_source  = cpu_threads_source,
  .set_timing      = cpu_set_timing,
  .timing          = cpu_timing,
  .set_kernel_hook = cpu_set_kernel_hook,
};

static const FbBackend cpu_backend = {
  .name            = "cpu",                /* x86-64 through LLVM, oneDNN for contractions */
  .title           = "CPU",
  .code_title      = "CPU · x86-64",
  .device_word     = "CPU",
  .lane_word       = "thread",             /* a timeline lane: a thread of the worker pool */
  .assembly_suffix = "s",                  /* x86-64 assembly, AT&T syntax */
  .channels_last   = TRUE,                 /* oneDNN's convolution primitives want NHWC */
  .supports_op     = cpu_supports_op,      /* fb_lower_supports_node: op, dtypes, attributes */
  .describe_target = cpu_describe_target,  /* this processor's triple, oneDNN's choices */
  .describe_device = cpu_describe_device,  /* the processor's model name */
  .lower           = cpu_lower,            /* check + lower + memory plan */
  .kernel_stages   = cpu_kernel_stages,    /* kernel IR, LLVM IR, optimized, x86-64 */
  .emit_object     = cpu_emit_object,      /* one kernel's x86-64 ELF object */
  .compile         = cpu_compile,          /* lower + codegen (cached) + LLJIT */
  .compile_plan    = cpu_compile_plan,     /* codegen (cached) + LLJIT */
  .compile_bundle  = cpu_compile_bundle,   /* lower + codegen + fb_bundle_write */
  .shared_library  = TRUE,                 /* lib/libfbmodel.so linked by cc */
  .load_bundle     = cpu_load_bundle,      /* fb_cpu_bundle_load: objects into LLJIT */
  .graph           = cpu_graph,
  .plan            = cpu_plan,
  .run             = cpu_run,              /* the plan's kernels over the worker pool */
  .run_timed       = cpu_run_timed,        /* the host clock around each run */
  .describe_run    = cpu_describe,         /* the thread count and where it came from */
  .free            = cpu_free,
  .host_timing     = &cpu_host_timing,     /* each kernel's wall time and threads' shares */
};

const FbBackend *
fb_backend_cpu (void)
{
  return &cpu_backend;
}
