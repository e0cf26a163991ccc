/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-profile-format.h"

#include <math.h>

char *
fb_format_time_us (double us)
{
  double a = fabs (us);

  if (a < 1)
    return g_strdup_printf ("%.0f ns", us * 1000);
  if (a < 1000)
    return g_strdup_printf (a < 100 ? "%.1f µs" : "%.0f µs", us);
  if (a < 1e6)
    return g_strdup_printf (a < 100e3 ? "%.2f ms" : "%.1f ms", us / 1000);
  return g_strdup_printf ("%.2f s", us / 1e6);
}

char *
fb_format_delta_us (double us)
{
  g_autofree char *magnitude = fb_format_time_us (fabs (us));

  /* A real minus sign: it lines up with the plus in a column of numbers. */
  return g_strdup_printf ("%s%s", us < 0 ? "−" : "+", magnitude);
}

char *
fb_format_bytes (double bytes)
{
  if (bytes < 1000)
    return g_strdup_printf ("%.0f B", bytes);
  if (bytes < 1e6)
    return g_strdup_printf ("%.1f KB", bytes / 1e3);
  if (bytes < 1e9)
    return g_strdup_printf ("%.1f MB", bytes / 1e6);
  return g_strdup_printf ("%.2f GB", bytes / 1e9);
}

char *
fb_format_gbps (double gbps)
{
  if (gbps < 1)
    return g_strdup_printf ("%.0f MB/s", gbps * 1000);
  return g_strdup_printf (gbps < 100 ? "%.1f GB/s" : "%.0f GB/s", gbps);
}

char *
fb_format_gflops (double gflops)
{
  if (gflops < 1)
    return g_strdup_printf ("%.0f MFLOP/s", gflops * 1000);
  if (gflops >= 1000)
    return g_strdup_printf ("%.2f TFLOP/s", gflops / 1000);
  return g_strdup_printf (gflops < 100 ? "%.1f GFLOP/s" : "%.0f GFLOP/s", gflops);
}

char *
fb_format_share (double share)
{
  share *= 100;
  return g_strdup_printf (share < 10 && share != 0 ? "%.1f %%" : "%.0f %%", share);
}

const char *
fb_profile_bytes_source_text (const FbProfile *profile)
{
  guint measured = 0;

  g_return_val_if_fail (profile != NULL, NULL);

  for (guint i = 0; i < profile->kernels->len; i++)
    measured += ((FbProfileKernel *) g_ptr_array_index (profile->kernels, i))->bytes_source == FB_BYTES_MEASURED;
  if (measured == 0)
    return "modeled";
  return measured == profile->kernels->len ? "measured" : "measured where counters allowed";
}

const char *
fb_profile_kernel_kind_text (FbProfileKernelKind kind)
{
  switch (kind)
    {
    case FB_PROFILE_KERNEL_GENERATED:
      return "generated";
    case FB_PROFILE_KERNEL_LIBRARY:
      return "library";
    case FB_PROFILE_KERNEL_HOST:
      return "host";
    case FB_PROFILE_KERNEL_COPY:
      return "copy";
    default:
      return "?";
    }
}

double
fb_profile_kernel_gbps (const FbProfileKernel *kernel)
{
  g_return_val_if_fail (kernel != NULL, 0);

  /* Bytes per µs are MB/s: a thousandth of that is GB/s. */
  if (kernel->median_us <= 0)
    return 0;
  return (double) (kernel->bytes_read + kernel->bytes_written) / kernel->median_us / 1e3;
}

double
fb_profile_kernel_gflops (const FbProfileKernel *kernel)
{
  g_return_val_if_fail (kernel != NULL, 0);

  if (kernel->median_us <= 0)
    return 0;
  return kernel->flops / kernel->median_us / 1e3;
}

double
fb_profile_kernel_intensity (const FbProfileKernel *kernel)
{
  double bytes;

  g_return_val_if_fail (kernel != NULL, 0);

  bytes = (double) (kernel->bytes_read + kernel->bytes_written);
  return bytes > 0 ? kernel->flops / bytes : 0;
}

const FbProfileKernel *
fb_profile_find_kernel (const FbProfile *profile,
                        guint            id)
{
  g_return_val_if_fail (profile != NULL, NULL);

  /* Plan order usually puts kernel i at index i. */
  if (id < profile->kernels->len && ((FbProfileKernel *) g_ptr_array_index (profile->kernels, id))->id == id)
    return g_ptr_array_index (profile->kernels, id);
  for (guint i = 0; i < profile->kernels->len; i++)
    if (((FbProfileKernel *) g_ptr_array_index (profile->kernels, i))->id == id)
      return g_ptr_array_index (profile->kernels, i);
  return NULL;
}
