/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shared by the files of the graph view: its state and API (fb-graph-view.c), selection
 * (fb-graph-view-select.c), input (fb-graph-view-input.c) and drawing (fb-graph-view-draw.c). */
#pragma once

#include "fb-graph-view.h"

G_BEGIN_DECLS

#define FB_MINIMAP_WIDTH   180.0
#define FB_MINIMAP_HEIGHT  140.0
#define FB_MINIMAP_MARGIN  12.0
#define FB_TILE_SIZE       256      /* widget pixels */

struct _FbGraphView {
  GtkWidget        parent_instance;

  FbGraphLayout   *layout;
  FbGraphScene    *scene;
  GHashTable      *expanded;        /* group paths */
  GCancellable    *cancellable;     /* of the layout in flight */
  guint            generation;      /* of the layout in flight: late results are dropped */
  guint            relayout_source; /* the idle that starts the next layout, or 0 */
  char            *error;
  gboolean         fit_pending;     /* fit once the first scene and a size are there */

  double           origin_x;        /* scene point at the widget's top-left */
  double           origin_y;
  double           zoom;

  gboolean         has_selection;
  guint            selected_id;     /* the selected node, when selected_path is NULL and
                                       selected_value is FALSE */
  char            *selected_name;   /* its name, to find it again in another stage */
  char            *selected_path;   /* the selected group */
  gboolean         selected_value;  /* an initializer's row: selected_id and selected_name are
                                       the value's */
  guint            selected_reader; /* the node whose row of the selected constant was clicked,
                                       0: its first reader */
  int              selected_item;   /* its item in the scene (a constant's: its reader's), -1 */
  const FbValue   *selected_constant; /* the constant whose rows are selected, or NULL */
  gboolean         reveal_pending;  /* scroll to the selection when the next scene lands */
  GArray          *focus_rects;     /* graphene_rect_t: fb_graph_view_show_rects () waiting
                                       for the view's size, or NULL */

  char            *anchor_path;     /* keep this group's corner still across a relayout */
  double           anchor_wx, anchor_wy;

  GHashTable      *marks;           /* node id -> FbGraphMark */
  struct _FbProfileOverlay *overlay;/* the profile painted on it (fb-profile-overlay.c), or NULL */
  int              overlay_metric;  /* FbProfileMetric, kept while no profile is painted */
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
  GHashTable      *tiles;           /* (tx, ty) -> cairo_surface_t, painted at tiles_zoom */
  double           tiles_zoom;
  int              tiles_scale;
  cairo_surface_t *minimap;         /* the whole scene, small; NULL when stale */
  struct _FbGraphLabels *labels;    /* edge labels placed for labels_scene (fb-graph-labels.h) */
  FbGraphScene    *labels_scene;
  double           minimap_scale;
};

static inline double
_fb_graph_view_width (FbGraphView *self)
{
  return MAX (1, gtk_widget_get_width (GTK_WIDGET (self)));
}

static inline double
_fb_graph_view_height (FbGraphView *self)
{
  return MAX (1, gtk_widget_get_height (GTK_WIDGET (self)));
}

/* fb-graph-view.c */
void     _fb_graph_view_relayout        (FbGraphView  *self);
void     _fb_graph_view_reveal_item     (FbGraphView  *self,
                                         int           index);
void     _fb_graph_view_emit_selection_changed     (FbGraphView *self);
void     _fb_graph_view_emit_group_toggled         (FbGraphView *self,
                                                    const char  *path,
                                                    gboolean     expanded);
void     _fb_graph_view_emit_populate_context_menu (FbGraphView *self,
                                                    FbNode      *node);
/* fb-graph-view-fit.c: both once the view has a size and a scene. */
void     _fb_graph_view_show_first_picture (FbGraphView *self);
/* Shows focus_rects, and drops them. */
void     _fb_graph_view_apply_focus     (FbGraphView  *self);
/* fb-graph-view-select.c */
int      _fb_graph_view_resolve_selection (FbGraphView *self);
void     _fb_graph_view_select_item     (FbGraphView  *self,
                                         int           index,
                                         gboolean      reveal);
/* Selects what a click at widget point (wx, wy) lands on: a constant's row, a box, nothing. */
void     _fb_graph_view_select_at       (FbGraphView  *self,
                                         double        wx,
                                         double        wy);
/* fb-graph-view-input.c */
void     _fb_graph_view_init_input      (FbGraphView  *self);
/* fb-graph-view-draw.c */
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
