/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Bundles: a compiled model in a folder, runnable without compiling.
 *
 *   NAME.fusebench/
 *     manifest.json      what it is: format, target, host CPU, inputs and outputs, files
 *     plan.json          buffers (arena offsets, weight offsets, views) and kernels (functions,
 *                        parallel extents, arguments, provenance)
 *     kernels/K.o        one x86-64 object per kernel with code
 *     weights.bin        every constant, 64-byte aligned, memory-mapped when loaded
 *     model.onnx         the optimized graph (the final stage), its weights external in
 *                        weights.bin; FUSED nodes in the domain io.github.fusebench
 *     lib/libfbmodel.so  the same kernels linked with a driver: fb_model_run (lib/fb-model.h)
 *
 * Written into a temporary folder beside the target, then renamed over it. */
#pragma once

#include "fb-runtime.h"

G_BEGIN_DECLS

typedef struct {
  const char *source;           /* the model file it was compiled from (for the manifest) */
  const char *pipeline;         /* the pipeline options, as text */
  gboolean    shared_library;   /* also link lib/libfbmodel.so (needs a C compiler driver) */
} FbBundleOptions;

gboolean     fb_bundle_write  (const char *path, FbPlan *plan, GPtrArray *objects,
                               const FbGraph *graph, const FbBundleOptions *options,
                               GError **error);
/* Loads a bundle for the CPU target, refusing one compiled for another CPU. The bundle's graph
 * (fb_cpu_module_plan (module)->graph, owned by the plan) describes the inputs and outputs. */
FbCpuModule *fb_bundle_load   (const char *path, guint n_threads, GError **error);
/* Whether path looks like a bundle (a folder with a manifest.json). */
gboolean     fb_bundle_is_bundle (const char *path);

G_END_DECLS
