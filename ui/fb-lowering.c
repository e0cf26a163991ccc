/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-lowering.h"
#include "fb-backend.h"

struct _FbLowering {
  gatomicrefcount  ref_count;
  FbStage         *stage;        /* the final stage; its graph outlives the plan */
  const FbBackend *backend;      /* the target it is lowered for */
  GMutex           lock;         /* held while lowering, and around stages */
  gboolean         lowered;      /* tried, whatever the outcome */
  FbPlan          *plan;         /* set once, then read without the lock through ready */
  GError          *error;        /* why the stage could not be lowered */
  gpointer         ready;        /* atomic: plan, once lowered */
  GPtrArray       *stages;       /* FbKernelStages* per kernel of plan, NULL until generated */
};

typedef struct {
  FbLowering *lowering;
  GArray     *node_ids;          /* guint */
} Job;

FbLowering *
fb_lowering_new (FbStage    *final,
                 const char *target)
{
  FbLowering *lowering;
  const FbBackend *backend;

  g_return_val_if_fail (final != NULL && final->graph != NULL, NULL);
  g_return_val_if_fail (target != NULL, NULL);

  if ((backend = fb_backend_lookup (target)) == NULL)
    return NULL;
  lowering = g_new0 (FbLowering, 1);
  g_atomic_ref_count_init (&lowering->ref_count);
  lowering->stage = fb_stage_ref (final);
  lowering->backend = backend;
  g_mutex_init (&lowering->lock);
  return lowering;
}

const char *
fb_lowering_get_target (FbLowering *lowering)
{
  g_return_val_if_fail (lowering != NULL, NULL);
  return lowering->backend->name;
}

const FbBackend *
fb_lowering_get_backend (FbLowering *lowering)
{
  g_return_val_if_fail (lowering != NULL, NULL);
  return lowering->backend;
}

FbLowering *
fb_lowering_ref (FbLowering *lowering)
{
  g_return_val_if_fail (lowering != NULL, NULL);

  g_atomic_ref_count_inc (&lowering->ref_count);
  return lowering;
}

static void
stages_free0 (gpointer data)
{
  if (data != NULL)
    fb_kernel_stages_free (data);
}

void
fb_lowering_unref (FbLowering *lowering)
{
  g_return_if_fail (lowering != NULL);

  if (!g_atomic_ref_count_dec (&lowering->ref_count))
    return;
  /* The stages first: they were generated from the plan, the plan from the stage's graph. */
  g_clear_pointer (&lowering->stages, g_ptr_array_unref);
  g_clear_pointer (&lowering->plan, fb_plan_unref);
  g_clear_error (&lowering->error);
  fb_stage_unref (lowering->stage);
  g_mutex_clear (&lowering->lock);
  g_free (lowering);
}

FbStage *
fb_lowering_get_stage (FbLowering *lowering)
{
  g_return_val_if_fail (lowering != NULL, NULL);
  return lowering->stage;
}

FbPlan *
fb_lowering_peek_plan (FbLowering *lowering)
{
  g_return_val_if_fail (lowering != NULL, NULL);
  return g_atomic_pointer_get (&lowering->ready);
}

static void
job_free (gpointer data)
{
  Job *job = data;

  fb_lowering_unref (job->lowering);
  g_array_unref (job->node_ids);
  g_free (job);
}

/* In a worker, with the lock held. The backend's check comes first, as the command line does it,
 * so that the first node the target cannot run is named before any work. */
static void
lower (FbLowering *lowering)
{
  const FbGraph *graph = lowering->stage->graph;
  GError *error = NULL;
  FbPlan *plan = NULL;

  g_assert (!lowering->lowered);
  lowering->lowered = TRUE;
  /* The same plan the compiler would run: checked, lowered, buffers placed in the arena. */
  plan = lowering->backend->lower (lowering->backend, graph, &error);
  if (plan == NULL)
    {
      lowering->error = error;
      return;
    }
  lowering->plan = plan;
  lowering->stages = g_ptr_array_new_full (plan->kernels->len, stages_free0);
  g_ptr_array_set_size (lowering->stages, plan->kernels->len);
  g_atomic_pointer_set (&lowering->ready, plan);
}

static gboolean
wanted (const Job *job,
        guint      node_id)
{
  for (guint i = 0; i < job->node_ids->len; i++)
    if (g_array_index (job->node_ids, guint, i) == node_id)
      return TRUE;
  return FALSE;
}

static void
kernels_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  Job *job = task_data;
  FbLowering *lowering = job->lowering;
  g_autoptr(GPtrArray) kernels = g_ptr_array_new_with_free_func (g_free);
  FbPlan *plan;

  g_mutex_lock (&lowering->lock);
  if (!lowering->lowered)
    lower (lowering);
  plan = lowering->plan;
  if (plan == NULL)
    {
      GError *error = g_error_copy (lowering->error);

      g_mutex_unlock (&lowering->lock);
      g_task_return_error (task, error);
      return;
    }
  g_mutex_unlock (&lowering->lock);

  for (guint i = 0; i < plan->kernels->len; i++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, i);
      const FbKernelStages *stages;
      FbLoweredKernel *lk;
      GError *error = NULL;

      if (!wanted (job, kernel->node_id))
        continue;
      if (g_task_return_error_if_cancelled (task))
        return;
      if ((stages = fb_lowering_kernel_stages (lowering, kernel, &error)) == NULL)
        {
          g_task_return_error (task, error);
          return;
        }
      lk = g_new (FbLoweredKernel, 1);
      lk->kernel = kernel;
      lk->stages = stages;
      g_ptr_array_add (kernels, lk);
    }
  g_task_return_pointer (task, g_steal_pointer (&kernels), (GDestroyNotify) g_ptr_array_unref);
}

const FbKernelStages *
fb_lowering_kernel_stages (FbLowering     *lowering,
                           const FbKernel *kernel,
                           GError        **error)
{
  FbPlan *plan;
  FbKernelStages *stages;
  guint index;

  g_return_val_if_fail (lowering != NULL && kernel != NULL, NULL);
  plan = fb_lowering_peek_plan (lowering);
  g_return_val_if_fail (plan != NULL && g_ptr_array_find (plan->kernels, kernel, &index), NULL);

  g_mutex_lock (&lowering->lock);
  stages = g_ptr_array_index (lowering->stages, index);
  g_mutex_unlock (&lowering->lock);
  if (stages != NULL)
    return stages;
  /* Without the lock: LLVM takes its time, and other kernels need not wait for it. */
  stages = lowering->backend->kernel_stages (lowering->backend, kernel, plan, error);
  if (stages == NULL)
    {
      g_prefix_error (error, "%s (node %s): ", kernel->name,
                      kernel->node != NULL && kernel->node->name != NULL ? kernel->node->name : "?");
      return NULL;
    }
  g_mutex_lock (&lowering->lock);
  if (g_ptr_array_index (lowering->stages, index) == NULL)
    g_ptr_array_index (lowering->stages, index) = stages;
  else
    {
      fb_kernel_stages_free (stages);
      stages = g_ptr_array_index (lowering->stages, index);
    }
  g_mutex_unlock (&lowering->lock);
  return stages;
}

void
fb_lowering_kernels_async (FbLowering          *lowering,
                           GObject             *object,
                           const guint         *node_ids,
                           guint                n_ids,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  Job *job;

  g_return_if_fail (lowering != NULL);
  g_return_if_fail (object == NULL || G_IS_OBJECT (object));
  g_return_if_fail (node_ids != NULL || n_ids == 0);

  task = g_task_new (object, cancellable, callback, user_data);
  g_task_set_source_tag (task, fb_lowering_kernels_async);
  job = g_new0 (Job, 1);
  job->lowering = fb_lowering_ref (lowering);
  job->node_ids = g_array_sized_new (FALSE, FALSE, sizeof (guint), n_ids);
  g_array_append_vals (job->node_ids, node_ids, n_ids);
  g_task_set_task_data (task, job, job_free);
  g_task_run_in_thread (task, kernels_thread);
}

GPtrArray *
fb_lowering_kernels_finish (GAsyncResult *result,
                            GError      **error)
{
  g_return_val_if_fail (G_IS_TASK (result), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == fb_lowering_kernels_async, NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
