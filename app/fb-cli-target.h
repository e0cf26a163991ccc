/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The target of `run`, `check` and `compile`, reached only through the backend interface:
 * the reference interpreter (no backend), or a compiled target, for a model or a bundle. */
#pragma once

#include "fb-cli-load.h"
#include "fb-backend.h"

G_BEGIN_DECLS

/* Which backend runs model: a bundle runs on the target it was compiled for (--target, when
 * given, must agree or name the reference); otherwise --target names it, and NULL is the
 * reference interpreter. Errors are G_OPTION_ERRORs or FB_RUNTIME_ERROR_BUNDLE. */
gboolean    fb_cli_target_resolve (const char *target, const char *model,
                                   const FbBackend **backend, GError **error);
/* A bundle is loaded; a model goes through the pipeline (kept in *pipeline, which owns the
 * graph the result runs) and is compiled. The graph that describes the inputs and outputs is
 * backend->graph (compiled). */
FbCompiled *fb_cli_target_prepare (const FbBackend *backend, const char *model,
                                   const FbCliPipelineArgs *args, const FbBackendOptions *options,
                                   FbPipeline **pipeline, GError **error);

G_END_DECLS
