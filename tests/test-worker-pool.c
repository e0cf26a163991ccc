/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The worker pool (fb-worker-pool.c): a new pool's threads start on processors of their own;
 * every region runs on the whole team, so with fewer chunks than threads some threads pass
 * through with nothing; every index of the range is still run exactly once, ranges come in
 * chunks of at least the grain (each thread's share of the range is whole chunks), and the
 * timed run notes only the threads that worked. */
#include "fb-worker-pool.h"

#include <glib.h>
#include <sched.h>

typedef struct {
  gint  *runs;        /* per index: how often it ran */
  gint   calls;
  gint64 shortest;    /* the shortest range but the last */
  gint64 extent;
  GMutex lock;        /* for shortest */
} Seen;

static void
note_range (gpointer data, int64_t begin, int64_t end)
{
  Seen *s = data;
  for (int64_t i = begin; i < end; i++)
    g_atomic_int_inc (&s->runs[i]);
  g_atomic_int_inc (&s->calls);
  if (end < s->extent)
    {
      g_mutex_lock (&s->lock);
      s->shortest = MIN (s->shortest, end - begin);
      g_mutex_unlock (&s->lock);
    }
}

static void
check_range (FbWorkerPool *pool, int64_t extent, int64_t grain, gboolean timed)
{
  Seen s = { g_new0 (gint, extent), 0, G_MAXINT64, extent, { 0 } };
  g_mutex_init (&s.lock);
  guint n = fb_worker_pool_n_threads (pool);
  g_autofree double *busy = g_new0 (double, n);
  g_autofree double *first = g_new (double, n);
  g_autofree double *last = g_new (double, n);
  for (guint t = 0; t < n; t++)
    first[t] = last[t] = -1;
  FbWorkerTimes times = { busy, first, last, 0 };
  if (timed)
    fb_worker_pool_run_timed (pool, note_range, &s, extent, grain, &times);
  else
    fb_worker_pool_run (pool, note_range, &s, extent, grain);
  for (int64_t i = 0; i < extent; i++)
    g_assert_cmpint (s.runs[i], ==, 1);
  g_assert_cmpint (s.shortest, >=, MIN (grain, extent));
  if (timed)
    {
      /* As many threads noted as can have had a chunk at most. */
      guint noted = 0;
      for (guint t = 0; t < n; t++)
        noted += first[t] >= 0;
      g_assert_cmpuint (noted, >=, 1);
      g_assert_cmpuint (noted, <=, MIN ((guint) s.calls, n));
      g_assert_cmpfloat (times.wall_ms, >=, 0);
    }
  g_mutex_clear (&s.lock);
  g_free (s.runs);
}

static void
test_ranges (void)
{
  g_autoptr(FbWorkerPool) pool = fb_worker_pool_new (6);
  g_assert_cmpuint (fb_worker_pool_n_threads (pool), ==, 6);
  for (int timed = 0; timed < 2; timed++)
    {
      check_range (pool, 1, 1, timed);       /* one chunk: on the caller */
      check_range (pool, 3, 1, timed);       /* three chunks for six threads */
      check_range (pool, 1000, 7, timed);
      check_range (pool, 1000, 400, timed);  /* chunks of the grain, fewer than threads */
      check_range (pool, 1000, 50, timed);   /* shares of 3 or 4 chunks of 50 */
      check_range (pool, 100003, 1, timed);
    }
}

/* A new pool places its threads on processors of their own, where there are enough. What
 * each ran on while placed is checked, not where the scheduler has them later: the workers
 * may run anywhere again afterwards, and under the suite's load it may put two together. */
static void
test_placement (void)
{
  cpu_set_t all;
  g_assert_cmpint (sched_getaffinity (0, sizeof all, &all), ==, 0);
  int n = MIN (CPU_COUNT (&all), 4);
  if (n < 2)
    {
      g_test_skip ("one processor allowed: nothing to place the threads apart on");
      return;
    }
  g_autoptr(FbWorkerPool) pool = fb_worker_pool_new (n);
  g_assert_cmpint (fb_worker_pool_placed_cpu (pool, n), ==, -1);
  for (int a = 0; a < n; a++)
    {
      int cpu_a = fb_worker_pool_placed_cpu (pool, a);
      g_assert_cmpint (cpu_a, >=, 0);
      g_assert_true (CPU_ISSET (cpu_a, &all));
      for (int b = a + 1; b < n; b++)
        if (cpu_a == fb_worker_pool_placed_cpu (pool, b))
          g_error ("threads %d and %d were both placed on processor %d", a, b, cpu_a);
    }
  /* One thread places nothing. */
  g_autoptr(FbWorkerPool) single = fb_worker_pool_new (1);
  g_assert_cmpint (fb_worker_pool_placed_cpu (single, 0), ==, -1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/worker-pool/placement", test_placement);
  g_test_add_func ("/worker-pool/ranges", test_ranges);
  return g_test_run ();
}
