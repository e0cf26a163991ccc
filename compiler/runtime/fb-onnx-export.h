/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Writing a graph (any stage) as an ONNX model. */
#pragma once

#include "fb-graph.h"

#include <gio/gio.h>

G_BEGIN_DECLS

/* The serialized ModelProto of graph. external (may be NULL) maps FbTensor* to 1 + its byte
 * offset in weights_file: those constants are written as external data (a path relative to
 * the model) instead of inline. FUSED nodes are written in the domain "io.github.fusebench"
 * with their body as the graph attribute "body". */
GBytes *fb_onnx_export (const FbGraph *graph, GHashTable *external, const char *weights_file,
                        GError **error);

G_END_DECLS
