/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A graph as Graphviz DOT text, written by hand so the compiler needs no Graphviz: what
 * --dump-dir and "export --format dot" write. Nodes are boxes labelled with the operator and the
 * node name (fused nodes list their members), graph inputs and outputs are ellipses, edges carry
 * the tensor type; weights and other constants are left out to keep the picture readable, and
 * nodes a pass inserted are dashed. */
#pragma once

#include "fb-graph.h"

G_BEGIN_DECLS

char *fb_graph_to_dot (const FbGraph *graph);

G_END_DECLS
