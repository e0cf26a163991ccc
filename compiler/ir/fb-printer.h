/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The textual IR: a stable, diffable listing of a graph, one node a line, the way MLIR prints.
 *
 *   %12:f32[1x64x56x56] = Conv(%3, %w7) {group=1, strides=[1,1]} # /features/0/Conv
 *
 * Values are numbered by their stable ids (%w for constants), so the listings of two stages
 * diff line by line. Attributes are sorted by name; floats print in the shortest form that
 * reads back to the same float. Fused bodies and control-flow branches nest, indented. */
#pragma once

#include "fb-graph.h"

G_BEGIN_DECLS

/* Appends the listing of graph to out. */
void  fb_graph_print     (const FbGraph *graph, GString *out);
/* The listing as a new string. */
char *fb_graph_to_text   (const FbGraph *graph);
/* One node's line, without its nested bodies and without a newline. */
char *fb_node_to_text    (const FbNode *node);
/* "%12" or "%w7" (constants). */
char *fb_value_ref       (const FbValue *value);
/* "f32[1x64x56x56]", "i64[]" for a scalar, "?[?]" when nothing is known. */
char *fb_value_type_text (const FbValue *value);
/* The same as people read it in pictures: "f32[D0×64×56×56]" (fb_shape_to_display). */
char *fb_value_type_display (const FbValue *value);

G_END_DECLS
