/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shared by the graph view's behaviour (fb-graph-view.c) and its drawing (fb-graph-view-draw.c). */
#pragma once

#include "fb-graph-view.h"

G_BEGIN_DECLS

#define FB_MINIMAP_WIDTH   180.0
#define FB_MINIMAP_HEIGHT  140.0
#define FB_MINIMAP_MARGIN  12.0

struct _FbGraphView {
  GtkWidget        parent_instance;

  FbGraphLayout   *layout;
  FbGraphScene    *scene;
  GHashTable      *expanded;        /* group paths */
  GCancellable    *cancellable;     /* of the layout in flight */
  guint            generation;      /* of the layout in flight: late results are dropped */
  char            *error;
  gboolean         fit_pending;     /* fit once the first scene and a size are there */

  double           origin_x;        /* scene point at the widget's top-left */
  double           origin_y;
  double           zoom;

  gboolean         has_selection;
  guint            selected_id;     /* the selected node, when selected_path is NULL */
  char            *selected_name;   /* its name, to find it again in another stage */
  char            *selected_path;   /* the selected group */
  int              selected_item;   /* its item in the scene, -1 */
  gboolean         reveal_pending;  /* scroll to the selection when the next scene lands */

  char            *anchor_path;     /* keep this group's corner still across a relayout */
  double           anchor_wx, anchor_wy;

  GHashTable      *marks;           /* node id -> FbGraphMark */
  GHashTable      *group_marks;     /* FbGraphGroup* -> number of marked nodes inside */

  char            *query;
  GPtrArray       *matches;         /* FbNode* */
  GHashTable      *match_set;       /* FbNode* */
  int              match_index;

  /* Input state. */
  double           drag_x, drag_y;  /* origin when the drag began */
  gboolean         drag_minimap;
  double           zoom_begin;
  double           pointer_x, pointer_y;

  GtkWidget       *popover;
  GMenu           *menu;

  /* Drawing caches. */
  PangoContext    *pango;
  cairo_surface_t *minimap;         /* the whole scene, small; NULL when stale */
  double           minimap_scale;
};

void     _fb_graph_view_snapshot        (GtkWidget    *widget,
                                         GtkSnapshot  *snapshot);
void     _fb_graph_view_invalidate      (FbGraphView  *self);
/* The minimap's rectangle in widget coordinates; FALSE when it is not shown. */
gboolean _fb_graph_view_minimap_rect    (FbGraphView  *self,
                                         double       *x,
                                         double       *y,
                                         double       *width,
                                         double       *height);
void     _fb_graph_view_recompute_marks (FbGraphView  *self);

G_END_DECLS
