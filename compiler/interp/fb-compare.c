/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "fb-compare.h"

#include <math.h>

void
fb_compare_clear (FbCompare *result)
{
  g_return_if_fail (result != NULL);
  g_clear_pointer (&result->reason, g_free);
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
