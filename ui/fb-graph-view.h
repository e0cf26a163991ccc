/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The graph view: draws the scene of an FbGraphLayout with Cairo, lays out in a worker thread,
 * zooms (Ctrl+scroll, pinch, + and −), pans (drag, scroll), fits (Ctrl+0), shows a minimap,
 * selects by click, walks along edges with the arrow keys, searches, and expands a collapsed
 * group on double-click. */
#pragma once

#include "fb-graph-layout.h"

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define FB_TYPE_GRAPH_VIEW (fb_graph_view_get_type ())
G_DECLARE_FINAL_TYPE (FbGraphView, fb_graph_view, FB, GRAPH_VIEW, GtkWidget)

/* How a node differs from the other side of a comparison. */
typedef enum {
  FB_GRAPH_MARK_NONE,
  FB_GRAPH_MARK_ADDED,           /* new in this stage */
  FB_GRAPH_MARK_REMOVED,         /* gone in the next stage */
  FB_GRAPH_MARK_CHANGED,         /* same id, different op, inputs or attributes */
  FB_GRAPH_MARK_FUSED,           /* becomes part of a fused node in the next stage */
} FbGraphMark;

typedef enum {
  FB_GRAPH_WALK_UP,              /* to a producer */
  FB_GRAPH_WALK_DOWN,            /* to a consumer */
  FB_GRAPH_WALK_LEFT,            /* to the neighbour on the left, same rank */
  FB_GRAPH_WALK_RIGHT,
} FbGraphWalk;

#define FB_GRAPH_VIEW_MIN_ZOOM 0.02
#define FB_GRAPH_VIEW_MAX_ZOOM 4.0
/* The least zoom of a first picture: below it, the text of the boxes is too small to read. */
#define FB_GRAPH_VIEW_READABLE_ZOOM 0.6

GtkWidget     *fb_graph_view_new                (void);
/* Shows layout (NULL: nothing). Keeps the viewport, the expanded groups and the selection (by
 * node id, then by name); the very first layout is fitted into the view
 * (or, when that would make it unreadable, its top is shown). */
void           fb_graph_view_set_layout         (FbGraphView   *self,
                                                 FbGraphLayout *layout);
FbGraphLayout *fb_graph_view_get_layout         (FbGraphView   *self);
FbGraph       *fb_graph_view_get_graph          (FbGraphView   *self);
/* The scene on screen; NULL until the first layout is done. */
FbGraphScene  *fb_graph_view_get_scene          (FbGraphView   *self);
/* TRUE while a layout runs (the "busy" property). */
gboolean       fb_graph_view_is_busy            (FbGraphView   *self);
/* The last layout error, or NULL. */
const char    *fb_graph_view_get_error          (FbGraphView   *self);

/* node id (GUINT_TO_POINTER) -> FbGraphMark (GINT_TO_POINTER); NULL clears. */
void           fb_graph_view_set_marks          (FbGraphView   *self,
                                                 GHashTable    *marks);
FbGraphMark    fb_graph_view_get_mark           (FbGraphView   *self,
                                                 const FbNode  *node);

/* The viewport: the scene point at the top-left corner of the widget, and the zoom. */
void           fb_graph_view_get_viewport       (FbGraphView   *self,
                                                 double        *x,
                                                 double        *y,
                                                 double        *zoom);
void           fb_graph_view_set_viewport       (FbGraphView   *self,
                                                 double         x,
                                                 double         y,
                                                 double         zoom);
double         fb_graph_view_get_zoom           (FbGraphView   *self);
/* Multiplies the zoom by factor, keeping the scene point under widget point (wx, wy) in place. */
void           fb_graph_view_zoom_at            (FbGraphView   *self,
                                                 double         factor,
                                                 double         wx,
                                                 double         wy);
void           fb_graph_view_zoom_in            (FbGraphView   *self);
void           fb_graph_view_zoom_out           (FbGraphView   *self);
/* All of the graph when its text stays readable; a graph much taller than wide is fitted to the
 * width instead, from its top. */
void           fb_graph_view_zoom_to_fit        (FbGraphView   *self);
/* Scrolls and zooms to show the n_rects scene rectangles (graphene_rect_t): all of them when
 * that keeps the text readable, else the readable screenful that holds the most. Waits for the
 * view's size when it has none yet; replaces the first picture's fit. Until the viewport is
 * moved, a new size of the view shows them again. */
void           fb_graph_view_show_rects         (FbGraphView           *self,
                                                 const graphene_rect_t *rects,
                                                 guint                  n_rects);
/* Shows the graph as its first picture does (all of it when readable, else its top), now or,
 * when the view has no size or no scene of its layout yet, once it has. Until the viewport is
 * moved, a new size of the view shows it again. */
void           fb_graph_view_show_top           (FbGraphView           *self);
void           fb_graph_view_widget_to_scene    (FbGraphView   *self,
                                                 double         wx,
                                                 double         wy,
                                                 double        *sx,
                                                 double        *sy);
void           fb_graph_view_scene_to_widget    (FbGraphView   *self,
                                                 double         sx,
                                                 double         sy,
                                                 double        *wx,
                                                 double        *wy);

/* The selected node, or NULL (also NULL when a group or an initializer's row is selected; a
 * Constant node's row selects the Constant node). */
FbNode        *fb_graph_view_get_selected_node  (FbGraphView   *self);
/* The constant tensor selected: the output of a selected Constant node (a box or a row), or the
 * initializer whose row is selected; NULL otherwise. */
const FbValue *fb_graph_view_get_selected_constant (FbGraphView *self);
FbGraphGroup  *fb_graph_view_get_selected_group (FbGraphView   *self);
/* Selects the node of that id, opening the groups that hide it; FALSE if there is none. */
gboolean       fb_graph_view_select_node        (FbGraphView   *self,
                                                 guint          node_id);
gboolean       fb_graph_view_select_group       (FbGraphView   *self,
                                                 const char    *path);
/* Selects the constant value of that id: its Constant node, or its rows when it is an
 * initializer; FALSE when this graph has no such constant. */
gboolean       fb_graph_view_select_constant    (FbGraphView   *self,
                                                 guint          value_id);
/* Selects what a click at widget point (wx, wy) selects: a constant's row, a box or nothing;
 * TRUE when something is selected. */
gboolean       fb_graph_view_select_at          (FbGraphView   *self,
                                                 double         wx,
                                                 double         wy);
void           fb_graph_view_clear_selection    (FbGraphView   *self);
/* Moves the selection along an edge (or sideways); FALSE when there is nowhere to go. */
gboolean       fb_graph_view_walk               (FbGraphView   *self,
                                                 FbGraphWalk    direction);

GHashTable    *fb_graph_view_get_expanded       (FbGraphView   *self);
gboolean       fb_graph_view_get_group_expanded (FbGraphView   *self,
                                                 const char    *path);
void           fb_graph_view_set_group_expanded (FbGraphView   *self,
                                                 const char    *path,
                                                 gboolean       expanded);
/* Opens every group of paths (a set of group paths), with one new layout. */
void           fb_graph_view_expand_groups      (FbGraphView   *self,
                                                 GHashTable    *paths);

/* Finds nodes whose name, op or an attribute ("name=value") contains text, case-insensitively,
 * and selects the first; returns how many. An empty text clears the search. */
guint          fb_graph_view_search             (FbGraphView   *self,
                                                 const char    *text);
gboolean       fb_graph_view_search_next        (FbGraphView   *self,
                                                 gboolean       backward);
guint          fb_graph_view_get_n_matches      (FbGraphView   *self);

/* What the view draws over the graph. */
typedef enum {
  FB_GRAPH_OVERLAY_LEGEND,       /* the painted profile's legend */
  FB_GRAPH_OVERLAY_MINIMAP,      /* the whole graph, small, with the viewport on it */
} FbGraphOverlay;

/* Where overlay sits in widget coordinates, frame included, for the viewport now (moved off the
 * boxes where it can be); FALSE when it is not shown. */
gboolean       fb_graph_view_get_overlay_rect   (FbGraphView     *self,
                                                 FbGraphOverlay   overlay,
                                                 graphene_rect_t *rect);

G_END_DECLS
