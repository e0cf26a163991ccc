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

typedef struct {
  double lower_ms;              /* checking, lowering and memory planning */
  double codegen_ms;
  guint  n_cached;              /* kernels whose object came from the cache */
} FbBundleCompileStats;

/* Checks that the CPU target runs graph, lowers it for this CPU and generates the object of
 * every kernel (on n_threads threads, 0 for one a core, through the cache): the plan and the
 * objects (*objects, NULL entries for kernels without code) that fb_bundle_write takes. stats
 * may be NULL. */
FbPlan      *fb_bundle_compile (const FbGraph *graph, guint n_threads, GPtrArray **objects,
                                FbBundleCompileStats *stats, GError **error);
gboolean     fb_bundle_write  (const char *path, FbPlan *plan, GPtrArray *objects,
                               const FbGraph *graph, const FbBundleOptions *options,
                               GError **error);
/* Loads a bundle for the CPU target, refusing one compiled for another CPU. The bundle's graph
 * (fb_cpu_module_plan (module)->graph, owned by the plan) describes the inputs and outputs. */
FbCpuModule *fb_bundle_load   (const char *path, guint n_threads, GError **error);
/* Whether path looks like a bundle (a folder with a manifest.json). */
gboolean     fb_bundle_is_bundle (const char *path);

G_END_DECLS
