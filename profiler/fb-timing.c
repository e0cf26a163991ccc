/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-timing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double
fb_timing_now_ms (void)
{
  return g_get_monotonic_time () / 1000.0;
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

FbTimingStats
fb_timing_summarize (const double *samples, guint n)
{
  FbTimingStats s = { 0 };
  g_autofree double *sorted = NULL;
  double sum = 0;
  guint rank;

  g_return_val_if_fail (samples != NULL && n > 0, s);
  sorted = g_memdup2 (samples, sizeof (double) * n);
  qsort (sorted, n, sizeof (double), compare_doubles);
  for (guint i = 0; i < n; i++)
    sum += sorted[i];
  s.count = n;
  s.min = sorted[0];
  s.max = sorted[n - 1];
  s.mean = sum / n;
  s.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  /* Nearest rank: the smallest sample with at least 95 % of the samples at or below it. */
  rank = (guint) ceil (0.95 * n);
  s.p95 = sorted[MAX (rank, 1) - 1];
  rank = (guint) ceil (0.25 * n);
  s.q1 = sorted[MAX (rank, 1) - 1];
  rank = (guint) ceil (0.75 * n);
  s.q3 = sorted[MAX (rank, 1) - 1];
  return s;
}
