/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-compare.h"

#include <math.h>

void
fb_compare_clear (FbCompare *result)
{
  g_return_if_fail (result != NULL);
  g_clear_pointer (&result->reason, g_free);
}

/* Sequences and optionals: the same kind and length, then item by item. */
static void
compare_items (const FbTensor *expected, const FbTensor *actual, double rtol, double atol,
               FbCompare *r)
{
  gboolean e_opt = expected->kind == FB_KIND_OPTIONAL ||
                   expected->kind == FB_KIND_OPTIONAL_SEQUENCE;
  guint n = fb_tensor_n_items (expected);

  /* An optional that is there compares equal to what it holds (Loop-16 and If hand out either). */
  if (expected->kind != actual->kind && e_opt && n == 1 &&
      fb_tensor_item (expected, 0)->kind == actual->kind)
    {
      fb_tensor_compare (fb_tensor_item (expected, 0), actual, rtol, atol, r);
      return;
    }
  if (expected->kind != actual->kind || n != fb_tensor_n_items (actual))
    {
      g_autofree char *want = fb_tensor_describe (expected);
      g_autofree char *got = fb_tensor_describe (actual);
      r->ok = FALSE;
      r->reason = g_strdup_printf ("%s, expected %s", got, want);
      return;
    }
  for (guint i = 0; i < n; i++)
    {
      FbCompare item;
      fb_tensor_compare (fb_tensor_item (expected, i), fb_tensor_item (actual, i), rtol, atol,
                         &item);
      r->worst_abs = MAX (r->worst_abs, item.worst_abs);
      r->worst_rel = MAX (r->worst_rel, item.worst_rel);
      if (!item.ok && r->ok)
        {
          r->ok = FALSE;
          r->reason = g_strdup_printf ("item %u: %s", i, item.reason);
        }
      fb_compare_clear (&item);
    }
}

void
fb_tensor_compare (const FbTensor *expected, const FbTensor *actual, double rtol, double atol,
                   FbCompare *r)
{
  double worst_excess = 0;
  int64_t worst = -1;

  g_return_if_fail (expected != NULL && actual != NULL && r != NULL);
  r->ok = TRUE;
  r->worst_abs = 0;
  r->worst_rel = 0;
  r->reason = NULL;

  if (expected->kind != FB_KIND_TENSOR || actual->kind != FB_KIND_TENSOR)
    {
      compare_items (expected, actual, rtol, atol, r);
      return;
    }

  if (expected->dtype != actual->dtype)
    {
      r->ok = FALSE;
      r->reason = g_strdup_printf ("element type %s, expected %s", fb_dtype_name (actual->dtype),
                                   fb_dtype_name (expected->dtype));
      return;
    }
  {
    FbShape e = fb_tensor_shape (expected), a = fb_tensor_shape (actual);
    if (!fb_shape_equal (&e, &a))
      {
        g_autofree char *es = fb_shape_to_string (&e);
        g_autofree char *as = fb_shape_to_string (&a);
        r->ok = FALSE;
        r->reason = g_strdup_printf ("shape %s, expected %s", as, es);
        return;
      }
  }
  for (int64_t i = 0; i < expected->numel; i++)
    {
      double e = fb_tensor_get_f64 (expected, i), a = fb_tensor_get_f64 (actual, i);
      double d, excess;

      if (isnan (e) || isnan (a) || isinf (e) || isinf (a))
        {
          if (!(isnan (e) && isnan (a)) && e != a && r->ok)
            {
              r->ok = FALSE;
              r->reason = g_strdup_printf ("element %" G_GINT64_FORMAT " is %g, expected %g", i,
                                           a, e);
            }
          continue;
        }
      /* Integers compare as int64 so that large values are not rounded into agreement. */
      if (!fb_dtype_is_float (expected->dtype) &&
          fb_tensor_get_i64 (expected, i) != fb_tensor_get_i64 (actual, i))
        d = MAX (fabs (a - e), 1);
      else
        d = fabs (a - e);
      r->worst_abs = MAX (r->worst_abs, d);
      if (fabs (e) > atol)
        r->worst_rel = MAX (r->worst_rel, d / fabs (e));
      excess = d - (atol + rtol * fabs (e));
      if (excess > worst_excess)
        {
          worst_excess = excess;
          worst = i;
        }
    }
  if (worst >= 0 && r->ok)
    {
      r->ok = FALSE;
      r->reason = g_strdup_printf ("element %" G_GINT64_FORMAT " is %.9g, expected %.9g", worst,
                                   fb_tensor_get_f64 (actual, worst),
                                   fb_tensor_get_f64 (expected, worst));
    }
}
