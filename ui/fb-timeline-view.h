/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The timeline of one inference: every kernel launch a bar on its lane (worker thread or CUDA
 * stream), the gaps between them left empty so that idle time shows, zoom (scroll, Ctrl+scroll,
 * pinch) and pan (drag, Shift+scroll) on the time axis, details on hover, and a click that
 * activates the launch's kernel. Only what is on screen is drawn, and launches narrower than a
 * pixel are merged, so that 10,000 launches draw within a frame. */
#pragma once

#include "fb-profile.h"

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define FB_TYPE_TIMELINE_VIEW (fb_timeline_view_get_type ())
G_DECLARE_FINAL_TYPE (FbTimelineView, fb_timeline_view, FB, TIMELINE_VIEW, GtkWidget)

GtkWidget *fb_timeline_view_new                 (void);
/* Shows profile's timeline whole (NULL: nothing). */
void       fb_timeline_view_set_profile         (FbTimelineView *self,
                                                 FbProfile      *profile);
FbProfile *fb_timeline_view_get_profile         (FbTimelineView *self);
/* The visible time range, in µs from the start of the inference. */
void       fb_timeline_view_get_range           (FbTimelineView *self,
                                                 double         *start_us,
                                                 double         *end_us);
void       fb_timeline_view_set_range           (FbTimelineView *self,
                                                 double          start_us,
                                                 double          end_us);
/* Zooms by factor (>1 in) keeping the time under widget x in place. */
void       fb_timeline_view_zoom_at             (FbTimelineView *self,
                                                 double          factor,
                                                 double          x);
/* The launch (index into the profile's timeline) under widget point (x, y), or -1. */
int        fb_timeline_view_span_at             (FbTimelineView *self,
                                                 double          x,
                                                 double          y);
/* Where launch index is drawn, in widget coordinates; FALSE when it is off screen. */
gboolean   fb_timeline_view_get_span_rect       (FbTimelineView *self,
                                                 guint           index,
                                                 graphene_rect_t *rect);
/* What a click at (x, y) does: activates the kernel of the launch there ("kernel-activated");
 * FALSE when there is none. */
gboolean   fb_timeline_view_click               (FbTimelineView *self,
                                                 double          x,
                                                 double          y);
/* Draws the launches of this kernel highlighted; G_MAXUINT for none. */
void       fb_timeline_view_set_selected_kernel (FbTimelineView *self,
                                                 guint           kernel);
/* The text of the hover tooltip for launch index. */
char      *fb_timeline_view_describe_span       (FbTimelineView *self,
                                                 guint           index);
/* Rectangles the last frame filled: fewer than launches when they were merged. */
guint      fb_timeline_view_get_n_drawn         (FbTimelineView *self);

G_END_DECLS
