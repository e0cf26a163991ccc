/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inference for resampling: Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9). */
#include "fb-infer-private.h"

#include <math.h>
#include <string.h>

/* floor(d * scale) with the scale checked; unknown in, unknown out. */
static gboolean
scaled_extent (const FbNode *node, int axis, int64_t d, double scale, int64_t *out, GError **error)
{
  double v;

  if (!(scale > 0.0) || isinf (scale))
    return _fb_infer_fail (error, node, "scale %g of axis %d is not a positive number", scale, axis);
  if (d < 0)
    {
      *out = FB_DIM_UNKNOWN;
      return TRUE;
    }
  v = floor ((double) d * scale);
  if (v >= 9.2e18)
    return _fb_infer_fail (error, node, "scaling axis %d by %g overflows 64 bits", axis, scale);
  *out = (int64_t) v;
  return TRUE;
}

static gboolean
check_mode (const FbNode *node, gboolean cubic_ok, GError **error)
{
  const char *mode = fb_node_attr_string (node, "mode", "nearest");

  if (strcmp (mode, "nearest") == 0 || strcmp (mode, "linear") == 0 ||
      (cubic_ok && strcmp (mode, "cubic") == 0))
    return TRUE;
  return _fb_infer_fail (error, node, "mode '%s' is not defined", mode);
}

gboolean
_fb_infer_resize (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  int opset = _fb_infer_opset (node);
  guint scales_at = opset >= 11 ? 2 : 1;
  g_autofree double *scales = NULL;
  g_autofree double *roi = NULL;
  g_autofree int64_t *sizes = NULL;
  int n_scales = -1, n_sizes = -1, n_roi = -1, r;
  int64_t scales_len = -1, sizes_len = -1;
  const int64_t *axes_attr;
  guint n_axes_attr;
  int axes[FB_MAX_RANK], n_axes;
  gboolean mask[FB_MAX_RANK], tf_crop, ambiguous;
  const char *policy = fb_node_attr_string (node, "keep_aspect_ratio_policy", "stretch");
  FbShape out;

  if (x == NULL || !check_mode (node, opset >= 11, error))
    return FALSE;
  if (opset < 18 && (!_fb_infer_no_attr (node, "axes", error) ||
                     !_fb_infer_no_attr (node, "keep_aspect_ratio_policy", error) ||
                     !_fb_infer_no_attr (node, "antialias", error)))
    return FALSE;
  if (opset < 11 && (_fb_infer_require (node, 1, error) == NULL ||
                     !_fb_infer_no_input (node, 2, "scales", 11, error) ||
                     !_fb_infer_no_input (node, 3, "sizes", 11, error)))
    return FALSE;
  if (opset >= 11 && opset < 13 && _fb_infer_require (node, 2, error) == NULL)
    return FALSE;
  if (strcmp (policy, "stretch") != 0 && strcmp (policy, "not_larger") != 0 &&
      strcmp (policy, "not_smaller") != 0)
    return _fb_infer_fail (error, node, "keep_aspect_ratio_policy '%s' is not defined", policy);
  if (!_fb_infer_check_type (node, scales_at, FB_TYPES_FLOAT, error) ||
      !_fb_infer_const_floats (node, scales_at, "input 'scales'", FB_INFER_MAX_VECTOR, &scales,
                               &n_scales, error) ||
      !_fb_infer_vector_length (node, scales_at, "input 'scales'", FALSE, &scales_len, error))
    return FALSE;
  if (opset >= 11 &&
      (!_fb_infer_check_type (node, 3, FB_TYPES_INT64, error) ||
       !_fb_infer_const_ints (node, 3, "input 'sizes'", FB_INFER_MAX_VECTOR, &sizes, &n_sizes, error) ||
       !_fb_infer_vector_length (node, 3, "input 'sizes'", FALSE, &sizes_len, error) ||
       !_fb_infer_const_floats (node, 1, "input 'roi'", FB_INFER_MAX_VECTOR, &roi, &n_roi, error)))
    return FALSE;
  if (n_scales >= 0) scales_len = n_scales;
  if (n_sizes >= 0) sizes_len = n_sizes;
  /* An empty scales tensor (required in opsets 11 and 12) stands for "not given". */
  if (fb_node_input (node, scales_at) == NULL)
    scales_len = 0;
  if (fb_node_input (node, 3) == NULL || opset < 11)
    sizes_len = 0;
  if (scales_len > 0 && sizes_len > 0)
    return _fb_infer_fail (error, node, "only one of 'scales' and 'sizes' may be given");
  if (scales_len == 0 && sizes_len == 0)
    return _fb_infer_fail (error, node, "one of 'scales' and 'sizes' must be given");
  /* Both present, one of them of unknown length: which one counts is known only at run time. */
  ambiguous = scales_len != 0 && sizes_len != 0;

  if (!_fb_infer_attr_ints (node, "axes", -1, &axes_attr, &n_axes_attr, error))
    return FALSE;
  r = x->shape.rank;
  if (r < 0)
    {
      int64_t len = scales_len != 0 ? scales_len : sizes_len;
      if (axes_attr != NULL || ambiguous || len < 0 || len > FB_MAX_RANK)
        return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
      out = _fb_shape_of_rank ((int) len);
      return _fb_infer_set_output (node, 0, x->dtype, &out, error);
    }
  if (axes_attr != NULL)
    {
      if (!_fb_infer_axes_mask (node, axes_attr, (int) n_axes_attr, r, "axes", mask, error))
        return FALSE;
      n_axes = (int) n_axes_attr;
      for (int k = 0; k < n_axes; k++)
        fb_axis_normalize (axes_attr[k], r, &axes[k]);
    }
  else
    {
      n_axes = r;
      for (int k = 0; k < r; k++)
        axes[k] = k;
    }
  {
    int64_t len = ambiguous ? -1 : scales_len != 0 ? scales_len : sizes_len;
    if (len >= 0 && len != n_axes)
      return _fb_infer_fail (error, node, "'%s' has %" G_GINT64_FORMAT " entries for %d axes",
                             scales_len > 0 ? "scales" : "sizes", len, n_axes);
  }

  out = x->shape;
  tf_crop = strcmp (fb_node_attr_string (node, "coordinate_transformation_mode", "half_pixel"),
                    "tf_crop_and_resize") == 0;
  if (ambiguous)
    {
      for (int k = 0; k < n_axes; k++)
        {
          out.dim[axes[k]] = FB_DIM_UNKNOWN;
          out.sym[axes[k]] = NULL;
        }
      return _fb_infer_set_output (node, 0, x->dtype, &out, error);
    }
  if (scales_len != 0)
    {
      for (int k = 0; k < n_axes; k++)
        {
          int a = axes[k];
          double s;
          out.sym[a] = NULL;
          if (n_scales < 0)
            {
              out.dim[a] = FB_DIM_UNKNOWN;
              continue;
            }
          /* floor(extent * scale) for tf_crop_and_resize too: ONNX Runtime, and so the
           * interpreter, leave the region of interest out of the output's size. */
          s = scales[k];
          if (s == 1.0 && !tf_crop)
            {
              out.sym[a] = x->shape.sym[a];
              continue;
            }
          if (!scaled_extent (node, a, x->shape.dim[a], s, &out.dim[a], error))
            return FALSE;
        }
      return _fb_infer_set_output (node, 0, x->dtype, &out, error);
    }

  for (int k = 0; k < n_axes; k++)
    {
      out.sym[axes[k]] = NULL;
      out.dim[axes[k]] = n_sizes >= 0 ? sizes[k] : FB_DIM_UNKNOWN;
      if (n_sizes >= 0 && sizes[k] < 0)
        return _fb_infer_fail (error, node, "size %d is %" G_GINT64_FORMAT, k, sizes[k]);
    }
  if (n_sizes >= 0 && strcmp (policy, "stretch") != 0)
    {
      /* One scale for every resized axis, the smallest (not_larger) or the largest (not_smaller)
       * of sizes/extent, so that the aspect ratio stays. */
      gboolean larger = strcmp (policy, "not_smaller") == 0;
      double scale = larger ? 0.0 : INFINITY;
      for (int k = 0; k < n_axes; k++)
        {
          int64_t d = x->shape.dim[axes[k]];
          if (d <= 0)
            {
              scale = NAN;
              break;
            }
          scale = larger ? MAX (scale, (double) sizes[k] / d) : MIN (scale, (double) sizes[k] / d);
        }
      for (int k = 0; k < n_axes; k++)
        {
          double v;
          if (isnan (scale))
            {
              out.dim[axes[k]] = FB_DIM_UNKNOWN;
              continue;
            }
          v = round (scale * (double) x->shape.dim[axes[k]]);
          if (v >= 9.2e18)
            return _fb_infer_fail (error, node, "the resized extent overflows 64 bits");
          out.dim[axes[k]] = (int64_t) v;
        }
    }
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}

gboolean
_fb_infer_upsample (FbGraph *graph, FbNode *node, GError **error)
{
  FbValue *x = _fb_infer_require (node, 0, error);
  g_autofree double *scales = NULL;
  int n = -1;
  FbShape out;

  if (x == NULL || !check_mode (node, FALSE, error))
    return FALSE;
  if (_fb_infer_opset (node) < 9)
    {
      const float *v;
      guint count;
      if (!_fb_infer_no_input (node, 1, "scales", 9, error))
        return FALSE;
      v = fb_node_attr_floats (node, "scales", &count);
      if (v == NULL)
        return _fb_infer_fail (error, node, "the attribute 'scales' is missing");
      scales = g_new (double, MAX (count, 1));
      for (guint k = 0; k < count; k++)
        scales[k] = v[k];
      n = (int) MIN (count, (guint) G_MAXINT);
    }
  else if (!_fb_infer_no_attr (node, "scales", error) ||
           _fb_infer_require (node, 1, error) == NULL ||
           !_fb_infer_check_type (node, 1, FB_TYPES_FLOAT, error) ||
           !_fb_infer_const_floats (node, 1, "input 'scales'", FB_INFER_MAX_VECTOR, &scales, &n,
                                    error))
    return FALSE;

  if (x->shape.rank < 0)
    {
      if (n < 0 || n > FB_MAX_RANK)
        return _fb_infer_set_output (node, 0, x->dtype, &x->shape, error);
      out = _fb_shape_of_rank (n);
      return _fb_infer_set_output (node, 0, x->dtype, &out, error);
    }
  if (n >= 0 && n != x->shape.rank)
    return _fb_infer_fail (error, node, "'scales' has %d entries for an input of rank %d", n,
                           x->shape.rank);
  out = x->shape;
  for (int i = 0; i < out.rank; i++)
    {
      if (n < 0)
        {
          out.dim[i] = FB_DIM_UNKNOWN;
          out.sym[i] = NULL;
          continue;
        }
      if (!(scales[i] >= 1.0))
        return _fb_infer_fail (error, node, "scale %g of axis %d is below 1", scales[i], i);
      if (scales[i] == 1.0)
        continue;
      out.sym[i] = NULL;
      if (!scaled_extent (node, i, x->shape.dim[i], scales[i], &out.dim[i], error))
        return FALSE;
    }
  return _fb_infer_set_output (node, 0, x->dtype, &out, error);
}
