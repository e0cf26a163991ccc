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

/* The default-domain opset the nodes of a graph imported from model follow, and what an export
 * declares: the model's own, or 7 for a model written at 1 to 6, whose operators the importer
 * brought to their opset-7 forms. */
int      fb_onnx_form_opset      (FbModel *model);

/* graph (any stage) rewritten as standard ONNX that other runtimes load and compute the same
 * with (fb-onnx-portable.c): FUSED nodes inlined, channels-last convolutions and pools between
 * transposes, operators newer than the opset it declares (fb_onnx_form_opset) written as their
 * formulas, attributes the importer made inputs (Slice's starts, Squeeze's axes...) written back
 * as the attributes they are at that opset, every value named once. A new graph
 * (fb_graph_free); NULL with an FB_GRAPH_ERROR naming the node that has no such form. */
FbGraph *fb_onnx_portable_graph  (const FbGraph *graph, GError **error);
/* The serialized ModelProto of fb_onnx_portable_graph (graph), every weight inline. */
GBytes  *fb_onnx_export_portable (const FbGraph *graph, GError **error);

G_END_DECLS
