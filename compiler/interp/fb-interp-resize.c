/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Resize (opsets 10 to 19) and Upsample. Nearest, linear and cubic interpolation are separable:
 * resizing one axis at a time gives exactly the n-linear / n-cubic result, so one 1-D routine
 * serves every axis. Each output coordinate maps back to the input through the
 * coordinate_transformation_mode; nearest picks by nearest_mode, linear and cubic weigh taps. */
#include "fb-interp-private.h"

#include "fb-resize-spec.h"

#include <math.h>
#include <string.h>

/* The node's Resize attributes, with errors in this module's domain. */
static gboolean
read_options (const FbNode *node, FbResizeSpec *o, GError **error)
{
  g_autoptr(GError) local = NULL;

  if (fb_resize_spec_read (node, o, &local))
    return TRUE;
  return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED, "%s", local->message);
}

gboolean
_fb_interp_check_resize (const FbNode *node, GError **error)
{
  FbResizeSpec o;
  const char *policy = fb_node_attr_string (node, "keep_aspect_ratio_policy", "stretch");

  if (strcmp (policy, "stretch") != 0 && strcmp (policy, "not_larger") != 0 &&
      strcmp (policy, "not_smaller") != 0)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "keep_aspect_ratio_policy '%s' is unknown", policy);
  return read_options (node, &o, error);
}

/* Resizes axis `axis` of v (dims) to `out` positions; returns the new values. */
static double *
resize_axis (const FbNode *node, const FbResizeSpec *o, const double *v, const int64_t *dims, int rank,
             int axis, int64_t out, double scale, double roi_start, double roi_end, GError **error)
{
  int64_t outer = _fb_interp_prod (dims, 0, axis), in = dims[axis];
  int64_t inner = _fb_interp_prod (dims, axis + 1, rank), n;
  double *r;

  /* Upsampling one axis before another shrinks can make a passing result larger than both. */
  if (__builtin_mul_overflow (outer, out, &n) || __builtin_mul_overflow (n, inner, &n))
    n = -1;
  r = _fb_interp_alloc (node, n, sizeof (double), error);
  if (r == NULL)
    return NULL;

  for (int64_t x = 0; x < out; x++)
    {
      double sx = fb_resize_source_coord (o, (double) x, in, out, scale, roi_start, roi_end);
      int64_t taps[4];
      double w[4];
      int nt = 0;
      gboolean outside = o->transform == FB_RESIZE_TF_CROP_AND_RESIZE && (sx < 0 || sx > in - 1);

      if (!outside)
        nt = fb_resize_taps (o, sx, in, taps, w);
      for (int64_t p = 0; p < outer; p++)
        for (int64_t q = 0; q < inner; q++)
          {
            double acc = outside ? o->extrapolation : 0;
            for (int t = 0; t < nt; t++)
              acc += w[t] * v[(p * in + taps[t]) * inner + q];
            r[(p * out + x) * inner + q] = acc;
          }
    }
  return r;
}

gboolean
_fb_interp_resize (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                   GError **error)
{
  FbTensor *x = in[0];
  int opset = _fb_interp_opset (node), rank = x->rank;
  double scales[FB_MAX_RANK], roi[2 * FB_MAX_RANK];
  int64_t sizes[FB_MAX_RANK], dims[FB_MAX_RANK];
  FbTensor *scale_t = NULL, *size_t_ = NULL, *roi_t = NULL;
  g_autofree int64_t *axes = NULL;
  guint n_axes = 0;
  FbResizeSpec o;
  g_autofree double *v = NULL;
  FbTensor *y;

  if (!read_options (node, &o, error))
    return FALSE;
  if (rank == 0)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "cannot resize a scalar");
  /* Where each opset keeps its scales, sizes and region of interest. */
  if (node->op == FB_OP_UPSAMPLE && opset < 9)
    ;
  else if (node->op == FB_OP_UPSAMPLE || opset < 11)
    scale_t = node->n_inputs > 1 ? in[1] : NULL;
  else
    {
      roi_t = node->n_inputs > 1 ? in[1] : NULL;
      scale_t = node->n_inputs > 2 ? in[2] : NULL;
      size_t_ = node->n_inputs > 3 ? in[3] : NULL;
      if (scale_t != NULL && scale_t->numel == 0)
        scale_t = NULL;
      if (roi_t != NULL && roi_t->numel == 0)
        roi_t = NULL;
    }
  if (opset >= 18 && fb_node_attr (node, "axes") != NULL)
    {
      const int64_t *a = fb_node_attr_ints (node, "axes", &n_axes);
      axes = g_memdup2 (a, sizeof (int64_t) * MAX (n_axes, 1));
    }
  else
    {
      n_axes = rank;
      axes = g_new (int64_t, rank);
      for (int i = 0; i < rank; i++)
        axes[i] = i;
    }
  for (int i = 0; i < rank; i++)
    {
      scales[i] = 1;
      sizes[i] = x->dims[i];
      roi[i] = 0;
      roi[rank + i] = 1;
    }
  for (guint k = 0; k < n_axes; k++)
    {
      int a;
      if (!fb_axis_normalize (axes[k], rank, &a))
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "an axis is out of range");
      axes[k] = a;
    }

  if (node->op == FB_OP_UPSAMPLE && opset < 9)
    {
      guint n;
      const float *s = fb_node_attr_floats (node, "scales", &n);
      if (s == NULL || n != (guint) rank)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "the scales attribute must have %d entries", rank);
      for (int i = 0; i < rank; i++)
        scales[i] = s[i];
    }
  if (roi_t != NULL)
    {
      g_autofree double *r = NULL;
      if (roi_t->numel != 2 * (int64_t) n_axes)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "roi has %" G_GINT64_FORMAT " entries for %u axes", roi_t->numel,
                                n_axes);
      r = _fb_interp_read_f64 (roi_t);
      for (guint k = 0; k < n_axes; k++)
        {
          roi[axes[k]] = r[k];
          roi[rank + axes[k]] = r[n_axes + k];
        }
    }
  if (size_t_ != NULL && size_t_->numel > 0)
    {
      g_autofree int64_t *s = NULL;
      guint n;
      const char *policy = fb_node_attr_string (node, "keep_aspect_ratio_policy", "stretch");
      if (scale_t != NULL)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "only one of scales and sizes may be given");
      if (!_fb_interp_int_list (node, size_t_, "sizes", &s, &n, error))
        return FALSE;
      if (n != n_axes)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "sizes has %u entries for %u axes", n, n_axes);
      for (guint k = 0; k < n; k++)
        if (s[k] < 0 || s[k] > G_MAXINT32)
          return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                  "size %" G_GINT64_FORMAT " is out of range", s[k]);
      if (strcmp (policy, "stretch") == 0)
        for (guint k = 0; k < n; k++)
          {
            int a = (int) axes[k];
            sizes[a] = s[k];
            scales[a] = x->dims[a] > 0 ? (double) (float) ((float) s[k] / (float) x->dims[a]) : 1;
          }
      else
        {
          /* One scale for every listed axis keeps the aspect ratio. */
          gboolean larger = strcmp (policy, "not_smaller") == 0;
          double sc = larger ? 0 : G_MAXDOUBLE;
          for (guint k = 0; k < n; k++)
            {
              double r = x->dims[axes[k]] > 0 ? (double) s[k] / x->dims[axes[k]] : 1;
              sc = larger ? MAX (sc, r) : MIN (sc, r);
            }
          for (guint k = 0; k < n; k++)
            {
              int a = (int) axes[k];
              scales[a] = sc;
              sizes[a] = (int64_t) floor (sc * x->dims[a] + 0.5);
            }
        }
    }
  else if (scale_t != NULL)
    {
      g_autofree double *s = NULL;
      if (scale_t->numel != (int64_t) n_axes || !fb_dtype_is_float (scale_t->dtype))
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "scales must be %u floats", n_axes);
      s = _fb_interp_read_f64 (scale_t);
      for (guint k = 0; k < n_axes; k++)
        scales[axes[k]] = s[k];
    }
  else if (!(node->op == FB_OP_UPSAMPLE && opset < 9))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "neither scales nor sizes is given");
  if (size_t_ == NULL || size_t_->numel == 0)
    for (int i = 0; i < rank; i++)
      {
        double extent;
        if (!(scales[i] > 0) || !isfinite (scales[i]))
          return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                  "scale %g is not a positive number", scales[i]);
        /* floor(extent * scale) even for tf_crop_and_resize: ONNX Runtime and the ONNX reference
         * implementation leave the region of interest out of the output size. */
        extent = x->dims[i] * scales[i];
        if (!(extent < (double) G_MAXINT32))
          return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                  "the output would be too large on axis %d", i);
        sizes[i] = (int64_t) floor (MAX (extent, 0));
      }

  for (int i = 0; i < rank; i++)
    if (sizes[i] > 0 && x->dims[i] == 0)
      return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                              "cannot resize the empty axis %d", i);
  v = _fb_interp_read_f64 (x);
  memcpy (dims, x->dims, sizeof dims);
  for (int i = 0; i < rank; i++)
    {
      double *r;
      gboolean identity = sizes[i] == dims[i] && scales[i] == 1 &&
                          o.transform != FB_RESIZE_TF_CROP_AND_RESIZE;
      if (identity)
        continue;
      r = resize_axis (node, &o, v, dims, rank, i, sizes[i], scales[i], roi[i], roi[rank + i],
                       error);
      if (r == NULL)
        return FALSE;
      g_free (v);
      v = r;
      dims[i] = sizes[i];
    }
  y = _fb_interp_new (node, x->dtype, rank, dims, error);
  if (y == NULL)
    return FALSE;
  _fb_interp_write_f64 (y, v);
  out[0] = y;
  return TRUE;
}
