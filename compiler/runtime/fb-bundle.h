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

struct _FbBundleOptions {
  const char *source;           /* the model file it was compiled from (for the manifest) */
  const char *pipeline;         /* the pipeline options, as text */
  gboolean    shared_library;   /* also link lib/libfbmodel.so (needs a C compiler driver) */
  /* For targets other than the CPU (NULL: the CPU's): */
  const char *target;           /* the manifest's "target" ("cpu") */
  const char *object_suffix;    /* kernels/NAME.SUFFIX (".o") */
  GHashTable *extra_files;      /* char* file name -> GBytes*: the target's own files */
};

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
/* The plan of the bundle at path checked to be for target and host (the manifest's "target"
 * and "host"), and in *objects the kernels' files (kernels/NAME.SUFFIX, NULL for kernels
 * without code). The plan owns the bundle's graph. */
FbPlan      *fb_bundle_read   (const char *path, const char *target, const char *host,
                               const char *object_suffix, GPtrArray **objects, GError **error);
/* Reads the target's own file name of the bundle at path (see extra_files). */
GBytes      *fb_bundle_read_file (const char *path, const char *name, GError **error);
/* Whether path looks like a bundle (a folder with a manifest.json). */
gboolean     fb_bundle_is_bundle (const char *path);

G_END_DECLS
