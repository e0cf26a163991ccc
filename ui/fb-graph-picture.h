/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Graph pictures: a scene drawn by fb-graph-paint.c onto a Cairo SVG, PDF or PNG surface, into
 * memory, so that the caller writes the file in one atomic step. Any thread. */
#pragma once

#include "fb-graph-layout.h"
#include "fb-profile-overlay.h"

#include <gio/gio.h>

G_BEGIN_DECLS

typedef enum {
  FB_GRAPH_PICTURE_SVG,
  FB_GRAPH_PICTURE_PDF,
  FB_GRAPH_PICTURE_PNG,
} FbGraphPictureFormat;

/* "svg", "pdf" or "png"; FALSE for anything else. */
gboolean  fb_graph_picture_format_parse (const char           *name,
                                         FbGraphPictureFormat *format);
const char *fb_graph_picture_format_name (FbGraphPictureFormat format);

/* The file's bytes, cropped to what is drawn (boxes, edges, their labels) and a small margin.
 * Edge labels are placed as the view places them (fb-graph-labels.h). marks (node id -> FbGraphMark, may be NULL) paints a pass's diff as the
 * window does. Very large scenes are scaled down to what the format holds (PDF pages of at most
 * 200 inches, PNG images of at most 16384 pixels a side). */
GBytes   *fb_graph_picture_render       (FbGraphScene         *scene,
                                         FbGraphPictureFormat  format,
                                         GHashTable           *marks,
                                         GError              **error);
/* The same with profile (may be NULL) painted on the boxes as a view paints it by metric, with
 * each node's change against previous (may be NULL) when the view shows an A/B comparison, and
 * the legend: what File → Export Graph writes of the view on screen. profile must not change
 * while this runs; it is attributed to the scene's graph here. */
GBytes   *fb_graph_picture_render_shown (FbGraphScene         *scene,
                                         FbGraphPictureFormat  format,
                                         GHashTable           *marks,
                                         FbProfile            *profile,
                                         FbProfile            *previous,
                                         FbProfileMetric       metric,
                                         GError              **error);
/* Lays graph out with the groups expanded that the window opens it with (up to
 * FB_GRAPH_LAYOUT_DEFAULT_BUDGET boxes; bigger scopes stay collapsed boxes) and renders it.
 * Blocking: Graphviz runs here. */
GBytes   *fb_graph_picture_render_graph (FbGraph              *graph,
                                         FbGraphPictureFormat  format,
                                         GCancellable         *cancellable,
                                         GError              **error);

/* The same with profile (may be NULL) painted on the boxes as the window paints it, by metric,
 * with its legend. The caller has checked that the profile matches the graph's model. */
GBytes   *fb_graph_picture_render_profiled (FbGraph              *graph,
                                            FbGraphPictureFormat  format,
                                            FbProfile            *profile,
                                            FbProfileMetric       metric,
                                            GCancellable         *cancellable,
                                            GError              **error);

G_END_DECLS
