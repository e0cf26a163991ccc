/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The worker pool, on OpenMP's threads. oneDNN threads its convolutions through OpenMP; a
 * pool of our own beside it put a third busy thread on two cores: whichever of ours or
 * OpenMP's was waiting spun on the core the other needed, and a small model ran at half speed
 * one process in two (melspectrogram: 0.053 against 0.028 ms). On one team of threads, the
 * one that waits is always the one that will work next. Threads claim chunks from atomic
 * cursors, their own share's first and then the others', so a slow or descheduled thread (the
 * machine is shared) only delays its current chunk, never a fixed share of the range. */
#include "fb-worker-pool.h"
#include "fb-cpu-threads.h"

#include <omp.h>
#include <sched.h>
#include <time.h>

struct _FbWorkerPool {
  guint n_threads;
  int  *placed;       /* per thread: where it ran when placed (fb_worker_pool_placed_cpu) */
};

/* One thread's share of a range: the next chunk to take and the share's end. A cache line
 * each, so that claims on one share do not slow the others. */
typedef struct {
  gint64 next;
  gint64 end;
  char   pad[48];
} Share;

/* A new thread starts on its creator's core, and the scheduler may leave it there for a
 * good part of a second: two threads spinning on one core ran a model at 0.53 ms where
 * apart they take 0.34. Nor does it always part two new workers: on 3 of the GPU host's Xeon
 * cores a PP-OCR-style classifier on three threads ran in 0.2 ms in some processes and in 7.9
 * in others (5 in 12; 1 in 10 on 8 cores), each worker having only been moved off its
 * creator's core. So OpenMP's worker t moves itself once to the t-th processor it may use, not
 * counting its creator's (0 in 22 slow), then allows every one of them again, so that the
 * scheduler can still move it away from other load. */
static int
place_worker (int creator_cpu, int t)
{
  cpu_set_t all, one;
  if (creator_cpu < 0 || sched_getaffinity (0, sizeof all, &all) != 0)
    return -1;
  int others = CPU_COUNT (&all) - (CPU_ISSET (creator_cpu, &all) ? 1 : 0);
  if (others <= 0)
    return -1;
  int want = (t - 1) % others;
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
    {
      if (!CPU_ISSET (cpu, &all) || cpu == creator_cpu || want-- > 0)
        continue;
      CPU_ZERO (&one);
      CPU_SET (cpu, &one);
      if (sched_setaffinity (0, sizeof one, &one) != 0)
        return -1;
      /* Setting its own affinity moves the thread before the call returns. */
      int placed = sched_getcpu ();
      sched_setaffinity (0, sizeof all, &all);
      return placed;
    }
  return -1;
}

FbWorkerPool *
fb_worker_pool_new (guint n_threads)
{
  FbWorkerPool *pool = g_new0 (FbWorkerPool, 1);
  if (n_threads == 0)
    n_threads = fb_thread_count_default ();
  pool->n_threads = CLAMP (n_threads, 1, 256);
  pool->placed = g_new (int, pool->n_threads);
  for (guint t = 0; t < pool->n_threads; t++)
    pool->placed[t] = -1;
  if (pool->n_threads > 1 && !omp_in_parallel ())
    {
      /* Starts the calling thread's team now, not in the first timed run. */
      int creator_cpu = sched_getcpu ();
      int *placed = pool->placed;
      placed[0] = creator_cpu;
#pragma omp parallel num_threads (pool->n_threads)
      {
        int t = omp_get_thread_num ();
        if (t != 0)
          placed[t] = place_worker (creator_cpu, t);
      }
    }
  return pool;
}

void
fb_worker_pool_free (FbWorkerPool *pool)
{
  if (pool == NULL)
    return;
  g_free (pool->placed);
  g_free (pool);
}

int
fb_worker_pool_placed_cpu (FbWorkerPool *pool, guint t)
{
  g_return_val_if_fail (pool != NULL, -1);
  return t < pool->n_threads ? pool->placed[t] : -1;
}

guint
fb_worker_pool_n_threads (FbWorkerPool *pool)
{
  g_return_val_if_fail (pool != NULL, 1);
  return pool->n_threads;
}

double
fb_worker_pool_now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void
note_thread (FbWorkerTimes *times, int t, double start, double end)
{
  times->busy_ms[t] += end - start;
  if (times->first_ms[t] < 0)
    times->first_ms[t] = start;
  times->last_ms[t] = end;
}

static void
run_pool (FbWorkerPool *pool, FbRangeFn fn, gpointer data, int64_t extent, int64_t grain,
          FbWorkerTimes *times)
{
  g_return_if_fail (pool != NULL && fn != NULL);
  if (extent <= 0)
    return;
  guint n = pool->n_threads;
  /* A few chunks per thread balance uneven work without paying for many claims. */
  int64_t chunk = MAX (grain, (extent + 4 * n - 1) / (4 * n));
  int64_t n_chunks = (extent + chunk - 1) / chunk;
  double t0 = times ? fb_worker_pool_now_ms () : 0;
  /* Inside a parallel region (a caller's own threads), the range runs here. */
  if (n == 1 || n_chunks == 1 || omp_in_parallel ())
    {
      fn (data, 0, extent);
      if (times)
        {
          double t1 = fb_worker_pool_now_ms ();
          note_thread (times, 0, t0, t1);
          times->wall_ms += t1 - t0;
        }
      return;
    }
  /* Each of the first `shares` threads owns a contiguous share of the range and takes chunks
   * of it in order, then takes what is left of the others' shares. A loop that reads the map
   * the kernel before it wrote finds its share where the previous kernel's same thread left
   * it, in its own core's cache, as long as that kernel was split the same way (oneDNN splits
   * rows in order too); one cursor for all handed out chunks in arrival order, and each thread
   * fetched most of its data from another core's cache. */
  int shares = (int) MIN ((int64_t) n, n_chunks);
  Share *share = g_newa (Share, shares);
  for (int s = 0; s < shares; s++)
    {
      /* Whole chunks: only the range's last chunk is shorter than the grain. */
      share[s].next = n_chunks * s / shares * chunk;
      share[s].end = MIN (extent, n_chunks * (s + 1) / shares * chunk);
    }
  /* Always the whole team, the threads without a chunk passing through: a region of another
   * size makes OpenMP resize its team, waking or parking threads, and kernels of changing
   * sizes one after the other paid that at nearly every kernel. On the GPU host's 16 cores
   * (with the convolutions on the whole team too, fb-cpu-module.c) DenseNet-121 went from 23
   * to 9 ms and Inception from 9.7 to 6.4, where teams sized to each kernel's chunks had
   * run it. */
#pragma omp parallel num_threads (n)
  {
    /* The math library's calls from here stay on this thread: OpenMP does not nest. */
    double start = times ? fb_worker_pool_now_ms () : 0;
    gboolean worked = FALSE;
    int me = omp_get_thread_num ();
    for (int k = 0; k < shares; k++)
      {
        Share *own = &share[(me + k) % shares];
        for (;;)
          {
            int64_t begin = g_atomic_pointer_add ((gssize *) &own->next, chunk);
            if (begin >= own->end)
              break;
            fn (data, begin, MIN (begin + chunk, own->end));
            worked = TRUE;
          }
      }
    /* Each thread writes only its own entries. */
    if (times && worked)
      note_thread (times, omp_get_thread_num (), start, fb_worker_pool_now_ms ());
  }
  if (times)
    times->wall_ms += fb_worker_pool_now_ms () - t0;
}

void
fb_worker_pool_run (FbWorkerPool *pool, FbRangeFn fn, gpointer data, int64_t extent,
                    int64_t grain)
{
  run_pool (pool, fn, data, extent, grain, NULL);
}

void
fb_worker_pool_run_timed (FbWorkerPool *pool, FbRangeFn fn, gpointer data, int64_t extent,
                          int64_t grain, FbWorkerTimes *times)
{
  g_return_if_fail (times != NULL);
  run_pool (pool, fn, data, extent, grain, times);
}
