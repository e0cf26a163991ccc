/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The diagnosis: what a performance engineer reads first, in words and numbers. Each line
 * stands alone: where the time goes, the top kernels, time outside any kernel, idle threads,
 * kernels far under their roofline and whether memory or compute holds them, and what the
 * layout's transposes cost. Works on any target's profile (the CUDA one fills the same
 * fields). */
#include "fb-profile-private.h"

#include <math.h>

#define FAR_UNDER_ROOF 0.25     /* a kernel below this share of its roofline is listed ... */
#define WORTH_LISTING  0.03     /* ... when it takes at least this share of the time */
#define N_TOP          3

static double
pct (double part, double whole)
{
  return whole > 0 ? 100.0 * part / whole : 0;
}

static int
by_time_desc (gconstpointer a, gconstpointer b)
{
  const FbProfileKernel *x = *(FbProfileKernel * const *) a, *y = *(FbProfileKernel * const *) b;
  return (x->median_us < y->median_us) - (x->median_us > y->median_us);
}

/* The kernels, longest first (borrowed). */
static GPtrArray *
by_time (const FbProfile *p)
{
  GPtrArray *sorted = g_ptr_array_sized_new (p->kernels->len);
  for (guint i = 0; i < p->kernels->len; i++)
    g_ptr_array_add (sorted, g_ptr_array_index (p->kernels, i));
  g_ptr_array_sort (sorted, by_time_desc);
  return sorted;
}

static void
add_line (FbProfile *p, char *line)
{
  g_ptr_array_add (p->diagnosis, line);
}

static void
where_time_goes (FbProfile *p, double total)
{
  double t[4] = { 0 };
  guint n[4] = { 0 };
  static const char *words[] = { "generated loops", "library calls", "host steps", "copies" };
  for (guint i = 0; i < p->kernels->len; i++)
    {
      const FbProfileKernel *k = g_ptr_array_index (p->kernels, i);
      guint kind = MIN ((guint) k->kind, 3u);
      t[kind] += k->median_us;
      n[kind]++;
    }
  GString *s = g_string_new (NULL);
  g_string_printf (s, "Where the time goes: kernels ran %.3f ms of the %.3f ms median inference",
                   total / 1e3, p->wall_median_ms);
  const char *sep = ": ";
  for (guint k = 0; k < 4; k++)
    if (n[k] > 0)
      {
        g_string_append_printf (s, "%s%.0f %% in %s (%u kernel%s)", sep, pct (t[k], total),
                                words[k], n[k], n[k] == 1 ? "" : "s");
        sep = ", ";
      }
  g_string_append (s, ".");
  add_line (p, g_string_free (s, FALSE));
}

static void
top_kernels (FbProfile *p, double total)
{
  g_autoptr(GPtrArray) sorted = by_time (p);
  GString *s = g_string_new ("Top kernels:");
  for (guint i = 0; i < MIN (N_TOP, sorted->len); i++)
    {
      const FbProfileKernel *k = g_ptr_array_index (sorted, i);
      g_string_append_printf (s, "%s %s %.0f %% (%.1f µs", i ? "," : "", k->name,
                              pct (k->median_us, total), k->median_us);
      if (k->nodes->len > 1)
        g_string_append_printf (s, ", %u nodes fused", k->nodes->len);
      g_string_append (s, ")");
    }
  g_string_append (s, ".");
  add_line (p, g_string_free (s, FALSE));
}

/* Wall minus busy, both medians of whole inferences: what the executor spends between and
 * around kernels. */
static void
dispatch_overhead (FbProfile *p)
{
  double outside = MAX (p->wall_median_ms - p->busy_ms, 0);
  add_line (p, g_strdup_printf ("Dispatch overhead: %.3f ms per inference (%.1f %% of the wall "
                                "time) is outside any kernel: binding inputs, copying outputs "
                                "and starting each kernel (%u kernels, %.2f µs each on average).",
                                outside, pct (outside, p->wall_median_ms), p->kernels->len,
                                p->kernels->len ? outside * 1e3 / p->kernels->len : 0));
}

/* When each kernel's median adds up to much less than a whole inference's busy time, runs were
 * disturbed (a shared machine): say so, since the kernels' medians are then the steadier
 * figures and the wall time is not. */
static void
noise (FbProfile *p, double total)
{
  double busy_us = p->busy_ms * 1e3;
  if (busy_us <= 0 || total >= 0.8 * busy_us)
    return;
  add_line (p, g_strdup_printf ("Noise: the kernels' medians add up to %.3f ms but a whole "
                                "inference kept them busy %.3f ms (median; wall %.3f to %.3f ms): "
                                "other work disturbed the runs, so trust the per-kernel figures "
                                "over the wall time, or profile again on a quiet machine.",
                                total / 1e3, p->busy_ms, p->wall_min_ms, p->wall_max_ms));
}

static void
idle_threads (FbProfile *p, double total)
{
  double span = 0, busy = 0, self = 0, workers = 0;
  guint n_pooled = 0, n_threads = 0, n_self = 0;
  for (guint i = 0; i < p->kernels->len; i++)
    {
      const FbProfileKernel *k = g_ptr_array_index (p->kernels, i);
      if (k->worker_busy_us->len > 1)
        {
          n_threads = MAX (n_threads, k->worker_busy_us->len);
          span += k->median_us * k->worker_busy_us->len;
          for (guint t = 0; t < k->worker_busy_us->len; t++)
            {
              double b = MIN (g_array_index (k->worker_busy_us, double, t), k->median_us);
              busy += b;
              workers += t > 0 ? b : 0;
            }
          n_pooled++;
        }
      else if (k->kind == FB_PROFILE_KERNEL_LIBRARY)
        {
          self += k->median_us;
          n_self++;
        }
    }
  if (n_pooled == 0)
    {
      add_line (p, g_strdup_printf ("Threads: no kernel was spread over worker threads; %.0f %% "
                                    "of the kernel time ran in %u library call%s that thread "
                                    "themselves.", pct (self, total), n_self, n_self == 1 ? "" : "s"));
      return;
    }
  add_line (p, g_strdup_printf ("Threads idle: in the %u kernel%s split over %u threads "
                                "(%.0f %% of the kernel time) the threads were busy %.0f %% of "
                                "the time and idle %.0f %% (%.3f ms of thread time per "
                                "inference); %u library kernel%s (%.0f %% of the time) %s "
                                "over the threads by the library, unseen here.", n_pooled,
                                n_pooled == 1 ? "" : "s", n_threads, pct (span / n_threads, total),
                                pct (busy, span), 100 - pct (busy, span), (span - busy) / 1e3,
                                n_self, n_self == 1 ? "" : "s", pct (self, total),
                                n_self == 1 ? "is spread" : "are spread"));
  /* The whole inference: what the threads besides the caller did of the wall time. */
  add_line (p, g_strdup_printf ("Threads over the whole inference: the %u worker thread%s "
                                "besides the caller worked %.3f ms in generated loops, %.0f %% "
                                "of the %.3f ms wall time.", n_threads - 1,
                                n_threads == 2 ? "" : "s", workers / 1e3,
                                pct (workers / 1e3, (n_threads - 1) * p->wall_median_ms),
                                p->wall_median_ms));
}

static void
under_roofline (FbProfile *p, double total)
{
  if (p->device.peak_gbps <= 0 || p->device.peak_gflops <= 0)
    {
      add_line (p, g_strdup_printf ("Roofline: no ceilings in this profile (0 GB/s, 0 GFLOP/s), "
                                    "so no kernel is placed on it."));
      return;
    }
  g_autoptr(GPtrArray) sorted = by_time (p);
  guint listed = 0, n_memory = 0;
  double t_memory = 0;
  for (guint i = 0; i < sorted->len; i++)
    {
      const FbProfileKernel *k = g_ptr_array_index (sorted, i);
      double seconds = k->median_us * 1e-6;
      if (k->bound == FB_BOUND_MEMORY)
        {
          n_memory++;
          t_memory += k->median_us;
        }
      if (seconds <= 0 || k->roofline_share >= FAR_UNDER_ROOF ||
          k->median_us < WORTH_LISTING * total || listed >= N_TOP)
        continue;
      double bytes = (double) (k->bytes_read + k->bytes_written);
      if (k->bound == FB_BOUND_MEMORY)
        add_line (p, g_strdup_printf ("Under its roofline: %s (%.0f %% of the time) is "
                                      "memory-bound at %.0f %% of the measured bandwidth: "
                                      "%.2f GB/s of %.2f, moving %.2f MB %s.", k->name,
                                      pct (k->median_us, total), 100 * k->roofline_share,
                                      bytes / seconds / 1e9, p->device.peak_gbps, bytes / 1e6,
                                      k->bytes_source == FB_BYTES_MEASURED ? "(measured)"
                                                                           : "(modeled)"));
      else
        add_line (p, g_strdup_printf ("Under its roofline: %s (%.0f %% of the time) is "
                                      "compute-bound at %.0f %% of the measured peak: %.2f "
                                      "GFLOP/s of %.2f.", k->name, pct (k->median_us, total),
                                      100 * k->roofline_share, k->flops / seconds / 1e9,
                                      p->device.peak_gflops));
      listed++;
    }
  add_line (p, g_strdup_printf ("Roofline: %u of %u kernels (%.0f %% of the time) are "
                                "memory-bound against %.2f GB/s and %.1f GFLOP/s (%s); "
                                "%u take at least %.0f %% of the time and reach under %.0f %% of "
                                "their roof.", n_memory, p->kernels->len, pct (t_memory, total),
                                p->device.peak_gbps, p->device.peak_gflops,
                                p->device.ceilings_measured ? "measured" : "given", listed,
                                100 * WORTH_LISTING, 100 * FAR_UNDER_ROOF));
}

static void
layout_transposes (FbProfile *p, const FbGraph *final, double total)
{
  double t = 0;
  guint n = 0;
  for (guint i = 0; final && i < p->kernels->len; i++)
    {
      const FbProfileKernel *k = g_ptr_array_index (p->kernels, i);
      const FbNode *node = fb_graph_find_node (final, k->stage_node);
      if (node && (node->flags & FB_NODE_INSERTED))
        {
          t += k->median_us;
          n++;
        }
    }
  if (n == 0)
    add_line (p, g_strdup ("Layout: 0 transposes were inserted by the layout pass."));
  else
    add_line (p, g_strdup_printf ("Layout: %u transpose%s inserted by the layout pass cost "
                                  "%.1f µs per inference (%.1f %% of the kernel time).", n,
                                  n == 1 ? "" : "s", t, pct (t, total)));
}

void
_fb_profile_diagnose (FbProfile *p, const FbGraph *final)
{
  double total = fb_profile_total_us (p);
  g_ptr_array_set_size (p->diagnosis, 0);
  if (p->kernels->len == 0)
    {
      add_line (p, g_strdup_printf ("No kernels: the model computes nothing at run time "
                                    "(%.3f ms per inference).", p->wall_median_ms));
      return;
    }
  where_time_goes (p, total);
  top_kernels (p, total);
  /* On a GPU the wall time is the device's: its idle time and what causes it are the
   * utilization lines (fb_gpu_utilization_diagnose), and it has no worker threads. */
  if (!fb_profile_traced_device (p))
    {
      noise (p, total);
      dispatch_overhead (p);
      idle_threads (p, total);
    }
  under_roofline (p, total);
  layout_transposes (p, final, total);
}
