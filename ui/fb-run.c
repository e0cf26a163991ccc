/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-run.h"

struct _FbRun {
  gatomicrefcount    ref_count;
  FbPipeline        *pipeline;
  FbPipelineOptions *options;
  char              *title;
};

typedef struct {
  FbGraph           *graph;      /* the copy the pipeline will own */
  FbPipelineOptions *options;
  char              *title;
  FbRunProgress      progress;
  GObject           *object;
  GMainContext      *context;
} Job;

typedef struct {
  FbRunProgress progress;
  GObject      *object;
  guint         done, total;
} Progress;

FbRun *
fb_run_ref (FbRun *run)
{
  g_return_val_if_fail (run != NULL, NULL);

  g_atomic_ref_count_inc (&run->ref_count);
  return run;
}

void
fb_run_unref (FbRun *run)
{
  g_return_if_fail (run != NULL);

  if (!g_atomic_ref_count_dec (&run->ref_count))
    return;
  fb_pipeline_free (run->pipeline);
  fb_pipeline_options_free (run->options);
  g_free (run->title);
  g_free (run);
}

guint
fb_run_n_stages (FbRun *run)
{
  g_return_val_if_fail (run != NULL, 0);
  return fb_pipeline_n_stages (run->pipeline);
}

FbStage *
fb_run_get_stage (FbRun *run,
                  guint  index)
{
  g_return_val_if_fail (run != NULL, NULL);
  g_return_val_if_fail (index < fb_pipeline_n_stages (run->pipeline), NULL);
  return fb_pipeline_stage (run->pipeline, index);
}

const FbPipelineOptions *
fb_run_get_options (FbRun *run)
{
  g_return_val_if_fail (run != NULL, NULL);
  return run->options;
}

const char *
fb_run_get_title (FbRun *run)
{
  g_return_val_if_fail (run != NULL, NULL);
  return run->title;
}

double
fb_run_get_wall_ms (FbRun *run)
{
  double total = 0;

  g_return_val_if_fail (run != NULL, 0);

  for (guint i = 0; i < fb_pipeline_n_stages (run->pipeline); i++)
    total += fb_pipeline_stage (run->pipeline, i)->wall_ms;
  return total;
}

int
fb_run_find_stage (FbRun      *run,
                   const char *name)
{
  g_return_val_if_fail (run != NULL, -1);
  g_return_val_if_fail (name != NULL, -1);

  for (guint i = 0; i < fb_pipeline_n_stages (run->pipeline); i++)
    if (g_strcmp0 (fb_pipeline_stage (run->pipeline, i)->name, name) == 0)
      return i;
  return -1;
}

static void
job_free (gpointer data)
{
  Job *job = data;

  g_clear_pointer (&job->graph, fb_graph_free);
  fb_pipeline_options_free (job->options);
  g_free (job->title);
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
  g_main_context_invoke_full (job->context, G_PRIORITY_DEFAULT, deliver_progress, p, progress_free);
}

static void
execute_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  Job *job = task_data;
  g_autoptr(FbPipeline) pipeline = fb_pipeline_new (g_steal_pointer (&job->graph));
  GError *error = NULL;
  FbRun *run;

  if (!fb_pipeline_run (pipeline, job->options, cancellable, on_progress, job, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  run = g_new0 (FbRun, 1);
  g_atomic_ref_count_init (&run->ref_count);
  run->pipeline = g_steal_pointer (&pipeline);
  run->options = fb_pipeline_options_copy (job->options);
  run->title = g_strdup (job->title);
  g_task_return_pointer (task, run, (GDestroyNotify) fb_run_unref);
}

void
fb_run_execute_async (GObject                 *object,
                      const FbGraph           *imported,
                      const char              *title,
                      const FbPipelineOptions *options,
                      GCancellable            *cancellable,
                      FbRunProgress            progress,
                      GAsyncReadyCallback      callback,
                      gpointer                 user_data)
{
  g_autoptr(GTask) task = NULL;
  Job *job;

  g_return_if_fail (G_IS_OBJECT (object));
  g_return_if_fail (imported != NULL);
  g_return_if_fail (options != NULL);

  job = g_new0 (Job, 1);
  /* Copied here, on the caller's thread, where nothing else changes the graph. */
  job->graph = fb_graph_copy (imported);
  job->options = fb_pipeline_options_copy (options);
  job->title = g_strdup (title != NULL ? title : "model");
  job->progress = progress;
  job->object = g_object_ref (object);
  job->context = g_main_context_ref_thread_default ();

  task = g_task_new (object, cancellable, callback, user_data);
  g_task_set_source_tag (task, fb_run_execute_async);
  g_task_set_task_data (task, job, job_free);
  g_task_run_in_thread (task, execute_thread);
}

FbRun *
fb_run_execute_finish (GAsyncResult *result,
                       GError      **error)
{
  g_return_val_if_fail (G_IS_TASK (result), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
