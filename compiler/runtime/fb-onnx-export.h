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

/* graph (any stage) rewritten as standard ONNX that other runtimes load and compute the same
 * with (fb-onnx-portable.c): FUSED nodes inlined, channels-last convolutions and pools between
 * transposes, operators newer than the model's opset written as their formulas, every value
 * named once. A new graph (fb_graph_free); NULL with an FB_GRAPH_ERROR naming the node that has
 * no such form. */
FbGraph *fb_onnx_portable_graph  (const FbGraph *graph, GError **error);
/* The serialized ModelProto of fb_onnx_portable_graph (graph), every weight inline. */
GBytes  *fb_onnx_export_portable (const FbGraph *graph, GError **error);

G_END_DECLS
