/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The pass pipeline of one opened model, re-run in a worker thread after every toggle. Each run
 * goes on from the stages the last one left, so it recomputes only the stages that change, and
 * hands back an FbRun holding references to all of them.
 *
 * One run at a time: while a run is in flight its worker owns the pipeline, and nothing else
 * touches it; the views keep drawing the FbRun of the run before, whose stages stay alive
 * whatever the worker replaces. A runner dropped during a run lives until the run ends. */
#pragma once

#include "fb-run.h"

G_BEGIN_DECLS

typedef struct _FbRunner FbRunner;

/* Called in the main context, with the object given to fb_runner_run_async. */
typedef void (*FbRunProgress) (GObject *object,
                               guint    done,
                               guint    total);

/* Takes the imported graph: stage 0 of every run. title names the model. */
FbRunner *fb_runner_new        (FbGraph                 *imported,
                                const char              *title);
FbRunner *fb_runner_ref        (FbRunner                *runner);
void      fb_runner_unref      (FbRunner                *runner);
/* TRUE from fb_runner_run_async until its worker is done with the pipeline. */
gboolean  fb_runner_is_running (FbRunner                *runner);
/* Runs the pipeline with options in a worker thread; object is the task's source object and
 * what progress (when given) is called with, for every stage done. A cancelled run keeps the
 * stages it finished for the next one. Fails with G_IO_ERROR_BUSY while another run is in
 * flight: the caller queues its change until that one's callback. */
void      fb_runner_run_async  (FbRunner                *runner,
                                GObject                 *object,
                                const FbPipelineOptions *options,
                                GCancellable            *cancellable,
                                FbRunProgress            progress,
                                GAsyncReadyCallback      callback,
                                gpointer                 user_data);
FbRun    *fb_runner_run_finish (GAsyncResult            *result,
                                GError                 **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbRunner, fb_runner_unref)

G_END_DECLS
