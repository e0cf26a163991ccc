/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Computing a scene: every expanded group that is not cached yet is a job; a job is ready once
 * the expanded groups inside it are laid out (their sizes are its boxes). One thread per core
 * takes ready jobs, groups the viewport shows first and then from the top of the picture down,
 * each thread with a Graphviz worker process of its own. Meanwhile the calling thread hands out
 * partial scenes, so that the top of a big picture shows long before the bottom is laid out.
 * The result does not depend on the order: a group's layout depends only on its own boxes. */
#include "fb-graph-layout-private.h"

#define FIRST_PARTIAL_US (250 * G_TIME_SPAN_MILLISECOND)

typedef struct _Job Job;
struct _Job {
  FbGraphGroup *group;
  char         *key;
  Job          *parent;      /* the job of the enclosing group, NULL when that is cached */
  guint         pending;     /* expanded children not laid out yet */
  guint         order;       /* pre-order: the top of the picture first */
  gboolean      wanted;      /* on screen: before anything else */
};

typedef struct {
  FbGraphLayout *layout;
  GHashTable    *expanded;
  GCancellable  *cancellable;
  GMutex         mutex;
  GCond          cond;
  GSequence     *ready;      /* Job*, best first */
  GPtrArray     *jobs;       /* owned */
  guint          n_left;
  guint          n_done;
  gboolean       serial;
  GError        *error;
} Run;

static void
job_free (gpointer data)
{
  Job *job = data;

  g_free (job->key);
  g_free (job);
}

static int
compare_jobs (gconstpointer a,
              gconstpointer b,
              gpointer      data)
{
  const Job *x = a, *y = b;

  if (x->wanted != y->wanted)
    return x->wanted ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

/* Makes a job of group (expanded, not cached) and of the expanded groups inside it that are not
 * cached; returns it, or NULL when group is cached. */
static Job *
collect (Run          *run,
         FbGraphGroup *group,
         GHashTable   *wanted,
         gboolean      in_wanted,
         guint        *order)
{
  g_autofree char *key = _fb_graph_layout_key (group, run->expanded);
  Job *job;

  if (_fb_graph_layout_cached (group, key) != NULL)
    return NULL;
  job = g_new0 (Job, 1);
  job->group = group;
  job->key = g_steal_pointer (&key);
  job->order = (*order)++;
  job->wanted = in_wanted || (wanted != NULL && g_hash_table_contains (wanted, group->path));
  g_ptr_array_add (run->jobs, job);
  for (guint i = 0; i < group->children->len; i++)
    {
      FbGraphGroup *sub = g_array_index (group->children, FbGroupChild, i).group;
      Job *inner;

      if (sub == NULL || !g_hash_table_contains (run->expanded, sub->path))
        continue;
      if ((inner = collect (run, sub, wanted, job->wanted, order)) != NULL)
        {
          inner->parent = job;
          job->pending++;
        }
    }
  return job;
}

/* Caches layout as group's layout for key, under the layout's mutex, and gives what is cached:
 * a cached layout is never replaced, because seeding and reuse read it without the mutex, and
 * the shapes table points at it. */
static FbGroupLayout *
cache (FbGraphLayout *self,
       FbGraphGroup  *group,
       const char    *key,
       FbGroupLayout *layout,
       GBytes        *shape)
{
  FbGroupLayout *cached;

  g_mutex_lock (&self->mutex);
  if ((cached = _fb_graph_layout_cached (group, key)) == NULL)
    {
      g_hash_table_insert (group->cache, g_strdup (key), layout);
      if (shape != NULL)
        _fb_graph_layout_remember_shape (self, shape, layout);
      cached = layout;
    }
  g_mutex_unlock (&self->mutex);
  /* Only when two computations of one layout ran at once, which compute_mutex rules out. */
  g_warn_if_fail (cached == layout);
  if (cached != layout)
    _fb_group_layout_free (layout);
  return cached;
}

/* Lays out one group whose expanded children are all laid out, and caches it. */
static FbGroupLayout *
lay_out (FbGraphLayout  *self,
         Job            *job,
         GHashTable     *expanded,
         FbLayoutWorker *worker,
         GError        **error)
{
  FbGraphGroup *group = job->group;
  g_autofree FbPlace *sizes = NULL;
  g_autoptr(GBytes) shape = NULL;
  FbGroupLayout *layout = NULL;

  /* Only this job writes the edges; partial scenes read them once the layout is cached. */
  if (group->edges == NULL)
    group->edges = _fb_graph_layout_collect_edges (self, group);
  sizes = g_new0 (FbPlace, group->children->len);
  for (guint i = 0; i < group->children->len; i++)
    _fb_place_size_of_child (self, group, i, expanded, &sizes[i].w, &sizes[i].h);

  if (self->previous != NULL)
    {
      FbGraphLayout *previous = self->previous;
      FbGraphGroup *prev_group = fb_graph_layout_lookup_group (previous, group->path);
      FbGroupLayout *prev = NULL;

      if (prev_group != NULL)
        {
          g_autofree char *prev_key = _fb_graph_layout_key (prev_group, expanded);

          g_mutex_lock (&previous->mutex);
          prev = _fb_graph_layout_cached (prev_group, prev_key);
          g_mutex_unlock (&previous->mutex);
        }
      /* A cached layout, and its group's edges, never change once made, and previous lives as
       * long as self: prev can be read without the mutex. */
      if (prev != NULL && (layout = _fb_graph_layout_seed (self, group, sizes, prev_group, prev)) != NULL)
        return cache (self, group, job->key, layout, NULL);
    }
  shape = _fb_graph_layout_shape (group, sizes);
  if ((layout = _fb_graph_layout_reuse (self, shape)) != NULL)
    return cache (self, group, job->key, layout, NULL);
  if ((layout = _fb_graph_layout_dot (self, group, sizes, worker, error)) == NULL)
    return NULL;
  return cache (self, group, job->key, layout, shape);
}

static gpointer
work (gpointer data)
{
  Run *run = data;
  FbGraphLayout *self = run->layout;
  FbLayoutWorker *worker = run->serial ? NULL : _fb_layout_worker_acquire ();

  g_mutex_lock (&run->mutex);
  for (;;)
    {
      GSequenceIter *first;
      Job *job;
      FbGroupLayout *layout;
      GError *error = NULL;

      while (run->n_left > 0 && run->error == NULL && g_sequence_is_empty (run->ready))
        g_cond_wait (&run->cond, &run->mutex);
      if (run->n_left == 0 || run->error != NULL)
        break;
      first = g_sequence_get_begin_iter (run->ready);
      job = g_sequence_get (first);
      g_sequence_remove (first);
      g_mutex_unlock (&run->mutex);

      if (g_cancellable_set_error_if_cancelled (run->cancellable, &error))
        {
          g_clear_error (&error);
          g_set_error_literal (&error, FB_LAYOUT_ERROR, FB_LAYOUT_ERROR_CANCELLED, "Layout cancelled");
          layout = NULL;
        }
      else
        layout = lay_out (self, job, run->expanded, worker, &error);

      g_mutex_lock (&run->mutex);
      if (layout == NULL)
        {
          if (run->error == NULL)
            run->error = error;
          else
            g_clear_error (&error);
          g_cond_broadcast (&run->cond);
          break;
        }
      run->n_left--;
      run->n_done++;
      if (job->parent != NULL && --job->parent->pending == 0)
        g_sequence_insert_sorted (run->ready, job->parent, compare_jobs, NULL);
      g_cond_broadcast (&run->cond);
    }
  g_mutex_unlock (&run->mutex);
  _fb_layout_worker_release (worker);
  return NULL;
}

typedef struct {
  FbGraphLayoutProgress progress;
  gpointer              data;
  GDestroyNotify        destroy;
  GMainContext         *context;
} Progress;

typedef struct {
  gatomicrefcount ref_count;
  FbGraphLayout  *layout;
  GHashTable     *expanded;
  GHashTable     *wanted;
  Progress        progress;
} Request;

static Request *
request_ref (Request *request)
{
  g_atomic_ref_count_inc (&request->ref_count);
  return request;
}

static void
request_unref (gpointer data)
{
  Request *request = data;

  if (!g_atomic_ref_count_dec (&request->ref_count))
    return;
  g_hash_table_unref (request->expanded);
  g_clear_pointer (&request->wanted, g_hash_table_unref);
  if (request->progress.destroy != NULL)
    request->progress.destroy (request->progress.data);
  g_clear_pointer (&request->progress.context, g_main_context_unref);
  g_free (request);
}

/* A partial scene on its way to the main context; it keeps the request, and so the receiver's
 * data, alive even when the layout finishes first. */
typedef struct {
  FbGraphScene *scene;
  Request      *request;
} Delivery;

static gboolean
deliver (gpointer data)
{
  Delivery *delivery = data;

  delivery->request->progress.progress (delivery->scene, delivery->request->progress.data);
  fb_graph_scene_unref (delivery->scene);
  request_unref (delivery->request);
  g_free (delivery);
  return G_SOURCE_REMOVE;
}

/* Lays out what expanded needs in self; partial scenes go to progress while it runs. */
static gboolean
ensure (FbGraphLayout      *self,
        GHashTable         *expanded,
        GHashTable         *wanted,
        GCancellable       *cancellable,
        Request            *progress,
        GError            **error)
{
  Run run = { 0 };
  g_autoptr(GPtrArray) threads = g_ptr_array_new ();
  guint order = 0, n_threads;
  gint64 next_partial = g_get_monotonic_time () + FIRST_PARTIAL_US, interval = FIRST_PARTIAL_US;
  guint done_at_partial = 0;
  gboolean serial;

  run.layout = self;
  run.expanded = expanded;
  run.cancellable = cancellable;
  run.jobs = g_ptr_array_new_with_free_func (job_free);
  run.ready = g_sequence_new (NULL);
  g_mutex_init (&run.mutex);
  g_cond_init (&run.cond);

  g_mutex_lock (&self->mutex);
  serial = run.serial = self->serial;
  collect (&run, self->root, wanted, FALSE, &order);
  g_mutex_unlock (&self->mutex);
  run.n_left = run.jobs->len;
  for (guint i = 0; i < run.jobs->len; i++)
    {
      Job *job = g_ptr_array_index (run.jobs, i);

      if (job->pending == 0)
        g_sequence_insert_sorted (run.ready, job, compare_jobs, NULL);
    }

  n_threads = serial ? 1 : MIN (MAX (g_get_num_processors (), 1), MAX (run.jobs->len, 1));
  if (serial || run.jobs->len <= 1)
    work (&run);
  else
    for (guint i = 0; i < n_threads; i++)
      g_ptr_array_add (threads, g_thread_new ("fb-layout", work, &run));

  g_mutex_lock (&run.mutex);
  while (threads->len > 0 && run.n_left > 0 && run.error == NULL)
    {
      if (progress != NULL && !serial && g_get_monotonic_time () >= next_partial && run.n_done > done_at_partial)
        {
          Delivery *delivery = g_new (Delivery, 1);

          done_at_partial = run.n_done;
          g_mutex_unlock (&run.mutex);
          g_mutex_lock (&self->mutex);
          delivery->scene = _fb_graph_scene_new (self, expanded, TRUE);
          g_mutex_unlock (&self->mutex);
          delivery->request = request_ref (progress);
          g_main_context_invoke (progress->progress.context, deliver, delivery);
          g_mutex_lock (&run.mutex);
          /* A partial scene costs a pass over everything shown: fewer of them as it grows. */
          interval *= 2;
          next_partial = g_get_monotonic_time () + interval;
        }
      g_cond_wait_until (&run.cond, &run.mutex, next_partial);
    }
  g_mutex_unlock (&run.mutex);
  for (guint i = 0; i < threads->len; i++)
    g_thread_join (g_ptr_array_index (threads, i));

  g_sequence_free (run.ready);
  g_ptr_array_unref (run.jobs);
  g_mutex_clear (&run.mutex);
  g_cond_clear (&run.cond);
  if (run.error != NULL)
    {
      g_propagate_error (error, run.error);
      return FALSE;
    }
  return TRUE;
}

/* Lays out every group that expanded shows, the previous stages' first: this one takes its places
 * from there. */
static gboolean
ensure_all (FbGraphLayout *layout,
            GHashTable    *expanded,
            GHashTable    *wanted,
            GCancellable  *cancellable,
            Request       *progress,
            GError       **error)
{
  if (layout->previous != NULL)
    {
      FbGraphLayout *previous = layout->previous;
      gboolean done;

      /* The previous stage may be computing for a pane of its own at the same time: two runs
       * over one layout would lay out the same groups twice, and the second insertion into a
       * group's cache would free the layout the first one handed out (and that this stage seeds
       * from). Always taken from a later stage to an earlier one, so never in a cycle. */
      g_mutex_lock (&previous->compute_mutex);
      done = ensure_all (previous, expanded, NULL, cancellable, NULL, error);
      g_mutex_unlock (&previous->compute_mutex);
      if (!done)
        return FALSE;
    }
  return ensure (layout, expanded, wanted, cancellable, progress, error);
}

static FbGraphScene *
compute (FbGraphLayout *layout,
         GHashTable    *expanded,
         GHashTable    *wanted,
         GCancellable  *cancellable,
         Request       *progress,
         GError       **error)
{
  FbGraphScene *scene = NULL;

  g_mutex_lock (&layout->compute_mutex);
  if (ensure_all (layout, expanded, wanted, cancellable, progress, error))
    {
      g_mutex_lock (&layout->mutex);
      scene = _fb_graph_scene_new (layout, expanded, FALSE);
      g_mutex_unlock (&layout->mutex);
    }
  g_mutex_unlock (&layout->compute_mutex);
  return scene;
}

FbGraphScene *
fb_graph_layout_compute (FbGraphLayout *layout,
                         GHashTable    *expanded,
                         GCancellable  *cancellable,
                         GError       **error)
{
  g_return_val_if_fail (layout != NULL, NULL);
  g_return_val_if_fail (expanded != NULL, NULL);

  return compute (layout, expanded, NULL, cancellable, NULL, error);
}

static void
compute_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  Request *request = task_data;
  FbGraphLayout *layout = g_object_get_data (G_OBJECT (task), "fb-layout");
  GError *error = NULL;
  FbGraphScene *scene = compute (layout, request->expanded, request->wanted, cancellable,
                                 request->progress.progress != NULL ? request : NULL, &error);

  if (scene == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, scene, (GDestroyNotify) fb_graph_scene_unref);
}

static void
layout_unref_object (gpointer data)
{
  fb_graph_layout_unref (data);
}

static GHashTable *
copy_set (GHashTable *set)
{
  GHashTable *copy = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GHashTableIter iter;
  gpointer path;

  g_hash_table_iter_init (&iter, set);
  while (g_hash_table_iter_next (&iter, &path, NULL))
    g_hash_table_add (copy, g_strdup (path));
  return copy;
}

void
fb_graph_layout_compute_progressive (FbGraphLayout        *layout,
                                     GHashTable           *expanded,
                                     const char * const   *first,
                                     GCancellable         *cancellable,
                                     FbGraphLayoutProgress progress,
                                     gpointer              progress_data,
                                     GDestroyNotify        progress_destroy,
                                     GAsyncReadyCallback   callback,
                                     gpointer              user_data)
{
  g_autoptr(GTask) task = NULL;
  Request *request;

  g_return_if_fail (layout != NULL);
  g_return_if_fail (expanded != NULL);

  request = g_new0 (Request, 1);
  g_atomic_ref_count_init (&request->ref_count);
  request->expanded = copy_set (expanded);
  if (first != NULL)
    {
      request->wanted = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      for (guint i = 0; first[i] != NULL; i++)
        g_hash_table_add (request->wanted, g_strdup (first[i]));
    }
  request->progress.progress = progress;
  request->progress.data = progress_data;
  request->progress.destroy = progress_destroy;
  if (progress != NULL)
    request->progress.context = g_main_context_ref_thread_default ();

  /* GTask wants a GObject source; the layout travels as task data's owner instead. */
  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, fb_graph_layout_compute_async);
  g_task_set_task_data (task, request, request_unref);
  g_object_set_data_full (G_OBJECT (task), "fb-layout", fb_graph_layout_ref (layout),
                          layout_unref_object);
  g_task_run_in_thread (task, compute_thread);
}

void
fb_graph_layout_compute_async (FbGraphLayout      *layout,
                               GHashTable         *expanded,
                               GCancellable       *cancellable,
                               GAsyncReadyCallback callback,
                               gpointer            user_data)
{
  fb_graph_layout_compute_progressive (layout, expanded, NULL, cancellable, NULL, NULL, NULL, callback, user_data);
}

FbGraphScene *
fb_graph_layout_compute_finish (FbGraphLayout *layout,
                                GAsyncResult  *result,
                                GError       **error)
{
  g_return_val_if_fail (layout != NULL, NULL);
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
