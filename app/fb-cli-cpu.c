/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-cli-cpu.h"
#include "fb-cli-target.h"
#include "fb-bundle.h"

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
  /* The cpu backend's compiled form is its module. */
  return (FbCpuModule *) fb_cli_target_prepare (fb_backend_lookup ("cpu"), model, args, NULL,
                                                pipeline, error);
}
