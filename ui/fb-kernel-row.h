/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One kernel of a profile as a list item: a row of the profile panel's top-kernels table. */
#pragma once

#include "fb-profile.h"

#include <glib-object.h>

G_BEGIN_DECLS

#define FB_TYPE_KERNEL_ROW (fb_kernel_row_get_type ())
G_DECLARE_FINAL_TYPE (FbKernelRow, fb_kernel_row, FB, KERNEL_ROW, GObject)

/* Holds a reference to profile, which owns kernel. */
FbKernelRow           *fb_kernel_row_new        (FbProfile             *profile,
                                                 const FbProfileKernel *kernel);
const FbProfileKernel *fb_kernel_row_get_kernel (FbKernelRow *self);
FbProfile             *fb_kernel_row_get_profile(FbKernelRow *self);
/* Of the profile's total kernel time, 0..1. */
double                 fb_kernel_row_get_share  (FbKernelRow *self);

G_END_DECLS
