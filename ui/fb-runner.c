/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-runner.h"
#include "fb-main-thread.h"

struct _FbRunner {
  gatomicrefcount  ref_count;
  FbPipeline      *pipeline;     /* only the worker of the run in flight touches it */
  char            *title;
  int              running;      /* atomic: a worker owns the pipeline */
};

typedef struct {
  FbRunner          *runner;     /* with a reference: the pipeline outlives the run */
  FbPipelineOptions *options;
  FbRunProgress      progress;
  GObject           *object;
  GMainContext      *context;
} Job;

typedef struct {
  FbRunProgress progress;
  GObject      *object;
  guint         done, total;
} Progress;

FbRunner *
fb_runner_new (FbGraph    *imported,
               const char *title)
{
  FbRunner *runner;

  g_return_val_if_fail (imported != NULL && imported->parent == NULL, NULL);

  runner = g_new0 (FbRunner, 1);
  g_atomic_ref_count_init (&runner->ref_count);
  runner->pipeline = fb_pipeline_new (imported);
  runner->title = g_strdup (title != NULL ? title : "model");
  return runner;
}

FbRunner *
fb_runner_ref (FbRunner *runner)
{
  g_return_val_if_fail (runner != NULL, NULL);

  g_atomic_ref_count_inc (&runner->ref_count);
  return runner;
}

void
fb_runner_unref (FbRunner *runner)
{
  g_return_if_fail (runner != NULL);

  if (!g_atomic_ref_count_dec (&runner->ref_count))
    return;
  /* The last reference of a run in flight is its job's, dropped after the worker stopped. */
  fb_pipeline_free (runner->pipeline);
  g_free (runner->title);
  g_free (runner);
}

gboolean
fb_runner_is_running (FbRunner *runner)
{
  g_return_val_if_fail (runner != NULL, FALSE);
  return g_atomic_int_get (&runner->running);
}

static void
job_free (gpointer data)
{
  Job *job = data;

  fb_runner_unref (job->runner);
  fb_pipeline_options_free (job->options);
  g_clear_object (&job->object);
  g_main_context_unref (job->context);
  g_free (job);
}

static gboolean
deliver_progress (gpointer data)
{
  Progress *p = data;

  p->progress (p->object, p->done, p->total);
  return G_SOURCE_REMOVE;
}

static void
progress_free (gpointer data)
{
  Progress *p = data;

  g_object_unref (p->object);
  g_free (p);
}

static void
on_progress (guint    done,
             guint    total,
             gpointer data)
{
  Job *job = data;
  Progress *p;

  if (job->progress == NULL)
    return;
  p = g_new (Progress, 1);
  p->progress = job->progress;
  p->object = g_object_ref (job->object);
  p->done = done;
  p->total = total;
  fb_main_thread_post (job->context, deliver_progress, p, progress_free);
}

static void
run_thread (GTask        *task,
            gpointer      source_object,
            gpointer      task_data,
            GCancellable *cancellable)
{
  Job *job = task_data;
  FbRunner *runner = job->runner;
  GError *error = NULL;
  GPtrArray *stages = NULL;

  /* The references are taken here, before the next run can start: the run handed back stays
   * whole while later runs replace stages in the pipeline. */
  FbRun *run;

  /* A model with nodes this project cannot compute yet still loaded: its import stage is drawn,
   * and the run says why the passes stopped there. */
  if (fb_pipeline_run (runner->pipeline, job->options, cancellable, on_progress, job, &error) ||
      (g_error_matches (error, FB_PIPELINE_ERROR, FB_PIPELINE_ERROR_UNSUPPORTED) &&
       fb_pipeline_n_stages (runner->pipeline) > 0))
    stages = fb_pipeline_dup_stages (runner->pipeline);
  g_atomic_int_set (&runner->running, FALSE);

  if (stages == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  run = fb_run_new (stages, job->options, runner->title);
  if (error != NULL)
    fb_run_set_stopped (run, error->message);
  g_clear_error (&error);
  g_task_return_pointer (task, run, (GDestroyNotify) fb_run_unref);
}

void
fb_runner_run_async (FbRunner                *runner,
                     GObject                 *object,
                     const FbPipelineOptions *options,
                     GCancellable            *cancellable,
                     FbRunProgress            progress,
                     GAsyncReadyCallback      callback,
                     gpointer                 user_data)
{
  g_autoptr(GTask) task = NULL;
  Job *job;

  g_return_if_fail (runner != NULL);
  g_return_if_fail (G_IS_OBJECT (object));
  g_return_if_fail (options != NULL);

  task = g_task_new (object, cancellable, callback, user_data);
  g_task_set_source_tag (task, fb_runner_run_async);
  if (!g_atomic_int_compare_and_exchange (&runner->running, FALSE, TRUE))
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_BUSY,
                               "%s: the passes are still running", runner->title);
      return;
    }

  job = g_new0 (Job, 1);
  job->runner = fb_runner_ref (runner);
  job->options = fb_pipeline_options_copy (options);
  job->progress = progress;
  job->object = g_object_ref (object);
  job->context = g_main_context_ref_thread_default ();
  g_task_set_task_data (task, job, job_free);
  g_task_run_in_thread (task, run_thread);
}

FbRun *
fb_runner_run_finish (GAsyncResult *result,
                      GError      **error)
{
  g_return_val_if_fail (G_IS_TASK (result), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == fb_runner_run_async, NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
