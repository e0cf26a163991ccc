/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What `compile` and the workbench's File → Export do before writing a bundle: check that the
 * CPU target runs every node, lower, place the activations, generate the kernels' code. */
#include "fb-bundle.h"
#include "fb-cpu-threads.h"
#include "fb-codegen.h"
#include "fb-lower.h"

FbPlan *
fb_bundle_compile (const FbGraph *graph, guint n_threads, GPtrArray **objects,
                   FbBundleCompileStats *stats, GError **error)
{
  g_autoptr(FbPlan) plan = NULL;
  gint64 t0 = g_get_monotonic_time (), t1;
  guint cached = 0;

  g_return_val_if_fail (graph != NULL && objects != NULL, NULL);
  if (!fb_backend_check_graph (fb_backend_cpu (), graph, error))
    return NULL;
  plan = fb_lower_graph (graph, fb_codegen_host_target (), error);
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
