/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What a stage changed, as each side of the comparison shows it (fb-compare-focus.c): the groups
 * to open around it and the boxes to bring on screen. Shared by fb-compare-view.c alone. */
#pragma once

#include "fb-graph-view.h"
#include "fb-run.h"

G_BEGIN_DECLS

/* Adds to paths (a set of group paths that owns its keys) the groups of layout around the nodes
 * stage changed on that side (before: the left), change by change, as long as the groups
 * opened hold no more than *budget members together; what is opened is taken off *budget. The
 * groups of the first change are opened whatever the budget. */
void _fb_compare_add_change_groups (FbStage       *stage,
                                    FbGraphLayout *layout,
                                    gboolean       before,
                                    GHashTable    *paths,
                                    guint         *budget);
/* Appends to rects (graphene_rect_t) the boxes of view's scene that show what stage changed on
 * that side: a Constant drawn as a row, its reader's box; a node in a collapsed group, the
 * group's. */
void _fb_compare_add_change_rects  (FbStage       *stage,
                                    FbGraphView   *view,
                                    gboolean       before,
                                    GArray        *rects);

G_END_DECLS
