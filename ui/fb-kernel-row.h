/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One kernel of a profile as a list item: a row of the profile panel's top-kernels table. */
#pragma once

#include "fb-profile.h"

#include <glib-object.h>

G_BEGIN_DECLS

/* The columns of the top-kernels table. */
typedef enum {
  FB_KERNEL_COLUMN_NAME,
  FB_KERNEL_COLUMN_KIND,
  FB_KERNEL_COLUMN_NODES,
  FB_KERNEL_COLUMN_CALLS,
  FB_KERNEL_COLUMN_TIME,
  FB_KERNEL_COLUMN_SHARE,
  FB_KERNEL_COLUMN_BYTES,
  FB_KERNEL_COLUMN_GBPS,
  FB_KERNEL_COLUMN_GFLOPS,
  FB_KERNEL_COLUMN_BOUND,
  FB_KERNEL_COLUMN_ROOFLINE,
  FB_KERNEL_N_COLUMNS
} FbKernelColumn;

#define FB_TYPE_KERNEL_ROW (fb_kernel_row_get_type ())
G_DECLARE_FINAL_TYPE (FbKernelRow, fb_kernel_row, FB, KERNEL_ROW, GObject)

/* Holds a reference to profile, which owns kernel. total_us is fb_profile_total_us (profile),
 * summed once by the caller for all the rows it makes rather than once per row. */
FbKernelRow           *fb_kernel_row_new        (FbProfile             *profile,
                                                 const FbProfileKernel *kernel,
                                                 double                 total_us);
const FbProfileKernel *fb_kernel_row_get_kernel (FbKernelRow *self);
FbProfile             *fb_kernel_row_get_profile(FbKernelRow *self);
/* Of the profile's total kernel time, 0..1. */
double                 fb_kernel_row_get_share  (FbKernelRow *self);
/* What the table shows in column, and what it sorts that column by. */
char                  *fb_kernel_row_get_text   (FbKernelRow    *self,
                                                 FbKernelColumn  column);
double                 fb_kernel_row_get_sort_key (FbKernelRow    *self,
                                                 FbKernelColumn  column);

G_END_DECLS
