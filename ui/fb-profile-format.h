/* SPDX-License-Identifier: GPL-3.0-or-later */
/* How the workbench writes measured quantities: the same units and precision in the overlays,
 * the tables, the timeline and the roofline, so that a number reads the same wherever it is. */
#pragma once

#include "fb-profile.h"

G_BEGIN_DECLS

/* "850 ns", "12.4 µs", "3.21 ms", "1.20 s". */
char       *fb_format_time_us       (double      us);
/* "+0.12 ms", "−34 µs". */
char       *fb_format_delta_us      (double      us);
/* "512 B", "4.2 KB", "12.3 MB", "1.02 GB" (powers of 1000, as bandwidth is counted). */
char       *fb_format_bytes         (double      bytes);
/* "12.3 GB/s", "850 MB/s". */
char       *fb_format_gbps          (double      gbps);
/* "45.2 GFLOP/s", "1.20 TFLOP/s". */
char       *fb_format_gflops        (double      gflops);
/* "12.5 %" of a fraction 0..1. */
char       *fb_format_share         (double      share);
/* "measured", "modeled", or "measured where counters allowed" for the bytes of a profile. */
const char *fb_profile_bytes_source_text (const FbProfile *profile);
/* "generated", "library", "host", "copy". */
const char *fb_profile_kernel_kind_text  (FbProfileKernelKind kind);
/* A kernel's achieved rates, 0 when its time is 0. */
double      fb_profile_kernel_gbps       (const FbProfileKernel *kernel);
double      fb_profile_kernel_gflops     (const FbProfileKernel *kernel);
/* Arithmetic intensity, flops per byte; 0 without bytes. */
double      fb_profile_kernel_intensity  (const FbProfileKernel *kernel);
/* The kernel of that id, or NULL. */
const FbProfileKernel *fb_profile_find_kernel (const FbProfile *profile,
                                               guint            id);

G_END_DECLS
