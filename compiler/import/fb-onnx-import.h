/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ONNX model import: protobuf-c decoding of the onnx.proto schema, then the graph IR. */
#pragma once

#include "fb-graph.h"

#include <gio/gio.h>

G_BEGIN_DECLS

#define FB_IMPORT_ERROR (fb_import_error_quark ())
GQuark fb_import_error_quark (void);

typedef enum {
  FB_IMPORT_ERROR_IO,            /* the file or an external-data file cannot be read */
  FB_IMPORT_ERROR_PARSE,         /* not a protobuf ModelProto: empty, truncated, corrupted */
  FB_IMPORT_ERROR_INVALID,       /* decodes, but breaks ONNX rules (cycle, undefined input, ...) */
  FB_IMPORT_ERROR_UNSUPPORTED,   /* valid ONNX outside what this project handles */
} FbImportError;

/* Loads path. input_shapes (char* -> FbShape*, may be NULL) pins dynamic input dimensions
 * before shape inference. Every error message starts with the file name and names the node,
 * tensor or field at fault. */
FbGraph *fb_onnx_import_file   (const char *path, GHashTable *input_shapes, GError **error);
/* Loads a model held in memory; base_dir resolves external data (NULL: external data refused);
 * display_name is used in messages. */
FbGraph *fb_onnx_import_bytes  (GBytes *bytes, const char *display_name, const char *base_dir,
                                GHashTable *input_shapes, GError **error);
/* Operators of graph (recursively) that nothing computes: op_type -> GPtrArray of node names.
 * Free with g_hash_table_unref. */
GHashTable *fb_graph_unsupported_ops (const FbGraph *graph);

G_END_DECLS
