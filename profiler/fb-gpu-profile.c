/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The per-kernel figures of a GPU profile from the activity records of N inferences: each
 * profile kernel's time is the device time of everything it launched (its generated kernels,
 * the library's kernels, its copies), summed per inference, then summarized over the
 * inferences as the CPU profiler does (fb_timing_summarize). */
#include "fb-gpu-activity.h"
#include "fb-timing.h"

static FbProfileKernel *
kernel_by_id (FbProfile *profile, guint id)
{
  if (id < profile->kernels->len)
    {
      FbProfileKernel *k = profile->kernels->pdata[id];
      if (k->id == id)
        return k;
    }
  for (guint i = 0; i < profile->kernels->len; i++)
    {
      FbProfileKernel *k = profile->kernels->pdata[i];
      if (k->id == id)
        return k;
    }
  return NULL;
}

/* The index of the inference whose wall time is the median one. */
static guint
median_index (const double *wall, guint n)
{
  g_autofree guint *order = g_new (guint, n);
  for (guint i = 0; i < n; i++)
    order[i] = i;
  for (guint i = 1; i < n; i++)
    for (guint j = i; j > 0 && wall[order[j]] < wall[order[j - 1]]; j--)
      {
        guint t = order[j];
        order[j] = order[j - 1];
        order[j - 1] = t;
      }
  return order[n / 2];
}

static void
fill_timeline (FbProfile *profile, const GArray *activities, guint64 begin_ns)
{
  g_autoptr(GArray) streams = g_array_new (FALSE, FALSE, sizeof (guint32));
  g_array_set_size (profile->timeline, 0);
  for (guint i = 0; i < activities->len; i++)
    {
      const FbGpuActivity *a = &g_array_index (activities, FbGpuActivity, i);
      if (a->owner == 0 || kernel_by_id (profile, (guint) (a->owner - 1)) == NULL)
        continue;
      guint lane = 0;
      while (lane < streams->len && g_array_index (streams, guint32, lane) != a->stream)
        lane++;
      if (lane == streams->len)
        g_array_append_val (streams, a->stream);
      FbProfileSpan span = {
        .kernel = (guint) (a->owner - 1),
        .start_us = (a->start_ns - MIN (begin_ns, a->start_ns)) / 1000.0,
        .end_us = (a->end_ns - MIN (begin_ns, a->end_ns)) / 1000.0,
        .lane = lane,
        .function = a->kind == FB_GPU_KERNEL && a->name ? g_intern_string (a->name) : NULL,
      };
      g_array_append_val (profile->timeline, span);
    }
}

FbGpuUtilization
fb_gpu_profile_fill (FbProfile *profile, GPtrArray *iterations, const guint64 *begin_ns,
                     const guint64 *end_ns)
{
  FbGpuUtilization none = { 0 };
  g_return_val_if_fail (profile != NULL && iterations != NULL, none);
  g_return_val_if_fail (begin_ns != NULL && end_ns != NULL, none);
  guint n = iterations->len, n_kernels = profile->kernels->len;
  if (n == 0)
    return none;

  g_autofree double *wall = g_new0 (double, n);
  g_autofree double *busy = g_new0 (double, n);
  /* per_kernel[k * n + i]: device time of kernel k in inference i; calls likewise. */
  g_autofree double *per_kernel = g_new0 (double, (gsize) n_kernels * n);
  g_autofree guint *calls = g_new0 (guint, (gsize) n_kernels * n);

  for (guint i = 0; i < n; i++)
    {
      const GArray *acts = iterations->pdata[i];
      FbGpuUtilization u = fb_gpu_utilization (acts, begin_ns[i], end_ns[i]);
      wall[i] = u.wall_us;
      busy[i] = u.kernel_busy_us;
      for (guint j = 0; j < acts->len; j++)
        {
          const FbGpuActivity *a = &g_array_index (acts, FbGpuActivity, j);
          if (a->owner == 0 || a->end_ns < a->start_ns)
            continue;
          for (guint k = 0; k < n_kernels; k++)
            {
              const FbProfileKernel *pk = profile->kernels->pdata[k];
              if (pk->id + 1 != a->owner)
                continue;
              per_kernel[(gsize) k * n + i] += (a->end_ns - a->start_ns) / 1000.0;
              calls[(gsize) k * n + i]++;
              break;
            }
        }
    }

  guint mid = median_index (wall, n);
  for (guint k = 0; k < n_kernels; k++)
    {
      FbProfileKernel *pk = profile->kernels->pdata[k];
      FbTimingStats s = fb_timing_summarize (per_kernel + (gsize) k * n, n);
      pk->median_us = s.median;
      pk->min_us = s.min;
      pk->max_us = s.max;
      pk->calls = calls[(gsize) k * n + mid];
    }

  FbTimingStats w = fb_timing_summarize (wall, n);
  FbTimingStats b = fb_timing_summarize (busy, n);
  profile->iterations = n;
  profile->wall_median_ms = w.median / 1000.0;
  profile->wall_min_ms = w.min / 1000.0;
  profile->wall_max_ms = w.max / 1000.0;
  profile->busy_ms = b.median / 1000.0;

  const GArray *median_acts = iterations->pdata[mid];
  guint64 begin = begin_ns[mid];
  if (end_ns[mid] <= begin)
    {
      begin = G_MAXUINT64;
      for (guint j = 0; j < median_acts->len; j++)
        begin = MIN (begin, g_array_index (median_acts, FbGpuActivity, j).start_ns);
    }
  fill_timeline (profile, median_acts, begin);
  return fb_gpu_utilization (median_acts, begin_ns[mid], end_ns[mid]);
}
