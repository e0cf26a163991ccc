/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The threads a small model runs on. Every parallel kernel starts the whole team, and starting
 * a thread costs microseconds: on the GPU host's 16-core Xeon a mel-spectrogram front end
 * (two 1-D convolutions of 2 MFLOP, 0.11 ms on one core) ran in 0.079 ms on 2 cores, 0.093 on
 * 4, 0.101 on 8 and 0.130 on 16, and a wake-word head of 0.018 ms was fastest on one. So where
 * the count is the default (the processors this process may use), a model whose modeled work
 * is under SMALL_MODEL_US_PER_THREAD microseconds a thread on one core runs on fewer threads:
 * the work over that, at least one. The model of a kernel's time is coarse (1.5 to 5 times the
 * Xeon's measured time on these models): the mel front end models at 172 us (2 threads), the
 * wake-word head at 95 (1), a PP-OCR direction classifier at 280 (3), and the smallest model
 * that keeps 16 threads is about 1.2 ms. With the rule the mel front end ran in 0.064 to 0.073
 * ms at every core count from 1 to 16. A count asked for (--threads, FUSEBENCH_THREADS) is
 * kept, as is the default for a model with host steps (whose work is not modeled) and under
 * FUSEBENCH_SPLIT_ALL=1 (every kernel split over the whole pool, to compare). */
#include "fb-cpu.h"

#include <math.h>

/* A core's rates for the model of a kernel's time: 50 GFLOP/s and 10 GB/s. */
#define CORE_FLOPS_PER_US 50e3
#define CORE_BYTES_PER_US 10e3
#define SMALL_MODEL_US_PER_THREAD 75.0

double
fb_cpu_one_core_us (double flops, double bytes)
{
  return flops / CORE_FLOPS_PER_US + bytes / CORE_BYTES_PER_US;
}

double
fb_cpu_plan_one_core_us (const FbPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  double us = 0;
  for (guint k = 0; k < plan->kernels->len; k++)
    {
      const FbKernel *kernel = g_ptr_array_index (plan->kernels, k);
      if (kernel->kind != FB_KERNEL_VIEW)
        us += fb_cpu_one_core_us (kernel->flops, kernel->bytes);
    }
  return us;
}

guint
fb_cpu_small_model_threads (const FbPlan *plan, guint n)
{
  g_return_val_if_fail (plan != NULL, n);
  if (g_strcmp0 (g_getenv ("FUSEBENCH_SPLIT_ALL"), "1") == 0)
    return n;
  /* A host step's work (a control-flow body, a data-sized buffer) is not modeled: keep all. */
  for (guint k = 0; k < plan->kernels->len; k++)
    if (((const FbKernel *) g_ptr_array_index (plan->kernels, k))->kind == FB_KERNEL_HOST)
      return n;
  double us = fb_cpu_plan_one_core_us (plan);
  double worth = floor (us / SMALL_MODEL_US_PER_THREAD);
  return worth < n ? (guint) MAX (worth, 1.0) : n;
}
