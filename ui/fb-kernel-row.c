/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-kernel-row.h"
#include "fb-profile-format.h"

struct _FbKernelRow {
  GObject                parent_instance;

  FbProfile             *profile;
  const FbProfileKernel *kernel;
  double                 share;
};

G_DEFINE_FINAL_TYPE (FbKernelRow, fb_kernel_row, G_TYPE_OBJECT)

FbKernelRow *
fb_kernel_row_new (FbProfile             *profile,
                   const FbProfileKernel *kernel,
                   double                 total_us)
{
  FbKernelRow *self;

  g_return_val_if_fail (profile != NULL, NULL);
  g_return_val_if_fail (kernel != NULL, NULL);

  self = g_object_new (FB_TYPE_KERNEL_ROW, NULL);
  self->profile = fb_profile_ref (profile);
  self->kernel = kernel;
  self->share = total_us > 0 ? kernel->median_us / total_us : 0;
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

char *
fb_kernel_row_get_text (FbKernelRow    *row,
                        FbKernelColumn  column)
{
  const FbProfileKernel *k;

  g_return_val_if_fail (FB_IS_KERNEL_ROW (row), NULL);
  k = row->kernel;
  switch (column)
    {
    case FB_KERNEL_COLUMN_NAME:
      return g_strdup (k->name);
    case FB_KERNEL_COLUMN_KIND:
      return g_strdup (fb_profile_kernel_kind_text (k->kind));
    case FB_KERNEL_COLUMN_NODES:
      if (k->nodes->len == 0)
        return g_strdup ("—");
      if (k->nodes->len == 1)
        return g_strdup (g_ptr_array_index (k->nodes, 0));
      return g_strdup_printf ("%s +%u", (const char *) g_ptr_array_index (k->nodes, 0), k->nodes->len - 1);
    case FB_KERNEL_COLUMN_CALLS:
      return g_strdup_printf ("%u", k->calls);
    case FB_KERNEL_COLUMN_TIME:
      return fb_format_time_us (k->median_us);
    case FB_KERNEL_COLUMN_SHARE:
      return fb_format_share (row->share);
    case FB_KERNEL_COLUMN_BYTES:
      {
        g_autofree char *b = fb_format_bytes ((double) (k->bytes_read + k->bytes_written));

        return g_strdup_printf ("%s%s", b, k->bytes_source == FB_BYTES_MODELED ? " (modeled)" : "");
      }
    case FB_KERNEL_COLUMN_GBPS:
      return g_strdup_printf ("%.1f", fb_profile_kernel_gbps (k));
    case FB_KERNEL_COLUMN_GFLOPS:
      return g_strdup_printf ("%.1f", fb_profile_kernel_gflops (k));
    case FB_KERNEL_COLUMN_BOUND:
      return g_strdup (k->bound == FB_BOUND_COMPUTE ? "compute" : "memory");
    case FB_KERNEL_COLUMN_ROOFLINE:
    default:
      return fb_format_share (k->roofline_share);
    }
}

double
fb_kernel_row_get_sort_key (FbKernelRow    *row,
                            FbKernelColumn  column)
{
  const FbProfileKernel *k;

  g_return_val_if_fail (FB_IS_KERNEL_ROW (row), 0);
  k = row->kernel;
  switch (column)
    {
    case FB_KERNEL_COLUMN_CALLS:
      return k->calls;
    case FB_KERNEL_COLUMN_BYTES:
      return (double) (k->bytes_read + k->bytes_written);
    case FB_KERNEL_COLUMN_GBPS:
      return fb_profile_kernel_gbps (k);
    case FB_KERNEL_COLUMN_GFLOPS:
      return fb_profile_kernel_gflops (k);
    case FB_KERNEL_COLUMN_ROOFLINE:
      return k->roofline_share;
    case FB_KERNEL_COLUMN_KIND:
      return k->kind;
    case FB_KERNEL_COLUMN_BOUND:
      return k->bound;
    case FB_KERNEL_COLUMN_NODES:
      return k->nodes->len;
    case FB_KERNEL_COLUMN_TIME:
    case FB_KERNEL_COLUMN_SHARE:
    default:
      return k->median_us;
    }
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
