/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The worker pool. A job is published by bumping a generation counter; workers claim chunks
 * from an atomic cursor, so a slow or descheduled thread (the machine is shared) only delays
 * its current chunk, never a fixed share of the range. */
#include "fb-worker-pool.h"

#include <omp.h>
#include <sched.h>

#define SPIN_ROUNDS 20000

struct _FbWorkerPool {
  guint       n_threads;
  GThread   **threads;
  GMutex      lock;
  GCond       wake;             /* workers sleep here between jobs */
  GCond       idle;             /* the caller waits here for stragglers */
  gint        generation;       /* bumped for every job (atomic) */
  gint        quit;
  gint        busy;             /* workers still inside the current job (atomic) */
  int         creator_cpu;      /* where fb_worker_pool_new ran, or -1 */
  gint        sleepers;         /* workers blocked on wake (atomic, changed under lock) */
  gint        waiting;          /* the caller is blocked on idle (atomic, changed under lock) */
  /* the current job */
  FbRangeFn   fn;
  gpointer    data;
  int64_t     extent;
  int64_t     chunk;
  gint64      cursor;           /* next chunk start (atomic) */
};

static void
work (FbWorkerPool *pool)
{
  for (;;)
    {
      int64_t begin = g_atomic_pointer_add ((gssize *) &pool->cursor, pool->chunk);
      if (begin >= pool->extent)
        break;
      int64_t end = MIN (begin + pool->chunk, pool->extent);
      pool->fn (pool->data, begin, end);
    }
}

/* A new thread starts on its creator's core, and the scheduler may leave it there for a
 * good part of a second: two threads spinning on one core ran a model at 0.53 ms where
 * apart they take 0.34 (half of the benchmark's short processes started that way). The
 * worker moves itself off the creator's core once, then allows every core again, so the
 * scheduler can still move it away from other load later. */
static void
leave_creator_core (int creator_cpu)
{
  cpu_set_t all, others;
  if (creator_cpu < 0 || sched_getaffinity (0, sizeof all, &all) != 0)
    return;
  others = all;
  CPU_CLR (creator_cpu, &others);
  if (CPU_COUNT (&others) == 0 || sched_setaffinity (0, sizeof others, &others) != 0)
    return;
  sched_setaffinity (0, sizeof all, &all);
}

static gpointer
worker_main (gpointer data)
{
  FbWorkerPool *pool = data;
  gint seen = 0;
  leave_creator_core (pool->creator_cpu);
  /* The math library (oneDNN) threads through OpenMP; each of our threads is already one of
   * the cores it would use, so its calls from here stay on this thread. */
  omp_set_num_threads (1);
  for (;;)
    {
      gint gen;
      guint spins = 0;
      while ((gen = g_atomic_int_get (&pool->generation)) == seen && !g_atomic_int_get (&pool->quit))
        {
          if (++spins < SPIN_ROUNDS)
            {
              if ((spins & 63) == 0)
                sched_yield ();
              continue;
            }
          g_mutex_lock (&pool->lock);
          g_atomic_int_inc (&pool->sleepers);
          while (g_atomic_int_get (&pool->generation) == seen && !g_atomic_int_get (&pool->quit))
            g_cond_wait (&pool->wake, &pool->lock);
          g_atomic_int_add (&pool->sleepers, -1);
          g_mutex_unlock (&pool->lock);
        }
      if (g_atomic_int_get (&pool->quit))
        return NULL;
      seen = gen;
      work (pool);
      /* The caller usually spins for the last worker: only a blocked one needs the signal
       * (it set waiting before its last look at busy, under the lock taken here). */
      if (g_atomic_int_dec_and_test (&pool->busy) && g_atomic_int_get (&pool->waiting))
        {
          g_mutex_lock (&pool->lock);
          g_cond_signal (&pool->idle);
          g_mutex_unlock (&pool->lock);
        }
    }
}

FbWorkerPool *
fb_worker_pool_new (guint n_threads)
{
  FbWorkerPool *pool = g_new0 (FbWorkerPool, 1);
  if (n_threads == 0)
    n_threads = g_get_num_processors ();
  pool->n_threads = CLAMP (n_threads, 1, 256);
  g_mutex_init (&pool->lock);
  g_cond_init (&pool->wake);
  g_cond_init (&pool->idle);
  pool->threads = g_new0 (GThread *, pool->n_threads);
  pool->creator_cpu = sched_getcpu ();
  for (guint i = 1; i < pool->n_threads; i++)
    pool->threads[i] = g_thread_new ("fb-worker", worker_main, pool);
  return pool;
}

void
fb_worker_pool_free (FbWorkerPool *pool)
{
  if (pool == NULL)
    return;
  g_mutex_lock (&pool->lock);
  g_atomic_int_set (&pool->quit, 1);
  g_cond_broadcast (&pool->wake);
  g_mutex_unlock (&pool->lock);
  for (guint i = 1; i < pool->n_threads; i++)
    g_thread_join (pool->threads[i]);
  g_free (pool->threads);
  g_mutex_clear (&pool->lock);
  g_cond_clear (&pool->wake);
  g_cond_clear (&pool->idle);
  g_free (pool);
}

guint
fb_worker_pool_n_threads (FbWorkerPool *pool)
{
  g_return_val_if_fail (pool != NULL, 1);
  return pool->n_threads;
}

void
fb_worker_pool_run (FbWorkerPool *pool, FbRangeFn fn, gpointer data, int64_t extent,
                    int64_t grain)
{
  g_return_if_fail (pool != NULL && fn != NULL);
  if (extent <= 0)
    return;
  guint n = pool->n_threads;
  /* A few chunks per thread balance uneven work without paying for many claims. */
  int64_t chunk = MAX (grain, (extent + 4 * n - 1) / (4 * n));
  if (n == 1 || chunk >= extent)
    {
      fn (data, 0, extent);
      return;
    }
  pool->fn = fn;
  pool->data = data;
  pool->extent = extent;
  pool->chunk = chunk;
  g_atomic_pointer_set ((gssize *) &pool->cursor, 0);
  g_atomic_int_set (&pool->busy, n - 1);
  /* Spinning workers see the new generation by themselves; the broadcast (a system call
   * every time, a microsecond that a small phase cannot spare) is only for blocked ones.
   * A worker about to block counts itself under the lock before its last look at the
   * generation, so either it sees this bump or this sees its count. */
  g_atomic_int_inc (&pool->generation);
  if (g_atomic_int_get (&pool->sleepers) > 0)
    {
      g_mutex_lock (&pool->lock);
      g_cond_broadcast (&pool->wake);
      g_mutex_unlock (&pool->lock);
    }
  work (pool);
  /* Wait for the workers: spin first, they are usually a chunk away from done. */
  for (guint spins = 0; g_atomic_int_get (&pool->busy) > 0; spins++)
    {
      if (spins < SPIN_ROUNDS)
        {
          if ((spins & 63) == 0)
            sched_yield ();
          continue;
        }
      g_mutex_lock (&pool->lock);
      g_atomic_int_set (&pool->waiting, 1);
      while (g_atomic_int_get (&pool->busy) > 0)
        g_cond_wait (&pool->idle, &pool->lock);
      g_atomic_int_set (&pool->waiting, 0);
      g_mutex_unlock (&pool->lock);
      break;
    }
}
