/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The signal operators: DFT and STFT as direct transforms in double (every output a sum over
 * the signal against a table of the n-th roots of unity), and MelWeightMatrix's triangular
 * filters. fb-signal-spec.c holds the sizes and refusals shared with inference and lowering. */
#include "fb-interp-private.h"
#include "fb-signal-spec.h"

#include <math.h>

/* A direct transform costs outputs x points multiply-adds; past this it would run for minutes
 * (an FFT is for another day), so it is refused rather than left to hang. */
#define MAX_WORK 1e11

static gboolean
spec_fail (const FbNode *node, GError *local, GError **error)
{
  _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "%s", local->message);
  g_error_free (local);
  return FALSE;
}

static gboolean
check_work (const FbNode *node, double outputs, double points, GError **error)
{
  if (outputs * points > MAX_WORK)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "a direct transform of %.0f outputs over %.0f points is too large "
                            "for the reference interpreter", outputs, points);
  return TRUE;
}

/* cos and sin of 2 pi m / n for m in [0, n): index (k * m) mod n for the product's angle. */
static gboolean
roots (const FbNode *node, int64_t n, double **c, double **s, GError **error)
{
  *c = _fb_interp_alloc (node, n, sizeof (double), error);
  *s = *c ? _fb_interp_alloc (node, n, sizeof (double), error) : NULL;
  if (*s == NULL)
    return FALSE;
  for (int64_t m = 0; m < n; m++)
    {
      (*c)[m] = cos (2.0 * G_PI * (double) m / (double) n);
      (*s)[m] = sin (2.0 * G_PI * (double) m / (double) n);
    }
  return TRUE;
}

/* The optional scalar input i as an integer; *out keeps its value when absent. */
static gboolean
optional_scalar (const FbNode *node, FbTensor *const *in, guint i, const char *what,
                 int64_t *out, gboolean *given, GError **error)
{
  *given = node->n_inputs > i && in[i] != NULL;
  if (!*given)
    return TRUE;
  if (fb_dtype_is_float (in[i]->dtype))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "%s must be an integer", what);
  return _fb_interp_scalar_i64 (node, in[i], what, out, error);
}

gboolean
_fb_interp_dft (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                GError **error)
{
  FbTensor *x = in[0];
  int64_t n, axis = -2, dims[FB_MAX_RANK], bins, outer = 1, inner = 1, len;
  gboolean has_length, has_axis, complex;
  GError *local = NULL;
  FbDftSpec spec;
  g_autofree double *xv = NULL, *yv = NULL, *c = NULL, *s = NULL;
  g_autoptr(FbTensor) y = NULL;

  if (!_fb_interp_need_float (node, x, error))
    return FALSE;
  if (x->rank < 2 || (x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the input must end in an axis of 1 (real) or 2 (real and imaginary "
                            "parts)");
  if (!optional_scalar (node, in, 2, "axis", &axis, &has_axis, error))
    return FALSE;
  if (!fb_dft_spec (node, x->rank, has_axis ? &axis : NULL, &spec, &local))
    return spec_fail (node, local, error);
  complex = x->dims[x->rank - 1] == 2;
  if (spec.onesided && complex)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "a complex input has no onesided transform");
  len = x->dims[spec.axis];
  n = len;
  if (!optional_scalar (node, in, 1, "dft_length", &n, &has_length, error))
    return FALSE;
  if (n < 1)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "dft_length %" G_GINT64_FORMAT " is not positive", n);
  bins = fb_dft_bins (&spec, n);
  memcpy (dims, x->dims, sizeof (int64_t) * x->rank);
  dims[spec.axis] = bins;
  dims[x->rank - 1] = 2;
  outer = _fb_interp_prod (x->dims, 0, spec.axis);
  inner = _fb_interp_prod (x->dims, spec.axis + 1, x->rank - 1);
  if (!check_work (node, (double) outer * inner * bins, (double) MIN (n, len), error))
    return FALSE;
  y = _fb_interp_new (node, x->dtype, x->rank, dims, error);
  if (y == NULL)
    return FALSE;
  xv = _fb_interp_read_f64 (x);
  yv = _fb_interp_alloc (node, y->numel, sizeof (double), error);
  if (yv == NULL)
    return FALSE;
  if (!roots (node, n, &c, &s, error))
    return FALSE;
  /* Forward: sum of x[m] e^(-2 pi i k m / n); inverse: e^(+...) and a factor 1 / n. The signal
   * is cut to n points or padded with zeros to them. */
  double sign = spec.inverse ? 1.0 : -1.0, scale = spec.inverse ? 1.0 / (double) n : 1.0;
  int64_t parts = complex ? 2 : 1;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t k = 0; k < bins; k++)
      for (int64_t i = 0; i < inner; i++)
        {
          double re = 0, im = 0;
          for (int64_t m = 0, at = 0; m < MIN (n, len); m++, at = (at + k) % n)
            {
              const double *v = xv + ((o * len + m) * inner + i) * parts;
              double xr = v[0], xi = complex ? v[1] : 0.0;
              re += xr * c[at] - xi * sign * s[at];
              im += xi * c[at] + xr * sign * s[at];
            }
          double *r = yv + ((o * bins + k) * inner + i) * 2;
          r[0] = re * scale;
          r[1] = im * scale;
        }
  _fb_interp_write_f64 (y, yv);
  out[0] = g_steal_pointer (&y);
  return TRUE;
}

gboolean
_fb_interp_stft (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in, FbTensor **out,
                 GError **error)
{
  FbTensor *x = in[0], *w = node->n_inputs > 2 ? in[2] : NULL;
  int64_t step, frame_length = -2;
  gboolean has_length;
  GError *local = NULL;
  FbStftSpec spec;
  g_autofree double *xv = NULL, *wv = NULL, *yv = NULL, *c = NULL, *s = NULL;
  g_autoptr(FbTensor) y = NULL;

  if (!_fb_interp_need_float (node, x, error) || (w && !_fb_interp_need_float (node, w, error)))
    return FALSE;
  if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "the signal must be [batch, length, 1 or 2]");
  if (w && w->rank != 1)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "the window must be a vector");
  if (fb_dtype_is_float (in[1]->dtype) ||
      !_fb_interp_scalar_i64 (node, in[1], "frame_step", &step, error) ||
      !optional_scalar (node, in, 3, "frame_length", &frame_length, &has_length, error))
    return fb_dtype_is_float (in[1]->dtype)
             ? _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "frame_step must be an integer")
             : FALSE;
  /* Negative values are not "absent" or "unknown" here: keep them out of the spec's codes. */
  if (step < 1 || (has_length && frame_length < 1))
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "frame_step %" G_GINT64_FORMAT
                            " and frame_length must be positive", step);
  if (!fb_stft_spec (node, x->dims[1], x->dims[2] == 2, step, frame_length,
                     w ? w->dims[0] : -2, &spec, &local))
    return spec_fail (node, local, error);
  int64_t B = x->dims[0], L = x->dims[1], fl = spec.frame_length, parts = x->dims[2];
  int64_t dims[4] = { B, spec.frames, spec.bins, 2 };
  if (!check_work (node, (double) B * spec.frames * spec.bins, (double) fl, error))
    return FALSE;
  y = _fb_interp_new (node, x->dtype, 4, dims, error);
  if (y == NULL)
    return FALSE;
  xv = _fb_interp_read_f64 (x);
  wv = w ? _fb_interp_read_f64 (w) : NULL;
  yv = _fb_interp_alloc (node, y->numel, sizeof (double), error);
  if (yv == NULL)
    return FALSE;
  if (!roots (node, fl, &c, &s, error))
    return FALSE;
  for (int64_t b = 0; b < B; b++)
    for (int64_t f = 0; f < spec.frames; f++)
      for (int64_t k = 0; k < spec.bins; k++)
        {
          double re = 0, im = 0;
          for (int64_t m = 0, at = 0; m < fl; m++, at = (at + k) % fl)
            {
              const double *v = xv + (b * L + f * step + m) * parts;
              double g = wv ? wv[m] : 1.0, xr = v[0] * g, xi = parts == 2 ? v[1] * g : 0.0;
              re += xr * c[at] + xi * s[at];
              im += xi * c[at] - xr * s[at];
            }
          double *r = yv + ((b * spec.frames + f) * spec.bins + k) * 2;
          r[0] = re;
          r[1] = im;
        }
  _fb_interp_write_f64 (y, yv);
  out[0] = g_steal_pointer (&y);
  return TRUE;
}

gboolean
_fb_interp_mel_weight_matrix (FbInterpCtx *ctx, const FbNode *node, FbTensor *const *in,
                              FbTensor **out, GError **error)
{
  int64_t to = fb_node_attr_int (node, "output_datatype", FB_DTYPE_FLOAT32);
  int64_t mel_bins, dft_length, rate;
  double lower, upper;
  g_autofree int64_t *edges = NULL;
  g_autofree double *yv = NULL;
  g_autoptr(FbTensor) y = NULL;

  for (guint i = 0; i < 3; i++)
    if (fb_dtype_is_float (in[i]->dtype))
      return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME, "input %u must be an integer",
                              i);
  if (!_fb_interp_scalar_i64 (node, in[0], "num_mel_bins", &mel_bins, error) ||
      !_fb_interp_scalar_i64 (node, in[1], "dft_length", &dft_length, error) ||
      !_fb_interp_scalar_i64 (node, in[2], "sample_rate", &rate, error) ||
      !_fb_interp_need_float (node, in[3], error) || !_fb_interp_need_float (node, in[4], error) ||
      !_fb_interp_scalar_f64 (node, in[3], "lower_edge_hertz", &lower, error) ||
      !_fb_interp_scalar_f64 (node, in[4], "upper_edge_hertz", &upper, error))
    return FALSE;
  if (!fb_dtype_is_known ((int) to) || to > G_MAXINT32 || fb_dtype_size ((FbDType) to) == 0 ||
      to == FB_DTYPE_BOOL)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_UNSUPPORTED,
                            "output_datatype %" G_GINT64_FORMAT " is not a numeric type", to);
  if (mel_bins < 0)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "num_mel_bins %" G_GINT64_FORMAT " is negative", mel_bins);
  if (dft_length < 1 || rate < 1)
    return _fb_interp_fail (error, node, FB_INTERP_ERROR_RUNTIME,
                            "dft_length %" G_GINT64_FORMAT " and sample_rate %" G_GINT64_FORMAT
                            " must be positive", dft_length, rate);
  int64_t dims[2] = { dft_length / 2 + 1, mel_bins };
  y = _fb_interp_new (node, (FbDType) to, 2, dims, error);
  if (y == NULL)
    return FALSE;
  yv = _fb_interp_alloc (node, y->numel, sizeof (double), error);
  if (yv == NULL)
    return FALSE;
  edges = fb_mel_edges (mel_bins, dft_length, (double) rate, lower, upper);
  for (int64_t j = 0; j < dims[0]; j++)
    for (int64_t i = 0; i < mel_bins; i++)
      yv[j * mel_bins + i] = fb_mel_weight (edges + i, j);
  _fb_interp_write_f64 (y, yv);
  out[0] = g_steal_pointer (&y);
  return TRUE;
}
