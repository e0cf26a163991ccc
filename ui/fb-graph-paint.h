/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Drawing a laid-out graph (FbGraphScene) with Cairo and Pango, and nothing of GTK: the graph
 * view paints its tiles with it, and graph pictures (SVG, PDF, PNG) are drawn by the same code,
 * so an exported picture looks like the window. */
#pragma once

#include "fb-graph-layout.h"
#include "fb-graph-view.h"   /* FbGraphMark */

#include <cairo.h>
#include <pango/pangocairo.h>

G_BEGIN_DECLS

typedef struct { double r, g, b; } FbGraphRgb;

typedef struct {
  cairo_t              *cr;
  PangoLayout          *text;          /* any layout of the right context; its text is replaced */
  PangoFontDescription *title_font;
  PangoFontDescription *small_font;
  PangoFontDescription *mono_font;
  gboolean              dark;
  double                zoom;          /* below thresholds, text and edge labels are left out */
  double                x0, y0, x1, y1;  /* the part of the scene to draw */
  FbGraphRgb            fg;
  FbGraphRgb            bg;
  /* What the view adds on top; a picture leaves them NULL and -1. */
  GHashTable           *marks;         /* node id -> FbGraphMark, or NULL */
  GHashTable           *group_marks;   /* FbGraphGroup* -> number of marked nodes, or NULL */
  GHashTable           *match_set;     /* FbNode* of the search matches, or NULL */
  int                   selected_item; /* scene item, or -1 */
  const FbValue        *selected_constant; /* its rows are drawn selected (the item is one of
                                              their readers, not itself selected), or NULL */
  struct _FbProfileOverlay *overlay;   /* a profile painted on the boxes, or NULL */
  const struct _FbGraphLabels *labels; /* where edge labels go (fb-graph-labels.h), or NULL for
                                          Graphviz's label points as they are */
} FbGraphPaint;

/* Sets fg and bg for a light or dark background and the three fonts from context's font
 * (free them with fb_graph_paint_clear_fonts); the rest is the caller's. */
void     fb_graph_paint_init_style  (FbGraphPaint *paint,
                                     PangoContext *context,
                                     gboolean      dark);
void     fb_graph_paint_clear_fonts (FbGraphPaint *paint);
/* Frames, then edges, then boxes, of the part of scene that paint covers. */
void     fb_graph_paint_scene       (FbGraphPaint *paint,
                                     FbGraphScene *scene);
/* The colour an item is shown in at a glance (the minimap): its border colour. */
FbGraphRgb fb_graph_paint_item_color (const FbGraphPaint *paint,
                                      const FbSceneItem  *item);
extern const FbGraphRgb fb_graph_paint_accent;
void     fb_graph_paint_rounded_rect (cairo_t *cr,
                                      double   x,
                                      double   y,
                                      double   w,
                                      double   h,
                                      double   r);

G_END_DECLS
