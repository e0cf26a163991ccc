/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Where the shape labels of a scene's edges go. Graphviz gives each edge one label point, the
 * middle of its curve; edges that leave a box side by side get points a few pixels apart, and
 * labels drawn there run into one text ("1x256x56x561x256x56x56"). Placing every label once
 * for the whole scene, measured in the font it is drawn in, keeps them apart on screen (where
 * the scene is painted in tiles, each of which must agree) and in pictures alike. */
#pragma once

#include "fb-graph-paint.h"

G_BEGIN_DECLS

typedef struct _FbGraphLabels FbGraphLabels;

/* The widest a label is drawn; longer ones are ellipsized. */
#define FB_GRAPH_LABEL_MAX_WIDTH 150.0

/* The text on edge ("1x64x56x56", "… (3 values)"), or NULL when it carries none. */
char          *fb_graph_labels_text  (const FbSceneEdge *edge);
/* Measures every edge label of scene with paint's text layout and mono font, then places them
 * in edge order: beside the label point, else to its left, else a line below or above; a label
 * that still runs into one placed before is left out. */
FbGraphLabels *fb_graph_labels_place (FbGraphScene       *scene,
                                      const FbGraphPaint *paint);
void           fb_graph_labels_free  (FbGraphLabels      *labels);
/* The top-left corner and size of edge's label (its index in the scene); FALSE when the edge
 * has no label or it was left out. */
gboolean       fb_graph_labels_get   (const FbGraphLabels *labels,
                                      guint                edge,
                                      double              *x,
                                      double              *y,
                                      double              *width,
                                      double              *height);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbGraphLabels, fb_graph_labels_free)

G_END_DECLS
