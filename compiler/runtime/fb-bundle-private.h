/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Internals of bundles shared by their files. Only compiler/runtime/ includes this header. */
#pragma once

#include "fb-bundle.h"

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* weight_offsets: per buffer, the byte offset of constants in weights.bin. */
JsonObject *_fb_bundle_plan_to_json   (const FbPlan *plan, const int64_t *weight_offsets);
/* Constants become views of weights (a mapped weights.bin). */
FbPlan     *_fb_bundle_plan_from_json (JsonObject *root, GBytes *weights, const char *path,
                                       GError **error);
const char *_fb_bundle_kernel_node_name (JsonObject *root, guint k);
/* The same with another suffix (".ptx"). */
char       *_fb_bundle_object_file     (const FbKernel *kernel, const char *suffix);
gboolean    _fb_bundle_io_error        (GError **error, const char *path, int err);

#define FB_BUNDLE_FORMAT  "fusebench-bundle"
#define FB_BUNDLE_VERSION 1
/* Links the kernels and a driver into dir/lib/libfbmodel.so with dir/lib/fb-model.h. */
gboolean    _fb_bundle_write_shared_library (const char *dir, const FbPlan *plan,
                                             GPtrArray *objects, GBytes *weights,
                                             const int64_t *weight_offsets,
                                             const FbGraph *graph, GError **error);

G_END_DECLS
