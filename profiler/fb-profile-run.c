/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fb_profile_run: the one door to profiling, whichever the target (fb-profile-run.h). A target
 * is profiled by the method its backend offers: host-clock timing (fb-profile-cpu.c) or a
 * CUDA device traced by CUPTI (fb-profile-cuda.c); one that offers neither says so. */
#include "fb-profile-private.h"

gboolean
fb_profile_supports (const FbBackend *backend)
{
  g_return_val_if_fail (backend != NULL, FALSE);
  return backend->compile != NULL && backend->plan != NULL &&
         (backend->host_timing != NULL || backend->device_trace != NULL);
}

gboolean
fb_profile_supports_bundles (const FbBackend *backend)
{
  g_return_val_if_fail (backend != NULL, FALSE);
  /* A traced profile compiles its own module to tag one inference kernel by kernel. */
  return backend->load_bundle != NULL && backend->plan != NULL && backend->host_timing != NULL;
}

FbCompiled *
_fb_profile_compile (const FbBackend *backend, const FbGraph *final,
                     const FbProfileOptions *options, const FbBackendOptions *compile_options,
                     GError **error)
{
  /* A plan lowered from this very graph is compiled as it is: lowering it again would make
   * the same plan. */
  if (options != NULL && options->plan != NULL && options->plan->graph == final &&
      backend->compile_plan != NULL)
    return backend->compile_plan (backend, options->plan, compile_options, error);
  return backend->compile (backend, final, compile_options, error);
}

FbProfile *
fb_profile_run (const FbBackend *backend, GPtrArray *stages,
                const FbPipelineOptions *pipeline_options, GPtrArray *inputs,
                const FbProfileOptions *options, GCancellable *cancellable,
                FbProfileProgress progress, gpointer data, GError **error)
{
  g_return_val_if_fail (backend != NULL && stages != NULL && stages->len > 0, NULL);
  if (!fb_profile_supports (backend))
    {
      g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE,
                   "cannot profile on the %s target: it offers the profiler no timed runs",
                   backend->name);
      return NULL;
    }
  if (backend->host_timing != NULL)
    return _fb_profile_run_host (backend, stages, pipeline_options, inputs, options, cancellable,
                                 progress, data, error);
  return _fb_profile_run_traced (backend, stages, pipeline_options, inputs, options, cancellable,
                                 progress, data, error);
}
