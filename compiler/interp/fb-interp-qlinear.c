/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Integer and quantized contractions (MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv)
 * and Det.
 * Zero points are subtracted first, into int64 (matrices) or double (convolutions, exact for
 * every 8-bit product sum below 2^53), and the float MatMul and Conv kernels do the rest. */
#include "fb-interp-private.h"

#include <math.h>
#include <string.h>

/* x - zero as a new tensor of type `as`; zero is a scalar, or (per_axis >= 0) a vector along
 * axis per_axis of x. */
static FbTensor *
shifted (const FbNode *node, const FbTensor *x, const FbTensor *zero, int per_axis, FbDType as,
         const char *what, GError **error)
{
  if (!fb_dtype_is_integer (x->dtype))
    {
      _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "%s must hold integers, not %s",
                       what, fb_dtype_name (x->dtype));
      return NULL;
    }
  int64_t inner = 1, n = 1;
  if (zero && zero->numel != 1)
    {
      if (per_axis < 0 || per_axis >= x->rank || zero->rank != 1 || zero->numel != x->dims[per_axis])
        {
          _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                           "the zero point of %s must be a scalar%s", what,
                           per_axis >= 0 ? " or one per channel" : "");
          return NULL;
        }
      inner = _fb_interp_prod (x->dims, per_axis + 1, x->rank);
      n = zero->numel;
    }
  FbTensor *t = _fb_interp_new (node, as, x->rank, x->dims, error);
  if (t == NULL)
    return NULL;
  g_autofree int64_t *v = _fb_interp_read_i64 (x);
  g_autofree int64_t *z = zero ? _fb_interp_read_i64 (zero) : g_new0 (int64_t, 1);
  for (int64_t i = 0; i < x->numel; i++)
    v[i] -= z[n == 1 ? 0 : (i / inner) % n];
  _fb_interp_write_i64 (t, v);
  return t;
}

static FbTensor *
opt (const FbNode *node, FbTensor *const *in, guint i)
{
  return node->n_inputs > i ? in[i] : NULL;
}

gboolean
_fb_interp_matmul_integer (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                           FbTensor **out, GError **error)
{
  gboolean q = node->op == FB_OP_QLINEAR_MATMUL;
  /* QLinearMatMul: a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero. */
  FbTensor *a = in[0], *b = q ? in[3] : in[1];
  FbTensor *za = q ? in[2] : opt (node, in, 2), *zb = q ? in[5] : opt (node, in, 3);
  g_autoptr(FbTensor) sa = shifted (node, a, za, a->rank - 2, FB_DTYPE_INT64, "A", error);
  g_autoptr(FbTensor) sb = sa ? shifted (node, b, zb, b->rank - 1, FB_DTYPE_INT64, "B", error) : NULL;
  g_autoptr(FbTensor) prod = NULL;
  if (sb == NULL)
    return FALSE;
  FbTensor *mm[2] = { sa, sb };
  if (!_fb_interp_matmul (ctx, node, mm, &prod, error))
    return FALSE;
  if (!q)
    {
      out[0] = _fb_interp_new (node, FB_DTYPE_INT32, prod->rank, prod->dims, error);
      if (out[0] == NULL)
        return FALSE;
      g_autofree int64_t *v = _fb_interp_read_i64 (prod);
      _fb_interp_write_i64 (out[0], v);
      return TRUE;
    }
  double as, bs, ys, lo, hi;
  int64_t yz;
  FbTensor *zy = in[7];
  if (!_fb_interp_scalar_f64 (node, in[1], "a_scale", &as, error) ||
      !_fb_interp_scalar_f64 (node, in[4], "b_scale", &bs, error) ||
      !_fb_interp_scalar_f64 (node, in[6], "y_scale", &ys, error) ||
      !_fb_interp_scalar_i64 (node, zy, "y_zero_point", &yz, error))
    return FALSE;
  if (!_fb_interp_quant_range (zy->dtype, &lo, &hi) || zy->dtype == FB_DTYPE_INT32)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "y_zero_point of type %s is not supported", fb_dtype_name (zy->dtype));
  out[0] = _fb_interp_new (node, zy->dtype, prod->rank, prod->dims, error);
  if (out[0] == NULL)
    return FALSE;
  g_autofree double *v = _fb_interp_read_f64 (prod);
  /* The rescale in single precision, as the reference computes it for float32 scales. */
  float m = (float) as * (float) bs / (float) ys;
  for (int64_t i = 0; i < prod->numel; i++)
    v[i] = CLAMP (nearbyint ((double) ((float) v[i] * m)) + (double) yz, lo, hi);
  _fb_interp_write_f64 (out[0], v);
  return TRUE;
}

gboolean
_fb_interp_conv_integer (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                         FbTensor **out, GError **error)
{
  gboolean q = node->op == FB_OP_QLINEAR_CONV;
  /* QLinearConv: x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero, B. */
  FbTensor *x = in[0], *w = q ? in[3] : in[1];
  FbTensor *zx = q ? in[2] : opt (node, in, 2), *zw = q ? in[5] : opt (node, in, 3);
  if (zx && zx->numel != 1)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the input's zero point must be a scalar");
  g_autoptr(FbTensor) sx = shifted (node, x, zx, -1, FB_DTYPE_FLOAT64, "X", error);
  g_autoptr(FbTensor) sw = sx ? shifted (node, w, zw, 0, FB_DTYPE_FLOAT64, "W", error) : NULL;
  g_autoptr(FbTensor) acc = NULL;
  if (sw == NULL || !_fb_interp_check_window (node, error))
    return FALSE;
  FbTensor *cv[3] = { sx, sw, NULL };
  if (!_fb_interp_conv (ctx, node, cv, &acc, error))
    return FALSE;
  g_autofree double *v = _fb_interp_read_f64 (acc);
  int64_t M = acc->dims[1], plane = _fb_interp_prod (acc->dims, 2, acc->rank);
  if (!q)
    {
      out[0] = _fb_interp_new (node, FB_DTYPE_INT32, acc->rank, acc->dims, error);
      if (out[0] == NULL)
        return FALSE;
      _fb_interp_write_f64 (out[0], v);
      return TRUE;
    }
  FbTensor *ws = in[4], *bias = opt (node, in, 8), *zy = in[7];
  double xs, ys, lo, hi;
  int64_t yz;
  if (!_fb_interp_scalar_f64 (node, in[1], "x_scale", &xs, error) ||
      !_fb_interp_scalar_f64 (node, in[6], "y_scale", &ys, error) ||
      !_fb_interp_scalar_i64 (node, zy, "y_zero_point", &yz, error))
    return FALSE;
  if (ws->numel != 1 && ws->numel != M)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "w_scale must be a scalar or one per output channel");
  if (bias && bias->numel != M)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "B must hold one value per output channel");
  if (!_fb_interp_quant_range (zy->dtype, &lo, &hi) || zy->dtype == FB_DTYPE_INT32)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "y_zero_point of type %s is not supported", fb_dtype_name (zy->dtype));
  g_autofree double *wsv = _fb_interp_read_f64 (ws);
  g_autofree double *bv = bias ? _fb_interp_read_f64 (bias) : NULL;
  out[0] = _fb_interp_new (node, zy->dtype, acc->rank, acc->dims, error);
  if (out[0] == NULL)
    return FALSE;
  for (int64_t i = 0; i < acc->numel; i++)
    {
      int64_t m = (i / MAX (plane, 1)) % MAX (M, 1);
      float scale = (float) xs * (float) wsv[ws->numel == 1 ? 0 : m] / (float) ys;
      double a = v[i] + (bv ? bv[m] : 0);
      v[i] = CLAMP (nearbyint ((double) ((float) a * scale)) + (double) yz, lo, hi);
    }
  _fb_interp_write_f64 (out[0], v);
  return TRUE;
}

/* Det of [..., M, M] by Gaussian elimination with partial pivoting, in double. */
gboolean
_fb_interp_det (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                GError **error)
{
  FbTensor *x = in[0];

  if (!_fb_interp_need_float (node, x, error))
    return FALSE;
  if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the input must be square matrices [..., M, M]");
  int64_t M = x->dims[x->rank - 1], batches = _fb_interp_prod (x->dims, 0, x->rank - 2);
  g_autoptr(FbTensor) y = _fb_interp_new (node, x->dtype, x->rank - 2, x->dims, error);
  if (y == NULL)
    return FALSE;
  g_autofree double *v = _fb_interp_read_f64 (x);
  g_autofree double *r = g_new (double, MAX (batches, 1));
  for (int64_t bi = 0; bi < batches; bi++)
    {
      double *a = v + bi * M * M, det = 1;
      for (int64_t col = 0; col < M && det != 0; col++)
        {
          int64_t piv = col;
          for (int64_t i = col + 1; i < M; i++)
            if (fabs (a[i * M + col]) > fabs (a[piv * M + col]))
              piv = i;
          if (a[piv * M + col] == 0)
            {
              det = 0;
              break;
            }
          if (piv != col)
            {
              for (int64_t j = 0; j < M; j++)
                {
                  double t = a[col * M + j];
                  a[col * M + j] = a[piv * M + j];
                  a[piv * M + j] = t;
                }
              det = -det;
            }
          det *= a[col * M + col];
          for (int64_t i = col + 1; i < M; i++)
            {
              double f = a[i * M + col] / a[col * M + col];
              for (int64_t j = col; j < M; j++)
                a[i * M + j] -= f * a[col * M + j];
            }
        }
      r[bi] = det;
    }
  _fb_interp_write_f64 (y, r);
  out[0] = g_steal_pointer (&y);
  return TRUE;
}
