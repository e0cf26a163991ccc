/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-cli-target.h"
#include "fb-bundle.h"

gboolean
fb_cli_target_resolve (const char *target, const char *model, const FbBackend **backend,
                       GError **error)
{
  g_return_val_if_fail (backend != NULL, FALSE);
  *backend = NULL;
  if (model != NULL && fb_bundle_is_bundle (model))
    {
      g_autofree char *bundle_target = fb_backend_bundle_target (model, error);
      if (bundle_target == NULL)
        return FALSE;
      *backend = fb_backend_lookup (bundle_target);
      if (*backend == NULL)
        {
          g_set_error (error, FB_RUNTIME_ERROR, FB_RUNTIME_ERROR_BUNDLE,
                       "%s: a bundle for the '%s' target, which this build does not have (it has %s)",
                       model, bundle_target, fb_backend_names ());
          return FALSE;
        }
      /* A bundle holds compiled code: the reference target or none runs it as it is. */
      const FbBackend *asked = target != NULL ? fb_backend_lookup (target) : NULL;
      if (asked != NULL && asked != fb_backend_reference () && asked != *backend)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--target %s: %s was compiled for the %s target", target, model,
                       bundle_target);
          return FALSE;
        }
      return TRUE;
    }
  *backend = target != NULL ? fb_backend_lookup (target) : fb_backend_reference ();
  return *backend != NULL || fb_cli_check_target (target, error);
}

FbCompiled *
fb_cli_target_prepare (const FbBackend *backend, const char *model, const FbCliPipelineArgs *args,
                       const FbBackendOptions *options, FbPipeline **pipeline, GError **error)
{
  g_return_val_if_fail (backend != NULL && model != NULL && args != NULL && pipeline != NULL, NULL);
  *pipeline = NULL;
  if (fb_bundle_is_bundle (model))
    return backend->load_bundle (backend, model, options, error);
  if (backend->compile == NULL)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "%s: this build runs only bundles; compile it for the %s target elsewhere", model,
                   backend->name);
      return NULL;
    }
  *pipeline = fb_cli_load_model (model, args, error);
  if (*pipeline == NULL)
    return NULL;
  return backend->compile (backend, fb_pipeline_final (*pipeline), options, error);
}
