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

/* A corner of the view an overlay (the legend, the minimap) sits in. */
typedef enum {
  FB_OVERLAY_BOTTOM_LEFT,
  FB_OVERLAY_BOTTOM_RIGHT,
  FB_OVERLAY_TOP_LEFT,
  FB_OVERLAY_TOP_RIGHT,
  FB_N_OVERLAY_CORNERS,
} FbOverlayCorner;

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
  /* The picture last chosen for the user (the graph's top, or rects), held while nobody moves
     the viewport: when the view's size changes (a pane shown beside it, a panel under it) it is
     chosen again for the new size instead of being cut off. */
  gboolean         held;
  GArray          *held_rects;      /* graphene_rect_t, or NULL: the graph's top */
  double           held_x, held_y, held_zoom;
  int              held_width, held_height;

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
  FbOverlayCorner  legend_corner;   /* where the overlays sit (fb-graph-view-overlays.c) */
  FbOverlayCorner  minimap_corner;
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
/* fb-graph-view-fit.c: both once the view has a size and a scene, and both hold what they
 * chose. */
void     _fb_graph_view_show_first_picture (FbGraphView *self);
/* Shows focus_rects, and drops them. */
void     _fb_graph_view_apply_focus     (FbGraphView  *self);
/* After a new size: chooses the held picture again, when nothing moved the viewport since. */
void     _fb_graph_view_reapply_held    (FbGraphView  *self);
void     _fb_graph_view_drop_held       (FbGraphView  *self);
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
void     _fb_graph_view_recompute_marks (FbGraphView  *self);
/* fb-graph-view-overlays.c */
/* Moves the legend and the minimap off the boxes where a corner is free of them; FALSE when one
 * still covers a box. */
gboolean _fb_graph_view_place_overlays  (FbGraphView  *self);
/* The bands at the top and the bottom of the view (widget pixels) a fit leaves free for the
 * overlays, as placed for the viewport now: none when they cover no box. */
void     _fb_graph_view_fit_margins     (FbGraphView  *self,
                                         double       *top,
                                         double       *bottom);
/* The legend's rectangle in widget coordinates, where it was placed last; FALSE when none. */
gboolean _fb_graph_view_legend_rect     (FbGraphView     *self,
                                         graphene_rect_t *rect);
/* The minimap's picture in widget coordinates (its frame lies 4 px around it), where it was
 * placed last; FALSE when it is not shown. */
gboolean _fb_graph_view_minimap_rect    (FbGraphView  *self,
                                         double       *x,
                                         double       *y,
                                         double       *width,
                                         double       *height);

G_END_DECLS
