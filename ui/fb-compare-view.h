/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Two graph views side by side: the graph before a pass on the left, after it on the right, with
 * pan, zoom, open groups and selection kept in step, and what the pass added, removed, changed
 * or fused coloured. Each stage's layout is seeded by the one before, so what a pass did not
 * touch stays where it was. */
#pragma once

#include "fb-graph-view.h"
#include "fb-run.h"

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define FB_TYPE_COMPARE_VIEW (fb_compare_view_get_type ())
G_DECLARE_FINAL_TYPE (FbCompareView, fb_compare_view, FB, COMPARE_VIEW, GtkWidget)

GtkWidget     *fb_compare_view_new             (void);
/* Shows run (NULL: nothing), keeping the stage index, the selection, and the layouts of the
 * stages it shares with the run shown before; both sides then show what the stage changed, as
 * fb_compare_view_set_stage () does. */
void           fb_compare_view_set_run         (FbCompareView *self,
                                                FbRun         *run);
FbRun         *fb_compare_view_get_run         (FbCompareView *self);
/* How both sides draw constants (FB_GRAPH_CONSTANTS_AS_ROWS at first): a change lays every
 * stage out again, keeping the stage, the open groups and the selection. */
void           fb_compare_view_set_constants   (FbCompareView    *self,
                                                FbGraphConstants  constants);
FbGraphConstants fb_compare_view_get_constants (FbCompareView    *self);
/* Shows stage index on the right and the stage before it on the left (stage 0 alone), the groups
 * holding what the pass added, removed or changed open and both scrolled to it once their
 * pictures are there (to the graph's top, when the pass changed nothing). */
void           fb_compare_view_set_stage       (FbCompareView *self,
                                                int            index);
int            fb_compare_view_get_stage       (FbCompareView *self);
/* Opens the groups holding what the stage on screen changed and scrolls both sides to it (to the
 * graph's top, when it changed nothing) once their pictures are there, as a new stage or run
 * does. */
void           fb_compare_view_show_changes    (FbCompareView *self);
FbGraphView   *fb_compare_view_get_before_view (FbCompareView *self);
FbGraphView   *fb_compare_view_get_after_view  (FbCompareView *self);
/* The view that last had the selection or the focus. */
FbGraphView   *fb_compare_view_get_active_view (FbCompareView *self);
/* The layout of a stage of the current run, made on first use (the same object for as long as
 * the stage stays in the runs shown). */
FbGraphLayout *fb_compare_view_get_layout      (FbCompareView *self,
                                                guint          index);
/* "Added by fuse-epilogue" and the like for node in view, or NULL. */
char          *fb_compare_view_describe_mark   (FbCompareView *self,
                                                FbGraphView   *view,
                                                const FbNode  *node);

G_END_DECLS
