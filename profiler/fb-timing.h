/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Wall-clock samples and their summary: what `run --iterations`, the benchmarks and (later) the
 * profiler report. One place decides what "median" means, so every figure is comparable. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  guint  count;     /* samples summarized */
  double median;    /* the mean of the middle two for an even count */
  double min;
  double max;
  double mean;
  double p95;       /* nearest-rank 95th percentile */
  double q1;        /* nearest-rank quartiles: q3 - q1 is the spread a profile calls its */
  double q3;        /* noise, which one slow outlier does not widen as it does max - min */
} FbTimingStats;

/* A monotonic clock in milliseconds, for differences only. */
double        fb_timing_now_ms      (void);
/* Summarizes n samples (n > 0); the samples are left in their order. */
FbTimingStats fb_timing_summarize   (const double *samples, guint n);

G_END_DECLS
