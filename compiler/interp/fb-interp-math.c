/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The elementwise maps added for conformance (trigonometric and hyperbolic functions, IsInf,
 * Celu, Mish, Shrink, ThresholdedRelu), BitShift, CastLike, EyeLike and Hardmax. Floats are
 * computed in double and rounded once, as in fb-interp-elementwise.c. */
#include "fb-interp-private.h"

#include <math.h>
#include <string.h>

gboolean
_fb_interp_check_math (const FbNode *node, GError **error)
{
  if (node->op == FB_OP_CELU && fb_node_attr_float (node, "alpha", 1.0f) == 0.0f)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "alpha must not be 0 (the formula divides by it)");
  if (node->op == FB_OP_SHRINK && fb_node_attr_float (node, "lambd", 0.5f) < 0.0f)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "lambd must not be negative");
  if (node->op == FB_OP_BIT_SHIFT)
    {
      const char *dir = fb_node_attr_string (node, "direction", NULL);
      if (dir == NULL || (strcmp (dir, "LEFT") != 0 && strcmp (dir, "RIGHT") != 0))
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                                "direction must be 'LEFT' or 'RIGHT'");
    }
  for (guint k = 0; k < node->n_inputs && node->op != FB_OP_CAST_LIKE; k++)
    {
      const FbValue *v = node->inputs[k];
      if (v == NULL || v->dtype == FB_DTYPE_UNDEFINED)
        continue;
      if (node->op == FB_OP_BIT_SHIFT)
        {
          if (!fb_dtype_is_integer (v->dtype) || fb_dtype_is_signed (v->dtype))
            return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                                    "element type %s is not supported (unsigned integers only)",
                                    fb_dtype_name (v->dtype));
        }
      else if (node->op == FB_OP_SHRINK || node->op == FB_OP_EYE_LIKE)
        {
          if (v->dtype == FB_DTYPE_STRING)
            return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                                    "element type string is not supported");
        }
      else if (!fb_dtype_is_float (v->dtype))
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                                "element type %s is not supported (floating point only)",
                                fb_dtype_name (v->dtype));
    }
  return TRUE;
}

static double
softplus (double x)
{
  return x > 0 ? x + log1p (exp (-x)) : log1p (exp (x));
}

gboolean
_fb_interp_math (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                 GError **error)
{
  FbTensor *x = in[0];
  g_autoptr(FbTensor) y = NULL;

  if (!_fb_interp_check_math (node, error))
    return FALSE;
  if (node->op != FB_OP_SHRINK && !_fb_interp_need_float (node, x, error))
    return FALSE;
  if (node->op == FB_OP_IS_INF)
    {
      gboolean pos = fb_node_attr_int (node, "detect_positive", 1) != 0;
      gboolean neg = fb_node_attr_int (node, "detect_negative", 1) != 0;
      g_autofree double *v = _fb_interp_read_f64 (x);
      y = _fb_interp_new (node, FB_DTYPE_BOOL, x->rank, x->dims, error);
      if (y == NULL)
        return FALSE;
      uint8_t *d = fb_tensor_data_mut (y);
      for (int64_t i = 0; i < x->numel; i++)
        d[i] = isinf (v[i]) && ((v[i] > 0 && pos) || (v[i] < 0 && neg));
      out[0] = g_steal_pointer (&y);
      return TRUE;
    }
  y = _fb_interp_new (node, x->dtype, x->rank, x->dims, error);
  if (y == NULL)
    return FALSE;
  g_autofree double *v = _fb_interp_read_f64 (x);
  double alpha = fb_node_attr_float (node, "alpha", 1.0f);
  double lambd = fb_node_attr_float (node, "lambd", 0.5f);
  double bias = fb_node_attr_float (node, "bias", 0.0f);

#define MAP(expr) \
  for (int64_t i = 0; i < x->numel; i++) { double e = v[i]; v[i] = (expr); } \
  break

  switch (node->op)
    {
    case FB_OP_ACOS:  MAP (acos (e));
    case FB_OP_ACOSH: MAP (acosh (e));
    case FB_OP_ASIN:  MAP (asin (e));
    case FB_OP_ASINH: MAP (asinh (e));
    case FB_OP_ATAN:  MAP (atan (e));
    case FB_OP_ATANH: MAP (atanh (e));
    case FB_OP_COSH:  MAP (cosh (e));
    case FB_OP_SINH:  MAP (sinh (e));
    case FB_OP_TAN:   MAP (tan (e));
    case FB_OP_MISH:  MAP (e * tanh (softplus (e)));
    case FB_OP_CELU:  MAP (fmax (0.0, e) + fmin (0.0, alpha * expm1 (e / alpha)));
    case FB_OP_THRESHOLDED_RELU:
      MAP (e > alpha ? e : 0.0);
    case FB_OP_SHRINK:
      MAP (e < -lambd ? e + bias : e > lambd ? e - bias : 0.0);
    default:
      g_assert_not_reached ();
    }
#undef MAP
  /* Integer Shrink results are whole numbers; writing them back through double is exact for
   * every value an integer input of 53 bits or fewer holds. */
  _fb_interp_write_f64 (y, v);
  out[0] = g_steal_pointer (&y);
  return TRUE;
}

gboolean
_fb_interp_bit_shift (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                      GError **error)
{
  const FbTensor *const ts[2] = { in[0], in[1] };
  FbBcast b;

  if (!_fb_interp_check_math (node, error))
    return FALSE;
  if (in[0]->dtype != in[1]->dtype || !fb_dtype_is_integer (in[0]->dtype) ||
      fb_dtype_is_signed (in[0]->dtype))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "both inputs must have one unsigned integer type (%s, %s)",
                            fb_dtype_name (in[0]->dtype), fb_dtype_name (in[1]->dtype));
  if (!_fb_bcast_init (&b, node, 2, ts, error))
    return FALSE;
  g_autoptr(FbTensor) y = _fb_interp_new (node, in[0]->dtype, b.rank, b.dims, error);
  if (y == NULL)
    return FALSE;
  gboolean left = strcmp (fb_node_attr_string (node, "direction", ""), "LEFT") == 0;
  guint bits = (guint) fb_dtype_size (in[0]->dtype) * 8;
  g_autofree int64_t *xa = _fb_interp_read_i64 (in[0]);
  g_autofree int64_t *sa = _fb_interp_read_i64 (in[1]);
  g_autofree int64_t *r = g_new (int64_t, MAX (y->numel, 1));
  for (int64_t row = 0; b.inner > 0 && row < b.numel / b.inner; row++)
    {
      int64_t o[FB_BCAST_MAX];
      int64_t s0 = b.rank ? b.strides[0][b.rank - 1] : 0, s1 = b.rank ? b.strides[1][b.rank - 1] : 0;
      _fb_bcast_row (&b, row, o);
      for (int64_t j = 0; j < b.inner; j++)
        {
          uint64_t v = (uint64_t) xa[o[0] + j * s0], s = (uint64_t) sa[o[1] + j * s1];
          /* A shift by the width or more empties the value (C leaves it undefined). */
          uint64_t res = s >= bits ? 0 : left ? v << s : v >> s;
          r[row * b.inner + j] = (int64_t) res;
        }
    }
  _fb_interp_write_i64 (y, r);
  out[0] = g_steal_pointer (&y);
  return TRUE;
}

gboolean
_fb_interp_cast_like (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                      GError **error)
{
  FbTensor *x = in[0];
  FbDType to = in[1]->dtype;

  if (to == x->dtype)
    {
      out[0] = fb_tensor_ref (x);
      return TRUE;
    }
  if (to == FB_DTYPE_STRING || x->dtype == FB_DTYPE_STRING)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "casts from or to strings are not supported");
  g_autoptr(FbTensor) y = _fb_interp_new (node, to, x->rank, x->dims, error);
  if (y == NULL)
    return FALSE;
  if (_fb_interp_is_int (x->dtype) && _fb_interp_is_int (to))
    {
      g_autofree int64_t *v = _fb_interp_read_i64 (x);
      _fb_interp_write_i64 (y, v);
    }
  else
    {
      g_autofree double *v = _fb_interp_read_f64 (x);
      _fb_interp_write_f64 (y, v);
    }
  out[0] = g_steal_pointer (&y);
  return TRUE;
}

/* EyeLike's output type: the dtype attribute, or the input's. */
gboolean
_fb_interp_eye_like_dtype (const FbNode *node, FbDType x, FbDType *out, GError **error)
{
  int64_t dt = fb_node_attr_int (node, "dtype", 0);
  if (dt == 0)
    {
      *out = x;
      return TRUE;
    }
  if (!fb_dtype_is_known ((int) dt) || dt > G_MAXINT32 || dt == FB_DTYPE_STRING)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "dtype %" G_GINT64_FORMAT " is not an element type EyeLike makes", dt);
  *out = (FbDType) dt;
  return TRUE;
}

gboolean
_fb_interp_eye_like (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                     GError **error)
{
  FbTensor *x = in[0];
  int64_t k = fb_node_attr_int (node, "k", 0);
  FbDType to;

  if (x->rank != 2)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the input must have rank 2, not %d", x->rank);
  if (!_fb_interp_eye_like_dtype (node, x->dtype, &to, error))
    return FALSE;
  g_autoptr(FbTensor) y = _fb_interp_new (node, to, 2, x->dims, error);
  if (y == NULL)
    return FALSE;
  g_autofree double *v = g_new0 (double, MAX (y->numel, 1));
  for (int64_t r = 0; r < x->dims[0]; r++)
    {
      /* Compared in the row's frame so that a huge k cannot overflow. */
      if (k >= -r && k < x->dims[1] - r)
        v[r * x->dims[1] + r + k] = 1.0;
    }
  _fb_interp_write_f64 (y, v);
  out[0] = g_steal_pointer (&y);
  return TRUE;
}

gboolean
_fb_interp_hardmax (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                    GError **error)
{
  FbTensor *x = in[0];
  int64_t outer, n, inner;
  int a;

  if (!_fb_interp_need_float (node, x, error))
    return FALSE;
  if (_fb_interp_opset (node) < 13)
    {
      /* Before opset 13 the input is seen as 2-D at axis (default 1), as for Softmax. */
      if (!fb_axis_normalize (fb_node_attr_int (node, "axis", 1), x->rank, &a))
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "axis is out of range for rank %d", x->rank);
      outer = _fb_interp_prod (x->dims, 0, a);
      n = _fb_interp_prod (x->dims, a, x->rank);
      inner = 1;
    }
  else
    {
      if (!fb_axis_normalize (fb_node_attr_int (node, "axis", -1), x->rank, &a))
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "axis is out of range for rank %d", x->rank);
      outer = _fb_interp_prod (x->dims, 0, a);
      n = x->dims[a];
      inner = _fb_interp_prod (x->dims, a + 1, x->rank);
    }
  g_autoptr(FbTensor) y = _fb_interp_new (node, x->dtype, x->rank, x->dims, error);
  if (y == NULL)
    return FALSE;
  g_autofree double *v = _fb_interp_read_f64 (x);
  g_autofree double *r = g_new0 (double, MAX (x->numel, 1));
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner && n > 0; i++)
      {
        const double *p = v + o * n * inner + i;
        int64_t best = 0;
        /* The first of equal maxima wins. */
        for (int64_t j = 1; j < n; j++)
          if (p[j * inner] > p[best * inner])
            best = j;
        r[(o * n + best) * inner + i] = 1.0;
      }
  _fb_interp_write_f64 (y, r);
  out[0] = g_steal_pointer (&y);
  return TRUE;
}
