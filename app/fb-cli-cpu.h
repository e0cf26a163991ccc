/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The cpu target's own module, for commands that need more of it than the backend interface
 * gives (per-kernel timing); fb-cli-target.h serves every target. */
#pragma once

#include "fb-cli-load.h"
#include "fb-runtime.h"

G_BEGIN_DECLS

/* Whether MODEL runs on the cpu target: --target cpu, or a bundle folder. */
gboolean     fb_cli_cpu_wanted  (const char *target, const char *model);
/* A bundle is loaded; a model goes through the pipeline (kept in *pipeline, which owns the
 * graph the module runs) and is compiled. The graph that describes the module's inputs and
 * outputs is fb_cpu_module_plan (module)->graph. */
FbCpuModule *fb_cli_cpu_prepare (const char *model, const FbCliPipelineArgs *args,
                                 FbPipeline **pipeline, GError **error);

G_END_DECLS
