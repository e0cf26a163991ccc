/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What one run of the pass pipeline made: references to its stages, immutable once made, shared
 * by reference between the stage list, the compare view and the layouts drawn from them. A stage
 * that a re-run kept is the same object in the run before and the run after, which is how the
 * views know what they need not lay out again. Made by FbRunner. */
#pragma once

#include "fb-pipeline.h"

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _FbRun FbRun;

/* stages: FbStage*, each with a reference (fb_pipeline_dup_stages); the run takes the array.
 * options and title are copied. */
FbRun                   *fb_run_new             (GPtrArray               *stages,
                                                 const FbPipelineOptions *options,
                                                 const char              *title);
FbRun                   *fb_run_ref             (FbRun *run);
void                     fb_run_unref           (FbRun *run);
guint                    fb_run_n_stages        (FbRun *run);
FbStage                 *fb_run_get_stage       (FbRun *run,
                                                 guint  index);
const FbPipelineOptions *fb_run_get_options     (FbRun *run);
/* What was run: the file name, or a name for a model that came from memory. */
const char              *fb_run_get_title       (FbRun *run);
/* Total time of the passes. */
double                   fb_run_get_wall_ms     (FbRun *run);
/* Why the passes did not run after the import (a node this project cannot compute yet), or
 * NULL when they all ran. Such a run holds the import stage alone, so that the model is drawn
 * with the nodes in question marked. */
const char              *fb_run_get_stopped     (FbRun *run);
void                     fb_run_set_stopped     (FbRun      *run,
                                                 const char *why);
/* Index of the stage named name, or -1. */
int                      fb_run_find_stage      (FbRun      *run,
                                                 const char *name);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbRun, fb_run_unref)

G_END_DECLS
