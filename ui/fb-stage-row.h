/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One stage in the stage list: the pass name, what it did, its time, nodes before → after, and
 * a check box that switches the pass off. */
#pragma once

#include "fb-pipeline.h"

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define FB_TYPE_STAGE_ROW (fb_stage_row_get_type ())
G_DECLARE_FINAL_TYPE (FbStageRow, fb_stage_row, FB, STAGE_ROW, GtkListBoxRow)

/* toggleable: whether the stage is a pass that can be switched off ("import" and "final" are
 * not). The row copies what it shows. */
GtkWidget  *fb_stage_row_new        (const FbStage *stage,
                                     guint          index,
                                     gboolean       toggleable);
guint       fb_stage_row_get_index  (FbStageRow    *self);
const char *fb_stage_row_get_name   (FbStageRow    *self);
gboolean    fb_stage_row_get_active (FbStageRow    *self);
void        fb_stage_row_set_active (FbStageRow    *self,
                                     gboolean       active);

G_END_DECLS
