/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Bundles of the cpu target: what is done before writing one (check that the CPU target runs
 * every node, lower, place the activations, generate the kernels' code), and loading one. */
#include "fb-cpu.h"
#include "fb-cpu-threads.h"
#include "fb-codegen.h"
#include "fb-lower.h"

FbPlan *
fb_cpu_bundle_compile (const FbGraph *graph, guint n_threads, GPtrArray **objects,
                       FbBundleCompileStats *stats, GError **error)
{
  g_autoptr(FbPlan) plan = NULL;
  gint64 t0 = g_get_monotonic_time (), t1;
  guint cached = 0;

  g_return_val_if_fail (graph != NULL && objects != NULL, NULL);
  if (!fb_backend_check_graph (fb_backend_cpu (), graph, error))
    return NULL;
  plan = fb_lower_graph (graph, fb_cpu_target_desc (), error);
  if (plan == NULL)
    return NULL;
  fb_plan_layout_memory (plan);
  t1 = g_get_monotonic_time ();
  *objects = fb_codegen_plan (plan, n_threads > 0 ? n_threads : fb_thread_count_default (), &cached,
                              error);
  if (*objects == NULL)
    return NULL;
  if (stats != NULL)
    {
      stats->lower_ms = (t1 - t0) / 1e3;
      stats->codegen_ms = (g_get_monotonic_time () - t1) / 1e3;
      stats->n_cached = cached;
    }
  return g_steal_pointer (&plan);
}

FbCpuModule *
fb_cpu_bundle_load (const char *path, guint n_threads, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_autoptr(GPtrArray) objects = NULL;
  /* Objects use every feature of the CPU they were compiled on. */
  g_autoptr(FbPlan) plan = fb_bundle_read (path, "cpu", fb_codegen_host_target (), ".o",
                                           &objects, error);
  if (plan == NULL)
    return NULL;
  plan->target_desc = fb_cpu_target_desc ();
  g_autoptr(GError) local = NULL;
  FbCpuModule *module = fb_cpu_module_new (plan, objects, n_threads, &local);
  if (module == NULL)
    g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE, "%s: %s", path, local->message);
  return module;
}
