/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fb_profile_run: the one door to profiling, whichever the target (fb-profile-run.h). Each
 * target's half lives in its own file; a target this build lacks says so. */
#include "fb-profile-private.h"

FbProfile *
fb_profile_run (const char *target, GPtrArray *stages, const FbPipelineOptions *pipeline_options,
                GPtrArray *inputs, const FbProfileOptions *options, GCancellable *cancellable,
                FbProfileProgress progress, gpointer data, GError **error)
{
  g_return_val_if_fail (stages != NULL && stages->len > 0, NULL);
  if (target == NULL || g_str_equal (target, "cpu"))
    return _fb_profile_run_cpu (stages, pipeline_options, inputs, options, cancellable,
                                progress, data, error);
  if (g_str_equal (target, "cuda"))
    return _fb_profile_run_cuda (stages, pipeline_options, inputs, options, cancellable,
                                 progress, data, error);
  g_set_error (error, FB_PROFILE_ERROR, FB_PROFILE_ERROR_UNAVAILABLE,
               "cannot profile on '%s': the targets are cpu and cuda", target);
  return NULL;
}
