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

#include "fb-backend.h"
#include "fb-kernel.h"

G_BEGIN_DECLS

struct _FbBundleOptions {
  const char *source;           /* the model file it was compiled from (for the manifest) */
  const char *pipeline;         /* the pipeline options, as text */
  gboolean    shared_library;   /* also link lib/libfbmodel.so (a target with write_library) */
  /* The target's part (NULL: the CPU's): */
  const char *target;           /* the manifest's "target" ("cpu") */
  const char *object_suffix;    /* kernels/NAME.SUFFIX (".o") */
  GHashTable *extra_files;      /* char* file name -> GBytes*: the target's own files */
  /* Links the kernels and a driver into dir/lib/libfbmodel.so with dir/lib/fb-model.h, for
   * shared_library; weight_offsets: per buffer, the byte offset of its constant in weights. */
  gboolean  (*write_library) (const char *dir, const FbPlan *plan, GPtrArray *objects,
                              GBytes *weights, const int64_t *weight_offsets,
                              const FbGraph *graph, GError **error);
};

gboolean     fb_bundle_write  (const char *path, FbPlan *plan, GPtrArray *objects,
                               const FbGraph *graph, const FbBundleOptions *options,
                               GError **error);
/* The plan of the bundle at path checked to be for target and host (the manifest's "target"
 * and "host"), and in *objects the kernels' files (kernels/NAME.SUFFIX, NULL for kernels
 * without code). The plan owns the bundle's graph. */
FbPlan      *fb_bundle_read   (const char *path, const char *target, const char *host,
                               const char *object_suffix, GPtrArray **objects, GError **error);
/* Reads the target's own file name of the bundle at path (see extra_files). */
GBytes      *fb_bundle_read_file (const char *path, const char *name, GError **error);
/* "kernels/NAME.o", the file holding a kernel's functions (shared by equal kernels). */
char        *fb_bundle_object_name (const FbKernel *kernel);
/* Whether path looks like a bundle (a folder with a manifest.json). */
gboolean     fb_bundle_is_bundle (const char *path);

G_END_DECLS
