/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Linear quantization (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear) and the window
 * functions (HannWindow, HammingWindow, BlackmanWindow). Rounding is half to even, as the
 * spec asks, and results saturate to the integer type's range. */
#include "fb-interp-private.h"

#include <math.h>
#include <string.h>

gboolean
_fb_interp_quant_range (FbDType t, double *lo, double *hi)
{
  switch (t)
    {
    case FB_DTYPE_UINT8:  *lo = 0;      *hi = 255;    return TRUE;
    case FB_DTYPE_INT8:   *lo = -128;   *hi = 127;    return TRUE;
    case FB_DTYPE_UINT16: *lo = 0;      *hi = 65535;  return TRUE;
    case FB_DTYPE_INT16:  *lo = -32768; *hi = 32767;  return TRUE;
    case FB_DTYPE_INT32:  *lo = G_MININT32; *hi = G_MAXINT32; return TRUE;
    default: return FALSE;
    }
}

/* The scale (and zero point) of element i: one for the tensor, or one per entry of axis. */
typedef struct {
  int64_t  n_scales;   /* 1, or the extent of the axis */
  int64_t  inner;      /* elements after the axis */
  double  *scale;
  double  *zero;       /* n_scales entries; zeros when there is no zero point */
} QuantParams;

static void
quant_params_clear (QuantParams *p)
{
  g_free (p->scale);
  g_free (p->zero);
}

static gboolean
quant_params (const FbNode *node, const FbTensor *x, const FbTensor *scale,
              const FbTensor *zero, QuantParams *p, GError **error)
{
  memset (p, 0, sizeof *p);
  p->inner = 1;
  p->n_scales = 1;
  if (!fb_dtype_is_float (scale->dtype))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the scale must be floating point, not %s", fb_dtype_name (scale->dtype));
  if (scale->numel != 1 || scale->rank > 1)
    {
      int a;
      if (scale->rank != 1 || !fb_axis_normalize (fb_node_attr_int (node, "axis", 1), x->rank, &a) ||
          x->dims[a] != scale->dims[0])
        return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                                "a scale per channel must be a vector as long as the axis");
      p->n_scales = scale->dims[0];
      p->inner = _fb_interp_prod (x->dims, a + 1, x->rank);
    }
  if (zero && (zero->numel != scale->numel || zero->rank != scale->rank))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the zero point must have the scale's shape");
  p->scale = _fb_interp_read_f64 (scale);
  p->zero = zero ? _fb_interp_read_f64 (zero) : g_new0 (double, MAX (p->n_scales, 1));
  return TRUE;
}

static int64_t
channel_of (const QuantParams *p, int64_t i)
{
  return p->n_scales == 1 ? 0 : (i / p->inner) % p->n_scales;
}

gboolean
_fb_interp_quantize (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                     GError **error)
{
  FbTensor *x = in[0], *zero = node->n_inputs > 2 ? in[2] : NULL;
  FbDType to = zero ? zero->dtype : FB_DTYPE_UINT8;
  double lo, hi;
  QuantParams p;

  if (!_fb_interp_quant_range (to, &lo, &hi) || to == FB_DTYPE_INT32)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "quantizing to %s is not supported", fb_dtype_name (to));
  if (!quant_params (node, x, in[1], zero, &p, error))
    return FALSE;
  g_autoptr(FbTensor) y = _fb_interp_new (node, to, x->rank, x->dims, error);
  if (y == NULL)
    {
      quant_params_clear (&p);
      return FALSE;
    }
  g_autofree double *v = _fb_interp_read_f64 (x);
  for (int64_t i = 0; i < x->numel; i++)
    {
      int64_t ch = channel_of (&p, i);
      /* x / scale in single precision when both are float32, as the reference computes it. */
      double q = x->dtype == FB_DTYPE_FLOAT32 && in[1]->dtype == FB_DTYPE_FLOAT32
               ? (double) ((float) v[i] / (float) p.scale[ch]) : v[i] / p.scale[ch];
      q = nearbyint (q) + p.zero[ch];
      v[i] = isnan (q) ? 0 : CLAMP (q, lo, hi);
    }
  _fb_interp_write_f64 (y, v);
  quant_params_clear (&p);
  out[0] = g_steal_pointer (&y);
  return TRUE;
}

gboolean
_fb_interp_dequantize (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                       GError **error)
{
  FbTensor *x = in[0], *zero = node->n_inputs > 2 ? in[2] : NULL;
  double lo, hi;
  QuantParams p;

  if (!_fb_interp_quant_range (x->dtype, &lo, &hi))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "dequantizing %s is not supported", fb_dtype_name (x->dtype));
  if (zero && zero->dtype != x->dtype)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the zero point's type %s is not the input's %s",
                            fb_dtype_name (zero->dtype), fb_dtype_name (x->dtype));
  if (!quant_params (node, x, in[1], zero, &p, error))
    return FALSE;
  g_autoptr(FbTensor) y = _fb_interp_new (node, in[1]->dtype, x->rank, x->dims, error);
  if (y == NULL)
    {
      quant_params_clear (&p);
      return FALSE;
    }
  g_autofree double *v = _fb_interp_read_f64 (x);
  for (int64_t i = 0; i < x->numel; i++)
    {
      int64_t ch = channel_of (&p, i);
      v[i] = (v[i] - p.zero[ch]) * p.scale[ch];
    }
  _fb_interp_write_f64 (y, v);
  quant_params_clear (&p);
  out[0] = g_steal_pointer (&y);
  return TRUE;
}

gboolean
_fb_interp_dynamic_quantize (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                             FbTensor **out, GError **error)
{
  FbTensor *x = in[0];

  if (x->dtype != FB_DTYPE_FLOAT32)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "element type %s is not supported (float32 only)",
                            fb_dtype_name (x->dtype));
  g_autoptr(FbTensor) y = _fb_interp_new (node, FB_DTYPE_UINT8, x->rank, x->dims, error);
  g_autoptr(FbTensor) ys = y ? _fb_interp_new (node, FB_DTYPE_FLOAT32, 0, NULL, error) : NULL;
  g_autoptr(FbTensor) yz = ys ? _fb_interp_new (node, FB_DTYPE_UINT8, 0, NULL, error) : NULL;
  if (yz == NULL)
    return FALSE;
  const float *v = fb_tensor_data (x);
  float mn = 0, mx = 0;
  for (int64_t i = 0; i < x->numel; i++)
    {
      mn = fminf (mn, v[i]);
      mx = fmaxf (mx, v[i]);
    }
  /* Single precision throughout, as the spec's reference computes it. */
  float scale = (mx - mn) / 255.0f;
  float zp = scale > 0 ? CLAMP (nearbyintf (0.0f - mn / scale), 0.0f, 255.0f) : 0.0f;
  uint8_t *d = fb_tensor_data_mut (y);
  for (int64_t i = 0; i < x->numel; i++)
    {
      float q = scale > 0 ? nearbyintf (v[i] / scale) + zp : zp;
      d[i] = (uint8_t) (isnan (q) ? 0 : CLAMP (q, 0.0f, 255.0f));
    }
  *(float *) fb_tensor_data_mut (ys) = scale;
  *(uint8_t *) fb_tensor_data_mut (yz) = (uint8_t) zp;
  out[0] = g_steal_pointer (&y);
  if (node->n_outputs > 1)
    out[1] = g_steal_pointer (&ys);
  if (node->n_outputs > 2)
    out[2] = g_steal_pointer (&yz);
  return TRUE;
}

/* ---- window functions --------------------------------------------------------------------- */

/* The size input of a window, refused beyond a size no signal needs. */
#define WINDOW_MAX_SIZE (1 << 24)

gboolean
_fb_interp_window_fn (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                      GError **error)
{
  int64_t size, to = fb_node_attr_int (node, "output_datatype", FB_DTYPE_FLOAT32);
  gboolean periodic = fb_node_attr_int (node, "periodic", 1) != 0;

  if (!_fb_interp_scalar_i64 (node, in[0], "size", &size, error))
    return FALSE;
  if (size < 0 || size > WINDOW_MAX_SIZE)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "size %" G_GINT64_FORMAT " is outside 0..%d", size, WINDOW_MAX_SIZE);
  if (!fb_dtype_is_known ((int) to) || to > G_MAXINT32 || fb_dtype_size ((FbDType) to) == 0 ||
      to == FB_DTYPE_BOOL)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "output_datatype %" G_GINT64_FORMAT " is not a numeric type", to);
  g_autoptr(FbTensor) y = _fb_interp_new (node, (FbDType) to, 1, &size, error);
  if (y == NULL)
    return FALSE;
  g_autofree double *w = g_new (double, MAX (size, 1));
  double N = periodic ? (double) size : (double) size - 1;
  for (int64_t n = 0; n < size; n++)
    {
      double t = N > 0 ? 2 * G_PI * (double) n / N : 0;
      switch (node->op)
        {
        case FB_OP_HANN_WINDOW:     w[n] = 0.5 - 0.5 * cos (t); break;
        case FB_OP_HAMMING_WINDOW:  w[n] = 25.0 / 46.0 - 21.0 / 46.0 * cos (t); break;
        default:                    w[n] = 0.42 - 0.5 * cos (t) + 0.08 * cos (2 * t); break;
        }
    }
  _fb_interp_write_f64 (y, w);
  out[0] = g_steal_pointer (&y);
  return TRUE;
}
