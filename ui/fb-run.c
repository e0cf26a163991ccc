/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-run.h"

struct _FbRun {
  gatomicrefcount    ref_count;
  GPtrArray         *stages;     /* FbStage*, one reference each */
  FbPipelineOptions *options;
  char              *title;
  char              *stopped;    /* why the passes stopped after the import, or NULL */
};

FbRun *
fb_run_new (GPtrArray               *stages,
            const FbPipelineOptions *options,
            const char              *title)
{
  FbRun *run;

  g_return_val_if_fail (stages != NULL, NULL);
  g_return_val_if_fail (options != NULL, NULL);

  run = g_new0 (FbRun, 1);
  g_atomic_ref_count_init (&run->ref_count);
  run->stages = stages;
  run->options = fb_pipeline_options_copy (options);
  run->title = g_strdup (title != NULL ? title : "model");
  return run;
}

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
  g_ptr_array_unref (run->stages);
  fb_pipeline_options_free (run->options);
  g_free (run->title);
  g_free (run->stopped);
  g_free (run);
}

guint
fb_run_n_stages (FbRun *run)
{
  g_return_val_if_fail (run != NULL, 0);
  return run->stages->len;
}

FbStage *
fb_run_get_stage (FbRun *run,
                  guint  index)
{
  g_return_val_if_fail (run != NULL, NULL);
  g_return_val_if_fail (index < run->stages->len, NULL);
  return g_ptr_array_index (run->stages, index);
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

  for (guint i = 0; i < run->stages->len; i++)
    total += ((FbStage *) g_ptr_array_index (run->stages, i))->wall_ms;
  return total;
}

int
fb_run_find_stage (FbRun      *run,
                   const char *name)
{
  g_return_val_if_fail (run != NULL, -1);
  g_return_val_if_fail (name != NULL, -1);

  for (guint i = 0; i < run->stages->len; i++)
    if (g_strcmp0 (((FbStage *) g_ptr_array_index (run->stages, i))->name, name) == 0)
      return i;
  return -1;
}

const char *
fb_run_get_stopped (FbRun *run)
{
  g_return_val_if_fail (run != NULL, NULL);
  return run->stopped;
}

void
fb_run_set_stopped (FbRun      *run,
                    const char *why)
{
  g_return_if_fail (run != NULL);
  g_free (run->stopped);
  run->stopped = g_strdup (why);
}
