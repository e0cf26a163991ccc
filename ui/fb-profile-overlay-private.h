/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The graph view's drawing calls these where a profile is painted (fb-graph-view-draw.c). */
#pragma once

#include "fb-profile-overlay.h"

#include <cairo.h>
#include <pango/pangocairo.h>

G_BEGIN_DECLS

typedef struct _FbProfileOverlay FbProfileOverlay;

/* An overlay of profile (previous: the A/B profile, may be NULL) painted by metric; attributed
 * on the first _fb_profile_overlay_sync. */
FbProfileOverlay *_fb_profile_overlay_new (FbProfile       *profile,
                                           FbProfile       *previous,
                                           FbProfileMetric  metric);
void     _fb_profile_overlay_free       (FbProfileOverlay *overlay);
/* Attributes the profile on the graph of layout if it is not the one attributed last. */
void     _fb_profile_overlay_sync       (FbProfileOverlay *overlay,
                                         FbGraphLayout    *layout);
/* Over the fill of the box whose path is current in cr (kept): the heat colour of node or of the
 * nodes inside group. */
void     _fb_profile_overlay_tint       (FbProfileOverlay   *overlay,
                                         cairo_t            *cr,
                                         const FbNode       *node,
                                         const FbGraphGroup *group);
/* The badge along the bottom edge of the box (x, y, width, height), within 6 px outside it. */
void     _fb_profile_overlay_badge      (FbProfileOverlay   *overlay,
                                         cairo_t            *cr,
                                         PangoLayout        *text,
                                         const FbNode       *node,
                                         const FbGraphGroup *group,
                                         double              x,
                                         double              y,
                                         double              width,
                                         double              height);
/* The legend's box: it sits 12 px in from the left and bottom edges, and is left out of a view
 * that has no room for it. */
#define FB_PROFILE_LEGEND_WIDTH  280.0
#define FB_PROFILE_LEGEND_HEIGHT  52.0
#define FB_PROFILE_LEGEND_INSET   12.0

/* The legend at the bottom-left of a view of that size (widget coordinates). */
void     _fb_profile_overlay_legend     (FbProfileOverlay *overlay,
                                         cairo_t          *cr,
                                         PangoLayout      *text,
                                         gboolean          dark,
                                         double           width,
                                         double           height);
/* The legend with its top-left corner at (x, y); where it goes is the caller's to choose. */
void     _fb_profile_overlay_legend_at  (FbProfileOverlay *overlay,
                                         cairo_t          *cr,
                                         PangoLayout      *text,
                                         gboolean          dark,
                                         double            x,
                                         double            y);

G_END_DECLS
