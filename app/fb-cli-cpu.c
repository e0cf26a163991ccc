/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-cli-cpu.h"
#include "fb-bundle.h"
#include "fb-lower.h"

#include <stdio.h>

gboolean
fb_cli_cpu_wanted (const char *target, const char *model)
{
  return g_strcmp0 (target, "cpu") == 0 || (model != NULL && fb_bundle_is_bundle (model));
}

FbCpuModule *
fb_cli_cpu_prepare (const char *model, const FbCliPipelineArgs *args, FbPipeline **pipeline,
                    GError **error)
{
  g_return_val_if_fail (model != NULL && args != NULL && pipeline != NULL, NULL);
  *pipeline = NULL;
  if (fb_bundle_is_bundle (model))
    return fb_bundle_load (model, 0, error);
  *pipeline = fb_cli_load_model (model, args, error);
  if (*pipeline == NULL)
    return NULL;
  return fb_cpu_compile (fb_pipeline_final (*pipeline), 0, error);
}
