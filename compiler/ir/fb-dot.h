/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A graph as Graphviz DOT text, written by hand so the compiler needs no Graphviz: what
 * --dump-dir and "export --format dot" write. Nodes are boxes labelled with the operator and the
 * node name (fused nodes list their members), graph inputs and outputs are ellipses, edges carry
 * the tensor type; nodes a pass inserted are dashed.
 *
 * Constant nodes stay nodes, with edges to their readers, even where the graph view draws them
 * as rows inside their readers' boxes: DOT is the export of every node, read by tools that
 * count and match nodes, and a record label would lose the edge a Constant's value flows along.
 * Initializers (weights, and values a pass folded) are no nodes and are left out, as the
 * window's pictures leave out their edges. */
#pragma once

#include "fb-graph.h"

G_BEGIN_DECLS

char *fb_graph_to_dot (const FbGraph *graph);

G_END_DECLS
