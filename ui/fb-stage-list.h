/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The sidebar of stages: every stage of a run, in pipeline order, with the check boxes that
 * switch passes off. */
#pragma once

#include "fb-run.h"

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define FB_TYPE_STAGE_LIST (fb_stage_list_get_type ())
G_DECLARE_FINAL_TYPE (FbStageList, fb_stage_list, FB, STAGE_LIST, GtkWidget)

GtkWidget *fb_stage_list_new          (void);
/* Shows run's stages (NULL: none), keeping the selected stage by name. */
void       fb_stage_list_set_run      (FbStageList *self,
                                       FbRun       *run);
FbRun     *fb_stage_list_get_run      (FbStageList *self);
/* The selected stage (the "selected" property), or -1. */
int        fb_stage_list_get_selected (FbStageList *self);
void       fb_stage_list_select       (FbStageList *self,
                                       int          index);
guint      fb_stage_list_get_n_rows   (FbStageList *self);
/* Ticks or unticks the pass's check box, as a click would ("pass-toggled" follows). */
gboolean   fb_stage_list_set_pass_enabled (FbStageList *self,
                                           const char  *pass,
                                           gboolean     enabled);

/* Whether the pass's check box is ticked; FALSE for a name that is no pass of the list. */
gboolean   fb_stage_list_get_pass_enabled (FbStageList *self,
                                           const char  *pass);

G_END_DECLS
