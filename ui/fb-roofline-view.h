/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The roofline of a profile, drawn with Cairo: arithmetic intensity (flops per byte) across,
 * achieved GFLOP/s up, both on log scales; the device's ceilings as lines (the memory slope and
 * the compute roof, labelled measured or datasheet); one dot per kernel, its area by its time,
 * blue when memory-bound and orange when compute-bound. Hover for details; a click activates
 * the kernel. Kernels without flops (pure data movement) have no place on it and are counted
 * in a note instead. */
#pragma once

#include "fb-profile.h"

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define FB_TYPE_ROOFLINE_VIEW (fb_roofline_view_get_type ())
G_DECLARE_FINAL_TYPE (FbRooflineView, fb_roofline_view, FB, ROOFLINE_VIEW, GtkWidget)

GtkWidget *fb_roofline_view_new                 (void);
void       fb_roofline_view_set_profile         (FbRooflineView *self,
                                                 FbProfile      *profile);
/* Where kernel (its id) is drawn, in widget coordinates; FALSE when it has no dot. */
gboolean   fb_roofline_view_get_kernel_point    (FbRooflineView   *self,
                                                 guint             kernel,
                                                 graphene_point_t *point);
/* The kernel whose dot is under (x, y), or G_MAXUINT. */
guint      fb_roofline_view_kernel_at           (FbRooflineView *self,
                                                 double          x,
                                                 double          y);
/* A click at (x, y): activates the kernel there ("kernel-activated"); FALSE when none. */
gboolean   fb_roofline_view_click               (FbRooflineView *self,
                                                 double          x,
                                                 double          y);
void       fb_roofline_view_set_selected_kernel (FbRooflineView *self,
                                                 guint           kernel);
/* How many kernels have a dot. */
guint      fb_roofline_view_get_n_dots          (FbRooflineView *self);

G_END_DECLS
