/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One-input elementwise operators, Cast, Clip and Dropout. Floating-point inputs are computed in
 * double and rounded once into the output type (float16 included); integer inputs in int64. */
#include "fb-interp-private.h"

#include <math.h>
#include <string.h>

/* Operators defined on floating point only. */
static gboolean
float_only (FbOpKind op)
{
  switch (op)
    {
    case FB_OP_ABS: case FB_OP_NEG: case FB_OP_SIGN: case FB_OP_RELU: case FB_OP_IDENTITY:
    case FB_OP_NOT: case FB_OP_CAST: case FB_OP_IS_NAN:
      return FALSE;
    default:
      return TRUE;
    }
}

gboolean
_fb_interp_check_unary (const FbNode *node, GError **error)
{
  if (node->op == FB_OP_GELU)
    {
      const char *approx = fb_node_attr_string (node, "approximate", "none");
      if (strcmp (approx, "none") != 0 && strcmp (approx, "tanh") != 0)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                                "approximate='%s' is not 'none' or 'tanh'", approx);
    }
  if (node->op == FB_OP_CAST)
    {
      int64_t to = fb_node_attr_int (node, "to", 0);
      if (!fb_dtype_is_known ((int) to) || to > G_MAXINT32)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                                "cannot cast to element type %" G_GINT64_FORMAT, to);
    }
  for (guint k = 0; k < node->n_inputs; k++)
    {
      const FbValue *v = node->inputs[k];
      if (v == NULL || v->dtype == FB_DTYPE_UNDEFINED)
        continue;
      if (float_only (node->op) && !fb_dtype_is_float (v->dtype))
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                                "element type %s is not supported (floating point only)",
                                fb_dtype_name (v->dtype));
      if (node->op == FB_OP_NOT && v->dtype != FB_DTYPE_BOOL)
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                                "element type %s is not supported (bool only)",
                                fb_dtype_name (v->dtype));
    }
  return TRUE;
}

static double
sigmoid (double x)
{
  if (x >= 0)
    return 1.0 / (1.0 + exp (-x));
  double e = exp (x);
  return e / (1.0 + e);
}

static void
map_float (const FbNode *node, double *v, int64_t n)
{
  double alpha, beta, gamma;

#define MAP(expr) \
  for (int64_t i = 0; i < n; i++) { double x = v[i]; v[i] = (expr); } \
  break

  switch (node->op)
    {
    case FB_OP_ABS:        MAP (fabs (x));
    case FB_OP_CEIL:       MAP (ceil (x));
    case FB_OP_COS:        MAP (cos (x));
    case FB_OP_ERF:        MAP (erf (x));
    case FB_OP_EXP:        MAP (exp (x));
    case FB_OP_FLOOR:      MAP (floor (x));
    case FB_OP_LOG:        MAP (log (x));
    case FB_OP_NEG:        MAP (-x);
    case FB_OP_RECIPROCAL: MAP (1.0 / x);
    case FB_OP_RELU:       MAP (x < 0 ? 0.0 : x);
    case FB_OP_ROUND:      MAP (nearbyint (x));   /* the default mode rounds half to even */
    case FB_OP_SIGMOID:    MAP (sigmoid (x));
    case FB_OP_SIGN:       MAP (x > 0 ? 1.0 : x < 0 ? -1.0 : x);
    case FB_OP_SIN:        MAP (sin (x));
    case FB_OP_SOFTPLUS:   MAP (x > 0 ? x + log1p (exp (-x)) : log1p (exp (x)));
    case FB_OP_SOFTSIGN:   MAP (x / (1.0 + fabs (x)));
    case FB_OP_SQRT:       MAP (sqrt (x));
    case FB_OP_TANH:       MAP (tanh (x));
    case FB_OP_HARD_SWISH: MAP (x * fmax (0.0, fmin (1.0, x / 6.0 + 0.5)));
    case FB_OP_ELU:
      alpha = fb_node_attr_float (node, "alpha", 1.0f);
      MAP (x < 0 ? alpha * expm1 (x) : x);
    case FB_OP_SWISH:
      alpha = fb_node_attr_float (node, "alpha", 1.0f);
      MAP (x * sigmoid (alpha * x));
    case FB_OP_LEAKY_RELU:
      alpha = fb_node_attr_float (node, "alpha", 0.01f);
      MAP (x < 0 ? alpha * x : x);
    case FB_OP_HARD_SIGMOID:
      alpha = fb_node_attr_float (node, "alpha", 0.2f);
      beta = fb_node_attr_float (node, "beta", 0.5f);
      MAP (fmax (0.0, fmin (1.0, alpha * x + beta)));
    case FB_OP_SELU:
      alpha = fb_node_attr_float (node, "alpha", 1.67326319217681884765625f);
      gamma = fb_node_attr_float (node, "gamma", 1.05070102214813232421875f);
      MAP (x <= 0 ? gamma * (alpha * exp (x) - alpha) : gamma * x);
    case FB_OP_GELU:
      alpha = strcmp (fb_node_attr_string (node, "approximate", "none"), "tanh") == 0;
      MAP (alpha ? 0.5 * x * (1.0 + tanh (sqrt (2.0 / G_PI) * (x + 0.044715 * x * x * x)))
                 : 0.5 * x * (1.0 + erf (x / G_SQRT2)));
    default:
      g_assert_not_reached ();
    }
#undef MAP
}

static void
map_int (const FbNode *node, int64_t *v, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    {
      int64_t x = v[i];
      switch (node->op)
        {
        /* Through unsigned arithmetic, so that the most negative value wraps instead of being UB. */
        case FB_OP_ABS:  v[i] = x < 0 ? (int64_t) (0 - (uint64_t) x) : x; break;
        case FB_OP_NEG:  v[i] = (int64_t) (0 - (uint64_t) x); break;
        case FB_OP_SIGN: v[i] = x > 0 ? 1 : x < 0 ? -1 : 0; break;
        case FB_OP_RELU: v[i] = x < 0 ? 0 : x; break;
        case FB_OP_NOT:  v[i] = !x; break;
        default: g_assert_not_reached ();
        }
    }
}

gboolean
_fb_interp_unary (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                  GError **error)
{
  FbTensor *x = in[0];
  g_autoptr(FbTensor) y = NULL;

  if (node->op == FB_OP_IDENTITY)
    {
      out[0] = fb_tensor_ref (x);
      return TRUE;
    }
  if (float_only (node->op) && !_fb_interp_need_float (node, x, error))
    return FALSE;
  if (node->op == FB_OP_NOT && x->dtype != FB_DTYPE_BOOL)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "element type %s is not supported (bool only)",
                            fb_dtype_name (x->dtype));
  if (node->op == FB_OP_IS_NAN)
    {
      y = _fb_interp_new (node, FB_DTYPE_BOOL, x->rank, x->dims, error);
      if (y == NULL)
        return FALSE;
      if (fb_dtype_is_float (x->dtype))
        {
          g_autofree double *v = _fb_interp_read_f64 (x);
          uint8_t *d = fb_tensor_data_mut (y);
          for (int64_t i = 0; i < x->numel; i++)
            d[i] = isnan (v[i]);
        }
      out[0] = g_steal_pointer (&y);
      return TRUE;
    }
  y = _fb_interp_new (node, x->dtype, x->rank, x->dims, error);
  if (y == NULL)
    return FALSE;
  if (fb_dtype_is_float (x->dtype))
    {
      g_autofree double *v = _fb_interp_read_f64 (x);
      map_float (node, v, x->numel);
      _fb_interp_write_f64 (y, v);
    }
  else
    {
      g_autofree int64_t *v = _fb_interp_read_i64 (x);
      map_int (node, v, x->numel);
      _fb_interp_write_i64 (y, v);
    }
  out[0] = g_steal_pointer (&y);
  return TRUE;
}

gboolean
_fb_interp_cast (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                 GError **error)
{
  FbTensor *x = in[0];
  FbDType to = (FbDType) fb_node_attr_int (node, "to", 0);
  g_autoptr(FbTensor) y = NULL;

  if (!fb_dtype_is_known (to))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "cannot cast to element type %d", (int) to);
  if (to == x->dtype)
    {
      out[0] = fb_tensor_ref (x);
      return TRUE;
    }
  y = _fb_interp_new (node, to, x->rank, x->dims, error);
  if (y == NULL)
    return FALSE;
  /* Between integer types the value goes through int64, so large int64 values stay exact. */
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

gboolean
_fb_interp_clip (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                 GError **error)
{
  FbTensor *x = in[0];
  g_autoptr(FbTensor) y = _fb_interp_new (node, x->dtype, x->rank, x->dims, error);

  if (y == NULL)
    return FALSE;
  if (_fb_interp_opset (node) < 11)
    {
      /* Bounds were attributes before opset 11. */
      double lo = fb_node_attr_float (node, "min", -G_MAXFLOAT);
      double hi = fb_node_attr_float (node, "max", G_MAXFLOAT);
      g_autofree double *v = NULL;
      if (!_fb_interp_need_float (node, x, error))
        return FALSE;
      v = _fb_interp_read_f64 (x);
      for (int64_t i = 0; i < x->numel; i++)
        v[i] = v[i] < lo ? lo : v[i] > hi ? hi : v[i];
      _fb_interp_write_f64 (y, v);
    }
  else if (fb_dtype_is_float (x->dtype))
    {
      double lo = -INFINITY, hi = INFINITY;
      g_autofree double *v = NULL;
      if (node->n_inputs > 1 && in[1] != NULL &&
          !_fb_interp_scalar_f64 (node, in[1], "min", &lo, error))
        return FALSE;
      if (node->n_inputs > 2 && in[2] != NULL &&
          !_fb_interp_scalar_f64 (node, in[2], "max", &hi, error))
        return FALSE;
      v = _fb_interp_read_f64 (x);
      /* min first, then max: when min > max every element becomes max, as the spec says. */
      for (int64_t i = 0; i < x->numel; i++)
        {
          double e = v[i];
          if (e < lo) e = lo;
          if (e > hi) e = hi;
          v[i] = e;
        }
      _fb_interp_write_f64 (y, v);
    }
  else
    {
      int64_t lo = G_MININT64, hi = G_MAXINT64;
      g_autofree int64_t *v = NULL;
      if (node->n_inputs > 1 && in[1] != NULL &&
          !_fb_interp_scalar_i64 (node, in[1], "min", &lo, error))
        return FALSE;
      if (node->n_inputs > 2 && in[2] != NULL &&
          !_fb_interp_scalar_i64 (node, in[2], "max", &hi, error))
        return FALSE;
      v = _fb_interp_read_i64 (x);
      for (int64_t i = 0; i < x->numel; i++)
        {
          int64_t e = v[i];
          if (e < lo) e = lo;
          if (e > hi) e = hi;
          v[i] = e;
        }
      _fb_interp_write_i64 (y, v);
    }
  out[0] = g_steal_pointer (&y);
  return TRUE;
}

gboolean
_fb_interp_dropout (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                    GError **error)
{
  FbTensor *x = in[0];
  double ratio = fb_node_attr_float (node, "ratio", 0.5f);
  int64_t training = 0;
  int opset = _fb_interp_opset (node);

  if (opset >= 12)
    {
      if (node->n_inputs > 1 && in[1] != NULL &&
          !_fb_interp_scalar_f64 (node, in[1], "ratio", &ratio, error))
        return FALSE;
      if (node->n_inputs > 2 && in[2] != NULL &&
          !_fb_interp_scalar_i64 (node, in[2], "training_mode", &training, error))
        return FALSE;
    }
  else if (opset < 7)
    training = !fb_node_attr_int (node, "is_test", 0);
  /* Training-mode dropout draws random numbers: no oracle can reproduce it. */
  if (training && ratio != 0)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "training-mode dropout (random masks) is not supported");
  out[0] = fb_tensor_ref (x);
  if (node->n_outputs > 1)
    {
      /* The mask keeps everything; before opset 10 it had the input's type. */
      FbDType mtype = opset >= 10 ? FB_DTYPE_BOOL : x->dtype;
      FbTensor *mask = _fb_interp_new (node, mtype, x->rank, x->dims, error);
      if (mask == NULL)
        return FALSE;
      {
        g_autofree double *ones = g_new (double, MAX (x->numel, 1));
        for (int64_t i = 0; i < x->numel; i++)
          ones[i] = 1.0;
        _fb_interp_write_f64 (mask, ones);
      }
      out[1] = mask;
    }
  return TRUE;
}
