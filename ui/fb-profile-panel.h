/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The profile panel under the graphs: a header that says what was profiled where (and, when the
 * profile does not fit what is on screen, why it is not painted), the metric the graphs are
 * painted by, and pages for the timeline of one inference, the top kernels (a sortable table),
 * the roofline, the diagnosis, and, given the profile before, the biggest gains and losses. The
 * header collapses the pages away. Whatever the user picks in a page is said through
 * "kernel-activated" (a kernel id) or "node-activated" (an original ONNX node name); the window
 * turns that into a node of the stage on screen. */
#pragma once

#include "fb-profile-overlay.h"
#include "fb-roofline-view.h"
#include "fb-timeline-view.h"

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define FB_TYPE_PROFILE_PANEL (fb_profile_panel_get_type ())
G_DECLARE_FINAL_TYPE (FbProfilePanel, fb_profile_panel, FB, PROFILE_PANEL, GtkWidget)

GtkWidget       *fb_profile_panel_new              (void);
/* Shows profile (NULL: nothing) and, when previous is given, what changed against it. */
void             fb_profile_panel_set_profile      (FbProfilePanel *self,
                                                    FbProfile      *profile,
                                                    FbProfile      *previous);
FbProfile       *fb_profile_panel_get_profile      (FbProfilePanel *self);
/* The model profiles are shown for: the A/B lists name each original node with its operator
 * ("Conv · n138"). NULL: names alone. */
void             fb_profile_panel_set_model        (FbProfilePanel *self,
                                                    FbModel        *model);
/* A line in the header, shown as a warning ("recorded for another pipeline: …"); NULL hides. */
void             fb_profile_panel_set_note         (FbProfilePanel *self,
                                                    const char     *note);
const char      *fb_profile_panel_get_note         (FbProfilePanel *self);
/* The header's line: device, median per inference, and for a profile with untraced figures
 * the traced median and the tracer's overhead beside it. */
const char      *fb_profile_panel_get_summary      (FbProfilePanel *self);
/* The "metric" property: what the graphs are painted by. */
void             fb_profile_panel_set_metric       (FbProfilePanel *self,
                                                    FbProfileMetric metric);
FbProfileMetric  fb_profile_panel_get_metric       (FbProfilePanel *self);
/* The "expanded" property: the pages shown, or only the header. */
void             fb_profile_panel_set_expanded     (FbProfilePanel *self,
                                                    gboolean        expanded);
gboolean         fb_profile_panel_get_expanded     (FbProfilePanel *self);
/* Shows kernel as the selection in every page (G_MAXUINT: none), without saying so. */
void             fb_profile_panel_select_kernel    (FbProfilePanel *self,
                                                    guint           kernel);
/* "timeline", "kernels", "roofline", "diagnosis", "changes". */
void             fb_profile_panel_set_page         (FbProfilePanel *self,
                                                    const char     *page);
FbTimelineView  *fb_profile_panel_get_timeline     (FbProfilePanel *self);
FbRooflineView  *fb_profile_panel_get_roofline     (FbProfilePanel *self);
GtkColumnView   *fb_profile_panel_get_kernel_table (FbProfilePanel *self);
/* A/B: the original nodes listed as gains (faster, first the most) and losses, and the
 * change of one of them in µs. */
guint            fb_profile_panel_get_n_gains      (FbProfilePanel *self);
guint            fb_profile_panel_get_n_losses     (FbProfilePanel *self);
const char      *fb_profile_panel_get_change       (FbProfilePanel *self,
                                                    gboolean        gain,
                                                    guint           index,
                                                    double         *delta_us);

G_END_DECLS
