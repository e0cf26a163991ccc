/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One finished run of the pass pipeline over a model: its stages, immutable once made, shared
 * by reference between the stage list, the compare view and the layouts drawn from it.
 *
 * Every run builds its own pipeline from a copy of the imported graph: a re-run of the same
 * pipeline frees the stages it redoes, and the views may still be drawing them while the next
 * run works in its thread. */
#pragma once

#include "fb-pipeline.h"

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _FbRun FbRun;

/* Called in the main context, with the object given to fb_run_execute_async. */
typedef void (*FbRunProgress) (GObject *object,
                               guint    done,
                               guint    total);

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
/* Index of the stage named name, or -1. */
int                      fb_run_find_stage      (FbRun      *run,
                                                 const char *name);

/* Runs the pipeline over a copy of imported (which must stay unchanged until the callback) in a
 * worker thread. progress, when given, is called for every stage done. */
void                     fb_run_execute_async   (GObject                 *object,
                                                 const FbGraph           *imported,
                                                 const char              *title,
                                                 const FbPipelineOptions *options,
                                                 GCancellable            *cancellable,
                                                 FbRunProgress            progress,
                                                 GAsyncReadyCallback      callback,
                                                 gpointer                 user_data);
FbRun                   *fb_run_execute_finish  (GAsyncResult            *result,
                                                 GError                 **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbRun, fb_run_unref)

G_END_DECLS
