/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What a profile says about its own measurements (fb-profile.h, FbProfileTiming and
 * FbProfileDram): the tracer's overhead, the DRAM traffic of whole replays, and the lines the
 * command line prints and the window shows, so that both say the same thing in the same
 * words. */
#include "fb-profile.h"

double
fb_profile_timing_overhead (const FbProfile *p)
{
  g_return_val_if_fail (p != NULL, 0);
  const FbProfileTiming *t = &p->timing;
  if (t->untraced_iterations == 0 || t->untraced_median_ms <= 0 || t->traced_median_ms <= 0)
    return 0;
  return t->traced_median_ms / t->untraced_median_ms - 1;
}

char *
fb_profile_timing_describe (const FbProfile *p)
{
  g_return_val_if_fail (p != NULL, NULL);
  const FbProfileTiming *t = &p->timing;
  if (t->untraced_iterations == 0)
    return NULL;
  g_autoptr(GString) s = g_string_new (NULL);
  g_string_append_printf (s, "timing: wall from %u untraced replays (CUDA events), median "
                          "%.3f ms, spread %.3f ms; traced %.3f ms (tracer %+.1f %%, kernel "
                          "durations only)", t->untraced_iterations, t->untraced_median_ms,
                          t->noise_ms, t->traced_median_ms,
                          100 * fb_profile_timing_overhead (p));
  if (t->replay_launch_ms > 0)
    g_string_append_printf (s, "; replay launch %.1f µs", 1000 * t->replay_launch_ms);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

char *
fb_profile_dram_describe (const FbProfile *p)
{
  g_return_val_if_fail (p != NULL, NULL);
  const FbProfileDram *d = &p->dram;
  if (d->replays == 0)
    return NULL;
  double read = 0, written = 0;
  guint measured = 0;
  for (guint i = 0; i < p->kernels->len; i++)
    {
      const FbProfileKernel *k = g_ptr_array_index (p->kernels, i);
      if (k->bytes_source != FB_BYTES_MEASURED)
        continue;
      read += (double) k->bytes_read;
      written += (double) k->bytes_written;
      measured++;
    }
  g_autoptr(GString) s = g_string_new (NULL);
  g_string_append_printf (s, "DRAM per inference, one counter range over %u replays back to "
                          "back: read %.1f MB, written %.1f MB", d->replays, d->read_bytes / 1e6,
                          d->written_bytes / 1e6);
  /* Without measured kernels (their counts did not match the launches) there is no sum to
   * set beside it: the modeled bytes are another quantity. */
  if (measured > 0)
    g_string_append_printf (s, "; the kernels' own ranges add up to %.1f MB read, %.1f MB "
                            "written (a kernel's range counts its output written back by its "
                            "end; in a replay most of it stays in the L2 for the next kernel)",
                            read / 1e6, written / 1e6);
  return g_string_free (g_steal_pointer (&s), FALSE);
}
