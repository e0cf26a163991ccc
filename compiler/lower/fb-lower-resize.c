/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Resize (opsets 10 to 19) and Upsample (7, 9), computing what fb-interp-resize.c computes.
 *
 * Scales, sizes and the region of interest are constants once shapes are pinned, so everything
 * that depends only on an output coordinate is worked out here, in double, per resized axis:
 * the input positions each output position reads (1 tap for nearest, 2 for linear, 4 for cubic)
 * and their weights, and for tf_crop_and_resize whether the position falls outside the input.
 * Those tables become constant buffers; the kernel is one loop nest over the output that
 * gathers the taps through them and blends them. Interpolation is separable, so the n-linear or
 * n-cubic value is the sum over every combination of the axes' taps of the product of their
 * weights, the same number the interpreter reaches axis by axis. An output position outside the
 * region on any axis takes extrapolation_value. */
#include "fb-lower-private.h"

#include "fb-resize-spec.h"

#include <math.h>
#include <string.h>

static int
opset_of (const FbNode *node)
{
  /* The interpreter's latest opset, for nodes built without one. */
  return node->opset > 0 ? node->opset : 21;
}

/* The node's Resize attributes, with errors in this module's domain. */
static gboolean
read_options (const FbNode *node, FbResizeSpec *o, GError **error)
{
  g_autoptr(GError) local = NULL;

  if (fb_resize_spec_read (node, o, &local))
    return TRUE;
  return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED, "%s", local->message);
}

/* Input i as a constant tensor: NULL when absent or empty; an error when only the run knows it. */
static gboolean
const_input (const FbNode *node, guint i, const FbTensor **t, GError **error)
{
  const FbValue *v = fb_node_input (node, i);
  *t = NULL;
  if (v == NULL)
    return TRUE;
  if (v->constant == NULL)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                           "input %u ('%s') must be known at compile time", i, v->name);
  if (v->constant->numel > 0)
    *t = v->constant;
  return TRUE;
}

/* Output sizes, scales and region of interest of every axis, as the interpreter derives them. */
static gboolean
read_geometry (const FbNode *node, int rank, const int64_t *xd, int64_t *sizes, double *scales,
               double *roi, GError **error)
{
  int opset = opset_of (node);
  const FbTensor *scale_t = NULL, *size_t_ = NULL, *roi_t = NULL;
  int64_t axes[FB_MAX_RANK];
  guint n_axes = rank;

  if (node->op == FB_OP_UPSAMPLE && opset < 9)
    ;
  else if (node->op == FB_OP_UPSAMPLE || opset < 11)
    {
      if (!const_input (node, 1, &scale_t, error))
        return FALSE;
    }
  else if (!const_input (node, 1, &roi_t, error) || !const_input (node, 2, &scale_t, error) ||
           !const_input (node, 3, &size_t_, error))
    return FALSE;
  for (int i = 0; i < rank; i++)
    axes[i] = i;
  if (opset >= 18 && fb_node_attr (node, "axes") != NULL)
    {
      const int64_t *a = fb_node_attr_ints (node, "axes", &n_axes);
      if (n_axes > (guint) rank)
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "too many axes");
      for (guint k = 0; k < n_axes; k++)
        {
          int ax;
          if (!fb_axis_normalize (a[k], rank, &ax))
            return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "an axis is out of range");
          axes[k] = ax;
        }
    }
  for (int i = 0; i < rank; i++)
    {
      scales[i] = 1;
      sizes[i] = xd[i];
      roi[i] = 0;
      roi[rank + i] = 1;
    }
  if (node->op == FB_OP_UPSAMPLE && opset < 9)
    {
      guint n;
      const float *s = fb_node_attr_floats (node, "scales", &n);
      if (s == NULL || n != (guint) rank)
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                               "the scales attribute must have %d entries", rank);
      for (int i = 0; i < rank; i++)
        scales[i] = s[i];
    }
  if (roi_t != NULL)
    {
      if (roi_t->numel != 2 * (int64_t) n_axes)
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "roi does not fit the axes");
      for (guint k = 0; k < n_axes; k++)
        {
          roi[axes[k]] = fb_tensor_get_f64 (roi_t, k);
          roi[rank + axes[k]] = fb_tensor_get_f64 (roi_t, n_axes + k);
        }
    }
  if (size_t_ != NULL)
    {
      const char *policy = fb_node_attr_string (node, "keep_aspect_ratio_policy", "stretch");
      if (scale_t != NULL || size_t_->numel != (int64_t) n_axes)
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                               "sizes must be the only one given, one per axis");
      if (g_str_equal (policy, "stretch"))
        for (guint k = 0; k < n_axes; k++)
          {
            int a = (int) axes[k];
            int64_t s = fb_tensor_get_i64 (size_t_, k);
            sizes[a] = s;
            /* The interpreter (as ONNX Runtime) takes the ratio in single precision. */
            scales[a] = xd[a] > 0 ? (double) (float) ((float) s / (float) xd[a]) : 1;
          }
      else if (g_str_equal (policy, "not_larger") || g_str_equal (policy, "not_smaller"))
        {
          /* One scale for every listed axis keeps the aspect ratio. */
          gboolean larger = g_str_equal (policy, "not_smaller");
          double sc = larger ? 0 : G_MAXDOUBLE;
          for (guint k = 0; k < n_axes; k++)
            {
              int64_t in = xd[axes[k]];
              double r = in > 0 ? (double) fb_tensor_get_i64 (size_t_, k) / in : 1;
              sc = larger ? MAX (sc, r) : MIN (sc, r);
            }
          for (guint k = 0; k < n_axes; k++)
            {
              int a = (int) axes[k];
              scales[a] = sc;
              sizes[a] = (int64_t) floor (sc * xd[a] + 0.5);
            }
        }
      else
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_UNSUPPORTED,
                               "keep_aspect_ratio_policy '%s' is unknown", policy);
      return TRUE;
    }
  if (scale_t != NULL)
    {
      if (scale_t->numel != (int64_t) n_axes || !fb_dtype_is_float (scale_t->dtype))
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "scales must be %u floats",
                               n_axes);
      for (guint k = 0; k < n_axes; k++)
        scales[axes[k]] = fb_tensor_get_f64 (scale_t, k);
    }
  else if (!(node->op == FB_OP_UPSAMPLE && opset < 9))
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "neither scales nor sizes is given");
  for (int i = 0; i < rank; i++)
    {
      if (!(scales[i] > 0) || !isfinite (scales[i]))
        return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                               "scale %g is not a positive number", scales[i]);
      sizes[i] = (int64_t) floor (MAX (xd[i] * scales[i], 0));
    }
  return TRUE;
}

/* One resized axis: taps[x * nt + t] and w[x * nt + t] for every output position x, and
 * outside[x] (tf_crop_and_resize only; its taps then weigh nothing). */
static void
axis_tables (const FbResizeSpec *o, int64_t in, int64_t out, double scale, double roi_start,
             double roi_end, int nt, int64_t *taps, double *w, uint8_t *outside)
{
  for (int64_t x = 0; x < out; x++)
    {
      double sx = fb_resize_source_coord (o, (double) x, in, out, scale, roi_start, roi_end);
      int64_t *tp = taps + x * nt;
      double *wp = w + x * nt;
      memset (tp, 0, sizeof (int64_t) * nt);
      memset (wp, 0, sizeof (double) * nt);
      outside[x] = o->transform == FB_RESIZE_TF_CROP_AND_RESIZE && (sx < 0 || sx > in - 1);
      if (outside[x])
        continue;
      {
        int64_t t4[4];
        double w4[4];
        int n = fb_resize_taps (o, sx, in, t4, w4);
        g_assert (n <= nt);  /* nt is the mode's tap count; an empty axis gives none */
        memcpy (tp, t4, sizeof (int64_t) * n);
        memcpy (wp, w4, sizeof (double) * n);
      }
    }
}

gboolean
_fb_lower_resize (FbLowerCtx *c, const FbNode *node, GError **error)
{
  FbKernel *k = c->k;
  const FbValue *x = node->inputs[0], *y = node->outputs[0];
  int rank, yr;
  int64_t xd[FB_MAX_RANK], yd[FB_MAX_RANK], sizes[FB_MAX_RANK];
  double scales[FB_MAX_RANK], roi[2 * FB_MAX_RANK];
  FbResizeSpec o = { 0 };
  if (!_fb_lower_dims (x, &rank, xd) || !_fb_lower_dims (y, &yr, yd) || rank != yr || rank == 0)
    return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE, "shapes are not static");
  if (!read_options (node, &o, error) || !read_geometry (node, rank, xd, sizes, scales, roi, error))
    return FALSE;
  for (int i = 0; i < rank; i++)
    if (sizes[i] != yd[i] || (yd[i] > 0 && xd[i] == 0))
      return _fb_lower_fail (error, node, FB_LOWER_ERROR_SHAPE,
                             "axis %d: output extent %" G_GINT64_FORMAT " is not the %"
                             G_GINT64_FORMAT " its scales and sizes give", i, yd[i], sizes[i]);

  int nt = o.mode == FB_RESIZE_NEAREST ? 1 : o.mode == FB_RESIZE_LINEAR ? 2 : 4;
  gboolean crop = o.transform == FB_RESIZE_TF_CROP_AND_RESIZE;
  FbDType ct = x->dtype == FB_DTYPE_FLOAT64 ? FB_DTYPE_FLOAT64 : FB_DTYPE_FLOAT32;
  /* Nearest copies elements (of any type) as they are; blends are computed in floats. */
  FbDType vt = o.mode == FB_RESIZE_NEAREST ? x->dtype : ct;
  guint taps_arg[FB_MAX_RANK], w_arg[FB_MAX_RANK], out_arg[FB_MAX_RANK];
  gboolean resized[FB_MAX_RANK];
  int64_t numel = 1, combos = 1;
  for (int i = 0; i < rank; i++)
    {
      numel *= yd[i];
      /* The interpreter leaves an axis of unchanged extent and unit scale alone. */
      resized[i] = !(sizes[i] == xd[i] && scales[i] == 1 && !crop);
      if (!resized[i])
        continue;
      combos *= nt;
      int64_t td[2] = { yd[i], nt };
      g_autoptr(FbTensor) taps = fb_tensor_new (FB_DTYPE_INT64, 2, td, NULL);
      g_autoptr(FbTensor) w = fb_tensor_new (ct, 2, td, NULL);
      g_autoptr(FbTensor) out = fb_tensor_new (FB_DTYPE_BOOL, 1, &yd[i], NULL);
      g_autofree double *wd = g_new (double, MAX (yd[i] * nt, 1));
      axis_tables (&o, xd[i], yd[i], scales[i], roi[i], roi[rank + i], nt,
                   fb_tensor_data_mut (taps), wd, fb_tensor_data_mut (out));
      for (int64_t e = 0; e < yd[i] * nt; e++)
        fb_tensor_set_f64 (w, e, wd[e]);
      g_autofree char *tn = g_strdup_printf ("%s.taps%d", node->name, i);
      g_autofree char *wn = g_strdup_printf ("%s.weights%d", node->name, i);
      g_autofree char *on = g_strdup_printf ("%s.outside%d", node->name, i);
      taps_arg[i] = _fb_lower_const_arg (c, taps, tn);
      if (nt > 1)
        w_arg[i] = _fb_lower_const_arg (c, w, wn);
      if (crop)
        out_arg[i] = _fb_lower_const_arg (c, out, on);
    }

  FbKExpr *oc[FB_MAX_RANK], *ic[FB_MAX_RANK], *tv[FB_MAX_RANK];
  GPtrArray *body = _fb_lower_nest (c, rank, yd, oc, (double) numel * combos * 3);
  GPtrArray *inner = body;
  guint acc = fb_kernel_new_acc (k, vt);
  if (nt > 1)
    {
      g_ptr_array_add (body, fb_ks_assign (k, acc, fb_kx_const_f (k, vt, 0.0)));
      for (int i = 0; i < rank; i++)
        if (resized[i])
          inner = _fb_lower_loop (k, inner, fb_kx_index (k, nt), &tv[i]);
    }
  FbKExpr *weight = NULL, *outside = NULL;
  for (int i = 0; i < rank; i++)
    {
      ic[i] = oc[i];
      if (!resized[i])
        continue;
      FbKExpr *e = nt > 1 ? fb_kx_add (k, fb_kx_mul_c (k, oc[i], nt), tv[i]) : oc[i];
      ic[i] = fb_kx_load (k, taps_arg[i], e);
      if (nt > 1)
        {
          FbKExpr *wi = fb_kx_load (k, w_arg[i], e);
          weight = weight ? fb_kx_binary (k, FB_KB_MUL, weight, wi) : wi;
        }
      if (crop)
        {
          FbKExpr *oi = fb_kx_load (k, out_arg[i], oc[i]);
          outside = outside ? fb_kx_binary (k, FB_KB_OR, outside, oi) : oi;
        }
    }
  FbKExpr *v = _fb_lower_value_at (c, x, rank, ic, error);
  if (v == NULL)
    return FALSE;
  v = fb_kx_cast (k, v, vt);
  if (nt > 1)
    {
      if (weight)
        v = fb_kx_binary (k, FB_KB_MUL, weight, v);
      v = fb_kx_binary (k, FB_KB_ADD, fb_kx_acc (k, acc), v);
      g_ptr_array_add (inner, fb_ks_assign (k, acc, v));
      v = fb_kx_acc (k, acc);
    }
  if (outside)
    v = fb_kx_select (k, outside, fb_kx_const_f (k, vt, o.extrapolation), v);
  return _fb_lower_store (c, body, y, oc, fb_kx_cast (k, v, y->dtype), error);
}
