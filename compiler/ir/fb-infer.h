/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shape and dtype inference, one function per operator (fb-infer-*.c), dispatched by op. */
#pragma once

#include "fb-graph.h"

G_BEGIN_DECLS

/* Sets dtype and shape of every output of node from its inputs, attributes and the constant
 * values of shape-like inputs. Dimensions that depend on runtime data stay FB_DIM_UNKNOWN; an
 * output that already carries a more precise shape (from the file's value_info) keeps it.
 * FALSE with an FB_GRAPH_ERROR_SHAPE error naming the node when the inputs are impossible for
 * the operator (mismatched channels, non-broadcastable shapes, a bad axis, an overflow). Nodes
 * of unsupported operators get unknown outputs and no error. */
gboolean fb_infer_node           (FbGraph *graph, FbNode *node, GError **error);
/* fb_infer_node over every node in order, recursing into subgraphs. */
gboolean fb_infer_graph          (FbGraph *graph, GError **error);
/* Replaces the shape of named graph inputs (dynamic dimensions pinned by --input-shape).
 * pins: char* name -> FbShape*. Error when a name is not an input or the rank differs, or a
 * fixed dimension is contradicted. A symbolic dimension pinned on one input takes the same
 * extent on the other inputs that name it; a pinned extent below zero leaves that dimension as
 * it was. Nothing changes when there is an error. */
gboolean fb_graph_pin_inputs     (FbGraph *graph, GHashTable *pins, GError **error);
/* Whether fb_graph_pin_inputs (graph, pins) would succeed, with its error when not; graph
 * stays as it is. */
gboolean fb_graph_check_pins     (const FbGraph *graph, GHashTable *pins, GError **error);

G_END_DECLS
