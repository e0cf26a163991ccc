/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-kernel-row.h"

struct _FbKernelRow {
  GObject                parent_instance;

  FbProfile             *profile;
  const FbProfileKernel *kernel;
  double                 share;
};

G_DEFINE_FINAL_TYPE (FbKernelRow, fb_kernel_row, G_TYPE_OBJECT)

FbKernelRow *
fb_kernel_row_new (FbProfile             *profile,
                   const FbProfileKernel *kernel)
{
  FbKernelRow *self;
  double total;

  g_return_val_if_fail (profile != NULL, NULL);
  g_return_val_if_fail (kernel != NULL, NULL);

  self = g_object_new (FB_TYPE_KERNEL_ROW, NULL);
  self->profile = fb_profile_ref (profile);
  self->kernel = kernel;
  total = fb_profile_total_us (profile);
  self->share = total > 0 ? kernel->median_us / total : 0;
  return self;
}

const FbProfileKernel *
fb_kernel_row_get_kernel (FbKernelRow *self)
{
  g_return_val_if_fail (FB_IS_KERNEL_ROW (self), NULL);
  return self->kernel;
}

FbProfile *
fb_kernel_row_get_profile (FbKernelRow *self)
{
  g_return_val_if_fail (FB_IS_KERNEL_ROW (self), NULL);
  return self->profile;
}

double
fb_kernel_row_get_share (FbKernelRow *self)
{
  g_return_val_if_fail (FB_IS_KERNEL_ROW (self), 0);
  return self->share;
}

static void
fb_kernel_row_finalize (GObject *object)
{
  FbKernelRow *self = FB_KERNEL_ROW (object);

  g_clear_pointer (&self->profile, fb_profile_unref);
  G_OBJECT_CLASS (fb_kernel_row_parent_class)->finalize (object);
}

static void
fb_kernel_row_class_init (FbKernelRowClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = fb_kernel_row_finalize;
}

static void
fb_kernel_row_init (FbKernelRow *self)
{
}
