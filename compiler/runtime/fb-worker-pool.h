/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The threads that run the loops of compiled kernels: the caller and n - 1 of OpenMP's
 * threads (the same ones oneDNN's primitives use) take chunks of one range at a time.
 * OpenMP's threads spin briefly between ranges, since kernels follow each other within
 * microseconds, then sleep. */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

typedef struct _FbWorkerPool FbWorkerPool;

typedef void (*FbRangeFn) (gpointer data, int64_t begin, int64_t end);

/* n_threads counts the caller; 0 means one per core. */
FbWorkerPool *fb_worker_pool_new      (guint n_threads);
void          fb_worker_pool_free     (FbWorkerPool *pool);
guint         fb_worker_pool_n_threads (FbWorkerPool *pool);
/* The processor thread t ran on when the new pool placed it (0: the caller, where it made
 * the pool), each worker on a processor of its own; -1 where nothing was placed (one
 * thread, a pool made inside a parallel region, or the system refused the move). */
int           fb_worker_pool_placed_cpu (FbWorkerPool *pool, guint t);
/* Runs fn over [0, extent) in chunks of at least grain iterations, on every thread, and
 * returns when all are done. Calls are serialized: one range at a time per pool. */
void          fb_worker_pool_run      (FbWorkerPool *pool, FbRangeFn fn, gpointer data,
                                       int64_t extent, int64_t grain);

/* What each thread did in timed ranges, accumulated over calls (arrays of n_threads entries,
 * indexed by OpenMP thread number, 0 the caller). Times are ms on the monotonic clock. */
typedef struct {
  double *busy_ms;              /* time spent taking and running chunks */
  double *first_ms;             /* when it started its first chunk (< 0: none yet) */
  double *last_ms;              /* when it finished its last chunk */
  double  wall_ms;              /* the caller's time inside the timed calls */
} FbWorkerTimes;

/* fb_worker_pool_run that also adds to times: two clock reads per thread per call. */
void          fb_worker_pool_run_timed (FbWorkerPool *pool, FbRangeFn fn, gpointer data,
                                        int64_t extent, int64_t grain, FbWorkerTimes *times);
/* The monotonic clock the pool times with, in ms. */
double        fb_worker_pool_now_ms   (void);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FbWorkerPool, fb_worker_pool_free)

G_END_DECLS
